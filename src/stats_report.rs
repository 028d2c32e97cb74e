//! `LEVELDB_BLOOM_STATS`: filter statistics for a program that was not written for
//! them. When the variable is set as the library loads, counting starts at once,
//! and when the process exits normally one line sums the counts up: on stderr for
//! `stderr`, else appended to the file the value names.

use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

use super::guard;
use bloom::stats::{self, Counts};

/// The environment variable read once, when the library is loaded.
const VARIABLE: &CStr = c"LEVELDB_BLOOM_STATS";

/// Where the summary goes: NULL for nowhere, else the variable's value, kept.
static DESTINATION: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Reads the variable and, when it is set and not empty, starts counting and has
/// [`report`] run at exit. The library's ELF constructor.
extern "C" fn start_from_environment() {
    guard(
        || (),
        || {
            // SAFETY: a NUL-terminated name; at load no other thread of this library
            // runs, and the value is copied at once.
            let value = unsafe { libc::getenv(VARIABLE.as_ptr()) };
            if value.is_null() {
                return;
            }
            // SAFETY: getenv returns a NUL-terminated string.
            let value = unsafe { CStr::from_ptr(value) };
            if value.is_empty() {
                return;
            }
            DESTINATION.store(CString::from(value).into_raw(), Ordering::Release);
            stats::enable();
            // SAFETY: `report` is an `extern "C" fn()` that lives as long as the
            // library; glibc runs it at exit, or when the library is unloaded.
            unsafe { libc::atexit(report) };
        },
    )
}

#[used]
#[link_section = ".init_array"]
static START_FROM_ENVIRONMENT: extern "C" fn() = start_from_environment;

/// Writes the summary where the variable said.
extern "C" fn report() {
    guard(
        || (),
        || {
            let destination = DESTINATION.load(Ordering::Acquire);
            if destination.is_null() {
                return;
            }
            // SAFETY: stored by `start_from_environment`, never freed.
            let destination = unsafe { CStr::from_ptr(destination) };
            let line = summary(&stats::snapshot(), std::process::id());
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            write_to(destination, &bytes);
        },
    )
}

/// Appends `bytes` to stderr (`stderr`) or to the file `destination` names.
fn write_to(destination: &CStr, bytes: &[u8]) {
    let (fd, opened) = if destination == c"stderr" {
        (libc::STDERR_FILENO, false)
    } else {
        // SAFETY: a NUL-terminated path; the mode is passed as open(2) expects.
        let fd = unsafe {
            libc::open(
                destination.as_ptr(),
                libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            )
        };
        (fd, true)
    };
    if fd < 0 {
        return;
    }
    // SAFETY: a borrowed buffer written to an open descriptor; one write, so lines
    // of several processes appending to one file do not interleave.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    if opened {
        // SAFETY: opened above.
        unsafe { libc::close(fd) };
    }
}

/// The one line: counts, the share of queries answered "absent", and what to
/// suspect when no filter was queried.
pub(crate) fn summary(now: &stats::Stats, pid: u32) -> String {
    let all = now.total();
    let mut line = format!(
        "leveldb-bloom stats (pid {pid}): {} filter queries, {} answered absent ({}: \
         data-block reads saved), {} may match, {} answered by rule; {} filters built, \
         {} keys, {} bytes",
        all.queries,
        all.absent,
        percent(all.absent, all.queries),
        all.may_match,
        all.by_rule,
        all.filters_built,
        all.keys_added,
        all.filter_bytes,
    );
    if now.legacy != Counts::default() {
        line += &format!(
            "; of which legacy format (leveldb.BuiltinBloomFilter): {} queries, {} absent, \
             {} filters built",
            now.legacy.queries, now.legacy.absent, now.legacy.filters_built
        );
    }
    if all.queries == 0 && all.filters_built > 0 {
        line += "; note: filters were built but none was queried: if this process read \
                 its databases, LevelDB ignored the filters (do the tables carry them \
                 under this policy's name?)";
    } else if all.queries == 0 {
        line += "; note: no filter was built or queried: LevelDB used no filter of this \
                 library (is a bloom filter policy set, and do the tables carry its \
                 filters under its name?)";
    }
    line
}

/// `part` of `whole` as a percentage with one decimal, or "-" for none.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}
