//! The long path: linear-time BPE for long chunks (1 MB of `a`, of spaces, of letters without
//! a space).
//!
//! The rule run with a heap (`heap`) is O(n log n) with large constants (docs/performance.md,
//! 'Merge algorithms'). Instead we *search* for the answer, using a fact proved below: a sequence
//! of tokens `t1 .. tk` covering the chunk is its BPE encoding if and only if every adjacent
//! pair is *compatible*, i.e. `bpe(t_i ++ t_i+1) == [t_i, t_i+1]` (and, for k = 1, the token
//! is reachable: `bpe(t1) == [t1]`). The idea is from the rust-gems `bpe` crate ("backtracking
//! encoder"); the proof and this implementation are ours and assume nothing about the
//! vocabulary beyond tiktoken's rule.
//!
//! Why the fact holds. Run tiktoken's rule on the whole chunk. Until the first merge that
//! crosses a boundary between two `t_i`, each span evolves exactly as `bpe(t_i)` alone would,
//! because the rule always takes the global minimum and a span's own candidates are the same
//! as when it is alone. If a crossing merge of rank r happens at boundary b, then running the
//! rule on `t_b ++ t_b+1` alone goes through the same internal states and meets the same
//! crossing pair as its minimum (leftmost among equals), so it would cross too: the pair was
//! not compatible. So with all pairs compatible no merge ever crosses, each span ends as
//! `[t_i]`, and no final pair merges (compatibility says so): the result is `t1 .. tk`.
//! Conversely the BPE encoding has compatible pairs by the same restriction argument. Hence
//! the encoding is the *unique* compatible cover, and any compatible cover of a prefix
//! `s[..p]` is the encoding of that prefix.
//!
//! The search: at each position try the longest token that matches, then shorter ones; push
//! a token only if it is compatible with the previous one (the first must be reachable). When
//! nothing fits at position p, pop and try shorter tokens before p, and remember p as dead:
//! every path reaching p is the same (the unique encoding of `s[..p]`), so p never needs to be
//! tried again. Each position dies at most once, so the search is linear in practice.
//!
//! Checking compatibility fast. Running the merge on `a ++ b` costs O(len^2) and an
//! allocation; instead we replay the two tokens' merge histories backwards (their merge trees),
//! watching the pair that straddles the boundary. When both histories merge in non-decreasing
//! rank order ("regular" tokens), running the rule on `a ++ b` interleaves them by rank
//! (leftmost first on ties), so the straddling pair (x, y) of each moment exists until the
//! next merge that consumes x or y (rank d): it is merged first, and the pair incompatible, iff
//! its rank is below d, or equal to d when the consuming merge is on the right (the leftmost
//! of equal ranks goes first). Real vocabularies contain pairs whose concatenation has a
//! *lower* rank than the parts (22k in gpt2, 44k in cl100k, 71k in o200k), so this is checked
//! against every pair, not only the merge tree's; tokens whose own history is irregular are
//! checked by running the merge on their bytes (once per pair, remembered).
//!
//! The windows. Where the tokens are short (random letters: 1.9 bytes a token) the search
//! makes about two compatibility checks a token, each waiting on the last. There the chunk is
//! cut into windows of 64 bytes, each merged by the rescan's rule, eight side by side so that
//! their table reads overlap (`lanes`), and the windows are joined in order: the
//! encoding so far ends in a token `a`, the window's encoding starts with `b`. If `a, b` is
//! compatible, every adjacent pair of the joined sequence is compatible, so by the fact above
//! it is the encoding of the bytes it covers. If not, the last few ids of one and the first few
//! of the other are encoded again as one span, growing it until its ends are compatible with
//! their neighbours (on random letters, half the borders need one span of 5 bytes). A span
//! that grows past 512 bytes hands the rest of the segment to the search, which carries on
//! from the encoding built so far; either way what is built is the encoding of a prefix, so
//! the two can take turns.

