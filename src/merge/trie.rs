//! A byte trie of all tokens, laid out for the long path's search: the longest token starting
//! at a position is found with one table read for the first two bytes and one probe of a flat
//! open-addressing table per further byte. Nodes that spell a token are numbered by the token's
//! rank, so no second array maps nodes to tokens.
//!
//! The trie is cut into *buckets*, one per first two bytes, each built the first time a walk
//! enters it: a first pass over 1 MB of `a` or of spaces needs one bucket, and building the
//! whole trie up front would take most of that pass (docs/performance.md, 'Merge algorithms').
//! Grouping the tokens by their first two bytes, the only work left up front, is a counting
//! sort.
//!
//! Every step of a walk is a dependent random read of a bucket's table, so it is sized to
//! twice its real number of entries: its size decides whether the reads hit L3.

use crate::vocab::Vocab;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

const NONE: u32 = u32::MAX;

/// Node ids must leave room for the byte in a 32-bit key.
const MAX_NODES: usize = (1 << 24) - 1;

#[derive(Debug)]
pub struct Trie {
    n_ranks: u32,
    byte_ranks: [u32; 256],
    /// For two bytes `b0 b1`, at index `b0 << 8 | b1`: their bucket, or NONE when no token of
    /// two or more bytes starts with them.
    bucket_of: Vec<u32>,
    /// The tokens of two or more bytes, grouped by bucket: bucket `i` holds
    /// `members[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    members: Vec<u32>,
    buckets: Vec<OnceLock<Bucket>>,
    /// For each token, the longest token that is a proper prefix of it (NONE for single
    /// bytes). Set for a token of three or more bytes when its bucket is built, which happens
    /// before a walk can return the token.
    next_prefix: Vec<AtomicU32>,
}

/// The part of the trie below two bytes.
#[derive(Debug, Clone)]
struct Bucket {
    /// The node after the two bytes: their rank if they are a token, else an inner id.
    root: u32,
    /// Open addressing: `((node + 1) << 8 | byte) << 32 | child`; 0 is an empty slot.
    deeper: Box<[u64]>,
    mask: usize,
    /// The bucket's longest token (its bytes after the first two, and its rank): a text that
    /// starts with it needs no walk (a run of spaces would walk 128 nodes deep per token with
    /// o200k_base).
    longest: Box<[u8]>,
    longest_rank: u32,
}

impl Clone for Trie {
    fn clone(&self) -> Trie {
        Trie {
            n_ranks: self.n_ranks,
            byte_ranks: self.byte_ranks,
            bucket_of: self.bucket_of.clone(),
            starts: self.starts.clone(),
            members: self.members.clone(),
            // A built bucket was built (with its tokens' `next_prefix`) before `get` sees it.
            buckets: self.buckets.clone(),
            next_prefix: self
                .next_prefix
                .iter()
                .map(|p| AtomicU32::new(p.load(Ordering::Relaxed)))
                .collect(),
        }
    }
}

