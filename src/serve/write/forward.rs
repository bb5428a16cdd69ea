//! Sending a stamped write to the cluster and shaping its answer for the
//! client: in one request, or in several when the stamped body is over the
//! cluster's limit (answers joined in order), with `filter_path` applied
//! by the sidecar.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Map, Value};

use super::settle::BulkAnswer;
use super::{Stamped, WriteRequest};
use crate::bulk::{self, BulkItem};
use crate::serve::errors::{SidecarError, response_from};
use crate::serve::filter_path::FilterPath;
use crate::serve::metrics::Metrics;
use crate::upstream::{self, UpstreamError};

/// The cluster's answer, read whole.
pub(super) struct UpstreamAnswer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl WriteRequest<'_> {
    /// Sends `body` to the cluster with the request's method, path and
    /// headers, and reads the answer.
    pub(super) async fn send(&self, body: Vec<u8>) -> Result<UpstreamAnswer, UpstreamError> {
        let sidecar = self.sidecar;
        let response = sidecar
            .upstream
            .send(
                self.method.clone(),
                &self.path_and_query,
                self.headers.clone(),
                reqwest::Body::from(body),
            )
            .await?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = sidecar
            .upstream
            .read_body(&self.path_and_query, response)
            .await?;
        Ok(UpstreamAnswer {
            status,
            headers,
            body,
        })
    }

    /// The answer for the client: as it came, or filtered by `filter_path`.
    pub(super) fn finish(&self, answer: UpstreamAnswer, parsed: Option<Value>) -> Response {
        // The cluster never filters an error body.
        let filter = self.filter.as_ref().filter(|_| answer.status.is_success());
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

    /// Sends the stamped bulk body in chunks (one chunk when it fits the
    /// cluster's limit), settling each chunk's items as its answer comes.
    /// One chunk: the answer goes back as it came. Several: the answers are
    /// joined, and a chunk that failed gets per-item errors like the
    /// cluster's.
    pub(super) async fn forward_bulk(
        &self,
        segments: &[Vec<u8>],
        items: &[BulkItem],
        stamped: &[Option<Stamped>],
    ) -> Response {
        let chunks = chunk_segments(segments, self.sidecar.limits.upstream_max_content_length);
        if let [whole] = chunks.as_slice() {
            let answer = match self.send(segments[whole.clone()].concat()).await {
                Ok(answer) => answer,
                Err(error) => {
                    self.take_back(stamped).await;
                    return self.upstream_failure(error);
                }
            };
            let parsed: Option<Value> = serde_json::from_slice(&answer.body).ok();
            let answered = parsed
                .as_ref()
                .filter(|_| answer.status == StatusCode::OK)
                .and_then(|value| value.get("items"))
                .and_then(Value::as_array)
                .filter(|answered| answered.len() == items.len());
            match answered {
                Some(answered) => self.settle_items(items, stamped, answered).await,
                None => {
                    if answer.status.is_success() {
                        Metrics::add(&self.sidecar.metrics.unreadable_upstream_answers, 1);
                        tracing::warn!(status = %answer.status, "bulk answer without one item per request item: nothing counted");
                    }
                    self.take_back(stamped).await;
                }
            }
            return self.finish(answer, parsed);
        }
        let mut joined_items: Vec<Value> = Vec::with_capacity(items.len());
        let mut took = 0u64;
        let mut errors = false;
        let mut first_headers: Option<HeaderMap> = None;
        for chunk in chunks {
            let chunk_items = &items[chunk.clone()];
            let answer = self.send(segments[chunk.clone()].concat()).await;
            if first_headers.is_none()
                && let Ok(answer) = &answer
            {
                first_headers = Some(answer.headers.clone());
            }
            let answered = match &answer {
                Ok(answer) if answer.status == StatusCode::OK => {
                    serde_json::from_slice::<BulkAnswer>(&answer.body)
                        .ok()
                        .filter(|read| read.items.len() == chunk_items.len())
                }
                _ => None,
            };
            let answered = match answered {
                Some(read) => {
                    took += read.took;
                    read.items
                }
                None => {
                    errors = true;
                    let failure = chunk_failure(answer.as_ref().map(|answer| answer.status));
                    chunk_items
                        .iter()
                        .map(|item| item_error(item, self.path_index.as_deref(), &failure))
                        .collect()
                }
            };
            errors |= answered.iter().any(item_failed);
            self.settle_items(chunk_items, &stamped[chunk], &answered)
                .await;
            joined_items.extend(answered);
        }
        let joined = serde_json::json!({ "took": took, "errors": errors, "items": joined_items });
        let mut headers = upstream::response_headers(&first_headers.unwrap_or_default(), true);
        headers.remove(header::CONTENT_ENCODING);
        headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json; charset=UTF-8"),
        );
        let value = match &self.filter {
            Some(filter) => filter.apply(joined),
            None => joined,
        };
        response_from(StatusCode::OK, headers, Body::from(value.to_string()))
    }
}

/// Takes `filter_path` off a query string.
pub(super) fn split_filter_path(query: Option<&str>) -> (String, Option<FilterPath>) {
    let Some(query) = query else {
        return (String::new(), None);
    };
    let mut kept = Vec::new();
    let mut filter = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("filter_path", value)) => {
                filter = FilterPath::parse(&crate::serve::route::decode(&value.replace('+', " ")));
            }
            _ => kept.push(pair),
        }
    }
    (kept.join("&"), filter)
}

pub(super) fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
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
    !super::settle::Outcome::of_item(item).is_some_and(|outcome| outcome.succeeded())
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
