//! Where a backfill job is: its state, counts, rate and time left, as
//! `GET /_neardup/backfill` and the command line's progress show it.

use std::time::Instant;

use serde_json::{Value, json};

use super::checkpoint::Counts;

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
