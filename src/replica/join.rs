//! Where a starting member begins: its own state, or a published snapshot.
//!
//! Motivation: a member restarted (a deploy, a crash, both members at
//! once) should not reread the chain, which may be truncated anyway; but a
//! member whose local log may hold effects the chain lacks (it led, and
//! its last effects never reached a record, or it was deposed) must not
//! serve from that state.
//!
//! Design: a member keeps its place in the chain in `replica.json` of its
//! state directory ([`Mark`]: group uuid, node id, the last record applied
//! or confirmed with its digest and the sequence number its state holds
//! with it, and whether it had taken the lease over). It is written once a
//! second when the place moved, after the local log was written up to it,
//! and at once when the member takes over, before any effect of its own.
//! At start ([`prepare`]), with the state opened (placements in doubt kept
//! pending: the chain settles them):
//!
//! - no state and nothing published: the chain from record 1 (or a new
//!   group);
//! - no state: the newest published snapshot, then the chain after it;
//! - state, its mark of this group, and the chain still holding the record
//!   after the mark and every record up to the state's last effect:
//!   resume from the state. When the mark says the member had led, every
//!   record from the mark up to its last effect must be the member's own
//!   (its log and its records hold the same effects in the same order);
//!   another writer's record there, or a chain ending before the state
//!   does, means the state holds effects the chain lacks;
//! - otherwise the state is set aside (moved to `set-aside-<ms>/` in the
//!   state directory, kept, logged) and the member joins from the newest
//!   published snapshot.
//!
//! Consequences: a deposed member rejoins by being restarted, with no
//! manual step; the set-aside directories are for the operator to inspect
//! and delete. A member that cannot reach the cluster at start retries for
//! [`PREPARE_TIMEOUT`], then fails to start.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::cluster::{GroupCluster, GroupError};
use super::follower::{Follower, WINDOW};
use super::record::Record;
use super::snapshots::{Manifest, latest};
use super::state::{Head, Replica};

/// The file of the member's place in the chain.
pub const MARK_FILE: &str = "replica.json";
/// How long a starting member tries to reach the cluster.
pub const PREPARE_TIMEOUT: Duration = Duration::from_secs(30);

/// A member's place in the chain, as its state directory keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub head: Head,
    pub node: String,
    /// The process had taken the lease over.
    pub led: bool,
}

impl Mark {
    fn to_json(&self) -> Value {
        json!({
            "format": 1, "group_uuid": self.head.group_uuid, "record": self.head.record,
            "digest": self.head.digest, "last_seq": self.head.last_seq,
            "node": self.node, "led": self.led,
        })
    }

    fn from_json(value: &Value) -> Option<Mark> {
        let text = |field: &str| value[field].as_str().map(str::to_string);
        Some(Mark {
            head: Head {
                group_uuid: text("group_uuid")?,
                record: value["record"].as_u64()?,
                digest: text("digest")?,
                last_seq: value["last_seq"].as_u64()?,
            },
            node: text("node")?,
            led: value["led"].as_bool()?,
        })
    }
}

/// The mark in `dir`, if one reads.
pub fn read_mark(dir: &Path) -> Option<Mark> {
    let text = std::fs::read_to_string(dir.join(MARK_FILE)).ok()?;
    Mark::from_json(&serde_json::from_str(&text).ok()?)
}

/// Writes the mark of `replica` (temporary file, rename); the caller wrote
/// the local log up to it first.
///
/// # Errors
///
/// The file not written.
pub fn write_mark(replica: &Replica) -> std::io::Result<()> {
    let Some(dir) = &replica.state_dir else {
        return Ok(());
    };
    let mark = Mark {
        head: replica.head(),
        node: replica.node.clone(),
        led: replica.led(),
    };
    let temporary = dir.join(format!("{MARK_FILE}.tmp"));
    write_durably(
        &temporary,
        &dir.join(MARK_FILE),
        mark.to_json().to_string().as_bytes(),
    )
}

