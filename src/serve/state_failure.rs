//! What a write does when the sidecar cannot write its state:
//! `--on-state-failure reject` (default) or `pass`.
//!
//! Motivation: the sidecar sits in the write path. With its state directory
//! full or broken it cannot promise that a stamp names a class it will
//! remember, so by default it refuses the write (503, nothing indexed): the
//! client retries later and nothing is lost or ungrouped. Some teams would
//! rather never stop ingest: a document indexed without stamps is better
//! than one not indexed, since a backfill can stamp it afterwards.
//!
//! Design: one decision ([`OnStateFailure::forwards_unstamped`], a setting), taken
//! where the write-ahead log write fails, and before anything is placed
//! while the store is known to be unwritable ([`before_placing`]: refused
//! writes then leave no effects waiting in memory, so a long outage under
//! heavy traffic does not grow the sidecar; the store's own retry, from the
//! background task, finds out when space is back). Under
//! `pass` the request goes to the cluster as the client sent it (its
//! `filter_path` too), the cluster's answer goes back with the header
//! `X-Neardup-Unstamped: state-unavailable`, and
//! `neardup_unstamped_forwarded_total` counts the requests.
//!
//! Consequences: under `pass`, documents written during the failure carry
//! no stamps until a backfill runs (`POST /_neardup/backfill`); deletes sent
//! meanwhile do not take their documents' counts back. Readiness stays
//! green under `pass` (writes are accepted) and says `degraded`.

use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::response::Response;

use super::Sidecar;
use super::errors::{SidecarError, response_from};
use super::metrics::Metrics;
use crate::persist::StoreHealth;
use crate::upstream;

/// Response header set on writes forwarded without stamps.
pub const UNSTAMPED_HEADER: &str = "x-neardup-unstamped";

pub use crate::config::OnStateFailure;

/// While the store is out of space or failed: under `pass` the request is
/// forwarded unstamped, under `reject` refused with 503; `None` when the
/// store is writable (or there is none) and the write goes on.
pub async fn before_placing(sidecar: &Sidecar, parts: &Parts, body: &Bytes) -> Option<Response> {
    let store = sidecar.store.as_ref()?;
    let reason = match store.health() {
        StoreHealth::Writable => return None,
        StoreHealth::OutOfSpace { reason, .. } => {
            format!("state directory out of space ({reason})")
        }
        StoreHealth::Failed { reason } => reason,
    };
    if let Some(response) = pass_unstamped(sidecar, parts, body.clone()).await {
        return Some(response);
    }
    Metrics::add(&sidecar.metrics.rejected_requests, 1);
    Some(SidecarError::StateUnavailable(reason).into_response())
}

/// Under `pass`, forwards the request as the client sent it (body already
/// read, decompressed) and answers with the cluster's answer, marked.
/// `None` under `reject`: the caller answers 503.
pub async fn pass_unstamped(sidecar: &Sidecar, parts: &Parts, body: Bytes) -> Option<Response> {
    if !sidecar.on_state_failure.forwards_unstamped() {
        return None;
    }
    Metrics::add(&sidecar.metrics.unstamped_forwarded, 1);
    tracing::warn!("state unavailable: write forwarded unstamped (--on-state-failure pass)");
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let headers = upstream::request_headers(&parts.headers, true);
    let answer = sidecar
        .upstream
        .send(
            parts.method.clone(),
            path_and_query,
            headers,
            reqwest::Body::from(body),
        )
        .await;
    let mut response = match answer {
        Ok(answer) => {
            let status = answer.status();
            let headers = upstream::response_headers(answer.headers(), false);
            response_from(status, headers, Body::from_stream(answer.bytes_stream()))
        }
        Err(error) => {
            Metrics::add(&sidecar.metrics.upstream_errors, 1);
            SidecarError::from(error).into_response()
        }
    };
    response.headers_mut().insert(
        UNSTAMPED_HEADER,
        HeaderValue::from_static("state-unavailable"),
    );
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reject_is_the_default_and_only_pass_forwards() {
        assert_eq!(OnStateFailure::default(), OnStateFailure::Reject);
        assert!(!OnStateFailure::Reject.forwards_unstamped());
        assert!(OnStateFailure::Pass.forwards_unstamped());
        assert_eq!("pass".parse(), Ok(OnStateFailure::Pass));
        assert_eq!("reject".parse(), Ok(OnStateFailure::Reject));
        assert!("drop".parse::<OnStateFailure>().is_err());
    }
}
