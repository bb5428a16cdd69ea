//! Stamped writes: `_bulk`, `_doc` and `_create`.
//!
//! Steps of one request: read the body (limit, gzip/deflate), parse it as
//! the cluster does ([`crate::bulk`]), analyse every source on the blocking
//! pool (in parallel slices), place them in request order under one lock,
//! insert the stamps, forward, and settle the counts from the cluster's
//! per-item answers ([`Ledger`]).
//!
//! Decisions:
//!
//! - `index` and `create` sources are stamped. An `update` is stamped only
//!   where it can create a document: its `upsert` object, or its `doc` when
//!   `doc_as_upsert` is set (clients use that idiom to send whole
//!   documents). It counts only when the cluster says it created (or, for
//!   `doc_as_upsert`, replaced) the document. A partial `doc` or a script
//!   goes through unstamped: the stamp describes the text at index time;
//!   re-index the document to group it again.
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

use std::io::Read;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Map, Value};

use super::metrics::Metrics;
use super::upstream::{self, UpstreamError, cluster_error};
use super::{Sidecar, now_millis, too_large};
use crate::bulk::{self, ActionKind, BulkItem};
use crate::engine::{Analysis, Analyzer};
use crate::filter_path::FilterPath;
use crate::fingerprint::format_fingerprint;
use crate::forest::Fingerprint;
use crate::ledger::{DocumentKey, Ledger};

/// Expired nodes removed per stamped document, besides the background task.
const EXPIRY_BUDGET_PER_DOCUMENT: usize = 8;

/// Below this many sources a request is analysed in one piece.
const MIN_SOURCES_PER_SLICE: usize = 16;

/// Where a stamp goes in a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StampTarget {
    /// The source itself (`index`, `create`, `_doc`, `_create`).
    Source,
    /// The `upsert` object of an update.
    Upsert,
    /// The `doc` object of an update with `doc_as_upsert`.
    DocAsUpsert,
}

impl StampTarget {
    /// Whether the cluster stored the stamped document, given its answer.
    fn stored(self, status: u16, result: Option<&str>) -> bool {
        (200..300).contains(&status)
            && match self {
                StampTarget::Source => true,
                StampTarget::Upsert => result == Some("created"),
                StampTarget::DocAsUpsert => matches!(result, Some("created" | "updated")),
            }
    }
}

/// One source to stamp, analysed.
struct Analysed {
    target: StampTarget,
    /// The parsed source line (for an update, the whole update body).
    object: Map<String, Value>,
    /// The source line as sent.
    original: Bytes,
    analysis: Analysis,
}

/// One source stamped: its new bytes and where it was placed.
struct Stamped {
    target: StampTarget,
    fingerprint: Fingerprint,
    bytes: Vec<u8>,
}

/// What one item was sent with and what the cluster answered.
struct Settlement<'a> {
    kind: ActionKind,
    stamp: Option<(StampTarget, Fingerprint)>,
    answer: Option<(u16, &'a Map<String, Value>)>,
    /// `_index` / `_id` from the request, when the answer lacks them.
    index: Option<&'a str>,
    id: Option<&'a str>,
}

