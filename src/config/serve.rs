//! Settings of the sidecar: flags, `NEARDUP_*` variables, or the `[serve]`
//! table of the config file, validated into [`ServeOptions`].
//!
//! Motivation: the server reads validated options; it does not parse
//! settings, so settings do not depend on the server.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::analyzers::{Analyzers, IndexFields};
use super::defaults::{
    DEFAULT_LISTEN, DEFAULT_MAX_CONTENT_LENGTH, DEFAULT_MAX_IN_FLIGHT_BYTES, DEFAULT_UPSTREAM,
    DEFAULT_UPSTREAM_TIMEOUT,
};
use super::engine::EngineSettings;
use super::fields::StampedFields;
use super::replica::{ReplicaOptions, ReplicaSettings, replica_options};
use super::state::{sidecar_store, state_directory};
use super::tls::UpstreamTlsSettings;
use crate::ledger::EngineParts;
use crate::persist::{FsyncPolicy, StoreOptions};
use crate::units::{parse_duration, parse_size};
use crate::upstream::UpstreamTls;

/// Settings of the sidecar: flags, `NEARDUP_*` variables, or the `[serve]`
/// table of the config file.
#[derive(Debug, Clone, Default, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ServeSettings {
    /// URL of the cluster [default: http://127.0.0.1:9200]
    #[arg(long, env = "NEARDUP_UPSTREAM", hide_env_values = true)]
    pub upstream: Option<String>,

    /// Address to listen on; port 0 picks a free port [default: 127.0.0.1:9201]
    #[arg(long, env = "NEARDUP_LISTEN")]
    pub listen: Option<String>,

    /// Largest request body accepted (413 above it), like the cluster's http.max_content_length [default: 100mb]
    #[arg(long, env = "NEARDUP_MAX_CONTENT_LENGTH")]
    pub max_content_length: Option<String>,

    /// Largest body sent to the cluster in one request: a stamped bulk body above it is sent in several requests and the answers are joined [default: the max_content_length]
    #[arg(long, env = "NEARDUP_UPSTREAM_MAX_CONTENT_LENGTH")]
    pub upstream_max_content_length: Option<String>,

    /// How long the cluster may stay silent (connecting, or between bytes) before the request fails with 504 [default: 60s]
    #[arg(long, env = "NEARDUP_UPSTREAM_TIMEOUT")]
    pub upstream_timeout: Option<String>,

    /// Most request-body bytes being stamped at once; a write beyond it gets 429, as the cluster answers when its indexing pressure is too high [default: 256mb]
    #[arg(long, env = "NEARDUP_MAX_IN_FLIGHT_BYTES")]
    pub max_in_flight_bytes: Option<String>,

    /// Directory of the durable state (forest log and snapshots), locked while in use; `none` keeps the state in memory only [default: neardup-state]
    #[arg(long, env = "NEARDUP_STATE_DIR")]
    pub state_dir: Option<String>,

    /// When the state log is forced to disk: `request` (before forwarding and before answering each write), an interval such as `1s`, or `never` (the OS decides; a killed process still loses nothing) [default: request]
    #[arg(long, env = "NEARDUP_FSYNC")]
    pub fsync: Option<String>,

    /// Write a snapshot once the log since the last one is this large (or larger than that snapshot) [default: 256mb]
    #[arg(long, env = "NEARDUP_SNAPSHOT_AFTER")]
    pub snapshot_after: Option<String>,

    /// What a write does when the state cannot be written: `reject` (503, nothing indexed) or `pass` (forwarded unstamped, marked by the X-Neardup-Unstamped header; a backfill stamps it later) [default: reject]
    #[arg(long, env = "NEARDUP_ON_STATE_FAILURE")]
    pub on_state_failure: Option<String>,

    /// Token that lets non-loopback peers call the state-changing endpoints (backfill), sent in the X-Neardup-Admin-Token header; loopback peers need none [default: none]
    #[arg(long, env = "NEARDUP_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// Host names (as clients write them in the Host header, with or without the port) by which the sidecar may be called besides loopback names and IP addresses: admin endpoints trust loopback peers only with such a Host, and while the sidecar signs requests (SigV4, client certificate, credentials in --upstream) other requests with another Host are refused, which stops DNS rebinding [default: none]
    #[arg(
        long = "allowed-host",
        env = "NEARDUP_ALLOWED_HOST",
        value_delimiter = ','
    )]
    pub allowed_hosts: Option<Vec<String>>,

    /// Default throttle of a backfill job, in documents per second [default: unlimited]
    #[arg(long, env = "NEARDUP_BACKFILL_MAX_DOCS_PER_SECOND")]
    pub backfill_max_docs_per_second: Option<f64>,

    /// PEM certificate chain of the sidecar's own HTTPS listener (with --tls-key); reloaded on SIGHUP or when the file changes
    #[arg(long, env = "NEARDUP_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of the HTTPS listener (with --tls-cert)
    #[arg(long, env = "NEARDUP_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Listen with plain HTTP on an address other than loopback (clients' credentials then cross the network in the clear) [default: refused; give --tls-cert/--tls-key]
    #[arg(long, env = "NEARDUP_ALLOW_PLAIN_HTTP")]
    #[serde(default)]
    pub allow_plain_http: bool,

    /// At start, install the component template `neardup-stamps` (stamped fields as keywords) and the index template `neardup` that applies it to --template-patterns (see mappings/)
    #[arg(long, env = "NEARDUP_INSTALL_TEMPLATE")]
    #[serde(default)]
    pub install_template: bool,

    /// Index patterns of the `neardup` index template; list here every pattern the sidecar stamps (the `[[serve.index]]` ones too) [default: articles*,news*]
    #[arg(long, env = "NEARDUP_TEMPLATE_PATTERNS", value_delimiter = ',')]
    pub template_patterns: Option<Vec<String>>,

    /// Join the replica group NAME: members of one group against one cluster elect one leader through a lease in the cluster; the others follow its effect log as warm standbys (docs/standby.md) [default: none, the sidecar runs alone]
    #[arg(long, env = "NEARDUP_REPLICA_GROUP")]
    pub replica_group: Option<String>,

    /// First part of this member's node id in the group (a random suffix is added at each start) [default: the host name]
    #[arg(long, env = "NEARDUP_REPLICA_NAME")]
    pub replica_name: Option<String>,

    /// The group's lease L: the leader renews every L/3 and acts until 0.9·L; a standby takes over after seeing it unchanged for 1.1·L (2s to 60s) [default: 5s]
    #[arg(long, env = "NEARDUP_REPLICA_LEASE")]
    pub replica_lease: Option<String>,

    /// URL by which clients and the other members reach this sidecar, named in the lease and in a standby's 503 [default: the address the listener bound]
    #[arg(long, env = "NEARDUP_REPLICA_ADVERTISE")]
    pub replica_advertise: Option<String>,

    /// File holding the replica group's secret (at least 16 bytes, the same on every member): records, the lease and the published snapshot are authenticated with it; required with --replica-group
    #[arg(long, env = "NEARDUP_REPLICA_SECRET_FILE")]
    pub replica_secret_file: Option<String>,

    /// How long a write is held while no member of the group may act (a takeover, a release), when the request gives no `timeout` of its own; past it, 503 with Retry-After [default: 1m]
    #[arg(long, env = "NEARDUP_REPLICA_WRITE_WAIT")]
    pub replica_write_wait: Option<String>,

    /// TLS towards the cluster (`[serve.upstream_tls]` in the config file)
    #[command(flatten)]
    #[serde(default)]
    pub upstream_tls: UpstreamTlsSettings,

    /// Per-index fields (config file only): `[[serve.index]]` with `pattern = "news-*"` and `fields = [...]`, optionally `headline_field`; the first matching pattern wins
    #[arg(skip)]
    #[serde(default)]
    pub index: Vec<IndexFields>,
}

