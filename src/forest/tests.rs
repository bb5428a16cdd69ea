//! Unit tests of the forest (the property tests are in `tests/integration/forest_props.rs`).

use super::expiry::ExpiryProgress;
use super::*;

const HOUR: Millis = 60 * 60 * 1000;

fn forest_with_retention(retention: Option<Millis>) -> Forest {
    Forest::new(ForestConfig {
        max_distance: 3,
        retention,
    })
    .expect("valid config")
}

fn forest() -> Forest {
    forest_with_retention(Some(HOUR))
}

#[test]
fn rejects_invalid_config() {
    let too_far = Forest::new(ForestConfig {
        max_distance: 17,
        retention: None,
    });
    assert!(matches!(too_far, Err(ForestError::Index(_))));
    let negative = Forest::new(ForestConfig {
        max_distance: 3,
        retention: Some(-1),
    });
    assert_eq!(negative.unwrap_err(), ForestError::NegativeRetention(-1));
    assert_eq!(
        ForestError::NegativeRetention(-5).to_string(),
        "retention must not be negative, got -5 ms"
    );
    assert_eq!(ForestConfig::default().max_distance, 3);
    assert_eq!(ForestConfig::default().retention, Some(48 * HOUR));
}

#[test]
fn lone_fingerprint_becomes_a_root() {
    let mut forest = forest();
    let assignment = forest.assign(0xabc, 10);
    assert_eq!(
        assignment,
        Assignment {
            root: 0xabc,
            placement: Placement::NewRoot,
            class_documents: 1
        }
    );
    let node = forest.node(0xabc).unwrap();
    assert!(node.is_root);
    assert_eq!((node.born, node.touched, node.documents), (10, 10, 1));
    assert_eq!(forest.stats().roots, 1);
}

#[test]
fn far_fingerprint_becomes_another_root() {
    let mut forest = forest();
    forest.assign(0, 1);
    assert_eq!(forest.assign(0b1111, 2).placement, Placement::NewRoot);
    assert_eq!(forest.stats().roots, 2);
}

#[test]
fn near_fingerprint_joins_the_root() {
    let mut forest = forest();
    forest.assign(0, 1);
    let leaf = forest.assign(0b111, 2);
    assert_eq!(
        leaf,
        Assignment {
            root: 0,
            placement: Placement::JoinedRoot,
            class_documents: 2
        }
    );
    // Near a leaf but more than k from the root: still joins through the leaf.
    let through_leaf = forest.assign(0b111_000, 3);
    assert_eq!(through_leaf.root, 0);
    assert_eq!(through_leaf.placement, Placement::JoinedRoot);
    assert_eq!(forest.leaf_count(0), Some(2));
    assert!(!forest.node(0b111_000).unwrap().is_root);
    // By number: a leaf's slot names its root, a root's itself.
    let leaf_number = forest.number(0b111_000).expect("numbered");
    assert_eq!(
        forest.fingerprint_and_root_at(leaf_number),
        Some((0b111_000, 0))
    );
    let root_number = forest.number(0).expect("numbered");
    assert_eq!(forest.fingerprint_and_root_at(root_number), Some((0, 0)));
    assert_eq!(forest.fingerprint_and_root_at(NodeId::MAX), None);
}

#[test]
fn existing_fingerprint_counts_another_document() {
    let mut forest = forest();
    forest.assign(0, 1);
    forest.assign(1, 2);
    let again = forest.assign(1, 3);
    assert_eq!(
        again,
        Assignment {
            root: 0,
            placement: Placement::ExistingNode,
            class_documents: 3
        }
    );
    assert_eq!(forest.node(1).unwrap().documents, 2);
    let root_again = forest.assign(0, 4);
    assert_eq!(root_again.class_documents, 4);
    assert_eq!(forest.len(), 2);
    assert_eq!(forest.stats().documents, 4);
}

#[test]
fn existing_node_does_not_consult_confirm() {
    let mut forest = forest();
    forest.assign(0, 1);
    forest.assign(1, 2);
    let assignment =
        forest.assign_confirmed(1, 3, |candidate| panic!("confirm called for {candidate}"));
    assert_eq!(assignment.placement, Placement::ExistingNode);
}

// Roots 0 and 0b1111 are 4 apart (> k = 3); 0b0011 is 2 from both.
const LOW_ROOT: Fingerprint = 0;
const HIGH_ROOT: Fingerprint = 0b1111;
const BETWEEN: Fingerprint = 0b0011;

