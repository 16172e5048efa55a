//! PyO3 bindings: the only place that knows Python. Each method converts its arguments,
//! releases the GIL for the work, calls the core and maps [`Error`] to a Python exception.

use crate::buffers::Ids;
use crate::encode::{join_shares, long_enough_to_cut, Allowed, Encoder, Span};
use crate::error::Error;
use crate::pretokenize::Splitter;
use crate::threads::Pool;
use crate::vocab::{self, Vocab};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

mod id_list;
mod pretokenize;
mod text;
mod train;

/// Raise the tokenmill.errors class `name` built with `args`.
fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(py: Python<'py>, name: &str, args: A) -> PyErr {
    let made = py
        .import("tokenmill.errors")
        .and_then(|m| m.getattr(name))
        .and_then(|cls| cls.cast_into::<PyType>().map_err(PyErr::from))
        .and_then(|cls| cls.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Map a core error to its Python exception; `n_vocab` adds context to unknown ids.
pub(crate) fn to_py(py: Python<'_>, err: Error, n_vocab: Option<usize>) -> PyErr {
    match err {
        Error::InvalidPattern { .. } | Error::RegexRuntime { .. } => {
            raise(py, "InvalidPatternError", (err.to_string(),))
        }
        Error::InvalidVocab { .. } => raise(py, "InvalidVocabError", (err.to_string(),)),
        Error::VocabFile { line, message } => {
            raise(py, "VocabFileError", ("<rank file>", line, message))
        }
        Error::InvalidSpecialTokens { .. } => {
            raise(py, "InvalidSpecialTokensError", (err.to_string(),))
        }
        Error::UnknownTokenId { id } => raise(py, "UnknownTokenIdError", (id, n_vocab)),
        Error::DisallowedSpecialToken { token } => {
            raise(py, "DisallowedSpecialTokenError", (token,))
        }
        Error::InvalidTraining { .. } => raise(py, "TrainingError", (err.to_string(),)),
    }
}

/// Special tokens' (string, id) pairs with ids that are ints a token id can be, or an
/// `InvalidSpecialTokensError` naming the token (not pyo3's `OverflowError` or `TypeError`).
fn special_pairs(
    py: Python<'_>,
    pairs: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<Vec<(String, u32)>> {
    pairs
        .into_iter()
        .map(|(name, id)| {
            let int = !id.is_instance_of::<pyo3::types::PyBool>()
                && id.is_instance_of::<pyo3::types::PyInt>();
            match id.extract::<u32>() {
                Ok(n) if int => Ok((name, n)),
                _ => Err(to_py(
                    py,
                    Error::InvalidSpecialTokens {
                        message: format!(
                            "special token {name:?} has id {}: an id must be an int in 0..{}",
                            id.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
                            u32::MAX
                        ),
                    },
                    None,
                )),
            }
        })
        .collect()
}

/// Which specials an encode call allows/disallows: the string "all" or a list of ids.
enum SpecialSet {
    All,
    Ids(Vec<u32>),
}

impl SpecialSet {
    fn extract(obj: &Bound<'_, PyAny>) -> PyResult<SpecialSet> {
        if let Ok(s) = obj.cast::<PyString>() {
            if s.to_str()? == "all" {
                return Ok(SpecialSet::All);
            }
            return Err(PyValueError::new_err(
                "expected 'all' or a list of special-token ids",
            ));
        }
        Ok(SpecialSet::Ids(obj.extract()?))
    }

    fn as_allowed(&self) -> Allowed<'_> {
        match self {
            SpecialSet::All => Allowed::All,
            SpecialSet::Ids(ids) if ids.is_empty() => Allowed::None,
            SpecialSet::Ids(ids) => Allowed::Ids(ids),
        }
    }
}

/// The pool of `threads` workers (see `threads::pool`).
fn pool(threads: usize) -> PyResult<Arc<Pool>> {
    crate::threads::pool(threads)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}

/// Run `work` on `bytes` of text on `threads` threads: for more than one, on the pool of that
/// many, with the GIL released; for one, on this thread ([`detached`]), where `work_sharing`
/// then runs all of it. (Handing the call to a pool's one worker and waiting for it cost
/// 10-20 µs a call, and this thread's chunk cache is the one that its one-text calls warm.)
fn on_threads<T: Ungil + Send>(
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
/// with the GIL held:
/// releasing it and taking it back costs ~60 ns, a sixth of the Rust side of a call on a line
/// of text, and other Python threads then wait a few microseconds at most. The lines of Holmes
/// (~70 bytes), one call each, cl100k_base: `count` 409 -> 335-354 ns a call, `encode`
/// 666 -> 553-591, `encode_to_numpy` 549 -> 482-485 (the core's methods, best of 5 passes).
const KEEP_GIL_UNDER: usize = 4096;

/// `work` (on a text of `bytes` bytes) with the GIL released, unless the text is short
/// ([`KEEP_GIL_UNDER`]).
fn detached<T: Ungil>(py: Python<'_>, bytes: usize, work: impl Ungil + FnOnce() -> T) -> T {
    if bytes < KEEP_GIL_UNDER {
        return work();
    }
    py.detach(work)
}

/// Whether one text is encoded on this thread: one thread asked for, or a text too short to be
/// cut for more (`long_enough_to_cut`, see `encode_parallel`).
fn on_one_thread(text: &str, num_threads: usize, piece_bytes: usize) -> bool {
    num_threads <= 1 || !long_enough_to_cut(text.len(), piece_bytes)
}

/// Bytes of text a batch needs for each thread it is given: below that, a thread costs more to
/// wake and wait for than it saves.
const BATCH_BYTES_PER_THREAD: usize = 8 * 1024;

/// The bytes of a batch's `texts`.
fn batch_bytes(texts: &[&str]) -> usize {
    texts.iter().map(|t| t.len()).sum()
}

/// How many of `num_threads` a batch of `bytes` bytes of text is given (at least one).
fn batch_threads(num_threads: usize, bytes: usize) -> usize {
    num_threads.min(bytes / BATCH_BYTES_PER_THREAD).max(1)
}

/// Python's cyclic garbage collector paused while a batch's lists are built, and started again
/// (if it was running) when this is dropped, which must be with the GIL held. A list of ints
/// cannot be part of a cycle, but each list made counts toward the next collection, and the
/// collections walk all the lists made so far, again and again as they age. Measured on
/// holmes's 76,762 lines, gpt2, one thread, each call's result kept alive as a dataset's
/// would be: 2,300-2,970 ns a line with the collector running, 1,000-1,040 paused; the
/// deferred collections included, a loop of 8 calls took 1.0-1.1 s against 1.5-2.0 s.
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

/// The ids of a run of texts one after another, and where each text's ids end
/// (`CoreTokenizer::encode_run`).
type RunIds = (Ids, Vec<usize>);

/// Flat ids of a batch and the offsets where each text's ids start.
type FlatIds<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>);

/// The native tokenizer: vocabulary, splitter and special tokens. Immutable and thread-safe.
#[pyclass(module = "tokenmill._core", frozen)]
pub struct CoreTokenizer {
    enc: Arc<Encoder>,
    /// One Python int per id, made the first time a list holds that id: a list of ids is then
    /// built by taking references instead of allocating an int per element. Measured on holmes
    /// with gpt2 (1.13 M ids): building the list went from about 45 ms to about 8 ms. Made per
    /// id, not all at once: making all of o200k_base's 200,000 ints took ~10 ms, paid by the
    /// first long list (a first pass over 1 MB of `a` has 125,000 ids of 3 distinct values).
    ints: OnceLock<Box<[OnceLock<Py<PyAny>>]>>,
}

impl CoreTokenizer {
    fn wrap(enc: Encoder) -> CoreTokenizer {
        CoreTokenizer {
            enc: Arc::new(enc),
            ints: OnceLock::new(),
        }
    }

    /// Each id's Python int, from the cache of ints.
    fn ints<'py>(&self, py: Python<'py>) -> id_list::Ints<'_, 'py> {
        let table = self
            .ints
            .get_or_init(|| (0..self.enc.n_vocab()).map(|_| OnceLock::new()).collect());
        id_list::Ints::new(py, table)
    }

    /// A Python list of ids, sharing the cached int objects.
    fn to_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        id_list::list_of(py, ids, &self.ints(py))
    }

    /// One text's ids as a list: built in place (`id_list`) on this thread, or from
    /// `encode_text`'s buffer when the text is cut for `num_threads` threads (or is a long text
    /// after the process's first, or is too long, or lists cannot be built in place: see
    /// `id_list`).
    fn encode_list<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        num_threads: usize,
        piece_bytes: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        if on_one_thread(text, num_threads, piece_bytes) {
            let (a, d) = (allowed.as_allowed(), disallowed.as_allowed());
            let encode = |out: &mut Vec<u32>| self.enc.encode(text, a, d, out);
            if let Some(list) = id_list::encode_into_list(py, text.len(), encode, &self.ints(py))? {
                return list.map_err(|e| self.err(py, e));
            }
        }
        let out = self.encode_text(py, text, allowed, disallowed, num_threads, piece_bytes)?;
        self.to_list(py, &out)
    }

    fn err(&self, py: Python<'_>, e: Error) -> PyErr {
        to_py(py, e, Some(self.enc.n_vocab()))
    }

    fn encode_one(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
    ) -> Result<Ids, Error> {
        crate::buffers::exact_for_text(text.len(), |out| {
            self.enc
                .encode(text, allowed.as_allowed(), disallowed.as_allowed(), out)
        })
    }

    /// The ids of `texts` one after another, in a buffer of their size, and where each text's
    /// ids end: one run of a batch (`work_sharing::runs`). The first error met ends it.
    fn encode_run(
        &self,
        texts: &[&str],
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
    ) -> Result<RunIds, Error> {
        let (a, d) = (allowed.as_allowed(), disallowed.as_allowed());
        let mut ends = Vec::with_capacity(texts.len());
        let bytes = texts.iter().map(|t| t.len()).sum();
        let ids = crate::buffers::exact_for_text(bytes, |out| {
            texts.iter().try_for_each(|t| {
                self.enc.encode(t, a, d, out)?;
                ends.push(out.len());
                Ok(())
            })
        })?;
        Ok((ids, ends))
    }

    /// The ids of all texts one after another, and where each starts (`len + 1` offsets), on
    /// `work_sharing::threads_here()` threads. Each share of the work writes the texts it takes
    /// into one buffer with room for all of them, so it never grows, and is kept for use again
    /// (`buffers`); the texts' ids are then copied out in order. (A buffer per text, as the
    /// list paths have, was at times freed and faulted in again on every call: 580-990 page
    /// faults a call, ~1.7 ms of a 9 ms batch, for gpt2 on holmes in 242 texts.)
    fn encode_flat(
        &self,
        texts: &[&str],
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
    ) -> Result<(Ids, Vec<i64>), Error> {
        let total = texts.iter().map(|t| t.len()).sum();
        let (a, d) = (allowed.as_allowed(), disallowed.as_allowed());
        let shares = crate::work_sharing::each_own_index(
            texts.len(),
            |i| texts[i].len(),
            || (None, Vec::new()),
            |(ids, spans): &mut (Option<Ids>, Vec<Span>), i| {
                let ids = ids.get_or_insert_with(|| crate::buffers::for_text(total));
                let start = ids.len();
                self.enc.encode(texts[i], a, d, ids)?;
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

    /// One text, on `num_threads` threads when more than one and the text is long enough to be
    /// cut (`long_enough_to_cut`, see `encode_parallel`); else on this thread.
    fn encode_text(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        num_threads: usize,
        piece_bytes: usize,
    ) -> PyResult<Ids> {
        if on_one_thread(text, num_threads, piece_bytes) {
            return detached(py, text.len(), || {
                self.encode_one(text, allowed, disallowed)
            })
            .map_err(|e| self.err(py, e));
        }
        on_threads(py, num_threads, text.len(), || {
            let mut out = Ids::default();
            self.enc
                .encode_parallel(
                    text,
                    allowed.as_allowed(),
                    disallowed.as_allowed(),
                    piece_bytes,
                    &mut out,
                )
                .map(|()| out)
        })?
        .map_err(|e| self.err(py, e))
    }
}

/// The owner of the ids behind a numpy array (the array's `base`). When numpy lets go of the
/// array, the buffer is kept for use again (`buffers::Ids`), so that the next large encode
/// finds its pages already in memory instead of having the kernel zero new ones.
#[pyclass(frozen, module = "tokenmill._core")]
struct IdBuffer {
    ids: Ids,
}

/// `ids` as a uint32 numpy array that owns them through an [`IdBuffer`].
fn ids_to_numpy(py: Python<'_>, ids: Ids) -> PyResult<Bound<'_, PyArray1<u32>>> {
    let owner = Bound::new(py, IdBuffer { ids })?;
    let view = numpy::ndarray::ArrayView1::from(&owner.get().ids[..]);
    // SAFETY: the array holds `owner` as its base, so the ids outlive it; `owner` is frozen and
    // nothing else reaches its `Vec`, which is therefore never reallocated while it lives.
    Ok(unsafe { PyArray1::borrow_from_array(&view, owner.clone().into_any()) })
}

/// Token ids from a list of ints or a uint32 numpy array; anything outside u32 is unknown.
fn ids_from_py(ids: &Bound<'_, PyAny>, n_vocab: usize) -> PyResult<Vec<u32>> {
    if let Ok(arr) = ids.cast::<PyArray1<u32>>() {
        return Ok(arr.readonly().as_slice()?.to_vec());
    }
    let wide: Vec<i64> = ids.extract()?;
    let mut out = Vec::with_capacity(wide.len());
    for i in wide {
        match u32::try_from(i) {
            Ok(id) => out.push(id),
            Err(_) => return Err(raise(ids.py(), "UnknownTokenIdError", (i, n_vocab))),
        }
    }
    Ok(out)
}

#[pymethods]
impl CoreTokenizer {
    /// tokens: the bytes of each mergeable token, indexed by rank. pattern: a pattern name or
    /// regex. special_tokens: (string, id) pairs.
    #[new]
    fn new(
        py: Python<'_>,
        tokens: Vec<Vec<u8>>,
        pattern: &str,
        special_tokens: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<Self> {
        let special_tokens = special_pairs(py, special_tokens)?;
        let enc = py
            .detach(|| {
                let vocab = Vocab::new(&tokens)?;
                let splitter = Splitter::new(pattern)?;
                Encoder::new(vocab, splitter, &special_tokens)
            })
            .map_err(|e| to_py(py, e, None))?;
        Ok(CoreTokenizer::wrap(enc))
    }

    /// Build straight from the bytes of a tiktoken rank file (no Python objects per token).
    #[staticmethod]
    fn from_rank_file(
        py: Python<'_>,
        data: &[u8],
        pattern: &str,
        special_tokens: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<Self> {
        let special_tokens = special_pairs(py, special_tokens)?;
        let enc = py
            .detach(|| {
                let vocab = Vocab::new(&vocab::parse_rank_file(data)?)?;
                let splitter = Splitter::new(pattern)?;
                Encoder::new(vocab, splitter, &special_tokens)
            })
            .map_err(|e| to_py(py, e, None))?;
        Ok(CoreTokenizer::wrap(enc))
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.enc.n_vocab()
    }

    #[getter]
    fn n_ranks(&self) -> usize {
        self.enc.vocab().len()
    }

    #[getter]
    fn pattern(&self) -> &str {
        self.enc.splitter().pattern()
    }

    #[getter]
    fn pattern_name(&self) -> Option<&'static str> {
        self.enc.splitter().named().map(|n| n.name())
    }

    #[getter]
    fn max_token_len(&self) -> usize {
        self.enc.vocab().max_token_len()
    }

    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.enc
            .specials()
            .iter()
            .map(|(s, id)| (s.to_string(), id))
            .collect()
    }

    /// `piece_bytes`: with `num_threads` > 1, the smallest piece a long text is cut into.
    #[pyo3(signature = (text, num_threads=1, piece_bytes=65536))]
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        num_threads: usize,
        piece_bytes: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        // No special token allowed or disallowed: `encode` is `encode_ordinary`.
        let none = SpecialSet::Ids(Vec::new());
        let text = text::utf8(text)?;
        self.encode_list(py, &text, &none, &none, num_threads, piece_bytes)
    }

    #[pyo3(signature = (text, allowed, disallowed, num_threads=1, piece_bytes=65536))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: usize,
        piece_bytes: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let text = text::utf8(text)?;
        self.encode_list(py, &text, &a, &d, num_threads, piece_bytes)
    }

    #[pyo3(signature = (text, allowed, disallowed, num_threads=1, piece_bytes=65536))]
    fn encode_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: usize,
        piece_bytes: usize,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let text = text::utf8(text)?;
        let out = self.encode_text(py, &text, &a, &d, num_threads, piece_bytes)?;
        ids_to_numpy(py, out)
    }

    #[pyo3(signature = (text, allowed, disallowed, num_threads=1, piece_bytes=65536))]
    fn count(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed: &Bound<'_, PyAny>,
        disallowed: &Bound<'_, PyAny>,
        num_threads: usize,
        piece_bytes: usize,
    ) -> PyResult<usize> {
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let text = text::utf8(text)?;
        let text: &str = &text;
        if num_threads > 1 {
            // The pieces' ids are built and dropped: a 4-byte id per ~4 bytes of text.
            return Ok(self
                .encode_text(py, text, &a, &d, num_threads, piece_bytes)?
                .len());
        }
        detached(py, text.len(), || {
            self.enc.count(text, a.as_allowed(), d.as_allowed())
        })
        .map_err(|e| self.err(py, e))
    }

    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let batch = text::utf8_batch(&texts)?;
        let texts = batch.strs();
        let runs = crate::work_sharing::runs(texts.len(), |i| texts[i].len());
        let bytes = batch_bytes(&texts);
        let num_threads = batch_threads(num_threads, bytes).min(runs.len());
        if num_threads <= 1 {
            let (ids, offsets) = detached(py, bytes, || self.encode_flat(&texts, &a, &d))
                .map_err(|e| self.err(py, e))?;
            let _paused = CollectorPaused::new(py);
            let lists = offsets
                .iter()
                .zip(&offsets[1..])
                .map(|(&from, &to)| self.to_list(py, &ids[from as usize..to as usize]))
                .collect::<PyResult<Vec<_>>>()?;
            return PyList::new(py, lists);
        }
        // Python lists can only be built with the GIL, on this thread: it builds each run's
        // lists as soon as its ids are ready, and while the next run is not, it encodes a run
        // no thread has taken, with the GIL released. So the pool lends `num_threads - 1`
        // workers, and a call never waits for a worker to wake: this thread alone would finish
        // it. (Before, this thread only built lists and waited, and a batch of 200 KB in texts
        // of 300 characters took longer on 2 threads than on one: 1.38-1.44 ms against
        // 1.06-1.08.)
        let helpers = pool(num_threads - 1)?;
        let _paused = CollectorPaused::new(py);
        let indices = crate::work_sharing::Indices::new(runs.len());
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
        let encode = |r: usize| {
            let _ = done[r].set(self.encode_run(&texts[runs[r].clone()], &a, &d));
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
                let threads = crate::work_sharing::threads_here();
                crate::work_sharing::on_each_thread(threads, |_| {
                    while let Some(r) = indices.take() {
                        encode(r);
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
                        py.detach(|| encode(r));
                    }
                    match slot.get() {
                        Some(Ok((ids, ends))) => {
                            let mut from = 0;
                            for &to in ends {
                                lists.push(self.to_list(py, &ids[from..to])?);
                                from = to;
                            }
                        }
                        Some(Err(e)) => return Err(self.err(py, e.clone())),
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

    /// All ids in one flat uint32 array plus int64 offsets (len(texts) + 1 of them).
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: usize,
    ) -> PyResult<FlatIds<'py>> {
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let batch = text::utf8_batch(&texts)?;
        let texts = batch.strs();
        // One call on the pool for both steps: each call wakes the workers again.
        let bytes = batch_bytes(&texts);
        let threads = batch_threads(num_threads, bytes);
        let (flat, offsets) = on_threads(py, threads, bytes, || self.encode_flat(&texts, &a, &d))?
            .map_err(|e| self.err(py, e))?;
        Ok((ids_to_numpy(py, flat)?, PyArray1::from_vec(py, offsets)))
    }

    fn count_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        num_threads: usize,
    ) -> PyResult<Vec<usize>> {
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let batch = text::utf8_batch(&texts)?;
        let texts = batch.strs();
        let bytes = batch_bytes(&texts);
        on_threads(py, batch_threads(num_threads, bytes), bytes, || {
            crate::work_sharing::map_indices(
                texts.len(),
                |i| texts[i].len(),
                |i| self.enc.count(texts[i], a.as_allowed(), d.as_allowed()),
            )
        })?
        .map_err(|e| self.err(py, e))
    }

    /// Encode one chunk exactly as the BPE step sees it (no splitting, no specials).
    fn encode_chunk<'py>(&self, py: Python<'py>, chunk: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let mut out = Vec::new();
        if !chunk.is_empty() {
            self.enc.encode_chunk(chunk, &mut out);
        }
        PyList::new(py, out)
    }

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_from_py(ids, self.enc.n_vocab())?;
        let mut out = Vec::with_capacity(ids.len() * 4);
        // About 4 bytes a token.
        detached(py, ids.len() * 4, || self.enc.decode_bytes(&ids, &mut out))
            .map_err(|e| self.err(py, e))?;
        Ok(PyBytes::new(py, &out))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: i64) -> PyResult<Bound<'py, PyBytes>> {
        let b = u32::try_from(id)
            .map_err(|_| Error::UnknownTokenId { id: id as u64 })
            .and_then(|id| self.enc.token_bytes(id))
            .map_err(|_| raise(py, "UnknownTokenIdError", (id, self.enc.n_vocab())))?;
        Ok(PyBytes::new(py, b))
    }

    /// The bytes of every mergeable token, by rank.
    fn tokens<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let v = self.enc.vocab();
        PyList::new(
            py,
            (0..v.len() as u32).map(|r| PyBytes::new(py, v.token(r))),
        )
    }

    /// For each rank, the two ranks that merge into it, or None (see `Vocab::parents`).
    fn merge_parents(&self) -> Vec<Option<(u32, u32)>> {
        let v = self.enc.vocab();
        (0..v.len() as u32).map(|r| v.parents(r)).collect()
    }

    /// The rank of a byte string, or None if it is not a mergeable token.
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.enc.vocab().rank(bytes)
    }

    /// The pre-tokenization chunks of `text` (special tokens are not cut out).
    fn chunks(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        let chunks = py.detach(|| {
            self.enc
                .splitter()
                .chunks(text)
                .map(|v| v.into_iter().map(str::to_string).collect())
        });
        chunks.map_err(|e| self.err(py, e))
    }
}

