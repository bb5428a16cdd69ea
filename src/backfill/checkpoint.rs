//! Where a backfill stands, kept in the state directory so that a restart
//! (or a `kill -9`) continues instead of starting over.
//!
//! Design: one small JSON file, `backfill.checkpoint`, replaced atomically
//! after every page: written to a temporary file in the same directory,
//! fsynced, renamed over the old one, and the directory fsynced (as the
//! snapshots of [`crate::persist`]). The temporary name does not end in
//! `.tmp`, which the store sweeps away after a snapshot.
//!
//! It holds the job's identity (index pattern, time field, tiebreak field),
//! the boundary between history and the live window fixed when the job
//! started, the sort key of the last document handled, and the counts up to
//! it. Counts and key move together, so a document after the key is counted
//! by the run that reads it, and one up to the key never again.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::units::Millis;

/// File name of the checkpoint in the state directory.
pub const CHECKPOINT_FILE: &str = "backfill.checkpoint";
const TEMPORARY_FILE: &str = ".backfill.checkpoint.new";

/// What the documents handled so far came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    /// Documents read (after the resume point; never twice).
    pub seen: u64,
    /// Documents the backfill stamped (the cluster accepted the update).
    pub stamped: u64,
    /// Of those, grouped in the history frame (older than the retention).
    pub stamped_history: u64,
    /// Of those, with no text in the fingerprinted fields: stamped with a
    /// class of their own ([`crate::bulk::stamping::class_of_its_own`]).
    pub stamped_not_fingerprinted: u64,
    /// Documents that already carried stamps: read into the forest.
    pub already_stamped: u64,
    /// Rewritten by a client meanwhile (409 on `if_seq_no`): left as they are.
    pub skipped_conflict: u64,
    /// No text in the fingerprinted fields, left unstamped (by jobs before
    /// such documents got a class of their own; kept for their checkpoints).
    pub skipped_no_text: u64,
    /// The cluster refused the update for another reason.
    pub skipped_error: u64,
}

impl Counts {
    /// Adds the counts of one more page.
    pub fn add(&mut self, page: &Counts) {
        self.seen += page.seen;
        self.stamped += page.stamped;
        self.stamped_history += page.stamped_history;
        self.stamped_not_fingerprinted += page.stamped_not_fingerprinted;
        self.already_stamped += page.already_stamped;
        self.skipped_conflict += page.skipped_conflict;
        self.skipped_no_text += page.skipped_no_text;
        self.skipped_error += page.skipped_error;
    }

    pub fn skipped(&self) -> u64 {
        self.skipped_conflict + self.skipped_no_text + self.skipped_error
    }
}

/// The durable position of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub index: String,
    pub time_field: Option<String>,
    pub tiebreak_field: String,
    /// Documents older than this are grouped in the history frame; fixed at
    /// the job's start so that a resumed job draws the same line.
    pub history_before: Option<Millis>,
    /// Sort values of the last document handled (`search_after`).
    pub after: Option<Vec<Value>>,
    /// Its time, to know where the history frame must be warmed up from.
    pub after_time: Option<Millis>,
    pub counts: Counts,
    /// The job went through the whole index.
    pub finished: bool,
    /// When the job first started (wall clock, ms).
    pub started: Millis,
}

impl Checkpoint {
    /// Whether this checkpoint belongs to a job over these fields.
    pub fn same_job(&self, index: &str, time_field: Option<&str>, tiebreak_field: &str) -> bool {
        self.index == index
            && self.time_field.as_deref() == time_field
            && self.tiebreak_field == tiebreak_field
    }
}

/// The checkpoint in `dir`, if one is there and readable. An unreadable one
/// is reported and ignored (the job starts over; stamped documents are then
/// read into the forest, not counted twice by the ledger).
pub fn load(dir: &Path) -> Option<Checkpoint> {
    let path = dir.join(CHECKPOINT_FILE);
    let text = match fs::read(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return None,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "backfill checkpoint unreadable");
            return None;
        }
    };
    match serde_json::from_slice(&text) {
        Ok(checkpoint) => Some(checkpoint),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "backfill checkpoint damaged, ignored");
            None
        }
    }
}

/// Replaces the checkpoint in `dir` atomically.
///
/// # Errors
///
/// Any failed step; the previous checkpoint then stays as it was.
pub fn save(dir: &Path, checkpoint: &Checkpoint) -> io::Result<PathBuf> {
    let temporary = dir.join(TEMPORARY_FILE);
    let path = dir.join(CHECKPOINT_FILE);
    let bytes = serde_json::to_vec(checkpoint).map_err(io::Error::other)?;
    let written = (|| {
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&temporary)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, &path)?;
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written.map(|()| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("neardup-checkpoint-{label}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("dir");
        dir
    }

    fn sample() -> Checkpoint {
        Checkpoint {
            index: "news*".into(),
            time_field: Some("published_at".into()),
            tiebreak_field: "_id".into(),
            history_before: Some(1_000),
            after: Some(vec![Value::from(1_500), Value::from("doc-7")]),
            after_time: Some(1_500),
            counts: Counts {
                seen: 7,
                stamped: 5,
                stamped_history: 2,
                already_stamped: 1,
                skipped_conflict: 1,
                ..Counts::default()
            },
            finished: false,
            started: 42,
        }
    }

    #[test]
    fn a_saved_checkpoint_reads_back_identical() {
        let dir = directory("roundtrip");
        save(&dir, &sample()).expect("save");
        assert_eq!(load(&dir), Some(sample()));
        let mut later = sample();
        later.counts.seen = 9;
        save(&dir, &later).expect("save again");
        assert_eq!(load(&dir), Some(later));
        assert!(!dir.join(TEMPORARY_FILE).exists());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_missing_or_damaged_checkpoint_means_start_over() {
        let dir = directory("damaged");
        assert_eq!(load(&dir), None);
        fs::write(dir.join(CHECKPOINT_FILE), b"{\"index\":").expect("write");
        assert_eq!(load(&dir), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_temporary_name_escapes_the_stores_sweep() {
        assert!(!TEMPORARY_FILE.ends_with(".tmp"));
    }

    #[test]
    fn a_job_is_identified_by_its_index_and_fields() {
        let checkpoint = sample();
        assert!(checkpoint.same_job("news*", Some("published_at"), "_id"));
        assert!(!checkpoint.same_job("news*", None, "_id"));
        assert!(!checkpoint.same_job("blogs", Some("published_at"), "_id"));
    }
}
