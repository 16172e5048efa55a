//! Which patterns the hand-written scanners run: tiktoken's three, and the variants of their
//! families that open models ship (Llama 3's, GLM-4's and Qwen's cl100k-like patterns,
//! Mistral Tekken's o200k-like one). A pattern is recognized by its top-level alternatives, each
//! matched against the spellings that are known to match the same text; anything else runs
//! on the regex engine.
//!
//! Why the spellings of one alternative are interchangeable (`regex.findall` semantics, where
//! an alternative's first successful match is taken, then no backtracking into it):
//! - a possessive quantifier (`?+`, `++`, `*+`, `{1,3}+`) matches as the greedy one does
//!   where nothing after it in its alternative can fail: `\p{L}++` at the end, `[\r\n]*+`,
//!   `\p{N}{1,3}+`; and `[^\r\n\p{L}\p{N}]?+\p{L}+`, because giving back the prefix leaves a
//!   character that no `\p{L}+` matches (not so with marks among the letters, Qwen 3.5's
//!   `[\p{L}\p{M}]+`: a mark may be the prefix and, given back, the run, so only `?` is listed);
//! - `'(?i:[sdmt]|ll|ve|re)` and `(?i:'s|'t|'re|'ve|'m|'ll|'d)` (and gpt2's case-sensitive
//!   pair): no contraction is a prefix of another, so the order of trying them is moot;
//! - the whitespace alternatives: `\s*[\r\n]` and `\s*[\r\n]+` both end a run at its last
//!   `\r`/`\n` (the `\s*` gives back to it, and only non-line-end whitespace follows it); a
//!   last `\s` and a last `\s+` both take one character, since they are reached only for a
//!   run of one before a non-space (`\s+(?!\S)` takes any longer run but its last character);
//!   `\s++$` and `\s+$` match the same runs. `\s++$` before `\s*[\r\n]` is a real setting
//!   (`end_run`): `"  \n  "` at the end of a text is one chunk with it, two without;
//! - gpt2's `\s++$` is implied by `\s+(?!\S)`, which takes a run that reaches the end whole.
//!
//! The tests hold every recognized spelling's scanner to the regex engine on the same pattern
//! string (pretokenize's tests, tests/test_pretokenize.py, and the custom_pattern fuzz
//! target), so a spelling listed here by mistake shows up as a difference.

/// tiktoken's r50k/p50k/gpt2 pattern.
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// tiktoken's cl100k_base pattern.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// tiktoken's o200k_base pattern.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// A pattern the scanners run: a family and its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// gpt2's pattern (r50k, p50k; GPT-2's own and HF's `ByteLevel` regex too).
    Gpt2,
    /// cl100k's family: contractions, letter runs after an optional prefix, digit groups,
    /// other runs with their line ends, whitespace.
    Cl100k {
        /// `\p{N}` (each digit a chunk) rather than `\p{N}{1,3}`.
        single_digits: bool,
        /// `\s++$` before `\s*[\r\n]`: a whitespace run that reaches the text's end is one
        /// chunk (tiktoken's cl100k); without it (Llama 3, Qwen) the run ends at its last
        /// line end, as elsewhere.
        end_run: bool,
        /// Marks among the letters: `[\p{L}\p{M}]+` runs and `[^\s\p{L}\p{M}\p{N}]`
        /// others (Qwen 3.5).
        marks_are_letters: bool,
    },
    /// o200k's family: letter runs by case after an optional prefix, digit groups, other
    /// runs with line ends and `/`, whitespace.
    O200k {
        /// `\p{N}` rather than `\p{N}{1,3}`.
        single_digits: bool,
        /// The letter runs end with an optional contraction (`(?i:'s|'t|...)?`); without it
        /// (Tekken) an apostrophe is punctuation like any other.
        contractions: bool,
    },
}

impl Shape {
    /// Every shape, tiktoken's three first.
    pub const ALL: [Shape; 13] = [
        Shape::Gpt2,
        Shape::cl100k(false, true, false),
        Shape::O200k {
            single_digits: false,
            contractions: true,
        },
        Shape::cl100k(false, false, false),
        Shape::cl100k(true, false, false),
        Shape::cl100k(true, true, false),
        Shape::cl100k(true, false, true),
        Shape::cl100k(false, false, true),
        Shape::cl100k(false, true, true),
        Shape::cl100k(true, true, true),
        Shape::O200k {
            single_digits: true,
            contractions: false,
        },
        Shape::O200k {
            single_digits: false,
            contractions: false,
        },
        Shape::O200k {
            single_digits: true,
            contractions: true,
        },
    ];