/// Chunks of `text` under `pattern` (a pattern name or regex).
#[pyfunction]
fn split(py: Python<'_>, pattern: &str, text: &str) -> PyResult<Vec<String>> {
    let splitter = Splitter::new(pattern).map_err(|e| to_py(py, e, None))?;
    let chunks = py.detach(|| {
        splitter
            .chunks(text)
            .map(|v| v.into_iter().map(str::to_string).collect())
    });
    chunks.map_err(|e| to_py(py, e, None))
}

/// Tokens by rank from the bytes of a tiktoken rank file.
#[pyfunction]
fn parse_rank_file<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
    let tokens = py
        .detach(|| vocab::parse_rank_file(data))
        .map_err(|e| to_py(py, e, None))?;
    PyList::new(py, tokens.iter().map(|t| PyBytes::new(py, t)))
}

/// The canonical name (`gpt2`, `cl100k`, `o200k`) of a pattern name or string, if it has one.
#[pyfunction]
fn pattern_name(pattern: &str) -> Option<&'static str> {
    pretokenize::Named::parse(pattern).map(|n| n.name())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreTokenizer>()?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(pattern_name, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rank_file, m)?)?;
    m.add("GPT2_PATTERN", pretokenize::GPT2_PATTERN)?;
    m.add("CL100K_PATTERN", pretokenize::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", pretokenize::O200K_PATTERN)?;
    pretokenize::register(m)?;
    m.add_class::<train::CoreTrainer>()?;
    Ok(())
}
