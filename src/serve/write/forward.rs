//! Sending a stamped write to the cluster and shaping its answer for the
//! client: in one request, or in several when the stamped body is over the
//! cluster's limit (answers joined in order), with `filter_path` applied
//! by the sidecar.
//!
//! This step only sends and reads; the pipeline ([`super`]) settles each
//! answer (or chunk of answers) as it comes.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::{Map, Value};

use super::answer::{BulkAnswer, Outcome, UpstreamAnswer};
use super::place::Stamped;
use super::request::WriteRequest;
use crate::bulk::{self, BulkItem};
use crate::serve::errors::{SidecarError, response_from};
use crate::serve::filter_path::FilterPath;
use crate::serve::metrics::Metrics;
use crate::serve::sidecar::Sidecar;
use crate::upstream::{self, UpstreamError};

/// Sends `body` to the cluster with the request's method, path and
/// headers, and reads the answer.
pub(super) async fn send(
    write: &WriteRequest<'_>,
    body: Vec<u8>,
) -> Result<UpstreamAnswer, UpstreamError> {
    let upstream = &write.sidecar.upstream;
    let response = upstream
        .send(
            write.method.clone(),
            &write.path_and_query,
            write.headers.clone(),
            reqwest::Body::from(body),
        )
        .await?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = upstream.read_body(&write.path_and_query, response).await?;
    Ok(UpstreamAnswer {
        status,
        headers,
        body,
    })
}

/// The answer for the client: as it came, or filtered by `filter_path`.
pub(super) fn finish(
    write: &WriteRequest<'_>,
    answer: UpstreamAnswer,
    parsed: Option<Value>,
) -> Response {
    // The cluster never filters an error body.
    let filter = write.filter.as_ref().filter(|_| answer.status.is_success());
    match (filter, parsed) {
        (Some(filter), Some(value)) => {
            let headers = upstream::response_headers(&answer.headers, true);
            let body = filter.apply(value).to_string();
            response_from(answer.status, headers, Body::from(body))
        }
        _ => {
            let headers = upstream::response_headers(&answer.headers, false);
            response_from(answer.status, headers, Body::from(answer.body))
        }
    }
}

/// The client's answer when the write never reached the cluster (502/504).
pub(super) fn upstream_failure(sidecar: &Sidecar, error: UpstreamError) -> Response {
    Metrics::add(&sidecar.metrics.upstream_errors, 1);
    tracing::warn!(%error, "write not delivered");
    SidecarError::Upstream(error).into_response()
}

/// One chunk of a split bulk request, answered: the cluster's items, or
/// per-item errors like the cluster's when the chunk failed as a whole.
pub(super) struct ChunkAnswer {
    /// The cluster's headers, when it answered at all.
    headers: Option<HeaderMap>,
    took: u64,
    /// One per item of the chunk.
    pub items: Vec<Value>,
    /// No item list came back for the chunk.
    failed: bool,
    /// ... and the chunk may have been written: its items are read back
    /// rather than settled from the errors made up for them.
    pub in_doubt: bool,
}

/// Sends one chunk of a split bulk request (`body`, holding `chunk_items`).
pub(super) async fn send_chunk(
    write: &WriteRequest<'_>,
    body: Vec<u8>,
    chunk_items: &[BulkItem],
) -> ChunkAnswer {
    let answer = send(write, body).await;
    let headers = answer.as_ref().ok().map(|answer| answer.headers.clone());
    let read = match &answer {
        Ok(answer) if answer.status == StatusCode::OK => {
            serde_json::from_slice::<BulkAnswer>(&answer.body)
                .ok()
                .filter(|read| read.items.len() == chunk_items.len())
        }
        _ => None,
    };
    match read {
        Some(read) => ChunkAnswer {
            headers,
            took: read.took,
            items: read.items,
            failed: false,
            in_doubt: false,
        },
        None => {
            let in_doubt = match &answer {
                Ok(answer) => super::answer::may_have_been_applied(
                    answer.status,
                    serde_json::from_slice::<Value>(&answer.body).ok().as_ref(),
                ),
                Err(error) => error.may_have_arrived(),
            };
            let failure = chunk_failure(answer.as_ref().map(|answer| answer.status));
            let items = chunk_items
                .iter()
                .map(|item| item_error(item, write.path_index.as_deref(), &failure))
                .collect();
            ChunkAnswer {
                headers,
                took: 0,
                items,
                failed: true,
                in_doubt,
            }
        }
    }
}

