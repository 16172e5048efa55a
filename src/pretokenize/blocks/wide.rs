//! The characters of two to four bytes of a block, classified into its [`Masks`] for the
//! scanners whose block path takes them (`Scanner::WIDE`): [`wide`] as letters or others (gpt2,
//! cl100k), [`wide_cased`] by case (o200k). Each takes classifiers for the characters of two and
//! of three bytes (one at a time from the class table here, all at once in [`super::vbmi`]);
//! those of four bytes are read one by one.

use super::rules::prev;
use super::{Masks, BLOCK};
use crate::pretokenize::classes::class_multi;
use crate::pretokenize::tables::{L, LO, M, N, OTHER, UP, WS};

/// The lead bytes of a block's characters of more than one byte, by the least length they
/// start: bytes >= 0xC0, >= 0xE0 (three or four bytes), >= 0xF0 (four). Only [`wide`] needs
/// them, so they are not among the [`Masks`] every block computes, where three more compares
/// would slow the scan of ASCII text (docs/performance.md, 'Scanners').
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
pub(crate) fn leads_swar(block: &[u8; BLOCK]) -> Leads {
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
pub(crate) unsafe fn leads_avx512(block: &[u8; BLOCK]) -> Leads {
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
/// character that does not end in the block, stays in `hi` and limits the block, as any
/// unclassified byte does.
/// So Japanese, Russian or Hindi take the block path as English does: their chunk starts
/// come from the masks, without a mispredicted branch at each chunk's end.
///
/// `two` and `three` classify the characters of two and of three bytes whose leads they are
/// given, returning the leads of the letters and of the others (see [`one_by_one`]); those of
/// four bytes are read one by one (`class_multi`).
#[inline(always)]
pub(crate) fn wide(
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
pub(crate) fn wide_cased(
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
pub(crate) fn none_two(_: &[u8; BLOCK], _: u64) -> [u64; 5] {
    [0; 5]
}

/// [`wide_cased`]'s `three` where characters of three bytes are not classed at once.
#[inline(always)]
pub(crate) fn none_three(_: &[u8; BLOCK], _: u64) -> ([u64; 5], u64) {
    ([0; 5], 0)
}

/// The characters whose leads are `leads` (each of a character that ends in the block): the
/// leads of the letters, and of the others. One at a time.
#[inline(always)]
pub(crate) fn one_by_one(block: &[u8; BLOCK], mut leads: u64) -> (u64, u64) {
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

/// [`wide`] with AVX-512, characters of two and three bytes one by one.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
#[inline]
pub(crate) unsafe fn wide_avx512(block: &[u8; BLOCK], m: &mut Masks) {
    wide(block, m, leads_avx512(block), one_by_one, one_by_one);
}

/// [`wide_cased`] with AVX-512, characters of two and three bytes not classed at once.
///
/// # Safety
/// The CPU has AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn wide_cased_avx512(block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
    wide_cased(
        block,
        m,
        leads_avx512(block),
        after_letter,
        none_two,
        none_three,
    );
}

/// Whether the first 16 bytes of `block` are ones [`wide_cased`] classes at once: the test
/// its blocks must pass. Bytes from 0xF0 up lead the characters of four bytes (emoji, rare
/// ideographs), which it classes one by one; so does it those of three bytes (Indic, Thai,
/// CJK, Hangul: leads 0xE0 to 0xEF) unless `three_at_once`, and such text is scanned faster per
/// character than by blocks that class them one by one (docs/performance.md, 'Scanners'). Then
/// only 0xE2 passes of those, which leads the quotes, dashes and symbols of Latin, Greek and
/// Cyrillic text. (Hebrew and Arabic, of two bytes, pass since their `Lo` letters are classed.)
#[inline(always)]
pub(crate) fn cased_head(block: &[u8; BLOCK], three_at_once: bool) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
