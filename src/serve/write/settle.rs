//! The cluster's answer ([`super::answer`]) settles the counts.
//!
//! A document was placed and counted before it was forwarded (so that
//! concurrent copies meet in one class); the answer says whether it was
//! stored. A refused item is taken back; a delete, or an unstamped write
//! over a known id, takes the old document's count back ([`Ledger`]).
//! `neardup_stamped_documents_total` and `neardup_unstamped_documents_total`
//! count here, from what the cluster stored, not at placement.

use serde_json::Value;

use super::answer::Outcome;
use super::persist;
use super::place::Stamped;
use super::request::WriteRequest;
use super::stamp_mapping;
use crate::bulk::stamping::StampTarget;
use crate::bulk::{ActionKind, BulkItem};
use crate::ledger::{DocumentKey, Ledger};
use crate::serve::metrics::Metrics;
use crate::serve::off_runtime::off_the_runtime;
use crate::serve::sidecar::Sidecar;
use crate::units::Fingerprint;
use crate::upstream::credentials;

/// Settles the items of a bulk request (or of one chunk of it) from their
/// answered items, and logs that.
pub(super) async fn items(
    write: &WriteRequest<'_>,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    answered: &[Value],
) {
    let path_index = write.path_index.as_deref();
    let (stored, seq) = off_the_runtime(|| {
        write
            .sidecar
            .ledger
            .write(|ledger| answered_items(ledger, items, stamped, answered, path_index))
    });
    count_stored(write.sidecar, &stored);
    let stamped_indices = stored
        .iter()
        .zip(answered)
        .filter(|(stored, _)| **stored == StoredAs::Stamped)
        .filter_map(|(_, answer)| Outcome::of_item(answer)?.index);
    check_stamp_mapping_later(write, stamped_indices);
    persist::after_answer(write.sidecar, seq).await;
}

/// Settles a single-document request, and logs that.
pub(super) async fn document(write: &WriteRequest<'_>, settlement: &Settlement<'_>) {
    let sidecar = write.sidecar;
    let (stored, seq) = sidecar.ledger.write(|ledger| settle(ledger, settlement));
    count_stored(sidecar, &[stored]);
    if stored == StoredAs::Stamped {
        let index = settlement
            .outcome
            .as_ref()
            .and_then(|outcome| outcome.index)
            .or(settlement.index);
        check_stamp_mapping_later(write, index);
    }
    persist::after_answer(sidecar, seq).await;
}

/// Checks, in a task of its own, the stamp mapping of the indices not
/// checked yet ([`stamp_mapping`]).
fn check_stamp_mapping_later<'a>(
    write: &WriteRequest<'_>,
    stored: impl IntoIterator<Item = &'a str>,
) {
    let new = write.sidecar.stamp_mapping.claim(stored);
    if new.is_empty() {
        return;
    }
    let sidecar = write.shared.clone();
    let headers = credentials(&write.headers);
    tokio::spawn(async move {
        stamp_mapping::check(
            &sidecar.stamp_mapping,
            &sidecar.upstream,
            &headers,
            &sidecar.root_field,
            new,
        )
        .await;
    });
}

/// What the cluster stored of one item, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StoredAs {
    Stamped,
    Unstamped,
    Nothing,
}

pub(super) fn count_stored(sidecar: &Sidecar, stored: &[StoredAs]) {
    let stamped = stored.iter().filter(|&&s| s == StoredAs::Stamped).count();
    let unstamped = stored.iter().filter(|&&s| s == StoredAs::Unstamped).count();
    Metrics::add(&sidecar.metrics.stamped_documents, stamped as u64);
    Metrics::add(&sidecar.metrics.unstamped_documents, unstamped as u64);
}

/// What one item was sent with and what the cluster answered.
pub(super) struct Settlement<'a> {
    pub kind: ActionKind,
    pub stamp: Option<(StampTarget, Fingerprint)>,
    pub outcome: Option<Outcome<'a>>,
    /// `_index` / `_id` from the request, when the answer lacks them.
    pub index: Option<&'a str>,
    pub id: Option<&'a str>,
}

/// Settles each item of a bulk request from its answered item.
fn answered_items(
    ledger: &mut Ledger,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    answered: &[Value],
    path_index: Option<&str>,
) -> Vec<StoredAs> {
    let mut stored = Vec::with_capacity(items.len());
    for ((item, stamp), answer) in items.iter().zip(stamped).zip(answered) {
        stored.push(settle(
            ledger,
            &Settlement {
                kind: item.kind,
                stamp: stamp.as_ref().and_then(Stamped::placed),
                outcome: Outcome::of_item(answer),
                index: item.index.as_deref().or(path_index),
                id: item.id.as_deref(),
            },
        ));
    }
    stored
}

/// Applies one item's outcome to the counts.
fn settle(ledger: &mut Ledger, settlement: &Settlement<'_>) -> StoredAs {
    let outcome = settlement.outcome.as_ref();
    let key = outcome.and_then(|outcome| {
        let index = outcome.index.or(settlement.index)?;
        let id = outcome.id.or(settlement.id)?;
        Some(DocumentKey::new(index, id))
    });
    let status = outcome.and_then(|outcome| outcome.status).unwrap_or(0);
    let result = outcome.and_then(|outcome| outcome.result);
    match settlement.stamp {
        Some((target, fingerprint)) => {
            if target.stored(status, result) {
                match key {
                    Some(key) => ledger.stored(key, fingerprint),
                    None => ledger.stored_untracked(fingerprint),
                }
                StoredAs::Stamped
            } else {
                ledger.not_stored(fingerprint);
                StoredAs::Nothing
            }
        }
        None => {
            let succeeded = outcome.is_some_and(Outcome::succeeded);
            // The document under this key is gone, or replaced by one
            // without a stamp: its count goes.
            let removes_stamped = match settlement.kind {
                ActionKind::Delete | ActionKind::Update => result == Some("deleted"),
                ActionKind::Index | ActionKind::Create => true,
            };
            if succeeded
                && removes_stamped
                && let Some(key) = key
            {
                ledger.deleted(key);
            }
            let writes_a_source = matches!(settlement.kind, ActionKind::Index | ActionKind::Create);
            if succeeded && writes_a_source {
                StoredAs::Unstamped
            } else {
                StoredAs::Nothing
            }
        }
    }
}
