//! The o200k scanner. With U = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`, W =
//! `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`, P = `[^\r\n\p{L}\p{N}]` and C the optional contraction
//! suffix `(?i:'s|'t|'re|'ve|'m|'ll|'d)?`, the pattern is
//! `P?U*W+C | P?U+W*C | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+`
//! and nothing is possessive, so the scanner follows the backtracking order exactly. Its
//! family's variants (`shapes`) have `\p{N}` for `\p{N}{1,3}` (`SINGLE_DIGITS`), and no C
//! (`CONTRACTIONS` false: an apostrophe is then an other like any):
//!
//! 1. `P?U*W+` with the prefix taken: from `s` (after the prefix) let the U-run end at `u`. If
//!    the character at `u` is in W (so it is `Ll`), the match runs through the W-run from `u`.
//!    Otherwise `U*` gives back characters until one in W (`Lm Lo M`) is next: the match ends
//!    just after the last W character of the U-run, and fails if there is none.
//! 2. `P?U*W+` without the prefix: only a prefix that is itself in W, i.e. a mark, can start
//!    it, and (1) having failed, it matches that mark alone: `\u{301}ABC` is `\u{301}` + `ABC`.
//! 3. `P?U+W*` with the prefix: the U-run if non-empty (the W-run after it is empty, or (1)
//!    would have matched).
//! 4. `P?U+W*` without the prefix: a mark, already taken by (2).
//!
//! When the first character is a letter there is no prefix, (1) and (3) apply from it, and one
//! of them matches. So `中A` is `中` + `A` (`中` is Lo, in W; `A` is not), `HELLOworld` is one
//! chunk, `AǅB's` too (via (3), ǅ being Lt). Whitespace runs go through their last `\r`/`\n`
//! (`\s*[\r\n]+`), else to the end of the text, else give back their last character.

use super::blocks::rules::{
    after_line_ends, common_limit, contractions, digit_groups, letter_run_at, prev, whole_chars,
};
use super::blocks::Masks;
use super::classes::{
    class_at, contraction_ci, lower_lanes, run, run_swar, skip_ascii, spaces, upper_lanes, CRLF,
    HI, L, LO, M, N, OTHER, UP,
};
use super::scan::Scanner;

/// `U*W+` from `s`: `(end of the match of step 1, or None; end of the U-run)`.
#[inline(always)]
fn word(b: &[u8], s: usize) -> (Option<usize>, usize) {
    let mut p = s;
    let ascii = b.get(s).is_some_and(|&c| c < 0x80);
    if let Some(w) = b
        .get(s..)
        .and_then(|x| x.first_chunk::<8>())
        .filter(|_| ascii)
    {
        // ASCII fast path: `[A-Z]*[a-z]*` in these eight bytes (docs/performance.md,
        // 'Scanners').
        let w = u64::from_le_bytes(*w);
        let u = (!upper_lanes(w) & HI).trailing_zeros() / 8;
        // Eight capitals: the U-run goes on, and has no W so far.
        p = s + u as usize;
        if u < 8 {
            let e = (!lower_lanes(w) & HI & (u64::MAX << (8 * u))).trailing_zeros() / 8;
            if e < 8 && (w >> (8 * e)) & 0x80 == 0 {
                // Capitals (maybe none), then small letters (maybe none), then an ASCII
                // non-letter. `U*W+` matches if there are small letters; else there is no W and
                // `U+` is up to the caller.
                return ((e > u).then_some(s + e as usize), p);
            }
            // A run that goes on past these eight bytes or into non-ASCII: the loop below
            // takes it from the end of the capitals (finishing it here with `run_swar` trades
            // Latin text's speed for other scripts': docs/performance.md, 'Scanners').
        }
    }
    let mut after_last_w = None;
    loop {
        let (c, len) = class_at(b, p);
        if c & UP == 0 {
            if c & LO != 0 {
                return (Some(run_swar(b, p + len, LO, lower_lanes)), p);
            }
            return (after_last_w, p);
        }
        if c & LO == 0 && len == 1 {
            // ASCII uppercase: skip the rest of the ASCII uppercase run at once.
            p = skip_ascii(b, p + len, upper_lanes);
            continue;
        }
        p += len;
        if c & LO != 0 {
            after_last_w = Some(p);
        }
    }
}

