//! The state files of every snapshot format version, committed in
//! `tests/fixtures/state-v<N>/` (a snapshot and the log after it): later
//! versions must load them all. Version 1 stores side records bare,
//! version 2 each after its length (recovery maps them in place), version
//! 3 (log version 2) long texts with their identifying weight, version 5
//! (log version 3) side records in their compact layout (a short text's
//! shingles taken back from its letters), version 7 document keys by
//! their node's position among the snapshot's nodes, version 8 (log
//! version 4) side records with their letters coded, version 9 the
//! candidate indexes' pairs (recovery builds the indexes from them, not
//! from the side records). Write the
//! current version's only when it is new:
//! `cargo test --release --test integration state_format:: -- --ignored`.

use std::path::{Path, PathBuf};

use neardup::config::EngineSettings;
use neardup::ledger::{DocumentKey, Ledger};
use neardup::persist::{FsyncPolicy, Store, StoreOptions};
use neardup::units::format_fingerprint;

const TEXTS: [(&str, &str); 6] = [
    (
        "a1",
        "港口新航线周一开通，每周两班，连接本港与东南亚四个港口，首航装载集装箱八百余个。港务局表示，新航线将使运往东南亚的货物运输时间缩短两天。",
    ),
    (
        "a2",
        "（来源：晨报）港口新航线周一开通，每周两班，连接本港与东南亚四个港口，首航装载集装箱八百余个。港务局表示，新航线将使运往东南亚的货物运输时间缩短两天。",
    ),
    (
        "b1",
        "山区小学的新图书馆周末启用，藏书三千册，由校友捐建，每天放学后开放两小时，附近村民也可以借阅。校长说，下一步将开设周末阅读课。",
    ),
    (
        "b2",
        "山区小学的新图书馆周末启用，藏书三千册，由校友捐建，每天放学后开放两小时，附近村民也可以借阅。",
    ),
    ("c1", "城市马拉松周日开跑"),
    (
        "d1",
        "The council approved a new bike lane plan covering twelve streets downtown, with work to start in spring and finish before the autumn term.",
    ),
];

fn fixture_dir(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/state-v{version}"))
}

fn options(dir: &Path) -> StoreOptions {
    StoreOptions {
        dir: dir.to_path_buf(),
        fsync: FsyncPolicy::EveryRequest,
        snapshot_after_log_bytes: u64::MAX,
        settings_digest: "fixture".to_string(),
    }
}

fn open(dir: &Path) -> (Store, Ledger, neardup::persist::RecoveryReport) {
    let settings = EngineSettings {
        retention: Some("never".to_string()),
        ..EngineSettings::default()
    };
    let parts = settings.parts().expect("settings");
    Store::open(options(dir), |snapshot| {
        neardup::persist::ledger_from_snapshot(parts.clone(), snapshot)
    })
    .expect("open")
}

fn place(ledger: &mut Ledger, id: &str, text: &str, now: i64) -> u64 {
    let analyzer = ledger.engine().analyzer().clone();
    let prepared = analyzer.fingerprinter().prepare(text);
    let placed = ledger.place(analyzer.analyze(&prepared), now);
    ledger.stored(DocumentKey::new("news", id), placed.fingerprint);
    placed.root
}

#[test]
#[ignore = "writes the committed fixture"]
fn write_fixture() {
    let dir = fixture_dir(neardup::persist::SNAPSHOT_FORMAT_VERSION);
    let _ = std::fs::remove_dir_all(&dir);
    let (store, mut ledger, _) = open(&dir);
    // Four documents before the snapshot, two after it (in the log).
    for (position, (id, text)) in TEXTS.iter().take(4).enumerate() {
        place(&mut ledger, id, text, 1_700_000_000_000 + position as i64);
    }
    store.append(ledger.take_journal());
    store
        .snapshot(&ledger, 1_700_000_100_000)
        .expect("snapshot");
    for (position, (id, text)) in TEXTS.iter().enumerate().skip(4) {
        place(&mut ledger, id, text, 1_700_000_000_000 + position as i64);
    }
    ledger.deleted(DocumentKey::new("news", "b2"));
    let seq = store.append(ledger.take_journal());
    store.sync(seq).expect("sync");
    drop(store);
    let _ = std::fs::remove_file(dir.join("LOCK"));
    let forest = ledger.engine().forest();
    for (id, _) in TEXTS {
        let fingerprint = ledger.fingerprint_of(DocumentKey::new("news", id));
        println!(
            "{id}: {:?}",
            fingerprint.map(|fp| (
                format_fingerprint(fp),
                forest.root_of(fp).map(format_fingerprint)
            ))
        );
    }
    println!("{:?}", forest.stats());
}

