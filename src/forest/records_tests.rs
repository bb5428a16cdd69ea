//! Unit tests of a forest rebuilt from its records (recovery).

use super::super::*;
use crate::slots::TaggedNumbers;

#[test]
fn a_forest_restored_from_its_records_is_the_same_and_damage_is_refused() {
    let mut original = Forest::new(ForestConfig {
        max_distance: 3,
        retention: None,
    })
    .expect("valid config");
    for (index, fingerprint) in [0u64, 0b1, 0b11, 1 << 40, (1 << 40) | 0b1, u64::MAX]
        .into_iter()
        .enumerate()
    {
        original.assign(fingerprint, index as Millis);
    }
    let records = original.node_records();
    let restored =
        Forest::restore(original.config, &records, original.counters()).expect("whole records");
    assert_eq!(restored.node_records(), records);
    let counts = |stats: ForestStats| (stats.nodes, stats.roots, stats.documents);
    assert_eq!(counts(restored.stats()), counts(original.stats()));
    for record in &records {
        assert_eq!(restored.root_of(record.fingerprint), Some(record.root));
        assert_eq!(
            restored.within(record.fingerprint),
            original.within(record.fingerprint)
        );
    }
    let mut twice = records.clone();
    twice.push(records[0]);
    let refused = Forest::restore(original.config, &twice, original.counters());
    assert!(
        matches!(&refused, Err(ForestError::Damaged(reason)) if reason.contains("appears twice")),
        "{refused:?}"
    );
    let leaf = records
        .iter()
        .position(|record| record.root != record.fingerprint)
        .expect("a leaf");
    let mut orphaned = records.clone();
    orphaned[leaf].root = 0x5555;
    let refused = Forest::restore(original.config, &orphaned, original.counters());
    assert!(
        matches!(&refused, Err(ForestError::Damaged(reason)) if reason.contains("not a root")),
        "{refused:?}"
    );
}

#[test]
fn leaves_find_roots_that_share_a_tag_and_a_root_only_a_tag_names_is_refused() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut mixed = state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^ (mixed >> 31)
    };
    let record = |fingerprint: Fingerprint, root: Fingerprint, documents: u32| NodeRecord {
        fingerprint,
        root,
        born: 10,
        arrival: 0,
        touched: 10,
        documents,
        indexing: Indexing::WithinK,
    };
    let roots: Vec<NodeRecord> = (0..100_000)
        .map(|_| {
            let fingerprint = next();
            record(fingerprint, fingerprint, 1)
        })
        .collect();
    let with_arrivals = |records: &[NodeRecord]| -> Vec<NodeRecord> {
        (0u64..)
            .zip(records)
            .map(|(arrival, record)| NodeRecord { arrival, ..*record })
            .collect()
    };
    let counters = ForestCounters::default();
    let forest = Forest::restore(ForestConfig::default(), &with_arrivals(&roots), counters)
        .expect("roots alone");
    // Numbered under the tags of `forest` (whose hash is seeded anew for
    // each table).
    let restore = |records: &[NodeRecord]| {
        let records = with_arrivals(records);
        let mut restored = Forest::new(ForestConfig::default()).expect("valid config");
        restored.nodes = forest.nodes.empty_like();
        restored
            .number_and_join(&records)
            .map(|()| (restored, records))
    };
    // A fingerprint of no node kept under the tag of one root.
    let (same_tag, tag_holder) = std::iter::repeat_with(&mut next)
        .filter(|&fingerprint| !forest.nodes.contains(fingerprint))
        .find_map(
            |fingerprint| match forest.nodes.numbers_tagged_like(fingerprint) {
                TaggedNumbers::One(number) => Some((fingerprint, number)),
                _ => None,
            },
        )
        .expect("some fingerprint shares a tag");
    let tag_holder = roots[tag_holder as usize].fingerprint;

    // Both roots present: each leaf finds its own.
    let mut records = roots.clone();
    records.push(record(same_tag, same_tag, 1));
    let leaves = [
        (next(), same_tag, 2),
        (next(), tag_holder, 3),
        (next(), same_tag, 4),
    ];
    records.extend(leaves.map(|(leaf, root, documents)| record(leaf, root, documents)));
    let (restored, records) = restore(&records).expect("every root present");
    for (leaf, root, _) in leaves {
        assert_eq!(restored.root_of(leaf), Some(root));
    }
    let class = |root| {
        restored
            .class(root)
            .map(|class| (class.nodes, class.documents))
    };
    assert_eq!(class(same_tag), Some((3, 7)));
    assert_eq!(class(tag_holder), Some((2, 4)));
    assert_eq!(restored.node_records(), records);
    assert!(matches!(
        restored.nodes.numbers_tagged_like(same_tag),
        TaggedNumbers::Several
    ));

    // The root only shares a tag: refused, whether alone or beside a leaf
    // of the root that holds the tag.
    for with_holders_leaf in [false, true] {
        let mut records = roots.clone();
        let orphan = next();
        if with_holders_leaf {
            records.push(record(next(), tag_holder, 1));
        }
        records.push(record(orphan, same_tag, 1));
        let refused = restore(&records).map(|_| ());
        assert!(
            matches!(&refused, Err(ForestError::Damaged(reason))
                if reason.contains(&format!("{orphan:016x}")) && reason.contains("not a root")),
            "{refused:?}"
        );
    }
}
