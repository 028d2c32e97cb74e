//! `LEVELDB_BLOOM_STATS`: filter statistics for a program that was not written for
//! them. When the variable is set as the library starts (its ELF constructor), the
//! destination is checked at once and counting starts; when the process exits
//! normally, one line sums the counts up there: on the process's stderr as it was at
//! start for `stderr`, else appended to the file the value names (relative to the
//! directory the process started in, resolved then).
//!
//! Safe in any process: the variable is ignored in a secure-execution process
//! (setuid, setgid, file capabilities: `AT_SECURE`); the file is opened only when
//! there is a summary to write, with `O_NOFOLLOW|O_NONBLOCK|O_APPEND|O_CLOEXEC`
//! (created `0644` before the umask), after its type was read without opening it
//! (`O_PATH`), and only a regular file, a FIFO with a reader or a terminal; no
//! symlink is followed in its path where the kernel has `openat2`. The write never
//! blocks (a full pipe or a stopped terminal on stderr gets 0.1 s) or raises
//! SIGPIPE, and is skipped when the program closed the descriptor.
//! Every failure is one line on stderr: at start for a destination refused then,
//! at exit for the open and the write. A process that never used the library (no
//! policy made, nothing counted: a shell under `LD_PRELOAD`) writes no summary and
//! creates no file. A forked child starts from zero, so its summary, under its own
//! pid, holds only what it counted.
//! Beside it, one line for each loaded object whose LevelDB the swap cannot reach
//! (`self_bound`), written even when the library was never used.

mod destination;
mod stats_file;

use std::ffi::CStr;
use std::sync::OnceLock;

use super::registry::REGISTRY;
use super::self_bound;
use super::stats::{self, Stats};
use super::{environment, guard};
use bloom::Counts;
use destination::{Destination, Stderr};
use loader::write_unblocked;

/// The environment variable read once, when the library starts.
const VARIABLE: &CStr = c"LEVELDB_BLOOM_STATS";

/// Where the summary goes, and stderr as it was at start; set only by the
/// constructor, when the destination opened.
static DESTINATION: OnceLock<(Destination, Stderr)> = OnceLock::new();

/// Reads the variable and, when it is set and not empty, opens the destination,
/// starts counting and has [`report`] run at exit. The library's ELF constructor.
extern "C" fn start_from_environment() {
    guard(
        || (),
        || {
            // SAFETY: the library's ELF constructor: nothing changes the environment.
            let Some(value) = (unsafe { environment::variable(VARIABLE) }) else {
                return;
            };
            let stderr = Stderr::now();
            let destination = match Destination::open(&value) {
                Ok(destination) => destination,
                Err(why) => {
                    let line = format!(
                        "leveldb-bloom: {}={:?}: {why}: no statistics summary will be written\n",
                        VARIABLE.to_string_lossy(),
                        value.to_string_lossy()
                    );
                    let _ = write_unblocked(libc::STDERR_FILENO, line.as_bytes());
                    return;
                }
            };
            if DESTINATION.set((destination, stderr)).is_err() {
                return;
            }
            stats::enable();
            // SAFETY: `report` and `start_child` are `extern "C"` functions that live
            // as long as the library; glibc runs `report` at exit or when the library
            // is unloaded, and forgets `start_child` when it is unloaded.
            unsafe {
                libc::atexit(report);
                libc::pthread_atfork(None, None, Some(start_child));
            }
        },
    )
}

#[used]
#[link_section = ".init_array"]
static START_FROM_ENVIRONMENT: extern "C" fn() = start_from_environment;

/// `fork()`'s child handler: the child counts from zero (its only thread is the one
/// that forked, so nothing counts meanwhile).
extern "C" fn start_child() {
    stats::reset();
}

/// Writes the summary where the variable said, unless the library was never used,
/// and closes the destination (also when the library is unloaded).
extern "C" fn report() {
    guard(
        || (),
        || {
            let Some((destination, stderr)) = DESTINATION.get() else {
                return;
            };
            let now = stats::snapshot();
            let opens = stats::opens_without_policy();
            let used = now != Stats::default() || REGISTRY.ever_registered() || opens.0 > 0;
            let mut text = String::new();
            if used {
                text = summary(&now, std::process::id(), opens) + "\n";
            }
            // Said even when the library was never used: the swap missed LevelDB.
            text.extend(self_bound::self_bound().iter().map(|object| object.line()));
            let text = (!text.is_empty()).then_some(text);
            if let Err(why) = destination.finish(text.as_ref().map(String::as_bytes)) {
                stderr.say(&format!(
                    "leveldb-bloom: {}: statistics summary {why}\n",
                    VARIABLE.to_string_lossy()
                ));
            }
        },
    )
}

/// The one line: counts, the share of queries answered "absent" (when there were
/// queries), what the counts prove when no filter was queried, and the databases
/// opened with no filter policy (`opens`: see [`opens_note`]). Only what the
/// counts prove: no query means no read reached a table with this library's
/// filters, which blames no one (every Get may have been answered from memory).
pub(crate) fn summary(now: &stats::Stats, pid: u32, opens: (u64, u64, u64)) -> String {
    let all = now.total();
    let saved = if all.queries == 0 {
        String::new()
    } else {
        format!(
            " ({}: data-block reads saved)",
            percent(all.absent, all.queries)
        )
    };
    let mut line = format!(
        "leveldb-bloom stats (pid {pid}): {} filter queries, {} answered absent{saved}, \
         {} may match, {} answered by rule; {} filters built, {} keys, {} bytes",
        all.queries,
        all.absent,
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
    let (opened_without_policy, ..) = opens;
    if all.queries == 0 && all.filters_built > 0 {
        line += "; no read reached a table with this library's filters";
    } else if all.queries == 0 && opened_without_policy > 0 {
        // The note on those databases below says whether they were given a policy.
        line += "; no filter was built or queried";
    } else if all.queries == 0 {
        line += "; no filter was built or queried: no table was written and no read \
                 reached a table with this library's filters (if the program reads \
                 tables: is a bloom filter policy set, and do they carry its filters \
                 under its name? leveldb-bloom audit shows them)";
    }
    line + &opens_note(opens)
}

/// What the summary adds about the databases opened with no filter policy
/// (`opened`, of which `given` got `LEVELDB_BLOOM_DEFAULT_BITS`'s, at `bits`).
fn opens_note((opened, given, bits): (u64, u64, u64)) -> String {
    let variable = environment::DEFAULT_BITS.to_string_lossy();
    if opened == 0 {
        String::new()
    } else if given == opened {
        format!("; databases opened with no filter policy: {opened}, each given this library's at {variable}={bits}")
    } else if bits != 0 {
        format!(
            "; note: databases opened with no filter policy: {opened}, of which {} without \
             {variable}={bits}'s (see stderr)",
            opened - given
        )
    } else {
        format!(
            "; note: databases opened with no filter policy: {opened}: LevelDB writes and \
             reads no filters for them ({variable}=10 gives them this library's bloom \
             policy; or set one in the program)"
        )
    }
}

/// `part` of `whole` (not 0) as a percentage with one decimal.
fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

#[cfg(test)]
mod wording_tests;
