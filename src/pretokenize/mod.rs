//! Pre-tokenization: cut text into chunks that BPE merges never cross.
//!
//! Named patterns (`gpt2`, `cl100k`, `o200k`) are tiktoken's pattern strings, run by
//! hand-written scanners (`gpt2`, `cl100k`, `o200k`), which also run the variants of their
//! families that open models use (Llama 3, Qwen, Tekken: [`shapes`]), whose chunks equal Python
//! `regex.findall` on every string, with the classes' Unicode data of tiktoken's engine
//! (tests/test_pretokenize.py proves it with hypothesis, every code point in several contexts,
//! and the shared corpora). The scanners read a table of character classes generated from
//! that engine, fancy-regex (`tables`, by scripts/gen_unicode_tables.py): `regex` ships newer
//! Unicode data, on which tiktoken's ids would differ (python/tokenmill/unicode_data.py).
//!
//! Each scanner has two paths (`scan`): per character, and a block path that finds all chunk
//! starts of 64 bytes at once from class bitmasks (`blocks`). The block path takes ASCII and
//! the characters of other scripts its masks classify (all but numbers and whitespace for gpt2
//! and cl100k; for o200k, letters by case, others and marks after letters), and stops where its
//! rules end (an unclassified character, a few rare shapes), where the per-character path takes
//! over; the tests check the two paths against each other. Any other pattern runs on fancy-regex
//! (`regex`).
//!
//! The encoder takes chunks as their boundaries, a batch at a time
//! ([`Splitter::split_bounds`]), so no `&str` is built per chunk. Splitting is lossless: text
//! that a custom pattern does not match becomes a chunk of its own, so every byte of the input
//! lands in exactly one chunk. Where a text may be cut without changing its chunks is [`cut`].

use crate::error::Error;
use crate::simd::{self, Baseline};
#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2, Avx512, Avx512Vbmi, Best};

mod blocks;
mod cl100k;
mod classes;
pub mod cut;
mod deepseek;
mod gpt2;
mod isa;
mod o200k;
mod regex;
mod scan;
pub mod shapes;
#[rustfmt::skip]
mod tables;

pub use deepseek::STAGES as DEEPSEEK_V3_STAGES;
pub use scan::BOUNDS;
use scan::{scan, Sink};
pub use shapes::{Shape, CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN};

/// Which named pattern a splitter implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    Gpt2,
    Cl100k,
    O200k,
}

impl Named {
    /// The name under which users pass this pattern.
    pub fn name(self) -> &'static str {
        match self {
            Named::Gpt2 => "gpt2",
            Named::Cl100k => "cl100k",
            Named::O200k => "o200k",
        }
    }

    /// tiktoken's pattern string for this family.
    pub fn pattern(self) -> &'static str {
        match self {
            Named::Gpt2 => GPT2_PATTERN,
            Named::Cl100k => CL100K_PATTERN,
            Named::O200k => O200K_PATTERN,
        }
    }

    /// The shape its scanner runs.
    pub fn shape(self) -> Shape {
        match self {
            Named::Gpt2 => Shape::Gpt2,
            Named::Cl100k => Shape::cl100k(false, true, false),
            Named::O200k => Shape::O200k {
                single_digits: false,
                contractions: true,
            },
        }
    }

    /// Recognize a pattern name (`gpt2`, `r50k`, `p50k`, `cl100k`, `o200k`, with or without a
    /// `_base` suffix) or one of tiktoken's exact pattern strings.
    pub fn parse(pattern: &str) -> Option<Named> {
        match pattern.strip_suffix("_base").unwrap_or(pattern) {
            "gpt2" | "r50k" | "p50k" => Some(Named::Gpt2),
            "cl100k" => Some(Named::Cl100k),
            "o200k" => Some(Named::O200k),
            _ => [Named::Gpt2, Named::Cl100k, Named::O200k]
                .into_iter()
                .find(|n| n.pattern() == pattern),
        }
    }
}

/// Cuts text into chunks. Cheap to share across threads.
///
/// ```
/// use tokenmill::Splitter;
///
/// let o200k = Splitter::new("o200k")?;
/// assert!(o200k.is_scanner());
/// assert_eq!(o200k.chunks("Don't panic!\n")?, ["Don't", " panic", "!\n"]);
/// let cl100k = Splitter::new("cl100k_base")?;
/// assert_eq!(cl100k.chunks("Don't panic!\n")?, ["Don", "'t", " panic", "!\n"]);
/// // A variant of a named family runs on its scanner too (Qwen2's: cl100k's with single
/// // digits and no `\s++$`).
/// let qwen2 = Splitter::new(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")?;
/// assert!(qwen2.is_scanner() && qwen2.named().is_none());
/// assert_eq!(qwen2.chunks("x 2024")?, ["x", " ", "2", "0", "2", "4"]);
/// // Any other pattern runs on fancy-regex; unmatched text becomes a chunk too.
/// assert_eq!(Splitter::new(r"\d+")?.chunks("a1b22")?, ["a", "1", "b", "22"]);
/// # Ok::<(), tokenmill::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Splitter {
    kind: Kind,
    pattern: String,
    /// The named pattern this is, on either engine.
    named: Option<Named>,
}

#[derive(Debug, Clone)]
enum Kind {
    /// A pattern of a shape the scanners run.
    Scanner(Shape),
    /// A regex on fancy-regex: a custom pattern, or one forced onto the regex engine
    /// ([`Splitter::with_regex_engine`]).
    Regex(Box<fancy_regex::Regex>),
    /// Splitters applied one after another, as HF's `Sequence` of `Split` pre-tokenizers:
    /// each splits every chunk of the one before as a text of its own (so `$` and lookarounds
    /// see the chunk's ends). Never nested, at least two.
    Sequence(Box<[Splitter]>),
    /// DeepSeek V3's three stages (`deepseek::STAGES`), on one scanner; the stages are kept
    /// for what they are, not run.
    DeepSeek(Box<[Splitter]>),
}

