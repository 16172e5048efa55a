//! One long text encoded on several threads: cut at places no chunk of a named pattern
//! crosses, the pieces encoded at once on the current rayon pool (piece k always on worker k
//! mod threads), their ids concatenated.
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
use crate::error::Error;
use crate::train::cut_after_newline;
use rayon::prelude::*;

/// The first place at or after `from` where `b` can be cut (see the module doc).
pub(crate) fn safe_cut(b: &[u8], from: usize) -> Option<usize> {
    let letter = |i: usize| b.get(i).is_some_and(u8::is_ascii_alphabetic);
    (from.max(2)..b.len())
        .find(|&i| cut_after_newline(b, i) || (b[i] == b' ' && letter(i - 1) && letter(i + 1)))
}

/// Work for one thread: a piece of text, or a special token's id.
enum Part<'t> {
    Text(&'t str),
    Special(u32),
}

impl Encoder {
    /// Like [`Encoder::encode`], on the threads of the current rayon pool: text segments of
    /// at least `2 * piece_bytes` are cut into pieces of about `piece_bytes` or more (a few
    /// per thread), which are encoded in parallel. The ids are those of `encode`. Texts of a
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
        let pieces_per_segment = 4 * rayon::current_num_threads();
        let parts = std::cell::RefCell::new(Vec::new());
        self.segments(
            text,
            allowed,
            disallowed,
            |t| {
                let b = t.as_bytes();
                let mut parts = parts.borrow_mut();
                if !cuttable || b.len() < 2 * piece_bytes {
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
        // Part k goes to worker k mod threads, every time. Each worker keeps its own chunk
        // cache, so a text encoded again finds each part's chunks where they were left. Handed
        // out by work stealing instead, the same 24-language text (gpt2, 2 threads) ran at 64,
        // 129, 97, then 204-233 MB/s over its first calls, as parts met workers that had not
        // seen them. A worker writes all its parts into one buffer, given back for the next call
        // once they are copied out.
        let done: Vec<WorkerIds> = rayon::broadcast(|ctx| {
            let mine = || {
                parts
                    .iter()
                    .enumerate()
                    .skip(ctx.index())
                    .step_by(ctx.num_threads())
            };
            let room = mine()
                .map(|(_, part)| match part {
                    Part::Text(t) => t.len(),
                    Part::Special(_) => 1,
                })
                .sum::<usize>();
            let mut ids = crate::buffers::for_text(room);
            let spans = mine()
                .map(|(k, part)| {
                    let start = ids.len();
                    match part {
                        Part::Text(t) => self.encode_ordinary(t, &mut ids),
                        Part::Special(id) => {
                            ids.push(*id);
                            Ok(())
                        }
                    }
                    .map(|()| (k, start..ids.len()))
                    .map_err(|e| (k, e))
                })
                .collect();
            (ids, spans)
        });
        let mut pieces: Vec<&[u32]> = vec![&[]; parts.len()];
        // The first error in text order, as one thread would have met it: each worker stops at
        // its first, and has encoded all its parts before it.
        let mut failed: Option<&(usize, Error)> = None;
        for (ids, spans) in &done {
            match spans {
                Ok(spans) => {
                    for (k, span) in spans {
                        pieces[*k] = &ids[span.clone()];
                    }
                }
                Err(e) => {
                    if failed.is_none_or(|f| e.0 < f.0) {
                        failed = Some(e);
                    }
                }
            }
        }
        let result = match failed {
            Some((_, e)) => Err(e.clone()),
            None => {
                concat_into(&pieces, out);
                Ok(())
            }
        };
        drop(pieces);
        for (ids, _) in done {
            crate::buffers::recycle(ids);
        }
        result
    }
}

/// Where a part's ids are: the part's index and its range in its worker's buffer.
type Span = (usize, std::ops::Range<usize>);

/// A worker's buffer, and where its parts are in it, or its first failed part and the error.
type WorkerIds = (Vec<u32>, Result<Vec<Span>, (usize, Error)>);

/// Append `parts`, one after another, to `out`, copying them on the threads of the current
/// rayon pool rather than on one thread after the parallel work. When `out` lacks room it is
/// moved to a `buffers::with_room`.
pub fn concat_into<P: AsRef<[u32]> + Sync>(parts: &[P], out: &mut Vec<u32>) {
    let total: usize = parts.iter().map(|p| p.as_ref().len()).sum();
    let base = out.len();
    if out.capacity() - base < total {
        let mut bigger = crate::buffers::with_room(base + total);
        bigger.extend_from_slice(out);
        crate::buffers::recycle(std::mem::replace(out, bigger));
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