/// `end`, extended by a contraction suffix if the pattern has them and one starts there.
#[inline(always)]
fn suffix<const CONTRACTIONS: bool>(b: &[u8], end: usize) -> usize {
    if CONTRACTIONS && b.get(end) == Some(&b'\'') {
        if let Some(e) = contraction_ci(b, end) {
            return e;
        }
    }
    end
}

/// The o200k family's scanner ([`super::Shape::O200k`]): tiktoken's o200k is
/// `O200k<false, true>`.
pub(super) struct O200k<const SINGLE_DIGITS: bool, const CONTRACTIONS: bool>;

impl<const SINGLE_DIGITS: bool, const CONTRACTIONS: bool> Scanner
    for O200k<SINGLE_DIGITS, CONTRACTIONS>
{
    const WIDE: bool = true;
    const CASED: bool = true;

    /// A run of letters in both classes (`Lo`, `Lm`: CJK, Thai, Hindi...; and the marks after
    /// them), or a prefix and such a run (`P?U*W+`: the prefix is one character, other or
    /// whitespace but not a line end).
    #[inline(always)]
    fn letter_run(m: &Masks, at: u32) -> Option<u32> {
        letter_run_at(m, Self::run_letters(m), at, m.blank() | m.other())
    }

    #[inline(always)]
    fn run_letters(m: &Masks) -> u64 {
        m.up & m.lo
    }

    /// `U*W+` ends after the run unless a letter (`中a`, `中Ab` go on) or a contraction
    /// follows it.
    #[inline(always)]
    fn run_ends_at(m: &Masks, k: u32) -> bool {
        let apos = if CONTRACTIONS { m.apos } else { 0 };
        (m.letter() | apos) >> k & 1 == 0
    }

    #[inline(always)]
    fn finish_run(b: &[u8], start: usize, _at: usize) -> usize {
        next::<SINGLE_DIGITS, CONTRACTIONS>(b, start)
    }

    #[inline(always)]
    fn next(b: &[u8], i: usize) -> usize {
        next::<SINGLE_DIGITS, CONTRACTIONS>(b, i)
    }

    #[inline(always)]
    fn block(b: &[u8], i: usize, m: &Masks) -> u64 {
        block::<SINGLE_DIGITS, CONTRACTIONS>(b, i, m)
    }
}

