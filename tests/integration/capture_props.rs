//! A snapshot's capture while writes go on: whatever is placed, stored,
//! deleted, expired or swept between the slices of the copy, the captured
//! state is the state at the capture's start (as the old copy under the
//! lock took it), and recovery from the snapshot and the log after it
//! gives the last synced state.

use crate::support;

use std::path::Path;

use neardup::config::EngineSettings;
use neardup::ledger::capture::SnapshotImage;
use neardup::ledger::{DocumentKey, Ledger, SnapshotParts};
use neardup::persist::Store;
use neardup::units::Fingerprint;
use proptest::collection::vec;
use proptest::prelude::*;
use support::TempDir;

const SENTENCES: [&str; 6] = [
    "城东新建的体育公园周六开放，设有足球场、篮球场和一条三公里的跑道。",
    "市气象台预计本周后半段有一次明显降温过程，最低气温将降至五度左右。",
    "The city council approved a new bike lane plan covering twelve streets downtown.",
    "河道治理工程完工后，沿岸新增了两座口袋公园和一段亲水步道。",
    "A small museum reopened after renovation with a new gallery on local shipbuilding.",
    "社区食堂开业首周接待老人两千多人次，每餐价格控制在十元以内。",
];

#[derive(Debug, Clone)]
enum Write {
    Place {
        sentences: Vec<usize>,
        short: bool,
        key: u8,
        stored: bool,
        step: i64,
    },
    /// Placed, its answer not yet back (pending).
    PlaceUnanswered {
        sentences: Vec<usize>,
    },
    Delete {
        key: u8,
    },
    Expire {
        step: i64,
    },
    Sweep,
    /// One slice of the capture's copy, of this many bytes.
    Copy {
        bytes: usize,
    },
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        10 => (vec(0..SENTENCES.len(), 1..4), any::<bool>(), 0..40u8, prop::bool::weighted(0.8), 0..20_000i64)
            .prop_map(|(sentences, short, key, stored, step)| Write::Place { sentences, short, key, stored, step }),
        1 => vec(0..SENTENCES.len(), 1..3).prop_map(|sentences| Write::PlaceUnanswered { sentences }),
        3 => (0..40u8).prop_map(|key| Write::Delete { key }),
        2 => (0..100_000i64).prop_map(|step| Write::Expire { step }),
        1 => Just(Write::Sweep),
        6 => (1..200usize).prop_map(|bytes| Write::Copy { bytes }),
    ]
}

fn settings() -> EngineSettings {
    support::state::minute_retention()
}

fn text(sentences: &[usize], short: bool) -> String {
    support::state::text_of(&SENTENCES, sentences, short)
}

/// Applies `write` (a copy slice is the caller's); journal left to the caller.
fn place(ledger: &mut Ledger, sentences: &[usize], short: bool, now: i64) -> Fingerprint {
    let analyzer = ledger.engine().analyzer().clone();
    let prepared = analyzer.fingerprinter().prepare(&text(sentences, short));
    ledger.place(analyzer.analyze(&prepared), now).fingerprint
}

fn apply(ledger: &mut Ledger, write: &Write, now: &mut i64) {
    match write {
        Write::Place {
            sentences,
            short,
            key,
            stored,
            step,
        } => {
            *now += step;
            let fingerprint = place(ledger, sentences, *short, *now);
            if *stored {
                ledger.stored(DocumentKey::new("news", &key.to_string()), fingerprint);
            } else {
                ledger.not_stored(fingerprint);
            }
        }
        Write::PlaceUnanswered { sentences } => {
            place(ledger, sentences, false, *now);
        }
        Write::Delete { key } => ledger.deleted(DocumentKey::new("news", &key.to_string())),
        Write::Expire { step } => {
            *now += step;
            while ledger.expire(*now, 3).1 {}
        }
        Write::Sweep => ledger.sweep_keys(),
        Write::Copy { .. } => {}
    }
}

/// Snapshot parts in one order, side records as bytes: comparable.
type Normal = (
    neardup::forest::ForestCounters,
    Vec<neardup::forest::NodeRecord>,
    Vec<Vec<u8>>,
    Vec<(DocumentKey, Fingerprint)>,
    Vec<(Fingerprint, u32)>,
);

fn normal(mut parts: SnapshotParts) -> Normal {
    parts.nodes.sort_unstable_by_key(|node| node.fingerprint);
    parts.sides.sort_by_arrival(&parts.nodes);
    let mut sides = Vec::new();
    parts
        .sides
        .for_each_encoded(|record| sides.push(record.to_vec()));
    parts.keys.sort_unstable();
    parts.pending.sort_unstable();
    (
        parts.counters,
        parts.nodes,
        sides,
        parts.keys,
        parts.pending,
    )
}