    /// The cl100k family's shape with these settings.
    pub const fn cl100k(single_digits: bool, end_run: bool, marks_are_letters: bool) -> Shape {
        Shape::Cl100k {
            single_digits,
            end_run,
            marks_are_letters,
        }
    }

    /// A pattern string of this shape: tiktoken's for its three, else tiktoken's spelling of
    /// the family with the settings changed.
    pub fn pattern(self) -> String {
        let digits = |single, possessive| match (single, possessive) {
            (true, _) => r"\p{N}",
            (false, true) => r"\p{N}{1,3}+",
            (false, false) => r"\p{N}{1,3}",
        };
        match self {
            Shape::Gpt2 => GPT2_PATTERN.to_string(),
            Shape::Cl100k {
                single_digits,
                end_run,
                marks_are_letters,
            } => {
                // Marks among the letters: the prefix may then be a mark, and giving it back
                // matters, so it is not possessive (see `LETTERS`).
                let (letters, others) = if marks_are_letters {
                    (
                        r"[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+",
                        r" ?[^\s\p{L}\p{M}\p{N}]++[\r\n]*+",
                    )
                } else {
                    (
                        r"[^\r\n\p{L}\p{N}]?+\p{L}++",
                        r" ?[^\s\p{L}\p{N}]++[\r\n]*+",
                    )
                };
                format!(
                    r"'(?i:[sdmt]|ll|ve|re)|{letters}|{}|{others}|{}\s*[\r\n]|\s+(?!\S)|\s",
                    digits(single_digits, true),
                    if end_run { r"\s++$|" } else { "" }
                )
            }
            Shape::O200k {
                single_digits,
                contractions,
            } => {
                let suffix = if contractions { O200K_SUFFIX } else { "" };
                format!(
                    r"{O200K_LOWER}{suffix}|{O200K_UPPER}{suffix}|{}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
                    digits(single_digits, false)
                )
            }
        }
    }

    /// A short description for users: the family and its settings where they differ from
    /// tiktoken's pattern of that name.
    ///
    /// ```
    /// use tokenmill::pretokenize::Shape;
    ///
    /// assert_eq!(Shape::Gpt2.describe(), "gpt2");
    /// let llama3 = Shape::cl100k(false, false, false);
    /// assert_eq!(llama3.describe(), "cl100k family, no \\s++$");
    /// ```
    pub fn describe(self) -> String {
        let (family, mut settings) = match self {
            Shape::Gpt2 => ("gpt2", vec![]),
            Shape::Cl100k {
                single_digits,
                end_run,
                marks_are_letters,
            } => (
                "cl100k",
                [
                    (single_digits, "single digits"),
                    (!end_run, "no \\s++$"),
                    (marks_are_letters, "marks as letters"),
                ]
                .into_iter()
                .filter_map(|(on, what)| on.then_some(what))
                .collect(),
            ),
            Shape::O200k {
                single_digits,
                contractions,
            } => (
                "o200k",
                [
                    (single_digits, "single digits"),
                    (!contractions, "no contractions"),
                ]
                .into_iter()
                .filter_map(|(on, what)| on.then_some(what))
                .collect(),
            ),
        };
        if settings.is_empty() {
            return family.to_string();
        }
        settings.insert(0, "");
        format!("{family} family{}", settings.join(", "))
    }
}

/// The shape a pattern string has, if the scanners run it.
///
/// ```
/// use tokenmill::pretokenize::shapes::recognize;
/// use tokenmill::pretokenize::Shape;
///
/// let llama3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// assert_eq!(recognize(llama3), Some(Shape::cl100k(false, false, false)));
/// assert_eq!(recognize(r"\w+"), None);
/// ```
pub fn recognize(pattern: &str) -> Option<Shape> {
    let alts = alternatives(pattern)?;
    [gpt2, cl100k, o200k].into_iter().find_map(|f| f(&alts))
}

