//! Role endpoints of a member of a replica group, for load balancers and
//! operators: who leads, which standbys are caught up, and the metrics'
//! view of the member.
//!
//! Motivation: a load balancer that routes by readiness alone cannot tell
//! the leader from a standby. Every member takes every write (a standby
//! forwards it), so readiness is right to be green on all of them; but a
//! deployment that wants writes to skip the extra hop, or an operator
//! who wants to know which member to send an admin request to, needs the
//! roles, as Patroni gives them (`/primary`, `/replica`).
//!
//! Design: `GET /_neardup/replica/leader` answers 200 only on the member
//! that leads within its lease (503 elsewhere, also while it releases);
//! `GET /_neardup/replica/standby` answers 200 on a standby that read the
//! log to its end within `max_lag` (a duration, default the lease) and
//! applied at most `max_lag_records` records at its latest look (default
//! 1000), else 503; both bodies are the member's status, which
//! `GET /_neardup/replica` always returns (200). Outside a group all three
//! answer 404.
//!
//! Consequences: an HAProxy `option httpchk GET /_neardup/replica/leader`
//! backend sends writes to the leader only (README); checks are local
//! reads, no cluster request.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::errors::{SidecarError, json_response};
use super::metrics::ReplicaGauges;
use super::route::ReplicaEndpoint;
use super::sidecar::Sidecar;
use crate::replica::state::{Replica, Role};
use crate::units::parse_duration;

/// A standby's default bound on records applied at its latest look.
const DEFAULT_MAX_LAG_RECORDS: u64 = 1000;

pub fn handle(sidecar: &Sidecar, endpoint: ReplicaEndpoint, query: Option<&str>) -> Response {
    let Some(replica) = &sidecar.replica else {
        return SidecarError::NotFound(
            "this sidecar is not a member of a replica group (--replica-group)".to_string(),
        )
        .into_response();
    };
    let status = replica.to_json();
    let healthy = match endpoint {
        ReplicaEndpoint::Status => true,
        ReplicaEndpoint::Leader => replica.is_acting_leader(),
        ReplicaEndpoint::Standby => match standby_bounds(query, replica.options.lease) {
            Ok((max_lag, max_records)) => caught_up(replica, max_lag, max_records),
            Err(error) => return error.into_response(),
        },
    };
    let code = if healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(code, &json!(status))
}

/// `max_lag` and `max_lag_records` from the query, or their defaults.
fn standby_bounds(query: Option<&str>, lease: Duration) -> Result<(Duration, u64), SidecarError> {
    let (mut max_lag, mut max_records) = (lease, DEFAULT_MAX_LAG_RECORDS);
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
    {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "max_lag" => match parse_duration(value, "max_lag") {
                Ok(Some(millis)) if millis >= 0 => {
                    max_lag = Duration::from_millis(millis.unsigned_abs());
                }
                _ => {
                    return Err(SidecarError::IllegalArgument(format!(
                        "failed to parse setting [max_lag] with value [{value}] as a time value"
                    )));
                }
            },
            "max_lag_records" => {
                max_records = value.parse().map_err(|_| {
                    SidecarError::IllegalArgument(format!(
                        "failed to parse [max_lag_records] with value [{value}] as a number"
                    ))
                })?;
            }
            other => {
                return Err(SidecarError::IllegalArgument(format!(
                    "request [/_neardup/replica/standby] contains unrecognized parameter: [{other}]"
                )));
            }
        }
    }
    Ok((max_lag, max_records))
}

/// A standby that read the log to its end recently enough.
fn caught_up(replica: &Replica, max_lag: Duration, max_records: u64) -> bool {
    let lag_records = replica
        .counters
        .lag_records
        .load(std::sync::atomic::Ordering::Relaxed);
    replica.role() == Role::Standby
        && replica
            .since_caught_up()
            .is_some_and(|since| since <= max_lag)
        && lag_records <= max_records
}

/// What `/metrics` shows of the member.
pub fn gauges_of(replica: &Replica) -> ReplicaGauges {
    let counters = &replica.counters;
    let load =
        |counter: &std::sync::atomic::AtomicU64| counter.load(std::sync::atomic::Ordering::Relaxed);
    let (epoch, record) = replica.epoch_and_record();
    ReplicaGauges {
        role: replica.role().as_number(),
        acting: replica.is_acting_leader(),
        epoch,
        record,
        seq: replica.applied_seq(),
        lag_records: load(&counters.lag_records),
        lag_seconds: replica.since_caught_up().map(|since| since.as_secs_f64()),
        takeovers: load(&counters.takeovers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standby_bounds_are_read_from_the_query() {
        let lease = Duration::from_secs(5);
        assert_eq!(standby_bounds(None, lease).unwrap(), (lease, 1000));
        assert_eq!(
            standby_bounds(Some("max_lag=2s&max_lag_records=10"), lease).unwrap(),
            (Duration::from_secs(2), 10)
        );
        assert!(standby_bounds(Some("max_lag=soon"), lease).is_err());
        assert!(standby_bounds(Some("lag=1s"), lease).is_err());
    }
}
