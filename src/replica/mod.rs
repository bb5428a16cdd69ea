//! Warm standbys: a replica group of sidecars kept and fenced through the
//! cluster itself (issue 30; the design is docs/standby.md).
//!
//! Motivation: one process owns the forest; when it dies, ingest waits for
//! a restart or goes on unstamped. Teams put two of everything in the write
//! path, and they already run a replicated, consistent store: the cluster.
//! So the group uses it, and nothing else: no ZooKeeper, no Raft of our own.
//!
//! Design: members started with one `--replica-group` elect a leader
//! through a lease in a control document, renewed and taken over by
//! compare-and-set (`if_seq_no`/`if_primary_term`) on a boot-time clock
//! ([`clock`], [`member`]). The leader appends what its local log holds —
//! every effect of the ledger — to the group's log index as records
//! created with `op_type=create` under sequential ids, one per group
//! commit, before it forwards a write and before it answers
//! ([`state::Replica::confirmed`], [`appender`], [`record`]); a 409 on
//! that create means a newer leader's chain moved on: the old leader steps
//! down (the fence). Standbys read the chain by realtime `_mget` and apply
//! it with the recovery code ([`follower`]); on takeover a standby reads
//! the chain to its end, writes an epoch record and resolves the old
//! leader's writes in doubt as after a crash. The requests are in
//! [`cluster`]; what the tasks need of the sidecar is [`host`]. The
//! leader publishes its snapshots to the cluster and truncates the log
//! behind them ([`publish`], [`snapshots`]); a starting member resumes
//! from its own state when the chain holds it, else sets it aside and
//! joins from the published snapshot ([`join`]).
//!
//! Consequences: the sidecar's write path waits for one cluster write per
//! group commit (two per request: placements before forwarding, outcomes
//! before answering). A standby answers writes 503 naming the leader
//! (forwarding is not built). A deposed member rejoins when restarted, not
//! in-process. Not built either: graceful release of the lease, segments;
//! docs/standby.md says what each would be.

pub mod appender;
pub mod auth;
pub mod clock;
pub mod cluster;
pub mod follower;
pub mod host;
pub mod join;
pub mod member;
pub mod publish;
pub mod record;
pub mod snapshots;
pub mod state;

/// Test-only: a pause the tests ask for through the environment variable
/// `variable` (milliseconds), to hold a member inside a window that is
/// otherwise too short to act in (taking over, downloading a snapshot).
pub(crate) fn test_pause(variable: &str) -> Option<std::time::Duration> {
    let millis: u64 = std::env::var(variable).ok()?.parse().ok()?;
    Some(std::time::Duration::from_millis(millis))
}
