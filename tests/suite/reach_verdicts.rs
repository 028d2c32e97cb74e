//! `leveldb-bloom reach` answers for the program in hand: a script named as one with
//! the ELF program it runs judged; a file not read never counted as reached; a
//! program that opens databases and sets no policy sent to default bits; a program
//! linked with this library recognised by its link order; an interpreter pointed at
//! its extension modules; Debian's `minetest-server` and `librime1` as shipped
//! (installed by `scripts/ensure-leveldb`; missing, a SKIPPED line).

use crate::common;

use std::path::{Path, PathBuf};

use common::{once, Lang, Program, Scratch};

/// `reach --json FILES`: exit status and the report.
fn reach_json(files: &[&Path]) -> (i32, serde_json::Value) {
    let output = common::command(common::tool())
        .args(["reach", "--json"])
        .args(files)
        .output()
        .expect("the tool runs");
    let report = serde_json::from_slice(&output.stdout).expect("one JSON document");
    (output.status.code().expect("an exit status"), report)
}

/// `c_tests/dropin_c.c` linked to Debian's shared LevelDB, with `-lleveldb_bloom`
/// ahead of `-lleveldb` (`Some(true)`), after it (`Some(false)`), or not at all.
fn dropin_c(bloom: Option<bool>) -> PathBuf {
    let name = match bloom {
        Some(true) => "reach_linked_ahead",
        Some(false) => "reach_linked_behind",
        None => "reach_dropin_c",
    };
    once(name, || {
        let program =
            Program::new(name, Lang::C99, &["c_tests/dropin_c.c"]).arg("-Wl,--no-as-needed");
        match bloom {
            Some(true) => program.link_bloom().arg("-lleveldb"),
            Some(false) => program.arg("-lleveldb").link_bloom(),
            None => program.arg("-lleveldb"),
        }
        .build()
    })
}

/// A file `name` in `dir` holding `text`, executable.
fn script(dir: &Scratch, name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir.dir()).unwrap();
    let path = dir.dir().join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_script_is_named_and_the_program_it_runs_judged() {
    let program = dropin_c(None);
    let dir = Scratch::new();
    let text = format!(
        "#!/bin/sh\nDIR={}\nexec \"$DIR/{}\" \"$@\"\n",
        program.parent().unwrap().display(),
        program.file_name().unwrap().to_string_lossy()
    );
    let wrapper = script(&dir, "wrapper", &text);
    let (status, report) = reach_json(&[&wrapper]);
    assert_eq!(status, 0, "{report}");
    let files = report["files"].as_array().unwrap();
    assert_eq!(files[0]["script"]["interpreter"], "/bin/sh", "{report}");
    assert_eq!(files[1]["path"], program.to_str().unwrap(), "{report}");
    assert_eq!(files[1]["run_by"], wrapper.to_str().unwrap(), "{report}");
    assert_eq!(files[1]["verdict"], "calls-through-linker", "{report}");
    assert_eq!(report["reached_all"], true, "{report}");
    let (_, text) = common::reach(&[&wrapper]);
    assert!(
        text.starts_with(&format!(
            "{}: a script (#!/bin/sh) that runs {}: judged next.\n",
            wrapper.display(),
            program.display()
        )),
        "{text}"
    );
}

#[test]
fn a_file_not_read_or_not_judged_is_never_counted_as_reached() {
    let dir = Scratch::new();
    let missing = dir.dir().join("missing");
    let echo = script(&dir, "echo", "#!/bin/sh\necho hello\n");
    for (file, list) in [(&missing, "not_read"), (&echo, "not_judged")] {
        let (status, report) = reach_json(&[file]);
        assert_eq!(status, 1, "{report}");
        assert_eq!(report["reached_all"], false, "{report}");
        assert_eq!(report[list][0], file.to_str().unwrap(), "{report}");
        let (_, text) = common::reach(&[file]);
        assert!(!text.contains("reaches every"), "{text}");
        assert!(text.ends_with("No file was judged: nothing is known of LD_PRELOAD's reach (above: what to judge).\n"), "{text}");
    }
    // Beside a file judged: what was not read is said, and the verdict is only
    // about the rest.
    let (status, text) = common::reach(&[&missing, &dropin_c(None)]);
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains(&format!(
            "Not read (the errors are on stderr), so not judged: {}.",
            missing.display()
        )),
        "{text}"
    );
    assert!(!text.contains("in these files"), "{text}");
}

#[test]
fn a_program_linked_with_this_library_is_recognised() {
    let (status, ahead) = reach_json(&[&dropin_c(Some(true))]);
    assert_eq!(status, 0, "{ahead}");
    assert_eq!(ahead["files"][0]["verdict"], "linked-ahead", "{ahead}");
    assert_eq!(ahead["files"][0]["route"], "nothing to do");
    let (status, behind) = reach_json(&[&dropin_c(Some(false))]);
    assert_eq!(status, 0, "{behind}");
    assert_eq!(behind["files"][0]["verdict"], "linked-behind", "{behind}");
    let route = behind["files"][0]["route"].as_str().unwrap();
    assert!(
        route.starts_with("LD_PRELOAD=libleveldb_bloom.so.0, or relink"),
        "{route}"
    );
}

