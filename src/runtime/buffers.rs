//! Buffers for ids: on huge pages, and used again.
//!
//! Memory new to the process is expensive: every 4 KiB page is a fault, and even 2 MiB pages
//! must be zeroed by the kernel, at a cost comparable to encoding the ids that fill them
//! (docs/performance.md, 'Memory and pages'). So:
//! - a buffer of 2 MiB or more is a mapping of its own, advised `MADV_HUGEPAGE` ([`with_room`]);
//! - buffers are handed out as [`Ids`], which give them back when dropped (the Python bindings
//!   make one the owner of a numpy array's data, so this happens when the array is freed), and
//!   the next large request takes one, its pages already in place. At most 4 buffers, with
//!   256 MB of room in all, are kept.
//!
//! The Python bindings also take one as room for a long text they convert to UTF-8
//! (`py/text.rs`), viewed as bytes, and give it back once the text is encoded.

use super::pages::HUGE_PAGE;
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
    // page fault at a time (docs/performance.md, 'Memory and pages'), so smaller buffers ask
    // for that much room: unwritten room costs nothing.
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
