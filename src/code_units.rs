//! UTF-8 from code points stored one per unit of 1, 2 or 4 bytes: how CPython keeps the text
//! of a `str` (its Latin-1, UCS-2 and UCS-4 kinds).
//!
//! The Python bindings use it to read a long `str` that is not all ASCII without asking
//! CPython for its UTF-8 (`py/text.rs` says why). With AVX-512 VBMI2, 16 units at a time of
//! any lengths (`simd`); elsewhere runs of ASCII are narrowed 16 units at a time and the rest
//! go one by one, each unit's bytes built without a branch on their length (`utf8_word`).
//!
//! Measured from Python (cl100k_base `encode_to_numpy` on a fresh equal `str` less on the same
//! one, best of 30), ns a character: Japanese 4.1 -> 0.43 (scalar 2-3.5), Russian 4.5 -> 0.4
//! (scalar 3.7), Hindi 6.1 -> 0.42 (scalar 3.4), Holmes (2-byte units, mostly ASCII) 0.26 ->
//! 0.20. Before, converting took as long as encoding for Russian and Hindi.

use std::mem::MaybeUninit;

/// A code unit of one of CPython's kinds.
pub trait CodeUnit: Copy + Into<u32> {
    /// The most UTF-8 bytes one unit of this kind can need.
    const MOST_BYTES: usize;
}

impl CodeUnit for u8 {
    const MOST_BYTES: usize = 2;
}

impl CodeUnit for u16 {
    const MOST_BYTES: usize = 3;
}

impl CodeUnit for u32 {
    const MOST_BYTES: usize = 4;
}

/// The room [`to_utf8`] needs for `units` units of kind `T`.
pub fn utf8_room<T: CodeUnit>(units: usize) -> usize {
    units.saturating_mul(T::MOST_BYTES)
}

/// Writes `units` as UTF-8 to the front of `out` and returns how many bytes that took, or
/// `None` if a unit is a surrogate (U+D800..U+DFFF) or above U+10FFFF: code points UTF-8
/// cannot hold, which the caller must leave to whoever reports them. `out` may be memory never
/// written; the bytes before the returned count are written.
///
/// # Panics
/// If `out` has less than [`utf8_room`] bytes for `units`.
pub fn to_utf8<T: CodeUnit>(units: &[T], out: &mut [MaybeUninit<u8>]) -> Option<usize> {
    assert!(out.len() >= utf8_room::<T>(units.len()));
    #[cfg(target_arch = "x86_64")]
    if simd::available() {
        // SAFETY: the CPU has the features `to_utf8_avx512` is compiled for.
        let (i, n) = unsafe { simd::to_utf8_avx512(units, out) }?;
        return to_utf8_scalar(units, out, i, n);
    }
    to_utf8_scalar(units, out, 0, 0)
}

/// [`to_utf8`] of `units[i..]` written from `out[n]`, where the first `n` bytes hold the
/// UTF-8 of `units[..i]` (so `out` has room for the rest).
fn to_utf8_scalar<T: CodeUnit>(
    units: &[T],
    out: &mut [MaybeUninit<u8>],
    mut i: usize,
    mut n: usize,
) -> Option<usize> {
    const RUN: usize = 16;
    while i < units.len() {
        if let Some(run) = units.get(i..i + RUN) {
            let run: &[T; RUN] = run.try_into().unwrap_or_else(|_| unreachable!());
            if run.iter().fold(0u32, |a, &u| a | u.into()) < 0x80 {
                // `n + RUN <= out.len()`: every unit left has at least a byte of room.
                let dst: &mut [MaybeUninit<u8>; RUN] = (&mut out[n..n + RUN])
                    .try_into()
                    .unwrap_or_else(|_| unreachable!());
                for (d, &u) in dst.iter_mut().zip(run) {
                    d.write(u.into() as u8);
                }
                n += RUN;
                i += RUN;
                continue;
            }
        }
        // One unit at a time until the next run of ASCII (or the end): its bytes written as
        // one four-byte word while four bytes of room are left (all but the last unit or so),
        // with no branch on its length.
        let end = (i + RUN).min(units.len());
        for &u in &units[i..end] {
            let (word, len) = utf8_word(u.into())?;
            let bytes = word.to_le_bytes();
            match out.get_mut(n..n + 4) {
                // SAFETY: the four bytes are `out`'s (just checked).
                Some(dst) => unsafe { dst.as_mut_ptr().cast::<[u8; 4]>().write_unaligned(bytes) },
                None => {
                    for (d, b) in out[n..n + len].iter_mut().zip(bytes) {
                        d.write(b);
                    }
                }
            }
            n += len;
        }
        i = end;
    }
    Some(n)
}

