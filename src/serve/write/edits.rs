//! Updates that rewrite a stored document's text are placed again, so its
//! stamps always describe its current text ([`crate::bulk::partial`]).
//!
//! Two moments of the pipeline:
//!
//! - before placing ([`read_for_bulk`], [`read_for_document`]): every
//!   partial update whose `doc` rewrites a fingerprinted field has the
//!   stored document read (`_mget`, realtime, only the fingerprinted
//!   fields), merged with its `doc` and placed; its stamps ride in the
//!   same `doc`. The `_version` read is kept;
//! - after the cluster answered ([`restamp_after`]): a scripted update
//!   that changed its document, and a partial one whose answer's
//!   `_version` is not the one read plus one (another write came between
//!   the read and the update, so the merge was made on an older text), is
//!   read back, placed, and stamped by a follow-up update guarded by the
//!   `_seq_no` / `_primary_term` read (409: read and try again, a few
//!   times). The client is answered after that.
//!
//! Decisions:
//!
//! - The update itself is not guarded (`if_seq_no`): a guard would give
//!   the client 409s it did not ask for, and the cluster refuses it beside
//!   `retry_on_conflict`. The version check finds the same races after the
//!   fact, and the follow-up repairs them before the client hears back.
//! - An update whose stored document cannot be read goes as it came and is
//!   read back after, like a script; a document not found goes as it came
//!   (the cluster answers `document_missing_exception`).
//! - Routing (`routing` in the item's metadata, else the request's
//!   `?routing=`) goes with every read and follow-up; so does the
//!   request's `?refresh=`, so that a client that waits for a refresh sees
//!   the final stamps.
//! - The follow-up writes the stamps only (`{"doc": {stamps}}`): it
//!   never changes the text it was computed from.

use std::collections::BTreeMap;

use axum::http::Method;
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::answer::Outcome;
use super::in_doubt;
use super::persist;
use super::place::{self, Analysed, Stamped};
use super::request::WriteRequest;
use super::settle;
use crate::bulk::partial::{UpdateEffect, merge};
use crate::bulk::{self, ActionKind, BulkItem};
use crate::serve::metrics::Metrics;
use crate::serve::route::decode;
use crate::serve::sidecar::Sidecar;
use crate::upstream::{Payload, credentials, encode_component};

/// Follow-ups tried per document before its stamps are left as they are
/// (each one lost to a concurrent write of the same document).
const FOLLOW_UP_ATTEMPTS: usize = 4;

/// What happens to one update item around the cluster's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Edit {
    /// Its `doc` merged into the stored document read at `version`, placed
    /// and stamped in the update itself.
    Merged {
        version: u64,
        routing: Option<String>,
    },
    /// Read back and stamped after the cluster applied it.
    ReadBackAfter { routing: Option<String> },
}

impl Edit {
    fn routing(&self) -> Option<&str> {
        match self {
            Edit::Merged { routing, .. } | Edit::ReadBackAfter { routing } => routing.as_deref(),
        }
    }

    /// Whether the answered update leaves a text its stamps may not
    /// describe.
    fn needs_follow_up(&self, outcome: &Outcome<'_>) -> bool {
        if !outcome.succeeded() || outcome.result != Some("updated") {
            return false;
        }
        match self {
            Edit::Merged { version, .. } => outcome.version != Some(version + 1),
            Edit::ReadBackAfter { .. } => true,
        }
    }
}

/// The edits of a request's items, and the documents the merged ones make.
pub(super) struct Edits {
    /// Per item.
    pub plans: Vec<Option<Edit>>,
    /// Per item: the stored document merged with the item's `doc`.
    pub merged: Vec<Option<Value>>,
}

impl Edits {
    pub fn none(items: usize) -> Self {
        Edits {
            plans: vec![None; items],
            merged: vec![None; items],
        }
    }
}

/// One update to read the stored document of.
struct Wanted<'a> {
    position: usize,
    index: &'a str,
    id: &'a str,
    routing: Option<String>,
    doc: Map<String, Value>,
}

