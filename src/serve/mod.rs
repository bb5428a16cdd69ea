//! `neardup serve`: the sidecar in front of the cluster.
//!
//! Motivation: teams should get grouping by pointing their indexing client
//! at another address and changing nothing else (SPEC §4).
//!
//! Design: one axum handler classifies every request ([`route`]) and hands
//! it to one handler with the shared state ([`Sidecar`]). Writes (`_bulk`,
//! `_doc`, `_create`) are read whole, analysed on the blocking pool, placed
//! in the forest under one lock per request, stamped and forwarded
//! ([`write`](mod@write)); the cluster's answer settles the counts in the
//! [`Ledger`](crate::ledger::Ledger). Everything else is streamed to the
//! cluster and back unchanged ([`relay`](mod@relay)). The sidecar's own
//! endpoints live under `/_neardup/` ([`own`]). A background task expires
//! old nodes when no write comes, writes the log and takes snapshots. In a
//! replica group, every member takes writes and the leader serves them
//! ([`group_write`]: forwarded, or held through a takeover); at shutdown
//! a leader lets its lease go once its writes are recorded ([`standby`]).
//!
//! Consequences: the forest lives in memory (persistence is its own
//! module); a write is only as fast as the cluster's answer, plus the
//! fingerprinting, which runs in parallel with other requests.

pub mod admin;
mod backfill;
mod errors;
pub mod filter_path;
pub mod group_write;
pub mod hosts;
pub mod https;
mod join;
mod metrics;
mod off_runtime;
mod own;
mod protected;
mod relay;
mod replica_endpoints;
pub mod route;
mod sidecar;
pub mod standby;
pub mod startup;
mod ui;
mod write;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;

pub use crate::config::Analyzers;
use crate::config::ServeOptions;
use crate::persist::FsyncPolicy;
use crate::units::now_millis;
use crate::upstream::Payload;
use metrics::Metrics;
use relay::{RelayBody, relay};
use route::Route;
pub use sidecar::Sidecar;

/// The axum application.
pub fn router(sidecar: Arc<Sidecar>) -> Router {
    Router::new().fallback(dispatch).with_state(sidecar)
}

async fn dispatch(State(sidecar): State<Arc<Sidecar>>, request: Request) -> Response {
    // The replica groups' indices are the sidecar's alone (and `Host`).
    let request = match protected::screen(&sidecar, request).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    let route = route::classify(request.method(), request.uri().path());
    match route {
        Route::Bulk { .. } | Route::Document { .. } if sidecar.replica.is_some() => {
            let replica = sidecar.replica.clone();
            match replica {
                Some(replica) => group_write::serve(sidecar, replica, request, route).await,
                None => errors::SidecarError::Internal("no replica group".into()).into_response(),
            }
        }
        Route::Bulk { index } => {
            let write = write::bulk(sidecar.clone(), request, index);
            write::run_to_the_end(sidecar.clone(), write).await
        }
        Route::Document { index, id, kind } => {
            let write = write::document(sidecar.clone(), request, index, id, kind);
            write::run_to_the_end(sidecar.clone(), write).await
        }
        Route::Health => own::health(&sidecar).await,
        Route::Live => own::live(&sidecar),
        Route::Backfill => {
            // A job changes the forest: the leader's alone in a group.
            if request.method() != Method::GET
                && let Some(refused) = standby::refuse_unless_leader(&sidecar)
            {
                return refused;
            }
            backfill::handle(sidecar, request).await
        }
        Route::Stats => own::stats(&sidecar),
        Route::Replica { endpoint } => {
            replica_endpoints::handle(&sidecar, endpoint, request.uri().query())
        }
        Route::Metrics => own::metrics(&sidecar),
        Route::Fingerprint => own::fingerprint(sidecar, request).await,
        Route::Class { root } => own::class(&sidecar, &root, request.uri().query()),
        Route::Similar { index, id } => own::similar(&sidecar, request, &index, &id).await,
        Route::Explorer { rest } => ui::serve(sidecar, request, &rest).await,
        Route::UnknownOwn => errors::SidecarError::NotFound(format!(
            "no neardup endpoint {} {} (the README lists them under 'Own endpoints')",
            request.method(),
            request.uri().path()
        ))
        .into_response(),
        Route::PassThrough => pass_through(&sidecar, request).await,
    }
}

