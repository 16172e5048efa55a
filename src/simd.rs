//! The instruction sets the hot loops are compiled for, one zero-sized token per level. Only
//! [`Baseline`] can be made without asking the CPU, so holding an [`Avx2`], [`Avx512`] or
//! [`Avx512Vbmi`] proves the CPU has its features: code compiled with `#[target_feature]` for a
//! level takes its token, and a call with the token is safe.
//!
//! The release build targets the x86_64 baseline, so a loop that gains from wider registers is
//! written once, generic over a token, and compiled in one copy per level; [`best`] picks the
//! copy once per call (`Encoder::encode_in_batches`, `Splitter::split_bounds`). The block path
//! of the scanners is what the tokens are for (`pretokenize::isa` says what each level gives
//! it); the short merge and the Python bindings' UTF-8 conversion ask for their levels here too.
//!
//! Every token's `detect` also asks the process's [`ceiling`]: [`limit_to`] makes the loops run a
//! lower level than the CPU has (the Python module sets it from `TOKENMILL_ISA` at import), so
//! tests can run each copy end to end on a machine that has them all.

use crate::error::Error;
use std::sync::atomic::{AtomicU8, Ordering};

/// A level of the hot loops, lowest first: which of their copies may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// [`Baseline`] only: SSE2 on x86_64, plain Rust elsewhere.
    Portable = 0,
    /// Up to [`Avx2`].
    Avx2 = 1,
    /// Up to [`Avx512`].
    Avx512 = 2,
    /// Everything: [`Avx512Vbmi`] and [`Avx512Vbmi2`].
    Avx512Vbmi = 3,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 4] = [
        Level::Portable,
        Level::Avx2,
        Level::Avx512,
        Level::Avx512Vbmi,
    ];

    /// The level's name, as `TOKENMILL_ISA` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
            Level::Avx512Vbmi => "avx512vbmi",
        }
    }

    /// The level named `name`.
    pub fn parse(name: &str) -> Result<Level, Error> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == name)
            .ok_or_else(|| Error::UnsupportedIsa {
                message: format!(
                    "unknown instruction set {name:?}: expected one of {}",
                    Level::ALL.map(Level::name).join(", ")
                ),
            })
    }

    /// Whether this CPU can run the level's copies.
    pub fn on_this_cpu(self) -> bool {
        match self {
            Level::Portable => true,
            Level::Avx2 => Avx2::cpu_has(),
            Level::Avx512 => Avx512::cpu_has(),
            Level::Avx512Vbmi => Avx512Vbmi::cpu_has(),
        }
    }
}

/// The highest level the loops may run (a `Level` as a number; all of them unless limited).
static CEILING: AtomicU8 = AtomicU8::new(Level::Avx512Vbmi as u8);

/// The highest level the loops may run in this process.
pub fn ceiling() -> Level {
    Level::ALL[usize::from(CEILING.load(Ordering::Relaxed)).min(Level::ALL.len() - 1)]
}

