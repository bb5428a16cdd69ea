//! Writes whose answer never came: read back from the cluster, not guessed.
//!
//! Motivation: when the sidecar's request times out, its connection breaks
//! after the body was sent, or the answer cannot be read, the cluster may
//! or may not have stored the stamped documents. Taking their counts back
//! undercounts what did land (and removing their nodes would leave stamps
//! naming no class); keeping them overcounts what did not, and the client's
//! retry counts again.
//!
//! Design: the items stay placed and counted (pending) while a task reads
//! them back a few times ([`READ_BACK_AFTER`]), so a write the cluster is
//! still working on has time to land:
//!
//! - an item with an `_id`: `_mget` (realtime, only the fingerprint field).
//!   The key holding this placement's fingerprint → stored under it, as if
//!   the answer had said so; anything else at the last read → not stored;
//! - a stamped item without an `_id` (the cluster would have picked it):
//!   the index is refreshed and searched for the fingerprint; a document
//!   with it under a key the ledger does not know → stored under that key;
//! - a delete or unstamped write: a key found empty, or holding a document
//!   without a stamp, is taken out of the counts.
//!
//! At the last read, what is still unknown (the cluster cannot be asked)
//! gets the crash rule ([`crate::ledger::Ledger::resolve_in_doubt`]): count
//! taken back, node kept. Items whose request never reached the cluster
//! (connection refused) are not in doubt: the caller takes them back.
//!
//! After a crash the same question is asked with what the state knows:
//! recovery uncounts the placements in doubt (keys are learnt only from
//! answers), and once the sidecar runs, the cluster is searched for their
//! stamps ([`read_back_recovered`]); a document found with one under a key
//! that does not hold it is counted again, at most once per placement.
//!
//! Consequences: counts of writes in doubt are right within the last read
//! (about ten seconds); a retry that stores the same text under the same
//! key in the meantime counts once, whichever settles first (the ledger's
//! key table, [`crate::ledger::Ledger::stored`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, Method};
use serde_json::{Value, json};

use super::persist;
use super::place::Stamped;
use super::request::WriteRequest;
use super::settle::{StoredAs, count_stored};
use crate::bulk::{ActionKind, BulkItem};
use crate::ledger::{DocumentKey, Ledger};
use crate::serve::metrics::Metrics;
use crate::serve::sidecar::Sidecar;
use crate::units::{Fingerprint, format_fingerprint, now_millis, parse_fingerprint};
use crate::upstream::{Payload, credentials, encode_component};

/// Delays before each read-back, from when the write gave up.
pub(super) const READ_BACK_AFTER: [Duration; 3] = [
    Duration::from_millis(500),
    Duration::from_secs(2),
    Duration::from_secs(8),
];

/// One item of a write whose answer never came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Doubt {
    pub kind: ActionKind,
    /// The index as the request named it (an alias reads back as well).
    pub index: Option<String>,
    pub id: Option<String>,
    /// Where it was placed, when it was stamped.
    pub stamp: Option<Fingerprint>,
}

impl Doubt {
    /// The items of a bulk request (or of one chunk) that can change the
    /// counts: stamped ones, and any with an `_id`.
    pub fn of_items(
        items: &[BulkItem],
        stamped: &[Option<Stamped>],
        path_index: Option<&str>,
    ) -> Vec<Doubt> {
        items
            .iter()
            .zip(stamped)
            .filter_map(|(item, stamp)| {
                let stamp = stamp.as_ref().and_then(|stamp| stamp.fingerprint);
                let index = item.index.as_deref().or(path_index).map(str::to_string);
                (stamp.is_some() || item.id.is_some()).then(|| Doubt {
                    kind: item.kind,
                    index,
                    id: item.id.clone(),
                    stamp,
                })
            })
            .collect()
    }
}

/// What the cluster holds under one key, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ReadBack {
    /// A document, with its stamp (none when it has no readable one).
    Holds {
        key: DocumentKey,
        stamp: Option<Fingerprint>,
    },
    /// No document (or no such index).
    Missing { key: DocumentKey },
    /// The cluster could not tell (no answer, another error).
    Unknown,
}

/// Reads the `stamped` items of `write` whose answer never came back from
/// the cluster, in a task of their own, with the client's credentials.
pub(super) fn read_back_later(
    write: &WriteRequest<'_>,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
) {
    let doubts = Doubt::of_items(items, stamped, write.path_index.as_deref());
    resolve_later(write.shared.clone(), credentials(&write.headers), doubts);
}