/// Proxies a request unchanged, streaming both bodies.
async fn pass_through(sidecar: &Sidecar, request: Request) -> Response {
    Metrics::add(&sidecar.metrics.passthrough_requests, 1);
    let (parts, body) = request.into_parts();
    relay(sidecar, &parts, RelayBody::Streamed(body), None).await
}

/// Installs the component template `neardup-stamps` (stamped fields as
/// keywords) and the index template `neardup` that applies it to `patterns`.
pub async fn install_templates(sidecar: &Sidecar, patterns: &[String]) -> anyhow::Result<()> {
    let component = own::component_template(&sidecar.root_field, &sidecar.simhash_field);
    let component_path = format!("/_component_template/{}", own::COMPONENT_TEMPLATE);
    let index_template = own::index_template(patterns);
    for (path, body) in [
        (component_path.as_str(), &component),
        ("/_index_template/neardup", &index_template),
    ] {
        sidecar
            .upstream
            .call_json(Method::PUT, path, &HeaderMap::new(), Payload::Json(body))
            .await?;
    }
    Ok(())
}

/// Runs the sidecar until SIGTERM or ctrl-c; in-flight requests finish
/// first. With `certificate`, the listener speaks HTTPS ([`https`]).
pub async fn run(
    sidecar: Arc<Sidecar>,
    options: &ServeOptions,
    certificate: Option<Arc<https::ReloadingCertificate>>,
    listener: std::net::TcpListener,
) -> anyhow::Result<()> {
    if options.install_template {
        install_templates(&sidecar, &options.template_patterns).await?;
        tracing::info!("templates `neardup-stamps` and `neardup` installed");
    }
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let address: SocketAddr = listener.local_addr()?;
    let scheme = if certificate.is_some() {
        "https"
    } else {
        "http"
    };
    // First line on stdout, once listening: scripts read the address from it.
    println!(
        "{}",
        serde_json::json!({ "listen": format!("{scheme}://{address}"), "upstream": sidecar.upstream.base() })
    );
    tracing::info!(
        %address,
        upstream = sidecar.upstream.base(),
        commit = env!("NEARDUP_COMMIT"),
        profile = env!("NEARDUP_PROFILE"),
        "neardup serve listening"
    );
    let tick = match options.fsync {
        FsyncPolicy::Interval(interval) => interval.min(Duration::from_secs(1)),
        _ => Duration::from_secs(1),
    };
    let maintenance = tokio::spawn(maintain_in_background(sidecar.clone(), tick));
    tokio::spawn(warn_if_the_cluster_is_silent(sidecar.clone()));
    tokio::spawn(check_template_coverage(
        sidecar.clone(),
        options.install_template,
        options.template_patterns.clone(),
    ));
    let stopping = {
        let sidecar = sidecar.clone();
        async move {
            let stepped_down = async {
                match &sidecar.replica {
                    Some(replica) => replica.rejoin_requested().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = shutdown_signal() => standby::begin_release(&sidecar),
                () = stepped_down => tracing::warn!(
                    "this member stepped down: it finishes the requests in flight, then restarts itself to rejoin the group"
                ),
                reason = side_records_damage(&sidecar) => {
                    tracing::error!(
                        %reason,
                        "the snapshot this sidecar recovered from is damaged: it finishes the requests in flight, sets the snapshot aside and restarts itself to recover from the one before"
                    );
                    standby::begin_release(&sidecar);
                }
            }
        }
    };
    let served = match certificate {
        Some(certificate) => {
            https::serve(listener, router(sidecar.clone()), certificate, stopping).await
        }
        None => {
            // Peer addresses for the admin guard (loopback or token).
            let app = router(sidecar.clone()).into_make_service_with_connect_info::<SocketAddr>();
            axum::serve(listener, app)
                .with_graceful_shutdown(stopping)
                .await
                .map_err(anyhow::Error::from)
        }
    };
    // Writes whose client left are still forwarding or settling.
    let longest_write = sidecar.upstream.timeout() * 2 + Duration::from_secs(5);
    if !sidecar.admission.writes_finished(longest_write).await {
        tracing::warn!("writes still running at shutdown: their placements stay in doubt");
    }
    if let Some(backfill) = sidecar.backfill.get() {
        // Stops after its page; the checkpoint lets the next start resume.
        backfill.cancel();
        backfill.wait().await;
    }
    maintenance.abort();
    served.context("server error")?;
    if sidecar.ledger.side_records_damage().is_some() {
        // No snapshot may copy the damaged records: the restart recovers
        // from the snapshot before (`startup`).
        return Ok(());
    }
    // Requests have finished: a snapshot makes the next start quick.
    let closing = sidecar.clone();
    tokio::task::spawn_blocking(move || closing.ledger.snapshot())
        .await
        .context("snapshot at shutdown")??;
    if sidecar.replica.is_some() {
        let (held, _, longest) = sidecar.metrics.held();
        tracing::info!(
            held_writes = held,
            held_max_ms = longest.as_millis() as u64,
            forwarded_writes = sidecar
                .metrics
                .forwarded_writes
                .load(std::sync::atomic::Ordering::Relaxed),
            "writes of this member of the replica group"
        );
    }
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
            if let Err(error) = sidecar.ledger.flush() {
                tracing::error!(%error, "cannot write the state log");
            }
            if sidecar.ledger.snapshot_due()
                && let Err(error) = sidecar.ledger.snapshot()
            {
                tracing::error!(%error, "cannot write a snapshot");
            }
        })
        .await;
    }
}