#[test]
fn conflict_prefers_the_root_with_more_leaves() {
    let mut forest = forest();
    forest.assign(LOW_ROOT, 1);
    forest.assign(HIGH_ROOT, 2);
    // A leaf of the later, larger root, far from the other root.
    forest.assign(HIGH_ROOT | 1 << 40, 3);
    let assignment = forest.assign(BETWEEN, 4);
    assert_eq!(assignment.root, HIGH_ROOT);
    assert_eq!(
        assignment.placement,
        Placement::ResolvedConflict { competing_roots: 2 }
    );
    assert_eq!(assignment.class_documents, 3);
}

#[test]
fn conflict_prefers_the_earlier_born_root_on_equal_leaves() {
    let mut forest = forest();
    forest.assign(HIGH_ROOT, 1);
    forest.assign(LOW_ROOT, 2);
    // Touching the low root later does not change its birth.
    forest.reach_root(LOW_ROOT, 3);
    assert_eq!(forest.assign(BETWEEN, 4).root, HIGH_ROOT);
}

#[test]
fn conflict_prefers_the_earlier_arrival_on_equal_birth() {
    // Born in the same millisecond: the one added first wins, even with
    // the larger fingerprint. (The smaller fingerprint decides only
    // between nodes of equal arrival, which one forest never creates.)
    let mut forest = forest();
    forest.assign(HIGH_ROOT, 5);
    forest.assign(LOW_ROOT, 5);
    assert_eq!(forest.assign(BETWEEN, 6).root, HIGH_ROOT);
}

#[test]
fn vetoed_candidates_do_not_count() {
    let mut forest = forest();
    forest.assign(LOW_ROOT, 1);
    forest.assign(HIGH_ROOT, 2);
    let only_high = forest.assign_confirmed(BETWEEN, 3, |candidate| candidate == HIGH_ROOT);
    assert_eq!(only_high.root, HIGH_ROOT);
    assert_eq!(only_high.placement, Placement::JoinedRoot);
    let none = forest.assign_confirmed(0b0101 << 20, 4, |_| false);
    assert_eq!(none.placement, Placement::NewRoot);
    let vetoed_everything = forest.assign_confirmed(1, 5, |_| false);
    assert_eq!(vetoed_everything.placement, Placement::NewRoot);
    assert_eq!(forest.stats().roots, 4);
}

#[test]
fn confirm_is_skipped_for_an_already_confirmed_root() {
    let mut forest = forest();
    forest.assign(0, 1);
    forest.assign(1, 2);
    forest.assign(2, 3);
    let mut calls = 0;
    forest.assign_confirmed(3, 4, |_| {
        calls += 1;
        true
    });
    assert_eq!(calls, 1, "the first confirmed candidate settles root 0");
}

#[test]
fn touching_a_leaf_touches_its_root() {
    let mut forest = forest();
    forest.assign(0, 10);
    forest.assign(1, 20);
    assert_eq!(forest.node(0).unwrap().touched, 20);
    assert_eq!(forest.reach_root(1, 30), Some(0));
    assert_eq!(forest.node(1).unwrap().touched, 30);
    assert_eq!(forest.node(0).unwrap().touched, 30);
    forest.assign(1, 40);
    assert_eq!(forest.node(0).unwrap().touched, 40);
    assert_eq!(forest.reach_root(0xdead_0000, 50), None);
    // Reaching the root only touches the root.
    forest.reach_root(0, 60);
    assert_eq!(forest.node(1).unwrap().touched, 40);
    assert_eq!(forest.node(1).unwrap().born, 20);
}

#[test]
fn out_of_order_times_never_move_touched_backwards() {
    let mut forest = forest();
    forest.assign(0, 100);
    let late_leaf = forest.assign(1, 50);
    assert_eq!(late_leaf.root, 0);
    let leaf = forest.node(1).unwrap();
    assert_eq!((leaf.born, leaf.touched), (50, 50));
    assert_eq!(forest.node(0).unwrap().touched, 100);
    forest.reach_root(1, 70);
    assert_eq!(forest.node(1).unwrap().touched, 70);
    assert_eq!(forest.node(0).unwrap().touched, 100);
    forest.assign(0, 80);
    assert_eq!(forest.node(0).unwrap().touched, 100);
}