/// Spellings of one part of a pattern: each a run of top-level alternatives, with the setting
/// it stands for.
type Spellings<T> = &'static [(&'static [&'static str], T)];

const GPT2_CONTRACTIONS: Spellings<()> = &[
    (&[r"'(?:[sdmt]|ll|ve|re)"], ()),
    (&["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"], ()),
];
const GPT2_RUNS: Spellings<()> = &[
    (&[r" ?\p{L}++", r" ?\p{N}++", r" ?[^\s\p{L}\p{N}]++"], ()),
    (&[r" ?\p{L}+", r" ?\p{N}+", r" ?[^\s\p{L}\p{N}]+"], ()),
];
const CONTRACTIONS_CI: Spellings<()> = &[
    (&[r"'(?i:[sdmt]|ll|ve|re)"], ()),
    (&[r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"], ()),
];
/// Letter runs; the setting is `marks_are_letters`. With marks among the letters the prefix
/// `[^\r\n\p{L}\p{N}]` may be a mark, and a possessive `?+` would not give it back to start
/// the run, so only the plain `?` is the same.
const LETTERS: Spellings<bool> = &[
    (&[r"[^\r\n\p{L}\p{N}]?+\p{L}++"], false),
    (&[r"[^\r\n\p{L}\p{N}]?+\p{L}+"], false),
    (&[r"[^\r\n\p{L}\p{N}]?\p{L}+"], false),
    (&[r"[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+"], true),
    (&[r"[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]++"], true),
];
/// Digit groups; the setting is `single_digits`.
const DIGITS: Spellings<bool> = &[
    (&[r"\p{N}{1,3}+"], false),
    (&[r"\p{N}{1,3}"], false),
    (&[r"\p{N}"], true),
];
/// Other runs; the setting is whether marks are left out of them (`marks_are_letters`).
const OTHERS_CRLF: Spellings<bool> = &[
    (&[r" ?[^\s\p{L}\p{N}]++[\r\n]*+"], false),
    (&[r" ?[^\s\p{L}\p{N}]++[\r\n]*"], false),
    (&[r" ?[^\s\p{L}\p{N}]+[\r\n]*"], false),
    (&[r" ?[^\s\p{L}\p{M}\p{N}]++[\r\n]*+"], true),
    (&[r" ?[^\s\p{L}\p{M}\p{N}]++[\r\n]*"], true),
    (&[r" ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"], true),
];
const END_RUN: Spellings<()> = &[(&[r"\s++$"], ()), (&[r"\s+$"], ())];
const LINE_ENDS: Spellings<()> = &[(&[r"\s*[\r\n]"], ()), (&[r"\s*[\r\n]+"], ())];
const BEFORE_NON_SPACE: Spellings<()> = &[(&[r"\s+(?!\S)"], ())];
const LAST_SPACE: Spellings<()> = &[(&[r"\s"], ()), (&[r"\s+"], ())];

const O200K_LOWER: &str =
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+";
const O200K_UPPER: &str =
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*";
const O200K_SUFFIX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?";
const OTHERS_CRLF_SLASH: Spellings<()> = &[
    (&[r" ?[^\s\p{L}\p{N}]+[\r\n/]*"], ()),
    (&[r" ?[^\s\p{L}\p{N}]++[\r\n/]*"], ()),
    (&[r" ?[^\s\p{L}\p{N}]++[\r\n/]*+"], ()),
];

fn gpt2(alts: &[&str]) -> Option<Shape> {
    let mut rest = alts;
    take(&mut rest, GPT2_CONTRACTIONS)?;
    take(&mut rest, GPT2_RUNS)?;
    take(&mut rest, END_RUN);
    take(&mut rest, BEFORE_NON_SPACE)?;
    take(&mut rest, LAST_SPACE)?;
    rest.is_empty().then_some(Shape::Gpt2)
}

fn cl100k(alts: &[&str]) -> Option<Shape> {
    let mut rest = alts;
    take(&mut rest, CONTRACTIONS_CI)?;
    let marks_are_letters = take(&mut rest, LETTERS)?;
    let single_digits = take(&mut rest, DIGITS)?;
    // Marks are letters in both or in neither: else a mark after an other would be an other
    // and a letter at once.
    if take(&mut rest, OTHERS_CRLF)? != marks_are_letters {
        return None;
    }
    let end_run = spaces(&mut rest)?;
    (rest.is_empty()).then_some(Shape::cl100k(single_digits, end_run, marks_are_letters))
}

fn o200k(alts: &[&str]) -> Option<Shape> {
    let (lower, upper) = (*alts.first()?, *alts.get(1)?);
    let suffix = lower.strip_prefix(O200K_LOWER)?;
    if upper.strip_prefix(O200K_UPPER)? != suffix || !(suffix.is_empty() || suffix == O200K_SUFFIX)
    {
        return None;
    }
    let mut rest = &alts[2..];
    let single_digits = take(&mut rest, DIGITS)?;
    take(&mut rest, OTHERS_CRLF_SLASH)?;
    // o200k's family has no `\s++$`.
    if spaces(&mut rest)? {
        return None;
    }
    rest.is_empty().then_some(Shape::O200k {
        single_digits,
        contractions: !suffix.is_empty(),
    })
}

/// The whitespace alternatives of the cl100k and o200k families: whether they start with
/// `\s++$` (`end_run`).
fn spaces(rest: &mut &[&str]) -> Option<bool> {
    let end_run = take(rest, END_RUN).is_some();
    take(rest, LINE_ENDS)?;
    take(rest, BEFORE_NON_SPACE)?;
    take(rest, LAST_SPACE)?;
    Some(end_run)
}

/// The setting of the first spelling in `spellings` that `alts` starts with, which it then
/// steps past.
fn take<T: Copy>(alts: &mut &[&str], spellings: Spellings<T>) -> Option<T> {
    spellings.iter().find_map(|&(spelling, setting)| {
        let rest = alts.strip_prefix(spelling)?;
        *alts = rest;
        Some(setting)
    })
}

/// The top-level alternatives of a pattern: split at each `|` outside groups, classes and
/// escapes. None if the brackets do not balance (the regex engine reports such a pattern).
fn alternatives(pattern: &str) -> Option<Vec<&str>> {
    let (mut out, mut start, mut depth, mut class) = (Vec::new(), 0, 0usize, false);
    let mut chars = pattern.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !class => class = true,
            ']' if class => class = false,
            '(' if !class => depth += 1,
            ')' if !class => depth = depth.checked_sub(1)?,
            '|' if !class && depth == 0 => {
                out.push(&pattern[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || class {
        return None;
    }
    out.push(&pattern[start..]);
    Some(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Llama 3's pattern (tiktoken's first cl100k spelling).
    pub(in crate::pretokenize) const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    /// Qwen2's pattern: Llama 3's with single digits.
    pub(in crate::pretokenize) const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    /// Qwen 3.5's pattern: Qwen2's with marks among the letters.
    pub(in crate::pretokenize) const QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    /// Mistral Tekken's pattern: o200k's without contractions, with single digits.
    pub(in crate::pretokenize) const TEKKEN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    /// GPT-2's own pattern, as HF's `ByteLevel` pre-tokenizer runs it.
    pub(in crate::pretokenize) const GPT2_ORIGINAL: &str =
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

    #[test]
    fn tiktoken_patterns_have_their_shapes() {
        assert_eq!(recognize(GPT2_PATTERN), Some(Shape::Gpt2));
        assert_eq!(recognize(GPT2_ORIGINAL), Some(Shape::Gpt2));
        assert_eq!(
            recognize(CL100K_PATTERN),
            Some(Shape::cl100k(false, true, false))
        );
        assert_eq!(
            recognize(O200K_PATTERN),
            Some(Shape::O200k {
                single_digits: false,
                contractions: true
            })
        );
    }

    #[test]
    fn open_models_patterns_have_their_shapes() {
        assert_eq!(recognize(LLAMA3), Some(Shape::cl100k(false, false, false)));
        assert_eq!(recognize(QWEN2), Some(Shape::cl100k(true, false, false)));
        assert_eq!(recognize(QWEN35), Some(Shape::cl100k(true, false, true)));
        assert_eq!(
            recognize(TEKKEN),
            Some(Shape::O200k {
                single_digits: true,
                contractions: false
            })
        );
    }

    #[test]
    fn other_patterns_have_none() {
        for p in [
            r"\w+",
            "",
            "(a|b",
            r"[|]",
            // One alternative more, one fewer, or in another order.
            &format!("{LLAMA3}|x"),
            LLAMA3.trim_end_matches(r"|\s+"),
            r"[^\r\n\p{L}\p{N}]?\p{L}+|(?i:'s|'t|'re|'ve|'m|'ll|'d)|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            // Case-sensitive contractions in the cl100k family; digits of two.
            r"'s|'t|'re|'ve|'m|'ll|'d|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
            &LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}{1,2}"),
            // Marks among the letters but not out of the others, or with a possessive prefix
            // (which would not give a mark back to the letter run).
            &QWEN35.replace(r"[^\s\p{L}\p{M}\p{N}]", r"[^\s\p{L}\p{N}]"),
            &QWEN35.replace(r"[^\r\n\p{L}\p{N}]?", r"[^\r\n\p{L}\p{N}]?+"),
            // The o200k family with `\s++$`, or its two letter runs with different suffixes.
            &TEKKEN.replace(r"|\s*[\r\n]+", r"|\s++$|\s*[\r\n]"),
            &O200K_PATTERN.replacen(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?", "", 1),
        ] {
            assert_eq!(recognize(p), None, "{p}");
        }
    }

    #[test]
    fn alternatives_split_at_the_top_level_only() {
        assert_eq!(
            alternatives(r"a|(b|c)|[|\]]|\||d").unwrap(),
            ["a", "(b|c)", r"[|\]]", r"\|", "d"]
        );
        assert_eq!(alternatives("a)").as_deref(), None);
        assert_eq!(alternatives("[a").as_deref(), None);
    }
}
