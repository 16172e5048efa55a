//! Binding of the trainer: Python feeds texts in order (as many calls as it likes), then asks
//! for merges in batches, so it can draw a progress bar between calls. Every call releases the
//! GIL; counting runs on a rayon pool of exactly `num_threads` threads.

use super::errors::to_py;
use super::gil::pool;
use super::tokenizer::CoreTokenizer;
use crate::train::Trainer;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

/// A byte-level BPE trainer (see tokenmill.training.train, which drives it).
#[pyclass(module = "tokenmill._core")]
pub struct CoreTrainer {
    trainer: Trainer,
    num_threads: usize,
}

#[pymethods]
impl CoreTrainer {
    /// pattern: a pattern name or regex; special_tokens: strings cut out of the text.
    #[new]
    fn new(
        py: Python<'_>,
        pattern: &str,
        special_tokens: Vec<String>,
        num_threads: usize,
    ) -> PyResult<Self> {
        let trainer = Trainer::new(pattern, &special_tokens).map_err(|e| to_py(py, e, None))?;
        Ok(CoreTrainer {
            trainer,
            num_threads: num_threads.max(1),
        })
    }

    /// Count the chunks of the next texts of the corpus (no chunk spans two texts).
    fn feed(&mut self, py: Python<'_>, texts: Vec<PyBackedStr>) -> PyResult<()> {
        let pool = pool(self.num_threads)?;
        let trainer = &mut self.trainer;
        py.detach(|| pool.install(|| trainer.feed(&texts)))
            .map_err(|e| to_py(py, e, None))
    }

    /// The distinct chunks counted so far as (chunk, count), in order of first occurrence:
    /// what a worker that counted one part of a corpus sends back.
    fn counted(&self) -> Vec<(String, u64)> {
        self.trainer
            .counted()
            .into_iter()
            .map(|(c, n)| (c.to_string(), n))
            .collect()
    }

    /// Add the `counted()` of a trainer that counted the next `n_bytes` of the corpus; adding
    /// the parts in corpus order gives exactly the counts of feeding the whole corpus here.
    fn add_counted(
        &mut self,
        py: Python<'_>,
        counted: Vec<(PyBackedStr, u64)>,
        n_bytes: u64,
    ) -> PyResult<()> {
        let trainer = &mut self.trainer;
        py.detach(|| trainer.add_counted(&counted, n_bytes))
            .map_err(|e| to_py(py, e, None))
    }

    /// (bytes, chunks, distinct chunks) counted so far.
    fn stats(&self) -> (u64, u64, usize) {
        self.trainer.stats()
    }

    /// Bound the table of distinct chunks to `bytes` (None: no bound); rare chunks are
    /// dropped by the rule of `reference.count_chunks_bounded`.
    fn set_limit(&mut self, bytes: Option<u64>) {
        self.trainer.set_limit(bytes);
    }

    /// What bounding the table dropped so far: (times pruned, highest count dropped,
    /// distinct chunks dropped, occurrences dropped).
    fn pruned(&self) -> (u64, u64, u64, u64) {
        let p = self.trainer.pruned();
        (p.times, p.most, p.chunks, p.occurrences)
    }

    /// Continue from `base`'s vocabulary (once, after counting, before merging): each
    /// distinct chunk starts as `base` encodes it, new tokens take ids from its n_vocab on.
    fn extend(&mut self, py: Python<'_>, base: PyRef<'_, CoreTokenizer>) -> PyResult<()> {
        let pool = pool(self.num_threads)?;
        let trainer = &mut self.trainer;
        let enc = base.encoder();
        py.detach(|| pool.install(|| trainer.extend(enc)))
            .map_err(|e| to_py(py, e, None))
    }

    /// Learn up to `max_merges` more merges as (left, right, count); fewer when no pair is
    /// seen `min_frequency` times.
    fn merge(
        &mut self,
        py: Python<'_>,
        max_merges: usize,
        min_frequency: u64,
    ) -> Vec<(u32, u32, u64)> {
        let trainer = &mut self.trainer;
        py.detach(|| trainer.merge(max_merges, min_frequency))
            .into_iter()
            .map(|m| (m.left, m.right, m.count))
            .collect()
    }
}

/// Adds the trainer's class to the module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreTrainer>()
}
