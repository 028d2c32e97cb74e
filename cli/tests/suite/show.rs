//! `leveldb-bloom show` in a real browser (Debian's chromium, headless): the page's
//! own computations (LevelDB's hash, probes, filter building) give this library's
//! bytes and answers for 1,000 random keys typed into it and 100 keys added to it;
//! a page of a table written by LevelDB 1.23 draws that table's filter bits; the
//! page loads nothing from the network; screenshots are not blank.
//!
//! Without chromium the tests say they are skipped and how to install it, except
//! in CI (`CI` set), where they fail. `UPDATE_SCREENSHOTS=1` copies the screenshots
//! to docs/images/ for the README.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use leveldb_bloom::{BloomFilterPolicy, Filter};
use leveldb_table::{Lookup, Table};
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Whether the browser is here; panics in CI, where `.ci/run` installs it.
fn browser_present(test: &str) -> bool {
    if Path::new(CHROMIUM).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: {CHROMIUM} missing in CI"
    );
    test_support::skipped(
        test,
        "no browser; install it with: sudo apt-get install chromium",
    );
    false
}

/// Runs headless chromium on `url` with `args`, the network pointed nowhere, in a
/// profile of its own; its stdout (kept in a file: a pipe left unread while
/// waiting would stall it). Killed after 90 s.
fn chromium(url: &str, args: &[&str]) -> String {
    let profile = Scratch::new();
    std::fs::create_dir_all(&profile.0).unwrap();
    let stdout = profile.0.join("stdout");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.0.join("profile").display()
        ))
        .args(args)
        .arg(url)
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium runs");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium hung on {}", &url[..url.len().min(120)]);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(stdout).unwrap()
}

/// The page's `#test-results`, after it ran the test in the URL's fragment.
fn page_results(page: &Path, fragment: &str) -> Value {
    let dom = chromium(
        &format!("file://{}#{fragment}", page.display()),
        &["--dump-dom", "--window-size=1280,820"],
    );
    let start = dom
        .find("<pre id=\"test-results\">")
        .expect("the page ran its test")
        + 23;
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"");
    serde_json::from_str(&json).unwrap()
}

