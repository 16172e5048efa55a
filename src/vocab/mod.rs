//! Vocabularies: token bytes <-> ranks, and what the merges look up (`pairs`, [`atoms`]).
//!
//! A rank is a token's id and its merge priority at once (tiktoken's convention), and every
//! byte UTF-8 text can hold must be a token so that any text can be encoded (those
//! [`not_utf8`] names may be missing, as in DeepSeek V2's and StarCoder's vocabularies). Ranks run `0..len` and may
//! leave gaps: ids no ordinary token has, where a vocabulary puts special tokens among its
//! ranks (OpenAI's p50k_base has `<|endoftext|>` at 50256, between ranks; Mistral's Tekken
//! numbers its ranks from 1,000, after its special tokens). A gap is an empty token: no text
//! encodes to it and no merge makes it, so the merges never see it.
//!
//! tiktoken merges two adjacent parts whenever their concatenation is a token. A token
//! usually has several such splits, but only one can ever occur: its *parents*, the two parts
//! that tiktoken's rule leaves when run on the token's own bytes without the token itself.
//! Proof: if parts L and R are adjacent in some run, no merge has crossed the span L ++ R, so
//! that span has evolved exactly as a run on its bytes alone would, and that run reaches the
//! state [L, R] only as its last step. So the pair index holds parents only, several times
//! smaller than every split and so more of it in cache (docs/performance.md, 'Merge
//! algorithms'), and gives the same ids; the merges' tests compare them with tiktoken's rule on
//! byte slices (`merge::literal`) on random vocabularies.

pub mod atoms;
mod pairs;
mod rank_file;
#[cfg(test)]
pub(crate) mod testing;

use crate::error::Error;
use crate::runtime::pages::Table;
use atoms::Atoms;
pub use pairs::MAX_RANKS;
use pairs::{PairIndex, NONE};
pub use rank_file::parse_rank_file;

/// Whether byte `b` never occurs in UTF-8 text: 0xc0, 0xc1 (overlong leads) and 0xf5..=0xff.
/// A vocabulary may leave these out; no token may then hold one.
pub fn not_utf8(b: u8) -> bool {
    matches!(b, 0xc0 | 0xc1 | 0xf5..=0xff)
}

/// Bytes <-> rank maps for the mergeable (non-special) tokens of a vocabulary.
#[derive(Debug, Clone)]
pub struct Vocab {
    tokens: Tokens,
    pairs: PairIndex,
    /// Whether every token of 2..=`SHORT_TOKEN` bytes, and every longer one, has parents (see
    /// `merges_make_tokens_of`).
    reachable: [bool; 2],
    /// Characters the merge may start from.
    atoms: Atoms,
    /// Whether every one of the 256 bytes is a token (see [`Vocab::byte_without_token`]).
    all_bytes: bool,
}

/// The longest token of the short class of [`Vocab::merges_make_tokens_of`] (as long as the
/// longest chunk of the chunk cache's first level, where most chunks are).
pub const SHORT_TOKEN: usize = 15;

/// Hash of a short byte string: 8-byte words folded with a multiply (FxHash-style), the last
/// word read where it ends (overlapping the one before), so there is no partial word to copy
/// out (a `memcpy` call).
#[inline]
fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(K).rotate_left(26);
    // In range at every use below; `get` stands in for the check, without a panic path.
    let word = |at: usize| {
        bytes
            .get(at..)
            .and_then(|s| s.first_chunk())
            .map_or(0, |w| u64::from_le_bytes(*w))
    };
    let half = |at: usize| {
        bytes
            .get(at..)
            .and_then(|s| s.first_chunk())
            .map_or(0, |w| u32::from_le_bytes(*w))
    };
    let n = bytes.len();
    let mut h = (n as u64).wrapping_mul(K);
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            h = mix(h, word(at));
            at += 8;
        }
        h = mix(h, word(n - 8));
    } else if n >= 4 {
        h = mix(h, u64::from(half(0)) | u64::from(half(n - 4)) << 32);
    } else if n > 0 {
        let w = u64::from(bytes[0]) | u64::from(bytes[n / 2]) << 8 | u64::from(bytes[n - 1]) << 16;
        h = mix(h, w);
    }
    h ^ (h >> 29)
}