/// The UTF-8 of code point `c` in a word, its first byte lowest, and its length; `None` for a
/// surrogate or a value past U+10FFFF. No branch on the length: the lead byte is the length's
/// prefix over the code point's top bits, and the continuation bytes are the last `len - 1`
/// of the three a four-byte character has.
#[inline(always)]
fn utf8_word(c: u32) -> Option<(u32, usize)> {
    if c.wrapping_sub(0xD800) < 0x800 || c > 0x10FFFF {
        return None;
    }
    let len = 1 + u32::from(c >= 0x80) + u32::from(c >= 0x800) + u32::from(c >= 0x10000);
    let cont = |shift: u32| 0x80 | (c >> shift) & 0x3F;
    // The three continuation bytes in the order they are written.
    let conts = cont(12) | cont(6) << 8 | cont(0) << 16;
    let lead = (0xF0E0_C000_u32 >> (8 * len - 8)) & 0xFF | c >> (6 * len - 6);
    Some((lead | (conts >> (32 - 8 * len)) << 8, len as usize))
}

#[cfg(target_arch = "x86_64")]
mod simd {
    use super::CodeUnit;
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// Whether the CPU has what [`to_utf8_avx512`] is compiled for.
    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi2")
            && std::is_x86_feature_detected!("popcnt")
    }

    /// The 16 units from `p`, each widened to a 32-bit lane.
    ///
    /// # Safety
    /// 16 units can be read from `p`; the CPU has AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn lanes<T: CodeUnit>(p: *const T) -> __m512i {
        // SAFETY: the caller's; the loads are unaligned.
        unsafe {
            match std::mem::size_of::<T>() {
                1 => _mm512_cvtepu8_epi32(_mm_loadu_si128(p.cast())),
                2 => _mm512_cvtepu16_epi32(_mm256_loadu_si256(p.cast())),
                _ => _mm512_loadu_si512(p.cast()),
            }
        }
    }

    /// UTF-8 of the front of `units`, 16 units at a time, into the front of `out`, which has
    /// [`super::utf8_room`] for all of them. Returns how many units it did and how many bytes
    /// they took, for [`super::to_utf8_scalar`] to finish; `None` if a unit is a surrogate or
    /// past U+10FFFF.
    ///
    /// Each unit's bytes are built in its 32-bit lane, first byte lowest (as `utf8_word`
    /// does), a byte mask keeps each lane's first `len` bytes, and VPCOMPRESSB packs them; the
    /// 64-byte store reaches past them, into room the next block overwrites. A block of ASCII
    /// is narrowed to 16 bytes.
    ///
    /// # Safety
    /// The CPU has the features below.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
    pub(super) unsafe fn to_utf8_avx512<T: CodeUnit>(
        units: &[T],
        out: &mut [MaybeUninit<u8>],
    ) -> Option<(usize, usize)> {
        const LANES: usize = 16;
        let set = _mm512_set1_epi32;
        let cont = |x: __m512i| _mm512_or_si512(_mm512_and_si512(x, set(0x3F)), set(0x80));
        let or3 = |a, b, c| _mm512_or_si512(_mm512_or_si512(a, b), c);
        let (mut i, mut n) = (0, 0);
        while i + LANES <= units.len() && n + 64 <= out.len() {
            // SAFETY: `i + 16 <= units.len()`, and the CPU has AVX-512F.
            let c = unsafe { lanes(units.as_ptr().add(i)) };
            // The stores below write at most 64 bytes from here: `n + 64 <= out.len()`.
            let to = out[n..].as_mut_ptr();
            let ge80 = _mm512_cmpge_epu32_mask(c, set(0x80));
            if ge80 == 0 {
                // SAFETY: 16 bytes from `to` are `out`'s.
                unsafe { _mm_storeu_si128(to.cast(), _mm512_cvtepi32_epi8(c)) };
                (i, n) = (i + LANES, n + LANES);
                continue;
            }
            let c0 = cont(c);
            let two = or3(
                _mm512_srli_epi32::<6>(c),
                set(0xC0),
                _mm512_slli_epi32::<8>(c0),
            );
            let mut word = _mm512_mask_mov_epi32(c, ge80, two);
            let mut keep = _mm512_mask_mov_epi32(set(0xFF), ge80, set(0xFFFF));
            if T::MOST_BYTES >= 3 {
                let surrogate = _mm512_cmpeq_epi32_mask(
                    _mm512_and_si512(c, set(0xFFFF_F800_u32 as i32)),
                    set(0xD800),
                );
                if surrogate | _mm512_cmpgt_epu32_mask(c, set(0x10FFFF)) != 0 {
                    return None;
                }
                let c1 = cont(_mm512_srli_epi32::<6>(c));
                let ge800 = _mm512_cmpge_epu32_mask(c, set(0x800));
                let three = or3(
                    _mm512_srli_epi32::<12>(c),
                    set(0xE0),
                    _mm512_or_si512(_mm512_slli_epi32::<8>(c1), _mm512_slli_epi32::<16>(c0)),
                );
                word = _mm512_mask_mov_epi32(word, ge800, three);
                keep = _mm512_mask_mov_epi32(keep, ge800, set(0xFF_FFFF));
                if T::MOST_BYTES >= 4 {
                    let ge10000 = _mm512_cmpge_epu32_mask(c, set(0x10000));
                    let c2 = cont(_mm512_srli_epi32::<12>(c));
                    let four = or3(
                        _mm512_or_si512(_mm512_srli_epi32::<18>(c), set(0xF0)),
                        _mm512_slli_epi32::<8>(c2),
                        _mm512_or_si512(_mm512_slli_epi32::<16>(c1), _mm512_slli_epi32::<24>(c0)),
                    );
                    word = _mm512_mask_mov_epi32(word, ge10000, four);
                    keep = _mm512_mask_mov_epi32(keep, ge10000, set(-1));
                }
            }
            let kept = _mm512_movepi8_mask(keep);
            let packed = _mm512_maskz_compress_epi8(kept, word);
            // SAFETY: 64 bytes from `to` are `out`'s.
            unsafe { _mm512_storeu_si512(to.cast(), packed) };
            (i, n) = (i + LANES, n + kept.count_ones() as usize);
        }
        Some((i, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_utf8` of `units`, checked against the standard library's encoding of the same code
    /// points (`None` when one is not a `char`).
    /// `to_utf8` of `units`, checked against the standard library's encoding of the same code
    /// points (`None` when one is not a `char`), and so the scalar way alone (the only way on
    /// a CPU without AVX-512 VBMI2).
    fn check<T: CodeUnit>(units: &[T]) {
        let want: Option<String> = units.iter().map(|&u| char::from_u32(u.into())).collect();
        let want = want.map(String::into_bytes);
        let scalar = |u: &[T], o: &mut [MaybeUninit<u8>]| to_utf8_scalar(u, o, 0, 0);
        for (way, convert) in [
            ("to_utf8", to_utf8 as fn(&[T], &mut _) -> _),
            ("scalar", scalar),
        ] {
            // Room exactly as asked, and no more: the worst case must fit.
            let mut out = vec![MaybeUninit::new(0xAA); utf8_room::<T>(units.len())];
            // SAFETY: every byte of `out` was written (0xAA, or by `convert` before `n`).
            let got = convert(units, &mut out).map(|n| {
                out[..n]
                    .iter()
                    .map(|b| unsafe { b.assume_init() })
                    .collect::<Vec<u8>>()
            });
            assert_eq!(got, want, "{way}: {:x?}", units_u32(units));
        }
    }

    fn units_u32<T: CodeUnit>(units: &[T]) -> Vec<u32> {
        units.iter().map(|&u| u.into()).collect()
    }

    /// A small deterministic generator (xorshift), so the tests need no crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// Mostly ASCII, in runs, with code points of every UTF-8 length and, when `bad`, now
        /// and then a surrogate or a value past U+10FFFF.
        fn unit(&mut self, most: u32, bad: bool) -> u32 {
            let r = self.next();
            let c = match r % 16 {
                0 => 0x80 + (r >> 8) as u32 % 0x780,
                1 => 0x800 + (r >> 8) as u32 % 0xF800,
                2 => 0x10000 + (r >> 8) as u32 % 0x100000,
                3 if bad && r % 64 == 3 => 0xD800 + (r >> 8) as u32 % 0x800,
                4 if bad && r % 64 == 4 => 0x110000 + (r >> 8) as u32 % 0x1000,
                _ => (r >> 8) as u32 % 0x80,
            };
            if c > most {
                c % (most + 1)
            } else {
                c
            }
        }
    }

    #[test]
    fn every_kind_encodes_as_the_standard_library_does() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for len in (0..70).chain([1000, 4099]) {
            for _ in 0..40 {
                for bad in [false, true] {
                    let v: Vec<u32> = (0..len).map(|_| rng.unit(0x10FFFF, bad)).collect();
                    check(&v.iter().map(|&c| c as u8).collect::<Vec<u8>>());
                    check(
                        &v.iter()
                            .map(|&c| (c % 0x10000) as u16)
                            .collect::<Vec<u16>>(),
                    );
                    check(&v);
                }
            }
        }
    }

    /// Text mostly of one UTF-8 length (as Russian, Chinese or emoji-laden text is), so that
    /// whole blocks of 16 units have no ASCII: at each length, a fifth of the units drawn
    /// from all lengths and, when `bad`, one surrogate or value past U+10FFFF somewhere.
    #[test]
    fn runs_of_each_length_encode_as_the_standard_library_does() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let (lo, hi) = ([0, 0x80, 0x800, 0x10000], [0x80, 0x800, 0x10000, 0x110000]);
        for len in (0..100).chain([255, 256, 257, 1000]) {
            for bytes in 0..4 {
                for bad in [false, true] {
                    let mut v: Vec<u32> = (0..len)
                        .map(|_| match rng.next() % 5 {
                            0 => rng.unit(0x10FFFF, false),
                            _ => match lo[bytes] + rng.next() as u32 % (hi[bytes] - lo[bytes]) {
                                c @ 0xD800..0xE000 => c + 0x800,
                                c => c,
                            },
                        })
                        .collect();
                    if bad && len > 0 {
                        let at = rng.next() as usize % len;
                        v[at] = [0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x110000][at % 5];
                    }
                    // Each kind gets the lengths its units can hold (Latin-1 for one byte).
                    if bytes <= 1 {
                        check(&v.iter().map(|&c| (c % 0x100) as u8).collect::<Vec<u8>>());
                    }
                    if bytes <= 2 {
                        check(&v.iter().map(|&c| c as u16).collect::<Vec<u16>>());
                    }
                    check(&v);
                }
            }
        }
    }

    #[test]
    fn ascii_runs_meet_other_code_points_at_every_offset() {
        for at in 0..40 {
            for c in [
                0x7F, 0x80, 0xFF, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFF,
            ] {
                let mut v = vec![b'a' as u32; 48];
                v[at] = c;
                check(&v.iter().map(|&c| c as u16).collect::<Vec<u16>>());
                check(&v);
                if c <= 0xFF {
                    check(&v.iter().map(|&c| c as u8).collect::<Vec<u8>>());
                }
            }
            for c in [0x10000, 0x10FFFF, 0x110000, u32::MAX] {
                let mut v = vec![b'a' as u32; 48];
                v[at] = c;
                check(&v);
            }
        }
    }
}
