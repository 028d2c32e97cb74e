//! The ELF structures `self_bound` reads, of this process's word size (`<elf.h>`'s
//! `ElfW`), and the constants it needs.

/// Program headers come from `dl_phdr_info`, typed by libc.
#[cfg(target_pointer_width = "64")]
pub(super) type Phdr = libc::Elf64_Phdr;
#[cfg(target_pointer_width = "32")]
pub(super) type Phdr = libc::Elf32_Phdr;

/// A dynamic section entry.
#[repr(C)]
pub(super) struct Dyn {
    pub(super) tag: isize,
    pub(super) value: usize,
}

/// A relocation: `offset`, `info` (then, in `Rela`, an addend), a word each.
const WORD: usize = std::mem::size_of::<usize>();
pub(super) const REL_SIZE: usize = 2 * WORD;
pub(super) const RELA_SIZE: usize = 3 * WORD;
pub(super) const INFO_OFFSET: usize = WORD;

/// A symbol: only its name's offset is read, first in both layouts.
#[repr(C)]
pub(super) struct Sym {
    pub(super) name: u32,
}
#[cfg(target_pointer_width = "64")]
pub(super) const SYM_SIZE: usize = 24;
#[cfg(target_pointer_width = "32")]
pub(super) const SYM_SIZE: usize = 16;

/// `ELF64_R_SYM` / `ELF32_R_SYM`.
pub(super) fn symbol_index(info: usize) -> usize {
    #[cfg(target_pointer_width = "64")]
    return info >> 32;
    #[cfg(target_pointer_width = "32")]
    return info >> 8;
}

pub(super) const DT_NULL: isize = 0;
pub(super) const DT_PLTRELSZ: isize = 2;
pub(super) const DT_STRTAB: isize = 5;
pub(super) const DT_SYMTAB: isize = 6;
pub(super) const DT_RELA: isize = 7;
pub(super) const DT_RELASZ: isize = 8;
pub(super) const DT_STRSZ: isize = 10;
pub(super) const DT_SYMBOLIC: isize = 16;
pub(super) const DT_REL: isize = 17;
pub(super) const DT_RELSZ: isize = 18;
pub(super) const DT_PLTREL: isize = 20;
pub(super) const DT_JMPREL: isize = 23;
pub(super) const DT_FLAGS: isize = 30;
pub(super) const DF_SYMBOLIC: usize = 0x2;
pub(super) const PT_LOAD: u32 = 1;
pub(super) const PT_DYNAMIC: u32 = 2;
pub(super) const PF_W: u32 = 0x2;
pub(super) const PF_R: u32 = 0x4;
