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
    default_bits_open_functions();

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

/// The open functions `LEVELDB_BLOOM_DEFAULT_BITS` interposes
/// (`src/default_bits/open.cc`): linked into the shared library only, so that
/// `libleveldb_bloom.a`, linked ahead of a static LevelDB, never takes the place of
/// its open functions. rustc's version script exports only Rust's names, so a second
/// one exports these; GNU ld refuses a second script (rust-lld, rustc's default linker
/// on x86-64 Linux since 1.90, takes it), so a probe link decides. Without them the
/// library says so once when the variable is set (`src/default_bits.rs`).
fn default_bits_open_functions() {
    const SOURCE: &str = "src/default_bits/open.cc";
    println!("cargo:rerun-if-changed={SOURCE}");
    let out_dir = std::path::PathBuf::from(env::var("OUT_DIR").expect("set by cargo"));
    let script = out_dir.join("default-bits-exports.map");
    let names = [
        "leveldb_open",
        "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
        "_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
    ];
    let globals: String = names.iter().map(|name| format!("{name}; ")).collect();
    std::fs::write(&script, format!("{{ global: {globals}}};\n")).expect("OUT_DIR is writable");
    println!("cargo:rustc-check-cfg=cfg(default_bits_open)");
    if !linker_takes_second_version_script(&out_dir) {
        println!(
            "cargo:warning=this linker takes no second version script: \
             LEVELDB_BLOOM_DEFAULT_BITS will be unavailable in this build (use rust-lld)"
        );
        return;
    }
    let objects = cc::Build::new()
        .cpp(true)
        .std("c++11")
        .file(SOURCE)
        .out_dir(out_dir.join("default-bits"))
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile_intermediates();
    for object in objects {
        println!("cargo:rustc-cdylib-link-arg={}", object.display());
    }
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script.display()
    );
    println!("cargo:rustc-cfg=default_bits_open");
}

/// Whether a cdylib linked as this crate's is (same rustc, target, flags and linker)
/// accepts a second version script beside rustc's own.
fn linker_takes_second_version_script(out_dir: &std::path::Path) -> bool {
    let probe = out_dir.join("version-script-probe.rs");
    let script = out_dir.join("version-script-probe.map");
    std::fs::write(&probe, "#[no_mangle] pub extern \"C\" fn probe() {}\n")
        .and_then(|()| std::fs::write(&script, "{ global: probe; };\n"))
        .expect("OUT_DIR is writable");
    let rustc = env::var("RUSTC").expect("set by cargo");
    let mut command = std::process::Command::new(rustc);
    command
        .args([
            "--crate-type",
            "cdylib",
            "--crate-name",
            "version_script_probe",
        ])
        .arg("--target")
        .arg(env::var("TARGET").expect("set by cargo"))
        .arg("--out-dir")
        .arg(out_dir)
        .arg(&probe)
        .arg("-C")
        .arg(format!(
            "link-arg=-Wl,--version-script={}",
            script.display()
        ));
    if let Ok(flags) = env::var("CARGO_ENCODED_RUSTFLAGS") {
        command.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    }
    if let Ok(linker) = env::var("RUSTC_LINKER") {
        command.arg("-C").arg(format!("linker={linker}"));
    }
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
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
