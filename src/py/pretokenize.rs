//! Bindings for testing and measuring the pre-tokenizers: the regex engine forced onto a named
//! pattern, chunk counts without building Python strings, and chunk boundaries of many short
//! texts at once (for the exhaustive per-code-point test).

use super::to_py;
// Re-exported because this module's name shadows `crate::pretokenize` inside `py`, where the
// module function uses these.
use crate::pretokenize::Splitter;
pub(super) use crate::pretokenize::{Named, CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

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

/// For each text of at most 64 characters, a mask whose bit k is set when a chunk ends right
/// after character k.
#[pyfunction]
#[pyo3(signature = (pattern, texts, engine = "auto"))]
fn boundary_masks<'py>(
    py: Python<'py>,
    pattern: &str,
    texts: Vec<PyBackedStr>,
    engine: &str,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let s = splitter(py, pattern, engine)?;
    let masks = py.detach(|| {
        let mut out = Vec::with_capacity(texts.len());
        for text in &texts {
            let text: &str = text;
            let mut mask = 0u64;
            let mut chars = 0usize;
            let mut too_long = false;
            s.split(text, |chunk| {
                chars += chunk.chars().count();
                match chars.checked_sub(1).filter(|&k| k < 64) {
                    Some(k) => mask |= 1 << k,
                    None => too_long = true,
                }
            })
            .map_err(|e| e.to_string())?;
            if too_long {
                return Err(format!("text of {chars} characters: at most 64 allowed"));
            }
            out.push(mask);
        }
        Ok(out)
    });
    masks
        .map(|m| PyArray1::from_vec(py, m))
        .map_err(PyValueError::new_err)
}

pub fn register(m: &Bound<PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(split_regex, m)?)?;
    m.add_function(wrap_pyfunction!(count_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(boundary_masks, m)?)?;
    Ok(())
}
