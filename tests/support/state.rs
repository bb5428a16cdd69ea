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
