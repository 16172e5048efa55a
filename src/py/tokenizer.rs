//! `CoreTokenizer`, the native tokenizer behind `tokenmill.Tokenizer`: encode, count and decode
//! one text or a batch, into lists, numpy arrays or counts.

use super::batch;
use super::errors::{raise, to_py};
use super::gil::{detached, on_threads};
use super::id_list;
use super::text;
use crate::encode::normalize::Normalizer;
use crate::encode::room::exact_for_text;
use crate::encode::{long_enough_to_cut, Encoder};
use crate::error::Error;
use crate::merge;
use crate::pretokenize::Splitter;
use crate::runtime::buffers::Ids;
use crate::runtime::work_sharing;
use crate::specials::Allowed;
use crate::vocab::{self, Vocab};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use std::sync::{Arc, OnceLock};

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

/// The pattern argument: one pattern (a name or regex), or a list applied one after another
/// (`Splitter::sequence`).
fn patterns_of(pattern: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    match pattern.extract::<String>() {
        Ok(one) => Ok(vec![one]),
        Err(_) => pattern.extract(),
    }
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

/// Whether one text is encoded on this thread: one thread asked for, or a text too short to be
/// cut for more (`long_enough_to_cut`, see `encode_parallel`).
fn on_one_thread(text: &str, num_threads: usize, piece_bytes: usize) -> bool {
    num_threads <= 1 || !long_enough_to_cut(text.len(), piece_bytes)
}

/// Flat ids of a batch and the offsets where each text's ids start.
type FlatIds<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>);

/// The native tokenizer: vocabulary, splitter and special tokens. Immutable and thread-safe.
#[pyclass(module = "tokenmill._core", frozen)]
pub struct CoreTokenizer {
    enc: Arc<Encoder>,
    /// One Python int per id, made the first time a list holds that id: a list of ids is then
    /// built by taking references instead of allocating an int per element; made per id, not
    /// all at once, as a list seldom holds more than a few of the ids (docs/performance.md,
    /// 'Python boundary').
    ints: OnceLock<Box<[OnceLock<Py<PyAny>>]>>,
}