pub async fn bulk(sidecar: Arc<Sidecar>, request: Request, path_index: Option<String>) -> Response {
    let started = Instant::now();
    Metrics::add(&sidecar.metrics.bulk_requests, 1);
    let (parts, body) = request.into_parts();
    let (_in_flight, body) = match admit_and_read(&sidecar, &parts.headers, body).await {
        Ok(admitted) => admitted,
        Err(response) => return response,
    };
    // State known to be unwritable: answered before placing (state_failure.rs).
    if let Some(response) = super::state_failure::before_placing(&sidecar, &parts, &body).await {
        return response;
    }
    let (query, filter) = split_filter_path(parts.uri.query());
    let path_and_query = with_query(parts.uri.path(), &query);
    let headers = upstream::request_headers(&parts.headers, true);
    let items = match bulk::parse_bulk(&body) {
        Ok(items) => items,
        Err(error) => {
            // The cluster rejects such a body as a whole; let it answer in
            // its own words (they differ between OpenSearch and
            // Elasticsearch versions). Nothing is stamped or counted.
            tracing::debug!(%error, "malformed bulk body forwarded unchanged");
            Metrics::add(&sidecar.metrics.malformed_bulk_requests, 1);
            return match send_and_read(
                &sidecar,
                &parts.method,
                &path_and_query,
                headers,
                body.to_vec(),
            )
            .await
            {
                Ok(answer) => {
                    if answer.status.is_success() {
                        tracing::warn!(%error, "the cluster accepted a bulk body the sidecar could not read: its documents are not stamped");
                    }
                    let parsed = serde_json::from_slice(&answer.body).ok();
                    finish(answer, parsed, filter.as_ref())
                }
                Err(error) => upstream_failure(&sidecar, error),
            };
        }
    };
    let items = Arc::new(items);
    let analysed = match analyse_items(&sidecar, &body, &items, path_index.as_deref()).await {
        Ok(analysed) => analysed,
        Err(response) => return response,
    };
    let (stamped, seq) = place_and_stamp(&sidecar, analysed);
    // Write-ahead: every stamp that reaches the cluster names a class the
    // durable state knows.
    if let Err(error) = sidecar.persist(seq).await {
        let seq = settle_nothing_stored(&sidecar, &stamped);
        let _ = sidecar.persist(seq).await;
        // --on-state-failure pass: forwarded unstamped (see state_failure.rs).
        if let Some(response) = super::state_failure::pass_unstamped(&sidecar, &parts, body).await {
            return response;
        }
        return state_failure(&sidecar, &error);
    }
    let segments = stamped_segments(&body, &items, &stamped);
    let chunks = chunk_segments(&segments, sidecar.limits.upstream_max_content_length);
    let response = if chunks.len() == 1 {
        forward_whole(
            &sidecar,
            &parts.method,
            &path_and_query,
            headers,
            &segments,
            &items,
            &stamped,
            path_index.as_deref(),
            filter.as_ref(),
        )
        .await
    } else {
        forward_in_chunks(
            &sidecar,
            &parts.method,
            &path_and_query,
            headers,
            &segments,
            &chunks,
            &items,
            &stamped,
            path_index.as_deref(),
            filter.as_ref(),
        )
        .await
    };
    sidecar.metrics.observe_write(started.elapsed());
    response
}

/// Forwards the stamped body in one request and settles every item.
#[allow(clippy::too_many_arguments)]
async fn forward_whole(
    sidecar: &Sidecar,
    method: &Method,
    path_and_query: &str,
    headers: HeaderMap,
    segments: &[Vec<u8>],
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    path_index: Option<&str>,
    filter: Option<&FilterPath>,
) -> Response {
    let body: Vec<u8> = segments.concat();
    let answer = match send_and_read(sidecar, method, path_and_query, headers, body).await {
        Ok(answer) => answer,
        Err(error) => {
            let seq = settle_nothing_stored(sidecar, stamped);
            persist_outcome(sidecar, seq).await;
            return upstream_failure(sidecar, error);
        }
    };
    let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
    let answered_items = parsed
        .as_ref()
        .filter(|_| answer.status == StatusCode::OK)
        .and_then(|value| value.get("items"))
        .and_then(Value::as_array)
        .filter(|answered| answered.len() == items.len());
    let seq = match answered_items {
        Some(answered) => settle_items(sidecar, items, stamped, answered, path_index),
        None => {
            if answer.status.is_success() {
                Metrics::add(&sidecar.metrics.unreadable_upstream_answers, 1);
                tracing::warn!(status = %answer.status, "bulk answer without one item per request item: nothing counted");
            }
            settle_nothing_stored(sidecar, stamped)
        }
    };
    persist_outcome(sidecar, seq).await;
    finish(answer, parsed, filter)
}

