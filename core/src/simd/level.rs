//! Which instruction set hashes keys in bulk. A level is a value that only CPU
//! feature detection makes, so holding one proves the CPU has its features: the
//! kernels compiled for them are called only through it.
//!
//! The caller chooses the level: [`SimdLevel::best`], the best the CPU has (the
//! default), or [`SimdLevel::up_to`] a named one, so that every path can be run and
//! tested on a machine that has them all. The crate keeps no level of its own and
//! reads no environment.

/// An instruction set this CPU has for hashing keys in bulk, when building filters
/// and in batch queries: `scalar`, `avx2` (8 keys at once) or `avx512` (16). Every
/// level gives the same bytes and the same answers; the best is the fastest.
///
/// ```
/// use leveldb_bloom::{BloomFilterPolicy, SimdLevel};
///
/// let policy = BloomFilterPolicy::new(10);
/// let keys = ["hello", "world"];
/// let mut scalar = vec![0; policy.filter_len(keys.len()).unwrap()];
/// policy.write_filter_at(keys, &mut scalar, SimdLevel::up_to("scalar").unwrap())?;
/// assert_eq!(scalar, policy.build_filter(keys));
/// assert_eq!(SimdLevel::up_to("scalar").unwrap().name(), "scalar");
/// assert!(SimdLevel::up_to("sse9").is_none());
/// # Ok::<(), leveldb_bloom::WrongFilterLength>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimdLevel(Level);

/// The best level this CPU has.
impl Default for SimdLevel {
    fn default() -> Self {
        Self::best()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
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

/// The levels' names ([`SimdLevel::name`]), lowest first.
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

    /// The name, as [`SimdLevel::name`] spells it.
    pub(crate) fn as_str(self) -> &'static str {
        SIMD_LEVELS[self as usize]
    }

    /// The level of this name, if the CPU has its features.
    pub(crate) fn detect(self) -> Option<SimdLevel> {
        let vector = match self {
            Self::Scalar => return Some(SimdLevel(Level::Scalar)),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => is_x86_feature_detected!("avx2").then_some(Vector::Avx2(Avx2(()))),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => {
                is_x86_feature_detected!("avx512f").then_some(Vector::Avx512(Avx512(())))
            }
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx2 | Self::Avx512 => None,
        };
        vector.map(|vector| SimdLevel(Level::Vector(vector)))
    }
}

impl SimdLevel {
    /// The best level this CPU has: what every function without a level uses.
    pub fn best() -> Self {
        Self::best_up_to(Name::Avx512)
    }

    /// The best level this CPU has at or below the level named `name` (one of
    /// [`SIMD_LEVELS`]), or `None` for any other name: a level the CPU lacks gives
    /// the best one below it.
    pub fn up_to(name: &str) -> Option<Self> {
        let ceiling = Name::ALL.into_iter().find(|level| level.as_str() == name)?;
        Some(Self::best_up_to(ceiling))
    }

    /// The level's name, one of [`SIMD_LEVELS`].
    pub fn name(self) -> &'static str {
        self.id().as_str()
    }

    pub(crate) fn id(self) -> Name {
        match self.0 {
            Level::Scalar => Name::Scalar,
            #[cfg(target_arch = "x86_64")]
            Level::Vector(Vector::Avx2(_)) => Name::Avx2,
            #[cfg(target_arch = "x86_64")]
            Level::Vector(Vector::Avx512(_)) => Name::Avx512,
        }
    }

    /// The vector instruction set, if the level has one.
    pub(crate) fn vector(self) -> Option<Vector> {
        match self.0 {
            Level::Scalar => None,
            Level::Vector(vector) => Some(vector),
        }
    }

    /// The best level the CPU has at or below `ceiling`.
    fn best_up_to(ceiling: Name) -> Self {
        Name::ALL
            .into_iter()
            .rev()
            .filter(|name| *name <= ceiling)
            .find_map(Name::detect)
            .unwrap_or(Self(Level::Scalar))
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
        assert_eq!(SimdLevel::up_to("scalar"), Some(SimdLevel(Level::Scalar)));
        for ceiling in Name::ALL {
            let chosen = SimdLevel::up_to(ceiling.as_str()).unwrap();
            assert!(chosen.id() <= ceiling);
            assert_eq!(chosen.id().detect(), Some(chosen));
        }
        let best = SimdLevel::best();
        assert_eq!(best.id().detect(), Some(best));
        assert_eq!(SimdLevel::default(), best);
        assert_eq!(SimdLevel::up_to("avx512"), Some(best));
        for other in ["", "AVX2", "sse9", "avx2 "] {
            assert_eq!(SimdLevel::up_to(other), None, "{other:?}");
        }
    }
}
