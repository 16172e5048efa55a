//! Merging: one chunk's bytes turned into token ids by tiktoken's rule, one algorithm per file.
//!
//! - `literal`: the rule as tiktoken runs it, on byte slices; the definition, for the tests.
//! - `small`: the rescan, for chunks under 1 KB (nearly all of them).
//! - `heap`: O(n log n), for longer chunks.
//! - `dropout`: BPE-dropout's rule, merges skipped at random (not tiktoken's: its own
//!   definition, in `tokenmill.reference`).
//! - `long`: linear in practice, for chunks of many KB (a megabyte of one letter): a search
//!   for the one cover of the chunk by compatible tokens, with `trie` for the longest token
//!   at a position, and windows merged side by side by `lanes` where tokens are short.
//!
//! The fast ones read the vocabulary's pair index of parents (`vocab::pairs`) instead of
//! hashing byte slices, and none looks the whole chunk up: a chunk that is itself a token is
//! the encoder's to find (`Encoder::encode_chunk`). Each is tested against `literal` on
//! random vocabularies.

pub(crate) mod dropout;
pub(crate) mod heap;
mod lanes;
#[cfg(test)]
pub(crate) mod literal;
pub(crate) mod long;
pub(crate) mod small;
mod trie;

use crate::vocab::Vocab;

/// The ids of `chunk` (not empty) by the rule, without the whole-chunk lookup: by the rescan
/// below [`small::LIMIT`] bytes, else by the heap. The long path's own merges of pieces of a
/// chunk, and its fallback.
#[inline]
pub(crate) fn chunk(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    if chunk.len() < small::LIMIT {
        small::merge(vocab, chunk, out);
    } else {
        heap::merge(vocab, chunk, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::testing;

    /// The ids of `s` by the rescan, by the heap and by the literal rule, which must agree.
    fn all(v: &Vocab, s: &[u8]) -> Vec<u32> {
        let (mut rescan, mut heap) = (Vec::new(), Vec::new());
        small::merge(v, s, &mut rescan);
        heap::merge(v, s, &mut heap);
        assert_eq!(rescan, heap, "the rescan and the heap disagree on {s:?}");
        assert_eq!(
            rescan,
            literal::merge(v, s),
            "the literal rule disagrees on {s:?}"
        );
        rescan
    }

    #[test]
    fn merges_lowest_rank_first_leftmost_on_ties() {
        let v = testing::of(&[b"aa", b"aaaa"]);
        assert_eq!(all(&v, b"aaa"), [256, 97]);
        assert_eq!(all(&v, b"aaaa"), [257]);
        assert_eq!(all(&v, b"aaaaa"), [257, 97]);
        assert_eq!(all(&v, b"aaaaaa"), [257, 256]);
        let v = testing::of(&[b"aa", b"aaa", b"aaaa"]);
        assert_eq!(all(&v, b"aaa"), [257]);
        assert_eq!(all(&v, b"aaaaa"), [256, 257]);
    }

    #[test]
    fn rank_of_concatenation_decides() {
        // "bc" (256) merges before "ab" (257); "abc" (258) then forms from "a" + "bc".
        let v = testing::of(&[b"bc", b"ab", b"abc"]);
        assert_eq!(all(&v, b"abc"), [258]);
        assert_eq!(all(&v, b"abcx"), [258, 120]);
        assert_eq!(all(&v, b"xabc"), [120, 258]);
    }
}
