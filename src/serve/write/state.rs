//! The sidecar's durable ledger: the [`Ledger`] behind its one lock, and
//! the [`Store`] its effects are logged to.
//!
//! Motivation: two copies of a story arriving at the same moment must meet
//! in one class, and every stamp that leaves must name a class the sidecar
//! will still know after a `kill -9`. Both hold only if every change to the
//! forest and the counts goes through one door that orders it and logs it.
//!
//! Design: the ledger is behind a read-write lock: placement decisions are
//! taken under the shared lock, several at once ([`super::place`]), and
//! only applied under the exclusive one. [`DurableLedger::write`] runs a
//! change on the exclusively locked ledger and
//! appends its journal to the log before the lock is released, so the log
//! keeps the ledger's order and replays to the same state. It returns a log
//! position; [`DurableLedger::persist`] makes everything up to it durable
//! (per the fsync policy) on the blocking pool, outside the lock, so one
//! sync covers the writes of many concurrent requests. A failure is a
//! [`StateError`] that keeps the store's own error; the write path decides
//! what it means for the client ([`super::state_failure`]). A snapshot
//! locks writes out only for an instant to start capturing the state
//! ([`crate::ledger::capture`]), then copies it a slice per hold of the
//! shared lock (writes wait for one slice, readers not at all), and
//! writes it without any lock.
//!
//! In a replica group the same effects also go to the group's queue
//! ([`Replica::append`], under the same lock, so the chain keeps the
//! ledger's order too), and [`DurableLedger::persist`] waits, after the
//! local sync, until the chain holds them and the lease still allows
//! acting. A standby applies the chain's records with
//! [`DurableLedger::apply_replicated`]: replayed as recovery replays its
//! log, then appended to its own local log. Each snapshot written is
//! announced to the group with the chain's head taken under the lock (the
//! leader publishes it, `crate::replica::publish`).
//!
//! Consequences: without a state directory there is no store; positions
//! are 0 and persisting succeeds at once, so the write path needs no second
//! branch for that case (in a group, positions are the chain's).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use parking_lot::{RwLock, RwLockReadGuard};

use crate::engine::SideRecordsState;
use crate::ledger::Ledger;
use crate::persist::store::StoreError;
use crate::persist::store::snapshots::{CAPTURE_SLICE_BYTES, PendingSnapshot, SnapshotCapture};
use crate::persist::{Store, StoreHealth};
use crate::replica::state::{LocalSnapshot, Replica};
use crate::serve::errors::StateError;
use crate::units::now_millis;

/// How long a write waits for the record holding its effects at least
/// (the lease, when longer).
const REPLICA_APPEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The ledger, its lock and its log.
pub struct DurableLedger {
    ledger: RwLock<Ledger>,
    /// Durable state, unless running without a state directory.
    store: Option<Arc<Store>>,
    /// A snapshot is being written (a second one is skipped, not queued).
    snapshot_running: AtomicBool,
    /// The replica group's queue, when this sidecar is a member.
    replica: Option<Arc<Replica>>,
}

impl DurableLedger {
    pub fn new(mut ledger: Ledger, store: Option<Store>, replica: Option<Arc<Replica>>) -> Self {
        // Placements are decided under the shared lock and checked when
        // applied (see `super::place`).
        ledger.track_changes();
        if replica.is_some() {
            // The chain needs the effects even without a state directory.
            ledger.enable_journal();
        }
        DurableLedger {
            ledger: RwLock::new(ledger),
            store: store.map(Arc::new),
            snapshot_running: AtomicBool::new(false),
            replica,
        }
    }

    /// Logs the ledger's journal (locked by the caller): the local log,
    /// and the group's queue in a group. The position to persist to.
    fn append_journal(&self, ledger: &mut Ledger) -> u64 {
        let effects = ledger.take_journal();
        let replicated = self
            .replica
            .as_ref()
            .map(|replica| replica.append(&effects));
        let local = match &self.store {
            Some(store) => store.append(effects),
            None => 0,
        };
        replicated.unwrap_or(local)
    }

    /// Applies effects `first_seq..=last_seq` of the group's chain (a
    /// standby): replayed as recovery does, then logged locally.
    ///
    /// # Errors
    ///
    /// Not in a group, or the range does not follow what was applied.
    pub fn apply_replicated(
        &self,
        first_seq: u64,
        last_seq: u64,
        effects: Vec<crate::ledger::Effect>,
    ) -> Result<(), String> {
        let Some(replica) = &self.replica else {
            return Err("not a member of a replica group".to_string());
        };
        let mut ledger = self.ledger.write();
        replica.applied(first_seq, last_seq)?;
        for effect in effects.iter().cloned() {
            ledger.replay(effect);
        }
        // Replaying a sweep journals it again; the chain has it already.
        drop(ledger.take_journal());
        if let Some(store) = &self.store {
            store.append(effects);
        }
        Ok(())
    }

