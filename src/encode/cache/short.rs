//! The first level of the chunk cache: chunks of at most 15 bytes ([`MAX_KEY`]), each packed
//! with its length into one `u128` key, so that a lookup compares one integer instead of
//! reading and comparing bytes elsewhere; up to 3 ids inline (more go to a spill arena), so a
//! hit reads one 32-byte slot. Nearly all chunks of prose hit once the cache is warm
//! (docs/performance.md, 'Chunk cache').
//!
//! Open addressing with linear probing; a hit away from its home slot is swapped into it
//! ([`ShortCache::get_or_insert`]), where the batch lookup reads it (`ChunkCache::lookup_batch`).

use crate::runtime::pages::{Table, Zeroable};

/// Most ids a slot holds inline; a chunk of more ids keeps them in the spill arena.
pub const MAX_IDS: usize = 3;
/// The level starts with this many slots (4 MB, two 2 MiB pages) and doubles when 3/4 full, up
/// to `MAX_SLOTS` (16 MB), then clears. Growing instead of clearing keeps a large corpus's
/// chunks; starting at 2^17 rather than 2^16 slots halves the chunks that share a home slot with
/// another and take turns in it (docs/performance.md, 'Chunk cache').
pub(super) const SLOTS: usize = 1 << 17;
pub(super) const MAX_SLOTS: usize = 1 << 19;
const _: () = assert!(MAX_SLOTS <= 1 << HASH_BITS, "homes reach every slot");

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(super) struct Slot {
    pub key: u128,
    pub n: u32,
    /// The ids if `n <= MAX_IDS`, else `ids[0]` is where they start in `spill`.
    pub ids: [u32; MAX_IDS],
}

// SAFETY: integers only; an all-zero slot is the empty slot.
unsafe impl Zeroable for Slot {}

/// The first level: slots of keys and inline ids, and the spill arena.
pub(super) struct ShortCache {
    pub slots: Table<Slot>,
    pub mask: usize,
    pub used: usize,
    /// Ids of chunks of more than `MAX_IDS` ids: gpt2 has no token for a run of spaces, so a
    /// 4-space indent after a newline is 5 ids. Cleared with the slots.
    pub spill: Vec<u32>,
}

impl ShortCache {
    pub fn new() -> ShortCache {
        ShortCache {
            slots: Table::zeroed(SLOTS),
            mask: SLOTS - 1,
            used: 0,
            spill: Vec::new(),
        }
    }

    /// The ids of the chunk whose key is `key`, computing and remembering them with `compute`
    /// on a miss.
    #[inline]
    pub fn get_or_insert(
        &mut self,
        key: u128,
        out: &mut Vec<u32>,
        compute: impl FnOnce(&mut Vec<u32>),
    ) {
        let home = hash128(key) & self.mask;
        let mut i = home;
        loop {
            let slot = &self.slots[i];
            if slot.key == key {
                // Found away from home: swap it into its home slot, where the batch lookup
                // finds it. Valid for linear probing: every slot from home to `i` is full, so
                // the entry moved from home to `i` is still on its own probe path. Chunks looked
                // up often so stay at home; chunks first seen when the table was crowded would
                // otherwise stay far from it and take the slow path at every lookup
                // (docs/performance.md, 'Chunk cache').
                if i != home {
                    self.slots.swap(i, home);
                    i = home;
                }
                self.emit(&self.slots[i], out);
                return;
            }
            if slot.key == 0 {
                break;
            }
            i = (i + 1) & self.mask;
        }
        let before = out.len();
        compute(out);
        let ids = &out[before..];
        if self.used >= self.slots.len() / 4 * 3 {
            self.make_room();
            i = hash128(key) & self.mask;
            while self.slots[i].key != 0 {
                i = (i + 1) & self.mask;
            }
        }
        let mut slot = Slot {
            key,
            n: ids.len() as u32,
            ids: [0; MAX_IDS],
        };
        if ids.len() <= MAX_IDS {
            slot.ids[..ids.len()].copy_from_slice(ids);
        } else {
            slot.ids[0] = self.spill.len() as u32;
            self.spill.extend_from_slice(ids);
        }
        self.slots[i] = slot;
        self.used += 1;
    }

    /// Append the ids of a slot that matched.
    #[inline(always)]
    fn emit(&self, slot: &Slot, out: &mut Vec<u32>) {
        let n = slot.n as usize;
        // Most chunks are one token: a push beats a copy call.
        if n == 1 {
            out.push(slot.ids[0]);
        } else if n <= MAX_IDS {
            out.extend_from_slice(&slot.ids[..n]);
        } else {
            let at = slot.ids[0] as usize;
            out.extend_from_slice(&self.spill[at..at + n]);
        }
    }

