//! The man pages: clap_mangen's rendering of the clap definition that `--help` shows,
//! with a synopsis that names every option's value (`[--filter <N>]`, `[--stats[=<DEST>]]`;
//! clap_mangen's own shows `[--filter]`), and EXAMPLES and SEE ALSO sections.

use std::io::{self, Write};
use std::path::Path;

use clap::{ArgAction, Command, CommandFactory};

use crate::command_line::Cli;

/// The examples of each page, by subcommand ("" for `leveldb-bloom` itself):
/// (what it does, the command).
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            ("Prove that no key of a database can disappear behind its filters:", "leveldb-bloom audit /var/lib/app/db"),
            ("Follow a key through the tables as a Get does:", "leveldb-bloom explain /var/lib/app/db user:1042"),
            ("Draw a table's filters on a page:", "leveldb-bloom show /var/lib/app/db/000005.ldb -o filters.html"),
            ("Give a closed database LevelDB's filters, without rewriting its data:", "leveldb-bloom refilter /var/lib/app/db --bits-per-key 10"),
            ("Will LD_PRELOAD swap a program's LevelDB?", "leveldb-bloom reach ./app"),
            ("Run a program with the library swapped in, its filter statistics on stderr:", "leveldb-bloom run --stats -- python3 app.py"),
        ],
    ),
    (
        "audit",
        &[
            ("Audit a database (its live tables, from the MANIFEST):", "leveldb-bloom audit /var/lib/app/db"),
            ("Audit single table files, quietly:", "leveldb-bloom audit --quiet db/000005.ldb db/000007.ldb"),
            ("The verdict as JSON, for a script:", "leveldb-bloom audit --json db | jq -r .verdict"),
        ],
    ),
    (
        "refilter",
        &[
            ("What each bits per key would cost and save, nothing written:", "leveldb-bloom refilter --dry-run --bits-per-key 6,10,16 db"),
            ("LevelDB's filters at 10 bits per key, committed as LevelDB commits:", "leveldb-bloom refilter --bits-per-key 10 db"),
            ("goleveldb's filter name, which goleveldb reads, as JSON:", "leveldb-bloom refilter --policy legacy --bits-per-key 10 --json db"),
        ],
    ),
    (
        "explain",
        &[
            ("Why is this Get slow? Follow two keys:", "leveldb-bloom explain db user:1042 user:9999"),
            ("A key that is not text, in hex, with keys since the last flush:", "leveldb-bloom explain --hex --log db 00ff7365"),
            ("As goleveldb reads its filters:", "leveldb-bloom explain --policy legacy db user:1042"),
        ],
    ),
    (
        "reach",
        &[
            ("Will LD_PRELOAD swap this Python extension's LevelDB?", "leveldb-bloom reach /usr/lib/python3/dist-packages/plyvel/_plyvel.cpython-311-x86_64-linux-gnu.so"),
            ("A program and the LevelDB it loads, as JSON:", "leveldb-bloom reach --json ./app /usr/lib/x86_64-linux-gnu/libleveldb.so.1d"),
            ("In a script: 3 means some LevelDB cannot be swapped by LD_PRELOAD:", "leveldb-bloom reach ./app || echo \"take the route shown\""),
        ],
    ),
    (
        "run",
        &[
            ("A Python program with the swap, one line of filter statistics at exit:", "leveldb-bloom run --stats=stderr -- python3 app.py"),
            ("Filters at 10 bits per key for databases opened with no policy, counts to a file:", "leveldb-bloom run --default-bits 10 --stats=/tmp/bloom-stats -- node app.js"),
            ("The swap for every later command of this shell:", "eval \"$(leveldb-bloom run --print-env --stats)\""),
            ("Lines for a systemd unit's [Service] section:", "leveldb-bloom run --print-env=systemd --stats=/var/log/app-bloom-stats >> app.service.d/swap.conf"),
        ],
    ),
    (
        "show",
        &[
            ("The filter LevelDB consults for a key, asked about it:", "leveldb-bloom show db/000005.ldb --key user:1042 -o filter.html"),
            ("Filter 1 of a table, the page written to stdout:", "leveldb-bloom show db/000005.ldb --filter 1 -o - > filter.html"),
            ("A playground of three keys at 10 bits per key:", "leveldb-bloom show --bits-per-key 10 --keys apple,banana,cherry -o playground.html"),
            ("The playground's keys from a file, one per line:", "leveldb-bloom show --keys-file keys.txt -o playground.html"),
        ],
    ),
];

