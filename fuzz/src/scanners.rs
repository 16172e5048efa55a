//! (a) The scanners against a plain regex engine.
//!
//! For every shape the scanners run (gpt2, cl100k, o200k and their families' variants) and
//! DeepSeek V3's three stages, on any text (invalid UTF-8 replaced): the scanner's chunks, on
//! every instruction set this CPU has (`simd::limit_to` caps the copies the splitter runs), and
//! by its per-character path alone, equal fancy-regex's on the pattern strings (a sequence's
//! stages applied in turn, each to every chunk of the one before), compiled as the crate's
//! custom-pattern path compiles any pattern. The batches of
//! `split_bounds` keep their contract. And the cut rule (`pretokenize::cut`): a text cut where
//! it says splits into the chunks of the whole text.
//!
//! Why fancy-regex and not Python's `regex` (the test suite's oracle): the scanners promise
//! tiktoken's chunks, and tiktoken runs fancy-regex. The two engines give the same chunks on
//! these patterns except for the Unicode data behind `\p{..}`: fancy-regex (regex-syntax 0.8)
//! has Unicode 16.0, `regex` 2026.x has Unicode 17.0, which assigns some 17,500 more code
//! points (CJK Extension J at U+31350.., U+3D000.., U+0558 and others) and moves U+0295 from
//! Ll to Lo. On those, tiktoken 0.14 splits as fancy-regex does (checked with a vocabulary
//! holding both candidate chunks: `"a\u{558}b"` is `a`, `\u{558}b` in tiktoken and fancy-regex,
//! one chunk in `regex`), so fancy-regex is right for tokenmill, whose promise is tiktoken's
//! ids, while `regex` is right by the current Unicode standard. tests/test_pretokenize.py
//! bridges the same gap from the other side (`tokenmill.unicode_data.for_regex`).

use crate::input::Input;
use crate::oracle::{self, bounds, regex_chunks};
use std::sync::LazyLock;
use tokenmill::pretokenize::{cut, Shape, DEEPSEEK_V3_STAGES};
use tokenmill::{fuzzing, Splitter};

struct Family {
    name: String,
    scanner: Splitter,
    /// The patterns, applied one after another.
    stages: Vec<fancy_regex::Regex>,
}

impl Family {
    fn new(patterns: &[String]) -> Family {
        let scanner = Splitter::sequence(patterns).expect("a scanner's patterns");
        Family {
            name: scanner.scanner().expect("runs on a scanner"),
            scanner,
            stages: patterns
                .iter()
                .map(|p| oracle::compile(p).expect("the pattern compiles"))
                .collect(),
        }
    }
}

static FAMILIES: LazyLock<Vec<Family>> = LazyLock::new(|| {
    Shape::ALL
        .into_iter()
        .map(|shape| vec![shape.pattern()])
        .chain([DEEPSEEK_V3_STAGES.map(String::from).to_vec()])
        .map(|patterns| Family::new(&patterns))
        .collect()
});

/// Builds the families before the first input, so that libFuzzer's time limit per input does not
/// count compiling their regexes (seconds in an unoptimised build under AddressSanitizer).
pub fn init() {
    LazyLock::force(&FAMILIES);
}

/// Cuts whose halves are split again, at most (each costs two splits of the text).
const CUTS_CHECKED: usize = 4;

pub fn run(data: &[u8]) {
    let text = Input::new(data).rest_text();
    for family in FAMILIES.iter() {
        check(family, &text);
    }
}

fn check(family: &Family, text: &str) {
    let name = &family.name;
    let mut want = vec![text];
    for stage in &family.stages {
        // A text over the engine's backtrack limit has no oracle.
        let Ok(chunks) = want
            .iter()
            .map(|c| regex_chunks(stage, c))
            .collect::<Result<Vec<_>, _>>()
        else {
            return;
        };
        want = chunks.concat();
    }
    let want_bounds = bounds(&want);
    oracle::each_level(|level| {
        let got = family.scanner.chunks(text).expect("a scanner never fails");
        assert_eq!(got, want, "{name} on {}: {text:?}", level.name());
        check_batches(&family.scanner, text, &want_bounds);
    });
    let per_char = fuzzing::per_character_bounds(&family.scanner, text).expect("never fails");
    assert_eq!(per_char, want_bounds, "{name}, per character: {text:?}");
    check_cuts(family, text, &want, &want_bounds);
}

/// `split_bounds`'s contract: batches of at least two boundaries, each starting with the last
/// one of the batch before (0 for the first), the last ending at the text's end; all of them
/// the chunks' starts. No call for an empty text.
fn check_batches(splitter: &Splitter, text: &str, want: &[usize]) {
    let mut all: Vec<usize> = Vec::new();
    splitter
        .split_bounds(text, |at| {
            assert!(at.len() >= 2, "a batch of {} boundaries", at.len());
            assert_eq!(
                at[0],
                all.last().copied().unwrap_or(0),
                "batches overlap by one"
            );
            all.extend_from_slice(&at[usize::from(!all.is_empty())..]);
        })
        .expect("a scanner never fails");
    if text.is_empty() {
        assert!(all.is_empty(), "a call for an empty text");
    } else {
        assert_eq!(all, want, "{:?}: batched boundaries", splitter.scanner());
    }
    assert_eq!(splitter.count(text).unwrap(), want.len() - 1);
}

/// Every place either cut rule allows is a chunk boundary, and for a few of them the two
/// halves split apart give the whole text's chunks.
fn check_cuts(family: &Family, text: &str, want: &[&str], want_bounds: &[usize]) {
    let b = text.as_bytes();
    let mut cuts: Vec<usize> = Vec::new();
    let mut from = 0;
    while let Some(c) = cut::next_cut(b, from) {
        cuts.push(c);
        from = c + 1;
    }
    from = 0;
    while let Some(c) = cut::next_newline_cut(b, from, b.len()) {
        assert!(cuts.contains(&c), "next_cut skips the newline cut at {c}");
        from = c + 1;
    }
    let name = &family.name;
    for &c in &cuts {
        assert!(
            want_bounds.binary_search(&c).is_ok(),
            "{name}: a cut at {c} splits a chunk: {text:?}"
        );
    }
    let step = cuts.len().div_ceil(CUTS_CHECKED).max(1);
    for &c in cuts.iter().step_by(step) {
        let mut parts = family.scanner.chunks(&text[..c]).unwrap();
        parts.extend(family.scanner.chunks(&text[c..]).unwrap());
        assert_eq!(parts, want, "{name}: cut at {c}: {text:?}");
    }
}
