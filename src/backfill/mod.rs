//! Backfill: stamp the documents an index already holds.
//!
//! Motivation: nobody starts with an empty index. Documents indexed before
//! the sidecar was installed, or sent straight to the cluster during an
//! outage or a deploy, carry no stamps: the list page cannot collapse them,
//! `rebuild` skips them, and their reprints arriving later start new classes.
//!
//! Design:
//!
//! - One job at a time reads the index oldest first: a point-in-time
//!   (OpenSearch `_search/point_in_time`, Elasticsearch `_pit`) paged with
//!   `search_after`, or a scroll when neither exists, sorted by the time
//!   field and then a tiebreak (`_id` unless told otherwise), a page at a
//!   time, so memory stays bounded by one page.
//! - A document older than the retention (as of the job's start) is grouped
//!   in a history frame of its own: a separate forest replayed with the
//!   documents' times, expiry included, as `neardup stamp --time-field`
//!   groups a file. The live forest never sees it: those classes expired
//!   long ago. A document inside the window joins the live forest (placed at
//!   its own time), where live copies of the same story meet it.
//! - A document that already carries stamps is read into the forest at its
//!   stamped place ([`crate::ledger::Ledger::adopt`]), never rewritten; the
//!   ledger keys documents by index and id, so one read again counts once.
//! - Stamps are written with bulk `update` (a partial `doc` with the two
//!   fields) and `if_seq_no` / `if_primary_term` from the read: a document a
//!   client rewrote meanwhile went through the sidecar and has its stamp; the
//!   409 leaves it alone and is counted.
//! - The live placements are logged before the stamps are sent
//!   (write-ahead, as for client writes), and settled from the cluster's
//!   answer. Then the checkpoint ([`checkpoint`]) moves past the page.
//! - Throttled (`max_docs_per_second`), cancellable between pages.
//!
//! Consequences:
//!
//! - After a crash the job resumes after the last checkpointed page. The
//!   page in flight may already be stamped: those documents come back as
//!   already stamped, the ledger counts each once. A resume inside the
//!   history frame first reads the preceding retention's worth of documents
//!   again (uncounted) to warm the history frame up.
//! - A story that straddles the history/window line stays one class: the
//!   history frame follows the window's documents too, and when one of them
//!   continues a history class that the live forest has expired (as of now),
//!   that class is carried over into the live forest, uncounted, before the
//!   document is placed there. The live forest still decides.
//! - The history frame lives in memory only; the index is its record.
//! - Without a state directory (`--state-dir none`) there is no checkpoint:
//!   a job started again reads from the beginning, and everything it
//!   stamped before comes back as already stamped.
//! - Reading needs sorting on the tiebreak; Elasticsearch 8 refuses sorting
//!   on `_id` unless `indices.id_field_data.enabled`: name a keyword field
//!   holding a unique id as `tiebreak_field` there.
//!
//! Files, each importing only the ones after it (and this module's types):
//!
//! - `controller.rs`: the one job of a process: start, report, cancel.
//! - `job.rs`: the loop: read a page, prepare it, write the previous page's
//!   stamps meanwhile, checkpoint; where a resumed job starts reading.
//! - `stamps.rs`: the bulk-update writer: guarded updates, retries, 409s
//!   read back.
//! - `decide.rs`: the decisions: hits read into entries, placed in the
//!   history frame or the live forest, logged, settled.
//! - `checkpoint.rs`: the position, on disk.
//! - `offline.rs`: `neardup backfill` without a sidecar.
//!
//! The index itself is read by [`crate::upstream::scan`] (point in time,
//! scroll fallback), which `neardup rebuild` shares.

pub mod checkpoint;
mod controller;
mod decide;
pub mod job;
pub mod offline;
mod stamps;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::engine::{Analyzer, Engine};
use crate::ledger::Ledger;
use crate::units::Millis;
use crate::upstream::Upstream;
pub use checkpoint::{Checkpoint, Counts};
pub use controller::Controller;

/// Documents per page unless the request says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 500;

/// What a backfill job works on: the live forest and its durable log. The
/// sidecar and the offline command each provide one.
pub trait LiveForest: Send + Sync + 'static {
    /// Runs `change` on the locked ledger and queues its effects for the
    /// log. Returns the log position to [`LiveForest::persist`].
    fn change(&self, change: &mut dyn FnMut(&mut Ledger)) -> u64;
    /// Makes the effects up to `seq` durable. Blocking.
    ///
    /// # Errors
    ///
    /// The state could not be written.
    fn persist(&self, seq: u64) -> Result<(), String>;
    fn upstream(&self) -> &Upstream;
    /// The analyzer for documents of `index`.
    fn analyzer(&self, index: &str) -> Analyzer;
    /// The live forest's retention (`None`: nothing expires).
    fn retention(&self) -> Option<Millis>;
}

/// [`LiveForest::persist`] for a forest with an optional store (no state
/// directory: nothing to make durable).
pub fn sync_store(store: Option<&crate::persist::Store>, seq: u64) -> Result<(), String> {
    store.map_or(Ok(()), |store| {
        store.sync(seq).map_err(|error| error.to_string())
    })
}

