//! One text's ids encoded straight into the memory of the Python list that returns them.
//!
//! Encoding into a buffer of ids and then building the list touches 12 bytes per id: 4 of ids,
//! 8 of list items. On a first pass in a fresh process all of it is memory new to the process,
//! which is slow to come by (`runtime::buffers`): the kernel zeroes every page. Here the encoder
//! writes its ids (4 bytes each) into the front of the list's own item array, and the ids are
//! then turned into items (8 bytes each) in place, from the last back: item `i` covers bytes
//! `8i..8i + 8`, past the ids `0..i` still to be read. Only the list's memory is ever touched.
//!
//! Only some lists are built this way (`in_place::builds_in_place`): room for every id a text
//! can have is 8 bytes per byte of text, which glibc serves from memory new to the process
//! (any request above its mmap threshold, which a freed list raises to that list's size and
//! never above 32 MiB), while a list of exactly the ids' size ([`list_of`]) is served from the
//! memory the previous list gave back. So a long text's list is built in place on the first
//! pass of a process, whose memory is all new either way, and from the kept buffer of ids
//! after (docs/performance.md, 'Python boundary').
//!
//! The item array comes from `PyMem_Malloc`, the allocator a list frees its items with, and is
//! given to the list once every item is in place. From 2 MiB on it is advised onto 2 MiB
//! pages, as numpy advises its large arrays: a first pass writes all of it to memory new to
//! the process, and 4 KiB pages take a fault each (docs/performance.md, 'Memory and pages').
//! Where glibc serves the array from memory earlier lists gave back, the advice changes
//! nothing. CPython's lists keep their items that way (`ob_item`, `allocated`) in every version
//! with a GIL; a free-threaded build allocates them otherwise, so there (and on PyPy or the
//! limited API) the bindings build lists from a buffer of ids.

use crate::error::Error;
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::OnceLock;

#[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy)))]
pub(super) use in_place::{encode_into_list, list_of};

/// The Python int of each id, each made the first time a list holds that id (the table is the
/// tokenizer's: one slot per id).
pub(super) struct Ints<'a, 'py> {
    py: Python<'py>,
    table: &'a [OnceLock<Py<PyAny>>],
}

impl<'a, 'py> Ints<'a, 'py> {
    pub(super) fn new(py: Python<'py>, table: &'a [OnceLock<Py<PyAny>>]) -> Ints<'a, 'py> {
        Ints { py, table }
    }

    /// The int of `id` (a new reference).
    #[inline]
    pub(super) fn get(&self, id: u32) -> Bound<'py, PyAny> {
        let new = || {
            let Ok(obj) = id.into_pyobject(self.py);
            obj.into_any()
        };
        match self.table.get(id as usize) {
            Some(slot) => slot.get_or_init(|| new().unbind()).bind(self.py).clone(),
            None => new(),
        }
    }

    /// [`Ints::prefetch`] for a list of `ids` built in order, whose item `i` is made next.
    #[inline(always)]
    fn load_ahead(&self, ids: &[u32], i: usize) {
        if let (Some(&far), Some(&near)) = (ids.get(i + SLOT_AHEAD), ids.get(i + INT_AHEAD)) {
            self.prefetch(far, near);
        }
    }

    /// Start loading what `get(far)` reads first, its slot, and what `get(near)` reads next,
    /// the int itself (its slot loaded by an earlier call), so that a list's items do not wait
    /// for them one by one.
    #[inline(always)]
    fn prefetch(&self, far: u32, near: u32) {
        if let Some(slot) = self.table.get(far as usize) {
            crate::runtime::pages::prefetch(slot);
        }
        if let Some(int) = self.table.get(near as usize).and_then(OnceLock::get) {
            // SAFETY: a live object (the table holds a reference); only its address is used.
            crate::runtime::pages::prefetch(unsafe { &*int.as_ptr() });
        }
    }
}

/// How far ahead of the item being written a list's loops load an id's slot ([`Ints`]), and
/// its int. The ints are shared by every list and stay where they were made, so a program that
/// does other work between calls finds them out of the CPU's caches, and a long list would wait
/// for each one in turn; nearer than this does not hide a wait for memory (docs/performance.md,
/// 'Python boundary').
const SLOT_AHEAD: usize = 128;
/// How far ahead the int itself is loaded: its slot was loaded `SLOT_AHEAD - INT_AHEAD` items
/// earlier.
const INT_AHEAD: usize = 64;

/// Where lists' items are not `PyMem_Malloc`ed arrays: pyo3's `PyList::new`.
#[cfg(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy))]
pub(super) fn list_of<'py>(
    py: Python<'py>,
    ids: &[u32],
    ints: &Ints<'_, 'py>,
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(
        py,
        ids.iter().enumerate().map(|(i, &id)| {
            ints.load_ahead(ids, i);
            ints.get(id)
        }),
    )
}

