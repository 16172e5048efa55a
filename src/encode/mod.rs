//! Encoding: split text into chunks, turn each chunk into ranks with tiktoken's rule.
//!
//! The rule: a chunk that is itself a token is one id; otherwise start from single bytes and
//! repeatedly merge the adjacent pair whose concatenation has the lowest rank (leftmost on
//! ties) until no adjacent pair concatenates to a token.

use crate::error::Error;
#[cfg(target_arch = "x86_64")]
use crate::pretokenize::isa::{Avx2, Avx512, Avx512Vbmi};
use crate::pretokenize::{isa::Baseline, Splitter};
use crate::vocab::Vocab;
use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::OnceLock;

mod cache;
mod lanes;
mod long;
mod parallel;
mod trie;

#[cfg(test)]
pub(crate) use long::tests::Rng;
pub use parallel::{join_shares, long_enough_to_cut, Span};

/// Room for ids with which an output never grows while a text of `bytes` bytes is encoded onto
/// it (if it starts empty): every id stands for at least one byte of the text (tokens and
/// special-token names are never empty), and the cache's batches ask at most
/// `cache::MOST_RESERVED` beyond what they write.
pub fn room_for(bytes: usize) -> usize {
    bytes.saturating_add(cache::MOST_RESERVED)
}

/// Chunks shorter than this take the O(n^2) rescan, which is fastest when n is small because
/// it stays in a few cache lines; longer ones the O(n log n) heap. (The rescan was 32-35%
/// faster than the heap on chunks of 128 bytes to 1 KB: o200k_base on the 24 languages, whose
/// Chinese and Japanese sentences are single chunks.)
const LARGE_CHUNK: usize = 1024;
/// Chunks at least this long take `long.rs` (its search, or its windows where tokens are
/// short). Its tables once cost ~0.2 s to build for o200k_base, which made the first encode of
/// Japanese text (6% of its bytes in chunks of 128+ bytes) 10x slower than later ones; below
/// this length the heap is as fast. (Its set-up is now 2-4 ms, the trie's parts built as walks
/// reach them.)
const SEARCH_CHUNK: usize = 4096;

/// How many ids a vocabulary may leave unused below its largest special token. Real
/// vocabularies leave a few (cl100k_base: 15, o200k_base: 20); a special id far beyond the
/// vocabulary is a mistake in a file or a call, and ids size the tables of an id's int and
/// the numpy dtype, so it is refused at load rather than met later as an allocation of
/// gigabytes.
pub const MOST_UNUSED_IDS: usize = 1 << 20;

/// Special tokens: strings cut out of the text before splitting, each with a fixed id.
#[derive(Debug, Clone)]
pub struct Specials {
    names: Vec<String>,
    ids: Vec<u32>,
    by_id: FxHashMap<u32, usize>,
    matcher: Option<AhoCorasick>,
    /// The distinct first bytes of the names, sorted: where none is, no special token starts.
    first_bytes: Vec<u8>,
}

impl Specials {
    /// Build from `(string, id)` pairs; ids must not collide with the mergeable ranks, and
    /// leave at most [`MOST_UNUSED_IDS`] ids unused.
    pub fn new(specials: &[(String, u32)], n_ranks: usize) -> Result<Specials, Error> {
        let mut by_id = FxHashMap::default();
        let mut seen = FxHashMap::default();
        let limit = n_ranks + specials.len() + MOST_UNUSED_IDS;
        for (i, (name, id)) in specials.iter().enumerate() {
            if (*id as usize) < n_ranks {
                return Err(Error::InvalidSpecialTokens {
                    message: format!(
                        "special token {name:?} has id {id}, which is already an ordinary token"
                    ),
                });
            }
            if *id as usize >= limit {
                return Err(Error::InvalidSpecialTokens {
                    message: format!(
                        "special token {name:?} has id {id}, far past the vocabulary's {n_ranks} \
                         ordinary tokens and {} special ones: ids must be below {limit} (at \
                         most {MOST_UNUSED_IDS} unused ids)",
                        specials.len()
                    ),
                });
            }
            // Two names may share an id (tiktoken's o200k_harmony does); decoding gives the last.
            by_id.insert(*id, i);
            if seen.insert(name.as_str(), i).is_some() {
                return Err(Error::InvalidSpecialTokens {
                    message: format!("special token {name:?} is listed twice"),
                });
            }
        }
        let names: Vec<String> = specials.iter().map(|(n, _)| n.clone()).collect();
        let matcher = special_matcher(&names)?;
        let mut first_bytes: Vec<u8> = names.iter().filter_map(|n| n.bytes().next()).collect();
        first_bytes.sort_unstable();
        first_bytes.dedup();
        Ok(Specials {
            names,
            ids: specials.iter().map(|(_, id)| *id).collect(),
            by_id,
            matcher,
            first_bytes,
        })
    }

    /// The (string, id) pairs, in definition order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        self.names
            .iter()
            .map(String::as_str)
            .zip(self.ids.iter().copied())
    }

    /// The string of special token `id`.
    pub fn name(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(|&i| self.names[i].as_str())
    }

    /// The id of a special-token string.
    pub fn id(&self, name: &str) -> Option<u32> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| self.ids[i])
    }

    /// Leftmost occurrence at or after `from` of a special token accepted by `accept`.
    ///
    /// Like tiktoken, a match that is not accepted makes the search resume one byte after its
    /// start, so a rejected token cannot hide an accepted one that overlaps it.
    fn find(
        &self,
        text: &str,
        mut from: usize,
        accept: impl Fn(u32) -> bool,
    ) -> Option<(usize, usize, u32)> {
        let matcher = self.matcher.as_ref()?;
        while from <= text.len() {
            from += self.first_byte_in(text.as_bytes().get(from..)?)?;
            let input = aho_corasick::Input::new(text).range(from..);
            let m = matcher.find(input)?;
            let id = self.ids[m.pattern().as_usize()];
            if accept(id) {
                return Some((m.start(), m.end(), id));
            }
            from = m.start() + 1;
        }
        None
    }

    /// Where the first byte of a name first is in `hay` (None: nowhere), by `memchr` when the
    /// names start with at most three distinct bytes (OpenAI's all start with `<`); else 0.
    /// Searching a text of 16 characters for `<|endoftext|>` took the matcher ~100 ns, more
    /// than encoding it (tiktoken's `encode` searches every text for its specials).
    #[inline]
    fn first_byte_in(&self, hay: &[u8]) -> Option<usize> {
        match self.first_bytes[..] {
            [a] => memchr::memchr(a, hay),
            [a, b] => memchr::memchr2(a, b, hay),
            [a, b, c] => memchr::memchr3(a, b, c, hay),
            _ => Some(0),
        }
    }
}