impl ServeSettings {
    pub fn or(self, fallback: ServeSettings) -> ServeSettings {
        ServeSettings {
            upstream: self.upstream.or(fallback.upstream),
            listen: self.listen.or(fallback.listen),
            max_content_length: self.max_content_length.or(fallback.max_content_length),
            upstream_max_content_length: self
                .upstream_max_content_length
                .or(fallback.upstream_max_content_length),
            upstream_timeout: self.upstream_timeout.or(fallback.upstream_timeout),
            max_in_flight_bytes: self.max_in_flight_bytes.or(fallback.max_in_flight_bytes),
            state_dir: self.state_dir.or(fallback.state_dir),
            fsync: self.fsync.or(fallback.fsync),
            snapshot_after: self.snapshot_after.or(fallback.snapshot_after),
            on_state_failure: self.on_state_failure.or(fallback.on_state_failure),
            admin_token: self.admin_token.or(fallback.admin_token),
            allowed_hosts: self.allowed_hosts.or(fallback.allowed_hosts),
            backfill_max_docs_per_second: self
                .backfill_max_docs_per_second
                .or(fallback.backfill_max_docs_per_second),
            replica_group: self.replica_group.or(fallback.replica_group),
            replica_name: self.replica_name.or(fallback.replica_name),
            replica_lease: self.replica_lease.or(fallback.replica_lease),
            replica_advertise: self.replica_advertise.or(fallback.replica_advertise),
            replica_secret_file: self.replica_secret_file.or(fallback.replica_secret_file),
            replica_write_wait: self.replica_write_wait.or(fallback.replica_write_wait),
            upstream_tls: self.upstream_tls.or(fallback.upstream_tls),
            install_template: self.install_template || fallback.install_template,
            template_patterns: self.template_patterns.or(fallback.template_patterns),
            tls_cert: self.tls_cert.or(fallback.tls_cert),
            tls_key: self.tls_key.or(fallback.tls_key),
            allow_plain_http: self.allow_plain_http || fallback.allow_plain_http,
            index: if self.index.is_empty() {
                fallback.index
            } else {
                self.index
            },
        }
    }
}

