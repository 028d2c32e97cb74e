//! The address an exported function returns to, which decides what it answers
//! (the scope of the code that called it): passed on by a naked function of two
//! instructions, on the CPUs whose return address is in a register or on top of
//! the stack at entry; elsewhere unknown (0). Rust has no `__builtin_return_address`.
//!
//! An exported function `f` taking N arguments is written
//! `#[cfg_attr(caller_asm, unsafe(naked))] extern "C" fn f(a…) -> R { loader::with_caller!(inner, N, a…) }`,
//! `inner` taking the same arguments and the caller's address last; the crate's
//! build script sets `caller_asm` where [`CPUS`](crate::CPUS) names the CPU.

/// The body of an exported function whose `$arguments` (`$count` of them, 1 to 4)
/// and caller's address go to `$inner`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "s390x"))]
#[macro_export]
macro_rules! with_caller {
    ($inner:path, $count:tt, $($argument:ident),*) => {
        $crate::caller_jump!($inner, $count)
    };
}

/// The same where no naked function is written: the caller is unknown.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "s390x")))]
#[macro_export]
macro_rules! with_caller {
    ($inner:path, $count:tt, $($argument:ident),*) => {
        $inner($($argument,)* 0)
    };
}

/// x86-64 (System V): the return address on top of the stack, into the next
/// integer argument register.
#[cfg(target_arch = "x86_64")]
#[macro_export]
#[doc(hidden)]
macro_rules! caller_jump {
    ($inner:path, 1) => { core::arch::naked_asm!("mov rsi, qword ptr [rsp]", "jmp {f}", f = sym $inner) };
    ($inner:path, 2) => { core::arch::naked_asm!("mov rdx, qword ptr [rsp]", "jmp {f}", f = sym $inner) };
    ($inner:path, 3) => { core::arch::naked_asm!("mov rcx, qword ptr [rsp]", "jmp {f}", f = sym $inner) };
    ($inner:path, 4) => { core::arch::naked_asm!("mov r8, qword ptr [rsp]", "jmp {f}", f = sym $inner) };
}

/// AArch64: the link register.
#[cfg(target_arch = "aarch64")]
#[macro_export]
#[doc(hidden)]
macro_rules! caller_jump {
    ($inner:path, 1) => { core::arch::naked_asm!("mov x1, x30", "b {f}", f = sym $inner) };
    ($inner:path, 2) => { core::arch::naked_asm!("mov x2, x30", "b {f}", f = sym $inner) };
    ($inner:path, 3) => { core::arch::naked_asm!("mov x3, x30", "b {f}", f = sym $inner) };
    ($inner:path, 4) => { core::arch::naked_asm!("mov x4, x30", "b {f}", f = sym $inner) };
}

/// s390x: register 14; the arguments from register 2.
#[cfg(target_arch = "s390x")]
#[macro_export]
#[doc(hidden)]
macro_rules! caller_jump {
    ($inner:path, 1) => { core::arch::naked_asm!("lgr %r3, %r14", "jg {f}", f = sym $inner) };
    ($inner:path, 2) => { core::arch::naked_asm!("lgr %r4, %r14", "jg {f}", f = sym $inner) };
    ($inner:path, 3) => { core::arch::naked_asm!("lgr %r5, %r14", "jg {f}", f = sym $inner) };
    ($inner:path, 4) => { core::arch::naked_asm!("lgr %r6, %r14", "jg {f}", f = sym $inner) };
}
