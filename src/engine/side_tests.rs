//! Unit tests of the engine's side data: records off the heap, node
//! numbers and their reuse, exact hashes, recovery.

use super::tests::{HOUR, LONG_BODY, engine, engine_with};
use super::*;
use crate::forest::{Indexing, NodeRecord};
use crate::units::NodeId;

/// `engine` restored from its own node and side records (as recovery
/// restores a snapshot of it), under `confirmation`.
fn restored_from_records(engine: &Engine, confirmation: ConfirmationConfig) -> Engine {
    let mut sides = EncodedSides::default();
    for record in engine.side_records() {
        sides.push(&record);
    }
    Engine::restore(
        engine.fingerprinter().clone(),
        ForestState {
            config: engine.forest().config(),
            nodes: engine.forest().node_records(),
            counters: engine.forest().counters(),
        },
        confirmation,
        side_file::SideStorage::Memory,
        &sides,
        None,
    )
    .expect("the forest is given")
}

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
    // In RAM: a location per node and the exact-hash map (its shards'
    // directories and tails the same at any size).
    assert!(
        stats.side_data_heap_bytes < 80 * nodes + crate::key_node_table::FIXED_BYTES,
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
                nodes: nodes.to_vec(),
                counters: engine.forest().counters(),
            },
            ConfirmationConfig::default(),
            side_file::SideStorage::Memory,
            &sides,
            None,
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
                nodes: engine.forest().node_records(),
                counters: engine.forest().counters(),
            },
            ConfirmationConfig::default(),
            side_file::SideStorage::Memory,
            &sides,
            None,
            records_per_run,
        )
        .expect("the forest is given");
        let found = candidates_by_fingerprint;
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

/// A node's candidates, named by fingerprint (numbers are the engines'
/// own), from the short-text and the long-text index.
fn candidates_by_fingerprint(engine: &Engine, record: &SideRecord) -> [Vec<Fingerprint>; 2] {
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
                        .candidates(short_text.shingles(), u64::from),
                )
            }),
        record
            .long_text
            .as_ref()
            .map_or_else(Vec::new, |long_text| {
                named(engine.long_texts.candidates(&long_text.sketch, u64::from))
            }),
    ]
}

/// `engine` captured as a snapshot captures it and restored from the
/// capture: its nodes, side records and candidate pairs (`pairs`:
/// recovery builds the indexes from those; else from the records).
fn restored_from_capture(engine: &Engine, pairs: bool) -> Engine {
    use crate::candidates::captured::{CandidatePairs, CandidateTable};
    let capture = engine.start_capture();
    while !engine.capture_some(64) {
        capture.flush();
    }
    let image = engine
        .take_capture(capture)
        .expect("all copied")
        .into_image();
    let positions = image.positions();
    let mut sides = EncodedSides::default();
    image.for_each_side_record(|_, record| sides.push_encoded(record));
    let mut captured = CandidatePairs {
        texts: image.candidate_texts(),
        ..CandidatePairs::default()
    };
    for table in CandidateTable::ALL {
        let copied = image.candidate_pairs(table);
        captured.tables[table as usize].mix = copied.mix;
        for (in_order, pairs) in [(true, &copied.in_order), (false, &copied.ahead)] {
            for pair in pairs.iter() {
                captured.push(table, in_order, pair.key, positions[pair.node as usize]);
            }
        }
    }
    Engine::restore(
        engine.fingerprinter().clone(),
        ForestState {
            config: engine.forest().config(),
            nodes: image.nodes().collect(),
            counters: engine.forest().counters(),
        },
        engine.confirmation().clone(),
        side_file::SideStorage::Memory,
        &sides,
        pairs.then_some(captured),
    )
    .expect("the forest is given")
}

