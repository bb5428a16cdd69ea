//! The member's life: join, follow, take over, lead, step down.
//!
//! Motivation: exactly one member may serve writes at any instant, a dead
//! leader must be replaced within seconds, and nothing that a leader
//! acknowledged may be missing from its successor's forest.
//!
//! Design (docs/standby.md, *The lease* and *Takeover*): one task per
//! member.
//!
//! - **Observe.** Every 500 ms (±20 %) it reads the control document
//!   (realtime GET), reads the chain to its end and applies it
//!   ([`super::follower`]), and remembers when it first saw the document's
//!   version (`_seq_no`, `_primary_term`) on its own boot-time clock.
//! - **Bootstrap.** No control document: `_create` one naming itself,
//!   epoch 1 (one member wins; the others observe).
//! - **Take over.** The version unchanged for more than `1.1·L` (or no
//!   holder): after a random 0–250 ms, replace the document guarded by
//!   `if_seq_no`/`if_primary_term`, epoch + 1, holder itself. A 409 means
//!   another member moved first.
//! - **Lead.** From the lease write's send time `h0` it may act until
//!   `h0 + 0.9·L`; a renewal every `L/3` (guarded the same way) moves that
//!   on. Before serving it reads the chain to its end and creates the
//!   *epoch record* after the last record (a 409: the old leader wrote one
//!   more; read it, apply it, try the next number), then resolves the old
//!   leader's placements in doubt (as after a crash) and starts the
//!   appender ([`super::appender`]).
//! - **Step down.** A renewal answered 409 by another holder, the control
//!   document gone, a record collision in the appender, or a standby
//!   stranded behind the truncated log: the member is deposed
//!   ([`Replica::step_down`]), forwards writes to the leader it reads while
//!   it finishes what is in flight, then restarts itself to rejoin
//!   (`crate::serve::startup`): nobody has to.
//! - **Release.** At shutdown ([`Replica::begin_release`]) the leader takes
//!   no new write, waits for the writes it took to be answered and their
//!   effects recorded, stops acting, and replaces the control document
//!   with one naming no holder: a standby takes that over at its next look
//!   (at once when a held or forwarded write asks it to look), without
//!   waiting a lease.
//! - **Look now.** Between polls the task sleeps, but a held write or a
//!   leader's refusal wakes it ([`Replica::look_now`]), at most every
//!   [`MIN_LOOK_SPACING`].
//!
//! Consequences: a member that starts waits `1.1·L` before it may take a
//! lease it found held (the holder may still be alive); the leader's death
//! costs at most `1.1·L` + two polls + the jitter + catching up (about 7 s
//! with the default 5 s lease). A deposed member follows again once
//! restarted (`super::join` decides whether its state can be kept).

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};

use super::appender::{self, ChainHead};
use super::clock::boottime;
use super::cluster::{GroupCluster, GroupError, UNAUTHENTICATED_HOLDER, Version, Write};
use super::follower::{FollowError, Follower};
use super::host::ReplicaHost;
use super::record::{Kind, Record};
use super::state::{Leader, Replica, Role};
use crate::units::now_millis;

/// How often a member reads the control document.
const CONTROL_POLL: Duration = Duration::from_millis(500);

/// Shortest time between two looks at the control document when woken.
const MIN_LOOK_SPACING: Duration = Duration::from_millis(50);

/// How long a release waits for the writes the leader took.
const RELEASE_DRAIN: Duration = Duration::from_secs(30);

/// Test-only: a pause between taking the lease and writing the epoch
/// record, in milliseconds (the window where nothing may make effects).
const TAKEOVER_PAUSE_VARIABLE: &str = "NEARDUP_TEST_TAKEOVER_PAUSE_MS";

/// Observations between two looks at the published snapshot (is this
/// standby still within the truncated log?).
const TRUNCATION_CHECK_EVERY: u32 = 10;

