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
    /// The token, if the CPU has the features.
    #[inline]
    pub fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt")
        {
            return Some(Avx2(()));
        }
        None
    }
}

impl Avx512 {
    /// The token, if the CPU has the features.
    #[inline]
    pub fn detect() -> Option<Avx512> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && Avx2::detect().is_some()
        {
            return Some(Avx512(()));
        }
        None
    }
}

impl Avx512Vbmi {
    /// The token, if the CPU has the features.
    #[inline]
    pub fn detect() -> Option<Avx512Vbmi> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512vbmi") && Avx512::detect().is_some() {
            return Some(Avx512Vbmi(()));
        }
        None
    }

    /// The AVX-512 token, which this one implies.
    #[inline(always)]
    pub fn avx512(self) -> Avx512 {
        Avx512(())
    }
}

impl Avx512Vbmi2 {
    /// The token, if the CPU has the features.
    #[inline]
    pub fn detect() -> Option<Avx512Vbmi2> {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f")
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
