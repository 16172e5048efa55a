//! Class bitmasks of 64 bytes at once, for the scanners' block path: bit `k` of each mask
//! says whether byte `k` of the block is in the class. A scanner turns the masks into the
//! bitmask of chunk starts with a few dozen bitwise operations (see `o200k::block`), instead of
//! a run of data-dependent branches per chunk.
//!
//! The masks cover ASCII only; `hi` marks the other bytes, which a scanner leaves to its
//! per-character path. On x86_64 they come from AVX-512BW (one 64-byte register), AVX2 (two
//! 32-byte halves) or SSE2 (part of the x86_64 baseline), as the caller's instruction set
//! allows (`isa`), elsewhere from eight-byte words; the tests check each against the class
//! table.

use super::classes::{
    ascii_class, class_multi, HOT, HOT_PAGES, HOT_PAGES_CASED, TWO_BYTE, TWO_BYTE_CASED,
    WHOLE_RUNS, WHOLE_RUNS_CASED,
};
use super::tables::{CRLF, L, LO, M, N, OTHER, UP, WS};

/// Block length in bytes.
pub(super) const BLOCK: usize = 64;

/// The ASCII classes of one block. Every ASCII byte is in exactly one of `up`, `lo`,
/// `digit`, `space`, `tab`, `nl`, or none of them (then it is "other": punctuation, symbols,
/// control characters), `apos` and `slash` pick out two of the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// Bytes >= 0x80 (after [`wide`]: only those of the characters it did not classify).
    pub hi: u64,
    /// `[A-Z]` (and after [`wide_cased`], every byte of the non-ASCII letters that are
    /// upper-ish: only (`Lu`, `Lt`) or also lower-ish (`Lm`, `Lo`, a mark after a letter)).
    pub up: u64,
    /// `[a-z]` (and after [`wide_cased`], every byte of the non-ASCII letters that are
    /// lower-ish: only (`Ll`) or also upper-ish, as in `up`; after [`wide`], every byte of
    /// every non-ASCII letter).
    pub lo: u64,
    /// `[0-9]`.
    pub digit: u64,
    /// `' '`.
    pub space: u64,
    /// `\t`, `\v`, `\f`: the whitespace that is neither a space nor a line end.
    pub tab: u64,
    /// `\r`, `\n`.
    pub nl: u64,
    /// `'`.
    pub apos: u64,
    /// `/`.
    pub slash: u64,
    /// The bytes after the lead of each character [`wide`] or [`wide_cased`] classified (0
    /// without them).
    pub cont: u64,
}

impl Masks {
    /// `[A-Za-z]`, and the non-ASCII letters [`wide`] or [`wide_cased`] classified.
    #[inline(always)]
    pub fn letter(&self) -> u64 {
        self.up | self.lo
    }

    /// Spaces and tabs: the whitespace that is not a line end.
    #[inline(always)]
    pub fn blank(&self) -> u64 {
        self.space | self.tab
    }

    /// All ASCII whitespace.
    #[inline(always)]
    pub fn ws(&self) -> u64 {
        self.space | self.tab | self.nl
    }

    /// The bytes that are none of letter, digit or whitespace (ASCII punctuation, symbols and
    /// control characters, and the non-ASCII others [`wide`] or [`wide_cased`] classified; not
    /// the other non-ASCII bytes).
    #[inline(always)]
    pub fn other(&self) -> u64 {
        !(self.letter() | self.digit | self.space | self.tab | self.nl | self.hi)
    }
}

/// The body of [`sse2`] and [`avx2`]: the block `$lanes` bytes at a time, with the intrinsics
/// of that width (`$bits` is the unsigned integer of `$lanes` bits).
#[cfg(target_arch = "x86_64")]
macro_rules! class_masks {
    ($block:ident, $lanes:literal, $bits:ty, $vec:ty, $load:ident, $set1:ident, $add:ident,
     $or:ident, $cmpgt:ident, $cmpeq:ident, $slli16:ident, $movemask:ident) => {{
        let mut m = Masks::default();
        // SAFETY: the caller has the intrinsics' target feature (SSE2 is in the x86_64
        // baseline; `avx2` is only called where the CPU has it); each load reads `$lanes`
        // bytes inside `block`, unaligned.
        unsafe {
            for part in 0..BLOCK / $lanes {
                let v = $load($block.as_ptr().add($lanes * part) as *const $vec);
                let bits = |x: $vec| $movemask(x) as $bits as u64;
                // Signed compares: `x + (0x80 - lo) < 0x80 - lo + (hi - lo + 1)` in i8 is
                // `lo <= x <= hi` for every byte (bytes >= 0x80 land outside the range).
                let range = |v: $vec, lo: u8, hi: u8| {
                    let shifted = $add(v, $set1(0x80u8.wrapping_sub(lo) as i8));
                    bits($cmpgt(
                        $set1(0x80u8.wrapping_add(hi - lo + 1) as i8),
                        shifted,
                    ))
                };
                let eq = |v: $vec, c: u8| bits($cmpeq(v, $set1(c as i8)));
                let letter = range($or(v, $set1(0x20)), b'a', b'z');
                // Bit 5 of each byte moved to bit 7 (a 16-bit shift: what crosses into the next
                // byte lands in its low bits, not in bit 7).
                let bit5 = bits($slli16(v, 2));
                let ctl_ws = range(v, b'\t', b'\r');
                let nl = eq(v, b'\n') | eq(v, b'\r');
                let at = $lanes * part;
                m.hi |= bits(v) << at;
                m.up |= (letter & !bit5) << at;
                m.lo |= (letter & bit5) << at;
                m.digit |= range(v, b'0', b'9') << at;
                m.space |= eq(v, b' ') << at;
                m.tab |= (ctl_ws & !nl) << at;
                m.nl |= nl << at;
                m.apos |= eq(v, b'\'') << at;
                m.slash |= eq(v, b'/') << at;
            }
        }
        m
    }};
}

