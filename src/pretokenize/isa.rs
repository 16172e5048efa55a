//! What the scanners' block path gets from each instruction set (`crate::simd`'s tokens): a
//! block's class masks, the leads of its characters of several bytes, their classes, and the
//! positions of a mask's bits. The level is chosen once per call rather than per block: the
//! encoder (`Encoder::encode_in_batches`) and the splitter (`Splitter::split_bounds`) pass the
//! token of the copy they run, compiled with the same features, so every intrinsic below is
//! inlined into that copy.

#[cfg(target_arch = "x86_64")]
use super::blocks::vbmi;
use super::blocks::wide::{self, Leads};
use super::blocks::{ascii, Masks, BLOCK};
use crate::simd::{Avx2, Avx512, Avx512Vbmi, Baseline};

/// What a block path needs of the CPU: a block's class masks, and the positions of a mask's
/// set bits.
pub trait Isa: Copy {
    /// The class masks of `block`.
    fn masks(self, block: &[u8; BLOCK]) -> Masks;

    /// The lead bytes of the block's characters of more than one byte.
    #[inline(always)]
    fn leads(self, block: &[u8; BLOCK]) -> Leads {
        wide::leads_swar(block)
    }

    /// The block's non-ASCII characters classified into `m` ([`wide::wide`]).
    #[inline(always)]
    fn wide(self, block: &[u8; BLOCK], m: &mut Masks) {
        wide::wide(
            block,
            m,
            self.leads(block),
            wide::one_by_one,
            wide::one_by_one,
        );
    }

    /// Whether [`Isa::wide_cased`] classes characters of three bytes all at once (else one
    /// by one, which is slower than the per-character path: [`wide::cased_head`]).
    #[inline(always)]
    fn cased_three_at_once(self) -> bool {
        false
    }

    /// The block's non-ASCII characters classified into `m` by case ([`wide::wide_cased`];
    /// `after_letter`: the byte before the block is a letter's).
    #[inline(always)]
    fn wide_cased(self, block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
        wide::wide_cased(
            block,
            m,
            self.leads(block),
            after_letter,
            wide::none_two,
            wide::none_three,
        );
    }

    /// `rest` (fewer than [`BLOCK`] bytes) followed by `pad` bytes up to a block.
    #[inline(always)]
    fn padded(self, rest: &[u8], pad: u8) -> [u8; BLOCK] {
        let mut w = [pad; BLOCK];
        let n = rest.len().min(BLOCK);
        w[..n].copy_from_slice(&rest[..n]);
        w
    }

    /// Write `base + k` for each set bit `k` of `bits` into `to`, in order, and up to
    /// [`POSITIONS_PAST`] entries past the last one (junk the caller overwrites). Eight at a
    /// time unless the instruction set has better.
    #[inline(always)]
    fn positions(self, to: &mut [usize; POSITIONS_ROOM], base: usize, bits: u64) {
        eight_at_a_time(to, base, bits);
    }
}

/// Entries [`Isa::positions`] may write past a mask's last set bit.
pub const POSITIONS_PAST: usize = 16;
/// Room [`Isa::positions`] needs: every bit of a mask set, and the junk past them.
pub const POSITIONS_ROOM: usize = BLOCK + POSITIONS_PAST;

impl Isa for Baseline {
    #[inline(always)]
    fn masks(self, block: &[u8; BLOCK]) -> Masks {
        #[cfg(target_arch = "x86_64")]
        return ascii::sse2(block);
        #[cfg(not(target_arch = "x86_64"))]
        return ascii::swar(block);
    }
}

impl Isa for Avx2 {
    #[inline(always)]
    fn masks(self, block: &[u8; BLOCK]) -> Masks {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only where the CPU has AVX2.
        return unsafe { ascii::avx2(block) };
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.masks(block);
    }
}

impl Isa for Avx512 {
    #[inline(always)]
    fn masks(self, block: &[u8; BLOCK]) -> Masks {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only where the CPU has AVX-512BW.
        return unsafe { ascii::avx512(block) };
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.masks(block);
    }

    /// One masked load: a copy's narrow stores, read back at once as one 64-byte load, stalled
    /// the load (no store forwarding) for a sixth of a short text's scan.
    #[inline(always)]
    fn padded(self, rest: &[u8], pad: u8) -> [u8; BLOCK] {
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.padded(rest, pad);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only where the CPU has AVX-512F and BW.
        unsafe {
            ascii::padded_avx512(rest, pad)
        }
    }

    #[inline(always)]
    fn leads(self, block: &[u8; BLOCK]) -> Leads {
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.leads(block);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only where the CPU has AVX-512F and BW.
        unsafe {
            wide::leads_avx512(block)
        }
    }

    #[inline(always)]
    fn wide(self, block: &[u8; BLOCK], m: &mut Masks) {
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.wide(block, m);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only where the CPU has AVX-512F and BW (and BMI2).
        unsafe {
            wide::wide_avx512(block, m)
        };
    }