impl Vocab {
    /// Build from token bytes indexed by rank, an empty one for each gap (an id that no
    /// ordinary token has). Names the first problem found.
    pub fn new(tokens: &[Vec<u8>]) -> Result<Vocab, Error> {
        if tokens.len() >= u32::MAX as usize / 2 {
            return Err(Error::InvalidVocab {
                message: format!("{} tokens is too many", tokens.len()),
            });
        }
        // Gaps take table rows like tokens, so a few tokens with ranks in the billions
        // (a mistake in a file) must not size tables; real vocabularies leave few gaps.
        let gaps = tokens.iter().filter(|t| t.is_empty()).count();
        if gaps > tokens.len() - gaps {
            return Err(Error::InvalidVocab {
                message: format!(
                    "the ranks run to {} but there are only {} tokens: at most as many ids may \
                     be left without a token as there are tokens",
                    tokens.len() - 1,
                    tokens.len() - gaps
                ),
            });
        }
        let total: usize = tokens.iter().map(Vec::len).sum();
        if total >= u32::MAX as usize {
            return Err(Error::InvalidVocab {
                message: "token bytes exceed 4 GiB".to_string(),
            });
        }
        let mut table = Tokens::with_capacity(tokens.len(), total);
        let mut byte_ranks = [NONE; 256];
        for (rank, t) in tokens.iter().enumerate() {
            if t.is_empty() {
                table.push_gap();
                continue;
            }
            if let Some(other) = table.insert(t) {
                return Err(Error::InvalidVocab {
                    message: format!(
                        "tokens {other} and {rank} have the same bytes {}",
                        show_bytes(t)
                    ),
                });
            }
            if t.len() == 1 {
                byte_ranks[t[0] as usize] = rank as u32;
            }
        }
        let missing = |b: usize| byte_ranks[b] == NONE;
        let all_bytes = !(0..256).any(missing);
        if let Some(b) = (0..256).find(|&b| missing(b) && !not_utf8(b as u8)) {
            return Err(Error::InvalidVocab {
                message: format!(
                    "byte 0x{b:02x} is not a token; a byte-level vocabulary needs every byte \
                     UTF-8 text can hold (all but 0xc0, 0xc1 and 0xf5..0xff)"
                ),
            });
        }
        if !all_bytes {
            // Merging looks up each byte of a token: none may be a byte without a token.
            let held = tokens
                .iter()
                .enumerate()
                .find_map(|(rank, t)| t.iter().find(|&&b| missing(b as usize)).map(|&b| (rank, b)));
            if let Some((rank, b)) = held {
                return Err(Error::InvalidVocab {
                    message: format!(
                        "token {rank} ({}) holds the byte 0x{b:02x}, which is not a token",
                        show_bytes(&tokens[rank])
                    ),
                });
            }
        }
        let pairs = PairIndex::new(tokens, byte_ranks);
        let mut reachable = [true; 2];
        for (rank, t) in tokens.iter().enumerate() {
            if t.len() > 1 && pairs.parents(rank as u32).is_none() {
                reachable[usize::from(t.len() > SHORT_TOKEN)] = false;
            }
        }
        let atoms = Atoms::new(tokens, &pairs);
        Ok(Vocab {
            tokens: table,
            pairs,
            reachable,
            atoms,
            all_bytes,
        })
    }

