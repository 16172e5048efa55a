//! (b) The splitter on custom patterns against fancy-regex's matches directly.
//!
//! The first byte chooses the pattern: below 0xF0, one made by [`pattern`] from the next
//! bytes, a grammar of the shapes GPT-style patterns are made of (contractions, an optional
//! prefix and a letter class, digit groups, punctuation runs, newline runs, whitespace with
//! `(?!\S)`); from 0xF0, the bytes up to a 0 byte, whatever they are. The rest is the text.
//! The splitter must compile a pattern exactly when fancy-regex does, and split the text into
//! the chunks its matches make (`oracle::regex_chunks`), failing only where the engine fails
//! (the backtrack limit); an arbitrary pattern only has to give an error or chunks that cover
//! the text, never a panic or a hang.
//!
//! The pattern compiler of issue 34 gets its target beside this one: the same grammar
//! ([`pattern`] is public for it), each pattern compiled by it and run on the same text, its
//! chunks held to fancy-regex's here.
//!
//! Where fancy-regex and Python's `regex` (DESIGN.md §2: custom patterns have `findall`'s
//! semantics) differ on such patterns, besides the Unicode data (see `scanners`): `$` matches
//! only at the very end in fancy-regex, also before a final `\n` in `regex` (`[a-z]+$` on
//! `"ab\n"`: one chunk `ab\n` in tokenmill, `ab` and `\n` by `findall`); and after an empty
//! match `findall` tries a non-empty one at the same place, where fancy-regex moves on a
//! character (`|ab` on `"abab"`: chunks `ab`, `ab` by `findall`, one chunk `abab` in tokenmill).
//! tiktoken runs fancy-regex, so on these it agrees with tokenmill. The grammar's shapes never
//! meet either difference (no alternative matches empty; `$` only after `\s+`, which takes a
//! final `\n` itself).

use crate::input::Input;
use crate::oracle::{self, regex_chunks};
use tokenmill::pretokenize::Named;
use tokenmill::{Error, Splitter};

const CONTRACTIONS: &[&str] = &[
    r"'(?:[sdmt]|ll|ve|re)",
    r"'(?i:[sdmt]|ll|ve|re)",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"'s|'t|'re|'ve|'m|'ll|'d",
];
const PREFIXES: &[&str] = &["", " ?", " ", r"[^\r\n\p{L}\p{N}]?", r"[^\r\n\p{L}\p{N}]?+"];
const LETTERS: &[&str] = &[
    r"\p{L}+",
    r"\p{L}++",
    r"\p{L}",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"[a-zA-Z]+",
    r"\w+",
];
const SUFFIXES: &[&str] = &["", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"];
const DIGITS: &[&str] = &[
    r"\p{N}{1,3}",
    r"\p{N}{1,3}+",
    r" ?\p{N}++",
    r" ?\p{N}+",
    r"\p{N}",
    r"\d{1,3}",
    r"\d+",
];
const PUNCTUATION: &[&str] = &[
    r" ?[^\s\p{L}\p{N}]+",
    r" ?[^\s\p{L}\p{N}]++",
    r" ?[^\s\p{L}\p{N}]++[\r\n]*+",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"[^\s\p{L}\p{N}]",
];
const NEWLINES: &[&str] = &[r"\s*[\r\n]+", r"\s*[\r\n]", r"[\r\n]+", r"\n+", r"\r?\n"];
const WHITESPACE: &[&str] = &[
    r"\s+(?!\S)",
    r"\s++$",
    r"\s+$",
    r"\s+",
    r"\s",
    r" +",
    r"[ \t]+(?!\S)",
];

/// A pattern of one to eight GPT-style alternatives, chosen by `input`.
pub fn pattern(input: &mut Input<'_>) -> String {
    let n = 1 + input.below(8);
    let alternatives: Vec<String> = (0..n)
        .map(|_| {
            let choice = input.byte();
            let alternative = match choice % 6 {
                0 => input.pick(CONTRACTIONS).to_string(),
                1 => [
                    input.pick(PREFIXES),
                    input.pick(LETTERS),
                    input.pick(SUFFIXES),
                ]
                .concat(),
                2 => input.pick(DIGITS).to_string(),
                3 => input.pick(PUNCTUATION).to_string(),
                4 => input.pick(NEWLINES).to_string(),
                _ => input.pick(WHITESPACE).to_string(),
            };
            // Now and then in a group, case-insensitive or not.
            match choice / 6 % 8 {
                0 => format!("(?:{alternative})"),
                1 => format!("(?i:{alternative})"),
                _ => alternative,
            }
        })
        .collect();
    alternatives.join("|")
}

/// Texts of arbitrary patterns are cut to this many bytes: a backtracking pattern may take
/// its full backtrack limit at every position.
const ARBITRARY_TEXT: usize = 256;

pub fn run(data: &[u8]) {
    let mut input = Input::new(data);
    let arbitrary = input.byte() >= 0xF0;
    let pattern = if arbitrary {
        String::from_utf8_lossy(input.until_zero()).into_owned()
    } else {
        pattern(&mut input)
    };
    let mut text = input.rest_text();
    if arbitrary {
        let mut end = text.len().min(ARBITRARY_TEXT);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    if pattern.is_empty() {
        // fancy-regex matches the empty pattern everywhere; the splitter refuses it.
        assert!(matches!(
            Splitter::new(&pattern),
            Err(Error::InvalidPattern { .. })
        ));
        return;
    }
    // A pattern that is a name, or tiktoken's string, runs on the scanner: its oracle is the
    // pattern string.
    let oracle_pattern = match Named::parse(&pattern) {
        Some(named) => named.pattern(),
        None => pattern.as_str(),
    };
    let splitter = Splitter::new(&pattern);
    let regex = oracle::compile(oracle_pattern);
    let (splitter, regex) = match (splitter, regex) {
        (Ok(s), Ok(r)) => (s, r),
        (Err(Error::InvalidPattern { .. }), Err(_)) => return,
        (Err(e), Ok(_)) => panic!("{pattern:?}: the splitter refuses it ({e}), fancy-regex not"),
        (Ok(_), Err(e)) => panic!("{pattern:?}: fancy-regex refuses it ({e}), the splitter not"),
        (Err(e), Err(_)) => panic!("{pattern:?}: the wrong error: {e:?}"),
    };
    let got = splitter.chunks(&text);
    let want = regex_chunks(&regex, &text);
    match (got, want) {
        (Ok(got), Ok(want)) => assert_eq!(got, want, "{pattern:?} on {text:?}"),
        (Err(Error::RegexRuntime { .. }), Err(_)) => {}
        (got, want) => panic!("{pattern:?} on {text:?}: {got:?} but fancy-regex {want:?}"),
    }
}
