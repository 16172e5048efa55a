//! The gpt2 (r50k/p50k) scanner:
//! `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
//!
//! Every character is exactly one of letter, number, whitespace or other (checked by the
//! table generator), so the first character picks the alternative:
//! - `'` starts a contraction if one follows (case-sensitive), else it is "other";
//! - a letter, number or other starts a possessive run of its class;
//! - a space takes the run of the class of the next character if that is not whitespace;
//! - whitespace: the whole run if it reaches the end of the text (`\s++$`; the run is
//!   possessive, so `$` before a final `\n` cannot match earlier), else all but its last
//!   character (`\s+(?!\S)` backtracks one), else (a run of one) that character.

use super::blocks::rules::{common_limit, contractions, letter_run_at, prev};
use super::blocks::Masks;
use super::classes::{class_at, contraction_cs, letter_lanes, run, run_swar, spaces, L, N, OTHER};
use super::scan::Scanner;

/// The gpt2 scanner.
pub(super) struct Gpt2;

impl Scanner for Gpt2 {
    const WIDE: bool = true;

    /// A letter, or a space and a letter (` ?\p{L}++`).
    #[inline(always)]
    fn letter_run(m: &Masks, at: u32) -> Option<u32> {
        letter_run_at(m, Self::run_letters(m), at, m.space)
    }

    #[inline(always)]
    fn next(b: &[u8], i: usize) -> usize {
        next(b, i)
    }

    #[inline(always)]
    fn block(b: &[u8], i: usize, m: &Masks) -> u64 {
        block(b, i, m)
    }
}

/// The chunk starts of the block `w = b[i..i + 64]` (see `Scanner::block`). On the bytes the
/// masks classify (ASCII, and the non-ASCII letters and others of `blocks::wide`) a chunk
/// starts at a letter, digit or other whose previous byte is neither of its class nor a space
/// (` ?\p{L}++` and the like take one space); at a whitespace byte after a non-whitespace, or
/// the last of a run before a non-whitespace (`\s+(?!\S)`; line ends are whitespace like any
/// other here); and after a contraction that starts at a chunk start (`'s`, `'ll`...,
/// case-sensitive, a chunk of its own).
#[inline(always)]
fn block(b: &[u8], i: usize, m: &Masks) -> u64 {
    let letter = m.letter();
    let ws = m.ws();
    let other = m.other();
    let limit = common_limit(m, ws);
    let starts = 1
        | letter & !prev(letter | m.space)
        | m.digit & !prev(m.digit | m.space)
        | other & !prev(other | m.space)
        | ws & !prev(ws)
        | ws & prev(ws) & !(ws >> 1);
    contractions(
        starts,
        limit,
        m.apos & starts,
        false,
        |k| Some((contraction_cs(b, i + k as usize)? - i) as u32),
        |_, _| false,
    )
}

/// End of the chunk that starts at `i` (`i < b.len()`, a character boundary).
#[inline(always)]
fn next(b: &[u8], i: usize) -> usize {
    // The commonest chunk of prose and code first: a space and ASCII letters (a gain on Latin
    // text, a small loss where the test mostly fails: docs/performance.md, 'Scanners').
    if let Some(&[b' ', c1]) = b.get(i..i + 2) {
        if c1.is_ascii_alphabetic() {
            return run_swar(b, i + 2, L, letter_lanes);
        }
    }
    let (c0, l0) = class_at(b, i);
    let j = i + l0;
    if c0 & L != 0 {
        return run_swar(b, j, L, letter_lanes);
    }
    if c0 & OTHER != 0 {
        if b.get(i) == Some(&b'\'') {
            if let Some(end) = contraction_cs(b, i) {
                return end;
            }
        }
        return run(b, j, OTHER);
    }
    if c0 & N != 0 {
        return run(b, j, N);
    }
    // Whitespace.
    if b.get(i) == Some(&b' ') {
        let (c1, l1) = class_at(b, j);
        if c1 & L != 0 {
            return run_swar(b, j + l1, L, letter_lanes);
        }
        for class in [N, OTHER] {
            if c1 & class != 0 {
                return run(b, j + l1, class);
            }
        }
    }
    let s = spaces(b, i);
    if s.end == b.len() || s.last == i {
        s.end
    } else {
        s.last
    }
}
