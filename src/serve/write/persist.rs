//! The write-ahead step: placements made durable before anything is
//! forwarded, and the later effects of a write (take-backs, settlements)
//! logged before the client is answered.
//!
//! Every stamp that reaches the cluster names a class the durable state
//! knows, so a `kill -9` between forwarding and answering loses no class a
//! stored document points to (`tests/integration/crash.rs`). The two kinds of failure
//! differ: before forwarding nothing has left, so the placements are taken
//! back and the write is refused (or passed unstamped, see
//! [`super::state_failure`]); after the cluster answered the documents are
//! stored whatever the sidecar's disk says, so a failure is logged and the
//! client still gets the cluster's answer.

use super::place::{self, Stamped};
use crate::replica::state::ReplicaError;
use crate::serve::errors::{SidecarError, StateError};
use crate::serve::off_runtime::off_the_runtime;
use crate::serve::sidecar::Sidecar;

/// Makes the placements up to `seq` durable; when the state cannot be
/// written, takes them back and says why.
pub(super) async fn before_forwarding(
    sidecar: &Sidecar,
    stamped: Vec<Option<Stamped>>,
    seq: u64,
) -> Result<Vec<Option<Stamped>>, SidecarError> {
    if let Err(error) = sidecar.ledger.persist(seq).await {
        take_back(sidecar, &stamped).await;
        return Err(match error {
            // Not the leader any more (a replica group): the write goes to
            // the leader, not through the state-failure choice.
            StateError::Replica(
                error @ (ReplicaError::NotLeader { .. } | ReplicaError::NoLeader { .. }),
            ) => {
                tracing::warn!(%error, "lost the lease before forwarding: write refused");
                SidecarError::Replica(error)
            }
            error => {
                tracing::error!(%error, "state log not written: write refused");
                SidecarError::StateUnavailable(error)
            }
        });
    }
    Ok(stamped)
}

/// Takes back every stamped document (nothing reached the cluster), and
/// logs that.
pub(super) async fn take_back(sidecar: &Sidecar, stamped: &[Option<Stamped>]) {
    let ((), seq) = off_the_runtime(|| {
        sidecar
            .ledger
            .write(|ledger| place::take_back(ledger, stamped))
    });
    after_answer(sidecar, seq).await;
}

/// Persists the outcome of a write before the client is answered. The
/// documents are in the cluster (or were taken back) and their placement
/// is already durable, so a failure here is logged, not turned into an
/// error for the client.
pub(super) async fn after_answer(sidecar: &Sidecar, seq: u64) {
    if let Err(error) = sidecar.ledger.persist(seq).await {
        tracing::error!(%error, "state log not written after the cluster answered; counts may drift after a restart");
    }
}
