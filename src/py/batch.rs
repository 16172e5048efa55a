//! Batches of texts: how many threads a batch gets ([`batch_threads`]), its ids as one flat
//! buffer ([`encode_flat`]), and as Python lists built while the threads are still encoding
//! ([`lists`]). `encode` is the tokenizer's encoding of one text onto an output.

use super::gil::{detached, pool};
use crate::encode::room::{exact_for_text, for_text};
use crate::error::Error;
use crate::runtime::buffers::Ids;
use crate::runtime::join::{join_shares, Span};
use crate::runtime::work_sharing;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

/// Bytes of text a batch needs for each thread it is given: below that, a thread costs more to
/// wake and wait for than it saves.
const BATCH_BYTES_PER_THREAD: usize = 8 * 1024;

/// The bytes of a batch's `texts`.
pub(super) fn batch_bytes(texts: &[&str]) -> usize {
    texts.iter().map(|t| t.len()).sum()
}

/// How many of `num_threads` a batch of `bytes` bytes of text is given (at least one).
pub(super) fn batch_threads(num_threads: usize, bytes: usize) -> usize {
    num_threads.min(bytes / BATCH_BYTES_PER_THREAD).max(1)
}

/// Python's cyclic garbage collector paused while a batch's lists are built, and started again
/// (if it was running) when this is dropped, which must be with the GIL held. A list of ints
/// cannot be part of a cycle, but each list made counts toward the next collection, and the
/// collections walk all the lists made so far, again and again as they age: with the collector
/// running, building the lists takes more than twice as long (docs/performance.md, 'Python
/// boundary').
struct CollectorPaused(bool);

impl CollectorPaused {
    fn new(_py: Python<'_>) -> CollectorPaused {
        // SAFETY: the GIL is held (`_py`); returns whether the collector was running.
        CollectorPaused(unsafe { pyo3::ffi::PyGC_Disable() } == 1)
    }
}

impl Drop for CollectorPaused {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: dropped where it was made, in a call that holds the GIL.
            unsafe { pyo3::ffi::PyGC_Enable() };
        }
    }
}

/// The ids of a run of texts one after another, and where each text's ids end ([`encode_run`]).
type RunIds = (Ids, Vec<usize>);

/// The ids of `texts` one after another, in a buffer of their size, and where each text's
/// ids end: one run of a batch (`work_sharing::runs`). The first error met ends it.
fn encode_run(
    texts: &[&str],
    encode: &impl Fn(&str, &mut Vec<u32>) -> Result<(), Error>,
) -> Result<RunIds, Error> {
    let mut ends = Vec::with_capacity(texts.len());
    let bytes = texts.iter().map(|t| t.len()).sum();
    let ids = exact_for_text(bytes, |out| {
        texts.iter().try_for_each(|t| {
            encode(t, out)?;
            ends.push(out.len());
            Ok(())
        })
    })?;
    Ok((ids, ends))
}

/// The ids of all texts one after another, and where each starts (`len + 1` offsets), on
/// `work_sharing::threads_here()` threads. Each share of the work writes the texts it takes
/// into one buffer with room for all of them, so it never grows, and is kept for use again
/// (`runtime::buffers`); the texts' ids are then copied out in order. A buffer per text, as the
/// list paths have, is at times freed and faulted in again on every call (docs/performance.md,
/// 'Memory and pages').
pub(super) fn encode_flat(
    texts: &[&str],
    encode: impl Fn(&str, &mut Vec<u32>) -> Result<(), Error> + Sync,
) -> Result<(Ids, Vec<i64>), Error> {
    let total = texts.iter().map(|t| t.len()).sum();
    let shares = work_sharing::each_own_index(
        texts.len(),
        |i| texts[i].len(),
        || (None, Vec::new()),
        |(ids, spans): &mut (Option<Ids>, Vec<Span>), i| {
            let ids = ids.get_or_insert_with(|| for_text(total));
            let start = ids.len();
            encode(texts[i], ids)?;
            spans.push((i, start..ids.len()));
            Ok(())
        },
    )?;
    // The shares that took a text.
    let shares: Vec<(Ids, Vec<Span>)> = shares
        .into_iter()
        .filter_map(|(ids, spans)| Some((ids?, spans)))
        .collect();
    Ok(join_shares(shares, texts.len()))
}