/// The masks 16 bytes at a time (SSE2 is part of the x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn sse2(block: &[u8; BLOCK]) -> Masks {
    use std::arch::x86_64::*;
    class_masks!(
        block,
        16,
        u16,
        __m128i,
        _mm_loadu_si128,
        _mm_set1_epi8,
        _mm_add_epi8,
        _mm_or_si128,
        _mm_cmpgt_epi8,
        _mm_cmpeq_epi8,
        _mm_slli_epi16,
        _mm_movemask_epi8
    )
}

/// The masks 32 bytes at a time, in half the instructions of [`sse2`]. Holmes, cl100k
/// (`profile_encode`): the scanner alone 3.06 -> 2.60 ns a chunk; warm numpy from Python 3-5%
/// faster.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn avx2(block: &[u8; BLOCK]) -> Masks {
    use std::arch::x86_64::*;
    class_masks!(
        block,
        32,
        u32,
        __m256i,
        _mm256_loadu_si256,
        _mm256_set1_epi8,
        _mm256_add_epi8,
        _mm256_or_si256,
        _mm256_cmpgt_epi8,
        _mm256_cmpeq_epi8,
        _mm256_slli_epi16,
        _mm256_movemask_epi8
    )
}

/// The masks from one 64-byte register, each class a compare straight into a mask register:
/// a third of [`avx2`]'s instructions.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) unsafe fn avx512(block: &[u8; BLOCK]) -> Masks {
    use std::arch::x86_64::*;
    let v = _mm512_loadu_si512(block.as_ptr().cast());
    let set1 = |c: u8| _mm512_set1_epi8(c as i8);
    // `lo <= x <= hi` as one unsigned compare of `x - lo`.
    let range = |v: __m512i, lo: u8, hi: u8| {
        _mm512_cmple_epu8_mask(_mm512_sub_epi8(v, set1(lo)), set1(hi - lo))
    };
    let eq = |c: u8| _mm512_cmpeq_epi8_mask(v, set1(c));
    let letter = range(_mm512_or_si512(v, set1(0x20)), b'a', b'z');
    let bit5 = _mm512_test_epi8_mask(v, set1(0x20));
    let nl = eq(b'\n') | eq(b'\r');
    Masks {
        hi: _mm512_movepi8_mask(v),
        up: letter & !bit5,
        lo: letter & bit5,
        digit: range(v, b'0', b'9'),
        space: eq(b' '),
        tab: range(v, b'\t', b'\r') & !nl,
        nl,
        apos: eq(b'\''),
        slash: eq(b'/'),
        cont: 0,
    }
}

/// `rest` (fewer than [`BLOCK`] bytes) and `pad` bytes after it, by one masked load, which
/// reads no byte past `rest`.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) unsafe fn padded_avx512(rest: &[u8], pad: u8) -> [u8; BLOCK] {
    use std::arch::x86_64::*;
    let n = rest.len().min(BLOCK);
    let keep = u64::MAX.checked_shr(64 - n as u32).unwrap_or(0);
    // SAFETY: the load reads only the bytes of `keep`, the first `n` of `rest`.
    let v =
        unsafe { _mm512_mask_loadu_epi8(_mm512_set1_epi8(pad as i8), keep, rest.as_ptr().cast()) };
    let mut w = [0u8; BLOCK];
    // SAFETY: `w` has 64 bytes.
    unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), v) };
    w
}

/// The portable version: one byte at a time from the class table.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn swar(block: &[u8; BLOCK]) -> Masks {
    let mut m = Masks::default();
    for (k, &c) in block.iter().enumerate() {
        let bit = 1u64 << k;
        if c >= 0x80 {
            m.hi |= bit;
            continue;
        }
        let cls = ascii_class(c);
        if cls & L != 0 {
            if cls & UP != 0 {
                m.up |= bit;
            } else {
                m.lo |= bit;
            }
        } else if cls & N != 0 {
            m.digit |= bit;
        } else if cls & CRLF != 0 {
            m.nl |= bit;
        } else if c == b' ' {
            m.space |= bit;
        } else if cls & WS != 0 {
            m.tab |= bit;
        }
        if c == b'\'' {
            m.apos |= bit;
        }
        if c == b'/' {
            m.slash |= bit;
        }
    }
    m
}

/// The lead bytes of a block's characters of more than one byte, by the least length they
/// start: bytes >= 0xC0, >= 0xE0 (three or four bytes), >= 0xF0 (four). Only [`wide`] needs
/// them, so they are not among the [`Masks`] every block computes (three more compares there
/// cost code, which is ASCII, 3-5%).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leads {
    pub from_c0: u64,
    pub from_e0: u64,
    pub from_f0: u64,
}

impl Leads {
    /// The leads of the characters of two bytes that end in the block.
    #[inline(always)]
    pub fn of_two(&self) -> u64 {
        self.from_c0 & !self.from_e0 & (u64::MAX >> 1)
    }

    /// The leads of the characters of three bytes that end in the block.
    #[inline(always)]
    pub fn of_three(&self) -> u64 {
        self.from_e0 & !self.from_f0 & (u64::MAX >> 2)
    }
}

