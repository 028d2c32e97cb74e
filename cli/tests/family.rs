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
    succeed(
        Command::new(PYTHON)
            .arg("-c")
            .arg(
                "import plyvel, sys\n\
                 db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10, comparator=lambda a, b: (a > b) - (a < b), comparator_name=b'idb_cmp1')\n\
                 for i in range(3000): db.put(b'\\x00\\x01\\x01\\x01%06d' % i, b'v' * 50)\n\
                 db.compact_range()\n\
                 db.close()\n",
            )
            .arg(&db.0),
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