/// Run `$body` with `$S` the scanner type of the shape `$shape` (one copy of the body per
/// scanner, each inlined).
macro_rules! with_scanner {
    ($shape:expr, $S:ident => $body:expr) => {
        match $shape {
            Shape::Gpt2 => {
                type $S = gpt2::Gpt2;
                $body
            }
            Shape::Cl100k {
                single_digits: false,
                end_run: false,
                marks_are_letters: false,
            } => {
                type $S = cl100k::Cl100k<false, false, false>;
                $body
            }
            Shape::Cl100k {
                single_digits: false,
                end_run: false,
                marks_are_letters: true,
            } => {
                type $S = cl100k::Cl100k<false, false, true>;
                $body
            }
            Shape::Cl100k {
                single_digits: false,
                end_run: true,
                marks_are_letters: false,
            } => {
                type $S = cl100k::Cl100k<false, true, false>;
                $body
            }
            Shape::Cl100k {
                single_digits: false,
                end_run: true,
                marks_are_letters: true,
            } => {
                type $S = cl100k::Cl100k<false, true, true>;
                $body
            }
            Shape::Cl100k {
                single_digits: true,
                end_run: false,
                marks_are_letters: false,
            } => {
                type $S = cl100k::Cl100k<true, false, false>;
                $body
            }
            Shape::Cl100k {
                single_digits: true,
                end_run: false,
                marks_are_letters: true,
            } => {
                type $S = cl100k::Cl100k<true, false, true>;
                $body
            }
            Shape::Cl100k {
                single_digits: true,
                end_run: true,
                marks_are_letters: false,
            } => {
                type $S = cl100k::Cl100k<true, true, false>;
                $body
            }
            Shape::Cl100k {
                single_digits: true,
                end_run: true,
                marks_are_letters: true,
            } => {
                type $S = cl100k::Cl100k<true, true, true>;
                $body
            }
            Shape::O200k {
                single_digits: false,
                contractions: true,
            } => {
                type $S = o200k::O200k<false, true>;
                $body
            }
            Shape::O200k {
                single_digits: false,
                contractions: false,
            } => {
                type $S = o200k::O200k<false, false>;
                $body
            }
            Shape::O200k {
                single_digits: true,
                contractions: true,
            } => {
                type $S = o200k::O200k<true, true>;
                $body
            }
            Shape::O200k {
                single_digits: true,
                contractions: false,
            } => {
                type $S = o200k::O200k<true, false>;
                $body
            }
        }
    };
}

impl Splitter {
    /// A splitter for a pattern name or any regex (see [`Named::parse`]): on a scanner if the
    /// pattern has one of the shapes they run ([`shapes::recognize`]), else on fancy-regex.
    pub fn new(pattern: &str) -> Result<Splitter, Error> {
        if let Some(named) = Named::parse(pattern) {
            return Ok(Splitter {
                kind: Kind::Scanner(named.shape()),
                pattern: named.pattern().to_string(),
                named: Some(named),
            });
        }
        if let Some(shape) = shapes::recognize(pattern) {
            return Ok(Splitter {
                kind: Kind::Scanner(shape),
                pattern: pattern.to_string(),
                named: None,
            });
        }
        Splitter::with_regex_engine(pattern)
    }

    /// Like [`Splitter::new`], but always on the regex engine, even for a named pattern (whose
    /// name is replaced by its pattern string). For benchmarks and cross-checks of the scanners.
    pub fn with_regex_engine(pattern: &str) -> Result<Splitter, Error> {
        let named = Named::parse(pattern);
        let pattern = match named {
            Some(n) => n.pattern(),
            None => pattern,
        };
        if pattern.is_empty() {
            return Err(Error::InvalidPattern {
                pattern: String::new(),
                message: "the pattern is empty".to_string(),
            });
        }
        Ok(Splitter {
            kind: Kind::Regex(Box::new(regex::compile(pattern)?)),
            pattern: pattern.to_string(),
            named,
        })
    }

    /// A splitter that applies `patterns` one after another, each to every chunk of the one
    /// before as a text of its own (HF's `Sequence` of `Split` pre-tokenizers, each
    /// `Isolated`); one pattern is [`Splitter::new`]'s. DeepSeek V3's stages run on one scanner.
    pub fn sequence(patterns: &[impl AsRef<str>]) -> Result<Splitter, Error> {
        let mut split = Splitter::stages(patterns)?;
        if deepseek::is_deepseek(patterns) {
            if let Kind::Sequence(stages) = split.kind {
                split.kind = Kind::DeepSeek(stages);
            }
        }
        Ok(split)
    }

    /// [`Splitter::sequence`] with every stage run on its own.
    fn stages(patterns: &[impl AsRef<str>]) -> Result<Splitter, Error> {
        match patterns {
            [] => Err(Error::InvalidPattern {
                pattern: String::new(),
                message: "a sequence of patterns needs one at least".to_string(),
            }),
            [one] => Splitter::new(one.as_ref()),
            _ => {
                let stages: Vec<Splitter> = patterns
                    .iter()
                    .map(|p| Splitter::new(p.as_ref()))
                    .collect::<Result<_, _>>()?;
                Ok(Splitter {
                    pattern: stages
                        .iter()
                        .map(|s| s.pattern.as_str())
                        .collect::<Vec<_>>()
                        .join(" then "),
                    kind: Kind::Sequence(stages.into()),
                    named: None,
                })
            }
        }
    }

