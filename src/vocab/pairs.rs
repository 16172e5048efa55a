//! The pair index: for each token that a merge makes, its *parents*, the two tokens that merge
//! into it, looked up by the pair; and the ranks of the single bytes. The merges read it at
//! every step, so it is a flat open-addressing table of 64-bit slots (one cache line a lookup,
//! no pointers), and the pairs of two single bytes, which every chunk's first round reads, are
//! in a table of their own indexed by the two bytes.
//!
//! Why parents are enough is proved in the module doc of `vocab`.

use crate::runtime::pages::{prefetch, Table};

/// Ranks are packed 21 bits at a time into the table's 64-bit slots.
pub const MAX_RANKS: usize = 1 << 21;

/// No token: a single byte's parents, and a pair that does not merge.
pub(super) const NONE: u32 = u32::MAX;

/// Open addressing over packed `left + 1 | right | merged` slots (0 = empty).
#[derive(Debug, Clone)]
struct PairTable {
    slots: Table<u64>,
    mask: usize,
}

impl PairTable {
    fn with_capacity(n: usize) -> PairTable {
        let cap = (n * 2).next_power_of_two().max(16);
        PairTable {
            slots: Table::zeroed(cap),
            mask: cap - 1,
        }
    }

    #[inline]
    fn key(left: u32, right: u32) -> u64 {
        ((left as u64 + 1) << 21) | right as u64
    }

    #[inline]
    fn start(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize & self.mask
    }