use super::lanes::{self, LANES, LANE_BYTES};
use super::trie::Trie;
use crate::vocab::Vocab;
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;
/// Bytes per window: the most a lane takes.
const WINDOW: usize = LANE_BYTES;

/// How `encode` divides the work between the search and the windows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// The chunk is encoded in segments of this many bytes, each by the search or the windows.
    pub(crate) segment: usize,
    /// A border whose span would grow past this many bytes is left to the search.
    pub(crate) max_span: usize,
    /// The windows take the next segment if this one's tokens averaged fewer bytes than this.
    pub(crate) short_token: usize,
    /// Whether the windows take the first segment.
    pub(crate) windows_first: bool,
}

const LIMITS: Limits = Limits {
    segment: 4096,
    max_span: 512,
    short_token: 4,
    windows_first: false,
};

/// A byte trie of all tokens, for the longest token that starts at a position, and for each
/// token the longest token that is a proper prefix of it (the next candidate to try).
#[derive(Debug, Clone)]
pub struct LongPath {
    trie: Trie,
    /// Tokens that the rule produces from their own bytes merging in non-decreasing rank
    /// order (all of gpt2's, cl100k's and o200k's); single bytes count as regular.
    regular: Vec<bool>,
}

impl LongPath {
    /// None when the vocabulary is too large for the trie (the heap path is used instead).
    pub fn new(vocab: &Vocab) -> Option<LongPath> {
        let trie = Trie::new(vocab)?;
        // A token is regular iff its parents are both regular and older than it. The run on a
        // token's bytes is the runs on its parents' bytes, interleaved by rank with no merge
        // crossing between them (`vocab` proves it), then the merge of the parents: so its
        // ranks never decrease iff neither parent's do and the last merge is the latest. In
        // rank order the parents are decided first, so one pass decides all, without running
        // the rule on any token's bytes (`regular_by_parents_equals_the_literal_run` checks
        // that the two agree).
        let mut regular = vec![false; vocab.len()];
        for rank in 0..vocab.len() as u32 {
            regular[rank as usize] = vocab.token(rank).len() == 1
                || vocab.parents(rank).is_some_and(|(a, b)| {
                    a < rank && b < rank && regular[a as usize] && regular[b as usize]
                });
        }
        Some(LongPath { trie, regular })
    }

    /// Whether bpe(a ++ b) == [a, b], by replaying the merge trees (both tokens regular).
    fn compatible_regular(&self, vocab: &Vocab, a: u32, b: u32) -> bool {
        if vocab.merge_rank(a, b).is_some() {
            return false;
        }
        let (mut x, mut y) = (a, b);
        loop {
            // Formation time of each side's boundary part: its rank, or "never" for a byte.
            let px = vocab.parents(x);
            let py = vocab.parents(y);
            let fx = if px.is_none() { -1 } else { x as i64 };
            let fy = if py.is_none() { -1 } else { y as i64 };
            if fx < 0 && fy < 0 {
                return true;
            }
            if let (true, Some((_, x2))) = (fx > fy, px) {
                // Undo x's last merge (x1, x2): the straddling pair was (x2, y) until then; the
                // merge that ended it is on the left, so it wins a tie.
                if vocab.merge_rank(x2, y).is_some_and(|r| r < x) {
                    return false;
                }
                x = x2;
            } else if let Some((y1, _)) = py {
                // Undo y's last merge (y1, y2): (x, y1) straddled until then and is left of
                // it, so it also loses when ranks are equal.
                if vocab.merge_rank(x, y1).is_some_and(|r| r <= y) {
                    return false;
                }
                y = y1;
            } else {
                return false; // unreachable: fx > fy guarantees px is Some
            }
        }
    }

    /// Encode `chunk` (which is not itself a token) onto `out`.
    pub fn encode(&self, vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
        self.encode_with(vocab, chunk, out, LIMITS);
    }