impl CoreTokenizer {
    /// The encoder (for the trainer, which continues from a tokenizer's vocabulary).
    pub(super) fn encoder(&self) -> &Encoder {
        &self.enc
    }

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
        exact_for_text(text.len(), |out| {
            self.enc
                .encode(text, allowed.as_allowed(), disallowed.as_allowed(), out)
        })
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
    /// tokens: the bytes of each mergeable token, indexed by rank, empty for a rank no token
    /// has (a gap, where a special token may go). pattern: a pattern name or regex, or a list
    /// of them applied one after another. special_tokens: (string, id) pairs. normalizer:
    /// `NFC`, `NFD`, `NFKC`, `NFKD` or None, applied to the text between special tokens before
    /// it is split. late_specials: special tokens looked for in that normalized text, spelled
    /// as normalized (HF's added tokens with `normalized` true), after the others are cut out.
    /// lstrip_specials, rstrip_specials: special tokens that take the whitespace before, after
    /// them with them (HF's `lstrip`, `rstrip`).
    #[new]
    #[pyo3(signature = (
        tokens, pattern, special_tokens, normalizer = None, late_specials = None,
        lstrip_specials = None, rstrip_specials = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tokens: Vec<Vec<u8>>,
        pattern: &Bound<'_, PyAny>,
        special_tokens: Vec<(String, Bound<'_, PyAny>)>,
        normalizer: Option<&str>,
        late_specials: Option<Vec<String>>,
        lstrip_specials: Option<Vec<String>>,
        rstrip_specials: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let patterns = patterns_of(pattern)?;
        let special_tokens = special_pairs(py, special_tokens)?;
        let normalizer = match normalizer {
            None => None,
            Some(name) => Some(Normalizer::parse(name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "normalizer must be NFC, NFD, NFKC, NFKD or None, not {name:?}"
                ))
            })?),
        };
        let late = late_specials.unwrap_or_default();
        let (left, right) = (
            lstrip_specials.unwrap_or_default(),
            rstrip_specials.unwrap_or_default(),
        );
        let enc = py
            .detach(|| {
                let vocab = Vocab::new(&tokens)?;
                let splitter = Splitter::sequence(&patterns)?;
                Encoder::new(vocab, splitter, &special_tokens)?
                    .with_normalizer(normalizer)
                    .with_late_specials(&late)?
                    .with_special_strips(&left, &right)
            })
            .map_err(|e| to_py(py, e, None))?;
        Ok(CoreTokenizer::wrap(enc))
    }

    /// Build straight from the bytes of a tiktoken rank file (no Python objects per token).
    #[staticmethod]
    fn from_rank_file(
        py: Python<'_>,
        data: &[u8],
        pattern: &Bound<'_, PyAny>,
        special_tokens: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<Self> {
        let patterns = patterns_of(pattern)?;
        let special_tokens = special_pairs(py, special_tokens)?;
        let enc = py
            .detach(|| {
                let vocab = Vocab::new(&vocab::parse_rank_file(data)?)?;
                let splitter = Splitter::sequence(&patterns)?;
                Encoder::new(vocab, splitter, &special_tokens)
            })
            .map_err(|e| to_py(py, e, None))?;
        Ok(CoreTokenizer::wrap(enc))
    }

    /// A tokenizer with this one's vocabulary, patterns and normalizer, and other special
    /// tokens (the constructor's last four arguments): the vocabulary is copied, not built
    /// again from the tokens.
    #[pyo3(signature = (
        special_tokens, late_specials = None, lstrip_specials = None, rstrip_specials = None
    ))]
    fn with_specials(
        &self,
        py: Python<'_>,
        special_tokens: Vec<(String, Bound<'_, PyAny>)>,
        late_specials: Option<Vec<String>>,
        lstrip_specials: Option<Vec<String>>,
        rstrip_specials: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let special_tokens = special_pairs(py, special_tokens)?;
        let late = late_specials.unwrap_or_default();
        let (left, right) = (
            lstrip_specials.unwrap_or_default(),
            rstrip_specials.unwrap_or_default(),
        );
        let enc = py
            .detach(|| {
                self.enc
                    .with_specials(&special_tokens, &late, &left, &right)
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

    /// The split patterns, applied one after another: one, but for a sequence.
    #[getter]
    fn patterns(&self) -> Vec<&str> {
        self.enc.splitter().patterns()
    }

    #[getter]
    fn pattern_name(&self) -> Option<&'static str> {
        self.enc.splitter().named().map(|n| n.name())
    }

    #[getter]
    fn normalizer(&self) -> Option<&'static str> {
        self.enc.normalizer().map(Normalizer::name)
    }

    #[getter]
    fn scanner(&self) -> Option<String> {
        self.enc.splitter().scanner()
    }

    #[getter]
    fn max_token_len(&self) -> usize {
        self.enc.vocab().max_token_len()
    }

    /// The special tokens looked for in the normalized text (see `__new__`).
    fn late_specials(&self) -> Vec<String> {
        self.enc.specials().late().map(str::to_string).collect()
    }

    /// The special tokens that take the whitespace before them, and after them.
    fn strip_specials(&self) -> (Vec<String>, Vec<String>) {
        let (left, right) = self.enc.specials().strips();
        let owned = |names: Vec<&str>| names.into_iter().map(str::to_string).collect();
        (owned(left), owned(right))
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

    /// `encode` by BPE-dropout's rule: each merge skipped with probability `p`, the draws
    /// seeded by `seed` (see `merge::dropout`).
    fn encode_dropout<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        allowed: &Bound<'py, PyAny>,
        disallowed: &Bound<'py, PyAny>,
        p: f64,
        seed: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        if !(0.0..=1.0).contains(&p) {
            return Err(PyValueError::new_err(format!(
                "dropout must be between 0 and 1, not {p}"
            )));
        }
        let (a, d) = (
            SpecialSet::extract(allowed)?,
            SpecialSet::extract(disallowed)?,
        );
        let text = text::utf8(text)?;
        let text: &str = &text;
        let threshold = merge::dropout::threshold(p);
        let ids = detached(py, text.len(), || {
            let mut out = Vec::new();
            let mut rng = merge::dropout::Rng::new(seed);
            self.enc
                .encode_dropout(
                    text,
                    a.as_allowed(),
                    d.as_allowed(),
                    threshold,
                    &mut rng,
                    &mut out,
                )
                .map(|()| out)
        })
        .map_err(|e| self.err(py, e))?;
        self.to_list(py, &ids)
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
        let (a, d) = (a.as_allowed(), d.as_allowed());
        batch::lists(
            py,
            &texts,
            num_threads,
            |t, out| self.enc.encode(t, a, d, out),
            |ids| self.to_list(py, ids),
            |e| self.err(py, e),
        )
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
        let bytes = batch::batch_bytes(&texts);
        let threads = batch::batch_threads(num_threads, bytes);
        let (a, d) = (a.as_allowed(), d.as_allowed());
        let encode = |t: &str, out: &mut Vec<u32>| self.enc.encode(t, a, d, out);
        let (flat, offsets) =
            on_threads(py, threads, bytes, || batch::encode_flat(&texts, encode))?
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
        let bytes = batch::batch_bytes(&texts);
        on_threads(py, batch::batch_threads(num_threads, bytes), bytes, || {
            work_sharing::map_indices(
                texts.len(),
                |i| texts[i].len(),
                |i| self.enc.count(texts[i], a.as_allowed(), d.as_allowed()),
            )
        })?
        .map_err(|e| self.err(py, e))
    }

    /// Encode one chunk exactly as the BPE step sees it (no splitting, no specials).
    fn encode_chunk<'py>(&self, py: Python<'py>, chunk: &[u8]) -> PyResult<Bound<'py, PyList>> {
        if let Some(b) = self.enc.vocab().byte_without_token(chunk) {
            return Err(raise(
                py,
                "NotATokenError",
                (format!(
                    "byte 0x{b:02x} is not a token of this vocabulary (it leaves out bytes UTF-8 \
                     text never holds), so these bytes cannot be encoded"
                ),),
            ));
        }
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

    /// The bytes of every mergeable token, by rank (empty for a gap).
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

    /// The pre-tokenization chunks of `text`, normalized first if the tokenizer has a
    /// normalizer (special tokens are not cut out).
    fn chunks(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        let chunks = py.detach(|| {
            self.enc
                .splitter()
                .chunks(&self.enc.normalized(text))
                .map(|v| v.into_iter().map(str::to_string).collect())
        });
        chunks.map_err(|e| self.err(py, e))
    }
}

/// Tokens by rank from the bytes of a tiktoken rank file.
#[pyfunction]
fn parse_rank_file<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
    let tokens = py
        .detach(|| vocab::parse_rank_file(data))
        .map_err(|e| to_py(py, e, None))?;
    PyList::new(py, tokens.iter().map(|t| PyBytes::new(py, t)))
}

/// Adds the tokenizer's class and functions to the module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreTokenizer>()?;
    m.add_function(wrap_pyfunction!(parse_rank_file, m)?)?;
    Ok(())
}