/// Restored from a snapshot's pairs, the candidate indexes are the live
/// ones: every record finds the same candidates in the same order. Rebuilt
/// from the records they are not, once a full bucket dropped its oldest
/// and a newer holder went: the rebuild keeps the oldest again.
#[test]
fn indexes_restored_from_pairs_are_the_live_ones_where_a_rebuild_is_not() {
    for lean in [false, true] {
        let mut engine = if lean { lean_engine() } else { engine() };
        // Short texts of one bucket past its bound (the same letters, so
        // the same band keys; each its own node by its digits' order),
        // and long ones sharing sentences.
        let mut placed = Vec::new();
        for index in 0..40usize {
            let text = format!(
                "暴雨预警今晚八点地铁新线{}",
                index.to_string().chars().rev().collect::<String>() + &"零".repeat(index % 3)
            );
            placed.push(engine.add_text(&text, index as i64).fingerprint);
        }
        for index in 0..30usize {
            engine.add_text(
                &format!(
                    "城市马拉松开幕，地铁新线延长运营。今年共有{index}支队伍报名参加，组委会表示将增加志愿者和补给站。"
                ),
                100 + index as i64,
            );
        }
        // The newest holders of the full bucket go.
        for &fingerprint in placed.iter().rev().take(6) {
            engine.forget_document(fingerprint);
        }
        let records = engine.side_records();
        let from_pairs = restored_from_capture(&engine, true);
        let rebuilt = restored_from_capture(&engine, false);
        let mut rebuilt_differs = false;
        for record in &records {
            let live = candidates_by_fingerprint(&engine, record);
            assert_eq!(
                candidates_by_fingerprint(&from_pairs, record),
                live,
                "lean {lean}"
            );
            rebuilt_differs |= candidates_by_fingerprint(&rebuilt, record) != live;
        }
        assert!(
            rebuilt_differs,
            "the case where a rebuild differs (lean {lean})"
        );
        assert_eq!(from_pairs.short_texts.len(), engine.short_texts.len());
        assert_eq!(from_pairs.long_texts.len(), engine.long_texts.len());
    }
}

/// An engine that writes lean side records.
fn lean_engine() -> Engine {
    super::tests::engine_with(lean_config())
}

fn lean_config() -> ConfirmationConfig {
    ConfirmationConfig {
        lean_side_records: true,
        ..ConfirmationConfig::default()
    }
}

/// `side`'s record, encoded as the engine stores it.
/// The shingle set a record's keys give: a lean record's hashes come
/// unsorted and may repeat.
fn shingle_set_read(keys: &side_record::RecordKeys) -> Option<Vec<u32>> {
    keys.shingles.as_ref().map(|hashes| {
        let mut set = hashes.clone();
        set.sort_unstable();
        set.dedup();
        set
    })
}

fn encoded(side: &SideRecord) -> Vec<u8> {
    let mut encoder = crate::encoding::Encoder::default();
    side_record::put_side(&mut encoder, &side.view());
    encoder.bytes
}

#[test]
fn a_lean_record_leaves_out_the_shingles_its_letters_give_back() {
    let lean = lean_engine();
    let text = "周末去哪儿玩？这五个公园的秋景美到不想走 Parks in AUTUMN";
    let prepared = lean.analyzer().fingerprinter.prepare(text);
    let side = lean.analyzer().analyze(&prepared).side_record(1, 2);
    let short = side.short_text.clone().expect("a short text");
    assert!(short.shingles().len() > 20);
    let record = encoded(&side);
    // Fingerprint, root, one exact hash, tags and flags, the letters
    // coded (about a byte each, less than the compact form's two a Han
    // letter), the number signature: no shingles.
    let letter_bytes = crate::encoding::Packing::Coded.encoded_len(&short.letters);
    let compact_bytes = crate::encoding::Packing::Compact.encoded_len(&short.letters);
    assert!(
        letter_bytes * 5 < compact_bytes * 4,
        "{letter_bytes} of {compact_bytes}"
    );
    assert!(
        record.len() <= 16 + 12 + 4 + 2 + letter_bytes + 8,
        "{} bytes",
        record.len()
    );
    assert_eq!(side_record::decode_record(&record), Ok(side.clone()));
    let mut keys = side_record::RecordKeys::default();
    keys.read(&record).expect("reads");
    assert_eq!(shingle_set_read(&keys).as_deref(), Some(short.shingles()));
    let mut decoder = crate::encoding::Decoder::new(&record);
    side_record::skip_side(&mut decoder).expect("skips");
    assert!(decoder.is_done());
    // Without --lean-side-records, the record keeps the shingles (a
    // varint count, four bytes each); its letters are compact all the same.
    let kept = engine().analyzer().analyze(&prepared).side_record(1, 2);
    assert_eq!(
        kept.short_text
            .as_ref()
            .and_then(|short| short.shingles_from_letters),
        None
    );
    let shingle_bytes = 1 + 4 * short.shingles().len();
    let kept_len = encoded(&kept).len();
    assert!(
        kept_len >= 28 + shingle_bytes + letter_bytes,
        "{kept_len} bytes"
    );
    assert!(
        kept_len <= 16 + 12 + 4 + 2 + shingle_bytes + letter_bytes + 8,
        "{kept_len} bytes"
    );
    assert_eq!(side_record::decode_record(&encoded(&kept)), Ok(kept));
}