/// Forwards the stamped body in several requests (it is over the cluster's
/// limit) and joins the answers.
#[allow(clippy::too_many_arguments)]
async fn forward_in_chunks(
    sidecar: &Sidecar,
    method: &Method,
    path_and_query: &str,
    headers: HeaderMap,
    segments: &[Vec<u8>],
    chunks: &[std::ops::Range<usize>],
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    path_index: Option<&str>,
    filter: Option<&FilterPath>,
) -> Response {
    let mut joined_items: Vec<Value> = Vec::with_capacity(items.len());
    let mut took = 0u64;
    let mut errors = false;
    let mut first_headers: Option<HeaderMap> = None;
    for chunk in chunks {
        let body: Vec<u8> = segments[chunk.clone()].concat();
        let answer = send_and_read(sidecar, method, path_and_query, headers.clone(), body).await;
        let chunk_items = &items[chunk.clone()];
        let answered: Option<Vec<Value>> = match &answer {
            Ok(answer) if answer.status == StatusCode::OK => {
                serde_json::from_slice::<Value>(&answer.body)
                    .ok()
                    .and_then(|value| {
                        took += value.get("took").and_then(Value::as_u64).unwrap_or(0);
                        match value.get("items") {
                            Some(Value::Array(answered)) if answered.len() == chunk_items.len() => {
                                Some(answered.clone())
                            }
                            _ => None,
                        }
                    })
            }
            _ => None,
        };
        if first_headers.is_none()
            && let Ok(answer) = &answer
        {
            first_headers = Some(answer.headers.clone());
        }
        let answered = answered.unwrap_or_else(|| {
            errors = true;
            let (status, error_type, reason) = match &answer {
                Ok(answer) => (
                    answer.status.as_u16(),
                    "neardup_upstream_exception",
                    format!(
                        "the cluster answered this part of the request with status {}",
                        answer.status
                    ),
                ),
                Err(UpstreamError::Timeout { .. }) => {
                    (504, "timeout_exception", answer_error_text(&answer))
                }
                Err(UpstreamError::Unreachable { .. }) => (
                    502,
                    "connect_transport_exception",
                    answer_error_text(&answer),
                ),
            };
            chunk_items
                .iter()
                .map(|item| item_error(item, path_index, status, error_type, &reason))
                .collect()
        });
        errors |= answered.iter().any(item_failed);
        let seq = settle_items(
            sidecar,
            chunk_items,
            &stamped[chunk.clone()],
            &answered,
            path_index,
        );
        persist_outcome(sidecar, seq).await;
        joined_items.extend(answered);
    }
    let joined = serde_json::json!({ "took": took, "errors": errors, "items": joined_items });
    let mut headers = upstream::response_headers(&first_headers.unwrap_or_default(), true);
    headers.remove(header::CONTENT_ENCODING);
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    let value = match filter {
        Some(filter) => filter.apply(joined),
        None => joined,
    };
    upstream::response_from(StatusCode::OK, headers, Body::from(value.to_string()))
}

fn answer_error_text(answer: &Result<UpstreamAnswer, UpstreamError>) -> String {
    match answer {
        Ok(answer) => format!("status {}", answer.status),
        Err(error) => error.to_string(),
    }
}

fn item_failed(item: &Value) -> bool {
    item.as_object()
        .and_then(|object| object.values().next())
        .and_then(|inner| inner.get("status"))
        .and_then(Value::as_u64)
        .is_none_or(|status| !(200..300).contains(&status))
}

