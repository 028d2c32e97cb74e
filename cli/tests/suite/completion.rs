//! The shell completions complete every subcommand's options and values: in a real
//! interactive bash (bash-completion loaded, TAB typed in a pseudo-terminal:
//! complete_in_bash.py), and, for zsh and fish, in the scripts the tool writes.

use std::path::Path;
use std::process::Command;

use clap::CommandFactory;
use leveldb_bloom_cli::command_line::Cli;

const TOOL: &str = env!("CARGO_BIN_EXE_leveldb-bloom");

fn completion(shell: &str) -> String {
    let output = Command::new(TOOL)
        .args(["completion", shell])
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

/// Every subcommand's long options (but --help), from the definition `--help` shows.
fn long_options() -> Vec<(String, Vec<String>)> {
    Cli::command()
        .get_subcommands()
        .map(|sub| {
            let longs = sub
                .get_arguments()
                .filter_map(|arg| arg.get_long())
                .map(|long| format!("--{long}"))
                .collect();
            (sub.get_name().to_string(), longs)
        })
        .collect()
}

/// What bash offers after `leveldb-bloom LINE<TAB>`.
fn tab_in_bash(script: &Path, line: &str) -> String {
    assert!(
        Path::new("/usr/share/bash-completion/bash_completion").exists(),
        "bash-completion missing: run scripts/ensure-leveldb"
    );
    let output = Command::new("timeout")
        .arg("60")
        .arg("/usr/bin/python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/complete_in_bash.py"))
        .arg(script)
        .arg(Path::new(TOOL).parent().unwrap())
        .arg(line)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn bash_completes_every_option_and_value_on_tab() {
    let dir = test_support::Scratch::new();
    std::fs::create_dir_all(dir.dir()).unwrap();
    let script = dir.dir().join("leveldb-bloom.bash");
    std::fs::write(&script, completion("bash")).unwrap();
    for (sub, longs) in long_options() {
        if sub == "help" {
            continue;
        }
        let offered = tab_in_bash(&script, &format!("{sub} --"));
        let words: Vec<&str> = offered.split_whitespace().collect();
        for long in &longs {
            assert!(
                words.contains(&long.as_str()),
                "`{sub} --<TAB>` did not offer {long}:\n{offered}"
            );
        }
    }
    let offered = tab_in_bash(&script, "explain --policy ");
    let words: Vec<&str> = offered.split_whitespace().collect();
    for value in ["leveldb", "legacy", "none"] {
        assert!(
            words.contains(&value),
            "`explain --policy <TAB>` did not offer {value}:\n{offered}"
        );
    }
}

/// Whether `shell`'s script completes `long` (zsh: `--opt[` or `--opt=[`, after any
/// exclusion group; fish: `-l opt`).
fn names_option(shell: &str, script: &str, long: &str) -> bool {
    match shell {
        "zsh" => script.contains(&format!("{long}[")) || script.contains(&format!("{long}=[")),
        _ => script.contains(&format!(" -l {} ", long.trim_start_matches('-'))),
    }
}

#[test]
fn zsh_and_fish_scripts_name_every_option_and_value() {
    for (shell, value_end) in [("zsh", "\\:"), ("fish", "\\t")] {
        let script = completion(shell);
        for (sub, longs) in long_options() {
            for long in longs {
                assert!(
                    names_option(shell, &script, &long),
                    "{shell}: {sub} {long} missing"
                );
            }
        }
        for value in ["leveldb", "legacy", "none"] {
            assert!(
                script.contains(&format!("{value}{value_end}")),
                "{shell}: --policy value {value} missing"
            );
        }
    }
}