/// The matcher that finds special-token strings in text (leftmost, longest on overlaps), or
/// None when there are none; shared by encoding and by training, which cuts them out.
pub(crate) fn special_matcher(names: &[String]) -> Result<Option<AhoCorasick>, Error> {
    if let Some(s) = names.iter().find(|s| s.is_empty()) {
        return Err(Error::InvalidSpecialTokens {
            message: format!("a special token is the empty string ({s:?})"),
        });
    }
    if names.is_empty() {
        return Ok(None);
    }
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(names)
        .map(Some)
        .map_err(|e| Error::InvalidSpecialTokens {
            message: e.to_string(),
        })
}

/// Which special tokens an `encode` call treats as special.
#[derive(Debug, Clone, Copy)]
pub enum Allowed<'a> {
    None,
    All,
    Ids(&'a [u32]),
}

impl Allowed<'_> {
    #[inline]
    fn contains(&self, id: u32) -> bool {
        match self {
            Allowed::None => false,
            Allowed::All => true,
            Allowed::Ids(ids) => ids.contains(&id),
        }
    }

    fn is_none(&self) -> bool {
        match self {
            Allowed::None => true,
            Allowed::All => false,
            Allowed::Ids(ids) => ids.is_empty(),
        }
    }
}

/// The body of `Encoder::encode_in_batches`, pasted into each copy of it: closures take the
/// target features of the function that defines them, not of the one they are inlined into.
macro_rules! encode_in_batches {
    ($enc:ident, $isa:ident, $text:ident, $out:ident, $after:ident) => {
        cache::with_cache($enc.uid, |cache| {
            $enc.splitter.split_bounds_on($isa, $text, |at| {
                cache.lookup_batch($text.as_bytes(), at, $out, |c, o| $enc.encode_chunk(c, o));
                $after($out);
            })
        })
    };
}

/// A vocabulary, a splitter and special tokens: everything needed to encode and decode.
#[derive(Debug, Clone)]
pub struct Encoder {
    vocab: Vocab,
    splitter: Splitter,
    specials: Specials,
    /// Built on the first long chunk: most inputs never need it.
    long: OnceLock<Option<long::LongPath>>,
    /// Identifies this encoder's chunk caches (one per thread, see `cache.rs`).
    uid: u64,
}