/// Reads `doubts` back in a task of their own (shutdown waits for it) and
/// settles each one once the cluster tells.
fn resolve_later(sidecar: Arc<Sidecar>, headers: HeaderMap, doubts: Vec<Doubt>) {
    if doubts.is_empty() {
        return;
    }
    Metrics::add(&sidecar.metrics.in_doubt_documents, doubts.len() as u64);
    tokio::spawn(async move {
        let _running = sidecar.admission.write_started();
        resolve(&sidecar, &headers, doubts).await;
    });
}

async fn resolve(sidecar: &Sidecar, headers: &HeaderMap, mut doubts: Vec<Doubt>) {
    for (attempt, delay) in READ_BACK_AFTER.iter().enumerate() {
        tokio::time::sleep(*delay).await;
        let last = attempt + 1 == READ_BACK_AFTER.len();
        let read = read_back(sidecar, headers, &doubts).await;
        let (stored, seq) = crate::serve::off_runtime::off_the_runtime(|| {
            sidecar.ledger.write(|ledger| {
                let mut unresolved = Vec::new();
                let mut stored = Vec::new();
                for (doubt, read) in doubts.drain(..).zip(read) {
                    match settle(ledger, &doubt, &read, last) {
                        Some(outcome) => stored.push(outcome),
                        None => unresolved.push(doubt),
                    }
                }
                doubts = unresolved;
                stored
            })
        });
        count_stored(sidecar, &stored);
        persist::after_answer(sidecar, seq).await;
        if doubts.is_empty() {
            return;
        }
    }
}

/// Settles one doubt from what was read back; what the cluster stored, or
/// `None` while it is unsettled (at the `last` read, it always is).
pub(super) fn settle(
    ledger: &mut Ledger,
    doubt: &Doubt,
    read: &ReadBack,
    last: bool,
) -> Option<StoredAs> {
    match (doubt.stamp, read) {
        (Some(stamp), ReadBack::Holds { key, stamp: held }) if *held == Some(stamp) => {
            ledger.stored(*key, stamp);
            Some(StoredAs::Stamped)
        }
        (Some(stamp), read) => {
            if !last {
                return None;
            }
            ledger.not_found(stamp);
            take_out_if_unstamped(ledger, read);
            Some(StoredAs::Nothing)
        }
        (None, ReadBack::Missing { .. } | ReadBack::Holds { stamp: None, .. }) => {
            take_out_if_unstamped(ledger, read);
            Some(StoredAs::Nothing)
        }
        (None, _) => last.then_some(StoredAs::Nothing),
    }
}

/// A key found empty, or holding a document without a stamp, no longer
/// holds a counted document.
fn take_out_if_unstamped(ledger: &mut Ledger, read: &ReadBack) {
    match read {
        ReadBack::Missing { key } | ReadBack::Holds { key, stamp: None } => ledger.deleted(*key),
        _ => {}
    }
}

/// One read of every doubt, in order.
async fn read_back(sidecar: &Sidecar, headers: &HeaderMap, doubts: &[Doubt]) -> Vec<ReadBack> {
    let mut read = vec![ReadBack::Unknown; doubts.len()];
    let by_id: Vec<usize> = (0..doubts.len())
        .filter(|&position| doubts[position].id.is_some() && doubts[position].index.is_some())
        .collect();
    if !by_id.is_empty() {
        let found = read_by_id(sidecar, headers, by_id.iter().map(|&at| &doubts[at])).await;
        for (at, found) in by_id.iter().zip(found) {
            read[*at] = found;
        }
    }
    // Without an id: per index, one refresh and one search for all stamps.
    let mut by_index: BTreeMap<&str, Vec<(usize, Fingerprint)>> = BTreeMap::new();
    for (position, doubt) in doubts.iter().enumerate() {
        if let (None, Some(index), Some(stamp)) = (&doubt.id, doubt.index.as_deref(), doubt.stamp) {
            by_index.entry(index).or_default().push((position, stamp));
        }
    }
    for (index, wanted) in by_index {
        for (position, found) in read_by_stamp(sidecar, headers, index, &wanted).await {
            read[position] = found;
        }
    }
    read
}

/// `_mget` of the doubts' keys, realtime, only the stamp field.
async fn read_by_id<'a>(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    doubts: impl Iterator<Item = &'a Doubt>,
) -> Vec<ReadBack> {
    let requested: Vec<(&str, &str)> = doubts
        .filter_map(|doubt| Some((doubt.index.as_deref()?, doubt.id.as_deref()?)))
        .collect();
    let docs: Vec<Value> = requested
        .iter()
        .map(|(index, id)| json!({ "_index": index, "_id": id }))
        .collect();
    let path = format!(
        "/_mget?realtime=true&_source_includes={}",
        encode_component(&sidecar.simhash_field)
    );
    let Some(answered) = mget(sidecar, headers, &path, docs, "writes in doubt").await else {
        return vec![ReadBack::Unknown; requested.len()];
    };
    requested
        .iter()
        .zip(&answered)
        .map(|(&(index, id), doc)| read_doc(doc, index, id, &sidecar.simhash_field))
        .collect()
}