/// Where lists' items are not `PyMem_Malloc`ed arrays: never in place (`None`).
#[cfg(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy))]
pub(super) fn encode_into_list<'py>(
    _py: Python<'py>,
    _bytes: usize,
    _encode: impl Ungil + Send + FnOnce(&mut Vec<u32>) -> Result<(), Error>,
    _ints: &Ints<'_, 'py>,
) -> PyResult<Option<Result<Bound<'py, PyList>, Error>>> {
    Ok(None)
}

#[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy)))]
mod in_place {
    use super::*;
    use pyo3::ffi;
    use std::mem::ManuallyDrop;
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Texts up to this many bytes have their lists built in place: room for all their ids (8
    /// bytes per byte, 96 KiB) is below glibc's lowest mmap threshold, 128 KiB, so it comes from
    /// the heap like any list, and both ways are as fast (docs/performance.md, 'Python
    /// boundary').
    const SHORT_TEXT: usize = 12 << 10;

    /// Whether a long text's list has been built in place in this process yet.
    static LONG_LIST_BUILT: AtomicBool = AtomicBool::new(false);

    /// Whether the list of a text of `bytes` bytes is to be built in place: a short text's, and
    /// the first long text's of the process (see the module doc). A later long text's list is
    /// built from a buffer of ids, so that its memory can be what earlier lists gave back.
    fn builds_in_place(bytes: usize) -> bool {
        bytes <= SHORT_TEXT || !LONG_LIST_BUILT.swap(true, Ordering::Relaxed)
    }

    /// An item array being filled: `items` slots of 8 bytes from `PyMem_Malloc`, freed when
    /// dropped unless given to a list. It is not `Send`, so it stays with the GIL: the encoding
    /// gets only its address (`Room`).
    struct ItemArray {
        ptr: NonNull<*mut ffi::PyObject>,
        items: usize,
    }

    impl ItemArray {
        fn new(_py: Python<'_>, items: usize) -> PyResult<ItemArray> {
            let items = items.max(1);
            let bytes = items
                .checked_mul(8)
                .filter(|&b| b <= isize::MAX as usize)
                .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err(()))?;
            // SAFETY: the GIL is held (`_py`).
            let ptr = unsafe { ffi::PyMem_Malloc(bytes) };
            let ptr = NonNull::new(ptr.cast::<*mut ffi::PyObject>())
                .ok_or_else(|| pyo3::exceptions::PyMemoryError::new_err(()))?;
            // Like numpy's large arrays: 2 MiB pages for the memory new to the process (see
            // the module doc).
            crate::runtime::buffers::advise_huge_pages(ptr.as_ptr().cast(), bytes);
            Ok(ItemArray { ptr, items })
        }
    }

