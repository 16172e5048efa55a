//! Characters of two and three bytes classified all 64 bytes at once, with AVX-512 VBMI: their
//! classes are bits of tables held in registers and indexed by byte permutes, built at compile
//! time from the class table. Characters of two bytes (U+0080 to U+07FF) have a table of their
//! own; those of three bytes are in tables of whole runs of 64 code points and of a few hot
//! pages, and the rest go one by one ([`super::wide::one_by_one`]).
//!
//! The functions here are always inlined into the copies of the scanner compiled for VBMI
//! (`crate::simd::Avx512Vbmi`), so that their intrinsics are too.

#[cfg(target_arch = "x86_64")]
use super::wide::{leads_avx512, one_by_one, wide, wide_cased};
#[cfg(target_arch = "x86_64")]
use super::{Masks, BLOCK};
use crate::pretokenize::classes::class_of_const;
use crate::pretokenize::tables::{L, LO, M, N, OTHER, UP, WS};

/// The pages (code points `0xPP00` to `0xPPFF`) of three-byte characters whose classes are
/// held in registers (`HOT_PAGES`): Devanagari and Bengali, Thai and Lao, Japanese and
/// Chinese punctuation and kana, full-width forms. Each page's two low bits are its slot, so
/// they differ.
pub(crate) const HOT: [u8; 4] = {
    let hot = [0x09, 0x0E, 0x30, 0xFF];
    let mut seen = 0u8;
    let mut k = 0;
    while k < hot.len() {
        seen |= 1 << (hot[k] & 3);
        k += 1;
    }
    assert!(seen == 0b1111, "the hot pages' slots differ");
    hot
};

/// The classes o200k's block path takes ([`wide_cased`]).
const CASED: u8 = UP | LO | M | N | WS | OTHER;

/// The bit planes of the block path's tables a character of class `class` is in. Not `cased`
/// (gpt2, cl100k; [`wide`]): plane 0 the letters, plane 1 the
/// others. `cased` (o200k; [`wide_cased`]), with `up` the
/// letters only upper-ish, `lo` only lower-ish, `both` in both classes (`Lm`, `Lo`), `other`
/// the others that are not marks, and `mark` the marks: plane 0 is `up | both | mark`, plane 1
/// `lo | both`, plane 2 `other | mark` (so three lookups tell the five apart). In none:
/// numbers and whitespace.
const fn planes(class: u8, cased: bool) -> u8 {
    if !cased {
        return (class & L != 0) as u8 | ((class & OTHER != 0) as u8) << 1;
    }
    match class & CASED {
        UP => 0b001,
        LO => 0b010,
        OTHER => 0b100,
        c if c == UP | LO => 0b011,
        c if c == UP | LO | M | OTHER => 0b101,
        _ => 0,
    }
}

/// Sets bit `k` of `t`'s `K` planes where `code` has bit `plane` set: bit `k & 7` of byte
/// `k >> 3`.
const fn set_planes<const K: usize, const N: usize>(t: &mut [[u8; N]; K], k: usize, code: u8) {
    let mut plane = 0;
    while plane < K {
        if code >> plane & 1 != 0 {
            t[plane][k >> 3] |= 1 << (k & 7);
        }
        plane += 1;
    }
}

/// The two-byte characters' planes (U+0080 to U+07FF; see [`planes`]): bit `cp & 7` of byte
/// `cp >> 3` (the first 16 bytes, ASCII, are empty).
const fn two_byte<const K: usize>(cased: bool) -> [[u8; 256]; K] {
    let mut t = [[0u8; 256]; K];
    let mut cp = 0x80;
    while cp < 0x800 {
        set_planes(&mut t, cp, planes(class_of_const(cp as u32), cased));
        cp += 1;
    }
    t
}

/// The `HOT` pages' planes: page `p`'s 256 bits at byte `32 * (p & 3)`, bit `cp & 7` of byte
/// `(cp & 0xFF) >> 3` of them.
const fn hot_pages<const K: usize>(cased: bool) -> [[u8; 128]; K] {
    let mut t = [[0u8; 128]; K];
    let mut k = 0;
    while k < HOT.len() {
        let mut low = 0;
        while low < 256 {
            let cp = ((HOT[k] as u32) << 8) | low as u32;
            let code = planes(class_of_const(cp), cased);
            set_planes(&mut t, 256 * (HOT[k] as usize & 3) + low, code);
            low += 1;
        }
        k += 1;
    }
    t
}

