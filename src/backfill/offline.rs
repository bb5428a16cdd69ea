//! `neardup backfill`: the same job without a running sidecar, on the
//! state directory the sidecar will start from.
//!
//! Design: the state directory is opened (and locked: a sidecar using it
//! makes this fail, and the other way round), the job runs against that
//! forest exactly as in the sidecar, and a snapshot is written at the end so
//! the next `serve` starts quickly. A progress bar shows on a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::http::HeaderMap;
use parking_lot::Mutex;

use super::{BackfillRequest, BackfillSettings, Controller, JobState, LiveForest, Progress};
use crate::config::Analyzers;
use crate::engine::Analyzer;
use crate::ledger::Ledger;
use crate::persist::Store;
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

    fn persist(&self, seq: u64) -> Result<(), String> {
        super::sync_store(self.store.as_ref(), seq)
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
            "{}: {} documents seen, {} stamped ({} in the history frame), {} already stamped, {} skipped ({} rewritten meanwhile, {} without text, {} refused) in {:.1}s",
            self.progress.state.name(),
            counts.seen,
            counts.stamped,
            counts.stamped_history,
            counts.already_stamped,
            counts.skipped(),
            counts.skipped_conflict,
            counts.skipped_no_text,
            counts.skipped_error,
            self.elapsed.as_secs_f64()
        )
    }
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
            .map_err(anyhow::Error::msg)?;
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let progress = controller.progress();
            if let Some(bar) = &bar {
                if let Some(total) = progress.total {
                    bar.set_length(total);
                }
                bar.set_position(progress.counts.seen);
                bar.set_message(format!(
                    "{} stamped, {} already, {} skipped",
                    progress.counts.stamped,
                    progress.counts.already_stamped,
                    progress.counts.skipped()
                ));
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
            "backfill failed after {} documents (run it again to resume): {}",
            progress.counts.seen,
            progress.error.clone().unwrap_or_default()
        );
    }
    Ok(OfflineSummary {
        progress,
        elapsed: started.elapsed(),
    })
}

fn new_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} backfill {pos}/{len} [{wide_bar}] {per_sec}, {eta} left; {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    bar
}

/// Whether a progress bar belongs on standard error.
pub fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// The state directory argument: `None` for `none` or empty.
pub fn state_dir(text: &str) -> Option<PathBuf> {
    (!(text.is_empty() || text == "none")).then(|| PathBuf::from(text))
}
