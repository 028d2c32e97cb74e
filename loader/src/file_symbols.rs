//! The symbol table (`SHT_SYMTAB`) of the file an object was mapped from: the names
//! a link keeps beside the dynamic ones, which the loader never maps. A program
//! linked statically has no other names; neither has code whose names a link left
//! out of the dynamic table.
//!
//! The file is the one the loader mapped (the program's `/proc/self/exe`, else the
//! name the loader knows), opened without waiting (a FIFO put in its place is no
//! regular file and is refused), and taken only if its program headers are the
//! ones mapped. Its section headers, symbol names and symbols are read with
//! bounded `pread`s: the names at once, the symbols a piece at a time. Nothing is
//! read where a table is larger than any real one, or memory runs out.

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

use crate::object::{
    word, word16, word32, Object, ELF_HEADER, E_PHOFF, E_SHENTSIZE, E_SHNUM, E_SHOFF, WORD,
};

/// The largest symbol name table read: larger than any real program's.
const MAX_NAMES: u64 = 256 << 20;
/// The largest symbol table read: as large.
const MAX_SYMBOLS: u64 = 1 << 30;
/// Symbols read at a time.
const PIECE: usize = 64 << 10;
/// `SHT_SYMTAB`.
const SHT_SYMTAB: u32 = 2;
/// `SHN_UNDEF`: a symbol the file refers to but does not define.
const SHN_UNDEF: u16 = 0;
/// A section header's size, and where its fields lie (`Elf64_Shdr`, `Elf32_Shdr`).
const SECTION_HEADER: usize = 16 + 6 * WORD;
const SH_TYPE: usize = 4;
const SH_OFFSET: usize = 8 + 2 * WORD;
const SH_SIZE: usize = 8 + 3 * WORD;
const SH_LINK: usize = 8 + 4 * WORD;
/// A symbol's size, and where its section index lies (`Elf64_Sym`, `Elf32_Sym`).
const SYMBOL: usize = if WORD == 8 { 24 } else { 16 };
const ST_SHNDX: usize = if WORD == 8 { 6 } else { 14 };

impl Object<'_> {
    /// Calls `each` with the name of every symbol in the symbol table of the file
    /// the object was mapped from, and whether the file defines it. False when there
    /// is none, or the file cannot be read whole, or is not the one mapped (`each`
    /// may have been called for the symbols read before).
    pub fn each_file_symbol(&self, each: impl FnMut(&[u8], bool)) -> bool {
        self.mapped_file()
            .is_some_and(|(file, header)| each_symbol(&file, &header, each))
    }

    /// The file the object was mapped from, opened, with its ELF header, if its
    /// program headers are the ones mapped.
    fn mapped_file(&self) -> Option<(File, Vec<u8>)> {
        let path = match self.is_program() {
            true => c"/proc/self/exe",
            false => self.name(),
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(OsStr::from_bytes(path.to_bytes()))
            .ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mapped = self.program_header_bytes();
        let header = read_new(&file, 0, ELF_HEADER as u64)?;
        let at = word(&header, E_PHOFF) as u64;
        let in_file = read_new(&file, at, mapped.len() as u64)?;
        (!mapped.is_empty() && in_file == mapped).then_some((file, header))
    }
}

/// [`Object::each_file_symbol`] of the ELF file `file`, of this CPU's class, whose
/// ELF header is `header`.
fn each_symbol(file: &File, header: &[u8], mut each: impl FnMut(&[u8], bool)) -> bool {
    let Some(((offset, size), names)) = symbol_table(file, header) else {
        return false;
    };
    const WHOLE_PIECE: usize = PIECE - PIECE % SYMBOL;
    let mut piece = Vec::new();
    if piece.try_reserve_exact(WHOLE_PIECE).is_err() {
        return false;
    }
    let mut done = 0;
    while done < size {
        let length = (size - done).min(WHOLE_PIECE as u64) as usize;
        piece.resize(length, 0);
        if !read_exactly(file, offset.saturating_add(done), &mut piece) {
            return false;
        }
        for symbol in piece.chunks_exact(SYMBOL) {
            let name = word32(symbol, 0).map_or(&[][..], |at| name_at(&names, at));
            let section = word16(symbol, ST_SHNDX);
            if !name.is_empty() {
                each(name, section != Some(SHN_UNDEF));
            }
        }
        done += length as u64;
    }
    true
}

