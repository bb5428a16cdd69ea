//! The cluster's answer, read through typed structs, settles the counts.
//!
//! A document was placed and counted before it was forwarded (so that
//! concurrent copies meet in one class); the answer says whether it was
//! stored. A refused item is taken back; a delete, or an unstamped write
//! over a known id, takes the old document's count back ([`Ledger`]).

use serde::Deserialize;
use serde_json::Value;

use super::Stamped;
use crate::bulk::stamping::StampTarget;
use crate::bulk::{ActionKind, BulkItem};
use crate::ledger::{DocumentKey, Ledger};
use crate::units::Fingerprint;

/// The parts of a bulk answer the sidecar reads. Items stay raw: they go
/// back to the client as they came.
#[derive(Debug, Deserialize)]
pub(super) struct BulkAnswer {
    #[serde(default)]
    pub took: u64,
    pub items: Vec<Value>,
}

/// One document's outcome: a bulk item's inner object, or the answer of a
/// single-document API.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Outcome<'a> {
    #[serde(rename = "_index", borrow, default)]
    pub index: Option<&'a str>,
    #[serde(rename = "_id", borrow, default)]
    pub id: Option<&'a str>,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(borrow, default)]
    pub result: Option<&'a str>,
}

impl<'a> Outcome<'a> {
    /// A bulk item: `{"<action>": {…}}`.
    pub fn of_item(item: &'a Value) -> Option<Outcome<'a>> {
        let inner = item.as_object()?.values().next()?;
        Outcome::deserialize(inner).ok()
    }

    /// A single-document answer, whose status is the HTTP status.
    pub fn of_document(answer: &'a Value, status: u16) -> Option<Outcome<'a>> {
        let mut outcome = Outcome::deserialize(answer).ok()?;
        outcome.status = Some(status);
        Some(outcome)
    }

    pub fn succeeded(&self) -> bool {
        self.status
            .is_some_and(|status| (200..300).contains(&status))
    }
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

/// Takes back every stamped document (nothing reached the cluster).
pub(super) fn nothing_stored(ledger: &mut Ledger, stamped: &[Option<Stamped>]) {
    for stamp in stamped.iter().flatten() {
        ledger.not_stored(stamp.fingerprint);
    }
}

/// Settles each item of a bulk request from its answered item.
pub(super) fn answered_items(
    ledger: &mut Ledger,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    answered: &[Value],
    path_index: Option<&str>,
) {
    for ((item, stamp), answer) in items.iter().zip(stamped).zip(answered) {
        settle(
            ledger,
            &Settlement {
                kind: item.kind,
                stamp: stamp.as_ref().map(Stamped::placed),
                outcome: Outcome::of_item(answer),
                index: item.index.as_deref().or(path_index),
                id: item.id.as_deref(),
            },
        );
    }
}

/// Applies one item's outcome to the counts.
pub(super) fn settle(ledger: &mut Ledger, settlement: &Settlement<'_>) {
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
            } else {
                ledger.not_stored(fingerprint);
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_are_read_from_items_and_single_answers() {
        let item =
            json!({"index": {"_index": "news", "_id": "1", "status": 201, "result": "created"}});
        let outcome = Outcome::of_item(&item).unwrap_or_default();
        assert_eq!(outcome.index, Some("news"));
        assert_eq!(outcome.id, Some("1"));
        assert_eq!(outcome.status, Some(201));
        assert_eq!(outcome.result, Some("created"));
        assert!(outcome.succeeded());
        let failed = json!({"create": {"_index": "news", "_id": "1", "status": 409, "error": {"type": "version_conflict_engine_exception"}}});
        assert!(!Outcome::of_item(&failed).is_some_and(|outcome| outcome.succeeded()));
        let single = json!({"_index": "news", "_id": "2", "result": "updated"});
        let outcome = Outcome::of_document(&single, 200).unwrap_or_default();
        assert_eq!((outcome.id, outcome.status), (Some("2"), Some(200)));
        assert!(Outcome::of_item(&json!("not an item")).is_none());
    }
}
