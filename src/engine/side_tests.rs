//! Unit tests of the engine's side data: records off the heap, node
//! numbers and their reuse, exact hashes, recovery.

use super::tests::{HOUR, engine};
use super::*;
use crate::forest::NodeRecord;
use crate::units::NodeId;

#[test]
fn expiry_drops_side_data_with_the_nodes() {
    let mut engine = engine();
    let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
    assert_eq!(engine.stats().side_data_nodes, 1);
    let (removed, _) = engine.expire(72 * HOUR, 100);
    assert_eq!(removed, 1);
    let stats = engine.stats();
    assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
    // The repost now starts a class of its own: nothing stale was found.
    let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 72 * HOUR);
    assert_eq!(repost.placement, Placement::NewRoot);
    assert_ne!(repost.root, original.root);
    // And the original text is fingerprinted again, not found by exact hash.
    assert!(
        !engine
            .add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 72 * HOUR)
            .exact_hit
    );
}

#[test]
fn side_records_live_off_the_heap_and_a_snapshot_outlives_their_expiry() {
    let directory = std::env::temp_dir().join(format!("neardup-side-test-{}", std::process::id()));
    let mut engine =
        engine().with_side_storage(side_file::SideStorage::Directory(directory.clone()));
    let texts = 3000;
    for number in 0..texts {
        engine.add_text(
            &format!("第{number}期：周末去哪儿玩？这几个公园的秋景美到不想走，快约上朋友出发吧"),
            0,
        );
    }
    let stats = engine.stats();
    let nodes = engine.forest().stats().nodes;
    assert!(nodes > texts * 9 / 10);
    assert_eq!(stats.side_data_nodes, nodes);
    assert_eq!(stats.side_file.anonymous_bytes, 0, "{:?}", stats.side_file);
    assert!(stats.side_file.live_bytes > 100 * nodes as u64);
    // In RAM: a location per node and the exact-hash map.
    assert!(
        stats.side_data_heap_bytes < 80 * nodes,
        "{} heap bytes",
        stats.side_data_heap_bytes
    );
    // The segment files are unlinked as soon as they are made.
    let left_behind = std::fs::read_dir(&directory)
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(left_behind, 0);

    let snapshot = engine.side_snapshot();
    let (removed, _) = engine.expire(72 * HOUR, usize::MAX);
    assert_eq!(removed, nodes);
    let stats = engine.stats();
    assert_eq!(stats.side_file.live_bytes, 0);
    assert!(stats.side_file.segments <= 1, "{:?}", stats.side_file);
    // The snapshot still reads every record it was given.
    let mut records = 0;
    snapshot.for_each_encoded(|record| {
        let decoded = side_record::decode_record(record).expect("decodes");
        assert!(decoded.short_text.is_some());
        records += 1;
    });
    assert_eq!(records, nodes);
    let _ = std::fs::remove_dir(&directory);
}

#[test]
fn a_node_that_gains_an_exact_hash_keeps_it_until_it_expires() {
    let mut engine = engine();
    let first_text = "周末去哪儿玩？这五个公园的秋景美到不想走";
    let second_text = "周末去哪儿玩？这五个公园的秋景美到不想走，快约上朋友出发吧";
    let first = engine.add_text(first_text, 0);
    // A document stamped onto the same node (backfill) brings its own
    // exact hash: the node's record is written again with both.
    let analysis = engine
        .analyzer()
        .analyze(&engine.fingerprinter().prepare(second_text));
    let adopted = engine.adopt(Some(analysis), first.fingerprint, first.root, 1);
    assert_eq!(adopted.placement, Placement::ExistingNode);
    assert!(engine.add_text(second_text, 2).exact_hit);
    assert!(engine.add_text(first_text, 3).exact_hit);
    let stats = engine.stats();
    assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (1, 2));
    engine.expire(100 * HOUR, usize::MAX);
    let stats = engine.stats();
    assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
    assert_eq!(stats.side_file.live_bytes, 0);
}

#[test]
fn a_number_freed_by_expiry_is_reused_without_the_old_nodes_entries() {
    let mut engine = engine();
    let expiring = "周末去哪儿玩？这五个公园的秋景美到不想走";
    engine.add_text(expiring, 0);
    engine.add_text("明天全市大部分地区有小到中雨，出门记得带伞", 30 * HOUR);
    let (removed, _) = engine.expire(50 * HOUR, usize::MAX);
    assert_eq!(removed, 1);
    // This node takes the expired node's number.
    engine.add_text("新款手机发布会定于下周三举行，售价尚未公布", 50 * HOUR);
    let before = engine.stats();
    // The expired text's repost finds no candidate: its old index entries
    // left with it, so none points at the node holding its number now.
    let repost = engine.add_text(&format!("转发：{expiring}"), 51 * HOUR);
    assert_eq!(repost.placement, Placement::NewRoot);
    assert_eq!(engine.stats().confirmations, before.confirmations);
    assert!(!engine.add_text(expiring, 52 * HOUR).exact_hit);
}

