//! One table of `refilter`: opened through the database directory's handle (a
//! regular file of the size its MANIFEST says, never a symlink), its new file
//! created beside it with its permissions, the data blocks copied in the kernel
//! (`copy_file_range`), the new filter block, metaindex, index and footer written
//! after them, synced, and read back: the new end of the table compared with what
//! was built, its filter block and index decoded once.

use anyhow::{anyhow, bail, Result};
use serde::Serialize;
use std::fs::File;
use std::io::{self, Read, Write};

use leveldb_bloom::BloomFilterPolicy;
use leveldb_table::db::manifest::LiveTable;
use leveldb_table::{NewTail, ReadAt, Table};

use crate::audit::{consulted_filters, measure};
use crate::refilter::commit::{sync, Commit};
use crate::refilter::db_dir::{ownership, DbDir};

/// One table given new filters.
#[derive(Debug, Serialize)]
pub struct TableRefiltered {
    pub level: usize,
    /// The old table's file, and the new one's.
    pub old: String,
    pub new: String,
    pub entries: u64,
    pub old_size: u64,
    pub new_size: u64,
    pub filter_block_bytes: u64,
    /// The new filters' bits per key, offset array and empty filters left out, as
    /// the audit measures them (`measured_bits_per_key`; in JSON, `bits_per_key`).
    #[serde(rename = "bits_per_key")]
    pub measured_bits_per_key: f64,
    pub false_positive_percent: Option<f64>,
}

/// A live table and the file that replaces it, both open.
pub struct Job<'t> {
    pub table: &'t LiveTable,
    old_name: String,
    old: File,
    new_name: String,
    new: File,
    number: u64,
}

impl<'t> Job<'t> {
    /// Opens live table `table` of `dir` and creates its replacement, number
    /// `number`, in `commit`.
    pub fn open(
        dir: &DbDir,
        table: &'t LiveTable,
        number: u64,
        commit: &mut Commit,
    ) -> Result<Self> {
        let old_name = table_name(dir, table)?;
        let named = |e: io::Error| anyhow!("{}: {e}", dir.display(&old_name));
        let old = dir.open_regular(&old_name).map_err(named)?;
        let old_size = old.size().map_err(named)?;
        if old_size != table.size {
            // LevelDB reads the footer where the MANIFEST's size puts it.
            bail!(
                "{}: {old_size} bytes, but the MANIFEST says {}",
                dir.display(&old_name),
                table.size
            );
        }
        let like = ownership(&old).map_err(named)?;
        let new_name = format!("{number:06}.ldb");
        let new = commit.create(&new_name, like)?;
        Ok(Self {
            table,
            old_name,
            old,
            new_name,
            new,
            number,
        })
    }

    /// Writes the new table with `policy`'s filters, syncs it and checks it; its
    /// MANIFEST entry and what was done.
    pub fn run(
        &self,
        dir: &DbDir,
        policy: BloomFilterPolicy,
    ) -> Result<(LiveTable, TableRefiltered)> {
        let tail = leveldb_table::new_tail(&self.old, policy.name(), |keys, dst| {
            policy.append_filter(keys.iter(), dst)
        })
        .map_err(|e| anyhow!("{}: {e}", dir.display(&self.old_name)))?;
        let written = tail.rewritten;
        copy_data(&self.old, &self.new, written.data_len)
            .and_then(|()| (&self.new).write_all(&tail.bytes))
            .map_err(|e| anyhow!("{}: {e}", dir.display(&self.new_name)))?;
        sync(dir, &self.new_name, &self.new)?;
        let (measured_bits_per_key, false_positive_percent) =
            self.check(&tail, policy).map_err(|why| {
                anyhow!(
                    "{}: the new table fails its check: {why}",
                    dir.display(&self.new_name)
                )
            })?;
        let done = TableRefiltered {
            level: self.table.level,
            old: dir.display(&self.old_name),
            new: dir.display(&self.new_name),
            entries: written.entries,
            old_size: self.table.size,
            new_size: written.size,
            filter_block_bytes: written.filter_block_len,
            measured_bits_per_key,
            false_positive_percent,
        };
        let new = LiveTable {
            number: self.number,
            size: written.size,
            ..self.table.clone()
        };
        Ok((new, done))
    }

    /// Reads the new table back: its length, its bytes after the data blocks equal
    /// to what was built, its footer, filter block (under `policy`'s name) and
    /// index decoded, checksums verified; the filters' bits per key and measured
    /// false-positive rate.
    fn check(&self, tail: &NewTail, policy: BloomFilterPolicy) -> Result<(f64, Option<f64>)> {
        let written = tail.rewritten;
        let size = self.new.size()?;
        if size != written.size {
            bail!("{size} bytes, {} written", written.size);
        }
        let mut back = vec![0; tail.bytes.len()];
        self.new.read_exact_at(&mut back, written.data_len)?;
        if back != tail.bytes {
            bail!("its bytes after the data blocks differ from those written");
        }
        let table = Table::open(&self.new)?;
        let Some(filters) = table.filter(policy.name())? else {
            bail!("no filter block named {}", policy.name());
        };
        if filters.offset() != written.data_len || filters.contents() != tail.filter_block() {
            bail!("its filter block is not the one built");
        }
        table.block(table.index())?;
        if let Some(e) = filters.ignored() {
            bail!("{e}");
        }
        Ok(measure(&consulted_filters(&filters, &tail.keys_per_filter)))
    }
}

/// Copies the first `len` bytes of `old` to the start of `new`, in the kernel where
/// the file systems allow it: `io::copy` between two files is `copy_file_range`
/// (falling back to `sendfile`, then to a read and write loop). Both handles are at
/// offset 0: the table was read with `pread` only.
fn copy_data(old: &File, new: &File, len: u64) -> io::Result<()> {
    let copied = io::copy(&mut old.take(len), &mut &*new)?;
    if copied != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{copied} of the old table's {len} bytes of data blocks copied"),
        ));
    }
    Ok(())
}

/// The file name of table `number` in `dir`: `NNNNNN.ldb`, or `NNNNNN.sst` (the
/// name before LevelDB 1.14, which LevelDB still opens) when only that one exists;
/// refused when neither is there but Basho's directory of its level is.
fn table_name(dir: &DbDir, table: &LiveTable) -> Result<String> {
    let number = table.number;
    let (ldb, sst) = (format!("{number:06}.ldb"), format!("{number:06}.sst"));
    let exists = |name: &str| {
        dir.exists(name)
            .map_err(|e| anyhow!("{}: {e}", dir.display(name)))
    };
    if exists(&ldb)? {
        return Ok(ldb);
    }
    if exists(&sst)? {
        return Ok(sst);
    }
    // Basho's LevelDB keeps each level's tables in a directory of its own.
    let level_dir = format!("sst_{}", table.level);
    if exists(&level_dir)? {
        bail!(
            "{}: a table of Basho's LevelDB (in {level_dir}/): its readers take \
             leveldb.BuiltinBloomFilter2 for Basho's bloom2, so it is not refiltered",
            dir.display(&ldb)
        );
    }
    Ok(ldb)
}