/// Writes `bytes` to `path` through `temporary`, so that after a power
/// loss `path` holds either its old content or the new one, never less:
/// the temporary file synced before the rename, the directory after it.
/// (A mark that says "did not lead" while the log holds the member's own
/// effects would let a restart keep a state the chain lacks.)
fn write_durably(temporary: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::File::create(temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(temporary, path)?;
    // The rename itself must survive: sync the directory that holds it.
    std::fs::File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()
}

/// How a starting member begins.
#[derive(Debug)]
pub enum Plan {
    /// With the state as opened, following on from this point (`None`:
    /// from the chain's start, or as the first member of a new group).
    Follow(Option<Follower>),
    /// The state set aside (when there is one), then from this published
    /// snapshot (`None`: from empty, the chain from record 1).
    Rejoin {
        reason: String,
        snapshot: Option<Manifest>,
    },
}

/// Decides how this member begins, given the last effect its opened state
/// holds (`local_last`); retries an unreachable cluster for
/// [`PREPARE_TIMEOUT`].
///
/// # Errors
///
/// The cluster refuses the group's requests, or does not answer in time.
pub async fn prepare(
    replica: &Replica,
    cluster: &GroupCluster,
    local_last: u64,
) -> anyhow::Result<Plan> {
    let started = std::time::Instant::now();
    loop {
        match try_prepare(replica, cluster, local_last).await {
            Ok(plan) => return Ok(plan),
            Err(GroupError::Transient(error)) if started.elapsed() < PREPARE_TIMEOUT => {
                tracing::warn!(%error, "the replica group's indices do not answer yet; retrying");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(error) => anyhow::bail!("cannot start as a member of the replica group: {error}"),
        }
    }
}

async fn try_prepare(
    replica: &Replica,
    cluster: &GroupCluster,
    local_last: u64,
) -> Result<Plan, GroupError> {
    cluster.ensure_indices().await?;
    let mark = replica.state_dir.as_deref().and_then(read_mark);
    let control = cluster.control().await?;
    let group_uuid = control
        .as_ref()
        .and_then(|(document, _)| document["group_uuid"].as_str().map(str::to_string));
    let published = latest(cluster)
        .await?
        .map(|(manifest, _)| manifest)
        .filter(|manifest| Some(&manifest.head.group_uuid) == group_uuid.as_ref());
    let rejoin = |reason: &str| Plan::Rejoin {
        reason: reason.to_string(),
        snapshot: published.clone(),
    };
    if local_last == 0 && mark.is_none() {
        return Ok(match &published {
            Some(_) => rejoin("no state: from the group's published snapshot"),
            None => Plan::Follow(None),
        });
    }
    let Some(uuid) = group_uuid else {
        return Ok(rejoin(
            "the group has no control document: its indices are new, this state is of another chain",
        ));
    };
    let Some(mark) = mark.filter(|mark| mark.head.group_uuid == uuid) else {
        return Ok(rejoin("the state holds no place in this group's chain"));
    };
    if local_last < mark.head.last_seq {
        return Ok(rejoin("the state's log ends before its place in the chain"));
    }
    match check_chain(cluster, &mark, local_last, published.as_ref()).await? {
        None => {
            let follower = Follower {
                skip_through: local_last,
                ..Follower::after(&mark.head)
            };
            Ok(Plan::Follow(Some(follower)))
        }
        Some(reason) => Ok(rejoin(&reason)),
    }
}

/// `None` when the chain after `mark` holds every effect of the state (up
/// to `local_last`) as the state holds it; else why not.
async fn check_chain(
    cluster: &GroupCluster,
    mark: &Mark,
    local_last: u64,
    published: Option<&Manifest>,
) -> Result<Option<String>, GroupError> {
    let (mut next, mut prev_digest) = (mark.head.record + 1, mark.head.digest.clone());
    let mut chain_last = mark.head.last_seq;
    // The mark's own record must still be the one applied: a record that
    // never landed may have been replaced by another leader's.
    if mark.head.record > 0 {
        match cluster.record(mark.head.record).await? {
            Some(source) => {
                let same = Record::from_document(&source, &mark.head.group_uuid, cluster.key())
                    .is_ok_and(|record| record.digest == mark.head.digest);
                if !same {
                    return Ok(Some(format!(
                        "record {} is not the one this member holds (another leader wrote it)",
                        mark.head.record
                    )));
                }
            }
            None if published.is_some_and(|manifest| manifest.head.record >= mark.head.record) => {}
            None => {
                return Ok(Some(format!(
                    "record {} this member holds is not in the log",
                    mark.head.record
                )));
            }
        }
    }
    if published.is_some_and(|manifest| manifest.head.record >= next)
        && cluster.record(next).await?.is_none()
    {
        return Ok(Some(format!(
            "record {next} is no longer in the log (truncated behind a published snapshot)"
        )));
    }
    loop {
        if chain_last >= local_last {
            return Ok(None);
        }
        let found = cluster.records(next, WINDOW).await?;
        let window_full = found.iter().all(Option::is_some);
        for source in found.into_iter().map_while(|source| source) {
            let record = match Record::from_document(&source, &mark.head.group_uuid, cluster.key())
            {
                Ok(record) => record,
                Err(reason) => return Ok(Some(format!("record {next}: {reason}"))),
            };
            if record.prev_digest != prev_digest {
                return Ok(Some(format!(
                    "record {next} does not follow the state's place"
                )));
            }
            let overlaps = record.first_seq <= local_last && record.first_seq <= record.last_seq;
            if mark.led && overlaps && record.writer != mark.node {
                return Ok(Some(format!(
                    "this member led, and record {next} of {} holds effects where its own log has others",
                    record.writer
                )));
            }
            chain_last = chain_last.max(record.last_seq);
            if chain_last >= local_last {
                return Ok(None);
            }
            prev_digest = record.digest;
            next += 1;
        }
        if !window_full {
            break;
        }
    }
    if published.is_some_and(|manifest| manifest.head.record >= next) {
        return Ok(Some(format!(
            "record {next} is no longer in the log (truncated behind a published snapshot)"
        )));
    }
    Ok(Some(format!(
        "the state holds effects up to {local_last}, the chain only up to {chain_last}: they never reached a record"
    )))
}

/// Moves the state files of `dir` (snapshots, log segments, the mark) into
/// a new `set-aside-<ms>` directory inside it; its path.
///
/// # Errors
///
/// The directory or a file that cannot be moved.
pub fn set_aside(dir: &Path) -> std::io::Result<PathBuf> {
    let aside = dir.join(format!("set-aside-{}", crate::units::now_millis()));
    std::fs::create_dir_all(&aside)?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let state = name.starts_with("snapshot-") || name.starts_with("log-") || name == MARK_FILE;
        if state && entry.path().is_file() {
            std::fs::rename(entry.path(), aside.join(&name))?;
        }
    }
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_reads_back_and_a_state_is_set_aside_whole() {
        let dir = std::env::temp_dir().join(format!("neardup-join-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mark = Mark {
            head: Head {
                group_uuid: "u".into(),
                record: 7,
                digest: "d".into(),
                last_seq: 42,
            },
            node: "a-1".into(),
            led: true,
        };
        std::fs::write(dir.join(MARK_FILE), mark.to_json().to_string()).unwrap();
        assert_eq!(read_mark(&dir), Some(mark));
        std::fs::write(dir.join("snapshot-00000000000000000042"), b"s").unwrap();
        std::fs::write(dir.join("log-00000000000000000043"), b"l").unwrap();
        std::fs::write(dir.join("LOCK"), b"").unwrap();
        let aside = set_aside(&dir).unwrap();
        let names = |path: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(path)
                .unwrap()
                .flatten()
                .filter(|entry| entry.path().is_file())
                .map(|entry| entry.file_name().to_string_lossy().to_string())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(&dir), vec!["LOCK".to_string()]);
        assert_eq!(names(&aside).len(), 3);
        assert_eq!(read_mark(&dir), None);
        std::fs::write(dir.join(MARK_FILE), "{not json").unwrap();
        assert_eq!(read_mark(&dir), None, "a damaged mark is no mark");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
