//! Chunk -> ids cache: most chunks of real text repeat, and most are one token.
//!
//! Caches are per thread (no locks on the hot path), one per recently used encoder. The first
//! level holds chunks of at most 15 bytes, stored inline with their length in one `u128`, with
//! up to 3 ids inline (more go to a spill arena), so a hit reads one 32-byte slot; about 99%
//! of prose chunks hit once the cache is warm (gigatoken reports 99.4% with the same idea).
//! Longer chunks, up to 1024 bytes, go to a second level with the bytes and ids in arenas.
//! Both levels double when 3/4 full and are cleared once at their largest size: simpler and,
//! on real text, no worse than an eviction policy, because the frequent chunks come back at
//! once. The slot tables are on 2 MiB pages where the OS allows (`pages.rs`).

use crate::pages::{prefetch, Table, Zeroable};
use crate::short_key::{hash128, key_in, key_of, HASH_BITS, MAX_KEY, NO_KEY};
use std::cell::RefCell;
use std::mem::MaybeUninit;

/// Most ids a first-level slot holds inline; a short chunk of more ids keeps them in the
/// level's spill arena.
pub const MAX_IDS: usize = 3;
/// The first level starts with this many slots (4 MB, two 2 MiB pages) and doubles when 3/4
/// full, up to `MAX_SLOTS` (16 MB), then clears. Growing instead of clearing keeps a large
/// corpus's chunks: with a fixed 65,536 slots, 4 MB of Python code cleared the cache again and
/// again. Starting at 2^17 rather than 2^16 slots halves the chunks that share a home slot
/// with another and take turns in it (gpt2, warm, the 0.25 MB of English: 2.2% of chunks took
/// the slow path, now 1.1%); warm, pure Rust, alternating runs: gpt2 on that English 6.10 ->
/// 5.88 ns a chunk, cl100k_base on Holmes 7.18 -> 6.70, o200k_base on code 8.02 -> 7.40, on
/// Russian level; first passes level.
const SLOTS: usize = 1 << 17;
const MAX_SLOTS: usize = 1 << 19;
const _: () = assert!(MAX_SLOTS <= 1 << HASH_BITS, "homes reach every slot");

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    key: u128,
    n: u32,
    /// The ids if `n <= MAX_IDS`, else `ids[0]` is where they start in `spill`.
    ids: [u32; MAX_IDS],
}

// SAFETY: integers only; an all-zero slot is the empty slot.
unsafe impl Zeroable for Slot {}

pub struct ChunkCache {
    owner: u64,
    slots: Table<Slot>,
    mask: usize,
    used: usize,
    /// Ids of short chunks of more than `MAX_IDS` ids: gpt2 has no token for a run of spaces,
    /// so a 4-space indent after a newline is 5 ids (7% of holmes's chunks, 8% of code's).
    /// Cleared with the slots.
    spill: Vec<u32>,
    long: LongCache,
    huge: HugeCache,
}

/// Longest chunk the second-level cache holds.
pub const LONG_KEY: usize = 1024;
const LONG_SLOTS: usize = 1 << 15;
const MAX_LONG_SLOTS: usize = 1 << 18;
/// Bytes of keys plus ids the second level keeps before it starts over.
const LONG_ARENA: usize = 32 << 20;

/// The second level, for chunks of 16..=1024 bytes with any number of ids: long words of
/// languages written with two or three bytes per letter (Russian, Hindi, Greek: half their
/// bytes are in such chunks), runs of CJK text (84% of Chinese bytes are in chunks of 16..128
/// bytes), and the long identifiers, rules and indentation of code. Keys and ids live in two
/// arenas; a slot holds the chunk's hash and where its bytes and ids are. Cleared when 3/4 of
/// the slots or the arena budget are used, like the first level.
struct LongCache {
    slots: Table<LongSlot>,
    mask: usize,
    used: usize,
    keys: Vec<u8>,
    ids: Vec<u32>,
}

// SAFETY: integers only; an all-zero slot is the empty slot.
unsafe impl Zeroable for LongSlot {}

