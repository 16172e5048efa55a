//! Counting chunks: split the corpus and count each distinct chunk, remembering where it first
//! occurs (the tie-break of training scans the text in order, see [`super::merge`]).
//!
//! Texts are fed in order; each gets a base position (the bytes fed before it), so a chunk's
//! first position is one number that orders the whole corpus. A large text is cut into pieces
//! that threads count into their own tables, added afterwards to the shards of the counter's
//! table by taking the smallest first position: the result is the same for any number of
//! threads and any way of cutting.
//!
//! The table keeps every distinct chunk's bytes in its shard's arena and a 40-byte entry, with
//! no allocation per chunk; [`ChunkCounter::set_limit`] bounds it by dropping rare chunks.

use crate::error::Error;
use crate::pretokenize::{cut, Splitter};
use aho_corasick::AhoCorasick;
use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::FxHasher;
use std::collections::BTreeMap;
use std::hash::Hasher;

/// Texts longer than two pieces are cut into pieces of about this many bytes, so that one long
/// text (a whole book, a 20 MB file) is shared between threads like many short ones.
const PIECE: usize = 1 << 20;

/// The table of distinct chunks is cut into this many shards by hash, so that the counts of
/// one feed are added to it by all threads at once, each shard by one thread.
const SHARDS: usize = 64;

#[inline]
fn hash_of(chunk: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(chunk);
    h.finish()
}

/// Bits 32-37 pick the shard: the table inside a shard takes its bucket from the low bits and
/// its tag from the top seven, both still spread.
#[inline]
fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize % SHARDS
}

/// A distinct chunk: where its bytes sit in its shard's arena, how often it occurs and where it
/// first occurs (a byte position in the corpus).
#[derive(Debug, Clone, Copy)]
struct Entry {
    hash: u64,
    start: u64,
    count: u64,
    first: u64,
    len: u32,
}

/// What a distinct chunk counts for against the limit besides its bytes: about what its entry
/// takes in the table with the table's spare room (a fixed number, so that the rule of
/// [`ChunkCounter::set_limit`] does not depend on how the table grows).
pub const CHUNK_COST: u64 = 64;

/// One shard: the bytes of its chunks, back to back, and their entries; `size` is what they
/// count for against the limit.
#[derive(Debug, Default)]
struct Shard {
    bytes: Vec<u8>,
    table: HashTable<Entry>,
    size: u64,
}

impl Shard {
    fn add(&mut self, chunk: &[u8], hash: u64, count: u64, first: u64) {
        let Shard { bytes, table, size } = self;
        let same = |e: &Entry| &bytes[e.start as usize..][..e.len as usize] == chunk;
        match table.find_mut(hash, same) {
            Some(e) => {
                e.count += count;
                e.first = e.first.min(first);
            }
            None => {
                let start = bytes.len() as u64;
                bytes.extend_from_slice(chunk);
                *size += chunk.len() as u64 + CHUNK_COST;
                let entry = Entry {
                    hash,
                    start,
                    count,
                    first,
                    len: chunk.len() as u32,
                };
                table.insert_unique(hash, entry, |e| e.hash);
            }
        }
    }

    fn chunk(&self, e: &Entry) -> &[u8] {
        &self.bytes[e.start as usize..][..e.len as usize]
    }

    /// Drop the chunks seen at most `most` times; returns (chunks, occurrences) dropped.
    fn prune(&mut self, most: u64) -> (u64, u64) {
        let mut dropped = (0, 0);
        self.table.retain(|e| {
            let keep = e.count > most;
            if !keep {
                dropped.0 += 1;
                dropped.1 += e.count;
            }
            keep
        });
        self.table.shrink_to_fit(|e| e.hash);
        let kept: usize = self.table.iter().map(|e| e.len as usize).sum();
        let mut bytes = Vec::with_capacity(kept);
        for e in self.table.iter_mut() {
            let start = bytes.len() as u64;
            bytes.extend_from_slice(&self.bytes[e.start as usize..][..e.len as usize]);
            e.start = start;
        }
        self.size = kept as u64 + self.table.len() as u64 * CHUNK_COST;
        self.bytes = bytes;
        dropped
    }
}

/// A chunk as one thread counts it during a feed (borrowed from the text).
struct Local<'t> {
    chunk: &'t [u8],
    hash: u64,
    count: u64,
    first: u64,
}

