//! Encoding: a text split into chunks, each chunk's ids from the chunk cache or merged, the
//! special tokens put in by the caller's policy.
//!
//! An [`Encoder`] holds a vocabulary, a splitter and special tokens. The hot loop
//! (`Encoder::encode_in_batches`) takes the splitter's chunk boundaries a batch at a time and
//! looks the batch up in this thread's chunk cache (`cache`), merging only the chunks it has
//! not seen ([`Encoder::encode_chunk`], by the algorithms of `merge`). `parallel` cuts one
//! long text for several threads; [`room`] sizes the outputs.

use crate::error::Error;
use crate::merge::{self, long::LongPath, small};
use crate::pretokenize::Splitter;
use crate::simd::{self, Baseline};
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2, Avx512, Avx512Vbmi, Best};
use crate::specials::{Allowed, Specials};
use crate::vocab::Vocab;
use normalize::Normalizer;
use std::sync::OnceLock;

mod cache;
pub mod normalize;
mod parallel;
pub mod room;

pub use parallel::long_enough_to_cut;

/// Chunks at least this long take the long path (`merge::long`), whose tables cost
/// milliseconds to set up; below this length the heap is as fast (docs/performance.md, 'Merge
/// algorithms').
const SEARCH_CHUNK: usize = 4096;

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
    /// Applied to the text between special tokens before it is split (HF files' normalizer).
    normalizer: Option<Normalizer>,
    /// Built on the first long chunk: most inputs never need it.
    long: OnceLock<Option<LongPath>>,
    /// Identifies this encoder's chunk caches (one per thread, see [`cache`]).
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
        let specials = Specials::new(specials, &vocab)?;
        Ok(Encoder {
            vocab,
            splitter,
            specials,
            normalizer: None,
            long: OnceLock::new(),
            uid: next_uid(),
        })
    }

    /// This encoder with `normalizer` applied to the text between special tokens.
    pub fn with_normalizer(mut self, normalizer: Option<Normalizer>) -> Encoder {
        self.normalizer = normalizer;
        self
    }

    pub fn normalizer(&self) -> Option<Normalizer> {
        self.normalizer
    }

    /// This encoder with the special tokens named in `late` matched in the normalized text
    /// between the others, spelled as its normalizer spells them (HF's added tokens with
    /// `normalized` true); call after [`Encoder::with_normalizer`].
    pub fn with_late_specials(mut self, late: &[String]) -> Result<Encoder, Error> {
        let form = self.normalizer;
        let spell = |name: &str| match form {
            Some(form) => form.apply(name).into_owned(),
            None => name.to_string(),
        };
        self.specials = self.specials.with_late(late, spell)?;
        Ok(self)
    }

    /// This encoder with the special tokens named in `left` taking the whitespace before them
    /// with them, and those in `right` the whitespace after them (HF's `lstrip`, `rstrip`).
    pub fn with_special_strips(
        mut self,
        left: &[String],
        right: &[String],
    ) -> Result<Encoder, Error> {
        self.specials = self.specials.with_strips(left, right)?;
        Ok(self)
    }

    /// An encoder with this one's vocabulary, splitter and normalizer, and the special tokens
    /// `specials` matched as [`Encoder::with_late_specials`] and
    /// [`Encoder::with_special_strips`] say: the tables are copied, not built again.
    pub fn with_specials(
        &self,
        specials: &[(String, u32)],
        late: &[String],
        left: &[String],
        right: &[String],
    ) -> Result<Encoder, Error> {
        Encoder::new(self.vocab.clone(), self.splitter.clone(), specials)?
            .with_normalizer(self.normalizer)
            .with_late_specials(late)?
            .with_special_strips(left, right)
    }

    /// The text between two special tokens as the splitter sees it: normalized, then cut at
    /// the late specials (if any); each piece goes to `on_piece`, each late special's id to
    /// `on_special`.
    fn each_piece(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        mut on_piece: impl FnMut(&str) -> Result<(), Error>,
        on_special: impl FnMut(u32),
    ) -> Result<(), Error> {
        let normalized = self.normalized(text);
        if !self.specials.has_late() {
            return on_piece(&normalized);
        }
        self.specials
            .walk_late(&normalized, allowed, disallowed, on_piece, on_special)
    }

    /// `text` as the splitter sees it: normalized, if the encoder has a normalizer.
    pub fn normalized<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match self.normalizer {
            Some(form) => form.apply(text),
            None => std::borrow::Cow::Borrowed(text),
        }
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
            .max_id()
            .map_or(0, |id| id as usize + 1)
            .max(self.vocab.len())
    }

    /// Encode treating special-token strings as plain text (normalized first, if the encoder
    /// has a normalizer).
    pub fn encode_ordinary(&self, text: &str, out: &mut Vec<u32>) -> Result<(), Error> {
        self.encode_in_batches(&self.normalized(text), out, |_| {})
    }

    /// Encode `text` (as plain text) onto `out`, calling `after` on `out` after each batch of
    /// chunks (see `cache::BATCH`).
    ///
    /// The scanner and the cache lookups run as a copy compiled for the best instruction set
    /// the CPU has ([`simd::best`]); the build itself targets the x86_64 baseline.
    #[inline(always)]
    fn encode_in_batches(
        &self,
        text: &str,
        out: &mut Vec<u32>,
        mut after: impl FnMut(&mut Vec<u32>),
    ) -> Result<(), Error> {
        // On a pool's worker: not on the same CPU as another worker (`runtime::threads`).
        crate::runtime::threads::settle();
        match simd::best() {
            // SAFETY (of each call): the token proves the CPU has the function's features.
            #[cfg(target_arch = "x86_64")]
            Best::Avx512Vbmi(isa) => unsafe {
                self.encode_in_batches_v4_vbmi(isa, text, out, &mut after)
            },
            #[cfg(target_arch = "x86_64")]
            Best::Avx512(isa) => unsafe { self.encode_in_batches_v4(isa, text, out, &mut after) },
            #[cfg(target_arch = "x86_64")]
            Best::Avx2(isa) => unsafe { self.encode_in_batches_v3(isa, text, out, &mut after) },
            _ => self.encode_in_batches_baseline(text, out, &mut after),
        }
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
    /// scanner's bit tables of characters of two and three bytes (`blocks::vbmi`) inlined into
    /// the loop (docs/performance.md, 'Scanners').
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

    /// Walk `text` under tiktoken's special-token policy: a `disallowed` special anywhere is an
    /// error; each `allowed` special's id goes to `on_special`, and each piece of text between
    /// them, as the splitter sees it (`each_piece`), to `on_piece`.
    fn walk_pieces(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        on_piece: impl Fn(&str) -> Result<(), Error> + Copy,
        on_special: impl Fn(u32) + Copy,
    ) -> Result<(), Error> {
        self.specials.walk(
            text,
            allowed,
            disallowed,
            |t| self.each_piece(t, allowed, disallowed, on_piece, on_special),
            on_special,
        )
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
        self.walk_pieces(
            text,
            allowed,
            disallowed,
            |piece| self.encode_in_batches(piece, &mut out.borrow_mut(), |_| {}),
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
        let buf = std::cell::RefCell::new(Vec::new());
        self.walk_pieces(
            text,
            allowed,
            disallowed,
            |piece| {
                // The ids of each batch of chunks are counted and dropped.
                self.encode_in_batches(piece, &mut buf.borrow_mut(), |ids| {
                    n.set(n.get() + ids.len());
                    ids.clear();
                })
            },
            |_| n.set(n.get() + 1),
        )?;
        Ok(n.get())
    }

    /// Encode as [`Encoder::encode`] does, each chunk by BPE-dropout's rule
    /// ([`merge::dropout`]): with `threshold` from [`merge::dropout::threshold`], the draws
    /// from `rng`, chunk after chunk.
    pub fn encode_dropout(
        &self,
        text: &str,
        allowed: Allowed<'_>,
        disallowed: Allowed<'_>,
        threshold: u64,
        rng: &mut merge::dropout::Rng,
        out: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let out = std::cell::RefCell::new(out);
        let rng = std::cell::RefCell::new(rng);
        self.walk_pieces(
            text,
            allowed,
            disallowed,
            |piece| {
                self.splitter.split(piece, |chunk| {
                    let (mut out, mut rng) = (out.borrow_mut(), rng.borrow_mut());
                    merge::dropout::merge(&self.vocab, chunk.as_bytes(), threshold, *rng, *out);
                })
            },
            |id| out.borrow_mut().push(id),
        )
    }

    /// Encode one chunk (already split) onto `out`, by tiktoken's rule: a chunk that is a
    /// token is that token, any other is merged (`merge`), by the rescan below
    /// `small::LIMIT` bytes, the heap below `SEARCH_CHUNK`, the long path above.
    ///
    /// A chunk under `small::LIMIT` bytes is merged without first looking it up whole when the
    /// vocabulary's merges make each of its tokens of that length
    /// (`Vocab::merges_make_tokens_of`): on a first pass the lookup is a wait for cold lines on
    /// every new chunk, and few chunks are tokens (docs/performance.md, 'Merge algorithms').
    #[inline]
    pub fn encode_chunk(&self, chunk: &[u8], out: &mut Vec<u32>) {
        if chunk.len() < small::LIMIT && self.vocab.merges_make_tokens_of(chunk.len()) {
            small::merge(&self.vocab, chunk, out);
        } else if let Some(rank) = self.vocab.rank(chunk) {
            out.push(rank);
        } else if chunk.len() < small::LIMIT {
            small::merge(&self.vocab, chunk, out);
        } else if chunk.len() < SEARCH_CHUNK {
            merge::heap::merge(&self.vocab, chunk, out);
        } else {
            match self.long.get_or_init(|| LongPath::new(&self.vocab)) {
                Some(path) => path.encode(&self.vocab, chunk, out),
                None => merge::heap::merge(&self.vocab, chunk, out),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::literal;
    use crate::testing::Rng;
    use crate::vocab::testing;

    /// `encode_chunk` against the literal rule on random vocabularies, with and without short
    /// tokens the merges never make (those keep the whole-chunk lookup); both kinds occur.
    #[test]
    fn chunks_equal_the_literal_rule() {
        let mut rng = Rng(0xdead_beef);
        let mut kinds = [0; 2];
        for round in 0..80 {
            let merges = 10 + rng.below(150);
            let v = testing::random(&mut rng, merges);
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
                    literal::merge(&v, &s),
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
        let v = testing::of(&[b"bc", b"ab", b"abc", b"zz\xff"]);
        assert!(!v.merges_make_tokens_of(3));
        assert!(v.merges_make_tokens_of(crate::vocab::SHORT_TOKEN + 1));
        assert_eq!(enc(v.clone(), b"zz\xff"), [259]);
        assert_eq!(enc(v.clone(), b"abc"), [258]);
        assert_eq!(enc(v, b"zz\xffabc"), [122, 122, 255, 258]);
        let v = testing::of(&[b"bc", b"ab", b"abc", b"zz", b"zz\xff"]);
        assert!(v.merges_make_tokens_of(3));
        assert_eq!(enc(v, b"zz\xff"), [260]);
        // A long unreachable token keeps the lookup for long chunks only.
        let long = b"0123456789abcdef";
        let v = testing::of(&[b"bc", long]);
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
        let v = testing::of(&pieces);
        assert!(v.merges_make_tokens_of(long.len()));
        assert_eq!(enc(v, long), [256 + 14]);
    }

    /// An encoder made by `with_specials` encodes as one built anew with those special tokens,
    /// keeping the normalizer and the strips asked for.
    #[test]
    fn with_specials_is_built_anew() {
        let names = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let v = testing::of(&[b"ab", b"abc", b" a"]);
        let splitter = || Splitter::new(r" ?[a-z]+|[^a-z ]+| ").unwrap();
        let specials = [("<s>".to_string(), 259), ("<t>".to_string(), 260)];
        let base = Encoder::new(v.clone(), splitter(), &specials[..1])
            .unwrap()
            .with_normalizer(Some(Normalizer::Nfc));
        let copy = base
            .with_specials(&specials, &[], &[], &names(&["<t>"]))
            .unwrap();
        let anew = Encoder::new(v, splitter(), &specials)
            .unwrap()
            .with_normalizer(Some(Normalizer::Nfc))
            .with_special_strips(&[], &names(&["<t>"]))
            .unwrap();
        for text in ["abc<s> ab<t>  abc", "<t>a\u{301}bc", "x<s><t>"] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            copy.encode(text, Allowed::All, Allowed::None, &mut a)
                .unwrap();
            anew.encode(text, Allowed::All, Allowed::None, &mut b)
                .unwrap();
            assert_eq!(a, b, "{text:?}");
        }
        assert_eq!(copy.n_vocab(), 261);
        assert!(base
            .with_specials(&[("<x>".to_string(), 256)], &[], &[], &[])
            .is_err());
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
        let mut rng = Rng(7);
        let mut text = String::new();
        while text.len() < 3000 {
            text.push_str(atoms[rng.below(atoms.len())]);
        }
        let mut cut = 0;
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let e = Encoder::new(
                testing::of(&[]),
                Splitter::new(pattern).unwrap(),
                &[("<|e|>".to_string(), 256)],
            )
            .unwrap();
            for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let t = &text[..end];
                let mut out = Vec::with_capacity(room::room_for(t.len()));
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
            testing::of(&[]),
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

    /// Late specials are looked for, as the normalizer spells them, in the normalized text the
    /// others leave: `>` + U+0338 is U+226F there, so `<|a|>` before it is no match, and
    /// NFKC's `<|ﬁ|>` is found as `<|fi|>`; a late one inside an early one is never found.
    #[test]
    fn late_specials_are_found_in_the_normalized_text() {
        let specials = [
            ("<|a|>".to_string(), 300),
            ("<|ﬁ|>".to_string(), 301),
            ("x<|e|>".to_string(), 302),
            ("<|e|>".to_string(), 303),
        ];
        let late: Vec<String> = ["<|a|>", "<|ﬁ|>", "x<|e|>"].map(String::from).to_vec();
        let e = Encoder::new(testing::of(&[]), Splitter::new("gpt2").unwrap(), &specials)
            .unwrap()
            .with_normalizer(Normalizer::parse("NFKC"))
            .with_late_specials(&late)
            .unwrap();
        let ids = |text: &str| {
            let mut out = Vec::new();
            e.encode(text, Allowed::All, Allowed::None, &mut out)
                .unwrap();
            assert_eq!(
                e.count(text, Allowed::All, Allowed::None).unwrap(),
                out.len()
            );
            out
        };
        assert_eq!(ids("<|a|>b"), [300, 98]);
        assert_eq!(ids("<|a|>\u{338}").len(), 7); // < | a | and the 3 bytes of ≯
        assert_eq!(ids("<|fi|><|ﬁ|>"), [301, 301]);
        assert_eq!(ids("x<|e|>"), [120, 303]);
        assert_eq!(e.specials().late().collect::<Vec<_>>(), late);
        let err = e.encode("<|fi|>", Allowed::None, Allowed::All, &mut Vec::new());
        assert!(
            matches!(err, Err(Error::DisallowedSpecialToken { .. })),
            "{err:?}"
        );
    }

    /// A special with lstrip takes the whitespace before it (back to the last special), one
    /// with rstrip the whitespace after it; neither takes anything when it is plain text.
    #[test]
    fn strips_take_the_whitespace_beside() {
        let specials = [("<|l|>".to_string(), 300), ("<|r|>".to_string(), 301)];
        let e = Encoder::new(testing::of(&[]), Splitter::new("gpt2").unwrap(), &specials)
            .unwrap()
            .with_special_strips(&["<|l|>".into()], &["<|r|>".into()])
            .unwrap();
        let ids = |text: &str, allowed| {
            let mut out = Vec::new();
            e.encode(text, allowed, Allowed::None, &mut out).unwrap();
            assert_eq!(e.count(text, allowed, Allowed::None).unwrap(), out.len());
            out
        };
        assert_eq!(ids("a \t<|l|>b", Allowed::All), [97, 300, 98]);
        assert_eq!(ids("a<|r|> \u{3000}\nb", Allowed::All), [97, 301, 98]);
        assert_eq!(ids("<|r|>  <|l|>", Allowed::All), [301, 300]);
        assert_eq!(ids(" <|l|> ", Allowed::None).len(), 7);
        assert_eq!(e.specials().strips(), (vec!["<|l|>"], vec!["<|r|>"]));
    }

    /// A vocabulary with gaps encodes as the same vocabulary without them, each id moved past
    /// the gaps below it (the order of ranks, which is the merges' priority, is the same);
    /// special tokens in gaps encode and decode to their ids, empty gaps decode to nothing.
    #[test]
    fn gaps_move_ids_and_change_nothing_else() {
        let mut rng = Rng(31);
        for round in 0..20 {
            let dense = testing::random(&mut rng, 40 + round * 10);
            let tokens: Vec<Vec<u8>> = (0..dense.len() as u32)
                .map(|r| dense.token(r).to_vec())
                .collect();
            // Gaps before the bytes (Tekken), between ranks (p50k_base) and at random.
            let mut gapped: Vec<Vec<u8>> = vec![Vec::new(); round % 3];
            let mut id_of = Vec::new();
            for t in tokens {
                while rng.below(20) == 0 {
                    gapped.push(Vec::new());
                }
                id_of.push(gapped.len() as u32);
                gapped.push(t);
            }
            let gaps: Vec<u32> = (0..gapped.len() as u32)
                .filter(|&r| gapped[r as usize].is_empty())
                .collect();
            let specials: Vec<(String, u32)> = gaps
                .iter()
                .step_by(2)
                .enumerate()
                .map(|(k, &id)| (format!("<|{k}|>"), id))
                .collect();
            let splitter = Splitter::new("gpt2").unwrap();
            let plain = Encoder::new(dense, splitter.clone(), &[]).unwrap();
            let e = Encoder::new(Vocab::new(&gapped).unwrap(), splitter, &specials).unwrap();
            for _ in 0..20 {
                let text: String = (0..rng.below(80))
                    .map(|_| ['a', 'b', 'c', ' ', '\n'][rng.below(5)])
                    .collect();
                let (mut want, mut got) = (Vec::new(), Vec::new());
                plain.encode_ordinary(&text, &mut want).unwrap();
                e.encode_ordinary(&text, &mut got).unwrap();
                let moved: Vec<u32> = want.iter().map(|&r| id_of[r as usize]).collect();
                assert_eq!(got, moved, "{text:?}");
                let mut bytes = Vec::new();
                e.decode_bytes(&got, &mut bytes).unwrap();
                assert_eq!(bytes, text.as_bytes());
            }
            for (k, (name, id)) in specials.iter().enumerate() {
                let mut out = Vec::new();
                e.encode(&format!("a{name}"), Allowed::All, Allowed::None, &mut out)
                    .unwrap();
                assert_eq!(out, [id_of[b'a' as usize], *id], "special {k}");
                assert_eq!(e.token_bytes(*id).unwrap(), name.as_bytes());
            }
            for &gap in gaps.iter().skip(1).step_by(2) {
                assert_eq!(
                    e.token_bytes(gap),
                    Err(Error::UnknownTokenId { id: gap as u64 })
                );
            }
        }
    }
}
