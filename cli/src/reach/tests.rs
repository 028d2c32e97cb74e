//! `reach`'s judgements on ELF files' parts, and the `std::string` ABI from names.

use super::elf_read::DynSymbol;
use super::*;

fn parts(symbols: &[(&str, bool)], needed: &[&str], marks: [bool; 3]) -> ElfParts {
    ElfParts {
        program: true,
        interpreter: Some("/lib64/ld-linux-x86-64.so.2".into()),
        symbolic: false,
        needed: needed.iter().map(|n| n.to_string()).collect(),
        symbols: symbols
            .iter()
            .map(|&(name, import)| DynSymbol {
                name: name.into(),
                import,
            })
            .collect(),
        relocated: Default::default(),
        marks: marks.to_vec(),
    }
}

const CXX11_OPEN: &str =
    "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_";

#[test]
fn a_program_opening_databases_without_a_policy_is_sent_to_default_bits() {
    // Minetest's server, librime: leveldb::DB::Open imported, no bloom function.
    let found = judge(&parts(
        &[(CXX11_OPEN, true)],
        &["libleveldb.so.1d"],
        [false; 3],
    ));
    assert_eq!(found.verdict, Verdict::OpensWithoutPolicy);
    assert_eq!(found.reached, Some(true));
    assert_eq!(found.default_bits, Some(DefaultBits::Reaches));
    assert!(found
        .verdict
        .route()
        .contains("leveldb-bloom run --default-bits 10"));
    // plyvel's module: the bloom policy and the open, both through the linker.
    let both = [(NEW_POLICY, true), (CXX11_OPEN, true)];
    let found = judge(&parts(&both, &["libleveldb.so.1d"], [false; 3]));
    assert_eq!(found.verdict, Verdict::CallsThroughLinker);
    assert_eq!(found.default_bits, Some(DefaultBits::Reaches));
}

#[test]
fn a_program_linked_with_this_library_is_recognised_by_its_link_order() {
    let calls = [(C_NEW_POLICY, true)];
    let ahead = judge(&parts(
        &calls,
        &["libleveldb_bloom.so.0", "libleveldb.so.1d"],
        [false; 3],
    ));
    assert_eq!(ahead.verdict, Verdict::LinkedAhead);
    assert_eq!(ahead.verdict.route(), "nothing to do");
    let behind = judge(&parts(
        &calls,
        &["libleveldb.so.1d", "libleveldb_bloom.so.0"],
        [false; 3],
    ));
    assert_eq!(behind.verdict, Verdict::LinkedBehind);
    assert!(behind
        .verdict
        .route()
        .contains("-lleveldb_bloom ahead of -lleveldb"));
}

#[test]
fn routes_preload_the_runtime_package_s_file() {
    let found = judge(&parts(
        &[(C_NEW_POLICY, true)],
        &["libleveldb.so.1d"],
        [false; 3],
    ));
    assert!(found
        .verdict
        .route()
        .starts_with("LD_PRELOAD=libleveldb_bloom.so.0,"));
}

#[test]
fn default_bits_need_the_c_api_of_a_leveldb_built_in() {
    // classic-level's addon: LevelDB inside, DB::Open exported and relocated, no C API.
    let mut addon = parts(&[(CXX11_OPEN, false)], &[], [true, true, false]);
    addon.program = false;
    addon.relocated.insert(CXX11_OPEN.to_string());
    assert_eq!(judge(&addon).default_bits, Some(DefaultBits::NoCApi));
    addon.symbols.push(DynSymbol {
        name: C_SET_POLICY.into(),
        import: false,
    });
    assert_eq!(judge(&addon).default_bits, Some(DefaultBits::Reaches));
}

#[test]
fn a_static_program_is_sent_to_a_link_that_works_for_the_c_api_too() {
    let found = judge(&parts(&[], &[], [true, true, false]));
    assert_eq!(
        (found.verdict, found.reached),
        (Verdict::StaticLink, Some(false))
    );
    assert!(found
        .verdict
        .route()
        .contains("-Wl,--allow-multiple-definition"));
    assert_eq!(found.default_bits, Some(DefaultBits::BoundInside));
}

#[test]
fn an_interpreter_is_not_judged_reached_and_points_at_its_modules() {
    let python = judge(&parts(&[("Py_BytesMain", false)], &[], [false; 3]));
    assert_eq!(
        (python.verdict, python.reached),
        (Verdict::PythonInterpreter, None)
    );
    assert!(python.verdict.route().contains("print(m.__file__)"));
    let node = judge(&parts(&[("napi_module_register", false)], &[], [false; 3]));
    assert_eq!(node.verdict, Verdict::NodeInterpreter);
    assert!(node.verdict.route().contains("-name '*.node'"));
}

#[test]
fn names_tell_the_string_abi() {
    let cxx98 = "_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_";
    assert_eq!(string_abi([CXX11_OPEN].into_iter()), Some(StringAbi::Cxx11));
    assert_eq!(
        string_abi(
            [
                cxx98,
                "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_appendEPKcm"
            ]
            .into_iter()
        ),
        Some(StringAbi::Cxx98)
    );
    assert_eq!(
        string_abi(["_ZNSs6appendEPKcm"].into_iter()),
        Some(StringAbi::Cxx98)
    );
    assert_eq!(string_abi(["malloc"].into_iter()), None);
}

#[test]
fn only_unreachable_verdicts_fail() {
    assert_eq!(Verdict::CallsThroughLinker.reached(), Some(true));
    assert_eq!(Verdict::NoLevelDb.reached(), Some(true));
    assert_eq!(Verdict::SymbolicFunctions.reached(), Some(false));
    assert_eq!(Verdict::Hidden.reached(), Some(false));
}