/// A per-item error like the cluster's, for an item the sidecar could not deliver.
fn item_error(
    item: &BulkItem,
    path_index: Option<&str>,
    status: u16,
    error_type: &str,
    reason: &str,
) -> Value {
    let mut inner = Map::new();
    if let Some(index) = item.index.as_deref().or(path_index) {
        inner.insert("_index".into(), Value::from(index));
    }
    if let Some(id) = &item.id {
        inner.insert("_id".into(), Value::from(id.as_str()));
    }
    inner.insert("status".into(), Value::from(status));
    inner.insert(
        "error".into(),
        serde_json::json!({ "type": error_type, "reason": reason }),
    );
    let mut outer = Map::new();
    outer.insert(item.kind.name().into(), Value::Object(inner));
    Value::Object(outer)
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
    let (_in_flight, body) = match admit_and_read(&sidecar, &parts.headers, body).await {
        Ok(admitted) => admitted,
        Err(response) => return response,
    };
    // State known to be unwritable: answered before placing (state_failure.rs).
    if let Some(response) = super::state_failure::before_placing(&sidecar, &parts, &body).await {
        return response;
    }
    let analyzer = sidecar.analyzers.for_index(Some(&index)).clone();
    let source = body.clone();
    let analysed = tokio::task::spawn_blocking(move || match kind {
        ActionKind::Index | ActionKind::Create => {
            analyse_source(&analyzer, source, StampTarget::Source)
        }
        ActionKind::Update => analyse_update(&analyzer, source),
        ActionKind::Delete => None,
    })
    .await
    .unwrap_or_else(|_| None);
    let (mut stamped, seq) = place_and_stamp(&sidecar, vec![analysed]);
    let stamped = stamped.pop().flatten();
    if let Err(error) = sidecar.persist(seq).await {
        let seq = settle_nothing_stored(&sidecar, std::slice::from_ref(&stamped));
        let _ = sidecar.persist(seq).await;
        // --on-state-failure pass: forwarded unstamped (see state_failure.rs).
        if let Some(response) = super::state_failure::pass_unstamped(&sidecar, &parts, body).await {
            return response;
        }
        return state_failure(&sidecar, &error);
    }
    let outgoing = match &stamped {
        Some(stamped) => stamped.bytes.clone(),
        None => body.to_vec(),
    };
    let (query, filter) = split_filter_path(parts.uri.query());
    let path_and_query = with_query(parts.uri.path(), &query);
    let headers = upstream::request_headers(&parts.headers, true);
    let answer =
        match send_and_read(&sidecar, &parts.method, &path_and_query, headers, outgoing).await {
            Ok(answer) => answer,
            Err(error) => {
                settle_nothing_stored(&sidecar, std::slice::from_ref(&stamped));
                return upstream_failure(&sidecar, error);
            }
        };
    let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
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
            .as_ref()
            .map(|stamped| (stamped.target, stamped.fingerprint)),
        answer: parsed
            .as_ref()
            .and_then(Value::as_object)
            .map(|object| (answer.status.as_u16(), object)),
        index: Some(&index),
        id: id.as_deref(),
    };
    let ((), seq) = sidecar.write_ledger(|ledger| settle(ledger, &settlement));
    persist_outcome(&sidecar, seq).await;
    sidecar.metrics.observe_write(started.elapsed());
    finish(answer, parsed, filter.as_ref())
}

/// Takes `filter_path` off a query string.
fn split_filter_path(query: Option<&str>) -> (String, Option<FilterPath>) {
    let Some(query) = query else {
        return (String::new(), None);
    };
    let mut kept = Vec::new();
    let mut filter = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("filter_path", value)) => {
                filter = FilterPath::parse(&super::route::decode(&value.replace('+', " ")));
            }
            _ => kept.push(pair),
        }
    }
    (kept.join("&"), filter)
}

fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

/// Reserves in-flight bytes for the request and reads its body; the
/// cluster-shaped error (429, 413, 400) otherwise.
async fn admit_and_read<'a>(
    sidecar: &'a Sidecar,
    headers: &HeaderMap,
    body: Body,
) -> Result<(super::InFlight<'a>, Bytes), Response> {
    let Some(mut in_flight) = admit(sidecar, headers) else {
        return Err(rejected(sidecar, too_many_requests()));
    };
    match read_body(sidecar, headers, body).await {
        Ok(body) => {
            in_flight.cover(body.len());
            Ok((in_flight, body))
        }
        Err(response) => Err(rejected(sidecar, response)),
    }
}

fn admit<'a>(sidecar: &'a Sidecar, headers: &HeaderMap) -> Option<super::InFlight<'a>> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(sidecar.limits.max_content_length.min(1 << 20));
    sidecar.admit(declared.min(sidecar.limits.max_content_length))
}