/// `POST {path}` (an `_mget`, realtime) of `docs`: one answered document
/// per requested one, in order, or `None` when the cluster cannot tell
/// (logged, naming `what` was read).
pub(super) async fn mget(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    path: &str,
    docs: Vec<Value>,
    what: &str,
) -> Option<Vec<Value>> {
    let requested = docs.len();
    let answer = sidecar
        .upstream
        .call_json(
            Method::POST,
            path,
            headers,
            Payload::Json(&json!({ "docs": docs })),
        )
        .await;
    match answer {
        Ok(mut answer) => match answer["docs"].take() {
            Value::Array(answered) if answered.len() == requested => Some(answered),
            _ => {
                tracing::warn!(what, "an _mget answer without one document per request");
                None
            }
        },
        Err(error) => {
            tracing::warn!(%error, what, "cannot read documents back");
            None
        }
    }
}

/// One document of an `_mget` answer. Its key uses the concrete index the
/// cluster names (the request may have named an alias).
pub(super) fn read_doc(doc: &Value, index: &str, id: &str, stamp_field: &str) -> ReadBack {
    let key = DocumentKey::new(doc["_index"].as_str().unwrap_or(index), id);
    match doc["found"].as_bool() {
        Some(true) => ReadBack::Holds {
            key,
            stamp: doc["_source"][stamp_field]
                .as_str()
                .and_then(parse_fingerprint),
        },
        Some(false) => ReadBack::Missing { key },
        None if doc["error"]["type"] == "index_not_found_exception" => ReadBack::Missing { key },
        None => ReadBack::Unknown,
    }
}

/// Stamped writes without an `_id`, all to `index`: the index refreshed
/// once and searched once for their stamps; each finds a document with its
/// stamp under a key the ledger does not hold with it (each key claimed
/// once). Returns a read per `(position, stamp)` given.
async fn read_by_stamp(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    index: &str,
    wanted: &[(usize, Fingerprint)],
) -> Vec<(usize, ReadBack)> {
    let unknown = || {
        wanted
            .iter()
            .map(|&(position, _)| (position, ReadBack::Unknown))
            .collect()
    };
    let refresh = format!("/{}/_refresh", encode_component(index));
    if let Err(error) = sidecar
        .upstream
        .call_json(Method::POST, &refresh, headers, Payload::Empty)
        .await
    {
        tracing::warn!(%error, "cannot refresh to read writes in doubt back");
        return unknown();
    }
    let stamps: BTreeSet<String> = wanted
        .iter()
        .map(|&(_, stamp)| format_fingerprint(stamp))
        .collect();
    let field = sidecar.simhash_field.as_str();
    let query = json!({
        // Copies already counted under other keys may share a stamp.
        "size": (wanted.len() * 4 + 100).min(10_000),
        "_source": [field],
        "query": { "terms": { field: stamps } },
    });
    let answer = match sidecar.upstream.search(Some(index), headers, &query).await {
        Ok(answer) if answer.status.is_success() => answer.json(),
        _ => None,
    };
    let Some(answer) = answer else {
        return unknown();
    };
    let mut hits: Vec<(DocumentKey, Fingerprint)> = crate::upstream::hits(&answer)
        .iter()
        .filter_map(|hit| {
            let key = DocumentKey::new(hit["_index"].as_str()?, hit["_id"].as_str()?);
            Some((key, parse_fingerprint(hit["_source"][field].as_str()?)?))
        })
        .collect();
    let ledger = sidecar.ledger.read();
    hits.retain(|&(key, stamp)| ledger.fingerprint_of(key) != Some(stamp));
    drop(ledger);
    wanted
        .iter()
        .map(|&(position, stamp)| {
            let found = hits.iter().position(|&(_, held)| held == stamp);
            let read = match found {
                Some(at) => {
                    let (key, _) = hits.swap_remove(at);
                    ReadBack::Holds {
                        key,
                        stamp: Some(stamp),
                    }
                }
                None => ReadBack::Unknown,
            };
            (position, read)
        })
        .collect()
}

/// Delays before each try to read the stamps in doubt at a crash back,
/// from the start (the cluster may still be coming up).
const RECOVERED_READ_BACK_AFTER: [Duration; 4] = [
    Duration::from_millis(200),
    Duration::from_secs(2),
    Duration::from_secs(10),
    Duration::from_secs(30),
];