    #[inline(always)]
    fn wide_cased(self, block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.wide_cased(block, m, after_letter);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as for `wide`.
        unsafe {
            wide::wide_cased_avx512(block, m, after_letter)
        };
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn positions(self, to: &mut [usize; POSITIONS_ROOM], base: usize, bits: u64) {
        // SAFETY: the token exists only where the CPU has AVX-512F.
        unsafe { compressed(to, base, bits) };
    }
}

impl Isa for Avx512Vbmi {
    #[inline(always)]
    fn masks(self, block: &[u8; BLOCK]) -> Masks {
        self.avx512().masks(block)
    }

    #[inline(always)]
    fn padded(self, rest: &[u8], pad: u8) -> [u8; BLOCK] {
        self.avx512().padded(rest, pad)
    }

    #[inline(always)]
    fn leads(self, block: &[u8; BLOCK]) -> Leads {
        self.avx512().leads(block)
    }

    #[inline(always)]
    fn wide(self, block: &[u8; BLOCK], m: &mut Masks) {
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.wide(block, m);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the token exists only where the CPU has AVX-512F, BW and VBMI (and BMI2).
        unsafe {
            vbmi::wide_vbmi(block, m)
        };
    }

    #[inline(always)]
    fn cased_three_at_once(self) -> bool {
        true
    }

    #[inline(always)]
    fn wide_cased(self, block: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
        #[cfg(not(target_arch = "x86_64"))]
        return Baseline.wide_cased(block, m, after_letter);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as for `wide`.
        unsafe {
            vbmi::wide_cased_vbmi(block, m, after_letter)
        };
    }

    #[inline(always)]
    fn positions(self, to: &mut [usize; POSITIONS_ROOM], base: usize, bits: u64) {
        self.avx512().positions(to, base, bits)
    }
}

/// [`Isa::positions`] eight at a time whatever their number, so the loop runs once per eight
/// positions, not once per position, and its exit is mispredicted less.
#[inline(always)]
fn eight_at_a_time(to: &mut [usize; POSITIONS_ROOM], base: usize, mut bits: u64) {
    let mut at = 0;
    while bits != 0 {
        // In range: at most 64 bits are set, so the groups of eight end by `BLOCK`.
        for slot in &mut to[at..at + 8] {
            *slot = base + bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
        }
        at += 8;
    }
}

/// [`Isa::positions`] 16 bits at a time: each group's positions compressed into the low lanes
/// of one register and stored as 16 `usize`s, the lanes past the group's count junk that the
/// next group overwrites. Four groups whatever the number of bits. [`eight_at_a_time`]'s loop
/// is worse under AVX-512: LLVM turns it into lane inserts (docs/performance.md, 'Scanners').
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn compressed(to: &mut [usize; POSITIONS_ROOM], base: usize, bits: u64) {
    use std::arch::x86_64::*;
    const _: () = assert!(usize::BITS == 64);
    let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let base = _mm512_set1_epi64(base as i64);
    let mut at = 0;
    for group in 0..4 {
        let k = (bits >> (16 * group)) as u16;
        let packed =
            _mm512_maskz_compress_epi32(k, _mm512_add_epi32(lanes, _mm512_set1_epi32(16 * group)));
        let low = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(packed));
        let high = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(packed));
        // In range: `at` is the number of bits below this group, so `at + 16` is at most
        // `BLOCK + 16` less the bits of the groups above.
        let dst = &mut to[at..at + 16];
        _mm512_storeu_si512(dst.as_mut_ptr().cast(), _mm512_add_epi64(low, base));
        _mm512_storeu_si512(dst.as_mut_ptr().add(8).cast(), _mm512_add_epi64(high, base));
        at += k.count_ones() as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::super::classes::{class_of, L, LO, M, N, OTHER, UP, WS};
    use super::*;

    /// What [`Isa::wide`] (`cased` false) or [`Isa::wide_cased`] must make of `masks`, the
    /// ASCII masks of `block`, read from the class table one character at a time, as their
    /// docs say.
    fn wide_by_their_contracts(
        block: &[u8; BLOCK],
        masks: Masks,
        cased: bool,
        after_letter: bool,
    ) -> Masks {
        let (mut up, mut lo, mut other, mut cont) = (0u64, 0u64, 0u64, 0u64);
        // Whether the character before is a letter (for o200k, a mark after one too).
        let mut after_letter = after_letter;
        let mut p = 0;
        while p < BLOCK {
            let len = match block[p] {
                0..0x80 => 1,
                0xC0..0xE0 => 2,
                0xE0..0xF0 => 3,
                _ => 4,
            };
            if len > 1 {
                let ends_here = p + len <= BLOCK;
                let class = std::str::from_utf8(&block[p..(p + len).min(BLOCK)])
                    .ok()
                    .and_then(|c| c.chars().next())
                    .map_or(0, |c| class_of(c as u32));
                let bits = (u64::MAX >> (64 - len.min(BLOCK - p))) << p;
                if cased {
                    // Up to the first it cannot class.
                    let class = class & (UP | LO | M | N | WS | OTHER);
                    match class {
                        _ if !ends_here => break,
                        UP => up |= bits,
                        LO => lo |= bits,
                        OTHER => other |= bits,
                        _ if class == UP | LO => (up, lo) = (up | bits, lo | bits),
                        _ if class == UP | LO | M | OTHER && after_letter => {
                            (up, lo) = (up | bits, lo | bits)
                        }
                        _ => break,
                    }
                } else if ends_here && class & L != 0 {
                    lo |= bits;
                } else if ends_here && class & OTHER != 0 {
                    other |= bits;
                }
                cont |= bits & (up | lo | other) & !(1 << p);
                after_letter = (up | lo) >> p & 1 == 1;
            } else {
                after_letter = block[p].is_ascii_alphabetic();
            }
            p += len;
        }
        Masks {
            up: masks.up | up,
            lo: masks.lo | lo,
            hi: masks.hi & !(up | lo | other),
            cont,
            ..masks
        }
    }

