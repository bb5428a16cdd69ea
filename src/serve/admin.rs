//! Who may call the sidecar's state-changing endpoints (`backfill`).
//!
//! Motivation: the sidecar listens where indexing clients reach it, often on
//! a shared network. Reading endpoints (health, stats, classes) reveal what
//! the cluster already shows those clients; starting or cancelling a
//! backfill rewrites documents and loads the cluster, so it must not be open
//! to whoever can reach the port.
//!
//! Design: a request passes when it comes from a loopback address (an
//! operator on the machine, a sidecar container's own probe) with a `Host`
//! that a DNS-rebinding page cannot send ([`super::hosts`]: an address,
//! `localhost` or a name of `--allowed-host`), or carries the
//! configured token (`--admin-token`, `NEARDUP_ADMIN_TOKEN`) in
//! `X-Neardup-Admin-Token`. Not `Authorization`: that header holds the
//! cluster's credentials, which the sidecar passes through and must not
//! reinterpret. The token is compared in constant time. A refusal is a 403
//! in the cluster's error shape (`security_exception`, as the cluster's own
//! security plugin answers).
//!
//! A `POST` must also carry `Content-Type: application/json` or the token
//! header, as Kibana asks for its `kbn-xsrf` header: a web page open in a
//! browser on the sidecar's machine can send a loopback `POST` of a form or
//! of plain text without asking first, but a JSON content type or a custom
//! header makes the browser ask (CORS preflight), and the sidecar never
//! agrees. `DELETE` and `PUT` are always asked about. The refusal is the
//! cluster's 406 for a content type it does not read.
//!
//! Consequences: behind a reverse proxy every peer looks like loopback; set
//! a token there and listen on a non-loopback address only behind it. The
//! peer address comes from the listener (`ConnectInfo`); a router served
//! without it treats every peer as remote.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;

use super::errors::SidecarError;
use super::hosts::AllowedHosts;

/// Header carrying the admin token.
pub const ADMIN_TOKEN_HEADER: &str = "x-neardup-admin-token";

/// The rule for state-changing endpoints.
#[derive(Clone, Default)]
pub struct AdminGuard {
    token: Option<String>,
    hosts: AllowedHosts,
}

impl std::fmt::Debug for AdminGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdminGuard")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("hosts", &self.hosts)
            .finish()
    }
}

impl AdminGuard {
    /// An empty token counts as none; `hosts` are the names loopback
    /// peers may call the sidecar by besides addresses and `localhost`.
    pub fn new(token: Option<String>, hosts: AllowedHosts) -> Self {
        AdminGuard {
            token: token.filter(|token| !token.is_empty()),
            hosts,
        }
    }

    /// The names the sidecar may be called by ([`super::hosts`]).
    pub fn hosts(&self) -> &AllowedHosts {
        &self.hosts
    }

    /// `None` when `request` may change state, else the 403 (who may not)
    /// or the 406 (a request a web page could have sent) to answer.
    pub fn check(&self, request: &Request) -> Option<Response> {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(address)| *address);
        let presented = request
            .headers()
            .get(ADMIN_TOKEN_HEADER)
            .map(|value| value.as_bytes());
        if self.allows(peer, self.hosts.trusts(request), presented) {
            cross_site_refusal(request)
        } else {
            Some(forbidden())
        }
    }

    /// Loopback peers that name a trusted `Host`; others with the right
    /// token.
    pub fn allows(
        &self,
        peer: Option<SocketAddr>,
        trusted_host: bool,
        presented: Option<&[u8]>,
    ) -> bool {
        if trusted_host && peer.is_some_and(|address| address.ip().is_loopback()) {
            return true;
        }
        match (&self.token, presented) {
            (Some(token), Some(presented)) => constant_time_eq(token.as_bytes(), presented),
            _ => false,
        }
    }
}

