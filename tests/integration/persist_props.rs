//! Durable state against an in-memory ledger: random placements, outcomes,
//! deletes, expiry, snapshots, torn writes and crashes; after every reopen
//! the recovered state equals the state as of the last sync.

use crate::support;

use std::path::Path;

use neardup::config::EngineSettings;
use neardup::engine::SideRecord;
use neardup::forest::NodeRecord;
use neardup::ledger::{DocumentKey, InDoubt, Ledger, SentTo};
use neardup::persist::{FsyncPolicy, Store, StoreOptions};
use neardup::units::Fingerprint;
use proptest::collection::vec;
use proptest::prelude::*;
use support::TempDir;

const SENTENCES: [&str; 8] = [
    "城东新建的体育公园周六开放，设有足球场、篮球场和一条三公里的跑道。",
    "市气象台预计本周后半段有一次明显降温过程，最低气温将降至五度左右。",
    "一家本地面包店连续十年坚持凌晨四点开炉，老顾客说味道一直没变。",
    "The city council approved a new bike lane plan covering twelve streets downtown.",
    "河道治理工程完工后，沿岸新增了两座口袋公园和一段亲水步道。",
    "A small museum reopened after renovation with a new gallery on local shipbuilding.",
    "图书馆推出夜间自习室，每晚开放到十一点，需提前在线预约座位。",
    "社区食堂开业首周接待老人两千多人次，每餐价格控制在十元以内。",
];

#[derive(Debug, Clone)]
enum Operation {
    /// Place a text made of some sentences (a short one: one sentence cut).
    Place {
        sentences: Vec<usize>,
        short: bool,
        key: u8,
        outcome: Outcome,
        step: i64,
    },
    Delete {
        key: u8,
    },
    Expire {
        step: i64,
    },
    Snapshot,
    /// Stop without a clean shutdown, optionally with a torn frame at the
    /// end of the log, and reopen.
    Crash {
        torn_bytes: usize,
    },
}

#[derive(Debug, Clone, Copy)]
enum Outcome {
    Stored,
    NotStored,
    /// The sidecar dies after forwarding, before the answer comes back.
    CrashBeforeAnswer,
    /// The same, the placement's destination journaled with it (as the
    /// sidecar's write path does): it stays pending across the crash, with
    /// its destination, for the read-back.
    CrashAfterSending,
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        10 => (vec(0..SENTENCES.len(), 1..4), any::<bool>(), 0..12u8, prop_oneof![6 => Just(Outcome::Stored), 2 => Just(Outcome::NotStored), 1 => Just(Outcome::CrashBeforeAnswer), 1 => Just(Outcome::CrashAfterSending)], 0..20_000i64)
            .prop_map(|(sentences, short, key, outcome, step)| Operation::Place { sentences, short, key, outcome, step }),
        2 => (0..12u8).prop_map(|key| Operation::Delete { key }),
        2 => (0..200_000i64).prop_map(|step| Operation::Expire { step }),
        1 => Just(Operation::Snapshot),
        2 => (0..40usize).prop_map(|torn_bytes| Operation::Crash { torn_bytes }),
    ]
}

fn settings() -> EngineSettings {
    support::state::minute_retention()
}

fn open(dir: &Path) -> (Store, Ledger) {
    let (store, ledger, _) = open_with_report(dir);
    (store, ledger)
}

fn open_with_report(dir: &Path) -> (Store, Ledger, neardup::persist::RecoveryReport) {
    support::state::open_state(dir, &settings(), true)
}

/// The comparable state: nodes, side data, keys whose node lives, and
/// placements awaiting an answer with where they were sent.
type State = (
    Vec<NodeRecord>,
    Vec<SideRecord>,
    Vec<(DocumentKey, Fingerprint)>,
    Vec<(Fingerprint, u32)>,
    Vec<(Fingerprint, SentTo)>,
);

fn state(ledger: &Ledger) -> State {
    let forest = ledger.engine().forest();
    let keys = ledger
        .key_records()
        .into_iter()
        .filter(|(_, fingerprint)| forest.contains(*fingerprint))
        .collect();
    (
        forest.node_records(),
        ledger.engine().side_records(),
        keys,
        ledger.pending_records(),
        ledger.sent_records(),
    )
}

fn text(sentences: &[usize], short: bool) -> String {
    support::state::text_of(&SENTENCES, sentences, short)
}