    /// `encode` with the given limits.
    ///
    /// The chunk is taken in segments, each by the search or the windows, whichever suits the
    /// tokens of the segment before (the first goes to the search, unless the limits say
    /// otherwise). The search costs a few dependent reads per token (two compatibility checks),
    /// the windows a pair-index read per byte that does not start a token: so runs of long
    /// tokens go to the search (where the borders of windows of 64 spaces would also need long
    /// spans), and text of short tokens to the windows (docs/performance.md, 'Merge
    /// algorithms').
    pub(crate) fn encode_with(
        &self,
        vocab: &Vocab,
        chunk: &[u8],
        out: &mut Vec<u32>,
        limits: Limits,
    ) {
        let start = out.len();
        let mut run = Run {
            path: self,
            vocab,
            chunk,
            start,
            max_span: limits.max_span,
            compat: Compat::new(self, vocab),
            dead: Vec::new(),
            ids: Vec::with_capacity(LANES * WINDOW),
            ends: Vec::with_capacity(LANES),
            span: Vec::new(),
        };
        let mut pos = 0;
        let mut windows = limits.windows_first;
        while pos < chunk.len() {
            let until = pos.saturating_add(limits.segment).min(chunk.len());
            let before = out.len();
            let reached = if windows {
                run.windows(out, pos, until)
            } else {
                match run.search(out, pos, until) {
                    Some(reached) => reached,
                    None => {
                        // Impossible by the argument above (the BPE encoding is a compatible
                        // cover); kept as a safe fallback rather than a panic.
                        out.truncate(start);
                        super::chunk(vocab, chunk, out);
                        return;
                    }
                }
            };
            // The search may have replaced tokens made before `pos`: count at least one.
            let tokens = out.len().saturating_sub(before).max(1);
            windows = reached >= until && reached - pos < limits.short_token.saturating_mul(tokens);
            pos = reached;
        }
    }
}

/// One chunk being encoded: the state the search and the windows share.
struct Run<'a> {
    path: &'a LongPath,
    vocab: &'a Vocab,
    chunk: &'a [u8],
    /// Where the chunk's ids begin in `out`.
    start: usize,
    max_span: usize,
    compat: Compat<'a>,
    /// Positions no token boundary of the encoding can be at (found by the search; sized on
    /// its first use).
    dead: Vec<bool>,
    /// The windows' ids and where each window's end; a border's span encoded again.
    ids: Vec<u32>,
    ends: Vec<usize>,
    span: Vec<u32>,
}

