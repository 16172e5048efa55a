//! DeepSeek V3's split: one scanner for the three `Split` stages its `tokenizer.json` applies
//! one after another (DeepSeek V3, V3.1, V3.2, V4, R1, OCR, VL2 ship the same):
//! 1. `\p{N}{1,3}`: digit groups;
//! 2. `[一-龥぀-ゟ゠-ヿ]+`: runs of CJK ideographs and kana;
//! 3. ``[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+``, `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`,
//!    ` ?[\p{P}\p{S}]+[\r\n]*`, `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`, as alternatives.
//!
//! Each stage splits every chunk of the one before as a text of its own, and what a stage's
//! regex leaves unmatched is a chunk too. No number is in stage 2's ranges, and stage 3 leaves
//! a group of digits whole, so the stages come down to: a run of numbers is cut into groups of
//! three; a run of stage 2's characters splits by stage 3 on its own (its letters and marks
//! apart from its punctuation: `゠`, `・`, `゛`); and the text between them splits by stage 3 as
//! if each stretch were a text of its own, so a number or a CJK character ends it as the end of
//! the text does (`\s+(?!\S)` takes a whole run of spaces before one).
//!
//! Stage 3 by the first character (a letter here is `[\p{L}\p{M}]` outside the CJK ranges,
//! punctuation `[\p{P}\p{S}]` outside them):
//! - a letter: the run of letters;
//! - ASCII punctuation before an ASCII letter: it and the ASCII letters after it;
//! - punctuation, or a space before punctuation: the punctuation run and any `\r`/`\n` after it;
//! - whitespace but `\r`/`\n`, or a character of no class here (controls, format characters,
//!   unassigned), before a letter: it prefixes the letter run;
//! - whitespace: through its run's last `\r`/`\n` if it has one; else the whole run before
//!   the stretch's end, else all but its last character (the last starts the next chunk),
//!   else the one character;
//! - a character of no class: no alternative matches, so it and the like after it form a
//!   chunk of unmatched text, up to one that prefixes a letter.

use super::blocks::rules::{after_line_ends, common_limit, digit_groups, prev};
use super::blocks::{Masks, BLOCK};
use super::classes::{self, class_of_const, control_lanes, letter_lanes, skip_ascii, spaces};
use super::scan::Scanner;
use super::tables::PUNCT_SYMBOL;

/// The stages, as DeepSeek's `tokenizer.json` spells them (`\r` and `\n` escaped here; the files
/// hold the characters themselves in stage 3's classes).
pub const STAGES: [&str; 3] = [
    r"\p{N}{1,3}",
    "[一-龥\u{3040}-ゟ゠-ヿ]+",
    r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##,
];

/// Whether `patterns` are DeepSeek V3's stages, with `\r` and `\n` as escapes or characters.
pub fn is_deepseek(patterns: &[impl AsRef<str>]) -> bool {
    patterns.len() == STAGES.len()
        && patterns.iter().zip(STAGES).all(|(p, want)| {
            let p = p.as_ref();
            p == want || p.replace('\r', r"\r").replace('\n', r"\n") == want
        })
}

/// `\p{N}`: stage 1.
const DIGIT: u8 = 1;
/// `[\p{L}\p{M}]` outside the CJK ranges.
const LETTER: u8 = 2;
/// `\s` (with `\r` and `\n`).
const SPACE: u8 = 4;
/// `[\p{P}\p{S}]` outside the CJK ranges.
const PUNCT: u8 = 8;
/// None of the above: controls, format characters, private use, unassigned.
const REST: u8 = 16;
/// Stage 2's ranges, by what stage 3 makes of them: letters and marks (ideographs, kana),
/// punctuation and symbols (`゠`, `・`, `゛`), none (unassigned).
const CJK_LETTER: u8 = 32;
const CJK_PUNCT: u8 = 64;
const CJK_REST: u8 = 128;
const CJK: u8 = CJK_LETTER | CJK_PUNCT | CJK_REST;

/// The scanner's class of a code point (surrogates and values past U+10FFFF get some class).
const fn kind_of(cp: u32) -> u8 {
    let c = class_of_const(cp);
    let (letter, punct, rest) = if (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF)
    {
        (CJK_LETTER, CJK_PUNCT, CJK_REST)
    } else {
        (LETTER, PUNCT, REST)
    };
    if c & classes::N != 0 {
        DIGIT
    } else if c & (classes::L | classes::M) != 0 {
        letter
    } else if c & classes::WS != 0 {
        SPACE
    } else if punct_symbol(cp) {
        punct
    } else {
        rest
    }
}

