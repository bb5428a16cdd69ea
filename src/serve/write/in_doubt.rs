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
//! After a crash, or when a standby takes over from a leader whose
//! answers never came, the same question is asked the same way: every
//! placement's destination (index as named, `_id`) is in the state
//! ([`crate::ledger::Ledger::sending`]), so those placements stay pending
//! and are read back by key or by their index's search, with the
//! sidecar's own identity (the client's credentials are gone), on a longer
//! schedule ([`read_back_recovered`]). Placements from a state written
//! before destinations were kept get the crash rule at recovery, and every
//! index is searched for their stamps: a document found with one under a
//! key that does not hold it is counted again, at most once per placement.
//! Searches by stamp read every copy, page after page (a scroll), so a
//! text with many exact copies under other keys cannot hide the one in
//! doubt.
//!
//! Consequences: counts of writes in doubt are right within the last read
//! (about ten seconds); a retry that stores the same text under the same
//! key in the meantime counts once, whichever settles first (the ledger's
//! key table, [`crate::ledger::Ledger::stored`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};

use super::persist;
use super::place::Stamped;
use super::request::WriteRequest;
use super::settle::{StoredAs, count_stored};
use super::stamp_search::{key_and_stamp, scroll_stamps};
use crate::bulk::{ActionKind, BulkItem};
use crate::ledger::{DocumentKey, InDoubt, Ledger};
use crate::serve::metrics::Metrics;
use crate::serve::sidecar::Sidecar;
use crate::units::{Fingerprint, now_millis, parse_fingerprint};
use crate::upstream::{ClusterError, Payload, credentials, encode_component};

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
        resolve(&sidecar, &headers, doubts, &READ_BACK_AFTER).await;
    });
}

