//! With the `python` feature, the cfgs that describe the target interpreter (`Py_GIL_DISABLED`,
//! `Py_LIMITED_API`, `PyPy`, ...), as PyO3 sets them for itself.

fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
