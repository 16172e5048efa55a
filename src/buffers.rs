//! Buffers for the ids of a text: sized so that they never grow, on huge pages, and used again.
//!
//! In this project's virtual machine every page of memory new to the process is expensive: a
//! 4 KiB page fault costs about 2.4 us (filling 2 MB one page at a time: 1.1-1.3 ms), and even
//! on 2 MiB pages the kernel's zeroing ran at about 2 GB/s (31 MB of ids for gpt2 on the 24
//! languages: 15 ms, against about 40 ms to encode them on 2 threads). So:
//! - a buffer of 2 MiB or more is a mapping of its own, advised `MADV_HUGEPAGE` ([`with_room`]);
//! - buffers are handed out as [`Ids`], which give them back when dropped (the Python bindings
//!   make one the owner of a numpy array's data, so this happens when the array is freed), and
//!   the next large request takes one, its pages already in place. At most 4 buffers, with
//!   256 MB of room in all, are kept.
//!
//! The Python bindings also take one as room for a long text they convert to UTF-8
//! (`py/text.rs`), viewed as bytes, and give it back once the text is encoded.

use crate::pages::HUGE_PAGE;
use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard};

/// A buffer of ids that is given back for use again when dropped (if large enough to keep).
/// It derefs to its `Vec`, so the encoders write into it as into any other.
#[derive(Default)]
pub struct Ids(Vec<u32>);

impl Ids {
    /// The `Vec`, no longer given back when done with.
    pub fn into_vec(mut self) -> Vec<u32> {
        std::mem::take(&mut self.0)
    }
}

impl From<Vec<u32>> for Ids {
    fn from(ids: Vec<u32>) -> Ids {
        Ids(ids)
    }
}

impl Deref for Ids {
    type Target = Vec<u32>;
    fn deref(&self) -> &Vec<u32> {
        &self.0
    }
}

impl DerefMut for Ids {
    fn deref_mut(&mut self) -> &mut Vec<u32> {
        &mut self.0
    }
}

impl AsRef<[u32]> for Ids {
    fn as_ref(&self) -> &[u32] {
        &self.0
    }
}

impl Drop for Ids {
    fn drop(&mut self) {
        KEPT.give_back(std::mem::take(&mut self.0))
    }
}

/// Texts up to this size get room for all the ids they can have (`for_text`).
pub const ALL_IDS_UP_TO: usize = 256 << 20;

/// Room for the ids of a text of `bytes` bytes, all of them (`encode::room_for`), so the buffer
/// never grows (room never written costs no memory). A buffer sized for English (a quarter of
/// the bytes) grew twice for gpt2 on the multilingual files (0.68 ids per byte), and each
/// larger one was faulted in again on 4 KiB pages: 140 -> 170 MB/s from Python once sized for
/// all. Texts over `ALL_IDS_UP_TO` get room for half their bytes instead, and grow if they need
/// more: an allocation of many times the machine's memory may be refused.
pub fn for_text(bytes: usize) -> Ids {
    with_room(if bytes <= ALL_IDS_UP_TO {
        crate::encode::room_for(bytes)
    } else {
        bytes / 2
    })
}

/// Texts up to this many bytes are encoded into a buffer their thread keeps
/// ([`exact_for_text`]).
#[cfg_attr(not(feature = "python"), allow(dead_code))]
const SCRATCH_TEXT: usize = 64 << 10;

