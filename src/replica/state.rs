//! What the rest of the sidecar sees of the group: this member's role, the
//! leader it knows, and the queue of effects waiting for their record.
//!
//! Motivation: the write path must ask one thing before forwarding ("is
//! this placement in the chain, and may I still act?") and one thing before
//! answering; the routing must know whether to take a write at all. None of
//! them may talk to the cluster about the group themselves.
//!
//! Design: [`Replica`] is shared by the sidecar (its ledger appends every
//! effect here, under the ledger's lock, in the ledger's order) and by the
//! member's tasks (`member`, `appender`, `follower`), which change the role
//! and confirm sequence numbers. Effects are encoded at once as the local
//! log's frames; the appender takes them in group commits. Waiters watch
//! the confirmed sequence number (a `tokio::sync::watch`). Acting as leader
//! is bounded in time: `acting_until` on the boot-time clock, set by each
//! successful lease write (`clock::Lease::acting_until`).
//!
//! Where a write goes is decided here too ([`Replica::route_write`]): the
//! leader serves it (counted under the view's lock, so that a release
//! waits for every write it let in), any other member forwards it to the
//! leader it knows, and while no member may act it waits for the view to
//! change ([`Replica::changed`]). A release ([`Replica::begin_release`])
//! stops new writes at the leader before its last record and the lease go.
//!
//! Consequences: a member that stepped down stays deposed until it is
//! restarted (its memory may hold effects the chain lacks); waiters of a
//! deposed member get [`ReplicaError::NotLeader`], never `Ok`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

use super::clock::{Lease, boottime};
use super::record::encode_frames;
use crate::config::ReplicaOptions;
use crate::ledger::Effect;
use crate::persist::codec::{Frame, read_frame};

/// A member's role in its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Reading the control document and the chain for the first time.
    Joining,
    /// Following the leader's chain.
    Standby,
    /// Holding the lease (writing the epoch record, or serving writes).
    TakingOver,
    Leader,
    /// Lost the lease while leading: forwards writes to the leader, takes
    /// none itself until restarted.
    Deposed,
    /// Let the lease go at shutdown: forwards what still comes in, never
    /// takes the lease again in this process.
    Released,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Joining => "joining",
            Role::Standby => "standby",
            Role::TakingOver => "taking_over",
            Role::Leader => "leader",
            Role::Deposed => "deposed",
            Role::Released => "released",
        }
    }

    /// The role as a number (`neardup_replica_role`): 0 joining, 1
    /// standby, 2 taking over, 3 leader, 4 deposed, 5 released.
    pub fn as_number(self) -> u64 {
        match self {
            Role::Joining => 0,
            Role::Standby => 1,
            Role::TakingOver => 2,
            Role::Leader => 3,
            Role::Deposed => 4,
            Role::Released => 5,
        }
    }
}

/// Why a write cannot be served (or acknowledged) by this member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplicaError {
    /// Another member leads; writes go there.
    #[error(
        "this sidecar is not the leader of replica group [{group}]; the leader is {leader} at {url}{detail}"
    )]
    NotLeader {
        group: String,
        leader: String,
        url: String,
        epoch: u64,
        detail: String,
    },
    /// No leader is known (a takeover is under way).
    #[error("replica group [{group}] has no leader at the moment{detail}; retry shortly")]
    NoLeader { group: String, detail: String },
    /// The record holding the write did not reach the cluster in time.
    #[error("the group's effect log did not take the write within {0:?}; nothing was indexed")]
    AppendTimeout(Duration),
}

/// The leader as the control document names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub node: String,
    pub url: String,
}

#[derive(Debug)]
struct View {
    role: Role,
    epoch: u64,
    leader: Option<Leader>,
    /// Last record applied (standby) or confirmed (leader).
    record: u64,
    /// Why the member stepped down, when it did.
    deposed_because: Option<String>,
    /// The leader lets its lease go: it takes no new write.
    releasing: bool,
    /// Writes this member let in to serve itself that have not finished.
    serving: u64,
}

