//! Stamped writes: `_bulk`, `_doc` and `_create`.
//!
//! One pipeline for `_bulk` and the single-document APIs, each step in its
//! own file:
//!
//! 1. admit and read the body: in-flight budget, limit, gzip/deflate
//!    ([`body`]);
//! 2. parse it as the cluster does ([`crate::bulk`]);
//! 3. analyse every stamped source on the blocking pool, then place them in
//!    request order under one lock and write the stamps ([`place`]);
//! 4. make the placements durable before anything leaves (write-ahead);
//!    if that fails, take them back and refuse the write (503), or forward
//!    it unstamped under `--on-state-failure pass` ([`super::state_failure`]);
//!    while the state is known to be unwritable, writes are answered so
//!    before anything is placed;
//! 5. forward, in one request or in chunks ([`forward`]);
//! 6. settle the counts from the cluster's answer ([`settle`]); a cluster
//!    that cannot be reached takes every placement back.
//!
//! A [`WriteRequest`] carries what every step needs (the sidecar, method,
//! path, forwarded headers, `filter_path`, the index in the path).
//!
//! Decisions:
//!
//! - What gets stamped is [`crate::bulk::stamping`]'s rule, the same as
//!   `neardup stamp`'s: `index` / `create` sources, update upserts and
//!   `doc_as_upsert` docs.
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
//! - An answer the sidecar cannot read counts nothing (the client still
//!   gets it as it came); an unreachable or silent cluster gives 502/504.

mod body;
mod forward;
mod place;
mod settle;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::Request;
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde_json::Value;

use super::Sidecar;
use super::errors::SidecarError;
use super::filter_path::FilterPath;
use super::metrics::Metrics;
use super::state_failure;
use crate::bulk::stamping::StampTarget;
use crate::bulk::{self, ActionKind, BulkItem};
use crate::units::Fingerprint;
use crate::upstream::{self, UpstreamError};
use settle::{Outcome, Settlement};

/// One source stamped: its new bytes and where it was placed.
struct Stamped {
    target: StampTarget,
    fingerprint: Fingerprint,
    bytes: Vec<u8>,
}

impl Stamped {
    fn placed(&self) -> (StampTarget, Fingerprint) {
        (self.target, self.fingerprint)
    }
}

/// What every step of one write needs.
struct WriteRequest<'a> {
    sidecar: &'a Sidecar,
    method: Method,
    /// The forwarded path and query (`filter_path` taken off).
    path_and_query: String,
    /// The client's headers as they go to the cluster.
    headers: HeaderMap,
    filter: Option<FilterPath>,
    /// The index named in the path (`/{index}/_bulk`, `/{index}/_doc`).
    path_index: Option<String>,
}

impl<'a> WriteRequest<'a> {
    fn new(
        sidecar: &'a Sidecar,
        parts: &axum::http::request::Parts,
        path_index: Option<String>,
    ) -> Self {
        let (query, filter) = forward::split_filter_path(parts.uri.query());
        WriteRequest {
            sidecar,
            method: parts.method.clone(),
            path_and_query: forward::with_query(parts.uri.path(), &query),
            headers: upstream::request_headers(&parts.headers, true),
            filter,
            path_index,
        }
    }

    /// Places and stamps the analysed sources and makes the placements
    /// durable before anything is forwarded: every stamp that reaches the
    /// cluster names a class the durable state knows. When the state
    /// cannot be written, the placements are taken back and the write is
    /// refused.
    async fn place_durably(
        &self,
        analysed: Vec<Option<place::Analysed>>,
    ) -> Result<Vec<Option<Stamped>>, SidecarError> {
        let (stamped, seq) = place::place_and_stamp(self.sidecar, analysed);
        if let Err(error) = self.sidecar.persist(seq).await {
            self.take_back(&stamped).await;
            tracing::error!(%error, "state log not written: write refused");
            return Err(SidecarError::StateUnavailable(error));
        }
        Ok(stamped)
    }

    /// Takes back every stamped document (nothing reached the cluster), and
    /// logs that.
    async fn take_back(&self, stamped: &[Option<Stamped>]) {
        let ((), seq) = self
            .sidecar
            .write_ledger(|ledger| settle::nothing_stored(ledger, stamped));
        self.persist_outcome(seq).await;
    }

    /// Settles bulk items from their answers, and logs that.
    async fn settle_items(
        &self,
        items: &[BulkItem],
        stamped: &[Option<Stamped>],
        answered: &[Value],
    ) {
        let path_index = self.path_index.as_deref();
        let ((), seq) = self.sidecar.write_ledger(|ledger| {
            settle::answered_items(ledger, items, stamped, answered, path_index)
        });
        self.persist_outcome(seq).await;
    }

    /// Persists the outcome of a write before the client is answered. The
    /// documents are in the cluster (or were taken back) and their
    /// placement is already durable, so a failure here is logged, not
    /// turned into an error for the client.
    async fn persist_outcome(&self, seq: u64) {
        if let Err(error) = self.sidecar.persist(seq).await {
            tracing::error!(%error, "state log not written after the cluster answered; counts may drift after a restart");
        }
    }

    fn upstream_failure(&self, error: UpstreamError) -> Response {
        Metrics::add(&self.sidecar.metrics.upstream_errors, 1);
        tracing::warn!(%error, "write not delivered");
        SidecarError::Upstream(error).into_response()
    }
}