    /// The patterns this splitter applies, one after another: one, but for a sequence.
    pub fn patterns(&self) -> Vec<&str> {
        match &self.kind {
            Kind::Sequence(stages) | Kind::DeepSeek(stages) => {
                stages.iter().map(|s| s.pattern.as_str()).collect()
            }
            _ => vec![self.pattern.as_str()],
        }
    }

    /// Whether this splitter runs a hand-written scanner (rather than the regex engine).
    pub fn is_scanner(&self) -> bool {
        matches!(self.kind, Kind::Scanner(_) | Kind::DeepSeek(_))
    }

    /// The shape of the scanner this splitter runs, if it runs one of a single pattern.
    pub fn shape(&self) -> Option<Shape> {
        match self.kind {
            Kind::Scanner(shape) => Some(shape),
            Kind::Regex(_) | Kind::Sequence(_) | Kind::DeepSeek(_) => None,
        }
    }

    /// The name of the scanner this splitter runs ([`Shape::describe`], or DeepSeek V3's
    /// stages), or `None` on the regex engine.
    pub fn scanner(&self) -> Option<String> {
        match self.kind {
            Kind::Scanner(shape) => Some(shape.describe()),
            Kind::DeepSeek(_) => Some("DeepSeek V3".to_string()),
            Kind::Regex(_) | Kind::Sequence(_) => None,
        }
    }

    /// The full pattern string (tiktoken's string for named patterns; a sequence's patterns
    /// joined by " then ", for messages: [`Splitter::patterns`] lists them).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The named pattern this splitter implements, if it is one of tiktoken's.
    pub fn named(&self) -> Option<Named> {
        self.named
    }

    /// Call `f` on every chunk of `text`, in order. Chunks are never empty and cover the text.
    #[inline]
    pub fn split<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<(), Error> {
        let mut bad = None;
        self.split_bounds(text, |at| {
            for w in at.windows(2) {
                // Boundaries are character boundaries (`split_bounds`), so `get` succeeds.
                match text.get(w[0]..w[1]) {
                    Some(chunk) => f(chunk),
                    None => bad = bad.or(Some(w[0])),
                }
            }
        })?;
        match bad {
            None => Ok(()),
            Some(at) => Err(scan::internal_error(at)),
        }
    }

    /// The chunks of `text` as their boundaries, in batches: each call of `f` gets `at`, of
    /// at least two boundaries, and `text[at[k]..at[k + 1]]` is a chunk. The first call's
    /// `at[0]` is 0, each later call starts with the previous call's last boundary, the last
    /// call ends with `text.len()`; boundaries increase strictly and are character
    /// boundaries. Calls hold up to [`BOUNDS`] chunks, or a few dozen more. The encoder's way
    /// in: no `&str` per chunk.
    ///
    /// The block path runs on the best instruction set the CPU has, in a copy compiled for it.
    #[inline(always)]
    pub fn split_bounds(&self, text: &str, f: impl FnMut(&[usize])) -> Result<(), Error> {
        match simd::best() {
            // SAFETY (of each call): the token proves the CPU has the function's features.
            #[cfg(target_arch = "x86_64")]
            Best::Avx512Vbmi(isa) => unsafe { self.split_bounds_v4_vbmi(isa, text, f) },
            #[cfg(target_arch = "x86_64")]
            Best::Avx512(isa) => unsafe { self.split_bounds_v4(isa, text, f) },
            #[cfg(target_arch = "x86_64")]
            Best::Avx2(isa) => unsafe { self.split_bounds_v3(isa, text, f) },
            _ => self.split_bounds_on(Baseline, text, f),
        }
    }

