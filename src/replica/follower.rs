//! Reading the chain: records fetched by realtime `_mget`, checked and
//! applied in order.
//!
//! Motivation: a standby must hold, at any time, a prefix of the chain, so
//! that when it takes over its forest has everything any leader
//! acknowledged.
//!
//! Design: from the next record number, a window of [`WINDOW`] ids by
//! realtime `_mget`; the found prefix is applied in order, stopping at the
//! first missing id. Each record must name the digest of the one applied
//! before it (record 1 names the group's uuid) and continue its sequence
//! numbers; its effects go to [`ReplicaHost::apply`] (the recovery code,
//! under the ledger's lock). [`Follower::read_to_end`] repeats until a
//! window comes back short.
//!
//! A member that starts from a state of its own (its state directory, or
//! a snapshot the leader published) starts after a record whose effects
//! that state holds, and skips the effects of later records it holds too
//! (`skip_through`): a snapshot or a local log need not end at a record's
//! end.
//!
//! Truncation deletes records behind a published snapshot, and a deleted
//! number can be created again (by a deposed leader resuming a create it
//! had prepared). So a window that found records is only applied after
//! the manifest, read after the records, shows they lie above the
//! truncation point: the manifest is written before anything is deleted,
//! so a record created again after a deletion is always seen below it.
//! The fence does not depend on the record still existing.
//!
//! A record that does not verify (altered, or written without the group's
//! secret) is logged and read as not written yet: the leader replaces a
//! forgery when it creates that number.
//!
//! Consequences: a record that does not follow (another digest, a gap in
//! sequence numbers) is an error that stops the member from following: it
//! never applies a record out of place. A standby that fell below the
//! truncation point stops following and rejoins on restart
//! (`super::join`).

use super::cluster::{GroupCluster, GroupError};
use super::host::ReplicaHost;
use super::record::{Kind, Record};
use super::state::{Head, Replica};

/// Records asked for in one `_mget`.
pub const WINDOW: u64 = 16;

/// Why following stopped.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error(transparent)]
    Cluster(#[from] GroupError),
    /// A record that cannot be applied: damaged, or not the next one.
    #[error("{0}")]
    Chain(String),
}

/// Where this member is in the chain.
#[derive(Debug, Clone)]
pub struct Follower {
    pub group_uuid: String,
    /// The next record to apply.
    pub next: u64,
    /// The digest of the last record applied.
    pub prev_digest: String,
    /// The epoch of the last record applied.
    pub epoch: u64,
    /// Effects up to this sequence number are in the member's state
    /// already: skipped, not applied again.
    pub skip_through: u64,
}

impl Follower {
    pub fn new(group_uuid: &str) -> Follower {
        Follower {
            group_uuid: group_uuid.to_string(),
            next: 1,
            prev_digest: group_uuid.to_string(),
            epoch: 0,
            skip_through: 0,
        }
    }

    /// Following on after `head`, whose effects (up to `head.last_seq`)
    /// the member's state holds.
    pub fn after(head: &Head) -> Follower {
        Follower {
            group_uuid: head.group_uuid.clone(),
            next: head.record + 1,
            prev_digest: head.digest.clone(),
            epoch: 0,
            skip_through: head.last_seq,
        }
    }

    /// One window; how many records were applied.
    ///
    /// # Errors
    ///
    /// No answer from the cluster, or a record that cannot be applied.
    pub async fn poll(
        &mut self,
        cluster: &GroupCluster,
        replica: &Replica,
        host: &dyn ReplicaHost,
    ) -> Result<u64, FollowError> {
        let found = cluster.records(self.next, WINDOW).await?;
        if found.first().is_some_and(Option::is_some)
            && let Some((manifest, _)) = super::snapshots::latest(cluster).await?
            && manifest.truncated_below() > self.next
        {
            return Err(FollowError::Chain(format!(
                "record {} is below the log's truncation point (record {}, behind the snapshot published at record {}): it may have been created again after its deletion; rejoin from the published snapshot",
                self.next,
                manifest.truncated_below(),
                manifest.head.record
            )));
        }
        let mut applied = 0;
        for source in found.into_iter().map_while(|source| source) {
            let record = match Record::from_document(&source, &self.group_uuid, cluster.key()) {
                Ok(record) => record,
                Err(reason) => {
                    // Never applied: read as not written yet. The leader
                    // (or the next one, at its epoch record) replaces a
                    // forgery at this number (`GroupCluster::create_record`).
                    tracing::error!(
                        record = self.next,
                        %reason,
                        "a record of the group's log is refused, not applied"
                    );
                    break;
                }
            };
            self.apply(&record, replica, host)?;
            applied += 1;
        }
        Ok(applied)
    }

    /// Polls until a window comes back short (the end of the chain as of
    /// now); how many records were applied.
    ///
    /// # Errors
    ///
    /// As [`Follower::poll`].
    pub async fn read_to_end(
        &mut self,
        cluster: &GroupCluster,
        replica: &Replica,
        host: &dyn ReplicaHost,
    ) -> Result<u64, FollowError> {
        let mut applied = 0;
        loop {
            let window = self.poll(cluster, replica, host).await?;
            applied += window;
            if window < WINDOW {
                return Ok(applied);
            }
        }
    }