#[derive(Clone, Copy, Default)]
struct LongSlot {
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
fn same_long_bytes(a: &[u8], b: &[u8]) -> bool {
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
const LONG_HASH_LOW: u64 = (1 << HASH_BITS) - 1;
const _: () = assert!(MAX_SLOTS as u64 - 1 <= LONG_HASH_LOW && 1 << HASH_BITS < 1u64 << 32);

/// The second level's hash of a chunk (of 16 bytes or more; a shorter one reads as
/// zero-padded); 0 marks an empty slot. Each 16-byte block is folded with a 64 x 64 -> 128
/// multiply under a key that depends on its place, and the folds are summed, so they do not
/// wait on each other; up to 64 bytes, the blocks are `four_blocks`, without a loop.
#[inline(always)]
fn long_hash(chunk: &[u8]) -> u64 {
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
    fn new() -> LongCache {
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
    /// or 0 if it is too long for this level. Out of line: the batch's loop over short chunks
    /// measured 5% slower on holmes with it inline.
    #[inline(never)]
    fn prefetch_chunk(&self, chunk: &[u8]) -> usize {
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
    /// home slot is swapped into it, as in the first level (see `ChunkCache::get_or_insert`).
    fn lookup(&mut self, chunk: &[u8], hash: u64, out: &mut Vec<u32>) -> bool {
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
    /// `SPILL_COPY` of them and at least its own, and its number of ids. `None` if it is not
    /// at home (absent, or to be found further on by `lookup`) or is too near the arena's end
    /// for `SPILL_COPY`. Out of line, so that the batch's loop over first-level hits stays as
    /// it was (inline, it was level on the 24 languages and maybe 5% slower on Holmes with
    /// cl100k_base).
    #[inline(never)]
    fn at_home(&self, chunk: &[u8], hash: u64) -> Option<(&[u32], usize)> {
        let slot = self.slots.get(self.home(hash))?;
        if hash == 0 || slot.hash != hash || slot.key_len as usize != chunk.len() {
            return None;
        }
        let at = slot.key_at as usize;
        if !same_long_bytes(self.keys.get(at..at + chunk.len())?, chunk) {
            return None;
        }
        let (from, n) = (slot.ids_at as usize, slot.n_ids as usize);
        Some((self.ids.get(from..from + n.max(SPILL_COPY))?, n))
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
    fn insert(&mut self, chunk: &[u8], hash: u64, ids: &[u32]) {
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

/// Bytes of chunks and ids the third level keeps (the oldest chunks go first).
const HUGE_BYTES: usize = 16 << 20;
/// Chunks the third level keeps: a lookup compares the hash of each.
const HUGE_ENTRIES: usize = 64;

/// The third level, for the few chunks longer than `LONG_KEY`: a megabyte of one letter, a
/// long run of base64 or of letters without a space. Each costs a search of `long.rs` (about
/// 10 MB/s for random letters) or a heap merge, against a hash and a compare (over 1 GB/s), so
/// the most recent ones are kept: encoding the same text again (`count`, then `encode`; a
/// truncation, then the encode) no longer searches them again. gigatoken and fastokens keep
/// such chunks too (their warm rows on the pathological inputs in `bench_encode.py`).
#[derive(Default)]
struct HugeCache {
    /// Oldest first.
    entries: std::collections::VecDeque<HugeEntry>,
    /// Bytes of chunks plus bytes of ids held.
    bytes: usize,
}

/// A chunk's hash, its bytes and its ids.
type HugeEntry = (u64, Box<[u8]>, Box<[u32]>);

impl HugeCache {
    fn lookup(&self, chunk: &[u8], hash: u64, out: &mut Vec<u32>) -> bool {
        match self
            .entries
            .iter()
            .find(|(h, c, _)| *h == hash && **c == *chunk)
        {
            Some((_, _, ids)) => {
                out.extend_from_slice(ids);
                true
            }
            None => false,
        }
    }

    fn insert(&mut self, chunk: &[u8], hash: u64, ids: &[u32]) {
        let size = chunk.len() + 4 * ids.len();
        if size > HUGE_BYTES {
            return;
        }
        while self.bytes + size > HUGE_BYTES || self.entries.len() >= HUGE_ENTRIES {
            let Some((_, c, i)) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= c.len() + 4 * i.len();
        }
        self.entries.push_back((hash, chunk.into(), ids.into()));
        self.bytes += size;
    }
}

impl ChunkCache {
    fn new(owner: u64) -> ChunkCache {
        ChunkCache {
            owner,
            slots: Table::zeroed(SLOTS),
            mask: SLOTS - 1,
            used: 0,
            spill: Vec::new(),
            long: LongCache::new(),
            huge: HugeCache::default(),
        }
    }

    /// The ids of `chunk`, computing and remembering them with `compute` on a miss.
    #[inline]
    pub fn get_or_insert(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<u32>,
        compute: impl FnOnce(&mut Vec<u32>),
    ) {
        let Some(key) = key_of(chunk) else {
            self.get_or_insert_long(chunk, long_hash(chunk), out, compute);
            return;
        };
        let home = hash128(key) & self.mask;
        let mut i = home;
        loop {
            let slot = &self.slots[i];
            if slot.key == key {
                // Found away from home: swap it into its home slot, where the batch lookup
                // finds it. Valid for linear probing: every slot from home to `i` is full, so
                // the entry moved from home to `i` is still on its own probe path. Chunks looked
                // up often so stay at home; without this, chunks first seen when the table was
                // crowded stayed far from it: code after the 24 languages (gpt2) took the slow
                // path for 20% of its chunks, at 233 MB/s against 406 for code alone.
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

    /// [`ChunkCache::get_or_insert`] for a chunk longer than a first-level key, whose
    /// `long_hash` is `hash`.
    #[inline(never)]
    fn get_or_insert_long(
        &mut self,
        chunk: &[u8],
        hash: u64,
        out: &mut Vec<u32>,
        compute: impl FnOnce(&mut Vec<u32>),
    ) {
        let second = chunk.len() <= LONG_KEY;
        let found = if second {
            self.long.lookup(chunk, hash, out)
        } else {
            self.huge.lookup(chunk, hash, out)
        };
        if !found {
            let before = out.len();
            compute(out);
            if second {
                self.long.insert(chunk, hash, &out[before..]);
            } else {
                self.huge.insert(chunk, hash, &out[before..]);
            }
        }
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
}

impl ChunkCache {
    /// Double the first level (rehashing every entry), or clear it once at `MAX_SLOTS`.
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

/// Chunks looked up together (see [`ChunkCache::lookup_batch`]): room for what the splitter
/// hands out at once (`pretokenize::BOUNDS` and one more block).
pub const BATCH: usize = 128;
/// A batch copies the ids of a spilled chunk of at most this many ids as a fixed-size block
/// (gpt2's indents after a newline are 5 to 16 ids: 7% of code's chunks).
const SPILL_COPY: usize = 16;
/// The most room for ids a batch asks of its output beyond the ids written before it: room
/// for a fixed `SPILL_COPY` ids per chunk of the batch, whatever their real number.
pub const MOST_RESERVED: usize = BATCH * SPILL_COPY;

impl ChunkCache {
    /// Look up the chunks `text[at[k]..at[k + 1]]`, appending their ids in order; `at`
    /// increases and stays inside `text` (as `Splitter::split_bounds` gives it).
    ///
    /// First every key is built and its home slot read, then the hits are emitted and the rest
    /// computed. The reads of the first loop do not depend on each other, so the CPU overlaps
    /// their cache misses; done one chunk at a time, between scanner steps, each miss stalled.
    /// Profiled on holmes with gpt2 (pure Rust, encode only), the slot read was half of the
    /// lookup's time; batching measured 3-8% faster on a loaded machine (see the issue note).
    /// A chunk found at its home in the second level is emitted in the same loop too (its
    /// bytes compared and its ids copied without a call): o200k_base on the 24 languages, warm,
    /// 45-48 -> 41-44 ns a chunk with a hash that copies nothing. With `long_hash` and
    /// `same_long_bytes` free of loops up to 64 bytes: cl100k_base Japanese 59.2 -> 55.4 ns a
    /// chunk, Chinese 48.8 -> 47.7 (best of 5).
    #[inline(always)]
    pub fn lookup_batch(
        &mut self,
        text: &[u8],
        at: &[usize],
        out: &mut Vec<u32>,
        mut compute: impl FnMut(&[u8], &mut Vec<u32>),
    ) {
        for first in (0..at.len().saturating_sub(1)).step_by(BATCH) {
            let last = (first + BATCH).min(at.len() - 1);
            self.lookup_up_to_batch(text, &at[first..=last], out, &mut compute);
        }
    }

    /// The first-level key and home slot of each chunk `text[at[k]..at[k + 1]]` (at most
    /// `BATCH` of them), written into `entries`, and the home slots loaded ahead. `NO_KEY`
    /// marks a chunk the first level does not hold; its second field is then its
    /// `long_hash` (0 when longer than the second level's keys), and its second-level home
    /// slot is loaded ahead too: gpt2 on the 24 languages (a Cyrillic word of eight letters is
    /// 16 bytes), that slot's cache miss was 12% of encoding.
    ///
    /// Out of line, compiled for the baseline: inlined into the encoder's loop, the loop
    /// reloaded more of its pointers and constants from the stack at every chunk. Pure Rust,
    /// warm, alternating runs: gpt2 on the 0.25 MB of English 4.83 -> 4.72 ns a chunk, o200k
    /// on code 6.20 -> 6.14; cl100k on Holmes level (5.33, 5.32), o200k on Russian 35.3 ->
    /// 35.7 (noise or a little worse).
    #[inline(never)]
    fn keys<'e>(
        &self,
        text: &[u8],
        at: &[usize],
        entries: &'e mut [MaybeUninit<(u128, usize)>; BATCH],
    ) -> &'e [(u128, usize)] {
        let n = at.len().saturating_sub(1).min(BATCH);
        let (slots, mask, long) = (self.slots.as_ptr(), self.mask, &self.long);
        // `keyless`: whether `key` is `NO_KEY`, from the chunk's length where it is at hand.
        let record = |entry: &mut MaybeUninit<(u128, usize)>, key, keyless, start, end| {
            let home = hash128(key) & mask;
            entry.write((key, home));
            // In the table: `mask` is its length less one.
            prefetch(slots.wrapping_add(home));
            if keyless {
                let chunk = text.get(start..end).unwrap_or_default();
                entry.write((NO_KEY, long.prefetch_chunk(chunk)));
            }
        };
        // Every batch but a text's last: 16 bytes can be read at each chunk's start, so each
        // key is one unchecked load, in a loop without bounds checks.
        let last_start = at.get(n.wrapping_sub(1)).copied().unwrap_or(usize::MAX);
        if last_start.checked_add(16).is_some_and(|e| e <= text.len()) {
            for (entry, w) in entries[..n].iter_mut().zip(at.windows(2)) {
                let (start, end) = (w[0], w[1]);
                // SAFETY: `start.min(last_start) + 16 <= text.len()`.
                let word = unsafe {
                    text.as_ptr()
                        .add(start.min(last_start))
                        .cast::<[u8; 16]>()
                        .read_unaligned()
                };
                let len = end.wrapping_sub(start);
                let key = key_in(u128::from_le_bytes(word), len);
                record(entry, key, len.wrapping_sub(1) >= MAX_KEY, start, end);
            }
        } else {
            // A text's last batch: a chunk within 16 bytes of the text's end reads the text's
            // last 16 bytes (the whole text, zero-padded, if shorter), moved down to its start.
            // (A copy of the chunk's bytes by its length, `key_of`, was 17% of encoding a text
            // of 16 characters.)
            let base = text.len().saturating_sub(16);
            let mut last = [0u8; 16];
            let tail = text.get(base..).unwrap_or_default();
            last[..tail.len()].copy_from_slice(tail);
            let last = u128::from_le_bytes(last);
            for (entry, w) in entries[..n].iter_mut().zip(at.windows(2)) {
                let (start, end) = (w[0], w[1]);
                let word = match text.get(start..).and_then(|r| r.first_chunk::<16>()) {
                    Some(word) => u128::from_le_bytes(*word),
                    // `base <= start < base + 16`: the shift is under 128 bits.
                    None => last >> (8 * (start - base)),
                };
                let len = end.wrapping_sub(start);
                let key = key_in(word, len);
                record(entry, key, len.wrapping_sub(1) >= MAX_KEY, start, end);
            }
        }
        // SAFETY: the loops above wrote the first `n` entries.
        unsafe { std::slice::from_raw_parts(entries.as_ptr().cast(), n) }
    }

    /// [`ChunkCache::lookup_batch`] for at most `BATCH` chunks.
    #[inline(always)]
    fn lookup_up_to_batch(
        &mut self,
        text: &[u8],
        at: &[usize],
        out: &mut Vec<u32>,
        compute: &mut impl FnMut(&[u8], &mut Vec<u32>),
    ) {
        // Not zeroed first (3 KB per batch; the memset was 3% of an o200k profile): the first
        // `n` are written by `keys` and only they are read.
        let mut key_of_chunk = [MaybeUninit::<(u128, usize)>::uninit(); BATCH];
        let key_of_chunk = self.keys(text, at, &mut key_of_chunk);
        let n = key_of_chunk.len();
        // The home slot is read here, not in the first loop: a miss earlier in this batch may
        // have grown or cleared the cache since (a stale hit once emitted an empty slot: a
        // token went missing on the 49,152nd distinct chunk). A grown table moved the chunk
        // away from its recorded home, which then misses and takes the slow path.
        let mut i = 0;
        while i < n {
            // Hits, until a miss: their ids are written straight into `out`'s spare room, a
            // fixed 3 (inline) or 16 (spilled) whatever their number, with no branch on it and
            // no copy call; `w` advances by the real number.
            out.reserve((n - i) * SPILL_COPY);
            let base = out.len();
            let room = out.spare_capacity_mut();
            let (slots, mask, spill, long) =
                (&self.slots[..], self.mask, &self.spill[..], &self.long);
            debug_assert!(mask < slots.len() && (n - i) * SPILL_COPY <= room.len());
            let (to, room_len) = (room.as_mut_ptr().cast::<u32>(), room.len());
            let mut w = 0;
            // `room` held `SPILL_COPY` ids per chunk left when this loop started, and `w` leaves
            // `SPILL_COPY` for each chunk still to come (it grows by at most `SPILL_COPY` a
            // chunk, or by more only where that is checked), so `SPILL_COPY` ids always fit
            // from `w`.
            while i < n {
                let (key, home) = key_of_chunk[i];
                // SAFETY: `mask` is the table's length less one.
                let slot = unsafe { slots.get_unchecked(home & mask) };
                // `NO_KEY` is no slot's key: a chunk without one is looked for at its home in
                // the second level (loaded ahead by `keys`), where `home` is its hash. (A hit
                // there away from home, or with many ids, takes the slow path below.)
                if slot.key != key {
                    if key != NO_KEY {
                        break;
                    }
                    let Some((from, len)) = long.at_home(&text[at[i]..at[i + 1]], home as u64)
                    else {
                        break;
                    };
                    if len <= SPILL_COPY {
                        // SAFETY: `SPILL_COPY` ids fit from `w` (above), and `from` has them.
                        unsafe {
                            to.add(w)
                                .copy_from_nonoverlapping(from.as_ptr(), SPILL_COPY)
                        };
                    } else {
                        // More ids (runs of CJK letters with gpt2 and cl100k_base): copied
                        // if they leave `SPILL_COPY` for each chunk after this one, which
                        // keeps the rule above; else the slow path, with room made for them.
                        if w + len + (n - i - 1) * SPILL_COPY > room_len {
                            break;
                        }
                        // SAFETY: `from` has `len` ids, and they fit from `w` (just checked).
                        unsafe { to.add(w).copy_from_nonoverlapping(from.as_ptr(), len) };
                    }
                    w += len;
                    i += 1;
                    continue;
                }
                let len = slot.n as usize;
                if len <= MAX_IDS {
                    // SAFETY: `MAX_IDS <= SPILL_COPY` ids fit from `w` (above).
                    unsafe { to.add(w).cast::<[u32; MAX_IDS]>().write_unaligned(slot.ids) };
                } else {
                    let at = slot.ids[0] as usize;
                    match spill.get(at..at + SPILL_COPY) {
                        Some(from) if len <= SPILL_COPY => {
                            // SAFETY: `SPILL_COPY` ids fit from `w` (above).
                            unsafe {
                                to.add(w)
                                    .copy_from_nonoverlapping(from.as_ptr(), SPILL_COPY)
                            };
                        }
                        // Longer, or too near the arena's end for a fixed copy.
                        _ => break,
                    }
                }
                w += len;
                i += 1;
            }
            // SAFETY: every id below `base + w` was written above: `w` advances by a hit's
            // `len` only after at least `len` of its ids were written from `w`, all within
            // `room`, which is `out`'s allocation past `base`.
            unsafe { out.set_len(base + w) };
            if i < n {
                // `at` holds increasing boundaries inside `text` (`Splitter::split_bounds`).
                let chunk = &text[at[i]..at[i + 1]];
                match key_of_chunk[i] {
                    (NO_KEY, hash) if hash != 0 => {
                        self.get_or_insert_long(chunk, hash as u64, out, |o| compute(chunk, o))
                    }
                    _ => self.get_or_insert(chunk, out, |o| compute(chunk, o)),
                }
                i += 1;
            }
        }
    }
}

/// Caches a thread keeps, one per encoder, most recently used first. More than one, so that
/// code alternating between tokenizers (`compare`, a loop encoding each text with two of them)
/// does not build a fresh cache on every call. The caches of dropped encoders are pushed out
/// by newer ones, so a thread holds at most this many. Measured: 20,000 lines of holmes, each
/// encoded with gpt2 then o200k_base, took 1.95 s with one cache per thread (a new one at
/// every switch) and 0.025 s with four.
const CACHES_PER_THREAD: usize = 4;

thread_local! {
    static CACHES: RefCell<Vec<ChunkCache>> = const { RefCell::new(Vec::new()) };
}

/// Run `f` with this thread's cache for encoder `owner`.
#[inline]
pub fn with_cache<R>(owner: u64, f: impl FnOnce(&mut ChunkCache) -> R) -> R {
    CACHES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut caches) => {
            match caches.iter().position(|c| c.owner == owner) {
                Some(0) => {}
                Some(i) => caches[..=i].rotate_right(1),
                None => {
                    caches.truncate(CACHES_PER_THREAD - 1);
                    caches.insert(0, ChunkCache::new(owner));
                }
            }
            f(&mut caches[0])
        }
        // Re-entered on this thread (not done by tokenmill itself): use a throwaway cache.
        Err(_) => f(&mut ChunkCache::new(owner)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_misses_and_limits() {
        let mut c = ChunkCache::new(1);
        let mut out = Vec::new();
        let mut calls = 0;
        for _ in 0..3 {
            c.get_or_insert(b"hello", &mut out, |o| {
                calls += 1;
                o.extend_from_slice(&[1, 2]);
            });
        }
        assert_eq!(calls, 1);
        assert_eq!(out, [1, 2, 1, 2, 1, 2]);
        // Zero bytes and lengths are part of the key.
        out.clear();
        c.get_or_insert(b"hello\0", &mut out, |o| o.push(9));
        c.get_or_insert(b"", &mut out, |o| o.push(7));
        assert_eq!(out, [9, 7]);
        // Longer than 15 bytes (the second level), or more than 3 ids (the spill arena).
        out.clear();
        let mut calls = 0;
        for chunk in [
            &b"0123456789abcdef"[..],
            b"x",
            b"0123456789abcdef",
            b"x",
            b"xy",
        ] {
            c.get_or_insert(chunk, &mut out, |o| {
                calls += 1;
                o.extend_from_slice(&[1, 2, 3, chunk.len() as u32]);
            });
        }
        assert_eq!(calls, 3);
        assert_eq!(
            out,
            [1, 2, 3, 16, 1, 2, 3, 1, 1, 2, 3, 16, 1, 2, 3, 1, 1, 2, 3, 2]
        );
        // A batch whose first chunk is a miss that grows or clears the cache: the later hits,
        // read before, must not be served from the moved or emptied slots.
        for (fill, grows) in [(SLOTS / 4 * 3 - 1, true), (MAX_SLOTS / 4 * 3 - 1, false)] {
            let mut c = ChunkCache::new(2);
            for i in 0..fill as u32 {
                c.get_or_insert(&i.to_le_bytes(), &mut out, |o| o.push(i));
            }
            c.get_or_insert(b"kept", &mut out, |o| o.push(42));
            out.clear();
            c.lookup_batch(b"newkeptkept", &[0, 3, 7, 11], &mut out, |ch, o| {
                o.push(if ch == b"new" { 7 } else { 42 })
            });
            assert_eq!(out, [7, 42, 42]);
            if grows {
                assert_eq!(c.slots.len(), 2 * SLOTS);
                assert_eq!(c.used, fill + 2, "growing keeps every entry");
                for i in 0..fill as u32 {
                    out.clear();
                    c.get_or_insert(&i.to_le_bytes(), &mut out, |_| panic!("lost {i}"));
                    assert_eq!(out, [i]);
                }
            } else {
                assert_eq!(c.used, 2, "at the largest size the miss cleared the cache");
            }
        }
        // Second level: chunks of 16..=1024 bytes, any number of ids, checked byte for byte.
        let mut c = ChunkCache::new(3);
        let long: Vec<u8> = (0..1025u32).map(|i| (i * 7 % 251) as u8).collect();
        for n in [16, 17, 31, 60, 200, 1024] {
            for flip in [None, Some(0), Some(n - 1), Some(n / 2)] {
                let mut chunk = long[..n].to_vec();
                if let Some(p) = flip {
                    chunk[p] ^= 0x80;
                }
                let want: Vec<u32> = (0..n as u32 / 3)
                    .map(|i| i + 1000 * n as u32 + flip.map_or(999, |p| p as u32))
                    .collect();
                let mut calls = 0;
                for _ in 0..2 {
                    out.clear();
                    c.get_or_insert(&chunk, &mut out, |o| {
                        calls += 1;
                        o.extend_from_slice(&want);
                    });
                    assert_eq!(out, want, "length {n}, flip {flip:?}");
                }
                assert_eq!(calls, 1, "length {n}, flip {flip:?}");
            }
        }
        // Longer than LONG_KEY: the third level (see `huge_chunks_are_kept_within_the_budget`).
        let mut calls = 0;
        for _ in 0..2 {
            c.get_or_insert(&long, &mut out, |o| {
                calls += 1;
                o.push(1);
            });
        }
        assert_eq!(calls, 1);
        // Past the arena budget it starts over and keeps answering right.
        for i in 0..(LONG_ARENA / 1000 + 10) as u32 {
            let mut chunk = long[..1000].to_vec();
            chunk[..4].copy_from_slice(&i.to_le_bytes());
            for _ in 0..2 {
                out.clear();
                c.get_or_insert(&chunk, &mut out, |o| o.extend([i, i + 1]));
                assert_eq!(out, [i, i + 1]);
            }
        }
        assert!(c.long.keys.len() <= LONG_ARENA + LONG_KEY);
        // Each thread keeps the caches of its last few encoders.
        for owner in [100, 101, 100, 102, 103, 100, 104] {
            with_cache(owner, |c| assert_eq!(c.owner, owner));
        }
        CACHES.with(|cell| {
            let owners: Vec<u64> = cell.borrow().iter().map(|c| c.owner).collect();
            assert_eq!(owners, [104, 100, 103, 102]);
        });
        // Filling past the limit grows, then clears, and keeps working; spilled ids (more
        // than MAX_IDS) stay right through both, and the spill arena is cleared too.
        let spilled = |i: u32| [i, i + 1, i + 2, i + 3, i % 7];
        for i in 0..(MAX_SLOTS as u32) {
            out.clear();
            let key = i.to_le_bytes();
            if i % 5 == 0 {
                c.get_or_insert(&key, &mut out, |o| o.extend(spilled(i)));
                c.lookup_batch(&[key, key].concat(), &[0, 4, 8], &mut out, |_, _| {
                    panic!("miss {i}")
                });
                assert_eq!(out, [spilled(i), spilled(i), spilled(i)].concat());
            } else {
                c.get_or_insert(&key, &mut out, |o| o.push(i));
                assert_eq!(out, [i]);
            }
        }
        assert!(c.spill.len() < MAX_SLOTS / 2, "cleared with the slots");
    }

    /// Chunks longer than the second level's keys: found again while they fit the budget,
    /// never mixed up with another chunk of the same length, the oldest dropped first.
    #[test]
    fn huge_chunks_are_kept_within_the_budget() {
        let mut c = ChunkCache::new(1);
        let calls = std::cell::Cell::new(0);
        let get = |c: &mut ChunkCache, fill: u8, len: usize| {
            let chunk = vec![fill; len];
            let mut out = Vec::new();
            c.get_or_insert(&chunk, &mut out, |o| {
                calls.set(calls.get() + 1);
                o.extend([fill as u32, len as u32]);
            });
            assert_eq!(out, [fill as u32, len as u32]);
        };
        get(&mut c, b'a', 5000);
        get(&mut c, b'b', 5000);
        get(&mut c, b'a', 5000);
        get(&mut c, b'b', 5000);
        assert_eq!(calls.get(), 2);
        // Two chunks of 6 MB fit the 16 MB budget with the first two; a third pushes out the
        // oldest (`a`, then `b`), and the 6 MB chunks stay.
        get(&mut c, b'x', 6 << 20);
        get(&mut c, b'y', 6 << 20);
        get(&mut c, b'z', 6 << 20);
        assert_eq!(calls.get(), 5);
        get(&mut c, b'y', 6 << 20);
        get(&mut c, b'z', 6 << 20);
        assert_eq!(calls.get(), 5);
        get(&mut c, b'a', 5000);
        assert_eq!(calls.get(), 6);
        // Over the budget alone: never kept.
        get(&mut c, b'w', 17 << 20);
        get(&mut c, b'w', 17 << 20);
        assert_eq!(calls.get(), 8);
        // At most `HUGE_ENTRIES` chunks: the 64 latest of 65 are found, the first is not.
        for len in 2000..2000 + HUGE_ENTRIES + 1 {
            get(&mut c, b'v', len);
        }
        assert_eq!(calls.get(), 8 + HUGE_ENTRIES + 1);
        for len in 2001..2000 + HUGE_ENTRIES + 1 {
            get(&mut c, b'v', len);
        }
        assert_eq!(calls.get(), 8 + HUGE_ENTRIES + 1);
        get(&mut c, b'v', 2000);
        assert_eq!(calls.get(), 8 + HUGE_ENTRIES + 2);
    }

    /// Hits found away from their home slot are swapped into it: in a crowded table (both
    /// levels), every chunk is still found, with its own ids, whatever the order of lookups.
    #[test]
    fn hits_moved_home_stay_found() {
        let mut c = ChunkCache::new(1);
        // 45,000 short chunks fill 69% of the first level's 65,536 slots (it grows at 75%),
        // and 20,000 long ones 61% of the second level's 32,768: long probe runs in both.
        let chunk = |k: u32| {
            if k < 45_000 {
                format!("{k}").into_bytes()
            } else {
                format!("a long chunk, number {k}").into_bytes()
            }
        };
        let ids = |k: u32| vec![k, k.wrapping_mul(7), 3];
        let n = 65_000u32;
        let mut out = Vec::new();
        for k in 0..n {
            c.get_or_insert(&chunk(k), &mut out, |o| o.extend(ids(k)));
        }
        assert_eq!(c.slots.len(), SLOTS);
        assert_eq!(c.long.slots.len(), LONG_SLOTS);
        // Three passes in different orders (each moves the chunks it finds), all hits.
        let mut state = 12345u64;
        for pass in 0..3 {
            let mut order: Vec<u32> = (0..n).collect();
            for i in (1..order.len()).rev() {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                order.swap(i, (state >> 33) as usize % (i + 1));
            }
            for k in order {
                out.clear();
                c.get_or_insert(&chunk(k), &mut out, |_| {
                    panic!("pass {pass}: chunk {k} lost")
                });
                assert_eq!(out, ids(k), "pass {pass}: chunk {k}");
            }
        }
    }

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

    /// A hash of a chunk, from which the batch tests make up its ids.
    fn fake_hash(chunk: &[u8]) -> u32 {
        chunk
            .iter()
            .fold(7u32, |h, &b| h.wrapping_mul(31) ^ b as u32)
    }

    /// Batches of long chunks (16 to 300 bytes, many repeated, some with more ids than a
    /// block copy holds), whose hits come from the second level inside the batch loop, give
    /// the ids of each chunk in order, round after round.
    #[test]
    fn long_chunks_in_batches_equal_single_lookups() {
        let ids = |chunk: &[u8]| -> Vec<u32> {
            let h = fake_hash(chunk);
            (0..1 + h % 40).map(|k| h.wrapping_add(k)).collect()
        };
        let mut state = 99u64;
        let mut next = |below: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as usize % below
        };
        let kinds: Vec<Vec<u8>> = (0..40)
            .map(|k| (0..16 + next(285)).map(|i| (i * 7 + k) as u8).collect())
            .collect();
        let mut c = ChunkCache::new(5);
        for round in 0..40 {
            let (mut text, mut bounds, mut want) = (Vec::new(), vec![0], Vec::new());
            for _ in 0..1 + next(2 * BATCH) {
                let chunk = &kinds[next(kinds.len())];
                text.extend_from_slice(chunk);
                bounds.push(text.len());
                want.extend(ids(chunk));
            }
            let mut out = vec![7];
            c.lookup_batch(&text, &bounds, &mut out, |ch, o| o.extend(ids(ch)));
            assert_eq!(out[1..], want[..], "round {round}");
        }
    }

    /// Batches of hits and misses of 1 to 20 ids (inline, spilled, spilled past the fixed
    /// copy), longer than `BATCH`, give the ids of the chunks one by one, in order.
    #[test]
    fn batches_equal_single_lookups() {
        let ids = |chunk: &[u8]| -> Vec<u32> {
            let h = fake_hash(chunk);
            let n = [1, 1, 1, 2, 3, 4, 5, 15, 16, 17, 20][h as usize % 11];
            (0..n).map(|k| h.wrapping_add(k)).collect()
        };
        let text: Vec<u8> = (0..4000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 % 9)
            .collect();
        let mut c = ChunkCache::new(4);
        let mut state = 12345u64;
        for round in 0..300 {
            let (mut chunks, mut bounds) = (Vec::new(), vec![0]);
            let mut at = 0;
            // Up to 1.5 batches; every tenth round a text of a few short chunks.
            let most = if round % 10 == 0 {
                1 + round % 7
            } else {
                (round % 3 + 1) * BATCH / 2
            };
            while at < text.len() && chunks.len() < most {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let len = 1 + (state >> 33) as usize % 20;
                let end = (at + len).min(text.len());
                chunks.push(&text[at..end]);
                bounds.push(end);
                at = end;
            }
            let want: Vec<u32> = chunks.iter().flat_map(|ch| ids(ch)).collect();
            let mut out = vec![99];
            // Every other round, the text ends with its last chunk (its last batch reads keys
            // near the text's end), and is short in a few.
            let text = if round % 2 == 0 {
                &text[..at]
            } else {
                &text[..]
            };
            c.lookup_batch(text, &bounds, &mut out, |ch, o| o.extend(ids(ch)));
            assert_eq!(out[0], 99);
            assert_eq!(out[1..], want[..], "round {round}");
        }
    }
}
