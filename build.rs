//! Builds the C++ policy object (`src/dropin/filter_policy.cc`) once per
//! `std::string` ABI, sets the shared library's soname and, with the `header`
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

    // The C harnesses in tests/ compile for the same target.
    println!(
        "cargo:rustc-env=LEVELDB_BLOOM_TARGET={}",
        env::var("TARGET").expect("set by cargo")
    );

    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{SONAME}");
    soname_link();
    // Never unmapped, even by a dlclose: LevelDB calls the callbacks of the policies
    // made here for as long as a database uses them.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}

/// `src/dropin/filter_policy.cc`, compiled for each `std::string` ABI a LevelDB may
/// have been built with: `_GLIBCXX_USE_CXX11_ABI` 1 (GCC's default since 5.1) and 0.
/// Links libstdc++, which the object's `std::string` appends need.
fn build_filter_policy() {
    const SOURCE: &str = "src/dropin/filter_policy.cc";
    println!("cargo:rerun-if-changed={SOURCE}");
    let out_dir = std::path::PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    for (abi, new, delete) in [
        (
            "1",
            "leveldb_bloom_policy_new_cxx11",
            Some("leveldb_bloom_policy_delete"),
        ),
        ("0", "leveldb_bloom_policy_new_cxx98", None),
    ] {
        let mut build = cc::Build::new();
        build
            .cpp(true)
            .std("c++11")
            .file(SOURCE)
            .out_dir(out_dir.join(format!("string-abi-{abi}")))
            .define("_GLIBCXX_USE_CXX11_ABI", abi)
            .define("LEVELDB_BLOOM_NEW", new)
            .warnings_into_errors(true);
        if let Some(delete) = delete {
            build.define("LEVELDB_BLOOM_DELETE", delete);
        }
        build.compile(&format!("leveldb_bloom_filter_policy_abi{abi}"));
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