/// A `POST` a browser could have sent from another site without asking:
/// no JSON content type and no admin token header.
fn cross_site_refusal(request: &Request) -> Option<Response> {
    if request.method() != axum::http::Method::POST
        || request.headers().contains_key(ADMIN_TOKEN_HEADER)
    {
        return None;
    }
    let content_type = request
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    if is_json(content_type) {
        return None;
    }
    let shown = if content_type.is_empty() {
        "none".to_string()
    } else {
        content_type.to_string()
    };
    Some(
        SidecarError::NotAcceptable(format!(
            "Content-Type header [{shown}] is not supported: this neardup endpoint changes state and takes `Content-Type: application/json` (or the X-Neardup-Admin-Token header), so that a web page cannot call it"
        ))
        .into_response(),
    )
}

/// `application/json`, with parameters or a `+json` suffix.
fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn forbidden() -> Response {
    SidecarError::Forbidden(
        "this neardup endpoint changes state: call it from the sidecar's machine (loopback, with Host an address, localhost or a name of --allowed-host) or send the admin token in X-Neardup-Admin-Token".into(),
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

    fn post(content_type: Option<&str>, token: bool) -> Request {
        let mut request = axum::http::Request::builder()
            .method("POST")
            .uri("/_neardup/backfill/_cancel");
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        if token {
            request = request.header(ADMIN_TOKEN_HEADER, "x");
        }
        let mut request = request.body(axum::body::Body::empty()).expect("a request");
        request
            .extensions_mut()
            .insert(ConnectInfo(address("127.0.0.1:5000").expect("an address")));
        request
    }

    #[test]
    fn a_post_a_web_page_could_send_is_refused() {
        let guard = AdminGuard::new(None, AllowedHosts::default());
        for content_type in [
            None,
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
        ] {
            let refusal = guard.check(&post(content_type, false)).expect("refused");
            assert_eq!(refusal.status(), 406);
        }
        assert!(
            guard
                .check(&post(Some("application/json"), false))
                .is_none()
        );
        assert!(
            guard
                .check(&post(Some("application/json; charset=utf-8"), false))
                .is_none()
        );
        assert!(
            guard
                .check(&post(Some("application/vnd.elasticsearch+json"), false))
                .is_none()
        );
        assert!(guard.check(&post(None, true)).is_none());
    }

    #[test]
    fn loopback_peers_pass_without_a_token() {
        let guard = AdminGuard::new(None, AllowedHosts::default());
        assert!(guard.allows(address("127.0.0.1:5000"), true, None));
        assert!(guard.allows(address("[::1]:5000"), true, None));
    }

    #[test]
    fn loopback_peers_naming_another_host_need_the_token() {
        let guard = AdminGuard::new(Some("s3cret".to_string()), AllowedHosts::default());
        let loopback = address("127.0.0.1:5000");
        assert!(!guard.allows(loopback, false, None));
        assert!(guard.allows(loopback, false, Some(b"s3cret")));
        let mut request = post(Some("application/json"), false);
        request
            .headers_mut()
            .insert("host", "rebound.example:9201".parse().expect("a header"));
        assert_eq!(
            guard.check(&request).map(|r| r.status().as_u16()),
            Some(403)
        );
        request
            .headers_mut()
            .insert("host", "127.0.0.1:9201".parse().expect("a header"));
        assert!(guard.check(&request).is_none());
    }

    #[test]
    fn remote_peers_need_the_exact_token() {
        let guard = AdminGuard::new(Some("s3cret".to_string()), AllowedHosts::default());
        let remote = address("10.1.2.3:5000");
        assert!(guard.allows(remote, true, Some(b"s3cret")));
        assert!(!guard.allows(remote, true, Some(b"s3cre")));
        assert!(!guard.allows(remote, true, Some(b"s3cretx")));
        assert!(!guard.allows(remote, true, Some(b"S3cret")));
        assert!(!guard.allows(remote, true, None));
        assert!(!guard.allows(None, true, None));
    }

    #[test]
    fn without_a_configured_token_remote_peers_are_refused() {
        let guard = AdminGuard::new(Some(String::new()), AllowedHosts::default());
        assert!(!guard.allows(address("10.1.2.3:5000"), true, Some(b"")));
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