/// Writes `leveldb-bloom.1` and `leveldb-bloom-SUBCOMMAND.1` for every subcommand but
/// `help` into `dir`.
pub fn write_man_pages(dir: &Path) -> io::Result<()> {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let pages: Vec<(String, Command)> = cli
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| (sub.get_name().to_string(), sub.clone()))
        .chain([(String::new(), cli.clone())])
        .collect();
    let names: Vec<String> = pages.iter().map(|(sub, _)| page_name(sub)).collect();
    for (sub, command) in pages {
        // The --help example is the page's EXAMPLES section.
        let command = command
            .clone()
            .override_usage(synopsis(&command))
            .after_help(None::<&str>);
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        let mut page = String::from_utf8_lossy(&page).into_owned();
        let at = page.find("\n.SH VERSION").map_or(page.len(), |at| at + 1);
        page.insert_str(at, &extra_sections(&sub, &names));
        std::fs::File::create(dir.join(format!("{}.1", page_name(&sub))))?
            .write_all(page.as_bytes())?;
    }
    Ok(())
}

fn page_name(sub: &str) -> String {
    match sub {
        "" => "leveldb-bloom".to_string(),
        sub => format!("leveldb-bloom-{sub}"),
    }
}

/// `leveldb-bloom show [--filter <N>] ... -o <PAGE.html> [TABLE]`: every option with its
/// value's name, optional ones in brackets, then the positional arguments.
fn synopsis(command: &Command) -> String {
    let mut words = vec![command
        .get_bin_name()
        .unwrap_or(command.get_name())
        .to_string()];
    let (positional, options): (Vec<_>, Vec<_>) = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .partition(|arg| arg.is_positional());
    for arg in options {
        let flag = match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("-{short}|--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, Some(long)) => format!("--{long}"),
            (None, None) => continue,
        };
        let takes_value = matches!(arg.get_action(), ArgAction::Set | ArgAction::Append);
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .map(|name| name.to_string());
        let name = value.unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
        // An optional value must be joined with `=` (`--stats[=<DEST>]`).
        let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        let word = match (takes_value, arg.is_require_equals_set() && optional) {
            (true, true) => format!("{flag}[=<{name}>]"),
            (true, false) => format!("{flag} <{name}>"),
            (false, _) => flag,
        };
        words.push(if arg.is_required_set() {
            word
        } else {
            format!("[{word}]")
        });
    }
    for arg in positional {
        let name = arg
            .get_value_names()
            .and_then(|names| names.first())
            .map_or_else(
                || arg.get_id().as_str().to_uppercase(),
                |name| name.to_string(),
            );
        let many = if matches!(arg.get_action(), ArgAction::Append) {
            "..."
        } else {
            ""
        };
        words.push(if arg.is_required_set() {
            format!("<{name}>{many}")
        } else {
            format!("[{name}]{many}")
        });
    }
    if command.has_subcommands() {
        words.push("<COMMAND>".to_string());
    }
    words.join(" ")
}

/// The EXAMPLES and SEE ALSO sections of a page, in roff.
fn extra_sections(sub: &str, pages: &[String]) -> String {
    let mut roff = String::from(".SH EXAMPLES\n");
    let examples = EXAMPLES
        .iter()
        .find(|(name, _)| *name == sub)
        .map_or(&[][..], |(_, e)| e);
    for (what, example) in examples {
        roff.push_str(&format!(
            ".PP\n{}\n.PP\n.RS 4\n.nf\n{}\n.fi\n.RE\n",
            escape(what),
            escape(example)
        ));
    }
    roff.push_str(".SH \"SEE ALSO\"\n");
    let others: Vec<String> = pages
        .iter()
        .filter(|page| **page != page_name(sub))
        .map(|page| format!("\\fB{page}\\fR(1)"))
        .collect();
    roff.push_str(&format!("{}\n", others.join(", ")));
    roff
}

/// Text safe on a roff line: backslashes doubled, hyphens that are minus signs kept
/// as typed (`\-`), and a line never starting with a control character.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}