#[test]
fn a_short_text_whose_letters_do_not_give_its_shingles_keeps_them() {
    let side = SideRecord {
        fingerprint: 1,
        root: 2,
        exact_hashes: vec![3],
        short_text: Some(ShortText::new(
            vec![4, 5].into_boxed_slice(),
            "标题\u{1e}正文".into(),
            0,
            6,
        )),
        long_text: None,
    };
    let record = encoded(&side);
    assert_eq!(side_record::decode_record(&record), Ok(side));
    let mut keys = side_record::RecordKeys::default();
    keys.read(&record).expect("reads");
    assert_eq!(keys.shingles.as_deref(), Some(&[4, 5][..]));
}

#[test]
fn records_of_the_fixed_width_layouts_still_read() {
    // Short-text tag 2 and long-text tag 3, as builds before the compact
    // layout wrote them.
    let mut encoder = crate::encoding::Encoder::default();
    encoder.u64(1).u64(2).u64s(&[3]);
    encoder
        .u8(2)
        .u32s(&[4, 5])
        .str("短文")
        .u64(6)
        .u64(0)
        .u8(0)
        .u32(7);
    encoder
        .u8(3)
        .u32s(&[8, 9])
        .u8(1)
        .str("标题")
        .str("导语")
        .u32s(&[10])
        .u32(11)
        .u32s(&[12]);
    let record = encoder.bytes;
    let decoded = side_record::decode_record(&record).expect("decodes");
    let short = decoded.short_text.expect("short");
    assert_eq!((short.shingles(), &*short.letters), (&[4, 5][..], "短文"));
    assert_eq!(
        (
            short.number_signature,
            short.headline_field,
            short.body_weight
        ),
        (6, Some(0), 7)
    );
    let long = decoded.long_text.expect("long");
    assert_eq!(
        (&long.sketch[..], long.headline.as_deref(), &*long.lead),
        (&[8, 9][..], Some("标题"), "导语")
    );
    assert_eq!(
        (
            &long.numbers[..],
            long.identifying_weight,
            &long.name_slots[..]
        ),
        (&[10][..], 11, &[12][..])
    );
    let mut keys = side_record::RecordKeys::default();
    keys.read(&record).expect("reads");
    assert_eq!(
        (keys.shingles.as_deref(), keys.sketch.as_deref()),
        (Some(&[4, 5][..]), Some(&[8, 9][..]))
    );
    let mut decoder = crate::encoding::Decoder::new(&record);
    side_record::skip_side(&mut decoder).expect("skips");
    assert!(decoder.is_done());
}

#[test]
fn a_lean_text_of_middle_length_keeps_its_lead_once() {
    let lean = lean_engine();
    let sentence = "山区小学的新图书馆周末启用，藏书三千册，由校友捐建，每天放学后开放两小时。";
    let text = format!("新图书馆启用\u{1e}{sentence}{sentence}{sentence}{sentence}");
    let prepared = lean.analyzer().fingerprinter.prepare(&text);
    let side = lean.analyzer().analyze(&prepared).side_record(1, 2);
    let (Some(short), Some(long)) = (&side.short_text, &side.long_text) else {
        panic!("a text of middle length keeps both descriptions: {side:?}");
    };
    let record = encoded(&side);
    assert_eq!(side_record::decode_record(&record), Ok(side.clone()));
    let mut alone = crate::encoding::Encoder::default();
    side_record::put_long(&mut alone, Some(long), None);
    let mut beside = crate::encoding::Encoder::default();
    side_record::put_long(&mut beside, Some(long), Some(short));
    assert!(long.lead.chars().count() > 100, "{long:?}");
    let lead_bytes = crate::encoding::Packing::Coded.encoded_len(&long.lead);
    assert!(lead_bytes > long.lead.chars().count() / 2);
    assert!(alone.bytes.len() >= beside.bytes.len() + lead_bytes);
    let mut decoder = crate::encoding::Decoder::new(&record);
    side_record::skip_side(&mut decoder).expect("skips");
    assert!(decoder.is_done());
    // Without --lean-side-records the lead is kept: each read of the record
    // would otherwise read it again from the letters.
    let side = engine().analyzer().analyze(&prepared).side_record(1, 2);
    let (Some(short), Some(long)) = (&side.short_text, &side.long_text) else {
        panic!("a text of middle length keeps both descriptions: {side:?}");
    };
    let mut beside = crate::encoding::Encoder::default();
    side_record::put_long(&mut beside, Some(long), Some(short));
    assert_eq!(beside.bytes.len(), alone.bytes.len());
}

