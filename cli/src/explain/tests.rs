//! How a Get's steps add up: what LevelDB consulted, what the filters saved, where
//! it stopped.

use super::*;

fn explained() -> KeyExplained {
    KeyExplained::before_the_get(b"k")
}

/// A step in table `table` of `level`, whose filter answered `answer` (none: no
/// filter), with the outcome of the block read, if one was.
fn step(
    level: usize,
    table: u64,
    answer: Option<&'static str>,
    outcome: Option<&'static str>,
) -> Step {
    Step {
        level,
        table,
        file: format!("db/{table:06}.ldb"),
        range_holds_key: true,
        filter: answer.map(|answer| FilterStep {
            index: 0,
            policy_asked: true,
            answer,
            rule: None,
            k: Some(6),
            bits: Some(64),
            probes: Vec::new(),
            clear_probes: Vec::new(),
        }),
        no_filter: answer.is_none().then(|| "no filter block".to_string()),
        data_block_read: outcome.map(|_| 0),
        outcome,
        sequence: outcome.map(|_| 9),
    }
}

#[test]
fn a_filter_saying_absent_saves_a_block_read_and_the_get_goes_on() {
    let mut get = explained();
    assert!(!record(&mut get, step(0, 7, Some("absent"), None)));
    assert!(!record(
        &mut get,
        step(1, 5, Some("may-match"), Some("false positive"))
    ));
    assert_eq!(
        (
            get.tables_consulted,
            get.filters_saved_block_reads,
            get.false_positives,
            get.data_blocks_read
        ),
        (2, 1, 1, 1)
    );
    assert!(get.found.is_none());
}

#[test]
fn a_get_stops_where_the_key_is_found_a_deletion_included() {
    for kind in ["value", "deletion"] {
        let mut get = explained();
        assert!(record(&mut get, step(2, 12, None, Some(kind))));
        let found = get.found.as_ref().expect("found");
        assert_eq!(
            (found.kind, found.place, found.sequence),
            (kind, "table", 9)
        );
        assert_eq!((found.table, found.level), (Some(12), Some(2)));
        assert_eq!(get.filters_saved_block_reads, 0);
    }
}

#[test]
fn a_table_whose_range_excludes_the_key_is_listed_not_consulted() {
    let mut get = explained();
    let mut outside = step(3, 4, None, None);
    outside.range_holds_key = false;
    assert!(!record(&mut get, outside));
    assert_eq!((get.steps.len(), get.tables_consulted), (1, 0));
}
