//! One long text encoded on several threads: cut at places no chunk of a named pattern
//! crosses, the pieces encoded at once on the current rayon pool (piece k on worker k mod
//! threads, unless another worker is done with its own first: `work_sharing::Claims`), their ids
//! concatenated.
//!
//! Where a text can be cut (both need only ASCII around the cut, so the cut is a character
//! boundary):
//! - right after a `\n` that follows a printable ASCII character other than a space and is
//!   followed by an ASCII letter or digit (the proof is at `train::count_safe_cut`);
//! - right before a single space between two ASCII letters: no alternative of the three
//!   patterns matches a letter followed by a space, so the chunk on the left ends at the letter
//!   either way, and the space followed by a letter starts the chunk ` word` (gpt2's
//!   ` ?\p{L}+`, cl100k's and o200k's `[^\r\n\p{L}\p{N}]?` letter runs) whether or not the
//!   text starts there.
//!
//! The corpus encoder cuts long documents by the same rule (`corpus/inputs.py`), and
//! `tests/test_parallel_encode.py` checks cut encodings against whole ones.

use super::{Allowed, Encoder};
use crate::buffers::Ids;
use crate::error::Error;
use crate::train::cut_after_newline;
use crate::work_sharing::Claims;
use rayon::prelude::*;

/// The first place at or after `from` where `b` can be cut (see the module doc).
pub(crate) fn safe_cut(b: &[u8], from: usize) -> Option<usize> {
    let letter = |i: usize| b.get(i).is_some_and(u8::is_ascii_alphabetic);
    (from.max(2)..b.len())
        .find(|&i| cut_after_newline(b, i) || (b[i] == b' ' && letter(i - 1) && letter(i + 1)))
}

/// Whether a text segment of `len` bytes is cut into pieces of about `piece_bytes` (a text
/// shorter than that is encoded whole, so threads cannot help it).
pub fn long_enough_to_cut(len: usize, piece_bytes: usize) -> bool {
    len >= 2 * piece_bytes.max(1)
}

/// Work for one thread: a piece of text, or a special token's id.
enum Part<'t> {
    Text(&'t str),
    Special(u32),
}

impl Encoder {
    /// Like [`Encoder::encode`], on the threads of the current rayon pool
    /// ([`threads_here`](crate::work_sharing::threads_here)): text segments of at least
    /// `2 * piece_bytes` are cut into pieces of about `piece_bytes` or more (a few per
    /// thread), which are encoded in parallel. The ids are those of `encode`. Texts of a
    /// custom pattern are not cut (no cut rule is proved for them), nor are short ones.
    pub fn encode_parallel(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        piece_bytes: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let piece_bytes = piece_bytes.max(1);
        let cuttable = self.splitter.named().is_some();
        let threads = crate::work_sharing::threads_here();
        let pieces_per_segment = 4 * threads;
        let parts = std::cell::RefCell::new(Vec::new());
        self.segments(
            text,
            allowed,
            disallowed,
            |t| {
                let b = t.as_bytes();
                let mut parts = parts.borrow_mut();
                if !cuttable || !long_enough_to_cut(b.len(), piece_bytes) {
                    parts.push(Part::Text(t));
                    return Ok(());
                }
                let step = (b.len() / pieces_per_segment).max(piece_bytes);
                let mut start = 0;
                while let Some(cut) = safe_cut(b, start + step).filter(|&c| c + step / 2 < b.len())
                {
                    // A cut is ASCII on both sides: a character boundary, so `get` succeeds.
                    parts.extend(t.get(start..cut).map(Part::Text));
                    start = cut;
                }
                parts.extend(t.get(start..).map(Part::Text));
                Ok(())
            },
            |id| parts.borrow_mut().push(Part::Special(id)),
        )?;
        let parts = parts.into_inner();
        let cost = |k: usize| match parts[k] {
            Part::Text(t) => t.len(),
            Part::Special(_) => 1,
        };
        let claims = Claims::new(parts.len());
        let total: usize = (0..parts.len()).map(cost).sum();
        let done: Vec<WorkerIds> = crate::work_sharing::on_each_thread(threads, |me| {
            let own: usize = (me..parts.len()).step_by(threads).map(cost).sum();
            // Room for the parts taken from others too, so the buffer never grows: no part has
            // more ids than bytes.
            let spare = total / (2 * threads);
            let mut ids = crate::buffers::for_text(own + spare);
            let mut spans = Vec::new();
            let result = claims.run(me, threads, spare, cost, |k| {
                let start = ids.len();
                match parts[k] {
                    Part::Text(t) => self.encode_ordinary(t, &mut ids)?,
                    Part::Special(id) => ids.push(id),
                }
                spans.push((k, start..ids.len()));
                Ok(())
            });
            (ids, result.map(|()| spans))
        });
        // The first error in text order, as one thread would have met it (see `Claims::run`).
        let failed = done
            .iter()
            .filter_map(|(_, result)| result.as_ref().err())
            .min_by_key(|(k, _)| *k);
        if let Some((_, e)) = failed {
            return Err(e.clone());
        }
        let shares = done
            .iter()
            .filter_map(|(ids, spans)| Some((ids, spans.as_deref().ok()?)));
        concat_into(&in_order(parts.len(), shares), out);
        Ok(())
    }
}

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
fn in_order<'a, B: AsRef<[u32]> + 'a>(
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

/// A worker's buffer, and where its parts are in it, or its first failed part and the error.
type WorkerIds = (crate::buffers::Ids, Result<Vec<Span>, (usize, Error)>);

/// Append `parts`, one after another, to `out`, copying them on the threads of the current
/// rayon pool rather than on one thread after the parallel work. When `out` lacks room it is
/// moved to a `buffers::with_room`.
fn concat_into<P: AsRef<[u32]> + Sync>(parts: &[P], out: &mut Vec<u32>) {
    let total: usize = parts.iter().map(|p| p.as_ref().len()).sum();
    let base = out.len();
    if out.capacity() - base < total {
        let mut bigger = crate::buffers::with_room(base + total);
        bigger.extend_from_slice(out);
        // Kept for use again.
        drop(crate::buffers::Ids::from(std::mem::replace(
            out,
            bigger.into_vec(),
        )));
    }
    // Long parts are copied in blocks, so that the threads share the copy and the page faults
    // of a fresh `out` (zeroing 31 MB of new huge pages took 15 ms on one thread here).
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
    fn cuts_by_both_rules_and_nowhere_else() {
        assert_eq!(safe_cut(b"ab\nc", 0), Some(3));
        assert_eq!(safe_cut(b"ab cd", 0), Some(2));
        // After whitespace, before a non-alphanumeric, between digits: no cut.
        assert_eq!(safe_cut(b"a \nb", 0), None);
        assert_eq!(safe_cut(b"ab\n.c", 0), None);
        assert_eq!(safe_cut(b"12 34", 0), None);
        assert_eq!(safe_cut(b"a  b", 0), None);
        assert_eq!(safe_cut("é b".as_bytes(), 0), None);
        assert_eq!(safe_cut(b"ab cd ef", 3), Some(5));
        assert_eq!(safe_cut(b"ab cd", 5), None);
    }

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
