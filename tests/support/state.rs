//! A state directory opened as the property tests need it: no fsync, no
//! snapshot by size, every snapshot readable.

use std::path::Path;

use neardup::config::EngineSettings;
use neardup::ledger::Ledger;
use neardup::persist::{FsyncPolicy, RecoveryReport, Store, StoreOptions};

/// Opens (or creates) the state in `dir` for an engine of `settings`.
/// `resolve_in_doubt` as [`Store::open_with`]: false keeps unanswered
/// placements pending (a replica member's way).
pub fn open_state(
    dir: &Path,
    settings: &EngineSettings,
    resolve_in_doubt: bool,
) -> (Store, Ledger, RecoveryReport) {
    let parts = settings.parts().expect("settings");
    let options = StoreOptions {
        dir: dir.to_path_buf(),
        fsync: FsyncPolicy::Never,
        snapshot_after_log_bytes: u64::MAX,
        settings_digest: settings.fingerprint_digest(),
    };
    let (store, ledger, report) = Store::open_with(
        options,
        |snapshot| neardup::persist::ledger_from_snapshot(parts.clone(), snapshot),
        resolve_in_doubt,
    )
    .expect("open");
    assert!(report.unreadable_snapshots.is_empty(), "{report:?}");
    (store, ledger, report)
}

/// The engine of the state property tests: a minute's retention, so that
/// random steps of time expire nodes.
pub fn minute_retention() -> EngineSettings {
    EngineSettings {
        retention: Some("60s".to_string()),
        ..EngineSettings::default()
    }
}

/// A document's text made of `pool`'s sentences at `sentences`; cut to 30
/// letters when `short`.
pub fn text_of(pool: &[&str], sentences: &[usize], short: bool) -> String {
    let joined: String = sentences.iter().map(|&index| pool[index]).collect();
    if short {
        joined.chars().take(30).collect()
    } else {
        joined
    }
}

/// The snapshots in a state directory (named `snapshot-<seq>`), oldest
/// first.
pub fn snapshot_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("state dir")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str()?.strip_prefix("snapshot-"))
                .is_some_and(|seq| seq.parse::<u64>().is_ok())
        })
        .collect();
    files.sort();
    files
}

/// Flips a byte in the middle of the first frame of `kind` in the
/// snapshot at `path` (frames after its 20-byte start: length, checksum,
/// payload, which starts with its kind).
pub fn flip_a_byte_in_frame(path: &Path, kind: u8) {
    let mut bytes = std::fs::read(path).expect("read the snapshot");
    let mut offset = 20;
    while offset + 8 < bytes.len() {
        let length = u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4")) as usize;
        if bytes[offset + 8] == kind {
            bytes[offset + 8 + length / 2] ^= 0x40;
            std::fs::write(path, bytes).expect("write the snapshot");
            return;
        }
        offset += 8 + length;
    }
    panic!("the snapshot has no frame of kind {}", kind as char);
}
