//! The leader's group commit: the effects queued since the last record go
//! out as the next record, created with `_create` under the next number.
//!
//! Motivation: an acknowledged write must be in the cluster's replicated
//! log before the sidecar forwards it and before it answers; and a leader
//! that lost its lease must find out at its next record at the latest,
//! whatever its clock says.
//!
//! Design: one task owns the record numbering. It waits for queued
//! effects, takes all of them (one record for the writes of every request
//! that waited meanwhile), and creates record *n* through the log alias:
//!
//! - 201: confirmed; waiters up to its last sequence number go on;
//! - 409: record *n* exists. Read back: if it is this member's own (same
//!   writer and digest: an earlier attempt landed), confirmed; if another
//!   member wrote it, a newer leader's chain has moved on: **step down**
//!   (the fence); if it is not found yet, a create still in flight at the
//!   primary: wait and retry;
//! - 404: the log's alias is gone: step down (nothing is re-created);
//! - no answer, 429, 5xx: retry with backoff, the same record;
//! - anything else: step down.
//!
//! Before each attempt the lease must still allow acting
//! ([`Replica::may_act`]); when it does not, the appender waits for a
//! renewal (or the step-down).
//!
//! Consequences: the chain and the leader's memory never part: a record is
//! retried until it lands or the member steps down, and a deposed member
//! acknowledges nothing more.

use std::sync::Arc;
use std::time::Duration;

use super::cluster::{GroupCluster, Write};
use super::record::{Kind, Record};
use super::state::{Head, Replica, Role};
use crate::units::now_millis;

/// Frames per record, at most (a larger group commit is split at a frame
/// boundary into consecutive records).
pub const MAX_RECORD_BYTES: usize = 8 << 20;

/// Where the appender starts: the record after the epoch record.
#[derive(Debug, Clone)]
pub struct ChainHead {
    pub group_uuid: String,
    pub epoch: u64,
    pub next: u64,
    pub prev_digest: String,
}

/// Runs until the member steps down; the reason.
pub async fn run(replica: Arc<Replica>, cluster: GroupCluster, mut head: ChainHead) -> String {
    loop {
        let (first_seq, last_seq, frames) = loop {
            if replica.role() == Role::Deposed {
                return "stepped down".to_string();
            }
            let notified = replica.queued.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(pending) = replica.take_pending(MAX_RECORD_BYTES) {
                break pending;
            }
            let _ = tokio::time::timeout(Duration::from_millis(200), notified).await;
        };
        let record = Record::new(
            cluster.key(),
            head.next,
            head.epoch,
            &replica.node,
            Kind::Effects,
            first_seq,
            last_seq,
            &head.prev_digest,
            frames,
        );
        let document = record.to_document(&head.group_uuid, now_millis());
        if let Err(reason) = create(&replica, &cluster, &record, &document).await {
            replica.step_down(&reason);
            return reason;
        }
        replica.confirm(
            last_seq,
            Head {
                group_uuid: head.group_uuid.clone(),
                record: record.number,
                digest: record.digest.clone(),
                last_seq,
            },
        );
        head.prev_digest = record.digest;
        head.next += 1;
    }
}

/// Creates `record` until it is in the chain; `Err` with the reason to
/// step down.
pub async fn create(
    replica: &Replica,
    cluster: &GroupCluster,
    record: &Record,
    document: &serde_json::Value,
) -> Result<(), String> {
    let mut backoff = Duration::from_millis(50);
    loop {
        if replica.role() == Role::Deposed {
            return Err("stepped down".to_string());
        }
        if !replica.may_act() {
            // The lease lapsed without a renewal: wait for one.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        match cluster.create_record(record.number, document).await {
            Ok(Write::Done(_)) => return Ok(()),
            Ok(Write::Conflict) => match cluster.record(record.number).await {
                Ok(Some(found))
                    if found["writer"] == replica.node.as_str()
                        && found["digest"] == record.digest.as_str() =>
                {
                    return Ok(());
                }
                Ok(Some(found)) => {
                    return Err(format!(
                        "record {} was created by {} (epoch {}): a newer leader's chain moved on",
                        record.number, found["writer"], found["epoch"]
                    ));
                }
                Ok(None) => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(error) => {
                    tracing::warn!(%error, "reading back a record that collided");
                    tokio::time::sleep(backoff).await;
                }
            },
            Ok(Write::Gone) => {
                return Err("the group's log index (or its alias) is gone".to_string());
            }
            Err(super::cluster::GroupError::Transient(error)) => {
                tracing::warn!(%error, record = record.number, "record not written yet: retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            Err(super::cluster::GroupError::Refused(error)) => {
                return Err(format!(
                    "the cluster refused record {}: {error}",
                    record.number
                ));
            }
        }
    }
}
