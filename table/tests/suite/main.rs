//! The table crate's integration tests as one binary: a module per subject.

mod manifest;
