//! Writes in a replica group: whichever member a client reaches, the
//! leader serves the write, and a takeover or a restart is a wait, not an
//! error.
//!
//! Motivation: clients are given every member (opensearch-py's host list)
//! or a load balancer in front of them, and retry a 503 a few times within
//! milliseconds. A member that refuses writes it cannot serve turns every
//! failover and every rolling restart into failed items. The cluster
//! itself does better: any node takes any write and routes it, and a write
//! waits (up to its `timeout`, 1 minute by default) while a primary is
//! promoted. A group should behave the same way.
//!
//! Design: the body is read once (as received, still compressed if it
//! was), then [`Replica::route_write`] decides, again after every change:
//!
//! - **serve**: this member leads; the write runs the sidecar's own
//!   pipeline, in its own task with the fence before answering, holding a
//!   guard that a release waits for;
//! - **forward**: another member leads; the request goes there as
//!   received (method, path and query, headers with `Authorization`, the
//!   body bytes) with `X-Neardup-Forwarded-By`, and its answer comes back
//!   unchanged plus `X-Neardup-Served-By`. An attempt is abandoned when
//!   the view names another leader meanwhile (a leader paused mid-request
//!   never answers), or the leader refuses it as not leading
//!   (`X-Neardup-Refused`), or cannot be reached;
//! - **wait**: no member may act (a takeover before its epoch record, a
//!   release, a dead leader the group has not replaced yet): the write is
//!   held until the view changes, asking the member task to look at the
//!   control document now.
//!
//! A write sent again after an abandoned attempt is what a client's own
//! retry would be: documents with ids land once and count once (a new
//! leader reads back its predecessor's writes in doubt); documents the
//! cluster names (no `_id`) may be stored twice, as with any retry. A
//! write forwarded by a member is never forwarded again (views differ for
//! a moment; no loops): unless this member is taking over, it is refused
//! at once, and its sender routes it again. The wait is bounded by the
//! request's own `timeout` parameter, else `--replica-write-wait` (1
//! minute); past it, 503 `neardup_no_leader_exception` with
//! `Retry-After`. On a member that is stopping, at most a lease more: a
//! group of one has nobody to hand its writes to.
//!
//! Consequences: a client never sees a failover that completes within its
//! request's bound; held bodies are memory for the wait (bounded by the
//! request size limit per request). Admin writes (`/_neardup/backfill`)
//! are not forwarded: they name the leader (its admin guard decides).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::Response;

use super::errors::{REFUSED_HEADER, SidecarError};
use super::metrics::Metrics;
use super::route::Route;
use super::sidecar::Sidecar;
use crate::replica::state::{Leader, Replica, ReplicaError, Role, ServingGuard, WriteRoute};
use crate::units::parse_duration;

/// Set by a member on the write it forwards: its node id.
pub const FORWARDED_BY_HEADER: &str = "x-neardup-forwarded-by";
/// Set on a forwarded write's answer: the leader that served it.
pub const SERVED_BY_HEADER: &str = "x-neardup-served-by";

/// Longest single wait before the view is looked at again.
const LOOK_AGAIN: Duration = Duration::from_millis(200);

/// A `_bulk` or single-document write received by a member of a group.
pub async fn serve(
    sidecar: Arc<Sidecar>,
    replica: Arc<Replica>,
    request: Request,
    route: Route,
) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, sidecar.limits.max_content_length).await {
        Ok(body) => body,
        Err(_) => {
            return SidecarError::TooLarge {
                limit: sidecar.limits.max_content_length,
            }
            .into_response();
        }
    };
    let forwarded = parts.headers.contains_key(FORWARDED_BY_HEADER);
    let bound = wait_bound(&parts, replica.options.write_wait);
    let mut deadline = started + bound;
    let mut held_since: Option<Instant> = None;
    let mut capped = false;
    loop {
        if !capped && replica.releasing() {
            // This process is stopping: if no other member takes the lease
            // within one, there is none to wait for.
            deadline = deadline.min(Instant::now() + replica.options.lease);
            capped = true;
        }
        let mut changes = replica.changed();
        let attempt = Instant::now();
        match replica.route_write(forwarded) {
            WriteRoute::Serve(guard) => {
                let response = serve_here(&sidecar, guard, &parts, body.clone(), &route).await;
                if !refused(&response) || Instant::now() >= deadline {
                    record_held(&sidecar.metrics, held_since, attempt);
                    return response;
                }
                // Lost the lease while serving: route it again. Held from
                // now (a member frozen meanwhile held nothing: it ran not).
                held_since.get_or_insert_with(Instant::now);
            }
            WriteRoute::Forward(leader) => {
                match forward(&sidecar, &replica, &leader, &parts, &body, deadline).await {
                    Forwarded::Answer(response) => {
                        Metrics::add(&sidecar.metrics.forwarded_writes, 1);
                        record_held(&sidecar.metrics, held_since, attempt);
                        return response;
                    }
                    Forwarded::Again => {
                        held_since.get_or_insert(attempt);
                        replica.look_now();
                    }
                }
            }
            WriteRoute::Wait => {
                if forwarded && replica.role() != Role::TakingOver {
                    // The sender routes it again (no loops between members).
                    return SidecarError::Replica(replica.gate().err().unwrap_or(
                        ReplicaError::NoLeader {
                            group: replica.options.group.clone(),
                            detail: String::new(),
                        },
                    ))
                    .into_response();
                }
                held_since.get_or_insert(attempt);
                replica.look_now();
            }
        }
        let now = Instant::now();
        if now >= deadline {
            record_held(&sidecar.metrics, held_since, now);
            return held_too_long(&replica, bound);
        }
        let pause = LOOK_AGAIN.min(deadline - now);
        let _ = tokio::time::timeout(pause, changes.changed()).await;
    }
}