    /// One more than the largest rank: the number of mergeable tokens and gaps.
    #[inline]
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the vocabulary is empty (it never is once built; for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of token `rank`, empty for a gap. Panics if out of range; callers check with
    /// [`Vocab::len`].
    #[inline]
    pub fn token(&self, rank: u32) -> &[u8] {
        self.tokens.token(rank)
    }

    /// The bytes of token `rank`, or `None` if there is no such mergeable token (out of range
    /// or a gap).
    #[inline]
    pub fn get(&self, rank: u32) -> Option<&[u8]> {
        ((rank as usize) < self.len())
            .then(|| self.token(rank))
            .filter(|t| !t.is_empty())
    }

    /// Whether `rank` is in range but no token has it (see the module doc).
    pub fn is_gap(&self, rank: u32) -> bool {
        (rank as usize) < self.len() && self.token(rank).is_empty()
    }

    /// The rank of a byte string, if it is a token.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.tokens.rank(bytes)
    }

    /// The rank of the single-byte token for `b` (`u32::MAX` for a byte UTF-8 never holds
    /// that the vocabulary leaves out: see [`Vocab::byte_without_token`]).
    #[inline]
    pub fn byte_rank(&self, b: u8) -> u32 {
        self.pairs.byte_rank(b)
    }

    /// The first byte of `bytes` that is no token, if any: every byte of UTF-8 text is one,
    /// so only merging bytes of another kind needs this check first.
    pub fn byte_without_token(&self, bytes: &[u8]) -> Option<u8> {
        if self.all_bytes {
            return None;
        }
        bytes.iter().copied().find(|&b| self.byte_rank(b) == NONE)
    }

    /// The rank of `left ++ right` if they are that token's parents (tiktoken's merge rule;
    /// see the module doc for why other splits never need looking up).
    #[inline]
    pub fn merge_rank(&self, left: u32, right: u32) -> Option<u32> {
        self.pairs.get(left, right)
    }

    /// Start loading what `merge_rank(left, right)` reads, to look it up later without waiting.
    #[inline]
    pub fn prefetch_merge(&self, left: u32, right: u32) {
        self.pairs.prefetch(left, right);
    }

    /// `merge_rank` of two single-byte tokens given as bytes; `u32::MAX` when they do not merge.
    #[inline]
    pub fn byte_pair_rank(&self, first: u8, second: u8) -> u32 {
        self.pairs.byte_pair(first, second)
    }

    /// The two tokens that merge into `rank`: `None` for single bytes, and for tokens that no
    /// run of the rule produces (they appear only when a whole chunk equals them).
    #[inline]
    pub fn parents(&self, rank: u32) -> Option<(u32, u32)> {
        self.pairs.parents(rank)
    }

    /// Merge `bytes` alone by the pair index, plainly (see [`PairIndex::merge_alone`]).
    #[cfg(test)]
    pub(crate) fn merge_alone(
        &self,
        bytes: &[u8],
        parts: &mut Vec<u32>,
        merged: impl FnMut(usize, usize, u32),
    ) {
        self.pairs.merge_alone(bytes, parts, merged)
    }

    /// Whether the merge rule alone makes every token of `len` bytes' class (at most
    /// [`SHORT_TOKEN`] bytes, or more) out of its bytes: then a chunk of that length needs no
    /// whole-chunk lookup before merging (tiktoken's rule takes a chunk that is a token as is;
    /// merging its bytes gives the same id). True for both classes in gpt2, cl100k_base and
    /// o200k_base; a vocabulary with an unreachable token keeps the lookup for its class.
    #[inline]
    pub fn merges_make_tokens_of(&self, len: usize) -> bool {
        self.reachable[usize::from(len > SHORT_TOKEN)]
    }

    /// Characters whose tokens a merge may put in place before it starts (see [`atoms`]).
    #[inline]
    pub fn atoms(&self) -> &Atoms {
        &self.atoms
    }

    /// Longest token length in bytes.
    pub fn max_token_len(&self) -> usize {
        self.tokens.max_len
    }
}

/// Token bytes <-> ranks: the bytes of every token, and a hash table from bytes to rank.
#[derive(Debug, Clone)]
struct Tokens {
    /// All token bytes concatenated; token `r` is `data[starts[r]..starts[r + 1]]`.
    data: Vec<u8>,
    starts: Vec<u32>,
    /// Open-addressing table of `rank + 1` (0 = empty), hashed by token bytes.
    slots: Table<u32>,
    mask: usize,
    /// Longest token length in bytes: a longer string is no token, without hashing it.
    max_len: usize,
}