/// [`Leads`] from eight-byte words: bit 7 of a byte and the bits below it, each moved to bit
/// 7 by a shift, and the bytes' bit 7 gathered by a multiply.
#[inline(always)]
pub(super) fn leads_swar(block: &[u8; BLOCK]) -> Leads {
    // Bit 7 of each byte to bit `k` of the top byte (no two products overlap, so no carries).
    let gather =
        |x: u64| (x >> 7 & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56;
    let mut leads = Leads {
        from_c0: 0,
        from_e0: 0,
        from_f0: 0,
    };
    for (k, w) in block.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
        let c0 = w & w << 1;
        let e0 = c0 & w << 2;
        let f0 = e0 & w << 3;
        leads.from_c0 |= gather(c0) << (8 * k);
        leads.from_e0 |= gather(e0) << (8 * k);
        leads.from_f0 |= gather(f0) << (8 * k);
    }
    leads
}

/// [`Leads`] by three compares.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) unsafe fn leads_avx512(block: &[u8; BLOCK]) -> Leads {
    use std::arch::x86_64::*;
    let v = _mm512_loadu_si512(block.as_ptr().cast());
    let from = |c: u8| _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(c as i8));
    Leads {
        from_c0: from(0xC0),
        from_e0: from(0xE0),
        from_f0: from(0xF0),
    }
}

/// Classify the non-ASCII characters of `block` (the 64 bytes from a character boundary) for
/// the scanners whose classes do not depend on case (gpt2, cl100k): a letter's bytes go to
/// `lo` (these scanners read only `letter()`, so the case is of no account), an other's
/// (punctuation, symbols, marks) to `other()`, and they leave `hi`.
/// A number or whitespace (digit groups and whitespace runs are counted in characters), or a
/// character that does not end in the block, stays in `hi` and limits the block as before.
/// So Japanese, Russian or Hindi take the block path as English does: their chunk starts
/// come from the masks, without a mispredicted branch at each chunk's end.
///
/// `two` and `three` classify the characters of two and of three bytes whose leads they are
/// given, returning the leads of the letters and of the others (see [`one_by_one`]); those of
/// four bytes are read one by one (`class_multi`).
#[inline(always)]
pub(super) fn wide(
    block: &[u8; BLOCK],
    m: &mut Masks,
    leads: Leads,
    two: impl FnOnce(&[u8; BLOCK], u64) -> (u64, u64),
    three: impl FnOnce(&[u8; BLOCK], u64) -> (u64, u64),
) {
    // Leads of characters of two, three or four bytes that end in the block.
    let leads2 = leads.of_two();
    let leads3 = leads.of_three();
    let four = leads.from_f0 & (u64::MAX >> 3);
    // The leads' bits spread over their characters' bytes (no carries: leads of characters
    // of n bytes are at least n apart).
    let (mut letter, mut other) = match leads3 {
        0 => (0, 0),
        _ => {
            let (l, o) = three(block, leads3);
            (l * 0b111, o * 0b111)
        }
    };
    if leads2 != 0 {
        let (l, o) = two(block, leads2);
        letter |= l * 0b11;
        other |= o * 0b11;
    }
    let mut rest = four;
    while rest != 0 {
        let p = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let (class, len) = class_multi(block, p, block[p]);
        let bits = ((1u64 << len) - 1) << p;
        letter |= u64::from(class & L != 0) * bits;
        other |= u64::from(class & OTHER != 0) * bits;
    }
    m.hi &= !(letter | other);
    m.lo |= letter;
    m.cont = (letter | other) & !leads.from_c0;
}

/// [`wide`] for o200k, whose letter classes depend on case: a letter that is only upper-ish
/// (`Lu`, `Lt`) goes to `up`, one only lower-ish (`Ll`) to `lo`, one in both classes (`Lm`,
/// `Lo`) to both `up` and `lo`, and so does a mark (also in both) in a run of marks right
/// after a letter, where it joins the letter's word as a `Lo` letter would; an other that is
/// not a mark goes to `other()`. The first character it cannot class (a number, whitespace, a
/// mark after anything but a letter, a character that does not end in the block) stops it;
/// it and all after it stay in `hi`. `after_letter`: the byte before the block is a letter's
/// (so a mark at its start joins it).
///
/// `two` classes the characters of two bytes whose leads it is given (the leads of the
/// upper-ish, lower-ish, other, `Lm`/`Lo` and mark characters, as in `TWO_BYTE_CASED`), or
/// returns zeros (then they are read one by one, as those of four bytes are). `three` does
/// the same for characters of three bytes, and also returns the leads it classed (those of
/// numbers and whitespace among them: these stop the block as a number read one by one
/// does).
#[inline(always)]
pub(super) fn wide_cased(
    block: &[u8; BLOCK],
    m: &mut Masks,
    leads: Leads,
    after_letter: bool,
    two: impl FnOnce(&[u8; BLOCK], u64) -> [u64; 5],
    three: impl FnOnce(&[u8; BLOCK], u64) -> ([u64; 5], u64),
) {
    let leads2 = leads.of_two();
    let classes2 = match leads2 {
        0 => [0; 5],
        _ => two(block, leads2),
    };
    // Two copies of the rest: one for blocks without characters of three bytes classed by
    // `three` (all of most Latin, Greek or Cyrillic text), where the compiler drops what
    // they add.
    let leads3 = leads.of_three();
    match leads3 {
        0 => cased_rest(block, m, leads, after_letter, classes2, [0; 5], 0),
        _ => match three(block, leads3) {
            (_, 0) => cased_rest(block, m, leads, after_letter, classes2, [0; 5], 0),
            (classes3, classed3) => {
                cased_rest(block, m, leads, after_letter, classes2, classes3, classed3)
            }
        },
    }
}