#[test]
fn a_lean_engine_restored_finds_reposts_by_the_shingles_it_reads_back() {
    let texts = [
        "周末去哪儿玩？这五个公园的秋景美到不想走",
        "城市马拉松周日开跑，三万名选手将从体育中心出发",
        "The council approved twelve new bike lanes downtown",
    ];
    let mut lean = lean_engine();
    let mut kept = engine();
    let roots: Vec<_> = texts
        .iter()
        .map(|text| lean.add_text(text, 0).root)
        .collect();
    for text in texts {
        kept.add_text(text, 0);
    }
    let live = |engine: &Engine| engine.stats().side_file.live_bytes;
    assert!(
        live(&lean) * 10 < live(&kept) * 7,
        "{} against {}",
        live(&lean),
        live(&kept)
    );
    let mut restored = restored_from_records(&lean, lean_config());
    // Found through the short-text index rebuilt from the records, and
    // confirmed against shingles read back from their letters.
    for (text, root) in texts.iter().zip(roots) {
        let repost = restored.add_text(&format!("转发：{text}"), 1);
        assert_eq!(repost.root, root, "{text}");
        assert!(!repost.exact_hit);
    }
}

mod record_props {
    use super::*;
    use crate::confirm::LongText;
    use proptest::prelude::*;

    const LETTERS: &str =
        "[a-zA-Z0-9 |#,\u{1e}\u{4e00}-\u{4e40}\u{c0}-\u{17f}\u{3041}-\u{3050}]{0,30}";

    fn short_text() -> impl Strategy<Value = ShortText> {
        (
            LETTERS,
            any::<bool>(),
            proptest::collection::btree_set(any::<u32>(), 0..40),
            prop_oneof![Just(0u64), any::<u64>()],
            prop_oneof![Just(0u64), any::<u64>()],
            proptest::option::of((any::<u8>(), any::<u32>())),
        )
            .prop_map(|(letters, lean, stored, numbers, places, headline)| {
                let shingles = if lean {
                    crate::fingerprint::shingle_set_of_letters(&letters, 2)
                } else {
                    stored.into_iter().collect()
                };
                let mut text =
                    ShortText::new(shingles.into_boxed_slice(), letters.into(), numbers, places);
                if let Some((field, weight)) = headline {
                    text = text.with_headline(field, weight);
                }
                if lean {
                    text.checking_shingles_against_letters(2)
                } else {
                    text
                }
            })
    }

    fn long_text() -> impl Strategy<Value = LongText> {
        (
            proptest::collection::btree_set(any::<u32>(), 0..70),
            proptest::option::of(LETTERS),
            LETTERS,
            proptest::collection::vec(any::<u32>(), 0..5),
            proptest::collection::vec(any::<u32>(), 0..5),
            any::<u32>(),
        )
            .prop_map(
                |(sketch, headline, lead, numbers, name_slots, weight)| LongText {
                    sketch: sketch.into_iter().collect(),
                    headline: headline.map(Into::into),
                    lead: lead.into(),
                    numbers: numbers.into(),
                    name_slots: name_slots.into(),
                    identifying_weight: weight,
                },
            )
    }