    fn insert(&mut self, left: u32, right: u32, merged: u32) {
        let key = Self::key(left, right);
        let mut i = self.start(key);
        while self.slots[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = (key << 21) | merged as u64;
    }

    /// Start loading the slot where a lookup of `(left, right)` begins.
    #[inline]
    fn prefetch(&self, left: u32, right: u32) {
        if let Some(slot) = self.slots.get(self.start(Self::key(left, right))) {
            prefetch(slot);
        }
    }

    #[inline]
    fn get(&self, left: u32, right: u32) -> Option<u32> {
        let key = Self::key(left, right);
        let mut i = self.start(key);
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            if slot >> 21 == key {
                return Some((slot & (MAX_RANKS as u64 - 1)) as u32);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// Parents -> merged token, the ranks of single bytes, and each token's parents.
#[derive(Debug, Clone)]
pub(crate) struct PairIndex {
    table: PairTable,
    byte_ranks: [u32; 256],
    /// `get` of every pair of single bytes, indexed by `first << 8 | second` (256 KB, stays in
    /// L2): the first round of every merge reads it.
    byte_pairs: Box<[u32; 1 << 16]>,
    /// For each rank, its parents; `(NONE, NONE)` for single bytes and unreachable tokens.
    parents: Vec<(u32, u32)>,
}

impl PairIndex {
    /// The index of `tokens` (by rank; every single byte is one of them, with its rank in
    /// `byte_ranks`): each token's parents are the two parts that tiktoken's rule leaves when it
    /// runs on the token's bytes without the token itself, if it leaves two.
    pub(crate) fn new(tokens: &[Vec<u8>], byte_ranks: [u32; 256]) -> PairIndex {
        let mut index = PairIndex {
            table: PairTable::with_capacity(tokens.len()),
            byte_ranks,
            byte_pairs: match vec![NONE; 1 << 16].into_boxed_slice().try_into() {
                Ok(table) => table,
                Err(_) => unreachable!("a vector of 1 << 16"),
            },
            parents: vec![(NONE, NONE); tokens.len()],
        };
        // Shortest tokens first, so that the table already holds every pair a shorter token
        // can contain when a token's bytes are merged; the token's own pair is not in it yet.
        let mut by_len: Vec<u32> = (0..tokens.len() as u32)
            .filter(|&r| tokens[r as usize].len() > 1)
            .collect();
        by_len.sort_by_key(|&r| tokens[r as usize].len());
        let mut parts = Vec::new();
        for rank in by_len {
            let bytes = &tokens[rank as usize];
            index.merge_alone(bytes, &mut parts, |_, _, _| {});
            if let [left, right] = parts[..] {
                index.table.insert(left, right, rank);
                index.parents[rank as usize] = (left, right);
                // A token of two bytes has them as parents.
                if let [first, second] = bytes[..] {
                    index.byte_pairs[(first as usize) << 8 | second as usize] = rank;
                }
            }
        }
        index
    }

    /// The rank of the single-byte token for `b`.
    #[inline]
    pub(crate) fn byte_rank(&self, b: u8) -> u32 {
        self.byte_ranks[b as usize]
    }

    /// The rank of the token `left` and `right` merge into, if they are its parents.
    #[inline]
    pub(crate) fn get(&self, left: u32, right: u32) -> Option<u32> {
        self.table.get(left, right)
    }

    /// Start loading what `get(left, right)` reads, to look it up later without waiting.
    #[inline]
    pub(crate) fn prefetch(&self, left: u32, right: u32) {
        self.table.prefetch(left, right);
    }

    /// `get` of two single-byte tokens given as bytes; `NONE` when they do not merge.
    #[inline]
    pub(crate) fn byte_pair(&self, first: u8, second: u8) -> u32 {
        self.byte_pairs[(first as usize) << 8 | second as usize]
    }

    /// The parents of `rank`, if a merge makes it.
    #[inline]
    pub(crate) fn parents(&self, rank: u32) -> Option<(u32, u32)> {
        self.parents
            .get(rank as usize)
            .copied()
            .filter(|p| p.0 != NONE)
    }

    /// Merge `bytes` alone by this index, plainly: start from single bytes and merge the
    /// adjacent pair of the lowest rank (the leftmost of equal ones) until no pair merges.
    /// `parts` gets the ranks left; `merged(start, end, rank)` is told of each merge, which
    /// joins `bytes[start..end]` into the token `rank`. No whole-chunk lookup: a token no merge
    /// makes stays in parts.
    pub(crate) fn merge_alone(
        &self,
        bytes: &[u8],
        parts: &mut Vec<u32>,
        merged: impl FnMut(usize, usize, u32),
    ) {
        if bytes.len() > RESCAN_UP_TO {
            self.merge_alone_heap(bytes, parts, merged);
        } else {
            self.merge_alone_rescan(bytes, parts, merged);
        }
    }

    /// [`PairIndex::merge_alone`] by rescanning the parts for the lowest pair at each step:
    /// quick on short tokens, quadratic in the length.
    pub(super) fn merge_alone_rescan(
        &self,
        bytes: &[u8],
        parts: &mut Vec<u32>,
        mut merged: impl FnMut(usize, usize, u32),
    ) {
        /// A part: where it starts, its rank, and the rank of it joined with the next part.
        #[derive(Clone, Copy)]
        struct Part {
            start: usize,
            rank: u32,
            pair: u32,
        }
        let mut all: Vec<Part> = (0..bytes.len())
            .map(|i| Part {
                start: i,
                rank: self.byte_rank(bytes[i]),
                pair: match bytes.get(i + 1) {
                    Some(&next) => self.byte_pair(bytes[i], next),
                    None => NONE,
                },
            })
            .collect();
        let pair = |all: &[Part], i: usize| match all.get(i + 1) {
            Some(next) => self.get(all[i].rank, next.rank).unwrap_or(NONE),
            None => NONE,
        };
        while let Some((i, rank)) = all
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.pair))
            .min_by_key(|&(i, r)| (r, i))
        {
            if rank == NONE {
                break;
            }
            let end = all.get(i + 2).map_or(bytes.len(), |p| p.start);
            merged(all[i].start, end, rank);
            all[i].rank = rank;
            all.remove(i + 1);
            // Both new pairs' lookups started before either is waited for (docs/performance.md,
            // 'Merge algorithms').
            if let Some(next) = all.get(i + 1) {
                self.prefetch(rank, next.rank);
            }
            if i > 0 {
                self.prefetch(all[i - 1].rank, rank);
            }
            all[i].pair = pair(&all, i);
            if i > 0 {
                all[i - 1].pair = pair(&all, i - 1);
            }
        }
        parts.clear();
        parts.extend(all.iter().map(|p| p.rank));
    }

    /// [`PairIndex::merge_alone`] with a heap of the pairs by (rank, start), so that a long
    /// token (a file may make one of any length from a few merges) costs `n log n`, not `n²`.
    /// A pair in the heap is current while the part at its start is alive and that part and
    /// the next one still make its rank: a rank has one pair of parents, so the same rank is
    /// the same pair.
    pub(super) fn merge_alone_heap(
        &self,
        bytes: &[u8],
        parts: &mut Vec<u32>,
        mut merged: impl FnMut(usize, usize, u32),
    ) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let n = bytes.len();
        // The parts as a list over their start positions: rank, next start (n at the end),
        // previous start (usize::MAX at the start), and whether a part starts here.
        let mut rank: Vec<u32> = bytes.iter().map(|&b| self.byte_rank(b)).collect();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = (0..n.saturating_sub(1))
            .filter_map(|i| {
                let r = self.byte_pair(bytes[i], bytes[i + 1]);
                (r != NONE).then_some(Reverse((r, i)))
            })
            .collect();
        while let Some(Reverse((r, i))) = heap.pop() {
            let j = next[i];
            if !alive[i] || j >= n || self.get(rank[i], rank[j]) != Some(r) {
                continue;
            }
            let end = next[j];
            merged(i, end, r);
            rank[i] = r;
            alive[j] = false;
            next[i] = end;
            if end < n {
                prev[end] = i;
                if let Some(up) = self.get(r, rank[end]) {
                    heap.push(Reverse((up, i)));
                }
            }
            let before = prev[i];
            if before != usize::MAX {
                if let Some(up) = self.get(rank[before], r) {
                    heap.push(Reverse((up, before)));
                }
            }
        }
        parts.clear();
        let mut i = 0;
        while i < n {
            parts.push(rank[i]);
            i = next[i];
        }
    }
}

/// Tokens up to this long are merged alone by rescanning, longer ones with a heap.
pub(super) const RESCAN_UP_TO: usize = 128;
