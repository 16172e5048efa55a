//! Linear-time BPE for long chunks (1 MB of `a`, of spaces, of letters without a space).
//!
//! tiktoken's rule run literally is O(n log n) with a heap and large constants (2–5 MB/s on a
//! 1 MB chunk here). Instead we *search* for the answer, using a fact proved below: a sequence
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
//! checked by running the merge literally. Measured on 1 MB of random lowercase letters with
//! cl100k_base: literal check with a cache 1.6 MB/s, replay (this) see the benchmark.

use super::bpe_literal;
use super::trie::Trie;
use crate::vocab::Vocab;
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;

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
        // crossing between them (vocab.rs proves it), then the merge of the parents: so its
        // ranks never decrease iff neither parent's do and the last merge is the latest. In
        // rank order the parents are decided first. (This replaced running the rule on every
        // token's bytes, 125 ms for o200k_base on a loaded machine; `regular_by_parents_equals_the_literal_run`
        // checks that the two agree.)
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
        let n = chunk.len();
        let mut compat: FxHashMap<u64, bool> = FxHashMap::default();
        let mut scratch = Vec::new();
        // bpe(a ++ b) == [a, b]; with b == NONE: bpe(a) == [a].
        let mut compatible = |a: u32, b: u32| -> bool {
            if b == NONE && self.regular[a as usize] {
                return true;
            }
            if b != NONE && self.regular[a as usize] && self.regular[b as usize] {
                return self.compatible_regular(vocab, a, b);
            }
            let key = (a as u64) << 32 | b as u64;
            if let Some(&ok) = compat.get(&key) {
                return ok;
            }
            let mut bytes = vocab.token(a).to_vec();
            if b != NONE {
                bytes.extend_from_slice(vocab.token(b));
            }
            scratch.clear();
            bpe_literal(vocab, &bytes, &mut scratch);
            let ok = if b == NONE {
                scratch[..] == [a]
            } else {
                scratch[..] == [a, b]
            };
            compat.insert(key, ok);
            ok
        };
        let mut dead = vec![false; n + 1];
        let start = out.len();
        let mut pos = 0usize;
        let mut cand = self.trie.longest(vocab, chunk).unwrap_or(NONE);
        while pos < n {
            if cand != NONE {
                let end = pos + vocab.token(cand).len();
                let prev = if out.len() > start {
                    out[out.len() - 1]
                } else {
                    NONE
                };
                let ok = !dead[end]
                    && if prev == NONE {
                        compatible(cand, NONE)
                    } else {
                        compatible(prev, cand)
                    };
                if ok {
                    out.push(cand);
                    pos = end;
                    cand = self.trie.longest(vocab, &chunk[pos..]).unwrap_or(NONE);
                } else {
                    cand = self.trie.next_prefix(cand);
                }
            } else {
                dead[pos] = true;
                if out.len() == start {
                    // Impossible by the argument above (the BPE encoding is a compatible
                    // cover); kept as a safe fallback rather than a panic.
                    break;
                }
                let last = out[out.len() - 1];
                out.truncate(out.len() - 1);
                pos -= vocab.token(last).len();
                cand = self.trie.next_prefix(last);
            }
        }
        if pos < n {
            out.truncate(start);
            bpe_literal(vocab, chunk, out);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        /// `len` bytes drawn from `alphabet`.
        pub fn text(&mut self, alphabet: &[u8], len: usize) -> Vec<u8> {
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }

    /// Tokens made by merging random earlier tokens over a small alphabet, plus some tokens
    /// added out of order (lower rank than their parts), which real vocabularies also have.
    pub(crate) fn random_vocab(rng: &mut Rng, merges: usize) -> Vocab {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let alphabet = [b'a', b'b', b'c', b' '];
        let mut pool: Vec<Vec<u8>> = alphabet.iter().map(|&b| vec![b]).collect();
        while tokens.len() < 256 + merges {
            let mut t = pool[rng.below(pool.len())].clone();
            t.extend_from_slice(&pool[rng.below(pool.len())]);
            if t.len() > 24 || tokens.contains(&t) {
                continue;
            }
            pool.push(t.clone());
            tokens.push(t);
        }
        for _ in 0..merges / 10 {
            let i = 256 + rng.below(merges);
            let j = 256 + rng.below(merges);
            tokens.swap(i, j);
        }
        Vocab::new(&tokens).unwrap()
    }

    /// Whether the rule run on a token's bytes ends in the token, ranks never decreasing.
    fn is_regular(vocab: &Vocab, bytes: &[u8]) -> bool {
        let mut ids: Vec<u32> = bytes.iter().map(|&b| vocab.byte_rank(b)).collect();
        let mut last_rank = 0u32;
        while ids.len() > 1 {
            let Some((at, rank)) = ids
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| vocab.merge_rank(w[0], w[1]).map(|r| (i, r)))
                .min_by_key(|&(i, r)| (r, i))
            else {
                return false;
            };
            if rank < last_rank {
                return false;
            }
            last_rank = rank;
            ids[at] = rank;
            ids.remove(at + 1);
        }
        true
    }

    #[test]
    fn regular_by_parents_equals_the_literal_run() {
        let mut rng = Rng(777);
        let (mut regular, mut irregular) = (0, 0);
        for _ in 0..40 {
            let merges = 20 + rng.below(300);
            let vocab = random_vocab(&mut rng, merges);
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
    fn trie_finds_the_longest_token_and_the_longest_proper_prefix() {
        let mut rng = Rng(4242);
        for round in 0..20 {
            let merges = 20 + rng.below(300);
            let vocab = random_vocab(&mut rng, merges);
            let trie = Trie::new(&vocab).unwrap();
            let longest = |s: &[u8]| (1..=s.len()).rev().find_map(|n| vocab.rank(&s[..n]));
            let random_walks = |trie: &Trie, rng: &mut Rng, n: usize| {
                for _ in 0..n {
                    let len = 1 + rng.below(30);
                    let s = rng.text(b"abc ", len);
                    assert_eq!(trie.longest(&vocab, &s), longest(&s));
                }
            };
            // Buckets are built by the walks that enter them: first a few, in any order.
            random_walks(&trie, &mut rng, round % 4);
            // A copy keeps the buckets built so far and builds the others itself.
            let trie = if round % 2 == 0 { trie.clone() } else { trie };
            for rank in 0..vocab.len() as u32 {
                let t = vocab.token(rank);
                assert_eq!(trie.longest(&vocab, t), Some(rank), "token {rank}");
                let want = if t.len() < 2 {
                    None
                } else {
                    longest(&t[..t.len() - 1])
                };
                assert_eq!(trie.next_prefix(rank), want.unwrap_or(NONE), "token {rank}");
            }
            random_walks(&trie, &mut rng, 200);
        }
    }

    #[test]
    fn search_equals_the_literal_rule() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..60 {
            let merges = 20 + rng.below(200);
            let vocab = random_vocab(&mut rng, merges);
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
                let want = super::super::tests::tiktoken_rule(&vocab, &chunk);
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

    #[test]
    fn threads_sharing_a_fresh_search_build_its_buckets_safely() {
        let mut rng = Rng(31337);
        for _ in 0..8 {
            let merges = 150 + rng.below(150);
            let vocab = random_vocab(&mut rng, merges);
            let chunks: Vec<Vec<u8>> = (0..16).map(|_| rng.text(b"abc ", 600)).collect();
            let want: Vec<Vec<u32>> = chunks
                .iter()
                .map(|c| super::super::tests::tiktoken_rule(&vocab, c))
                .collect();
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
            let vocab = random_vocab(&mut rng, merges);
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
                    let literal = super::super::tests::tiktoken_rule(&vocab, &bytes);
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