fn run(operations: &[Operation]) -> Result<(), TestCaseError> {
    let directory = TempDir::new("persist");
    let (mut store, mut ledger) = open(directory.path());
    let mut now = 1_700_000_000_000i64;
    let mut synced = state(&ledger);
    for operation in operations {
        match operation {
            Operation::Place {
                sentences,
                short,
                key,
                outcome,
                step,
            } => {
                now += step;
                let analyzer = ledger.engine().analyzer().clone();
                let prepared = analyzer.fingerprinter().prepare(&text(sentences, *short));
                let placed = ledger.place(analyzer.analyze(&prepared), now);
                let sent_to = SentTo {
                    index: "news".into(),
                    id: Some(key.to_string()),
                };
                if matches!(outcome, Outcome::CrashAfterSending) {
                    ledger.sending(placed.fingerprint, sent_to.clone());
                }
                // Write-ahead, as the sidecar does before forwarding.
                let seq = store.append(ledger.take_journal());
                store.sync(seq).expect("sync");
                match outcome {
                    Outcome::Stored => {
                        ledger.stored(
                            DocumentKey::new("news", &key.to_string()),
                            placed.fingerprint,
                        );
                    }
                    Outcome::NotStored => ledger.not_stored(placed.fingerprint),
                    Outcome::CrashBeforeAnswer => {
                        // In doubt: recovery takes the count back and keeps the node.
                        ledger.resolve_in_doubt();
                        let expected = state(&ledger);
                        drop(store);
                        let reopened = open_with_report(directory.path());
                        store = reopened.0;
                        ledger = reopened.1;
                        prop_assert_eq!(reopened.2.in_doubt, 1);
                        prop_assert_eq!(state(&ledger), expected, "after a crash in flight");
                        synced = state(&ledger);
                        continue;
                    }
                    Outcome::CrashAfterSending => {
                        let expected = state(&ledger);
                        drop(store);
                        let reopened = open_with_report(directory.path());
                        store = reopened.0;
                        ledger = reopened.1;
                        let wanted = InDoubt {
                            fingerprint: placed.fingerprint,
                            sent_to: Some(sent_to),
                        };
                        prop_assert_eq!(&reopened.2.in_doubt_placements, &vec![wanted]);
                        prop_assert_eq!(state(&ledger), expected, "pending across the crash");
                        // Read back: the cluster holds it under its key.
                        ledger.stored(
                            DocumentKey::new("news", &key.to_string()),
                            placed.fingerprint,
                        );
                    }
                }
            }
            Operation::Delete { key } => ledger.deleted(DocumentKey::new("news", &key.to_string())),
            Operation::Expire { step } => {
                now += step;
                while ledger.expire(now, 3).1 {}
            }
            Operation::Snapshot => {
                let seq = store.append(ledger.take_journal());
                store.sync(seq).expect("sync");
                store.snapshot(&ledger, now).expect("snapshot");
            }
            Operation::Crash { torn_bytes } => {
                // Whatever was journaled but not synced is lost with the process.
                drop(store);
                if *torn_bytes > 0 {
                    tear_last_segment(directory.path(), *torn_bytes);
                }
                let reopened = open_with_report(directory.path());
                store = reopened.0;
                ledger = reopened.1;
                // A torn frame is found, reported and cut, never replayed.
                prop_assert_eq!(
                    reopened.2.cut.is_some(),
                    *torn_bytes > 0,
                    "{:?}",
                    reopened.2
                );
                prop_assert_eq!(state(&ledger), synced.clone(), "after a crash");
                continue;
            }
        }
        // The sidecar syncs before it answers: this is the acknowledged state.
        let seq = store.append(ledger.take_journal());
        store.sync(seq).expect("sync");
        synced = state(&ledger);
    }
    drop(store);
    let (_, recovered) = open(directory.path());
    prop_assert_eq!(state(&recovered), synced);
    Ok(())
}

/// The files of the state directory `dir` whose names start with
/// `prefix`, oldest first (names sort by sequence).
fn state_files(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(prefix))
        })
        .collect();
    files.sort();
    files
}

