//! A loaded object's dynamic symbols (`.dynsym`), read from memory through
//! [`Object::bytes`]: looked up by name through its hash table as the loader looks
//! them up (`DT_GNU_HASH`, else `DT_HASH`), or listed; and the names in its dynamic
//! section (`DT_NEEDED`, `DT_SONAME`). An object with no hash table shows none.

use super::object::{
    word, word16, word32, Object, Tables, DT_GNU_HASH, DT_HASH, DT_JMPREL, DT_NEEDED, DT_PLTREL,
    DT_PLTRELSZ, DT_REL, DT_RELA, DT_RELASZ, DT_RELSZ, DT_STRTAB, DT_SYMTAB, DT_VERSYM, WORD,
};

/// One dynamic symbol.
pub struct Symbol<'a> {
    pub name: &'a [u8],
    /// The object defines it (else imports it).
    pub defined: bool,
    /// Its address in memory, when defined.
    pub address: usize,
    /// Other objects can bind to it: global or weak, default or protected
    /// visibility.
    pub exported: bool,
}

/// `ElfW(Sym)`: its size and the offsets of `st_name`, `st_value`, `st_info`,
/// `st_other` and `st_shndx`.
#[cfg(target_pointer_width = "64")]
const SYM: [usize; 6] = [24, 0, 8, 4, 5, 6];
#[cfg(target_pointer_width = "32")]
const SYM: [usize; 6] = [16, 0, 4, 12, 13, 14];