/// [`wide_cased`] once the characters of two and three bytes are classed as they can be.
#[inline(always)]
fn cased_rest(
    block: &[u8; BLOCK],
    m: &mut Masks,
    leads: Leads,
    after_letter: bool,
    classes2: [u64; 5],
    classes3: [u64; 5],
    classed3: u64,
) {
    // Each class's leads' bits spread over their characters' bytes.
    let [mut up, mut lo, mut other, mut both, mut mark] =
        std::array::from_fn(|k| (classes2[k] * 0b11) | (classes3[k] * 0b111));
    let classed2 = classes2.iter().fold(0, |all, &c| all | c);
    let stopped3 = classed3 & !classes3.iter().fold(0, |all, &c| all | c);
    let mut end = match stopped3 {
        0 => BLOCK,
        s => s.trailing_zeros() as usize,
    };
    // The other characters before it one by one, up to the first it does not take: from
    // there on, nothing is classed.
    let mut rest = leads.from_c0
        & !(classed2 | classed3)
        & u64::MAX.checked_shr((BLOCK - end) as u32).unwrap_or(0);
    while rest != 0 {
        let p = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let (class, len) = class_multi(block, p, block[p]);
        let bits = ((1u64 << len) - 1) << p;
        let class = class & (UP | LO | M | N | WS | OTHER);
        match class {
            _ if p + len > BLOCK => {}
            UP => up |= bits,
            LO => lo |= bits,
            OTHER => other |= bits,
            _ if class == UP | LO => both |= bits,
            _ if class == UP | LO | M | OTHER => mark |= bits,
            _ => {
                end = p;
                break;
            }
        }
    }
    // The runs of marks right after a letter's last byte: the addition clears each run that
    // starts there (and carries past it).
    if mark != 0 {
        let letters = m.up | m.lo | up | lo | both;
        let after = prev(letters) | u64::from(after_letter);
        let joined = mark & !mark.wrapping_add(mark & after);
        let stray = mark & !joined;
        if stray != 0 {
            end = end.min(stray.trailing_zeros() as usize);
        }
        both |= joined;
    }
    let before = u64::MAX.checked_shr((BLOCK - end) as u32).unwrap_or(0);
    let both = both & before;
    let (up, lo, other) = (up & before, lo & before, other & before);
    m.up |= up | both;
    m.lo |= lo | both;
    m.hi &= !(up | lo | other | both);
    m.cont = (up | lo | other | both) & !leads.from_c0;
}

/// [`wide_cased`]'s `two` where characters of two bytes are not classed at once.
#[inline(always)]
pub(super) fn none_two(_: &[u8; BLOCK], _: u64) -> [u64; 5] {
    [0; 5]
}

/// [`wide_cased`]'s `three` where characters of three bytes are not classed at once.
#[inline(always)]
pub(super) fn none_three(_: &[u8; BLOCK], _: u64) -> ([u64; 5], u64) {
    ([0; 5], 0)
}

/// The characters whose leads are `leads` (each of a character that ends in the block): the
/// leads of the letters, and of the others. One at a time.
#[inline(always)]
pub(super) fn one_by_one(block: &[u8; BLOCK], mut leads: u64) -> (u64, u64) {
    let (mut letter, mut other) = (0u64, 0u64);
    while leads != 0 {
        let p = leads.trailing_zeros() as usize;
        leads &= leads - 1;
        let (class, _) = class_multi(block, p, block[p]);
        letter |= u64::from(class & L != 0) << p;
        other |= u64::from(class & OTHER != 0) << p;
    }
    (letter, other)
}

/// [`one_by_one`] for characters of three bytes, with AVX-512 VBMI, at every byte at once and
/// in the bytes' places (each lead's second and third bytes are moved to its place; no code
/// point is assembled). Two kinds of bit tables in registers class most characters: runs of
/// 64 code points that are all letters or all others (`WHOLE_RUNS`: the CJK ideographs,
/// Hangul, Yi), indexed by the code point's bits 6-15; and the `HOT` pages (Devanagari, Thai,
/// kana and CJK punctuation, full-width forms), indexed by a page's slot and bits 0-7. Only
/// the characters elsewhere are looked up one by one (there is no gather: it is slow).
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
pub(super) unsafe fn three_vbmi(block: &[u8; BLOCK], leads: u64) -> (u64, u64) {
    let ([letter, other], classed) = three_tables(block, leads, &WHOLE_RUNS, &HOT_PAGES);
    // The characters elsewhere, from the class table.
    let (l, o) = one_by_one(block, leads & !classed);
    (letter | l, other | o)
}

