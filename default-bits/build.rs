//! The interposed open functions pass their caller's address on with two
//! instructions of assembly (`loader::with_caller!`) on the CPUs it names; the
//! library is named by its soname, and never unloaded.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(caller_asm)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").expect("set by cargo");
    if loader::CPUS.contains(&arch.as_str()) {
        println!("cargo:rustc-cfg=caller_asm");
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libleveldb_bloom_default_bits.so");
    // LevelDB may call the open functions' callers' databases' policies long after.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
