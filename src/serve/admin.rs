//! Who may call the sidecar's state-changing endpoints (`backfill`).
//!
//! Motivation: the sidecar listens where indexing clients reach it, often on
//! a shared network. Reading endpoints (health, stats, classes) reveal what
//! the cluster already shows those clients; starting or cancelling a
//! backfill rewrites documents and loads the cluster, so it must not be open
//! to whoever can reach the port.
//!
//! Design: a request passes when it comes from a loopback address (an
//! operator on the machine, a sidecar container's own probe) or carries the
//! configured token (`--admin-token`, `NEARDUP_ADMIN_TOKEN`) in
//! `X-Neardup-Admin-Token`. Not `Authorization`: that header holds the
//! cluster's credentials, which the sidecar passes through and must not
//! reinterpret. The token is compared in constant time. A refusal is a 403
//! in the cluster's error shape (`security_exception`, as the cluster's own
//! security plugin answers).
//!
//! Consequences: behind a reverse proxy every peer looks like loopback; set
//! a token there and listen on a non-loopback address only behind it. The
//! peer address comes from the listener (`ConnectInfo`); a router served
//! without it treats every peer as remote.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;

use super::errors::SidecarError;

/// Header carrying the admin token.
pub const ADMIN_TOKEN_HEADER: &str = "x-neardup-admin-token";

/// The rule for state-changing endpoints.
#[derive(Clone, Default)]
pub struct AdminGuard {
    token: Option<String>,
}

impl std::fmt::Debug for AdminGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminGuard")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl AdminGuard {
    /// An empty token counts as none.
    pub fn new(token: Option<String>) -> Self {
        AdminGuard {
            token: token.filter(|token| !token.is_empty()),
        }
    }

    /// `None` when `request` may change state, else the 403 to answer.
    pub fn check(&self, request: &Request) -> Option<Response> {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(address)| *address);
        let presented = request
            .headers()
            .get(ADMIN_TOKEN_HEADER)
            .map(|value| value.as_bytes());
        if self.allows(peer, presented) {
            None
        } else {
            Some(forbidden())
        }
    }

    /// Loopback peers always; others with the right token.
    pub fn allows(&self, peer: Option<SocketAddr>, presented: Option<&[u8]>) -> bool {
        if peer.is_some_and(|address| address.ip().is_loopback()) {
            return true;
        }
        match (&self.token, presented) {
            (Some(token), Some(presented)) => constant_time_eq(token.as_bytes(), presented),
            _ => false,
        }
    }
}

fn forbidden() -> Response {
    SidecarError::Forbidden(
        "this neardup endpoint changes state: call it from the sidecar's machine (loopback) or send the admin token in X-Neardup-Admin-Token".into(),
    )
    .into_response()
}

/// Equal bytes, in a time that depends only on the lengths.
fn constant_time_eq(expected: &[u8], presented: &[u8]) -> bool {
    let mut difference = u8::from(expected.len() != presented.len());
    for (position, &byte) in expected.iter().enumerate() {
        // Compare against something of the same length either way.
        let other = presented.get(position).copied().unwrap_or(!byte);
        difference |= byte ^ other;
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(text: &str) -> Option<SocketAddr> {
        text.parse().ok()
    }

    #[test]
    fn loopback_peers_pass_without_a_token() {
        let guard = AdminGuard::new(None);
        assert!(guard.allows(address("127.0.0.1:5000"), None));
        assert!(guard.allows(address("[::1]:5000"), None));
    }

    #[test]
    fn remote_peers_need_the_exact_token() {
        let guard = AdminGuard::new(Some("s3cret".to_string()));
        let remote = address("10.1.2.3:5000");
        assert!(guard.allows(remote, Some(b"s3cret")));
        assert!(!guard.allows(remote, Some(b"s3cre")));
        assert!(!guard.allows(remote, Some(b"s3cretx")));
        assert!(!guard.allows(remote, Some(b"S3cret")));
        assert!(!guard.allows(remote, None));
        assert!(!guard.allows(None, None));
    }

    #[test]
    fn without_a_configured_token_remote_peers_are_refused() {
        let guard = AdminGuard::new(Some(String::new()));
        assert!(!guard.allows(address("10.1.2.3:5000"), Some(b"")));
    }

    #[test]
    fn constant_time_comparison_is_equality() {
        assert!(constant_time_eq(b"", b""));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b""));
        assert!(!constant_time_eq(b"", b"a"));
    }
}
