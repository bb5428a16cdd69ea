//! The sidecar as a member of a replica group: writes only on the leader,
//! answers only within its lease, records applied on standbys.
//!
//! Motivation: the group's tasks (`crate::replica`) decide who leads; the
//! sidecar must act on it at three points: before taking a write at all,
//! before acknowledging one, and when a standby applies a record.
//!
//! Design: [`refuse_unless_leader`] answers a write sent to a member that
//! is not the leader with 503 naming the leader (`X-Neardup-Leader`),
//! before anything is read or placed. [`acknowledged`] is the fence before
//! answering: a 2xx answer goes out only while the lease still allows
//! acting (the write's effects were confirmed in the chain by
//! `DurableLedger::persist` before; a lapsed lease is waited for until a
//! renewal succeeds, which proves nobody took over); otherwise the answer becomes 503
//! `neardup_not_leader_exception` (the write reached the cluster; retrying
//! it is safe for documents with ids). A 2xx answer carries
//! `X-Neardup-Epoch` and `X-Neardup-Record` (the last record confirmed when
//! it was answered), which is what the fencing test checks. [`Host`]
//! implements `ReplicaHost` for the group's tasks.
//!
//! [`begin_release`] starts a leader's release of its lease at shutdown
//! (the member task finishes it, `crate::replica::member`).
//!
//! Consequences: writes reach this fence only on the leader
//! (`super::group_write` routes them); admin writes (backfill) on another
//! member are still answered 503 naming the leader.

use std::sync::Arc;

use axum::http::HeaderValue;
use axum::response::Response;

use super::errors::SidecarError;
use super::sidecar::Sidecar;
use crate::ledger::Effect;
use crate::replica::host::ReplicaHost;

/// Header of a 2xx write answer in a group: the leader's epoch.
pub const EPOCH_HEADER: &str = "x-neardup-epoch";
/// Header of a 2xx write answer in a group: the last record confirmed.
pub const RECORD_HEADER: &str = "x-neardup-record";

/// `Some(503)` when this sidecar is in a group and not its leader.
pub(super) fn refuse_unless_leader(sidecar: &Sidecar) -> Option<Response> {
    let replica = sidecar.replica.as_ref()?;
    let error = replica.gate().err()?;
    super::metrics::Metrics::add(&sidecar.metrics.rejected_requests, 1);
    Some(SidecarError::Replica(error).into_response())
}

/// Shutdown began: a backfill stops at its page, and a leader lets its
/// lease go once the writes it took are answered and recorded (new writes
/// are held and forwarded to the next leader).
pub(super) fn begin_release(sidecar: &Sidecar) {
    let Some(replica) = &sidecar.replica else {
        return;
    };
    if let Some(backfill) = sidecar.backfill.get() {
        backfill.cancel();
    }
    if replica.begin_release() {
        tracing::info!(
            node = replica.node,
            "releasing the group's lease: new writes are held for the next leader"
        );
    }
}

/// The fence before answering a write (see the module documentation); a
/// lease that lapsed while renewals were slow is waited for, up to a lease.
pub async fn acknowledged(sidecar: &Sidecar, mut response: Response) -> Response {
    let Some(replica) = &sidecar.replica else {
        return response;
    };
    if !response.status().is_success() {
        return response;
    }
    if replica.confirmed(0, replica.options.lease).await.is_err() {
        tracing::warn!(
            "a write answered by the cluster is not acknowledged: this member lost the lease"
        );
        return SidecarError::Replica(replica.lost_lease_error()).into_response();
    }
    let (epoch, record) = replica.epoch_and_record();
    let headers = response.headers_mut();
    headers.insert(EPOCH_HEADER, HeaderValue::from(epoch));
    headers.insert(RECORD_HEADER, HeaderValue::from(record));
    response
}

/// The sidecar as the group's tasks see it.
pub struct Host(pub Arc<Sidecar>);

impl ReplicaHost for Host {
    fn apply(&self, first_seq: u64, last_seq: u64, effects: Vec<Effect>) -> Result<(), String> {
        self.0.ledger.apply_replicated(first_seq, last_seq, effects)
    }

    fn took_over(&self) {
        let (in_doubt, _) = self.0.ledger.write(|ledger| ledger.resolve_in_doubt());
        if !in_doubt.is_empty() {
            tracing::info!(
                placements = in_doubt.len(),
                "writes of the old leader without an answer: uncounted, read back from the cluster"
            );
        }
        tokio::spawn(super::write::read_back_recovered(self.0.clone(), in_doubt));
    }

    fn sync_local(&self) -> Result<(), String> {
        self.0.ledger.flush().map_err(|error| error.to_string())
    }
}
