//! What the group's tasks need from the sidecar that runs them.
//!
//! Motivation: the replica tasks apply records to the ledger and, at a
//! takeover, settle the old leader's writes in doubt; both live in the
//! sidecar (`serve`), which sits above this module and may not be imported
//! from here.
//!
//! Design: one trait the sidecar implements; the tasks hold it as
//! `Arc<dyn ReplicaHost>`.
//!
//! Consequences: the replica module can be read and tested without the
//! server.

use crate::ledger::Effect;

/// The sidecar, as the group's tasks see it.
pub trait ReplicaHost: Send + Sync + 'static {
    /// Applies the effects `first_seq..=last_seq` of a record under the
    /// ledger's lock, as recovery replays its log, and appends them to the
    /// local log.
    ///
    /// # Errors
    ///
    /// The range does not follow what this member applied.
    fn apply(&self, first_seq: u64, last_seq: u64, effects: Vec<Effect>) -> Result<(), String>;

    /// This member took over: the placements of the old leader whose answer
    /// never came are resolved as after a crash (uncounted, nodes kept, the
    /// cluster asked for them).
    fn took_over(&self);

    /// Writes the local log up to its last effect (before the member's
    /// place in the chain is saved beside it).
    ///
    /// # Errors
    ///
    /// The log not written.
    fn sync_local(&self) -> Result<(), String>;
}