fn too_many_requests() -> Response {
    cluster_error(
        StatusCode::TOO_MANY_REQUESTS,
        "es_rejected_execution_exception",
        "rejected execution of a write: too many request bytes are being stamped (max_in_flight_bytes); retry later",
    )
}

fn rejected(sidecar: &Sidecar, response: Response) -> Response {
    Metrics::add(&sidecar.metrics.rejected_requests, 1);
    response
}

/// The durable state could not be written: the write is refused (nothing
/// was forwarded), as the cluster refuses writes it cannot keep.
fn state_failure(sidecar: &Sidecar, error: &str) -> Response {
    Metrics::add(&sidecar.metrics.rejected_requests, 1);
    tracing::error!(%error, "state log not written: write refused");
    cluster_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "neardup_state_exception",
        &format!("the sidecar cannot write its state, nothing was indexed: {error}"),
    )
}

/// Persists the outcome of a write before the client is answered. The
/// documents are in the cluster and their placement is already durable, so
/// a failure here is logged, not turned into an error for the client.
async fn persist_outcome(sidecar: &Sidecar, seq: u64) {
    if let Err(error) = sidecar.persist(seq).await {
        tracing::error!(%error, "state log not written after the cluster answered; counts may drift after a restart");
    }
}

fn upstream_failure(sidecar: &Sidecar, error: UpstreamError) -> Response {
    Metrics::add(&sidecar.metrics.upstream_errors, 1);
    tracing::warn!(%error, "write not delivered");
    error.into_response()
}

/// Reads the whole body within `max_content_length`, decompressed.
async fn read_body(sidecar: &Sidecar, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
    let limit = sidecar.limits.max_content_length;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(too_large(limit));
    }
    let mut stream = body.into_data_stream();
    let mut buffer = Vec::with_capacity(declared.map_or(0, |length| length as usize));
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| {
            cluster_error(
                StatusCode::BAD_REQUEST,
                "parse_exception",
                &format!("cannot read the request body: {error}"),
            )
        })?;
        if buffer.len() + chunk.len() > limit {
            return Err(too_large(limit));
        }
        buffer.extend_from_slice(&chunk);
    }
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_ascii_lowercase());
    let decoded = match encoding.as_deref() {
        None | Some("" | "identity") => return Ok(Bytes::from(buffer)),
        Some("gzip" | "x-gzip") => {
            read_limited(flate2::read::MultiGzDecoder::new(buffer.as_slice()), limit)
        }
        Some("deflate") => read_limited(flate2::read::ZlibDecoder::new(buffer.as_slice()), limit),
        Some(other) => {
            return Err(cluster_error(
                StatusCode::BAD_REQUEST,
                "illegal_argument_exception",
                &format!("unsupported Content-Encoding [{other}]: use gzip or deflate"),
            ));
        }
    };
    match decoded {
        Ok(Some(bytes)) => Ok(Bytes::from(bytes)),
        Ok(None) => Err(too_large(limit)),
        Err(error) => Err(cluster_error(
            StatusCode::BAD_REQUEST,
            "parse_exception",
            &format!("cannot decompress the request body: {error}"),
        )),
    }
}

/// Reads at most `limit` bytes; `None` when there are more.
fn read_limited(reader: impl Read, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut out)?;
    Ok((out.len() <= limit).then_some(out))
}

/// Analyses every stampable source, in parallel slices on the blocking pool.
async fn analyse_items(
    sidecar: &Arc<Sidecar>,
    body: &Bytes,
    items: &Arc<Vec<BulkItem>>,
    path_index: Option<&str>,
) -> Result<Vec<Option<Analysed>>, Response> {
    let workers = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let slice_len = items.len().div_ceil(workers).max(MIN_SOURCES_PER_SLICE);
    let mut handles = Vec::new();
    for start in (0..items.len()).step_by(slice_len) {
        let end = (start + slice_len).min(items.len());
        let sidecar = sidecar.clone();
        let body = body.clone();
        let items = items.clone();
        let path_index = path_index.map(str::to_string);
        handles.push(tokio::task::spawn_blocking(move || {
            items[start..end]
                .iter()
                .map(|item| analyse_item(&sidecar, &body, item, path_index.as_deref()))
                .collect::<Vec<_>>()
        }));
    }
    let mut analysed = Vec::with_capacity(items.len());
    for handle in handles {
        match handle.await {
            Ok(slice) => analysed.extend(slice),
            Err(error) => {
                tracing::error!(%error, "analysis failed");
                return Err(cluster_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "neardup_exception",
                    "the sidecar failed to analyse the request; nothing was sent to the cluster",
                ));
            }
        }
    }
    Ok(analysed)
}

