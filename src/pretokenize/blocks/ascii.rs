//! The ASCII classes of a block's bytes ([`Masks`]): letters by case, digits, spaces, tabs,
//! line ends, the apostrophe and the slash, and the bytes of 0x80 and up (`hi`), left to
//! [`wide`](super::wide). On x86_64 they come from AVX-512BW (one 64-byte register), AVX2 (two
//! 32-byte halves) or SSE2 (part of the x86_64 baseline), elsewhere from the class table one
//! byte at a time.

use super::{Masks, BLOCK};
#[cfg_attr(target_arch = "x86_64", allow(unused_imports))]
use crate::pretokenize::classes::ascii_class;
use crate::pretokenize::tables::{CRLF, L, N, UP, WS};

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
pub(crate) fn sse2(block: &[u8; BLOCK]) -> Masks {
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

/// The masks 32 bytes at a time, in half the instructions of [`sse2`] (docs/performance.md,
/// 'Scanners').
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn avx2(block: &[u8; BLOCK]) -> Masks {
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
pub(crate) unsafe fn avx512(block: &[u8; BLOCK]) -> Masks {
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
pub(crate) unsafe fn padded_avx512(rest: &[u8], pad: u8) -> [u8; BLOCK] {
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
pub(crate) fn swar(block: &[u8; BLOCK]) -> Masks {
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

/// Whether the first 16 bytes of `block` are ASCII: a cheap test before building the masks,
/// which text in other scripts fails at once.
#[inline(always)]
pub(crate) fn ascii_head(block: &[u8; BLOCK]) -> bool {
    let head = block.first_chunk::<16>().copied().unwrap_or_default();
    u128::from_le_bytes(head) & 0x8080_8080_8080_8080_8080_8080_8080_8080 == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::tables::LO;

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
}