#[test]
fn expired_root_takes_its_tree() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 10);
    forest.assign(0b11, 20);
    forest.assign(u64::MAX, 5 * HOUR);
    let progress = forest.expire(HOUR + 21, usize::MAX);
    let mut removed = progress.removed.fingerprints.clone();
    removed.sort_unstable();
    assert_eq!(removed, vec![0, 1, 0b11]);
    assert!(!progress.more_pending);
    assert_eq!(forest.len(), 1);
    assert!(!forest.index().contains(1));
    assert_eq!(forest.index().len(), 1);
    let stats = forest.stats();
    assert_eq!(
        (stats.roots, stats.documents, stats.expired_nodes),
        (1, 1, 3)
    );
}

#[test]
fn nothing_expires_before_the_cutoff() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 10);
    // touched == cutoff is not expired.
    let progress = forest.expire(HOUR + 10, usize::MAX);
    assert!(progress.removed.is_empty());
    assert!(!progress.more_pending);
    assert_eq!(forest.len(), 2);
}

#[test]
fn old_leaf_expires_alone_while_its_root_is_fresh() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 10);
    forest.assign(0b11, 20);
    forest.reach_root(0, 2 * HOUR);
    forest.reach_root(0b11, 2 * HOUR);
    let progress = forest.expire(HOUR + 15, usize::MAX);
    assert_eq!(progress.removed.fingerprints, vec![1]);
    assert_eq!(forest.leaf_count(0), Some(1));
    assert_eq!(forest.class(0).unwrap().members, vec![0, 0b11]);
    assert_eq!(forest.class_documents(0), Some(2));
    // The last leaf goes, the root stays a root.
    forest.reach_root(0, 4 * HOUR);
    let progress = forest.expire(3 * HOUR + 1, usize::MAX);
    assert_eq!(progress.removed.fingerprints, vec![0b11]);
    assert_eq!(forest.leaf_count(0), Some(0));
    assert_eq!(forest.class(0).unwrap().documents, 1);
    assert!(forest.node(0).unwrap().is_root);
}

#[test]
fn leaf_slots_stay_valid_after_swap_removal() {
    let mut forest = forest();
    forest.assign(0, 0);
    for (time, leaf) in [1u64, 2, 4, 8, 16].into_iter().enumerate() {
        forest.assign(leaf, time as Millis);
    }
    forest.reach_root(0, 10 * HOUR);
    forest.reach_root(16, 10 * HOUR);
    forest.reach_root(4, 10 * HOUR);
    // Leaves 1, 2, 8 expire; 16 and 4 are moved around in the leaf list.
    let mut removed = forest.expire(HOUR + 5, usize::MAX).removed.fingerprints;
    removed.sort_unstable();
    assert_eq!(removed, vec![1, 2, 8]);
    let mut members = forest.class(0).unwrap().members;
    members.sort_unstable();
    assert_eq!(members, vec![0, 4, 16]);
    let removed = forest.expire(12 * HOUR, usize::MAX).removed;
    assert_eq!(removed.len(), 3);
    assert!(forest.is_empty());
}

#[test]
fn budgeted_expiry_continues_over_calls() {
    let mut forest = forest();
    for step in 0..10u64 {
        // Far-apart fingerprints: ten singleton roots.
        forest.assign(step.wrapping_mul(0x9e37_79b9_7f4a_7c15), step as Millis);
    }
    let now = HOUR + 100;
    let first = forest.expire(now, 3);
    assert_eq!(first.removed.len(), 3);
    assert!(first.more_pending);
    let second = forest.expire(now, 3);
    assert_eq!(second.removed.len(), 3);
    let third = forest.expire(now, 100);
    assert_eq!(third.removed.len(), 4);
    assert!(!third.more_pending);
    assert!(forest.is_empty());
    assert_eq!(forest.stats().expired_nodes, 10);
    let zero_budget = forest.expire(now, 0);
    assert_eq!(zero_budget, ExpiryProgress::default());
}

#[test]
fn a_tree_may_overshoot_the_budget() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 0);
    forest.assign(2, 0);
    let progress = forest.expire(2 * HOUR, 1);
    assert_eq!(progress.removed.len(), 3);
    assert!(!progress.more_pending);
}

#[test]
fn expired_fingerprint_can_come_back() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 0);
    assert_eq!(forest.expire(2 * HOUR, usize::MAX).removed.len(), 2);
    let again = forest.assign(1, 2 * HOUR);
    assert_eq!(again.placement, Placement::NewRoot);
    assert_eq!(
        forest
            .expire(2 * HOUR + 10, usize::MAX)
            .removed
            .fingerprints,
        Vec::<u64>::new()
    );
    assert_eq!(
        forest.expire(4 * HOUR, usize::MAX).removed.fingerprints,
        vec![1]
    );
}

