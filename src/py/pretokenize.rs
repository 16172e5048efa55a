//! The pre-tokenizers: chunks of a text under a pattern, the named patterns, and for tests and
//! measurements the regex engine forced onto a named pattern, chunk counts without building
//! Python strings, and chunk boundaries of many short texts at once (for the exhaustive
//! per-code-point test).

use super::errors::to_py;
use crate::pretokenize::{shapes, Named, Splitter, CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A splitter on `engine`: "auto" (the scanner for a named pattern) or "regex" (fancy-regex).
fn splitter(py: Python<'_>, pattern: &str, engine: &str) -> PyResult<Splitter> {
    let made = match engine {
        "auto" => Splitter::new(pattern),
        "regex" => Splitter::with_regex_engine(pattern),
        _ => {
            return Err(PyValueError::new_err(format!(
                "engine must be 'auto' or 'regex', not {engine:?}"
            )))
        }
    };
    made.map_err(|e| to_py(py, e, None))
}

/// Chunks of `text` under `pattern` on the regex engine, even for a named pattern.
#[pyfunction]
fn split_regex(py: Python<'_>, pattern: &str, text: &str) -> PyResult<Vec<String>> {
    let s = splitter(py, pattern, "regex")?;
    py.detach(|| {
        s.chunks(text)
            .map(|v| v.into_iter().map(str::to_string).collect())
    })
    .map_err(|e| to_py(py, e, None))
}

/// The number of chunks of `text`; with the GIL released and no chunk copied, this times the
/// splitter alone.
#[pyfunction]
#[pyo3(signature = (pattern, text, engine = "auto"))]
fn count_chunks(py: Python<'_>, pattern: &str, text: &str, engine: &str) -> PyResult<usize> {
    let s = splitter(py, pattern, engine)?;
    py.detach(|| s.count(text)).map_err(|e| to_py(py, e, None))
}

/// `text` is pieces of `width` characters each (`width` <= 64; the last may be shorter), one
/// after the other: for each piece split on its own, a mask whose bit k is set when a chunk ends right after character
/// k. One string in, one array out: the exhaustive per-code-point test makes 13 million
/// pieces, and a Python string per piece cost more than the splitting.
#[pyfunction]
#[pyo3(signature = (pattern, text, width, engine = "auto"))]
fn boundary_masks<'py>(
    py: Python<'py>,
    pattern: &str,
    text: &str,
    width: usize,
    engine: &str,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    if !(1..=64).contains(&width) {
        return Err(PyValueError::new_err(format!(
            "width must be 1..=64 characters, not {width}"
        )));
    }
    let s = splitter(py, pattern, engine)?;
    let masks = py.detach(|| {
        let mut out = Vec::with_capacity(text.len() / width);
        // Byte offsets where pieces start: every `width`-th character, then the end.
        let mut starts = text
            .char_indices()
            .map(|(k, _)| k)
            .step_by(width)
            .chain(std::iter::once(text.len()));
        let Some(mut start) = starts.next() else {
            return Ok(out);
        };
        for end in starts {
            let piece = text.get(start..end).unwrap_or("");
            let (mut mask, mut chars) = (0u64, 0u32);
            s.split(piece, |chunk| {
                chars += chunk.chars().count() as u32;
                // chars <= width <= 64, so the shift is in range.
                mask |= 1u64.wrapping_shl(chars.wrapping_sub(1));
            })?;
            out.push(mask);
            start = end;
        }
        Ok(out)
    });
    masks
        .map(|m| PyArray1::from_vec(py, m))
        .map_err(|e| to_py(py, e, None))
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

/// The canonical name (`gpt2`, `cl100k`, `o200k`) of a pattern name or string, if it has one.
#[pyfunction]
fn pattern_name(pattern: &str) -> Option<&'static str> {
    Named::parse(pattern).map(|n| n.name())
}

/// The scanner that runs a pattern name or string (`gpt2`, `cl100k`, `o200k`, or a family and
/// its settings: `cl100k family, no \s++$`), or None if it runs on the regex engine.
#[pyfunction]
fn scanner_of(pattern: &str) -> Option<String> {
    match Named::parse(pattern) {
        Some(named) => Some(named.shape().describe()),
        None => shapes::recognize(pattern).map(|s| s.describe()),
    }
}

/// Adds the pre-tokenizers' functions and the named patterns to the module.
pub(super) fn register(m: &Bound<PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(pattern_name, m)?)?;
    m.add_function(wrap_pyfunction!(scanner_of, m)?)?;
    m.add("GPT2_PATTERN", GPT2_PATTERN)?;
    m.add("CL100K_PATTERN", CL100K_PATTERN)?;
    m.add("O200K_PATTERN", O200K_PATTERN)?;
    m.add_function(wrap_pyfunction!(split_regex, m)?)?;
    m.add_function(wrap_pyfunction!(count_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(boundary_masks, m)?)?;
    Ok(())
}
