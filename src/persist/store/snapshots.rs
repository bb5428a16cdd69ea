//! Snapshots of the state directory: begun with writes locked out for an
//! instant, the ledger's state captured while writes go on
//! ([`crate::ledger::capture`]), written without any lock. See the module
//! documentation of [`crate::persist`].

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::super::snapshot::write_snapshot;
use super::{
    FsyncPolicy, SnapshotReport, Store, StoreError, create_segment, file_name, io_error, list,
    sync_dir,
};
use crate::engine::SideRecordsCheck;
use crate::ledger::Ledger;
use crate::ledger::capture::{CapturedLedger, LedgerCapture};
use crate::units::Millis;

/// Bytes a snapshot's capture copies per hold of the ledger's lock
/// ([`SnapshotCapture::copy_some`]): a few milliseconds of writes waiting.
pub const CAPTURE_SLICE_BYTES: usize = 4 << 20;

/// A snapshot begun ([`Store::begin_snapshot`]): its log position and the
/// ledger's state as of it, being copied.
#[derive(Debug)]
pub struct SnapshotCapture {
    last_seq: u64,
    capture: LedgerCapture,
}

impl SnapshotCapture {
    /// The last effect the snapshot holds.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Copies about `budget_bytes` more of the ledger
    /// ([`CAPTURE_SLICE_BYTES`] in the sidecar); `true` once all is
    /// copied. Call with the ledger shared (writes wait, readers run).
    pub fn copy_some(&self, ledger: &Ledger, budget_bytes: usize) -> bool {
        ledger.capture_some(budget_bytes)
    }

    /// Moves the slices copied so far into the capture's images (files
    /// the kernel may write out, [`crate::capture::CaptureSink`]): call
    /// after each [`Self::copy_some`], without the ledger's lock. Slices
    /// never moved wait on the heap until [`Self::take`].
    pub fn flush(&self) {
        self.capture.flush();
    }

    /// The state taken, once [`Self::copy_some`] said all is copied; to
    /// [`Store::finish_snapshot`]. Call with the ledger shared.
    ///
    /// # Errors
    ///
    /// Called before all was copied (the capture is dropped).
    pub fn take(self, ledger: &Ledger) -> Result<PendingSnapshot, StoreError> {
        let last_seq = self.last_seq;
        let captured = ledger
            .take_capture(self.capture)
            .ok_or_else(|| StoreError::Damaged {
                path: PathBuf::new(),
                reason: "snapshot taken before its capture was copied".to_string(),
            })?;
        Ok(PendingSnapshot { last_seq, captured })
    }

    /// Gives the snapshot up: writes stop keeping values for it.
    pub fn abandon(self, ledger: &Ledger) {
        ledger.stop_capture();
    }

    /// Copies all of the rest now and takes it (a caller with the ledger
    /// to itself).
    ///
    /// # Errors
    ///
    /// As [`Self::take`].
    pub fn copy_all(self, ledger: &Ledger) -> Result<PendingSnapshot, StoreError> {
        while !self.copy_some(ledger, CAPTURE_SLICE_BYTES) {
            self.flush();
        }
        self.take(ledger)
    }
}

/// A snapshot's state taken but not yet written.
#[derive(Debug)]
pub struct PendingSnapshot {
    last_seq: u64,
    captured: CapturedLedger,
}

impl Store {
    /// Writes a snapshot of `ledger` now: [`Store::begin_snapshot`],
    /// [`Store::start_segment`], the capture copied, then
    /// [`Store::finish_snapshot`] (a caller with the ledger to itself).
    ///
    /// # Errors
    ///
    /// A failed write; the old snapshot and log stay valid. Side records
    /// a recovery adopted unread that fail their check: the snapshot they
    /// came from is set aside ([`Store::set_aside_recovered_snapshot`]).
    pub fn snapshot(&self, ledger: &Ledger, now: Millis) -> Result<SnapshotReport, StoreError> {
        self.side_records_checked(&ledger.engine().side_records_check())?;
        let capture = self.begin_snapshot(ledger);
        if let Err(error) = self.start_segment() {
            capture.abandon(ledger);
            return Err(error);
        }
        self.finish_snapshot(capture.copy_all(ledger)?, now)
    }

    /// The part of a snapshot that needs writes locked out, and only an
    /// instant: the log position now names the snapshot, and the ledger's
    /// capture starts ([`crate::ledger::capture`]). Its journal must have
    /// been drained into [`Store::append`]. Then, with writes allowed
    /// again: [`Store::start_segment`], the capture copied
    /// ([`SnapshotCapture::copy_some`], a slice per hold of the shared
    /// lock) and taken, and [`Store::finish_snapshot`].
    pub fn begin_snapshot(&self, ledger: &Ledger) -> SnapshotCapture {
        SnapshotCapture {
            last_seq: self.pending.lock().last_seq,
            capture: ledger.start_capture(),
        }
    }

