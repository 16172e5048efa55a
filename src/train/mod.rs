//! Byte-level BPE training (DESIGN.md §2), equal to `tokenmill/reference.py` merge for merge.
//!
//! [`count`] splits the corpus and counts distinct chunks in parallel; [`merge`] learns merges
//! over the distinct words with pair postings and a lazily invalidated max-heap keyed by
//! (count, first position). [`Trainer`] ties them together:
//!
//! ```
//! use tokenmill::train::Trainer;
//!
//! let mut t = Trainer::new("gpt2", &[])?;
//! t.feed(&["ab cd ab cd"])?;
//! let merges = t.merge(10, 2);
//! let got: Vec<_> = merges.iter().map(|m| (m.left, m.right, m.count)).collect();
//! assert_eq!(got, [(97, 98, 2), (32, 99, 2), (257, 100, 2)]);
//! # Ok::<(), tokenmill::Error>(())
//! ```

pub mod count;
pub mod merge;

pub use count::ChunkCounter;
pub use merge::{Merge, Merger};

use crate::error::Error;

/// The first position at or after `from` (and before `end`) where a text may be cut without
/// changing the chunks of a named pattern: right after a `\n` that follows a printable ASCII
/// character (not whitespace) and precedes an ASCII letter or digit.
///
/// Why that is safe: no alternative of the gpt2, cl100k or o200k patterns matches a newline
/// followed by a letter or digit (a letter may follow one optional non-newline character or a
/// space; a newline ends a chunk or is followed by more whitespace, or `/` in o200k). The left
/// part then ends in a newline, where `\s++$` (gpt2, cl100k) matches at the new end of text:
/// with a non-space before the newline that is the lone `\n`, as in the whole text. A newline
/// after other whitespace is *not* safe: gpt2 splits `"  \nb"` into `"  "`, `"\n"`, `"b"`,
/// but `"  \n"` at the end of a text into one chunk (`\s++$`).
pub fn count_safe_cut(text: &[u8], from: usize, end: usize) -> Option<usize> {
    (from.max(2)..end.min(text.len())).find(|&i| cut_after_newline(text, i))
}

/// Whether `text` may be cut at `i` (`2 <= i < text.len()`) by the rule of
/// [`count_safe_cut`]: a `\n` after a printable ASCII character, before an ASCII letter or
/// digit.
#[inline]
pub(crate) fn cut_after_newline(text: &[u8], i: usize) -> bool {
    text[i - 1] == b'\n' && text[i].is_ascii_alphanumeric() && text[i - 2].is_ascii_graphic()
}

/// Counting, then merging: feed the texts in order, then ask for merges.
#[derive(Debug)]
pub struct Trainer {
    counter: Option<ChunkCounter>,
    merger: Option<Merger>,
}

impl Trainer {
    /// A trainer for `pattern`; `specials` are cut out of the text (never merged).
    pub fn new(pattern: &str, specials: &[String]) -> Result<Trainer, Error> {
        Ok(Trainer {
            counter: Some(ChunkCounter::new(pattern, specials)?),
            merger: None,
        })
    }

    /// Feed the next texts of the corpus (on the current rayon pool).
    pub fn feed<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> Result<(), Error> {
        match &mut self.counter {
            Some(c) => c.feed(texts),
            None => Err(Error::InvalidTraining {
                message: "cannot feed more text once merging has started".into(),
            }),
        }
    }

    /// Add chunks counted by another trainer over the next part of the corpus (see
    /// [`ChunkCounter::add_counted`]); `bytes` is the size of that part.
    pub fn add_counted<S: AsRef<str>>(
        &mut self,
        counted: &[(S, u64)],
        bytes: u64,
    ) -> Result<(), Error> {
        match &mut self.counter {
            Some(c) => {
                c.add_counted(counted, bytes);
                Ok(())
            }
            None => Err(Error::InvalidTraining {
                message: "cannot add counts once merging has started".into(),
            }),
        }
    }

    /// The distinct chunks counted so far with their counts, in order of first occurrence
    /// (empty once merging has started).
    pub fn counted(&self) -> Vec<(&str, u64)> {
        self.counter
            .as_ref()
            .map(|c| c.counted())
            .unwrap_or_default()
    }

    /// (bytes, chunks, distinct chunks) counted so far.
    pub fn stats(&self) -> (u64, u64, usize) {
        match (&self.counter, &self.merger) {
            (Some(c), _) => (c.bytes(), c.chunks(), c.distinct()),
            (None, Some(m)) => (0, 0, m.n_words()),
            _ => (0, 0, 0),
        }
    }

    /// Learn up to `max` more merges; fewer when no pair is seen `min_frequency` times.
    /// Returns the merges learned by this call.
    pub fn merge(&mut self, max: usize, min_frequency: u64) -> Vec<Merge> {
        if let Some(c) = self.counter.take() {
            self.merger = Some(Merger::new(c.into_words()));
        }
        let Some(m) = &mut self.merger else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < max {
            match m.step(min_frequency) {
                Some(merge) => out.push(merge),
                None => break,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_cut_is_after_a_newline_before_alphanumeric() {
        assert_eq!(count_safe_cut(b"ab\nc\n\nd", 0, 7), Some(3));
        assert_eq!(count_safe_cut(b"ab\n\nc \nd", 0, 8), None);
        assert_eq!(count_safe_cut(b"ab\n\n c", 0, 6), None);
    }

    #[test]
    fn cutting_at_safe_places_keeps_the_chunks_of_every_named_pattern() {
        let text = "Hello, world!\nIt's 2024.\n\nNew  \nline\tend\t\nx \n\n1 2\r\nok!\n/path\n\u{e9}t\u{e9}\n\u{a0}\nZ";
        let b = text.as_bytes();
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let s = crate::pretokenize::Splitter::new(pattern).unwrap();
            let whole = s.chunks(text).unwrap();
            let mut at = 0;
            while let Some(cut) = count_safe_cut(b, at + 1, b.len()) {
                let mut parts = s.chunks(&text[..cut]).unwrap();
                parts.extend(s.chunks(&text[cut..]).unwrap());
                assert_eq!(parts, whole, "{pattern} cut at {cut}");
                at = cut;
            }
            assert!(at > 0);
        }
    }

    #[test]
    fn same_merges_however_texts_are_fed() {
        let text = "low lower lowest\nnewer newest\nwider widest\n".repeat(5);
        let run = |parts: &[&str]| {
            let mut t = Trainer::new("cl100k", &[]).unwrap();
            for p in parts {
                t.feed(&[p]).unwrap();
            }
            t.merge(50, 2)
        };
        let cut = text.find("\nnewer").unwrap() + 1;
        assert_eq!(run(&[&text]), run(&[&text[..cut], &text[cut..]]));
    }

    #[test]
    fn no_feeding_after_merging() {
        let mut t = Trainer::new("gpt2", &[]).unwrap();
        t.feed(&["aa aa"]).unwrap();
        t.merge(1, 2);
        assert!(t.feed(&["x"]).is_err());
    }
}