#[test]
fn no_retention_never_expires() {
    let mut forest = forest_with_retention(None);
    forest.assign(0, 0);
    assert_eq!(
        forest.expire(Millis::MAX, usize::MAX),
        ExpiryProgress::default()
    );
    assert_eq!(forest.len(), 1);
}

#[test]
fn forgetting_documents_keeps_the_node() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 0);
    forest.assign(1, 0);
    assert!(forest.forget_document(1));
    assert_eq!(forest.class_documents(0), Some(2));
    assert!(forest.forget_document(1));
    assert!(!forest.forget_document(1), "count is already zero");
    assert!(!forest.forget_document(0xfff0_0000), "no such node");
    assert_eq!(forest.node(1).unwrap().documents, 0);
    assert_eq!(forest.class_documents(0), Some(1));
    assert_eq!(forest.stats().documents, 1);
    assert!(forest.contains(1));
}

#[test]
fn leaf_capacity_is_tracked_through_growth_expiry_and_clone() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1 << 40, 0);
    for leaf in 0..40u64 {
        // Leaves of root 0 (one low bit) and of root 1 << 40.
        forest.assign(1 << (leaf % 20), leaf as Millis);
        forest.assign((1 << 40) | (1 << (leaf % 20 + 20)), leaf as Millis);
    }
    forest.reach_root(0, 10 * HOUR);
    forest.reach_root(1 << 3, 10 * HOUR);
    assert_eq!(
        forest.trees.list_places(),
        forest.trees.recounted_list_places()
    );
    forest.expire(HOUR + 100, usize::MAX);
    assert_eq!(
        forest.trees.list_places(),
        forest.trees.recounted_list_places()
    );
    assert_eq!(forest.leaf_count(0), Some(1));
    let copy = forest.clone();
    assert_eq!(copy.trees.list_places(), copy.trees.recounted_list_places());
    assert_eq!(copy.stats().nodes, forest.stats().nodes);
}

#[test]
fn reserve_keeps_behaviour() {
    let mut forest = forest();
    forest.reserve(1000);
    assert!(forest.approx_heap_bytes() > 1000 * 40);
    assert_eq!(forest.assign(5, 0).placement, Placement::NewRoot);
}

#[test]
fn class_view_lists_root_first() {
    let mut forest = forest();
    forest.assign(0, 0);
    forest.assign(1, 1);
    forest.assign(1, 2);
    let class = forest.class(0).unwrap();
    assert_eq!(class.members, vec![0, 1]);
    assert_eq!((class.nodes, class.documents), (2, 3));
    assert_eq!(forest.class(1), None, "a leaf names no class");
    assert_eq!(forest.class(99 << 32), None);
    assert_eq!(forest.iter_nodes().count(), 2);
    assert!(forest.stats().approx_heap_bytes > 0);
}

#[test]
fn numbers_survive_mass_removal_and_removals_report_them() {
    let mut forest = Forest::new(ForestConfig {
        retention: Some(HOUR),
        ..ForestConfig::default()
    })
    .unwrap();
    // 10 000 nodes far apart; all but the last 100 expire, which frees
    // most of the table (and used to renumber the rest).
    let fingerprint = |index: u64| index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for index in 0..10_000u64 {
        let now = if index < 9_900 { 0 } else { 2 * HOUR };
        forest.assign(fingerprint(index), now);
    }
    let before: Vec<(u64, NodeId)> = (9_900..10_000)
        .map(|index| {
            (
                fingerprint(index),
                forest.number(fingerprint(index)).unwrap(),
            )
        })
        .collect();
    let expected: Vec<(u64, NodeId)> = (0..9_900)
        .map(|index| {
            (
                fingerprint(index),
                forest.number(fingerprint(index)).unwrap(),
            )
        })
        .collect();
    let progress = forest.expire(2 * HOUR, usize::MAX);
    let mut reported: Vec<(u64, NodeId)> = progress
        .removed
        .fingerprints
        .iter()
        .copied()
        .zip(progress.removed.ids.iter().copied())
        .collect();
    reported.sort_unstable();
    let mut expected = expected;
    expected.sort_unstable();
    assert_eq!(reported, expected);
    for (kept, number) in before {
        assert_eq!(forest.number(kept), Some(number));
        assert_eq!(forest.fingerprint_at(number), Some(kept));
    }
    // The numbers freed below the kept ones are reused, lowest first.
    let newcomer = forest.assign(fingerprint(20_000), 2 * HOUR);
    assert_eq!(forest.number(newcomer.root), Some(0));
}

