//! Builds the C++ policy object (`src/dropin/filter_policy.cc`) and, once per
//! `std::string` ABI, its append function; sets the shared library's soname and, with the `header`
//! feature, generates the C header from the Rust source with the pinned cbindgen.
//!
//! With `header`, the header is written to `$OUT_DIR/leveldb_bloom.h`; a test fails
//! when it differs from the committed `include/leveldb_bloom.h`. `make header`
//! (which sets `LEVELDB_BLOOM_WRITE_HEADER=1`) refreshes the committed copy.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=src");
    #[cfg(feature = "header")]
    generate_header();
    build_filter_policy();

    // The exported policy creators pass their caller's address on with two
    // instructions of assembly (loader::with_caller!) on the CPUs it names;
    // elsewhere the caller is unknown, and the global scope decides.
    println!("cargo:rustc-check-cfg=cfg(caller_asm)");
    let arch = env::var("CARGO_CFG_TARGET_ARCH").expect("set by cargo");
    if loader::CPUS.contains(&arch.as_str()) {
        println!("cargo:rustc-cfg=caller_asm");
    }

    // The C harnesses in tests/ compile for the same target.
    println!(
        "cargo:rustc-env=LEVELDB_BLOOM_TARGET={}",
        env::var("TARGET").expect("set by cargo")
    );

    run_as_program();

    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{SONAME}");
    soname_link();
    // Never unmapped, even by a dlclose: LevelDB calls the callbacks of the policies
    // made here for as long as a database uses them.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}

/// The C++ policy object, `src/dropin/filter_policy.cc`, and its append function,
/// `src/dropin/string_append.cc` (the C++ header's, `include/leveldb_bloom.hpp`),
/// compiled for each `std::string` ABI a LevelDB may have been built with (the object
/// once: it touches no string): `_GLIBCXX_USE_CXX11_ABI` 1 (GCC's default since 5.1)
/// and 0. Both include the committed `include/leveldb_bloom.h` (its types); links
/// libstdc++, which the appends need, and lists the string members they import
/// (`OWN_IMPORTS`, see src/dropin/string_abi.rs).
fn build_filter_policy() {
    const DIR: &str = "src/dropin";
    for file in ["filter_policy.cc", "string_append.cc", "policy_calls.h"] {
        println!("cargo:rerun-if-changed={DIR}/{file}");
    }
    for file in ["leveldb_bloom.h", "leveldb_bloom.hpp"] {
        println!("cargo:rerun-if-changed=include/{file}");
    }
    let out_dir = std::path::PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    let build = || {
        let mut build = cc::Build::new();
        build
            .cpp(true)
            .std("c++11")
            .include("include")
            .warnings_into_errors(true);
        build
    };
    build()
        .file(format!("{DIR}/filter_policy.cc"))
        .compile("leveldb_bloom_filter_policy");
    let mut own_imports = Vec::new();
    for (abi, name) in [("1", "cxx11"), ("0", "cxx98")] {
        let library = format!("leveldb_bloom_string_append_{name}");
        build()
            .file(format!("{DIR}/string_append.cc"))
            .out_dir(out_dir.join(format!("string-abi-{abi}")))
            .define("_GLIBCXX_USE_CXX11_ABI", abi)
            .define(
                "LEVELDB_BLOOM_APPEND",
                format!("leveldb_bloom_append_{name}").as_str(),
            )
            .compile(&library);
        own_imports.extend(string_imports(
            &out_dir.join(format!("string-abi-{abi}/lib{library}.a")),
        ));
    }
    own_imports.sort();
    own_imports.dedup();
    let list: String = own_imports
        .iter()
        .map(|name| format!("    b\"{name}\",\n"))
        .collect();
    std::fs::write(
        out_dir.join("own_string_imports.rs"),
        format!(
            "const OWN_IMPORTS: [&[u8]; {}] = [\n{list}];\n",
            own_imports.len()
        ),
    )
    .expect("OUT_DIR is writable");
}

/// The `std::string` members (either ABI) the objects of `archive` import, by `nm`
/// (`$NM`, else `nm`).
fn string_imports(archive: &std::path::Path) -> Vec<String> {
    println!("cargo:rerun-if-env-changed=NM");
    let nm = env::var("NM").unwrap_or_else(|_| "nm".into());
    let output = std::process::Command::new(&nm)
        .args(["--undefined-only", "-P"])
        .arg(archive)
        .output()
        .unwrap_or_else(|error| panic!("{nm} lists the string members the helpers use: {error}"));
    assert!(
        output.status.success(),
        "{nm} {}: {:?}",
        archive.display(),
        output
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| {
            [
                "_ZNSt7__cxx1112basic_string",
                "_ZNKSt7__cxx1112basic_string",
                "_ZNSs",
                "_ZNKSs",
            ]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        })
        .map(str::to_owned)
        .collect()
}

