//! The merge loop: distinct words, pair counts, pair -> words postings and a lazy max-heap.
//!
//! **The tie-break, exactly.** Among pairs with the highest count, the one that occurs first in
//! the text as it stands now wins. Words are numbered by first occurrence, so that is the pair
//! with the smallest *position* `(word, byte offset of its first occurrence in that word)`.
//! Byte offsets (not symbol indices) make positions stable: a merge elsewhere in the word does
//! not move them. Two facts keep the heap cheap:
//!
//! - a merge of `(a, b)` into `X` only removes occurrences of pairs without `X` and only adds
//!   pairs with `X`, so an old pair's count only falls and its position only moves later;
//! - hence a heap entry is never *worse* than the truth: when the top entry disagrees with the
//!   pair's current (count, position), it is pushed again with the current values
//!   ("lazy invalidation"), and new pairs (with `X`) are pushed once, after the merge.
//!
//! A pair's first position is recomputed only when a merge destroys its first occurrence: its
//! postings are in word order (words are visited in order), so a cursor walks forward to the
//! next word that still holds the pair.
//!
//! Postings are not pruned when a word loses a pair to another merge: pruning would cost a
//! search per loss, while skipping a stale posting costs a scan of a short word. The heap is
//! popped a few times per merge, and first positions are recomputed by scanning a few words
//! (docs/performance.md, 'Training').

use crate::runtime::pages::prefetch;
use rustc_hash::FxHashMap;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// One learned merge: `left` + `right` became a new token, the pair was seen `count` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    pub count: u64,
}

/// A pair's state. Pairs are never removed; a pair with count 0 is dead.
#[derive(Debug)]
struct Pair {
    left: u32,
    right: u32,
    count: u64,
    /// First occurrence: word index and byte offset in it (valid while count > 0).
    word: u32,
    offset: u32,
    /// Words that held the pair when it appeared there, ascending; `postings[cursor]` is
    /// `word`, and the words before the cursor no longer hold the pair.
    postings: Vec<u32>,
    cursor: u32,
    /// Queued for a recomputation of its first position.
    dirty: bool,
}

/// A heap entry: higher count first, then earlier position.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    count: u64,
    pos: Reverse<(u32, u32)>,
    pair: u32,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.count, self.pos).cmp(&(other.count, other.pos))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// All words in one buffer, in order of first occurrence. Words only shrink, so a merged word
/// is written back in place, with no allocation per word. (Against a `Vec` per word, neither
/// is clearly faster: docs/performance.md, 'Training'.) Where a word is and how often it
/// occurs sit together, one memory access for a word the merge loop visits.
#[derive(Debug, Default)]
struct Words {
    syms: Vec<u32>,
    place: Vec<Place>,
}

/// Word `w`'s symbols are `syms[start..start + len]`; it occurs `freq` times.
#[derive(Debug, Clone, Copy)]
struct Place {
    start: u64,
    freq: u64,
    len: u32,
}

impl Words {
    fn push(&mut self, word: impl Iterator<Item = u32>, freq: u64) {
        let start = self.syms.len();
        self.syms.extend(word);
        self.place.push(Place {
            start: start as u64,
            freq,
            len: (self.syms.len() - start) as u32,
        });
    }

    #[inline]
    fn get(&self, w: u32) -> &[u32] {
        let p = self.place[w as usize];
        &self.syms[p.start as usize..][..p.len as usize]
    }

    #[inline]
    fn freq(&self, w: u32) -> u64 {
        self.place[w as usize].freq
    }

    /// Replace word `w` by `new`, which is not longer than it.
    #[inline]
    fn set(&mut self, w: u32, new: &[u32]) {
        let p = &mut self.place[w as usize];
        self.syms[p.start as usize..][..new.len()].copy_from_slice(new);
        p.len = new.len() as u32;
    }

    fn count(&self) -> usize {
        self.place.len()
    }

    /// Start loading where word `w` is.
    #[inline(always)]
    fn prefetch_place(&self, w: u32) {
        prefetch(self.place.as_ptr().wrapping_add(w as usize));
    }

