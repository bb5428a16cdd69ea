//! `neardup serve`: the sidecar in front of the cluster.
//!
//! Motivation: teams should get grouping by pointing their indexing client
//! at another address and changing nothing else (SPEC §4).
//!
//! Design: one axum handler classifies every request ([`route`]). Writes
//! (`_bulk`, `_doc`, `_create`) are read whole, analysed on the blocking pool,
//! placed in the forest under one lock per request, stamped and forwarded
//! ([`write`]); the cluster's answer settles the counts in the [`Ledger`].
//! Everything else is streamed to the cluster and back unchanged
//! ([`upstream`]). The sidecar's own endpoints live under `/_neardup/`
//! ([`own`]). A background task expires old nodes when no write comes.
//!
//! Consequences: the forest lives in memory (persistence is its own
//! module); a write is only as fast as the cluster's answer, plus the
//! fingerprinting, which runs in parallel with other requests.

pub mod admin;
mod backfill;
mod metrics;
mod own;
pub mod route;
pub mod state_failure;
pub mod upstream;
mod write;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use parking_lot::Mutex;
use serde::Deserialize;

use crate::config::{EngineSettings, parse_retention};
use crate::engine::Analyzer;
use crate::fingerprint::Fingerprinter;
use crate::forest::Millis;
use crate::ledger::Ledger;
use crate::persist::{FsyncPolicy, Store};
use metrics::Metrics;
use route::Route;
use upstream::{Upstream, cluster_error};

/// Settings of the sidecar: flags, `NEARDUP_*` variables, or the `[serve]`
/// table of the config file.
#[derive(Debug, Clone, Default, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ServeSettings {
    /// URL of the cluster [default: http://127.0.0.1:9200]
    #[arg(long, env = "NEARDUP_UPSTREAM")]
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

    /// Default throttle of a backfill job, in documents per second [default: unlimited]
    #[arg(long, env = "NEARDUP_BACKFILL_MAX_DOCS_PER_SECOND")]
    pub backfill_max_docs_per_second: Option<f64>,

    /// Per-index fields (config file only): `[[serve.index]]` with `pattern = "news-*"` and `fields = [...]`, optionally `headline_field`; the first matching pattern wins
    #[arg(skip)]
    #[serde(default)]
    pub index: Vec<IndexFields>,
}

/// Other fields for indices whose name matches `pattern` (`*` wildcards).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexFields {
    pub pattern: String,
    pub fields: Vec<String>,
    pub headline_field: Option<String>,
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
            backfill_max_docs_per_second: self
                .backfill_max_docs_per_second
                .or(fallback.backfill_max_docs_per_second),
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
    pub root_field: String,
    pub simhash_field: String,
    /// Install the index template (`mappings/index-template.json`) at start.
    pub install_template: bool,
    pub template_patterns: Vec<String>,
    pub fsync: FsyncPolicy,
    pub on_state_failure: state_failure::OnStateFailure,
    pub admin_token: Option<String>,
    pub backfill_max_docs_per_second: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_content_length: usize,
    pub upstream_max_content_length: usize,
    pub max_in_flight_bytes: usize,
}