/// Builds an empty forest with the engine settings (the history frame).
pub type EngineFactory = Arc<dyn Fn() -> anyhow::Result<Engine> + Send + Sync>;

/// `POST /_neardup/backfill`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackfillRequest {
    /// Index, alias or pattern.
    pub index: String,
    /// Field holding each document's time; without it every document is
    /// placed at the job's start, in tiebreak order.
    pub time_field: Option<String>,
    /// Second sort key, unique per document [default: `_id`].
    pub tiebreak_field: Option<String>,
    pub max_docs_per_second: Option<f64>,
    pub page_size: Option<usize>,
    /// Start over even if a checkpoint of this job exists.
    #[serde(default)]
    pub restart: bool,
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    /// No job since the sidecar started, and no checkpoint.
    Idle,
    Running,
    Done,
    Failed,
    Cancelled,
    /// A checkpoint of an unfinished job was found at start: `POST` resumes.
    Interrupted,
}

impl JobState {
    pub fn name(self) -> &'static str {
        match self {
            JobState::Idle => "idle",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Interrupted => "interrupted",
        }
    }
}

/// What `GET /_neardup/backfill` shows.
#[derive(Debug, Clone)]
pub struct Progress {
    pub state: JobState,
    pub index: Option<String>,
    pub time_field: Option<String>,
    pub counts: Counts,
    /// Documents the job's read found in the index (its first page's total).
    pub total: Option<u64>,
    /// `point_in_time`, `pit` or `scroll`.
    pub reader: Option<&'static str>,
    pub error: Option<String>,
    /// Start of this run (a resumed job starts a new run).
    pub run_started: Option<Instant>,
    /// Documents seen in this run (for the rate).
    pub run_seen: u64,
    pub max_docs_per_second: Option<f64>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            state: JobState::Idle,
            index: None,
            time_field: None,
            counts: Counts::default(),
            total: None,
            reader: None,
            error: None,
            run_started: None,
            run_seen: 0,
            max_docs_per_second: None,
        }
    }
}

impl Progress {
    /// Documents per second in this run.
    pub fn rate(&self) -> Option<f64> {
        let elapsed = self.run_started?.elapsed().as_secs_f64();
        (elapsed > 0.0 && self.run_seen > 0).then(|| self.run_seen as f64 / elapsed)
    }

    /// Seconds left at the current rate.
    pub fn eta_seconds(&self) -> Option<f64> {
        if self.state != JobState::Running {
            return None;
        }
        let left = self.total?.saturating_sub(self.counts.seen);
        Some(left as f64 / self.rate()?)
    }

    pub fn to_json(&self) -> Value {
        let counts = &self.counts;
        json!({
            "state": self.state.name(),
            "index": self.index,
            "time_field": self.time_field,
            "reader": self.reader,
            "documents": {
                "total": self.total,
                "seen": counts.seen,
                "stamped": counts.stamped,
                "stamped_history": counts.stamped_history,
                "already_stamped": counts.already_stamped,
                "skipped": counts.skipped(),
                "skipped_conflict": counts.skipped_conflict,
                "skipped_no_text": counts.skipped_no_text,
                "skipped_error": counts.skipped_error,
            },
            "docs_per_second": self.rate(),
            "max_docs_per_second": self.max_docs_per_second,
            "eta_seconds": self.eta_seconds(),
            "error": self.error,
        })
    }
}

/// Why a job could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("a backfill of [{0}] is already running; cancel it first")]
    AlreadyRunning(String),
    #[error("{0}")]
    Invalid(String),
}

/// Settings every job of this process shares.
#[derive(Clone)]
pub struct BackfillSettings {
    pub root_field: String,
    pub simhash_field: String,
    /// Where checkpoints live (`None`: in memory only).
    pub state_dir: Option<PathBuf>,
    pub history_engine: EngineFactory,
    /// Default throttle when a request gives none.
    pub max_docs_per_second: Option<f64>,
}

/// A job as the controller configured it.
#[derive(Debug, Clone)]
pub struct JobConfig {
    pub index: String,
    pub time_field: Option<String>,
    pub tiebreak_field: String,
    pub root_field: String,
    pub simhash_field: String,
    pub max_docs_per_second: Option<f64>,
    pub page_size: usize,
    /// Sent with every request to the cluster (the caller's credentials).
    pub headers: HeaderMap,
    pub state_dir: Option<PathBuf>,
    /// Ignore an existing checkpoint.
    pub restart: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_follows_the_rate() {
        let progress = Progress {
            state: JobState::Running,
            total: Some(1_000),
            counts: Counts {
                seen: 100,
                ..Counts::default()
            },
            run_seen: 100,
            run_started: Instant::now().checked_sub(std::time::Duration::from_secs(10)),
            ..Progress::default()
        };
        let rate = progress.rate().expect("rate");
        assert!((rate - 10.0).abs() < 1.0, "{rate}");
        let eta = progress.eta_seconds().expect("eta");
        assert!((eta - 90.0).abs() < 10.0, "{eta}");
        let json = progress.to_json();
        assert_eq!(json["state"], "running");
        assert_eq!(json["documents"]["seen"], 100);
    }
}
