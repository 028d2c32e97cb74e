//! The LevelDB family beyond LevelDB itself, as the tool reads it: Chromium's
//! IndexedDB order (another comparator), Basho's tables (bloom2 filters, the
//! stats.sst1 block, LZ4, sst_N directories), goleveldb's configurable filter base,
//! and the databases of relatives that cannot be built at test time, committed as
//! fixtures written by the real code with the program that drove them
//! (cli/tests/fixtures/write_family.cc; each directory's README names the commit
//! built and the commands): upstream LevelDB after 1.23 with zstd blocks (its id 2),
//! and HyperLevelDB (`.sst` tables, the signed hash under `leveldb.BuiltinBloomFilter`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use leveldb_table::Table;

mod hyperleveldb;

/// A copy of the fixture database `name` of cli/tests/fixtures (`basho/bloom2`,
/// `upstream_zstd/none`, ...), its `sst_N` directories included: refilter writes,
/// and the tool must never change the tree's.
fn fixture_copy(name: &str) -> Scratch {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_dir(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let copy = Scratch::new();
    copy_dir(
        &Path::new(REPO).join("cli/tests/fixtures").join(name),
        &copy.0,
    );
    copy
}

/// The one live table of `db`, its path and bytes.
fn only_table(db: &Path) -> (PathBuf, Vec<u8>) {
    let tables = live_table_files(db);
    assert_eq!(tables.len(), 1, "{tables:?}");
    let bytes = std::fs::read(&tables[0]).unwrap();
    (tables[0].clone(), bytes)
}

/// `bytes` in hex, as the tool's `--hex` reads keys.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key `write_family` puts `i`-th: every third ends in 0xE9, in hex.
fn key_hex(i: u32) -> String {
    let tail = if i.is_multiple_of(3) { "e9" } else { "" };
    hex(format!("family/{:05}", 7 * i).as_bytes()) + tail
}

/// explain's answer, as JSON, for `key_hex` in `db` read with `policy`.
fn explain(db: &Path, policy: &str, key_hex: &str) -> serde_json::Value {
    let output = succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .args(["explain", "--hex", "--json", "--policy", policy])
            .arg(db)
            .arg(key_hex),
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// show draws `table`'s filter LevelDB consults for `key_hex`.
fn show(table: &Path, key_hex: &str) {
    let page = table.with_extension("html");
    succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .args(["show", "--hex", "--key", key_hex, "-o"])
            .arg(&page)
            .arg(table),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<html"), "{}", page.display());
}

/// Writes with plyvel (Debian's LevelDB 1.23) under Chromium's IndexedDB comparator
/// name, `idb_cmp1`, 3,000 keys at `bits` bits per key (0: no policy), compacted; then,
/// when `read_back`, opens it again at 10 bits per key and reads every key (LevelDB
/// refuses a MANIFEST naming another comparator).
fn idb_database(db: &Path, bits: u32, read_back: bool) {
    plyvel_script(
        db,
        &format!(
            "import plyvel, sys\n\
             def open_db(bits): return plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=bits, comparator=lambda a, b: (a > b) - (a < b), comparator_name=b'idb_cmp1')\n\
             keys = [b'\\x00\\x01\\x01\\x01%06d' % i for i in range(3000)]\n\
             if {read_back}:\n\
             \x20   db = open_db(10)\n\
             \x20   assert all(db.get(k) == b'v' * 50 for k in keys)\n\
             else:\n\
             \x20   db = open_db({bits})\n\
             \x20   for k in keys: db.put(k, b'v' * 50)\n\
             \x20   db.compact_range()\n\
             db.close()\n",
            read_back = if read_back { "True" } else { "False" },
        ),
    );
}

#[test]
fn a_database_of_another_comparator_is_audited_with_a_note_and_refiltered() {
    // Chromium's IndexedDB names its comparator idb_cmp1; the audit needs the list
    // of live files, not the order of keys.
    let db = Scratch::new();
    idb_database(&db.0, 10, false);
    let (code, stdout, stderr) = audit(&[&db.0]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("comparator \"idb_cmp1\""), "{stdout}");
    assert!(stdout.contains("OK: no key can disappear"), "{stdout}");
    let (_, json) = audit_json(&db.0);
    assert_eq!(json["databases"][0]["tables_from"], "manifest", "{json}");
    assert_eq!(json["tables"][0]["dialect"], "leveldb", "{json}");
    assert_eq!(json["tables"][0]["entries"], 3000, "{json}");
    show(&live_table_files(&db.0)[0], &hex(b"\x00\x01\x01\x01000007"));

    // Written without a policy and refiltered, it holds the table LevelDB writes with
    // NewBloomFilterPolicy(10), byte for byte, and LevelDB opens it under idb_cmp1.
    let plain = Scratch::new();
    idb_database(&plain.0, 0, false);
    let (code, json, stderr) = refilter_json(&plain.0, &["--bits-per-key", "10"]);
    assert_eq!(
        (code, &json["committed"]),
        (0, &serde_json::json!(true)),
        "{stderr}"
    );
    assert!(
        only_table(&plain.0).1 == only_table(&db.0).1,
        "the refiltered table is LevelDB's own, byte for byte"
    );
    idb_database(&plain.0, 10, true);
}

#[test]
fn basho_bloom2_tables_are_checked_with_bloom2() {
    let db = fixture_copy("basho/bloom2");
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 0, "{json}");
    let table = &json["tables"][0];
    assert_eq!(
        table["file"],
        db.0.join("sst_3/000005.sst").display().to_string()
    );
    assert_eq!(table["level"], 3);
    assert_eq!(table["dialect"], "basho-bloom2", "{json}");
    assert_eq!(table["filter_name"], "leveldb.BuiltinBloomFilter2");
    assert_eq!(
        (table["entries"].as_u64(), table["missed"].as_u64()),
        (Some(1000), Some(0))
    );
    // The blocks are LZ4 (Basho's id 2), the filters bloom2's bits byte for byte.
    let bytes = std::fs::read(db.0.join("sst_3/000005.sst")).unwrap();
    let t = leveldb_table::Table::open(&bytes).unwrap();
    assert_eq!(t.family(), leveldb_table::Family::Basho);
    assert_eq!(bytes[(t.index().offset + t.index().size) as usize], 2);
    let filters = current_filter_block(&t);
    let covered = t.keys_by_filter(&filters).unwrap();
    let mut leveldb_would_miss = 0;
    for (i, keys) in covered
        .iter()
        .enumerate()
        .filter(|(_, keys)| !keys.is_empty())
    {
        let leveldb_table::Lookup::Filter(filter) = filters.lookup(i) else {
            panic!("filter {i}");
        };
        let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        assert_eq!(
            leveldb_bloom_cli::audit::bloom2::create_filter(&keys, 10),
            filter
        );
        leveldb_would_miss += keys
            .iter()
            .filter(|key| !leveldb_bloom::Filter::new(filter).may_contain(key))
            .count();
    }
    // LevelDB's own reader takes the name for its filter: it would lose keys.
    assert!(leveldb_would_miss > 500, "{leveldb_would_miss}");
    show(&db.0.join("sst_3/000005.sst"), &hex(b"riak/00014"));
}

#[test]
fn bashos_older_bloom_is_the_signed_hash_and_tables_are_found_by_name_too() {
    let db = fixture_copy("basho/bloom");
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["tables"][0]["dialect"], "legacy-signed", "{json}");
    assert_eq!(json["tables"][0]["missed"], 0);
    // Without CURRENT, the tables of the sst_N directories are audited by name.
    std::fs::remove_file(db.0.join("CURRENT")).unwrap();
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["databases"][0]["tables_from"], "file names");
    assert_eq!(json["tables"][0]["entries"], 1000, "{json}");
}

