//! The summary line says only what its counts prove: no percentage without a
//! query, no blame when no read reached a table, and never a question about a
//! policy beside the note that databases were given one.

use super::*;

fn stats(queries: u64, filters_built: u64) -> Stats {
    let mut stats = Stats::default();
    stats.current.queries = queries;
    stats.current.absent = queries / 2;
    stats.current.may_match = queries - queries / 2;
    stats.current.filters_built = filters_built;
    stats
}

#[test]
fn queries_give_the_share_answered_absent() {
    let line = summary(&stats(4, 0), 7, (0, 0, 0));
    assert!(
        line.contains(" 2 answered absent (50.0%: data-block reads saved), "),
        "{line}"
    );
}

#[test]
fn filters_built_and_never_queried_blame_no_one() {
    // A write-only run, or every Get answered from the memtable.
    let line = summary(&stats(0, 3), 7, (0, 0, 0));
    assert!(
        line.ends_with("; no read reached a table with this library's filters"),
        "{line}"
    );
    assert!(!line.contains('%') && !line.contains("(-"), "{line}");
    assert!(!line.contains("ignored"), "{line}");
}

#[test]
fn nothing_built_or_queried_asks_about_the_policy_only_when_none_was_given() {
    let asked = "is a bloom filter policy set";
    let line = summary(&stats(0, 0), 7, (0, 0, 0));
    assert!(
        line.contains("no filter was built or queried") && line.contains(asked),
        "{line}"
    );
    // Three databases opened with no policy, each given this library's: no question.
    let line = summary(&stats(0, 0), 7, (3, 3, 10));
    assert!(!line.contains(asked), "{line}");
    assert!(line.ends_with(
        "; no filter was built or queried; databases opened with no filter policy: 3, each given this library's at LEVELDB_BLOOM_DEFAULT_BITS=10"
    ), "{line}");
    // Without the variable, the note says what gives them one.
    let line = summary(&stats(0, 0), 7, (1, 0, 0));
    assert!(!line.contains(asked), "{line}");
    assert!(
        line.contains("LEVELDB_BLOOM_DEFAULT_BITS=10 gives them"),
        "{line}"
    );
}
