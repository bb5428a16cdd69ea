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
    /// When this run ended (the rate is frozen there).
    pub run_finished: Option<Instant>,
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
            run_finished: None,
            max_docs_per_second: None,
        }
    }
}

impl Progress {
    /// Documents per second in this run (until it ended). A throttled
    /// job reads its first page at once; its rate is shown as at most the
    /// throttle it keeps over the run.
    pub fn rate(&self) -> Option<f64> {
        let started = self.run_started?;
        let until = self.run_finished.unwrap_or_else(Instant::now);
        let elapsed = until.saturating_duration_since(started).as_secs_f64();
        let rate = (elapsed > 0.0 && self.run_seen > 0).then(|| self.run_seen as f64 / elapsed)?;
        Some(match self.max_docs_per_second {
            Some(limit) => rate.min(limit),
            None => rate,
        })
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
                "stamped_not_fingerprinted": counts.stamped_not_fingerprinted,
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
            "note": self.note(),
        })
    }

    /// What the counts do not show: documents older than the retention are
    /// stamped in the index but kept out of the live window that stats and
    /// the Explorer show.
    fn note(&self) -> Option<String> {
        let history = self.counts.stamped_history;
        let retention = if self.time_field.is_some() {
            "older than the retention (by the time field)"
        } else {
            "older than the retention"
        };
        (history > 0).then(|| {
            format!(
                "{history} documents {retention} were grouped in a history frame of their own: they are stamped in the index, where the pages group them, but not counted in /_neardup/stats or shown in the Explorer, which show the live window"
            )
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

    #[test]
    fn the_rate_stays_within_the_throttle_and_stops_with_the_run() {
        let started = Instant::now()
            .checked_sub(std::time::Duration::from_secs(2))
            .expect("time");
        let burst = Progress {
            state: JobState::Running,
            run_seen: 520,
            run_started: Some(started),
            max_docs_per_second: Some(200.0),
            ..Progress::default()
        };
        assert_eq!(burst.rate(), Some(200.0));
        let done = Progress {
            state: JobState::Done,
            run_seen: 100,
            run_started: Some(started),
            run_finished: Some(started + std::time::Duration::from_secs(1)),
            ..Progress::default()
        };
        let first = done.rate().expect("rate");
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(done.rate(), Some(first), "frozen at the end");
        assert!((first - 100.0).abs() < 1e-6, "{first}");
        assert_eq!(done.eta_seconds(), None);
    }
}
