//! The one error type of the core. The Python bindings map each variant to an exception class
//! of `tokenmill.errors` (`py/errors.rs`).

use std::fmt;

/// Everything that can go wrong in the core, with enough context to name the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A split pattern that does not compile.
    InvalidPattern { pattern: String, message: String },
    /// The regex engine gave up on an input (e.g. its backtracking limit).
    RegexRuntime { message: String },
    /// A vocabulary that cannot be used: duplicate tokens, gaps, missing bytes...
    InvalidVocab { message: String },
    /// A malformed line in a vocabulary file (1-based line number).
    VocabFile { line: usize, message: String },
    /// Special-token definitions that clash or are empty.
    InvalidSpecialTokens { message: String },
    /// A token id that the vocabulary does not have.
    UnknownTokenId { id: u64 },
    /// Text containing a special token that the caller did not allow.
    DisallowedSpecialToken { token: String },
    /// Training arguments or input that cannot be used.
    InvalidTraining { message: String },
    /// An instruction set asked for that is unknown or that this CPU lacks.
    UnsupportedIsa { message: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPattern { pattern, message } => {
                write!(f, "invalid split pattern {pattern:?}: {message}")
            }
            Error::RegexRuntime { message } => {
                write!(f, "split pattern failed on this input: {message}")
            }
            Error::InvalidVocab { message } => write!(f, "invalid vocabulary: {message}"),
            Error::VocabFile { line, message } => write!(f, "line {line}: {message}"),
            Error::InvalidSpecialTokens { message } => {
                write!(f, "invalid special tokens: {message}")
            }
            Error::UnknownTokenId { id } => write!(f, "unknown token id {id}"),
            Error::DisallowedSpecialToken { token } => {
                write!(
                    f,
                    "text contains the special token {token:?}, which is disallowed"
                )
            }
            Error::InvalidTraining { message } | Error::UnsupportedIsa { message } => {
                write!(f, "{message}")
            }
        }
    }
}

impl std::error::Error for Error {}
