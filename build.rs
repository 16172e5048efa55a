//! With the `python` feature, the cfgs that describe the target interpreter (`Py_GIL_DISABLED`,
//! `Py_LIMITED_API`, `PyPy`, ...), as PyO3 sets them for itself.

fn main() {
    // Without this line cargo reruns the script, and rebuilds the crate, whenever any file of
    // the package changes: the Python sources, the tests, fuzz/'s growing corpora.
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