impl Trie {
    /// The trie with no bucket built yet. None if the vocabulary may have too many nodes for
    /// 24-bit node ids (over 16M bytes of tokens).
    pub fn new(vocab: &Vocab) -> Option<Trie> {
        let n_ranks = vocab.len() as u32;
        let key = |t: &[u8]| (t[0] as usize) << 8 | t[1] as usize;
        // Per first two bytes, how many tokens; and the tokens' bytes, which bound the inner
        // node ids of any bucket.
        let mut count = vec![0u32; 1 << 16];
        let mut bytes = 0usize;
        for rank in 0..n_ranks {
            let t = vocab.token(rank);
            bytes += t.len();
            if t.len() >= 2 {
                count[key(t)] += 1;
            }
        }
        if vocab.len() + bytes > MAX_NODES {
            return None;
        }
        let mut bucket_of = vec![NONE; 1 << 16];
        let mut starts = vec![0u32];
        for (k, &c) in count.iter().enumerate() {
            if c > 0 {
                bucket_of[k] = (starts.len() - 1) as u32;
                starts.push(starts[starts.len() - 1] + c);
            }
        }
        let mut fill = starts.clone();
        let mut members = vec![0u32; starts[starts.len() - 1] as usize];
        let next_prefix: Vec<AtomicU32> = (0..n_ranks)
            .map(|rank| {
                let t = vocab.token(rank);
                if t.len() >= 2 {
                    let b = bucket_of[key(t)] as usize;
                    members[fill[b] as usize] = rank;
                    fill[b] += 1;
                }
                // A two-byte token's longest proper prefix is its first byte.
                AtomicU32::new(match t.len() {
                    2 => vocab.byte_rank(t[0]),
                    _ => NONE,
                })
            })
            .collect();
        Some(Trie {
            n_ranks,
            byte_ranks: std::array::from_fn(|b| vocab.byte_rank(b as u8)),
            bucket_of,
            buckets: (1..starts.len()).map(|_| OnceLock::new()).collect(),
            starts,
            members,
            next_prefix,
        })
    }

    /// The longest token that is a proper prefix of `rank` (NONE for single bytes). `rank`
    /// must have been returned by [`Trie::longest`] or be a prefix of such a token: that walk
    /// built its bucket.
    #[inline]
    pub fn next_prefix(&self, rank: u32) -> u32 {
        self.next_prefix[rank as usize].load(Ordering::Relaxed)
    }

    /// Build the bucket of the tokens `ranks`, which all begin with the same two bytes.
    ///
    /// Built from the tokens in byte order, keeping the path of the previous token: a token
    /// shares its first `lcp` nodes with the previous one and adds the rest, and a prefix that
    /// is itself a token sorts before every token it begins, so each new node but the token's
    /// own is not a token. No lookups are needed, and the table is allocated at its final
    /// size.
    #[cold]
    fn build(&self, vocab: &Vocab, ranks: &[u32]) -> Bucket {
        // Sorted by the eight bytes after the first two in one flat array, then by the rest.
        let mut keyed: Vec<(u64, u32)> = ranks
            .iter()
            .map(|&r| {
                let mut head = [0u8; 8];
                let t = &vocab.token(r)[2..];
                let n = t.len().min(8);
                head[..n].copy_from_slice(&t[..n]);
                (u64::from_be_bytes(head), r)
            })
            .collect();
        keyed.sort_unstable_by(|&(ka, a), &(kb, b)| {
            ka.cmp(&kb).then_with(|| vocab.token(a).cmp(vocab.token(b)))
        });
        let first = vocab.token(keyed[0].1);
        // The two bytes sort first if they are a token (a prefix sorts before its extensions).
        let (root, root_best) = match first.len() {
            2 => (keyed[0].1, keyed[0].1),
            _ => (self.n_ranks, vocab.byte_rank(first[0])),
        };
        let mut next_id = self.n_ranks + 1;
        let mut deeper: Vec<u64> = Vec::new();
        // For the current path, at index d (depth d + 2): its node, and the deepest token
        // node at that depth or above.
        let mut path = vec![root];
        let mut best = vec![root_best];
        let mut prev: &[u8] = &[];
        for &(_, rank) in &keyed {
            let bytes = vocab.token(rank);
            let keep = common_prefix(prev, bytes).max(2);
            prev = bytes;
            path.truncate(keep - 1);
            best.truncate(keep - 1);
            for depth in keep..bytes.len() {
                let last = depth + 1 == bytes.len();
                let id = if last {
                    rank
                } else {
                    next_id += 1;
                    next_id - 1
                };
                deeper.push(Trie::entry(path[path.len() - 1], bytes[depth], id));
                path.push(id);
                let above = best[best.len() - 1];
                best.push(if last { rank } else { above });
            }
            if bytes.len() >= 3 {
                self.next_prefix[rank as usize].store(best[bytes.len() - 3], Ordering::Relaxed);
            }
        }
        let cap = (deeper.len() * 2).next_power_of_two().max(2);
        let longest_rank = keyed
            .iter()
            .map(|&(_, r)| r)
            .max_by_key(|&r| vocab.token(r).len())
            .unwrap_or(root);
        let mut bucket = Bucket {
            root,
            deeper: vec![0u64; cap].into_boxed_slice(),
            mask: cap - 1,
            longest: vocab.token(longest_rank)[2..].into(),
            longest_rank,
        };
        for e in deeper {
            let mut i = slot(e >> 32, bucket.mask);
            while bucket.deeper[i] != 0 {
                i = (i + 1) & bucket.mask;
            }
            bucket.deeper[i] = e;
        }
        bucket
    }

