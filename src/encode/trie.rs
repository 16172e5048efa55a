//! A byte trie of all tokens, laid out for the long-chunk search: the longest token starting
//! at a position is found with one table read for the first two bytes and one probe of a flat
//! open-addressing table per further byte.
//!
//! Measured on 1 MB of random lowercase letters with o200k_base: a trie in a `HashMap` with a
//! separate node -> token array spent 60% of the search in hash probing and ran at 3 MB/s;
//! this layout (nodes that spell a token are numbered by the token's rank, so no second array)
//! is what the search uses now. Every step of a walk is a dependent random read of `deeper`,
//! so it is sized to twice its real number of entries (not for the worst case of no shared
//! prefixes, 4x larger for o200k_base): its size decides whether the reads hit L3. It is on
//! 2 MiB pages (`pages.rs`), so those reads do not also miss the TLB: the first long chunk of
//! o200k_base (1 MB of spaces, trie build included) went from 38-47 to 33-40 ms.

use crate::pages::Table;
use crate::vocab::Vocab;

const NONE: u32 = u32::MAX;

/// Node ids must leave room for the byte in a 32-bit key.
const MAX_NODES: usize = (1 << 24) - 1;

#[derive(Debug, Clone)]
pub struct Trie {
    n_ranks: u32,
    /// Node after two bytes `b0 b1` at index `b0 << 8 | b1`, or NONE.
    second: Vec<u32>,
    /// Open addressing: `((node + 1) << 8 | byte) << 32 | child`; 0 is an empty slot.
    deeper: Table<u64>,
    mask: usize,
    byte_ranks: [u32; 256],
}

impl Trie {
    /// The trie, and for each token the longest token that is a proper prefix of it (NONE for
    /// single bytes). None if the vocabulary has too many distinct prefixes for 24-bit node
    /// ids.
    ///
    /// Built from the tokens in byte order, keeping the path of the previous token: a token
    /// shares its first `lcp` nodes with the previous one and adds the rest, and a prefix that
    /// is itself a token sorts before every token it begins, so each new node but the token's
    /// own is not a token. No lookups are needed, and the table is allocated at its final
    /// size. The previous build walked and inserted every prefix of every token into a
    /// worst-case-sized table, then shrank it, and walked again for `next_prefix`. Measured on
    /// o200k_base on an idle machine, the long-chunk path's first use (all of `LongPath::new`)
    /// went from 180-270 ms to 27 ms (31-35 ms before `fill`); cl100k_base 62 -> 14 ms.
    pub fn new(vocab: &Vocab) -> Option<(Trie, Vec<u32>)> {
        let n_ranks = vocab.len() as u32;
        // Sorted by the first eight bytes in one flat array, then by the rest (measured on
        // o200k_base: 52 ms comparing token slices, 14 ms this way).
        let mut keyed: Vec<(u64, u32)> = (0..n_ranks)
            .map(|r| {
                let mut head = [0u8; 8];
                let t = vocab.token(r);
                let n = t.len().min(8);
                head[..n].copy_from_slice(&t[..n]);
                (u64::from_be_bytes(head), r)
            })
            .collect();
        keyed.sort_unstable_by(|&(ka, a), &(kb, b)| {
            ka.cmp(&kb).then_with(|| vocab.token(a).cmp(vocab.token(b)))
        });
        let order: Vec<u32> = keyed.into_iter().map(|(_, r)| r).collect();
        let lcp: Vec<usize> = (0..order.len())
            .map(|i| match i {
                0 => 0,
                _ => common_prefix(vocab.token(order[i - 1]), vocab.token(order[i])),
            })
            .collect();
        // New nodes deeper than two bytes, and new nodes that are not tokens.
        let (mut deeper_nodes, mut inner_nodes) = (0usize, 0usize);
        for (&rank, &keep) in order.iter().zip(&lcp) {
            let len = vocab.token(rank).len();
            deeper_nodes += len.saturating_sub(keep.max(2));
            inner_nodes += len - keep - 1;
        }
        if vocab.len() + inner_nodes > MAX_NODES {
            return None;
        }
        let cap = (deeper_nodes * 2).next_power_of_two().max(16);
        let mut trie = Trie {
            n_ranks,
            second: vec![NONE; 1 << 16],
            deeper: Table::zeroed(cap),
            mask: cap - 1,
            byte_ranks: std::array::from_fn(|b| vocab.byte_rank(b as u8)),
        };
        let mut next_prefix = vec![NONE; vocab.len()];
        let mut next_id = n_ranks;
        let mut deeper: Vec<u64> = Vec::with_capacity(deeper_nodes);
        // For the current path, at index d (depth d + 1): its node, and the deepest token
        // node at that depth or above.
        let mut path: Vec<u32> = Vec::new();
        let mut best: Vec<u32> = Vec::new();
        for (&rank, &keep) in order.iter().zip(&lcp) {
            let bytes = vocab.token(rank);
            path.truncate(keep);
            best.truncate(keep);
            for depth in keep..bytes.len() {
                let last = depth + 1 == bytes.len();
                let id = if last {
                    rank
                } else {
                    next_id += 1;
                    next_id - 1
                };
                match depth {
                    // A single byte: its node is its rank (`byte_ranks`).
                    0 => {}
                    1 => trie.second[(bytes[0] as usize) << 8 | bytes[1] as usize] = id,
                    _ => deeper.push(Trie::entry(path[depth - 1], bytes[depth], id)),
                }
                path.push(id);
                let above = best.last().copied().unwrap_or(NONE);
                best.push(if last { rank } else { above });
            }
            if bytes.len() >= 2 {
                next_prefix[rank as usize] = best[bytes.len() - 2];
            }
        }
        trie.fill(deeper);
        Some((trie, next_prefix))
    }

