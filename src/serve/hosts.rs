//! Which `Host` a request may name: the defence against DNS rebinding.
//!
//! Motivation: a web page open in a browser on a machine that reaches the
//! sidecar can point a name of its own (`evil.example`) at the sidecar's
//! address (127.0.0.1 or a private one) once the page has loaded. Its
//! requests are then same-origin to the browser: it can call the sidecar
//! and read the answers, from the sidecar's own machine (so loopback trust
//! would let it start or cancel a backfill) and with whatever identity the
//! sidecar adds towards the cluster (SigV4, a client certificate,
//! credentials in `--upstream`). What it cannot change is `Host`: the
//! browser writes the name the page used.
//!
//! Design: a `Host` is trusted when it is an IP address (a page whose
//! origin is an address is not rebinding anything: it already talks to
//! that address), `localhost`, or a name configured with `--allowed-host`
//! (with or without its port), or the host of `--replica-advertise`. A
//! request without `Host` (HTTP/1.0 tools) is not a browser's. Loopback
//! trust for admin endpoints ([`super::admin`]) needs a trusted `Host`;
//! while the sidecar holds an identity towards the cluster, every request
//! needs one ([`super::protected::screen`]), else 403.
//!
//! Consequences: clients that call a signing sidecar by a DNS name (a
//! Kubernetes service, a compose service name) list that name in
//! `--allowed-host`; the 403 says so.

use axum::extract::Request;
use axum::http::header;

/// The names by which the sidecar may be called besides addresses and
/// `localhost`.
#[derive(Debug, Clone, Default)]
pub struct AllowedHosts {
    /// Lowercase, each `name` or `name:port`.
    names: Vec<String>,
}

impl AllowedHosts {
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        AllowedHosts {
            names: names
                .into_iter()
                .map(|name| name.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|name| !name.is_empty())
                .collect(),
        }
    }

    /// Whether the request's `Host` (or its HTTP/2 authority) is trusted.
    pub fn trusts(&self, request: &Request) -> bool {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|value| value.to_str().ok().map(str::to_string))
            .or_else(|| request.uri().authority().map(ToString::to_string));
        match host {
            None => true,
            Some(host) => self.trusts_host(&host),
        }
    }

    /// Whether `host` (a `Host` header's value) is trusted.
    pub fn trusts_host(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let name = if host.starts_with('[') {
            // An IPv6 literal.
            return host
                .split(']')
                .next()
                .unwrap_or_default()
                .trim_start_matches('[')
                .parse::<std::net::Ipv6Addr>()
                .is_ok();
        } else {
            match host.rsplit_once(':') {
                Some((name, port)) if port.bytes().all(|byte| byte.is_ascii_digit()) => name,
                _ => host.as_str(),
            }
        };
        let name = name.trim_end_matches('.');
        if name.parse::<std::net::Ipv4Addr>().is_ok() || name == "localhost" {
            return true;
        }
        let full = host.trim_end_matches('.');
        self.names
            .iter()
            .any(|allowed| allowed == name || allowed == full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_localhost_are_trusted() {
        let hosts = AllowedHosts::default();
        for host in [
            "127.0.0.1:9201",
            "127.1.2.3",
            "[::1]:9201",
            "10.0.0.5:9201",
            "localhost:9201",
            "LOCALHOST",
            "localhost.",
        ] {
            assert!(hosts.trusts_host(host), "{host}");
        }
    }

    #[test]
    fn other_names_need_to_be_configured() {
        let hosts = AllowedHosts::new(["Neardup.svc".to_string(), "api:8443".to_string()]);
        assert!(!AllowedHosts::default().trusts_host("evil.example:9201"));
        assert!(!hosts.trusts_host("evil.example:9201"));
        assert!(!hosts.trusts_host("localhost.evil.example"));
        assert!(!hosts.trusts_host("127.0.0.1.evil.example"));
        assert!(hosts.trusts_host("neardup.svc:9201"));
        assert!(hosts.trusts_host("neardup.svc"));
        assert!(hosts.trusts_host("api:8443"));
        assert!(!hosts.trusts_host("api:9201"));
    }
}