#[test]
fn version_1_state_still_loads() {
    state_loads(1);
}

#[test]
fn version_2_state_loads() {
    state_loads(2);
}

#[test]
fn version_3_state_loads() {
    state_loads(3);
}

#[test]
fn version_5_state_loads() {
    state_loads(5);
}

#[test]
fn version_6_state_loads() {
    state_loads(6);
}

#[test]
fn version_7_state_loads() {
    state_loads(7);
    // Its keys name their nodes by position among the snapshot's nodes.
    let state = neardup::persist::store::read_snapshot(&snapshot_of(7)).expect("read");
    assert!(state.keys.is_empty());
    assert_eq!(state.numbered_keys.len(), 4);
}

#[test]
fn version_8_state_loads() {
    // Its side records keep their letters coded (tags 5 and 6); the
    // earlier fixtures hold tags 3 and 4, still read.
    state_loads(8);
}

#[test]
fn version_9_state_loads() {
    state_loads(9);
    // It holds the candidate indexes' pairs: each of its four texts (short
    // by its letters) under its 8 band keys, in two halves.
    let state = neardup::persist::store::read_snapshot(&snapshot_of(9)).expect("read");
    let pairs = state.candidates.expect("candidate pairs");
    assert!(pairs.texts.short_text_search);
    assert_eq!((pairs.texts.short, pairs.texts.long), (4, 0));
    let [low, high, long] = &pairs.tables;
    assert!(long.is_empty());
    assert_eq!(low.len() + high.len(), 8 * pairs.texts.short);
}

#[test]
fn version_10_state_loads() {
    state_loads(10);
    // Each frame of side records is followed by its index (frame `X`).
    let bytes = std::fs::read(snapshot_of(10)).expect("read");
    let (kinds, _) = frame_kinds(&bytes, bytes.len());
    let sides = kinds.iter().filter(|&&kind| kind == b'S').count();
    assert!(sides > 0);
    assert!(
        kinds
            .windows(2)
            .filter(|pair| pair[0] == b'S')
            .all(|pair| pair[1] == b'X'),
        "{kinds:?}"
    );
}

/// The kinds of a snapshot's frames from its start to `end` (or the
/// first frame that reaches past it), and the offset where the walk
/// stopped.
fn frame_kinds(bytes: &[u8], end: usize) -> (Vec<u8>, usize) {
    let mut kinds = Vec::new();
    let mut offset = 20;
    while offset + 8 < end {
        let length = u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4")) as usize;
        kinds.push(bytes[offset + 8]);
        offset += 8 + length;
    }
    (kinds, offset)
}

fn snapshot_of(version: u32) -> PathBuf {
    std::fs::read_dir(fixture_dir(version))
        .expect("fixture")
        .flatten()
        .find(|entry| entry.file_name().to_string_lossy().starts_with("snapshot-"))
        .expect("a snapshot")
        .path()
}