    /// This member wrote `record`, an epoch record (no effects), as the
    /// next one: the chain's position moves past it.
    pub fn passed_epoch_record(&mut self, record: &Record, replica: &Replica) {
        self.passed(record, replica, record.last_seq);
    }

    /// The chain's position moves past `record`, the member's state
    /// holding effects up to `last_seq`.
    fn passed(&mut self, record: &Record, replica: &Replica, last_seq: u64) {
        self.next = record.number + 1;
        self.prev_digest.clone_from(&record.digest);
        self.epoch = record.epoch;
        replica.set_head(Head {
            group_uuid: self.group_uuid.clone(),
            record: record.number,
            digest: record.digest.clone(),
            last_seq,
        });
    }

    /// Applies `record`, which must be the next one.
    ///
    /// # Errors
    ///
    /// Not the next record, or its effects do not decode or follow.
    pub fn apply(
        &mut self,
        record: &Record,
        replica: &Replica,
        host: &dyn ReplicaHost,
    ) -> Result<(), FollowError> {
        if record.number != self.next {
            return Err(FollowError::Chain(format!(
                "read record {} where {} was expected",
                record.number, self.next
            )));
        }
        if record.prev_digest != self.prev_digest {
            return Err(FollowError::Chain(format!(
                "record {} does not follow the record applied before it (digest)",
                record.number
            )));
        }
        if record.last_seq > self.skip_through {
            let mut effects = match record.kind {
                Kind::Effects => record.effects().map_err(FollowError::Chain)?,
                Kind::Epoch => Vec::new(),
            };
            let mut first_seq = record.first_seq;
            if first_seq <= self.skip_through {
                // The member's state holds the start of this record.
                let held = (self.skip_through + 1 - first_seq) as usize;
                effects.drain(..held.min(effects.len()));
                first_seq = self.skip_through + 1;
            }
            host.apply(first_seq, record.last_seq, effects)
                .map_err(FollowError::Chain)?;
        }
        self.passed(record, replica, replica.last_seq());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use parking_lot::Mutex;

    use super::*;
    use crate::config::ReplicaOptions;
    use crate::ledger::Effect;
    use crate::replica::record::encode_frames;

    /// Records what it is given to apply.
    #[derive(Default)]
    struct Applied(Mutex<Vec<(u64, u64, usize)>>);

    impl ReplicaHost for Applied {
        fn apply(&self, first: u64, last: u64, effects: Vec<Effect>) -> Result<(), String> {
            self.0.lock().push((first, last, effects.len()));
            Ok(())
        }
        fn took_over(&self) {}
        fn sync_local(&self) -> Result<(), String> {
            Ok(())
        }
    }

    fn test_key() -> crate::replica::auth::GroupKey {
        crate::replica::auth::GroupKey::new(&crate::config::GroupSecret::new(
            b"0123456789abcdef".to_vec(),
        ))
    }

    fn record(number: u64, first_seq: u64, count: u64, prev: &str) -> Record {
        let mut frames = Vec::new();
        let effects = vec![Effect::KeysSwept; count as usize];
        encode_frames(first_seq, &effects, &mut frames);
        Record::new(
            &test_key(),
            number,
            1,
            "a-1",
            Kind::Effects,
            first_seq,
            first_seq + count - 1,
            prev,
            frames,
        )
    }

    #[test]
    fn a_member_starting_from_its_own_state_skips_what_it_holds() {
        let replica = Replica::new(
            ReplicaOptions {
                group: "news".into(),
                name: "b".into(),
                lease: Duration::from_secs(2),
                advertise: None,
                secret: crate::config::GroupSecret::new(b"0123456789abcdef".to_vec()),
                write_wait: Duration::from_secs(60),
            },
            "http://b".into(),
        );
        let one = record(1, 1, 3, "uuid");
        let two = record(2, 4, 4, &one.digest);
        let three = record(3, 8, 2, &two.digest);
        // Its state holds record 1 and the first two effects of record 2
        // (a snapshot or a local log need not end at a record's end).
        let head = Head {
            group_uuid: "uuid".into(),
            record: 1,
            digest: one.digest.clone(),
            last_seq: 5,
        };
        replica.start_from(head.clone());
        let mut follower = Follower::after(&head);
        let host = Applied::default();
        // Record 1 again is not the next one.
        assert!(follower.apply(&one, &replica, &host).is_err());
        follower.apply(&two, &replica, &host).unwrap();
        follower.apply(&three, &replica, &host).unwrap();
        assert_eq!(*host.0.lock(), vec![(6, 7, 2), (8, 9, 2)]);
        // (The sidecar's host moves the replica's sequence number on.)
        assert_eq!(replica.head().record, 3);
        // A record wholly held is skipped, not applied again.
        let mut held = Follower {
            skip_through: 9,
            ..Follower::after(&head)
        };
        let host = Applied::default();
        held.apply(&two, &replica, &host).unwrap();
        held.apply(&three, &replica, &host).unwrap();
        assert!(host.0.lock().is_empty());
        // A record from another chain does not follow.
        let stray = record(4, 10, 1, "another");
        assert!(follower.apply(&stray, &replica, &host).is_err());
    }
}
