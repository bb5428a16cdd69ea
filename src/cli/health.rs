//! `neardup health`: asks a running sidecar whether it is ready (or, with
//! `--live`, alive) and exits 0 when it is, 1 when it is not.
//!
//! Motivation: a container's health check runs a command inside the
//! container, and the image holds no shell and no curl (`scripts/image.sh`):
//! the binary checks itself.
//!
//! Design: the sidecar is found as `serve` finds its own address: `--listen`
//! (`NEARDUP_LISTEN`, then the config file's `[serve] listen`, then the
//! default); an unspecified host (`0.0.0.0`, `[::]`) is asked on loopback.
//! HTTPS when the sidecar has a certificate (`NEARDUP_TLS_CERT`). The
//! certificate is not verified: the probe goes to this machine, sends no
//! credentials and reads only a status. `--url` names another base URL.
//!
//! Consequences: the same environment variables that configure `serve` in
//! the image configure its health check; nothing else needs setting.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::ConfigFile;
use crate::config::defaults::DEFAULT_LISTEN;

#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    /// The sidecar's listen address (as given to `serve`); an unspecified host (0.0.0.0, [::]) is asked on loopback [default: 127.0.0.1:9201]
    #[arg(long, env = "NEARDUP_LISTEN")]
    pub listen: Option<String>,

    /// The sidecar's HTTPS certificate (as given to `serve`): when set, the probe uses HTTPS (the certificate is not verified: the probe goes to this machine and reads only a status)
    #[arg(long, env = "NEARDUP_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,

    /// Base URL of the sidecar to ask, instead of --listen (e.g. http://127.0.0.1:9201)
    #[arg(long, env = "NEARDUP_HEALTH_URL")]
    pub url: Option<String>,

    /// Ask only whether the process answers (/_neardup/health/live), not whether it is ready to stamp writes (/_neardup/health)
    #[arg(long, env = "NEARDUP_HEALTH_LIVE")]
    pub live: bool,

    /// How long to wait for the answer [default: 5s]
    #[arg(long, env = "NEARDUP_HEALTH_TIMEOUT")]
    pub timeout: Option<String>,
}

/// The base URL to ask: `--url`, else the listen address on loopback.
fn base_url(args: &HealthArgs, file: &ConfigFile) -> String {
    if let Some(url) = &args.url {
        return url.trim_end_matches('/').to_string();
    }
    let listen = args
        .listen
        .clone()
        .or_else(|| file.serve.listen.clone())
        .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
    let scheme = if args.tls_cert.is_some() || file.serve.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{}", loopback_if_unspecified(&listen))
}

/// `listen` with an unspecified host replaced by the loopback address of
/// the same family.
fn loopback_if_unspecified(listen: &str) -> String {
    match listen.parse::<std::net::SocketAddr>() {
        Ok(address) if address.ip().is_unspecified() => {
            let loopback: std::net::IpAddr = if address.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            std::net::SocketAddr::new(loopback, address.port()).to_string()
        }
        _ => listen.to_string(),
    }
}

/// Asks the sidecar; `Ok` when it answers 200.
///
/// # Errors
///
/// No answer within the timeout, or an answer other than 200 (its body
/// quoted: the sidecar says why it is not ready).
pub fn run_health(args: HealthArgs, file: ConfigFile) -> anyhow::Result<()> {
    let timeout = match args.timeout.as_deref() {
        None => Duration::from_secs(5),
        Some(text) => match crate::units::parse_duration(text, "timeout")? {
            Some(millis) if millis > 0 => Duration::from_millis(millis.unsigned_abs()),
            _ => anyhow::bail!("--timeout `{text}` must be a positive duration"),
        },
    };
    let path = if args.live {
        "/_neardup/health/live"
    } else {
        "/_neardup/health"
    };
    let url = format!("{}{path}", base_url(&args, &file));
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(timeout)
        .tls_certs_only(Vec::new())
        .tls_danger_accept_invalid_certs(true)
        .build()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (status, body) = runtime.block_on(async {
        let response = client
            .get(&url)
            .send()
            .await
            .map_err(|error| anyhow::anyhow!("{url}: no answer: {error}"))?;
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        anyhow::Ok((status, body))
    })?;
    if status != reqwest::StatusCode::OK {
        anyhow::bail!("{url}: {status}: {}", body.trim());
    }
    println!("{url}: {status}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_host_is_asked_on_loopback() {
        assert_eq!(loopback_if_unspecified("0.0.0.0:9201"), "127.0.0.1:9201");
        assert_eq!(loopback_if_unspecified("[::]:9201"), "[::1]:9201");
        assert_eq!(loopback_if_unspecified("10.0.0.5:80"), "10.0.0.5:80");
        assert_eq!(loopback_if_unspecified("sidecar:80"), "sidecar:80");
    }
}