/// Appends the first `bytes` bytes of a frame that never finished.
fn tear_last_segment(dir: &Path, bytes: usize) {
    use std::io::Write;
    let segments = state_files(dir, "log-");
    let last = segments.last().expect("a segment");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(last)
        .expect("open");
    let torn: Vec<u8> = [200u8, 0, 0, 0, 1, 2, 3, 4]
        .iter()
        .copied()
        .chain(std::iter::repeat(7))
        .take(bytes)
        .collect();
    file.write_all(&torn).expect("tear");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn recovery_restores_the_last_synced_state(operations in vec(operation(), 1..60)) {
        run(&operations)?;
    }
}

#[test]
fn a_second_process_cannot_open_a_locked_state_directory() {
    let directory = TempDir::new("persist");
    let (_store, _ledger) = open(directory.path());
    let settings = settings();
    let parts = settings.parts().expect("settings");
    let options = StoreOptions {
        dir: directory.path().to_path_buf(),
        fsync: FsyncPolicy::EveryRequest,
        snapshot_after_log_bytes: u64::MAX,
        settings_digest: settings.fingerprint_digest(),
    };
    let error = Store::open(options, |snapshot| {
        neardup::persist::ledger_from_snapshot(parts.clone(), snapshot)
    })
    .expect_err("locked");
    assert!(
        error.to_string().contains("in use by another neardup"),
        "{error}"
    );
}

#[test]
fn a_snapshot_keeps_where_pending_placements_were_sent() {
    let directory = TempDir::new("persist-sent");
    let (store, mut ledger) = open(directory.path());
    let analyzer = ledger.engine().analyzer().clone();
    let prepared = analyzer.fingerprinter().prepare(SENTENCES[0]);
    let placed = ledger.place(analyzer.analyze(&prepared), 1_700_000_000_000);
    let sent_to = SentTo {
        index: "news-alias".into(),
        id: None,
    };
    ledger.sending(placed.fingerprint, sent_to.clone());
    let seq = store.append(ledger.take_journal());
    store.sync(seq).expect("sync");
    store
        .snapshot(&ledger, 1_700_000_000_001)
        .expect("snapshot");
    let snapshot = std::fs::read_dir(directory.path())
        .expect("dir")
        .flatten()
        .find(|entry| entry.file_name().to_string_lossy().starts_with("snapshot-"))
        .expect("a snapshot");
    let version = std::fs::read(snapshot.path()).expect("read")[16..20].to_vec();
    // Targets came with version 4; every snapshot is now written as
    // version 5 (compact side records), which holds them too.
    assert_eq!(
        version,
        neardup::persist::SNAPSHOT_FORMAT_VERSION.to_le_bytes(),
        "a snapshot with targets is of the current version"
    );
    drop(store);
    let (_, recovered, report) = open_with_report(directory.path());
    assert_eq!(report.snapshot_seq, Some(seq));
    assert_eq!(
        report.in_doubt_placements,
        vec![InDoubt {
            fingerprint: placed.fingerprint,
            sent_to: Some(sent_to.clone()),
        }]
    );
    assert_eq!(
        recovered.sent_records(),
        vec![(placed.fingerprint, sent_to)]
    );
    assert_eq!(recovered.pending_records(), vec![(placed.fingerprint, 1)]);
}

/// A snapshot whose side records fail their checksum recovers (since
/// version 10 recovery adopts them unread, through their index), and the
/// check that follows recovery finds the damage: snapshots are refused
/// until it is set aside, and the start after that recovers from the
/// snapshot before and the log, the same state.
#[test]
fn damaged_side_records_are_found_after_recovery_and_set_aside() {
    let directory = TempDir::new("persist-damaged-records");
    let (expected, first_snapshot, newest) = two_snapshots_the_newest_damaged_in(&directory, b'S');
    let (store, recovered, report) = open_with_report(directory.path());
    assert_eq!(report.snapshot_seq, state_seq(&newest));
    assert!(report.unreadable_snapshots.is_empty(), "{report:?}");
    let found = recovered.engine().side_records_check().wait();
    let reason = found.expect_err("the check finds the damage");
    assert!(reason.contains("checksum"), "{reason}");
    // No snapshot copies the damage: the snapshot is set aside instead.
    let refused = store
        .snapshot(&recovered, 1_800_000_000_000)
        .expect_err("no snapshot of damaged records")
        .to_string();
    assert!(refused.contains("set aside"), "{refused}");
    let aside = std::path::PathBuf::from(format!("{}.damaged", newest.display()));
    assert!(aside.exists() && !newest.exists(), "{refused}");
    assert_eq!(support::state::snapshot_files(directory.path()).len(), 1);
    drop(store);
    drop(recovered);
    let (_store, recovered, report) = open_with_report(directory.path());
    assert_eq!(report.snapshot_seq, Some(first_snapshot));
    assert_eq!(state(&recovered), expected);
    assert!(aside.exists(), "kept for whoever looks into it");
}