/// Where a write goes (see [`Replica::route_write`]).
#[derive(Debug)]
pub enum WriteRoute {
    /// This member leads: serve it, holding the guard until it is answered.
    Serve(ServingGuard),
    /// Another member leads: send it there.
    Forward(Leader),
    /// No member may act now (a takeover, a release): wait for a change.
    Wait,
}

/// A write this member serves as leader; a release waits for every one.
#[derive(Debug)]
pub struct ServingGuard(Arc<Replica>);

impl Drop for ServingGuard {
    fn drop(&mut self) {
        let mut view = self.0.view.lock();
        view.serving = view.serving.saturating_sub(1);
        drop(view);
        self.0.changed_now();
    }
}

/// What the member task counts for the metrics and the role endpoints.
#[derive(Debug, Default)]
pub struct ReplicaCounters {
    /// Leases taken over (or bootstrapped) by this process.
    pub takeovers: AtomicU64,
    /// Records this member applied in its latest look at the chain: how
    /// far behind it was.
    pub lag_records: AtomicU64,
    /// Boot-time nanoseconds when this member last read to the chain's end.
    pub caught_up_at: AtomicU64,
}

/// Where this member stands in the chain: the last record it applied (or,
/// leading, confirmed), and the sequence number its state covers with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub group_uuid: String,
    pub record: u64,
    /// The digest of that record (the group's uuid before record 1).
    pub digest: String,
    /// The last effect the member's state holds from the chain (that
    /// record's last, or the published snapshot's when it started from one).
    pub last_seq: u64,
}

/// A snapshot this member wrote of its own state, for the leader to publish.
#[derive(Debug, Clone)]
pub struct LocalSnapshot {
    pub path: PathBuf,
    pub last_seq: u64,
    /// The chain's head when its state was taken (its record's effects are
    /// all in the snapshot).
    pub head: Head,
}

/// Effects appended by the ledger, waiting for their record.
#[derive(Debug, Default)]
struct Queue {
    frames: Vec<u8>,
    /// First sequence number in `frames`.
    first_seq: u64,
    /// Last sequence number appended (or applied from the chain).
    last_seq: u64,
}

/// The member's shared state.
#[derive(Debug)]
pub struct Replica {
    pub options: ReplicaOptions,
    /// `--replica-name` plus a random suffix drawn at start.
    pub node: String,
    /// How peers reach this member.
    pub url: String,
    view: Mutex<View>,
    queue: Mutex<Queue>,
    /// Boot-time nanoseconds until which this member may act as leader
    /// (0: it may not).
    acting_until: AtomicU64,
    /// The last sequence number in the chain (leader: confirmed records;
    /// standby: applied ones).
    confirmed: watch::Sender<u64>,
    /// Wakes the appender when effects are queued.
    pub(super) queued: Notify,
    /// The member's state directory, where its place in the chain is kept
    /// (`super::join`); `None` without one.
    pub state_dir: Option<PathBuf>,
    head: Mutex<Head>,
    /// This process took the lease over at some point: its local log may
    /// hold effects of its own that never reached the chain.
    led: AtomicBool,
    /// The newest snapshot written of this member's state.
    pub(super) snapshots: watch::Sender<Option<LocalSnapshot>>,
    /// Bumped whenever the role, the leader, the lease or the writes
    /// being served change: held writes wait on it.
    changes: watch::Sender<u64>,
    /// Asks the member task to read the control document now (a held
    /// write, a leader that answered "not leader").
    pub(super) look_now: Notify,
    /// Asks the member task to let the lease go (shutdown).
    pub(super) release_asked: Notify,
    /// The member stepped down: it restarts itself to rejoin the group
    /// (`crate::serve::startup`), since its memory may hold effects the
    /// chain lacks and only a start decides what of its state to keep.
    rejoin_asked: Notify,
    wants_rejoin: AtomicBool,
    pub counters: ReplicaCounters,
}