fn analyse_item(
    sidecar: &Sidecar,
    body: &Bytes,
    item: &BulkItem,
    path_index: Option<&str>,
) -> Option<Analysed> {
    let source = body.slice(item.source.clone()?);
    let analyzer = sidecar
        .analyzers
        .for_index(item.index.as_deref().or(path_index));
    match item.kind {
        ActionKind::Index | ActionKind::Create => {
            analyse_source(analyzer, source, StampTarget::Source)
        }
        ActionKind::Update => analyse_update(analyzer, source),
        ActionKind::Delete => None,
    }
}

fn analyse_source(analyzer: &Analyzer, source: Bytes, target: StampTarget) -> Option<Analysed> {
    let object = bulk::parse_source(&source)?;
    let document = Value::Object(object);
    let analysis = analyzer.analyze_document(&document)?;
    let Value::Object(object) = document else {
        return None;
    };
    Some(Analysed {
        target,
        object,
        original: source,
        analysis,
    })
}

/// An update's `upsert`, or its `doc` with `doc_as_upsert`.
fn analyse_update(analyzer: &Analyzer, source: Bytes) -> Option<Analysed> {
    let object = bulk::parse_source(&source)?;
    let doc_as_upsert = object.get("doc_as_upsert").and_then(Value::as_bool) == Some(true);
    let (target, key) = if object.get("upsert").is_some_and(Value::is_object) {
        (StampTarget::Upsert, "upsert")
    } else if doc_as_upsert && object.get("doc").is_some_and(Value::is_object) {
        (StampTarget::DocAsUpsert, "doc")
    } else {
        return None;
    };
    let analysis = analyzer.analyze_document(object.get(key)?)?;
    Some(Analysed {
        target,
        object,
        original: source,
        analysis,
    })
}

/// Places the analysed sources in order under one lock, then writes the
/// stamps. Returns them and the log position to persist before forwarding.
fn place_and_stamp(
    sidecar: &Sidecar,
    analysed: Vec<Option<Analysed>>,
) -> (Vec<Option<Stamped>>, u64) {
    let now = now_millis();
    let count = analysed.iter().flatten().count();
    let (placed, seq) = sidecar.write_ledger(|ledger| {
        if count > 0 {
            let (removed, _) = ledger.expire(now, EXPIRY_BUDGET_PER_DOCUMENT * count);
            Metrics::add(&sidecar.metrics.expired_nodes, removed as u64);
        }
        let mut placed = Vec::with_capacity(analysed.len());
        for entry in analysed {
            placed.push(entry.map(|analysed| {
                let placement = ledger.place(analysed.analysis, now);
                (
                    analysed.target,
                    analysed.object,
                    analysed.original,
                    placement,
                )
            }));
        }
        placed
    });
    Metrics::add(&sidecar.metrics.stamped_documents, count as u64);
    let stamped = placed
        .into_iter()
        .map(|entry| {
            let (target, object, original, placement) = entry?;
            let root = format_fingerprint(placement.root);
            let own = format_fingerprint(placement.fingerprint);
            let stamps = [
                (sidecar.root_field.as_str(), root.as_str()),
                (sidecar.simhash_field.as_str(), own.as_str()),
            ];
            Some(Stamped {
                target,
                fingerprint: placement.fingerprint,
                bytes: stamp_object(target, object, &original, &stamps),
            })
        })
        .collect();
    (stamped, seq)
}

