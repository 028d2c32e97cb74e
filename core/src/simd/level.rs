//! Which instruction set hashes keys in bulk. A vector level is a
//! value that only CPU feature detection makes, so holding one proves the CPU has
//! its features: the kernels compiled for them are called only through it.
//!
//! The level in use is the best the CPU has, or the one `LEVELDB_BLOOM_SIMD` asks for
//! (`scalar`, `avx2` or `avx512`; read at the first call that needs it), so that
//! every path can be run and tested on a machine that has them all. A level the CPU
//! lacks falls back to the best one below it; any other value is ignored.

use std::sync::atomic::{AtomicU8, Ordering};

/// The environment variable that forces a level.
const LEVEL_VARIABLE: &str = "LEVELDB_BLOOM_SIMD";

/// How keys are hashed in bulk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SimdLevel {
    Scalar,
    Vector(Vector),
}

/// A vector instruction set the CPU has (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Vector {
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
}

/// Proof that the CPU has AVX2: made only by [`Name::detect`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2(());

/// Proof that the CPU has AVX-512 F: made only by [`Name::detect`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx512(());

/// The levels' names as `LEVELDB_BLOOM_SIMD` spells them, lowest first.
pub const SIMD_LEVELS: [&str; 3] = ["scalar", "avx2", "avx512"];

/// The levels by name, lowest first (in [`SIMD_LEVELS`]' order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Name {
    Scalar,
    Avx2,
    Avx512,
}

impl Name {
    pub(crate) const ALL: [Self; 3] = [Self::Scalar, Self::Avx2, Self::Avx512];

    /// The name as `LEVELDB_BLOOM_SIMD` spells it.
    pub(crate) fn as_str(self) -> &'static str {
        SIMD_LEVELS[self as usize]
    }

    /// The level of this name, if the CPU has its features.
    pub(crate) fn detect(self) -> Option<SimdLevel> {
        let vector = match self {
            Self::Scalar => return Some(SimdLevel::Scalar),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => is_x86_feature_detected!("avx2").then_some(Vector::Avx2(Avx2(()))),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => {
                is_x86_feature_detected!("avx512f").then_some(Vector::Avx512(Avx512(())))
            }
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx2 | Self::Avx512 => None,
        };
        vector.map(SimdLevel::Vector)
    }
}

impl SimdLevel {
    pub(crate) fn name(self) -> Name {
        match self {
            Self::Scalar => Name::Scalar,
            #[cfg(target_arch = "x86_64")]
            Self::Vector(Vector::Avx2(_)) => Name::Avx2,
            #[cfg(target_arch = "x86_64")]
            Self::Vector(Vector::Avx512(_)) => Name::Avx512,
        }
    }

    /// The vector instruction set, if the level has one.
    pub(crate) fn vector(self) -> Option<Vector> {
        match self {
            Self::Scalar => None,
            Self::Vector(vector) => Some(vector),
        }
    }

    /// The level in use, the same for the whole process. Kept in an atomic rather
    /// than a `OnceLock`: threads that ask first all compute the same answer and
    /// none waits for another, so a child forked while one was computing it never
    /// waits for a thread it does not have.
    pub(crate) fn active() -> Self {
        /// `UNKNOWN`, or the active level's index in [`Name::ALL`].
        static ACTIVE: AtomicU8 = AtomicU8::new(UNKNOWN);
        const UNKNOWN: u8 = u8::MAX;
        let known = ACTIVE.load(Ordering::Relaxed);
        if let Some(level) = Name::ALL
            .get(usize::from(known))
            .and_then(|name| name.detect())
        {
            return level;
        }
        let requested = std::env::var_os(LEVEL_VARIABLE);
        let requested = requested.as_ref().map(|value| value.as_encoded_bytes());
        let ceiling = Name::ALL
            .into_iter()
            .find(|name| requested == Some(name.as_str().as_bytes()))
            .unwrap_or(Name::Avx512);
        let level = Self::best_up_to(ceiling);
        if let Some(index) = Name::ALL.iter().position(|name| *name == level.name()) {
            ACTIVE.store(index as u8, Ordering::Relaxed);
        }
        level
    }

    /// The best level the CPU has at or below `ceiling`.
    fn best_up_to(ceiling: Name) -> Self {
        Name::ALL
            .into_iter()
            .rev()
            .filter(|name| *name <= ceiling)
            .find_map(Name::detect)
            .unwrap_or(Self::Scalar)
    }

    /// Every level the CPU has, lowest first; says on stderr which it lacks (for
    /// tests that run at each level).
    #[cfg(test)]
    pub(crate) fn each_available() -> Vec<Self> {
        let detected = Name::ALL.map(|name| (name, name.detect()));
        for (name, _) in detected.iter().filter(|(_, level)| level.is_none()) {
            eprintln!(
                "SIMD level {} not available on this CPU: skipped",
                name.as_str()
            );
        }
        detected
            .into_iter()
            .filter_map(|(_, level)| level)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_fall_back_to_what_the_cpu_has() {
        assert_eq!(SimdLevel::best_up_to(Name::Scalar), SimdLevel::Scalar);
        for ceiling in Name::ALL {
            let chosen = SimdLevel::best_up_to(ceiling);
            assert!(chosen.name() <= ceiling);
            assert_eq!(chosen.name().detect(), Some(chosen));
        }
        let active = SimdLevel::active();
        assert_eq!(active.name().detect(), Some(active));
    }
}
