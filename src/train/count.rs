//! Counting chunks: split the corpus and count each distinct chunk, remembering where it first
//! occurs (the tie-break of training scans the text in order, see [`super::merge`]).
//!
//! Texts are fed in order; each gets a base position (the bytes fed before it), so a chunk's
//! first position is one number that orders the whole corpus. A large text is cut into pieces
//! that threads count into their own maps, merged afterwards by taking the smallest first
//! position: the result is the same for any number of threads and any way of cutting.

use crate::error::Error;
use crate::pretokenize::{cut, Splitter};
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// How often a chunk occurs and where it first occurs (a byte position in the corpus).
#[derive(Debug, Clone, Copy)]
struct Seen {
    count: u64,
    first: u64,
}

/// Texts longer than two pieces are cut into pieces of about this many bytes, so that one long
/// text (a whole book, a 20 MB file) is shared between threads like many short ones.
const PIECE: usize = 1 << 20;

/// Splits texts and counts distinct chunks.
#[derive(Debug)]
pub struct ChunkCounter {
    splitter: Splitter,
    specials: Option<AhoCorasick>,
    counts: FxHashMap<Box<str>, Seen>,
    fed: u64,
    chunks: u64,
}

impl ChunkCounter {
    /// A counter for `pattern` (a name or a regex); occurrences of `specials` are cut out of
    /// the text before splitting, so they never become part of a chunk.
    pub fn new(pattern: &str, specials: &[String]) -> Result<ChunkCounter, Error> {
        let splitter = Splitter::new(pattern)?;
        let specials = crate::specials::special_matcher(specials)?;
        Ok(ChunkCounter {
            splitter,
            specials,
            counts: FxHashMap::default(),
            fed: 0,
            chunks: 0,
        })
    }

    /// Bytes fed so far.
    pub fn bytes(&self) -> u64 {
        self.fed
    }