/// Runs the member until the process ends, following on from `start`
/// (`super::join::prepare`; `None`: the chain's start).
pub async fn run(
    replica: Arc<Replica>,
    cluster: GroupCluster,
    host: Arc<dyn ReplicaHost>,
    start: Option<Follower>,
) {
    while let Err(error) = cluster.ensure_indices().await {
        tracing::warn!(%error, "cannot create the replica group's indices yet; retrying");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    tokio::spawn(super::publish::run(replica.clone(), cluster.clone()));
    tokio::spawn(keep_mark(replica.clone(), host.clone()));
    let mut follower: Option<Follower> = start;
    let mut observed: Option<(Version, Duration)> = None;
    let mut observations = 0u32;
    loop {
        if let Err(reason) = observe(&replica, &cluster, &host, &mut follower, &mut observed).await
        {
            tracing::warn!(%reason, node = replica.node, "replica group");
        }
        observations = observations.wrapping_add(1);
        if observations.is_multiple_of(TRUNCATION_CHECK_EVERY)
            && replica.role() == Role::Standby
            && let Some(follower) = &follower
        {
            check_not_stranded(&replica, &cluster, follower.next).await;
        }
        let looked = tokio::time::Instant::now();
        tokio::select! {
            () = tokio::time::sleep(jitter(CONTROL_POLL, 0.2)) => {}
            () = replica.look_now.notified() => {
                tokio::time::sleep_until(looked + MIN_LOOK_SPACING).await;
            }
        }
    }
}

/// A standby whose next record was deleted (it fell more than the margin
/// behind a published snapshot) cannot follow: it steps down, and its
/// restart rejoins from the snapshot (`super::join`).
async fn check_not_stranded(replica: &Replica, cluster: &GroupCluster, next: u64) {
    let Ok(Some((manifest, _))) = super::snapshots::latest(cluster).await else {
        return;
    };
    if manifest.head.record < next {
        return;
    }
    if let Ok(None) = cluster.record(next).await {
        replica.step_down(&format!(
            "record {next} was truncated before this standby read it (the published snapshot covers record {}): restart it to rejoin from the snapshot",
            manifest.head.record
        ));
    }
}

/// Why a member whose next record is `next` cannot lead: the published
/// snapshot covers `next` (so the log was truncated past it, or the member
/// would have read it); `None` when it can.
async fn stranded(cluster: &GroupCluster, next: u64) -> Result<Option<String>, String> {
    match super::snapshots::latest(cluster).await {
        Ok(Some((manifest, _))) if manifest.head.record >= next => Ok(Some(format!(
            "record {next} is behind the published snapshot (record {}): this member fell behind the truncated log and cannot take the lease; restarting to rejoin from the snapshot",
            manifest.head.record
        ))),
        Ok(_) => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// Writes the member's place in the chain (`super::join::Mark`) once a
/// second when it moved, after the local log was written up to it.
async fn keep_mark(replica: Arc<Replica>, host: Arc<dyn ReplicaHost>) {
    let mut written = None;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = (replica.head(), replica.led());
        if written.as_ref() == Some(&now) || now.0.group_uuid.is_empty() {
            continue;
        }
        if let Err(error) = save_mark(&replica, host.as_ref()) {
            tracing::warn!(%error, "cannot write the member's place in the chain");
            continue;
        }
        written = Some(now);
    }
}

fn save_mark(replica: &Replica, host: &dyn ReplicaHost) -> Result<(), String> {
    if replica.state_dir.is_none() {
        return Ok(());
    }
    host.sync_local()?;
    super::join::write_mark(replica).map_err(|error| error.to_string())
}

/// One look at the control document and the chain; a takeover or a
/// bootstrap when due (and then the whole tenure as leader).
async fn observe(
    replica: &Arc<Replica>,
    cluster: &GroupCluster,
    host: &Arc<dyn ReplicaHost>,
    follower: &mut Option<Follower>,
    observed: &mut Option<(Version, Duration)>,
) -> Result<(), String> {
    let control = cluster.control().await.map_err(|error| error.to_string())?;
    let settled = matches!(replica.role(), Role::Deposed | Role::Released);
    let Some((document, version)) = control else {
        if settled {
            return Ok(());
        }
        return bootstrap(replica, cluster, host, follower).await;
    };
    // The holder named by an authentic document only (`GroupCluster::control`).
    let leader = document["holder"]
        .as_str()
        .filter(|node| *node != UNAUTHENTICATED_HOLDER)
        .map(|node| Leader {
            node: node.to_string(),
            url: document["holder_url"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        });
    let epoch = document["epoch"].as_u64().unwrap_or(0);
    if settled {
        // Deposed or released: it follows the leader's name, nothing more.
        replica.set_role(Role::Standby, epoch, leader);
        return Ok(());
    }
    let uuid = document["group_uuid"].as_str().unwrap_or_default();
    let follower = follower.get_or_insert_with(|| Follower::new(uuid));
    if follower.group_uuid != uuid {
        replica.step_down("the group's control document names another group uuid");
        return Err("group uuid changed: the group's indices were replaced".to_string());
    }
    match follower.read_to_end(cluster, replica, host.as_ref()).await {
        Ok(applied) => replica.caught_up(applied),
        Err(FollowError::Chain(reason)) => {
            replica.step_down(&format!("cannot follow the chain: {reason}"));
            return Err(reason);
        }
        Err(FollowError::Cluster(error)) => return Err(error.to_string()),
    }
    replica.set_role(Role::Standby, epoch, leader);
    let now = boottime();
    if observed.is_none_or(|(seen, _)| seen != version) {
        *observed = Some((version, now));
    }
    let first_seen = observed.map_or(now, |(_, at)| at);
    let released = document["holder"].is_null();
    if !(released || replica.lease().may_take_over(first_seen, now)) {
        return Ok(());
    }
    // A standby whose next record was truncated reads "the end" there: it
    // must not write an epoch record below the published snapshot.
    if let Some(reason) = stranded(cluster, follower.next).await? {
        replica.step_down(&reason);
        return Err(reason);
    }
    // Members that saw the same moment do not all write at once; a lease
    // let go is taken at once (one CAS wins either way).
    let spread = if released { 25 } else { 125 };
    tokio::time::sleep(jitter(Duration::from_millis(spread), 1.0)).await;
    if replica.releasing() {
        return Ok(());
    }
    let mut taken = document.clone();
    taken["epoch"] = json!(epoch + 1);
    taken["holder"] = json!(replica.node);
    taken["holder_url"] = json!(replica.url);
    taken["renewals"] = json!(0);
    taken["lease_ms"] = json!(replica.options.lease.as_millis() as u64);
    taken["renewed_at_ms"] = json!(now_millis());
    let sent = boottime();
    match cluster.replace_control(&taken, version).await {
        Ok(Write::Done(version)) => {
            tracing::info!(
                node = replica.node,
                epoch = epoch + 1,
                "took the lease over"
            );
            *observed = None;
            lead(replica, cluster, host, follower, taken, version, sent).await;
            Ok(())
        }
        Ok(Write::Conflict) => {
            *observed = None;
            Ok(())
        }
        Ok(Write::Gone) => Err("the control index is gone".to_string()),
        Err(error) => Err(error.to_string()),
    }
}

/// No control document: try to create it, naming this member (epoch 1).
async fn bootstrap(
    replica: &Arc<Replica>,
    cluster: &GroupCluster,
    host: &Arc<dyn ReplicaHost>,
    follower: &mut Option<Follower>,
) -> Result<(), String> {
    if replica.last_seq() != 0 {
        return Err("no control document, and this member holds state: not bootstrapping over it (restart it: it sets its state aside and starts anew)".to_string());
    }
    let uuid = super::state::random_hex(16);
    let document = json!({
        "type": "control",
        "format": 1,
        "group": replica.options.group,
        "group_uuid": uuid,
        "epoch": 1,
        "holder": replica.node,
        "holder_url": replica.url,
        "lease_ms": replica.options.lease.as_millis() as u64,
        "renewals": 0,
        "renewed_at_ms": now_millis(),
    });
    let sent = boottime();
    match cluster.create_control(&document).await {
        Ok(Write::Done(version)) => {
            tracing::info!(
                node = replica.node,
                group_uuid = uuid,
                "started the replica group"
            );
            let follower = follower.insert(Follower::new(&uuid));
            lead(replica, cluster, host, follower, document, version, sent).await;
            Ok(())
        }
        Ok(Write::Conflict) => Ok(()),
        Ok(Write::Gone) => Err("the control index is gone".to_string()),
        Err(error) => Err(error.to_string()),
    }
}

/// The tenure of a member that holds the lease (written at `sent`), until
/// it steps down.
async fn lead(
    replica: &Arc<Replica>,
    cluster: &GroupCluster,
    host: &Arc<dyn ReplicaHost>,
    follower: &mut Follower,
    document: Value,
    version: Version,
    sent: Duration,
) {
    let epoch = document["epoch"].as_u64().unwrap_or(0);
    let me = Some(Leader {
        node: replica.node.clone(),
        url: replica.url.clone(),
    });
    replica.lease_held_from(sent);
    replica
        .counters
        .takeovers
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    replica.set_role(Role::TakingOver, epoch, me.clone());
    let held = Arc::new(Mutex::new((document, version)));
    let renewing = tokio::spawn(renew(replica.clone(), cluster.clone(), held.clone()));
    if let Some(pause) = super::test_pause(TAKEOVER_PAUSE_VARIABLE) {
        tracing::warn!(
            ?pause,
            "{TAKEOVER_PAUSE_VARIABLE}: pausing between the lease and the epoch record (tests only)"
        );
        tokio::time::sleep(pause).await;
    }
    if let Err(reason) = write_epoch_record(replica, cluster, host, follower, epoch).await {
        replica.step_down(&reason);
        renewing.abort();
        return;
    }
    // Before any effect of its own: a restart must know its log may hold
    // effects the chain lacks (`super::join`).
    replica.set_led();
    if let Err(error) = save_mark(replica, host.as_ref()) {
        replica.step_down(&format!(
            "cannot write the member's place in the chain: {error}"
        ));
        renewing.abort();
        return;
    }
    host.took_over();
    replica.set_role(Role::Leader, epoch, me);
    tracing::info!(
        node = replica.node,
        epoch,
        record = follower.next - 1,
        "leading the replica group"
    );
    let head = ChainHead {
        group_uuid: follower.group_uuid.clone(),
        epoch,
        next: follower.next,
        prev_digest: follower.prev_digest.clone(),
    };
    let mut appending = tokio::spawn(appender::run(replica.clone(), cluster.clone(), head));
    tokio::select! {
        reason = &mut appending => {
            let reason = reason.unwrap_or_else(|error| error.to_string());
            tracing::warn!(node = replica.node, %reason, "no longer leading");
            renewing.abort();
        }
        () = replica.release_asked.notified() => {
            release(replica, cluster, &held, renewing, appending).await;
        }
    }
}

/// Lets the lease go (shutdown): the writes taken finish and are recorded,
/// then the control document names no holder.
async fn release(
    replica: &Arc<Replica>,
    cluster: &GroupCluster,
    held: &Mutex<(Value, Version)>,
    renewing: tokio::task::JoinHandle<()>,
    appending: tokio::task::JoinHandle<String>,
) {
    let started = tokio::time::Instant::now();
    if !replica.writes_served(RELEASE_DRAIN).await {
        tracing::warn!("releasing the lease with writes still running: they are answered 503");
    }
    let last_seq = replica.last_seq();
    let timeout = replica.options.lease.max(Duration::from_secs(5));
    if let Err(error) = replica.confirmed(last_seq, timeout).await {
        tracing::warn!(%error, "releasing the lease before its last effects were recorded");
    }
    appending.abort();
    renewing.abort();
    // Nothing is acted on from here: a standby may take over as soon as
    // the document below lands.
    replica.released();
    let held = held.lock().clone();
    match let_go(cluster, held).await {
        Ok(()) => tracing::info!(
            node = replica.node,
            record = replica.head().record,
            release_ms = started.elapsed().as_millis() as u64,
            "let the lease go: a standby takes over at once"
        ),
        Err(reason) => tracing::warn!(
            %reason,
            "the lease could not be let go: a standby takes over once it lapses"
        ),
    }
}

/// How many times [`let_go`] writes the control document before leaving
/// the lease to lapse.
const LET_GO_ATTEMPTS: u32 = 4;

/// Writes the control document with no holder, from `held` (the last
/// version this member knows it wrote).
///
/// A renewal aborted in flight may still have landed after `held` was
/// taken, so a 409 is not proof that the lease is lost: the document is
/// read again and, while it still names this member in this epoch, the
/// write is tried again on its new version. Without that, a shutdown that
/// raced a renewal left the group without a leader for a whole lease.
///
/// # Errors
///
/// The lease is someone else's now, the document is gone, or no write
/// landed in [`LET_GO_ATTEMPTS`] tries: the reason.
pub async fn let_go(cluster: &GroupCluster, held: (Value, Version)) -> Result<(), String> {
    let (mut mine, mut version) = held;
    let mut last = String::new();
    for _ in 0..LET_GO_ATTEMPTS {
        let mut document = mine.clone();
        let renewals = document["renewals"].as_u64().unwrap_or(0) + 1;
        document["holder"] = Value::Null;
        document["holder_url"] = Value::Null;
        document["renewals"] = json!(renewals);
        document["renewed_at_ms"] = json!(now_millis());
        match cluster.replace_control(&document, version).await {
            Ok(Write::Done(_)) => return Ok(()),
            Ok(Write::Gone) => return Err("the control document or its index is gone".into()),
            Ok(Write::Conflict) => last = "409: the control document changed".into(),
            Err(error) => last = error.to_string(),
        }
        match cluster.control().await {
            // An attempt that got no answer may have landed.
            Ok(Some((found, _))) if found["holder"].is_null() => return Ok(()),
            Ok(Some((found, found_version))) if still_mine(&found, &mine) => {
                (mine, version) = (found, found_version);
            }
            Ok(Some((found, _))) => {
                return Err(format!("the lease is held by {} now", found["holder"]));
            }
            Ok(None) => return Err("the control document is gone".into()),
            Err(error) => last = format!("{last}; reading it again: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(last)
}

/// Whether `found` is still the lease `mine` describes: the same holder in
/// the same epoch (a renewal of ours may have changed its other fields).
fn still_mine(found: &Value, mine: &Value) -> bool {
    !mine["holder"].is_null()
        && found["holder"] == mine["holder"]
        && found["epoch"] == mine["epoch"]
}

/// Reads the chain to its end and creates the epoch record after it; a
/// record written meanwhile by the old leader is read and applied first.
async fn write_epoch_record(
    replica: &Replica,
    cluster: &GroupCluster,
    host: &Arc<dyn ReplicaHost>,
    follower: &mut Follower,
    epoch: u64,
) -> Result<(), String> {
    loop {
        if replica.role() == Role::Deposed {
            return Err("stepped down during the takeover".to_string());
        }
        match follower.read_to_end(cluster, replica, host.as_ref()).await {
            Ok(_) => {}
            Err(FollowError::Chain(reason)) => return Err(reason),
            Err(FollowError::Cluster(error)) => {
                tracing::warn!(%error, "reading the chain before the epoch record");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        }
        if let Some(reason) = stranded(cluster, follower.next)
            .await
            .map_err(|error| format!("cannot read the published snapshot: {error}"))?
        {
            return Err(reason);
        }
        // From what was applied: nothing of this member's own may be in it
        // (only the leader makes effects; see `Replica::may_make_effects`).
        let last_seq = replica.applied_seq();
        let record = Record::new(
            cluster.key(),
            follower.next,
            epoch,
            &replica.node,
            Kind::Epoch,
            last_seq + 1,
            last_seq,
            &follower.prev_digest,
            Vec::new(),
        );
        let document = record.to_document(&follower.group_uuid, now_millis());
        match cluster.create_record(record.number, &document).await {
            Ok(Write::Done(_)) => {
                follower.passed_epoch_record(&record, replica);
                return Ok(());
            }
            // The old leader's last record, or one in flight: read it.
            Ok(Write::Conflict) => tokio::time::sleep(Duration::from_millis(20)).await,
            Ok(Write::Gone) => return Err("the group's log index is gone".to_string()),
            Err(GroupError::Transient(error)) => {
                tracing::warn!(%error, "epoch record not written yet: retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(GroupError::Refused(error)) => return Err(error),
        }
    }
}

/// Renews the lease every `L/3` until the member steps down.
async fn renew(replica: Arc<Replica>, cluster: GroupCluster, held: Arc<Mutex<(Value, Version)>>) {
    // The send time of the first attempt at the renewal being tried: an
    // attempt that timed out may still have landed, so its lease counts
    // from then.
    let mut first_attempt: Option<Duration> = None;
    loop {
        let wait = if first_attempt.is_some() {
            Duration::from_millis(100)
        } else {
            jitter(replica.lease().renew_every(), 0.1)
        };
        tokio::time::sleep(wait).await;
        if matches!(replica.role(), Role::Deposed | Role::Released) {
            return;
        }
        let (mut document, version) = held.lock().clone();
        let renewals = document["renewals"].as_u64().unwrap_or(0) + 1;
        document["renewals"] = json!(renewals);
        document["renewed_at_ms"] = json!(now_millis());
        let sent = boottime();
        let from = *first_attempt.get_or_insert(sent);
        match cluster.replace_control(&document, version).await {
            Ok(Write::Done(version)) => {
                *held.lock() = (document, version);
                replica.lease_held_from(from);
                first_attempt = None;
            }
            Ok(Write::Conflict) => match cluster.control().await {
                Ok(Some((found, version)))
                    if found["holder"] == document["holder"]
                        && found["epoch"] == document["epoch"]
                        && found["renewals"] == json!(renewals) =>
                {
                    // An earlier attempt of ours landed.
                    *held.lock() = (found, version);
                    replica.lease_held_from(from);
                    first_attempt = None;
                }
                Ok(found) => {
                    let holder = found.map_or(Value::Null, |(found, _)| found["holder"].clone());
                    replica.step_down(&format!("the lease was taken over (holder {holder})"));
                    return;
                }
                Err(error) => tracing::warn!(%error, "reading the control document after a 409"),
            },
            Ok(Write::Gone) => {
                replica.step_down("the control document or its index is gone");
                return;
            }
            Err(error) => tracing::warn!(%error, "lease not renewed yet: retrying"),
        }
    }
}

/// `base` changed by a random amount within ±`fraction`.
fn jitter(base: Duration, fraction: f64) -> Duration {
    let random = f64::from(super::state::random_u32()) / f64::from(u32::MAX);
    base.mul_f64((1.0 + fraction * (2.0 * random - 1.0)).max(0.0))
}