    impl ItemArray {
        /// A new list of the first `n` items (`0 < n <= items`), the array shrunk to them.
        ///
        /// # Safety
        /// Items `0..n` hold references to objects, which the list takes.
        unsafe fn into_list<'py>(self, py: Python<'py>, n: usize) -> Bound<'py, PyList> {
            let list = PyList::empty(py);
            let mut array = ManuallyDrop::new(self);
            if n < array.items {
                // SAFETY: the GIL is held; shrinking keeps the first `n` items.
                let p = unsafe { ffi::PyMem_Realloc(array.ptr.as_ptr().cast(), n * 8) };
                if let Some(p) = NonNull::new(p) {
                    array.ptr = p.cast();
                    array.items = n;
                }
            }
            let raw = list.as_ptr().cast::<ffi::PyListObject>();
            // SAFETY: a new empty list no one else holds; it takes the array (from
            // `PyMem_Malloc`, what it frees its items with) and the references of its `n`
            // items. It is given a size only once they are all written, so the collector (which
            // an int's allocation may have run) never saw a partial list.
            unsafe {
                debug_assert!((*raw).ob_item.is_null());
                (*raw).ob_item = array.ptr.as_ptr();
                (*raw).allocated = array.items as ffi::Py_ssize_t;
                (*raw).ob_base.ob_size = n as ffi::Py_ssize_t;
            }
            list
        }
    }

    impl Drop for ItemArray {
        fn drop(&mut self) {
            // SAFETY: from `PyMem_Malloc`, not given to a list (that forgets it); an `ItemArray`
            // is made and dropped where the GIL is held, being neither `Send` nor moved.
            unsafe { ffi::PyMem_Free(self.ptr.as_ptr().cast()) }
        }
    }

    /// Where the encoding writes its ids: the address of an `ItemArray`'s memory, as `u32`s.
    struct Room(*mut u32, usize);

    // SAFETY: the memory is this call's alone until the list is made, and the `ItemArray` that
    // owns it outlives the encoding (which `Python::detach` runs before returning).
    unsafe impl Send for Room {}

    /// The ids `encode` writes for a text of `bytes` bytes, as a Python list of the ints `int`
    /// gives (a new reference each); `Some(Err(e))` is the encoder's error. The GIL is released
    /// while it runs. `None` for texts over `room::ALL_IDS_UP_TO` (room for an item per
    /// byte of those could be more memory than the machine will promise) and for long texts
    /// after the first ([`builds_in_place`]): the caller builds their list from a buffer of ids.
    pub(in crate::py) fn encode_into_list<'py>(
        py: Python<'py>,
        bytes: usize,
        encode: impl Ungil + Send + FnOnce(&mut Vec<u32>) -> Result<(), Error>,
        ints: &Ints<'_, 'py>,
    ) -> PyResult<Option<Result<Bound<'py, PyList>, Error>>> {
        if bytes > crate::encode::room::ALL_IDS_UP_TO || !builds_in_place(bytes) {
            return Ok(None);
        }
        // Room for every id the text can have, and as `u32`s for all the encoder may ask.
        let room = crate::encode::room::room_for(bytes);
        let array = ItemArray::new(py, bytes.max(room.div_ceil(2)))?;
        let at = Room(array.ptr.as_ptr().cast(), array.items * 2);
        let (done, n, moved) = crate::py::gil::detached(py, bytes, move || {
            let at = at;
            // SAFETY: `at.1` u32s of writable memory, aligned for `*mut PyObject` and so for
            // `u32`. `ManuallyDrop`: never freed as a `Vec`. With `room_for`'s room the `Vec`
            // never grows; `moved` reports it if it did.
            let mut ids = ManuallyDrop::new(unsafe { Vec::from_raw_parts(at.0, 0, at.1) });
            let done = encode(&mut ids);
            let n = ids.len();
            let moved = (ids.as_ptr() != at.0).then(|| ManuallyDrop::into_inner(ids));
            (done, n, moved)
        });
        if let Some(ids) = moved {
            // Unreachable while `room_for` holds (tested in the core): the `Vec` grew, moving
            // the ids into a new allocation and freeing `array`'s, so `array` must not be freed.
            std::mem::forget(array);
            return match done {
                Ok(()) => list_of(py, &ids, ints).map(|l| Some(Ok(l))),
                Err(e) => Ok(Some(Err(e))),
            };
        }
        if let Err(e) = done {
            return Ok(Some(Err(e)));
        }
        if n > array.items {
            // Unreachable: an id per byte at most.
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "tokenmill: more ids than bytes of text",
            ));
        }
        if n == 0 {
            return Ok(Some(Ok(PyList::empty(py))));
        }
        let items = array.ptr.as_ptr();
        let ids: *const u32 = items.cast();
        for i in (0..n).rev() {
            if i >= SLOT_AHEAD {
                // SAFETY: ids below `i` are not yet overwritten (see below).
                let (far, near) = unsafe {
                    (
                        ids.add(i - SLOT_AHEAD).read(),
                        ids.add(i - INT_AHEAD).read(),
                    )
                };
                ints.prefetch(far, near);
            }
            // SAFETY: ids `0..n` were written by the encoder, items `i + 1..n` by the turns
            // before this one; item `i` (bytes `8i..8i + 8`) is past the ids `0..i` still to be
            // read (bytes `0..4i`), and id `i` is read before it is written.
            unsafe { items.add(i).write(ints.get(ids.add(i).read()).into_ptr()) };
        }
        // SAFETY: items `0..n` were written above.
        Ok(Some(Ok(unsafe { array.into_list(py, n) })))
    }

    /// `ids` as a Python list of the ints `int` gives (a new reference each), its items written
    /// straight into an array of exactly their number. pyo3's `PyList::new` has `PyList_New`
    /// clear the array first (`PyMem_Calloc`), a pass over all of it before any item is
    /// written.
    pub(in crate::py) fn list_of<'py>(
        py: Python<'py>,
        ids: &[u32],
        ints: &Ints<'_, 'py>,
    ) -> PyResult<Bound<'py, PyList>> {
        if ids.is_empty() {
            return Ok(PyList::empty(py));
        }
        let array = ItemArray::new(py, ids.len())?;
        let items = array.ptr.as_ptr();
        for (i, &id) in ids.iter().enumerate() {
            ints.load_ahead(ids, i);
            // SAFETY: `i` is below `array.items`, `ids.len()`.
            unsafe { items.add(i).write(ints.get(id).into_ptr()) };
        }
        // SAFETY: items `0..ids.len()` were written above.
        Ok(unsafe { array.into_list(py, ids.len()) })
    }
}
