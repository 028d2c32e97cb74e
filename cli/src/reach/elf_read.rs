//! The parts of an ELF file `reach` judges, each read with a bounded `pread` at its
//! place (goblin decodes them): the header, the program headers (the interpreter),
//! the section headers, the dynamic symbols with their names, the relocations that
//! name them, the dynamic section (`DT_NEEDED`, `DT_FLAGS`), and the read-only data
//! streamed in 1 MiB pieces for the marks LevelDB leaves. Nothing else is read:
//! memory follows the tables read, never the file's size (a 1 GiB sparse file is
//! judged by its few real bytes).

use std::collections::BTreeSet;
use std::fs::File;
use std::os::unix::fs::FileExt;

use anyhow::{anyhow, Result};
use goblin::container::{Container, Ctx};
use goblin::elf::dynamic::{DF_SYMBOLIC, DT_FLAGS, DT_NEEDED, DT_NULL, DT_SYMBOLIC};
use goblin::elf::header::ET_EXEC;
use goblin::elf::program_header::PT_INTERP;
use goblin::elf::reloc::RelocSection;
use goblin::elf::section_header::{
    SHF_ALLOC, SHF_EXECINSTR, SHT_DYNAMIC, SHT_DYNSYM, SHT_PROGBITS, SHT_REL, SHT_RELA,
};
use goblin::elf::sym::Symtab;
use goblin::elf::{Elf, ProgramHeader, SectionHeader};
use goblin::strtab::Strtab;

/// The largest table read (symbols, their names, relocations, headers): larger
/// than any real program's, so that a file claiming more is refused, not read.
const MAX_TABLE: u64 = 256 << 20;
/// The piece of read-only data read at a time when looking for marks.
const PIECE: usize = 1 << 20;

/// A dynamic symbol: its name, and whether the file imports it (undefined here).
pub struct DynSymbol {
    pub name: String,
    pub import: bool,
}

/// What `reach` needs of an ELF file.
pub struct ElfParts {
    /// A program (`ET_EXEC`, or an interpreter named), not a library.
    pub program: bool,
    /// `PT_INTERP`: the dynamic linker the program names.
    pub interpreter: Option<String>,
    /// Linked `-Bsymbolic` (`DT_SYMBOLIC`, or `DF_SYMBOLIC` in `DT_FLAGS`).
    pub symbolic: bool,
    /// `DT_NEEDED`, in the order the dynamic linker loads them.
    pub needed: Vec<String>,
    pub symbols: Vec<DynSymbol>,
    /// The names of the dynamic symbols some relocation refers to.
    pub relocated: BTreeSet<String>,
    /// For each mark asked for, whether the read-only data holds it.
    pub marks: Vec<bool>,
}