/// Stamps looked for per search.
const RECOVERED_STAMPS_PER_SEARCH: usize = 1_000;

/// After a crash: searches the cluster (every index the sidecar's own
/// calls may read) for documents with the stamps that were in doubt
/// (`stamps`, one per placement), and counts each one found again under
/// its key. A cluster that cannot be asked leaves the crash rule's answer.
pub async fn read_back_recovered(sidecar: Arc<Sidecar>, stamps: Vec<Fingerprint>) {
    if stamps.is_empty() {
        return;
    }
    let _running = sidecar.admission.write_started();
    Metrics::add(&sidecar.metrics.in_doubt_documents, stamps.len() as u64);
    for delay in RECOVERED_READ_BACK_AFTER {
        tokio::time::sleep(delay).await;
        match search_stamps(&sidecar, &stamps).await {
            Ok(found) => {
                let (counted, seq) = sidecar
                    .ledger
                    .write(|ledger| count_found(ledger, &stamps, &found, now_millis()));
                persist::after_answer(&sidecar, seq).await;
                tracing::info!(
                    in_doubt = stamps.len(),
                    found_in_the_index = counted,
                    "placements in doubt at the crash read back"
                );
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot read the placements in doubt at the crash back yet");
            }
        }
    }
    tracing::warn!(
        in_doubt = stamps.len(),
        "placements in doubt at the crash could not be read back: they stay uncounted"
    );
}

/// A document found with a stamp: its key, stamp and class.
type FoundStamp = (DocumentKey, Fingerprint, Fingerprint);

/// Every document holding one of `stamps`, searched in batches.
async fn search_stamps(
    sidecar: &Sidecar,
    stamps: &[Fingerprint],
) -> Result<Vec<FoundStamp>, String> {
    let field = sidecar.simhash_field.as_str();
    let root_field = sidecar.root_field.as_str();
    let mut distinct = stamps.to_vec();
    distinct.dedup();
    let mut found = Vec::new();
    for batch in distinct.chunks(RECOVERED_STAMPS_PER_SEARCH) {
        let wanted: Vec<String> = batch
            .iter()
            .map(|&stamp| format_fingerprint(stamp))
            .collect();
        let query = json!({
            "size": 10_000,
            "_source": [field, root_field],
            "query": { "terms": { field: wanted } },
        });
        let answer = sidecar
            .upstream
            .call_json(
                Method::POST,
                "/_search?ignore_unavailable=true&allow_no_indices=true",
                &HeaderMap::new(),
                Payload::Json(&query),
            )
            .await
            .map_err(|error| error.to_string())?;
        found.extend(crate::upstream::hits(&answer).iter().filter_map(|hit| {
            let key = DocumentKey::new(hit["_index"].as_str()?, hit["_id"].as_str()?);
            let stamp = parse_fingerprint(hit["_source"][field].as_str()?)?;
            let root = hit["_source"][root_field]
                .as_str()
                .and_then(parse_fingerprint)
                .unwrap_or(stamp);
            Some((key, stamp, root))
        }));
    }
    Ok(found)
}

