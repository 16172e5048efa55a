//! tokenmill's native core: the hot loops of byte-level BPE.
//!
//! Pure Rust, no Python types: pre-tokenization ([`pretokenize`]), rank-based BPE encoding
//! ([`encode`]), vocabularies ([`vocab`]) and training ([`train`]). The PyO3 bindings live in
//! `py` behind the `python` feature, so `cargo test` needs no libpython.

pub mod encode;
pub mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod merge;
pub mod pretokenize;
pub mod runtime;
pub mod simd;
pub mod specials;
#[cfg(test)]
mod testing;
pub mod train;
pub mod vocab;

#[cfg(any(feature = "python", test))]
mod py;

pub use encode::Encoder;
pub use error::Error;
pub use pretokenize::Splitter;
pub use vocab::Vocab;
