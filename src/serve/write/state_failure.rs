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
//! Design: one decision (a setting,
//! [`crate::config::OnStateFailure::forwards_unstamped`], read in
//! [`refused_or_passed`]), taken where the write-ahead log write fails,
//! and before anything is placed while the store is known to be unwritable
//! ([`before_placing`]: refused writes then leave no effects waiting in
//! memory, so a long outage under heavy traffic does not grow the sidecar;
//! the store's own retry, from the background task, finds out when space
//! is back). Under `pass` the request goes to the cluster as the client
//! sent it (its `filter_path` too; the body as read and decompressed)
//! through the one relay ([`crate::serve::relay`](mod@crate::serve::relay)), the cluster's answer
//! goes back with the header `X-Neardup-Unstamped: state-unavailable`, and
//! `neardup_unstamped_forwarded_total` counts the requests.
//!
//! Consequences: under `pass`, documents written during the failure carry
//! no stamps until a backfill runs (`POST /_neardup/backfill`); deletes sent
//! meanwhile do not take their documents' counts back. Readiness stays
//! green under `pass` (writes are accepted) and says `degraded`.

use axum::body::Bytes;
use axum::http::HeaderValue;
use axum::http::header::HeaderName;
use axum::http::request::Parts;
use axum::response::Response;

use super::admission::refused;
use crate::serve::errors::SidecarError;
use crate::serve::metrics::Metrics;
use crate::serve::relay::{RelayBody, relay};
use crate::serve::sidecar::Sidecar;

/// Response header set on writes forwarded without stamps.
pub const UNSTAMPED_HEADER: &str = "x-neardup-unstamped";

/// While the store is out of space or failed: under `pass` the request is
/// forwarded unstamped, under `reject` refused with 503; `None` when the
/// store is writable (or there is none) and the write goes on.
pub(super) async fn before_placing(
    sidecar: &Sidecar,
    parts: &Parts,
    body: &Bytes,
) -> Option<Response> {
    let error = sidecar.ledger.writable().err()?;
    Some(refused_or_passed(sidecar, parts, body.clone(), error.into()).await)
}

/// The state could not be written (any placements were taken back):
/// under `pass` the request is forwarded unstamped, under `reject` it is
/// refused with `error` (503).
pub(super) async fn refused_or_passed(
    sidecar: &Sidecar,
    parts: &Parts,
    body: Bytes,
    error: SidecarError,
) -> Response {
    // A member that is not the leader never forwards unstamped: the
    // leader takes the write.
    if !sidecar.on_state_failure.forwards_unstamped() || matches!(error, SidecarError::Replica(_)) {
        return refused(&sidecar.metrics, error);
    }
    Metrics::add(&sidecar.metrics.unstamped_forwarded, 1);
    tracing::warn!("state unavailable: write forwarded unstamped (--on-state-failure pass)");
    let mark = (
        HeaderName::from_static(UNSTAMPED_HEADER),
        HeaderValue::from_static("state-unavailable"),
    );
    relay(sidecar, parts, RelayBody::Read(body), Some(mark)).await
}

#[cfg(test)]
mod tests {
    use crate::config::OnStateFailure;

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
