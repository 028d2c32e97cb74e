//! The shared library's ABI: it exports exactly the functions declared in the
//! committed header plus LevelDB's C++ `leveldb::NewBloomFilterPolicy(int)` (the
//! swap), nothing else (no LevelDB function but the policy's, no Rust symbols), and
//! carries the versioned soname; the default-bits object exports LevelDB's open
//! functions and its version, nothing else.

use crate::common;

use std::collections::BTreeSet;
use std::process::Command;

/// The one export the header cannot declare: LevelDB's C++ factory, mangled.
const CXX_NEW_BLOOM_FILTER_POLICY: &str = "_ZN7leveldb20NewBloomFilterPolicyEi";

/// What `libleveldb_bloom_default_bits.so` exports: LevelDB's open functions
/// (`DB::Open` on x86-64 only) and its version.
const DEFAULT_BITS_EXPORTS: [&str; 4] = [
    "leveldb_open",
    "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
    "_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
    "leveldb_bloom_default_bits_version",
];

/// Function names declared in the committed header: every `name(` that begins a
/// declaration outside comments and preprocessor lines.
fn header_functions() -> BTreeSet<String> {
    let header = std::fs::read_to_string(common::repo().join("include/leveldb_bloom.h"))
        .expect("include/leveldb_bloom.h");
    let mut names = BTreeSet::new();
    let mut in_block_comment = false;
    for line in header.lines().map(str::trim) {
        if in_block_comment || line.starts_with("/*") {
            in_block_comment = !line.contains("*/");
            continue;
        }
        if line.starts_with("//") || line.starts_with('#') || line.starts_with("typedef") {
            continue;
        }
        if let Some(open) = line.find('(') {
            let before = &line[..open];
            let name = before
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default();
            if !name.is_empty() {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// Defined dynamic symbols of `lib`, as `nm -D --defined-only` lists them.
fn exported_symbols(lib: &std::path::Path) -> BTreeSet<String> {
    let output = common::run(Command::new("nm").args(["-D", "--defined-only"]).arg(lib));
    output
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .map(str::to_string)
        .collect()
}

#[test]
fn exports_exactly_the_documented_api() {
    let mut documented = header_functions();
    assert!(
        documented.len() >= 10 && documented.contains("leveldb_filterpolicy_create_filter"),
        "the header parser found too little: {documented:?}"
    );
    documented.insert(CXX_NEW_BLOOM_FILTER_POLICY.to_string());
    let exported = exported_symbols(&common::lib_path());
    let undocumented: Vec<_> = exported.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&exported).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "exported but not in the header: {undocumented:?}\nin the header but not exported: {missing:?}"
    );
}

#[test]
fn default_bits_object_exports_only_the_open_functions() {
    let expected: BTreeSet<String> = DEFAULT_BITS_EXPORTS
        .iter()
        .filter(|name| cfg!(target_arch = "x86_64") || !name.starts_with("_ZN"))
        .map(|name| name.to_string())
        .collect();
    assert_eq!(exported_symbols(&common::default_bits_path()), expected);
}

#[test]
fn exports_are_functions() {
    let lib = common::lib_path();
    let output = common::run(Command::new("nm").args(["-D", "--defined-only"]).arg(&lib));
    for line in output.lines() {
        let fields: Vec<_> = line.split_whitespace().collect();
        assert_eq!(fields.get(1), Some(&"T"), "not a text symbol: {line}");
    }
}

#[test]
fn carries_the_versioned_soname() {
    let output = common::run(Command::new("readelf").arg("-d").arg(common::lib_path()));
    let sonames: Vec<_> = output
        .lines()
        .filter(|line| line.contains("(SONAME)"))
        .collect();
    assert_eq!(sonames.len(), 1, "{output}");
    assert!(
        sonames[0].contains(&format!("[{}]", common::SONAME)),
        "{}",
        sonames[0]
    );
}