/// Everything `serve` needs, validated.
#[derive(Debug)]
pub struct ServeOptions {
    pub upstream: String,
    pub listen: String,
    pub limits: Limits,
    pub upstream_timeout: Duration,
    pub upstream_tls: UpstreamTls,
    /// The HTTPS listener's certificate and key files; `None`: plain HTTP.
    pub listener_tls: Option<(PathBuf, PathBuf)>,
    pub root_field: String,
    pub simhash_field: String,
    /// Install the index template (`mappings/index-template.json`) at start.
    pub install_template: bool,
    pub template_patterns: Vec<String>,
    pub fsync: FsyncPolicy,
    /// The durable state; `None` keeps it in memory only.
    pub state: Option<StoreOptions>,
    pub on_state_failure: OnStateFailure,
    pub admin_token: Option<String>,
    /// Host names besides loopback ones and IP addresses by which the
    /// sidecar may be called (`--allowed-host`), lowercase.
    pub allowed_hosts: Vec<String>,
    pub backfill_max_docs_per_second: Option<f64>,
    /// The replica group this sidecar is a member of, if any.
    pub replica: Option<ReplicaOptions>,
}

/// The cluster's URL: `http://` or `https://`, a host, no query. A
/// scheme mistyped (`http//host`, `http:/host`) is suggested back whole.
pub(crate) fn check_upstream_url(url: &str) -> anyhow::Result<()> {
    // Errors show the URL without credentials written in it.
    let url = &crate::upstream::userinfo::redact(url);
    if !url.contains("://") {
        let lower = url.to_ascii_lowercase();
        let mistyped = ["https", "http"].into_iter().find_map(|scheme| {
            let rest = lower.strip_prefix(scheme)?;
            let host = rest.trim_start_matches([':', '/']);
            (host.len() < rest.len()).then_some((scheme, url.get(url.len() - host.len()..)?))
        });
        match mistyped {
            Some((scheme, host)) => anyhow::bail!(
                "upstream `{url}`: the scheme is mistyped; did you mean `{scheme}://{host}`?"
            ),
            None => anyhow::bail!("upstream `{url}` has no scheme: did you mean `http://{url}`?"),
        }
    }
    let parsed = reqwest::Url::parse(url)
        .map_err(|error| anyhow::anyhow!("upstream `{url}` is not a URL: {error}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        anyhow::bail!(
            "upstream `{url}`: the scheme must be http or https, not {}",
            parsed.scheme()
        );
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        anyhow::bail!("upstream `{url}` names no host");
    }
    Ok(())
}