/// Run at most `level` from now on; an error if this CPU cannot run it. A debugging aid (the
/// copies' results are equal; tests prove it by running each), set once before any work.
pub fn limit_to(level: Level) -> Result<(), Error> {
    if !level.on_this_cpu() {
        return Err(Error::UnsupportedIsa {
            message: format!(
                "this CPU cannot run the {} copies; it can run {}",
                level.name(),
                supported().map(Level::name).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    CEILING.store(level as u8, Ordering::Relaxed);
    Ok(())
}

/// The levels this CPU can run, lowest first.
pub fn supported() -> impl Iterator<Item = Level> {
    Level::ALL.into_iter().filter(|l| l.on_this_cpu())
}

/// The level the loops run now: the highest this CPU has, at most the [`ceiling`].
pub fn in_use() -> Level {
    match best() {
        Best::Avx512Vbmi(_) => Level::Avx512Vbmi,
        Best::Avx512(_) => Level::Avx512,
        Best::Avx2(_) => Level::Avx2,
        Best::Baseline(_) => Level::Portable,
    }
}

#[inline(always)]
fn allows(level: Level) -> bool {
    CEILING.load(Ordering::Relaxed) >= level as u8
}

/// The x86_64 baseline (SSE2) or, on other targets, plain Rust.
#[derive(Clone, Copy, Debug, Default)]
pub struct Baseline;

/// AVX2, BMI1 and BMI2, LZCNT and POPCNT (x86-64-v3).
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

/// x86-64-v3 and AVX-512F and BW.
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

/// [`Avx512`] and AVX-512 VBMI: byte permutes across a whole register, which class characters of
/// two and three bytes by bit tables (`pretokenize::blocks::vbmi`). A token of its own, not a
/// flag of [`Avx512`]'s, so that the copies of the loops compiled for it inline those.
#[derive(Clone, Copy, Debug)]
pub struct Avx512Vbmi(());

/// AVX-512F, BW, VBMI2 and POPCNT: the compress of bytes that writes UTF-8 16 code points at a
/// time (`py/code_units.rs`).
#[derive(Clone, Copy, Debug)]
pub struct Avx512Vbmi2(());

impl Avx2 {
    /// The token, if the CPU has the features and the [`ceiling`] allows them.
    #[inline]
    pub fn detect() -> Option<Avx2> {
        (allows(Level::Avx2) && Avx2::cpu_has()).then_some(Avx2(()))
    }

    fn cpu_has() -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt")
        {
            return true;
        }
        false
    }
}

impl Avx512 {
    /// The token, if the CPU has the features and the [`ceiling`] allows them.
    #[inline]
    pub fn detect() -> Option<Avx512> {
        (allows(Level::Avx512) && Avx512::cpu_has()).then_some(Avx512(()))
    }

    fn cpu_has() -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && Avx2::cpu_has()
        {
            return true;
        }
        false
    }
}

impl Avx512Vbmi {
    /// The token, if the CPU has the features and the [`ceiling`] allows them.
    #[inline]
    pub fn detect() -> Option<Avx512Vbmi> {
        (allows(Level::Avx512Vbmi) && Avx512Vbmi::cpu_has()).then_some(Avx512Vbmi(()))
    }

    fn cpu_has() -> bool {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512vbmi") && Avx512::cpu_has() {
            return true;
        }
        false
    }

    /// The AVX-512 token, which this one implies.
    #[inline(always)]
    pub fn avx512(self) -> Avx512 {
        Avx512(())
    }
}

impl Avx512Vbmi2 {
    /// The token, if the CPU has the features and the [`ceiling`] allows every level (the
    /// conversion it serves is not one of the loops' copies; it counts as the top level).
    #[inline]
    pub fn detect() -> Option<Avx512Vbmi2> {
        #[cfg(target_arch = "x86_64")]
        if allows(Level::Avx512Vbmi)
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi2")
            && std::is_x86_feature_detected!("popcnt")
        {
            return Some(Avx512Vbmi2(()));
        }
        None
    }
}

/// The highest level of a loop compiled in one copy per level ([`Baseline`], [`Avx2`],
/// [`Avx512`], [`Avx512Vbmi`]) that the CPU can run.
#[derive(Clone, Copy, Debug)]
pub enum Best {
    Avx512Vbmi(Avx512Vbmi),
    Avx512(Avx512),
    Avx2(Avx2),
    Baseline(Baseline),
}

/// The level [`Best`] of this CPU. Always inlined into the callers' dispatch: a call here
/// changes how the code around it is compiled, and slows the scan (docs/performance.md,
/// 'Scanners').
#[inline(always)]
pub fn best() -> Best {
    if let Some(isa) = Avx512Vbmi::detect() {
        return Best::Avx512Vbmi(isa);
    }
    if let Some(isa) = Avx512::detect() {
        return Best::Avx512(isa);
    }
    if let Some(isa) = Avx2::detect() {
        return Best::Avx2(isa);
    }
    Best::Baseline(Baseline)
}
