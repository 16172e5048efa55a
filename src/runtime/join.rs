//! The ids of items that several threads encoded, each into a buffer of its own, put back in
//! item order: one text cut into pieces for threads (`Encoder::encode_parallel`), or a batch of
//! texts (the Python bindings' flat arrays).

use super::buffers::{with_room, Ids};
use rayon::prelude::*;

/// The ids of `n` items in item order, one after another, and where each starts (`n + 1`
/// offsets), from the buffers of the shares that took them, each with the spans of the items
/// it took.
pub fn join_shares(mut shares: Vec<(Ids, Vec<Span>)>, n: usize) -> (Ids, Vec<i64>) {
    let mut offsets = vec![0i64; n + 1];
    for (i, span) in shares.iter().flat_map(|(_, spans)| spans) {
        offsets[i + 1] = span.len() as i64;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    // One share took every item in order (one thread): its buffer is the result, with nothing
    // to copy. (A share of several threads whose others never woke took its own items first,
    // then theirs from the last back: `work_sharing::Claims`.)
    if let [(ids, spans)] = &mut shares[..] {
        if spans.iter().enumerate().all(|(j, (i, _))| *i == j) {
            return (std::mem::take(ids), offsets);
        }
    }
    let pieces = in_order(n, shares.iter().map(|(ids, s)| (ids, &s[..])));
    let mut flat = Ids::default();
    concat_into(&pieces, &mut flat);
    (flat, offsets)
}

/// Where an item's ids are: the item's index and its range in its share's buffer.
pub type Span = (usize, std::ops::Range<usize>);

/// The ids of `n` items, in item order, from the buffers shares wrote them into, each with the
/// spans of the items it took.
pub fn in_order<'a, B: AsRef<[u32]> + 'a>(
    n: usize,
    shares: impl IntoIterator<Item = (&'a B, &'a [Span])>,
) -> Vec<&'a [u32]> {
    let mut pieces: Vec<&[u32]> = vec![&[]; n];
    for (ids, spans) in shares {
        for (k, span) in spans {
            pieces[*k] = &ids.as_ref()[span.clone()];
        }
    }
    pieces
}

/// Append `parts`, one after another, to `out`, copying them on the threads of the current
/// rayon pool rather than on one thread after the parallel work. When `out` lacks room it is
/// moved to a `buffers::with_room`.
pub fn concat_into<P: AsRef<[u32]> + Sync>(parts: &[P], out: &mut Vec<u32>) {
    let total: usize = parts.iter().map(|p| p.as_ref().len()).sum();
    let base = out.len();
    if out.capacity() - base < total {
        let mut bigger = with_room(base + total);
        bigger.extend_from_slice(out);
        // Kept for use again.
        drop(Ids::from(std::mem::replace(out, bigger.into_vec())));
    }
    // Long parts are copied in blocks, so that the threads share the copy and the page faults
    // of a fresh `out` (docs/performance.md, 'Memory and pages').
    const BLOCK: usize = 1 << 16;
    let mut room = &mut out.spare_capacity_mut()[..total];
    let mut copies = Vec::with_capacity(parts.len() + total / BLOCK);
    for part in parts {
        for from in part.as_ref().chunks(BLOCK) {
            let (place, rest) = room.split_at_mut(from.len());
            copies.push((place, from));
            room = rest;
        }
    }
    copies.into_par_iter().for_each(|(place, from)| {
        for (to, &id) in place.iter_mut().zip(from) {
            to.write(id);
        }
    });
    // SAFETY: the places tile `out`'s first `total` spare values, and each was written in full
    // from its block, which has its length.
    unsafe { out.set_len(base + total) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_join_in_item_order_however_they_were_taken() {
        // Item k's ids are [k, k, ...] (k + 1 of them, none for item 3).
        let ids_of = |k: usize| vec![k as u32; if k == 3 { 0 } else { k + 1 }];
        let share = |items: &[usize]| {
            let mut ids = Ids::default();
            let mut spans = Vec::new();
            for &k in items {
                let start = ids.len();
                ids.extend(ids_of(k));
                spans.push((k, start..ids.len()));
            }
            (ids, spans)
        };
        let want: Vec<u32> = (0..6).flat_map(ids_of).collect();
        let want_offsets: Vec<i64> = [0, 1, 3, 6, 6, 11, 17].to_vec();
        for shares in [
            vec![share(&[0, 1, 2, 3, 4, 5])],
            // One thread of two took all: its own, then the other's from the end.
            vec![share(&[0, 2, 4, 5, 3, 1])],
            vec![share(&[1, 3, 5]), share(&[0, 4, 2])],
        ] {
            let (flat, offsets) = join_shares(shares, 6);
            assert_eq!(&flat[..], &want[..]);
            assert_eq!(offsets, want_offsets);
        }
    }

    #[test]
    fn concat_keeps_order_and_what_was_there() {
        let parts: Vec<Vec<u32>> = (0..300u32)
            .map(|i| (0..(i * 7919) % 23).map(|k| i * 100 + k).collect())
            .collect();
        let want: Vec<u32> = parts.concat();
        for (before, room) in [(vec![], 0), (vec![7, 8], 0), (vec![9], want.len() + 5)] {
            let mut out = Vec::with_capacity(room);
            out.extend_from_slice(&before);
            concat_into(&parts, &mut out);
            assert_eq!(out[..before.len()], before[..]);
            assert_eq!(out[before.len()..], want[..]);
        }
        let mut out = vec![1];
        concat_into::<Vec<u32>>(&[], &mut out);
        concat_into(&[vec![], vec![2], vec![]], &mut out);
        assert_eq!(out, [1, 2]);
    }
}
