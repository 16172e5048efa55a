//! UTF-8 from code points stored one per unit of 1, 2 or 4 bytes: how CPython keeps the text
//! of a `str` (its Latin-1, UCS-2 and UCS-4 kinds).
//!
//! The Python bindings use it to read a long `str` that is not all ASCII without asking
//! CPython for its UTF-8 (`py/text.rs` says why). Runs of ASCII, most of almost any text, are
//! narrowed 16 units at a time, which compiles to a few vector instructions per run.

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
    const RUN: usize = 16;
    let mut n = 0;
    let mut i = 0;
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
        // One unit at a time until the next run of ASCII (or the end).
        let end = (i + RUN).min(units.len());
        for &u in &units[i..end] {
            n += put_char(u.into(), &mut out[n..])?;
        }
        i = end;
    }
    Some(n)
}

/// Writes code point `c` as UTF-8 to the front of `out` (which has room for it) and returns
/// its length; `None` for a surrogate or a value past U+10FFFF.
#[inline]
fn put_char(c: u32, out: &mut [MaybeUninit<u8>]) -> Option<usize> {
    let tail = |shift: u32| 0x80 | (c >> shift) as u8 & 0x3F;
    match c {
        0..=0x7F => {
            out[0].write(c as u8);
            Some(1)
        }
        0x80..=0x7FF => {
            out[0].write(0xC0 | (c >> 6) as u8);
            out[1].write(tail(0));
            Some(2)
        }
        0xD800..=0xDFFF => None,
        0x800..=0xFFFF => {
            out[0].write(0xE0 | (c >> 12) as u8);
            out[1].write(tail(6));
            out[2].write(tail(0));
            Some(3)
        }
        0x10000..=0x10FFFF => {
            out[0].write(0xF0 | (c >> 18) as u8);
            out[1].write(tail(12));
            out[2].write(tail(6));
            out[3].write(tail(0));
            Some(4)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_utf8` of `units`, checked against the standard library's encoding of the same code
    /// points (`None` when one is not a `char`).
    fn check<T: CodeUnit>(units: &[T]) {
        let want: Option<String> = units.iter().map(|&u| char::from_u32(u.into())).collect();
        // Room exactly as asked, and no more: the worst case must fit.
        let mut out = vec![MaybeUninit::new(0xAA); utf8_room::<T>(units.len())];
        // SAFETY: every byte of `out` was written (0xAA, or by `to_utf8` before `n`).
        let got = to_utf8(units, &mut out).map(|n| {
            out[..n]
                .iter()
                .map(|b| unsafe { b.assume_init() })
                .collect::<Vec<u8>>()
        });
        assert_eq!(got, want.map(String::into_bytes), "{:x?}", units_u32(units));
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
