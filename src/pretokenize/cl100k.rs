//! The cl100k scanner:
//! `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+`
//! `|\s++$|\s*[\r\n]|\s+(?!\S)|\s`, and its family's variants (`shapes`): `\p{N}` for
//! `\p{N}{1,3}` (`SINGLE_DIGITS`), without `\s++$` (`END_RUN` false), and with marks among the
//! letters (`MARKS`: `[\p{L}\p{M}]+` letter runs and `[^\s\p{L}\p{M}\p{N}]` others, as
//! Qwen 3.5's pattern has; a mark then starts or continues a letter run wherever it is).
//!
//! By the first character:
//! - `'` followed by a contraction, case-insensitively (`'S`, `'ſ`, `'Ll`): the contraction.
//!   It wins over `'` as a letter prefix, so `'sam` is `'s` + `am`;
//! - a letter: the letter run;
//! - any other character except `\r`, `\n` and numbers, followed by a letter: it prefixes the
//!   letter run (a space, a tab, `"`, a combining mark...). The `?+` is possessive, but no
//!   character both is a prefix and starts a letter run, so that changes nothing;
//! - a number: up to three numbers (no space prefix in cl100k), or one;
//! - other, or a space followed by other: the other run, then any `\r`/`\n` run;
//! - whitespace: the whole run if it reaches the end of the text (`\s++$`, if there), else
//!   through its last `\r`/`\n` if it has one (`\s*[\r\n]` backtracks to it), else all but
//!   its last character if a non-space follows (`\s+(?!\S)`), else the whole run.

use super::blocks::rules::{
    after_line_ends, common_limit, contractions, digit_groups, letter_run_at, prev, whole_chars,
};
use super::blocks::Masks;
use super::classes::{
    class_at, contraction_ci, letter_lanes, run, run_swar, spaces, CRLF, L, M, N, OTHER,
};
use super::scan::Scanner;

/// The cl100k family's scanner ([`super::Shape::Cl100k`]): tiktoken's cl100k is
/// `Cl100k<false, true>`.
pub(super) struct Cl100k<const SINGLE_DIGITS: bool, const END_RUN: bool, const MARKS: bool>;

impl<const SINGLE_DIGITS: bool, const END_RUN: bool, const MARKS: bool> Scanner
    for Cl100k<SINGLE_DIGITS, END_RUN, MARKS>
{
    /// With marks among the letters, the block masks (`blocks::wide`, marks as others) do not
    /// fit: blocks then take ASCII only, and other text goes per character.
    const WIDE: bool = !MARKS;

    /// A letter, or a prefix and a letter (`[^\r\n\p{L}\p{N}]?+\p{L}++`): the prefix is one
    /// character, other or whitespace but not a line end, and not `'` (which may start a
    /// contraction instead).
    #[inline(always)]
    fn letter_run(m: &Masks, at: u32) -> Option<u32> {
        letter_run_at(
            m,
            Self::run_letters(m),
            at,
            (m.blank() | m.other()) & !m.apos,
        )
    }

    #[inline(always)]
    fn next(b: &[u8], i: usize) -> usize {
        next::<SINGLE_DIGITS, END_RUN, MARKS>(b, i)
    }

    #[inline(always)]
    fn block(b: &[u8], i: usize, m: &Masks) -> u64 {
        block::<SINGLE_DIGITS>(b, i, m)
    }
}

