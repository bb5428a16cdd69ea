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
mod errors;
pub mod filter_path;
mod metrics;
mod own;
pub mod route;
mod startup;
pub mod state_failure;
mod ui;
mod write;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use parking_lot::Mutex;

pub use crate::config::Analyzers;
use crate::config::{Limits, ServeOptions};
use crate::ledger::Ledger;
use crate::persist::{FsyncPolicy, Store};
use crate::units::{Millis, now_millis};
use crate::upstream::{self, Upstream};
use errors::{SidecarError, response_from};
use metrics::Metrics;
use route::Route;
pub use startup::start;

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
        Route::Explorer { rest } => ui::serve(sidecar, request, &rest).await,
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
            response_from(status, headers, Body::from_stream(answer.bytes_stream()))
        }
        Err(error) => {
            Metrics::add(&sidecar.metrics.upstream_errors, 1);
            tracing::warn!(%error, "pass-through request failed");
            SidecarError::from(error).into_response()
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
