//! Vocabularies: token bytes <-> ranks, and the pair table the encoder merges with.
//!
//! A rank is a token's id and its merge priority at once (tiktoken's convention): ranks are
//! dense, `0..len`, and every single byte must be a token so that any input can be encoded.
//!
//! tiktoken merges two adjacent parts whenever their concatenation is a token. A token
//! usually has several such splits (1.4 M splits for o200k's 200 k tokens), but only one can
//! ever occur: its *parents*, the two parts that tiktoken's rule leaves when run on the
//! token's own bytes. Proof: if parts L and R are adjacent in some run, no merge has crossed
//! the span L ++ R, so that span has evolved exactly as a run on its bytes alone would, and
//! that run reaches the state [L, R] only as its last step. So the pair table holds parents
//! only — 7x smaller, which keeps it in cache — and gives the same ids; tests compare it with
//! a literal port of tiktoken's byte-slice rule on random vocabularies.

use crate::atoms::Atoms;
use crate::error::Error;
use crate::pages::Table;
use crate::short_key::MAX_KEY;

/// Bytes <-> rank maps for the mergeable (non-special) tokens of a vocabulary.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// All token bytes concatenated; token `r` is `data[starts[r]..starts[r + 1]]`.
    data: Vec<u8>,
    starts: Vec<u32>,
    /// Open-addressing table of `rank + 1` (0 = empty), hashed by token bytes.
    slots: Table<u32>,
    mask: usize,
    /// Longest token length in bytes: a longer string is no token, without hashing it.
    max_len: usize,
    byte_ranks: [u32; 256],
    /// parents -> rank of the token they merge into.
    pairs: PairTable,
    /// `merge_rank` of every pair of single bytes, indexed by `first << 8 | second`: the first
    /// round of every chunk's merge reads it instead of the pair table (256 KB, stays in L2).
    byte_pairs: Vec<u32>,
    /// For each rank, its parents; `(NONE, NONE)` for single bytes and unreachable tokens.
    parents: Vec<(u32, u32)>,
    /// Whether every token of 2..=`MAX_KEY` bytes, and every longer one, has parents (see
    /// `merges_make_tokens_of`).
    reachable: [bool; 2],
    /// Characters the merge may start from (empty while `new` derives the parents).
    atoms: Atoms,
}

const NONE: u32 = u32::MAX;

/// Ranks are packed 21 bits at a time into the pair table's 64-bit slots.
pub const MAX_RANKS: usize = 1 << 21;

/// Open addressing over packed `left+1 | right | merged` slots (0 = empty): one cache line
/// touched per lookup, no pointers.
#[derive(Debug, Clone)]
struct PairTable {
    slots: Table<u64>,
    mask: usize,
}

impl PairTable {
    fn with_capacity(n: usize) -> PairTable {
        let cap = (n * 2).next_power_of_two().max(16);
        PairTable {
            slots: Table::zeroed(cap),
            mask: cap - 1,
        }
    }

    #[inline]
    fn key(left: u32, right: u32) -> u64 {
        ((left as u64 + 1) << 21) | right as u64
    }

    #[inline]
    fn start(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize & self.mask
    }

    fn insert(&mut self, left: u32, right: u32, merged: u32) {
        let key = Self::key(left, right);
        let mut i = self.start(key);
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = (key << 21) | merged as u64;
    }

