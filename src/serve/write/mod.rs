//! Stamped writes: `_bulk`, `_doc` and `_create`.
//!
//! One pipeline for `_bulk` and the single-document APIs. This file calls
//! the steps in order; each step is a file that uses only the steps before
//! it and the shared types, never this file:
//!
//! 0. the state every step writes through: the ledger under its one lock
//!    and its log ([`state`]);
//! 1. admit and read the body: in-flight budget, limit, gzip/deflate
//!    ([`admission`]);
//! 2. while the state is known to be unwritable, answer before anything is
//!    placed: refuse (503), or forward unstamped under
//!    `--on-state-failure pass` ([`state_failure`]);
//! 3. parse the body as the cluster does ([`crate::bulk`]); read the
//!    stored documents of the partial updates that rewrite their text
//!    ([`edits`]);
//! 4. analyse every stamped source on the blocking pool, then place them
//!    (decided in parallel under the shared lock, applied in request order
//!    under the exclusive one) and write the stamps ([`place`]);
//! 5. make the placements durable before anything leaves (write-ahead); if
//!    that fails, take them back and answer as in step 2 ([`persist`]);
//! 6. forward, in one request or in chunks ([`forward`]; the answer read
//!    in [`answer`]);
//! 7. settle the counts from the cluster's answer, chunk by chunk as the
//!    answers come ([`settle`]); a cluster that cannot be reached takes
//!    every placement back; an answer that never came (timeout, broken
//!    connection, unreadable answer) is read back from the cluster
//!    ([`in_doubt`]);
//! 8. read back the updated documents whose text changed beyond what was
//!    stamped (scripts, edits raced by another write) and stamp them with
//!    a guarded follow-up ([`edits`]).
//!
//! A [`WriteRequest`] carries what the steps after
//! admission need (the sidecar, method, path, forwarded headers,
//! `filter_path`, the index in the path).
//!
//! Decisions:
//!
//! - What gets stamped is [`crate::bulk::stamping`]'s rule, the same as
//!   `neardup stamp`'s: `index` / `create` sources, update upserts and
//!   `doc_as_upsert` docs; and, here only, the updates that rewrite a
//!   stored document's text ([`crate::bulk::partial`], [`edits`]).
//! - `delete`, a scripted update that deletes, and an unstamped `index`
//!   over a known id take the old document's count back.
//! - `filter_path` is taken off the forwarded query and applied to the
//!   answer here, so the sidecar always sees every item.
//! - The answer goes back as the cluster sent it (status, headers, bytes),
//!   unless `filter_path` asked for less. When the stamped body is larger
//!   than the cluster accepts in one request (stamps add about 70 bytes per
//!   document), it is sent in several requests and the answers are joined
//!   into one, in order.
//! - A body the bulk parser rejects (no final newline, malformed action
//!   line, no item) is forwarded unchanged, so the client gets the error of
//!   its own cluster and version, word for word; nothing is counted.
//! - A write runs to its end in its own task ([`run_to_the_end`]): a
//!   client that gives up (timeout, closed connection) drops only its wait
//!   for the answer, never the settlement of what was placed and
//!   forwarded, so its retry of the same `_id` counts once. Shutdown waits
//!   for these tasks.
//! - An answer the sidecar cannot read counts nothing (the client still
//!   gets it as it came); an unreachable or silent cluster gives 502/504.

pub(super) mod admission;
mod answer;
mod edits;
mod forward;
mod in_doubt;
pub(super) mod lent_credentials;
pub(super) mod missing_fields;
mod persist;
mod place;
mod request;
mod settle;
pub(super) mod stamp_mapping;
mod stamp_search;
pub(super) mod state;
mod state_failure;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::response::Response;
use serde_json::Value;

use super::metrics::Metrics;
use super::off_runtime::off_the_runtime;
use super::sidecar::Sidecar;
use crate::bulk::{self, ActionKind, BulkItem};
use admission::refused;
use answer::Outcome;
use place::Stamped;
use request::WriteRequest;
use settle::Settlement;

pub use in_doubt::read_back_recovered;

/// Runs a write in its own task and waits for its answer. If the client
/// leaves, only this wait is dropped: the task still forwards, settles and
/// logs what it placed.
pub async fn run_to_the_end<F>(sidecar: Arc<Sidecar>, write: F) -> Response
where
    F: Future<Output = Response> + Send + 'static,
{
    let task = tokio::spawn(async move {
        let _running = sidecar.admission.write_started();
        write.await
    });
    match task.await {
        Ok(response) => response,
        Err(error) => {
            tracing::error!(%error, "write task ended without an answer");
            crate::serve::errors::SidecarError::Internal("the write ended without an answer".into())
                .into_response()
        }
    }
}

