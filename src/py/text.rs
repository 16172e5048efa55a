//! A `str` argument's text as UTF-8, without the copy CPython would attach to the `str`.
//!
//! CPython keeps a `str` as one unit per code point (1, 2 or 4 bytes, whichever its widest
//! code point needs). Asked for UTF-8 (`PyUnicode_AsUTF8AndSize`, what pyo3's `&str` does),
//! it hands out the text itself when it is all ASCII; otherwise it encodes it into a buffer of
//! its own, copies that into a second, and attaches the copy to the `str` for as long as the
//! `str` lives. For a long text met once, which is how a corpus is tokenized, that is two
//! buffers of memory new to the process and a unit-at-a-time loop, in time comparable to
//! encoding the text (docs/performance.md, 'Python boundary').
//!
//! So a `str` that is not ASCII and has no UTF-8 attached yet is encoded here instead
//! ([`code_units`](super::code_units): 16 code points at a time where the CPU has AVX-512
//! VBMI2), into a kept buffer (`runtime::buffers`: on huge pages, and used again by the next
//! call) when it is long.
//!
//! What CPython would do is still done for a `str` met again: one
//! of the last few converted here (same address and length) is handed to CPython, which
//! attaches its copy, so that calling again and again on one `str` converts nothing. Either
//! way the bytes are the same; a `str` with a lone surrogate goes to CPython, which raises the
//! `UnicodeEncodeError` the Python layer answers as tiktoken does.
//!
//! This reads CPython's layout of a `str`, so it is built only where lists are built in place
//! (`id_list`: CPython with a GIL, not the limited API), and not for 3.14 on, whose layout
//! pyo3 leaves opaque; there every `str` goes to CPython.

use pyo3::prelude::*;
use pyo3::types::PyString;
use std::ops::Deref;

/// A text as UTF-8: borrowed from the `str` (ASCII, or CPython's copy), or converted here.
pub(super) enum Utf8<'a> {
    Borrowed(&'a str),
    #[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy, Py_3_14)))]
    Converted(converted::Converted),
}

impl Deref for Utf8<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Utf8::Borrowed(s) => s,
            #[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy, Py_3_14)))]
            Utf8::Converted(c) => c.as_str(),
        }
    }
}

/// The UTF-8 of `text` (see the module doc); a `UnicodeEncodeError` for a lone surrogate.
pub(super) fn utf8<'a>(text: &'a Bound<'_, PyString>) -> PyResult<Utf8<'a>> {
    #[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy, Py_3_14)))]
    if let Some(c) = converted::convert(text) {
        return Ok(Utf8::Converted(c));
    }
    text.to_str().map(Utf8::Borrowed)
}

/// The UTF-8 of a batch's texts, each read as [`utf8`] reads one, except that those converted
/// here share one buffer, and that a `str` met again is converted again (a batch's texts are
/// many and are seldom encoded twice; CPython's copy would stay on each of them).
pub(super) struct Utf8Batch<'a> {
    /// Each text's UTF-8: in its `str` (alive for `'a`), or in `_buffer`.
    spans: Vec<(*const u8, usize)>,
    _buffer: crate::runtime::buffers::Ids,
    _texts: std::marker::PhantomData<&'a str>,
}

impl Utf8Batch<'_> {
    /// The texts.
    pub(super) fn strs(&self) -> Vec<&str> {
        self.spans
            .iter()
            // SAFETY: each span is UTF-8 that lives as long as `self`: a `str` of `'a`, or
            // `_buffer`, which is not written after the spans are made.
            .map(|&(p, n)| unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(p, n))
            })
            .collect()
    }
}

/// The UTF-8 of `texts` (see [`Utf8Batch`]); a `UnicodeEncodeError` for a lone surrogate.
pub(super) fn utf8_batch<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Utf8Batch<'a>> {
    // CPython's UTF-8 of a text (the text itself when ASCII, else its attached copy).
    let from_cpython = |text: &'a Bound<'_, PyString>| text.to_str().map(|s| (s.as_ptr(), s.len()));
    #[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy, Py_3_14)))]
    let (spans, buffer) = {
        let units: Vec<_> = texts.iter().map(converted::units_of).collect();
        let room: usize = units.iter().flatten().map(|u| u.room()).sum();
        let mut buffer = match room {
            0 => crate::runtime::buffers::Ids::default(),
            _ => crate::runtime::buffers::with_room(room.div_ceil(4)),
        };
        let bytes = converted::bytes_of(&mut buffer);
        let mut at = 0;
        let mut spans = Vec::with_capacity(texts.len());
        for (text, units) in texts.iter().zip(&units) {
            // `bytes[at..]` has room for every text left: each took at most its `room()`.
            if let Some(n) = units.as_ref().and_then(|u| u.to_utf8(&mut bytes[at..])) {
                spans.push((bytes[at..].as_ptr().cast::<u8>(), n));
                at += n;
            } else {
                spans.push(from_cpython(text)?);
            }
        }
        (spans, buffer)
    };
    #[cfg(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy, Py_3_14))]
    let (spans, buffer) = (
        texts.iter().map(from_cpython).collect::<PyResult<_>>()?,
        crate::runtime::buffers::Ids::default(),
    );
    Ok(Utf8Batch {
        spans,
        _buffer: buffer,
        _texts: std::marker::PhantomData,
    })
}