/// The chunk starts of the block `w = b[i..i + 64]`, where `i` is a chunk start: bit `k` is set
/// iff a chunk starts at `i + k`. Bit 0 is always set; bits above the block's *limit* are
/// clear, and every set bit up to it is exact (the scanner's loop takes the chunks between
/// them and goes on from the last).
///
/// On ASCII the pattern reduces to local rules. With P = space, tab or other (`[^\r\n\p{L}
/// \p{N}]`), a chunk starts at a byte that is
/// - a capital after a small letter (`camelCase`), or a letter after a digit or line end;
/// - a letter after a P that does not start a chunk (a P that starts one is the letter's
///   prefix, as in ` word` and `.word`);
/// - an other (punctuation, symbols) after anything but an other (`?!` is one run) or a space
///   (` ?[^\s\p{L}\p{N}]+` takes one space);
/// - a space or tab after a non-whitespace or a line end, or the last of a run of them before a
///   non-whitespace (`\s+(?!\S)` leaves it for the next chunk);
/// - a line end after a letter or digit (otherwise the whitespace run or the punctuation run
///   before it takes it: `\s*[\r\n]+`, `[\r\n/]*`);
/// - a digit after a non-digit, or three digits after a digit that starts a chunk.
///
/// Non-ASCII letters come classed by [`super::blocks::wide::wide_cased`]: those only upper-ish or
/// lower-ish as capitals and small letters, those in both classes (`Lm`, `Lo`: Arabic, Hebrew;
/// and a mark after a letter) in both masks. A run of them joins the word around it, and a
/// capital after such a run ends the chunk if a small letter came before the run (the run
/// is in `W+`); if not (the run is in `U*`), the limit stops before the capital.
///
/// A contraction after a letter belongs to the word; the chunk after it starts where it ends.
/// The limit keeps out what these rules do not cover: a byte >= 0x80 (the limit is four bytes
/// before it, and before any whitespace run that reaches it), a `/` right after a line end
/// (the punctuation run's `[\r\n/]*` may take it), a whitespace run with a line end after a
/// space (`\s*[\r\n]+` ends at its last line end), an apostrophe right after a contraction,
/// and the last bytes of the block (whose rules look ahead).
#[inline(always)]
fn block<const SINGLE_DIGITS: bool, const CONTRACTIONS: bool>(
    b: &[u8],
    i: usize,
    m: &Masks,
) -> u64 {
    let letter = m.letter();
    let (x, ws) = (m.blank(), m.ws());
    let other = m.other();
    let p = x | other;
    let mut limit = common_limit(m, ws);
    let tail_slash = m.slash & prev(m.nl);
    if tail_slash != 0 {
        limit = limit.min(tail_slash.trailing_zeros().saturating_sub(1));
    }
    // Letters in both classes (`Lm`, `Lo`, a mark after a letter) are in both masks.
    let both = m.up & m.lo;
    let (up, lo) = (m.up & !both, m.lo & !both);
    // `U*W+` goes on through `W` (small letters and `both`) after a small letter, so the first
    // capital after that ends the chunk: after a small letter, or after a run of `both` that
    // follows one (the addition carries each such run to the byte after it).
    let mut camel = up & prev(lo);
    if both != 0 {
        let w_end = both.wrapping_add(both & prev(lo)) & !both;
        camel |= up & w_end;
        // A capital after a run of `both` still in the `U*` part: whether the chunk ends
        // before it depends on what follows its run of capitals (a small letter: no; else
        // `U*` gives back to the last `both`): per character from there.
        let u_then_up = up & prev(both) & !w_end;
        if u_then_up != 0 {
            limit = limit.min(u_then_up.trailing_zeros() - 1);
        }
    }
    let (after_nl, limit) = after_line_ends(m, ws, limit);
    let mut starts = 1
        | camel
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
    // A prefix of several bytes (`«`, an em dash) starts a chunk with its first byte: the
    // letter after its last byte joins it.
    starts |= letter & prev(p) & !prev(whole_chars(starts, m) & p);
    if !CONTRACTIONS {
        return starts & ((2u64 << limit) - 1);
    }
    // `x's's`: the second apostrophe starts a chunk of its own (`'s...`, which may go on with
    // letters), not a second contraction.
    let starts = contractions(
        starts,
        limit,
        m.apos & prev(letter),
        true,
        |k| Some((contraction_ci(b, i + k as usize)? - i) as u32),
        |k, last_end| k == last_end,
    );
    // A contraction that ends at a run of `both` after a small letter (`don't中`) starts a
    // chunk there, in `U*`, so `w_end` is wrong after it: the block stops at that start.
    match starts & both & prev(lo) {
        0 => starts,
        reset => starts & ((2u64 << reset.trailing_zeros()) - 1),
    }
}

/// End of the chunk that starts at `i` (`i < b.len()`, a character boundary).
#[inline(always)]
fn next<const SINGLE_DIGITS: bool, const CONTRACTIONS: bool>(b: &[u8], i: usize) -> usize {
    let (c0, l0) = class_at(b, i);
    let j = i + l0;
    if c0 & L != 0 {
        let (w, u) = word(b, i);
        return suffix::<CONTRACTIONS>(b, w.unwrap_or(u));
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
        // In P: other, or whitespace other than `\r`/`\n`.
        let (w, u) = word(b, j);
        if let Some(end) = w {
            return suffix::<CONTRACTIONS>(b, end);
        }
        if c0 & M != 0 {
            return suffix::<CONTRACTIONS>(b, j);
        }
        if u != j {
            return suffix::<CONTRACTIONS>(b, u);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
        let others = if c0 & OTHER != 0 {
            Some(j)
        } else if b.get(i) == Some(&b' ') {
            let (c1, l1) = class_at(b, j);
            (c1 & OTHER != 0).then_some(j + l1)
        } else {
            None
        };
        if let Some(k) = others {
            let mut end = run(b, k, OTHER);
            while let Some(b'\r' | b'\n' | b'/') = b.get(end) {
                end += 1;
            }
            return end;
        }
    }
    // Whitespace.
    let s = spaces(b, i);
    if s.after_crlf != 0 {
        s.after_crlf
    } else if s.end == b.len() || s.last == i {
        s.end
    } else {
        s.last
    }
}