/// A snapshot whose side records' index fails its checksum is found
/// damaged while the state is built (the index is read then): the store
/// recovers from the snapshot before it.
#[test]
fn a_damaged_index_of_side_records_sends_recovery_to_the_snapshot_before() {
    recovery_passes_over_a_snapshot_damaged_in(b'X');
}

/// Frames of nodes and of keys are checked on the two threads that decode
/// them once the snapshot's end is found: damage there too sends recovery
/// to the snapshot before.
#[test]
fn damaged_nodes_or_keys_send_recovery_to_the_snapshot_before() {
    recovery_passes_over_a_snapshot_damaged_in(b'M');
    recovery_passes_over_a_snapshot_damaged_in(b'J');
}

/// So do damaged candidate pairs (decoded with the nodes and keys).
#[test]
fn damaged_candidate_pairs_send_recovery_to_the_snapshot_before() {
    recovery_passes_over_a_snapshot_damaged_in(b'C');
}

/// Two snapshots, a byte flipped in the newest's first frame of `kind`:
/// the store recovers the same state from the older one and the log.
fn recovery_passes_over_a_snapshot_damaged_in(kind: u8) {
    let directory = TempDir::new("persist-damaged-frame");
    let (expected, first_snapshot, newest) = two_snapshots_the_newest_damaged_in(&directory, kind);
    let settings = settings();
    let parts = settings.parts().expect("settings");
    let options = StoreOptions {
        dir: directory.path().to_path_buf(),
        fsync: FsyncPolicy::Never,
        snapshot_after_log_bytes: u64::MAX,
        settings_digest: settings.fingerprint_digest(),
    };
    let (_store, recovered, report) = Store::open(options, |snapshot| {
        neardup::persist::ledger_from_snapshot(parts.clone(), snapshot)
    })
    .expect("recovered from the snapshot before");
    assert_eq!(report.snapshot_seq, Some(first_snapshot));
    assert_eq!(report.unreadable_snapshots.len(), 1, "{report:?}");
    let named = &report.unreadable_snapshots[0];
    assert!(
        named.contains(&newest.display().to_string()) && named.contains("checksum"),
        "{named}"
    );
    assert_eq!(state(&recovered), expected);
}

/// The sequence number in a snapshot's name.
fn state_seq(path: &std::path::Path) -> Option<u64> {
    path.file_name()?
        .to_str()?
        .strip_prefix("snapshot-")?
        .parse()
        .ok()
}

/// Places the test sentences in a store at `directory`, with a snapshot
/// after the fourth and one after the last, then flips a byte in the
/// newest's first frame of `kind`: the state as placed, the first
/// snapshot's sequence number and the newest's path.
fn two_snapshots_the_newest_damaged_in(
    directory: &TempDir,
    kind: u8,
) -> (State, u64, std::path::PathBuf) {
    let (store, mut ledger) = open(directory.path());
    let analyzer = ledger.engine().analyzer().clone();
    let mut first_snapshot = 0;
    for (position, sentence) in SENTENCES.iter().enumerate() {
        let prepared = analyzer.fingerprinter().prepare(sentence);
        let now = 1_700_000_000_000 + position as i64;
        let placed = ledger.place(analyzer.analyze(&prepared), now);
        ledger.stored(
            DocumentKey::new("news", &position.to_string()),
            placed.fingerprint,
        );
        let seq = store.append(ledger.take_journal());
        store.sync(seq).expect("sync");
        if position == 3 || position == SENTENCES.len() - 1 {
            store.snapshot(&ledger, now).expect("snapshot");
            if position == 3 {
                first_snapshot = seq;
            }
        }
    }
    let expected = state(&ledger);
    drop(store);
    drop(ledger);
    let snapshots = state_files(directory.path(), "snapshot-");
    let newest = snapshots.last().expect("two snapshots").clone();
    assert_eq!(snapshots.len(), 2);
    support::state::flip_a_byte_in_frame(&newest, kind);
    (expected, first_snapshot, newest)
}