impl<'o> Object<'o> {
    /// The symbol at `index` of the table, if it can be read.
    fn symbol_at<'t>(&self, tables: &Tables<'t>, index: usize) -> Option<Symbol<'t>> {
        let [size, name_at, value_at, info_at, other_at, section_at] = SYM;
        let entry = tables
            .symbols
            .get(index.checked_mul(size)?..)?
            .get(..size)?;
        let name = tables.names.get(word32(entry, name_at)? as usize..)?;
        let name = &name[..name.iter().position(|&byte| byte == 0)?];
        let section = word16(entry, section_at)?;
        let value = match WORD {
            8 => word(entry, value_at),
            _ => word32(entry, value_at)? as usize,
        };
        let (binding, visibility) = (entry[info_at] >> 4, entry[other_at] & 3);
        Some(Symbol {
            name,
            defined: section != SHN_UNDEF,
            address: self.load_offset().wrapping_add(value),
            exported: matches!(binding, STB_GLOBAL | STB_WEAK | STB_GNU_UNIQUE)
                && matches!(visibility, STV_DEFAULT | STV_PROTECTED),
        })
    }

    /// How many symbols the table holds, as its hash table tells; where a GNU hash
    /// table hashes none (all its buckets empty: a program that exports nothing),
    /// it tells nothing of the symbols before its first hashed index (AArch64's
    /// linker then says 1), so the table is taken to end where the next of the
    /// object's dynamic tables begins (the string table, in every linker's layout).
    fn symbol_count(&self, tables: &Tables) -> usize {
        let count = match tables.gnu_hash {
            Some(gnu_hash) => gnu_symbol_count(gnu_hash).map(|(count, hashed)| match hashed {
                true => count,
                false => count.max(self.symbols_before_next_table()),
            }),
            None => tables
                .hash
                .and_then(|hash| word32(hash, 4))
                .map(|n| n as usize),
        };
        count.unwrap_or(0).min(tables.symbols.len() / SYM[0])
    }

    /// How many symbols fit between the symbol table and the nearest dynamic table
    /// above it.
    fn symbols_before_next_table(&self) -> usize {
        let Some(symbols) = self.dynamic_value(DT_SYMTAB) else {
            return 0;
        };
        let next = self
            .dynamic()
            .filter(|&(tag, _)| {
                [
                    DT_STRTAB,
                    DT_HASH,
                    DT_GNU_HASH,
                    DT_VERSYM,
                    DT_RELA,
                    DT_REL,
                    DT_JMPREL,
                ]
                .contains(&tag)
            })
            .map(|(_, address)| address)
            .filter(|&address| address > symbols)
            .min();
        next.map_or(0, |next| (next - symbols) / SYM[0])
    }

    /// The dynamic symbols, in table order; none when the tables are missing or lie
    /// outside what the object maps readable (a truncated table yields what is
    /// mapped).
    pub fn symbols(&self) -> impl Iterator<Item = Symbol<'o>> + use<'_, 'o> {
        let tables = self.tables();
        let count = self.symbol_count(&tables);
        (0..count).filter_map(move |index| self.symbol_at(&tables, index))
    }

    /// Whether one of the object's relocations names the symbol `name`: a reference
    /// the loader binds (without one, its calls of it were resolved when it was
    /// linked).
    pub fn references(&self, name: &[u8]) -> bool {
        let tables = self.tables();
        let Some(index) = (0..self.symbol_count(&tables)).find(|&index| {
            self.symbol_at(&tables, index)
                .is_some_and(|s| s.name == name)
        }) else {
            return false;
        };
        let plt_is_rela = self.dynamic_value(DT_PLTREL) == Some(DT_RELA as usize);
        [
            (DT_RELA, DT_RELASZ, true),
            (DT_REL, DT_RELSZ, false),
            (DT_JMPREL, DT_PLTRELSZ, plt_is_rela),
        ]
        .into_iter()
        .any(|(table, size, rela)| {
            let (Some(table), Some(size)) = (self.dynamic_value(table), self.dynamic_value(size))
            else {
                return false;
            };
            let bytes = self.bytes(table).unwrap_or_default();
            relocated_symbols(&bytes[..bytes.len().min(size)], rela).any(|i| i == index)
        })
    }

    /// The definition of `name` the object offers other objects, found through its
    /// hash table as the dynamic loader finds it (without symbol versions: the
    /// first definition of the name). Allocates nothing.
    pub fn lookup(&self, name: &[u8]) -> Option<Symbol<'_>> {
        let tables = self.tables();
        let found = |index: usize| {
            self.symbol_at(&tables, index)
                .filter(|symbol| symbol.name == name && symbol.defined && symbol.exported)
        };
        match tables.gnu_hash {
            Some(table) => gnu_find(table, name, found),
            None => sysv_find(tables.hash?, name, found),
        }
    }

    /// The names of the objects it needs (`DT_NEEDED`), in order.
    pub fn needed(&self) -> impl Iterator<Item = &'o [u8]> + 'o {
        let names = self.tables().names;
        self.dynamic()
            .filter(|&(tag, _)| tag == DT_NEEDED)
            .filter_map(move |(_, offset)| string_at(names, offset))
    }

    /// Its `DT_SONAME`, if any.
    pub fn soname(&self) -> Option<&'o [u8]> {
        let tables = self.tables();
        string_at(tables.names, tables.soname?)
    }
}

/// The symbol index of each relocation in `table`: `Rela` entries (`rela`: offset,
/// info, addend) or `Rel` ones (offset, info), a word each.
fn relocated_symbols(table: &[u8], rela: bool) -> impl Iterator<Item = usize> + '_ {
    let entry = if rela { 3 * WORD } else { 2 * WORD };
    table.chunks_exact(entry).map(|entry| {
        let info = word(entry, WORD);
        // ELF64_R_SYM / ELF32_R_SYM.
        if cfg!(target_pointer_width = "64") {
            info >> 32
        } else {
            info >> 8
        }
    })
}

/// The NUL-terminated string at `offset` of the string table `names`.
fn string_at(names: &[u8], offset: usize) -> Option<&[u8]> {
    let name = names.get(offset..)?;
    Some(&name[..name.iter().position(|&byte| byte == 0)?])
}

const SHN_UNDEF: u16 = 0;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;
const STB_GNU_UNIQUE: u8 = 10;
const STV_DEFAULT: u8 = 0;
const STV_PROTECTED: u8 = 3;

/// The GNU hash of `name` (`dl_new_hash`).
pub(crate) fn gnu_hash(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &byte| {
        h.wrapping_mul(33).wrapping_add(byte.into())
    })
}