/// Reads the parts of the ELF file `file` (of `len` bytes), looking for `marks` in
/// its read-only data.
pub fn read_elf(file: &File, len: u64, marks: &[&[u8]]) -> Result<ElfParts> {
    let damaged = |what: &str| anyhow!("a damaged ELF file: {what}");
    // 64 bytes: a 64-bit header's, more than a 32-bit one's 52.
    let header_bytes = read_at(file, len, 0, len.min(64)).map_err(|e| damaged(&e))?;
    let header = Elf::parse_header(&header_bytes).map_err(|e| damaged(&e.to_string()))?;
    let container = header.container().map_err(|e| damaged(&e.to_string()))?;
    let ctx = Ctx::new(
        container,
        header.endianness().map_err(|e| damaged(&e.to_string()))?,
    );

    let phdrs_len = u64::from(header.e_phnum) * u64::from(header.e_phentsize);
    let phdr_bytes = read_at(file, len, header.e_phoff, phdrs_len).map_err(|e| damaged(&e))?;
    let program_headers = ProgramHeader::parse(&phdr_bytes, 0, header.e_phnum.into(), ctx)
        .map_err(|e| damaged(&e.to_string()))?;
    let interpreter = match program_headers.iter().find(|h| h.p_type == PT_INTERP) {
        Some(interp) => {
            let path = read_at(file, len, interp.p_offset, interp.p_filesz.min(4096))
                .map_err(|e| damaged(&e))?;
            let path = path.split(|&b| b == 0).next().unwrap_or_default();
            Some(String::from_utf8_lossy(path).into_owned())
        }
        None => None,
    };

    let sections = section_headers(file, len, &header, ctx).map_err(|e| damaged(&e))?;
    let section = |index: u32| sections.get(index as usize);
    let table = |header: &SectionHeader| read_section(file, len, header).map_err(|e| damaged(&e));

    let (mut symbols, mut names_of) = (Vec::new(), Vec::new());
    let mut dynsym_index = None;
    if let Some((index, dynsym)) =
        (sections.iter().enumerate()).find(|(_, s)| s.sh_type == SHT_DYNSYM)
    {
        dynsym_index = Some(index);
        let strings =
            section(dynsym.sh_link).ok_or_else(|| damaged(".dynsym names no string table"))?;
        let (sym_bytes, str_bytes) = (table(dynsym)?, table(strings)?);
        let entry = goblin::elf::sym::Sym::size(container);
        let symtab = Symtab::parse(&sym_bytes, 0, sym_bytes.len() / entry, ctx)
            .map_err(|e| damaged(&e.to_string()))?;
        let strtab = Strtab::parse(&str_bytes, 0, str_bytes.len(), 0)
            .map_err(|e| damaged(&e.to_string()))?;
        for symbol in symtab.iter() {
            let name = strtab
                .get_at(symbol.st_name)
                .unwrap_or_default()
                .to_string();
            names_of.push(name.clone());
            symbols.push(DynSymbol {
                name,
                import: symbol.is_import(),
            });
        }
    }

    let mut relocated = BTreeSet::new();
    for relocations in sections.iter().filter(|s| {
        matches!(s.sh_type, SHT_RELA | SHT_REL) && Some(s.sh_link as usize) == dynsym_index
    }) {
        let bytes = table(relocations)?;
        let parsed =
            RelocSection::parse(&bytes, 0, bytes.len(), relocations.sh_type == SHT_RELA, ctx)
                .map_err(|e| damaged(&e.to_string()))?;
        relocated.extend(
            parsed
                .iter()
                .filter(|r| r.r_sym != 0)
                .filter_map(|r| names_of.get(r.r_sym).cloned()),
        );
    }

    let (mut needed, mut symbolic) = (Vec::new(), false);
    if let Some(dynamic) = sections.iter().find(|s| s.sh_type == SHT_DYNAMIC) {
        let strings =
            section(dynamic.sh_link).ok_or_else(|| damaged(".dynamic names no string table"))?;
        let str_bytes = table(strings)?;
        let strtab = Strtab::parse(&str_bytes, 0, str_bytes.len(), 0)
            .map_err(|e| damaged(&e.to_string()))?;
        for (tag, value) in dynamic_entries(&table(dynamic)?, ctx) {
            match tag {
                DT_NULL => break,
                DT_NEEDED => needed.extend(strtab.get_at(value as usize).map(str::to_string)),
                DT_SYMBOLIC => symbolic = true,
                DT_FLAGS => symbolic |= value & DF_SYMBOLIC != 0,
                _ => {}
            }
        }
    }

    let data = sections.iter().filter(|s| {
        s.sh_type == SHT_PROGBITS
            && s.sh_flags & u64::from(SHF_ALLOC) != 0
            && s.sh_flags & u64::from(SHF_EXECINSTR) == 0
    });
    let mut found = vec![false; marks.len()];
    for section in data {
        find_marks(file, len, section, marks, &mut found).map_err(|e| damaged(&e))?;
    }
    Ok(ElfParts {
        program: header.e_type == ET_EXEC || interpreter.is_some(),
        interpreter,
        symbolic,
        needed,
        symbols,
        relocated,
        marks: found,
    })
}