    /// A slot of `deeper`: the child `child` of `node` by `byte`.
    fn entry(node: u32, byte: u8, child: u32) -> u64 {
        ((node as u64 + 1) << 8 | byte as u64) << 32 | child as u64
    }

    /// The longest token that is a prefix of `s` (None only for empty `s`).
    #[inline]
    pub fn longest(&self, vocab: &Vocab, s: &[u8]) -> Option<u32> {
        let (&b0, rest) = s.split_first()?;
        let mut best = self.byte_ranks[b0 as usize];
        let Some(&b1) = rest.first() else {
            return Some(best);
        };
        let b = self.bucket_of[(b0 as usize) << 8 | b1 as usize];
        if b == NONE {
            return Some(best);
        }
        let bucket = self.buckets[b as usize].get_or_init(|| {
            let (lo, hi) = (self.starts[b as usize], self.starts[b as usize + 1]);
            self.build(vocab, &self.members[lo as usize..hi as usize])
        });
        let s = &s[2..];
        if s.first().is_some_and(|b| bucket.longest.first() == Some(b))
            && s.starts_with(&bucket.longest)
        {
            return Some(bucket.longest_rank);
        }
        let mut node = bucket.root;
        if node < self.n_ranks {
            best = node;
        }
        for &byte in s {
            match bucket.child(node, byte) {
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

impl Bucket {
    #[inline]
    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let key = (node as u64 + 1) << 8 | byte as u64;
        let mut i = slot(key, self.mask);
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
}

#[inline]
fn slot(key: u64, mask: usize) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24) as usize & mask
}

/// Length of the common prefix of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use crate::vocab::testing;

    #[test]
    fn trie_finds_the_longest_token_and_the_longest_proper_prefix() {
        let mut rng = Rng(4242);
        for round in 0..20 {
            let merges = 20 + rng.below(300);
            let vocab = testing::random(&mut rng, merges);
            let trie = Trie::new(&vocab).unwrap();
            let longest = |s: &[u8]| (1..=s.len()).rev().find_map(|n| vocab.rank(&s[..n]));
            let random_walks = |trie: &Trie, rng: &mut Rng, n: usize| {
                for _ in 0..n {
                    let len = 1 + rng.below(30);
                    let s = rng.text(b"abc ", len);
                    assert_eq!(trie.longest(&vocab, &s), longest(&s));
                }
            };
            // Buckets are built by the walks that enter them: first a few, in any order.
            random_walks(&trie, &mut rng, round % 4);
            // A copy keeps the buckets built so far and builds the others itself.
            let trie = if round % 2 == 0 { trie.clone() } else { trie };
            for rank in 0..vocab.len() as u32 {
                let t = vocab.token(rank);
                assert_eq!(trie.longest(&vocab, t), Some(rank), "token {rank}");
                let want = if t.len() < 2 {
                    None
                } else {
                    longest(&t[..t.len() - 1])
                };
                assert_eq!(trie.next_prefix(rank), want.unwrap_or(NONE), "token {rank}");
            }
            random_walks(&trie, &mut rng, 200);
        }
    }
}