/// Comes when the check of the side records recovery adopted unread finds
/// damage ([`crate::engine::SideRecordsCheck`]), with what it found.
async fn side_records_damage(sidecar: &Sidecar) -> String {
    loop {
        if let Some(reason) = sidecar.ledger.side_records_damage() {
            return reason;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// One look at the cluster at start: a wrong `--upstream` (or a cluster
/// not up yet) is said at once, not at the first write.
async fn warn_if_the_cluster_is_silent(sidecar: Arc<Sidecar>) {
    let probe = sidecar
        .upstream
        .call(Method::GET, "/", &HeaderMap::new(), Payload::Empty)
        .await;
    if let Err(error) = probe {
        tracing::warn!(%error, "the cluster does not answer yet: writes get 502/504 and readiness stays red until it does");
    }
}

/// The patterns the operator named (`--template-patterns`, or their default
/// under `--install-template`, and every `[[serve.index]]` pattern): does a
/// template map their stamps as keywords? Said at start, not when the list
/// page fails. Other indices are checked at their first write.
async fn check_template_coverage(
    sidecar: Arc<Sidecar>,
    install_template: bool,
    template_patterns: Vec<String>,
) {
    let mut patterns: Vec<String> = if template_patterns.is_empty() && install_template {
        own::DEFAULT_TEMPLATE_PATTERNS
            .iter()
            .map(|pattern| (*pattern).to_string())
            .collect()
    } else {
        template_patterns
    };
    for pattern in sidecar.analyzers.patterns() {
        if !patterns.iter().any(|known| known == pattern) {
            patterns.push(pattern.to_string());
        }
    }
    write::stamp_mapping::check_patterns(
        &sidecar.stamp_mapping,
        &sidecar.upstream,
        &sidecar.root_field,
        patterns,
    )
    .await;
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