    /// Start loading the symbols of word `w`.
    #[inline(always)]
    fn prefetch_syms(&self, w: u32) {
        if let Some(p) = self.place.get(w as usize) {
            prefetch(self.syms.as_ptr().wrapping_add(p.start as usize));
        }
    }
}

/// How many words ahead of the one being merged its symbols are fetched (its place twice as
/// far ahead).
const AHEAD: usize = 8;

/// The state of training after counting: learns merges one at a time.
#[derive(Debug)]
pub struct Merger {
    words: Words,
    /// Byte length of every token so far.
    lens: Vec<u32>,
    ids: FxHashMap<(u32, u32), u32>,
    pairs: Vec<Pair>,
    heap: BinaryHeap<Entry>,
    merges: Vec<Merge>,
    // Scratch buffers, reused across words.
    /// Merge sites in the word being merged: (old index, byte offset).
    hits: Vec<(u32, u32)>,
    merged: Vec<u32>,
    /// Set when training continues from an existing vocabulary ([`Merger::extend`]).
    ranked: Option<Box<Ranked>>,
}

/// What continued training needs: every token's bytes and rank (its id), so that each word
/// stays what the rank rule makes of its chunk with the vocabulary so far.
///
/// From a base vocabulary a word is not a sequence of learned merges, so one new token can set
/// off others: with `abcd` in the base and `a|bc|d` a word, learning `abc` makes that word
/// `abcd`, as the rank rule does. A merge therefore re-runs the rank rule on every word holding
/// a pair that spells the new token (any pair of tokens with those bytes, not only the one that
/// won) and compares the word's pairs before and after; old pairs can then gain occurrences and
/// move their first position earlier, which the from-scratch loop never sees.
#[derive(Debug, Default)]
struct Ranked {
    /// By id; empty for ids that are not ordinary tokens (special tokens, gaps).
    tokens: Vec<Box<[u8]>>,
    rank: FxHashMap<Box<[u8]>, u32>,
    /// Words of two or more tokens by their bytes: the one that is a new token whole becomes
    /// that token (the rank rule's whole-chunk shortcut).
    whole: FxHashMap<Box<[u8]>, u32>,
}

impl Ranked {
    /// The rank rule, continued from `word` once token `x` (the newest) exists: join the
    /// adjacent pair whose joined bytes are the token of lowest rank (leftmost of equal ones)
    /// until no adjacent pair is a token.
    ///
    /// `word` was settled before `x` existed, so two of its tokens that were neighbours then
    /// join now only if they spell `x`: only pairs with a token made here are looked up.
    fn settle(&self, word: &mut Vec<u32>, x: u32) {
        let spelled = &self.tokens[x as usize][..];
        let mut made: Vec<bool> = vec![false; word.len()];
        let mut joined = Vec::new();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for i in 1..word.len() {
                let (l, r) = (
                    &self.tokens[word[i - 1] as usize],
                    &self.tokens[word[i] as usize],
                );
                let rank = if made[i - 1] || made[i] {
                    joined.clear();
                    joined.extend_from_slice(l);
                    joined.extend_from_slice(r);
                    self.rank.get(&joined[..]).copied()
                } else {
                    let spells = l.len() + r.len() == spelled.len()
                        && spelled.starts_with(l)
                        && spelled.ends_with(r);
                    spells.then_some(x)
                };
                if let Some(r) = rank {
                    if best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i - 1));
                    }
                }
            }
            let Some((r, i)) = best else { return };
            word[i] = r;
            word.remove(i + 1);
            made[i] = true;
            made.remove(i + 1);
        }
    }
}