#[test]
fn a_node_placed_text_only_is_not_found_within_k() {
    let mut forest = forest();
    let text_only = forest.assign_to_roots(0b1, 10, &[], Indexing::TextOnly);
    assert_eq!(text_only.placement, Placement::NewRoot);
    // Nothing within k finds it: a neighbour one bit away is a new root.
    let neighbour = forest.assign(0b11, 20);
    assert_eq!(neighbour.placement, Placement::NewRoot);
    assert_eq!(forest.within(0b1), vec![(0b11, 1)]);
    assert_eq!(forest.index().len(), 1);
    // Its own fingerprint still finds it (rule 1), and a caller's
    // candidates still lead to it.
    assert_eq!(forest.assign(0b1, 30).placement, Placement::ExistingNode);
    let leaf = forest.assign_with_candidates(0xff00, 40, &[0b1], Indexing::TextOnly, |_| true);
    assert_eq!(leaf.root, 0b1);
    assert_eq!(forest.index().len(), 1);
    // Its records say so, and a restored forest leaves it out too.
    let records = forest.node_records();
    let indexing_of = |fingerprint| {
        records
            .iter()
            .find(|record| record.fingerprint == fingerprint)
            .map(|record| record.indexing)
    };
    assert_eq!(indexing_of(0b1), Some(Indexing::TextOnly));
    assert_eq!(indexing_of(0xff00), Some(Indexing::TextOnly));
    assert_eq!(indexing_of(0b11), Some(Indexing::WithinK));
    let restored = Forest::restore(forest.config(), &records, forest.counters()).expect("restores");
    assert_eq!(restored.index().len(), 1);
    assert!(restored.index().contains(0b11));
    // Expiry takes it out without touching the index's other entries.
    let removed = forest.expire(HOUR + 41, usize::MAX).removed;
    assert_eq!(removed.len(), 3);
    assert!(forest.index().is_empty());
}

#[test]
fn times_and_arrivals_keep_their_values_in_48_bits() {
    for time in [
        0,
        1,
        -1,
        1_764_158_400_000,
        -62_135_596_800_000,
        LATEST_TIME,
        EARLIEST_TIME,
    ] {
        assert_eq!(Word48::time(time).as_time(), time);
    }
    assert_eq!(Word48::time(Millis::MAX).as_time(), LATEST_TIME);
    assert_eq!(Word48::time(Millis::MIN).as_time(), EARLIEST_TIME);
    assert_eq!(Word48::time(LATEST_TIME + 1).as_time(), LATEST_TIME);
    for count in [0, 1, 65_535, 65_536, (1 << 47) - 1] {
        assert_eq!(Arrival::new(count, Indexing::WithinK).count(), count);
    }
}

/// More than `k` bits from every other fingerprint of these tests.
const FAR: Fingerprint = 0xffff_ffff_0000_0000;

#[test]
fn times_beyond_the_kept_range_are_its_ends_everywhere_they_are_read() {
    let mut forest = forest();
    // A year-9999 time field and a time before any calendar.
    let far_future = forest.assign(0b1, 253_402_300_799_000);
    let far_past = forest.assign(FAR, Millis::MIN);
    assert_eq!(forest.node(far_future.root).unwrap().born, LATEST_TIME);
    assert_eq!(forest.node(far_past.root).unwrap().touched, EARLIEST_TIME);
    let leaf = forest.assign(0b11, Millis::MAX);
    assert_eq!(leaf.root, far_future.root);
    assert_eq!(forest.node(0b11).unwrap().touched, LATEST_TIME);
    // The expiry queue holds the kept times: the old node goes, the other
    // tree stays, and the records come back as they were.
    let progress = forest.expire(0, usize::MAX);
    assert_eq!(progress.removed.fingerprints, vec![FAR]);
    let records = forest.node_records();
    let restored = Forest::restore(forest.config, &records, forest.counters()).unwrap();
    assert_eq!(restored.node_records(), records);
    assert_eq!(restored.root_of(0b11), Some(0b1));
}