/// The fixture's snapshot of `version` with the last 4 bytes of its first
/// frame of `kind` set to 1 000 (the frame's checksum made to hold), read.
/// The fixture snapshot of `version` read with the payload of its first
/// frame of `kind` changed by `change` (its length and checksum made to
/// fit; a payload left empty drops the frame).
fn read_with_frame_changed(
    version: u32,
    kind: u8,
    change: impl FnOnce(&mut Vec<u8>),
) -> Result<neardup::persist::SnapshotState, String> {
    let mut bytes = std::fs::read(snapshot_of(version)).expect("read");
    // Frames after the 20-byte start: length, checksum, payload (its kind
    // first).
    let mut offset = 20;
    loop {
        let length = u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4")) as usize;
        let payload = offset + 8..offset + 8 + length;
        if bytes[payload.start] == kind {
            let mut changed = bytes[payload.clone()].to_vec();
            change(&mut changed);
            let mut frame = Vec::new();
            if !changed.is_empty() {
                let checksum = neardup::persist::codec::checksum(&changed);
                frame.extend_from_slice(&(changed.len() as u32).to_le_bytes());
                frame.extend_from_slice(&checksum.to_le_bytes());
                frame.extend_from_slice(&changed);
            }
            bytes.splice(offset..payload.end, frame);
            break;
        }
        offset = payload.end;
    }
    let dir = std::env::temp_dir().join(format!(
        "neardup-changed-{version}-{kind}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("snapshot");
    std::fs::write(&path, bytes).expect("write");
    let read = neardup::persist::store::read_snapshot(&path);
    let _ = std::fs::remove_dir_all(&dir);
    read
}

/// The last 4 bytes of a payload set to 1 000.
fn last_value_past_the_nodes(payload: &mut [u8]) {
    let end = payload.len();
    payload[end - 4..].copy_from_slice(&1_000u32.to_le_bytes());
}

/// A key that names a position past the snapshot's nodes (a frame whose
/// checksum holds) is damage, named: it would name whichever node takes
/// that number later. So is a candidate pair's (the last 4 bytes of a
/// pair frame are its last pair's position).
#[test]
fn a_key_or_a_candidate_pair_past_the_snapshots_nodes_is_refused() {
    assert_eq!(
        read_with_frame_changed(7, b'J', |payload| last_value_past_the_nodes(payload)).map(|_| ()),
        Err("a document key names no node".to_string())
    );
    assert_eq!(
        read_with_frame_changed(9, b'C', |payload| last_value_past_the_nodes(payload)).map(|_| ()),
        Err("a candidate pair names no node".to_string())
    );
}

/// The candidate frame's counts must be those of the pairs read (the
/// pairs are decoded on two threads after the whole file is walked, so
/// the check comes at the end), and a snapshot of version 9 without that
/// frame is refused, not read as one without candidate indexes.
#[test]
fn candidate_pairs_that_miss_their_count_or_their_frame_are_refused() {
    // The frame ends with the sketch index's count of pairs copied ahead
    // of the copier (a u64).
    let more_ahead = |payload: &mut Vec<u8>| {
        let end = payload.len();
        let count = u64::from_le_bytes(payload[end - 8..].try_into().expect("8"));
        payload[end - 8..].copy_from_slice(&(count + 1).to_le_bytes());
    };
    assert_eq!(
        read_with_frame_changed(9, b'I', more_ahead).map(|_| ()),
        Err("candidate pairs do not match their count".to_string())
    );
    assert_eq!(
        read_with_frame_changed(9, b'I', Vec::clear).map(|_| ()),
        Err("snapshot ends without its candidate pairs".to_string())
    );
    let read = read_with_frame_changed(9, b'I', |_| ()).expect("unchanged");
    let pairs = read.candidates.expect("pairs");
    // The fixture's four short texts hold pairs in both halves of the LSH.
    assert_eq!(pairs.texts.short, 4);
    assert!(
        pairs.tables[..2].iter().all(|table| table.len() == 16),
        "{pairs:?}"
    );
}

fn state_loads(version: u32) {
    let copy =
        std::env::temp_dir().join(format!("neardup-state-v{version}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).expect("copy dir");
    for entry in std::fs::read_dir(fixture_dir(version)).expect("fixture") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), copy.join(entry.file_name())).expect("copy");
    }
    let (_store, ledger, report) = open(&copy);
    assert!(report.snapshot_seq.is_some(), "{report:?}");
    assert!(report.replayed_effects > 0, "{report:?}");
    assert_eq!(report.cut, None);
    let stats = ledger.engine().forest().stats();
    // a1+a2 and b1+b2 are two classes, c1 and d1 one each; b2 was deleted.
    assert_eq!((stats.roots, stats.documents), (4, 5), "{stats:?}");
    let root = |id: &str| {
        let fingerprint = ledger
            .fingerprint_of(DocumentKey::new("news", id))
            .unwrap_or_else(|| panic!("{id} is tracked"));
        ledger.engine().forest().root_of(fingerprint)
    };
    // Fingerprints and roots as written by version 1 (unchanged since).
    assert_eq!(root("a1"), Some(0x691c_765d_3b5b_e42e));
    assert_eq!(root("a2"), Some(0x691c_765d_3b5b_e42e));
    assert_eq!(
        ledger.fingerprint_of(DocumentKey::new("news", "a2")),
        Some(0x611c_545d_335b_e02e)
    );
    assert_ne!(root("a1"), root("b1"));
    assert!(
        ledger
            .fingerprint_of(DocumentKey::new("news", "b2"))
            .is_none()
    );
    assert_eq!(ledger.engine().stats().side_data_nodes, stats.nodes);
    // From version 6 a snapshot says which nodes "within k" leaves out:
    // a short text alone (the Chinese posts), not a long one (d1).
    if version >= 6 {
        let index = ledger.engine().forest().index();
        let indexed = |id: &str| {
            let fingerprint = ledger.fingerprint_of(DocumentKey::new("news", id));
            index.contains(fingerprint.expect("tracked"))
        };
        for id in ["a1", "a2", "b1", "c1"] {
            assert!(!indexed(id), "{id}");
        }
        assert!(indexed("d1"));
    }
    // The records read back confirm reposts: a short text's shingles and
    // letters (a1), a long text's sketch and lead (d1).
    let (a1, d1) = (root("a1"), root("d1"));
    let mut ledger = ledger;
    let (_, short) = TEXTS[0];
    let short_repost = format!("{short}（完）");
    assert_eq!(
        Some(place(&mut ledger, "a3", &short_repost, 1_700_000_200_000)),
        a1
    );
    // Version 1 long texts lack their identifying weight, which decides
    // whether a lead that differs may join.
    if version > 1 {
        let (_, long) = TEXTS[5];
        let long_repost = format!("(City desk) {long} More on page 2.");
        assert_eq!(
            Some(place(&mut ledger, "d2", &long_repost, 1_700_000_200_001)),
            d1
        );
    }
    let _ = std::fs::remove_dir_all(&copy);
}

/// A snapshot ends, after its end record, with a table of its frames'
/// headers (so that recovery need not read them one by one from the
/// disk), then the table's offset and `NDFRAMES`. The state read with the
/// table is the state read without it.
#[test]
fn a_snapshot_ends_with_a_table_of_its_frames_that_changes_nothing_read() {
    let dir = std::env::temp_dir().join(format!("neardup-frame-table-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (store, mut ledger, _) = open(&dir);
    for (position, (id, text)) in TEXTS.iter().enumerate() {
        place(&mut ledger, id, text, 1_700_000_000_000 + position as i64);
    }
    store.append(ledger.take_journal());
    store
        .snapshot(&ledger, 1_700_000_100_000)
        .expect("snapshot");
    drop(store);
    let path = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .find(|entry| entry.file_name().to_string_lossy().starts_with("snapshot-"))
        .expect("a snapshot")
        .path();
    let bytes = std::fs::read(&path).expect("read");
    assert_eq!(&bytes[bytes.len() - 8..], b"NDFRAMES");
    let table_at = u64::from_le_bytes(
        bytes[bytes.len() - 16..bytes.len() - 8]
            .try_into()
            .expect("8"),
    ) as usize;
    // The table is the frame right after the end record.
    let (kinds, offset) = frame_kinds(&bytes, table_at);
    assert_eq!((offset, kinds.last()), (table_at, Some(&b'E')));
    assert_eq!(bytes[table_at + 8], b'F');

    let with_table = neardup::persist::store::read_snapshot(&path).expect("read");
    let without = dir.join("without-table");
    std::fs::write(&without, &bytes[..table_at]).expect("write");
    let without_table = neardup::persist::store::read_snapshot(&without).expect("read");
    assert_eq!(with_table, without_table);
    assert_eq!(
        with_table.nodes.len(),
        ledger.engine().forest().stats().nodes
    );
    let _ = std::fs::remove_dir_all(&dir);
}