/// Counts again the documents `found` whose key does not hold their
/// stamp, at most as many per stamp as placements were in doubt with it.
/// Returns how many were counted.
fn count_found(
    ledger: &mut Ledger,
    stamps: &[Fingerprint],
    found: &[FoundStamp],
    now: crate::units::Millis,
) -> usize {
    let mut left: BTreeMap<Fingerprint, usize> = BTreeMap::new();
    for &stamp in stamps {
        *left.entry(stamp).or_default() += 1;
    }
    let mut counted = 0;
    for &(key, stamp, root) in found {
        let Some(left) = left.get_mut(&stamp).filter(|left| **left > 0) else {
            continue;
        };
        if ledger.adopt(key, None, stamp, root, now) {
            *left -= 1;
            counted += 1;
        }
    }
    counted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doubt(stamp: Option<Fingerprint>) -> Doubt {
        Doubt {
            kind: ActionKind::Index,
            index: Some("news".into()),
            id: Some("1".into()),
            stamp,
        }
    }

    #[test]
    fn mget_documents_read_as_the_cluster_holds_them() {
        let key = DocumentKey::new("news-000001", "1");
        let found = json!({"_index": "news-000001", "_id": "1", "found": true, "_source": {"simhash": "00000000000000ff"}});
        assert_eq!(
            read_doc(&found, "news", "1", "simhash"),
            ReadBack::Holds {
                key,
                stamp: Some(255)
            }
        );
        let unstamped = json!({"_index": "news-000001", "_id": "1", "found": true, "_source": {}});
        assert_eq!(
            read_doc(&unstamped, "news", "1", "simhash"),
            ReadBack::Holds { key, stamp: None }
        );
        let missing = json!({"_index": "news-000001", "_id": "1", "found": false});
        assert_eq!(
            read_doc(&missing, "news", "1", "simhash"),
            ReadBack::Missing { key }
        );
        let no_index =
            json!({"_index": "gone", "_id": "1", "error": {"type": "index_not_found_exception"}});
        assert!(matches!(
            read_doc(&no_index, "gone", "1", "simhash"),
            ReadBack::Missing { .. }
        ));
        let other = json!({"_index": "news", "_id": "1", "error": {"type": "shard_not_available"}});
        assert_eq!(read_doc(&other, "news", "1", "simhash"), ReadBack::Unknown);
    }

    #[test]
    fn a_stamp_found_under_its_key_is_stored_and_anything_else_waits_for_the_last_read() {
        let key = DocumentKey::new("news", "1");
        let ours = ReadBack::Holds {
            key,
            stamp: Some(7),
        };
        let mut ledger = crate::ledger::tests_support::ledger();
        let fingerprint = crate::ledger::tests_support::place(
            &mut ledger,
            "一段足够长的新闻正文，用来放进森林里做测试。",
        );
        let doubt = doubt(Some(fingerprint));
        assert_eq!(
            settle(&mut ledger, &doubt, &ReadBack::Missing { key }, false),
            None
        );
        assert_eq!(settle(&mut ledger, &doubt, &ReadBack::Unknown, false), None);
        assert_eq!(ledger.pending_records().len(), 1);
        let held = ReadBack::Holds {
            key,
            stamp: Some(fingerprint),
        };
        assert_eq!(
            settle(&mut ledger, &doubt, &held, false),
            Some(StoredAs::Stamped)
        );
        assert_eq!(ledger.fingerprint_of(key), Some(fingerprint));
        assert!(ledger.pending_records().is_empty());
        // An unstamped item (a delete) whose key is found empty takes the
        // count out at once; holding another stamp, it waits.
        let delete = Doubt {
            kind: ActionKind::Delete,
            stamp: None,
            ..doubt.clone()
        };
        assert_eq!(settle(&mut ledger, &delete, &ours, false), None);
        assert_eq!(
            settle(&mut ledger, &delete, &ReadBack::Missing { key }, false),
            Some(StoredAs::Nothing)
        );
        assert_eq!(ledger.fingerprint_of(key), None);
    }

    #[test]
    fn at_the_last_read_a_stamp_not_found_is_uncounted_and_its_node_kept() {
        let mut ledger = crate::ledger::tests_support::ledger();
        let fingerprint = crate::ledger::tests_support::place(
            &mut ledger,
            "另一段足够长的新闻正文，用来放进森林里做测试。",
        );
        assert_eq!(
            settle(
                &mut ledger,
                &doubt(Some(fingerprint)),
                &ReadBack::Unknown,
                true
            ),
            Some(StoredAs::Nothing)
        );
        assert!(ledger.pending_records().is_empty());
        assert_eq!(ledger.engine().forest().stats().nodes, 1);
        assert_eq!(ledger.stats().not_stored, 1);
    }

    #[test]
    fn a_stamp_found_after_a_crash_counts_again_once_per_placement_in_doubt() {
        let mut ledger = crate::ledger::tests_support::ledger();
        let fingerprint = crate::ledger::tests_support::place(
            &mut ledger,
            "第三段足够长的新闻正文，用来放进森林里做测试。",
        );
        let in_doubt = ledger.resolve_in_doubt();
        assert_eq!(in_doubt, vec![fingerprint]);
        assert_eq!(ledger.engine().forest().stats().documents, 0);
        let first = DocumentKey::new("news", "1");
        let copy = DocumentKey::new("news", "2");
        let found = [
            (first, fingerprint, fingerprint),
            (copy, fingerprint, fingerprint),
        ];
        assert_eq!(count_found(&mut ledger, &in_doubt, &found, 1), 1);
        assert_eq!(ledger.engine().forest().stats().documents, 1);
        assert_eq!(ledger.fingerprint_of(first), Some(fingerprint));
        assert_eq!(ledger.fingerprint_of(copy), None);
        // Read again: the key already holds it.
        assert_eq!(count_found(&mut ledger, &in_doubt, &found[..1], 2), 0);
        assert_eq!(ledger.engine().forest().stats().documents, 1);
    }
}