/// The chunk starts of the block `w = b[i..i + 64]` (see `Scanner::block`). On the bytes the
/// masks classify (ASCII, and the non-ASCII letters and others of `blocks::wide`), with P =
/// space, tab or other, a chunk starts at a byte that is
/// - a letter after a digit or line end, or after a P that does not start a chunk (one that
///   does is the letter's prefix);
/// - an other after anything but an other or a space (` ?[^\s\p{L}\p{N}]++`);
/// - a space or tab after a non-whitespace or a line end, or the last of a run of them before a
///   non-whitespace (`\s+(?!\S)`);
/// - a line end after a letter or digit (`\s*[\r\n]` and `[\r\n]*+` take the others);
/// - a digit after a non-digit, or three digits after a digit that starts a chunk;
/// - the byte after a contraction that starts at a chunk start (`'s`, `'LL`...: a chunk of
///   its own, so `'sam` is `'s` + `am`).
///
/// The limit is the one all scanners share, and before a whitespace run with a line end after a
/// space or tab (the run's chunk ends at its last line end).
#[inline(always)]
fn block<const SINGLE_DIGITS: bool>(b: &[u8], i: usize, m: &Masks) -> u64 {
    let letter = m.letter();
    let (x, ws) = (m.blank(), m.ws());
    let other = m.other();
    let p = x | other;
    let (after_nl, limit) = after_line_ends(m, ws, common_limit(m, ws));
    let mut starts = 1
        | letter & prev(m.digit | m.nl)
        | other & !prev(other | m.space)
        | x & !prev(ws)
        | after_nl
        | x & prev(x) & !(ws >> 1)
        | m.nl & !prev(ws | other)
        | if SINGLE_DIGITS {
            m.digit
        } else {
            digit_groups(m.digit)
        };
    // A prefix of several bytes (a `、` before Japanese, an em dash) starts a chunk with its
    // first byte: the letter after its last byte joins it.
    starts |= letter & prev(p) & !prev(whole_chars(starts, m) & p);
    contractions(
        starts,
        limit,
        m.apos & starts,
        false,
        |k| Some((contraction_ci(b, i + k as usize)? - i) as u32),
        |_, _| false,
    )
}

/// End of the run of others from `i`: `[^\s\p{L}\p{N}]`, or with `MARKS`
/// `[^\s\p{L}\p{M}\p{N}]`.
#[inline(always)]
fn others<const MARKS: bool>(b: &[u8], mut i: usize) -> usize {
    if !MARKS {
        return run(b, i, OTHER);
    }
    loop {
        let (c, len) = class_at(b, i);
        if c & OTHER == 0 || c & M != 0 {
            return i;
        }
        i += len;
    }
}

/// End of the chunk that starts at `i` (`i < b.len()`, a character boundary).
#[inline(always)]
fn next<const SINGLE_DIGITS: bool, const END_RUN: bool, const MARKS: bool>(
    b: &[u8],
    i: usize,
) -> usize {
    // No test for a space and ASCII letters first, as gpt2 has: with the letter prefixes of
    // cl100k's rule it does not pay (docs/performance.md, 'Scanners').
    let letters = if MARKS { L | M } else { L };
    let (c0, l0) = class_at(b, i);
    let j = i + l0;
    if c0 & letters != 0 {
        return run_swar(b, j, letters, letter_lanes);
    }
    if c0 & N != 0 {
        if SINGLE_DIGITS {
            return j;
        }
        let (c1, l1) = class_at(b, j);
        if c1 & N == 0 {
            return j;
        }
        let (c2, l2) = class_at(b, j + l1);
        return if c2 & N == 0 { j + l1 } else { j + l1 + l2 };
    }
    if c0 & CRLF == 0 {
        // A possible prefix: other, or whitespace other than `\r`/`\n`.
        if b.get(i) == Some(&b'\'') {
            if let Some(end) = contraction_ci(b, i) {
                return end;
            }
        }
        let (c1, l1) = class_at(b, j);
        if c1 & letters != 0 {
            return run_swar(b, j + l1, letters, letter_lanes);
        }
        // Not a mark: a mark is a letter here, or an other with `OTHER` as it is.
        if c0 & OTHER != 0 {
            return run(b, others::<MARKS>(b, j), CRLF);
        }
        if c1 & OTHER != 0 && b.get(i) == Some(&b' ') {
            return run(b, others::<MARKS>(b, j + l1), CRLF);
        }
    }
    // Whitespace.
    let s = spaces(b, i);
    if END_RUN && s.end == b.len() {
        s.end
    } else if s.after_crlf != 0 {
        s.after_crlf
    } else if s.last != i && s.end != b.len() {
        s.last
    } else {
        s.end
    }
}