impl ServeOptions {
    pub fn from_settings(
        settings: &ServeSettings,
        root_field: String,
        simhash_field: String,
    ) -> anyhow::Result<Self> {
        let max_content_length = parse_size(settings.max_content_length.as_deref(), "100mb")?;
        let upstream_max_content_length = match settings.upstream_max_content_length.as_deref() {
            Some(text) => parse_size(Some(text), "")?,
            None => max_content_length,
        };
        let timeout = settings.upstream_timeout.as_deref().unwrap_or("60s");
        let upstream_timeout = match parse_retention(timeout)? {
            Some(millis) if millis > 0 => Duration::from_millis(millis.unsigned_abs()),
            _ => anyhow::bail!("upstream_timeout `{timeout}` must be a positive duration"),
        };
        Ok(ServeOptions {
            upstream: settings
                .upstream
                .clone()
                .unwrap_or_else(|| "http://127.0.0.1:9200".to_string()),
            listen: settings
                .listen
                .clone()
                .unwrap_or_else(|| "127.0.0.1:9201".to_string()),
            limits: Limits {
                max_content_length,
                upstream_max_content_length,
                max_in_flight_bytes: parse_size(settings.max_in_flight_bytes.as_deref(), "256mb")?,
            },
            upstream_timeout,
            root_field,
            simhash_field,
            install_template: false,
            template_patterns: Vec::new(),
            fsync: match settings.fsync.as_deref() {
                None => FsyncPolicy::EveryRequest,
                Some(text) => text.parse().map_err(anyhow::Error::msg)?,
            },
            on_state_failure: match settings.on_state_failure.as_deref() {
                None => state_failure::OnStateFailure::Reject,
                Some(text) => text.parse().map_err(anyhow::Error::msg)?,
            },
            admin_token: settings.admin_token.clone(),
            backfill_max_docs_per_second: match settings.backfill_max_docs_per_second {
                Some(rate) if !(rate.is_finite() && rate > 0.0) => {
                    anyhow::bail!("backfill_max_docs_per_second must be a positive number")
                }
                rate => rate,
            },
        })
    }
}

/// A byte size: a number with an optional unit `b`, `kb`, `mb`, `gb`
/// (powers of 1024, as the cluster reads `100mb`).
pub fn parse_size(text: Option<&str>, default: &str) -> anyhow::Result<usize> {
    let text = text.unwrap_or(default).trim().to_ascii_lowercase();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    let number: usize = number.parse().map_err(|_| {
        anyhow::anyhow!("size `{text}`: expected a number and a unit (b, kb, mb, gb)")
    })?;
    let unit: usize = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        other => anyhow::bail!("size `{text}`: unknown unit `{other}` (b, kb, mb, gb)"),
    };
    number
        .checked_mul(unit)
        .filter(|&size| size > 0)
        .ok_or_else(|| anyhow::anyhow!("size `{text}` must be positive and fit in memory"))
}

/// The analyzers: the default one and those of index patterns.
#[derive(Debug, Clone)]
pub struct Analyzers {
    default: Analyzer,
    by_pattern: Vec<(String, Analyzer)>,
}

impl Analyzers {
    /// Builds one analyzer per `[[serve.index]]` entry, each with the engine
    /// settings but its own fields.
    pub fn new(
        default: Analyzer,
        engine: &EngineSettings,
        indices: &[IndexFields],
    ) -> anyhow::Result<Self> {
        let mut by_pattern = Vec::new();
        for entry in indices {
            let mut settings = engine.clone();
            settings.fields = Some(entry.fields.clone());
            if entry.headline_field.is_some() {
                settings.headline_field = entry.headline_field.clone();
            }
            let fingerprinter = Fingerprinter::new(settings.fingerprint_config())
                .with_context(|| format!("fields of index pattern `{}`", entry.pattern))?;
            let analyzer = Analyzer::new(fingerprinter, default.long_text_search());
            by_pattern.push((entry.pattern.clone(), analyzer));
        }
        Ok(Analyzers {
            default,
            by_pattern,
        })
    }

    /// The analyzer for documents of `index` (the default when unknown).
    pub fn for_index(&self, index: Option<&str>) -> &Analyzer {
        index
            .and_then(|index| {
                self.by_pattern
                    .iter()
                    .find(|(pattern, _)| wildcard_matches(pattern, index))
            })
            .map_or(&self.default, |(_, analyzer)| analyzer)
    }
}