/// The stamped source line. A plain source keeps its bytes (stamps
/// inserted before the closing brace); an update body is serialised again.
fn stamp_object(
    target: StampTarget,
    mut object: Map<String, Value>,
    original: &[u8],
    stamps: &[(&str, &str)],
) -> Vec<u8> {
    let key = match target {
        StampTarget::Source => return bulk::insert_fields(original, object, stamps),
        StampTarget::Upsert => "upsert",
        StampTarget::DocAsUpsert => "doc",
    };
    if let Some(Value::Object(inner)) = object.get_mut(key) {
        for (name, value) in stamps {
            inner.insert((*name).to_string(), Value::from(*value));
        }
    }
    Value::Object(object).to_string().into_bytes()
}

/// The body cut into one segment per item, stamped sources replaced (see
/// [`bulk::segments`]).
fn stamped_segments(body: &[u8], items: &[BulkItem], stamped: &[Option<Stamped>]) -> Vec<Vec<u8>> {
    let replacements: Vec<Option<&[u8]>> = stamped
        .iter()
        .map(|stamp| stamp.as_ref().map(|stamp| stamp.bytes.as_slice()))
        .collect();
    bulk::segments(body, items, &replacements)
}

/// Groups consecutive segments into bodies of at most `limit` bytes (a
/// single larger segment goes alone; the cluster answers it).
fn chunk_segments(segments: &[Vec<u8>], limit: usize) -> Vec<std::ops::Range<usize>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for (position, segment) in segments.iter().enumerate() {
        if position > start && size + segment.len() > limit {
            chunks.push(start..position);
            start = position;
            size = 0;
        }
        size += segment.len();
    }
    chunks.push(start..segments.len());
    chunks
}

struct UpstreamAnswer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

async fn send_and_read(
    sidecar: &Sidecar,
    method: &Method,
    path_and_query: &str,
    headers: HeaderMap,
    body: Vec<u8>,
) -> Result<UpstreamAnswer, UpstreamError> {
    let response = sidecar
        .upstream
        .send(
            method.clone(),
            path_and_query,
            headers,
            reqwest::Body::from(body),
        )
        .await?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = sidecar.upstream.read_body(path_and_query, response).await?;
    Ok(UpstreamAnswer {
        status,
        headers,
        body,
    })
}

/// The answer for the client: as it came, or filtered by `filter_path`.
fn finish(answer: UpstreamAnswer, parsed: Option<Value>, filter: Option<&FilterPath>) -> Response {
    // The cluster never filters an error body.
    let filter = filter.filter(|_| answer.status.is_success());
    match (filter, parsed) {
        (Some(filter), Some(value)) => {
            let headers = upstream::response_headers(&answer.headers, true);
            let body = filter.apply(value).to_string();
            upstream::response_from(answer.status, headers, Body::from(body))
        }
        _ => {
            let headers = upstream::response_headers(&answer.headers, false);
            upstream::response_from(answer.status, headers, Body::from(answer.body))
        }
    }
}

/// Takes back every stamped document (nothing reached the cluster).
/// Returns the log position to persist.
fn settle_nothing_stored(sidecar: &Sidecar, stamped: &[Option<Stamped>]) -> u64 {
    sidecar
        .write_ledger(|ledger| {
            for stamp in stamped.iter().flatten() {
                ledger.not_stored(stamp.fingerprint);
            }
        })
        .1
}

fn settle_items(
    sidecar: &Sidecar,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    answered: &[Value],
    path_index: Option<&str>,
) -> u64 {
    sidecar
        .write_ledger(|ledger| settle_answered(ledger, items, stamped, answered, path_index))
        .1
}

fn settle_answered(
    ledger: &mut Ledger,
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
    answered: &[Value],
    path_index: Option<&str>,
) {
    for ((item, stamp), answer) in items.iter().zip(stamped).zip(answered) {
        let inner = answer
            .as_object()
            .and_then(|object| object.values().next())
            .and_then(Value::as_object);
        let status = inner
            .and_then(|inner| inner.get("status"))
            .and_then(Value::as_u64)
            .and_then(|status| u16::try_from(status).ok());
        settle(
            ledger,
            &Settlement {
                kind: item.kind,
                stamp: stamp
                    .as_ref()
                    .map(|stamp| (stamp.target, stamp.fingerprint)),
                answer: inner.zip(status).map(|(inner, status)| (status, inner)),
                index: item.index.as_deref().or(path_index),
                id: item.id.as_deref(),
            },
        );
    }
}

