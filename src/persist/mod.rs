//! Durable state: an append-only log of effects plus periodic snapshots.
//!
//! Motivation: the forest is the product's memory. Lost, every reprint
//! indexed after a restart starts a new class and the "N similar" counts
//! break silently. It must survive `kill -9`, deploys and machine changes.
//!
//! Design:
//!
//! - Every change of the [`Ledger`] is journaled as an [`Effect`]: what
//!   happened (a node placed under a given root, a document taken back,
//!   these nodes expired, this key now holds that fingerprint), never a
//!   decision to take again, so a replay rebuilds the same forest even if
//!   the rules or settings changed in between.
//! - Effects are appended to the current log segment (`log-<first seq>`)
//!   in checksummed frames ([`codec`]), each with its sequence number. The
//!   sidecar writes them before the documents are forwarded (write-ahead:
//!   a stamp in the index always names a class the state knows) and again
//!   after the cluster answered, before the client gets its answer. Writes
//!   of concurrent requests are grouped (group commit).
//! - The fsync policy decides when written frames reach the disk:
//!   `request` (default: at each of those two points), an interval, or
//!   `never` (the OS decides). Frames are written to the file at those
//!   points under every policy, so a killed process loses nothing the
//!   client was told; only a machine crash can lose the last interval.
//! - A snapshot (`snapshot-<last seq>`) holds the whole state: nodes, side
//!   data, keys, as of its log position. A new log segment starts after
//!   what was logged by then (it may start later than the snapshot's
//!   position: recovery skips what the snapshot holds). The file is written
//!   to a temporary file, fsynced, renamed and the directory fsynced. The previous snapshot
//!   and the segments after it are kept as a fallback; older ones are
//!   deleted, so disk use stays bounded by about two snapshots plus the log
//!   since the previous one, and shrinks as expiry removes nodes.
//! - Recovery: the newest readable snapshot (mapped: its side records
//!   become read-only segments of the side file where they are, since
//!   snapshot format 2), then every logged effect after it, in sequence. A frame cut short or failing its checksum ends the log:
//!   it is reported, the file is cut there, and nothing after it is replayed
//!   (a later segment after a damaged one would leave a gap).
//! - The state directory is locked (an OS file lock), so two sidecars never
//!   share one.
//! - Every command opens its state the same way ([`open_state`]): in memory
//!   or from a directory, recovered or given by a rebuild.
//!
//! Consequences: writes pause only an instant for a snapshot (its capture
//! starts, [`crate::ledger::capture`]) and then one slice of its copy at a
//! time, not for the whole copy nor while it is written (measured in
//! `benches/persist.rs` and `benches/capacity.rs`). A document
//! forwarded just before a crash whose answer never came back is in doubt:
//! recovery takes its count back but keeps its node, so its stamp still
//! names a known class if it did reach the index, and the client's retry
//! counts once.

pub mod codec;
mod frame_table;
mod fsync;
mod open;
pub mod snapshot;
pub mod store;

pub use open::{
    OpenedState, StateOrigin, holds_state, ledger_from_snapshot, open_state, remove_state,
};

pub use store::{
    FORMAT_VERSION, FsyncPolicy, RecoveryReport, SNAPSHOT_FORMAT_VERSION, SnapshotState, Store,
    StoreHealth, StoreOptions, is_out_of_space,
};
