//! What the scanners build from a block's masks, shared by all three: the class of the byte
//! before each byte, characters whose starts spread over all their bytes, runs of letters,
//! digit groups, contractions, and the limit up to which a block's starts are exact.

use super::{Masks, BLOCK};

/// `starts` with each start that is the lead byte of a character of `m` spread over all of
/// its bytes (`m.cont`, from [`wide`](super::wide::wide)): bit `k` set iff the character holding byte `k` starts
/// a chunk.
#[inline(always)]
pub(crate) fn whole_chars(starts: u64, m: &Masks) -> u64 {
    let mut f = starts;
    f |= (f << 1) & m.cont;
    f |= (f << 1) & m.cont;
    f | (f << 1) & m.cont
}

/// If the chunk that starts `at` bytes into the block (masks `m`) is a run of `letters`, from
/// `at` or after one character whose first byte is in `prefix`: where its letters start.
#[inline(always)]
pub(crate) fn letter_run_at(m: &Masks, letters: u64, at: u32, prefix: u64) -> Option<u32> {
    let letter = letters >> at;
    if letter & 1 != 0 {
        return Some(at);
    }
    // The prefix's bytes: its lead and the continuation bytes after it.
    let len = (!m.cont.checked_shr(at + 1).unwrap_or(0)).trailing_zeros() + 1;
    let after = letter.checked_shr(len).unwrap_or(0);
    (prefix >> at & after & 1 != 0).then_some(at + len)
}

/// Bit `k` set iff byte `k - 1` is in `set` (the class of the previous byte; nothing before
/// byte 0, which is a chunk start).
#[inline(always)]
pub(crate) fn prev(set: u64) -> u64 {
    set << 1
}

/// The limit every scanner's block shares: rules look up to three bytes ahead (so nothing past
/// byte 60), a whitespace run that reaches the block's end may go on, and a byte >= 0x80 may be
/// a letter, number, mark or whitespace that changes the chunks around it (so nothing within
/// four bytes before it, or in the whitespace run that reaches it).
#[inline(always)]
pub(crate) fn common_limit(m: &Masks, ws: u64) -> u32 {
    let mut limit = BLOCK as u32 - 4;
    if ws >> 63 != 0 {
        limit = limit.min(run_start(ws, 63));
    }
    if m.hi != 0 {
        let h = m.hi.trailing_zeros();
        limit = limit.min(h.saturating_sub(4)).min(run_start(ws, h));
    }
    limit
}

/// For the patterns whose whitespace chunk ends at the run's last line end (`\s*[\r\n]`):
/// where a space or tab after a line end starts a chunk (`after_nl`, right only if no line end
/// follows in the same run), and the limit that keeps out runs where one does follow.
#[inline(always)]
pub(crate) fn after_line_ends(m: &Masks, ws: u64, limit: u32) -> (u64, u32) {
    let x = m.blank();
    let after_nl = x & prev(m.nl);
    // Line ends that follow a run of spaces or tabs that itself follows a line end.
    let nl_again = x.wrapping_add(after_nl) & !x & m.nl;
    if nl_again == 0 {
        return (after_nl, limit);
    }
    (
        after_nl,
        limit.min(run_start(ws, nl_again.trailing_zeros())),
    )
}

/// The chunk starts of `\p{N}{1,3}` in runs of digits: each run's first digit and every third
/// after it.
#[inline(always)]
pub(crate) fn digit_groups(digit: u64) -> u64 {
    let digit3 = digit & prev(digit) & (digit << 2);
    let mut groups = digit & !prev(digit);
    let mut more = (groups << 3) & digit3;
    while more != 0 {
        groups |= more;
        more = (more << 3) & digit3;
    }
    groups
}

/// Apply the contractions that start at the apostrophes of `candidates` (lowest first, up to
/// `limit`): `end(k)` is where a contraction at byte `k` ends (relative to the block), or
/// `None`. Bytes inside a contraction start no chunk, nor does its apostrophe if it `joins`
/// the word before (o200k; in gpt2 and cl100k a contraction is a chunk of its own); the byte
/// after it starts one. Returns the block's final starts: those up to the limit, which
/// `stop(k, last_end)` may cut to `k` (a case the rules do not cover).
#[inline(always)]
pub(crate) fn contractions(
    mut starts: u64,
    mut limit: u32,
    candidates: u64,
    joins: bool,
    end: impl Fn(u32) -> Option<u32>,
    stop: impl Fn(u32, u32) -> bool,
) -> u64 {
    let mut apos = candidates & ((2u64 << limit) - 1);
    let mut last_end = u32::MAX;
    while apos != 0 {
        let k = apos.trailing_zeros();
        apos &= apos - 1;
        if k > limit {
            break;
        }
        if stop(k, last_end) {
            limit = k;
            break;
        }
        if let Some(e) = end(k) {
            if e >= BLOCK as u32 {
                limit = k;
                break;
            }
            let first = if joins { k } else { k + 1 };
            starts &= !(((1u64 << e) - 1) & !((1u64 << first) - 1));
            starts |= 1 << e;
            last_end = e;
        }
    }
    starts & ((2u64 << limit) - 1)
}

/// The first position of the run of `set` bits that contains bit `k`, or `k` if bit `k - 1`
/// is not set (`k <= 64`).
#[inline(always)]
pub(crate) fn run_start(set: u64, k: u32) -> u32 {
    let below = if k >= 64 {
        !set
    } else {
        !set & ((1u64 << k) - 1)
    };
    if below == 0 {
        0
    } else {
        64 - below.leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_starts() {
        assert_eq!(run_start(0b0111_0000, 7), 4);
        assert_eq!(run_start(0b0111_0000, 4), 4);
        assert_eq!(run_start(0b0111_0000, 9), 9);
        assert_eq!(run_start(0b1111, 3), 0);
        assert_eq!(run_start(!0, 64), 0);
        assert_eq!(run_start(1 << 63, 64), 63);
    }
}