    /// [`Splitter::split_bounds_on`] compiled for x86-64-v3.
    ///
    /// # Safety
    /// Only for CPUs with the features below (`isa` proves it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn split_bounds_v3(
        &self,
        isa: Avx2,
        text: &str,
        f: impl FnMut(&[usize]),
    ) -> Result<(), Error> {
        self.split_bounds_on(isa, text, f)
    }

    /// [`Splitter::split_bounds_on`] compiled for x86-64-v3 with AVX-512F and BW.
    ///
    /// # Safety
    /// Only for CPUs with the features below (`isa` proves it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn split_bounds_v4(
        &self,
        isa: Avx512,
        text: &str,
        f: impl FnMut(&[usize]),
    ) -> Result<(), Error> {
        self.split_bounds_on(isa, text, f)
    }

    /// [`Splitter::split_bounds_on`] compiled for x86-64-v3 with AVX-512F, BW and VBMI: the
    /// bit tables of characters of two and three bytes (`blocks::vbmi::wide_vbmi`) inlined into the
    /// scan.
    ///
    /// # Safety
    /// Only for CPUs with the features below (`isa` proves it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx2,bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn split_bounds_v4_vbmi(
        &self,
        isa: Avx512Vbmi,
        text: &str,
        f: impl FnMut(&[usize]),
    ) -> Result<(), Error> {
        self.split_bounds_on(isa, text, f)
    }

    /// [`Splitter::split_bounds`] with the scanners' block path on the instruction set `isa`
    /// (the encoder passes the one its running copy is compiled for, so it is inlined there).
    #[inline(always)]
    pub(crate) fn split_bounds_on(
        &self,
        isa: impl isa::Isa,
        text: &str,
        f: impl FnMut(&[usize]),
    ) -> Result<(), Error> {
        let mut sink = Sink::new(f);
        match &self.kind {
            Kind::Scanner(shape) => with_scanner!(*shape, S => scan::<S>(isa, text, &mut sink)?),
            Kind::Regex(re) => regex::split(re, text, &mut sink)?,
            Kind::Sequence(stages) => split_in_stages(isa, stages, text, &mut |end| {
                sink.push(end);
                sink.flush_if_full();
            })?,
            Kind::DeepSeek(_) => scan::<deepseek::DeepSeek>(isa, text, &mut sink)?,
        }
        sink.finish();
        Ok(())
    }

    /// The chunk boundaries of `text` (0 first, `text.len()` last) by a scanner's
    /// per-character path alone, without its block path, which takes most text in
    /// [`Splitter::split_bounds`]; a regex splitter's as `split_bounds` gives them. For the
    /// fuzz targets, which hold both paths to the regex engine.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn per_character_bounds(&self, text: &str) -> Result<Vec<usize>, Error> {
        use scan::PerChar;
        let mut all = vec![0];
        let mut sink = Sink::new(|at: &[usize]| all.extend_from_slice(&at[1..]));
        match &self.kind {
            Kind::Scanner(shape) => {
                with_scanner!(*shape, S => scan::<PerChar<S>>(Baseline, text, &mut sink)?)
            }
            Kind::Regex(re) => regex::split(re, text, &mut sink)?,
            Kind::Sequence(stages) => split_in_stages(Baseline, stages, text, &mut |end| {
                sink.push(end);
            })?,
            Kind::DeepSeek(_) => scan::<PerChar<deepseek::DeepSeek>>(Baseline, text, &mut sink)?,
        }
        sink.finish();
        Ok(all)
    }

    /// The number of chunks of `text` (what `split` would call `f` on).
    ///
    /// ```
    /// let s = tokenmill::Splitter::new("gpt2")?;
    /// assert_eq!(s.count("I've  got 123 cats!")?, 7);
    /// # Ok::<(), tokenmill::Error>(())
    /// ```
    pub fn count(&self, text: &str) -> Result<usize, Error> {
        let mut n = 0;
        self.split_bounds(text, |at| n += at.len() - 1)?;
        Ok(n)
    }

    /// The chunks of `text` as a vector (convenience for tests and tools).
    pub fn chunks<'t>(&self, text: &'t str) -> Result<Vec<&'t str>, Error> {
        let mut out = Vec::new();
        self.split(text, |c| out.push(c))?;
        Ok(out)
    }
}

/// The chunks of `text` under `stages`, one after another: each chunk of the first stage is
/// split by the rest ([`refine`]); `end` gets the end of each final chunk, in order. The first
/// stage streams its chunks in batches; the rest work a chunk at a time, stage by stage, so
/// that splitters are never nested more than two deep (a scanner's frames are large).
fn split_in_stages(
    isa: impl isa::Isa,
    stages: &[Splitter],
    text: &str,
    end: &mut dyn FnMut(usize),
) -> Result<(), Error> {
    let Some((first, rest)) = stages.split_first() else {
        end(text.len());
        return Ok(());
    };
    let mut inner = Ok(());
    let mut start = 0;
    let (mut bounds, mut spare) = (Vec::new(), Vec::new());
    first.split_bounds_on(isa, text, |at| {
        for &stop in &at[1..] {
            if inner.is_ok() {
                inner = refine(isa, rest, text, (start, stop), &mut bounds, &mut spare);
                if inner.is_ok() {
                    bounds[1..].iter().for_each(|&b| end(b));
                }
            }
            start = stop;
        }
    })?;
    inner
}