/// [`three_vbmi`]'s bit tables (the planes of `WHOLE_RUNS` and `HOT_PAGES`, or of o200k's
/// `WHOLE_RUNS_CASED` and `HOT_PAGES_CASED`): for each plane, the leads of `leads` in it; and
/// all the leads they class (the hot pages' numbers and whitespace too: these are in none).
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
pub(super) unsafe fn three_tables<const K: usize>(
    block: &[u8; BLOCK],
    leads: u64,
    runs: &[[u8; 128]; K],
    hot_pages: &[[u8; 128]; K],
) -> ([u64; K], u64) {
    use std::arch::x86_64::*;
    let p = block.as_ptr();
    let lead = _mm512_loadu_si512(p.cast());
    // No table holds the characters led by 0xE2 (U+2000 to U+2FFF: the quotes, dashes and
    // symbols of Latin, Greek and Cyrillic text), and blocks of such text rarely hold other
    // characters of three bytes: one by one, o200k_base German scanned ~5% faster (the
    // tables' cache lines are cold there).
    if leads & !_mm512_cmpeq_epi8_mask(lead, _mm512_set1_epi8(0xE2u8 as i8)) == 0 {
        return ([0; K], 0);
    }
    // At each byte, the one and the two after it (wrapping at the block's end, where no lead
    // of a character that ends in the block is). Measured: 3% faster scans of Japanese and
    // Hindi than two masked loads from bytes 1 and 2, and 17% faster on Arabic in `two_vbmi`.
    let next = _mm512_loadu_si512(NEXT_BYTE.as_ptr().cast());
    let second = _mm512_permutexvar_epi8(next, lead);
    let third = _mm512_permutexvar_epi8(next, second);
    let byte = |c: u8| _mm512_set1_epi8(c as i8);
    // 16-bit shifts: the bits they bring in from the neighbouring byte are masked, or are
    // above the 7 index bits a two-register byte permute reads.
    let pick = |mask: u8, a, b| _mm512_ternarylogic_epi32::<0xCA>(byte(mask), a, b);
    let lookup = |tables: &[[u8; 128]; K], at, bit| {
        let part = |t: &[u8; 128], k: usize| _mm512_loadu_si512(t[64 * k..].as_ptr().cast());
        tables.each_ref().map(|t| {
            let bits = _mm512_permutex2var_epi8(part(t, 0), at, part(t, 1));
            _mm512_test_epi8_mask(bits, bit)
        })
    };
    // The runs: bits 12-15 of the code point (the lead's low four) and 9-11 (the second
    // byte's bits 3-5) index the byte, bits 6-8 (its bits 0-2) the bit.
    let run_at = pick(
        0x78,
        _mm512_slli_epi16::<3>(lead),
        _mm512_srli_epi16::<3>(second),
    );
    let in_runs = lookup(runs, run_at, bit_of_low3(second));
    // The page (bits 8-15): the lead's low four bits and the second byte's bits 2-5.
    let page = pick(
        0xF0,
        _mm512_slli_epi16::<4>(lead),
        _mm512_srli_epi16::<2>(second),
    );
    let hot = HOT
        .iter()
        .fold(0, |hot, &h| hot | _mm512_cmpeq_epi8_mask(page, byte(h)));
    // The page's slot (its two low bits) above bits 3-7 of the code point (the second byte's
    // bits 0-1 and the third's 3-5); bits 0-2 (the third byte's) pick the bit.
    let hot_at = pick(
        0x1F,
        pick(
            0x18,
            _mm512_slli_epi16::<3>(second),
            _mm512_srli_epi16::<3>(third),
        ),
        _mm512_slli_epi16::<5>(page),
    );
    let in_hot = lookup(hot_pages, hot_at, bit_of_low3(third));
    let planes: [u64; K] = std::array::from_fn(|k| (in_runs[k] | (in_hot[k] & hot)) & leads);
    let classed = planes.iter().fold(hot & leads, |all, &p| all | p);
    (planes, classed)
}

/// For each byte of `v`, the byte with bit `v & 7` set: the bit of a bit table's byte to
/// test (`two_vbmi`, `three_vbmi`).
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn bit_of_low3(v: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::*;
    _mm512_shuffle_epi8(
        _mm512_set1_epi64(0x8040_2010_0804_0201u64 as i64),
        _mm512_and_si512(v, _mm512_set1_epi8(7)),
    )
}

/// Characters of two bytes (U+0080 to U+07FF: Latin, Greek, Cyrillic, Armenian, Hebrew,
/// Arabic...) classed by bit tables of 256 bytes (`TWO_BYTE`, `TWO_BYTE_CASED`), with AVX-512
/// VBMI, all 64 bytes at once and without a branch: at each byte, the code point's bits 3-10
/// from it and the next byte index each table (four registers: two two-register byte permutes
/// and a blend), and its bits 0-2 pick the bit. Returns, for each table, the leads of `leads`
/// whose bit is set. One at a time (the way without VBMI), Russian took 110 ns a block to
/// classify, two thirds of cl100k_base's scan; this way 13.
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
pub(super) unsafe fn two_vbmi<const K: usize>(
    block: &[u8; BLOCK],
    leads: u64,
    tables: &[[u8; 256]; K],
) -> [u64; K] {
    use std::arch::x86_64::*;
    let v = _mm512_loadu_si512(block.as_ptr().cast());
    // Byte k + 1 at k (byte 0 at 63, which is no lead: its character would not end here).
    let next = _mm512_permutexvar_epi8(_mm512_loadu_si512(NEXT_BYTE.as_ptr().cast()), v);
    let byte = |c: u8| _mm512_set1_epi8(c as i8);
    // Bits 3-10 of the code point: the lead's low five bits above the next byte's bits 3-5
    // (16-bit shifts; the bits they bring in from the neighbouring byte are masked).
    let at = _mm512_or_si512(
        _mm512_and_si512(_mm512_slli_epi16::<3>(v), byte(0xF8)),
        _mm512_and_si512(_mm512_srli_epi16::<3>(next), byte(0x07)),
    );
    let bit = bit_of_low3(next);
    let upper = _mm512_movepi8_mask(at);
    tables.map(|t| {
        let part = |k: usize| _mm512_loadu_si512(t[64 * k..].as_ptr().cast());
        let low = _mm512_permutex2var_epi8(part(0), at, part(1));
        let high = _mm512_permutex2var_epi8(part(2), at, part(3));
        _mm512_test_epi8_mask(_mm512_mask_blend_epi8(upper, low, high), bit) & leads
    })
}

/// `k + 1` at byte `k`, wrapping: the index that moves each byte to the place before it.
#[cfg(target_arch = "x86_64")]
static NEXT_BYTE: [u8; BLOCK] = {
    let mut t = [0u8; BLOCK];
    let mut k = 0;
    while k < BLOCK {
        t[k] = ((k + 1) % BLOCK) as u8;
        k += 1;
    }
    t
};

/// [`wide`] with AVX-512, characters of two and three bytes one by one.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
#[inline]
pub(super) unsafe fn wide_avx512(block: &[u8; BLOCK], m: &mut Masks) {
    wide(block, m, leads_avx512(block), one_by_one, one_by_one);
}

