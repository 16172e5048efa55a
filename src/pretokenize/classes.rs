//! Scanning primitives shared by the three scanners: the class of the character at a byte
//! position, runs of a class, and the contraction suffixes.
//!
//! Every function takes the bytes of a `&str` and a byte position that is a character
//! boundary, and returns character boundaries: lengths come from UTF-8 lead bytes, which in
//! valid UTF-8 are exact. Past the end of the text the class is 0 and the length 0, so "end of
//! text" fails every class test without a separate check.

use super::tables::{self, BLOCKS, INDEX, SHIFT, SMALL};
pub(super) use super::tables::{CRLF, L, LO, M, N, OTHER, UP, WS};

/// Class bits of a code point. Any `u32` is accepted; values past U+10FFFF (which valid UTF-8
/// never yields) get some class instead of a panic.
#[inline(always)]
pub(super) fn class_of(cp: u32) -> u8 {
    // Every index entry names an existing block, so `get` never misses; it stands in for an
    // unprovable bounds check.
    BLOCKS.get(block_entry(cp)).copied().unwrap_or(0)
}

/// [`class_of`] for tables built at compile time.
pub(super) const fn class_of_const(cp: u32) -> u8 {
    BLOCKS[block_entry(cp)]
}

/// Where in `BLOCKS` the class of `cp` is (any `u32`: past U+1FFFFF it wraps).
#[inline(always)]
const fn block_entry(cp: u32) -> usize {
    let cp = cp & 0x1F_FFFF;
    // `cp >> SHIFT` < 0x20_0000 >> SHIFT == INDEX.len(): the index is in bounds (the
    // compiler sees it too).
    let block = INDEX[(cp >> SHIFT) as usize] as usize;
    (block << SHIFT) | (cp & ((1 << SHIFT) - 1)) as usize
}

/// Class bits and byte length of the character starting at `i`; `(0, 0)` at the end.
#[inline(always)]
pub(super) fn class_at(b: &[u8], i: usize) -> (u8, usize) {
    match b.get(i) {
        None => (0, 0),
        Some(&c) if c < 0x80 => (ascii_class(c), 1),
        Some(&c) => class_multi(b, i, c),
    }
}

/// Class bits and byte length of the multi-byte character whose lead byte `c` is at `i`.
#[inline(always)]
pub(super) fn class_multi(b: &[u8], i: usize, c: u8) -> (u8, usize) {
    if c < 0xE0 {
        // Two bytes: U+0080..U+07FF, straight from SMALL (`& 0x7FF` keeps it in bounds), one
        // load instead of the two-level table's two (docs/performance.md, 'Scanners').
        let cp = ((c as usize & 0x1F) << 6) | (b.get(i + 1).copied().unwrap_or(0) as usize & 0x3F);
        (SMALL[cp & 0x7FF], 2)
    } else if c < 0xF0 {
        // Three bytes: U+0800..U+FFFF, from `BMP` (one load instead of two).
        let cont = |k: usize| b.get(i + k).copied().unwrap_or(0x80) as usize & 0x3F;
        let cp = ((c as usize & 0x0F) << 12) | (cont(1) << 6) | cont(2);
        (BMP[cp], 3)
    } else {
        let (cp, len) = decode(b, i, c);
        (class_of(cp), len)
    }
}

/// Class bits of every code point below U+10000, built from `INDEX` and `BLOCKS` at compile
/// time: the three-byte characters (CJK, Hangul, Devanagari...) in one lookup.
static BMP: [u8; 0x1_0000] = {
    let mut t = [0u8; 0x1_0000];
    let mut cp = 0;
    while cp < t.len() {
        t[cp] = BLOCKS[block_entry(cp as u32)];
        cp += 1;
    }
    t
};

/// Class bits of an ASCII byte.
#[inline(always)]
pub(super) fn ascii_class(c: u8) -> u8 {
    SMALL[(c & 0x7F) as usize]
}

