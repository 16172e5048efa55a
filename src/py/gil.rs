//! Where a call's work runs: on this thread, with the GIL held for short inputs and released
//! for long ones ([`detached`]), or on a pool of threads ([`on_threads`]).

use crate::runtime::threads::Pool;
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use std::sync::Arc;

/// The pool of `threads` workers (see `runtime::threads::pool`).
pub(super) fn pool(threads: usize) -> PyResult<Arc<Pool>> {
    crate::runtime::threads::pool(threads)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Run `work` on `bytes` of text on `threads` threads: for more than one, on the pool of that
/// many, with the GIL released; for one, on this thread ([`detached`]), where `work_sharing`
/// then runs all of it: handing the call to a pool's one worker and waiting for it costs
/// microseconds a call (docs/performance.md, 'Python boundary'), and this thread's chunk cache
/// is the one that its one-text calls warm.
pub(super) fn on_threads<T: Ungil + Send>(
    py: Python<'_>,
    threads: usize,
    bytes: usize,
    work: impl Ungil + Send + FnOnce() -> T,
) -> PyResult<T> {
    if threads <= 1 {
        return Ok(detached(py, bytes, work));
    }
    let pool = pool(threads)?;
    Ok(py.detach(|| pool.install(work)))
}

/// Inputs shorter than this (bytes of text, all of a batch's) are encoded, counted or decoded
/// with the GIL held: releasing it and taking it back costs a large share of a call on a line
/// of text (docs/performance.md, 'Python boundary'), and other Python threads then wait a few
/// microseconds at most.
const KEEP_GIL_UNDER: usize = 4096;

/// `work` (on a text of `bytes` bytes) with the GIL released, unless the text is short
/// ([`KEEP_GIL_UNDER`]).
pub(super) fn detached<T: Ungil>(
    py: Python<'_>,
    bytes: usize,
    work: impl Ungil + FnOnce() -> T,
) -> T {
    if bytes < KEEP_GIL_UNDER {
        return work();
    }
    py.detach(work)
}