impl Replica {
    pub fn new(options: ReplicaOptions, url: String) -> Replica {
        let suffix = random_suffix();
        Replica {
            node: format!("{}-{suffix}", options.name),
            options,
            url,
            view: Mutex::new(View {
                role: Role::Joining,
                epoch: 0,
                leader: None,
                record: 0,
                deposed_because: None,
                releasing: false,
                serving: 0,
            }),
            queue: Mutex::new(Queue::default()),
            acting_until: AtomicU64::new(0),
            confirmed: watch::Sender::new(0),
            queued: Notify::new(),
            state_dir: None,
            head: Mutex::new(Head::default()),
            led: AtomicBool::new(false),
            snapshots: watch::Sender::new(None),
            changes: watch::Sender::new(0),
            look_now: Notify::new(),
            release_asked: Notify::new(),
            rejoin_asked: Notify::new(),
            wants_rejoin: AtomicBool::new(false),
            counters: ReplicaCounters::default(),
        }
    }

    fn changed_now(&self) {
        self.changes
            .send_modify(|version| *version = version.wrapping_add(1));
    }

    /// A receiver that sees every later change of the view (role, leader,
    /// lease, writes being served).
    pub fn changed(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Asks the member task to read the control document now.
    pub fn look_now(&self) {
        self.look_now.notify_one();
    }

    /// Where a write received now goes. `forwarded`: it came from another
    /// member, which is not asked to forward it again (no loops between
    /// members whose views differ for a moment).
    pub fn route_write(self: &Arc<Self>, forwarded: bool) -> WriteRoute {
        let mut view = self.view.lock();
        match view.role {
            Role::Leader if !view.releasing => {
                view.serving += 1;
                WriteRoute::Serve(ServingGuard(self.clone()))
            }
            Role::Leader | Role::TakingOver | Role::Joining => WriteRoute::Wait,
            Role::Standby | Role::Deposed | Role::Released => match &view.leader {
                Some(leader)
                    if !forwarded && leader.node != self.node && !leader.url.is_empty() =>
                {
                    WriteRoute::Forward(leader.clone())
                }
                _ => WriteRoute::Wait,
            },
        }
    }

    /// Whether this member may make effects of its own (expiry,
    /// backfill): only as the leader, within its lease, not releasing.
    pub fn may_make_effects(&self) -> bool {
        let view = self.view.lock();
        view.role == Role::Leader && !view.releasing && self.may_act()
    }

    /// Shutdown: a leader stops taking writes (they are held, then
    /// forwarded to the next leader) and its member task is asked to let
    /// the lease go once the writes it took are recorded; any other member
    /// just never takes the lease again. Whether this member was leading.
    pub fn begin_release(&self) -> bool {
        let leading = {
            let mut view = self.view.lock();
            match view.role {
                Role::Leader | Role::TakingOver => {
                    view.releasing = true;
                    true
                }
                Role::Deposed => false,
                _ => {
                    view.role = Role::Released;
                    false
                }
            }
        };
        self.changed_now();
        if leading {
            self.release_asked.notify_one();
        }
        leading
    }

    /// Whether a release was asked for.
    pub fn releasing(&self) -> bool {
        let view = self.view.lock();
        view.releasing || view.role == Role::Released
    }

    /// Waits until every write this member let in has finished, up to
    /// `timeout`; whether they all did.
    pub async fn writes_served(&self, timeout: Duration) -> bool {
        let mut changes = self.changed();
        tokio::time::timeout(timeout, async {
            loop {
                if self.view.lock().serving == 0 {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        })
        .await
        .is_ok()
    }

    /// The lease was let go (the control document names no holder now).
    pub(super) fn released(&self) {
        self.acting_until.store(0, Ordering::Release);
        {
            let mut view = self.view.lock();
            view.role = Role::Released;
            view.leader = None;
        }
        self.changed_now();
        self.confirmed.send_modify(|_| {});
    }

    /// The member read the chain to its end after applying `applied`
    /// records.
    pub(super) fn caught_up(&self, applied: u64) {
        self.counters.lag_records.store(applied, Ordering::Relaxed);
        self.counters
            .caught_up_at
            .store(boottime().as_nanos() as u64, Ordering::Relaxed);
    }

    /// How long ago this member last read the chain to its end (`None`:
    /// never).
    pub fn since_caught_up(&self) -> Option<Duration> {
        let at = self.counters.caught_up_at.load(Ordering::Relaxed);
        (at != 0).then(|| boottime().saturating_sub(Duration::from_nanos(at)))
    }

    /// The last sequence number applied from the chain (a standby) or
    /// confirmed in it (the leader).
    pub fn applied_seq(&self) -> u64 {
        *self.confirmed.borrow()
    }

    /// The leader this member knows (itself when it leads).
    pub fn known_leader(&self) -> Option<Leader> {
        self.view.lock().leader.clone()
    }

    /// Whether effects of this member's own wait for a record.
    pub fn has_pending(&self) -> bool {
        !self.queue.lock().frames.is_empty()
    }

    /// Whether this member's role is `Leader` and it may act now (the role
    /// endpoint `/_neardup/replica/leader`).
    pub fn is_acting_leader(&self) -> bool {
        self.may_make_effects()
    }

    /// Keeps the member's place in the chain in `dir`.
    #[must_use]
    pub fn with_state_dir(mut self, dir: Option<PathBuf>) -> Replica {
        self.state_dir = dir;
        self
    }

    /// The member's state holds the chain up to `head` (restarted from its
    /// own state, or from a published snapshot): effects are numbered on
    /// from `head.last_seq`. Call before the member's tasks start.
    pub fn start_from(&self, head: Head) {
        self.queue.lock().last_seq = head.last_seq;
        self.confirmed.send_replace(head.last_seq);
        self.view.lock().record = head.record;
        *self.head.lock() = head;
    }

    /// Where this member stands in the chain.
    pub fn head(&self) -> Head {
        self.head.lock().clone()
    }

    /// Whether this process took the lease over at some point.
    pub fn led(&self) -> bool {
        self.led.load(Ordering::Acquire)
    }

    pub(super) fn set_led(&self) {
        self.led.store(true, Ordering::Release);
    }

    /// A snapshot of this member's state was written (the leader publishes
    /// it to the group, `super::publish`).
    pub fn snapshot_written(&self, snapshot: LocalSnapshot) {
        self.snapshots.send_replace(Some(snapshot));
    }

    pub fn lease(&self) -> Lease {
        Lease(self.options.lease)
    }

    /// Queues `effects` for the next record. Call under the ledger's lock.
    /// Returns the sequence number of the last one.
    pub fn append(&self, effects: &[Effect]) -> u64 {
        let mut queue = self.queue.lock();
        if effects.is_empty() {
            return queue.last_seq;
        }
        if queue.frames.is_empty() {
            queue.first_seq = queue.last_seq + 1;
        }
        let first = queue.last_seq + 1;
        encode_frames(first, effects, &mut queue.frames);
        queue.last_seq += effects.len() as u64;
        let last = queue.last_seq;
        drop(queue);
        self.queued.notify_one();
        last
    }

    /// Records that effects `first_seq..=last_seq` of the chain were applied
    /// (a standby, under the ledger's lock).
    ///
    /// # Errors
    ///
    /// The range does not follow what was applied, or effects of this
    /// member's own wait in the queue.
    pub fn applied(&self, first_seq: u64, last_seq: u64) -> Result<(), String> {
        let mut queue = self.queue.lock();
        if !queue.frames.is_empty() {
            return Err("effects of this member wait for a record".to_string());
        }
        if first_seq != queue.last_seq + 1 {
            return Err(format!(
                "the chain continues at effect {first_seq}, this member applied up to {}",
                queue.last_seq
            ));
        }
        queue.last_seq = last_seq;
        drop(queue);
        self.confirmed.send_replace(last_seq);
        Ok(())
    }

    /// The last sequence number appended or applied.
    pub fn last_seq(&self) -> u64 {
        self.queue.lock().last_seq
    }

    /// The effects waiting for a record: their range and frames, whole
    /// frames up to about `max_bytes` (at least one frame).
    pub(super) fn take_pending(&self, max_bytes: usize) -> Option<(u64, u64, Vec<u8>)> {
        let mut queue = self.queue.lock();
        if queue.frames.is_empty() {
            return None;
        }
        let first_seq = queue.first_seq;
        if queue.frames.len() <= max_bytes {
            let frames = std::mem::take(&mut queue.frames);
            return Some((first_seq, queue.last_seq, frames));
        }
        // Cut at a frame boundary: the rest waits for the next record.
        let (mut end, mut count) = (0, 0u64);
        while let Frame::Valid(_, next) = read_frame(&queue.frames, end) {
            if count > 0 && next > max_bytes {
                break;
            }
            end = next;
            count += 1;
        }
        let rest = queue.frames.split_off(end);
        let frames = std::mem::replace(&mut queue.frames, rest);
        queue.first_seq = first_seq + count;
        Some((first_seq, first_seq + count - 1, frames))
    }

    /// The chain holds every effect up to `last_seq`, the last in record
    /// `record`.
    pub(super) fn confirm(&self, last_seq: u64, head: Head) {
        self.set_head(head);
        self.confirmed.send_replace(last_seq);
    }

    /// A standby applied a record (or the leader wrote it).
    pub(super) fn set_head(&self, head: Head) {
        self.view.lock().record = head.record;
        *self.head.lock() = head;
    }

    /// Whether this member may act as leader now.
    pub fn may_act(&self) -> bool {
        let until = self.acting_until.load(Ordering::Acquire);
        until != 0 && (boottime().as_nanos() as u64) < until
    }

    /// A lease write sent at `sent` succeeded: acting until `0.9·L` after
    /// it; waiters for the lease are woken.
    pub fn lease_held_from(&self, sent: Duration) {
        let until = self.lease().acting_until(sent).as_nanos() as u64;
        self.acting_until.store(until, Ordering::Release);
        self.confirmed.send_modify(|_| {});
        self.changed_now();
    }

    pub fn role(&self) -> Role {
        self.view.lock().role
    }

    /// The role, epoch and leader as the member task last learnt them (a
    /// deposed member stays deposed; only the leader it names changes).
    pub fn set_role(&self, role: Role, epoch: u64, leader: Option<Leader>) {
        let mut view = self.view.lock();
        let before = (view.role, view.epoch, view.leader.clone());
        if matches!(view.role, Role::Deposed | Role::Released) {
            view.epoch = view.epoch.max(epoch);
            view.leader = leader;
        } else {
            view.role = role;
            view.epoch = epoch;
            view.leader = leader;
        }
        let changed = before != (view.role, view.epoch, view.leader.clone());
        drop(view);
        if changed {
            self.changed_now();
        }
    }

    /// Steps down for good: nothing more is acted on, waiters are released.
    pub fn step_down(&self, reason: &str) {
        self.acting_until.store(0, Ordering::Release);
        {
            let mut view = self.view.lock();
            if view.role == Role::Deposed {
                return;
            }
            view.role = Role::Deposed;
            view.leader = None;
            view.deposed_because = Some(reason.to_string());
        }
        tracing::error!(
            node = self.node,
            reason,
            "stepped down as leader of the replica group: writes are answered 503; restart this member to follow again (it keeps its state when the chain holds it, else sets it aside and rejoins from the published snapshot)"
        );
        // Wake every waiter; they see the role.
        self.confirmed.send_modify(|_| {});
        self.queued.notify_one();
        self.changed_now();
        self.wants_rejoin.store(true, Ordering::Release);
        self.rejoin_asked.notify_one();
    }

    /// Whether this member stepped down and should restart to rejoin.
    pub fn wants_rejoin(&self) -> bool {
        self.wants_rejoin.load(Ordering::Acquire)
    }

    /// Completes once this member stepped down (see [`Replica::wants_rejoin`]).
    pub async fn rejoin_requested(&self) {
        while !self.wants_rejoin() {
            self.rejoin_asked.notified().await;
        }
    }

    /// `Ok` when this member serves writes (it leads; whether its lease
    /// still holds is checked by [`Replica::confirmed`] before anything
    /// leaves); else the 503 to answer.
    ///
    /// # Errors
    ///
    /// Not the leader (naming it when known).
    pub fn gate(&self) -> Result<(), ReplicaError> {
        let view = self.view.lock();
        if view.role == Role::Leader {
            return Ok(());
        }
        Err(self.not_leader(&view, ""))
    }

    fn not_leader(&self, view: &View, detail: &str) -> ReplicaError {
        let group = self.options.group.clone();
        match &view.leader {
            Some(leader) if leader.node != self.node => ReplicaError::NotLeader {
                group,
                leader: leader.node.clone(),
                url: leader.url.clone(),
                epoch: view.epoch,
                detail: detail.to_string(),
            },
            _ => ReplicaError::NoLeader {
                group,
                detail: detail.to_string(),
            },
        }
    }

    /// Waits until the chain holds every effect up to `seq` and this
    /// member may act (the fence before forwarding, and before answering).
    /// A lease that lapsed while renewals were slow is waited for: a
    /// renewal that then succeeds proves nobody took over meanwhile.
    ///
    /// # Errors
    ///
    /// Deposed; or, after `timeout`, the record not written
    /// ([`ReplicaError::AppendTimeout`]) or the lease still not renewed.
    pub async fn confirmed(&self, seq: u64, timeout: Duration) -> Result<(), ReplicaError> {
        let mut receiver = self.confirmed.subscribe();
        let waited = tokio::time::timeout(timeout, async {
            loop {
                if matches!(self.role(), Role::Deposed | Role::Released) {
                    return false;
                }
                if *receiver.borrow_and_update() >= seq && self.may_act() {
                    return true;
                }
                if receiver.changed().await.is_err() {
                    return false;
                }
            }
        })
        .await;
        match waited {
            Ok(true) => Ok(()),
            Err(_) if *self.confirmed.borrow() < seq => Err(ReplicaError::AppendTimeout(timeout)),
            _ => {
                let view = self.view.lock();
                Err(self.not_leader(
                    &view,
                    "; this sidecar lost the lease before the write was recorded",
                ))
            }
        }
    }

    /// The 503 for a write this member processed but may no longer
    /// acknowledge (the fence before answering).
    pub fn lost_lease_error(&self) -> ReplicaError {
        let view = self.view.lock();
        self.not_leader(
            &view,
            "; the write reached the cluster but this sidecar lost the lease before answering: retrying is safe for documents with ids",
        )
    }

    /// The epoch and the last record confirmed (headers of an answer).
    pub fn epoch_and_record(&self) -> (u64, u64) {
        let view = self.view.lock();
        (view.epoch, view.record)
    }

    /// Role, epoch, leader, applied record and sequence number (stats,
    /// health).
    pub fn to_json(&self) -> Value {
        let view = self.view.lock();
        json!({
            "group": self.options.group,
            "node": self.node,
            "url": self.url,
            "role": view.role.as_str(),
            "epoch": view.epoch,
            "leader": view.leader.as_ref().map(|leader| json!({"node": leader.node, "url": leader.url})),
            "applied": {"record": view.record, "seq": *self.confirmed.borrow()},
            "lease_ms": self.options.lease.as_millis() as u64,
            "acting": self.may_act(),
            "releasing": view.releasing,
            "serving_writes": view.serving,
            "deposed_because": view.deposed_because,
            "takeovers": self.counters.takeovers.load(Ordering::Relaxed),
            "lag": {
                "records": self.counters.lag_records.load(Ordering::Relaxed),
                "seconds": self.since_caught_up().map(|since| since.as_secs_f64()),
            },
        })
    }
}

/// Eight hex digits, different at every start.
fn random_suffix() -> String {
    random_hex(8)
}

/// `digits` random hex digits (node ids, group uuids).
pub fn random_hex(digits: usize) -> String {
    (0..digits.div_ceil(8))
        .map(|_| format!("{:08x}", random_u32()))
        .collect::<String>()
        .chars()
        .take(digits)
        .collect()
}

/// A random number (from the system's generator; the time if it fails).
pub fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    if aws_lc_rs::rand::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        return nanos ^ std::process::id();
    }
    u32::from_le_bytes(bytes)
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