/// Reads the stored documents of the bulk request's partial updates that
/// rewrite their text, and plans each update item's edit.
pub(super) async fn read_for_bulk(
    write: &WriteRequest<'_>,
    body: &Bytes,
    items: &[BulkItem],
) -> Edits {
    let mut edits = Edits::none(items.len());
    let request_routing = query_param(&write.path_and_query, "routing");
    let mut wanted = Vec::new();
    for (position, item) in items.iter().enumerate() {
        if item.kind != ActionKind::Update {
            continue;
        }
        let (Some(source), Some(id)) = (&item.source, item.id.as_deref()) else {
            continue;
        };
        let Some(index) = item.index.as_deref().or(write.path_index.as_deref()) else {
            continue;
        };
        let Some(update) = bulk::parse_source(&body[source.clone()]) else {
            continue;
        };
        let routing = item_routing(&body[item.action.clone()]).or_else(|| request_routing.clone());
        let update = Update {
            position,
            index,
            id,
            routing,
            body: update,
        };
        classify(write.sidecar, update, &mut edits, &mut wanted);
    }
    read_stored_and_merge(write, wanted, &mut edits).await;
    edits
}

/// The same for a single `_update` request.
pub(super) async fn read_for_document(
    write: &WriteRequest<'_>,
    index: &str,
    id: &str,
    body: &[u8],
) -> Edits {
    let mut edits = Edits::none(1);
    let Some(update) = bulk::parse_source(body) else {
        return edits;
    };
    let update = Update {
        position: 0,
        index,
        id,
        routing: query_param(&write.path_and_query, "routing"),
        body: update,
    };
    let mut wanted = Vec::new();
    classify(write.sidecar, update, &mut edits, &mut wanted);
    read_stored_and_merge(write, wanted, &mut edits).await;
    edits
}

/// One update item, parsed: where it is in the request, what it names,
/// and its body.
struct Update<'a> {
    position: usize,
    index: &'a str,
    id: &'a str,
    routing: Option<String>,
    body: Map<String, Value>,
}

/// Plans what happens to `update`; a partial `doc` that rewrites the text
/// goes to `wanted` (its stored document is read).
fn classify<'a>(
    sidecar: &Sidecar,
    mut update: Update<'a>,
    edits: &mut Edits,
    wanted: &mut Vec<Wanted<'a>>,
) {
    let fields = sidecar
        .analyzers
        .for_index(Some(update.index))
        .fingerprinter();
    let routing = update.routing;
    match UpdateEffect::of(&update.body, fields.field_paths()) {
        UpdateEffect::Unchanged => {}
        UpdateEffect::Scripted => {
            edits.plans[update.position] = Some(Edit::ReadBackAfter { routing });
        }
        UpdateEffect::RewritesText => {
            if let Some(Value::Object(doc)) = update.body.remove("doc") {
                wanted.push(Wanted {
                    position: update.position,
                    index: update.index,
                    id: update.id,
                    routing,
                    doc,
                });
            }
        }
    }
}

/// Reads the stored documents `wanted` (per index, one `_mget`) and merges
/// each one's `doc` into it; one that cannot be read is read back after.
async fn read_stored_and_merge(
    write: &WriteRequest<'_>,
    wanted: Vec<Wanted<'_>>,
    edits: &mut Edits,
) {
    if wanted.is_empty() {
        return;
    }
    let mut by_index: BTreeMap<&str, Vec<Wanted<'_>>> = BTreeMap::new();
    for one in wanted {
        by_index.entry(one.index).or_default().push(one);
    }
    let headers = credentials(&write.headers);
    for (index, wanted) in by_index {
        let keys: Vec<(&str, Option<&str>)> = wanted
            .iter()
            .map(|one| (one.id, one.routing.as_deref()))
            .collect();
        let stored = read_stored(write.sidecar, &headers, index, &keys).await;
        for (one, stored) in wanted.into_iter().zip(stored) {
            Metrics::add(&write.sidecar.metrics.edited_documents_read, 1);
            match stored {
                StoredDocument::Found {
                    mut source,
                    version,
                    ..
                } => {
                    merge(&mut source, &one.doc);
                    edits.merged[one.position] = Some(Value::Object(source));
                    edits.plans[one.position] = Some(Edit::Merged {
                        version,
                        routing: one.routing,
                    });
                }
                StoredDocument::Missing => {}
                StoredDocument::Unknown => {
                    edits.plans[one.position] = Some(Edit::ReadBackAfter {
                        routing: one.routing,
                    });
                }
            }
        }
    }
}

/// A stored document as read for an edit: its fingerprinted fields and
/// versions.
#[derive(Debug, Clone, PartialEq)]
enum StoredDocument {
    Found {
        source: Map<String, Value>,
        version: u64,
        seq_no: u64,
        primary_term: u64,
    },
    Missing,
    Unknown,
}