    /// Writes and fsyncs the log up to what was appended so far and starts
    /// a new segment after it (fsynced with its directory). Called after
    /// [`Store::begin_snapshot`], without the ledger's lock: writes go on
    /// meanwhile (a sync waits for it). The new segment may start after
    /// the snapshot's position: recovery skips what the snapshot holds,
    /// and a segment is kept while it holds anything after the older
    /// snapshot kept.
    ///
    /// # Errors
    ///
    /// A failed write of the log or of the new segment.
    pub fn start_segment(&self) -> Result<(), StoreError> {
        // Most of the log is written and synced before the segment is
        // locked, so syncs wait only for what comes after.
        self.flush()?;
        let mut segment = self.segment.lock();
        self.check_failed(&segment.path)?;
        let last_seq = self.write_pending(&mut segment)?;
        if segment.dirty && self.options.fsync != FsyncPolicy::Never {
            if let Err(source) = segment.file.sync_data() {
                return Err(self.fail(&segment.path, source));
            }
            segment.dirty = false;
        }
        *segment = create_segment(&self.options.dir, last_seq + 1)?;
        self.log_bytes.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// The rest, without any lock: sorts, writes the file (temporary file,
    /// fsync, rename, directory fsync) and deletes old generations. Until
    /// the rename the previous snapshot and the log after it stay complete.
    ///
    /// # Errors
    ///
    /// A failed write; the old snapshot and log stay valid.
    pub fn finish_snapshot(
        &self,
        pending: PendingSnapshot,
        now: Millis,
    ) -> Result<SnapshotReport, StoreError> {
        let PendingSnapshot { last_seq, captured } = pending;
        let image = captured.into_image();
        let dir = &self.options.dir;
        let final_path = dir.join(file_name("snapshot-", last_seq));
        let temporary = dir.join(format!("{}.tmp", file_name("snapshot-", last_seq)));
        let nodes = image.node_count();
        let bytes = match write_snapshot(
            &temporary,
            &image,
            last_seq,
            now,
            &self.options.settings_digest,
        ) {
            Ok(bytes) => bytes,
            Err(source) => {
                // Out of space, a half-written file would keep the space.
                let _ = fs::remove_file(&temporary);
                return Err(io_error(&temporary)(source));
            }
        };
        fs::rename(&temporary, &final_path).map_err(io_error(&final_path))?;
        sync_dir(dir)?;
        self.last_snapshot_bytes.store(bytes, Ordering::Relaxed);
        self.delete_old_generations(last_seq)?;
        Ok(SnapshotReport {
            last_seq,
            bytes,
            nodes,
        })
    }

    /// Waits for `check` of the side records a recovery adopted unread:
    /// a snapshot copies them only once they are checked. Damaged, the
    /// snapshot they came from is set aside, so that the next start
    /// recovers from the one before.
    ///
    /// # Errors
    ///
    /// The damage, with what became of the snapshot.
    pub fn side_records_checked(&self, check: &SideRecordsCheck) -> Result<(), StoreError> {
        let Err(reason) = check.wait() else {
            return Ok(());
        };
        let aside = match self.set_aside_recovered_snapshot() {
            Ok(Some(aside)) => format!("set aside as {}", aside.display()),
            Ok(None) => "no snapshot to set aside".to_string(),
            Err(error) => format!("it could not be set aside: {error}"),
        };
        Err(StoreError::Damaged {
            path: self.options.dir.clone(),
            reason: format!("{reason}; {aside}: the next start recovers from the snapshot before"),
        })
    }

    /// Sets aside the snapshot recovery read, found damaged after recovery
    /// (its side records, `crate::engine::SideRecordsCheck`): renamed with
    /// `.damaged` after its name, which no start reads, so that the next
    /// one recovers from the snapshot before and the log after it (kept:
    /// no snapshot is written while the check has not passed). The new
    /// path; `None` when recovery read none.
    ///
    /// # Errors
    ///
    /// The rename failed.
    pub fn set_aside_recovered_snapshot(&self) -> Result<Option<PathBuf>, StoreError> {
        let Some(seq) = self.recovered_from else {
            return Ok(None);
        };
        let dir = &self.options.dir;
        let path = Store::snapshot_path(dir, seq);
        let aside = dir.join(format!("{}.damaged", file_name("snapshot-", seq)));
        if !path.exists() && aside.exists() {
            return Ok(Some(aside));
        }
        fs::rename(&path, &aside).map_err(io_error(&path))?;
        sync_dir(dir)?;
        Ok(Some(aside))
    }

    /// Keeps the newest snapshot and the one before it, and the segments
    /// needed after that previous one.
    fn delete_old_generations(&self, newest: u64) -> Result<(), StoreError> {
        let dir = &self.options.dir;
        let snapshots = list(dir, "snapshot-")?;
        let previous = snapshots
            .iter()
            .map(|(seq, _)| *seq)
            .filter(|&seq| seq < newest)
            .max()
            .unwrap_or(0);
        for (seq, path) in &snapshots {
            if *seq < previous {
                fs::remove_file(path).map_err(io_error(path))?;
            }
        }
        let segments = list(dir, "log-")?;
        for (position, (_, path)) in segments.iter().enumerate() {
            // A segment is needed if it may hold effects after `previous`:
            // the next segment starts after `previous + 1` (or there is none).
            let needed = segments
                .get(position + 1)
                .is_none_or(|(next_first, _)| *next_first > previous + 1);
            if !needed {
                fs::remove_file(path).map_err(io_error(path))?;
            }
        }
        for entry in fs::read_dir(dir).map_err(io_error(dir))?.flatten() {
            if entry.file_name().to_string_lossy().ends_with(".tmp") {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}