#[test]
fn side_records_moved_to_other_storage_keep_their_nodes_findable() {
    let mut engine = engine();
    let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
    let mut engine = engine.with_side_storage(side_file::SideStorage::Memory);
    let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 1);
    assert_eq!(repost.root, original.root);
    assert!(
        engine
            .add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 2)
            .exact_hit
    );
}

#[test]
fn a_restored_engine_finds_what_it_held_and_drops_records_of_unknown_nodes() {
    let mut engine = engine();
    let text = "周末去哪儿玩？这五个公园的秋景美到不想走";
    let original = engine.add_text(text, 0);
    let mut sides = EncodedSides::default();
    for record in engine.side_records() {
        sides.push(&record);
    }
    let restore = |nodes: &[NodeRecord]| {
        Engine::restore(
            engine.fingerprinter().clone(),
            ForestState {
                config: engine.forest().config(),
                nodes,
                counters: engine.forest().counters(),
            },
            ConfirmationConfig::default(),
            side_file::SideStorage::Memory,
            &sides,
        )
        .expect("the forest is given")
    };
    let mut restored = restore(&engine.forest().node_records());
    assert_eq!(restored.stats().side_data_nodes, 1);
    assert!(restored.add_text(text, 1).exact_hit);
    let repost = restored.add_text(&format!("转发：{text}"), 2);
    assert_eq!(repost.root, original.root);
    // A forest without the node: its record, exact hash and index entries go.
    let mut orphaned = restore(&[]);
    let stats = orphaned.stats();
    assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
    assert!(!orphaned.add_text(text, 1).exact_hit);
}

#[test]
fn indexes_restored_in_runs_are_those_built_one_text_at_a_time() {
    let mut engine = engine();
    // Short texts sharing phrases (so band buckets fill past their bound
    // and drop their oldest) and long ones sharing sentences.
    let phrases = ["今晚八点", "城市马拉松", "地铁新线", "暴雨预警", "公园秋景"];
    for index in 0..240usize {
        let text = if index % 3 == 0 {
            format!(
                "{}开幕，{}。今年共有{index}支队伍报名参加，组委会表示将增加志愿者和补给站。",
                phrases[index % 5],
                phrases[(index / 5) % 5]
            )
        } else {
            format!("{}{}第{index}期", phrases[index % 2], phrases[2])
        };
        engine.add_text(&text, index as i64);
    }
    let records = engine.side_records();
    let mut sides = EncodedSides::default();
    for record in &records {
        sides.push(record);
    }
    for records_per_run in [1, 7, 1000] {
        let restored = Engine::restore_in_runs(
            engine.fingerprinter().clone(),
            ForestState {
                config: engine.forest().config(),
                nodes: &engine.forest().node_records(),
                counters: engine.forest().counters(),
            },
            ConfirmationConfig::default(),
            side_file::SideStorage::Memory,
            &sides,
            records_per_run,
        )
        .expect("the forest is given");
        // A node's candidates, named by fingerprint (numbers are the
        // engines' own), from the short-text and the long-text index.
        let found = |engine: &Engine, record: &SideRecord| -> [Vec<Fingerprint>; 2] {
            let named = |ids: Vec<NodeId>| -> Vec<Fingerprint> {
                ids.into_iter()
                    .map(|id| engine.forest.fingerprint_at(id).unwrap_or(u64::MAX))
                    .collect()
            };
            [
                record
                    .short_text
                    .as_ref()
                    .map_or_else(Vec::new, |short_text| {
                        named(
                            engine
                                .short_texts
                                .candidates(&short_text.shingles, u64::from),
                        )
                    }),
                record
                    .long_text
                    .as_ref()
                    .map_or_else(Vec::new, |long_text| {
                        named(engine.long_texts.candidates(&long_text.sketch, u64::from))
                    }),
            ]
        };
        let mut full_buckets = 0;
        for record in &records {
            let expected = found(&engine, record);
            full_buckets +=
                usize::from(expected[0].len() >= crate::candidates::shingle_index::MAX_BUCKET);
            assert_eq!(found(&restored, record), expected);
        }
        assert!(full_buckets > 0, "some bucket drops its oldest");
        assert_eq!(
            restored.stats().exact_hash_entries,
            engine.stats().exact_hash_entries
        );
        assert_eq!(
            restored.stats().side_data_nodes,
            engine.stats().side_data_nodes
        );
    }
}

#[test]
fn records_split_into_runs_keep_their_order_across_blocks() {
    let mut sides = EncodedSides::default();
    for index in 0..10u8 {
        sides.push_encoded(&[index; 3]);
    }
    for records_per_run in [1, 3, 4, 10, 11] {
        let runs = sides.runs(records_per_run);
        let mut seen = Vec::new();
        for run in &runs {
            assert_eq!(run.first, seen.len());
            let records: Vec<&[u8]> = run.iter().collect();
            assert_eq!(records.len(), run.records);
            seen.extend(records);
        }
        let all: Vec<&[u8]> = sides.iter().collect();
        assert_eq!(seen, all, "runs of {records_per_run}");
    }
}