    /// Start loading the slot where a lookup of `(left, right)` begins.
    #[inline]
    fn prefetch(&self, left: u32, right: u32) {
        if let Some(slot) = self.slots.get(self.start(Self::key(left, right))) {
            crate::pages::prefetch(slot);
        }
    }

    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<u32> {
        let key = Self::key(left, right);
        let mut i = self.start(key);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 21 == key {
                return Some((slot & (MAX_RANKS as u64 - 1)) as u32);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// Hash of a short byte string: 8-byte words folded with a multiply (FxHash-style), the last
/// word read where it ends (overlapping the one before), so there is no partial word to copy
/// out (a `memcpy` call).
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
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
    /// Build from token bytes indexed by rank. Names the first problem found.
    pub fn new(tokens: &[Vec<u8>]) -> Result<Vocab, Error> {
        if tokens.len() >= u32::MAX as usize / 2 {
            return Err(Error::InvalidVocab {
                message: format!("{} tokens is too many", tokens.len()),
            });
        }
        let total: usize = tokens.iter().map(Vec::len).sum();
        if total >= u32::MAX as usize {
            return Err(Error::InvalidVocab {
                message: "token bytes exceed 4 GiB".to_string(),
            });
        }
        let mut data = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(tokens.len() + 1);
        for t in tokens {
            starts.push(data.len() as u32);
            data.extend_from_slice(t);
        }
        starts.push(data.len() as u32);
        let cap = (tokens.len() * 2).next_power_of_two().max(16);
        let mut vocab = Vocab {
            data,
            starts,
            slots: Table::zeroed(cap),
            mask: cap - 1,
            max_len: tokens.iter().map(Vec::len).max().unwrap_or(0),
            byte_ranks: [u32::MAX; 256],
            pairs: PairTable::with_capacity(tokens.len()),
            byte_pairs: Vec::new(),
            parents: vec![(NONE, NONE); tokens.len()],
            reachable: [false; 2],
            atoms: Atoms::default(),
        };
        for (rank, t) in tokens.iter().enumerate() {
            if t.is_empty() {
                return Err(Error::InvalidVocab {
                    message: format!("token {rank} is empty"),
                });
            }
            if let Some(other) = vocab.insert(t, rank as u32) {
                return Err(Error::InvalidVocab {
                    message: format!(
                        "tokens {other} and {rank} have the same bytes {}",
                        show_bytes(t)
                    ),
                });
            }
            if t.len() == 1 {
                vocab.byte_ranks[t[0] as usize] = rank as u32;
            }
        }
        if let Some(b) = vocab.byte_ranks.iter().position(|&r| r == u32::MAX) {
            return Err(Error::InvalidVocab {
                message: format!(
                    "byte 0x{b:02x} is not a token; a byte-level vocabulary needs all 256 single bytes"
                ),
            });
        }
        // Parents of each token by tiktoken's rule on its own bytes, shortest tokens first so
        // that the table already holds every pair a shorter token can contain.
        let mut by_len: Vec<u32> = (0..tokens.len() as u32)
            .filter(|&r| tokens[r as usize].len() > 1)
            .collect();
        by_len.sort_by_key(|&r| tokens[r as usize].len());
        let mut parts = Vec::new();
        for rank in by_len {
            parts.clear();
            crate::encode::bpe_literal(&vocab, &tokens[rank as usize], &mut parts);
            if let [left, right] = parts[..] {
                vocab.pairs.insert(left, right, rank);
                vocab.parents[rank as usize] = (left, right);
            }
        }
        let mut reachable = [true; 2];
        for (t, parents) in tokens.iter().zip(&vocab.parents) {
            if t.len() > 1 && parents.0 == NONE {
                reachable[usize::from(t.len() > MAX_KEY)] = false;
            }
        }
        vocab.reachable = reachable;
        vocab.byte_pairs = (0..=u16::MAX)
            .map(|i| {
                let (a, b) = (
                    vocab.byte_ranks[(i >> 8) as usize],
                    vocab.byte_ranks[(i & 255) as usize],
                );
                vocab.pairs.get(a, b).unwrap_or(u32::MAX)
            })
            .collect();
        vocab.atoms = Atoms::new(&vocab);
        Ok(vocab)
    }

    /// Add token `rank`, or return the rank of the token with the same bytes.
    fn insert(&mut self, bytes: &[u8], rank: u32) -> Option<u32> {
        let mut i = hash_bytes(bytes) as usize & self.mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = rank + 1;
                    return None;
                }
                s if self.token(s - 1) == bytes => return Some(s - 1),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    /// Number of mergeable tokens (ranks are `0..len`).
    #[inline]
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether the vocabulary is empty (it never is once built; for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of token `rank`. Panics if out of range; callers check with [`Vocab::len`].
    #[inline]
    pub fn token(&self, rank: u32) -> &[u8] {
        let r = rank as usize;
        &self.data[self.starts[r] as usize..self.starts[r + 1] as usize]
    }

    /// The bytes of token `rank`, or `None` if there is no such mergeable token.
    #[inline]
    pub fn get(&self, rank: u32) -> Option<&[u8]> {
        ((rank as usize) < self.len()).then(|| self.token(rank))
    }

    /// The rank of a byte string, if it is a token.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
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

    /// The rank of the single-byte token for `b`.
    #[inline]
    pub fn byte_rank(&self, b: u8) -> u32 {
        self.byte_ranks[b as usize]
    }

    /// The rank of `left ++ right` if they are that token's parents (tiktoken's merge rule;
    /// see the module comment for why other splits never need looking up).
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
        match self.byte_pairs.get((first as usize) << 8 | second as usize) {
            Some(&r) => r,
            // While `new` derives the parents the table is not built yet.
            None => self
                .merge_rank(self.byte_rank(first), self.byte_rank(second))
                .unwrap_or(u32::MAX),
        }
    }

    /// The two tokens that merge into `rank`: `None` for single bytes, and for tokens that no
    /// run of the rule produces (they appear only when a whole chunk equals them).
    #[inline]
    pub fn parents(&self, rank: u32) -> Option<(u32, u32)> {
        self.parents
            .get(rank as usize)
            .copied()
            .filter(|p| p.0 != NONE)
    }

    /// Whether the merge rule alone makes every token of `len` bytes' class (at most
    /// `MAX_KEY` bytes, or more) out of its bytes: then a chunk of that length needs no
    /// whole-chunk lookup before merging (tiktoken's rule takes a chunk that is a token as is;
    /// merging its bytes gives the same id). True for both classes in gpt2, cl100k_base and
    /// o200k_base; a vocabulary with an unreachable token keeps the lookup for its class.
    #[inline]
    pub fn merges_make_tokens_of(&self, len: usize) -> bool {
        self.reachable[usize::from(len > MAX_KEY)]
    }

    /// Characters whose tokens a merge may put in place before it starts (see `atoms.rs`).
    #[inline]
    pub fn atoms(&self) -> &Atoms {
        &self.atoms
    }

    /// Longest token length in bytes.
    pub fn max_token_len(&self) -> usize {
        self.max_len
    }
}

/// Parse a tiktoken rank file (`<base64 token> <rank>` per line) into tokens by rank.
///
/// Strict: bad base64, a missing rank, a repeated rank or token, or a gap in the ranks is an
/// error naming the 1-based line (for a gap, the rank that is missing).
pub fn parse_rank_file(data: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let bad = |line: usize, message: String| Error::VocabFile { line, message };
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    let mut line_of: Vec<usize> = Vec::new();
    let mut n = 0usize;
    // Ranks are 0..n without gaps, one a line, so none can reach the number of lines: a
    // larger one means a gap, and is kept out of the table it would size.
    let lines = memchr::memchr_iter(b'\n', data).count() + 1;
    let mut beyond: Option<(usize, usize)> = None;
    for (i, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.is_empty() {
            continue;
        }
        let mut fields = raw.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let (Some(tok), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad(
                line,
                "expected '<base64 token> <rank>'; the line is truncated or malformed".into(),
            ));
        };
        let token = decode_base64(tok).ok_or_else(|| {
            bad(
                line,
                format!("bad base64 {:?}", String::from_utf8_lossy(tok)),
            )
        })?;
        if token.is_empty() {
            return Err(bad(line, "the token is empty".into()));
        }
        let rank: usize = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.parse().ok())
            .filter(|&r: &usize| r < u32::MAX as usize / 2)
            .ok_or_else(|| {
                bad(
                    line,
                    format!(
                        "rank {:?} is not a non-negative integer",
                        String::from_utf8_lossy(rank)
                    ),
                )
            })?;
        if rank >= lines {
            beyond = beyond.or(Some((line, rank)));
            n += 1;
            continue;
        }
        if rank >= tokens.len() {
            tokens.resize(rank + 1, None);
            line_of.resize(rank + 1, 0);
        }
        if tokens[rank].is_some() {
            return Err(bad(
                line,
                format!("rank {rank} was already given on line {}", line_of[rank]),
            ));
        }
        tokens[rank] = Some(token);
        line_of[rank] = line;
        n += 1;
    }
    if n == 0 {
        return Err(bad(1, "the file has no tokens".into()));
    }
    if let Some((line, rank)) = beyond {
        let missing = tokens
            .iter()
            .position(Option::is_none)
            .unwrap_or(tokens.len());
        return Err(bad(
            line,
            format!(
                "rank {missing} is missing: ranks must be 0..{} without gaps, and this line \
                 has rank {rank}",
                n - 1
            ),
        ));
    }
    if let Some(missing) = tokens.iter().position(Option::is_none) {
        return Err(bad(
            line_of[missing + 1..]
                .iter()
                .copied()
                .find(|&l| l > 0)
                .unwrap_or(0),
            format!(
                "rank {missing} is missing: ranks must be 0..{} without gaps",
                tokens.len() - 1
            ),
        ));
    }
    Ok(tokens.into_iter().flatten().collect())
}

