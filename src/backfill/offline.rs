//! `neardup backfill`: the same job without a running sidecar, on the
//! state directory the sidecar will start from.
//!
//! Design: the state directory is opened as every command opens it
//! (`persist::open_state`; locked: a sidecar using it makes this fail, and
//! the other way round), the job runs against that forest exactly as in the
//! sidecar, and a snapshot is written at the end so the next `serve` starts
//! quickly. A progress bar shows on a terminal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::http::HeaderMap;
use parking_lot::Mutex;

use super::controller::Controller;
use super::progress::{JobState, Progress};
use super::settings::{BackfillRequest, BackfillSettings, LiveForest, sync_store};
use crate::config::defaults::JOB_UPSTREAM_TIMEOUT;
use crate::config::{Analyzers, EngineSettings, StampedFields};
use crate::engine::Analyzer;
use crate::ledger::{EngineParts, Ledger};
use crate::persist::{StateOrigin, Store, StoreOptions, open_state};
use crate::units::Millis;
use crate::upstream::Upstream;

/// The live forest of an offline run.
pub struct OfflineForest {
    pub ledger: Mutex<Ledger>,
    pub store: Option<Store>,
    pub upstream: Upstream,
    pub analyzers: Analyzers,
}

impl LiveForest for OfflineForest {
    fn change(&self, change: &mut dyn FnMut(&mut Ledger)) -> u64 {
        let mut ledger = self.ledger.lock();
        change(&mut ledger);
        match &self.store {
            Some(store) => store.append(ledger.take_journal()),
            None => 0,
        }
    }

    fn persist(&self, seq: u64) -> Result<(), crate::persist::store::StoreError> {
        sync_store(self.store.as_ref(), seq)
    }

    fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    fn analyzer(&self, index: &str) -> Analyzer {
        self.analyzers.for_index(Some(index)).clone()
    }

    fn retention(&self) -> Option<Millis> {
        self.ledger.lock().retention()
    }
}

/// What the run came to.
#[derive(Debug, Clone)]
pub struct OfflineSummary {
    pub progress: Progress,
    pub elapsed: Duration,
}

impl std::fmt::Display for OfflineSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts = &self.progress.counts;
        write!(
            f,
            "{}: {} documents seen, {} stamped ({} in the history frame, {} with a class of their own: no text to fingerprint), {} already stamped, {} skipped ({} rewritten meanwhile, {} without text, {} refused) in {:.1}s",
            self.progress.state.name(),
            counts.seen,
            counts.stamped,
            counts.stamped_history,
            counts.stamped_not_fingerprinted,
            counts.already_stamped,
            counts.skipped(),
            counts.skipped_conflict,
            counts.skipped_no_text,
            counts.skipped_error,
            self.elapsed.as_secs_f64()
        )
    }
}

/// What `neardup backfill` starts from, validated.
pub struct OfflineOptions {
    /// The engine's settings, as given: the history frame's engine is built
    /// from them.
    pub engine: EngineSettings,
    pub parts: EngineParts,
    pub analyzers: Analyzers,
    /// The state directory's store; `None` keeps the forest in memory.
    pub store: Option<StoreOptions>,
    /// URL of the cluster.
    pub upstream: String,
    /// Headers every request to the cluster carries (its authorization).
    pub headers: HeaderMap,
    /// TLS towards the cluster.
    pub tls: crate::upstream::UpstreamTls,
    pub fields: StampedFields,
    pub request: BackfillRequest,
    /// Show a progress bar on standard error.
    pub show_progress: bool,
}

/// Opens the state, runs the job of `options.request` to its end on it, and
/// writes a snapshot.
///
/// # Errors
///
/// The state directory locked or unusable, the cluster's URL invalid, or
/// the job failing.
pub fn backfill(
    runtime: &tokio::runtime::Runtime,
    options: OfflineOptions,
) -> anyhow::Result<OfflineSummary> {
    let state_dir = options.store.as_ref().map(|store| store.dir.clone());
    let opened = open_state(options.store, options.parts, StateOrigin::Recovered)?;
    let forest = Arc::new(OfflineForest {
        ledger: Mutex::new(opened.ledger),
        store: opened.store,
        upstream: Upstream::new(&options.upstream, JOB_UPSTREAM_TIMEOUT, &options.tls)?,
        analyzers: options.analyzers,
    });
    let history_settings = options.engine;
    let settings = BackfillSettings {
        root_field: options.fields.root_field,
        simhash_field: options.fields.simhash_field,
        state_dir,
        history_engine: Arc::new(move || history_settings.build()),
        max_docs_per_second: None,
        option_names: super::settings::OptionNames::CommandLine,
    };
    run(
        runtime,
        forest,
        settings,
        options.request,
        options.headers,
        options.show_progress,
    )
}

/// Runs one job to its end on `forest`, showing progress when `show_progress`.
///
/// # Errors
///
/// The job failing (its error), or an invalid request.
pub fn run(
    runtime: &tokio::runtime::Runtime,
    forest: Arc<OfflineForest>,
    settings: BackfillSettings,
    request: BackfillRequest,
    headers: HeaderMap,
    show_progress: bool,
) -> anyhow::Result<OfflineSummary> {
    let started = Instant::now();
    let controller = Controller::new(settings);
    let bar = show_progress.then(new_bar);
    let progress = runtime.block_on(async {
        controller
            .start(forest.clone(), request, headers)
            .await
            .map_err(anyhow::Error::msg)?;
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let progress = controller.progress();
            if let Some(bar) = &bar {
                if let Some(total) = progress.total {
                    bar.set_length(total);
                }
                bar.set_position(progress.counts.seen);
                bar.set_message(progress_line(&progress));
            }
            if progress.state != JobState::Running {
                break;
            }
        }
        controller.wait().await;
        anyhow::Ok(controller.progress())
    })?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    if let Some(store) = &forest.store {
        let mut ledger = forest.ledger.lock();
        store.append(ledger.take_journal());
        store
            .snapshot(&ledger, crate::units::now_millis())
            .context("cannot write the snapshot at the end")?;
    }
    if progress.state == JobState::Failed {
        anyhow::bail!(
            "backfill failed after {} documents: {}{}",
            progress.counts.seen,
            progress.error.clone().unwrap_or_default(),
            if progress.counts.seen > 0 {
                " (run it again to resume)"
            } else {
                ""
            }
        );
    }
    Ok(OfflineSummary {
        progress,
        elapsed: started.elapsed(),
    })
}

/// The bar's message: the job's own rate and time left (whole numbers; none
/// while nothing moves), then its counts.
fn progress_line(progress: &super::Progress) -> String {
    let pace = match (progress.rate(), progress.eta_seconds()) {
        (Some(rate), Some(eta)) if rate >= 0.5 => {
            format!("{rate:.0}/s, {} left; ", format_seconds(eta))
        }
        (Some(rate), _) if rate >= 0.5 => format!("{rate:.0}/s; "),
        _ => String::new(),
    };
    format!(
        "{pace}{} stamped, {} already, {} skipped",
        progress.counts.stamped,
        progress.counts.already_stamped,
        progress.counts.skipped()
    )
}

fn format_seconds(seconds: f64) -> String {
    let seconds = seconds.round() as u64;
    match seconds {
        0..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

fn new_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} backfill {pos}/{len} [{wide_bar}] {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    bar
}
