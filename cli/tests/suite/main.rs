//! The tool's integration tests as one binary: a module per subject, the helpers they
//! share in `common`. One module alone:
//! `cargo test --release -p leveldb-bloom-cli --test suite -- <module>::`.

mod common;

mod audit;
mod completion;
mod explain;
mod family;
mod filter_block;
mod fuzz_tables;
mod hints;
mod live_set;
mod man_pages;
mod mojang;
mod npm_package;
mod reader_needs;
mod refilter;
mod refilter_attacks;
mod refilter_kinds;
mod run;
mod show;
mod wheel;
