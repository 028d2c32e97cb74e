//! The commit's decisions: what a failed commit leaves (nothing), what a completed
//! one leaves (`CURRENT` naming the new MANIFEST), and who may hold the `LOCK`.

use super::*;
use crate::refilter::db_dir::ownership;
use test_support::Scratch;

/// The database directory `scratch` opened, with a `CURRENT` whose ownership new
/// files take.
fn database(scratch: &Scratch) -> (DbDir, Ownership) {
    std::fs::write(scratch.dir().join("CURRENT"), "MANIFEST-000001\n").unwrap();
    let dir = DbDir::open(scratch.dir()).unwrap();
    let like = ownership(&dir.open_regular("CURRENT").unwrap()).unwrap();
    (dir, like)
}

fn names(scratch: &Scratch) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(scratch.dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn an_unfinished_commit_removes_every_file_it_made() {
    let scratch = Scratch::created();
    let (dir, like) = database(&scratch);
    {
        let mut commit = Commit::new(&dir);
        commit.create("000005.ldb", like).unwrap();
        commit.create("MANIFEST-000006", like).unwrap();
        assert_eq!(
            names(&scratch),
            ["000005.ldb", "CURRENT", "MANIFEST-000006"]
        );
    }
    assert_eq!(names(&scratch), ["CURRENT"]);
}

#[test]
fn a_commit_never_creates_over_an_existing_file_and_keeps_it() {
    let scratch = Scratch::created();
    let (dir, like) = database(&scratch);
    let mut commit = Commit::new(&dir);
    let error = commit.create("CURRENT", like).unwrap_err();
    assert!(format!("{error:#}").contains("CURRENT"), "{error:#}");
    drop(commit);
    assert_eq!(
        std::fs::read_to_string(scratch.dir().join("CURRENT")).unwrap(),
        "MANIFEST-000001\n"
    );
}

#[test]
fn a_completed_commit_names_the_new_manifest_in_current_and_keeps_its_files() {
    let scratch = Scratch::created();
    let (dir, like) = database(&scratch);
    let mut commit = Commit::new(&dir);
    let file = commit.create("MANIFEST-000007", like).unwrap();
    commit.sync("MANIFEST-000007", &file).unwrap();
    let warning = commit.replace_current("MANIFEST-000007", 7, like).unwrap();
    assert!(warning.is_none());
    assert_eq!(
        std::fs::read_to_string(scratch.dir().join("CURRENT")).unwrap(),
        "MANIFEST-000007\n"
    );
    // The temporary file was renamed over CURRENT: none is left.
    assert_eq!(names(&scratch), ["CURRENT", "MANIFEST-000007"]);
}

#[test]
fn the_lock_is_exclusive_and_never_removed() {
    let scratch = Scratch::created();
    let (dir, _) = database(&scratch);
    {
        let _held = DbLock::acquire(&dir).unwrap();
        let error = DbLock::acquire(&dir)
            .err()
            .expect("a second holder is refused");
        assert!(
            format!("{error:#}").contains("held by another process"),
            "{error:#}"
        );
    }
    // Made by this run, it stays, as LevelDB leaves its LOCK: a program may hold a
    // lock on it already.
    assert_eq!(names(&scratch), ["CURRENT", "LOCK"]);
    drop(DbLock::acquire(&dir).unwrap());
    assert_eq!(names(&scratch), ["CURRENT", "LOCK"]);
}

#[test]
fn a_directory_without_the_room_asked_is_refused() {
    let scratch = Scratch::created();
    let (dir, _) = database(&scratch);
    check_room(&dir, 0).unwrap();
    let error = check_room(&dir, u64::MAX).unwrap_err().to_string();
    assert!(error.contains("nothing written"), "{error}");
}
