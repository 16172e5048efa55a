//! UTF-8 from code points stored one per unit of 1, 2 or 4 bytes: how CPython keeps the text
//! of a `str` (its Latin-1, UCS-2 and UCS-4 kinds).
//!
//! The Python bindings use it to read a long `str` that is not all ASCII without asking
//! CPython for its UTF-8 (`py/text.rs` says why). With AVX-512 VBMI2, 16 units at a time of
//! any lengths (`x86::to_utf8_avx512`); with AVX2, 8 at a time, packed by table-driven byte
//! shuffles (`x86::to_utf8_avx2`); elsewhere runs of ASCII are narrowed 16 units at a time
//! and the rest go one by one, each unit's bytes built without a branch on their length
//! (`utf8_word`). The wider ways convert several times faster than the scalar one, which was
//! as slow as encoding the text (docs/performance.md, 'Python boundary').

#[cfg(target_arch = "x86_64")]
use crate::simd::{Avx2, Avx512Vbmi2};
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
    {
        let (i, n) = if Avx512Vbmi2::detect().is_some() {
            // SAFETY: the CPU has the features `to_utf8_avx512` is compiled for.
            unsafe { x86::to_utf8_avx512(units, out) }?
        } else if Avx2::detect().is_some() {
            // SAFETY: the CPU has the features `to_utf8_avx2` is compiled for.
            unsafe { x86::to_utf8_avx2(units, out) }?
        } else {
            (0, 0)
        };
        to_utf8_scalar(units, out, i, n)
    }
    #[cfg(not(target_arch = "x86_64"))]
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
mod x86 {
    use super::CodeUnit;
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// The UTF-8 of each 32-bit lane's code point, first byte lowest (as `utf8_word` builds
    /// it), at two, three and four bytes: `(two, three, four)`; the lengths a caller does not
    /// use are not computed once inlined. `$set` makes a vector of one `i32`, `$and`, `$or`,
    /// `$srli` and `$slli` are the intrinsics of that width.
    macro_rules! utf8_words {
        ($c:expr, $set:ident, $and:ident, $or:ident, $srli:ident, $slli:ident) => {{
            let c = $c;
            let cont = |x| $or($and(x, $set(0x3F)), $set(0x80));
            let (c0, c1, c2) = (cont(c), cont($srli::<6>(c)), cont($srli::<12>(c)));
            let two = $or($or($srli::<6>(c), $set(0xC0)), $slli::<8>(c0));
            let three = $or(
                $or($srli::<12>(c), $set(0xE0)),
                $or($slli::<8>(c1), $slli::<16>(c0)),
            );
            let four = $or(
                $or($or($srli::<18>(c), $set(0xF0)), $slli::<8>(c2)),
                $or($slli::<16>(c1), $slli::<24>(c0)),
            );
            (two, three, four)
        }};
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
            let (two, three, four) = utf8_words!(
                c,
                set,
                _mm512_and_si512,
                _mm512_or_si512,
                _mm512_srli_epi32,
                _mm512_slli_epi32
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
                let ge800 = _mm512_cmpge_epu32_mask(c, set(0x800));
                word = _mm512_mask_mov_epi32(word, ge800, three);
                keep = _mm512_mask_mov_epi32(keep, ge800, set(0xFF_FFFF));
                if T::MOST_BYTES >= 4 {
                    let ge10000 = _mm512_cmpge_epu32_mask(c, set(0x10000));
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

    /// The 8 units from `p`, each widened to a 32-bit lane.
    ///
    /// # Safety
    /// 8 units can be read from `p`; the CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lanes8<T: CodeUnit>(p: *const T) -> __m256i {
        // SAFETY: the caller's; the loads are unaligned.
        unsafe {
            match std::mem::size_of::<T>() {
                1 => _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast())),
                2 => _mm256_cvtepu16_epi32(_mm_loadu_si128(p.cast())),
                _ => _mm256_loadu_si256(p.cast()),
            }
        }
    }