/// `_bulk` and `/{index}/_bulk`.
pub async fn bulk(sidecar: Arc<Sidecar>, request: Request, path_index: Option<String>) -> Response {
    let started = Instant::now();
    Metrics::add(&sidecar.metrics.bulk_requests, 1);
    let (parts, body) = request.into_parts();
    let (_in_flight, body) = match sidecar.admission.admit_and_read(&parts.headers, body).await {
        Ok(admitted) => admitted,
        Err(error) => return refused(&sidecar.metrics, error),
    };
    if let Some(response) = super::protected::refuse_bulk_items(&body) {
        return response;
    }
    if let Some(response) = state_failure::before_placing(&sidecar, &parts, &body).await {
        return response;
    }
    let write = WriteRequest::new(&sidecar, &parts, path_index);
    let items = match off_the_runtime(|| bulk::parse_bulk(&body)) {
        Ok(items) => Arc::new(items),
        Err(error) => {
            // The cluster rejects such a body as a whole; let it answer in
            // its own words (they differ between OpenSearch and
            // Elasticsearch versions). Nothing is stamped or counted.
            tracing::debug!(%error, "malformed bulk body forwarded unchanged");
            Metrics::add(&sidecar.metrics.malformed_bulk_requests, 1);
            return match forward::send(&write, body.to_vec()).await {
                Ok(answer) => {
                    if answer.status.is_success() {
                        tracing::warn!(%error, "the cluster accepted a bulk body the sidecar could not read: its documents are not stamped");
                    }
                    let parsed = serde_json::from_slice(&answer.body).ok();
                    forward::finish(&write, answer, parsed)
                }
                Err(error) => forward::upstream_failure(&sidecar, error),
            };
        }
    };
    let edits::Edits { plans, merged } = edits::read_for_bulk(&write, &body, &items).await;
    let analysed =
        match place::analyse_items(&sidecar, &body, &items, write.path_index.as_deref(), merged)
            .await
        {
            Ok(analysed) => analysed,
            Err(error) => return refused(&sidecar.metrics, error),
        };
    let (stamped, seq) = match place::place_and_stamp(&sidecar, analysed).await {
        Ok(placed) => placed,
        Err(error) => return refused(&sidecar.metrics, error),
    };
    let stamped = match persist::before_forwarding(&sidecar, stamped, seq).await {
        Ok(stamped) => stamped,
        Err(error) => return state_failure::refused_or_passed(&sidecar, &parts, body, error).await,
    };
    let (segments, chunks) = off_the_runtime(|| {
        let segments = forward::stamped_segments(&body, &items, &stamped);
        let chunks = forward::chunk_segments(&segments, sidecar.limits.upstream_max_content_length);
        (segments, chunks)
    });
    let response = match chunks.as_slice() {
        [whole] => {
            let body = off_the_runtime(|| segments[whole.clone()].concat());
            forward_and_settle_whole(&write, body, &items, &stamped, &plans).await
        }
        _ => {
            forward_and_settle_in_chunks(&write, &segments, chunks, &items, &stamped, &plans).await
        }
    };
    sidecar.metrics.observe_write(started.elapsed());
    response
}

/// A bulk body that fits the cluster's limit: sent in one request, its
/// items settled, and the answer goes back as it came (or filtered).
async fn forward_and_settle_whole(
    write: &WriteRequest<'_>,
    body: Vec<u8>,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    edits: &[Option<edits::Edit>],
) -> Response {
    let answer = match forward::send(write, body).await {
        Ok(answer) => answer,
        Err(error) => {
            if error.may_have_arrived() {
                in_doubt::read_back_later(write, items, stamped);
            } else {
                persist::take_back(write.sidecar, stamped).await;
            }
            return forward::upstream_failure(write.sidecar, error);
        }
    };
    let parsed: Option<Value> = off_the_runtime(|| serde_json::from_slice(&answer.body).ok());
    match answer::answered_items(answer.status, parsed.as_ref(), items.len()) {
        Some(answered) => {
            settle::items(write, items, stamped, answered).await;
            edits::restamp_after(write, edits, answered).await;
        }
        None if answer::may_have_been_applied(answer.status, parsed.as_ref()) => {
            if answer.status.is_success() {
                Metrics::add(&write.sidecar.metrics.unreadable_upstream_answers, 1);
                tracing::warn!(status = %answer.status, "bulk answer without one item per request item: read back from the cluster");
            }
            in_doubt::read_back_later(write, items, stamped);
        }
        None => persist::take_back(write.sidecar, stamped).await,
    }
    forward::finish(write, answer, parsed)
}

/// A bulk body over the cluster's limit: sent in chunks of whole items,
/// each chunk's items settled as its answer comes; the answers joined in
/// order into one.
async fn forward_and_settle_in_chunks(
    write: &WriteRequest<'_>,
    segments: &[Vec<u8>],
    chunks: Vec<std::ops::Range<usize>>,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    edits: &[Option<edits::Edit>],
) -> Response {
    let mut joined = forward::JoinedAnswer::with_capacity(items.len());
    for chunk in chunks {
        let chunk_items = &items[chunk.clone()];
        let body = segments[chunk.clone()].concat();
        let answer = forward::send_chunk(write, body, chunk_items).await;
        if answer.in_doubt {
            in_doubt::read_back_later(write, chunk_items, &stamped[chunk]);
        } else {
            settle::items(write, chunk_items, &stamped[chunk.clone()], &answer.items).await;
            edits::restamp_after(write, &edits[chunk], &answer.items).await;
        }
        joined.add(answer);
    }
    joined.into_response(write.filter.as_ref())
}

