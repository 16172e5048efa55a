//! tokenmill's native core: the hot loops of byte-level BPE.
//!
//! Pure Rust, no Python types: pre-tokenization ([`pretokenize`]), rank-based BPE encoding
//! ([`encode`]), vocabularies ([`vocab`]) and training ([`train`]). The PyO3 bindings live in
//! [`py`] behind the `python` feature, so `cargo test` needs no libpython.

pub mod atoms;
mod buffers;
#[cfg(any(feature = "python", test))]
mod code_units;
pub mod encode;
pub mod error;
mod pages;
pub mod pretokenize;
mod short_key;
pub mod threads;
pub mod train;
pub mod vocab;
pub mod work_sharing;

#[cfg(feature = "python")]
mod py;

pub use encode::Encoder;
pub use error::Error;
pub use pretokenize::Splitter;
pub use vocab::Vocab;
