//! `leveldb-bloom refilter` attacked as issue 48 found it: the database directory
//! swapped for a symlink to another database while refilter runs (made
//! deterministic by stopping refilter at each step of its commit, the swap done as
//! `nobody`), a live table that is a symlink to a private file, a stray file of the
//! largest number, and the `LOCK` a failed run made (kept, as LevelDB keeps it).

use crate::common;

use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

/// Every entry of `dir`: name, type and permission bits, and the bytes of a file or
/// the target of a symlink (a FIFO is not read).
fn exact_snapshot(dir: &Path) -> Vec<(PathBuf, u32, Vec<u8>)> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let contents = if metadata.is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if metadata.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                Vec::new() // a FIFO: its type and mode say it all
            };
            (path, metadata.mode(), contents)
        })
        .collect();
    entries.sort();
    entries
}

/// Runs `script` with `sh` as `nobody`, in `dir`.
fn as_nobody(dir: &Path, script: &str) {
    succeed(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .args(["sh", "-ec", script])
            .current_dir(dir),
    );
}

/// Starts refilter on `db`, stopped (SIGSTOP) at crash point `step`; its exit
/// status when it ran to its end without reaching it.
fn refilter_stopped_at(
    db: &Path,
    step: u32,
) -> Result<std::process::Child, std::process::ExitStatus> {
    // Reaped by the waitpid below when it exits (std's wait would find no child).
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("refilter")
        .arg(db)
        .args(["--bits-per-key", "10"])
        .env("LEVELDB_BLOOM_REFILTER_PAUSE_AT", step.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: waits for our own child's stop or exit; `status` is a live int.
    let waited = unsafe { libc::waitpid(child.id() as libc::pid_t, &mut status, libc::WUNTRACED) };
    assert_eq!(waited, child.id() as libc::pid_t);
    if libc::WIFSTOPPED(status) {
        return Ok(child);
    }
    use std::os::unix::process::ExitStatusExt;
    Err(std::process::ExitStatus::from_raw(status))
}

/// Needs the crash-points feature (its pause points) and root (to act as `nobody`).
#[test]
#[cfg_attr(
    not(feature = "crash-points"),
    ignore = "needs the crash-points feature (--all-features)"
)]
fn a_directory_swapped_for_a_symlink_mid_run_leaves_the_database_it_points_to_alone() {
    if !test_support::root_for(
        "a_directory_swapped_for_a_symlink_mid_run_leaves_the_database_it_points_to_alone",
        "the directory swap is done as nobody",
    ) {
        return;
    }
    let original = refilter_db("none");
    let victim = Scratch::new();
    copy_db(&original.0, &victim.0);
    let before = exact_snapshot(&victim.0);
    let version = leveldb_table::db::manifest::live_version(&original.0).unwrap();
    let tables = version.levels.iter().flatten().count() as u64;
    // The temporary file of CURRENT that refilter will make (see the run's numbers).
    let dbtmp = format!("{:06}.dbtmp", version.next_file + tables);
    let mut step = 1;
    let mut cases = 0;
    loop {
        // The attacker's directory, and their database in it, belong to nobody.
        let attacker = Scratch::new();
        let db = attacker.0.join("db");
        copy_db(&original.0, &db);
        succeed(
            Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(&attacker.0),
        );
        std::fs::set_permissions(&attacker.0, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The swap alone (refilter goes on in the directory it opened), and, before
        // CURRENT's temporary file is made (after step 7), the swap with the
        // attacker taking that file's name (refilter fails and removes what it
        // made, from the directory it opened).
        let variants: &[bool] = if step <= 7 { &[false, true] } else { &[false] };
        for &blocks_commit in variants {
            let mut child = match refilter_stopped_at(&db, step) {
                Ok(child) => child,
                Err(status) => {
                    assert!(status.success(), "step {step}: {status:?}");
                    assert!(cases > 10, "{cases} steps seen");
                    leveldb_reads_every_key(&victim.0);
                    return;
                }
            };
            let block = if blocks_commit {
                format!(" && : > moved/{dbtmp}")
            } else {
                String::new()
            };
            as_nobody(
                &attacker.0,
                &format!("mv db moved && ln -s {} db{block}", victim.0.display()),
            );
            // SAFETY: a signal to our own stopped child.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGCONT) };
            let status = child.wait().unwrap();
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            if blocks_commit {
                assert_eq!(status.code(), Some(1), "step {step}: {stderr}");
                assert!(stderr.contains("File exists"), "step {step}: {stderr}");
            } else {
                assert!(status.success(), "step {step}: {stderr}");
            }
            assert!(
                exact_snapshot(&victim.0) == before,
                "step {step}, blocking {blocks_commit}: the victim's directory changed"
            );
            // The database refilter opened is whole: the old version or the new.
            std::fs::remove_file(attacker.0.join("db")).unwrap();
            let _ = std::fs::remove_file(attacker.0.join("moved").join(&dbtmp));
            leveldb_reads_every_key(&attacker.0.join("moved"));
            std::fs::remove_dir_all(attacker.0.join("moved")).unwrap();
            copy_db(&original.0, &db);
            succeed(
                Command::new("chown")
                    .args(["-R", "65534:65534"])
                    .arg(&attacker.0),
            );
            cases += 1;
        }
        step += 1;
    }
}

/// Runs refilter on `db`, which must refuse with a message holding `why` and not
/// `secret`, leaving every entry of the directory as it was.
fn refuses(db: &Path, why: &str, secret: &str) {
    let before = exact_snapshot(db);
    let (code, json, stderr) = refilter_json(db, &["--bits-per-key", "10"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert!(
        !stderr.contains(secret) && !json.to_string().contains(secret),
        "{stderr}"
    );
    assert_eq!(json["committed"], false);
    assert!(
        exact_snapshot(db) == before,
        "{}: entries changed",
        db.display()
    );
}

#[test]
fn symlinked_or_special_files_are_refused_and_never_read() {
    let original = refilter_db("none");
    let private = Scratch::new();
    std::fs::create_dir_all(&private.0).unwrap();
    std::fs::set_permissions(&private.0, std::fs::Permissions::from_mode(0o700)).unwrap();
    let secret = private.0.join("secret");
    // Of a size no message may tell.
    std::fs::write(&secret, vec![b's'; 7_777_777]).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let manifest_name = leveldb_table::db::manifest::live_version(&original.0)
        .unwrap()
        .manifest
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let table = live_table_files(&original.0).pop().unwrap();
    let table_name = table.file_name().unwrap().to_string_lossy().into_owned();
    for (name, why) in [
        (
            table_name.as_str(),
            "a symbolic link, not a regular file (not followed)",
        ),
        (
            manifest_name.as_str(),
            "a symbolic link, not a regular file (not followed)",
        ),
        (
            "CURRENT",
            "a symbolic link, not a regular file (not followed)",
        ),
        ("LOCK", "a symbolic link, not a regular file (not followed)"),
    ] {
        let db = Scratch::new();
        copy_db(&original.0, &db.0);
        std::fs::remove_file(db.0.join(name)).unwrap();
        symlink(&secret, db.0.join(name)).unwrap();
        refuses(
            &db.0,
            &format!("{name}: {why}"),
            &private.0.to_string_lossy(),
        );
        refuses(&db.0, why, "7777777");
    }
    // A FIFO where a table should be is refused without blocking.
    let db = Scratch::new();
    copy_db(&original.0, &db.0);
    std::fs::remove_file(db.0.join(&table_name)).unwrap();
    succeed(Command::new("mkfifo").arg(db.0.join(&table_name)));
    refuses(&db.0, "a FIFO, not a regular file: refused", "\0");
    // The database directory itself given as a symlink.
    let link = Scratch::new();
    symlink(&original.0, &link.0).unwrap();
    let (code, _, stderr) = refilter_json(&link.0, &["--bits-per-key", "10"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("a symbolic link, not a directory"),
        "{stderr}"
    );
}

#[test]
fn new_files_take_the_permissions_of_the_files_they_replace() {
    let db = refilter_db("none");
    let tables = live_table_files(&db.0);
    let manifest = leveldb_table::db::manifest::live_version(&db.0)
        .unwrap()
        .manifest;
    for (file, mode) in [(&tables[0], 0o600), (&tables[1], 0o640)] {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(db.0.join("CURRENT"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let (code, json, stderr) = refilter_json(&db.0, &["--bits-per-key", "10"]);
    assert_eq!(code, 0, "{stderr}");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().mode() & 0o777;
    let new = live_table_files(&db.0);
    assert_eq!(mode(&new[0]), 0o600);
    assert_eq!(mode(&new[1]), 0o640);
    let new_manifest = db.0.join(json["manifest"].as_str().unwrap());
    assert_eq!(mode(&new_manifest), 0o600);
    assert_eq!(mode(&db.0.join("CURRENT")), 0o640);
}

#[test]
fn file_numbers_never_wrap() {
    let original = refilter_db("none");
    let next = leveldb_table::db::manifest::live_version(&original.0)
        .unwrap()
        .next_file;
    // A name LevelDB does not parse is no file of the database: numbers go on.
    let db = Scratch::new();
    copy_db(&original.0, &db.0);
    std::fs::write(db.0.join("18446744073709551615.junk"), b"").unwrap();
    let (code, json, stderr) = refilter_json(&db.0, &["--bits-per-key", "10"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["manifest"], format!("MANIFEST-{:06}", next + 2));
    leveldb_reads_every_key(&db.0);
    // One LevelDB parses leaves no number above it: refused, nothing changed.
    for name in ["18446744073709551615.log", "MANIFEST-18446744073709551615"] {
        let db = Scratch::new();
        copy_db(&original.0, &db.0);
        std::fs::write(db.0.join(name), b"").unwrap();
        refuses(
            &db.0,
            &format!("{name}: file number 18446744073709551615 leaves no number for new files"),
            "\0",
        );
    }
}

/// LevelDB never deletes its LOCK: a program that opened it just before an unlink
/// would hold its lock on a deleted file while the next opener made a fresh one.
/// So a failed run leaves the LOCK it made, and the next run locks that same file.
#[test]
fn a_failed_run_keeps_the_lock_it_made() {
    let db = refilter_db("none");
    std::fs::remove_file(db.0.join("LOCK")).unwrap();
    let last = live_table_files(&db.0).pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(&last, bytes).unwrap();
    let (code, _, stderr) = refilter_json(&db.0, &["--bits-per-key", "10"]);
    assert_eq!(code, 1, "{stderr}");
    let inode = |db: &Path| std::fs::metadata(db.join("LOCK")).expect("LOCK kept").ino();
    let made = inode(&db.0);
    // The second run finds it and changes nothing at all.
    refuses(&db.0, "checksum mismatch", "\0");
    assert_eq!(inode(&db.0), made, "the same LOCK, never replaced");
}