/// Reads `doubts` back after each of `schedule`'s delays until every one
/// is settled; at the last read, what is still unknown gets the crash rule.
async fn resolve(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    mut doubts: Vec<Doubt>,
    schedule: &[Duration],
) {
    for (attempt, delay) in schedule.iter().enumerate() {
        tokio::time::sleep(*delay).await;
        let last = attempt + 1 == schedule.len();
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
    // A key read for a doubt with an id is that doubt's: a copy without an
    // id never claims it, even before the ledger holds it.
    let claimed: BTreeSet<DocumentKey> = read
        .iter()
        .filter_map(|read| match read {
            ReadBack::Holds { key, .. } => Some(*key),
            _ => None,
        })
        .collect();
    for (index, wanted) in by_index {
        for (position, found) in read_by_stamp(sidecar, headers, index, &wanted, &claimed).await {
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
/// once and searched for their stamps until each has a document with its
/// stamp under a key neither the ledger holds with it nor a doubt with an
/// id read (`claimed`); each key is claimed once. Returns a read per `(position, stamp)` given.
async fn read_by_stamp(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    index: &str,
    wanted: &[(usize, Fingerprint)],
    claimed: &BTreeSet<DocumentKey>,
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
    let stamps: Vec<Fingerprint> = wanted.iter().map(|&(_, stamp)| stamp).collect();
    let field = sidecar.simhash_field.as_str();
    // Copies already counted under other keys may share a stamp, however
    // many: the search goes on, page after page, until every placement has
    // a document of its own or the copies end.
    let mut wanted_per_stamp: BTreeMap<Fingerprint, usize> = BTreeMap::new();
    for &(_, stamp) in wanted {
        *wanted_per_stamp.entry(stamp).or_default() += 1;
    }
    let mut hits: Vec<(DocumentKey, Fingerprint)> = Vec::new();
    let searched = scroll_stamps(sidecar, headers, Some(index), &stamps, &[], |page| {
        let ledger = sidecar.ledger.read();
        for hit in page {
            let Some((key, stamp)) = key_and_stamp(hit, field) else {
                continue;
            };
            if ledger.fingerprint_of(key) == Some(stamp) || claimed.contains(&key) {
                continue;
            }
            if let Some(left) = wanted_per_stamp.get_mut(&stamp).filter(|left| **left > 0) {
                *left -= 1;
                hits.push((key, stamp));
            }
        }
        wanted_per_stamp.values().all(|&left| left == 0)
    })
    .await;
    if let Err(error) = searched {
        tracing::warn!(%error, "cannot search for writes in doubt");
        return unknown();
    }
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

/// Delays before each read of the placements in doubt at a crash or a
/// takeover, from the start (the cluster may still be coming up).
const RECOVERED_READ_BACK_AFTER: [Duration; 4] = [
    Duration::from_millis(200),
    Duration::from_secs(2),
    Duration::from_secs(10),
    Duration::from_secs(30),
];

/// After a crash or a takeover: the placements whose answer never came
/// back. Those sent to a known place are still pending and are read back
/// as a live write in doubt is, by key where the request gave an `_id`
/// (realtime), else by a search of their index after a refresh, on
/// [`RECOVERED_READ_BACK_AFTER`]'s schedule; the client's credentials are
/// gone, so the sidecar's own identity asks (credentials in `--upstream`,
/// or SigV4). The others, from a state written before targets were kept,
/// were uncounted by the crash rule: every index is searched for their
/// stamps and each document found is counted again under its key.
pub async fn read_back_recovered(sidecar: Arc<Sidecar>, placements: Vec<InDoubt>) {
    if placements.is_empty() {
        return;
    }
    Metrics::add(&sidecar.metrics.in_doubt_documents, placements.len() as u64);
    let mut doubts = Vec::new();
    let mut uncounted = Vec::new();
    for placement in placements {
        match placement.sent_to {
            Some(sent_to) => doubts.push(Doubt {
                kind: ActionKind::Index,
                index: Some(sent_to.index),
                id: sent_to.id,
                stamp: Some(placement.fingerprint),
            }),
            None => uncounted.push(placement.fingerprint),
        }
    }
    let targeted = doubts.len();
    if targeted > 0 {
        // Not counted as a write while it waits for credentials: a stop
        // meanwhile leaves the placements pending in the state.
        let headers = read_back_identity(&sidecar, &doubts).await;
        let _running = sidecar.admission.write_started();
        resolve(&sidecar, &headers, doubts, &RECOVERED_READ_BACK_AFTER).await;
        tracing::info!(
            in_doubt = targeted,
            "placements in doubt at the crash or takeover read back where they were sent"
        );
    }
    if !uncounted.is_empty() {
        let _running = sidecar.admission.write_started();
        read_back_uncounted(&sidecar, uncounted).await;
    }
}

/// How long a read-back the cluster refuses to the sidecar waits for a
/// client's write to lend credentials.
const LEND_WAIT: Duration = Duration::from_secs(600);

/// The headers a read-back of `doubts` after a crash or takeover asks
/// with: none (the sidecar's own identity, if it has one); when the
/// cluster refuses that (401, 403), credentials a client's write lends
/// ([`super::lent_credentials`]), each tried once, for at most
/// [`LEND_WAIT`]. Past it, none: the crash rule follows.
async fn read_back_identity(sidecar: &Sidecar, doubts: &[Doubt]) -> HeaderMap {
    let Some(index) = doubts.iter().find_map(|doubt| doubt.index.as_deref()) else {
        return HeaderMap::new();
    };
    let probe = format!(
        "/{}/_search?size=0&ignore_unavailable=true&allow_no_indices=true",
        encode_component(index)
    );
    let deadline = tokio::time::Instant::now() + LEND_WAIT;
    let mut tried: Vec<HeaderMap> = Vec::new();
    let mut headers = HeaderMap::new();
    loop {
        match sidecar
            .upstream
            .call_json(Method::POST, &probe, &headers, Payload::Empty)
            .await
        {
            Err(ClusterError::Refused { status, .. })
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN => {}
            _ => return headers,
        }
        if tried.is_empty() {
            tracing::warn!(
                index,
                "the cluster refuses the sidecar's own reads of the writes in doubt: waiting for a client's write to lend its credentials"
            );
        }
        tried.push(headers);
        match tokio::time::timeout_at(deadline, sidecar.lent_credentials.borrow(&tried)).await {
            Ok(lent) => headers = lent,
            Err(_) => return HeaderMap::new(),
        }
    }
}

/// The crash rule's placements (no target known): every index searched
/// for their stamps, each document found counted again under its key.
async fn read_back_uncounted(sidecar: &Sidecar, stamps: Vec<Fingerprint>) {
    for delay in RECOVERED_READ_BACK_AFTER {
        tokio::time::sleep(delay).await;
        match search_stamps(sidecar, &stamps).await {
            Ok(found) => {
                let (counted, seq) = sidecar
                    .ledger
                    .write(|ledger| count_found(ledger, &stamps, &found, now_millis()));
                persist::after_answer(sidecar, seq).await;
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

/// Every document of every index holding one of `stamps`, with its class.
async fn search_stamps(
    sidecar: &Sidecar,
    stamps: &[Fingerprint],
) -> Result<Vec<FoundStamp>, String> {
    let field = sidecar.simhash_field.as_str();
    let root_field = sidecar.root_field.as_str();
    let mut found = Vec::new();
    scroll_stamps(
        sidecar,
        &HeaderMap::new(),
        None,
        stamps,
        &[root_field],
        |page| {
            found.extend(page.iter().filter_map(|hit| {
                let (key, stamp) = key_and_stamp(hit, field)?;
                let root = hit["_source"][root_field]
                    .as_str()
                    .and_then(parse_fingerprint)
                    .unwrap_or(stamp);
                Some((key, stamp, root))
            }));
            false
        },
    )
    .await?;
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
        let in_doubt: Vec<Fingerprint> = ledger
            .resolve_in_doubt()
            .into_iter()
            .map(|placement| placement.fingerprint)
            .collect();
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