/// How long a write may be held: its `timeout` parameter when it has a
/// readable one, else the group's default.
fn wait_bound(parts: &Parts, default: Duration) -> Duration {
    let given = parts.uri.query().and_then(|query| {
        query.split('&').find_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            (name == "timeout").then_some(value)
        })
    });
    match given.map(|text| parse_duration(text, "timeout")) {
        Some(Ok(Some(millis))) if millis > 0 => Duration::from_millis(millis.unsigned_abs()),
        _ => default,
    }
}

/// The write, served by this member as leader: its own task (a client that
/// leaves does not stop it), the fence before answering included, the
/// guard held to the end.
async fn serve_here(
    sidecar: &Arc<Sidecar>,
    guard: ServingGuard,
    parts: &Parts,
    body: Bytes,
    route: &Route,
) -> Response {
    let request = Request::from_parts(parts.clone(), Body::from(body));
    let owned = sidecar.clone();
    let route = route.clone();
    let write = async move {
        let _serving = guard;
        let answer = match route {
            Route::Document { index, id, kind } => {
                super::write::document(owned.clone(), request, index, id, kind).await
            }
            Route::Bulk { index } => super::write::bulk(owned.clone(), request, index).await,
            _ => SidecarError::Internal("not a write".into()).into_response(),
        };
        super::standby::acknowledged(&owned, answer).await
    };
    super::write::run_to_the_end(sidecar.clone(), write).await
}

/// Whether `response` is a member's refusal to serve (not the leader, or
/// lost the lease before answering).
fn refused(response: &Response) -> bool {
    response.headers().contains_key(REFUSED_HEADER)
}

/// What became of one attempt at forwarding.
enum Forwarded {
    /// The leader's answer (or the 503 once the bound passed).
    Answer(Response),
    /// Route the write again.
    Again,
}

/// One attempt at sending the write to `leader`.
async fn forward(
    sidecar: &Sidecar,
    replica: &Replica,
    leader: &Leader,
    parts: &Parts,
    body: &Bytes,
    deadline: Instant,
) -> Forwarded {
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let url = format!("{}{path_and_query}", leader.url);
    // The client's headers but those of one hop (and the length, which
    // the body sets again).
    let mut headers: HeaderMap = crate::upstream::request_headers(&parts.headers, false);
    headers.remove(axum::http::header::CONTENT_LENGTH);
    if let Ok(node) = HeaderValue::from_str(&replica.node) {
        headers.insert(HeaderName::from_static(FORWARDED_BY_HEADER), node);
    }
    let remaining = deadline.saturating_duration_since(Instant::now());
    let sent = sidecar
        .peers
        .request(parts.method.clone(), &url)
        .headers(headers)
        .timeout(remaining.max(Duration::from_millis(1)))
        .body(body.clone())
        .send();
    let mut changes = replica.changed();
    let leader_moved = async {
        loop {
            if changes.changed().await.is_err() {
                return std::future::pending::<()>().await;
            }
            if replica.known_leader().as_ref() != Some(leader) {
                return;
            }
        }
    };
    tokio::select! {
        answer = sent => match answer {
            Ok(answer) if answer.headers().contains_key(REFUSED_HEADER) => Forwarded::Again,
            Ok(answer) => {
                let status = answer.status();
                let headers = crate::upstream::response_headers(answer.headers(), false);
                let mut response =
                    super::errors::response_from(status, headers, Body::from_stream(answer.bytes_stream()));
                if let Ok(node) = HeaderValue::from_str(&leader.node) {
                    response
                        .headers_mut()
                        .insert(HeaderName::from_static(SERVED_BY_HEADER), node);
                }
                Forwarded::Answer(response)
            }
            Err(error) => {
                tracing::warn!(leader = leader.node, url = leader.url, %error, "a write forwarded to the leader got no answer: routing it again");
                Forwarded::Again
            }
        },
        () = leader_moved => Forwarded::Again,
    }
}

/// Counts a write that was held (routed more than once), for how long.
fn record_held(metrics: &Metrics, held_since: Option<Instant>, until: Instant) {
    if let Some(since) = held_since {
        metrics.observe_held(until.saturating_duration_since(since));
    }
}

/// The 503 once a write was held for its whole bound.
fn held_too_long(replica: &Replica, bound: Duration) -> Response {
    let mut response = SidecarError::Replica(ReplicaError::NoLeader {
        group: replica.options.group.clone(),
        detail: format!(" (this write waited {bound:?} for one)"),
    })
    .into_response();
    // The sender (a member or a client) may try again; not a refusal of
    // this member's own that another member could serve at once.
    response.headers_mut().remove(REFUSED_HEADER);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str) -> Parts {
        let (parts, ()) = axum::http::Request::builder()
            .uri(uri)
            .body(())
            .expect("request")
            .into_parts();
        parts
    }

    #[test]
    fn a_write_waits_up_to_its_own_timeout_else_the_default() {
        let default = Duration::from_secs(60);
        assert_eq!(wait_bound(&parts("/_bulk"), default), default);
        assert_eq!(
            wait_bound(&parts("/_bulk?refresh=true&timeout=5s"), default),
            Duration::from_secs(5)
        );
        assert_eq!(
            wait_bound(&parts("/news/_doc/1?timeout=250ms"), default),
            Duration::from_millis(250)
        );
        assert_eq!(wait_bound(&parts("/_bulk?timeout=soon"), default), default);
        assert_eq!(wait_bound(&parts("/_bulk?timeout=0s"), default), default);
    }
}