/// The three-byte characters' planes by runs of 64 code points whose classes are all in the
/// same planes, and in some (U+0800 to U+FFFF: the CJK ideographs, Hangul syllables and Yi
/// are letters; box drawing, arrows and Braille others): bit `(cp >> 6) & 7` of byte
/// `cp >> 9`. The runs of U+0000 to U+07FF, and the mixed ones, are in no plane.
const fn whole_runs<const K: usize>(cased: bool) -> [[u8; 128]; K] {
    let mut t = [[0u8; 128]; K];
    let mut run = 0x800 >> 6;
    while run < 0x1_0000 >> 6 {
        let code = planes(class_of_const(run << 6), cased);
        let mut cp = run << 6;
        while cp < (run + 1) << 6 && planes(class_of_const(cp), cased) == code {
            cp += 1;
        }
        if cp == (run + 1) << 6 {
            set_planes(&mut t, run as usize, code);
        }
        run += 1;
    }
    t
}

/// The two-byte letters, and others ([`wide`]).
pub(crate) static TWO_BYTE: [[u8; 256]; 2] = two_byte(false);

/// o200k's planes of the two-byte characters (see [`planes`]).
pub(crate) static TWO_BYTE_CASED: [[u8; 256]; 3] = two_byte(true);

/// The `HOT` pages' letters and others ([`three_vbmi`]).
pub(crate) static HOT_PAGES: [[u8; 128]; 2] = hot_pages(false);

/// o200k's planes of the `HOT` pages.
pub(crate) static HOT_PAGES_CASED: [[u8; 128]; 3] = hot_pages(true);

/// The runs of 64 three-byte code points all letters, and all others.
pub(crate) static WHOLE_RUNS: [[u8; 128]; 2] = whole_runs(false);

/// o200k's planes of the runs of 64 three-byte code points all in the same ones.
pub(crate) static WHOLE_RUNS_CASED: [[u8; 128]; 3] = whole_runs(true);

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
pub(crate) unsafe fn three_vbmi(block: &[u8; BLOCK], leads: u64) -> (u64, u64) {
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
pub(crate) unsafe fn three_tables<const K: usize>(
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
    // characters of three bytes: there one by one is faster, the tables' cache lines being cold
    // (docs/performance.md, 'Scanners').
    if leads & !_mm512_cmpeq_epi8_mask(lead, _mm512_set1_epi8(0xE2u8 as i8)) == 0 {
        return ([0; K], 0);
    }
    // At each byte, the one and the two after it (wrapping at the block's end, where no lead
    // of a character that ends in the block is), by byte permutes rather than masked loads
    // from bytes 1 and 2 (docs/performance.md, 'Scanners').
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
/// whose bit is set. One at a time (the way without VBMI) is several times slower
/// (docs/performance.md, 'Scanners').
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
pub(crate) unsafe fn two_vbmi<const K: usize>(
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

/// [`wide`] with AVX-512 VBMI: characters of two bytes by [`two_vbmi`], of three by
/// [`three_vbmi`]. Not compiled for those features itself but always inlined, into the copies
/// of the scanner compiled for them ([`Avx512Vbmi`](crate::simd::Avx512Vbmi)), so that
/// `two_vbmi` and `three_vbmi` are inlined there too.
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn wide_vbmi(block: &[u8; BLOCK], m: &mut Masks) {
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

/// [`wide_cased`] with AVX-512 VBMI: characters of two bytes by [`two_vbmi`], of three by
/// [`three_tables`]; always inlined, as [`wide_vbmi`] is.
///
/// # Safety
/// The CPU has AVX-512F, BW and VBMI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn wide_cased_vbmi(block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
    // The classes from the planes' codes (see `planes`).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::blocks::wide::leads_swar;
    // Imported above only where the VBMI copies are compiled.
    #[cfg(not(target_arch = "x86_64"))]
    use crate::pretokenize::blocks::{wide::one_by_one, BLOCK};
    use crate::pretokenize::classes::class_of;

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
}
