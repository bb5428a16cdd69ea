//! One place that decides what the client sees when something goes wrong:
//! the status, and the cluster's own error envelope.
//!
//! Motivation: a drop-in sidecar must fail the way the cluster fails, so
//! clients and their retry logic need no change, and it must say whose
//! fault a failure is: the client's request (4xx), the cluster (502/504),
//! the sidecar's state (503) or the sidecar itself (500).
//!
//! Design: every failure the sidecar answers itself is a [`SidecarError`];
//! [`SidecarError::into_response`] maps it to a status and an error `type`
//! as OpenSearch and Elasticsearch name them, in their envelope
//! `{"error":{"root_cause":[{type,reason}],type,reason},"status":N}`.
//! Answers of the cluster itself are never rewritten here. A failure to
//! write the durable state is a [`StateError`], which keeps the store's own
//! error (its path and cause) for the log and for the client's 503.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::persist::store::StoreError;
use crate::replica::state::ReplicaError;
use crate::upstream::UpstreamError;

/// A failure the sidecar answers itself.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    /// The body is over `max_content_length` (the cluster's 413).
    #[error("request body is too large: the limit (max_content_length) is [{limit}] bytes")]
    TooLarge { limit: usize },
    /// Too many request bytes are being stamped (the cluster's indexing
    /// pressure answer).
    #[error(
        "rejected execution of a write: too many request bytes are being stamped (max_in_flight_bytes); retry later"
    )]
    TooManyRequests,
    /// The body could not be read or decompressed.
    #[error("{0}")]
    UnreadableBody(String),
    /// The request asks for something the sidecar cannot do.
    #[error("{0}")]
    IllegalArgument(String),
    /// A request body that is not the JSON the endpoint reads.
    #[error("{0}")]
    ContentParse(String),
    /// The method is not one the endpoint answers.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// A state-changing endpoint called from elsewhere than loopback
    /// without the admin token.
    #[error("{0}")]
    Forbidden(String),
    /// A state-changing `POST` without a JSON content type (the cluster's
    /// 406 for a content type it does not read).
    #[error("{0}")]
    NotAcceptable(String),
    /// No such thing (a class, a document).
    #[error("{0}")]
    NotFound(String),
    /// Something of that name already runs (a backfill job).
    #[error("{0}")]
    AlreadyExists(String),
    /// A feature this sidecar was started without.
    #[error("{0}")]
    Unavailable(String),
    /// The durable state cannot be written: nothing was forwarded.
    #[error("the sidecar cannot write its state, nothing was indexed: {0}")]
    StateUnavailable(#[from] StateError),
    /// A member of a replica group that may not serve (or acknowledge)
    /// this write: 503 naming the leader when it is known.
    #[error(transparent)]
    Replica(#[from] ReplicaError),
    /// The cluster could not be reached or stayed silent.
    #[error(transparent)]
    Upstream(#[from] UpstreamError),
    /// The cluster answered, but not in a form the sidecar can read.
    #[error("{0}")]
    UpstreamAnswer(String),
    /// A bug of the sidecar (a worker panicked): nothing was forwarded.
    #[error("{0}")]
    Internal(String),
}

/// Why the durable state could not be written (the sidecar's fault, not
/// the client's: a 503 through [`SidecarError::StateUnavailable`]).
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Appending to or syncing the log failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store is known to be out of space; nothing was tried.
    #[error("state directory out of space ({reason})")]
    OutOfSpace { reason: String },
    /// The store failed earlier (a failed fsync, an unwritable log) and
    /// needs a restart; nothing was tried.
    #[error("{reason}")]
    Failed { reason: String },
    /// The blocking task that syncs the log did not finish (it panicked).
    #[error(transparent)]
    Worker(#[from] tokio::task::JoinError),
    /// The replica group's log did not take the effects, or this member
    /// lost the lease.
    #[error(transparent)]
    Replica(#[from] ReplicaError),
}

impl SidecarError {
    /// The status and the error `type` the cluster uses for such a failure.
    pub fn status_and_type(&self) -> (StatusCode, &'static str) {
        match self {
            SidecarError::TooLarge { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "content_too_long_exception")
            }
            SidecarError::TooManyRequests => (
                StatusCode::TOO_MANY_REQUESTS,
                "es_rejected_execution_exception",
            ),
            SidecarError::UnreadableBody(_) => (StatusCode::BAD_REQUEST, "parse_exception"),
            SidecarError::IllegalArgument(_) => {
                (StatusCode::BAD_REQUEST, "illegal_argument_exception")
            }
            SidecarError::ContentParse(_) => (StatusCode::BAD_REQUEST, "x_content_parse_exception"),
            SidecarError::MethodNotAllowed(_) => {
                (StatusCode::METHOD_NOT_ALLOWED, "illegal_argument_exception")
            }
            SidecarError::Forbidden(_) => (StatusCode::FORBIDDEN, "security_exception"),
            SidecarError::NotAcceptable(_) => {
                (StatusCode::NOT_ACCEPTABLE, "content_type_header_exception")
            }
            SidecarError::NotFound(_) => (StatusCode::NOT_FOUND, "resource_not_found_exception"),
            SidecarError::AlreadyExists(_) => {
                (StatusCode::CONFLICT, "resource_already_exists_exception")
            }
            SidecarError::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "neardup_exception"),
            SidecarError::StateUnavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "neardup_state_exception")
            }
            SidecarError::Replica(ReplicaError::NotLeader { .. }) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "neardup_not_leader_exception",
            ),
            SidecarError::Replica(ReplicaError::NoLeader { .. }) => (
                StatusCode::SERVICE_UNAVAILABLE,
                "neardup_no_leader_exception",
            ),
            SidecarError::Replica(ReplicaError::AppendTimeout(_)) => {
                (StatusCode::SERVICE_UNAVAILABLE, "neardup_state_exception")
            }
            SidecarError::Upstream(UpstreamError::Timeout { .. }) => {
                (StatusCode::GATEWAY_TIMEOUT, "timeout_exception")
            }
            SidecarError::Upstream(UpstreamError::Unreachable { .. }) => {
                (StatusCode::BAD_GATEWAY, "connect_transport_exception")
            }
            SidecarError::Upstream(UpstreamError::Certificate { .. }) => {
                (StatusCode::BAD_GATEWAY, "ssl_handshake_exception")
            }
            SidecarError::Upstream(UpstreamError::Interrupted { .. }) => {
                (StatusCode::BAD_GATEWAY, "node_disconnected_exception")
            }
            // No credentials to sign with: the sidecar's setup, not the
            // client's request.
            SidecarError::Upstream(UpstreamError::Signing { .. }) => {
                (StatusCode::BAD_GATEWAY, "security_exception")
            }
            SidecarError::UpstreamAnswer(_) => {
                (StatusCode::BAD_GATEWAY, "neardup_upstream_exception")
            }
            SidecarError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "neardup_exception"),
        }
    }

    /// The failure in the cluster's envelope. A member that is not the
    /// leader adds the leader (`X-Neardup-Leader` and the envelope's
    /// `leader`, `leader_url`, `epoch`) and `Retry-After: 1`.
    pub fn into_response(self) -> Response {
        let (status, error_type) = self.status_and_type();
        let reason = self.to_string();
        let leader = match &self {
            SidecarError::Replica(ReplicaError::NotLeader {
                leader, url, epoch, ..
            }) => Some((leader.clone(), url.clone(), *epoch)),
            _ => None,
        };
        let retry = matches!(self, SidecarError::Replica(_));
        // A member that does not serve writes now: the member that sent the
        // write routes it again (`super::group_write`).
        let refusal = matches!(
            self,
            SidecarError::Replica(ReplicaError::NotLeader { .. } | ReplicaError::NoLeader { .. })
        );
        let Some((leader, url, epoch)) = leader else {
            let mut response = cluster_error(status, error_type, &reason);
            if retry {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            if refusal {
                response
                    .headers_mut()
                    .insert(REFUSED_HEADER, HeaderValue::from_static("not-leader"));
            }
            return response;
        };
        let cause = json!({ "type": error_type, "reason": reason });
        let body = json!({
            "error": {
                "root_cause": [cause], "type": error_type, "reason": reason,
                "leader": leader, "leader_url": url, "epoch": epoch,
            },
            "status": status.as_u16(),
        });
        let mut response = json_response(status, &body);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        if let Ok(value) = HeaderValue::from_str(&url) {
            response.headers_mut().insert(LEADER_HEADER, value);
        }
        response
            .headers_mut()
            .insert(REFUSED_HEADER, HeaderValue::from_static("not-leader"));
        response
    }
}