    /// The ledger under the shared lock: readers (placement decisions,
    /// the Explorer, stats) run together, and wait only while a change is
    /// applied. Changes go through [`DurableLedger::write`].
    pub fn read(&self) -> RwLockReadGuard<'_, Ledger> {
        self.ledger.read()
    }

    /// The store, when there is a state directory.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_deref()
    }

    /// Whether the state can be written now (always, without a store).
    pub fn health(&self) -> StoreHealth {
        self.store
            .as_ref()
            .map_or(StoreHealth::Writable, |store| store.health())
    }

    /// `Ok` while the state can be written; else why not, without trying.
    pub fn writable(&self) -> Result<(), StateError> {
        match self.health() {
            StoreHealth::Writable => Ok(()),
            StoreHealth::OutOfSpace { reason, .. } => Err(StateError::OutOfSpace { reason }),
            StoreHealth::Failed { reason } => Err(StateError::Failed { reason }),
        }
    }

    /// Runs `change` on the locked ledger and queues its effects for the
    /// log, in the ledger's order. Returns the log position to
    /// [`DurableLedger::persist`].
    pub fn write<R>(&self, change: impl FnOnce(&mut Ledger) -> R) -> (R, u64) {
        let mut ledger = self.ledger.write();
        let result = change(&mut ledger);
        let seq = self.append_journal(&mut ledger);
        (result, seq)
    }

    /// Makes the effects up to `seq` durable (per the fsync policy), off
    /// the async threads.
    pub async fn persist(&self, seq: u64) -> Result<(), StateError> {
        if let Some(store) = self.store.clone() {
            // In a group, positions are the chain's; the local log holds
            // the same effects, so it is synced to its own end.
            let local = if self.replica.is_some() {
                None
            } else {
                Some(seq)
            };
            tokio::task::spawn_blocking(move || match local {
                Some(seq) => store.sync(seq),
                None => store.sync(u64::MAX),
            })
            .await??;
        }
        if let Some(replica) = &self.replica {
            let timeout = replica.options.lease.max(REPLICA_APPEND_TIMEOUT);
            replica.confirmed(seq, timeout).await?;
        }
        Ok(())
    }

    /// Writes and syncs whatever is pending (the background task).
    pub fn flush(&self) -> Result<(), StoreError> {
        self.store.as_ref().map_or(Ok(()), |store| store.flush())
    }

    /// The damage the check of the side records recovery adopted unread
    /// found, if it did ([`crate::engine::SideRecordsCheck`]).
    pub fn side_records_damage(&self) -> Option<String> {
        match self.ledger.read().engine().side_records_check().state() {
            SideRecordsState::Damaged(reason) => Some(reason),
            _ => None,
        }
    }

    /// Whether the log has grown enough for a snapshot.
    pub fn snapshot_due(&self) -> bool {
        self.store
            .as_ref()
            .is_some_and(|store| store.snapshot_due())
    }

    /// Writes a snapshot now. Writes pause only to start the capture and
    /// for each slice copied (see the module documentation); a snapshot
    /// already being written makes this one a no-op.
    pub fn snapshot(&self) -> Result<(), StoreError> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        if self.snapshot_running.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // The records a recovery adopted unread are copied only once they
        // check out: a snapshot must not carry damage on as sound.
        let check = self.ledger.read().engine().side_records_check();
        if let Err(error) = store.side_records_checked(&check) {
            self.snapshot_running.store(false, Ordering::Release);
            return Err(error);
        }
        let started = Instant::now();
        let (capture, head) = {
            let mut ledger = self.ledger.write();
            self.append_journal(&mut ledger);
            // The chain's head now: its effects are all in this snapshot.
            let head = self.replica.as_ref().map(|replica| replica.head());
            (store.begin_snapshot(&ledger), head)
        };
        let paused = started.elapsed();
        let mut copy = CopyTimes::default();
        let pending = self.copy_capture(store, capture, &mut copy);
        let report = pending.and_then(|pending| store.finish_snapshot(pending, now_millis()));
        self.snapshot_running.store(false, Ordering::Release);
        let report = report?;
        if let (Some(replica), Some(head)) = (&self.replica, head) {
            replica.snapshot_written(LocalSnapshot {
                path: Store::snapshot_path(store.dir(), report.last_seq),
                last_seq: report.last_seq,
                head,
            });
        }
        tracing::info!(
            nodes = report.nodes,
            bytes = report.bytes,
            last_seq = report.last_seq,
            writes_paused_ms = paused.as_millis() as u64,
            longest_slice_ms = copy.longest.as_millis() as u64,
            slices = copy.slices,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "snapshot written"
        );
        Ok(())
    }

    /// Starts the snapshot's log segment, then copies its capture a slice
    /// per hold of the shared lock and takes it.
    fn copy_capture(
        &self,
        store: &Store,
        capture: SnapshotCapture,
        times: &mut CopyTimes,
    ) -> Result<PendingSnapshot, StoreError> {
        if let Err(error) = store.start_segment() {
            capture.abandon(&self.ledger.read());
            return Err(error);
        }
        loop {
            {
                let ledger = self.ledger.read();
                let slice = Instant::now();
                let done = capture.copy_some(&ledger, CAPTURE_SLICE_BYTES);
                times.longest = times.longest.max(slice.elapsed());
                times.slices += 1;
                if done {
                    return capture.take(&ledger);
                }
            }
            // Writes go on meanwhile.
            capture.flush();
        }
    }
}

/// How a capture's copy went: slices, and the longest (a wait for writes).
#[derive(Debug, Default)]
struct CopyTimes {
    longest: std::time::Duration,
    slices: u64,
}