fn next_uid() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Encoder {
    pub fn new(
        vocab: Vocab,
        splitter: Splitter,
        specials: &[(String, u32)],
    ) -> Result<Encoder, Error> {
        let specials = Specials::new(specials, vocab.len())?;
        Ok(Encoder {
            vocab,
            splitter,
            specials,
            long: OnceLock::new(),
            uid: next_uid(),
        })
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn splitter(&self) -> &Splitter {
        &self.splitter
    }

    pub fn specials(&self) -> &Specials {
        &self.specials
    }

    /// One more than the largest id (mergeable or special).
    pub fn n_vocab(&self) -> usize {
        self.specials
            .ids
            .iter()
            .map(|&id| id as usize + 1)
            .fold(self.vocab.len(), usize::max)
    }

    /// Encode treating special-token strings as plain text.
    pub fn encode_ordinary(&self, text: &str, out: &mut Vec<u32>) -> Result<(), Error> {
        self.encode_in_batches(text, out, |_| {})
    }

    /// Encode `text` (as plain text) onto `out`, calling `after` on `out` after each batch of
    /// chunks (see `cache::BATCH`).
    ///
    /// On x86_64 CPUs with AVX2 and BMI (x86-64-v3: most made since 2015) the scanner and the
    /// cache lookups run as a copy compiled for them (`tzcnt`/`blsr` per chunk, VEX compares);
    /// the build itself targets the x86_64 baseline.
    #[inline(always)]
    fn encode_in_batches(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        mut after: impl FnMut(&mut Vec<u32>),
    ) -> Result<(), Error> {
        // On a pool's worker: not on the same CPU as another worker (`threads` module doc).
        crate::threads::settle();
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = Avx512Vbmi::detect() {
            // SAFETY: the token proves the CPU has the function's features.
            return unsafe { self.encode_in_batches_v4_vbmi(isa, text, out, &mut after) };
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = Avx512::detect() {
            // SAFETY: as above.
            return unsafe { self.encode_in_batches_v4(isa, text, out, &mut after) };
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = Avx2::detect() {
            // SAFETY: as above.
            return unsafe { self.encode_in_batches_v3(isa, text, out, &mut after) };
        }
        self.encode_in_batches_baseline(text, out, &mut after)
    }

    /// [`Encoder::encode_in_batches`] compiled for the x86_64 baseline (or any other target).
    #[inline(always)]
    fn encode_in_batches_baseline(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        after: &mut impl FnMut(&mut Vec<u32>),
    ) -> Result<(), Error> {
        let isa = Baseline;
        encode_in_batches!(self, isa, text, out, after)
    }

    /// [`Encoder::encode_in_batches`] compiled for x86-64-v3.
    ///
    /// # Safety
    /// Only for CPUs with the features below (`isa` proves it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn encode_in_batches_v3(
        &self,
        isa: Avx2,
        text: &str,
        out: &mut Vec<u32>,
        after: &mut impl FnMut(&mut Vec<u32>),
    ) -> Result<(), Error> {
        encode_in_batches!(self, isa, text, out, after)
    }

    /// [`Encoder::encode_in_batches`] compiled for x86-64-v3 with AVX-512F and BW: the
    /// scanner's class masks from one 64-byte register, and its boundaries written by
    /// compresses (`pretokenize::isa`).
    ///
    /// # Safety
    /// Only for CPUs with the features below (`isa` proves it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn encode_in_batches_v4(
        &self,
        isa: Avx512,
        text: &str,
        out: &mut Vec<u32>,
        after: &mut impl FnMut(&mut Vec<u32>),
    ) -> Result<(), Error> {
        encode_in_batches!(self, isa, text, out, after)
    }

    /// [`Encoder::encode_in_batches`] compiled for x86-64-v3 with AVX-512F, BW and VBMI: the
    /// scanner's bit tables of characters of two and three bytes inlined too
    /// (`blocks::wide_vbmi`), not called per block as they were from the AVX-512 copy with a
    /// flag for VBMI: pure Rust, warm, Japanese, cl100k_base 777 -> 837 MB/s, o200k_base
    /// 614 -> 665; Korean, Hindi, Russian, German level.
    ///
    /// # Safety
    /// Only for CPUs with the features below (`isa` proves it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn encode_in_batches_v4_vbmi(
        &self,
        isa: Avx512Vbmi,
        text: &str,
        out: &mut Vec<u32>,
        after: &mut impl FnMut(&mut Vec<u32>),
    ) -> Result<(), Error> {
        encode_in_batches!(self, isa, text, out, after)
    }

    /// Walk `text` under tiktoken's special-token policy: a `disallowed` special anywhere is
    /// an error; each `allowed` special goes to `on_special`, the text between to `on_text`.
    fn segments<'t>(
        &self,
        text: &'t str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        mut on_text: impl FnMut(&'t str) -> Result<(), Error>,
        mut on_special: impl FnMut(u32),
    ) -> Result<(), Error> {
        if !disallowed.is_none() {
            if let Some((s, e, _)) = self.specials.find(text, 0, |id| disallowed.contains(id)) {
                return Err(Error::DisallowedSpecialToken {
                    token: text[s..e].to_string(),
                });
            }
        }
        let mut start = 0;
        if !allowed.is_none() {
            while let Some((s, e, id)) = self.specials.find(text, start, |id| allowed.contains(id))
            {
                on_text(&text[start..s])?;
                on_special(id);
                start = e;
            }
        }
        on_text(&text[start..])
    }

    /// Encode with tiktoken's special-token policy: a `disallowed` special in the text is an
    /// error; `allowed` specials become their ids; all other text is ordinary.
    pub fn encode(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let out = std::cell::RefCell::new(out);
        self.segments(
            text,
            allowed,
            disallowed,
            |t| self.encode_ordinary(t, &mut out.borrow_mut()),
            |id| out.borrow_mut().push(id),
        )
    }

    /// Number of tokens `encode` would return, without keeping the ids.
    pub fn count(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
    ) -> Result<usize, Error> {
        let n = std::cell::Cell::new(0usize);
        let mut buf = Vec::new();
        self.segments(
            text,
            allowed,
            disallowed,
            |t| {
                // The ids of each batch of chunks are counted and dropped.
                self.encode_in_batches(t, &mut buf, |ids| {
                    n.set(n.get() + ids.len());
                    ids.clear();
                })
            },
            |_| n.set(n.get() + 1),
        )?;
        Ok(n.get())
    }

    /// Encode one chunk (already split) onto `out`.
    ///
    /// A chunk under `LARGE_CHUNK` bytes is merged without first looking it up whole when the
    /// vocabulary's merges make each of its tokens of that length
    /// (`Vocab::merges_make_tokens_of`): on a first pass the lookup was a wait for cold lines
    /// on every new chunk, and few are tokens (of the 24 languages' distinct chunks of 16
    /// bytes or more, 1.8% with o200k_base, none with gpt2). For short chunks o200k_base's
    /// first pass over code in fresh processes went from 153 to 166 MB/s (numpy, medians of 5,
    /// alternating builds); for longer ones the lookup was 5.5% of a first pass over the 24
    /// languages.
    #[inline]
    pub fn encode_chunk(&self, chunk: &[u8], out: &mut Vec<u32>) {
        if chunk.len() < LARGE_CHUNK && self.vocab.merges_make_tokens_of(chunk.len()) {
            bpe_small(&self.vocab, chunk, out);
        } else if let Some(rank) = self.vocab.rank(chunk) {
            out.push(rank);
        } else if chunk.len() < LARGE_CHUNK {
            bpe_small(&self.vocab, chunk, out);
        } else if chunk.len() < SEARCH_CHUNK {
            bpe_heap(&self.vocab, chunk, out);
        } else {
            match self.long.get_or_init(|| long::LongPath::new(&self.vocab)) {
                Some(path) => path.encode(&self.vocab, chunk, out),
                None => bpe_heap(&self.vocab, chunk, out),
            }
        }
    }

    /// The bytes of one token id (mergeable or special).
    pub fn token_bytes(&self, id: u32) -> Result<&[u8], Error> {
        if let Some(b) = self.vocab.get(id) {
            return Ok(b);
        }
        self.specials
            .name(id)
            .map(str::as_bytes)
            .ok_or(Error::UnknownTokenId { id: id as u64 })
    }

    /// Concatenate the bytes of `ids` onto `out`.
    pub fn decode_bytes(&self, ids: &[u32], out: &mut Vec<u8>) -> Result<(), Error> {
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(())
    }
}