/// Where the symbol table lies in `file` (its offset and size, whole symbols), and
/// its names, read; `header` is the file's ELF header. The section headers are at
/// most 65,535 (a 16-bit count): 4 MiB.
fn symbol_table(file: &File, header: &[u8]) -> Option<((u64, u64), Vec<u8>)> {
    let sections_at = word(header, E_SHOFF) as u64;
    let entry_size = word16(header, E_SHENTSIZE)?;
    let count = word16(header, E_SHNUM)?;
    if usize::from(entry_size) != SECTION_HEADER {
        return None;
    }
    let sections = read_new(file, sections_at, u64::from(count) * SECTION_HEADER as u64)?;
    let section = |index: usize| sections.chunks_exact(SECTION_HEADER).nth(index);
    let place = |section: &[u8]| {
        (
            word(section, SH_OFFSET) as u64,
            word(section, SH_SIZE) as u64,
        )
    };
    let symbols = sections
        .chunks_exact(SECTION_HEADER)
        .find(|section| word32(section, SH_TYPE) == Some(SHT_SYMTAB))?;
    let names = section(word32(symbols, SH_LINK)? as usize)?;
    let (names_at, names_size) = place(names);
    let (symbols_at, symbols_size) = place(symbols);
    if names_size > MAX_NAMES || symbols_size > MAX_SYMBOLS {
        return None;
    }
    let whole = symbols_size - symbols_size % SYMBOL as u64;
    Some(((symbols_at, whole), read_new(file, names_at, names_size)?))
}

/// The NUL-terminated name at offset `at` of `names` (empty outside it).
fn name_at(names: &[u8], at: u32) -> &[u8] {
    names
        .get(at as usize..)
        .and_then(|rest| CStr::from_bytes_until_nul(rest).ok())
        .map_or(&[], CStr::to_bytes)
}

/// `length` bytes of `file` from `offset`, into memory allocated for them (none if
/// it cannot be, or the file is shorter).
fn read_new(file: &File, offset: u64, length: u64) -> Option<Vec<u8>> {
    let length = usize::try_from(length).ok()?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(length).ok()?;
    bytes.resize(length, 0);
    read_exactly(file, offset, &mut bytes).then_some(bytes)
}

/// Fills `buffer` from `file` at `offset`; false if the file ends first or cannot
/// be read.
fn read_exactly(file: &File, offset: u64, buffer: &mut [u8]) -> bool {
    let mut done = 0;
    while done < buffer.len() {
        match file.read_at(&mut buffer[done..], offset.saturating_add(done as u64)) {
            Ok(0) => return false,
            Ok(read) => done += read,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write;
    use std::ops::ControlFlow;

    use super::{
        each_symbol, read_new, word, ELF_HEADER, E_SHOFF, SECTION_HEADER, SHT_SYMTAB, SH_SIZE,
        SH_TYPE, WORD,
    };
    use crate::object::word32;

    /// `bytes` written to a new file, opened.
    fn file_of(bytes: &[u8], name: &str) -> File {
        let path = std::env::temp_dir().join(format!("loader-{}-{name}", std::process::id()));
        File::create(&path).unwrap().write_all(bytes).unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

    /// Where the symbol table's header lies in `elf`.
    fn symbol_table_header(elf: &[u8]) -> usize {
        let at = word(elf, E_SHOFF);
        (at..)
            .step_by(SECTION_HEADER)
            .find(|&header| word32(elf, header + SH_TYPE) == Some(SHT_SYMTAB))
            .unwrap()
    }

    #[test]
    fn a_damaged_symbol_table_is_refused() {
        let elf = std::fs::read("/proc/self/exe").unwrap();
        let count = |file: &File| {
            let header = read_new(file, 0, ELF_HEADER as u64)?;
            let mut count = 0;
            each_symbol(file, &header, |_, _| count += 1).then_some(count)
        };
        assert!(count(&file_of(&elf, "whole")).unwrap() > 100);
        // Cut short: the symbols or their names are not all there.
        assert_eq!(count(&file_of(&elf[..elf.len() / 2], "cut")), None);
        // A table larger than any real one, or than the file.
        let header = symbol_table_header(&elf);
        for size in [1u64 << 40, elf.len() as u64] {
            let mut crafted = elf.clone();
            let at = header + SH_SIZE;
            crafted[at..at + WORD].copy_from_slice(&(size as usize).to_ne_bytes());
            assert_eq!(count(&file_of(&crafted, "large")), None, "{size}");
        }
        assert_eq!(count(&file_of(b"\x7fELF", "short")), None);
    }

    /// A name that leads to another file than the one mapped (another ELF file, a
    /// FIFO with no writer, nothing) reads nothing, and never waits.
    #[test]
    fn only_the_file_mapped_is_read() {
        let fifo = std::env::temp_dir().join(format!("loader-{}-fifo", std::process::id()));
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let mut tried = 0;
        crate::each_object(|object| {
            if object.is_program() {
                for name in [c"/bin/sh", path.as_c_str(), c"/nonexistent"] {
                    assert!(!object.named(name).each_file_symbol(|_, _| ()), "{name:?}");
                    tried += 1;
                }
            }
            ControlFlow::Continue(())
        });
        std::fs::remove_file(&fifo).unwrap();
        assert_eq!(tried, 3);
    }

    #[test]
    fn this_test_programs_own_symbol_table_is_read() {
        let mut seen = (false, false);
        let mut read = false;
        crate::each_object(|object| {
            if object.is_program() {
                read = object.each_file_symbol(|name, defined| {
                    seen.0 |= defined && name.starts_with(b"_ZN6loader");
                    seen.1 |= !defined && name == b"dl_iterate_phdr";
                });
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        assert!(read && seen.0 && seen.1, "{seen:?}");
    }
}