impl Run<'_> {
    /// Encode `chunk[pos..until]` window by window with the short-chunk rule (several windows
    /// side by side) and stitch each window to the ids before it. Returns how far it got,
    /// short of `until` at a border it could not stitch within `max_span`.
    fn windows(&mut self, out: &mut Vec<u32>, mut pos: usize, until: usize) -> usize {
        let chunk = self.chunk;
        while pos < until {
            let windows: Vec<&[u8]> = chunk[pos..until].chunks(WINDOW).take(LANES).collect();
            self.ids.clear();
            self.ends.clear();
            lanes::merge(self.vocab, &windows, &mut self.ids, &mut self.ends);
            let mut from = 0;
            for (k, window) in windows.iter().enumerate() {
                let end = self.ends[k];
                if out.len() == self.start {
                    out.extend_from_slice(&self.ids[from..end]);
                } else if !self.stitch(out, pos, from..end) {
                    return pos;
                }
                pos += window.len();
                from = end;
            }
        }
        pos
    }

    /// The search, from `pos` with `out[start..]` the encoding of `chunk[..pos]`, until it
    /// has covered `chunk[..until]` or more; None if it finds no encoding (impossible).
    fn search(&mut self, out: &mut Vec<u32>, mut pos: usize, until: usize) -> Option<usize> {
        let (vocab, trie, chunk) = (self.vocab, &self.path.trie, self.chunk);
        if self.dead.is_empty() {
            self.dead = vec![false; chunk.len() + 1];
        }
        let mut cand = trie.longest(vocab, &chunk[pos..]).unwrap_or(NONE);
        while pos < until {
            if cand != NONE {
                let end = pos + vocab.token(cand).len();
                let ok = !self.dead[end]
                    && if out.len() > self.start {
                        self.compat.ok(out[out.len() - 1], cand)
                    } else {
                        self.compat.ok(cand, NONE)
                    };
                if ok {
                    out.push(cand);
                    pos = end;
                    cand = trie.longest(vocab, &chunk[pos..]).unwrap_or(NONE);
                } else {
                    cand = trie.next_prefix(cand);
                }
            } else {
                self.dead[pos] = true;
                if out.len() == self.start {
                    return None;
                }
                let last = out[out.len() - 1];
                out.truncate(out.len() - 1);
                pos -= vocab.token(last).len();
                cand = trie.next_prefix(last);
            }
        }
        Some(pos)
    }

    /// Append the ids `self.ids[window]`, the encoding of the bytes of the chunk from `p` on, to
    /// `out[start..]`, the encoding of `chunk[..p]` (not empty). Where the two meet with an
    /// incompatible pair, the last `l` ids of `out` and the first `r` of the window are encoded
    /// again as one span, `l` and `r` growing until the span's ends are compatible with their
    /// neighbours. Every pair of the result is then compatible, so it is the encoding of the
    /// bytes it covers. False (and `out` unchanged) if the span outgrows `max_span` bytes.
    fn stitch(&mut self, out: &mut Vec<u32>, p: usize, window: std::ops::Range<usize>) -> bool {
        let (vocab, chunk) = (self.vocab, self.chunk);
        let window = &self.ids[window];
        let len = out.len();
        if self.compat.ok(out[len - 1], window[0]) {
            out.extend_from_slice(window);
            return true;
        }
        let span = &mut self.span;
        let (mut l, mut r) = (1, 1);
        let mut from = p - vocab.token(out[len - 1]).len();
        let mut to = p + vocab.token(window[0]).len();
        loop {
            if to - from > self.max_span {
                return false;
            }
            span.clear();
            super::chunk(vocab, &chunk[from..to], span);
            let left_ok = len - l == self.start || self.compat.ok(out[len - l - 1], span[0]);
            let right_ok = r == window.len() || self.compat.ok(span[span.len() - 1], window[r]);
            if left_ok && right_ok {
                out.truncate(len - l);
                out.extend_from_slice(span);
                out.extend_from_slice(&window[r..]);
                return true;
            }
            if !left_ok {
                l += 1;
                from -= vocab.token(out[len - l]).len();
            }
            if !right_ok {
                to += vocab.token(window[r]).len();
                r += 1;
            }
        }
    }
}

/// Compatibility of token pairs: `ok(a, b)` is whether bpe(a ++ b) == [a, b], and `ok(a, NONE)`
/// whether `bpe(a) == [a]`. Regular tokens are replayed; the others are run literally, once.
struct Compat<'a> {
    path: &'a LongPath,
    vocab: &'a Vocab,
    memo: FxHashMap<u64, bool>,
    scratch: Vec<u32>,
}

