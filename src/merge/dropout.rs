//! BPE-dropout (Provilkov et al., 2020): tiktoken's rule on one chunk with each merge, when
//! its turn comes, skipped at random. `tokenmill.reference.encode_dropout` is the definition:
//!
//! Start from single bytes. Take the adjacent pairs that join into a token, lowest rank first
//! (leftmost of equal ones); draw for each in turn, skipping it with probability `p`, until one
//! is kept: merge it and start over. When every pair is skipped, or none joins, stop. A chunk
//! that is a whole token is merged like any other, so whole words are split too.
//!
//! Run as HF's BPE runs dropout, with a heap: the pairs are popped in that order, each skipped
//! one is set aside, and after a merge the set-aside ones go back with the new pairs, which is
//! the same sequence of draws as starting over. A popped pair whose parts have changed since it
//! was pushed is stale and dropped without a draw.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocab::Vocab;

/// splitmix64 (Steele, Lea and Flood, 2014): small, fast, and short to write in Python, where
/// the reference draws the same numbers.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability `threshold / 2^53`: the top 53 bits of the next number are below
    /// it.
    fn below(&mut self, threshold: u64) -> bool {
        (self.next_u64() >> 11) < threshold
    }
}

/// The draw threshold for dropping with probability `p` (0 ≤ p ≤ 1): `p · 2^53`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub fn threshold(p: f64) -> u64 {
    (p.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64
}

/// The ids of `piece` (not empty) under dropout with `threshold` (see [`threshold`]), drawing
/// from `rng`, onto `out`.
pub fn merge(vocab: &Vocab, piece: &[u8], threshold: u64, rng: &mut Rng, out: &mut Vec<u32>) {
    let n = piece.len();
    // Each part is named by where it starts; for a part that starts at `i` (`alive[i]`),
    // `end[i]` is where it ends, `prev[i]` where the part before it starts, `id[i]` its id.
    let mut end: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let mut id: Vec<u32> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    // (rank, start of the left part, end of the right part): the pair of parts `start..mid`
    // and `mid..stop`; the order is rank, then leftmost.
    let mut heap = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<_>, start: usize, stop: usize| {
        if let Some(r) = vocab.rank(&piece[start..stop]) {
            heap.push(Reverse((r, start, stop)));
        }
    };
    for i in 0..n.saturating_sub(1) {
        push(&mut heap, i, i + 2);
    }
    let mut skipped = Vec::new();
    while let Some(Reverse((r, start, stop))) = heap.pop() {
        let mid = end[start];
        if !alive[start] || mid >= n || end[mid] != stop {
            continue; // stale: a part of it has merged since
        }
        if rng.below(threshold) {
            skipped.push(Reverse((r, start, stop)));
            continue;
        }
        alive[mid] = false;
        end[start] = stop;
        id[start] = r;
        if stop < n {
            prev[stop] = start;
            push(&mut heap, start, end[stop]);
        }
        if start > 0 {
            push(&mut heap, prev[start], stop);
        }
        heap.extend(skipped.drain(..));
    }
    let mut i = 0;
    while i < n {
        out.push(id[i]);
        i = end[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::literal;
    use crate::testing::Rng as TestRng;
    use crate::vocab::testing;

    /// A random vocabulary and texts over its alphabet (lengths 1..40).
    fn random_vocab_and_pieces(seed: u64) -> (Vocab, Vec<Vec<u8>>) {
        let mut rng = TestRng(seed + 1);
        let vocab = testing::random(&mut rng, 60);
        let pieces = (0..8)
            .map(|_| {
                let len = 1 + rng.below(40);
                rng.text(b"abc ", len)
            })
            .collect();
        (vocab, pieces)
    }

    /// The definition, as the reference writes it: rescan the sorted pairs after each merge.
    fn by_definition(vocab: &Vocab, piece: &[u8], threshold: u64, rng: &mut Rng) -> Vec<u32> {
        let mut parts: Vec<&[u8]> = piece.chunks(1).collect();
        'merging: loop {
            let mut pairs: Vec<(u32, usize)> = (0..parts.len().saturating_sub(1))
                .filter_map(|i| {
                    let joined = [parts[i], parts[i + 1]].concat();
                    vocab.rank(&joined).map(|r| (r, i))
                })
                .collect();
            pairs.sort_unstable();
            for (_, i) in pairs {
                if !rng.below(threshold) {
                    let start = parts[i].as_ptr() as usize - piece.as_ptr() as usize;
                    let len = parts[i].len() + parts[i + 1].len();
                    parts[i] = &piece[start..start + len];
                    parts.remove(i + 1);
                    continue 'merging;
                }
            }
            break;
        }
        parts.iter().map(|p| vocab.rank(p).unwrap()).collect()
    }

    #[test]
    fn the_heap_draws_as_the_definition_does() {
        for seed in 0..300u64 {
            let (vocab, pieces) = random_vocab_and_pieces(seed);
            for (k, piece) in pieces.iter().enumerate() {
                for p in [0.0, 0.1, 0.5, 0.9, 1.0] {
                    let t = threshold(p);
                    let mut out = Vec::new();
                    merge(&vocab, piece, t, &mut Rng::new(seed ^ k as u64), &mut out);
                    let want = by_definition(&vocab, piece, t, &mut Rng::new(seed ^ k as u64));
                    assert_eq!(out, want, "seed {seed} piece {piece:?} p {p}");
                }
            }
        }
    }

    #[test]
    fn no_dropout_is_the_rule_and_full_dropout_the_bytes() {
        for seed in 0..100u64 {
            let (vocab, pieces) = random_vocab_and_pieces(seed);
            for piece in &pieces {
                let mut out = Vec::new();
                merge(&vocab, piece, threshold(0.0), &mut Rng::new(seed), &mut out);
                // The rule without the whole-chunk lookup: the literal rule's ids for a chunk
                // that is no token.
                if vocab.rank(piece).is_none() {
                    assert_eq!(out, literal::merge(&vocab, piece));
                }
                out.clear();
                merge(&vocab, piece, threshold(1.0), &mut Rng::new(seed), &mut out);
                let bytes: Vec<u32> = piece.iter().map(|&b| vocab.rank(&[b]).unwrap()).collect();
                assert_eq!(out, bytes);
            }
        }
    }

    #[test]
    fn splitmix64_gives_its_published_numbers() {
        // The first outputs for seed 0 (the reference implementation's).
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