/// A refusal before anything was placed or forwarded.
fn refused(sidecar: &Sidecar, error: SidecarError) -> Response {
    Metrics::add(&sidecar.metrics.rejected_requests, 1);
    error.into_response()
}

/// The state could not be written (the placements were taken back):
/// refused, or under `--on-state-failure pass` forwarded unstamped (see
/// [`state_failure`]).
async fn refused_or_passed(
    sidecar: &Sidecar,
    parts: &axum::http::request::Parts,
    body: bytes::Bytes,
    error: SidecarError,
) -> Response {
    match state_failure::pass_unstamped(sidecar, parts, body).await {
        Some(response) => response,
        None => refused(sidecar, error),
    }
}

/// `_bulk` and `/{index}/_bulk`.
pub async fn bulk(sidecar: Arc<Sidecar>, request: Request, path_index: Option<String>) -> Response {
    let started = Instant::now();
    Metrics::add(&sidecar.metrics.bulk_requests, 1);
    let (parts, body) = request.into_parts();
    let (_in_flight, body) = match body::admit_and_read(&sidecar, &parts.headers, body).await {
        Ok(admitted) => admitted,
        Err(error) => return refused(&sidecar, error),
    };
    // State known to be unwritable: answered before anything is placed.
    if let Some(response) = state_failure::before_placing(&sidecar, &parts, &body).await {
        return response;
    }
    let write = WriteRequest::new(&sidecar, &parts, path_index);
    let items = match bulk::parse_bulk(&body) {
        Ok(items) => Arc::new(items),
        Err(error) => {
            // The cluster rejects such a body as a whole; let it answer in
            // its own words (they differ between OpenSearch and
            // Elasticsearch versions). Nothing is stamped or counted.
            tracing::debug!(%error, "malformed bulk body forwarded unchanged");
            Metrics::add(&sidecar.metrics.malformed_bulk_requests, 1);
            return match write.send(body.to_vec()).await {
                Ok(answer) => {
                    if answer.status.is_success() {
                        tracing::warn!(%error, "the cluster accepted a bulk body the sidecar could not read: its documents are not stamped");
                    }
                    let parsed = serde_json::from_slice(&answer.body).ok();
                    write.finish(answer, parsed)
                }
                Err(error) => write.upstream_failure(error),
            };
        }
    };
    let analysed =
        match place::analyse_items(&sidecar, &body, &items, write.path_index.as_deref()).await {
            Ok(analysed) => analysed,
            Err(error) => return refused(&sidecar, error),
        };
    let stamped = match write.place_durably(analysed).await {
        Ok(stamped) => stamped,
        Err(error) => return refused_or_passed(&sidecar, &parts, body, error).await,
    };
    let segments = forward::stamped_segments(&body, &items, &stamped);
    let response = write.forward_bulk(&segments, &items, &stamped).await;
    sidecar.metrics.observe_write(started.elapsed());
    response
}

/// One document: `_doc` and `_create` (stamped), `_update` (stamped where it
/// can create the document), `DELETE _doc` (takes the count back).
pub async fn document(
    sidecar: Arc<Sidecar>,
    request: Request,
    index: String,
    kind: ActionKind,
) -> Response {
    let started = Instant::now();
    Metrics::add(&sidecar.metrics.document_requests, 1);
    let (parts, body) = request.into_parts();
    let (_in_flight, body) = match body::admit_and_read(&sidecar, &parts.headers, body).await {
        Ok(admitted) => admitted,
        Err(error) => return refused(&sidecar, error),
    };
    // State known to be unwritable: answered before anything is placed.
    if let Some(response) = state_failure::before_placing(&sidecar, &parts, &body).await {
        return response;
    }
    let write = WriteRequest::new(&sidecar, &parts, Some(index.clone()));
    let analysed = match place::analyse_one(&sidecar, &index, kind, body.clone()).await {
        Ok(analysed) => analysed,
        Err(error) => return refused(&sidecar, error),
    };
    let stamped = match write.place_durably(vec![analysed]).await {
        Ok(stamped) => stamped,
        Err(error) => return refused_or_passed(&sidecar, &parts, body, error).await,
    };
    let outgoing = match stamped.first().and_then(Option::as_ref) {
        Some(stamp) => stamp.bytes.clone(),
        None => body.to_vec(),
    };
    let answer = match write.send(outgoing).await {
        Ok(answer) => answer,
        Err(error) => {
            write.take_back(&stamped).await;
            return write.upstream_failure(error);
        }
    };
    let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
    let status = answer.status.as_u16();
    // `/{index}/_doc/{id}` and the like: the id is the last of three segments.
    let segments: Vec<&str> = parts
        .uri
        .path()
        .trim_start_matches('/')
        .split('/')
        .collect();
    let id = (segments.len() == 3).then(|| super::route::decode(segments[2]));
    let settlement = Settlement {
        kind,
        stamp: stamped
            .first()
            .and_then(Option::as_ref)
            .map(Stamped::placed),
        outcome: parsed
            .as_ref()
            .and_then(|value| Outcome::of_document(value, status)),
        index: Some(&index),
        id: id.as_deref(),
    };
    let ((), seq) = sidecar.write_ledger(|ledger| settle::settle(ledger, &settlement));
    write.persist_outcome(seq).await;
    sidecar.metrics.observe_write(started.elapsed());
    write.finish(answer, parsed)
}