impl Merger {
    /// Start from distinct words (their bytes and counts), in order of first occurrence.
    pub fn new<'w>(words: impl ExactSizeIterator<Item = (&'w [u8], u64)>) -> Merger {
        let mut m = Merger::empty(vec![1; 256], words.len());
        let mut ids = Vec::new();
        for (bytes, f) in words {
            ids.clear();
            ids.extend(bytes.iter().map(|&b| b as u32));
            m.push_word(&ids, f);
        }
        m.fill_heap();
        m
    }

    /// Continue from a vocabulary: `tokens` by id (empty for ids that are not ordinary tokens;
    /// new tokens take ids from `tokens.len()` on) and the distinct words as the rank rule
    /// encodes them with it (with their counts, in order of first occurrence).
    pub fn extend(words: Vec<(Vec<u32>, u64)>, tokens: Vec<Box<[u8]>>) -> Merger {
        let lens = tokens.iter().map(|t| t.len() as u32).collect();
        let mut m = Merger::empty(lens, words.len());
        let mut ranked = Ranked::default();
        for (id, t) in tokens.iter().enumerate() {
            if !t.is_empty() {
                ranked.rank.insert(t.clone(), id as u32);
            }
        }
        for (ids, f) in words {
            if ids.len() > 1 {
                let bytes: Vec<u8> = ids
                    .iter()
                    .flat_map(|&i| tokens[i as usize].iter().copied())
                    .collect();
                ranked.whole.insert(bytes.into(), m.words.count() as u32);
            }
            m.push_word(&ids, f);
        }
        ranked.tokens = tokens;
        m.ranked = Some(Box::new(ranked));
        m.fill_heap();
        m
    }

    fn empty(lens: Vec<u32>, n_words: usize) -> Merger {
        Merger {
            words: Words {
                syms: Vec::new(),
                place: Vec::with_capacity(n_words),
            },
            lens,
            ids: FxHashMap::default(),
            pairs: Vec::new(),
            heap: BinaryHeap::new(),
            merges: Vec::new(),
            hits: Vec::new(),
            merged: Vec::new(),
            ranked: None,
        }
    }

    /// Append the next distinct word (token ids) seen `f` times.
    fn push_word(&mut self, word: &[u32], f: u64) {
        let w = self.words.count() as u32;
        let mut off = 0;
        for p in word.windows(2) {
            let id = self.pair_id(p[0], p[1], w, off);
            let pair = &mut self.pairs[id as usize];
            pair.count += f;
            if pair.postings.last() != Some(&w) {
                pair.postings.push(w);
            }
            off += self.lens[p[0] as usize];
        }
        self.words.push(word.iter().copied(), f);
    }

    fn fill_heap(&mut self) {
        let entries: Vec<Entry> = (0..self.pairs.len() as u32)
            .map(|p| self.entry(p))
            .collect();
        self.heap = BinaryHeap::from(entries);
    }

    /// The merges learned so far.
    pub fn merges(&self) -> &[Merge] {
        &self.merges
    }

    /// The number of distinct words.
    pub fn n_words(&self) -> usize {
        self.words.count()
    }

    fn entry(&self, p: u32) -> Entry {
        let pair = &self.pairs[p as usize];
        Entry {
            count: pair.count,
            pos: Reverse((pair.word, pair.offset)),
            pair: p,
        }
    }

    /// The id of pair (l, r), created with first position (word, offset) if it is new.
    fn pair_id(&mut self, l: u32, r: u32, word: u32, offset: u32) -> u32 {
        let next = self.pairs.len() as u32;
        let id = *self.ids.entry((l, r)).or_insert(next);
        if id == next {
            self.pairs.push(Pair {
                left: l,
                right: r,
                count: 0,
                word,
                offset,
                postings: Vec::new(),
                cursor: 0,
                dirty: false,
            });
        }
        id
    }

    /// The best pair now, or None when no pair is left.
    fn best(&mut self) -> Option<u32> {
        while let Some(top) = self.heap.pop() {
            let pair = &self.pairs[top.pair as usize];
            if pair.count == 0 {
                continue;
            }
            if top.count == pair.count && top.pos.0 == (pair.word, pair.offset) {
                return Some(top.pair);
            }
            // Stale: the pair got rarer or its first occurrence moved; queue the truth.
            let fresh = self.entry(top.pair);
            self.heap.push(fresh);
        }
        None
    }

    /// Learn one merge if some pair is seen at least `min_frequency` times.
    pub fn step(&mut self, min_frequency: u64) -> Option<Merge> {
        let p = self.best()?;
        let (a, b, count) = {
            let pair = &self.pairs[p as usize];
            (pair.left, pair.right, pair.count)
        };
        if count < min_frequency.max(1) {
            self.heap.push(self.entry(p)); // keep the state whole for a later call
            return None;
        }
        let x = self.lens.len() as u32;
        self.lens
            .push(self.lens[a as usize] + self.lens[b as usize]);
        let merge = Merge {
            left: a,
            right: b,
            count,
        };
        self.merges.push(merge);

        let mut created: Vec<u32> = Vec::new();
        let mut dirty: Vec<u32> = Vec::new();
        if self.ranked.is_some() {
            self.settle_words(a, b, x, &mut created, &mut dirty);
        } else {
            let postings = std::mem::take(&mut self.pairs[p as usize].postings);
            for (i, &w) in postings.iter().enumerate() {
                // The words of a posting list are scattered over the whole buffer: fetch each
                // word's place well ahead and its symbols a little ahead, so the scan does not
                // wait on memory (docs/performance.md, 'Training').
                if let Some(&far) = postings.get(i + 2 * AHEAD) {
                    self.words.prefetch_place(far);
                }
                if let Some(&near) = postings.get(i + AHEAD) {
                    self.words.prefetch_syms(near);
                }
                self.merge_word(w, a, b, x, &mut created, &mut dirty);
            }
        }
        for &d in &dirty {
            self.refresh(d);
        }
        for &c in &created {
            let e = self.entry(c);
            self.heap.push(e);
        }
        Some(merge)
    }

    /// The merge of (a, b) -> x when continuing from a vocabulary (see [`Ranked`]): every word
    /// that holds a pair spelling x, or is x whole, is settled again by the rank rule. Pairs
    /// that gained occurrences are queued in `created` with their new state.
    fn settle_words(
        &mut self,
        a: u32,
        b: u32,
        x: u32,
        created: &mut Vec<u32>,
        dirty: &mut Vec<u32>,
    ) {
        let Some(mut ranked) = self.ranked.take() else {
            return;
        };
        let spelled: Box<[u8]> = [&ranked.tokens[a as usize][..], &ranked.tokens[b as usize]]
            .concat()
            .into();
        let mut touched: Vec<u32> = Vec::new();
        for cut in 1..spelled.len() {
            let left = ranked.rank.get(&spelled[..cut]);
            let right = ranked.rank.get(&spelled[cut..]);
            if let (Some(&l), Some(&r)) = (left, right) {
                if let Some(&p) = self.ids.get(&(l, r)) {
                    touched.append(&mut self.pairs[p as usize].postings);
                }
            }
        }
        let whole = ranked.whole.get(&spelled).copied();
        touched.extend(whole);
        touched.sort_unstable();
        touched.dedup();
        ranked.rank.insert(spelled.clone(), x);
        ranked.tokens.push(spelled);

        let mut word = Vec::new();
        for w in touched {
            word.clear();
            if whole == Some(w) {
                word.push(x);
            } else {
                word.extend_from_slice(self.words.get(w));
                ranked.settle(&mut word, x);
            }
            self.replace_word(w, &word, created, dirty);
        }
        created.sort_unstable();
        created.dedup();
        self.ranked = Some(ranked);
    }

    /// Word `w` becomes `new` (not longer). Byte offsets do not move, so a pair at the same
    /// offset in both is unchanged; the others are gone or new. Every pair that gains an
    /// occurrence is pushed to `created`; those that only lose are found stale on the heap.
    fn replace_word(&mut self, w: u32, new: &[u32], created: &mut Vec<u32>, dirty: &mut Vec<u32>) {
        let old = self.words.get(w);
        if old == new {
            return; // a stale posting
        }
        let f = self.words.freq(w);
        let before = Self::occurrences(old, &self.lens);
        let after = Self::occurrences(new, &self.lens);
        let (mut i, mut j) = (0, 0);
        while i < before.len() || j < after.len() {
            match (before.get(i).copied(), after.get(j).copied()) {
                (Some(b), Some(a)) if b == a => {
                    i += 1;
                    j += 1;
                }
                (Some((l, r, at)), None) => {
                    Self::remove(&self.ids, &mut self.pairs, (l, r), w, at, f, dirty);
                    i += 1;
                }
                (Some((l, r, at)), Some(a)) if at <= a.2 => {
                    Self::remove(&self.ids, &mut self.pairs, (l, r), w, at, f, dirty);
                    i += 1;
                }
                (_, Some((l, r, at))) => {
                    self.add_anywhere((l, r), w, at, f, created);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.words.set(w, new);
    }

    /// The pairs of `word` with the byte offsets they start at, in order.
    fn occurrences(word: &[u32], lens: &[u32]) -> Vec<(u32, u32, u32)> {
        let mut at = 0;
        let mut out = Vec::with_capacity(word.len().saturating_sub(1));
        for p in word.windows(2) {
            out.push((p[0], p[1], at));
            at += lens[p[0] as usize];
        }
        out
    }

    /// A new occurrence of any pair (not only one with the newest token) at byte `at` of word
    /// `w`: it may move the pair's first position earlier, or bring a dead pair back.
    fn add_anywhere(&mut self, pair: (u32, u32), w: u32, at: u32, f: u64, created: &mut Vec<u32>) {
        let before = self.pairs.len();
        let id = self.pair_id(pair.0, pair.1, w, at);
        let existed = self.pairs.len() == before;
        let p = &mut self.pairs[id as usize];
        if existed && (p.count == 0 || (w, at) < (p.word, p.offset)) {
            p.word = w;
            p.offset = at;
        }
        p.count += f;
        if let Err(k) = p.postings.binary_search(&w) {
            p.postings.insert(k, w);
        }
        if p.word == w {
            p.cursor = p.postings.binary_search(&w).unwrap_or(0) as u32;
        }
        created.push(id);
    }

    /// Merge (a, b) -> x in word `w`, updating counts, postings and positions; nothing if the
    /// word no longer holds the pair (postings are not pruned eagerly).
    ///
    /// Only pairs that touch a merge site change, and byte offsets do not move, so one pass
    /// finds the sites and the rest is local: the old pairs just before, at and just after
    /// each site are gone, the pairs on either side of each new `x` are new; fewer instructions
    /// than diffing the lists of every pair of the old and the new word (docs/performance.md,
    /// 'Training'). A word of n symbols still costs one scan per merge that touches it, like
    /// every BPE trainer that merges per word.
    fn merge_word(
        &mut self,
        w: u32,
        a: u32,
        b: u32,
        x: u32,
        created: &mut Vec<u32>,
        dirty: &mut Vec<u32>,
    ) {
        let word = self.words.get(w);
        let n = word.len();
        self.merged.clear();
        self.hits.clear();
        let mut off = 0u32;
        let mut i = 0;
        while i < n {
            let s = word[i];
            if s == a && i + 1 < n && word[i + 1] == b {
                self.hits.push((i as u32, off));
                self.merged.push(x);
                off += self.lens[x as usize];
                i += 2;
            } else {
                self.merged.push(s);
                off += self.lens[s as usize];
                i += 1;
            }
        }
        if self.hits.is_empty() {
            return;
        }
        let f = self.words.freq(w);
        let len_a = self.lens[a as usize];

        // Old pairs that are gone: at m - 1 (unless the previous site ended there: then it was
        // already counted as that site's m + 1), at m, and at m + 1.
        let mut last_end: Option<usize> = None; // old index of the previous site's pair at m + 1
        for &(m, off_m) in &self.hits {
            let m = m as usize;
            if m >= 1 && last_end != Some(m - 1) {
                let l = word[m - 1];
                let at = off_m - self.lens[l as usize];
                Self::remove(&self.ids, &mut self.pairs, (l, a), w, at, f, dirty);
            }
            Self::remove(&self.ids, &mut self.pairs, (a, b), w, off_m, f, dirty);
            if m + 2 < n {
                let at = off_m + len_a;
                Self::remove(
                    &self.ids,
                    &mut self.pairs,
                    (b, word[m + 2]),
                    w,
                    at,
                    f,
                    dirty,
                );
                last_end = Some(m + 1);
            }
        }

        // New pairs, in offset order (the first one seen in this word is its first position):
        // left of each x (unless that is the previous x) and right of it.
        let hits = std::mem::take(&mut self.hits);
        let merged = std::mem::take(&mut self.merged);
        for (k, &(m, off_m)) in hits.iter().enumerate() {
            let q = m as usize - k;
            if q >= 1 && merged[q - 1] != x {
                let l = merged[q - 1];
                let at = off_m - self.lens[l as usize];
                self.add((l, x), w, at, f, created);
            }
            if let Some(&r) = merged.get(q + 1) {
                self.add((x, r), w, off_m, f, created);
            }
        }
        self.words.set(w, &merged);
        self.hits = hits;
        self.merged = merged;
    }

    /// One occurrence of `pair` at byte `at` of word `w` (seen `f` times) is gone.
    #[inline]
    fn remove(
        ids: &FxHashMap<(u32, u32), u32>,
        pairs: &mut [Pair],
        pair: (u32, u32),
        w: u32,
        at: u32,
        f: u64,
        dirty: &mut Vec<u32>,
    ) {
        if let Some(&id) = ids.get(&pair) {
            let p = &mut pairs[id as usize];
            p.count = p.count.saturating_sub(f);
            if p.word == w && p.offset == at && !p.dirty {
                p.dirty = true;
                dirty.push(id);
            }
        }
    }

    /// A new occurrence of `pair` (which holds the new token) at byte `at` of word `w`.
    #[inline]
    fn add(&mut self, pair: (u32, u32), w: u32, at: u32, f: u64, created: &mut Vec<u32>) {
        let before = self.pairs.len();
        let id = self.pair_id(pair.0, pair.1, w, at);
        if self.pairs.len() > before {
            created.push(id);
        }
        let p = &mut self.pairs[id as usize];
        p.count += f;
        if p.postings.last() != Some(&w) {
            p.postings.push(w);
        }
    }

    /// Recompute the first position of pair `p` after its first occurrence went away.
    fn refresh(&mut self, p: u32) {
        let pair = &mut self.pairs[p as usize];
        pair.dirty = false;
        if pair.count == 0 {
            return;
        }
        while let Some(&w) = pair.postings.get(pair.cursor as usize) {
            let word = self.words.get(w);
            let mut off = 0u32;
            for s in word.windows(2) {
                if s[0] == pair.left && s[1] == pair.right {
                    pair.word = w;
                    pair.offset = off;
                    return;
                }
                off += self.lens[s[0] as usize];
            }
            pair.cursor += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn train(words: &[(&str, u64)], n: usize) -> Vec<(u32, u32, u64)> {
        let mut m = Merger::new(words.iter().map(|(w, f)| (w.as_bytes(), *f)));
        (0..n)
            .map_while(|_| m.step(2))
            .map(|m| (m.left, m.right, m.count))
            .collect()
    }

    /// The pair seen most often in `words` (with their counts), the first of equal ones in
    /// text order, and its count.
    fn best_pair<'w>(words: impl Iterator<Item = (&'w [u32], u64)>) -> Option<((u32, u32), u64)> {
        let mut order: Vec<(u32, u32)> = Vec::new();
        let mut counts: FxHashMap<(u32, u32), u64> = FxHashMap::default();
        for (w, f) in words {
            for p in w.windows(2) {
                let c = counts.entry((p[0], p[1])).or_insert(0);
                if *c == 0 {
                    order.push((p[0], p[1]));
                }
                *c += f;
            }
        }
        let mut best: Option<((u32, u32), u64)> = None;
        for key in order {
            let c = counts[&key];
            if best.is_none_or(|(_, b)| c > b) {
                best = Some((key, c));
            }
        }
        best
    }

    /// The classic loop, as plainly as possible: recount every pair in text order each step,
    /// take the first pair with the highest count, merge it everywhere.
    fn naive(words: &[(Vec<u8>, u64)], n: usize, min_frequency: u64) -> Vec<(u32, u32, u64)> {
        let mut ws: Vec<(Vec<u32>, u64)> = words
            .iter()
            .map(|(w, f)| (w.iter().map(|&b| b as u32).collect(), *f))
            .collect();
        let mut out = Vec::new();
        for k in 0..n {
            let Some(((a, b), c)) = best_pair(ws.iter().map(|(w, f)| (&w[..], *f)))
                .filter(|&(_, c)| c >= min_frequency)
            else {
                break;
            };
            out.push((a, b, c));
            let x = 256 + k as u32;
            for (w, _) in &mut ws {
                let mut merged = Vec::with_capacity(w.len());
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == a && w[i + 1] == b {
                        merged.push(x);
                        i += 2;
                    } else {
                        merged.push(w[i]);
                        i += 1;
                    }
                }
                *w = merged;
            }
        }
        out
    }

    #[test]
    fn equals_the_naive_loop_on_random_tie_heavy_words() {
        // A small LCG: deterministic, no dependency. Alphabets of 2..4 letters make most
        // counts tie, so the first-position bookkeeping decides almost every merge.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        for _ in 0..400 {
            let letters = 2 + next(3) as u8;
            let mut words: Vec<(Vec<u8>, u64)> = Vec::new();
            for _ in 0..1 + next(8) {
                let w: Vec<u8> = (0..1 + next(9))
                    .map(|_| b'a' + next(letters as u64) as u8)
                    .collect();
                if !words.iter().any(|(x, _)| *x == w) {
                    words.push((w, 1 + next(3)));
                }
            }
            let min_frequency = 1 + next(2);
            let want = naive(&words, 30, min_frequency);
            let mut m = Merger::new(words.iter().map(|(w, f)| (&w[..], *f)));
            let got: Vec<_> = (0..30)
                .map_while(|_| m.step(min_frequency))
                .map(|m| (m.left, m.right, m.count))
                .collect();
            assert_eq!(got, want, "{words:?}");
        }
    }

    /// The rank rule from bytes, as plainly as possible: a word that is a token is that token;
    /// otherwise join the adjacent pair that is the token of lowest rank, leftmost first.
    fn rank_encode(tokens: &[Vec<u8>], bytes: &[u8]) -> Vec<u32> {
        let rank = |t: &[u8]| tokens.iter().position(|x| !x.is_empty() && x == t);
        if let Some(r) = rank(bytes) {
            return vec![r as u32];
        }
        let mut w: Vec<u32> = bytes.iter().map(|&b| b as u32).collect();
        loop {
            let best = (1..w.len())
                .filter_map(|i| {
                    let joined = [&tokens[w[i - 1] as usize][..], &tokens[w[i] as usize]].concat();
                    rank(&joined).map(|r| (r, i - 1))
                })
                .min();
            let Some((r, i)) = best else { return w };
            w[i] = r as u32;
            w.remove(i + 1);
        }
    }

    /// Continued training by its definition: every word is the rank rule's encoding of its
    /// bytes with the vocabulary so far, recomputed after every merge.
    fn naive_extend(
        words: &[(Vec<u8>, u64)],
        mut tokens: Vec<Vec<u8>>,
        n: usize,
        min_frequency: u64,
    ) -> Vec<(u32, u32, u64)> {
        let mut out = Vec::new();
        for _ in 0..n {
            let ws: Vec<(Vec<u32>, u64)> = words
                .iter()
                .map(|(bytes, f)| (rank_encode(&tokens, bytes), *f))
                .collect();
            let Some(((a, b), c)) = best_pair(ws.iter().map(|(w, f)| (&w[..], *f)))
                .filter(|&(_, c)| c >= min_frequency)
            else {
                break;
            };
            out.push((a, b, c));
            let joined = [&tokens[a as usize][..], &tokens[b as usize]].concat();
            tokens.push(joined);
        }
        out
    }

    #[test]
    fn extending_equals_the_definition_on_random_bases() {
        let mut rng = crate::testing::Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..400 {
            let letters = &b"abcd"[..2 + rng.below(3)];
            // A base of the bytes, a gap (as cl100k has), then a few tokens of 2..4 letters in
            // random order: many of them are not made by the rank rule from their parts.
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            tokens.push(Vec::new());
            for _ in 0..rng.below(24) {
                let len = 2 + rng.below(3);
                let t = rng.text(letters, len);
                if !tokens.contains(&t) {
                    tokens.push(t);
                }
            }
            let mut words: Vec<(Vec<u8>, u64)> = Vec::new();
            for _ in 0..1 + rng.below(12) {
                let len = 1 + rng.below(12);
                let w = rng.text(letters, len);
                if !words.iter().any(|(x, _)| *x == w) {
                    words.push((w, 1 + rng.below(3) as u64));
                }
            }
            let min_frequency = 1 + rng.below(2) as u64;
            let want = naive_extend(&words, tokens.clone(), 30, min_frequency);
            let seeds = words
                .iter()
                .map(|(w, f)| (rank_encode(&tokens, w), *f))
                .collect();
            let boxed = tokens.iter().map(|t| t.clone().into()).collect();
            let mut m = Merger::extend(seeds, boxed);
            let got: Vec<_> = (0..30)
                .map_while(|_| m.step(min_frequency))
                .map(|m| (m.left, m.right, m.count))
                .collect();
            assert_eq!(got, want, "{words:?} {:?}", &tokens[257..]);
        }
    }

    #[test]
    fn a_new_token_sets_off_a_base_token() {
        // Base "bc" then "abcd": "abcde" encodes a|bc|d|e. Learning "abc" makes it "abcd"|e,
        // so the next pair is (abcd, e), not (abc, d).
        let mut tokens: Vec<Box<[u8]>> = (0..=255u8).map(|b| Box::from([b])).collect();
        tokens.push(Box::from(&b"bc"[..]));
        tokens.push(Box::from(&b"abcd"[..]));
        let (a, bc, d, e) = (97, 256, 100, 101);
        let mut m = Merger::extend(vec![(vec![a, bc, d, e], 2)], tokens);
        let got: Vec<_> = (0..3)
            .map_while(|_| m.step(2))
            .map(|m| (m.left, m.right))
            .collect();
        assert_eq!(got, [(a, bc), (257, e)]);
    }

    #[test]
    fn design_worked_example() {
        // "ab cd ab cd" under gpt2: ab, " cd" x2, " ab".
        let got = train(&[("ab", 1), (" cd", 2), (" ab", 1)], 10);
        assert_eq!(got, [(97, 98, 2), (32, 99, 2), (257, 100, 2)]);
    }

    #[test]
    fn overlapping_runs_merge_left_to_right() {
        // "aaa" x2: (a,a) seen 4x; then "X a" -> (X, a) seen 2x.
        assert_eq!(train(&[("aaa", 2)], 10), [(97, 97, 4), (256, 97, 2)]);
    }

    #[test]
    fn tie_follows_the_text_as_it_stands_now() {
        // "xyab" then "ab": after nothing is merged (x,y),(y,a),(a,b) all tie... (a,b) is seen
        // 2x and wins; then (x,y) and (y,256) tie at 1 and min_frequency stops.
        assert_eq!(train(&[("xyab", 1), ("ab", 1)], 10), [(97, 98, 2)]);
        // Two pairs at 2: (c,d) first in word 0 at offset 2, (a,b) at offset 0 of word 0.
        assert_eq!(
            train(&[("abcd", 1), ("cdab", 1)], 2),
            [(97, 98, 2), (99, 100, 2)]
        );
    }
}
