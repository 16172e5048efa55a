//! The plain rules the targets hold tokenmill to, each written here from its definition, not
//! taken from the crate: fancy-regex's matches read as chunks, tiktoken's merge rule on a
//! chunk, and the special-token cut. And a walk over the instruction sets the CPU has.

use std::collections::HashMap;
use std::sync::Mutex;
use tokenmill::simd::{self, Level};

/// fancy-regex as the crate's custom-pattern path builds it (src/pretokenize/regex.rs): the
/// same backtrack limit, so that a pattern that exceeds it fails on both.
pub fn compile(pattern: &str) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
}

/// The chunks `findall` gives, as the splitter promises them (src/pretokenize/mod.rs): each
/// non-empty match, in order, and the text between matches as a chunk of its own; or the
/// engine's error (the backtrack limit).
pub fn regex_chunks<'t>(
    re: &fancy_regex::Regex,
    text: &'t str,
) -> Result<Vec<&'t str>, fancy_regex::Error> {
    let mut chunks = Vec::new();
    let mut at = 0;
    for m in re.find_iter(text) {
        let m = m?;
        if m.as_str().is_empty() {
            continue;
        }
        if m.start() > at {
            chunks.push(&text[at..m.start()]);
        }
        chunks.push(m.as_str());
        at = m.end();
    }
    if at < text.len() {
        chunks.push(&text[at..]);
    }
    Ok(chunks)
}

/// Where `chunks` (covering a text) start, and the text's end: 0 first.
pub fn bounds(chunks: &[&str]) -> Vec<usize> {
    let mut at = vec![0];
    for c in chunks {
        at.push(at[at.len() - 1] + c.len());
    }
    at
}

/// Ranks looked up by token bytes.
pub struct Ranks<'v> {
    map: HashMap<&'v [u8], u32>,
    longest: usize,
}

impl Ranks<'_> {
    /// Tokens indexed by rank.
    pub fn new(tokens: &[Vec<u8>]) -> Ranks<'_> {
        Ranks {
            map: tokens
                .iter()
                .enumerate()
                .map(|(r, t)| (t.as_slice(), r as u32))
                .collect(),
            longest: tokens.iter().map(Vec::len).max().unwrap_or(0),
        }
    }

    pub fn get(&self, bytes: &[u8]) -> Option<u32> {
        // Bytes longer than the longest token are none: no lookup, for speed alone.
        if bytes.len() > self.longest {
            return None;
        }
        self.map.get(bytes).copied()
    }
}

/// tiktoken's rule on one chunk, as DESIGN.md §2 says it: a chunk that is itself a token is
/// one id (when `whole`); otherwise, from single bytes, merge the adjacent pair whose joined
/// bytes have the lowest rank, the leftmost of equal ones, until no adjacent pair joins into
/// a token.
pub fn literal(ranks: &Ranks<'_>, chunk: &[u8], whole: bool) -> Vec<u32> {
    if let (true, Some(r)) = (whole, ranks.get(chunk)) {
        return vec![r];
    }
    // Parts as the byte ranges they cover.
    let mut parts: Vec<(usize, usize)> = (0..chunk.len()).map(|i| (i, i + 1)).collect();
    loop {
        let best = parts
            .windows(2)
            .enumerate()
            .filter_map(|(i, w)| Some((ranks.get(&chunk[w[0].0..w[1].1])?, i)))
            .min();
        let Some((_, i)) = best else { break };
        parts[i].1 = parts[i + 1].1;
        parts.remove(i + 1);
    }
    parts
        .iter()
        .map(|&(s, e)| ranks.get(&chunk[s..e]).expect("every byte is a token"))
        .collect()
}

/// A piece of a text cut at its special tokens: text, or the index of a special token.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'t> {
    Text(&'t str),
    Special(usize),
}

/// `text` cut at its special tokens `names`, tiktoken's way (DESIGN.md §2): at each place,
/// from the left, the longest name that starts there; one that `accept` refuses is plain
/// text, and the search goes on from the next byte (so it hides no accepted name that starts
/// inside it).
pub fn cut_specials<'t>(
    text: &'t str,
    names: &[String],
    accept: impl Fn(usize) -> bool,
) -> Vec<Piece<'t>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut at) = (0, 0);
    while at < b.len() {
        let longest = names
            .iter()
            .enumerate()
            .filter(|(_, n)| b[at..].starts_with(n.as_bytes()))
            .max_by_key(|(_, n)| n.len());
        match longest {
            Some((k, name)) if accept(k) => {
                // A name starts and ends on character boundaries: slicing cannot fail.
                out.push(Piece::Text(&text[start..at]));
                out.push(Piece::Special(k));
                at += name.len();
                start = at;
            }
            _ => at += 1,
        }
    }
    out.push(Piece::Text(&text[start..]));
    out
}

/// Serializes the walks over instruction sets: the ceiling is one per process, and the seed
/// replay runs the targets on several threads.
static LEVELS: Mutex<()> = Mutex::new(());

/// Call `f` with the loops limited to each level this CPU has, lowest first; the highest is
/// left in force.
pub fn each_level(mut f: impl FnMut(Level)) {
    let _one_at_a_time = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
    let levels: Vec<Level> = simd::supported().collect();
    for &level in &levels {
        simd::limit_to(level).expect("a supported level");
        f(level);
    }
    if let Some(&top) = levels.last() {
        simd::limit_to(top).expect("a supported level");
    }
}