#[test]
fn a_leaf_knows_its_root_by_number_through_reuse_of_numbers() {
    const SECOND: Fingerprint = 0x00ff_ff00_00ff_ff00;
    let mut forest = forest();
    // Roots far apart, each with a leaf; the first tree expires and its
    // numbers are taken by new nodes, which must not change the second.
    forest.assign(0, 0);
    forest.assign(0b1, 0);
    forest.assign(SECOND, 2 * HOUR);
    forest.assign(SECOND ^ 1, 2 * HOUR);
    forest.expire(2 * HOUR, usize::MAX);
    let newcomer = forest.assign(FAR, 2 * HOUR);
    assert_eq!(newcomer.placement, Placement::NewRoot);
    assert_eq!(forest.root_of(SECOND ^ 1), Some(SECOND));
    assert_eq!(forest.reach_root(SECOND ^ 1, 3 * HOUR), Some(SECOND));
    assert_eq!(forest.node(SECOND).unwrap().touched, 3 * HOUR);
    let number = forest.number(SECOND ^ 1).unwrap();
    assert_eq!(
        forest.fingerprint_and_root_at(number),
        Some((SECOND ^ 1, SECOND))
    );
    let class = forest.class(SECOND).unwrap();
    assert_eq!(class.members, vec![SECOND, SECOND ^ 1]);
}

#[test]
fn an_expiry_entry_is_fourteen_bytes_and_orders_as_time_then_fingerprint() {
    assert_eq!(size_of::<std::cmp::Reverse<Due>>(), 14);
    let values = [
        (EARLIEST_TIME, u64::MAX),
        (-1, 0),
        (0, 0),
        (0, 1),
        (0, 1 << 63),
        (0, u64::MAX),
        (1, 0),
        (1_764_158_400_000, 0x0123_4567_89ab_cdef),
        (LATEST_TIME, 0),
    ];
    for &(time, fingerprint) in &values {
        let due = Due::new(time, fingerprint);
        assert_eq!((due.time(), due.fingerprint()), (time, fingerprint));
    }
    for a in values {
        for b in values {
            assert_eq!(Due::new(a.0, a.1).cmp(&Due::new(b.0, b.1)), a.cmp(&b));
        }
    }
}

#[test]
fn the_expiry_queue_grows_by_a_quarter() {
    let mut forest = forest();
    let fingerprint = |index: u64| index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for index in 0..10_000u64 {
        forest.assign(fingerprint(index), 0);
    }
    let capacity = forest.expiry_queue.capacity();
    assert!(
        (10_000..=10_000 * 5 / 4 + 64).contains(&capacity),
        "{capacity}"
    );
}

#[test]
fn a_capture_lists_its_nodes_in_arrival_order_whatever_their_numbers() {
    // Number 0 is freed and taken by the newest node; the arrivals then
    // span a few (radix-sorted) or more than 2^32 (compared).
    for latest_restored in [1_000, 1 << 40] {
        let record = |fingerprint: Fingerprint, arrival: u64| NodeRecord {
            fingerprint,
            root: fingerprint,
            born: 10,
            arrival,
            touched: 10,
            documents: 1,
            indexing: Indexing::WithinK,
        };
        let records = [
            record(0xf000, 1),
            record(0x0f00, 2),
            record(0x00f0, latest_restored),
        ];
        let counters = ForestCounters {
            next_arrival: latest_restored,
            expired_nodes: 0,
        };
        let mut forest =
            Forest::restore(ForestConfig::default(), &records, counters).expect("restored");
        forest.remove_nodes(&[0xf000]);
        forest.assign(0x000f_0000_0000, 20);
        let capture = forest.start_capture(None);
        while !forest.capture_some(2) {}
        let captured = forest.take_capture(capture).expect("copied");
        let newest = captured.record_at(0).expect("number 0 in use");
        assert_eq!(newest.fingerprint, 0x000f_0000_0000);
        let arrivals: Vec<u64> = captured
            .arrival_order()
            .into_iter()
            .filter_map(|number| captured.record_at(number))
            .map(|record| record.arrival)
            .collect();
        assert_eq!(arrivals, [2, latest_restored, newest.arrival]);
        assert!(newest.arrival > latest_restored);
    }
}

#[test]
fn a_node_slot_is_38_bytes_and_its_arrival_keeps_the_indexing() {
    assert_eq!(size_of::<Node>(), 30);
    assert_eq!(size_of::<crate::slots::Slot<Node>>(), 38);
    for indexing in [Indexing::WithinK, Indexing::TextOnly] {
        for arrival in [0, 1, 12_345, (1 << 47) - 1] {
            let word = Arrival::new(arrival, indexing);
            assert_eq!((word.count(), word.indexing()), (arrival, indexing));
        }
        // Past 2^47 − 1 the count stays there, the indexing kept.
        let word = Arrival::new(u64::MAX, indexing);
        assert_eq!((word.count(), word.indexing()), ((1 << 47) - 1, indexing));
    }
}