/// The ids of each of `texts` as a Python list (made by `to_list`), on up to `num_threads`
/// threads; `err` makes the exception of the first error in text order.
///
/// Python lists can only be built with the GIL, on this thread: it builds each run's lists as
/// soon as its ids are ready, and while the next run is not, it encodes a run no thread has
/// taken, with the GIL released. So the pool lends `num_threads - 1` workers, and a call never
/// waits for a worker to wake: this thread alone would finish it (docs/performance.md, 'Python
/// boundary').
pub(super) fn lists<'py>(
    py: Python<'py>,
    texts: &[&str],
    num_threads: usize,
    encode: impl Fn(&str, &mut Vec<u32>) -> Result<(), Error> + Sync,
    to_list: impl Fn(&[u32]) -> PyResult<Bound<'py, PyList>>,
    err: impl Fn(Error) -> PyErr,
) -> PyResult<Bound<'py, PyList>> {
    let runs = work_sharing::runs(texts.len(), |i| texts[i].len());
    let bytes = batch_bytes(texts);
    let num_threads = batch_threads(num_threads, bytes).min(runs.len());
    if num_threads <= 1 {
        let (ids, offsets) = detached(py, bytes, || encode_flat(texts, &encode)).map_err(&err)?;
        let _paused = CollectorPaused::new(py);
        let lists = offsets
            .iter()
            .zip(&offsets[1..])
            .map(|(&from, &to)| to_list(&ids[from as usize..to as usize]))
            .collect::<PyResult<Vec<_>>>()?;
        return PyList::new(py, lists);
    }
    let helpers = pool(num_threads - 1)?;
    let _paused = CollectorPaused::new(py);
    let indices = work_sharing::Indices::new(runs.len());
    let done: Vec<OnceLock<Result<RunIds, Error>>> =
        (0..runs.len()).map(|_| OnceLock::new()).collect();
    let signal = (Mutex::new(()), Condvar::new());
    // Set, under the lock, while this thread waits for a run: only then does a worker that
    // finishes one take the lock to wake it (not a futex call per run).
    let waiting = AtomicBool::new(false);
    let wake = || {
        // Against the fence in the wait below: either the worker sees `waiting`, or the
        // waiting thread sees what the worker stored before this call.
        fence(Ordering::SeqCst);
        if waiting.load(Ordering::Relaxed) {
            let _guard = signal.0.lock().unwrap_or_else(|p| p.into_inner());
            signal.1.notify_all();
        }
    };
    let encode_one_run = |r: usize| {
        let _ = done[r].set(encode_run(&texts[runs[r].clone()], &encode));
        wake();
    };
    // Set when the workers stop, even by a panic, so the wait below cannot hang.
    let finished = AtomicBool::new(false);
    struct Finish<'a, F: Fn()>(&'a AtomicBool, F);
    impl<F: Fn()> Drop for Finish<'_, F> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
            (self.1)();
        }
    }
    helpers.in_place_scope(|scope| {
        scope.spawn(|_| {
            let _finish = Finish(&finished, wake);
            let threads = work_sharing::threads_here();
            work_sharing::on_each_thread(threads, |_| {
                while let Some(r) = indices.take() {
                    encode_one_run(r);
                }
            });
        });
        // Wait, with the GIL released, until `ready()` or the workers have stopped.
        let wait = |ready: &(dyn Fn() -> bool + Sync)| {
            py.detach(|| {
                let mut guard = signal.0.lock().unwrap_or_else(|p| p.into_inner());
                waiting.store(true, Ordering::Relaxed);
                fence(Ordering::SeqCst);
                while !ready() && !finished.load(Ordering::Acquire) {
                    guard = signal.1.wait(guard).unwrap_or_else(|p| p.into_inner());
                }
                waiting.store(false, Ordering::Relaxed);
            })
        };
        let lists = (|| {
            let mut lists = Vec::with_capacity(texts.len());
            for slot in &done {
                while slot.get().is_none() {
                    let Some(r) = indices.take() else {
                        // A worker has this run.
                        wait(&|| slot.get().is_some());
                        break;
                    };
                    py.detach(|| encode_one_run(r));
                }
                match slot.get() {
                    Some(Ok((ids, ends))) => {
                        let mut from = 0;
                        for &to in ends {
                            lists.push(to_list(&ids[from..to])?);
                            from = to;
                        }
                    }
                    Some(Err(e)) => return Err(err(e.clone())),
                    None => {
                        return Err(pyo3::exceptions::PyRuntimeError::new_err(
                            "tokenmill: a batch worker stopped before encoding every text",
                        ))
                    }
                }
            }
            PyList::new(py, lists)
        })();
        // After an error, encode no more. The scope then waits for the workers' job (which
        // may not have started): wait here instead, with the GIL released.
        indices.stop();
        wait(&|| false);
        lists
    })
}
