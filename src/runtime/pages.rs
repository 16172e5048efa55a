//! Zero-initialised tables on 2 MiB pages, for the hash tables probed at random on every
//! chunk.
//!
//! A table of a few MB read at random misses the TLB on most probes with 4 KiB pages, and in
//! a virtual machine each miss is a two-level page walk; on 2 MiB pages the chunk cache's
//! lookups take a third less time (docs/performance.md, 'Memory and pages'). Linux gives huge
//! pages to an aligned anonymous mapping marked `MADV_HUGEPAGE` when transparent huge pages
//! are in `always` or `madvise` mode (the usual default); elsewhere, or for tables under
//! 2 MiB, the table is an ordinary `Vec`.
//!
//! Large id buffers ask for huge pages too ([`buffers`](super::buffers)).

use std::ops::{Deref, DerefMut};

/// Types for which all-zero bytes are a valid value (plain integers and structs of them).
///
/// # Safety
/// An implementor must be valid when every byte of it is zero.
pub unsafe trait Zeroable: Copy {}

// SAFETY: integers.
unsafe impl Zeroable for u64 {}
unsafe impl Zeroable for u32 {}

/// A fixed-length slice of `T`, all zero at first.
pub struct Table<T: Zeroable> {
    storage: Storage<T>,
}

enum Storage<T> {
    Heap(Vec<T>),
    #[cfg(target_os = "linux")]
    Mapped(mapped::Mapping<T>),
}

pub(crate) const HUGE_PAGE: usize = 2 << 20;

impl<T: Zeroable> Table<T> {
    /// `len` zeroed values, on huge pages when the table is at least one huge page.
    pub fn zeroed(len: usize) -> Table<T> {
        #[cfg(target_os = "linux")]
        if len.saturating_mul(std::mem::size_of::<T>()) >= HUGE_PAGE {
            if let Some(m) = mapped::Mapping::new(len) {
                return Table {
                    storage: Storage::Mapped(m),
                };
            }
        }
        // SAFETY: `T: Zeroable` promises that all-zero bytes are a valid `T`.
        let zero: T = unsafe { std::mem::zeroed() };
        Table {
            storage: Storage::Heap(vec![zero; len]),
        }
    }
}

impl<T: Zeroable> Clone for Table<T> {
    fn clone(&self) -> Table<T> {
        let mut t = Table::zeroed(self.len());
        t.copy_from_slice(self);
        t
    }
}

impl<T: Zeroable> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table(len {})", self.len())
    }
}

impl<T: Zeroable> Deref for Table<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        match &self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => m.as_slice(),
        }
    }
}

impl<T: Zeroable> DerefMut for Table<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Storage::Mapped(m) => m.as_mut_slice(),
        }
    }
}

#[cfg(target_os = "linux")]
mod mapped {
    use super::{Zeroable, HUGE_PAGE};
    use std::marker::PhantomData;
    use std::ptr::NonNull;

    /// An anonymous private mapping, one huge page larger than needed so that the table can
    /// start on a huge-page boundary; unmapped on drop.
    pub struct Mapping<T> {
        base: NonNull<libc::c_void>,
        total: usize,
        table: NonNull<T>,
        len: usize,
        _owns: PhantomData<T>,
    }

    impl<T: Zeroable> Mapping<T> {
        pub fn new(len: usize) -> Option<Mapping<T>> {
            let bytes = len.checked_mul(std::mem::size_of::<T>())?;
            // Whole huge pages, and one more so that they can start on a boundary.
            let span = bytes.checked_next_multiple_of(HUGE_PAGE)?;
            let total = span.checked_add(HUGE_PAGE)?;
            // SAFETY: a fresh anonymous mapping; no existing memory is touched.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return None;
            }
            let offset = (HUGE_PAGE - base as usize % HUGE_PAGE) % HUGE_PAGE;
            // `offset < HUGE_PAGE`, so `offset + span <= total`: inside the mapping.
            let start = (base as usize + offset) as *mut libc::c_void;
            // SAFETY: advice on a range inside our own mapping. Failure (huge pages off, an
            // old kernel) only means ordinary pages, so the result is ignored.
            unsafe { libc::madvise(start, span, libc::MADV_HUGEPAGE) };
            Some(Mapping {
                base: NonNull::new(base)?,
                total,
                table: NonNull::new(start.cast::<T>())?,
                len,
                _owns: PhantomData,
            })
        }

        #[inline(always)]
        pub fn as_slice(&self) -> &[T] {
            // SAFETY: `len` values of `T` fit in the mapping from `table`, which is aligned to
            // 2 MiB (so for `T`); anonymous memory starts zeroed, a valid `T` (`Zeroable`); the
            // borrow of `self` keeps the mapping alive.
            unsafe { std::slice::from_raw_parts(self.table.as_ptr(), self.len) }
        }

        #[inline(always)]
        pub fn as_mut_slice(&mut self) -> &mut [T] {
            // SAFETY: as in `as_slice`, and `&mut self` makes the borrow unique.
            unsafe { std::slice::from_raw_parts_mut(self.table.as_ptr(), self.len) }
        }
    }

    // SAFETY: a `Mapping` owns its memory alone, like a `Box<[T]>`: sending or sharing it is
    // sending or sharing its `T`s.
    unsafe impl<T: Send> Send for Mapping<T> {}
    // SAFETY: as above; `&Mapping` only gives `&[T]`.
    unsafe impl<T: Sync> Sync for Mapping<T> {}

    impl<T> Drop for Mapping<T> {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly the mapping `new` made; no slice of it outlives `self`.
            unsafe { libc::munmap(self.base.as_ptr(), self.total) };
        }
    }
}

/// Start loading `slot` into the CPU cache, without waiting for it (a hint; no effect on
/// other targets). Any address will do, even one outside the program's memory: a prefetch
/// never faults.
#[inline(always)]
pub(crate) fn prefetch<T>(slot: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program sees; SSE is part of the
    // x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(slot.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_readable_writable_any_size() {
        for len in [
            0,
            1,
            1000,
            HUGE_PAGE / 8,
            HUGE_PAGE / 8 + 3,
            3 * HUGE_PAGE / 8,
        ] {
            let mut t = Table::<u64>::zeroed(len);
            assert_eq!(t.len(), len);
            assert!(t.iter().all(|&x| x == 0));
            for (i, x) in t.iter_mut().enumerate() {
                *x = i as u64;
            }
            assert!(t.iter().enumerate().all(|(i, &x)| x == i as u64));
            let copy = t.clone();
            assert_eq!(&copy[..], &t[..]);
            #[cfg(target_os = "linux")]
            if len * 8 >= HUGE_PAGE {
                assert!(matches!(t.storage, Storage::Mapped(_)), "{len}");
                assert_eq!(t.as_ptr() as usize % HUGE_PAGE, 0);
            }
        }
    }
}