#[test]
fn a_program_that_opens_databases_without_a_policy_is_sent_to_default_bits() {
    let dir = Scratch::new();
    std::fs::create_dir_all(dir.dir()).unwrap();
    let source = dir.dir().join("open_only.c");
    std::fs::write(
        &source,
        "#include <leveldb/c.h>\n\
         int main(int argc, char** argv) {\n\
           char* error = 0;\n\
           leveldb_options_t* options = leveldb_options_create();\n\
           leveldb_t* db = argc > 1 ? leveldb_open(options, argv[1], &error) : 0;\n\
           if (db) leveldb_close(db);\n\
           leveldb_options_destroy(options);\n\
           return error != 0;\n\
         }\n",
    )
    .unwrap();
    let program = Program::new("reach_open_only", Lang::C99, &[source.to_str().unwrap()])
        .arg("-lleveldb")
        .build();
    let (status, report) = reach_json(&[&program]);
    assert_eq!(status, 0, "{report}");
    let file = &report["files"][0];
    assert_eq!(file["verdict"], "opens-without-policy", "{report}");
    assert_eq!(file["default_bits"], "reaches", "{report}");
    let route = file["route"].as_str().unwrap();
    assert!(
        route.contains("leveldb-bloom refilter DB")
            && route.contains("leveldb-bloom run --default-bits 10"),
        "{route}"
    );
}

#[test]
fn an_interpreter_is_pointed_at_its_extension_modules() {
    let dir = Scratch::new();
    let python_script = script(&dir, "app.py", "#!/usr/bin/python3\nimport plyvel\n");
    let (status, report) = reach_json(&[Path::new("/usr/bin/python3"), &python_script]);
    assert_eq!(status, 1, "{report}");
    for file in &report["files"].as_array().unwrap()[..] {
        if file["script"].is_object() {
            continue;
        }
        assert_eq!(file["verdict"], "python-interpreter", "{report}");
        assert!(file["reached"].is_null(), "{report}");
        assert!(
            file["route"]
                .as_str()
                .unwrap()
                .contains("print(m.__file__)"),
            "{report}"
        );
    }
    assert_eq!(report["reached_all"], false, "{report}");
}

/// Debian's real programs (`make deps` installs them): Minetest's server (a shell script running
/// an ELF program that opens its map databases with no filter policy) and librime's
/// library (the same for its user dictionaries).
#[test]
fn minetest_and_librime_as_debian_ships_them() {
    let candidates = [
        ("/usr/games/minetestserver", "minetest-server"),
        ("/usr/lib/x86_64-linux-gnu/librime.so.1", "librime1"),
    ];
    for (file, package) in candidates {
        let path = Path::new(file);
        if !path.exists() {
            let why = format!("{file} is missing (apt-get install {package})");
            test_support::skipped(&format!("reach on {file}"), &why);
            continue;
        }
        let (status, report) = reach_json(&[path]);
        assert_eq!(status, 0, "{report}");
        let files = report["files"].as_array().unwrap();
        let judged = files.last().unwrap();
        assert_eq!(judged["verdict"], "opens-without-policy", "{report}");
        assert_eq!(judged["default_bits"], "reaches", "{report}");
        if file.contains("games") {
            assert!(files[0]["script"].is_object(), "{report}");
        }
    }
}

/// docs/tool.md's sample: Debian's LevelDB and plyvel's extension module, both
/// reached, both opening databases the default bits reach.
#[test]
fn the_docs_sample_reach_is_what_it_prints() {
    let leveldb = Path::new("/usr/lib/x86_64-linux-gnu/libleveldb.so.1d");
    let plyvel = std::fs::read_dir("/usr/lib/python3/dist-packages/plyvel")
        .expect("python3-plyvel (scripts/ensure-leveldb installs it)")
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with(".so"))
        .expect("plyvel's extension module");
    if !leveldb.exists() {
        test_support::skipped(
            "the reach sample",
            &format!("{} is missing (not x86-64 Debian)", leveldb.display()),
        );
        return;
    }
    let (status, printed) = common::reach(&[leveldb, &plyvel]);
    assert_eq!(status, 0, "{printed}");
    let shown = "/usr/lib/python3/dist-packages/plyvel/_plyvel.cpython-311-x86_64-linux-gnu.so";
    let replace = [(plyvel.to_str().unwrap(), shown)];
    test_support::samples::assert_sample(
        common::repo(),
        "docs/tool.md",
        "reach-debian",
        &printed,
        &replace,
    );
}