#[test]
fn a_basho_table_whose_metaindex_is_lz4_is_bashos() {
    // Basho's LZ4 keeps a metaindex compressed when that saves 12.5% (a filter
    // policy of a long name): its type 2 is LZ4, known by its first bytes.
    let db = fixture_copy("basho/lz4_metaindex");
    let bytes = std::fs::read(db.0.join("sst_3/000005.sst")).unwrap();
    let t = leveldb_table::Table::open(&bytes).unwrap();
    assert_eq!(t.family(), leveldb_table::Family::Basho);
    assert_eq!(
        bytes[(t.metaindex().offset + t.metaindex().size) as usize],
        2
    );
    assert_eq!(t.meta_block_names().unwrap().len(), 2);
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["tables"][0]["entries"], 300, "{json}");
    assert_eq!(json["tables"][0]["dialect"], "unknown-name", "{json}");
    let explained = explain(&db.0, "leveldb", &hex(b"riak/00014"));
    assert_eq!(explained[0]["found"]["kind"], "value", "{explained}");
}

#[test]
fn refilter_leaves_a_basho_database_alone() {
    let db = fixture_copy("basho/bloom2");
    let before = std::fs::read(db.0.join("MANIFEST-000002")).unwrap();
    let (code, json, stderr) = refilter_json(&db.0, &["--bits-per-key", "10"]);
    assert_ne!(code, 0, "{json}");
    let said = format!("{json}{stderr}");
    assert!(said.contains("Basho's LevelDB"), "{said}");
    assert_eq!(
        std::fs::read_to_string(db.0.join("CURRENT")).unwrap(),
        "MANIFEST-000002\n"
    );
    assert_eq!(std::fs::read(db.0.join("MANIFEST-000002")).unwrap(), before);
}