/// The shared library run as a program (`src/run_as_program.rs`): an `.interp`
/// section naming the target's dynamic linker, as glibc's `libc.so.6` has, and the
/// module's entry point; for the shared library only (an `.interp` in
/// `libleveldb_bloom.a` would give a static program linked with it an interpreter).
/// A target whose dynamic linker is not known here gets neither, and builds as
/// before.
fn run_as_program() {
    println!("cargo:rustc-check-cfg=cfg(run_as_program)");
    let Some(interpreter) = dynamic_linker(&env::var("TARGET").expect("set by cargo")) else {
        return;
    };
    let out_dir = std::path::PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    let source = out_dir.join("interp.c");
    std::fs::write(
        &source,
        format!(
            "__attribute__((section(\".interp\"), used, retain))\n\
             static const char interpreter[] = \"{interpreter}\";\n"
        ),
    )
    .expect("OUT_DIR is writable");
    // A compiler without `retain` (GCC < 11) warns and builds: the linker may then
    // drop the section, and the library does not run as a program.
    let objects = cc::Build::new()
        .file(&source)
        .out_dir(out_dir.join("interp"))
        .cargo_metadata(false)
        .compile_intermediates();
    for object in objects {
        println!("cargo:rustc-cdylib-link-arg={}", object.display());
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-e,leveldb_bloom_run_as_program");
    println!("cargo:rustc-cfg=run_as_program");
}

/// The dynamic linker glibc's ABI names for `target` (its `PT_INTERP`), where known.
fn dynamic_linker(target: &str) -> Option<&'static str> {
    match target {
        "x86_64-unknown-linux-gnu" => Some("/lib64/ld-linux-x86-64.so.2"),
        "aarch64-unknown-linux-gnu" => Some("/lib/ld-linux-aarch64.so.1"),
        _ => None,
    }
}

/// The shared library's soname: it carries the ABI version (major version 0: the API
/// may still grow; the filter format never changes).
const SONAME: &str = "libleveldb_bloom.so.0";

/// A C program linked against `target/<profile>` (what a plain `cargo build` leaves)
/// looks for the library by its soname when it starts: the link gives it that name
/// there. Best effort: the link points at the library's name, and an existing one is
/// left alone.
fn soname_link() {
    let out_dir = std::path::PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    if let Some(profile_dir) = out_dir.ancestors().nth(3) {
        let _ = std::os::unix::fs::symlink("libleveldb_bloom.so", profile_dir.join(SONAME));
    }
}

#[cfg(feature = "header")]
fn generate_header() {
    use std::fs;
    use std::path::PathBuf;

    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=LEVELDB_BLOOM_WRITE_HEADER");

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is valid");
    // The version, from Cargo.toml alone.
    let version = |part| env::var(part).expect("set by cargo");
    config.after_includes = Some(format!(
        "{}\n\n/* This header's version; leveldb_bloom_version() gives the library's. */\n\
         #define LEVELDB_BLOOM_VERSION \"{}\"\n\
         #define LEVELDB_BLOOM_VERSION_MAJOR {}\n\
         #define LEVELDB_BLOOM_VERSION_MINOR {}\n\
         #define LEVELDB_BLOOM_VERSION_PATCH {}",
        config.after_includes.unwrap_or_default(),
        version("CARGO_PKG_VERSION"),
        version("CARGO_PKG_VERSION_MAJOR"),
        version("CARGO_PKG_VERSION_MINOR"),
        version("CARGO_PKG_VERSION_PATCH"),
    ));
    let header = out_dir.join("leveldb_bloom.h");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("the C API can be expressed in C")
        .write(&mut generated);
    fs::write(&header, generated).expect("OUT_DIR is writable");

    if env::var_os("LEVELDB_BLOOM_WRITE_HEADER").is_some_and(|v| v == "1") {
        let committed = crate_dir.join("include/leveldb_bloom.h");
        let fresh = fs::read(&header).expect("just written");
        if fs::read(&committed).ok().as_deref() != Some(&fresh[..]) {
            fs::write(&committed, fresh).expect("include/ is writable");
        }
    }
}
