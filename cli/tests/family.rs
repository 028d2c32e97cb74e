//! The LevelDB family beyond LevelDB itself, as the audit reads it: Chromium's
//! IndexedDB order (another comparator), Basho's tables (bloom2 filters, the
//! stats.sst1 block, LZ4, sst_N directories), HyperLevelDB's .sst tables with the
//! signed hash, and goleveldb's configurable filter base.

mod common;

use std::process::Command;

use common::*;

#[test]
fn a_database_of_another_comparator_is_audited_with_a_note() {
    // Chromium's IndexedDB names its comparator idb_cmp1; the audit needs the list
    // of live files, not the order of keys.
    let db = Scratch::new();
    plyvel_script(
        &db.0,
        "import plyvel, sys\n\
         db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10, comparator=lambda a, b: (a > b) - (a < b), comparator_name=b'idb_cmp1')\n\
         for i in range(3000): db.put(b'\\x00\\x01\\x01\\x01%06d' % i, b'v' * 50)\n\
         db.compact_range()\n\
         db.close()\n",
    );
    let (code, stdout, stderr) = audit(&[&db.0]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("comparator \"idb_cmp1\""), "{stdout}");
    assert!(stdout.contains("OK: no key can disappear"), "{stdout}");
    let (_, json) = audit_json(&db.0);
    assert_eq!(json["databases"][0]["tables_from"], "manifest", "{json}");
    assert_eq!(json["tables"][0]["dialect"], "leveldb", "{json}");
    assert_eq!(json["tables"][0]["entries"], 3000, "{json}");
}

/// A copy of the Basho database `name` of cli/tests/fixtures/basho.
fn basho_copy(name: &str) -> Scratch {
    let copy = Scratch::new();
    let from = std::path::Path::new(REPO)
        .join("cli/tests/fixtures/basho")
        .join(name);
    std::fs::create_dir_all(copy.0.join("sst_3")).unwrap();
    for file in ["CURRENT", "MANIFEST-000002", "sst_3/000005.sst"] {
        std::fs::copy(from.join(file), copy.0.join(file)).unwrap();
    }
    copy
}

#[test]
fn basho_bloom2_tables_are_checked_with_bloom2() {
    let db = basho_copy("bloom2");
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
    assert_eq!(t.family, leveldb_table::Family::Basho);
    assert_eq!(bytes[(t.index.offset + t.index.size) as usize], 2);
    let (_, block) = current_filter_block(&t);
    let filters = leveldb_table::FilterBlock::parse(&block, 0).unwrap();
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
}

#[test]
fn bashos_older_bloom_is_the_signed_hash_and_tables_are_found_by_name_too() {
    let db = basho_copy("bloom");
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
fn refilter_leaves_a_basho_database_alone() {
    let db = basho_copy("bloom2");
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
    let (keys, _) = keys_file(&db.0, 3000);
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
    let (code, json) = audit_json(&dir);
    assert_eq!(code, 0, "{json}");
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "legacy-unsigned", "{json}");
        assert_eq!(table["missed"], 0);
    }
    // The same filters read with LevelDB's base, 11: the wrong filters for most
    // blocks, whose keys a reader assuming 11 would miss.
    for table in &tables {
        rewrite_filter_block(table, |block| *block.last_mut().unwrap() = 11);
    }
    let (code, json) = audit_json(&dir);
    assert_eq!(code, 1, "{json}");
    assert!(json["tables"][0]["missed"].as_u64().unwrap() > 0, "{json}");
}