/// [`wide`] with AVX-512 VBMI: characters of two bytes by [`two_vbmi`], of three by
/// [`three_vbmi`]. Not compiled for those features itself but always inlined, into the copies
/// of the scanner compiled for them ([`Avx512Vbmi`](super::isa::Avx512Vbmi)), so that
/// `two_vbmi` and `three_vbmi` are inlined there too.
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn wide_vbmi(block: &[u8; BLOCK], m: &mut Masks) {
    wide(
        block,
        m,
        leads_avx512(block),
        // SAFETY: the caller's promise.
        |block, leads| {
            let [letter, other] = unsafe { two_vbmi(block, leads, &TWO_BYTE) };
            (letter, other)
        },
        // SAFETY: the caller's promise.
        |block, leads| unsafe { three_vbmi(block, leads) },
    );
}

/// [`wide_cased`] with AVX-512, characters of two and three bytes not classed at once.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) unsafe fn wide_cased_avx512(block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
    wide_cased(
        block,
        m,
        leads_avx512(block),
        after_letter,
        none_two,
        none_three,
    );
}

/// [`wide_cased`] with AVX-512 VBMI: characters of two bytes by [`two_vbmi`], of three by
/// [`three_tables`]; always inlined, as [`wide_vbmi`] is.
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn wide_cased_vbmi(block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
    // The classes from the planes' codes (see `classes::planes`).
    let classes = |[p0, p1, p2]: [u64; 3]| [p0 & !p1 & !p2, p1 & !p0, p2 & !p0, p0 & p1, p0 & p2];
    wide_cased(
        block,
        m,
        leads_avx512(block),
        after_letter,
        // SAFETY: the caller's promise.
        |block, leads| classes(unsafe { two_vbmi(block, leads, &TWO_BYTE_CASED) }),
        |block, leads| {
            // SAFETY: the caller's promise.
            let (planes, classed) =
                unsafe { three_tables(block, leads, &WHOLE_RUNS_CASED, &HOT_PAGES_CASED) };
            (classes(planes), classed)
        },
    );
}

/// `starts` with each start that is the lead byte of a character of `m` spread over all of
/// its bytes (`m.cont`, from [`wide`]): bit `k` set iff the character holding byte `k` starts
/// a chunk.
#[inline(always)]
pub(super) fn whole_chars(starts: u64, m: &Masks) -> u64 {
    let mut f = starts;
    f |= (f << 1) & m.cont;
    f |= (f << 1) & m.cont;
    f | (f << 1) & m.cont
}

/// If the chunk that starts `at` bytes into the block (masks `m`) is a run of `letters`, from
/// `at` or after one character whose first byte is in `prefix`: where its letters start.
#[inline(always)]
pub(super) fn letter_run_at(m: &Masks, letters: u64, at: u32, prefix: u64) -> Option<u32> {
    let letter = letters >> at;
    if letter & 1 != 0 {
        return Some(at);
    }
    // The prefix's bytes: its lead and the continuation bytes after it.
    let len = (!m.cont.checked_shr(at + 1).unwrap_or(0)).trailing_zeros() + 1;
    let after = letter.checked_shr(len).unwrap_or(0);
    (prefix >> at & after & 1 != 0).then_some(at + len)
}

/// Whether the first 16 bytes of `block` are ASCII: a cheap test before building the masks,
/// which text in other scripts fails at once.
#[inline(always)]
pub(super) fn ascii_head(block: &[u8; BLOCK]) -> bool {
    let head = block.first_chunk::<16>().copied().unwrap_or_default();
    u128::from_le_bytes(head) & 0x8080_8080_8080_8080_8080_8080_8080_8080 == 0
}

/// Whether the first 16 bytes of `block` are ones [`wide_cased`] classes at once: the test
/// its blocks must pass. Bytes from 0xF0 up lead the characters of four bytes (emoji, rare
/// ideographs), which it classes one by one; so does it those of three bytes (Indic, Thai,
/// CJK, Hangul: leads 0xE0 to 0xEF) unless `three_at_once`: o200k Japanese went from 70 to
/// 87 ns a chunk when they tried the block path every 16 bytes one by one. Then only 0xE2
/// passes of those, which leads the quotes, dashes and symbols of Latin, Greek and Cyrillic
/// text. (Hebrew and Arabic, of two bytes, pass since their `Lo` letters are classed.)
#[inline(always)]
pub(super) fn cased_head(block: &[u8; BLOCK], three_at_once: bool) -> bool {
    const ONES: u128 = u128::MAX / 0xFF;
    const HI: u128 = ONES * 0x80;
    const LOW7: u128 = ONES * 0x7F;
    let w = u128::from_le_bytes(block.first_chunk::<16>().copied().unwrap_or_default());
    // Bytes >= 0xF0, or >= 0xE0: the high bit, and the low seven bits >= 0x70 or 0x60 (no
    // sum carries out of its byte: at most 0x7F + 0x20).
    let from = |c: u8| ((w & LOW7) + ONES * u128::from(0x80 - (c & 0x7F))) & w & HI;
    if three_at_once {
        return from(0xF0) == 0;
    }
    // Bytes that are 0xE2: not non-zero after the XOR.
    let x = w ^ (ONES * 0xE2);
    let e2 = !(((x & LOW7) + LOW7) | x) & HI;
    from(0xE0) & !e2 == 0
}

/// Bit `k` set iff byte `k - 1` is in `set` (the class of the previous byte; nothing before
/// byte 0, which is a chunk start).
#[inline(always)]
pub(super) fn prev(set: u64) -> u64 {
    set << 1
}

