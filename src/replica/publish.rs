//! The leader publishes its snapshots and truncates the log behind them.
//!
//! Motivation: see `super::snapshots`; this is the task that decides when.
//!
//! Design: the store writes snapshots when its log has grown
//! (`--snapshot-after`), on every member; each one is announced to
//! [`Replica::snapshot_written`] with the chain's head taken under the
//! ledger's lock. This task takes the newest one when this member leads,
//! waits until the chain holds every effect the snapshot holds (the leader
//! logs locally before its record lands: a snapshot may be ahead of the
//! chain for a moment, and a deposed leader's forever), then publishes it
//! and truncates. A standby publishes nothing: its snapshots are a prefix
//! of the leader's.
//!
//! Consequences: the log holds about one snapshot interval of records plus
//! the margin; a leader that never snapshots (no state directory) never
//! truncates.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cluster::GroupCluster;
use super::snapshots::{publish, truncate};
use super::state::{Replica, Role};

/// Runs until the process ends.
pub async fn run(replica: Arc<Replica>, cluster: GroupCluster) {
    let mut written = replica.snapshots.subscribe();
    loop {
        if written.changed().await.is_err() {
            return;
        }
        let Some(snapshot) = written.borrow_and_update().clone() else {
            continue;
        };
        if replica.role() != Role::Leader {
            continue;
        }
        // Every effect of the snapshot in the chain, while still leading.
        let timeout = replica.options.lease.max(Duration::from_secs(5));
        if replica.confirmed(snapshot.last_seq, timeout).await.is_err() {
            tracing::warn!(
                last_seq = snapshot.last_seq,
                "snapshot not published: its effects are not all in the chain"
            );
            continue;
        }
        let mut head = snapshot.head.clone();
        head.last_seq = snapshot.last_seq;
        let started = Instant::now();
        match publish(&cluster, &snapshot.path, head.clone(), &replica.node).await {
            Ok(Some(previous)) => {
                let published_ms = started.elapsed().as_millis() as u64;
                match truncate(&cluster, previous.as_ref(), &head).await {
                    Ok(deleted) => tracing::info!(
                        last_seq = head.last_seq,
                        record = head.record,
                        published_ms,
                        records_deleted = deleted,
                        "snapshot published to the group; the log truncated behind it"
                    ),
                    Err(error) => {
                        tracing::warn!(%error, "snapshot published; the log not truncated");
                    }
                }
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "snapshot not published"),
        }
    }
}