/// Whether `cp` is in `[\p{P}\p{S}]`.
const fn punct_symbol(cp: u32) -> bool {
    let (mut lo, mut hi) = (0, PUNCT_SYMBOL.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        let (first, last) = PUNCT_SYMBOL[mid];
        if cp < first {
            hi = mid;
        } else if cp > last {
            lo = mid + 1;
        } else {
            return true;
        }
    }
    false
}

/// The class of every code point below U+10000, built at compile time: one load per
/// character of up to three bytes.
static KINDS: [u8; 0x1_0000] = {
    let mut t = [0u8; 0x1_0000];
    let mut cp = 0;
    while cp < t.len() {
        t[cp] = kind_of(cp as u32);
        cp += 1;
    }
    t
};

/// The class and byte length of the character at `i`; `(0, 0)` at the end.
#[inline(always)]
fn kind_at(b: &[u8], i: usize) -> (u8, usize) {
    match b.get(i) {
        None => (0, 0),
        Some(&c) if c < 0x80 => (KINDS[c as usize], 1),
        Some(&c) => {
            let (cp, len) = classes::decode(b, i, c);
            if len < 4 {
                (KINDS[cp as usize & 0xFFFF], len)
            } else {
                (kind_of(cp), len)
            }
        }
    }
}

/// End of the run of characters of `kind` from `i`.
#[inline(always)]
fn run(b: &[u8], mut i: usize, kind: u8) -> usize {
    loop {
        let (k, len) = kind_at(b, i);
        if k & kind == 0 {
            return i;
        }
        i += len;
    }
}

/// End of the run of letters from `i`: ASCII ones eight bytes at a time.
#[inline(always)]
fn letters(b: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_ascii(b, i, letter_lanes);
        if b.get(i).is_none_or(|&c| c < 0x80) {
            return i;
        }
        loop {
            let (k, len) = kind_at(b, i);
            if k & LETTER == 0 {
                return i;
            }
            i += len;
            if b.get(i).is_some_and(|&c| c < 0x80) {
                break;
            }
        }
    }
}

