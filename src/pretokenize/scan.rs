//! The scanners' common loop: a [`Scanner`] gives a pattern's rules, per character
//! ([`Scanner::next`]) and 64 bytes at a time from class bitmasks ([`Scanner::block`]); [`scan`]
//! runs them over a text, taking the block path where a block's classes allow and the
//! per-character path elsewhere, and hands the chunk boundaries out in batches ([`Sink`]).
//! The tests check the two paths against each other on every named pattern (`pretokenize`'s
//! tests).

use super::blocks::{ascii, wide, Masks, BLOCK};
use super::classes;
use super::isa::{self, Isa};
use crate::error::Error;

/// Chunks per call of `Splitter::split_bounds`'s callback (a block can add up to 63 more).
pub const BOUNDS: usize = 64;

/// Boundaries gathered for [`Splitter::split_bounds`](super::Splitter::split_bounds): `at[..len]`, whose last entry is the
/// start of the chunk being scanned (its end is not known yet).
pub(super) struct Sink<F> {
    at: [usize; BOUNDS + 1 + isa::POSITIONS_ROOM],
    len: usize,
    f: F,
}

impl<F: FnMut(&[usize])> Sink<F> {
    pub(super) fn new(f: F) -> Sink<F> {
        Sink {
            at: [0; BOUNDS + 1 + isa::POSITIONS_ROOM],
            len: 1,
            f,
        }
    }

    /// Add a boundary after the last. At most `BLOCK` pushes follow a `flush_if_full`, so the
    /// index is in range.
    #[inline(always)]
    pub(super) fn push(&mut self, end: usize) {
        self.at[self.len] = end;
        self.len += 1;
    }