/// The code point and byte length of the multi-byte character whose lead byte `c` is at `i`.
#[inline(always)]
pub(super) fn decode(b: &[u8], i: usize, c: u8) -> (u32, usize) {
    // Continuation bytes exist in valid UTF-8; `get` keeps a malformed slice from panicking.
    let cont = |k: usize| (b.get(i + k).copied().unwrap_or(0x80) & 0x3F) as u32;
    let c = c as u32;
    if c < 0xE0 {
        (((c & 0x1F) << 6) | cont(1), 2)
    } else if c < 0xF0 {
        (((c & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            ((c & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

/// End of the run of characters whose class has a bit of `mask`, starting at `i`.
#[inline(always)]
pub(super) fn run(b: &[u8], mut i: usize, mask: u8) -> usize {
    loop {
        match b.get(i) {
            Some(&c) if c < 0x80 => {
                if ascii_class(c) & mask == 0 {
                    return i;
                }
                i += 1;
            }
            Some(&c) => {
                let (class, len) = class_multi(b, i, c);
                if class & mask == 0 {
                    return i;
                }
                i += len;
            }
            None => return i,
        }
    }
}

/// The high bit of every byte lane.
pub(super) const HI: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const ONES: u64 = 0x0101_0101_0101_0101;

/// High bit of each byte lane of `x` (whose lanes are all < 0x80) set iff `lo <= lane <= hi`.
#[inline(always)]
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    // Neither sum carries into the next lane: lanes are < 0x80 and each addend is <= 0x80.
    let ge_lo = x + ONES * (0x80 - lo as u64);
    let gt_hi = x + ONES * (0x7F - hi as u64);
    ge_lo & !gt_hi & HI
}

/// Lanes of `w` that are ASCII letters `[A-Za-z]`.
#[inline(always)]
pub(super) fn letter_lanes(w: u64) -> u64 {
    in_range((w | (ONES * 0x20)) & LOW7, b'a', b'z') & !w
}

/// Lanes of `w` that are ASCII lowercase letters `[a-z]`.
#[inline(always)]
pub(super) fn lower_lanes(w: u64) -> u64 {
    in_range(w & LOW7, b'a', b'z') & !w
}

/// Lanes of `w` that are a space or a tab.
#[inline(always)]
pub(super) fn blank_lanes(w: u64) -> u64 {
    // A lane's high bit is set here iff the lane is not zero.
    let nonzero = |x: u64| (((x & LOW7) + LOW7) | x) & HI;
    !(nonzero(w ^ (ONES * b' ' as u64)) & nonzero(w ^ (ONES * b'\t' as u64))) & HI
}

/// Lanes of `w` that are ASCII control characters other than whitespace (`\x00`..`\x08`,
/// `\x0E`..`\x1F`, `\x7F`).
#[inline(always)]
pub(super) fn control_lanes(w: u64) -> u64 {
    let x = w & LOW7;
    let below_space = !(x + ONES * 0x60) & HI;
    (below_space & !in_range(x, 0x09, 0x0D) | in_range(x, 0x7F, 0x7F)) & !w
}

/// Lanes of `w` that are ASCII uppercase letters `[A-Z]`.
#[inline(always)]
pub(super) fn upper_lanes(w: u64) -> u64 {
    in_range(w & LOW7, b'A', b'Z') & !w
}

/// Like [`run`], eight bytes at a time while they are ASCII: `lanes` marks the ASCII bytes of a
/// word that are in `mask` (it must agree with the table on ASCII). A run's end costs one
/// `trailing_zeros` instead of a mispredicted branch at a data-dependent byte
/// (docs/performance.md, 'Scanners').
#[inline(always)]
pub(super) fn run_swar(b: &[u8], mut i: usize, mask: u8, lanes: impl Fn(u64) -> u64) -> usize {
    loop {
        i = skip_ascii8(b, i, &lanes);
        // `i` holds a byte outside the ASCII part of the class, or is near the end. Stay on
        // this path through non-ASCII text (going back to the eight-byte test after every
        // non-ASCII letter costs more than it saves: docs/performance.md, 'Scanners'), and
        // return to it after an ASCII byte of the class.
        loop {
            match b.get(i) {
                Some(&c) if c < 0x80 => {
                    if ascii_class(c) & mask == 0 {
                        return i;
                    }
                    i += 1;
                    break;
                }
                Some(&c) => {
                    let (class, len) = class_multi(b, i, c);
                    if class & mask == 0 {
                        return i;
                    }
                    i += len;
                }
                None => return i,
            }
        }
    }
}

/// The first byte at or after `i` that `lanes` does not mark, or the start of the last
/// incomplete eight-byte word if all of them are marked.
#[inline(always)]
fn skip_ascii8(b: &[u8], mut i: usize, lanes: impl Fn(u64) -> u64) -> usize {
    while let Some(w) = b.get(i..).and_then(|s| s.first_chunk::<8>()) {
        let stop = !lanes(u64::from_le_bytes(*w)) & HI;
        if stop != 0 {
            return i + (stop.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

/// The first byte at or after `i` that `lanes` does not mark, eight bytes at a time.
#[inline(always)]
pub(super) fn skip_ascii(b: &[u8], i: usize, lanes: impl Fn(u64) -> u64) -> usize {
    let mut i = skip_ascii8(b, i, &lanes);
    while let Some(&c) = b.get(i) {
        if lanes(c as u64) & 0x80 == 0 {
            return i;
        }
        i += 1;
    }
    i
}

/// A whitespace run starting at `i` (which holds whitespace).
pub(super) struct Spaces {
    /// Where the run ends (the first non-whitespace character, or the end of the text).
    pub end: usize,
    /// Where its last character starts.
    pub last: usize,
    /// One past the last `\r` or `\n` in the run, or 0 if it has none.
    pub after_crlf: usize,
}

/// Scan the whitespace run starting at `i`.
#[inline(always)]
pub(super) fn spaces(b: &[u8], mut i: usize) -> Spaces {
    let mut last = i;
    let mut after_crlf = 0;
    loop {
        // Eight spaces or tabs at a time: long indents, a megabyte of spaces.
        while let Some(w) = b.get(i..).and_then(|r| r.first_chunk::<8>()) {
            if blank_lanes(u64::from_le_bytes(*w)) != HI {
                break;
            }
            last = i + 7;
            i += 8;
        }
        let (c, len) = class_at(b, i);
        if c & WS == 0 {
            return Spaces {
                end: i,
                last,
                after_crlf,
            };
        }
        if c & CRLF != 0 {
            after_crlf = i + 1;
        }
        last = i;
        i += len;
    }
}

/// Case-insensitively, the contraction `'s 't 're 've 'm 'll 'd` starting at `i` (which
/// holds `'`): its end, or `None`. The same set serves cl100k's `'(?i:[sdmt]|ll|ve|re)` and
/// o200k's `(?i:'s|'t|'re|'ve|'m|'ll|'d)`.
#[inline]
pub(super) fn contraction_ci(b: &[u8], i: usize) -> Option<usize> {
    let (x, len) = folded_letter(b, i + 1);
    match x {
        b's' | b'd' | b'm' | b't' => Some(i + 1 + len),
        b'l' | b'v' | b'r' => {
            let want = if x == b'l' { b'l' } else { b'e' };
            let (y, len2) = folded_letter(b, i + 1 + len);
            (y == want).then_some(i + 1 + len + len2)
        }
        _ => None,
    }
}

/// The contraction letter that the character at `i` folds to (see
/// [`tables::contraction_letter`]), and the character's byte length.
#[inline(always)]
fn folded_letter(b: &[u8], i: usize) -> (u8, usize) {
    match b.get(i) {
        None => (0, 0),
        Some(&c) if c < 0x80 => (tables::contraction_letter(c as u32), 1),
        Some(&c) => {
            let (cp, len) = decode(b, i, c);
            (tables::contraction_letter(cp), len)
        }
    }
}

/// gpt2's case-sensitive `'(?:[sdmt]|ll|ve|re)` at `i` (which holds `'`): its end, or `None`.
#[inline]
pub(super) fn contraction_cs(b: &[u8], i: usize) -> Option<usize> {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b's' | b'd' | b'm' | b't'), _) => Some(i + 2),
        (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => Some(i + 3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_some_characters() {
        assert_eq!(class_of('a' as u32), L | LO);
        assert_eq!(class_of('A' as u32), L | UP);
        assert_eq!(class_of('7' as u32), N);
        assert_eq!(class_of(' ' as u32), WS);
        assert_eq!(class_of('\n' as u32), WS | CRLF);
        assert_eq!(class_of('!' as u32), OTHER);
        assert_eq!(class_of(0x0301), OTHER | M | UP | LO);
        assert_eq!(class_of('中' as u32), L | UP | LO);
        assert_eq!(class_of(0x01C5), L | UP); // ǅ, titlecase
        assert_eq!(class_of(0x0663), N); // ٣
        assert_eq!(class_of(0x216B), N); // Ⅻ
        assert_eq!(class_of(0x3000), WS);
        assert_eq!(class_of(0x85), WS);
        assert_eq!(class_of(0x200B), OTHER); // zero width space is not `\s` in `regex`
        assert_eq!(class_of(0xD800), OTHER); // surrogates: total table
        assert_eq!(class_of(0x10FFFF), OTHER);
        let _ = class_of(u32::MAX);
    }

    /// The direct tables (`SMALL` for one and two bytes, `BMP` for three) agree with the
    /// two-level table on every character.
    #[test]
    fn class_at_every_character_is_its_class() {
        let mut buf = [0u8; 4];
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let s = c.encode_utf8(&mut buf);
            assert_eq!(
                class_at(s.as_bytes(), 0),
                (class_of(c as u32), s.len()),
                "U+{:04X}",
                c as u32
            );
        }
    }

    #[test]
    fn decoding_matches_std() {
        for s in [
            "é",
            "中",
            "😀",
            "\u{7FF}",
            "\u{800}",
            "\u{FFFF}",
            "\u{10000}",
            "\u{10FFFF}",
        ] {
            let b = s.as_bytes();
            let c = s.chars().next().unwrap_or('\0');
            assert_eq!(decode(b, 0, b[0]), (c as u32, s.len()), "{s:?}");
        }
    }

    #[test]
    fn swar_lanes_agree_with_the_table() {
        for c in 0..=255u8 {
            for pos in 0..8 {
                let w =
                    u64::from_le_bytes([b'!'; 8]) & !(0xFF << (pos * 8)) | (c as u64) << (pos * 8);
                let lane = |f: fn(u64) -> u64| f(w) >> (pos * 8 + 7) & 1 == 1;
                let cls = if c < 0x80 { ascii_class(c) } else { 0 };
                assert_eq!(lane(letter_lanes), cls & L != 0, "{c}");
                assert_eq!(lane(lower_lanes), cls & LO != 0, "{c}");
                assert_eq!(lane(upper_lanes), cls & UP != 0, "{c}");
                assert_eq!(lane(blank_lanes), c == b' ' || c == b'\t', "{c}");
                let control = c < 0x80 && cls & (OTHER | WS) == OTHER && !c.is_ascii_graphic();
                assert_eq!(lane(control_lanes), control, "{c}");
            }
        }
    }

    #[test]
    fn contractions() {
        let ci = |s: &str| contraction_ci(s.as_bytes(), 0);
        assert_eq!(ci("'s"), Some(2));
        assert_eq!(ci("'S"), Some(2));
        assert_eq!(ci("'ſ"), Some(3));
        assert_eq!(ci("'LL"), Some(3));
        assert_eq!(ci("'lE"), None);
        assert_eq!(ci("'rE"), Some(3));
        assert_eq!(ci("'"), None);
        assert_eq!(ci("'x"), None);
        let cs = |s: &str| contraction_cs(s.as_bytes(), 0);
        assert_eq!(cs("'s"), Some(2));
        assert_eq!(cs("'S"), None);
        assert_eq!(cs("'ve"), Some(3));
        assert_eq!(cs("'v"), None);
    }
}
