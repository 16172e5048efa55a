//! The heap: the merge for chunks of [`LIMIT`](super::small::LIMIT) bytes or more, O(n log n)
//! in the chunk's length. A heap of (rank, position) candidates over a linked list of parts;
//! a candidate that a merge has made stale (its part is gone, or its pair changed) is skipped
//! when popped.

use crate::vocab::Vocab;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The ids of `chunk` (not empty) by the rule, without the whole-chunk lookup.
pub(crate) fn merge(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    let merge = |l, r| vocab.merge_rank(l, r);
    const NONE: u32 = u32::MAX;
    let n = chunk.len();
    let mut ids: Vec<u32> = chunk.iter().map(|&b| vocab.byte_rank(b)).collect();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    next[n - 1] = NONE;
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = NONE;
    let mut heap = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        if let Some(r) = merge(ids[i], ids[i + 1]) {
            heap.push(Reverse((r, i as u32)));
        }
    }
    let mut alive = vec![true; n];
    while let Some(Reverse((rank, pos))) = heap.pop() {
        let p = pos as usize;
        if !alive[p] {
            continue;
        }
        let q = next[p];
        if q == NONE || merge(ids[p], ids[q as usize]) != Some(rank) {
            continue;
        }
        let q = q as usize;
        ids[p] = rank;
        alive[q] = false;
        let after = next[q];
        next[p] = after;
        if after != NONE {
            prev[after as usize] = pos;
            if let Some(r) = merge(rank, ids[after as usize]) {
                heap.push(Reverse((r, pos)));
            }
        }
        let before = prev[p];
        if before != NONE {
            if let Some(r) = merge(ids[before as usize], rank) {
                heap.push(Reverse((r, before)));
            }
        }
    }
    let mut i = 0u32;
    while i != NONE {
        out.push(ids[i as usize]);
        i = next[i as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::super::{literal, small};
    use super::*;
    use crate::testing::Rng;
    use crate::vocab::testing;

    /// Random chunks of every length up to past the rescan's, on random vocabularies.
    #[test]
    fn heap_equals_the_literal_rule() {
        let mut rng = Rng(0x4ea9_5eed);
        for round in 0..30 {
            let merges = 20 + rng.below(200);
            let v = testing::random(&mut rng, merges);
            let alphabet: &[u8] = [&b"ab"[..], b"abc ", b"a"][round % 3];
            for _ in 0..8 {
                let longest = [40, 300, small::LIMIT + 200][rng.below(3)];
                let len = 1 + rng.below(longest);
                let s = rng.text(alphabet, len);
                // The literal rule takes a whole-chunk token as is; the merge does not look.
                if v.rank(&s).is_some() {
                    continue;
                }
                let mut got = Vec::new();
                merge(&v, &s, &mut got);
                assert_eq!(
                    got,
                    literal::merge(&v, &s),
                    "{:?}",
                    String::from_utf8_lossy(&s)
                );
            }
        }
    }

    /// A run just under the rescan's limit, where both apply.
    #[test]
    fn heap_equals_the_rescan_on_long_runs() {
        let v = testing::of(&[b"aa", b"ab", b"aaaa", b"ba", b"abab", b"aab"]);
        let s: Vec<u8> = (0..small::LIMIT - 1)
            .map(|i| if i % 3 == 0 { b'b' } else { b'a' })
            .collect();
        let (mut heap, mut rescan) = (Vec::new(), Vec::new());
        merge(&v, &s, &mut heap);
        small::merge(&v, &s, &mut rescan);
        assert_eq!(heap, rescan);
        assert_eq!(heap, literal::merge(&v, &s));
    }
}