/// tiktoken's merge rule run literally on one chunk (no whole-chunk lookup).
#[inline]
pub(crate) fn bpe_literal(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    if chunk.len() < LARGE_CHUNK {
        bpe_small(vocab, chunk, out);
    } else {
        bpe_heap(vocab, chunk, out);
    }
}

/// O(n^2) merge for short chunks: keep a key for every adjacent pair, merge the lowest, update
/// the two neighbours.
///
/// - **Keys.** The parts stay where their first byte was, linked in order, so a merge moves
///   nothing. Each part's pair with the next is kept as `rank * CAP + position`, so one `min`
///   (vectorized) gives the lowest rank and, among equal ranks, the leftmost, as the rule asks.
/// - **Speculation.** Each merge needs two pair-table reads (a random read of a 2-4 MB table).
///   Before waiting for them, the lowest of the other pairs is found: it is the next merge 93%
///   of the time (the 24 languages, o200k_base), since a merged token's pairs mostly rank
///   above it. The reads that merge will need are started then, beside this merge's own.
/// - **Sizes.** The arrays are sized by the chunk (`CAP` 16, 32, 128 or 1024), so a short chunk
///   does not clear room it never uses; up to 32 the lowest key is taken over all `CAP` keys (a
///   few vector steps, no loop whose length changes with the chunk): a fresh chunk cache's pass
///   over 4 MB of code, o200k_base, pure Rust, went from 18.35 to 17.70 ms (medians of 6), the
///   24 languages from 266 to 257 ms (medians of 3), Holmes level (16.6 and 16.5).
///
/// Measured on the distinct chunks of the 24 languages under 128 bytes (merging only, each
/// chunk once): 551 -> 432 ns a chunk with cl100k_base, 1157 -> 827 with o200k_base. The keys
/// alone, without the speculation, gained 11% while running 43% fewer instructions
/// (callgrind): what is left is waiting for the reads.
fn bpe_small(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    match chunk.len() {
        0..16 => bpe_small_in::<16>(vocab, chunk, out),
        16..32 => bpe_small_in::<32>(vocab, chunk, out),
        32..128 => bpe_small_in::<128>(vocab, chunk, out),
        _ => bpe_small_in::<LARGE_CHUNK>(vocab, chunk, out),
    }
}

/// [`bpe_small`] with room for `CAP - 1` bytes, compiled for x86-64-v3 where the CPU has it
/// (the `min` over the keys is then 8 lanes wide).
#[inline(always)]
fn bpe_small_in<const CAP: usize>(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    #[cfg(target_arch = "x86_64")]
    if Avx2::detect().is_some() {
        // SAFETY: the CPU has every feature the function is compiled for.
        return unsafe { bpe_small_v3::<CAP>(vocab, chunk, out) };
    }
    bpe_small_body::<CAP>(vocab, chunk, out)
}

/// [`bpe_small_body`] compiled for x86-64-v3.
///
/// # Safety
/// Only for CPUs with the features below.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn bpe_small_v3<const CAP: usize>(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    bpe_small_body::<CAP>(vocab, chunk, out)
}