/// `_mget` (realtime) of `keys` (id, routing) in `index`, only the
/// fingerprinted fields of its documents; one read per key, in order.
async fn read_stored(
    sidecar: &Sidecar,
    headers: &axum::http::HeaderMap,
    index: &str,
    keys: &[(&str, Option<&str>)],
) -> Vec<StoredDocument> {
    let fields: Vec<&str> = sidecar
        .analyzers
        .for_index(Some(index))
        .fingerprinter()
        .field_paths()
        .collect();
    let docs: Vec<Value> = keys
        .iter()
        .map(|(id, routing)| match routing {
            Some(routing) => json!({ "_id": id, "routing": routing }),
            None => json!({ "_id": id }),
        })
        .collect();
    let path = format!(
        "/{}/_mget?realtime=true&_source_includes={}",
        encode_component(index),
        encode_component(&fields.join(","))
    );
    match in_doubt::mget(sidecar, headers, &path, docs, "edited documents").await {
        Some(answered) => answered.iter().map(stored_document).collect(),
        None => vec![StoredDocument::Unknown; keys.len()],
    }
}

/// One document of an `_mget` answer.
fn stored_document(doc: &Value) -> StoredDocument {
    match doc["found"].as_bool() {
        Some(true) => {
            let versions = (
                doc["_version"].as_u64(),
                doc["_seq_no"].as_u64(),
                doc["_primary_term"].as_u64(),
            );
            match (versions, &doc["_source"]) {
                ((Some(version), Some(seq_no), Some(primary_term)), Value::Object(source)) => {
                    StoredDocument::Found {
                        source: source.clone(),
                        version,
                        seq_no,
                        primary_term,
                    }
                }
                ((Some(version), Some(seq_no), Some(primary_term)), Value::Null) => {
                    StoredDocument::Found {
                        source: Map::new(),
                        version,
                        seq_no,
                        primary_term,
                    }
                }
                _ => StoredDocument::Unknown,
            }
        }
        Some(false) => StoredDocument::Missing,
        None if doc["error"]["type"] == "index_not_found_exception" => StoredDocument::Missing,
        None => StoredDocument::Unknown,
    }
}

/// A document to stamp again after its update: its concrete index, id
/// and routing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FollowUp {
    index: String,
    id: String,
    routing: Option<String>,
}

/// After the cluster answered `answered` (one per planned item), stamps
/// again the documents whose text the update changed beyond what was
/// stamped (see the module doc).
pub(super) async fn restamp_after(
    write: &WriteRequest<'_>,
    plans: &[Option<Edit>],
    answered: &[Value],
) {
    let targets: Vec<FollowUp> = plans
        .iter()
        .zip(answered)
        .filter_map(|(plan, answer)| {
            let plan = plan.as_ref()?;
            let outcome = Outcome::of_item(answer)?;
            follow_up_of(plan, &outcome)
        })
        .collect();
    restamp(write, targets).await;
}

/// The same for a single `_update` answered with `outcome`.
pub(super) async fn restamp_document_after(
    write: &WriteRequest<'_>,
    plan: Option<&Edit>,
    outcome: Option<&Outcome<'_>>,
) {
    let target = plan
        .zip(outcome)
        .and_then(|(plan, outcome)| follow_up_of(plan, outcome));
    restamp(write, target.into_iter().collect()).await;
}

fn follow_up_of(plan: &Edit, outcome: &Outcome<'_>) -> Option<FollowUp> {
    plan.needs_follow_up(outcome).then_some(())?;
    Some(FollowUp {
        index: outcome.index?.to_string(),
        id: outcome.id?.to_string(),
        routing: plan.routing().map(str::to_string),
    })
}