/// The answers of a split bulk request, joined in order into one answer
/// like the cluster's.
pub(super) struct JoinedAnswer {
    items: Vec<Value>,
    took: u64,
    errors: bool,
    first_headers: Option<HeaderMap>,
}

impl JoinedAnswer {
    pub fn with_capacity(items: usize) -> Self {
        JoinedAnswer {
            items: Vec::with_capacity(items),
            took: 0,
            errors: false,
            first_headers: None,
        }
    }

    /// Adds the next chunk's answer.
    pub fn add(&mut self, chunk: ChunkAnswer) {
        if self.first_headers.is_none() {
            self.first_headers = chunk.headers;
        }
        self.took += chunk.took;
        self.errors |= chunk.failed || chunk.items.iter().any(item_failed);
        self.items.extend(chunk.items);
    }

    /// One answer for the client (status 200, as the cluster answers a
    /// bulk request whose items failed), `filter_path` applied.
    pub fn into_response(self, filter: Option<&FilterPath>) -> Response {
        let joined =
            serde_json::json!({ "took": self.took, "errors": self.errors, "items": self.items });
        let mut headers = upstream::response_headers(&self.first_headers.unwrap_or_default(), true);
        headers.remove(header::CONTENT_ENCODING);
        headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json; charset=UTF-8"),
        );
        let value = match filter {
            Some(filter) => filter.apply(joined),
            None => joined,
        };
        response_from(StatusCode::OK, headers, Body::from(value.to_string()))
    }
}

/// The body cut into one segment per item, stamped sources replaced (see
/// [`bulk::segments`]).
pub(super) fn stamped_segments(
    body: &[u8],
    items: &[BulkItem],
    stamped: &[Option<Stamped>],
) -> Vec<Vec<u8>> {
    let replacements: Vec<Option<&[u8]>> = stamped
        .iter()
        .map(|stamp| stamp.as_ref().map(|stamp| stamp.bytes.as_slice()))
        .collect();
    bulk::segments(body, items, &replacements)
}

/// Groups consecutive segments into bodies of at most `limit` bytes (a
/// single larger segment goes alone; the cluster answers it).
pub(super) fn chunk_segments(segments: &[Vec<u8>], limit: usize) -> Vec<std::ops::Range<usize>> {
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

fn item_failed(item: &Value) -> bool {
    !Outcome::of_item(item).is_some_and(|outcome| outcome.succeeded())
}

/// Why a chunk of a split bulk request has no items: the per-item error
/// its items get (status, type, reason), from the one error mapping.
fn chunk_failure(answer: Result<StatusCode, &UpstreamError>) -> (u16, &'static str, String) {
    match answer {
        Ok(status) => (
            status.as_u16(),
            "neardup_upstream_exception",
            format!("the cluster answered this part of the request with status {status}"),
        ),
        Err(error) => {
            let error = SidecarError::Upstream(error.clone());
            let (status, error_type) = error.status_and_type();
            (status.as_u16(), error_type, error.to_string())
        }
    }
}

/// A per-item error like the cluster's, for an item the sidecar could not
/// deliver.
fn item_error(
    item: &BulkItem,
    path_index: Option<&str>,
    (status, error_type, reason): &(u16, &'static str, String),
) -> Value {
    let mut inner = Map::new();
    if let Some(index) = item.index.as_deref().or(path_index) {
        inner.insert("_index".into(), Value::from(index));
    }
    if let Some(id) = &item.id {
        inner.insert("_id".into(), Value::from(id.as_str()));
    }
    inner.insert("status".into(), Value::from(*status));
    inner.insert(
        "error".into(),
        serde_json::json!({ "type": error_type, "reason": reason }),
    );
    let mut outer = Map::new();
    outer.insert(item.kind.name().into(), Value::Object(inner));
    Value::Object(outer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::stamping::StampTarget;

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
                fingerprint: Some(1),
                root: "0000000000000001".into(),
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
    fn a_failed_chunk_gets_the_clusters_error_for_its_fault() {
        let timeout = UpstreamError::Timeout {
            url: "u".into(),
            timeout: std::time::Duration::from_secs(1),
        };
        assert_eq!(chunk_failure(Err(&timeout)).0, 504);
        assert_eq!(chunk_failure(Err(&timeout)).1, "timeout_exception");
        assert_eq!(chunk_failure(Ok(StatusCode::BAD_GATEWAY)).0, 502);
    }
}
