//! One loaded object, read as the loader mapped it: its program headers lead to its
//! segments, and every byte is read through [`Object::bytes`], inside one of its
//! readable `PT_LOAD` segments.

use std::cell::OnceCell;
use std::ffi::{c_char, CStr};

#[cfg(target_pointer_width = "32")]
use libc::Elf32_Phdr as ProgramHeader;
#[cfg(target_pointer_width = "64")]
use libc::Elf64_Phdr as ProgramHeader;

/// One loaded object, valid while it stays loaded (the walk or the call that
/// handed it out).
pub struct Object<'a> {
    load_offset: usize,
    name: &'a CStr,
    headers: &'a [ProgramHeader],
    /// Its dynamic section's tables, read at the first question that needs them.
    tables: OnceCell<Tables<'a>>,
}

impl<'a> Object<'a> {
    /// The object `dl_iterate_phdr` reports.
    pub(crate) fn from_info(info: &'a libc::dl_phdr_info) -> Self {
        let headers = match info.dlpi_phdr.is_null() {
            true => &[][..],
            // SAFETY: the loader's program headers of a loaded object, `dlpi_phnum`
            // of them, mapped while it is reported.
            false => unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) },
        };
        Self {
            load_offset: info.dlpi_addr as usize,
            // SAFETY: the loader's NUL-terminated name, or NULL.
            name: unsafe { name(info.dlpi_name) },
            headers,
            tables: OnceCell::new(),
        }
    }

    /// The object mapped from `map_start` (the start of its lowest segment, where
    /// its ELF header lies, as in every object the loader maps from a file's
    /// start), moved by `load_offset`, named `name`: its program headers are read
    /// from that ELF header when they lie in its first page (none otherwise).
    ///
    /// # Safety
    /// `map_start` is the mapped, readable start of a loaded object (at least a
    /// page), `name` NULL or its NUL-terminated name, both valid for `'a`.
    pub(crate) unsafe fn from_map(
        load_offset: usize,
        name: *const c_char,
        map_start: usize,
    ) -> Self {
        // SAFETY: the caller's promise: a readable page.
        let page = unsafe { std::slice::from_raw_parts(map_start as *const u8, PAGE) };
        let headers = elf_program_headers(page).map_or(&[][..], |(offset, count)| {
            // SAFETY: inside the readable page just checked, aligned as the ELF
            // header's own fields require (checked by `elf_program_headers`).
            unsafe {
                std::slice::from_raw_parts((map_start + offset) as *const ProgramHeader, count)
            }
        });
        Self {
            load_offset,
            // SAFETY: the caller's promise.
            name: unsafe { self::name(name) },
            headers,
            tables: OnceCell::new(),
        }
    }

    /// The same object under another name (for tests of what a name leads to).
    #[cfg(test)]
    pub(crate) fn named<'n>(&self, name: &'n CStr) -> Object<'n>
    where
        'a: 'n,
    {
        Object {
            load_offset: self.load_offset,
            name,
            headers: self.headers,
            tables: OnceCell::new(),
        }
    }

    /// The difference between the object's addresses in memory and in its file.
    pub fn load_offset(&self) -> usize {
        self.load_offset
    }

    /// The object's file name as the loader knows it ("" for the program).
    pub fn name(&self) -> &CStr {
        self.name
    }

    /// Whether it is the program (the loader gives it no name).
    pub fn is_program(&self) -> bool {
        self.name.is_empty()
    }

    /// Which object it is while loaded: its dynamic section's address (no two
    /// objects share one), else its program headers' (a program without one).
    pub fn id(&self) -> usize {
        self.headers
            .iter()
            .find(|header| header.p_type == PT_DYNAMIC)
            .map_or(self.headers.as_ptr() as usize, |header| {
                self.load_offset.wrapping_add(header.p_vaddr as usize)
            })
    }

    /// The program headers' bytes, as the loader mapped them.
    pub(crate) fn program_header_bytes(&self) -> &[u8] {
        // SAFETY: the headers' own memory, read as bytes.
        unsafe {
            std::slice::from_raw_parts(
                self.headers.as_ptr().cast(),
                std::mem::size_of_val(self.headers),
            )
        }
    }

    /// Each `PT_LOAD` segment's address range in memory, and its flags (`PF_*`).
    fn segments(&self) -> impl Iterator<Item = (usize, usize, u32)> + 'a {
        let load_offset = self.load_offset;
        self.headers
            .iter()
            .filter(|header| header.p_type == PT_LOAD)
            .filter_map(move |header| {
                // The load offset wraps for an object loaded below its link address.
                let start = load_offset.wrapping_add(header.p_vaddr as usize);
                let end = start.checked_add(header.p_memsz as usize)?;
                Some((start, end, header.p_flags))
            })
    }

    /// The bytes of each segment mapped readable and not writable (code and
    /// read-only data).
    pub fn read_only_segments(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.segments()
            .filter(|&(_, _, flags)| flags & PF_R != 0 && flags & PF_W == 0)
            .filter_map(|(start, _, _)| self.bytes(start))
    }

    /// Whether `address` lies in one of the object's segments.
    pub fn holds(&self, address: usize) -> bool {
        self.segments()
            .any(|(start, end, _)| (start..end).contains(&address))
    }

    /// The bytes from `address` to the end of the readable segment holding it.
    pub fn bytes(&self, address: usize) -> Option<&'a [u8]> {
        let (_, end, _) = self
            .segments()
            .find(|&(start, end, flags)| flags & PF_R != 0 && (start..end).contains(&address))?;
        // SAFETY: the loader mapped the whole segment readable, for as long as the
        // object is loaded, which it is while it is handed out.
        Some(unsafe { std::slice::from_raw_parts(address as *const u8, end - address) })
    }

    /// The object's dynamic section's entries (tag, value), with each address
    /// relocated as glibc relocates it: in place, so already an address, only where
    /// the `PT_DYNAMIC` segment is writable and the object was moved from its link
    /// address (glibc's `dl_relocate_ld` and `elf_get_dynamic_info`, ≥ 2.35; before,
    /// a read-only one was written all the same and the object could not load);
    /// else the value plus the load offset. Empty without one.
    pub fn dynamic(&self) -> impl Iterator<Item = (i64, usize)> + 'a {
        let header = self
            .headers
            .iter()
            .find(|header| header.p_type == PT_DYNAMIC);
        let base = self.load_offset;
        let bytes = header
            .and_then(|header| self.bytes(base.wrapping_add(header.p_vaddr as usize)))
            .unwrap_or_default();
        let relocated = header.is_some_and(|header| header.p_flags & PF_W != 0)
            && base != 0
            && LOADER_RELOCATES_DYNAMIC;
        bytes
            .chunks_exact(2 * WORD)
            .map(|entry| (word(entry, 0) as i64, word(entry, WORD)))
            .take_while(|&(tag, _)| tag != DT_NULL)
            .map(move |(tag, value)| match relocated || !is_address(tag) {
                true => (tag, value),
                false => (tag, value.wrapping_add(base)),
            })
    }

    /// The value of the dynamic section's first entry of `tag`.
    pub fn dynamic_value(&self, tag: i64) -> Option<usize> {
        self.dynamic()
            .find(|&(t, _)| t == tag)
            .map(|(_, value)| value)
    }

    /// Whether the object binds its own references to its own definitions first
    /// (`-Bsymbolic`: `DT_SYMBOLIC`, or `DF_SYMBOLIC` in `DT_FLAGS`).
    pub fn is_symbolic(&self) -> bool {
        self.tables().symbolic
    }

    /// The tables its dynamic section names, read once for all the questions asked
    /// of this `Object`.
    pub(crate) fn tables(&self) -> Tables<'a> {
        *self.tables.get_or_init(|| Tables::of(self))
    }
}