    /// `wide` and `wide_cased` of every token (with AVX-512, with VBMI and without) class
    /// exactly what their contracts say, byte for byte, on blocks of random characters of one
    /// to four bytes (letters by case, `Lo` and `Lm` letters, marks, others, numbers and
    /// whitespace), at every alignment. (Classing less is not wrong, as the block path stops
    /// before unclassed bytes, only slower: the other tests cannot tell.)
    #[test]
    fn wide_classes_are_their_contracts() {
        let chars = [
            "a", "Z", " ", "1", ".", "\n", "é", "É", "ß", "Ж", "ж", "ω", "Ω", "ǅ", "ʰ", "\u{301}",
            "«", "\u{a0}", "\u{85}", "ب", "ـ", "٣", "\u{5b4}", "׳", "ա", "Ա", "\u{7ff}", "中",
            "の", "、", "ー", "\u{3000}", "０", "Ａ", "ａ", "K", "😀", "𝐀", "𝐚", "\u{93f}", "न",
            "\u{94d}", "ｱ", "ア", "한", "ก", "\u{e31}", "๑", "〇", "─", "\u{3099}", "—",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        type Wide = Box<dyn Fn(&[u8; BLOCK], &mut Masks, bool, bool)>;
        fn wide_of(isa: impl Isa + 'static) -> Wide {
            Box::new(move |b, m, cased, after| match cased {
                true => isa.wide_cased(b, m, after),
                false => isa.wide(b, m),
            })
        }
        let mut isas: Vec<(&str, Wide)> = vec![("baseline", wide_of(Baseline))];
        if let Some(isa) = Avx2::detect() {
            isas.push(("avx2", wide_of(isa)));
        }
        if let Some(isa) = Avx512::detect() {
            isas.push(("avx512", wide_of(isa)));
        }
        if let Some(isa) = Avx512Vbmi::detect() {
            isas.push(("avx512 vbmi", wide_of(isa)));
        }
        for round in 0..20_000 {
            let mut text = String::new();
            // Mostly Latin, or mostly of three bytes, in some rounds, so that wide_cased
            // goes far.
            let pick = match round % 3 {
                0 => 0..chars.len(),
                1 => 0..16,
                _ => 27..chars.len(),
            };
            while text.len() < BLOCK {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text += chars[pick.start + (state % pick.len() as u64) as usize];
            }
            let block: &[u8; BLOCK] = text.as_bytes().first_chunk().unwrap();
            let masks = Baseline.masks(block);
            for (cased, after) in [(false, false), (true, false), (true, true)] {
                let want = wide_by_their_contracts(block, masks, cased, after);
                for (name, wide) in &isas {
                    let mut m = masks;
                    wide(block, &mut m, cased, after);
                    assert_eq!(m, want, "{name} cased {cased} after {after} {text:?}");
                }
            }
        }
    }

    /// Every token's positions are the set bits', in order, for masks of every density.
    #[test]
    fn positions_are_the_set_bits() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut masks = vec![0, 1, 1 << 63, !0, 0x5555_5555_5555_5555, 0xffff_0000_ffff];
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            masks.push(state & state.rotate_left(17));
            masks.push(state);
        }
        let check = |isa: &dyn Fn(&mut [usize; POSITIONS_ROOM], usize, u64), name: &str| {
            for &bits in &masks {
                let mut to = [usize::MAX; POSITIONS_ROOM];
                isa(&mut to, 1000, bits);
                let want: Vec<usize> = (0..64)
                    .filter(|k| bits >> k & 1 == 1)
                    .map(|k| 1000 + k)
                    .collect();
                assert_eq!(&to[..want.len()], want, "{name} {bits:#x}");
            }
        };
        check(
            &|to, base, bits| Baseline.positions(to, base, bits),
            "baseline",
        );
        if let Some(isa) = Avx2::detect() {
            check(&|to, base, bits| isa.positions(to, base, bits), "avx2");
        }
        if let Some(isa) = Avx512::detect() {
            check(&|to, base, bits| isa.positions(to, base, bits), "avx512");
        }
        if let Some(isa) = Avx512Vbmi::detect() {
            check(
                &|to, base, bits| isa.positions(to, base, bits),
                "avx512 vbmi",
            );
        }
    }
}