/// The SysV ELF hash of `name` (`_dl_elf_hash`).
fn sysv_hash(name: &[u8]) -> u32 {
    name.iter().fold(0u32, |h, &byte| {
        let h = (h << 4).wrapping_add(byte.into());
        let high = h & 0xf000_0000;
        (h ^ (high >> 24)) & !high
    })
}

/// The first symbol `found` accepts among those a GNU hash table (`bytes` from its
/// start) offers for `name`, after its bloom filter; None also when the table is
/// cut short.
fn gnu_find<T>(bytes: &[u8], name: &[u8], found: impl Fn(usize) -> Option<T>) -> Option<T> {
    let hash = gnu_hash(name);
    let buckets = word32(bytes, 0)? as usize;
    let first_hashed = word32(bytes, 4)? as usize;
    let bloom_words = word32(bytes, 8)? as usize;
    let shift = word32(bytes, 12)?;
    if buckets == 0 || bloom_words == 0 {
        return None;
    }
    let bits = 8 * WORD as u32;
    let bloom_at = 16 + (hash / bits) as usize % bloom_words * WORD;
    let bloom = word(bytes.get(..bloom_at.checked_add(WORD)?)?, bloom_at);
    let mask = (1usize << (hash % bits)) | (1usize << ((hash >> (shift % 32)) % bits));
    if bloom & mask != mask {
        return None;
    }
    let buckets_at = 16usize.checked_add(bloom_words.checked_mul(WORD)?)?;
    let chains_at = buckets_at.checked_add(buckets.checked_mul(4)?)?;
    let mut symbol = word32(bytes, buckets_at + 4 * (hash as usize % buckets))? as usize;
    if symbol < first_hashed {
        return None;
    }
    loop {
        let at = chains_at.checked_add((symbol - first_hashed).checked_mul(4)?)?;
        let entry = word32(bytes, at)?;
        if entry | 1 == hash | 1 {
            if let Some(found) = found(symbol) {
                return Some(found);
            }
        }
        if entry & 1 == 1 {
            return None;
        }
        symbol += 1;
    }
}

/// The first symbol `found` accepts along the chain a SysV hash table (`bytes` from
/// its start) holds for `name` (at most its chain count long, so a crafted loop
/// ends); None also when the table is cut short.
fn sysv_find<T>(bytes: &[u8], name: &[u8], found: impl Fn(usize) -> Option<T>) -> Option<T> {
    let buckets = word32(bytes, 0)? as usize;
    let chains = word32(bytes, 4)? as usize;
    if buckets == 0 {
        return None;
    }
    let mut symbol = word32(bytes, 8 + 4 * (sysv_hash(name) as usize % buckets))? as usize;
    for _ in 0..=chains {
        if symbol == 0 {
            return None;
        }
        if let Some(found) = found(symbol) {
            return Some(found);
        }
        symbol = word32(
            bytes,
            8usize.checked_add(4 * buckets)?.checked_add(4 * symbol)?,
        )? as usize;
    }
    None
}

/// The number of symbols a GNU hash table (`bytes` from its start) covers: one past
/// the last symbol of the longest-reaching chain (true), or, when every bucket is
/// empty, the first hashed symbol's index (false: nothing is known past it). None
/// when the table is cut short.
fn gnu_symbol_count(bytes: &[u8]) -> Option<(usize, bool)> {
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
        return Some((first_hashed, false));
    }
    // Each chain ends at an entry whose lowest bit is set.
    let mut symbol = last;
    loop {
        let at = chains_at.checked_add((symbol - first_hashed).checked_mul(4)?)?;
        if word32(bytes, at)? & 1 == 1 {
            return Some((symbol + 1, true));
        }
        symbol += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{gnu_hash, sysv_hash};

    #[test]
    fn hashes_as_the_loader_computes_them() {
        // Values from the ELF gABI and glibc's dl-hash.h / dl-new-hash.h.
        assert_eq!(gnu_hash(b""), 5381);
        assert_eq!(gnu_hash(b"printf"), 0x156b_2bb8);
        assert_eq!(sysv_hash(b""), 0);
        assert_eq!(sysv_hash(b"printf"), 0x0779_05a6);
    }
}