/// Reads `targets` back, places them and stamps them with guarded
/// follow-up updates; a target lost to a concurrent write is tried again.
async fn restamp(write: &WriteRequest<'_>, mut targets: Vec<FollowUp>) {
    let headers = credentials(&write.headers);
    let refresh = query_param(&write.path_and_query, "refresh");
    for _ in 0..FOLLOW_UP_ATTEMPTS {
        if targets.is_empty() {
            return;
        }
        Metrics::add(
            &write.sidecar.metrics.edited_documents_restamped,
            targets.len() as u64,
        );
        let read = read_targets(write.sidecar, &headers, &targets).await;
        let analysed = analyse_read(write, &targets, &read).await;
        let Ok((stamped, seq)) = place::place_and_stamp(&write.shared, analysed).await else {
            return;
        };
        let Ok(stamped) = persist::before_forwarding(write.sidecar, stamped, seq).await else {
            return;
        };
        let FollowUpBody {
            body,
            items,
            stamps: sent_stamps,
            targets: sent,
        } = follow_up_body(&targets, &read, stamped);
        if items.is_empty() {
            return;
        }
        let path = match &refresh {
            Some(refresh) => format!("/_bulk?refresh={}", encode_component(refresh)),
            None => "/_bulk".to_string(),
        };
        let answer = write
            .sidecar
            .upstream
            .call(Method::POST, &path, &headers, Payload::NdJson(&body))
            .await;
        let answered = answer.as_ref().ok().and_then(|answer| {
            let parsed: Value = answer.json()?;
            super::answer::answered_items(answer.status, Some(&parsed), items.len())
                .map(<[Value]>::to_vec)
        });
        let Some(answered) = answered else {
            tracing::warn!("follow-up stamps of edited documents unanswered: read back later");
            in_doubt::read_back_later(write, &items, &sent_stamps);
            return;
        };
        settle::items(write, &items, &sent_stamps, &answered).await;
        targets = sent
            .into_iter()
            .zip(&answered)
            .filter(|(_, answer)| is_version_conflict(answer))
            .map(|(at, _)| targets[at].clone())
            .collect();
    }
    if !targets.is_empty() {
        tracing::warn!(
            documents = targets.len(),
            "edited documents kept changing: their stamps were left as they are"
        );
    }
}

/// The stored documents of `targets`, per index.
async fn read_targets(
    sidecar: &Sidecar,
    headers: &axum::http::HeaderMap,
    targets: &[FollowUp],
) -> Vec<StoredDocument> {
    let mut read = vec![StoredDocument::Unknown; targets.len()];
    let mut by_index: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (position, target) in targets.iter().enumerate() {
        by_index.entry(&target.index).or_default().push(position);
    }
    for (index, positions) in by_index {
        let keys: Vec<(&str, Option<&str>)> = positions
            .iter()
            .map(|&at| (targets[at].id.as_str(), targets[at].routing.as_deref()))
            .collect();
        for (at, stored) in positions
            .iter()
            .zip(read_stored(sidecar, headers, index, &keys).await)
        {
            read[*at] = stored;
        }
    }
    read
}

/// Analyses the documents read, on the blocking pool: what each follow-up
/// places.
async fn analyse_read(
    write: &WriteRequest<'_>,
    targets: &[FollowUp],
    read: &[StoredDocument],
) -> Vec<Option<Analysed>> {
    let documents: Vec<(String, String, Option<Value>)> = targets
        .iter()
        .zip(read)
        .map(|(target, stored)| {
            let document = match stored {
                StoredDocument::Found { source, .. } => Some(Value::Object(source.clone())),
                _ => None,
            };
            (target.index.clone(), target.id.clone(), document)
        })
        .collect();
    let sidecar = write.shared.clone();
    let analysed = tokio::task::spawn_blocking(move || {
        documents
            .iter()
            .map(|(index, id, document)| {
                let analyzer = sidecar.analyzers.for_index(Some(index));
                place::analyse_merged(
                    analyzer,
                    Bytes::from_static(b"{\"doc\":{}}"),
                    document.as_ref()?,
                )
                .map(|analysed| analysed.sent_to(index, Some(id)))
            })
            .collect::<Vec<_>>()
    })
    .await;
    analysed.unwrap_or_else(|error| {
        tracing::error!(%error, "analysis of edited documents failed");
        Vec::new()
    })
}

/// A follow-up `_bulk` request: one guarded stamp-only update per placed
/// target; its items as the settlement reads them, their stamps, and the
/// target each one is for.
struct FollowUpBody {
    body: String,
    items: Vec<BulkItem>,
    stamps: Vec<Option<Stamped>>,
    targets: Vec<usize>,
}