/// [`normal`] of what a snapshot writes from a capture: the image's
/// nodes and side records in its arrival order, its keys as it sorted them.
fn normal_image(image: SnapshotImage) -> Normal {
    let mut nodes: Vec<_> = image.nodes().collect();
    nodes.sort_unstable_by_key(|node| node.fingerprint);
    let mut sides = Vec::new();
    image.for_each_side_record(|_, record| sides.push(record.to_vec()));
    assert_eq!(sides.len(), image.side_count());
    assert_eq!(nodes.len(), image.node_count());
    let keys: Vec<_> = image.keys().collect();
    assert_eq!(keys.len(), image.key_count());
    let mut pending = image.pending.clone();
    pending.sort_unstable();
    (image.counters(), nodes, sides, keys, pending)
}

fn empty_ledger() -> Ledger {
    let mut ledger = Ledger::empty(settings().parts().expect("settings")).expect("ledger");
    ledger.enable_journal();
    ledger
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Writes between the slices of a capture's copy leave its image the
    /// state at its start.
    #[test]
    fn the_capture_is_the_state_at_its_start(
        before in vec(write(), 0..60),
        during in vec(write(), 0..80),
    ) {
        let mut ledger = empty_ledger();
        let mut now = 1_700_000_000_000i64;
        for write in &before {
            apply(&mut ledger, write, &mut now);
        }
        let expected = normal(ledger.snapshot_parts());
        let capture = ledger.start_capture();
        for write in &during {
            match write {
                Write::Copy { bytes } => {
                    ledger.capture_some(*bytes);
                    // Moved into the images between slices, or at the end.
                    if bytes % 2 == 0 {
                        capture.flush();
                    }
                }
                other => apply(&mut ledger, other, &mut now),
            }
        }
        while !ledger.capture_some(64) {
            apply(&mut ledger, &Write::Place { sentences: vec![0, 2], short: false, key: 1, stored: true, step: 1 }, &mut now);
        }
        let captured = ledger.take_capture(capture).expect("all copied");
        prop_assert_eq!(normal_image(captured.into_image()), expected);
        // The capture has ended: a later one starts afresh.
        let later = normal(ledger.snapshot_parts());
        let capture = ledger.start_capture();
        while !ledger.capture_some(1 << 20) {}
        prop_assert_eq!(normal_image(ledger.take_capture(capture).expect("copied").into_image()), later);
    }

    /// A snapshot whose capture is copied while writes are logged and
    /// synced: recovery (the snapshot, then the log after it) gives the
    /// last synced state.
    #[test]
    fn recovery_from_a_snapshot_taken_during_writes_is_the_synced_state(
        before in vec(write(), 0..40),
        during in vec(write(), 0..60),
        after in vec(write(), 0..10),
    ) {
        let directory = TempDir::new("capture");
        let (store, mut ledger) = open(directory.path());
        let mut now = 1_700_000_000_000i64;
        let log = |store: &Store, ledger: &mut Ledger| {
            let seq = store.append(ledger.take_journal());
            store.sync(seq).expect("sync");
        };
        for write in &before {
            apply(&mut ledger, write, &mut now);
            log(&store, &mut ledger);
        }
        let capture = store.begin_snapshot(&ledger);
        let position = capture.last_seq();
        store.start_segment().expect("segment");
        for write in &during {
            match write {
                Write::Copy { bytes } => {
                    capture.copy_some(&ledger, *bytes);
                    if bytes % 3 == 0 {
                        capture.flush();
                    }
                }
                other => {
                    apply(&mut ledger, other, &mut now);
                    log(&store, &mut ledger);
                }
            }
        }
        while !capture.copy_some(&ledger, 64) {}
        let pending = capture.take(&ledger).expect("copied");
        for write in &after {
            apply(&mut ledger, write, &mut now);
            log(&store, &mut ledger);
        }
        let written = store.finish_snapshot(pending, now).expect("snapshot");
        prop_assert_eq!(written.last_seq, position);
        let expected = normal(ledger.snapshot_parts());
        drop(store);
        let (_store, recovered, report) = open_with_report(directory.path());
        prop_assert_eq!(report.snapshot_seq, Some(position));
        prop_assert_eq!(normal(recovered.snapshot_parts()), expected);
    }
}

fn open(dir: &Path) -> (Store, Ledger) {
    let (store, ledger, _) = open_with_report(dir);
    (store, ledger)
}

fn open_with_report(dir: &Path) -> (Store, Ledger, neardup::persist::RecoveryReport) {
    // Unanswered placements stay pending: the state compared holds them.
    support::state::open_state(dir, &settings(), false)
}