    /// A slot of `deeper`: the child `child` of `node` by `byte`.
    fn entry(node: u32, byte: u8, child: u32) -> u64 {
        ((node as u64 + 1) << 8 | byte as u64) << 32 | child as u64
    }

    /// Insert `entries` (into the empty table) in the order of their home slots, so that the
    /// writes sweep the table once instead of landing at random (o200k_base: the whole build
    /// 31-35 ms with the entries inserted in trie order, 27 ms this way).
    fn fill(&mut self, entries: Vec<u64>) {
        let bits = self.deeper.len().trailing_zeros();
        let shift = bits.saturating_sub(16);
        let home = |e: u64| self.slot(e >> 32) >> shift;
        let mut starts = vec![0usize; (self.deeper.len() >> shift) + 1];
        for &e in &entries {
            starts[home(e) + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut sorted = vec![0u64; entries.len()];
        for &e in &entries {
            let b = home(e);
            sorted[starts[b]] = e;
            starts[b] += 1;
        }
        for e in sorted {
            let mut i = self.slot(e >> 32);
            while self.deeper[i] != 0 {
                i = (i + 1) & self.mask;
            }
            self.deeper[i] = e;
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24) as usize & self.mask
    }

    #[inline]
    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let key = (node as u64 + 1) << 8 | byte as u64;
        let mut i = self.slot(key);
        loop {
            let s = self.deeper[i];
            if s >> 32 == key {
                return Some(s as u32);
            }
            if s == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The longest token that is a prefix of `s` (None only for empty `s`).
    #[inline]
    pub fn longest(&self, s: &[u8]) -> Option<u32> {
        let (&b0, rest) = s.split_first()?;
        let mut best = self.byte_ranks[b0 as usize];
        let Some(&b1) = rest.first() else {
            return Some(best);
        };
        let mut node = self.second[(b0 as usize) << 8 | b1 as usize];
        if node == NONE {
            return Some(best);
        }
        if node < self.n_ranks {
            best = node;
        }
        for &b in &s[2..] {
            match self.child(node, b) {
                Some(c) => {
                    if c < self.n_ranks {
                        best = c;
                    }
                    node = c;
                }
                None => break,
            }
        }
        Some(best)
    }
}

/// Length of the common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