/// `len` bytes of `file` at `offset`, refused when they lie past its end (`file_len`)
/// or exceed [`MAX_TABLE`].
fn read_at(file: &File, file_len: u64, offset: u64, len: u64) -> Result<Vec<u8>, String> {
    let end = offset.checked_add(len).filter(|&end| end <= file_len);
    if end.is_none() {
        return Err(format!(
            "{len} bytes at offset {offset}: past the end of the file ({file_len} bytes)"
        ));
    }
    if len > MAX_TABLE {
        return Err(format!(
            "{len} bytes at offset {offset}: more than any ELF table holds"
        ));
    }
    let mut bytes = vec![0; len as usize];
    file.read_exact_at(&mut bytes, offset)
        .map_err(|e| format!("read at offset {offset}: {e}"))?;
    Ok(bytes)
}

/// The section headers (none when the file has none).
fn section_headers(
    file: &File,
    len: u64,
    header: &goblin::elf::Header,
    ctx: Ctx,
) -> Result<Vec<SectionHeader>, String> {
    if header.e_shoff == 0 {
        return Ok(Vec::new());
    }
    let entry = SectionHeader::size(ctx) as u64;
    // A count of 0 with headers: the count is in the first header's sh_size.
    let first = read_at(file, len, header.e_shoff, entry)?;
    let count = match header.e_shnum {
        0 => SectionHeader::parse_from(&first, 0, 1, ctx)
            .map_err(|e| e.to_string())?
            .first()
            .map_or(0, |s| s.sh_size),
        n => u64::from(n),
    };
    let bytes = read_at(file, len, header.e_shoff, count.saturating_mul(entry))?;
    SectionHeader::parse_from(&bytes, 0, count as usize, ctx).map_err(|e| e.to_string())
}

/// A section's bytes (none for one that occupies no room in the file).
fn read_section(file: &File, len: u64, section: &SectionHeader) -> Result<Vec<u8>, String> {
    if section.sh_type == goblin::elf::section_header::SHT_NOBITS {
        return Ok(Vec::new());
    }
    read_at(file, len, section.sh_offset, section.sh_size)
}

/// The (tag, value) entries of a dynamic section.
fn dynamic_entries(bytes: &[u8], ctx: Ctx) -> Vec<(u64, u64)> {
    let word = if ctx.container == Container::Big {
        8
    } else {
        4
    };
    let read = |chunk: &[u8]| -> u64 {
        let mut value = [0u8; 8];
        if ctx.le.is_little() {
            value[..word].copy_from_slice(chunk);
            u64::from_le_bytes(value)
        } else {
            value[8 - word..].copy_from_slice(chunk);
            u64::from_be_bytes(value)
        }
    };
    bytes
        .chunks_exact(2 * word)
        .map(|entry| (read(&entry[..word]), read(&entry[word..])))
        .collect()
}

/// Marks `found` for each of `marks` the section holds, read a piece at a time
/// (each piece overlapping the last by the longest mark, so none is cut).
fn find_marks(
    file: &File,
    len: u64,
    section: &SectionHeader,
    marks: &[&[u8]],
    found: &mut [bool],
) -> Result<(), String> {
    let end = section
        .sh_offset
        .checked_add(section.sh_size)
        .filter(|&end| end <= len)
        .ok_or_else(|| {
            format!(
                "a section at offset {} past the end of the file",
                section.sh_offset
            )
        })?;
    let overlap = marks
        .iter()
        .map(|m| m.len())
        .max()
        .unwrap_or(0)
        .saturating_sub(1);
    let mut piece = Vec::with_capacity(PIECE + overlap);
    let mut offset = section.sh_offset;
    while offset < end && found.iter().any(|f| !f) {
        let kept = piece.len().min(overlap);
        piece.drain(..piece.len() - kept);
        let take = (end - offset).min(PIECE as u64) as usize;
        let start = piece.len();
        piece.resize(start + take, 0);
        file.read_exact_at(&mut piece[start..], offset)
            .map_err(|e| format!("read at offset {offset}: {e}"))?;
        for (mark, seen) in marks.iter().zip(found.iter_mut()) {
            *seen |= memchr::memmem::find(&piece, mark).is_some();
        }
        offset += take as u64;
    }
    Ok(())
}