    /// Add a boundary at `base + k` for each set bit `k` of `bits`, in order (after a
    /// `flush_if_full`). `isa` writes them in fixed groups, past the last one too: room the
    /// next pushes overwrite.
    #[inline(always)]
    fn push_bits(&mut self, isa: impl Isa, base: usize, bits: u64) {
        // `flush_if_full` after every push keeps `len <= BOUNDS`, and `at` has
        // `BOUNDS + 1 + POSITIONS_ROOM`: the room is there.
        match self
            .at
            .get_mut(self.len..)
            .and_then(|r| r.first_chunk_mut())
        {
            Some(room) => {
                isa.positions(room, base, bits);
                self.len += bits.count_ones() as usize;
            }
            // Not reached; were it, one boundary at a time, flushing as needed.
            None => {
                let mut bits = bits;
                while bits != 0 {
                    self.flush_if_full();
                    self.push(base + bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
            }
        }
    }

    /// Hand out the boundaries once they hold `BOUNDS` chunks, keeping the last.
    #[inline(always)]
    pub(super) fn flush_if_full(&mut self) {
        if self.len > BOUNDS {
            (self.f)(&self.at[..self.len]);
            self.at[0] = self.at[self.len - 1];
            self.len = 1;
        }
    }

    pub(super) fn finish(&mut self) {
        if self.len > 1 {
            (self.f)(&self.at[..self.len]);
        }
    }
}

/// The error for a scanner that did not step forward by whole characters (a bug; checked so
/// that it can never loop forever or cut a character).
pub(super) fn internal_error(at: usize) -> Error {
    Error::RegexRuntime {
        message: format!("internal error: the scanner stopped at byte {at}"),
    }
}

/// A hand-written scanner for one pattern.
pub(super) trait Scanner {
    /// Whether the block path takes non-ASCII characters too ([`wide::wide`]): for the
    /// patterns whose classes do not depend on case.
    const WIDE: bool = false;

    /// For a `WIDE` scanner: whether its letter classes depend on case (o200k), so that its
    /// blocks are classified by [`wide::wide_cased`].
    const CASED: bool = false;

    /// For a `WIDE` scanner: if the chunk that starts `at` bytes into a block (masks `m`) is
    /// a run of letters (of [`Scanner::run_letters`]), perhaps after a prefix, where in the
    /// block its letters start.
    fn letter_run(_m: &Masks, _at: u32) -> Option<u32> {
        None
    }

    /// The letters a run of [`Scanner::letter_run`] goes on through.
    #[inline(always)]
    fn run_letters(m: &Masks) -> u64 {
        m.letter()
    }

    /// Whether such a run ends at byte `k` of a block (masks `m`), the first after it that
    /// is not in [`Scanner::run_letters`], a character the masks classify.
    #[inline(always)]
    fn run_ends_at(_m: &Masks, _k: u32) -> bool {
        true
    }

    /// The end of such a run's chunk, which starts at `start`, where the masks cannot tell:
    /// from `at`, a character they do not classify (or the text's last bytes).
    #[inline(always)]
    fn finish_run(b: &[u8], _start: usize, at: usize) -> usize {
        classes::run_swar(b, at, classes::L, classes::letter_lanes)
    }

    /// End of the chunk that starts at `i` (`i < b.len()`, a character boundary of the text
    /// whose bytes are `b`).
    fn next(b: &[u8], i: usize) -> usize;

    /// The chunk starts in the 64 bytes `b[i..i + 64]`, whose class masks are `m`, where `i`
    /// is a chunk start: bit `k` set iff a chunk starts at `i + k`, exact up to the highest
    /// bit returned; bit 0 is always set (so `1` means "per character from here").
    fn block(b: &[u8], i: usize, m: &Masks) -> u64;
}

/// Bytes taken per character before the block path is tried again (see `scan`).
const SCALAR_AFTER: usize = BLOCK / 4;

/// Drive a scanner over `text`, into `sink`.
///
/// Inlined into `split_bounds` with the scanner and the callback, so the whole loop is one
/// function: a scanner passed as a `fn` item leaves a call to an `Fn::call` shim per chunk, not
/// inlined; a trait's `#[inline(always)]` method is.
#[inline(always)]
pub(super) fn scan<S: Scanner>(
    isa: impl Isa,
    text: &str,
    sink: &mut Sink<impl FnMut(&[usize])>,
) -> Result<(), Error> {
    let b = text.as_bytes();
    let mut i = 0;
    // The block path is not tried again before this position: after a block that gave little
    // (non-ASCII text the scanner does not classify, a very long chunk), or one whose head
    // fails the scanner's test (`ascii_head`, or `cased_head` for o200k), the next 16 bytes
    // go per character; a whole block per character is too many for text with a few non-ASCII
    // letters (docs/performance.md, 'Scanners').
    let mut scalar_until = 0;
    while i < b.len() {
        if i >= scalar_until {
            let Some(w) = b.get(i..).and_then(|r| r.first_chunk::<{ BLOCK }>()) else {
                // The last bytes, fewer than a block: their starts, then the rest (as a rule
                // the last chunk) per character.
                i = tail_step::<S>(isa, b, i, sink);
                scalar_until = b.len();
                continue;
            };
            if head::<S>(isa, w) {
                let mut m = isa.masks(w);
                // Two copies of the step: in the one for blocks without non-ASCII bytes
                // the compiler knows the masks `wide` fills are empty, and drops what
                // they add to the rules (docs/performance.md, 'Scanners').
                let (s, run) = if S::WIDE && m.hi != 0 {
                    classify_wide::<S>(isa, w, &mut m, false);
                    block_step::<S>(isa, b, i, &m, sink)
                } else {
                    block_step::<S>(isa, b, i, &m, sink)
                };
                if let Some(f) = run {
                    // The last chunk starts early and is a run of letters (as most long
                    // chunks of CJK text are): its end is found from these masks and the
                    // next blocks', and the next block starts there.
                    let end = letter_run_end::<S>(isa, b, s, i, f, m);
                    if end <= s || !text.is_char_boundary(end) {
                        return Err(internal_error(s));
                    }
                    sink.push(end);
                    sink.flush_if_full();
                    i = end;
                    continue;
                }
                if s - i < BLOCK / 2 {
                    scalar_until = s + SCALAR_AFTER;
                }
                i = s;
                continue;
            }
            scalar_until = i + SCALAR_AFTER;
        }
        let end = S::next(b, i);
        // `is_char_boundary` is false past the end.
        if end <= i || !text.is_char_boundary(end) {
            return Err(internal_error(i));
        }
        sink.push(end);
        sink.flush_if_full();
        i = end;
    }
    Ok(())
}

/// The non-ASCII characters of block `w` classified into its masks `m`, as a `WIDE`
/// scanner's classes need: by case for o200k ([`wide::wide_cased`]; `after_letter`: the
/// byte before the block is a letter's), else not ([`wide::wide`]).
#[inline(always)]
fn classify_wide<S: Scanner>(isa: impl Isa, w: &[u8; BLOCK], m: &mut Masks, after_letter: bool) {
    if S::CASED {
        isa.wide_cased(w, m, after_letter);
    } else {
        isa.wide(w, m);
    }
}

/// Whether the block `w` takes the block path: blocks whose head the scanner cannot classify
/// go per character at once.
#[inline(always)]
fn head<S: Scanner>(isa: impl Isa, w: &[u8; BLOCK]) -> bool {
    match (S::WIDE, S::CASED) {
        (true, false) => true,
        (true, true) => ascii::ascii_head(w) || wide::cased_head(w, isa.cased_three_at_once()),
        (false, _) => ascii::ascii_head(w),
    }
}

/// The last `b.len() - i` bytes of the text (fewer than a block, `i` a chunk start) in
/// [`scan`]: the chunk starts among them, to `sink`, from a block of them padded with line
/// ends. Returns the last start (`i` if none); the chunks from it are left to the
/// per-character path. A short text is then scanned by a block too, not all per character
/// (docs/performance.md, 'Scanners').
///
/// A line end after the text changes no chunk that ends before the text does, in any of the
/// named patterns: it is whitespace, so a whitespace run that reaches the text's end (`\s++$`,
/// `\s+(?!\S)`) goes on into the padding and ends no sooner; it is no letter, number or
/// other, so no letter run, number group, contraction or prefix takes it; and an other run's
/// `[\r\n]*` only takes it where the run reaches the text's end. So every start the block
/// finds before the text's end is one of the text's. (A start at a byte past the block's
/// `limit` is not reported, as in any block.) Padded with a letter or with `!` instead,
/// `block_path_equals_per_character_path` fails.
#[inline(always)]
fn tail_step<S: Scanner>(
    isa: impl Isa,
    b: &[u8],
    i: usize,
    sink: &mut Sink<impl FnMut(&[usize])>,
) -> usize {
    let rest = b.get(i..).unwrap_or_default();
    if rest.len() >= BLOCK {
        return i;
    }
    let w = isa.padded(rest, b'\n');
    if !head::<S>(isa, &w) {
        return i;
    }
    let mut m = isa.masks(&w);
    if S::WIDE && m.hi != 0 {
        classify_wide::<S>(isa, &w, &mut m, false);
    }
    // The starts inside the text; bit 0 is `i`.
    let starts = S::block(&w, 0, &m) & !1 & ((1u64 << rest.len()) - 1);
    sink.push_bits(isa, i, starts);
    sink.flush_if_full();
    i + (starts | 1).ilog2() as usize
}

/// One block of [`scan`]'s block path at `i`, with the block's masks `m`: its chunk starts go
/// to `sink`. Returns the last start (`i` if none), and, for a `WIDE` scanner, if that start
/// is in the block's first half and its chunk a run of letters, where the letters start.
#[inline(always)]
fn block_step<S: Scanner>(
    isa: impl Isa,
    b: &[u8],
    i: usize,
    m: &Masks,
    sink: &mut Sink<impl FnMut(&[usize])>,
) -> (usize, Option<u32>) {
    // The starts after bit 0 are chunk ends; the block stops before the non-ASCII bytes it
    // has not classified, so they are character boundaries.
    let starts = S::block(b, i, m) & !1;
    // The last start (`i` if none: bit 0 is clear), from the mask itself, so the next
    // block's position does not wait for the boundaries' writes.
    let s = i + (starts | 1).ilog2() as usize;
    sink.push_bits(isa, i, starts);
    sink.flush_if_full();
    let run = if S::WIDE && s - i < BLOCK / 2 {
        S::letter_run(m, (s - i) as u32)
    } else {
        None
    };
    (s, run)
}

/// End of the chunk at `start` that is a run of letters ([`Scanner::letter_run`]: gpt2's and
/// cl100k's `\p{L}++`, o200k's `Lo` and `Lm` letters) from `f` bytes into the block at `i`,
/// whose masks (with [`wide::wide`] or [`wide::wide_cased`]) are `m`: the first byte
/// after it not in [`Scanner::run_letters`], block by block, if the run ends there
/// ([`Scanner::run_ends_at`]); where that is a character the masks leave unclassified
/// before the block's last three bytes (or the text has less than a block left), or one
/// where the run may not end, per character ([`Scanner::finish_run`]).
#[inline(always)]
fn letter_run_end<S: Scanner>(
    isa: impl Isa,
    b: &[u8],
    start: usize,
    mut i: usize,
    f: u32,
    mut m: Masks,
) -> usize {
    let mut from = f;
    loop {
        let stop = !S::run_letters(&m) & (u64::MAX << from);
        if stop != 0 {
            let k = stop.trailing_zeros() as usize;
            if m.hi >> k & 1 == 0 {
                if S::run_ends_at(&m, k as u32) {
                    return i + k;
                }
                return S::finish_run(b, start, i + k);
            }
            if k + 3 < BLOCK {
                return S::finish_run(b, start, i + k);
            }
            // An unclassified character in the block's last three bytes, as a rule one the
            // block cuts (so in two of three runs of CJK letters that cross a block's end):
            // the next block starts with it, where going per character from it took the
            // rest of the run per character.
            i += k;
        } else {
            // Letters to the block's end, and its last character ends in it.
            i += BLOCK;
        }
        let Some(w) = b.get(i..).and_then(|r| r.first_chunk::<{ BLOCK }>()) else {
            return S::finish_run(b, start, i);
        };
        m = isa.masks(w);
        if m.hi != 0 {
            // The run's letters reach the byte before it.
            classify_wide::<S>(isa, w, &mut m, true);
        }
        from = 0;
    }
}

/// A scanner run without its block path: the per-character path alone, which the tests and
/// the fuzz targets hold to the block path and to the regex engine.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) struct PerChar<S>(std::marker::PhantomData<S>);

#[cfg(any(test, feature = "fuzzing"))]
impl<S: Scanner> Scanner for PerChar<S> {
    fn next(b: &[u8], i: usize) -> usize {
        S::next(b, i)
    }

    fn block(_: &[u8], _: usize, _: &Masks) -> u64 {
        1
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::simd::{Avx2, Avx512, Avx512Vbmi, Baseline};

    /// The chunk boundaries of `text` by the block path and by the per-character path. The
    /// block path on every instruction set the CPU has gives the same boundaries.
    pub(in crate::pretokenize) fn both_paths<S: Scanner>(text: &str) -> (Vec<usize>, Vec<usize>) {
        fn bounds<S: Scanner>(isa: impl Isa, text: &str) -> Vec<usize> {
            let mut all = vec![0];
            let mut sink = Sink::new(|at: &[usize]| all.extend_from_slice(&at[1..]));
            scan::<S>(isa, text, &mut sink).unwrap();
            sink.finish();
            all
        }
        let blocks = bounds::<S>(Baseline, text);
        if let Some(isa) = Avx2::detect() {
            assert!(bounds::<S>(isa, text) == blocks, "AVX2 {text:?}");
        }
        if let Some(isa) = Avx512::detect() {
            assert!(bounds::<S>(isa, text) == blocks, "AVX-512 {text:?}");
        }
        if let Some(isa) = Avx512Vbmi::detect() {
            assert!(bounds::<S>(isa, text) == blocks, "AVX-512 VBMI {text:?}");
        }
        (blocks, bounds::<PerChar<S>>(Baseline, text))
    }
}