#[test]
fn goleveldbs_configured_filter_base_is_read_from_each_filter_block() {
    let db = Scratch::new();
    std::fs::create_dir_all(&db.0).unwrap();
    let (keys, written) = keys_file(&db.0, 3000);
    let dir = db.0.join("db");
    succeed(
        Command::new(goleveldb_tool())
            .env("FILTER_BASE_LG", "8")
            .arg("write")
            .arg(&dir)
            .arg(&keys),
    );
    let tables = live_table_files(&dir);
    assert!(!tables.is_empty());
    for table in &tables {
        let bytes = std::fs::read(table).unwrap();
        let t = leveldb_table::Table::open(&bytes).unwrap();
        let (_, handle) = t
            .first_filter_block()
            .unwrap()
            .expect("goleveldb's filters");
        let block = t.block(handle).unwrap();
        assert_eq!(
            block.last(),
            Some(&8),
            "{}: goleveldb's base_lg",
            table.display()
        );
    }
    // Binary keys: read for goleveldb (a signed reader would miss some).
    let (code, json) = audit_json_with(&dir, &["--reader", "goleveldb"]);
    assert_eq!(code, 0, "{json}");
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "legacy-unsigned", "{json}");
        assert_eq!(table["missed"], 0);
    }
    let explained = explain(&dir, "legacy", &hex(&written[0]));
    assert_eq!(explained[0]["found"]["kind"], "value", "{explained}");
    assert!(
        explained[0]["steps"][0]["filter"].is_object(),
        "{explained}"
    );
    show(&tables[0], &hex(&written[0]));
    // The same filters read with LevelDB's base, 11: the wrong filters for most
    // blocks, whose keys a reader assuming 11 would miss.
    for table in &tables {
        rewrite_filter_block(table, |block| *block.last_mut().unwrap() = 11);
    }
    let (code, json) = audit_json_with(&dir, &["--reader", "goleveldb"]);
    assert_eq!(code, 1, "{json}");
    assert!(json["tables"][0]["missed"].as_u64().unwrap() > 0, "{json}");
}

#[test]
fn upstream_zstd_tables_are_read_and_refiltered_into_upstreams_own() {
    let (plain, bloom) = (
        fixture_copy("upstream_zstd/none"),
        fixture_copy("upstream_zstd/bloom"),
    );
    let (table, theirs) = only_table(&bloom.0);
    let index = Table::open(&theirs[..]).unwrap().index();
    assert_eq!(
        theirs[(index.offset + index.size) as usize],
        2,
        "upstream's zstd id"
    );
    let (code, json) = audit_json(&bloom.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["tables"][0]["dialect"], "leveldb", "{json}");
    assert_eq!(
        (
            json["tables"][0]["entries"].as_u64(),
            json["missed"].as_u64()
        ),
        (Some(1000), Some(0))
    );
    let explained = explain(&bloom.0, "leveldb", &key_hex(3));
    assert_eq!(explained[0]["found"]["kind"], "value", "{explained}");
    show(&table, &key_hex(3));

    // Refiltered, the database written without a policy holds upstream's table.
    let (code, json, stderr) = refilter_json(&plain.0, &["--bits-per-key", "10"]);
    assert_eq!(
        (code, &json["committed"]),
        (0, &serde_json::json!(true)),
        "{stderr}"
    );
    let (_, ours) = only_table(&plain.0);
    assert!(
        ours == theirs,
        "the refiltered table is upstream's, byte for byte"
    );
    let (code, json) = audit_json(&plain.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["tables"][0]["dialect"], "leveldb", "{json}");
}