/// The limit every scanner's block shares: rules look up to three bytes ahead (so nothing past
/// byte 60), a whitespace run that reaches the block's end may go on, and a byte >= 0x80 may be
/// a letter, number, mark or whitespace that changes the chunks around it (so nothing within
/// four bytes before it, or in the whitespace run that reaches it).
#[inline(always)]
pub(super) fn common_limit(m: &Masks, ws: u64) -> u32 {
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
pub(super) fn after_line_ends(m: &Masks, ws: u64, limit: u32) -> (u64, u32) {
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
pub(super) fn digit_groups(digit: u64) -> u64 {
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
pub(super) fn contractions(
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
pub(super) fn run_start(set: u64, k: u32) -> u32 {
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
    use super::super::classes::class_of;
    use super::*;

    #[test]
    fn masks_agree_with_the_class_table() {
        // Every byte value at every position (the other positions hold varied bytes).
        for c in 0..=255u8 {
            for pos in [0usize, 1, 15, 16, 17, 31, 32, 47, 48, 63] {
                let mut block = [0u8; BLOCK];
                for (k, x) in block.iter_mut().enumerate() {
                    *x = (k as u8).wrapping_mul(37).wrapping_add(c);
                }
                block[pos] = c;
                let m = swar(&block);
                #[cfg(target_arch = "x86_64")]
                {
                    assert_eq!(sse2(&block), m, "byte {c:#x} at {pos}");
                    if std::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2.
                        assert_eq!(unsafe { avx2(&block) }, m, "byte {c:#x} at {pos}");
                    }
                    if std::is_x86_feature_detected!("avx512bw") {
                        // SAFETY: the CPU has AVX-512BW.
                        assert_eq!(unsafe { avx512(&block) }, m, "byte {c:#x} at {pos}");
                    }
                }
                let bit = |mask: u64| mask >> pos & 1 == 1;
                let cls = if c < 0x80 { ascii_class(c) } else { 0 };
                assert_eq!(bit(m.hi), c >= 0x80);
                assert_eq!(bit(m.up), cls & UP != 0 && cls & L != 0, "{c:#x}");
                assert_eq!(bit(m.lo), cls & LO != 0 && cls & L != 0, "{c:#x}");
                assert_eq!(bit(m.digit), cls & N != 0, "{c:#x}");
                assert_eq!(bit(m.nl), cls & CRLF != 0, "{c:#x}");
                assert_eq!(bit(m.space), c == b' ');
                assert_eq!(
                    bit(m.tab),
                    cls & WS != 0 && cls & CRLF == 0 && c != b' ',
                    "{c:#x}"
                );
                assert_eq!(bit(m.apos), c == b'\'');
                assert_eq!(bit(m.slash), c == b'/');
                let other = cls & (L | N | WS) == 0 && c < 0x80;
                assert_eq!(bit(m.other()), other, "{c:#x}");
            }
        }
    }

    /// The lead masks of every instruction set are the bytes' ranges, for every byte value at
    /// every position.
    #[test]
    fn leads_are_the_lead_bytes() {
        for c in 0..=255u8 {
            for pos in [0usize, 1, 7, 8, 31, 56, 63] {
                let mut block = [0u8; BLOCK];
                for (k, x) in block.iter_mut().enumerate() {
                    *x = (k as u8).wrapping_mul(73).wrapping_add(c);
                }
                block[pos] = c;
                let from = |lo: u8| {
                    (0..BLOCK)
                        .filter(|&k| block[k] >= lo)
                        .map(|k| 1u64 << k)
                        .sum()
                };
                let want = Leads {
                    from_c0: from(0xC0),
                    from_e0: from(0xE0),
                    from_f0: from(0xF0),
                };
                assert_eq!(leads_swar(&block), want, "byte {c:#x} at {pos}");
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx512bw") {
                    // SAFETY: the CPU has AVX-512F and BW.
                    assert_eq!(
                        unsafe { leads_avx512(&block) },
                        want,
                        "byte {c:#x} at {pos}"
                    );
                }
            }
        }
    }

    /// The two ways of classifying characters of three bytes agree, on blocks of random
    /// three-byte characters (every block from U+0800 to U+FFFF, surrogates aside) mixed with
    /// ASCII, each lead checked against the class table.
    #[test]
    fn three_byte_classes_agree() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..20_000 {
            let mut text = String::new();
            // The edges of runs of letters (the CJK ideographs, Yi, Hangul) and of the hot
            // pages among them.
            let edges = [
                0x4DFF, 0x4E00, 0x9FFF, 0xA000, 0xA47F, 0xA480, 0xA48C, 0xA48D, 0xABFF, 0xAC00,
                0xD7A3, 0xD7A4, 0x08FF, 0x0900, 0x0905, 0x093E, 0x0966, 0x09FF, 0x0A00, 0x0E01,
                0x0E31, 0x0E50, 0x0EFF, 0x2FFF, 0x3000, 0x3001, 0x3007, 0x30FB, 0x30FF, 0x3100,
                0x2500, 0x257F, 0xFEFF, 0xFF00, 0xFF0C, 0xFF10, 0xFF21, 0xFFFD, 0xFFFF,
            ];
            while text.len() < BLOCK {
                let r = next();
                let cp = match r % 8 {
                    0 => u32::from(b'a' + (r >> 8) as u8 % 26),
                    // One round in four, only those led by 0xE2 (U+2000 to U+2FFF).
                    _ if round % 4 == 0 => 0x2000 + (r >> 8) as u32 % 0x1000,
                    1 => edges[(r >> 8) as usize % edges.len()],
                    2 | 3 => {
                        (u32::from(HOT[(r >> 8) as usize % 4]) << 8) | ((r >> 16) as u32 % 0x100)
                    }
                    _ => 0x800 + (r >> 8) as u32 % 0xF800,
                };
                text.extend(char::from_u32(cp));
            }
            let block: [u8; BLOCK] = text.as_bytes()[..BLOCK].try_into().unwrap();
            let leads = leads_swar(&block);
            let three = leads.from_e0 & !leads.from_f0 & (u64::MAX >> 2);
            let (letter, other) = one_by_one(&block, three);
            for p in (0..BLOCK).filter(|&p| three >> p & 1 == 1) {
                let cp = std::str::from_utf8(&block[p..p + 3])
                    .unwrap()
                    .chars()
                    .next()
                    .unwrap();
                let class = class_of(cp as u32);
                assert_eq!(letter >> p & 1 == 1, class & L != 0, "{cp:?}");
                assert_eq!(other >> p & 1 == 1, class & OTHER != 0, "{cp:?}");
            }
            assert_eq!((letter | other) & !three, 0);
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512vbmi") {
                // SAFETY: the CPU has AVX-512F, BW and VBMI.
                assert_eq!(
                    unsafe { three_vbmi(&block, three) },
                    (letter, other),
                    "{text:?}"
                );
                // The tables class every character of a hot page or of a run of letters or
                // of others, and right; none if all are led by 0xE2.
                // SAFETY: as above.
                let ([l, o], classed) =
                    unsafe { three_tables(&block, three, &WHOLE_RUNS, &HOT_PAGES) };
                assert_eq!((l | o) & !classed, 0);
                assert_eq!((l & !letter, o & !other), (0, 0), "{text:?}");
                for p in (0..BLOCK).filter(|&p| three >> p & 1 == 1) {
                    let cp = std::str::from_utf8(&block[p..p + 3])
                        .unwrap()
                        .chars()
                        .next();
                    let cp = cp.unwrap() as u32;
                    let run =
                        (cp >> 6 << 6..(cp >> 6 << 6) + 64).map(|c| class_of(c) & (L | OTHER));
                    let whole = run.clone().all(|c| c == L) || run.clone().all(|c| c == OTHER);
                    let hot = HOT.contains(&((cp >> 8) as u8));
                    let only_e2 = (0..BLOCK).all(|q| three >> q & 1 == 0 || block[q] == 0xE2);
                    assert_eq!(classed >> p & 1 == 1, (whole || hot) && !only_e2, "{cp:#x}");
                    if classed >> p & 1 == 1 {
                        assert_eq!(l >> p & 1, letter >> p & 1, "{cp:#x}");
                        assert_eq!(o >> p & 1, other >> p & 1, "{cp:#x}");
                    }
                }
            }
        }
    }

    /// The two ways of classifying characters of two bytes agree with the class table, and
    /// so does `two_vbmi` with o200k's tables, on blocks of every code point from U+0080 to
    /// U+07FF in turn among ASCII and three-byte characters (so the leads fall on odd and
    /// even bytes, and on byte 62).
    #[test]
    fn two_byte_classes_agree() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut cps = (0x80..0x800u32).cycle();
        let mut seen = 0u64;
        for _ in 0..4_000 {
            let mut text = String::new();
            while text.len() < BLOCK {
                let r = next();
                let cp = match r % 8 {
                    0 => u32::from(b'a' + (r >> 8) as u8 % 26),
                    1 => 0x3001,
                    _ => cps.next().unwrap_or(0x80),
                };
                text.extend(char::from_u32(cp));
            }
            let block: [u8; BLOCK] = text.as_bytes()[..BLOCK].try_into().unwrap();
            let leads = leads_swar(&block);
            let two = leads.of_two();
            let (letter, other) = one_by_one(&block, two);
            // o200k's planes: only upper-ish, `Lm`/`Lo` or marks; only lower-ish or
            // `Lm`/`Lo`; others but marks, or marks.
            let mut cased = [0u64; 3];
            for p in (0..BLOCK).filter(|&p| two >> p & 1 == 1) {
                let cp = u32::from(block[p] & 0x1F) << 6 | u32::from(block[p + 1] & 0x3F);
                let class = class_of(cp);
                assert_eq!(letter >> p & 1 == 1, class & L != 0, "{cp:#x}");
                assert_eq!(other >> p & 1 == 1, class & OTHER != 0, "{cp:#x}");
                let (mark, both) = (UP | LO | M | OTHER, UP | LO);
                let planes = [[UP, both, mark], [LO, both, 0xFF], [OTHER, mark, 0xFF]];
                for (k, kinds) in planes.into_iter().enumerate() {
                    if kinds.contains(&(class & (UP | LO | M | N | WS | OTHER))) {
                        cased[k] |= 1 << p;
                    }
                }
            }
            assert_eq!((letter | other) & !two, 0);
            seen |= two;
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512vbmi") {
                // SAFETY: the CPU has AVX-512F, BW and VBMI.
                let [l, o] = unsafe { two_vbmi(&block, two, &TWO_BYTE) };
                assert_eq!((l, o), (letter, other), "{text:?}");
                // SAFETY: as above.
                let got = unsafe { two_vbmi(&block, two, &TWO_BYTE_CASED) };
                assert_eq!(got, cased, "{text:?}");
            }
        }
        assert_eq!(
            seen,
            u64::MAX >> 1,
            "a lead at every place that can hold one"
        );
    }

    /// `cased_head` on every byte value at every place of the head.
    #[test]
    fn cased_head_is_its_bytes() {
        for c in 0..=255u8 {
            for pos in 0..20 {
                let mut block = [b'a'; BLOCK];
                block[pos] = c;
                let want = pos >= 16 || c < 0xE0 || c == 0xE2;
                assert_eq!(cased_head(&block, false), want, "byte {c:#x} at {pos}");
                let want = pos >= 16 || c < 0xF0;
                assert_eq!(cased_head(&block, true), want, "byte {c:#x} at {pos}");
            }
        }
    }

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