/// `*` matches any run of characters.
fn wildcard_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(position) => rest = &rest[position + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The sidecar's shared state.
pub struct Sidecar {
    ledger: Mutex<Ledger>,
    /// Durable state, unless running without a state directory.
    store: Option<Arc<Store>>,
    analyzers: Analyzers,
    upstream: Upstream,
    root_field: String,
    simhash_field: String,
    limits: Limits,
    in_flight_bytes: AtomicUsize,
    metrics: Metrics,
    started: Instant,
    snapshot_running: std::sync::atomic::AtomicBool,
    /// Who may call the state-changing endpoints.
    admin: admin::AdminGuard,
    on_state_failure: state_failure::OnStateFailure,
    /// The backfill job, once [`Sidecar::install_backfill`] set it up.
    backfill: std::sync::OnceLock<crate::backfill::Controller>,
}

impl Sidecar {
    pub fn new(
        ledger: Ledger,
        store: Option<Store>,
        analyzers: Analyzers,
        options: &ServeOptions,
    ) -> anyhow::Result<Self> {
        Ok(Sidecar {
            ledger: Mutex::new(ledger),
            store: store.map(Arc::new),
            analyzers,
            upstream: Upstream::new(&options.upstream, options.upstream_timeout)?,
            root_field: options.root_field.clone(),
            simhash_field: options.simhash_field.clone(),
            limits: options.limits,
            in_flight_bytes: AtomicUsize::new(0),
            metrics: Metrics::default(),
            started: Instant::now(),
            snapshot_running: std::sync::atomic::AtomicBool::new(false),
            admin: admin::AdminGuard::new(options.admin_token.clone()),
            on_state_failure: options.on_state_failure,
            backfill: std::sync::OnceLock::new(),
        })
    }

    /// Enables `/_neardup/backfill` (checkpoints in the state directory).
    pub fn install_backfill(&self, settings: crate::backfill::BackfillSettings) {
        let _ = self
            .backfill
            .set(crate::backfill::Controller::new(settings));
    }

    /// Reserves `bytes` of the in-flight budget; `None` when it is spent.
    fn admit(&self, bytes: usize) -> Option<InFlight<'_>> {
        let limit = self.limits.max_in_flight_bytes;
        self.in_flight_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |current| {
                // One request alone is always let in, however big (it is
                // below max_content_length), so nothing is starved.
                (current == 0 || current.saturating_add(bytes) <= limit)
                    .then_some(current.saturating_add(bytes))
            })
            .ok()
            .map(|_| InFlight {
                counter: &self.in_flight_bytes,
                bytes,
            })
    }

    /// Runs `change` on the locked ledger and queues its effects for the
    /// log, in the ledger's order. Returns what to [`Sidecar::persist`].
    fn write_ledger<R>(&self, change: impl FnOnce(&mut Ledger) -> R) -> (R, u64) {
        let mut ledger = self.ledger.lock();
        let result = change(&mut ledger);
        let seq = match &self.store {
            Some(store) => store.append(ledger.take_journal()),
            None => 0,
        };
        (result, seq)
    }

    /// Makes the effects up to `seq` durable (per the fsync policy), off
    /// the async threads.
    async fn persist(&self, seq: u64) -> Result<(), String> {
        let Some(store) = self.store.clone() else {
            return Ok(());
        };
        tokio::task::spawn_blocking(move || store.sync(seq))
            .await
            .map_err(|error| error.to_string())?
            .map_err(|error| error.to_string())
    }

    /// Expires a bounded number of old nodes.
    fn expire(&self, now: Millis, budget: usize) -> bool {
        let ((removed, more_pending), _) = self.write_ledger(|ledger| ledger.expire(now, budget));
        Metrics::add(&self.metrics.expired_nodes, removed as u64);
        more_pending
    }

    /// Writes a snapshot now (the ledger is locked meanwhile).
    fn snapshot(&self) -> anyhow::Result<()> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        if self.snapshot_running.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let started = Instant::now();
        // Writes pause only while the state is taken, not while it is written.
        let pending = {
            let mut ledger = self.ledger.lock();
            store.append(ledger.take_journal());
            store.begin_snapshot(&ledger)
        };
        let paused = started.elapsed();
        let report = pending.and_then(|pending| store.finish_snapshot(pending, now_millis()));
        self.snapshot_running.store(false, Ordering::Release);
        let report = report?;
        tracing::info!(
            nodes = report.nodes,
            bytes = report.bytes,
            last_seq = report.last_seq,
            writes_paused_ms = paused.as_millis() as u64,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "snapshot written"
        );
        Ok(())
    }
}

/// Bytes of the in-flight budget held by one request.
struct InFlight<'a> {
    counter: &'a AtomicUsize,
    bytes: usize,
}