#[inline(always)]
fn bpe_small_body<const CAP: usize>(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
    // A key packs a rank (below MAX_RANKS) and a position (below CAP); `NO` is above them all.
    const NO: u32 = u32::MAX;
    const { assert!(crate::vocab::MAX_RANKS * CAP < NO as usize && CAP <= 1 << 16) };
    let cap = CAP as u32;
    let n = chunk.len();
    debug_assert!(n < CAP);
    if n == 1 {
        out.push(vocab.byte_rank(chunk[0]));
        return;
    }
    let mut ids = [0u32; CAP];
    let mut keys = [NO; CAP];
    let mut next = [0u16; CAP];
    let mut prev = [0u16; CAP];
    for (i, &b) in chunk.iter().enumerate() {
        ids[i] = vocab.byte_rank(b);
        next[i] = i as u16 + 1;
        prev[i] = (i as u16).wrapping_sub(1);
    }
    // `keys[i]` for each part `i` but the last; a merged-away part's key is `NO`.
    let m = n - 1;
    if chunk.is_ascii() || !form_atoms(vocab.atoms(), chunk, &mut ids, &mut next, &mut prev) {
        for (i, w) in chunk.windows(2).enumerate() {
            let r = vocab.byte_pair_rank(w[0], w[1]);
            keys[i] = if r == NO { NO } else { r * cap + i as u32 };
        }
    } else {
        let mut i = 0;
        while (next[i] as usize) < n {
            let j = next[i] as usize;
            let r = if j == i + 1 && next[j] as usize == j + 1 {
                vocab.byte_pair_rank(chunk[i], chunk[j])
            } else {
                vocab.merge_rank(ids[i], ids[j]).unwrap_or(NO)
            };
            keys[i] = if r == NO { NO } else { r * cap + i as u32 };
            i = j;
        }
    }
    // Over all `CAP` keys where that is a few vector steps (those past `m` are `NO`): no loop
    // whose length changes from chunk to chunk, so no mispredicted exit at every merge.
    let lowest = |keys: &[u32; CAP]| {
        let keys = if CAP <= 32 { &keys[..] } else { &keys[..m] };
        keys.iter().fold(NO, |a, &k| a.min(k))
    };
    let mut best = lowest(&keys);
    while best != NO {
        let (rank, at) = (best / cap, (best % cap) as usize);
        // Part `at` takes in the part after it, `q`.
        let q = next[at] as usize;
        ids[at] = rank;
        if q < m {
            keys[q] = NO;
        }
        let after = next[q] as usize;
        next[at] = after as u16;
        if after < n {
            prev[after] = at as u16;
        }
        let before = prev[at] as usize; // only read when `at > 0`
        keys[at] = NO;
        if at > 0 {
            keys[before] = NO;
        }
        // The lowest pair this merge left alone: start the reads its merge would make.
        best = lowest(&keys);
        if best != NO {
            let (r, c) = (best / cap, (best % cap) as usize);
            if c > 0 {
                vocab.prefetch_merge(ids[prev[c] as usize], r);
            }
            let right = next[next[c] as usize] as usize;
            if right < n {
                vocab.prefetch_merge(r, ids[right]);
            }
        }
        // This merge's two new pairs.
        if after < n {
            if let Some(r) = vocab.merge_rank(rank, ids[after]) {
                keys[at] = r * cap + at as u32;
                best = best.min(keys[at]);
            }
        }
        if at > 0 {
            if let Some(r) = vocab.merge_rank(ids[before], rank) {
                keys[before] = r * cap + before as u32;
                best = best.min(keys[before]);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ids[i]);
        i = next[i] as usize;
    }
}

/// Put the chunk's atoms in place as parts (see `atoms.rs`): whether there was any.
#[inline(always)]
fn form_atoms(
    atoms: &crate::atoms::Atoms,
    chunk: &[u8],
    ids: &mut [u32],
    next: &mut [u16],
    prev: &mut [u16],
) -> bool {
    let n = chunk.len();
    let mut any = false;
    let mut s = 0;
    while s < n {
        let Some((token, len)) = atoms.at(chunk, s) else {
            s += 1;
            continue;
        };
        ids[s] = token;
        next[s] = (s + len) as u16;
        if s + len < n {
            prev[s + len] = s as u16;
        }
        any = true;
        s += len;
    }
    any
}

/// O(n log n) merge for long chunks: a heap of (rank, position) candidates over a linked list
/// of parts, with stale candidates skipped when popped.
fn bpe_heap(vocab: &Vocab, chunk: &[u8], out: &mut Vec<u32>) {
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
pub(crate) mod tests {
    use super::*;

    /// tiktoken's `_byte_pair_merge` ported literally: ranks of byte slices, every split.
    /// The oracle for the pair table of parents and for the long-chunk search.
    pub(crate) fn tiktoken_rule(vocab: &Vocab, piece: &[u8]) -> Vec<u32> {
        if let Some(r) = vocab.rank(piece) {
            return vec![r];
        }
        let rank_at = |parts: &[(usize, u32)], i: usize| -> u32 {
            if i + 3 < parts.len() {
                vocab
                    .rank(&piece[parts[i].0..parts[i + 3].0])
                    .unwrap_or(u32::MAX)
            } else {
                u32::MAX
            }
        };
        let mut parts: Vec<(usize, u32)> = (0..=piece.len()).map(|i| (i, u32::MAX)).collect();
        for i in 0..piece.len().saturating_sub(1) {
            parts[i].1 = vocab.rank(&piece[i..i + 2]).unwrap_or(u32::MAX);
        }
        while let Some((i, &(_, r))) = parts[..parts.len() - 1]
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (p.1, *i))
        {
            if r == u32::MAX {
                break;
            }
            if i > 0 {
                parts[i - 1].1 = rank_at(&parts, i - 1);
            }
            parts[i].1 = rank_at(&parts, i);
            parts.remove(i + 1);
        }
        parts
            .windows(2)
            .map(|w| vocab.rank(&piece[w[0].0..w[1].0]).unwrap_or(u32::MAX))
            .collect()
    }

    /// `encode_chunk` against the literal rule on random vocabularies, with and without short
    /// tokens the merges never make (those keep the whole-chunk lookup); both kinds occur.
    #[test]
    fn pair_table_of_parents_equals_tiktoken_rule() {
        let mut rng = long::tests::Rng(0xdead_beef);
        let mut kinds = [0; 2];
        for round in 0..80 {
            let merges = 10 + rng.below(150);
            let v = long::tests::random_vocab(&mut rng, merges);
            kinds[usize::from(v.merges_make_tokens_of(2))] += 1;
            for _ in 0..40 {
                let len = 1 + rng.below(60);
                let alphabet: &[u8] = if round % 2 == 0 { b"ab" } else { b"abc " };
                let s: Vec<u8> = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                let mut got = Vec::new();
                Encoder::new(v.clone(), Splitter::new(r"[\s\S]+").unwrap(), &[])
                    .unwrap()
                    .encode_chunk(&s, &mut got);
                assert_eq!(
                    got,
                    tiktoken_rule(&v, &s),
                    "{:?}",
                    String::from_utf8_lossy(&s)
                );
            }
        }
        assert!(
            kinds[0] > 0 && kinds[1] > 0,
            "vocabularies of each kind: {kinds:?}"
        );
    }

    /// A token the merges never make is still found whole; with it gone, the merges alone
    /// make every token of its class (short or long) and no lookup is made.
    #[test]
    fn unreachable_tokens_keep_the_whole_chunk_lookup() {
        let enc = |v: Vocab, chunk: &[u8]| {
            let mut got = Vec::new();
            Encoder::new(v, Splitter::new(r"[\s\S]+").unwrap(), &[])
                .unwrap()
                .encode_chunk(chunk, &mut got);
            got
        };
        // "zz\xff" (259) has no parents: the rule on its bytes stops at three parts.
        let v = vocab(&[b"bc", b"ab", b"abc", b"zz\xff"]);
        assert!(!v.merges_make_tokens_of(3));
        assert!(v.merges_make_tokens_of(crate::short_key::MAX_KEY + 1));
        assert_eq!(enc(v.clone(), b"zz\xff"), [259]);
        assert_eq!(enc(v.clone(), b"abc"), [258]);
        assert_eq!(enc(v, b"zz\xffabc"), [122, 122, 255, 258]);
        let v = vocab(&[b"bc", b"ab", b"abc", b"zz", b"zz\xff"]);
        assert!(v.merges_make_tokens_of(3));
        assert_eq!(enc(v, b"zz\xff"), [260]);
        // A long unreachable token keeps the lookup for long chunks only.
        let long = b"0123456789abcdef";
        let v = vocab(&[b"bc", long]);
        assert!(v.merges_make_tokens_of(2));
        assert!(!v.merges_make_tokens_of(long.len()));
        assert_eq!(enc(v, long), [257]);
        // Made by merges, it is found by them.
        let mut pieces: Vec<&[u8]> = vec![b"01", b"23", b"45", b"67", b"89", b"ab", b"cd", b"ef"];
        pieces.extend([
            &b"0123"[..],
            b"4567",
            b"89ab",
            b"cdef",
            b"01234567",
            b"89abcdef",
        ]);
        pieces.push(long);
        let v = vocab(&pieces);
        assert!(v.merges_make_tokens_of(long.len()));
        assert_eq!(enc(v, long), [256 + 14]);
    }

    /// Merging from atoms (`atoms.rs`) against the literal rule, on random vocabularies over
    /// the bytes of a few characters of 2 and 3 bytes: tokens made by joining random earlier
    /// ones, so that many end or start inside a character and cross its edges, plus some
    /// added out of order. Texts are runs of those characters with an occasional stray byte.
    #[test]
    fn merging_from_atoms_equals_tiktoken_rule() {
        let chars: [&[u8]; 7] = [
            "о".as_bytes(),
            "п".as_bytes(),
            "ä".as_bytes(),
            "的".as_bytes(),
            "ा".as_bytes(),
            b"a",
            b" ",
        ];
        let mut rng = long::tests::Rng(0x0a70_5eed);
        let (mut with_atoms, mut refused) = (0, 0);
        for _ in 0..200 {
            let alphabet: Vec<u8> = chars.concat();
            let merges = 20 + rng.below(120);
            let v = long::tests::random_vocab_over(&mut rng, &alphabet, merges, 12);
            for _ in 0..40 {
                let mut text = Vec::new();
                for _ in 0..1 + rng.below(24) {
                    if rng.below(30) == 0 {
                        text.push([0x80, 0xBE, 0xD0, 0xE0][rng.below(4)]);
                    } else {
                        text.extend_from_slice(chars[rng.below(chars.len())]);
                    }
                }
                if text.len() >= 128 || v.rank(&text).is_some() {
                    continue;
                }
                let n = text.len();
                let (mut ids, mut next, mut prev) = ([0u32; 128], [0u16; 128], [0u16; 128]);
                if form_atoms(v.atoms(), &text, &mut ids, &mut next, &mut prev) {
                    with_atoms += 1;
                }
                let whole = (0..n).filter(|&i| text[i] >= 0xC2).count();
                let formed = (0..n)
                    .filter(|&i| text[i] >= 0xC2 && next[i] as usize > i + 1)
                    .count();
                refused += usize::from(formed < whole && !v.atoms().is_empty());
                let want = tiktoken_rule(&v, &text);
                let mut got = Vec::new();
                bpe_small(&v, &text, &mut got);
                let mut baseline = Vec::new();
                bpe_small_body::<128>(&v, &text, &mut baseline);
                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&text));
                assert_eq!(baseline, want, "{:?}", String::from_utf8_lossy(&text));
            }
        }
        // Both kinds occur: texts merged from atoms, and characters an atom's neighbour refused.
        assert!(
            with_atoms > 1000 && refused > 1000,
            "{with_atoms} {refused}"
        );
    }

    /// Two vocabularies where forming "的" (E7 9A 84) first would be wrong after "a": a token
    /// joins "a" to a piece the character starts with below the highest rank of its own
    /// merges (here above the character's own rank), so "a" may not stand before it.
    #[test]
    fn atoms_watch_every_piece_up_to_the_highest_merge() {
        let c = "的".as_bytes();
        let cases: [(Vec<&[u8]>, [u32; 2]); 2] = [
            // "的" (256) = E7 + "9A84" (258); "a" + E7 (257) ranks between them.
            (vec![c, b"a\xE7", b"\x9A\x84"], [257, 258]),
            // "的" (258) = "E79A" (256) + 84; "a" + "E79A" (257).
            (vec![b"\xE7\x9A", b"a\xE7\x9A", c], [257, 0x84]),
        ];
        for (extra, want) in cases {
            let v = vocab(&extra);
            assert_eq!(v.atoms().len(), 1);
            let text = [&b"a"[..], c].concat();
            assert_eq!(tiktoken_rule(&v, &text), want);
            let mut got = Vec::new();
            bpe_small(&v, &text, &mut got);
            assert_eq!(got, want);
            // Not after " ": there the character is formed first.
            assert_eq!(v.atoms().at(b" \xE7\x9A\x84", 1).map(|a| a.1), Some(3));
        }
    }

    /// Both compiled copies of the encoding loop (baseline, and x86-64-v3 where the CPU has
    /// it), cold and warm, give the ids of the chunks encoded one by one without the cache, on
    /// random text with indents, digits, contractions and non-ASCII words.
    #[test]
    fn compiled_copies_equal_encoding_chunk_by_chunk() {
        let atoms = [
            "the",
            " the",
            "ing",
            " and",
            " is",
            "'s",
            "'ll",
            " ",
            "  ",
            "    ",
            "\n",
            "\n    ",
            "\n        ",
            "\r\n",
            "\t",
            "def",
            " self",
            ".",
            "(",
            ")",
            " ==",
            "123",
            "45678",
            "é",
            " Straße",
            " Москва",
            "中文字",
            "!",
            "?!",
            "/",
            " x",
            "X",
            "Camel",
            "Case",
            "                    ",
        ];
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for a in atoms {
            for w in [2, 3, 5] {
                for piece in a.as_bytes().windows(w) {
                    if !tokens.iter().any(|t| t == piece) {
                        tokens.push(piece.to_vec());
                    }
                }
            }
        }
        let vocab = Vocab::new(&tokens).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut text = String::new();
        while text.len() < 200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(atoms[(state >> 40) as usize % atoms.len()]);
        }
        // Every compiled copy of the encoding loop this CPU can run.
        type Run = Box<dyn Fn(&Encoder, &str, &mut Vec<u32>)>;
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut copies: Vec<(&str, Run)> = vec![(
            "baseline",
            Box::new(|enc, text, out| {
                enc.encode_in_batches_baseline(text, out, &mut |_| {})
                    .unwrap()
            }),
        )];
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = Avx2::detect() {
            copies.push((
                "x86-64-v3",
                Box::new(move |enc, text, out| {
                    // SAFETY: the token proves the CPU has the features.
                    unsafe { enc.encode_in_batches_v3(isa, text, out, &mut |_| {}) }.unwrap()
                }),
            ));
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = Avx512::detect() {
            copies.push((
                "x86-64-v4",
                Box::new(move |enc, text, out| {
                    // SAFETY: the token proves the CPU has the features.
                    unsafe { enc.encode_in_batches_v4(isa, text, out, &mut |_| {}) }.unwrap()
                }),
            ));
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = Avx512Vbmi::detect() {
            copies.push((
                "x86-64-v4 with VBMI",
                Box::new(move |enc, text, out| {
                    // SAFETY: the token proves the CPU has the features.
                    unsafe { enc.encode_in_batches_v4_vbmi(isa, text, out, &mut |_| {}) }.unwrap()
                }),
            ));
        }
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let fresh = || Encoder::new(vocab.clone(), Splitter::new(pattern).unwrap(), &[]);
            let enc = fresh().unwrap();
            let mut want = Vec::new();
            for chunk in enc.splitter.chunks(&text).unwrap() {
                enc.encode_chunk(chunk.as_bytes(), &mut want);
            }
            for round in ["cold", "warm"] {
                for (copy, run) in &copies {
                    let enc = fresh().unwrap();
                    let mut got = Vec::new();
                    for _ in 0..1 + usize::from(round == "warm") {
                        got.clear();
                        run(&enc, &text, &mut got);
                    }
                    assert!(got == want, "{pattern}, {copy}, {round}");
                }
            }
        }
    }

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        v.extend(extra.iter().map(|e| e.to_vec()));
        Vocab::new(&v).unwrap()
    }

    fn both(v: &Vocab, s: &[u8]) -> Vec<u32> {
        let mut a = Vec::new();
        bpe_small(v, s, &mut a);
        let mut b = Vec::new();
        bpe_heap(v, s, &mut b);
        assert_eq!(a, b, "small and large paths disagree on {s:?}");
        a
    }

    #[test]
    fn merges_lowest_rank_first_leftmost_on_ties() {
        let v = vocab(&[b"aa", b"aaaa"]);
        assert_eq!(both(&v, b"aaa"), [256, 97]);
        assert_eq!(both(&v, b"aaaa"), [257]);
        assert_eq!(both(&v, b"aaaaa"), [257, 97]);
        let v = vocab(&[b"aa", b"aaa", b"aaaa"]);
        assert_eq!(both(&v, b"aaa"), [257]);
        assert_eq!(both(&v, b"aaaaa"), [256, 257]);
    }

    #[test]
    fn rank_of_concatenation_decides() {
        // "bc" (256) merges before "ab" (257); "abc" (258) then forms from "a" + "bc".
        let v = vocab(&[b"bc", b"ab", b"abc"]);
        assert_eq!(both(&v, b"abc"), [258]);
        assert_eq!(both(&v, b"abcx"), [258, 120]);
    }

    /// Every size of the short merge, in both compiled copies, against the literal rule: the
    /// keys' tie order, the links, and the speculative reads (which must change nothing).
    #[test]
    fn short_merge_equals_tiktoken_rule_at_every_size() {
        type Merge = fn(&Vocab, &[u8], &mut Vec<u32>);
        let mut copies: Vec<(&str, usize, Merge)> = vec![
            ("baseline", 16, bpe_small_body::<16>),
            ("baseline", 32, bpe_small_body::<32>),
            ("baseline", 128, bpe_small_body::<128>),
            ("baseline", 1024, bpe_small_body::<1024>),
            ("dispatch", 1024, bpe_small),
        ];
        #[cfg(target_arch = "x86_64")]
        if Avx2::detect().is_some() {
            // SAFETY (of each call): the CPU has the features (checked just above).
            copies.push(("x86-64-v3", 16, |v, c, o| unsafe {
                bpe_small_v3::<16>(v, c, o)
            }));
            copies.push(("x86-64-v3", 32, |v, c, o| unsafe {
                bpe_small_v3::<32>(v, c, o)
            }));
            copies.push(("x86-64-v3", 128, |v, c, o| unsafe {
                bpe_small_v3::<128>(v, c, o)
            }));
            copies.push(("x86-64-v3", 1024, |v, c, o| unsafe {
                bpe_small_v3::<1024>(v, c, o)
            }));
        }
        let mut rng = long::tests::Rng(0x5eed_cafe);
        for round in 0..60 {
            let merges = 20 + rng.below(200);
            let v = long::tests::random_vocab(&mut rng, merges);
            let alphabet: &[u8] = [&b"ab"[..], b"abc ", b"a"][round % 3];
            for _ in 0..30 {
                let longest = [40, 140, 1023][rng.below(3)];
                let len = 1 + rng.below(longest);
                let s = rng.text(alphabet, len);
                // The literal rule takes a whole-chunk token as is; the merge does not look.
                if v.rank(&s).is_some() {
                    continue;
                }
                let want = tiktoken_rule(&v, &s);
                for &(name, cap, merge) in &copies {
                    if len < cap {
                        let mut got = Vec::new();
                        merge(&v, &s, &mut got);
                        assert_eq!(
                            got,
                            want,
                            "{name} <{cap}> on {:?}",
                            String::from_utf8_lossy(&s)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn large_path_matches_small_on_long_runs() {
        let v = vocab(&[b"aa", b"ab", b"aaaa", b"ba", b"abab", b"aab"]);
        let s: Vec<u8> = (0..LARGE_CHUNK - 1)
            .map(|i| if i % 3 == 0 { b'b' } else { b'a' })
            .collect();
        both(&v, &s);
    }

    #[test]
    fn parents_are_the_last_merge() {
        let v = vocab(&[b"bc", b"ab", b"abc", b"zz\xff"]);
        assert_eq!(v.parents(256), Some((98, 99)));
        assert_eq!(v.parents(258), Some((97, 256)));
        assert_eq!(v.parents(259), None);
        assert_eq!(v.parents(97), None);
    }

    /// An output with `room_for(text.len())` never grows: the Python bindings encode into the
    /// memory of the list that returns the ids, which must not move. A byte-only vocabulary
    /// (an id per byte, every chunk of 4+ bytes spilled) is the tightest case; every prefix of
    /// a text of short chunks, runs of spaces and special tokens, with each named pattern.
    #[test]
    fn room_for_a_text_is_never_outgrown() {
        let atoms = [
            " ",
            "  ",
            "        ",
            "\n",
            "\n        ",
            "a",
            ".",
            "<|e|>",
            "x1",
            "é",
        ];
        let mut rng = long::tests::Rng(7);
        let mut text = String::new();
        while text.len() < 3000 {
            text.push_str(atoms[rng.below(atoms.len())]);
        }
        let mut cut = 0;
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let e = Encoder::new(
                vocab(&[]),
                Splitter::new(pattern).unwrap(),
                &[("<|e|>".to_string(), 256)],
            )
            .unwrap();
            for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let t = &text[..end];
                let mut out = Vec::with_capacity(room_for(t.len()));
                let (at, room) = (out.as_ptr(), out.capacity());
                e.encode(t, Allowed::All, Allowed::None, &mut out).unwrap();
                assert!(
                    out.as_ptr() == at && out.capacity() == room,
                    "{pattern}: {t:?}"
                );
                cut += usize::from(room - out.len() < cache::MOST_RESERVED + 100);
            }
        }
        // Ids as many as bytes, within a batch's reserve of the room, were met.
        assert!(cut > 1000, "{cut}");
    }

    #[test]
    fn specials_follow_the_policy() {
        let e = Encoder::new(
            vocab(&[]),
            Splitter::new("gpt2").unwrap(),
            &[("<|end|>".to_string(), 300)],
        )
        .unwrap();
        let mut out = Vec::new();
        let err = e
            .encode("a<|end|>", Allowed::None, Allowed::All, &mut out)
            .unwrap_err();
        assert_eq!(
            err,
            Error::DisallowedSpecialToken {
                token: "<|end|>".into()
            }
        );
        e.encode("a<|end|>b", Allowed::All, Allowed::None, &mut out)
            .unwrap();
        assert_eq!(out, [97, 300, 98]);
        assert_eq!(
            e.count("a<|end|>b", Allowed::All, Allowed::None).unwrap(),
            3
        );
        out.clear();
        e.encode("<|end|>", Allowed::None, Allowed::None, &mut out)
            .unwrap();
        assert_eq!(out.len(), 7);
        assert_eq!(e.n_vocab(), 301);
        let mut bytes = Vec::new();
        e.decode_bytes(&[97, 300], &mut bytes).unwrap();
        assert_eq!(bytes, b"a<|end|>");
        assert_eq!(
            e.decode_bytes(&[299], &mut bytes),
            Err(Error::UnknownTokenId { id: 299 })
        );
    }

    #[test]
    fn special_ids_far_past_the_vocabulary_are_refused() {
        let with = |id: u32| Specials::new(&[("<|a|>".into(), 256), ("<|b|>".into(), id)], 256);
        let last = (256 + 2 + MOST_UNUSED_IDS - 1) as u32;
        assert!(with(last).is_ok());
        for id in [last + 1, 1_000_000_000, u32::MAX] {
            match with(id) {
                Err(Error::InvalidSpecialTokens { message }) => {
                    assert!(message.contains("far past the vocabulary"), "{message}")
                }
                other => panic!("{id}: {other:?}"),
            }
        }
    }
    /// Every special-token search finds what a plain search does (leftmost, longest of those
    /// starting there, resuming one byte after a rejected one), whether the names start with
    /// one, two, three or more distinct bytes (`Specials::first_byte_in`).
    #[test]
    fn special_search_equals_a_plain_search() {
        let sets: [&[&str]; 4] = [
            &["<|a|>", "<|ab|>", "<|b|>"],
            &["<s>", "[P]", "[Px]"],
            &["<s>", "</s>", "[P]", "{x}"],
            &["<s>", "[P]", "{x}", "#", "xy"],
        ];
        let alphabet = [
            "<", "|", "a", "b", ">", "[", "P", "]", "{", "x", "}", "#", "y", "s", "/",
        ];
        let mut rng = crate::encode::Rng(0x5eed_5eed);
        for names in sets {
            let pairs: Vec<(String, u32)> = (0..names.len())
                .map(|k| (names[k].to_string(), 300 + k as u32))
                .collect();
            let specials = Specials::new(&pairs, 256).unwrap();
            for _ in 0..3000 {
                // Pieces of names and whole ones, so that matches are frequent.
                let text: String = (0..rng.below(12))
                    .map(|_| match rng.below(3) {
                        0 => names[rng.below(names.len())],
                        _ => alphabet[rng.below(alphabet.len())],
                    })
                    .collect();
                // All accepted, or the odd ids rejected.
                for odd in [true, false] {
                    let accept = |id: u32| odd || id.is_multiple_of(2);
                    let plain = (0..=text.len()).find_map(|s| {
                        let (k, name) = names
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| text[s..].starts_with(**n))
                            .max_by_key(|(_, n)| n.len())?;
                        accept(300 + k as u32).then_some((s, s + name.len(), 300 + k as u32))
                    });
                    let found = specials.find(&text, 0, accept);
                    assert_eq!(found, plain, "{names:?} {text:?}");
                }
            }
        }
    }
}
