//! A loaded object's dynamic symbols (`.dynsym`): the names it defines and those it
//! imports, read from memory through [`Object::bytes`], so only what the object maps.
//! How many there are comes from its hash table (`DT_GNU_HASH`, else `DT_HASH`), as
//! the dynamic loader finds them; an object with neither shows none.

use super::objects::{word32, Object, DT_GNU_HASH, DT_HASH, DT_STRSZ, DT_STRTAB, DT_SYMTAB, WORD};

/// One dynamic symbol: its name, and whether the object defines it (else imports it).
pub(super) struct Symbol<'a> {
    pub(super) name: &'a [u8],
    pub(super) defined: bool,
}

/// An `ElfW(Sym)`'s size and the offsets of `st_name` and `st_shndx` in it.
#[cfg(target_pointer_width = "64")]
const SYMBOL: (usize, usize, usize) = (24, 0, 6);
#[cfg(target_pointer_width = "32")]
const SYMBOL: (usize, usize, usize) = (16, 0, 14);

/// `st_shndx` of an undefined (imported) symbol.
const SHN_UNDEF: u16 = 0;

/// The dynamic symbols of `object`, in table order; none when its tables are missing
/// or lie outside what it maps readable (a truncated table yields what is mapped).
pub(super) fn dynamic_symbols<'a>(object: &'a Object) -> impl Iterator<Item = Symbol<'a>> + 'a {
    symbol_slots(object).flatten()
}

/// The index in `object`'s dynamic symbol table of the first symbol named `name`.
pub(super) fn symbol_index(object: &Object, name: &[u8]) -> Option<usize> {
    symbol_slots(object).position(|symbol| symbol.is_some_and(|symbol| symbol.name == name))
}

/// Each entry of `object`'s dynamic symbol table, by index: None where its name
/// cannot be read.
fn symbol_slots<'a>(object: &'a Object) -> impl Iterator<Item = Option<Symbol<'a>>> + 'a {
    let (mut names, mut names_size, mut table, mut hash, mut gnu_hash) = (0, 0, 0, 0, 0);
    for (tag, value) in object.dynamic() {
        match tag {
            DT_STRTAB => names = value,
            DT_STRSZ => names_size = value,
            DT_SYMTAB => table = value,
            DT_HASH => hash = value,
            DT_GNU_HASH => gnu_hash = value,
            _ => {}
        }
    }
    let names = object
        .bytes(names)
        .map_or(&[][..], |names| &names[..names.len().min(names_size)]);
    let count = match gnu_hash {
        0 => object
            .bytes(hash)
            .and_then(|hash| word32(hash, 4))
            .map(|n| n as usize),
        _ => object.bytes(gnu_hash).and_then(gnu_symbol_count),
    };
    let table = object.bytes(table).unwrap_or_default();
    let (size, name_at, section_at) = SYMBOL;
    let count = count.unwrap_or(0).min(table.len() / size);
    table[..count * size].chunks_exact(size).map(move |symbol| {
        let name = names.get(word32(symbol, name_at)? as usize..)?;
        let name = &name[..name.iter().position(|&byte| byte == 0)?];
        let section = u16::from_ne_bytes([symbol[section_at], symbol[section_at + 1]]);
        Some(Symbol {
            name,
            defined: section != SHN_UNDEF,
        })
    })
}

/// The number of symbols a GNU hash table (`bytes` from its start) covers: one past
/// the last symbol of the longest-reaching chain, or the first hashed symbol's index
/// when every bucket is empty. None when the table is cut short.
fn gnu_symbol_count(bytes: &[u8]) -> Option<usize> {
    let buckets = word32(bytes, 0)? as usize;
    let first_hashed = word32(bytes, 4)? as usize;
    let bloom_words = word32(bytes, 8)? as usize;
    let buckets_at = 16usize.checked_add(bloom_words.checked_mul(WORD)?)?;
    let chains_at = buckets_at.checked_add(buckets.checked_mul(4)?)?;
    let mut last = 0;
    for bucket in 0..buckets {
        last = last.max(word32(bytes, buckets_at + 4 * bucket)? as usize);
    }
    if last < first_hashed {
        return Some(first_hashed);
    }
    // Each chain ends at an entry whose lowest bit is set.
    let mut symbol = last;
    loop {
        let at = chains_at.checked_add((symbol - first_hashed).checked_mul(4)?)?;
        if word32(bytes, at)? & 1 == 1 {
            return Some(symbol + 1);
        }
        symbol += 1;
    }
}
