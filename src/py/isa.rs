//! The instruction set of the hot loops as Python sees it: `TOKENMILL_ISA` read once when the
//! module is imported ([`init`]), and what runs ([`isa`], [`supported_isas`]).

use super::errors::to_py;
use crate::simd::{self, Level};
use pyo3::prelude::*;

/// Limit the loops to `TOKENMILL_ISA`'s level, if it is set: an unknown name or a level this
/// CPU lacks fails the import with `UnsupportedIsaError`, rather than running another path
/// than the one asked for.
pub(super) fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let Some(name) = std::env::var_os("TOKENMILL_ISA") else {
        return Ok(());
    };
    let name = name.to_string_lossy();
    Level::parse(name.trim())
        .and_then(simd::limit_to)
        .map_err(|e| to_py(m.py(), e, None))
}

/// The instruction set the loops run now: `portable`, `avx2`, `avx512` or `avx512vbmi`.
#[pyfunction]
fn isa() -> &'static str {
    simd::in_use().name()
}

/// The instruction sets this CPU can run, lowest first (`TOKENMILL_ISA` may name any).
#[pyfunction]
fn supported_isas() -> Vec<&'static str> {
    simd::supported().map(Level::name).collect()
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(isa, m)?)?;
    m.add_function(wrap_pyfunction!(supported_isas, m)?)
}