impl InFlight<'_> {
    /// Accounts for bytes beyond the reservation (a body without a declared
    /// length, or one that grew when decompressed): later requests see them.
    fn cover(&mut self, actual: usize) {
        if actual > self.bytes {
            self.counter
                .fetch_add(actual - self.bytes, Ordering::AcqRel);
            self.bytes = actual;
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// The wall clock in milliseconds since the epoch.
pub fn now_millis() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            Millis::try_from(elapsed.as_millis()).unwrap_or(Millis::MAX)
        })
}

/// The axum application.
pub fn router(sidecar: Arc<Sidecar>) -> Router {
    Router::new().fallback(dispatch).with_state(sidecar)
}

async fn dispatch(State(sidecar): State<Arc<Sidecar>>, request: Request) -> Response {
    let route = route::classify(request.method(), request.uri().path());
    match route {
        Route::Bulk { index } => write::bulk(sidecar, request, index).await,
        Route::Document { index, kind } => write::document(sidecar, request, index, kind).await,
        Route::Health => own::health(&sidecar).await,
        Route::Live => own::live(&sidecar),
        Route::Backfill => backfill::handle(sidecar, request).await,
        Route::Stats => own::stats(&sidecar),
        Route::Metrics => own::metrics(&sidecar),
        Route::Fingerprint => own::fingerprint(sidecar, request).await,
        Route::Class { root } => own::class(&sidecar, &root, request.uri().query()),
        Route::Similar { index, id } => own::similar(&sidecar, request, &index, &id).await,
        Route::PassThrough => pass_through(&sidecar, request).await,
    }
}

/// Proxies a request unchanged, streaming both bodies.
async fn pass_through(sidecar: &Sidecar, request: Request) -> Response {
    Metrics::add(&sidecar.metrics.passthrough_requests, 1);
    let (parts, body) = request.into_parts();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |path_and_query| path_and_query.as_str());
    let headers = upstream::request_headers(&parts.headers, false);
    let body = reqwest::Body::wrap_stream(body.into_data_stream());
    match sidecar
        .upstream
        .send(parts.method, path_and_query, headers, body)
        .await
    {
        Ok(answer) => {
            let status = answer.status();
            let headers = upstream::response_headers(answer.headers(), false);
            upstream::response_from(status, headers, Body::from_stream(answer.bytes_stream()))
        }
        Err(error) => {
            Metrics::add(&sidecar.metrics.upstream_errors, 1);
            tracing::warn!(%error, "pass-through request failed");
            error.into_response()
        }
    }
}

/// Installs the component template `neardup-stamps` (stamped fields as
/// keywords) and the index template `neardup` that applies it to `patterns`.
pub async fn install_templates(sidecar: &Sidecar, patterns: &[String]) -> anyhow::Result<()> {
    let component = own::component_template(&sidecar.root_field, &sidecar.simhash_field);
    let path = format!("/_component_template/{}", own::COMPONENT_TEMPLATE);
    put_json(sidecar, &path, &component).await?;
    put_json(
        sidecar,
        "/_index_template/neardup",
        &own::index_template(patterns),
    )
    .await
}

async fn put_json(sidecar: &Sidecar, path: &str, body: &serde_json::Value) -> anyhow::Result<()> {
    let mut headers = HeaderMap::new();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    let answer = sidecar
        .upstream
        .send(
            Method::PUT,
            path,
            headers,
            reqwest::Body::from(body.to_string()),
        )
        .await?;
    let status = answer.status();
    let text = answer.text().await.unwrap_or_default();
    if !status.is_success() {
        anyhow::bail!("the cluster refused PUT {path} ({status}): {text}");
    }
    Ok(())
}

