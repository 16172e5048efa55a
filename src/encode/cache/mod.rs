//! Chunk -> ids cache: most chunks of real text repeat, and most are one token.
//!
//! Caches are per thread (no locks on the hot path), one per recently used encoder
//! ([`with_cache`]). Three levels, by the chunk's length: chunks of at most 15 bytes packed into
//! one integer key ([`short`]), chunks of up to 1024 bytes with their bytes and ids in arenas
//! ([`long`]), and the few longer ones, the most recent kept whole ([`huge`]). The first two
//! double when 3/4 full and are cleared once at their largest size: simpler and, on real text,
//! no worse than an eviction policy, because the frequent chunks come back at once. Their slot
//! tables are on 2 MiB pages where the OS allows (`runtime::pages`).
//!
//! The encoder looks chunks up a batch at a time ([`ChunkCache::lookup_batch`]), so that the
//! reads of their slots overlap.

mod huge;
mod long;
mod short;

use crate::runtime::pages::prefetch;
use huge::HugeCache;
use long::{long_hash, LongCache, LONG_KEY};
use short::{hash128, key_in, key_of, ShortCache, MAX_IDS, MAX_KEY, NO_KEY};
use std::cell::RefCell;
use std::mem::MaybeUninit;

/// One encoder's chunk cache on one thread: its three levels.
pub struct ChunkCache {
    owner: u64,
    short: ShortCache,
    long: LongCache,
    huge: HugeCache,
}

impl ChunkCache {
    fn new(owner: u64) -> ChunkCache {
        ChunkCache {
            owner,
            short: ShortCache::new(),
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
        match key_of(chunk) {
            Some(key) => self.short.get_or_insert(key, out, compute),
            None => self.get_or_insert_long(chunk, long_hash(chunk), out, compute),
        }
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
}

/// Chunks looked up together (see [`ChunkCache::lookup_batch`]): room for what the splitter
/// hands out at once (`pretokenize::BOUNDS` and one more block).
pub const BATCH: usize = 128;
/// A batch copies the ids of a spilled chunk of at most this many ids as a fixed-size block
/// (gpt2's indents after a newline are 5 to 16 ids).
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
    /// their cache misses; done one chunk at a time, between scanner steps, each miss stalls
    /// (the slot read is much of a lookup's time: docs/performance.md, 'Chunk cache'). A chunk
    /// found at its home in the second level is emitted in the same loop too, its bytes
    /// compared and its ids copied without a call or a loop up to 64 bytes (`long_hash`,
    /// `same_long_bytes`).
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
    /// slot is loaded ahead too (a Cyrillic word of eight letters is 16 bytes, a second-level
    /// chunk).
    ///
    /// Out of line, compiled for the baseline: inlined into the encoder's loop, the loop
    /// reloads more of its pointers and constants from the stack at every chunk
    /// (docs/performance.md, 'Chunk cache').
    #[inline(never)]
    fn keys<'e>(
        &self,
        text: &[u8],
        at: &[usize],
        entries: &'e mut [MaybeUninit<(u128, usize)>; BATCH],
    ) -> &'e [(u128, usize)] {
        let n = at.len().saturating_sub(1).min(BATCH);
        let (slots, mask, long) = (self.short.slots.as_ptr(), self.short.mask, &self.long);
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
            // last 16 bytes (the whole text, zero-padded, if shorter), moved down to its start,
            // not a copy of the chunk's bytes by its length (`key_of`), which is a large share
            // of encoding a short text (docs/performance.md, 'Chunk cache').
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
        // Not zeroed first (3 KB per batch, a `memset` at every batch): the first `n` are
        // written by `keys` and only they are read.
        let mut key_of_chunk = [MaybeUninit::<(u128, usize)>::uninit(); BATCH];
        let key_of_chunk = self.keys(text, at, &mut key_of_chunk);
        let n = key_of_chunk.len();
        // The home slot is read here, not in the first loop: a miss earlier in this batch may
        // have grown or cleared the cache since, and a slot read before would then be stale
        // (an empty slot emitted as a hit). A grown table moved the chunk away from its
        // recorded home, which then misses and takes the slow path.
        let mut i = 0;
        while i < n {
            // Hits, until a miss: their ids are written straight into `out`'s spare room, a
            // fixed 3 (inline) or 16 (spilled) whatever their number, with no branch on it and
            // no copy call; `w` advances by the real number.
            out.reserve((n - i) * SPILL_COPY);
            let base = out.len();
            let room = out.spare_capacity_mut();
            let (slots, mask, spill, long) = (
                &self.short.slots[..],
                self.short.mask,
                &self.short.spill[..],
                &self.long,
            );
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
                    let Some((from, len)) =
                        long.at_home(&text[at[i]..at[i + 1]], home as u64, SPILL_COPY)
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
/// by newer ones, so a thread holds at most this many (docs/performance.md, 'Chunk cache').
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
    use super::huge::HUGE_ENTRIES;
    use super::long::{LONG_ARENA, LONG_SLOTS};
    use super::short::{MAX_SLOTS, SLOTS};
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
                assert_eq!(c.short.slots.len(), 2 * SLOTS);
                assert_eq!(c.short.used, fill + 2, "growing keeps every entry");
                for i in 0..fill as u32 {
                    out.clear();
                    c.get_or_insert(&i.to_le_bytes(), &mut out, |_| panic!("lost {i}"));
                    assert_eq!(out, [i]);
                }
            } else {
                assert_eq!(
                    c.short.used, 2,
                    "at the largest size the miss cleared the cache"
                );
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
        assert!(
            c.short.spill.len() < MAX_SLOTS / 2,
            "cleared with the slots"
        );
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
        // Short chunks fill 69% of the first level's slots (it grows at 75%), and long ones 61%
        // of the second level's: long probe runs in both.
        let short = (SLOTS * 69 / 100) as u32;
        let n = short + (LONG_SLOTS * 61 / 100) as u32;
        let chunk = |k: u32| {
            if k < short {
                format!("{k}").into_bytes()
            } else {
                format!("a long chunk, number {k}").into_bytes()
            }
        };
        let ids = |k: u32| vec![k, k.wrapping_mul(7), 3];
        let mut out = Vec::new();
        for k in 0..n {
            c.get_or_insert(&chunk(k), &mut out, |o| o.extend(ids(k)));
        }
        assert_eq!(c.short.slots.len(), SLOTS);
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
