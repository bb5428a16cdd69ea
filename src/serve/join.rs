//! The sidecar's state opened at start and its recovery logged; a member's
//! kept, or set aside for the group's published snapshot.
//!
//! Motivation: `crate::replica::join` decides from the opened state, the
//! member's mark and the group's indices whether the state can be kept;
//! acting on the decision means closing the store, moving files and
//! opening it again, which is the sidecar's business, done before it
//! serves.
//!
//! Design: the state is opened as a member's (placements in doubt kept
//! pending). When the plan keeps it, the member's chain position starts
//! after its mark, skipping what its log holds. Otherwise the store is
//! closed, its files are moved into `set-aside-<ms>/` (kept, logged), the
//! newest published snapshot is downloaded into the directory as the
//! store's own snapshot file (a chunk gone: the manifest is read again, a
//! few times) and the directory is opened again: recovery reads it as any
//! snapshot. Without a state directory the snapshot goes through a
//! temporary file into memory.
//!
//! Every sidecar's state is opened here ([`open_state_logged`]), a
//! member's or not, and what recovery did is logged.
//!
//! Consequences: a member starts serving only once it holds a state the
//! chain continues; the time it took is logged (`joined from the
//! published snapshot`, `join_ms`).

use std::path::Path;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use crate::config::ServeOptions;
use crate::ledger::{EngineParts, Ledger};
use crate::persist::{OpenedState, RecoveryReport, StateOrigin, Store, holds_state, open_state};
use crate::replica::cluster::GroupCluster;
use crate::replica::follower::Follower;
use crate::replica::join::{Plan, prepare, set_aside};
use crate::replica::snapshots::{Manifest, download, latest};
use crate::replica::state::{Head, Replica};

/// Attempts at downloading the newest published snapshot.
const DOWNLOAD_ATTEMPTS: usize = 5;

/// Opens the state of a member of `cluster`'s group; where it follows on
/// from (`None`: the chain's start).
///
/// # Errors
///
/// The state directory unusable, the cluster unreachable for
/// `replica::join::PREPARE_TIMEOUT`, or no published snapshot read whole.
pub fn open_member_state(
    runtime: &Runtime,
    options: &ServeOptions,
    parts: EngineParts,
    replica: &Replica,
    cluster: &GroupCluster,
) -> anyhow::Result<(OpenedState, Option<Follower>)> {
    let started = Instant::now();
    let state = open_state_logged(options, parts.clone(), StateOrigin::Member)?;
    let local_last = state.store.as_ref().map_or(0, Store::last_seq);
    let (reason, snapshot) = match runtime.block_on(prepare(replica, cluster, local_last))? {
        Plan::Follow(start) => {
            if let Some(follower) = &start {
                replica.start_from(Head {
                    group_uuid: follower.group_uuid.clone(),
                    record: follower.next - 1,
                    digest: follower.prev_digest.clone(),
                    last_seq: local_last,
                });
                tracing::info!(
                    record = follower.next - 1,
                    last_seq = local_last,
                    "member resumes from its own state: the chain holds it"
                );
            }
            return Ok((state, start));
        }
        Plan::Rejoin { reason, snapshot } => (reason, snapshot),
    };
    drop(state);
    if let Some(store) = &options.state
        && holds_state(&store.dir)
    {
        let aside = set_aside(&store.dir)?;
        tracing::warn!(
            %reason,
            set_aside = %aside.display(),
            "this member's state cannot be followed on from: set aside (kept), joining the group afresh"
        );
    } else {
        tracing::info!(%reason, "joining the replica group");
    }
    let Some(manifest) = snapshot else {
        let state = open_state_logged(options, parts, StateOrigin::Member)?;
        return Ok((state, None));
    };
    let dir = match &options.state {
        Some(store) => store.dir.clone(),
        None => std::env::temp_dir(),
    };
    let manifest = runtime.block_on(fetch(cluster, manifest, &dir))?;
    let path = Store::snapshot_path(&dir, manifest.head.last_seq);
    let state = if options.state.is_some() {
        open_state_logged(options, parts, StateOrigin::Member)?
    } else {
        let snapshot = crate::persist::store::read_snapshot(&path);
        let _ = std::fs::remove_file(&path);
        let snapshot = snapshot.map_err(|reason| anyhow::anyhow!("{reason}"))?;
        open_state(None, parts, StateOrigin::Given(Box::new(snapshot)))?
    };
    replica.start_from(manifest.head.clone());
    tracing::info!(
        record = manifest.head.record,
        last_seq = manifest.head.last_seq,
        bytes = manifest.bytes,
        join_ms = started.elapsed().as_millis() as u64,
        "joined from the group's published snapshot; following the chain after it"
    );
    Ok((state, Some(Follower::after(&manifest.head))))
}

/// Downloads the newest published snapshot into `dir` as the store's
/// snapshot file; the manifest of the one downloaded.
async fn fetch(
    cluster: &GroupCluster,
    mut manifest: Manifest,
    dir: &Path,
) -> anyhow::Result<Manifest> {
    let mut attempts = 0;
    loop {
        let path = Store::snapshot_path(dir, manifest.head.last_seq);
        match download(cluster, &manifest, &path).await {
            Ok(()) => return Ok(manifest),
            Err(error) if attempts + 1 < DOWNLOAD_ATTEMPTS => {
                tracing::warn!(%error, "published snapshot not read whole; reading the manifest again");
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(500)).await;
                if let Ok(Some((newer, _))) = latest(cluster).await {
                    manifest = newer;
                }
            }
            Err(error) => anyhow::bail!("cannot read the group's published snapshot: {error}"),
        }
    }
}

/// Opens the sidecar's state and logs what recovery did (or that there is
/// no state directory).
pub(super) fn open_state_logged(
    options: &ServeOptions,
    parts: EngineParts,
    origin: StateOrigin,
) -> anyhow::Result<OpenedState> {
    if options.state.is_none() {
        tracing::warn!("no state directory: the forest lives in memory only");
    }
    let started = Instant::now();
    let state = open_state(options.state.clone(), parts, origin)?;
    if let (Some(store), Some(report)) = (&options.state, &state.recovery) {
        log_recovery(&store.dir, report, &state.ledger, started.elapsed());
    }
    Ok(state)
}

fn log_recovery(dir: &Path, report: &RecoveryReport, ledger: &Ledger, elapsed: Duration) {
    let state_dir: &str = &dir.to_string_lossy();
    let stats = ledger.engine().forest().stats();
    for unreadable in &report.unreadable_snapshots {
        tracing::error!(snapshot = %unreadable, "snapshot unreadable, an older state is used");
    }
    if let Some(cut) = &report.cut {
        tracing::error!(
            %cut,
            dropped_bytes = report.dropped_bytes,
            "state log damaged (a torn write?): cut there, nothing after it replayed"
        );
    }
    if report.settings_changed {
        tracing::warn!(
            "the state was written under other fingerprint settings: new documents will not match old stamps; consider `neardup rebuild`"
        );
    }
    tracing::info!(
        state_dir,
        snapshot_seq = report.snapshot_seq,
        replayed_effects = report.replayed_effects,
        nodes = stats.nodes,
        documents = stats.documents,
        elapsed_ms = elapsed.as_millis() as u64,
        snapshot_read_ms = report.snapshot_read.as_millis() as u64,
        state_build_ms = report.state_build.as_millis() as u64,
        log_replay_ms = report.log_replay.as_millis() as u64,
        "state recovered"
    );
}