    /// Chunks counted so far (with repeats).
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Distinct chunks so far.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Count the chunks of `texts`, the next texts of the corpus in order, on the current
    /// rayon pool. No chunk spans two texts.
    pub fn feed<S: AsRef<str> + Sync>(&mut self, texts: &[S]) -> Result<(), Error> {
        // Cutting inside a text is only exact where the pattern cannot match across the cut;
        // that is proven for the scanners' shapes (`pretokenize::cut`), not for any regex.
        let may_cut = self.splitter.is_scanner();
        let mut pieces: Vec<(&str, u64)> = Vec::new();
        for text in texts {
            let text = text.as_ref();
            let base = self.fed;
            self.fed += text.len() as u64;
            let mut segments: Vec<(usize, usize)> = Vec::new();
            match &self.specials {
                Some(ac) => {
                    let mut at = 0;
                    for m in ac.find_iter(text) {
                        segments.push((at, m.start()));
                        at = m.end();
                    }
                    segments.push((at, text.len()));
                }
                None => segments.push((0, text.len())),
            }
            for (start, end) in segments {
                let mut at = start;
                while at < end {
                    let mut stop = end;
                    if may_cut && end - at > 2 * PIECE {
                        if let Some(cut) = cut::next_newline_cut(text.as_bytes(), at + PIECE, end) {
                            stop = cut;
                        }
                    }
                    if let Some(piece) = text.get(at..stop) {
                        pieces.push((piece, base + at as u64));
                    }
                    at = stop;
                }
            }
        }
        // One group of consecutive pieces per thread, of about equal bytes, each counted into
        // exactly one map. rayon's `fold` makes a map per split it decides on, and every map
        // must then be merged into `counts` on one thread (docs/performance.md, 'Training').
        let threads = rayon::current_num_threads().max(1);
        let total: usize = pieces.iter().map(|(p, _)| p.len()).sum();
        let mut groups: Vec<&[(&str, u64)]> = Vec::with_capacity(threads);
        let (mut from, mut acc) = (0, 0);
        for (k, (p, _)) in pieces.iter().enumerate() {
            acc += p.len();
            if acc * threads >= total * (groups.len() + 1) && groups.len() + 1 < threads {
                groups.push(&pieces[from..=k]);
                from = k + 1;
            }
        }
        groups.push(&pieces[from..]);
        let splitter = &self.splitter;
        let maps = groups
            .into_par_iter()
            .map(|group| {
                crate::runtime::threads::settle();
                let mut map = FxHashMap::<&str, Seen>::default();
                let mut n = 0u64;
                for &(piece, base) in group {
                    let start = piece.as_ptr() as usize;
                    let mut longest = 0;
                    splitter.split(piece, |chunk| {
                        n += 1;
                        longest = longest.max(chunk.len());
                        let first = base + (chunk.as_ptr() as usize - start) as u64;
                        map.entry(chunk)
                            .and_modify(|s| s.count += 1)
                            .or_insert(Seen { count: 1, first });
                    })?;
                    // Byte offsets inside a word are u32 (see `train::merge`).
                    if longest >= u32::MAX as usize {
                        return Err(Error::InvalidTraining {
                            message: format!(
                                "a chunk of {longest} bytes is too long to train on (the limit \
                                 is 4 GiB); use a split pattern that cuts it"
                            ),
                        });
                    }
                }
                Ok::<_, Error>((map, n))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        for (map, n) in maps {
            self.chunks += n;
            for (chunk, seen) in map {
                match self.counts.get_mut(chunk) {
                    Some(s) => {
                        s.count += seen.count;
                        s.first = s.first.min(seen.first);
                    }
                    None => {
                        self.counts.insert(chunk.into(), seen);
                    }
                }
            }
        }
        Ok(())
    }

    /// Add chunks counted elsewhere (by another counter over the next part of the corpus),
    /// as [`ChunkCounter::counted`] returns them: in order of first occurrence. `bytes` is the
    /// size of that part. They count as occurring after everything fed so far, in the given
    /// order, so counting a corpus in parts (on other machines) and adding the parts in corpus
    /// order gives the same words, counts and first-occurrence order as counting it here.
    pub fn add_counted<S: AsRef<str>>(&mut self, counted: &[(S, u64)], bytes: u64) {
        let base = self.fed;
        for (i, (chunk, count)) in counted.iter().enumerate() {
            let first = base + i as u64;
            self.chunks += count;
            match self.counts.get_mut(chunk.as_ref()) {
                Some(s) => s.count += count,
                None => {
                    self.counts.insert(
                        chunk.as_ref().into(),
                        Seen {
                            count: *count,
                            first,
                        },
                    );
                }
            }
        }
        self.fed = base + bytes.max(counted.len() as u64);
    }

    /// The distinct chunks counted so far with their counts, in order of first occurrence.
    pub fn counted(&self) -> Vec<(&str, u64)> {
        let mut all: Vec<(&str, Seen)> = self.counts.iter().map(|(c, s)| (&**c, *s)).collect();
        all.sort_unstable_by_key(|(_, s)| s.first);
        all.into_iter().map(|(c, s)| (c, s.count)).collect()
    }

    /// The distinct chunks as bytes with their counts, in order of first occurrence.
    pub fn into_words(self) -> Vec<(Box<[u8]>, u64)> {
        let mut all: Vec<(Box<str>, Seen)> = self.counts.into_iter().collect();
        all.sort_unstable_by_key(|(_, s)| s.first);
        all.into_iter()
            .map(|(c, s)| (c.into_boxed_bytes(), s.count))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(pattern: &str, texts: &[&str]) -> Vec<(String, u64)> {
        let mut c = ChunkCounter::new(pattern, &[]).unwrap();
        c.feed(texts).unwrap();
        c.into_words()
            .into_iter()
            .map(|(w, n)| (String::from_utf8(w.into_vec()).unwrap(), n))
            .collect()
    }

    #[test]
    fn first_occurrence_order() {
        assert_eq!(
            words("gpt2", &["ab cd ab cd"]),
            [("ab".into(), 1), (" cd".into(), 2), (" ab".into(), 1)]
        );
        // No chunk spans two texts.
        assert_eq!(
            words("gpt2", &["a", "b"]),
            [("a".into(), 1), ("b".into(), 1)]
        );
    }

    #[test]
    fn specials_are_cut_out() {
        let mut c = ChunkCounter::new("gpt2", &["<|x|>".to_string()]).unwrap();
        c.feed(&["ab<|x|>ab"]).unwrap();
        let w = c.into_words();
        assert_eq!(w.len(), 1);
        assert_eq!(&*w[0].0, b"ab");
        assert_eq!(w[0].1, 2);
    }

    #[test]
    fn cutting_large_texts_changes_nothing() {
        let line = "The quick brown fox, 1234 jumps!\n\n  over the lazy dog's back.\n";
        let text = line.repeat(3 * PIECE / line.len() + 7);
        let mut whole = FxHashMap::default();
        Splitter::new("cl100k")
            .unwrap()
            .split(&text, |c| *whole.entry(c.to_string()).or_insert(0u64) += 1)
            .unwrap();
        let got = words("cl100k", &[&text]);
        assert_eq!(got.len(), whole.len());
        for (w, n) in got {
            assert_eq!(whole[&w], n, "{w:?}");
        }
    }

    #[test]
    fn counting_in_parts_and_adding_them_in_order_is_counting_the_whole() {
        let texts = ["ab cd ab", " cd ef", "ab gh cd"];
        let whole = words("gpt2", &texts);
        let mut driver = ChunkCounter::new("gpt2", &[]).unwrap();
        for part in [&texts[..1], &texts[1..]] {
            let mut c = ChunkCounter::new("gpt2", &[]).unwrap();
            c.feed(part).unwrap();
            let counted: Vec<(String, u64)> = c
                .counted()
                .into_iter()
                .map(|(w, n)| (w.to_string(), n))
                .collect();
            driver.add_counted(&counted, c.bytes());
        }
        assert_eq!(driver.chunks(), 8);
        let got: Vec<(String, u64)> = driver
            .into_words()
            .into_iter()
            .map(|(w, n)| (String::from_utf8(w.into_vec()).unwrap(), n))
            .collect();
        assert_eq!(got, whole);
    }

    #[test]
    fn empty_special_is_an_error() {
        assert!(ChunkCounter::new("gpt2", &[String::new()]).is_err());
    }
}