impl Tokens {
    /// An empty table with room for `n` tokens of `bytes` bytes in all.
    fn with_capacity(n: usize, bytes: usize) -> Tokens {
        let cap = (n * 2).next_power_of_two().max(16);
        Tokens {
            data: Vec::with_capacity(bytes),
            starts: vec![0],
            slots: Table::zeroed(cap),
            mask: cap - 1,
            max_len: 0,
        }
    }

    /// Leave the next rank without a token: its bytes are empty and no lookup finds it.
    fn push_gap(&mut self) {
        self.starts.push(self.data.len() as u32);
    }

    /// Add `bytes` as the next rank, or return the rank of the token with the same bytes.
    fn insert(&mut self, bytes: &[u8]) -> Option<u32> {
        let rank = self.len() as u32;
        let mut i = hash_bytes(bytes) as usize & self.mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = rank + 1;
                    self.data.extend_from_slice(bytes);
                    self.starts.push(self.data.len() as u32);
                    self.max_len = self.max_len.max(bytes.len());
                    return None;
                }
                s if self.token(s - 1) == bytes => return Some(s - 1),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.starts.len() - 1
    }

    #[inline]
    fn token(&self, rank: u32) -> &[u8] {
        let r = rank as usize;
        &self.data[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    #[inline]
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() > self.max_len {
            return None;
        }
        let mut i = hash_bytes(bytes) as usize & self.mask;
        loop {
            match self.slots[i] {
                0 => return None,
                s if self.token(s - 1) == bytes => return Some(s - 1),
                _ => i = (i + 1) & self.mask,
            }
        }
    }
}

/// Bytes shown safely for messages: printable ASCII as is, everything else escaped.
pub fn show_bytes(bytes: &[u8]) -> String {
    let mut s = String::from("b'");
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'\'' => s.push_str("\\'"),
            0x20..=0x7e => s.push(b as char),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s.push('\'');
    s
}

#[cfg(test)]
mod tests {
    use super::pairs::RESCAN_UP_TO;
    use super::*;
    use crate::testing::Rng;

    fn bytes_plus(extra: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        v.extend(extra.iter().map(|e| e.to_vec()));
        v
    }

    #[test]
    fn ranks_round_trip() {
        let v = Vocab::new(&bytes_plus(&[b"ab", b"abc"])).unwrap();
        assert_eq!(v.rank(b"ab"), Some(256));
        assert_eq!(v.rank(b"abc"), Some(257));
        assert_eq!(v.rank(b"abd"), None);
        assert_eq!(v.token(257), b"abc");
        assert_eq!(v.merge_rank(256, b'c' as u32), Some(257));
        assert_eq!(v.merge_rank(b'a' as u32, b'b' as u32), Some(256));
        assert_eq!(v.merge_rank(b'b' as u32, b'c' as u32), None);
    }

    #[test]
    fn rank_finds_exactly_the_tokens_short_and_long() {
        // Tokens of every length around `SHORT_TOKEN` and each word size of `hash_bytes`, zero
        // bytes included, and strings that differ from a token only in length or in one byte,
        // or are prefixes of one.
        let mut rng = crate::testing::Rng(99);
        let mut extra: Vec<Vec<u8>> = Vec::new();
        for len in 2..=SHORT_TOKEN + 6 {
            for _ in 0..40 {
                extra.push(rng.text(b"ab\0\xff", len));
            }
        }
        extra.sort();
        extra.dedup();
        let refs: Vec<&[u8]> = extra.iter().map(|t| &t[..]).collect();
        let tokens = bytes_plus(&refs);
        let v = Vocab::new(&tokens).unwrap();
        let want: std::collections::HashMap<&[u8], u32> = tokens
            .iter()
            .enumerate()
            .map(|(r, t)| (&t[..], r as u32))
            .collect();
        let mut probes: Vec<Vec<u8>> = tokens.clone();
        for t in &extra {
            probes.push([&t[..], b"\0"].concat());
            probes.push(t[..t.len() - 1].to_vec());
            let mut flipped = t.clone();
            flipped[rng.below(t.len())] ^= 1;
            probes.push(flipped);
        }
        probes.push(Vec::new());
        for p in &probes {
            assert_eq!(v.rank(p), want.get(&p[..]).copied(), "{}", show_bytes(p));
        }
    }