impl IntoResponse for SidecarError {
    fn into_response(self) -> Response {
        SidecarError::into_response(self)
    }
}

/// Set on a 503 of a member that does not serve writes now (not leading,
/// or lost the lease before answering): a member that forwarded the write
/// routes it again (`super::group_write`).
pub const REFUSED_HEADER: &str = "x-neardup-refused";

/// The header naming the group's leader on a member's 503.
pub const LEADER_HEADER: &str = "x-neardup-leader";

/// An error in the envelope the cluster uses.
fn cluster_error(status: StatusCode, error_type: &str, reason: &str) -> Response {
    let cause = json!({ "type": error_type, "reason": reason });
    let body = json!({
        "error": { "root_cause": [cause], "type": error_type, "reason": reason },
        "status": status.as_u16(),
    });
    json_response(status, &body)
}

/// A JSON response of the sidecar's own.
pub fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    response
}

/// A response from a status, headers and a body.
pub fn response_from(status: StatusCode, headers: HeaderMap, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_standby_names_the_leader_in_the_clusters_envelope() {
        let response = SidecarError::Replica(ReplicaError::NotLeader {
            group: "news".into(),
            leader: "a-1".into(),
            url: "http://127.0.0.1:9201".into(),
            epoch: 3,
            detail: String::new(),
        })
        .into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[LEADER_HEADER], "http://127.0.0.1:9201");
        assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["type"], "neardup_not_leader_exception");
        assert_eq!(body["error"]["leader_url"], "http://127.0.0.1:9201");
        assert_eq!(body["error"]["epoch"], 3);
        assert_eq!(body["status"], 503);
    }

    #[test]
    fn faults_map_to_the_clusters_statuses_and_types() {
        let cases: Vec<(SidecarError, u16, &str)> = vec![
            (
                SidecarError::TooLarge { limit: 1 },
                413,
                "content_too_long_exception",
            ),
            (
                SidecarError::TooManyRequests,
                429,
                "es_rejected_execution_exception",
            ),
            (
                SidecarError::UnreadableBody("x".into()),
                400,
                "parse_exception",
            ),
            (
                SidecarError::IllegalArgument("x".into()),
                400,
                "illegal_argument_exception",
            ),
            (
                SidecarError::NotFound("x".into()),
                404,
                "resource_not_found_exception",
            ),
            (
                SidecarError::from(StateError::OutOfSpace {
                    reason: "disk full".into(),
                }),
                503,
                "neardup_state_exception",
            ),
            (
                SidecarError::Upstream(UpstreamError::Timeout {
                    url: "u".into(),
                    timeout: std::time::Duration::from_secs(1),
                }),
                504,
                "timeout_exception",
            ),
            (
                SidecarError::Upstream(UpstreamError::Unreachable {
                    url: "u".into(),
                    detail: "refused".into(),
                }),
                502,
                "connect_transport_exception",
            ),
            (
                SidecarError::UpstreamAnswer("x".into()),
                502,
                "neardup_upstream_exception",
            ),
            (SidecarError::Internal("x".into()), 500, "neardup_exception"),
            (
                SidecarError::Replica(ReplicaError::NoLeader {
                    group: "g".into(),
                    detail: String::new(),
                }),
                503,
                "neardup_no_leader_exception",
            ),
        ];
        for (error, status, error_type) in cases {
            let (got_status, got_type) = error.status_and_type();
            assert_eq!(
                (got_status.as_u16(), got_type),
                (status, error_type),
                "{error}"
            );
        }
    }
}
