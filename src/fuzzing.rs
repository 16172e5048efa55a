//! What the fuzz targets (`fuzz/`) call beyond the public API, behind the `fuzzing` feature:
//! each merge algorithm on its own, and the scanners without their block path.
//!
//! The encoder gives the heap only chunks of 1 KB or more and the long path only chunks of
//! 4 KB or more, which fuzzed inputs seldom are, and the scanners' block path takes most text;
//! through these every input reaches each of them. Not an API for users: it follows the
//! internals it opens.

use crate::error::Error;
use crate::merge::long::{Limits, LongPath};
use crate::merge::{heap, small};
use crate::pretokenize::Splitter;
use crate::vocab::Vocab;

/// The long path's limits that [`Merges`] runs besides its real ones: windows alone (borders
/// handed to the search early, or never), and windows and search in turns of a few windows.
/// With the real limits a chunk of under 4 KB is one segment, all search.
const LONG_LIMITS: [(&str, Limits); 4] = [
    (
        "long: windows, spans up to 8 bytes",
        Limits {
            segment: usize::MAX,
            max_span: 8,
            short_token: usize::MAX,
            windows_first: true,
        },
    ),
    (
        "long: windows, spans of any length",
        Limits {
            segment: usize::MAX,
            max_span: usize::MAX,
            short_token: usize::MAX,
            windows_first: true,
        },
    ),
    (
        "long: turns of 130 bytes, windows first",
        Limits {
            segment: 130,
            max_span: 8,
            short_token: 3,
            windows_first: true,
        },
    ),
    (
        "long: turns of 64 bytes, search first",
        Limits {
            segment: 64,
            max_span: 512,
            short_token: 4,
            windows_first: false,
        },
    ),
];

/// Every merge algorithm of `merge`, for one vocabulary.
#[derive(Debug)]
pub struct Merges {
    long: Option<LongPath>,
}

impl Merges {
    /// The number of algorithms [`Merges::run`] takes.
    pub const COUNT: usize = 3 + LONG_LIMITS.len();

    pub fn new(vocab: &Vocab) -> Merges {
        Merges {
            long: LongPath::new(vocab),
        }
    }

    /// The name of algorithm `k` (below [`Merges::COUNT`]), for messages.
    pub fn name(k: usize) -> &'static str {
        match k {
            0 => "rescan",
            1 => "heap",
            2 => "long",
            _ => LONG_LIMITS.get(k - 3).map_or("none", |(name, _)| name),
        }
    }

    /// The ids of `chunk` by algorithm `k`, without the whole-chunk lookup (tiktoken's rule
    /// from single bytes); None where the algorithm does not take the chunk: an empty one, one
    /// of [`small::LIMIT`] bytes or more for the rescan, and for the long path one that is a
    /// token or a vocabulary too large for its trie.
    pub fn run(&self, k: usize, vocab: &Vocab, chunk: &[u8]) -> Option<Vec<u32>> {
        if chunk.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        match k {
            0 if chunk.len() < small::LIMIT => small::merge(vocab, chunk, &mut out),
            1 => heap::merge(vocab, chunk, &mut out),
            2.. if vocab.rank(chunk).is_none() => {
                let long = self.long.as_ref()?;
                match k.checked_sub(3).map(|i| LONG_LIMITS.get(i)) {
                    None => long.encode(vocab, chunk, &mut out),
                    Some(Some(&(_, limits))) => long.encode_with(vocab, chunk, &mut out, limits),
                    Some(None) => return None,
                }
            }
            _ => return None,
        }
        Some(out)
    }
}

/// The chunk boundaries of `text` by the scanner's per-character path alone (for a regex
/// splitter, its usual ones): 0 first, `text.len()` last.
pub fn per_character_bounds(splitter: &Splitter, text: &str) -> Result<Vec<usize>, Error> {
    splitter.per_character_bounds(text)
}