fn show(args: &[&str], page: &Path) {
    succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .arg("show")
            .args(args)
            .arg("-o")
            .arg(page),
    );
    let html = std::fs::read_to_string(page).unwrap();
    for external in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "url(http",
        "@import",
    ] {
        assert!(!html.contains(external), "the page refers to {external}…");
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Keys of lengths 0..=100, any bytes (half of them 0x80 and above).
fn random_keys(count: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    (0..count)
        .map(|_| {
            let len = next() % 101;
            (0..len).map(|_| next() as u8).collect()
        })
        .collect()
}

/// Takes a screenshot of `page`, checks it is not blank, and copies it to
/// docs/images/NAME when asked to.
fn screenshot(page: &Path, name: &str, size: &str) {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let png = dir.0.join(name);
    chromium(
        &format!("file://{}", page.display()),
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size={size}"),
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let step = info.color_type.samples();
    let colours: std::collections::BTreeSet<&[u8]> =
        pixels[..info.buffer_size()].chunks(step).collect();
    assert!(
        colours.len() > 16,
        "{name}: {} colours: blank?",
        colours.len()
    );
    eprintln!(
        "{name}: {}x{}, {} colours",
        info.width,
        info.height,
        colours.len()
    );
    if std::env::var_os("UPDATE_SCREENSHOTS").is_some_and(|v| v == "1") {
        std::fs::copy(&png, Path::new(REPO).join("docs/images").join(name)).unwrap();
    }
}

#[test]
fn the_playground_computes_the_librarys_filters_and_answers() {
    if !browser_present("playground") {
        return;
    }
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let page = dir.0.join("playground.html");
    let mut keys = random_keys(40, 1);
    let keys_file = dir.0.join("keys");
    std::fs::write(
        &keys_file,
        keys.iter().map(|k| hex(k) + "\n").collect::<String>(),
    )
    .unwrap();
    show(
        &[
            "--hex",
            "--bits-per-key",
            "10",
            "--keys-file",
            keys_file.to_str().unwrap(),
        ],
        &page,
    );
    let asked = random_keys(1000, 2);
    let added = random_keys(100, 3);
    let list = |keys: &[Vec<u8>]| keys.iter().map(|k| hex(k)).collect::<Vec<_>>().join(".");
    let results = page_results(
        &page,
        &format!("test={}&add={}", list(&asked), list(&added)),
    );
    assert_eq!(results["failedLoads"], Value::Array(vec![]));
    assert_eq!(results["resources"], Value::Array(vec![]));
    let policy = BloomFilterPolicy::new(10);
    let filter = policy.build_filter(&keys);
    assert_eq!(results["filter"], hex(&filter));
    let answers = results["asked"].as_array().unwrap();
    assert_eq!(answers.len(), asked.len());
    let mut may = 0;
    for (key, answer) in asked.iter().zip(answers) {
        let ours = Filter::new(&filter).may_contain(key);
        assert_eq!(answer.as_bool(), Some(ours), "key {}", hex(key));
        may += usize::from(ours);
    }
    let rebuilt = results["added"].as_array().unwrap();
    assert_eq!(rebuilt.len(), added.len());
    for (key, filter) in added.iter().zip(rebuilt) {
        keys.push(key.clone());
        assert_eq!(
            filter.as_str().unwrap(),
            hex(&policy.build_filter(&keys)),
            "after adding {}",
            hex(key)
        );
    }
    eprintln!(
        "the page agrees with the library on {} keys asked ({may} may match) and {} filters rebuilt",
        asked.len(),
        rebuilt.len()
    );
    show(
        &[
            "--keys",
            "apple,banana,cherry,damson,elderberry,fig,grape",
            "--key",
            "kiwi",
        ],
        &page,
    );
    screenshot(&page, "show-playground.png", "1280,820");
}

#[test]
fn a_tables_page_draws_the_tables_filter_bits() {
    if !browser_present("table") {
        return;
    }
    let db = plyvel_database(false);
    let table = ldb_files(&db.0)[0].clone();
    let data = std::fs::read(&table).unwrap();
    let parsed = Table::open(&data).unwrap();
    let filters = current_filter_block(&parsed);
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let mut checked = 0;
    for index in [1, filters.count() / 2, filters.count() - 2] {
        let Lookup::Filter(bytes) = filters.lookup(index) else {
            continue;
        };
        if bytes.len() < 2 {
            continue; // a range without data blocks: an empty filter, nothing drawn
        }
        let page: PathBuf = dir.0.join(format!("filter{index}.html"));
        show(
            &[table.to_str().unwrap(), "--filter", &index.to_string()],
            &page,
        );
        let dom = chromium(&format!("file://{}#test=", page.display()), &["--dump-dom"]);
        // The grid as drawn: one cell per bit, "bit on" where set.
        let mut drawn = vec![0u8; bytes.len() - 1];
        let mut cells = 0;
        for cell in dom.split("<div class=\"bit").skip(1) {
            let bit: usize = cell
                .split("data-bit=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            if cell.starts_with(" on") {
                drawn[bit / 8] |= 1 << (bit % 8);
            }
            cells += 1;
        }
        assert_eq!(cells, 8 * (bytes.len() - 1), "filter {index}");
        assert_eq!(drawn, bytes[..bytes.len() - 1], "filter {index}");
        assert!(dom.contains(&format!("k = {}", bytes[bytes.len() - 1])));
        checked += 1;
    }
    assert!(checked >= 2);
    eprintln!("{checked} filters of a LevelDB 1.23 table drawn bit for bit");
    // The screenshot: a key of filter 1 asked about, its probes marked.
    let key = hex(&parsed.keys_by_filter(&filters).unwrap()[1][3]);
    let page = dir.0.join("table.html");
    show(&[table.to_str().unwrap(), "--hex", "--key", &key], &page);
    screenshot(&page, "show-table.png", "1280,900");
}

/// The page as a reader meets it: the title and counts follow the keys added; for a
/// filter of 1,251 bytes the key box and the whole grid (a page of 4,096 bits, under a
/// bit ruler) fit the first screen of a 1280×820 window, the hex folded away; UTF-8
/// keys are listed as text.
#[test]
fn the_page_follows_its_keys_fits_the_first_screen_and_shows_text_keys() {
    if !browser_present("first screen") {
        return;
    }
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let keys_file = dir.0.join("keys");
    let mut keys: String = "€-euro\n".to_string();
    keys.extend((1..1000).map(|i| format!("user:{i:05}\n")));
    std::fs::write(&keys_file, keys).unwrap();
    let page = dir.0.join("page.html");
    show(
        &[
            "--keys-file",
            keys_file.to_str().unwrap(),
            "--key",
            "€-euro",
        ],
        &page,
    );
    let results = page_results(&page, "add=6b6977692d31.6b6977692d32");
    assert_eq!(results["filter"].as_str().unwrap().len(), 2 * 1251);
    assert_eq!(results["title"], "1002 keys, 10 bits per key", "{results}");
    assert_eq!(results["keyCount"], "(1002)");
    let screen = &results["screen"];
    // The window is 1280×820; the page sees what the browser leaves of it.
    let height = screen["height"].as_i64().unwrap();
    assert!(height >= 600, "{results}");
    assert!(
        screen["keyBox"].as_i64().unwrap() < screen["grid"].as_i64().unwrap(),
        "{results}"
    );
    assert!(
        screen["grid"].as_i64().unwrap() <= height,
        "the grid ends below the first screen: {results}"
    );
    assert_eq!(results["bytesFolded"], true);
    let rulers: Vec<&str> = results["rulers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(&rulers[..3], ["bit", "+0", "+8"], "{rulers:?}");
    assert!(
        rulers.contains(&"128") && rulers.contains(&"3968"),
        "{rulers:?}"
    );
    assert_eq!(results["keysListed"][0], "\"€-euro\"", "{results}");
    assert_eq!(results["keysListed"][1], "\"user:00001\"");
}

/// An empty filter (a 2 KiB stretch of a table where no data block starts, which
/// LevelDB writes for values larger than a block) is explained, not drawn as "0 bytes,
/// k = 0".
#[test]
fn an_empty_filter_is_explained() {
    if !browser_present("empty filter") {
        return;
    }
    let db = Scratch::new();
    succeed(Command::new(PYTHON).arg("-c").arg(LARGE_VALUES).arg(&db.0));
    let table = ldb_files(&db.0)[0].clone();
    let data = std::fs::read(&table).unwrap();
    let parsed = Table::open(&data).unwrap();
    let filters = current_filter_block(&parsed);
    let empty = (0..filters.count())
        .find(|&i| matches!(filters.lookup(i), Lookup::Filter(bytes) if bytes.is_empty()))
        .expect("an empty filter in a table of 6 KiB values");
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let page = dir.0.join("empty.html");
    show(
        &[table.to_str().unwrap(), "--filter", &empty.to_string()],
        &page,
    );
    let results = page_results(&page, "test=");
    let note = results["emptyNote"]
        .as_str()
        .unwrap_or_else(|| panic!("{results}"));
    assert!(note.starts_with("0 bytes: an empty filter."), "{note}");
    assert!(note.contains("no Get ever consults it"), "{note}");
    assert_eq!(results["rulers"], Value::Array(vec![]));
}

/// 40 keys with 6 KiB values (random: snappy cannot shrink them), compacted into a
/// table: data blocks larger than 2 KiB.
const LARGE_VALUES: &str = "\
import os, plyvel, sys
db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10)
for i in range(40):
    db.put(b'key-%03d' % i, os.urandom(6144))
db.compact_range()
db.close()
";
