//! Core errors as Python exceptions: each [`Error`] variant raises its class of
//! `tokenmill.errors`, whose messages say how to fix the call.

use crate::error::Error;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Raise the tokenmill.errors class `name` built with `args`.
pub(super) fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(
    py: Python<'py>,
    name: &str,
    args: A,
) -> PyErr {
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
pub(super) fn to_py(py: Python<'_>, err: Error, n_vocab: Option<usize>) -> PyErr {
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
        Error::UnsupportedIsa { .. } => raise(py, "UnsupportedIsaError", (err.to_string(),)),
    }
}