thread_local! {
    /// The buffer of [`exact_for_text`], taken out while in use.
    static SCRATCH: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// The ids `fill` writes for a text of `bytes` bytes (onto an empty buffer with
/// [`for_text`]'s room), in a buffer of their own size if the text is short.
///
/// A short text is encoded into a buffer this thread keeps, and its ids copied out. Room for
/// all the ids a text can have is 8 KiB more than its bytes (`encode::room_for`), and a batch
/// of many short texts allocated that for each, on its threads, to be freed on Python's:
/// glibc gave the memory back to the kernel and faulted it in again on every call (a batch of
/// 15,608 texts of 16 characters on 2 threads: page faults were most of the time, and 2
/// threads ran at a quarter of the speed of one).
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub fn exact_for_text<E>(
    bytes: usize,
    fill: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
) -> Result<Ids, E> {
    if bytes > SCRATCH_TEXT {
        let mut out = for_text(bytes);
        fill(&mut out)?;
        return Ok(out);
    }
    let mut scratch = SCRATCH.try_with(Cell::take).unwrap_or_default();
    scratch.clear();
    scratch.reserve(crate::encode::room_for(bytes));
    let ids = fill(&mut scratch).map(|()| Ids(scratch.to_vec()));
    let _ = SCRATCH.try_with(|kept| kept.set(scratch));
    ids
}

/// An empty buffer with room for `n` ids. From 2 MiB of room on, it is a kept buffer with
/// that room if there is one, else a fresh mapping on huge pages.
pub fn with_room(n: usize) -> Ids {
    let bytes = n.saturating_mul(4);
    if bytes < HUGE_PAGE {
        return Ids(Vec::with_capacity(n));
    }
    if let Some(ids) = KEPT.take(n) {
        return Ids(ids);
    }
    // glibc serves a request of `ALWAYS_MAPPED` or more with a mapping of its own. Below it,
    // it may carve the buffer out of heap it gave back to the OS earlier and fill it one 4 KiB
    // page fault at a time (40-50 ms of kernel time per call for one text on 2 threads here),
    // so smaller buffers ask for that much room: unwritten room costs nothing.
    Ids(advised(n.max(ALWAYS_MAPPED / 4)))
}

/// glibc's dynamic mmap threshold starts at 128 KiB and rises to the size of each mapped
/// buffer freed, but never above 32 MiB on 64-bit targets (`DEFAULT_MMAP_THRESHOLD_MAX`).
const ALWAYS_MAPPED: usize = 32 << 20;

/// An empty `Vec` with room for `n` ids, the whole 2 MiB pages inside it advised
/// `MADV_HUGEPAGE` (the first and last partial pages stay on 4 KiB pages).
fn advised(n: usize) -> Vec<u32> {
    let v: Vec<u32> = Vec::with_capacity(n);
    advise_huge_pages(v.as_ptr().cast(), v.capacity().saturating_mul(4));
    v
}

/// Advises `MADV_HUGEPAGE` for the whole 2 MiB pages inside the `bytes` bytes at `start`,
/// memory the caller owns (the first and last partial pages stay on 4 KiB pages): pages not
/// yet in memory then come in 2 MiB at a time. Failure (huge pages off, an old kernel) only
/// means ordinary pages, so it is ignored.
pub fn advise_huge_pages(start: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = start as usize;
        let end = start.saturating_add(bytes);
        let first = start.next_multiple_of(HUGE_PAGE);
        let last = end / HUGE_PAGE * HUGE_PAGE;
        if last > first {
            // SAFETY: advice on whole pages inside memory the caller owns; it changes how they
            // are backed, never what they hold.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                )
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

static KEPT: Kept = Kept(Mutex::new(Vec::new()));

/// The buffers kept for use again, oldest first.
struct Kept(Mutex<Vec<Vec<u32>>>);

impl Kept {
    /// How many buffers are kept.
    const MOST: usize = 4;
    /// The most room, in bytes, the kept buffers have in all: the part of a buffer that ids
    /// were written to stays in memory while it is kept.
    const BUDGET: usize = 256 << 20;

    fn lock(&self) -> MutexGuard<'_, Vec<Vec<u32>>> {
        // Each step under the lock is a push or a remove: a poisoned lock holds a whole list.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kept buffer with the least room of at least `n` ids.
    fn take(&self, n: usize) -> Option<Vec<u32>> {
        let mut kept = self.lock();
        let best = (0..kept.len())
            .filter(|&i| kept[i].capacity() >= n)
            .min_by_key(|&i| kept[i].capacity())?;
        Some(kept.remove(best))
    }

    /// Keep `ids` (emptied) for a later [`with_room`], if it is large enough to be worth it,
    /// dropping the oldest kept buffers to stay within the limits.
    fn give_back(&self, mut ids: Vec<u32>) {
        let room = ids.capacity().saturating_mul(4);
        if !(HUGE_PAGE..=Self::BUDGET).contains(&room) {
            return;
        }
        ids.clear();
        let mut kept = self.lock();
        kept.push(ids);
        let room = |kept: &[Vec<u32>]| kept.iter().map(|v| v.capacity() * 4).sum::<usize>();
        while kept.len() > Self::MOST || room(&kept) > Self::BUDGET {
            kept.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tests that use the process-wide list of kept buffers are one test, so that they
    // never take or drop each other's buffers.
    #[test]
    fn buffers_have_room_come_back_when_dropped_and_not_after_into_vec() {
        for bytes in [0, 1, 1000, 5 << 20] {
            let v = for_text(bytes);
            assert!(v.is_empty() && v.capacity() > bytes);
        }
        for n in [
            0,
            1,
            1000,
            HUGE_PAGE,
            3 * HUGE_PAGE / 4 + 5,
            ALWAYS_MAPPED / 2,
        ] {
            let mut v = with_room(n);
            assert!(v.is_empty() && v.capacity() >= n);
            v.extend(0..n as u32);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
        }
        // A room no buffer above has (they have at least `ALWAYS_MAPPED / 4`), and kept
        // (at least 2 MiB): the request finds the very buffer dropped, emptied.
        let n = HUGE_PAGE / 4 + 1000;
        let mut ids = Ids::from(Vec::with_capacity(n));
        ids.push(5);
        let at = ids.as_ptr();
        drop(ids);
        let again = with_room(n);
        assert_eq!((again.as_ptr(), again.capacity(), again.len()), (at, n, 0));
        let v = again.into_vec();
        assert_ne!(with_room(n).as_ptr(), v.as_ptr());
    }

    #[test]
    fn exact_buffers_hold_what_was_written_and_errors_pass_through() {
        for bytes in [0, 16, SCRATCH_TEXT, SCRATCH_TEXT + 1] {
            let ids = exact_for_text(bytes, |out: &mut Vec<u32>| -> Result<(), ()> {
                // The room of `for_text`, so the encoder never grows the buffer.
                assert!(out.is_empty() && out.capacity() >= crate::encode::room_for(bytes));
                // Called inside another's fill (as a re-entered encode would be).
                let inner = exact_for_text(3, |o: &mut Vec<u32>| -> Result<(), ()> {
                    o.extend([7, 8, 9]);
                    Ok(())
                });
                assert_eq!(inner.as_deref(), Ok(&vec![7, 8, 9]));
                out.extend(0..bytes as u32 / 4);
                Ok(())
            })
            .expect("no error");
            assert!(ids.iter().copied().eq(0..bytes as u32 / 4));
            if bytes <= SCRATCH_TEXT {
                assert_eq!(ids.capacity(), ids.len(), "a buffer of its own size");
            }
        }
        let failed = exact_for_text(16, |out| {
            out.push(1);
            Err("bad")
        });
        assert_eq!(failed.map(Ids::into_vec), Err("bad"));
        // The thread's buffer is emptied before the next text.
        let next = exact_for_text(16, |_| Ok::<(), ()>(()));
        assert_eq!(next.map(Ids::into_vec), Ok(vec![]));
    }

    #[test]
    fn kept_buffers_come_back_smallest_first_within_limits() {
        // A list of its own: the process-wide one is shared with other tests' threads.
        let kept = Kept(Mutex::new(Vec::new()));
        let mb = |m: usize| (m << 20) / 4;
        kept.give_back(Vec::with_capacity(100)); // too small to keep
        for m in [8, 4, 16] {
            let mut v = Vec::with_capacity(mb(m));
            v.push(7);
            kept.give_back(v);
        }
        assert_eq!(kept.lock().len(), 3);
        let v = kept.take(mb(5)).expect("the 8 MB buffer fits");
        assert!(v.is_empty() && v.capacity() == mb(8));
        assert!(kept.take(mb(17)).is_none());
        // Over MOST, or over BUDGET: the oldest go first.
        for _ in 0..Kept::MOST {
            kept.give_back(Vec::with_capacity(mb(2)));
        }
        assert_eq!(kept.lock().len(), Kept::MOST);
        assert!(kept.lock().iter().all(|v| v.capacity() == mb(2)));
        kept.give_back(Vec::with_capacity(Kept::BUDGET / 4 - mb(3)));
        assert_eq!(kept.lock().len(), 2);
        kept.give_back(Vec::with_capacity(Kept::BUDGET / 4 + 1)); // more than all it may keep
        assert_eq!(kept.lock().len(), 2);
    }
}