/// What the dynamic section names, read in one pass over it: the tables a lookup
/// reads, the soname's place among the names, and whether the object is symbolic.
#[derive(Clone, Copy)]
pub(crate) struct Tables<'a> {
    pub(crate) names: &'a [u8],
    pub(crate) symbols: &'a [u8],
    pub(crate) hash: Option<&'a [u8]>,
    pub(crate) gnu_hash: Option<&'a [u8]>,
    pub(crate) soname: Option<usize>,
    pub(crate) symbolic: bool,
}

impl<'a> Tables<'a> {
    pub(crate) fn of(object: &Object<'a>) -> Self {
        let (mut names, mut names_size, mut symbols, mut hash, mut gnu_hash) = (0, 0, 0, 0, 0);
        let (mut soname, mut symbolic, mut flags) = (None, false, 0);
        // The last entry of a tag counts, as in glibc's `elf_get_dynamic_info`.
        for (tag, value) in object.dynamic() {
            match tag {
                DT_STRTAB => names = value,
                DT_STRSZ => names_size = value,
                DT_SYMTAB => symbols = value,
                DT_HASH => hash = value,
                DT_GNU_HASH => gnu_hash = value,
                DT_SONAME => soname = Some(value),
                DT_SYMBOLIC => symbolic = true,
                DT_FLAGS => flags = value,
                _ => {}
            }
        }
        let names = object
            .bytes(names)
            .map_or(&[][..], |names| &names[..names.len().min(names_size)]);
        Self {
            names,
            symbols: object.bytes(symbols).unwrap_or_default(),
            hash: (hash != 0).then(|| object.bytes(hash)).flatten(),
            gnu_hash: (gnu_hash != 0).then(|| object.bytes(gnu_hash)).flatten(),
            soname,
            symbolic: symbolic || flags & DF_SYMBOLIC != 0,
        }
    }
}