/// End of the run of `\r` and `\n` from `i`.
#[inline(always)]
fn line_ends(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// End of the unmatched text from `i` (of no class, `rest`, not before a letter) on: up to
/// a character of a class, or one of no class before a letter.
#[inline(always)]
fn unmatched(b: &[u8], mut i: usize, rest: u8, letter: u8) -> usize {
    let (mut k, mut len) = kind_at(b, i);
    loop {
        if k & rest == 0 {
            return i;
        }
        let (k2, l2) = kind_at(b, i + len);
        if k2 & letter != 0 {
            return i;
        }
        (i, k, len) = (i + len, k2, l2);
    }
}

/// End of the chunk that starts at `i` in a run of stage 2, whose first character (of
/// `len` bytes) is of class `k0`: stage 3 on the run as a text of its own, which holds no
/// whitespace.
#[inline(always)]
fn in_cjk_run(b: &[u8], i: usize, k0: u8, len: usize) -> usize {
    let j = i + len;
    if k0 & (CJK_LETTER | CJK_PUNCT) != 0 {
        return run(b, j, k0);
    }
    let (k1, l1) = kind_at(b, j);
    if k1 & CJK_LETTER != 0 {
        return run(b, j + l1, CJK_LETTER);
    }
    unmatched(b, j, CJK_REST, CJK_LETTER)
}

/// End of the chunk that starts at `i` (`i < b.len()`, a character boundary).
#[inline(always)]
fn next(b: &[u8], i: usize) -> usize {
    let (k0, l0) = kind_at(b, i);
    let j = i + l0;
    if k0 & LETTER != 0 {
        return letters(b, j);
    }
    if k0 & DIGIT != 0 {
        let (k1, l1) = kind_at(b, j);
        if k1 & DIGIT == 0 {
            return j;
        }
        let (k2, l2) = kind_at(b, j + l1);
        return if k2 & DIGIT == 0 { j + l1 } else { j + l1 + l2 };
    }
    if k0 & CJK != 0 {
        return in_cjk_run(b, i, k0, l0);
    }
    if k0 & PUNCT != 0 {
        if l0 == 1 && b.get(j).is_some_and(u8::is_ascii_alphabetic) {
            return skip_ascii(b, j, letter_lanes);
        }
        return line_ends(b, run(b, j, PUNCT));
    }
    let (k1, l1) = kind_at(b, j);
    let line_end = matches!(b.get(i), Some(b'\r' | b'\n'));
    if k1 & LETTER != 0 && !line_end {
        return letters(b, j + l1);
    }
    if k0 & REST != 0 {
        return unmatched(b, j, REST, LETTER);
    }
    if b.get(i) == Some(&b' ') && k1 & PUNCT != 0 {
        return line_ends(b, run(b, j + l1, PUNCT));
    }
    // Whitespace (`\s`, as the class table has it).
    let s = spaces(b, i);
    if s.after_crlf != 0 {
        return s.after_crlf;
    }
    let (after, _) = kind_at(b, s.end);
    if after & (LETTER | PUNCT | REST) == 0 || s.last == i {
        // The stretch ends (a number, a CJK character, the text's end), or one character.
        s.end
    } else {
        s.last
    }
}

/// The chunk starts of the block `w = b[i..i + 64]` (see `Scanner::block`), on ASCII: letters,
/// digits, spaces, tabs, line ends and punctuation (a block with a control character goes per
/// character). A chunk starts at a byte that is
/// - a letter after a digit or a line end, or after punctuation that does not start a chunk
///   (one that does is the letter's prefix);
/// - punctuation after anything but punctuation or a space;
/// - a space or tab after a non-whitespace, or after a line end, or the last of a run of them
///   before a letter or punctuation (before a digit the run is the end of a stretch, whole);
/// - a line end after a letter or a digit;
/// - a digit after a non-digit, or three digits after a digit that starts a chunk.
///
/// The limit is the one all scanners share, and before a whitespace run with a line end after a
/// space or tab (the run's chunk ends at its last line end).
#[inline(always)]
fn block(b: &[u8], i: usize, m: &Masks) -> u64 {
    let other = m.other();
    // Controls are among the masks' others: a block without others has none.
    if other != 0 && has_control(b, i) {
        return 1;
    }
    let letter = m.letter();
    let (x, ws) = (m.blank(), m.ws());
    let (after_nl, limit) = after_line_ends(m, ws, common_limit(m, ws));
    let mut starts = 1
        | letter & prev(m.digit | m.nl)
        | other & !prev(other | m.space)
        | x & !prev(ws)
        | after_nl
        | x & prev(x) & ((letter | other) >> 1)
        | m.nl & !prev(ws | other)
        | digit_groups(m.digit);
    starts |= letter & prev(other) & !prev(starts & other);
    starts & ((2u64 << limit) - 1)
}

/// Whether the block at `i` holds an ASCII control character that is not whitespace (of no
/// class here, which the masks do not tell from punctuation).
#[inline(always)]
fn has_control(b: &[u8], i: usize) -> bool {
    let Some(w) = b.get(i..).and_then(|r| r.first_chunk::<BLOCK>()) else {
        return true;
    };
    let (words, _) = w.as_chunks::<8>();
    words.iter().fold(0, |any, word| {
        any | control_lanes(u64::from_le_bytes(*word))
    }) != 0
}

/// DeepSeek V3's scanner ([`STAGES`]).
pub(super) struct DeepSeek;

impl Scanner for DeepSeek {
    #[inline(always)]
    fn next(b: &[u8], i: usize) -> usize {
        next(b, i)
    }

    #[inline(always)]
    fn block(b: &[u8], i: usize, m: &Masks) -> u64 {
        block(b, i, m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_disjoint_where_the_stages_need_it() {
        // No number is in stage 2's ranges (so stage 1 leaves CJK runs whole), and every
        // character gets exactly one class.
        for cp in (0x3040..=0x30FF).chain(0x4E00..=0x9FA5) {
            assert_eq!(classes::class_of(cp) & classes::N, 0, "U+{cp:04X}");
        }
        for cp in 0..=0x10_FFFFu32 {
            let k = kind_of(cp);
            assert!(k.is_power_of_two(), "U+{cp:04X}");
            if cp < 0x1_0000 {
                assert_eq!(KINDS[cp as usize], k);
            }
        }
        assert_eq!(kind_of('!' as u32), PUNCT);
        assert_eq!(kind_of('«' as u32), PUNCT);
        assert_eq!(kind_of('・' as u32), CJK_PUNCT);
        assert_eq!(kind_of('の' as u32), CJK_LETTER);
        assert_eq!(kind_of(0x3099), CJK_LETTER);
        assert_eq!(kind_of(0x0301), LETTER);
        assert_eq!(kind_of(0x200B), REST);
        assert_eq!(kind_of(0x01), REST);
        assert_eq!(kind_of('\t' as u32), SPACE);
        assert_eq!(kind_of('٣' as u32), DIGIT);
    }

    #[test]
    fn stages_are_recognized_as_the_files_spell_them() {
        assert!(is_deepseek(&STAGES));
        let raw = STAGES.map(|s| s.replace(r"\r", "\r").replace(r"\n", "\n"));
        assert!(is_deepseek(&raw));
        assert!(!is_deepseek(&STAGES[..2]));
        assert!(!is_deepseek(&[STAGES[0], STAGES[1], "gpt2"]));
    }
}