impl<'a> Compat<'a> {
    fn new(path: &'a LongPath, vocab: &'a Vocab) -> Compat<'a> {
        Compat {
            path,
            vocab,
            memo: FxHashMap::default(),
            scratch: Vec::new(),
        }
    }

    fn ok(&mut self, a: u32, b: u32) -> bool {
        let regular = &self.path.regular;
        if b == NONE && regular[a as usize] {
            return true;
        }
        if b != NONE && regular[a as usize] && regular[b as usize] {
            return self.path.compatible_regular(self.vocab, a, b);
        }
        let key = (a as u64) << 32 | b as u64;
        if let Some(&ok) = self.memo.get(&key) {
            return ok;
        }
        let mut bytes = self.vocab.token(a).to_vec();
        if b != NONE {
            bytes.extend_from_slice(self.vocab.token(b));
        }
        self.scratch.clear();
        super::chunk(self.vocab, &bytes, &mut self.scratch);
        let ok = if b == NONE {
            self.scratch[..] == [a]
        } else {
            self.scratch[..] == [a, b]
        };
        self.memo.insert(key, ok);
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::super::literal;
    use super::*;
    use crate::testing::Rng;
    use crate::vocab::testing;

    /// Whether the rule run on a token's bytes ends in the token, ranks never decreasing.
    fn is_regular(vocab: &Vocab, bytes: &[u8]) -> bool {
        let (mut parts, mut ranks) = (Vec::new(), Vec::new());
        vocab.merge_alone(bytes, &mut parts, |_, _, rank| ranks.push(rank));
        parts.len() == 1 && ranks.windows(2).all(|w| w[0] <= w[1])
    }

    #[test]
    fn regular_by_parents_equals_the_literal_run() {
        let mut rng = Rng(777);
        let (mut regular, mut irregular) = (0, 0);
        for _ in 0..40 {
            let merges = 20 + rng.below(300);
            let vocab = testing::random(&mut rng, merges);
            let path = LongPath::new(&vocab).unwrap();
            for rank in 0..vocab.len() as u32 {
                let bytes = vocab.token(rank);
                let want = bytes.len() == 1
                    || (vocab.parents(rank).is_some() && is_regular(&vocab, bytes));
                assert_eq!(path.regular[rank as usize], want, "token {rank}");
                if want {
                    regular += 1;
                } else {
                    irregular += 1;
                }
            }
        }
        assert!(regular > 1000 && irregular > 100, "{regular} {irregular}");
    }

    #[test]
    fn search_equals_the_literal_rule() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..60 {
            let merges = 20 + rng.below(200);
            let vocab = testing::random(&mut rng, merges);
            let path = LongPath::new(&vocab).unwrap();
            for _ in 0..10 {
                let len = 128 + rng.below(600);
                let alphabet: &[u8] = if round % 3 == 0 {
                    b"a"
                } else if round % 3 == 1 {
                    b"ab"
                } else {
                    b"abc "
                };
                let chunk = rng.text(alphabet, len);
                let want = literal::merge(&vocab, &chunk);
                let mut got = Vec::new();
                path.encode(&vocab, &chunk, &mut got);
                assert_eq!(
                    got,
                    want,
                    "round {round}, chunk {:?}",
                    String::from_utf8_lossy(&chunk)
                );
            }
        }
    }

    /// The windows alone, the search alone, and the two taking turns in segments of a few
    /// windows, with borders handed to the search early (`max_span` 0 or 8) or late.
    #[test]
    fn windows_and_search_in_turns_equal_the_literal_rule() {
        let mut rng = Rng(0x05ee_d0f1_a9e5);
        let windows_only = |max_span| Limits {
            segment: usize::MAX,
            max_span,
            short_token: usize::MAX,
            windows_first: true,
        };
        let turns = |segment, max_span, short_token, windows_first| Limits {
            segment,
            max_span,
            short_token,
            windows_first,
        };
        let limits = [
            windows_only(usize::MAX),
            windows_only(0),
            windows_only(8),
            turns(1, 512, 0, true), // the first byte by the windows, the rest by the search
            turns(64, 512, 4, false),
            turns(130, 8, 3, true),
            turns(200, 40, 6, false),
        ];
        for round in 0..40 {
            let merges = 20 + rng.below(300);
            let vocab = testing::random(&mut rng, merges);
            let path = LongPath::new(&vocab).unwrap();
            for _ in 0..4 {
                let len = 2 + rng.below(1500);
                let alphabet: &[u8] = match round % 4 {
                    0 => b"a",
                    1 => b"ab",
                    2 => b"abc",
                    _ => b"abc ",
                };
                let chunk = rng.text(alphabet, len);
                if vocab.rank(&chunk).is_some() {
                    continue;
                }
                let want = literal::merge(&vocab, &chunk);
                for &limits in &limits {
                    let mut got = vec![7];
                    path.encode_with(&vocab, &chunk, &mut got, limits);
                    assert_eq!(got[0], 7);
                    assert_eq!(got[1..], want[..], "round {round}, {limits:?}");
                }
            }
        }
    }

    /// The windows stop at a border they cannot stitch within `max_span`; what they built is
    /// then the encoding of the bytes before it.
    #[test]
    fn windows_stop_with_the_encoding_of_what_they_covered() {
        let mut rng = Rng(99);
        let (mut stopped, mut finished) = (0, 0);
        for _ in 0..40 {
            let merges = 50 + rng.below(250);
            let vocab = testing::random(&mut rng, merges);
            let path = LongPath::new(&vocab).unwrap();
            let len = 200 + rng.below(800);
            let chunk = rng.text(b"ab", len);
            let mut run = Run {
                path: &path,
                vocab: &vocab,
                chunk: &chunk,
                start: 0,
                max_span: rng.below(12),
                compat: Compat::new(&path, &vocab),
                dead: Vec::new(),
                ids: Vec::new(),
                ends: Vec::new(),
                span: Vec::new(),
            };
            let mut out = Vec::new();
            let reached = run.windows(&mut out, 0, chunk.len());
            let mut want = Vec::new();
            super::super::chunk(&vocab, &chunk[..reached], &mut want);
            assert_eq!(out, want);
            if reached < chunk.len() {
                stopped += 1;
            } else {
                finished += 1;
            }
        }
        assert!(stopped > 5 && finished > 0, "{stopped} {finished}");
    }

    #[test]
    fn threads_sharing_a_fresh_search_build_its_buckets_safely() {
        let mut rng = Rng(31337);
        for _ in 0..8 {
            let merges = 150 + rng.below(150);
            let vocab = testing::random(&mut rng, merges);
            let chunks: Vec<Vec<u8>> = (0..16).map(|_| rng.text(b"abc ", 600)).collect();
            let want: Vec<Vec<u32>> = chunks.iter().map(|c| literal::merge(&vocab, c)).collect();
            // Every thread starts on an unbuilt trie, so they race to build the same buckets.
            let path = LongPath::new(&vocab).unwrap();
            std::thread::scope(|s| {
                for t in 0..4 {
                    let (path, vocab, chunks, want) = (&path, &vocab, &chunks, &want);
                    s.spawn(move || {
                        for i in (0..chunks.len()).map(|i| (i + 4 * t) % chunks.len()) {
                            let mut got = Vec::new();
                            path.encode(vocab, &chunks[i], &mut got);
                            assert_eq!(got, want[i], "thread {t}, chunk {i}");
                        }
                    });
                }
            });
        }
    }

    #[test]
    fn replayed_compatibility_equals_the_literal_check() {
        let mut rng = Rng(12345);
        let mut checked = 0;
        for _ in 0..30 {
            let merges = 20 + rng.below(120);
            let vocab = testing::random(&mut rng, merges);
            let path = LongPath::new(&vocab).unwrap();
            let ids: Vec<u32> = [b'a', b'b', b'c', b' ']
                .iter()
                .map(|&b| b as u32)
                .chain(256..vocab.len() as u32)
                .filter(|&t| path.regular[t as usize])
                .collect();
            for &a in &ids {
                for &b in &ids {
                    let mut bytes = vocab.token(a).to_vec();
                    bytes.extend_from_slice(vocab.token(b));
                    let literal = literal::merge(&vocab, &bytes);
                    assert_eq!(
                        path.compatible_regular(&vocab, a, b),
                        literal == [a, b],
                        "{a} {b}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 10_000);
    }
}
