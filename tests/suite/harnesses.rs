//! Every C and C++ harness of `c_tests/` that checks on its own, in one table: one row
//! per harness build (sources, language, link order, defines), listing the runs it
//! gets (plain, valgrind, helgrind, sanitizers, each SIMD level, arguments and
//! environment). Each run is one `#[test]`, named `harnesses::<row>::<run>`
//! (`cargo test --release --test suite -- harnesses::api_test`), judged by the one protocol of
//! `c_tests/check.h`: exit status 0 and `NAME: N checks, 0 failed`, N > 0
//! (tests/suite/common/harness.rs). Adding a harness: its file in `c_tests/`, and a row here.
//!
//! Runs whose outcome is not a pass (helgrind's control race) and checks on a
//! harness's binary are ordinary tests, in `harnesses/outside_the_table.rs`.

use crate::common;

use common::harness::{harness, reference_compared, Harness, BLOOM, BLOOM_STATIC};
use common::Lang::{Cxx11, Cxx17, C99};

mod outside_the_table;

/// One module per row: `row: harness(...) => { run: mode().args(..)..., ... }`.
macro_rules! harnesses {
    ($(
        $(#[$doc:meta])*
        $row:ident: $harness:expr => { $($run:ident: $how:expr),* $(,)? }
    )*) => {$(
        $(#[$doc])*
        mod $row {
            use super::*;

            pub const HARNESS: Harness = $harness;

            $(
                #[test]
                fn $run() {
                    // The runs' builders, over the tests named like them.
                    #[allow(unused_imports)]
                    use crate::common::harness::{
                        helgrind, plain, sanitizers, valgrind, valgrind_leveldb,
                    };
                    $how.run(&HARNESS);
                }
            )*
        }
    )*};
}

harnesses! {
    /// Every exported function and every bad input with its documented result, from a
    /// plain C99 program without LevelDB.
    api_test: harness("api_test", "api_test", C99, &["c_tests/api_test.c"], &[BLOOM]) => {
        plain: plain(),
        valgrind: valgrind(),
        sanitizers: sanitizers(),
    }

    /// The policy objects a C program holds: both names of each function, 70,000 of
    /// them, the C++ header's creators and their writer misused.
    api_policies: harness("api_policies", "api_policies", C99, &["c_tests/api_policies.c"], &[BLOOM]) => {
        plain: plain(),
        valgrind: valgrind(),
        sanitizers: sanitizers(),
    }

    /// LevelDB's own bloom filter properties (util/bloom_test.cc) on our filters.
    bloom_properties: harness(
        "bloom_properties", "bloom_properties", C99, &["c_tests/bloom_properties.c"], &[BLOOM]
    ) => {
        plain: plain().then(|stdout| print!("{stdout}")),
        valgrind: valgrind(),
        sanitizers: sanitizers(),
    }

    /// Our library against the real LevelDB 1.23: fixed edge cases and generated cases
    /// with fixed seeds, filters byte for byte, answers bit for bit (fewer generated
    /// cases under valgrind, which is slow: every fixed case still runs).
    reference_test: harness(
        "reference_test", "reference_test", Cxx17, &["c_tests/reference_test.cc"], &["-lleveldb"]
    ) => {
        plain: plain().args(&["{lib}", "3000"]).then(|out| reference_compared(out, 3000)),
        valgrind: valgrind().args(&["{lib}", "50", "--quick"]).then(|out| reference_compared(out, 50)),
        sanitizers: sanitizers().args(&["{lib}", "1000"]).then(|out| reference_compared(out, 1000)),
    }

    /// The sweep of every bad input against the real LevelDB, on each kind of handle
    /// (the rows of the README's table; tests/suite/bad_inputs.rs has those needing a
    /// process without LevelDB).
    bad_inputs: harness("bad_inputs", "bad_inputs", Cxx17, &["c_tests/bad_inputs.cc"], &["-lleveldb", "-ldl"]) => {
        plain: plain().env("LEVELDB_BLOOM_LIB", "{lib}").then(|out| print!("{out}")),
        valgrind: valgrind().env("LEVELDB_BLOOM_LIB", "{lib}"),
        sanitizers: sanitizers().env("LEVELDB_BLOOM_LIB", "{lib}"),
    }

    /// The batch query and filter building at every SIMD level this CPU has
    /// (`LEVELDB_BLOOM_SIMD` forces it; a level the CPU lacks is skipped, and said so),
    /// against LevelDB and our one-key answers; and unknown level names ignored.
    batch_test: harness("batch_test", "batch_test", Cxx11, &["c_tests/batch_test.cc"], &["-lleveldb", "-ldl"]) => {
        scalar: plain().args(&["{lib}"]).env("LEVELDB_BLOOM_SIMD", "scalar")
            .expect("simd level: scalar\n"),
        avx2: plain().args(&["{lib}"]).env("LEVELDB_BLOOM_SIMD", "avx2")
            .only_if(|| simd_available("avx2"), "SIMD level avx2")
            .expect("simd level: avx2\n"),
        avx512: plain().args(&["{lib}"]).env("LEVELDB_BLOOM_SIMD", "avx512")
            .only_if(|| simd_available("avx512"), "SIMD level avx512")
            .expect("simd level: avx512\n"),
        sanitizers: sanitizers().args(&["{lib}"]),
        unknown_level_names_are_ignored: plain().args(&["{lib}", "--level"])
            .env("LEVELDB_BLOOM_SIMD", "sse9")
            .then(|out| assert!(out.contains(&format!("simd level: {}\n", best_simd_level())), "{out}")),
    }

    /// One policy shared by 8 threads gives exactly the single-threaded results, also
    /// under helgrind. Helgrind rather than ThreadSanitizer: TSan sees only code
    /// compiled with it, and stable Rust cannot build the library with it; helgrind
    /// watches the machine code, the library's included. Its blind spot, atomics, is
    /// handled by c_tests/helgrind.supp, and a control run with a deliberate race
    /// (`helgrind_reports_a_deliberate_race`) proves it still reports plain races.
    threads: harness("threads", "threads", C99, &["c_tests/threads.c"], &["-pthread", BLOOM]) => {
        plain: plain().then(|out| print!("{out}")),
        sanitizers: sanitizers(),
        helgrind: helgrind().args(&["3"]).then(|out| print!("helgrind: {out}")),
    }

    /// A child forked at any instant from a multithreaded process can use the
    /// library: 6 threads create, query (both paths, so the registry is looked up)
    /// and destroy policies while the main thread forks 500 times, and every child,
    /// under an alarm, checks the shared policy and creates, uses and destroys 20 of
    /// its own; then 200 fresh processes each fork while another thread makes their
    /// first call into the library. Without LevelDB, linked statically, with LevelDB
    /// linked (2 more threads open and close databases with the bloom policy), and
    /// preloaded into a program linked to LevelDB alone.
    fork_alone: harness(
        "fork_alone", "fork_churn", C99, &["c_tests/fork_churn.c"], &["-pthread", "-Wl,--no-as-needed", BLOOM, "-ldl"]
    ) => {
        churn: plain().args(&["churn", "500"]).expect("500 children passed, 0 hung")
            .then(|out| print!("{out}")),
        first_use: plain().args(&["first-use", "200"]).expect("200 children passed, 0 hung")
            .then(|out| print!("{out}")),
    }
    fork_static: harness(
        "fork_static", "fork_churn", C99, &["c_tests/fork_churn.c"], &["-DSTATIC_LIBRARY", "-pthread", BLOOM_STATIC]
    ) => {
        churn: plain().args(&["churn", "500"]).expect("500 children passed, 0 hung")
            .then(|out| print!("{out}")),
    }
    fork_leveldb: harness(
        "fork_leveldb", "fork_churn", C99, &["c_tests/fork_churn.c"],
        &["-DWITH_LEVELDB", "-pthread", "-Wl,--no-as-needed", BLOOM, "-lleveldb", "-ldl"]
    ) => {
        churn: plain().args(&["churn", "500", "{dir}"]).expect("500 children passed, 0 hung")
            .expect("swap status 3").then(|out| print!("{out}")),
        first_use: plain().args(&["first-use", "200"]).expect("200 children passed, 0 hung")
            .then(|out| print!("{out}")),
    }
    fork_preloaded: harness(
        "fork_preloaded", "fork_churn", C99, &["c_tests/fork_churn.c"], &["-DWITH_LEVELDB", "-pthread", "-lleveldb", "-ldl"]
    ) => {
        churn: plain().args(&["churn", "500", "{dir}"]).env("LD_PRELOAD", "{lib}")
            .expect("500 children passed, 0 hung").expect("swap status 3").then(|out| print!("{out}")),
        first_use: plain().args(&["first-use", "200"]).env("LD_PRELOAD", "{lib}")
            .expect("200 children passed, 0 hung").then(|out| print!("{out}")),
    }

    /// Another library's fork handlers, registered before this library's, create and
    /// use policies while the library's handlers hold its locks (prepare handlers run
    /// in reverse order): 200 forks under an alarm, none hangs.
    fork_order: harness("fork_order", "fork_order", C99, &["c_tests/fork_order.c"], &["-pthread", "-ldl"]) => {
        plain: plain().args(&["{lib}", "200"]).expect("200 forks, 400 handler uses in the parent"),
        helgrind: helgrind().args(&["{lib}", "20"]).expect("20 forks, 40 handler uses in the parent"),
    }

    /// Filter statistics counted by 8 threads building and querying at once are
    /// exact, and the struct's size rules hold.
    stats_threads: harness("stats_threads", "stats_threads", C99, &["c_tests/stats_threads.c"], &["-pthread", BLOOM]) => {
        plain: plain().then(|out| print!("{out}")),
        helgrind: helgrind().then(|out| print!("helgrind: {out}")),
    }

    /// Filter statistics through the C++ header: equal to the calls LevelDB made,
    /// as a wrapping policy recorded them.
    stats_cxx: harness("stats_cxx", "stats_cxx", Cxx11, &["c_tests/stats_cxx.cc"], &[BLOOM, "-lleveldb"]) => {
        plain: plain().args(&["{dir}"]).then(|out| print!("{out}")),
    }

    /// A LevelDB database using the library through the swap: every read right under
    /// a writer, concurrent readers and compactions; and when its filters cannot be
    /// allocated (the failmalloc shim), down to even the 2-byte match-all filter
    /// (allocations failing in bursts of two, with successes in between: returning
    /// NULL there would make LevelDB store an empty filter, "absent" for every key).
    db_check: harness(
        "db_check", "db_check", Cxx17, &["c_tests/db_check.cc"], &["-pthread", BLOOM, "-lleveldb", "-ldl"]
    ) => {
        concurrent: plain().args(&["concurrent", "{dir}"]).expect("filters written")
            .then(|out| print!("{out}")),
        failing_filters: plain().args(&["failing-filters", "{dir}"]).env("LD_PRELOAD", "{failmalloc}")
            .expect("allocations made to fail").then(|out| print!("{out}")),
        failing_bursts: plain().args(&["failing-bursts", "{dir}"]).env("LD_PRELOAD", "{failmalloc}")
            .expect("allocations made to fail").then(|out| print!("{out}")),
    }

    /// The C API under allocation failure (the failmalloc shim fails only allocations
    /// requested by libleveldb_bloom): the real filter, 00 FF or NULL with length 0,
    /// never a false negative, nothing crashes or leaks.
    alloc_failure: harness(
        "alloc_failure", "alloc_failure", C99, &["c_tests/alloc_failure.c"], &[BLOOM, "-ldl"]
    ) => {
        plain: plain().env("LD_PRELOAD", "{failmalloc}").expect("allocations made to fail")
            .then(|out| print!("{out}")),
    }

    /// LevelDB's CreateFilter when memory runs out: starving this library changes
    /// nothing (building a filter allocates nothing), and a failing growth of LevelDB's
    /// string throws std::bad_alloc, the string untouched, as LevelDB's own policy does.
    dropin_oom: harness(
        "dropin_oom", "dropin_oom", Cxx11, &["c_tests/dropin_oom.cc"],
        // Keeps LevelDB loaded: the program calls nothing else of it.
        &["-Wl,--no-as-needed", BLOOM, "-lleveldb", "-ldl"]
    ) => {
        library: plain().args(&["library"]).env("LD_PRELOAD", "{failmalloc}"),
        string: plain().args(&["string"]).env("LD_PRELOAD", "{failmalloc}"),
    }

    /// Custom LevelDB policies, LevelDB's own bloom policy and the swapped ones are all
    /// released by this library's destroy, without leaks or bad frees (valgrind);
    /// with the swap (`-lleveldb_bloom -lleveldb`) every function of the library
    /// accepts the policy `leveldb_filterpolicy_create_bloom` returned.
    dropin_release_swapped: harness(
        "dropin_release_swapped", "dropin_release", C99, &["c_tests/dropin_release.c"], &[BLOOM, "-lleveldb"]
    ) => {
        valgrind: valgrind_leveldb().expect("swap status: 3\n")
            .expect("leveldb_filterpolicy_destroy: libleveldb_bloom\n"),
    }

    /// The same with the wrong link order (`-lleveldb -lleveldb_bloom`): nothing is
    /// swapped, and nothing fails.
    dropin_release_unswapped: harness(
        "dropin_release_unswapped", "dropin_release", C99, &["c_tests/dropin_release.c"], &["-lleveldb", BLOOM]
    ) => {
        valgrind: valgrind_leveldb().expect("swap status: 0\n")
            .expect("leveldb_filterpolicy_destroy: LevelDB\n"),
    }

    /// The C++ header's RAII handle and FilterPolicy against LevelDB's own policy
    /// (LevelDB linked first, so its NewBloomFilterPolicy is the reference), C++11.
    hpp_policy_cxx11: harness(
        "hpp_policy_cxx11", "hpp_policy", Cxx11, &["c_tests/hpp_policy.cc"], &["-lleveldb", BLOOM]
    ) => {
        plain: plain(),
    }

    /// The same as C++17, also under valgrind.
    hpp_policy_cxx17: harness(
        "hpp_policy_cxx17", "hpp_policy", Cxx17, &["c_tests/hpp_policy.cc"], &["-lleveldb", BLOOM]
    ) => {
        plain: plain(),
        valgrind: valgrind_leveldb(),
    }

    /// The C++ header without LevelDB, against this library's C API, C++11.
    hpp_policy_alone_cxx11: harness(
        "hpp_policy_alone_cxx11", "hpp_policy", Cxx11, &["c_tests/hpp_policy.cc"],
        &["-DLEVELDB_BLOOM_WITH_LEVELDB=0", BLOOM]
    ) => {
        plain: plain(),
    }

    /// The same as C++17.
    hpp_policy_alone_cxx17: harness(
        "hpp_policy_alone_cxx17", "hpp_policy", Cxx17, &["c_tests/hpp_policy.cc"],
        &["-DLEVELDB_BLOOM_WITH_LEVELDB=0", BLOOM]
    ) => {
        plain: plain(),
    }

    /// The C++ header in a program built against libc++ (GCC with libc++'s headers and
    /// library): LevelDB's headers only, since Debian's LevelDB has libstdc++'s
    /// `std::string`; the policies of `NewBloomFilterPolicy` grow libc++ strings.
    hpp_policy_libcxx_cxx11: harness(
        "hpp_policy_libcxx_cxx11", "hpp_policy", Cxx11, &["c_tests/hpp_policy.cc"], &LIBCXX
    ) => {
        plain: plain().only_if(libcxx_available, "libc++ (libc++-dev)"),
    }

    /// The same as C++17.
    hpp_policy_libcxx_cxx17: harness(
        "hpp_policy_libcxx_cxx17", "hpp_policy", Cxx17, &["c_tests/hpp_policy.cc"], &LIBCXX
    ) => {
        plain: plain().only_if(libcxx_available, "libc++ (libc++-dev)"),
    }

    /// The committed header compiles cleanly as C99 and C++11, alone and beside
    /// LevelDB's `<leveldb/c.h>` in either order, and works.
    header_alone_c: harness("header_alone_c", "header_check", C99, &["c_tests/header_check.c"], &["-DHEADER_ALONE", BLOOM]) => {
        plain: plain(),
    }
    header_ours_first_c: harness("header_ours_first_c", "header_check", C99, &["c_tests/header_check.c"], &["-DOURS_FIRST", BLOOM]) => {
        plain: plain(),
    }
    header_leveldb_first_c: harness("header_leveldb_first_c", "header_check", C99, &["c_tests/header_check.c"], &["-DLEVELDB_FIRST", BLOOM]) => {
        plain: plain(),
    }
    header_alone_cc: harness("header_alone_cc", "header_check", Cxx11, &["c_tests/header_check.c"], &["-DHEADER_ALONE", BLOOM]) => {
        plain: plain(),
    }
    header_ours_first_cc: harness("header_ours_first_cc", "header_check", Cxx11, &["c_tests/header_check.c"], &["-DOURS_FIRST", BLOOM]) => {
        plain: plain(),
    }
    header_leveldb_first_cc: harness("header_leveldb_first_cc", "header_check", Cxx11, &["c_tests/header_check.c"], &["-DLEVELDB_FIRST", BLOOM]) => {
        plain: plain(),
    }

    /// Where `<leveldb/c.h>` is missing the header declares the opaque type itself: an
    /// empty `leveldb/c.h` first on the include path stands in for a missing one.
    header_fallback_c: harness(
        "header_fallback_c", "header_check", C99, &["c_tests/header_check.c"],
        &["-DHEADER_ALONE", "-DEXPECT_FALLBACK_TYPEDEF", "-isystem", "{fallback_include}", BLOOM]
    ) => {
        plain: plain(),
    }
    header_fallback_cc: harness(
        "header_fallback_cc", "header_check", Cxx11, &["c_tests/header_check.c"],
        &["-DHEADER_ALONE", "-DEXPECT_FALLBACK_TYPEDEF", "-isystem", "{fallback_include}", BLOOM]
    ) => {
        plain: plain(),
    }
}

/// Whether this CPU can run `level` (as the library decides it, in core/src/simd.rs).
fn simd_available(level: &str) -> bool {
    match level {
        "scalar" => true,
        #[cfg(target_arch = "x86_64")]
        "avx2" => is_x86_feature_detected!("avx2"),
        #[cfg(target_arch = "x86_64")]
        "avx512" => is_x86_feature_detected!("avx512f"),
        _ => false,
    }
}

fn best_simd_level() -> &'static str {
    ["avx512", "avx2", "scalar"]
        .into_iter()
        .find(|level| simd_available(level))
        .expect("scalar always is")
}

/// libc++'s headers, where Debian's libc++-dev puts them.
const LIBCXX_HEADERS: &str = "/usr/include/c++/v1";

/// Flags that build a C++ harness against libc++ with GCC (its headers instead of
/// libstdc++'s, its library and runtime instead), LevelDB's headers only.
const LIBCXX: [&str; 13] = [
    "-nostdinc++",
    "-isystem",
    LIBCXX_HEADERS,
    "-DLEVELDB_LINKED=0",
    BLOOM,
    "-nodefaultlibs",
    "-lc++",
    "-lc++abi",
    "-lm",
    "-lc",
    "-lgcc_s",
    "-lgcc",
    "-lpthread",
];

/// Whether libc++ is installed (`scripts/ensure-leveldb` installs it).
fn libcxx_available() -> bool {
    std::path::Path::new(LIBCXX_HEADERS).join("string").exists()
}
