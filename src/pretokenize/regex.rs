//! Any pattern other than the named ones, on fancy-regex (the engine tiktoken's patterns are
//! written for); also the named ones when a test or benchmark asks for the regex engine.

use super::scan::Sink;
use crate::error::Error;

pub(super) fn compile(pattern: &str) -> Result<fancy_regex::Regex, Error> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_string(),
            message: e.to_string(),
        })
}

pub(super) fn split(
    re: &fancy_regex::Regex,
    text: &str,
    sink: &mut Sink<impl FnMut(&[usize])>,
) -> Result<(), Error> {
    let mut covered = 0;
    for m in re.find_iter(text) {
        let m = m.map_err(|e| Error::RegexRuntime {
            message: e.to_string(),
        })?;
        if m.start() == m.end() {
            continue;
        }
        // Matches are ascending, non-overlapping and on character boundaries; text between
        // them is a chunk of its own.
        if m.start() > covered {
            sink.push(m.start());
        }
        sink.push(m.end());
        sink.flush_if_full();
        covered = m.end();
    }
    if text.len() > covered {
        sink.push(text.len());
    }
    Ok(())
}
