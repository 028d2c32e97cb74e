//! The format crate's integration tests as one binary: a module per subject.

mod counter;
mod legacy_false_positives;
mod properties;
