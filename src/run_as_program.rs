//! `libleveldb_bloom.so` run as a program (`./libleveldb_bloom.so`, as glibc's
//! `libc.so.6` can be): it prints its version, the SIMD level it hashes with on this
//! CPU and how it is used, and exits 0 (1 if stdout cannot take the text), never by
//! a signal. build.rs gives the shared library (only: `.a` files never get an
//! interpreter) an `.interp` section naming the target's dynamic linker and this
//! module's entry point, `leveldb_bloom_run_as_program`; it sets `run_as_program`
//! where it knows the target's dynamic linker (x86-64 and AArch64 glibc).
//!
//! The dynamic linker runs no constructor of the program it starts (libc's own
//! runs: stdio and the environment work), and jumps to the entry with the stack
//! as the kernel left it: the entry realigns it for a C call, then runs [`main`].

use super::{c_text, guard, simd};

// The entry: no return address on the stack, which the kernel aligned to 16 bytes;
// a C call needs it 16-byte aligned at the call. Global for the linker's `-e`,
// hidden so that it is no exported symbol.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".globl leveldb_bloom_run_as_program",
    ".hidden leveldb_bloom_run_as_program",
    ".type leveldb_bloom_run_as_program, %function",
    "leveldb_bloom_run_as_program:",
    "xor ebp, ebp",
    "and rsp, -16",
    "call {main}",
    "ud2",
    ".size leveldb_bloom_run_as_program, . - leveldb_bloom_run_as_program",
    main = sym main,
);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".globl leveldb_bloom_run_as_program",
    ".hidden leveldb_bloom_run_as_program",
    ".type leveldb_bloom_run_as_program, %function",
    "leveldb_bloom_run_as_program:",
    "mov x29, xzr",
    "mov x30, xzr",
    "bl {main}",
    "brk #0",
    ".size leveldb_bloom_run_as_program, . - leveldb_bloom_run_as_program",
    main = sym main,
);

/// What the library says about itself, ending with a newline.
fn text() -> String {
    let version = c_text::version().to_string_lossy();
    let level = c_text::simd_level(simd::level()).to_string_lossy();
    format!(
        "libleveldb_bloom {version}: LevelDB's bloom filter policy (leveldb.BuiltinBloomFilter2), \
         byte for byte\n\
         SIMD level: {level} (the best this CPU has; LEVELDB_BLOOM_SIMD may lower it)\n\
         usage: LD_PRELOAD=libleveldb_bloom.so.0 PROGRAM [ARG...] swaps it into a LevelDB \
         program (man libleveldb_bloom)\n"
    )
}

/// Writes [`text`] on stdout and exits: 0, or 1 when stdout cannot take it.
extern "C" fn main() -> ! {
    let status = guard(
        || 1,
        || {
            // SAFETY: ignoring SIGPIPE changes no memory; a closed stdout then fails
            // the write (EPIPE) instead of killing the process.
            unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
            let mut rest = text().into_bytes();
            while !rest.is_empty() {
                // SAFETY: `rest` is a live buffer of `rest.len()` bytes.
                let written = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
                match usize::try_from(written) {
                    Ok(n) if n > 0 => drop(rest.drain(..n)),
                    Err(_)
                        if std::io::Error::last_os_error().kind()
                            == std::io::ErrorKind::Interrupted => {}
                    _ => return 1,
                }
            }
            0
        },
    );
    // SAFETY: `_exit` ends the process; nothing of it is used after.
    unsafe { libc::_exit(status) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_says_its_version_its_simd_level_and_how_it_is_used() {
        let text = text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with(&format!("libleveldb_bloom {}: ", env!("CARGO_PKG_VERSION"))));
        assert!(lines[1].starts_with(&format!("SIMD level: {} ", simd::level().name())));
        assert!(lines[2].starts_with("usage: LD_PRELOAD=libleveldb_bloom.so.0 "));
    }
}
