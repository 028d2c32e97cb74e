//! The C library's integration tests as one binary, as cargo's own suite is: a module
//! per subject, the helpers they share in `common`. One module alone:
//! `cargo test --release --test suite -- <module>::`.

#[macro_use]
mod common;

mod abi;
mod amulet;
mod bad_inputs;
mod bench;
mod cpus;
mod decided_once;
mod default_bits;
mod default_bits_object;
mod demo;
mod dropin;
mod fuzz_replay;
mod goleveldb;
mod harnesses;
mod header;
mod header_policy;
mod install;
mod loaders;
mod plyvel_suite;
mod python;
mod reach;
mod reach_source;
mod reach_verdicts;
mod readme;
mod run_as_program;
mod rusty_leveldb;
mod self_bound;
mod stats_destinations;
mod stats_file;
mod string_abi;