/// Runs the sidecar until SIGTERM or ctrl-c; in-flight requests finish first.
pub async fn run(sidecar: Arc<Sidecar>, options: &ServeOptions) -> anyhow::Result<()> {
    if options.install_template {
        install_templates(&sidecar, &options.template_patterns).await?;
        tracing::info!("templates `neardup-stamps` and `neardup` installed");
    }
    let listener = tokio::net::TcpListener::bind(&options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let address: SocketAddr = listener.local_addr()?;
    // First line on stdout, once listening: scripts read the address from it.
    println!(
        "{}",
        serde_json::json!({ "listen": format!("http://{address}"), "upstream": sidecar.upstream.base() })
    );
    tracing::info!(%address, upstream = sidecar.upstream.base(), "neardup serve listening");
    let tick = match options.fsync {
        FsyncPolicy::Interval(interval) => interval.min(Duration::from_secs(1)),
        _ => Duration::from_secs(1),
    };
    // Under a file-size limit (RLIMIT_FSIZE) a write past it raises SIGXFSZ,
    // which kills by default; handled, the write fails with EFBIG instead
    // and the store retries it like a full disk.
    #[cfg(target_os = "linux")]
    let _file_size_signal =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(25));
    let maintenance = tokio::spawn(maintain_in_background(sidecar.clone(), tick));
    // Peer addresses for the admin guard (loopback or token).
    let app = router(sidecar.clone()).into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await;
    if let Some(backfill) = sidecar.backfill.get() {
        // Stops after its page; the checkpoint lets the next start resume.
        backfill.cancel();
        backfill.wait().await;
    }
    maintenance.abort();
    served.context("server error")?;
    // Requests have finished: a snapshot makes the next start quick.
    let closing = sidecar.clone();
    tokio::task::spawn_blocking(move || closing.snapshot())
        .await
        .context("snapshot at shutdown")??;
    tracing::info!("neardup serve stopped");
    Ok(())
}

/// Expiry when no writes come (writes also expire a little each), the
/// log written and synced at least every second (or at the fsync
/// interval), and snapshots when the log has grown.
async fn maintain_in_background(sidecar: Arc<Sidecar>, tick: Duration) {
    let mut ticker = tokio::time::interval(tick);
    loop {
        ticker.tick().await;
        let sidecar = sidecar.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let now = now_millis();
            // Bounded slices, so a write never waits long for the lock.
            for _ in 0..100 {
                if !sidecar.expire(now, 1_000) {
                    break;
                }
            }
            if let Some(store) = &sidecar.store {
                if let Err(error) = store.flush() {
                    tracing::error!(%error, "cannot write the state log");
                }
                if store.snapshot_due()
                    && let Err(error) = sidecar.snapshot()
                {
                    tracing::error!(%error, "cannot write a snapshot");
                }
            }
        })
        .await;
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}

/// 413 in the cluster's envelope.
fn too_large(limit: usize) -> Response {
    cluster_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "content_too_long_exception",
        &format!("request body is too large: the limit (max_content_length) is [{limit}] bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_the_clusters() {
        assert_eq!(parse_size(None, "100mb").expect("valid"), 100 << 20);
        assert_eq!(parse_size(Some("512KB"), "").expect("valid"), 512 << 10);
        assert_eq!(parse_size(Some("42"), "").expect("valid"), 42);
        assert!(parse_size(Some("0"), "").is_err());
        assert!(parse_size(Some("1tb"), "").is_err());
        assert!(parse_size(Some("mb"), "").is_err());
    }

    #[test]
    fn in_flight_bytes_cover_what_was_read_and_are_given_back() {
        let counter = AtomicUsize::new(0);
        {
            let mut held = InFlight {
                counter: &counter,
                bytes: 0,
            };
            counter.fetch_add(10, Ordering::AcqRel);
            held.bytes = 10;
            held.cover(4);
            assert_eq!(counter.load(Ordering::Acquire), 10);
            held.cover(25);
            assert_eq!(counter.load(Ordering::Acquire), 25);
        }
        assert_eq!(counter.load(Ordering::Acquire), 0);
    }

    #[test]
    fn index_patterns() {
        assert!(wildcard_matches("news-*", "news-2026.11"));
        assert!(wildcard_matches("*", "anything"));
        assert!(wildcard_matches("a*c*e", "abcde"));
        assert!(!wildcard_matches("news-*", "blog-1"));
        assert!(wildcard_matches("exact", "exact"));
        assert!(!wildcard_matches("exact", "exactly"));
    }
}