    /// The 16 units from `p` narrowed to bytes, if they are all ASCII (units of 4 bytes are
    /// left to the 8-unit blocks).
    ///
    /// # Safety
    /// 16 units can be read from `p`; the CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn ascii16<T: CodeUnit>(p: *const T) -> Option<__m128i> {
        // SAFETY: the caller's; the loads are unaligned.
        unsafe {
            match std::mem::size_of::<T>() {
                1 => {
                    let v = _mm_loadu_si128(p.cast());
                    (_mm_movemask_epi8(v) == 0).then_some(v)
                }
                2 => {
                    let v = _mm256_loadu_si256(p.cast());
                    let ascii = _mm256_testz_si256(v, _mm256_set1_epi16(0xFF80_u16 as i16)) != 0;
                    // Packing works per 128-bit half: the halves' eight bytes brought together.
                    let packed = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi16(v, v));
                    ascii.then(|| _mm256_castsi256_si128(packed))
                }
                _ => None,
            }
        }
    }

    /// For four lanes' UTF-8 lengths less one, `l0 | l1 << 2 | l2 << 4 | l3 << 6`: the byte
    /// shuffle that packs each lane's first bytes (from a 16-byte half of words built as
    /// [`to_utf8_avx2`] builds them), and how many bytes that is.
    static PACK: [([u8; 16], u8); 256] = {
        let mut table = [([0x80u8; 16], 0u8); 256];
        let mut index = 0;
        while index < 256 {
            let (mut n, mut lane) = (0, 0);
            while lane < 4 {
                let len = (index >> (2 * lane)) & 3;
                let mut k = 0;
                while k <= len {
                    table[index].0[n] = (4 * lane + k) as u8;
                    n += 1;
                    k += 1;
                }
                lane += 1;
            }
            table[index].1 = n as u8;
            index += 1;
        }
        table
    };

    /// Bits 0-3 of the index spread to bits 0, 2, 4 and 6: one lane's share of a [`PACK`]
    /// index, from a four-lane mask.
    const SPREAD: [u8; 16] = {
        let mut t = [0u8; 16];
        let mut x = 0;
        while x < 16 {
            t[x] = ((x & 1) | (x & 2) << 1 | (x & 4) << 2 | (x & 8) << 3) as u8;
            x += 1;
        }
        t
    };

    /// [`to_utf8_avx512`] for CPUs with AVX2 only (most desktop CPUs before Intel's and AMD's
    /// latest): 8 units at a time, each one's bytes built in its 32-bit lane the same way; the
    /// lanes of each 128-bit half are packed by a byte shuffle from a table ([`PACK`]) indexed
    /// by their four lengths, and stored as 16 bytes, the next half's store overwriting what
    /// reaches past them. A block of ASCII is narrowed to 8 bytes.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn to_utf8_avx2<T: CodeUnit>(
        units: &[T],
        out: &mut [MaybeUninit<u8>],
    ) -> Option<(usize, usize)> {
        const LANES: usize = 8;
        let set = _mm256_set1_epi32;
        // Unsigned `x >= k` in each lane, all ones or all zeros.
        let ge = |x: __m256i, k: i32| _mm256_cmpeq_epi32(_mm256_max_epu32(x, set(k)), x);
        let bits = |m: __m256i| _mm256_movemask_ps(_mm256_castsi256_ps(m)) as usize;
        // Each lane's low byte to the front of its half, then the halves' four bytes together.
        let low_bytes = _mm256_set1_epi32(0x0C08_0400);
        let (mut i, mut n) = (0, 0);
        while i + LANES <= units.len() && n + 32 <= out.len() {
            if i + 2 * LANES <= units.len() {
                // SAFETY: `i + 16 <= units.len()`, and the CPU has AVX2.
                if let Some(bytes) = unsafe { ascii16(units.as_ptr().add(i)) } {
                    // SAFETY: 16 bytes from `n` are `out`'s (`n + 32 <= out.len()`).
                    unsafe { _mm_storeu_si128(out[n..].as_mut_ptr().cast(), bytes) };
                    (i, n) = (i + 2 * LANES, n + 2 * LANES);
                    continue;
                }
            }
            // SAFETY: `i + 8 <= units.len()`, and the CPU has AVX2.
            let c = unsafe { lanes8(units.as_ptr().add(i)) };
            // The stores below write at most 32 bytes from here: `n + 32 <= out.len()`.
            let to = out[n..].as_mut_ptr();
            let ge80 = ge(c, 0x80);
            if _mm256_testz_si256(ge80, ge80) != 0 {
                let packed = _mm256_permutevar8x32_epi32(
                    _mm256_shuffle_epi8(c, low_bytes),
                    _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0),
                );
                // SAFETY: 8 bytes from `to` are `out`'s.
                unsafe { _mm_storel_epi64(to.cast(), _mm256_castsi256_si128(packed)) };
                (i, n) = (i + LANES, n + LANES);
                continue;
            }
            let (two, three, four) = utf8_words!(
                c,
                set,
                _mm256_and_si256,
                _mm256_or_si256,
                _mm256_srli_epi32,
                _mm256_slli_epi32
            );
            let mut word = _mm256_blendv_epi8(c, two, ge80);
            let mut index = [SPREAD[bits(ge80) & 15], SPREAD[bits(ge80) >> 4]];
            if T::MOST_BYTES >= 3 {
                let surrogate = _mm256_cmpeq_epi32(
                    _mm256_and_si256(c, set(0xFFFF_F800_u32 as i32)),
                    set(0xD800),
                );
                let past = ge(c, 0x110000);
                let bad = _mm256_or_si256(surrogate, past);
                if _mm256_testz_si256(bad, bad) == 0 {
                    return None;
                }
                let ge800 = ge(c, 0x800);
                word = _mm256_blendv_epi8(word, three, ge800);
                index[0] += SPREAD[bits(ge800) & 15];
                index[1] += SPREAD[bits(ge800) >> 4];
                if T::MOST_BYTES >= 4 {
                    let ge10000 = ge(c, 0x10000);
                    word = _mm256_blendv_epi8(word, four, ge10000);
                    index[0] += SPREAD[bits(ge10000) & 15];
                    index[1] += SPREAD[bits(ge10000) >> 4];
                }
            }
            let halves = [
                _mm256_castsi256_si128(word),
                _mm256_extracti128_si256::<1>(word),
            ];
            for (half, index) in halves.into_iter().zip(index) {
                let (shuffle, len) = &PACK[usize::from(index)];
                let packed = _mm_shuffle_epi8(half, _mm_loadu_si128(shuffle.as_ptr().cast()));
                // SAFETY: 16 bytes from `n` are `out`'s: this half's bytes start at most 16
                // past where this block's do, and 32 bytes from there are (checked above).
                unsafe { _mm_storeu_si128(out[n..].as_mut_ptr().cast(), packed) };
                n += usize::from(*len);
            }
            i += LANES;
        }
        Some((i, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_utf8` of `units`, checked against the standard library's encoding of the same code
    /// points (`None` when one is not a `char`), and so the scalar way alone (the only way on
    /// a CPU without AVX2) and the AVX2 way (the way on one without AVX-512 VBMI2).
    fn check<T: CodeUnit>(units: &[T]) {
        let want: Option<String> = units.iter().map(|&u| char::from_u32(u.into())).collect();
        let want = want.map(String::into_bytes);
        let scalar = |u: &[T], o: &mut [MaybeUninit<u8>]| to_utf8_scalar(u, o, 0, 0);
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut ways = vec![
            ("to_utf8", to_utf8 as fn(&[T], &mut _) -> _),
            ("scalar", scalar),
        ];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            ways.push(("avx2", |u, o| {
                // SAFETY: the CPU has AVX2.
                let (i, n) = unsafe { x86::to_utf8_avx2(u, o) }?;
                to_utf8_scalar(u, o, i, n)
            }));
        }
        for (way, convert) in ways {
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

    /// ns a character for each way, on the shared corpora in the narrowest kind that holds
    /// them (run with `--ignored --nocapture`). Interleaved rounds, the best of each kept, so
    /// that other load on the machine counts less.
    #[test]
    #[ignore]
    fn throughput() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
        let files = ["holmes.txt", "multilingual/ru.txt", "multilingual/ja.txt"];
        let files = files
            .iter()
            .chain(&["multilingual/hi.txt", "multilingual/emoji.txt"]);
        for file in files {
            let Ok(text) = std::fs::read_to_string(data.join(file)) else {
                continue;
            };
            let cps: Vec<u32> = text.chars().map(u32::from).collect();
            let best = match cps.iter().copied().max().unwrap_or(0) {
                0..0x100 => time_ways(&cps.iter().map(|&c| c as u8).collect::<Vec<_>>()),
                0x100..0x10000 => time_ways(&cps.iter().map(|&c| c as u16).collect::<Vec<_>>()),
                _ => time_ways(&cps),
            };
            let line: Vec<String> = best
                .iter()
                .map(|(name, t)| format!("{name} {:.2}", t / cps.len() as f64 * 1e9))
                .collect();
            println!("{file:<24} ns a character: {}", line.join(", "));
        }
    }

    /// Each way's best time over `units`, of 30 rounds.
    fn time_ways<T: CodeUnit>(units: &[T]) -> Vec<(&'static str, f64)> {
        let mut out = vec![MaybeUninit::new(0u8); utf8_room::<T>(units.len())];
        type Way<T> = fn(&[T], &mut [MaybeUninit<u8>]) -> Option<usize>;
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut ways: Vec<(&str, Way<T>)> = vec![("scalar", |u, o| to_utf8_scalar(u, o, 0, 0))];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                ways.push(("avx2", |u, o| {
                    // SAFETY: the CPU has AVX2.
                    let (i, n) = unsafe { x86::to_utf8_avx2(u, o) }?;
                    to_utf8_scalar(u, o, i, n)
                }));
            }
            if Avx512Vbmi2::detect().is_some() {
                ways.push(("avx512", |u, o| {
                    // SAFETY: the CPU has what `to_utf8_avx512` needs.
                    let (i, n) = unsafe { x86::to_utf8_avx512(u, o) }?;
                    to_utf8_scalar(u, o, i, n)
                }));
            }
        }
        let mut best = vec![f64::INFINITY; ways.len()];
        let mut sizes = Vec::new();
        for _ in 0..30 {
            for (k, (_, way)) in ways.iter().enumerate() {
                let t0 = std::time::Instant::now();
                sizes.push(way(units, &mut out));
                best[k] = best[k].min(t0.elapsed().as_secs_f64());
            }
        }
        assert!(sizes.windows(2).all(|w| w[0] == w[1] && w[0].is_some()));
        ways.iter().map(|(name, _)| *name).zip(best).collect()
    }
}
