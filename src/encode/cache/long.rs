//! The second level of the chunk cache: chunks of 16..=1024 bytes with any number of ids. Long
//! words of languages written with two or three bytes per letter (Russian, Hindi, Greek), runs
//! of CJK text, and the long identifiers, rules and indentation of code: a large share of their
//! bytes is in such chunks (docs/performance.md, 'Chunk cache').
//!
//! Keys and ids live in two arenas; a slot holds the chunk's hash and where its bytes and ids
//! are. Cleared when 3/4 of the slots or the arena budget are used, like the first level.

use super::short::{HASH_BITS, MAX_SLOTS};
use crate::runtime::pages::{prefetch, Table, Zeroable};

/// Longest chunk the second-level cache holds.
pub const LONG_KEY: usize = 1024;
pub(super) const LONG_SLOTS: usize = 1 << 15;
const MAX_LONG_SLOTS: usize = 1 << 18;
/// Bytes of keys plus ids the second level keeps before it starts over.
pub(super) const LONG_ARENA: usize = 32 << 20;

/// The second level: slots of hashes, and the arenas of the chunks' bytes and ids.
pub(super) struct LongCache {
    pub slots: Table<LongSlot>,
    mask: usize,
    used: usize,
    pub keys: Vec<u8>,
    ids: Vec<u32>,
}

// SAFETY: integers only; an all-zero slot is the empty slot.
unsafe impl Zeroable for LongSlot {}

#[derive(Clone, Copy, Default)]
pub(super) struct LongSlot {
    /// 0 marks an empty slot (a real hash of 0 is stored as 1).
    hash: u64,
    key_at: u32,
    ids_at: u32,
    key_len: u16,
    n_ids: u16,
}

/// A chunk's 16-byte block at `at` (zeros where it has none: never, as used here).
#[inline(always)]
fn block16(s: &[u8], at: usize) -> u128 {
    s.get(at..)
        .and_then(|r| r.first_chunk())
        .map_or(0, |w| u128::from_le_bytes(*w))
}

/// Where the 16-byte blocks that cover a chunk of `n` bytes, 16 to 64, start: four of them,
/// overlapping for a shorter chunk, so that hashing and comparing such a chunk (most are
/// 16-48 bytes) has no branch on its length. A loop over its blocks mispredicted its end at
/// almost every chunk.
#[inline(always)]
fn four_blocks(n: usize) -> [usize; 4] {
    let last = n.saturating_sub(16);
    [0, last.min(16), last.min(32), last]
}

/// Whether two byte strings of one length, at least 16, are equal: 16 bytes at a time, the
/// last 16 read where they end, without a call.
#[inline(always)]
pub(super) fn same_long_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    debug_assert!(n == b.len() && n >= 16);
    if n <= 64 {
        let differ = four_blocks(n)
            .iter()
            .fold(0, |d, &at| d | (block16(a, at) ^ block16(b, at)));
        return differ == 0 && n == b.len();
    }
    let mut at = 0;
    while at + 16 < n {
        if block16(a, at) != block16(b, at) {
            return false;
        }
        at += 16;
    }
    n == b.len() && block16(a, n - 16) == block16(b, n - 16)
}

/// Bits a second-level hash leaves clear, all those of a first-level slot's index: the
/// batch's hit loop reads the first-level slot at a chunk's recorded home before it knows the
/// chunk has no first-level key, and for such a chunk that home is its second-level hash.
/// With these bits clear the read is always of slot 0, in cache, instead of a random slot.
pub(super) const LONG_HASH_LOW: u64 = (1 << HASH_BITS) - 1;
const _: () = assert!(MAX_SLOTS as u64 - 1 <= LONG_HASH_LOW && 1 << HASH_BITS < 1u64 << 32);

/// The second level's hash of a chunk (of 16 bytes or more; a shorter one reads as
/// zero-padded); 0 marks an empty slot. Each 16-byte block is folded with a 64 x 64 -> 128
/// multiply under a key that depends on its place, and the folds are summed, so they do not
/// wait on each other; up to 64 bytes, the blocks are `four_blocks`, without a loop.
#[inline(always)]
pub(super) fn long_hash(chunk: &[u8]) -> u64 {
    const K: [u64; 10] = [
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
        0x4528_21e6_38d0_1377,
        0xbe54_66cf_34e9_0c6c,
        0xc0ac_29b7_c97c_50dd,
        0x3f84_d5b5_b547_0917,
        0x9216_d5d9_8979_fb1b,
        0xd131_0ba6_98df_b5ac,
    ];
    let fold = |at: usize, k: usize| {
        let w = block16(chunk, at);
        let p = u128::from(w as u64 ^ K[k]) * u128::from((w >> 64) as u64 ^ K[k + 1]);
        (p as u64) ^ (p >> 64) as u64
    };
    let n = chunk.len();
    let mut h = (n as u64).wrapping_mul(K[8]);
    if n <= 64 {
        for (k, at) in four_blocks(n).into_iter().enumerate() {
            h = h.wrapping_add(fold(at, 2 * k));
        }
    } else {
        let mut at = 0;
        while at + 16 < n {
            h = h.wrapping_add(fold(at, (at >> 3) & 6));
            at += 16;
        }
        h = h.wrapping_add(fold(n - 16, 8));
    }
    // The low bits clear: see `LONG_HASH_LOW`.
    ((h ^ (h >> 29)) & !LONG_HASH_LOW).max(LONG_HASH_LOW + 1)
}