fn follow_up_body(
    targets: &[FollowUp],
    read: &[StoredDocument],
    stamped: Vec<Option<Stamped>>,
) -> FollowUpBody {
    let mut out = FollowUpBody {
        body: String::new(),
        items: Vec::new(),
        stamps: Vec::new(),
        targets: Vec::new(),
    };
    for (position, ((target, stored), stamp)) in targets.iter().zip(read).zip(stamped).enumerate() {
        // A stamp is placed only for a document found and read.
        let (
            Some(stamp),
            StoredDocument::Found {
                seq_no,
                primary_term,
                ..
            },
        ) = (stamp, stored)
        else {
            continue;
        };
        let mut metadata = json!({
            "_index": target.index,
            "_id": target.id,
            "if_seq_no": seq_no,
            "if_primary_term": primary_term,
        });
        if let Some(routing) = &target.routing {
            metadata["routing"] = Value::from(routing.as_str());
        }
        out.body
            .push_str(&json!({ "update": metadata }).to_string());
        out.body.push('\n');
        out.body.push_str(&String::from_utf8_lossy(&stamp.bytes));
        out.body.push('\n');
        out.items.push(BulkItem {
            kind: ActionKind::Update,
            action: 0..0,
            source: None,
            index: Some(target.index.clone()),
            id: Some(target.id.clone()),
        });
        out.stamps.push(Some(stamp));
        out.targets.push(position);
    }
    out
}

fn is_version_conflict(answer: &Value) -> bool {
    Outcome::of_item(answer).is_some_and(|outcome| outcome.status == Some(409))
}

/// `routing` from a bulk item's metadata (`_routing` in older clients).
fn item_routing(action_line: &[u8]) -> Option<String> {
    let action: Value = serde_json::from_slice(action_line).ok()?;
    let metadata = action.as_object()?.values().next()?;
    ["routing", "_routing"]
        .iter()
        .find_map(|key| match &metadata[*key] {
            Value::String(routing) => Some(routing.clone()),
            Value::Number(routing) => Some(routing.to_string()),
            _ => None,
        })
}

/// The value of the query parameter `name` in a path and query, decoded.
fn query_param(path_and_query: &str, name: &str) -> Option<String> {
    let (_, query) = path_and_query.split_once('?')?;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(key) == name).then(|| decode(&value.replace('+', " ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_documents_are_read_with_their_versions() {
        let found = json!({"_index": "news", "_id": "1", "found": true, "_version": 3, "_seq_no": 7, "_primary_term": 1, "_source": {"title": "t"}});
        assert_eq!(
            stored_document(&found),
            StoredDocument::Found {
                source: json!({"title": "t"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                version: 3,
                seq_no: 7,
                primary_term: 1
            }
        );
        let no_versions = json!({"found": true, "_source": {}});
        assert_eq!(stored_document(&no_versions), StoredDocument::Unknown);
        assert_eq!(
            stored_document(&json!({"found": false})),
            StoredDocument::Missing
        );
        assert_eq!(
            stored_document(&json!({"error": {"type": "index_not_found_exception"}})),
            StoredDocument::Missing
        );
        assert_eq!(
            stored_document(&json!({"error": {"type": "other"}})),
            StoredDocument::Unknown
        );
    }

    #[test]
    fn an_update_is_followed_up_when_its_version_says_another_write_came_between() {
        let merged = Edit::Merged {
            version: 4,
            routing: None,
        };
        let answered = |version: u64, result: &str| json!({"update": {"_index": "news", "_id": "1", "status": 200, "result": result, "_version": version}});
        let check = |plan: &Edit, answer: Value| {
            Outcome::of_item(&answer).is_some_and(|outcome| plan.needs_follow_up(&outcome))
        };
        assert!(!check(&merged, answered(5, "updated")));
        assert!(check(&merged, answered(6, "updated")));
        assert!(!check(&merged, answered(4, "noop")));
        let script = Edit::ReadBackAfter { routing: None };
        assert!(check(&script, answered(2, "updated")));
        assert!(!check(&script, answered(2, "noop")));
        assert!(!check(
            &script,
            json!({"update": {"_id": "1", "status": 404, "error": {}}})
        ));
    }

    #[test]
    fn routing_and_query_parameters_are_read() {
        assert_eq!(
            item_routing(br#"{"update":{"_id":"1","routing":"u7"}}"#),
            Some("u7".into())
        );
        assert_eq!(
            item_routing(br#"{"update":{"_id":"1","_routing":7}}"#),
            Some("7".into())
        );
        assert_eq!(item_routing(br#"{"update":{"_id":"1"}}"#), None);
        assert_eq!(
            query_param("/_bulk?refresh=wait_for&routing=a%2Fb", "routing"),
            Some("a/b".into())
        );
        assert_eq!(
            query_param("/_bulk?refresh", "refresh"),
            Some(String::new())
        );
        assert_eq!(query_param("/_bulk", "refresh"), None);
    }
}