/// One document: `_doc` and `_create` (stamped), `_update` (stamped where it
/// can create the document), `DELETE _doc` (takes the count back). `id` is
/// `None` for `POST /{index}/_doc` (the cluster picks it).
pub async fn document(
    sidecar: Arc<Sidecar>,
    request: Request,
    index: String,
    id: Option<String>,
    kind: ActionKind,
) -> Response {
    let started = Instant::now();
    Metrics::add(&sidecar.metrics.document_requests, 1);
    let (parts, body) = request.into_parts();
    let (_in_flight, body) = match sidecar.admission.admit_and_read(&parts.headers, body).await {
        Ok(admitted) => admitted,
        Err(error) => return refused(&sidecar.metrics, error),
    };
    if let Some(response) = state_failure::before_placing(&sidecar, &parts, &body).await {
        return response;
    }
    let write = WriteRequest::new(&sidecar, &parts, Some(index.clone()));
    let edits::Edits { plans, merged } = match (kind, &id) {
        (ActionKind::Update, Some(id)) => edits::read_for_document(&write, &index, id, &body).await,
        _ => edits::Edits::none(1),
    };
    let analysed = match merged.into_iter().next().flatten() {
        Some(merged) => place::analyse_merged_one(&sidecar, &index, body.clone(), merged).await,
        None => place::analyse_one(&sidecar, &index, kind, body.clone()).await,
    };
    let analysed = match analysed {
        Ok(analysed) => analysed.map(|analysed| analysed.sent_to(&index, id.as_deref())),
        Err(error) => return refused(&sidecar.metrics, error),
    };
    let (stamped, seq) = match place::place_and_stamp(&sidecar, vec![analysed]).await {
        Ok(placed) => placed,
        Err(error) => return refused(&sidecar.metrics, error),
    };
    let stamped = match persist::before_forwarding(&sidecar, stamped, seq).await {
        Ok(stamped) => stamped,
        Err(error) => return state_failure::refused_or_passed(&sidecar, &parts, body, error).await,
    };
    let stamp = stamped.first().and_then(Option::as_ref);
    let outgoing = match stamp {
        Some(stamp) => stamp.bytes.clone(),
        None => body.to_vec(),
    };
    // The item as a bulk item would read, for reading it back.
    let as_item = BulkItem {
        kind,
        action: 0..0,
        source: None,
        index: Some(index.clone()),
        id: id.clone(),
    };
    let answer = match forward::send(&write, outgoing).await {
        Ok(answer) => answer,
        Err(error) => {
            if error.may_have_arrived() {
                in_doubt::read_back_later(&write, std::slice::from_ref(&as_item), &stamped);
            } else {
                persist::take_back(&sidecar, &stamped).await;
            }
            return forward::upstream_failure(&sidecar, error);
        }
    };
    let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
    let status = answer.status.as_u16();
    let outcome = parsed
        .as_ref()
        .and_then(|value| Outcome::of_document(value, status));
    if outcome.is_none() && answer::may_have_been_applied(answer.status, parsed.as_ref()) {
        in_doubt::read_back_later(&write, std::slice::from_ref(&as_item), &stamped);
    } else {
        let settlement = Settlement {
            kind,
            stamp: stamp.and_then(Stamped::placed),
            outcome,
            index: Some(&index),
            id: id.as_deref(),
        };
        settle::document(&write, &settlement).await;
        let plan = plans.first().and_then(Option::as_ref);
        edits::restamp_document_after(&write, plan, settlement.outcome.as_ref()).await;
    }
    sidecar.metrics.observe_write(started.elapsed());
    let stamped = stamp
        .filter(|_| answer.status.is_success())
        .map(|stamp| (stamp.root.clone(), stamp.fingerprint.is_none()));
    let mut response = forward::finish(&write, answer, parsed);
    // The class the document was stamped with, for clients that want it
    // without reading the document back; and whether it was a class of its
    // own because there was no text to fingerprint.
    if let Some((root, not_fingerprinted)) = stamped
        && let Ok(value) = axum::http::HeaderValue::from_str(&root)
    {
        response.headers_mut().insert(CLUSTER_ROOT_HEADER, value);
        if not_fingerprinted {
            response.headers_mut().insert(
                NOT_FINGERPRINTED_HEADER,
                axum::http::HeaderValue::from_static(NOT_FINGERPRINTED_REASON),
            );
        }
    }
    response
}

/// The header of a single-document write's answer that carries the
/// `cluster_root` the document was stamped with.
pub const CLUSTER_ROOT_HEADER: &str = "x-neardup-cluster-root";

/// Present on a single-document write's answer when the document had no
/// text in any fingerprinted field: its `cluster_root` is a class of its
/// own ([`crate::bulk::stamping::class_of_its_own`]), no `simhash`.
pub const NOT_FINGERPRINTED_HEADER: &str = "x-neardup-not-fingerprinted";

/// The value of [`NOT_FINGERPRINTED_HEADER`].
const NOT_FINGERPRINTED_REASON: &str =
    "no text in the fingerprinted fields: a class of its own, grouped with no other document";