/// The boundaries (into `bounds`: `start` first, `stop` last) of `text[start..stop]` split by
/// each of `stages` in turn, each splitting every chunk of the one before as a text of its own.
fn refine(
    isa: impl isa::Isa,
    stages: &[Splitter],
    text: &str,
    (start, stop): (usize, usize),
    bounds: &mut Vec<usize>,
    spare: &mut Vec<usize>,
) -> Result<(), Error> {
    bounds.clear();
    bounds.extend([start, stop]);
    for stage in stages {
        spare.clear();
        spare.push(start);
        for w in bounds.windows(2) {
            // Bounds are character boundaries, increasing (`split_bounds`).
            let chunk = text
                .get(w[0]..w[1])
                .ok_or_else(|| scan::internal_error(w[0]))?;
            stage.split_bounds_on(isa, chunk, |at| {
                spare.extend(at[1..].iter().map(|&b| w[0] + b));
            })?;
        }
        std::mem::swap(bounds, spare);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_patterns_resolve() {
        assert_eq!(Named::parse("gpt2"), Some(Named::Gpt2));
        assert_eq!(Named::parse("r50k_base"), Some(Named::Gpt2));
        assert_eq!(Named::parse("cl100k_base"), Some(Named::Cl100k));
        assert_eq!(Named::parse(O200K_PATTERN), Some(Named::O200k));
        assert_eq!(Named::parse(r"\w+"), None);
    }

    #[test]
    fn gpt2_splits_contractions_and_spaces() {
        let s = Splitter::new("gpt2").unwrap();
        assert_eq!(
            s.chunks("I've  got 123 cats!").unwrap(),
            ["I", "'ve", " ", " got", " 123", " cats", "!"]
        );
    }

    fn check(name: &str, text: &str, want: &[&str]) {
        let s = Splitter::new(name).unwrap();
        assert!(s.is_scanner());
        assert_eq!(s.chunks(text).unwrap(), want, "{name} {text:?}");
        // The regex engine agrees on these (all characters are old and unambiguous).
        let r = Splitter::with_regex_engine(name).unwrap();
        assert!(!r.is_scanner());
        assert_eq!(
            r.chunks(text).unwrap(),
            want,
            "{name} {text:?} (fancy-regex)"
        );
    }

    #[test]
    fn gpt2_tricky_cases() {
        check("gpt2", "", &[]);
        check("gpt2", "'S ''s 's", &["'", "S", " ''", "s", " '", "s"]);
        check("gpt2", "x\u{301}", &["x", "\u{301}"]);
        check("gpt2", "a \n", &["a", " \n"]);
        check("gpt2", "a  \tb", &["a", "  ", "\t", "b"]);
        check("gpt2", "  ", &["  "]);
        check("gpt2", " ", &[" "]);
        check("gpt2", "a\n\nb", &["a", "\n", "\n", "b"]);
        check("gpt2", "1,234.5 $", &["1", ",", "234", ".", "5", " $"]);
        check("gpt2", " 12345 ٣٤", &[" 12345", " ٣٤"]);
        check("gpt2", "you'll've", &["you", "'ll", "'ve"]);
        check("gpt2", "éte\u{301}!", &["éte", "\u{301}!"]);
    }

    #[test]
    fn cl100k_tricky_cases() {
        check(
            "cl100k",
            "'sam 'Sam 'ſam",
            &["'s", "am", " '", "Sam", " '", "ſam"],
        );
        check("cl100k", "'lL'VE'x", &["'lL", "'VE", "'x"]);
        check("cl100k", "a\u{301}b", &["a", "\u{301}b"]);
        check("cl100k", "12345 x", &["123", "45", " x"]);
        check("cl100k", "!!\n\nx", &["!!\n\n", "x"]);
        check("cl100k", "  \n  ", &["  \n  "]);
        check("cl100k", "  \n  x", &["  \n", " ", " x"]);
        check("cl100k", "\u{a0}x\tx", &["\u{a0}x", "\tx"]);
        check("cl100k", "\r\n\r\nx", &["\r\n\r\n", "x"]);
        check("cl100k", "x \r\n", &["x", " \r\n"]);
        check("cl100k", " !?\r\n", &[" !?\r\n"]);
        check("cl100k", "\"Hi\"", &["\"Hi", "\""]);
    }

    #[test]
    fn o200k_tricky_cases() {
        check("o200k", "\u{301}ABC", &["\u{301}", "ABC"]);
        check("o200k", "中A", &["中", "A"]);
        check("o200k", "A\u{301}B", &["A\u{301}", "B"]);
        check("o200k", "HELLOworld AǅB'S", &["HELLOworld", " AǅB'S"]);
        check(
            "o200k",
            "don't DON'T 'sam x'sam",
            &["don't", " DON'T", " '", "sam", " x's", "am"],
        );
        check("o200k", "'sam", &["'sam"]);
        check("o200k", "  \n  ", &["  \n", "  "]);
        check("o200k", "!\n/\nx", &["!\n/\n", "x"]);
        check("o200k", " \u{301}", &[" \u{301}"]);
        check("o200k", "1234", &["123", "4"]);
        check("o200k", "camelCase XMLHttp", &["camel", "Case", " XMLHttp"]);
        check("o200k", "x'LL'ſ", &["x'LL", "'ſ"]);
    }

    /// The chunk boundaries of `text` by the block path of `shape`'s scanner and by its
    /// per-character path ([`scan::tests::both_paths`]).
    fn both_paths(shape: Shape, text: &str) -> (Vec<usize>, Vec<usize>) {
        with_scanner!(shape, S => scan::tests::both_paths::<S>(text))
    }

    /// tiktoken's three shapes and one of the others, in turn by `round`: the variants share
    /// their family's block path but for a setting or two, so each takes a share of the rounds.
    fn some_shapes(round: usize) -> [Shape; 4] {
        let others = &Shape::ALL[3..];
        [
            Shape::ALL[0],
            Shape::ALL[1],
            Shape::ALL[2],
            others[round % others.len()],
        ]
    }

    #[test]
    fn named_patterns_are_their_shapes_spelled_by_tiktoken() {
        for named in [Named::Gpt2, Named::Cl100k, Named::O200k] {
            assert_eq!(named.shape().pattern(), named.pattern());
            assert_eq!(Splitter::new(named.pattern()).unwrap().named(), Some(named));
        }
        for shape in &Shape::ALL[3..] {
            let s = Splitter::new(&shape.pattern()).unwrap();
            assert_eq!((s.shape(), s.named()), (Some(*shape), None));
        }
    }

    #[test]
    fn open_models_patterns_run_on_scanners() {
        use shapes::tests::{GPT2_ORIGINAL, LLAMA3, QWEN2, QWEN35, TEKKEN};
        for (pattern, text, want) in [
            (LLAMA3, "  \n  ", &["  \n", "  "][..]),
            (LLAMA3, "x 12345", &["x", " ", "123", "45"]),
            (QWEN2, "x 123'S", &["x", " ", "1", "2", "3", "'S"]),
            (QWEN2, "a\u{301}b !\u{301}", &["a", "\u{301}b", " !\u{301}"]),
            (
                QWEN35,
                "a\u{301}b !\u{301}",
                &["a\u{301}b", " !", "\u{301}"],
            ),
            (TEKKEN, "don't 12", &["don", "'t", " ", "1", "2"]),
            (TEKKEN, "HELLOworld x'LL", &["HELLOworld", " x", "'LL"]),
            (
                GPT2_ORIGINAL,
                "I've  got\n",
                &["I", "'ve", " ", " got", "\n"],
            ),
        ] {
            let s = Splitter::new(pattern).unwrap();
            assert!(s.is_scanner());
            assert_eq!(s.chunks(text).unwrap(), want, "{pattern} {text:?}");
            let r = Splitter::with_regex_engine(pattern).unwrap();
            assert_eq!(
                r.chunks(text).unwrap(),
                want,
                "{pattern} {text:?} (fancy-regex)"
            );
        }
    }

    /// Random strings over characters on which fancy-regex and Python's `regex` agree: the
    /// scanners must equal the regex engine running the same pattern strings.
    /// A small deterministic random number generator for the random-text tests.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// The chunks of `text` under `stages` applied one after another, each to every chunk of
    /// the one before: what a sequence must give.
    fn in_turn<'t>(stages: &[Splitter], text: &'t str) -> Vec<&'t str> {
        let mut chunks = vec![text];
        for stage in stages {
            chunks = chunks
                .iter()
                .flat_map(|c| stage.chunks(c).unwrap())
                .collect();
        }
        chunks
    }

    /// A sequence splits each chunk of a stage as a text of its own: the same chunks as the
    /// stages' regexes applied one after another on the regex engine, on random text long
    /// enough to take many batches of boundaries, with stages a scanner runs and `$` anchors
    /// that see a chunk's end.
    #[test]
    fn sequences_split_each_chunk_of_the_stage_before() {
        let sequences: [&[&str]; 4] = [
            &[r"\p{N}{1,3}", "[\u{4e00}-\u{9fa5}]+", "cl100k"],
            &[r"\p{N}", "gpt2"],
            &[
                r"[\r\n]",
                r"\s?[A-Za-z]+",
                r"\s?[!-/:-~]+",
                r"\s+$",
                "o200k",
            ],
            &[r"\s+$", r"\d+"],
        ];
        let atoms = [
            " ",
            "  ",
            "\n",
            "\r\n",
            "a",
            "Word",
            " the",
            "12345",
            "7",
            "中文字",
            "!",
            "?!",
            "'s",
            "é",
            "\t",
            ".\n",
        ];
        let mut next = xorshift(0x5e9_5e9);
        for patterns in sequences {
            let s = Splitter::sequence(patterns).unwrap();
            let full: Vec<String> = patterns
                .iter()
                .map(|p| Splitter::new(p).unwrap().pattern().to_string())
                .collect();
            assert_eq!(s.patterns(), full);
            assert!(!s.is_scanner() && s.shape().is_none());
            let on_regex_engine: Vec<Splitter> = patterns
                .iter()
                .map(|p| Splitter::with_regex_engine(p).unwrap())
                .collect();
            for round in 0..60 {
                let n = if round % 10 == 0 {
                    5000
                } else {
                    (next() % 40) as usize
                };
                let text: String = (0..n)
                    .map(|_| atoms[(next() % atoms.len() as u64) as usize])
                    .collect();
                let want = in_turn(&on_regex_engine, &text);
                assert_eq!(s.chunks(&text).unwrap(), want, "{patterns:?} {text:?}");
            }
        }
        assert!(Splitter::sequence(&[] as &[&str]).is_err());
        assert!(Splitter::sequence(&["gpt2"]).unwrap().is_scanner());
        assert!(Splitter::sequence(&["gpt2", "("]).is_err());
    }

    #[test]
    fn scanners_equal_the_regex_engine_on_random_text() {
        let atoms = [
            " ", "  ", "\t", "\r", "\n", "\u{b}", "\u{c}", "\u{85}", "\u{a0}", "\u{2028}",
            "\u{3000}", "'", "s", "t", "d", "m", "l", "v", "e", "r", "S", "T", "L", "E", "ſ", "1",
            "٣", "Ⅻ", "a", "A", "ǅ", "中", "é", "\u{301}", "😀", "/", "!", ".", "ß", "ω",
        ];
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
        for shape in Shape::ALL {
            let name = shape.pattern();
            let scanner = Splitter::new(&name).unwrap();
            assert_eq!(scanner.shape(), Some(shape));
            let regex = Splitter::with_regex_engine(&name).unwrap();
            for _ in 0..10_000 {
                let len = next() % 12;
                let text: String = (0..len)
                    .map(|_| atoms[(next() % atoms.len() as u64) as usize])
                    .collect();
                assert_eq!(
                    scanner.chunks(&text).unwrap(),
                    regex.chunks(&text).unwrap(),
                    "{name} {text:?}"
                );
            }
        }
    }

    /// Whitespace runs long enough for `classes::spaces` to skip eight blanks at a time, with
    /// a line end or other whitespace at every place, before letters, symbols or the end.
    #[test]
    fn long_whitespace_runs_equal_the_regex_engine() {
        let odd = ["\n", "\r\n", "\u{b}", "\u{a0}", "\u{3000}", "x", "."];
        for shape in Shape::ALL {
            let name = shape.pattern();
            let scanner = Splitter::new(&name).unwrap();
            let regex = Splitter::with_regex_engine(&name).unwrap();
            for n in 0..40 {
                for at in 0..=n {
                    for o in odd {
                        for blank in [" ", "\t"] {
                            for after in ["", "a", "!", "\n"] {
                                let text = format!(
                                    "x{}{o}{}{after}",
                                    blank.repeat(at),
                                    blank.repeat(n - at)
                                );
                                assert_eq!(
                                    scanner.chunks(&text).unwrap(),
                                    regex.chunks(&text).unwrap(),
                                    "{name} {text:?}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// DeepSeek V3's scanner gives the chunks of its three stages applied one after another on
    /// the regex engine, by both of its paths, on random text over the characters each stage
    /// and alternative is about: numbers of every script, CJK and kana (with the punctuation
    /// and marks in stage 2's ranges), ASCII and other punctuation and symbols before ASCII and
    /// other letters, marks, whitespace runs with and without line ends, controls and format
    /// characters (of no class).
    #[test]
    fn deepseek_scanner_equals_its_stages_on_the_regex_engine() {
        let fused = Splitter::sequence(&deepseek::STAGES).unwrap();
        assert!(fused.is_scanner() && fused.shape().is_none());
        assert_eq!(fused.patterns(), deepseek::STAGES);
        let stages: Vec<Splitter> = deepseek::STAGES
            .iter()
            .map(|p| Splitter::with_regex_engine(p).unwrap())
            .collect();
        let atoms = [
            " ", " ", "  ", "\t", "\n", "\r\n", "\u{b}", "\u{a0}", "\u{3000}", "\u{85}", "a", "Z",
            "the", " the", "é", "Ж", "\u{301}", "\u{3099}", "ʰ", "1", "12", "٣", "Ⅻ", "²", "中",
            "文字", "の", "ア", "・", "゠", "ー", "〇", "゛", "\u{3040}", "\u{3097}", "ゝ", "、",
            "。", "!", "'", ".", "-", "$", "«", "—", "€", "😀", "\0", "\u{1}", "\u{7f}",
            "\u{200b}", "\u{ad}", "\u{e000}", "\u{378}", "한", "ก", "'s", ".com", "\n  ",
        ];
        let mut next = xorshift(0xD5EE_C0DE);
        for round in 0..30_000 {
            let n = if round % 1000 == 999 {
                3000
            } else {
                (next() % 14) as usize
            };
            let text: String = (0..n)
                .map(|_| atoms[(next() % atoms.len() as u64) as usize])
                .collect();
            let want = in_turn(&stages, &text);
            let got = fused.chunks(&text).unwrap();
            if got != want {
                let k = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
                let (from, to) = (k.saturating_sub(3), k + 3);
                panic!(
                    "chunk {k}: {:?} vs {:?}",
                    &got[from..to.min(got.len())],
                    &want[from..to.min(want.len())]
                );
            }
            let (blocks, per_char) = scan::tests::both_paths::<deepseek::DeepSeek>(&text);
            assert_eq!(blocks, per_char, "{text:?}");
        }
    }

    /// The block path gives the per-character path's chunks: random text over the bytes its
    /// rules are about (runs of whitespace with and without line ends, contractions, digit
    /// runs, `/` after a line end, camelCase) with some non-ASCII characters among them.
    #[test]
    fn block_path_equals_per_character_path() {
        let ascii = [
            " ", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\u{b}", "\u{c}", "'", "'", "/", "!",
            ".", ",", "\"", "\0", "\u{7f}", "a", "b", "s", "t", "e", "l", "r", "v", "m", "d", "A",
            "B", "S", "T", "L", "E", "R", "D", "1", "2", "0", "the", " the", "Hello", "don't",
            "x'll've", "\n    ",
        ];
        // Letters, others (punctuation, symbols, marks), numbers and whitespace of two, three
        // and four bytes: the block path classifies the letters and others (`blocks::wide`).
        let wide = [
            "é", "ſ", "\u{a0}", "\u{301}", "中", "\u{85}", "\u{2028}", "Ⅻ", "٣", "、", "。", "「",
            "東", "の", "\u{3000}", "０", "😀", "𝐀", "Ж", "«", "—", "\u{93f}", "न", "한",
            "\u{e31}", "K", "É", "ǅ", "ʰ", "ω", "ß", "ب", "ـ", "ש", "\u{5b4}", "׳", "ա", "Ա", "ς",
            "¿", "\u{7ff}", "ー", "ア", "ｱ", "Ａ", "ａ", "\u{94d}", "\u{902}", "क", "१", "ก", "๑",
            "\u{3099}", "〇", "─",
        ];
        let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
        for round in 0..60_000 {
            // One round in four has a few non-ASCII characters, one in four mostly them.
            let len = 40 + next() % 160;
            let text: String = (0..len)
                .map(|_| {
                    let pick_wide = match round % 4 {
                        0 => next() % (ascii.len() + wide.len()) as u64 >= ascii.len() as u64,
                        1 => !next().is_multiple_of(4),
                        _ => false,
                    };
                    if pick_wide {
                        wide[(next() % wide.len() as u64) as usize]
                    } else {
                        ascii[(next() % ascii.len() as u64) as usize]
                    }
                })
                .collect();
            for shape in some_shapes(round) {
                let (blocks, per_char) = both_paths(shape, &text);
                assert_eq!(blocks, per_char, "{shape:?} {text:?}");
            }
        }
    }

    /// The same on runs of letters of three bytes (CJK, Thai and its marks) long enough to
    /// cross blocks, where a block's end cuts a character in two of three places
    /// (`letter_run_end`), between punctuation, spaces, numbers, contractions and Latin.
    #[test]
    fn block_path_equals_per_character_path_on_long_letter_runs() {
        let letters = [
            "中", "の", "ー", "東", "한", "ア", "ก", "\u{e31}", "\u{e48}", "a", "é", "A",
        ];
        let between = [
            "、", "。", " ", "\n", "1", "「", "\u{3000}", " a", "'s", "'", "A", "Ab", "\u{e31}",
        ];
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for round in 0..3_000 {
            let mut text = String::new();
            while text.len() < 400 {
                for _ in 0..next() % 70 {
                    // Three bytes, but one in eight a letter of one or two bytes.
                    let k = match next() % 8 {
                        0 => 9 + next() % 3,
                        _ => next() % 9,
                    };
                    text += letters[k as usize];
                }
                text += between[(next() % between.len() as u64) as usize];
            }
            for shape in some_shapes(round) {
                let (blocks, per_char) = both_paths(shape, &text);
                assert_eq!(blocks, per_char, "{shape:?} {text:?}");
            }
        }
    }

    /// The same on every file of the shared corpora, when they are there.
    #[test]
    fn block_path_equals_per_character_path_on_the_corpora() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        let mut files = vec![data.join("holmes.txt"), data.join("tinyshakespeare.txt")];
        for dir in ["multilingual", "structured"] {
            if let Ok(entries) = std::fs::read_dir(data.join(dir)) {
                files.extend(entries.filter_map(|e| Some(e.ok()?.path())));
            }
        }
        for (round, path) in files.into_iter().enumerate() {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let (blocks, per_char) = scan::tests::both_paths::<deepseek::DeepSeek>(&text);
            assert!(blocks == per_char, "DeepSeek {}", path.display());
            for name in some_shapes(round) {
                let (blocks, per_char) = both_paths(name, &text);
                if blocks != per_char {
                    let k = blocks
                        .iter()
                        .zip(&per_char)
                        .take_while(|(a, b)| a == b)
                        .count();
                    panic!(
                        "{name:?} {}: chunk {k}: {:?} vs {:?}",
                        path.display(),
                        &blocks[k.saturating_sub(3)..(k + 3).min(blocks.len())],
                        &per_char[k.saturating_sub(3)..(k + 3).min(per_char.len())]
                    );
                }
            }
        }
    }

    /// `split_bounds` keeps its contract for every engine: calls overlap by one boundary,
    /// start at 0, end at the text's end, increase strictly, hold at most `BOUNDS` plus one
    /// block of chunks, and give `split`'s chunks.
    #[test]
    fn bounds_come_in_overlapping_batches() {
        let text = "Hello wörld, it's 12345 o'clock!\n\n    x = [1, 2]  # ok\r\n".repeat(40);
        for name in ["gpt2", "cl100k", "o200k", r"\w+|\d"] {
            let s = Splitter::new(name).unwrap();
            let mut all: Vec<usize> = Vec::new();
            s.split_bounds(&text, |at| {
                assert!(
                    at.len() >= 2 && at.len() - 1 <= BOUNDS + blocks::BLOCK,
                    "{name}"
                );
                match all.last() {
                    Some(&last) => assert_eq!(at[0], last, "{name}"),
                    None => assert_eq!(at[0], 0, "{name}"),
                }
                all.extend_from_slice(&at[usize::from(!all.is_empty())..]);
            })
            .unwrap();
            assert_eq!(all.last(), Some(&text.len()), "{name}");
            assert!(all.windows(2).all(|w| w[0] < w[1]), "{name}");
            let chunks: Vec<&str> = all.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            assert_eq!(chunks, s.chunks(&text).unwrap(), "{name}");
            assert!(chunks.len() > 2 * BOUNDS, "{name}");
        }
        Splitter::new("gpt2")
            .unwrap()
            .split_bounds("", |_| panic!("no chunks, no call"))
            .unwrap();
    }

    #[test]
    fn custom_pattern_is_lossless() {
        let s = Splitter::new(r"[a-z]+").unwrap();
        assert_eq!(s.chunks("ab, cd").unwrap(), ["ab", ", ", "cd"]);
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(
            Splitter::new("(a"),
            Err(Error::InvalidPattern { .. })
        ));
        assert!(matches!(
            Splitter::new(""),
            Err(Error::InvalidPattern { .. })
        ));
    }
}

/// Throughput of the scanners on the shared corpora (`cargo test --release -- --ignored
/// throughput --nocapture`); for quick iteration without building the Python module.
#[cfg(test)]
mod throughput {
    use super::*;
    use std::time::Instant;

    #[test]
    #[ignore]
    fn throughput() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        let files = [
            "holmes.txt",
            "multilingual/de.txt",
            "multilingual/ru.txt",
            "multilingual/zh.txt",
            "multilingual/hi.txt",
            "multilingual/emoji.txt",
        ];
        let texts: Vec<(&str, String)> = files
            .iter()
            .filter_map(|f| Some((*f, std::fs::read_to_string(data.join(f)).ok()?)))
            .collect();
        let names = ["gpt2", "cl100k", "o200k"];
        let splitters: Vec<Splitter> = names.iter().map(|n| Splitter::new(n).unwrap()).collect();
        // Single timings swing with other load on the machine: interleave all cells in rounds
        // and keep each cell's best.
        let mut best = vec![f64::INFINITY; texts.len() * names.len()];
        for _ in 0..30 {
            for (t, (_, text)) in texts.iter().enumerate() {
                for (k, s) in splitters.iter().enumerate() {
                    let t0 = Instant::now();
                    let mut total = 0usize;
                    s.split(text, |c| total += c.len()).unwrap();
                    let dt = t0.elapsed().as_secs_f64();
                    assert_eq!(total, text.len());
                    let cell = &mut best[t * names.len() + k];
                    *cell = cell.min(dt);
                }
            }
        }
        for (t, (file, text)) in texts.iter().enumerate() {
            let mut line = format!("{file:<24}");
            for (k, name) in names.iter().enumerate() {
                let mbs = text.len() as f64 / best[t * names.len() + k] / 1e6;
                line += &format!(" {name} {mbs:>7.1}");
            }
            println!("{line}");
        }
    }
}
