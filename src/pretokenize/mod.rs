//! Pre-tokenization: cut text into chunks that BPE merges never cross.
//!
//! Named patterns (`gpt2`, `cl100k`, `o200k`) are tiktoken's pattern strings, run by
//! hand-written scanners ([`gpt2`], [`cl100k`], [`o200k`]) whose chunks equal Python
//! `regex.findall` on every string (tests/test_pretokenize.py proves it with hypothesis, every
//! code point in several contexts, and the shared corpora). The scanners read a table of
//! character classes generated from `regex` itself ([`tables`], by
//! scripts/gen_unicode_tables.py). Any other pattern runs on fancy-regex. Splitting is
//! lossless: text that a custom pattern does not match becomes a chunk of its own, so every
//! byte of the input lands in exactly one chunk.

use crate::error::Error;

mod cl100k;
mod classes;
mod gpt2;
mod o200k;
#[rustfmt::skip]
mod tables;

/// tiktoken's r50k/p50k/gpt2 pattern.
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// tiktoken's cl100k_base pattern.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// tiktoken's o200k_base pattern.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

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
#[derive(Debug, Clone)]
pub struct Splitter {
    kind: Kind,
    pattern: String,
}

#[derive(Debug, Clone)]
enum Kind {
    /// A named family, run by its scanner.
    Named(Named),
    /// A regex on fancy-regex: a custom pattern, or a named one forced onto the regex engine
    /// ([`Splitter::with_regex_engine`]).
    Regex(Option<Named>, Box<fancy_regex::Regex>),
}

fn compile(pattern: &str) -> Result<fancy_regex::Regex, Error> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_string(),
            message: e.to_string(),
        })
}

impl Splitter {
    /// A splitter for a pattern name or any regex (see [`Named::parse`]).
    pub fn new(pattern: &str) -> Result<Splitter, Error> {
        if let Some(named) = Named::parse(pattern) {
            return Ok(Splitter {
                kind: Kind::Named(named),
                pattern: named.pattern().to_string(),
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
            kind: Kind::Regex(named, Box::new(compile(pattern)?)),
            pattern: pattern.to_string(),
        })
    }

    /// Whether this splitter runs a hand-written scanner (rather than the regex engine).
    pub fn is_scanner(&self) -> bool {
        matches!(self.kind, Kind::Named(_))
    }

    /// The full pattern string (tiktoken's string for named patterns).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The named family, if this splitter implements one.
    pub fn named(&self) -> Option<Named> {
        match &self.kind {
            Kind::Named(n) | Kind::Regex(Some(n), _) => Some(*n),
            Kind::Regex(None, _) => None,
        }
    }

    /// Call `f` on every chunk of `text`, in order. Chunks are never empty and cover the text.
    #[inline]
    pub fn split<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<(), Error> {
        match &self.kind {
            Kind::Named(Named::Gpt2) => scan(text, &mut f, gpt2::next),
            Kind::Named(Named::Cl100k) => scan(text, &mut f, cl100k::next),
            Kind::Named(Named::O200k) => scan(text, &mut f, o200k::next),
            Kind::Regex(_, re) => split_regex(re, text, &mut f),
        }
    }

    /// The number of chunks of `text` (what `split` would call `f` on).
    pub fn count(&self, text: &str) -> Result<usize, Error> {
        let mut n = 0;
        self.split(text, |_| n += 1)?;
        Ok(n)
    }

    /// The chunks of `text` as a vector (convenience for tests and tools).
    pub fn chunks<'t>(&self, text: &'t str) -> Result<Vec<&'t str>, Error> {
        let mut out = Vec::new();
        self.split(text, |c| out.push(c))?;
        Ok(out)
    }
}

/// Drive a scanner: `next(bytes, i)` is the end of the chunk starting at `i`.
///
/// Inlined into `split` with the scanner and the callback, so the whole loop is one function:
/// the callback costs no call per chunk.
#[inline(always)]
fn scan<'t>(
    text: &'t str,
    f: &mut impl FnMut(&'t str),
    next: impl Fn(&[u8], usize) -> usize,
) -> Result<(), Error> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let end = next(b, i);
        // The scanners only step over whole characters, so `end > i` is a boundary and `get`
        // always succeeds; checking costs two byte compares per chunk and keeps a scanner
        // bug from looping forever or cutting a character.
        match text.get(i..end) {
            Some(chunk) if end > i => f(chunk),
            _ => {
                return Err(Error::RegexRuntime {
                    message: format!("internal error: scanner stopped at byte {i} (end {end})"),
                })
            }
        }
        i = end;
    }
    Ok(())
}

fn split_regex<'t>(
    re: &fancy_regex::Regex,
    text: &'t str,
    f: &mut impl FnMut(&'t str),
) -> Result<(), Error> {
    let mut covered = 0;
    for m in re.find_iter(text) {
        let m = m.map_err(|e| Error::RegexRuntime {
            message: e.to_string(),
        })?;
        if m.start() == m.end() {
            continue;
        }
        if m.start() > covered {
            f(&text[covered..m.start()]);
        }
        f(m.as_str());
        covered = m.end();
    }
    if covered < text.len() {
        f(&text[covered..]);
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
