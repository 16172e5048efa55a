//! Byte-level BPE training (DESIGN.md §2), equal to `tokenmill/reference.py` merge for merge.
//!
//! [`count`] splits the corpus and counts distinct chunks in parallel; [`merge`] learns merges
//! over the distinct words with pair postings and a lazily invalidated max-heap keyed by
//! (count, first position); from an existing vocabulary ([`Trainer::extend`]) every word stays
//! what the rank rule makes of its chunk. [`Trainer`] ties them together:
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

pub use count::{ChunkCounter, Pruned, Words};
pub use merge::{Merge, Merger};

use crate::encode::Encoder;
use crate::error::Error;
use rayon::prelude::*;

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

    /// Bound the table of distinct chunks (see [`ChunkCounter::set_limit`]).
    pub fn set_limit(&mut self, bytes: Option<u64>) {
        if let Some(c) = &mut self.counter {
            c.set_limit(bytes);
        }
    }

    /// What bounding the table dropped so far (nothing once merging has started).
    pub fn pruned(&self) -> Pruned {
        self.counter
            .as_ref()
            .map(|c| c.pruned())
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

    /// Continue from `base`'s vocabulary instead of the 256 bytes: each distinct chunk starts
    /// as `base` encodes it, new tokens take ids from `base.n_vocab()` on, and every word stays
    /// what the rank rule makes of its chunk (see [`Merger::extend`]). Called once, after
    /// counting and before the first merge.
    pub fn extend(&mut self, base: &Encoder) -> Result<(), Error> {
        let Some(counter) = self.counter.take() else {
            return Err(Error::InvalidTraining {
                message: "a trainer is extended once, before merging".into(),
            });
        };
        let counted = counter.into_words();
        let words: Vec<(Vec<u32>, u64)> = (0..counted.len())
            .into_par_iter()
            .map(|i| {
                let (chunk, f) = counted.get(i);
                let mut ids = Vec::new();
                base.encode_chunk(chunk, &mut ids);
                (ids, f)
            })
            .collect();
        drop(counted);
        let tokens = (0..base.n_vocab() as u32)
            .map(|id| base.vocab().get(id).unwrap_or_default().into())
            .collect();
        self.merger = Some(Merger::extend(words, tokens));
        Ok(())
    }

    /// Learn up to `max` more merges; fewer when no pair is seen `min_frequency` times.
    /// Returns the merges learned by this call.
    pub fn merge(&mut self, max: usize, min_frequency: u64) -> Vec<Merge> {
        if let Some(c) = self.counter.take() {
            self.merger = Some(Merger::new(c.into_words().iter()));
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
    fn extending_starts_from_the_base_encoding() {
        use crate::pretokenize::Splitter;
        use crate::vocab::testing;
        // Base "bc" (256), "abcd" (257): "abcde" encodes a|bc|d|e; learning "abc" makes it
        // "abcd"|e (reference.extend's example).
        let vocab = testing::of(&[b"bc", b"abcd"]);
        let base = Encoder::new(vocab, Splitter::new("gpt2").unwrap(), &[]).unwrap();
        let mut t = Trainer::new("gpt2", &[]).unwrap();
        t.feed(&["abcde abcde"]).unwrap();
        t.extend(&base).unwrap();
        assert!(t.extend(&base).is_err());
        let got: Vec<_> = t
            .merge(5, 2)
            .iter()
            .map(|m| (m.left, m.right, m.count))
            .collect();
        assert_eq!(got, [(97, 256, 2), (257, 101, 2)]);
    }

    #[test]
    fn no_feeding_after_merging() {
        let mut t = Trainer::new("gpt2", &[]).unwrap();
        t.feed(&["aa aa"]).unwrap();
        t.merge(1, 2);
        assert!(t.feed(&["x"]).is_err());
    }
}