#[cfg(not(any(Py_GIL_DISABLED, Py_LIMITED_API, PyPy, GraalPy, Py_3_14)))]
mod converted {
    use crate::py::code_units::{to_utf8, utf8_room};
    use crate::runtime::buffers::Ids;
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyString;
    use std::mem::MaybeUninit;
    use std::sync::Mutex;

    /// Texts shorter than this many code points go to CPython: converting here pays from about
    /// 64 on (docs/performance.md, 'Python boundary').
    const LONG: usize = 64;

    /// A text converted to UTF-8 in a kept buffer (given back when dropped).
    pub(in crate::py) struct Converted {
        buffer: Ids,
        len: usize,
    }

    impl Converted {
        pub(in crate::py) fn as_str(&self) -> &str {
            let bytes = self.buffer.as_ptr().cast::<u8>();
            // SAFETY: `convert` wrote `len` bytes of UTF-8 (`to_utf8`) at the start of the
            // buffer's room, which nothing else writes while `self` owns it.
            unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(bytes, self.len)) }
        }
    }

    /// The `str`s converted here most recently, by address, length and kind, newest last.
    static MET: Mutex<Vec<(usize, usize, u32)>> = Mutex::new(Vec::new());
    const MET_MOST: usize = 4;

    /// Whether `key` was converted recently; records it if not.
    fn met_before(key: (usize, usize, u32)) -> bool {
        let mut met = MET.lock().unwrap_or_else(|p| p.into_inner());
        if met.contains(&key) {
            return true;
        }
        if met.len() == MET_MOST {
            met.remove(0);
        }
        met.push(key);
        false
    }

    /// The code units of a `str` CPython has no UTF-8 for: CPython's own `str`s, not ASCII
    /// (whose UTF-8 is the text), of `LONG` code points or more, without UTF-8 attached.
    pub(super) enum Units<'a> {
        One(&'a [u8]),
        Two(&'a [u16]),
        Four(&'a [u32]),
    }

    impl Units<'_> {
        /// Bytes their UTF-8 can take at most.
        pub(super) fn room(&self) -> usize {
            match self {
                Units::One(u) => utf8_room::<u8>(u.len()),
                Units::Two(u) => utf8_room::<u16>(u.len()),
                Units::Four(u) => utf8_room::<u32>(u.len()),
            }
        }

        /// Their UTF-8 at the front of `out` (at least `room()` bytes), and its length; `None`
        /// for a surrogate, which CPython is left to report.
        pub(super) fn to_utf8(&self, out: &mut [MaybeUninit<u8>]) -> Option<usize> {
            match self {
                Units::One(u) => to_utf8(u, out),
                Units::Two(u) => to_utf8(u, out),
                Units::Four(u) => to_utf8(u, out),
            }
        }
    }

    /// The units of `text` if they are to be converted here (see [`Units`]).
    pub(super) fn units_of<'a>(text: &'a Bound<'_, PyString>) -> Option<Units<'a>> {
        let op = text.as_ptr();
        // SAFETY: `op` is a `str` (a `Bound<PyString>`), alive while `text` is borrowed, and the
        // GIL is held. A compact `str` is ready and keeps its units right after its header;
        // `utf8` is the copy CPython attached, if any, in every version this is built for.
        unsafe {
            if ffi::PyUnicode_IS_COMPACT(op) == 0 || ffi::PyUnicode_IS_ASCII(op) != 0 {
                return None;
            }
            let len = usize::try_from(ffi::PyUnicode_GET_LENGTH(op)).ok()?;
            if len < LONG || !(*op.cast::<ffi::PyCompactUnicodeObject>()).utf8.is_null() {
                return None;
            }
            let data = ffi::PyUnicode_DATA(op).cast_const();
            match ffi::PyUnicode_KIND(op) {
                ffi::PyUnicode_1BYTE_KIND => Some(Units::One(std::slice::from_raw_parts(
                    data.cast::<u8>(),
                    len,
                ))),
                ffi::PyUnicode_2BYTE_KIND => Some(Units::Two(std::slice::from_raw_parts(
                    data.cast::<u16>(),
                    len,
                ))),
                ffi::PyUnicode_4BYTE_KIND => Some(Units::Four(std::slice::from_raw_parts(
                    data.cast::<u32>(),
                    len,
                ))),
                _ => None,
            }
        }
    }

    /// `text` converted here, or `None` when CPython is to give its UTF-8: see [`Units`], and
    /// a `str` met recently or with a surrogate (CPython raises the error).
    pub(in crate::py) fn convert(text: &Bound<'_, PyString>) -> Option<Converted> {
        let units = units_of(text)?;
        let (len, kind) = match &units {
            Units::One(u) => (u.len(), 1),
            Units::Two(u) => (u.len(), 2),
            Units::Four(u) => (u.len(), 4),
        };
        if met_before((text.as_ptr() as usize, len, kind)) {
            return None;
        }
        let mut buffer = crate::runtime::buffers::with_room(units.room().div_ceil(4));
        let len = units.to_utf8(bytes_of(&mut buffer))?;
        Some(Converted { buffer, len })
    }

    /// The unused room of `buffer` as bytes.
    pub(super) fn bytes_of(buffer: &mut Ids) -> &mut [MaybeUninit<u8>] {
        let spare = buffer.spare_capacity_mut();
        // SAFETY: the buffer's unused room, `spare.len() * 4` bytes, viewed as possibly
        // unwritten bytes, borrowed from `buffer` as `spare` was.
        unsafe { std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), spare.len() * 4) }
    }
}