impl LongCache {
    pub fn new() -> LongCache {
        LongCache {
            slots: Table::zeroed(LONG_SLOTS),
            mask: LONG_SLOTS - 1,
            used: 0,
            keys: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// The home slot of a chunk with this `long_hash`.
    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (hash >> 32) as usize & self.mask
    }

    /// Start loading the home slot of `chunk` (see [`prefetch`]) and return its `long_hash`,
    /// or 0 if it is too long for this level. Out of line, which keeps the batch's loop over
    /// short chunks fast (docs/performance.md, 'Chunk cache').
    #[inline(never)]
    pub fn prefetch_chunk(&self, chunk: &[u8]) -> usize {
        if chunk.len() > LONG_KEY {
            return 0;
        }
        let hash = long_hash(chunk);
        if let Some(slot) = self.slots.get(self.home(hash)) {
            prefetch(slot);
        }
        hash as usize
    }

    /// Append the cached ids of `chunk` and return true, or return false. A hit away from its
    /// home slot is swapped into it, as in the first level (see `ShortCache::get_or_insert`).
    pub fn lookup(&mut self, chunk: &[u8], hash: u64, out: &mut Vec<u32>) -> bool {
        let n = chunk.len();
        let home = self.home(hash);
        let mut i = home;
        loop {
            let slot = self.slots[i];
            if slot.hash == 0 {
                return false;
            }
            if slot.hash == hash && slot.key_len as usize == n {
                let at = slot.key_at as usize;
                if self.keys[at..at + n] == *chunk {
                    let ids = slot.ids_at as usize;
                    out.extend_from_slice(&self.ids[ids..ids + slot.n_ids as usize]);
                    self.slots.swap(i, home);
                    return true;
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The ids of `chunk` if its home slot holds it: the arena's ids from its first, at least
    /// `copy` of them and at least its own, and its number of ids. `None` if it is not at home
    /// (absent, or to be found further on by `lookup`) or is too near the arena's end for
    /// `copy`. Out of line, which keeps the batch's loop over first-level hits fast
    /// (docs/performance.md, 'Chunk cache').
    #[inline(never)]
    pub fn at_home(&self, chunk: &[u8], hash: u64, copy: usize) -> Option<(&[u32], usize)> {
        let slot = self.slots.get(self.home(hash))?;
        if hash == 0 || slot.hash != hash || slot.key_len as usize != chunk.len() {
            return None;
        }
        let at = slot.key_at as usize;
        if !same_long_bytes(self.keys.get(at..at + chunk.len())?, chunk) {
            return None;
        }
        let (from, n) = (slot.ids_at as usize, slot.n_ids as usize);
        Some((self.ids.get(from..from + n.max(copy))?, n))
    }

    fn clear(&mut self) {
        self.slots.fill(LongSlot::default());
        self.used = 0;
        self.keys.clear();
        self.ids.clear();
    }

    /// Double the slots (rehashing every entry), or clear everything once at `MAX_LONG_SLOTS`.
    fn make_room(&mut self) {
        let size = self.slots.len();
        if size >= MAX_LONG_SLOTS {
            self.clear();
            return;
        }
        let old = std::mem::replace(&mut self.slots, Table::zeroed(size * 2));
        self.mask = size * 2 - 1;
        for &slot in old.iter().filter(|s| s.hash != 0) {
            let mut j = self.home(slot.hash);
            while self.slots[j].hash != 0 {
                j = (j + 1) & self.mask;
            }
            self.slots[j] = slot;
        }
    }

    /// Remember `ids` for `chunk` (not already present).
    pub fn insert(&mut self, chunk: &[u8], hash: u64, ids: &[u32]) {
        let n = chunk.len();
        if n > LONG_KEY || ids.len() > u16::MAX as usize {
            return;
        }
        if self.keys.len() + 4 * self.ids.len() > LONG_ARENA {
            self.clear();
        } else if self.used >= self.slots.len() / 4 * 3 {
            self.make_room();
        }
        let mut i = self.home(hash);
        while self.slots[i].hash != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = LongSlot {
            hash,
            key_at: self.keys.len() as u32,
            ids_at: self.ids.len() as u32,
            key_len: n as u16,
            n_ids: ids.len() as u16,
        };
        self.keys.extend_from_slice(chunk);
        self.ids.extend_from_slice(ids);
        self.used += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Comparing and hashing see every byte of a long chunk, at every length up to past the
    /// four blocks without a loop, and at some longer ones.
    #[test]
    fn long_bytes_compare_and_hash_every_byte() {
        for n in (16..=81).chain([100, 1000, 1024]) {
            let a: Vec<u8> = (0..n).map(|i| (i * 13) as u8).collect();
            assert!(same_long_bytes(&a, &a.clone()), "{n}");
            assert!(
                long_hash(&a) & LONG_HASH_LOW == 0 && long_hash(&a) != 0,
                "{n}"
            );
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x40;
                assert!(!same_long_bytes(&a, &b), "{n} {i}");
                assert_ne!(long_hash(&a), long_hash(&b), "{n} {i}");
            }
        }
    }
}
