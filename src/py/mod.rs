//! The Python bindings (the native module `tokenmill._core`, typed in `_core.pyi`): every
//! `#[pyclass]` and `#[pymethods]`, and everything that exists only for CPython. The core they
//! call knows nothing of Python; each binding converts its arguments, runs the core where the
//! GIL rules say ([`gil`]) and maps [`Error`](crate::error::Error)s to exceptions ([`errors`]).
//!
//! - [`tokenizer`]: `CoreTokenizer`; [`batch`]: its batches; [`train`]: `CoreTrainer`;
//!   [`pretokenize`]: the splitters and named patterns; [`isa`]: `TOKENMILL_ISA` and the
//!   instruction set in use.
//! - [`text`]: a `str`'s text as UTF-8 without CPython's attached copy, converted by
//!   [`code_units`]; [`id_list`]: ids written straight into a Python list's items.

#[cfg(feature = "python")]
mod batch;
pub(crate) mod code_units;
#[cfg(feature = "python")]
mod errors;
#[cfg(feature = "python")]
mod gil;
#[cfg(feature = "python")]
mod id_list;
#[cfg(feature = "python")]
mod isa;
#[cfg(feature = "python")]
mod pretokenize;
#[cfg(feature = "python")]
mod text;
#[cfg(feature = "python")]
mod tokenizer;
#[cfg(feature = "python")]
mod train;

#[cfg(feature = "python")]
#[pyo3::pymodule]
fn _core(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
    isa::init(m)?;
    isa::register(m)?;
    tokenizer::register(m)?;
    pretokenize::register(m)?;
    train::register(m)
}