/// # Safety
/// `name` is NULL or a NUL-terminated string valid for `'a`.
unsafe fn name<'a>(name: *const c_char) -> &'a CStr {
    match name.is_null() {
        true => c"",
        // SAFETY: the caller's promise.
        false => unsafe { CStr::from_ptr(name) },
    }
}

/// The smallest page Linux maps: the ELF header and program headers read from an
/// object's first page stay inside it.
const PAGE: usize = 4096;

/// Where the program headers lie in `page` (an object's first page, which starts
/// with its ELF header) and how many there are, when they lie wholly inside it,
/// aligned, and are of this CPU's class and size.
fn elf_program_headers(page: &[u8]) -> Option<(usize, usize)> {
    const CLASS: u8 = if WORD == 8 { 2 } else { 1 };
    if page[..4] != *b"\x7fELF" || page[4] != CLASS {
        return None;
    }
    let offset = word(page, E_PHOFF);
    let entry_size = usize::from(word16(page, E_PHENTSIZE)?);
    let count = usize::from(word16(page, E_PHNUM)?);
    let end = offset.checked_add(count.checked_mul(entry_size)?)?;
    let fits = entry_size == std::mem::size_of::<ProgramHeader>()
        && end <= page.len()
        && offset.is_multiple_of(std::mem::align_of::<ProgramHeader>());
    fits.then_some((offset, count))
}

/// Whether glibc relocates a writable dynamic section in place on this CPU (all but
/// those defining `DL_RO_DYN_SECTION`, whose `dl_relocate_ld` never does).
const LOADER_RELOCATES_DYNAMIC: bool = !cfg!(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "riscv32",
    target_arch = "riscv64"
));

/// Whether glibc relocates entries of `tag` (`elf_get_dynamic_info`'s list, of the
/// tags read here; the others are sizes, flags and string offsets). `DT_REL` and
/// `DT_RELA` only where the CPU has such relocations (`ELF_MACHINE_NO_REL`,
/// `ELF_MACHINE_NO_RELA`).
fn is_address(tag: i64) -> bool {
    const REL_CPU: bool = cfg!(any(target_arch = "x86", target_arch = "arm"));
    [
        DT_HASH,
        DT_STRTAB,
        DT_SYMTAB,
        DT_GNU_HASH,
        DT_JMPREL,
        DT_VERSYM,
    ]
    .contains(&tag)
        || tag == DT_REL && REL_CPU
        || tag == DT_RELA && !REL_CPU
}

