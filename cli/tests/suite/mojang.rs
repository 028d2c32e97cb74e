//! Minecraft Bedrock worlds, written and read by Mojang's LevelDB itself
//! (leveldb-mcpe, vendored by the amulet-leveldb 1.0.7 sdist that
//! scripts/ensure-leveldb downloads into target/reach/amulet-sdist; built once by
//! tests/reach/build-mojang-leveldb into target/reach/mojang; no Python involved),
//! through cli/tests/mojang_world.cc: a world written with no filter policy and
//! refiltered holds the very tables Mojang's LevelDB writes with
//! `NewBloomFilterPolicy(10)`, for raw deflate (Bedrock's id 4), zlib (Mojang's id
//! 2) and zstd (id 3) blocks; Mojang's LevelDB then reads every key; audit, explain
//! and show read the world.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::*;
use leveldb_table::Table;

/// `target/reach`: what `make test`'s deps step downloads, and builds cached there.
fn reach() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp")
        .join("reach")
}

/// mojang_world.cc linked to Mojang's LevelDB, built once per test run.
fn mojang_world() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let sdist = reach().join("amulet-sdist");
        assert!(
            sdist.join("leveldb-mcpe").is_dir(),
            "{} missing: run scripts/ensure-leveldb (make test does)",
            sdist.display()
        );
        let built = succeed(
            Command::new(Path::new(REPO).join("tests/reach/build-mojang-leveldb"))
                .arg(&sdist)
                .arg(reach().join("mojang")),
        );
        let lib = PathBuf::from(String::from_utf8(built.stdout).unwrap().trim());
        let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("mojang_world.{}", std::process::id()));
        let mut compile = Command::new("g++");
        compile
            .args(["-std=c++17", "-O1", "-DDLLX=", "-DLEVELDB_PLATFORM_POSIX"])
            .arg(format!("-I{}", lib.join("include").display()))
            .arg(Path::new(REPO).join("cli/tests/mojang_world.cc"))
            .arg(lib.join("libleveldb-mcpe.a"))
            .args(["-lz", "-lpthread", "-o"])
            .arg(&out);
        if lib.join("zstd").exists() {
            compile.args(["-DZSTD", "-lzstd"]);
        }
        succeed(&mut compile);
        out
    })
}

/// A world Mojang's LevelDB writes: `keys` chunk records, its blocks compressed
/// with `compressor`, with LevelDB's bloom policy or none.
fn world(policy: &str, compressor: &str, keys: u32) -> Scratch {
    let dir = Scratch::new();
    succeed(Command::new(mojang_world()).arg("write").arg(&dir.0).args([
        policy,
        compressor,
        &keys.to_string(),
    ]));
    dir
}

/// The compression id of `table`'s index block (compressed as its data blocks are).
fn index_compression(table: &[u8]) -> u8 {
    let index = Table::open(table).unwrap().index();
    table[(index.offset + index.size) as usize]
}

/// Refilters a world written with no policy and checks it against the world written
/// with LevelDB's: the same tables byte for byte, every key read by Mojang's LevelDB.
fn refiltered_world_is_mojangs(compressor: &str, id: u8, keys: u32) {
    let (plain, bloom) = (
        world("none", compressor, keys),
        world("bloom", compressor, keys),
    );
    let (code, json, stderr) = refilter_json(&plain.0, &["--bits-per-key", "10"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["committed"], true);
    let (ours, theirs) = (live_table_files(&plain.0), live_table_files(&bloom.0));
    assert!(!ours.is_empty() && ours.len() == theirs.len());
    for (ours, theirs) in ours.iter().zip(&theirs) {
        let (ours, theirs) = (std::fs::read(ours).unwrap(), std::fs::read(theirs).unwrap());
        assert_eq!(
            index_compression(&theirs),
            id,
            "Mojang's id for {compressor}"
        );
        assert!(
            ours == theirs,
            "{compressor}: the refiltered table is Mojang's"
        );
    }
    let read = succeed(
        Command::new(mojang_world())
            .arg("read")
            .arg(&plain.0)
            .arg(keys.to_string()),
    );
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(
        text.contains(&format!("read: {keys} present, {keys} absent, 0 wrong")),
        "{text}"
    );
    let (code, audit) = audit_json(&plain.0);
    assert_eq!(code, 0, "{audit}");
    assert_eq!(audit["tables"][0]["dialect"], "leveldb");
}

#[test]
fn a_bedrock_world_refiltered_holds_the_tables_mojangs_leveldb_writes() {
    // Raw deflate (id 4) and 160 KiB blocks, as Bedrock and Amulet write worlds.
    refiltered_world_is_mojangs("raw", 4, 20_000);
}

#[test]
fn mojangs_zlib_and_zstd_worlds_are_read_and_refiltered() {
    refiltered_world_is_mojangs("zlib", 2, 5_000);
    if reach().join("mojang/zstd").exists() {
        refiltered_world_is_mojangs("zstd", 3, 5_000);
    } else {
        test_support::skipped(
            "Mojang's zstd blocks (id 3)",
            "built without libzstd's headers",
        );
    }
}

#[test]
fn explain_and_show_read_a_bedrock_world() {
    let bloom = world("bloom", "raw", 3_000);
    // Chunk 0's first record: x = -105, z = 0, tag 0x2c.
    let key = "97ffffff000000002c";
    let tool = env!("CARGO_BIN_EXE_leveldb-bloom");
    let output = succeed(
        Command::new(tool)
            .args(["explain", "--hex", "--json"])
            .arg(&bloom.0)
            .arg(key),
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json[0]["found"]["kind"], "value", "{json}");
    let page = bloom.0.join("filter.html");
    let table = live_table_files(&bloom.0).remove(0);
    succeed(
        Command::new(tool)
            .args(["show", "--hex", "--key", key, "-o"])
            .arg(&page)
            .arg(&table),
    );
    assert!(std::fs::metadata(&page).unwrap().len() > 0);
}