/// Strict standard base64 (with padding), as tiktoken writes it.
fn decode_base64(s: &[u8]) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let quads = s.len() / 4;
    for (q, chunk) in s.chunks_exact(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && q + 1 != quads) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | val(c)?;
        }
        acc <<= 6 * pad as u32;
        let bytes = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
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
    use super::*;

    pub(crate) fn bytes_plus(extra: &[&[u8]]) -> Vec<Vec<u8>> {
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
        // Tokens of every length around `MAX_KEY` (where encoding stops skipping the lookup),
        // zero bytes included, and strings that differ from a token only in length or in one
        // byte, or are prefixes of one.
        let mut rng = crate::encode::Rng(99);
        let mut extra: Vec<Vec<u8>> = Vec::new();
        for len in 2..=MAX_KEY + 6 {
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
    fn rank_files_parse_strictly() {
        assert_eq!(
            parse_rank_file(b"YQ== 1\nYg== 0\n").unwrap(),
            [b"b".to_vec(), b"a".to_vec()]
        );
        assert_eq!(
            parse_rank_file(b"IGhlbGxv 0").unwrap(),
            [b" hello".to_vec()]
        );
        let line = |d: &[u8]| match parse_rank_file(d) {
            Err(Error::VocabFile { line, message }) => (line, message),
            other => panic!("expected a file error, got {other:?}"),
        };
        assert_eq!(line(b"YQ== 0\nYg==\n").0, 2);
        assert!(line(b"YQ== 0\nY!== 1\n").1.contains("bad base64"));
        assert!(line(b"YQ== 0\nYg== 0\n")
            .1
            .contains("already given on line 1"));
        let (l, m) = line(b"YQ== 0\nYg== 2\n");
        assert!(m.contains("rank 1 is missing"), "{m}");
        assert_eq!(l, 2);
        assert!(line(b"YQ== x\n").1.contains("not a non-negative integer"));
        assert!(line(b"").1.contains("no tokens"));
        // A rank no file of its length can reach is refused before it sizes a table (a
        // rank of a billion would ask for 24 GB).
        let (l, m) = line(b"YQ== 0\nYg== 1000000000\n");
        assert_eq!(l, 2);
        assert!(m.contains("rank 1 is missing"), "{m}");
        assert!(m.contains("this line has rank 1000000000"), "{m}");
    }

    #[test]
    fn duplicates_and_missing_bytes_are_named() {
        let err = Vocab::new(&bytes_plus(&[b"ab", b"ab"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("256 and 257"), "{err}");
        // Long tokens (past `MAX_KEY`) find their twins too.
        let long = b"abcdefghijklmnopqrst";
        let err = Vocab::new(&bytes_plus(&[b"xy", long, b"z!", long]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("257 and 259"), "{err}");
        let err = Vocab::new(&[b"a".to_vec()]).unwrap_err().to_string();
        assert!(err.contains("byte 0x00"), "{err}");
        let err = Vocab::new(&bytes_plus(&[b""])).unwrap_err().to_string();
        assert!(err.contains("token 256 is empty"), "{err}");
    }
}