    proptest! {
        #[test]
        fn any_record_reads_back_whole_and_skips_whole(
            short in proptest::option::of(short_text()),
            long in proptest::option::of(long_text()),
            lead_from_letters in any::<bool>(),
            exact_hashes in proptest::collection::vec(any::<u64>(), 0..3),
        ) {
            let mut long = long;
            // A lead that is the opening of the letters, as a lean text of
            // middle length has.
            if let (true, Some(short), Some(long)) = (lead_from_letters, &short, &mut long) {
                let opening: String = short.letters.split('\u{1e}').skip(1)
                    .flat_map(str::chars).flat_map(char::to_lowercase)
                    .filter(|&c| crate::fingerprint::normalize::is_letter_or_digit(c))
                    .take(crate::confirm::spans::KEPT_LEAD_CHARS).collect();
                long.lead = opening.into();
            }
            let side = SideRecord { fingerprint: 1, root: 2, exact_hashes, short_text: short, long_text: long };
            let record = encoded(&side);
            prop_assert_eq!(side_record::decode_record(&record), Ok(side.clone()));
            let mut decoder = crate::encoding::Decoder::new(&record);
            prop_assert!(side_record::skip_side(&mut decoder).is_ok());
            prop_assert!(decoder.is_done());
            let mut keys = side_record::RecordKeys::default();
            prop_assert!(keys.read(&record).is_ok());
            let shingles = shingle_set_read(&keys);
            prop_assert_eq!(shingles.as_deref(), side.short_text.as_ref().map(|short| short.shingles()));
            prop_assert_eq!(keys.sketch.as_deref(), side.long_text.as_ref().map(|long| &long.sketch[..]));
        }

        #[test]
        fn any_bytes_are_a_record_or_an_error_never_a_panic(
            tail in proptest::collection::vec(any::<u8>(), 0..120),
        ) {
            // A fingerprint, a root and no exact hash, then anything: the
            // texts' decoders see the damage.
            let mut bytes = vec![0u8; 20];
            bytes.extend(tail);
            let _ = side_record::decode_record(&bytes);
            let _ = side_record::skip_side(&mut crate::encoding::Decoder::new(&bytes));
            let _ = side_record::RecordKeys::default().read(&bytes);
        }
    }
}

/// A short text alone is found by its shingles, so "within k" leaves its
/// node out; a long text (with or without a headline) is found within k,
/// and so is every text when the shingle search is off. A journal replayed
/// elsewhere (a restart, a standby) indexes each node the same way.
#[test]
fn a_short_text_alone_is_left_out_of_within_k_and_replays_so() {
    let indexing_of = |engine: &Engine| {
        let mut records: Vec<(Fingerprint, Indexing)> = engine
            .forest()
            .node_records()
            .iter()
            .map(|record| (record.fingerprint, record.indexing))
            .collect();
        records.sort_unstable_by_key(|&(fingerprint, _)| fingerprint);
        records
    };
    let place = |engine: &mut Engine| {
        let short = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
        let headline = serde_json::json!({"title": "城市更新推进会召开", "content": LONG_BODY});
        let long = engine.add_document(&headline, 1).expect("text");
        let body = serde_json::json!({"content": LONG_BODY.replace("推进", "促进")});
        let body_only = engine.add_document(&body, 2).expect("text");
        [short, long, body_only].map(|placed| placed.fingerprint)
    };
    let mut searching = engine();
    searching.enable_journal();
    let [short, long, body_only] = place(&mut searching);
    let expected = |short_indexing| {
        let mut expected = vec![
            (short, short_indexing),
            (long, Indexing::WithinK),
            (body_only, Indexing::WithinK),
        ];
        expected.sort_unstable_by_key(|&(fingerprint, _)| fingerprint);
        expected
    };
    assert_eq!(indexing_of(&searching), expected(Indexing::TextOnly));
    assert_eq!(searching.forest().index().len(), 2);
    let mut replayed = engine();
    for effect in searching.take_journal() {
        replayed.replay(effect);
    }
    assert_eq!(indexing_of(&replayed), indexing_of(&searching));
    assert_eq!(replayed.forest().index().len(), 2);
    // Restored with the shingle search turned off since: within k finds all.
    let restored = restored_from_records(
        &searching,
        ConfirmationConfig {
            short_text_search: false,
            ..ConfirmationConfig::default()
        },
    );
    assert_eq!(indexing_of(&restored), expected(Indexing::WithinK));
    assert_eq!(restored.forest().index().len(), 3);

    let mut not_searching = engine_with(ConfirmationConfig {
        short_text_search: false,
        ..ConfirmationConfig::default()
    });
    place(&mut not_searching);
    assert_eq!(indexing_of(&not_searching), expected(Indexing::WithinK));
}
