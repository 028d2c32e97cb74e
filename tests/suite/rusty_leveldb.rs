//! rusty-leveldb with the core crate's policy (its `rusty-leveldb` feature, which
//! this crate's dev-dependency turns on): a database it writes reads back (every key
//! found, absent keys absent, the filters consulted), in rusty-leveldb and in the real
//! LevelDB, and every filter stored in its tables is the filter this crate builds for
//! the keys of the data blocks it covers, read from the table files themselves.

use crate::common;

use std::cell::Cell;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;

use common::{Lang, Program};

use bloom::{BloomFilterPolicy, Filter, POLICY_NAME};
use leveldb_table::{Lookup, Table};
use rusty_leveldb::env::Env;
use rusty_leveldb::{FilterPolicy, MemEnv, Options, DB};

const BITS_PER_KEY: u32 = 10;
/// Keys 0, 2, 4, … are written; the odd ones, which fall between them, are absent.
const KEY_SPACE: usize = 24_000;
const DB_NAME: &str = "db";

/// Keys of varied length, so that every hash tail length occurs.
fn key(i: usize) -> Vec<u8> {
    format!("{i:06}{}", "k".repeat(i % 7)).into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    format!("value {i} ").repeat(1 + i % 4).into_bytes()
}

fn options(env: &Rc<Box<dyn Env>>, policy: impl FilterPolicy + 'static) -> Options {
    let mut options = rusty_leveldb::in_memory();
    options.env = Rc::clone(env);
    options.filter_policy = Rc::new(Box::new(policy));
    // Small memtables and tables: many of them, flushed and compacted while writing.
    options.write_buffer_size = 64 << 10;
    options.max_file_size = 128 << 10;
    options
}

/// A database of the even keys, written with this crate's policy and compacted into
/// tables, in a fresh in-memory environment.
fn written_database() -> Rc<Box<dyn Env>> {
    let env: Rc<Box<dyn Env>> = Rc::new(Box::new(MemEnv::new()));
    let mut db = DB::open(DB_NAME, options(&env, BloomFilterPolicy::new(BITS_PER_KEY)))
        .expect("database opens");
    for i in (0..KEY_SPACE).step_by(2) {
        db.put(&key(i), &value(i)).expect("put");
    }
    db.compact_range(&key(0), &key(KEY_SPACE))
        .expect("compaction");
    db.close().expect("close");
    env
}

/// This crate's policy, counting the filter queries that answered "absent".
struct CountingPolicy {
    policy: BloomFilterPolicy,
    rejections: Rc<Cell<usize>>,
}

impl FilterPolicy for CountingPolicy {
    fn name(&self) -> &'static str {
        FilterPolicy::name(&self.policy)
    }

    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        FilterPolicy::create_filter(&self.policy, keys, key_offsets)
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let matches = FilterPolicy::key_may_match(&self.policy, key, filter);
        self.rejections
            .set(self.rejections.get() + usize::from(!matches));
        matches
    }
}

#[test]
fn database_reads_back_through_the_filters() {
    let env = written_database();
    let rejections = Rc::new(Cell::new(0));
    let policy = CountingPolicy {
        policy: BloomFilterPolicy::new(BITS_PER_KEY),
        rejections: Rc::clone(&rejections),
    };
    let mut db = DB::open(DB_NAME, options(&env, policy)).expect("database reopens");

    for i in (0..KEY_SPACE).step_by(2) {
        assert_eq!(db.get(&key(i)).as_deref(), Some(&value(i)[..]), "key {i}");
    }
    assert_eq!(rejections.get(), 0, "a present key was rejected");
    let absent = KEY_SPACE / 2;
    for i in (1..KEY_SPACE).step_by(2) {
        assert_eq!(db.get(&key(i)), None, "key {i}");
    }
    // Each absent key lies inside some table's key range, so its filter is asked;
    // at 10 bits per key it says "absent" about 99% of the time.
    assert!(
        rejections.get() > absent * 9 / 10,
        "{} of {absent} absent keys rejected by filters",
        rejections.get()
    );
}

#[test]
fn leveldb_reads_the_database() {
    let dir = common::lib_dir().join("rusty-leveldb-db");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("database directory");
    let env = written_database();
    for name in env.children(Path::new(DB_NAME)).expect("listing") {
        fs::write(dir.join(&name), read_file(&env, &name)).expect("copy");
    }
    // The real LevelDB, with its own bloom policy: it uses the filters stored under
    // its name, so a key they lost would not be found.
    let reader = Program::new("rusty_db_reader", Lang::C99, &["c_tests/rusty_db_reader.c"])
        .arg("-lleveldb")
        .build();
    let output = common::harness::run_to_report(
        Command::new(reader).arg(&dir).arg(KEY_SPACE.to_string()),
        "rusty_db_reader",
    );
    let half = KEY_SPACE / 2;
    assert_eq!(
        output.lines().next(),
        Some(format!("found {half} of {half}, absent {half} of {half}").as_str())
    );
}

#[test]
fn stored_filters_are_this_crates_filters() {
    let env = written_database();
    let policy = BloomFilterPolicy::new(BITS_PER_KEY);
    let mut tables = 0;
    let mut filters = 0;
    for name in env.children(Path::new(DB_NAME)).expect("listing") {
        if name.extension().is_none_or(|ext| ext != "ldb") {
            continue;
        }
        let file = read_file(&env, &name);
        let table = Table::open(&file).expect("a table");
        let filter_block = table
            .filter(POLICY_NAME)
            .expect("a readable filter block")
            .expect("the table has a filter block under LevelDB's name");
        let keys_by_filter = table
            .keys_by_filter(&filter_block)
            .expect("the data blocks");
        tables += 1;

        for (index, keys) in keys_by_filter.iter().enumerate() {
            let Lookup::Filter(stored) = filter_block.lookup(index) else {
                panic!("{name:?} filter {index}: bad offsets");
            };
            if keys.is_empty() {
                // LevelDB's builder records no filter for a range without data blocks.
                assert!(stored.is_empty(), "{name:?} filter {index}");
                continue;
            }
            assert_eq!(stored, policy.build_filter(keys), "{name:?} filter {index}");
            let query = Filter::new(stored);
            assert!(keys.iter().all(|key| query.may_contain(key)));
            filters += 1;
        }
    }
    assert!(
        tables >= 2 && filters >= 100,
        "only {tables} tables, {filters} filters"
    );
}

/// The bytes of the database's file `name`.
fn read_file(env: &Rc<Box<dyn Env>>, name: &Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    env.open_sequential_file(&Path::new(DB_NAME).join(name))
        .and_then(|mut file| Ok(file.read_to_end(&mut bytes)?))
        .expect("file reads");
    bytes
}
