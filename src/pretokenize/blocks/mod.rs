//! Class bitmasks of 64 bytes at once, for the scanners' block path: bit `k` of each mask says
//! whether byte `k` of the block is in the class. A scanner turns the masks into the bitmask of
//! chunk starts with a few dozen bitwise operations (see `o200k::block`), instead of a run of
//! data-dependent branches per chunk.
//!
//! Split by what they classify:
//! - [`ascii`]: every ASCII byte into its class ([`Masks`]); every block computes these, 16,
//!   32 or 64 bytes a step as the instruction set allows (`pretokenize::isa`);
//! - [`wide`]: characters of two to four bytes into the same masks, each looked up in the class
//!   table: as letters or others for gpt2 and cl100k, by case for o200k;
//! - [`vbmi`]: characters of two and three bytes classed all at once by bit tables held in
//!   registers, with AVX-512 VBMI;
//! - [`rules`]: what the scanners build from the masks: the class of the byte before, digit
//!   groups, contractions, how far a block's starts are exact.
//!
//! Bytes the masks leave unclassified (`Masks::hi`) stop a block short of them, and the
//! per-character path takes them; so Japanese, Russian or Hindi take the block path as English
//! does where their characters are classified. The tests check each instruction set against
//! the class table.

pub(super) mod ascii;
pub(super) mod rules;
// Its tables serve only the VBMI copies (x86_64); elsewhere it stays for its tests, which check
// the portable one-by-one path against the class table.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) mod vbmi;
pub(super) mod wide;

/// Block length in bytes.
pub(crate) const BLOCK: usize = 64;

/// The ASCII classes of one block. Every ASCII byte is in exactly one of `up`, `lo`,
/// `digit`, `space`, `tab`, `nl`, or none of them (then it is "other": punctuation, symbols,
/// control characters), `apos` and `slash` pick out two of the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// Bytes >= 0x80 (after [`wide::wide`]: only those of the characters it did not classify).
    pub hi: u64,
    /// `[A-Z]` (and after [`wide::wide_cased`], every byte of the non-ASCII letters that are
    /// upper-ish: only (`Lu`, `Lt`) or also lower-ish (`Lm`, `Lo`, a mark after a letter)).
    pub up: u64,
    /// `[a-z]` (and after [`wide::wide_cased`], every byte of the non-ASCII letters that are
    /// lower-ish: only (`Ll`) or also upper-ish, as in `up`; after [`wide::wide`], every byte of
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
    /// The bytes after the lead of each character [`wide::wide`] or [`wide::wide_cased`] classified (0
    /// without them).
    pub cont: u64,
}

impl Masks {
    /// `[A-Za-z]`, and the non-ASCII letters [`wide::wide`] or [`wide::wide_cased`] classified.
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
    /// control characters, and the non-ASCII others [`wide::wide`] or [`wide::wide_cased`] classified; not
    /// the other non-ASCII bytes).
    #[inline(always)]
    pub fn other(&self) -> u64 {
        !(self.letter() | self.digit | self.space | self.tab | self.nl | self.hi)
    }
}