// ELF's numbers (<elf.h>).
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const DT_NULL: i64 = 0;
pub(crate) const DT_NEEDED: i64 = 1;
pub(crate) const DT_HASH: i64 = 4;
pub(crate) const DT_STRTAB: i64 = 5;
pub(crate) const DT_SYMTAB: i64 = 6;
const DT_STRSZ: i64 = 10;
const DT_SONAME: i64 = 14;
pub(crate) const DT_PLTRELSZ: i64 = 2;
pub(crate) const DT_RELA: i64 = 7;
pub(crate) const DT_RELASZ: i64 = 8;
const DT_SYMBOLIC: i64 = 16;
pub(crate) const DT_REL: i64 = 17;
pub(crate) const DT_RELSZ: i64 = 18;
pub(crate) const DT_PLTREL: i64 = 20;
pub(crate) const DT_JMPREL: i64 = 23;
const DT_FLAGS: i64 = 30;
const DF_SYMBOLIC: usize = 0x2;
pub(crate) const DT_GNU_HASH: i64 = 0x6fff_fef5;
pub(crate) const DT_VERSYM: i64 = 0x6fff_fff0;

/// The size of an address in the object's tables.
pub(crate) const WORD: usize = std::mem::size_of::<usize>();

/// Where the ELF header (`ElfW(Ehdr)`, this CPU's class) holds the program and
/// section headers' offsets, sizes and counts: after `e_ident` (16 bytes), `e_type`,
/// `e_machine`, `e_version` (8) and `e_entry` (a word); then `e_flags` and
/// `e_ehsize` (6) before the sizes.
pub(crate) const E_PHOFF: usize = 24 + WORD;
pub(crate) const E_SHOFF: usize = 24 + 2 * WORD;
const E_PHENTSIZE: usize = 24 + 3 * WORD + 6;
const E_PHNUM: usize = E_PHENTSIZE + 2;
pub(crate) const E_SHENTSIZE: usize = E_PHENTSIZE + 4;
pub(crate) const E_SHNUM: usize = E_PHENTSIZE + 6;
/// The ELF header's size (64 bytes, 52 for 32-bit), `e_shstrndx` last.
pub(crate) const ELF_HEADER: usize = E_PHENTSIZE + 10;
const _: () = assert!(ELF_HEADER == if WORD == 8 { 64 } else { 52 });

/// The native word at `offset` of `bytes`, which holds it.
pub(crate) fn word(bytes: &[u8], offset: usize) -> usize {
    let mut value = [0; WORD];
    value.copy_from_slice(&bytes[offset..offset + WORD]);
    usize::from_ne_bytes(value)
}

/// The native 16-bit word at `offset` of `bytes`, if it holds one.
pub(crate) fn word16(bytes: &[u8], offset: usize) -> Option<u16> {
    let bytes = bytes.get(offset..offset.checked_add(2)?)?;
    Some(u16::from_ne_bytes(bytes.try_into().ok()?))
}

/// The native 32-bit word at `offset` of `bytes`, if it holds one.
pub(crate) fn word32(bytes: &[u8], offset: usize) -> Option<u32> {
    let bytes = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_ne_bytes(bytes.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::elf_program_headers;

    #[test]
    fn program_headers_only_inside_the_first_page() {
        let this = std::fs::read("/proc/self/exe").unwrap();
        let (offset, count) = elf_program_headers(&this[..4096]).expect("this test's own");
        assert!(offset >= 64 && count > 2);
        let mut far = this[..4096].to_vec();
        far[32..40].copy_from_slice(&4090u64.to_ne_bytes());
        assert_eq!(elf_program_headers(&far), None);
        assert_eq!(elf_program_headers(&[0; 4096]), None);
    }
}
