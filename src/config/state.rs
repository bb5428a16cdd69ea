//! Where the durable state lives and how it is written: the `state_dir`,
//! `fsync` and `snapshot_after` settings validated into the store's options
//! (`persist::open_state` opens the state with them).

use std::path::PathBuf;

use super::defaults::{DEFAULT_SNAPSHOT_AFTER, DEFAULT_STATE_DIR, NO_STATE_DIR};
use crate::persist::{FsyncPolicy, StoreOptions};
use crate::units::parse_size;

/// The directory a `state_dir` setting names: unset is the default; `none`
/// (or empty) is `None`, the state kept in memory only.
pub fn state_directory(setting: Option<&str>) -> Option<PathBuf> {
    let text = setting.unwrap_or(DEFAULT_STATE_DIR);
    (!(text.is_empty() || text == NO_STATE_DIR)).then(|| PathBuf::from(text))
}

/// The sidecar's store in `dir` (`None`: no store, the state in memory).
///
/// # Errors
///
/// A `snapshot_after` that is not a size (read only when there is a
/// directory to snapshot into).
pub fn sidecar_store(
    dir: Option<PathBuf>,
    fsync: FsyncPolicy,
    snapshot_after: Option<&str>,
    settings_digest: String,
) -> anyhow::Result<Option<StoreOptions>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let snapshot_after = parse_size(snapshot_after.unwrap_or(DEFAULT_SNAPSHOT_AFTER))?;
    Ok(Some(StoreOptions {
        dir,
        fsync,
        snapshot_after_log_bytes: snapshot_after as u64,
        settings_digest,
    }))
}

/// The store of a whole-index job (`rebuild`, the offline `backfill`) in
/// `dir`: every append synced before the job goes on (a checkpoint never
/// runs ahead of the state), and no snapshot on the way; the job writes
/// one at its end.
pub fn job_store(dir: PathBuf, settings_digest: String) -> StoreOptions {
    StoreOptions {
        dir,
        fsync: FsyncPolicy::EveryRequest,
        snapshot_after_log_bytes: u64::MAX,
        settings_digest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_or_empty_keeps_the_state_in_memory_and_unset_is_the_default() {
        assert_eq!(state_directory(Some("none")), None);
        assert_eq!(state_directory(Some("")), None);
        assert_eq!(
            state_directory(None),
            Some(PathBuf::from(DEFAULT_STATE_DIR))
        );
        assert_eq!(
            state_directory(Some("/var/lib/neardup")),
            Some(PathBuf::from("/var/lib/neardup"))
        );
    }

    #[test]
    fn snapshot_after_is_read_only_with_a_directory() {
        let none = sidecar_store(None, FsyncPolicy::Never, Some("x"), String::new());
        assert!(matches!(none, Ok(None)));
        let store = sidecar_store(
            Some(PathBuf::from("d")),
            FsyncPolicy::Never,
            None,
            "digest".into(),
        )
        .expect("valid")
        .expect("a store");
        assert_eq!(store.snapshot_after_log_bytes, 256 << 20);
        assert!(
            sidecar_store(
                Some(PathBuf::from("d")),
                FsyncPolicy::Never,
                Some("x"),
                String::new()
            )
            .is_err()
        );
    }
}