/// The address to listen on: `host:port` that resolves, and loopback
/// unless the listener is HTTPS or plain HTTP was asked for.
fn check_listen_address(listen: &str, beyond_loopback_allowed: bool) -> anyhow::Result<()> {
    use std::net::ToSocketAddrs;
    match listen
        .to_socket_addrs()
        .map(|mut addresses| addresses.next())
    {
        Ok(Some(address)) if !address.ip().is_loopback() && !beyond_loopback_allowed => {
            anyhow::bail!(
                "listening on {listen} with plain HTTP would let clients' credentials cross the network in the clear: give --tls-cert and --tls-key (NEARDUP_TLS_CERT, NEARDUP_TLS_KEY), or --allow-plain-http (NEARDUP_ALLOW_PLAIN_HTTP=true)"
            )
        }
        Ok(Some(_)) => Ok(()),
        Ok(None) => anyhow::bail!("listen address `{listen}` resolves to nothing"),
        Err(error) => anyhow::bail!(
            "listen address `{listen}` is not host:port (e.g. 127.0.0.1:9201): {error}"
        ),
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_content_length: usize,
    pub upstream_max_content_length: usize,
    pub max_in_flight_bytes: usize,
}

impl ServeOptions {
    /// The sidecar's settings validated; `settings_digest` (of the engine's
    /// fingerprint settings) goes into the state's snapshots.
    ///
    /// # Errors
    ///
    /// The first setting that does not parse or is out of range.
    pub fn from_settings(
        settings: &ServeSettings,
        fields: StampedFields,
        settings_digest: String,
    ) -> anyhow::Result<Self> {
        let max_content_length = parse_size(
            settings
                .max_content_length
                .as_deref()
                .unwrap_or(DEFAULT_MAX_CONTENT_LENGTH),
        )?;
        let upstream_max_content_length = match settings.upstream_max_content_length.as_deref() {
            Some(text) => parse_size(text)?,
            None => max_content_length,
        };
        let timeout = settings
            .upstream_timeout
            .as_deref()
            .unwrap_or(DEFAULT_UPSTREAM_TIMEOUT);
        let upstream_timeout = match parse_duration(timeout, "upstream_timeout")? {
            Some(millis) if millis > 0 => Duration::from_millis(millis.unsigned_abs()),
            _ => anyhow::bail!("upstream_timeout `{timeout}` must be a positive duration"),
        };
        let max_in_flight_bytes = parse_size(
            settings
                .max_in_flight_bytes
                .as_deref()
                .unwrap_or(DEFAULT_MAX_IN_FLIGHT_BYTES),
        )?;
        let fsync = match settings.fsync.as_deref() {
            None => FsyncPolicy::EveryRequest,
            Some(text) => text.parse().map_err(anyhow::Error::msg)?,
        };
        let on_state_failure = match settings.on_state_failure.as_deref() {
            None => OnStateFailure::Reject,
            Some(text) => text.parse().map_err(anyhow::Error::msg)?,
        };
        let backfill_max_docs_per_second = match settings.backfill_max_docs_per_second {
            Some(rate) if !(rate.is_finite() && rate > 0.0) => {
                anyhow::bail!("backfill_max_docs_per_second must be a positive number")
            }
            rate => rate,
        };
        // Everything is checked before the state directory is touched.
        let upstream = settings
            .upstream
            .clone()
            .unwrap_or_else(|| DEFAULT_UPSTREAM.to_string());
        check_upstream_url(&upstream)?;
        let listen = settings
            .listen
            .clone()
            .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
        let listener_tls = match (&settings.tls_cert, &settings.tls_key) {
            (Some(cert), Some(key)) => Some((cert.clone(), key.clone())),
            (None, None) => None,
            _ => anyhow::bail!("--tls-cert and --tls-key go together"),
        };
        check_listen_address(&listen, listener_tls.is_some() || settings.allow_plain_http)?;
        let upstream_tls = settings.upstream_tls.load()?;
        let replica = replica_options(ReplicaSettings {
            group: settings.replica_group.as_deref(),
            name: settings.replica_name.as_deref(),
            lease: settings.replica_lease.as_deref(),
            advertise: settings.replica_advertise.as_deref(),
            secret_file: settings.replica_secret_file.as_deref(),
            write_wait: settings.replica_write_wait.as_deref(),
        })?;
        let state = sidecar_store(
            state_directory(settings.state_dir.as_deref()),
            fsync,
            settings.snapshot_after.as_deref(),
            settings_digest,
        )?;
        Ok(ServeOptions {
            upstream,
            listen,
            limits: Limits {
                max_content_length,
                upstream_max_content_length,
                max_in_flight_bytes,
            },
            upstream_timeout,
            upstream_tls,
            listener_tls,
            root_field: fields.root_field,
            simhash_field: fields.simhash_field,
            install_template: settings.install_template,
            template_patterns: settings.template_patterns.clone().unwrap_or_default(),
            fsync,
            state,
            on_state_failure,
            admin_token: settings.admin_token.clone(),
            allowed_hosts: settings
                .allowed_hosts
                .iter()
                .flatten()
                .map(|host| host.trim().to_ascii_lowercase())
                .filter(|host| !host.is_empty())
                .collect(),
            backfill_max_docs_per_second,
            replica,
        })
    }
}

/// Everything `serve` starts from, validated: the sidecar's options, the
/// engine's pieces, and the analyzers of its index patterns.
#[derive(Debug)]
pub struct SidecarConfig {
    pub options: ServeOptions,
    /// The engine's settings, as given: a backfill job builds the engine of
    /// its history frame from them.
    pub engine: EngineSettings,
    pub parts: EngineParts,
    pub analyzers: Analyzers,
}

impl SidecarConfig {
    /// The engine's settings, then the index patterns' fields, then the
    /// sidecar's settings, validated in that order.
    ///
    /// # Errors
    ///
    /// The first setting that does not validate.
    pub fn validate(
        engine: EngineSettings,
        serve: &ServeSettings,
        fields: StampedFields,
    ) -> anyhow::Result<Self> {
        let parts = engine.parts()?;
        let analyzers = Analyzers::of_engine(&parts, &engine, &serve.index)?;
        let options = ServeOptions::from_settings(serve, fields, engine.fingerprint_digest())?;
        Ok(SidecarConfig {
            options,
            engine,
            parts,
            analyzers,
        })
    }
}

/// What a write does when the sidecar cannot write its state (see
/// `serve::state_failure`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnStateFailure {
    /// 503, nothing forwarded.
    #[default]
    Reject,
    /// Forward unstamped.
    Pass,
}

impl std::str::FromStr for OnStateFailure {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "reject" => Ok(OnStateFailure::Reject),
            "pass" => Ok(OnStateFailure::Pass),
            other => Err(format!(
                "on_state_failure `{other}`: expected `reject` or `pass`"
            )),
        }
    }
}

impl OnStateFailure {
    /// Whether a write whose state could not be written goes on unstamped.
    pub fn forwards_unstamped(self) -> bool {
        self == OnStateFailure::Pass
    }
}