/// Applies one item's outcome to the counts.
fn settle(ledger: &mut Ledger, settlement: &Settlement<'_>) {
    let key = settlement.answer.and_then(|(_, answer)| {
        let index = answer
            .get("_index")
            .and_then(Value::as_str)
            .or(settlement.index)?;
        let id = answer
            .get("_id")
            .and_then(Value::as_str)
            .or(settlement.id)?;
        Some(DocumentKey::new(index, id))
    });
    let status = settlement.answer.map_or(0, |(status, _)| status);
    let result = settlement
        .answer
        .and_then(|(_, answer)| answer.get("result"))
        .and_then(Value::as_str);
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
            let succeeded = (200..300).contains(&status);
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

    #[test]
    fn filter_path_is_taken_off_the_query() {
        let (query, filter) =
            split_filter_path(Some("refresh=true&filter_path=items.*.error,took&pretty"));
        assert_eq!(query, "refresh=true&pretty");
        assert!(filter.is_some());
        assert_eq!(split_filter_path(None).0, "");
    }

    #[test]
    fn segments_keep_every_byte_and_chunks_respect_the_limit() {
        let body = b"\n{\"index\":{}}\r\n{\"a\":1}\r\n{\"delete\":{\"_id\":\"1\"}}\n\n{\"create\":{}}\n{\"b\":2}\n\n";
        let items = bulk::parse_bulk(body).expect("valid");
        let unstamped: Vec<Option<Stamped>> = items.iter().map(|_| None).collect();
        let segments = stamped_segments(body, &items, &unstamped);
        assert_eq!(segments.concat(), body.to_vec());
        assert_eq!(segments.len(), 3);
        let sizes: Vec<usize> = segments.iter().map(Vec::len).collect();
        let chunks = chunk_segments(&segments, sizes[0] + sizes[1]);
        assert_eq!(chunks, vec![0..2, 2..3]);
        assert_eq!(chunk_segments(&segments, 1), vec![0..1, 1..2, 2..3]);
        assert_eq!(chunk_segments(&segments, usize::MAX), vec![0..3]);
    }

    #[test]
    fn stamped_sources_replace_only_their_line() {
        let body = b"{\"index\":{}}\n{\"a\":1}\n{\"delete\":{\"_id\":\"1\"}}\n";
        let items = bulk::parse_bulk(body).expect("valid");
        let stamped = vec![
            Some(Stamped {
                target: StampTarget::Source,
                fingerprint: 1,
                bytes: b"{\"a\":1,\"r\":\"x\"}".to_vec(),
            }),
            None,
        ];
        let segments = stamped_segments(body, &items, &stamped);
        assert_eq!(
            segments.concat(),
            b"{\"index\":{}}\n{\"a\":1,\"r\":\"x\"}\n{\"delete\":{\"_id\":\"1\"}}\n".to_vec()
        );
    }

    #[test]
    fn updates_are_stamped_where_they_create_a_document() {
        let mut object = Map::new();
        object.insert("doc".into(), serde_json::json!({"t": "x"}));
        object.insert("upsert".into(), serde_json::json!({"t": "y"}));
        let bytes = stamp_object(StampTarget::Upsert, object, b"", &[("cluster_root", "r")]);
        assert_eq!(
            bytes,
            br#"{"doc":{"t":"x"},"upsert":{"t":"y","cluster_root":"r"}}"#.to_vec()
        );
        assert!(StampTarget::Upsert.stored(201, Some("created")));
        assert!(!StampTarget::Upsert.stored(200, Some("updated")));
        assert!(StampTarget::DocAsUpsert.stored(200, Some("updated")));
        assert!(!StampTarget::DocAsUpsert.stored(200, Some("noop")));
        assert!(!StampTarget::Source.stored(429, None));
    }
}