/// Splits texts and counts distinct chunks, in a table of at most `limit` bytes if one is set
/// (see [`ChunkCounter::set_limit`]).
#[derive(Debug)]
pub struct ChunkCounter {
    splitter: Splitter,
    specials: Option<AhoCorasick>,
    shards: Vec<Shard>,
    fed: u64,
    chunks: u64,
    limit: Option<u64>,
    pruned: Pruned,
}

/// What pruning the table dropped so far (see [`ChunkCounter::set_limit`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Times the table was pruned.
    pub times: u64,
    /// The highest count of a dropped chunk.
    pub most: u64,
    /// Distinct chunks dropped (a chunk dropped twice counts twice).
    pub chunks: u64,
    /// Occurrences dropped.
    pub occurrences: u64,
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
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            fed: 0,
            chunks: 0,
            limit: None,
            pruned: Pruned::default(),
        })
    }

    /// Bound the table of distinct chunks: each distinct chunk counts for its bytes plus
    /// [`CHUNK_COST`]; when a feed (or an add) leaves the sum over `bytes`, the chunks seen at
    /// most `t` times so far are dropped, `t` the smallest count that brings the sum to at
    /// most half of `bytes` (`reference.count_chunks` with a limit spells it out). The rule
    /// depends only on the texts and on how they are grouped into calls, never on the threads;
    /// a chunk seen again after it was dropped is counted anew from there. Nothing is dropped
    /// while the table fits: counting is then exact.
    pub fn set_limit(&mut self, bytes: Option<u64>) {
        self.limit = bytes;
    }

    /// What pruning dropped so far.
    pub fn pruned(&self) -> Pruned {
        self.pruned
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
        self.shards.iter().map(|s| s.table.len()).sum()
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
        // its own tables (one per shard). rayon's `fold` would make a table per split it
        // decides on, each to be added to the shards afterwards (docs/performance.md,
        // 'Training').
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
        let counted = groups
            .into_par_iter()
            .map(|group| {
                crate::runtime::threads::settle();
                let mut tables: Vec<HashTable<Local>> =
                    (0..SHARDS).map(|_| HashTable::new()).collect();
                let mut n = 0u64;
                for &(piece, base) in group {
                    let start = piece.as_ptr() as usize;
                    let mut longest = 0;
                    splitter.split(piece, |chunk| {
                        n += 1;
                        longest = longest.max(chunk.len());
                        let chunk = chunk.as_bytes();
                        let hash = hash_of(chunk);
                        let table = &mut tables[shard_of(hash)];
                        match table.find_mut(hash, |e| e.chunk == chunk) {
                            Some(e) => e.count += 1,
                            None => {
                                let first = base + (chunk.as_ptr() as usize - start) as u64;
                                let local = Local {
                                    chunk,
                                    hash,
                                    count: 1,
                                    first,
                                };
                                table.insert_unique(hash, local, |e| e.hash);
                            }
                        }
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
                Ok::<_, Error>((tables, n))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        self.chunks += counted.iter().map(|(_, n)| n).sum::<u64>();
        let counted: Vec<Vec<HashTable<Local>>> = counted.into_iter().map(|(t, _)| t).collect();
        self.shards
            .par_iter_mut()
            .enumerate()
            .for_each(|(s, shard)| {
                for tables in &counted {
                    for e in tables[s].iter() {
                        shard.add(e.chunk, e.hash, e.count, e.first);
                    }
                }
            });
        drop(counted);
        self.keep_to_limit();
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
            let chunk = chunk.as_ref().as_bytes();
            let hash = hash_of(chunk);
            self.chunks += count;
            self.shards[shard_of(hash)].add(chunk, hash, *count, base + i as u64);
        }
        self.fed = base + bytes.max(counted.len() as u64);
        self.keep_to_limit();
    }

    /// Prune the table if it is over the limit (the rule of [`ChunkCounter::set_limit`]).
    fn keep_to_limit(&mut self) {
        let Some(limit) = self.limit else { return };
        let mut kept: u64 = self.shards.iter().map(|s| s.size).sum();
        if kept <= limit {
            return;
        }
        // The size of the chunks seen c times, for each count c, in order of count.
        let mut held: BTreeMap<u64, u64> = BTreeMap::new();
        for shard in &self.shards {
            for e in shard.table.iter() {
                *held.entry(e.count).or_default() += e.len as u64 + CHUNK_COST;
            }
        }
        let mut most = 0;
        for (&count, &size) in &held {
            if kept <= limit / 2 {
                break;
            }
            most = count;
            kept -= size;
        }
        let dropped: Vec<(u64, u64)> = self.shards.par_iter_mut().map(|s| s.prune(most)).collect();
        self.pruned.times += 1;
        self.pruned.most = self.pruned.most.max(most);
        for (chunks, occurrences) in dropped {
            self.pruned.chunks += chunks;
            self.pruned.occurrences += occurrences;
        }
    }

    /// Every entry with its shard, in order of first occurrence.
    fn ordered(&self) -> Vec<(u64, u32, Entry)> {
        let mut all: Vec<(u64, u32, Entry)> = self
            .shards
            .iter()
            .enumerate()
            .flat_map(|(s, shard)| shard.table.iter().map(move |e| (e.first, s as u32, *e)))
            .collect();
        all.par_sort_unstable_by_key(|&(first, _, _)| first);
        all
    }

    /// The distinct chunks counted so far with their counts, in order of first occurrence.
    pub fn counted(&self) -> Vec<(&str, u64)> {
        self.ordered()
            .into_iter()
            .map(|(_, s, e)| {
                let bytes = self.shards[s as usize].chunk(&e);
                // Chunks are whole `str` slices of the texts fed (or `str`s added).
                (std::str::from_utf8(bytes).unwrap_or_default(), e.count)
            })
            .collect()
    }

    /// The distinct chunks, in order of first occurrence, with their counts.
    pub fn into_words(self) -> Words {
        let order = self
            .ordered()
            .into_iter()
            .map(|(_, s, e)| (s, e.len, e.start, e.count))
            .collect();
        let bytes = self.shards.into_iter().map(|s| s.bytes).collect();
        Words { bytes, order }
    }
}

/// The distinct chunks of a corpus with their counts, in order of first occurrence (what
/// [`ChunkCounter::into_words`] hands to the merge loop), kept in the counter's arenas.
#[derive(Debug)]
pub struct Words {
    bytes: Vec<Vec<u8>>,
    /// (shard, length, start, count) of each chunk.
    order: Vec<(u32, u32, u64, u64)>,
}

impl Words {
    /// The number of distinct chunks.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// No chunk at all.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Chunk `i` (in order of first occurrence) and its count.
    pub fn get(&self, i: usize) -> (&[u8], u64) {
        let (s, len, start, count) = self.order[i];
        (
            &self.bytes[s as usize][start as usize..][..len as usize],
            count,
        )
    }

    /// The chunks and their counts, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[u8], u64)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(pattern: &str, texts: &[&str]) -> Vec<(String, u64)> {
        let mut c = ChunkCounter::new(pattern, &[]).unwrap();
        c.feed(texts).unwrap();
        c.into_words()
            .iter()
            .map(|(w, n)| (String::from_utf8(w.to_vec()).unwrap(), n))
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
        assert_eq!(w.get(0), (&b"ab"[..], 2));
    }

    #[test]
    fn cutting_large_texts_changes_nothing() {
        let line = "The quick brown fox, 1234 jumps!\n\n  over the lazy dog's back.\n";
        let text = line.repeat(3 * PIECE / line.len() + 7);
        let mut whole = rustc_hash::FxHashMap::default();
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
            .iter()
            .map(|(w, n)| (String::from_utf8(w.to_vec()).unwrap(), n))
            .collect();
        assert_eq!(got, whole);
    }

    #[test]
    fn a_full_table_drops_its_rarest_chunks() {
        // reference.count_chunks_bounded's example: after "a a a b" the table holds "a" (1x),
        // " a" (2x) and " b" (1x), over the limit; dropping the chunks seen once leaves half.
        let mut c = ChunkCounter::new("gpt2", &[]).unwrap();
        c.set_limit(Some(2 * (2 + CHUNK_COST) + 1));
        c.feed(&["a a a b"]).unwrap();
        c.feed(&["c"]).unwrap();
        let pruned = c.pruned();
        assert_eq!((pruned.times, pruned.most, pruned.chunks), (1, 1, 2));
        assert_eq!(pruned.occurrences, 2);
        let got: Vec<(String, u64)> = c
            .into_words()
            .iter()
            .map(|(w, n)| (String::from_utf8(w.to_vec()).unwrap(), n))
            .collect();
        assert_eq!(got, [(" a".into(), 2), ("c".into(), 1)]);
    }

    #[test]
    fn empty_special_is_an_error() {
        assert!(ChunkCounter::new("gpt2", &[String::new()]).is_err());
    }
}
