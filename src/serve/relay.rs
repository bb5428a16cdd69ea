//! Requests relayed to the cluster as the client sent them, and the
//! cluster's answer streamed back.
//!
//! Motivation: most requests (searches, reads, index administration) are
//! none of the sidecar's business, and a write the sidecar cannot stamp
//! (`--on-state-failure pass`) still has to reach the cluster. Both must
//! look to the client as if it had called the cluster itself.
//!
//! Design: one relay; what differs is a parameter. The body is either the
//! client's, streamed as it arrives with its own length and encoding
//! ([`RelayBody::Streamed`]), or one the sidecar already read and
//! decompressed ([`RelayBody::Read`]: its length and encoding headers are
//! the sidecar's, see [`upstream::request_headers`]). The answer is always
//! streamed back with the cluster's status and headers; a `mark` header
//! may be added to it. When requests are signed (`--upstream-auth
//! aws-sigv4`) a streamed body is read whole first: the signature covers
//! its hash. A cluster that cannot be reached is a 502/504 from
//! [`SidecarError`].

use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::http::header::HeaderName;
use axum::http::request::Parts;
use axum::response::Response;

use super::errors::{SidecarError, response_from};
use super::metrics::Metrics;
use super::sidecar::Sidecar;
use crate::upstream;

/// The body a relayed request carries.
pub enum RelayBody {
    /// The client's body, streamed unread.
    Streamed(Body),
    /// A body already read (and decompressed) by the sidecar.
    Read(Bytes),
}

/// Sends the request (method, path and query, headers) with `body` to the
/// cluster and streams its answer back, with `mark` added when given.
pub async fn relay(
    sidecar: &Sidecar,
    parts: &Parts,
    body: RelayBody,
    mark: Option<(HeaderName, HeaderValue)>,
) -> Response {
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let (headers, body) = match body {
        // A signature covers the body's hash: read it first (as it came,
        // encoding and length unchanged).
        RelayBody::Streamed(body) if sidecar.upstream.signs_requests() => {
            match axum::body::to_bytes(body, sidecar.limits.max_content_length).await {
                Ok(bytes) => (
                    upstream::request_headers(&parts.headers, false),
                    reqwest::Body::from(bytes),
                ),
                Err(_) => {
                    return SidecarError::TooLarge {
                        limit: sidecar.limits.max_content_length,
                    }
                    .into_response();
                }
            }
        }
        RelayBody::Streamed(body) => (
            upstream::request_headers(&parts.headers, false),
            reqwest::Body::wrap_stream(body.into_data_stream()),
        ),
        RelayBody::Read(bytes) => (
            upstream::request_headers(&parts.headers, true),
            reqwest::Body::from(bytes),
        ),
    };
    let answer = sidecar
        .upstream
        .send(parts.method.clone(), path_and_query, headers, body)
        .await;
    let mut response = match answer {
        Ok(answer) => {
            let status = answer.status();
            let headers = upstream::response_headers(answer.headers(), false);
            response_from(status, headers, Body::from_stream(answer.bytes_stream()))
        }
        Err(error) => {
            Metrics::add(&sidecar.metrics.upstream_errors, 1);
            tracing::warn!(%error, "relayed request failed");
            SidecarError::from(error).into_response()
        }
    };
    if let Some((name, value)) = mark {
        response.headers_mut().insert(name, value);
    }
    response
}