    /// Double the slots (rehashing every entry), or clear them once at `MAX_SLOTS`.
    fn make_room(&mut self) {
        let n = self.slots.len();
        if n >= MAX_SLOTS {
            self.slots.fill(Slot::default());
            self.used = 0;
            self.spill.clear();
            return;
        }
        let old = std::mem::replace(&mut self.slots, Table::zeroed(n * 2));
        self.mask = n * 2 - 1;
        for &slot in old.iter().filter(|s| s.key != 0) {
            let mut i = hash128(slot.key) & self.mask;
            while self.slots[i].key != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = slot;
        }
    }
}

/// Longest string a key holds (the 16th key byte is the length).
pub const MAX_KEY: usize = 15;

/// The key of a chunk of 1..=15 bytes: its bytes in order (zero-padded) and its length in the
/// top byte, built from a few overlapping loads instead of a variable-length copy, which
/// compiles to a `memmove` call (docs/performance.md, 'Chunk cache'). Keys are unique per
/// chunk.
#[inline]
pub fn key_of(chunk: &[u8]) -> Option<u128> {
    let n = chunk.len();
    let lo = |k: usize| u32::from_le_bytes(chunk[k..k + 4].try_into().unwrap_or_default()) as u64;
    let lo8 = |k: usize| u64::from_le_bytes(chunk[k..k + 8].try_into().unwrap_or_default());
    let (lo, hi) = match n {
        // An empty chunk would have key 0, the empty-slot marker; the splitter never makes one.
        0 => return None,
        1 => (chunk[0] as u64, 0),
        2 => (u16::from_le_bytes([chunk[0], chunk[1]]) as u64, 0),
        3 => (
            u32::from_le_bytes([chunk[0], chunk[1], chunk[2], 0]) as u64,
            0,
        ),
        // Bytes 4..n are the top lanes of the last four.
        4..=8 => (lo(0) | (lo(n - 4) >> (8 * (8 - n))) << 32, 0),
        // Bytes 8..n are the top lanes of the last eight.
        9..=MAX_KEY => (lo8(0), lo8(n - 8) >> (8 * (16 - n))),
        _ => return None,
    };
    Some(with_len(lo as u128 | (hi as u128) << 64, n))
}

/// What stands for the key of a chunk that has none (empty, or longer than `MAX_KEY`): its
/// length byte (255) is no chunk's, and it is neither 0, the empty-slot marker, so a lookup
/// that compares it with a slot's key finds nothing with no test of its own.
pub const NO_KEY: u128 = u128::MAX;

/// The key of a chunk of `n` bytes whose bytes are the first of `word` (16 bytes read from
/// the chunk's start, little-endian; the bytes past the chunk are dropped), or `NO_KEY` for
/// `n` of 0 or more than `MAX_KEY`. No branch: the key's bytes and length come from a table
/// (a variable 128-bit shift is several instructions and a branch).
#[inline(always)]
pub fn key_in(word: u128, n: usize) -> u128 {
    let (keep, len) = KEY_MASKS[n.min(MAX_KEY + 1)];
    word & keep | len
}

/// For `n` in 1..=15: the mask of a key's first `n` bytes, and `with_len(0, n)`; for 0 and 16,
/// no bytes and `NO_KEY`.
const KEY_MASKS: [(u128, u128); MAX_KEY + 2] = {
    let mut t = [(0u128, NO_KEY); MAX_KEY + 2];
    let mut n = 1;
    while n <= MAX_KEY {
        t[n] = ((1u128 << (8 * n)) - 1, with_len(0, n));
        n += 1;
    }
    t
};

#[inline(always)]
const fn with_len(bytes: u128, n: usize) -> u128 {
    bytes | (n as u128) << 120
}

/// Bits of [`hash128`]: a table indexed by it masks it to at most this many.
pub const HASH_BITS: u32 = 19;

/// A key's hash, `HASH_BITS` wide: the top bits of a multiplicative hash, which depend on
/// every bit of the key (lower bits of the product depend only on the chunk's first bytes, so
/// chunks of one length that share them would share a home slot and take turns on the lookup's
/// slow path: docs/performance.md, 'Chunk cache').
#[inline]
pub fn hash128(key: u128) -> usize {
    let h = (key as u64 ^ ((key >> 64) as u64).rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - HASH_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_loaded_alike() {
        let text: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(97) | 1).collect();
        // `key_in` on any 16 bytes read from a chunk's start: the key, or `NO_KEY` with none.
        let word = u128::from_le_bytes(text[3..19].try_into().unwrap());
        for n in 0..40 {
            let want = text.get(3..3 + n).and_then(key_of).unwrap_or(NO_KEY);
            assert_eq!(key_in(word, n), want, "{n}");
        }
        // Keys are unique: chunks differing in any one byte, or in length, differ in key.
        for n in 1..=MAX_KEY {
            let a: Vec<u8> = (1..=n as u8).collect();
            for p in 0..n {
                let mut b = a.clone();
                b[p] ^= 0x80;
                assert_ne!(key_of(&a), key_of(&b), "length {n}, byte {p}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert_ne!(key_of(&a), key_of(&longer), "length {n}");
        }
    }
}