    #[test]
    fn duplicates_and_missing_bytes_are_named() {
        let err = Vocab::new(&bytes_plus(&[b"ab", b"ab"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("256 and 257"), "{err}");
        // Long tokens (past `SHORT_TOKEN`) find their twins too.
        let long = b"abcdefghijklmnopqrst";
        let err = Vocab::new(&bytes_plus(&[b"xy", long, b"z!", long]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("257 and 259"), "{err}");
        let err = Vocab::new(&[b"a".to_vec()]).unwrap_err().to_string();
        assert!(err.contains("byte 0x00"), "{err}");
        let mut far = bytes_plus(&[b"ab"]);
        far.resize(1000, Vec::new());
        far.push(b"abc".to_vec());
        let err = Vocab::new(&far).unwrap_err().to_string();
        assert!(
            err.contains("run to 1000 but there are only 258 tokens"),
            "{err}"
        );
    }

    /// The bytes UTF-8 never holds may be left out, and then no token may hold one; any other
    /// byte is needed.
    #[test]
    fn bytes_utf8_never_holds_may_be_missing() {
        let utf8: Vec<Vec<u8>> = (0..=255u8)
            .filter(|&b| !not_utf8(b))
            .map(|b| vec![b])
            .collect();
        assert_eq!(utf8.len(), 256 - 13);
        let mut tokens = utf8.clone();
        tokens.push("é".as_bytes().to_vec());
        let v = Vocab::new(&tokens).unwrap();
        assert_eq!(v.byte_without_token("é€🙂".as_bytes()), None);
        assert_eq!(v.byte_without_token(b"a\xff\xc0"), Some(0xff));
        let all: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let all = Vocab::new(&all).unwrap();
        assert_eq!(all.byte_without_token(b"\xff"), None);
        assert_eq!(v.rank("é".as_bytes()), Some(243));
        let mut held = utf8.clone();
        held.push(b"a\xc0".to_vec());
        let err = Vocab::new(&held).unwrap_err().to_string();
        assert!(err.contains("holds the byte 0xc0"), "{err}");
        let err = Vocab::new(&utf8[1..]).unwrap_err().to_string();
        assert!(err.contains("byte 0x00 is not a token"), "{err}");
    }

    /// Gaps (empty tokens) are ids without a token: no lookup finds them, no merge makes
    /// them, and ranks around them keep their priority.
    #[test]
    fn gaps_are_ids_without_a_token() {
        let mut tokens = vec![Vec::new(); 3];
        tokens.extend(bytes_plus(&[b"ab", b"", b"abc", b"", b"", b"bc"]));
        let v = Vocab::new(&tokens).unwrap();
        assert_eq!(v.len(), 3 + 256 + 6);
        assert_eq!(v.byte_rank(b'a'), 3 + 97);
        assert_eq!(v.rank(b"abc"), Some(261));
        assert_eq!(v.rank(b""), None);
        assert_eq!(v.get(0), None);
        assert_eq!(v.get(260), None);
        assert_eq!(v.get(261), Some(&b"abc"[..]));
        assert!(v.is_gap(0) && v.is_gap(260) && v.is_gap(263) && !v.is_gap(264));
        assert!(!v.is_gap(265));
        assert_eq!(v.parents(261), Some((259, 3 + 99)));
        assert_eq!(v.parents(260), None);
        assert_eq!(v.parents(264), Some((3 + 98, 3 + 99)));
        assert!(v.merges_make_tokens_of(2) && v.merges_make_tokens_of(3));
    }

    #[test]
    fn parents_are_the_last_merge() {
        let v = Vocab::new(&bytes_plus(&[b"bc", b"ab", b"abc", b"zz\xff"])).unwrap();
        assert_eq!(v.parents(256), Some((98, 99)));
        assert_eq!(v.parents(258), Some((97, 256)));
        assert_eq!(v.parents(259), None);
        assert_eq!(v.parents(97), None);
        assert!(!v.merges_make_tokens_of(3));
        assert!(v.merges_make_tokens_of(SHORT_TOKEN + 1));
    }

    /// The plain merge by the pair index tells of each merge, with the bytes it joins, and
    /// leaves the parts no pair joins.
    #[test]
    fn merging_alone_reports_each_merge() {
        let v = Vocab::new(&bytes_plus(&[b"bc", b"ab", b"abc", b"zz\xff"])).unwrap();
        let (mut parts, mut seen) = (Vec::new(), Vec::new());
        v.merge_alone(b"xabcab", &mut parts, |s, e, r| seen.push((s, e, r)));
        assert_eq!(parts, [120, 258, 257]);
        assert_eq!(seen, [(2, 4, 256), (4, 6, 257), (1, 4, 258)]);
        // A token no merge makes is not formed: no whole-chunk lookup.
        v.merge_alone(b"zz\xff", &mut parts, |_, _, _| panic!("no merge"));
        assert_eq!(parts, [122, 122, 255]);
        v.merge_alone(b"", &mut parts, |_, _, _| panic!("no merge"));
        assert!(parts.is_empty());
    }

    type Merged = Vec<(usize, usize, u32)>;

    fn both(pairs: &PairIndex, bytes: &[u8]) -> [(Vec<u32>, Merged); 2] {
        let mut out: [(Vec<u32>, Merged); 2] = Default::default();
        let [rescan, heap] = &mut out;
        pairs.merge_alone_rescan(bytes, &mut rescan.0, |s, e, r| rescan.1.push((s, e, r)));
        pairs.merge_alone_heap(bytes, &mut heap.0, |s, e, r| heap.1.push((s, e, r)));
        out
    }

    /// The heap makes the same merges in the same order as the rescan, on vocabularies of
    /// random strings (in random rank order, many not made by any merge) and on texts of
    /// every length around the switch.
    #[test]
    fn heap_merges_alone_as_the_rescan_does() {
        let mut rng = Rng(7);
        let mut long_merges = 0;
        for round in 0..40 {
            let mut tokens = bytes_plus(&[]);
            while tokens.len() < 276 + round * 5 {
                let t: Vec<u8> = (0..2 + rng.below(8))
                    .map(|_| b"ab c"[rng.below(4)])
                    .collect();
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
            let vocab = Vocab::new(&tokens).unwrap();
            for len in [0, 1, 2, 3, 17, RESCAN_UP_TO, RESCAN_UP_TO + 1, 700] {
                let text: Vec<u8> = (0..len).map(|_| b"ab c"[rng.below(4)]).collect();
                let [rescan, heap] = both(&vocab.pairs, &text);
                assert_eq!(heap, rescan, "{:?}", String::from_utf8_lossy(&text));
                if len > RESCAN_UP_TO {
                    long_merges += heap.1.len();
                }
            }
        }
        assert!(long_merges > 10_000, "{long_merges}");
    }

    /// A chain of tokens each twice the last: the index holds every one's parents.
    #[test]
    fn long_chains_get_their_parents() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.extend((1..=14).map(|k| vec![b'a'; 1 << k]));
        let vocab = Vocab::new(&tokens).unwrap();
        for k in 2..=14u32 {
            let half = 255 + k - 1;
            assert_eq!(vocab.pairs.parents(255 + k), Some((half, half)));
        }
        let [rescan, heap] = both(&vocab.pairs, &[b'a'; 3000]);
        assert_eq!(heap, rescan);
        let lengths: Vec<usize> = heap.0.iter().map(|&r| vocab.token(r).len()).collect();
        assert_eq!(lengths, [2048, 512, 256, 128, 32, 16, 8]);
    }
}
