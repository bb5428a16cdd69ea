//! The state directory: lock, log segments, snapshots, recovery. See the
//! module documentation of [`crate::persist`].

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::codec::{self, Decoder, Encoder, Frame};
pub use super::fsync::FsyncPolicy;
pub use super::snapshot::{SNAPSHOT_FORMAT_VERSION, SnapshotState, read_snapshot};
use crate::forest::ForestError;
use crate::ledger::{Effect, Ledger};

pub mod snapshots;

const LOG_MAGIC: &[u8; 16] = b"NEARDUP\0LOG\0\0\0\0\0";
/// Version of the log format; a reader refuses newer ones. Version 2
/// writes long texts with their identifying weight (side record tag 2),
/// version 3 side records in their compact layout (short-text tag 3,
/// long-text tag 4), version 4 with their letters coded (tags 5 and 6).
pub const FORMAT_VERSION: u32 = 4;
const LOG_HEADER_LEN: usize = 16 + 4 + 8;

/// Where and how state is kept.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub dir: PathBuf,
    pub fsync: FsyncPolicy,
    /// A snapshot is due once the log since the last one is this large (or
    /// larger than that snapshot).
    pub snapshot_after_log_bytes: u64,
    /// Written into snapshots; a different value at recovery is reported
    /// (stamps made under other fingerprint settings will not match).
    pub settings_digest: String,
}

/// What recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// The snapshot loaded (its last sequence number), if any.
    pub snapshot_seq: Option<u64>,
    /// Snapshots that could not be read (path and reason).
    pub unreadable_snapshots: Vec<String>,
    pub replayed_effects: u64,
    /// Where the log was cut (path, offset, reason), if it was.
    pub cut: Option<String>,
    /// Bytes dropped by the cut.
    pub dropped_bytes: u64,
    /// The snapshot was made under other fingerprint settings.
    pub settings_changed: bool,
    /// Placements forwarded before the stop whose answer never came back.
    pub in_doubt: u64,
    /// Each of them, sorted: those sent to a known key stay pending and are
    /// read back as a live write in doubt is; the others were uncounted
    /// (nodes kept), and the cluster is searched for their stamps
    /// ([`crate::ledger::Ledger::resolve_in_doubt`]).
    pub in_doubt_placements: Vec<crate::ledger::InDoubt>,
    /// Time spent reading and checking the snapshot.
    pub snapshot_read: std::time::Duration,
    /// Time spent building the state from it (forest, indexes, side file).
    pub state_build: std::time::Duration,
    /// Time spent replaying the log after it.
    pub log_replay: std::time::Duration,
}

/// What a snapshot wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotReport {
    pub last_seq: u64,
    pub bytes: u64,
    pub nodes: usize,
}

/// Errors of the state directory.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state directory {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "state directory {0} is in use by another neardup process (its LOCK file is locked); stop that process first (a running sidecar backfills with POST /_neardup/backfill), or give each sidecar its own --state-dir"
    )]
    Locked(PathBuf),
    #[error("state directory {path}: {reason}")]
    Damaged { path: PathBuf, reason: String },
    /// A write failed for lack of space; the log was cut back to its last
    /// whole frame and the effects wait in memory for the next attempt.
    #[error("state directory {path}: out of space ({reason}); retrying")]
    OutOfSpace { path: PathBuf, reason: String },
}

/// Whether the state can be written now (readiness).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreHealth {
    Writable,
    /// Out of space: writes are retried (with backoff, and by the background
    /// task) and resume by themselves once space returns.
    OutOfSpace {
        reason: String,
        since: Duration,
    },
    /// An error that needs a restart (a failed fsync, an unwritable log).
    Failed {
        reason: String,
    },
}

/// A write that failed for lack of space, waiting for its retry.
struct SpaceFailure {
    reason: String,
    since: Instant,
    retry_at: Instant,
    attempts: u32,
}

/// First and longest wait before a write that ran out of space is tried again.
const SPACE_RETRY_FIRST: Duration = Duration::from_millis(100);
const SPACE_RETRY_LONGEST: Duration = Duration::from_secs(2);

/// ENOSPC, EFBIG (a file-size limit) and EDQUOT: conditions that pass when
/// an operator frees space, unlike a failing disk.
pub fn is_out_of_space(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::FileTooLarge | io::ErrorKind::QuotaExceeded
    ) || matches!(error.raw_os_error(), Some(27 | 28 | 122))
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

struct Pending {
    frames: Vec<u8>,
    last_seq: u64,
}

struct Segment {
    file: File,
    path: PathBuf,
    /// Written since the last fsync.
    dirty: bool,
    /// Length of the header and the whole frames written: where the file is
    /// cut back to when a write fails half-way.
    good_len: u64,
}

/// The open state directory.
pub struct Store {
    options: StoreOptions,
    _lock: File,
    pending: Mutex<Pending>,
    segment: Mutex<Segment>,
    /// Highest sequence number written to the segment file.
    written_seq: AtomicU64,
    log_bytes: AtomicU64,
    last_snapshot_bytes: AtomicU64,
    failed: AtomicBool,
    /// Why `failed` was set.
    failure: Mutex<Option<String>>,
    /// Set while writes fail for lack of space (recoverable).
    space_failure: Mutex<Option<SpaceFailure>>,
    /// The sequence number of the snapshot recovery read, if any.
    recovered_from: Option<u64>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.options.dir)
            .finish_non_exhaustive()
    }
}

/// Sequence number in a file name like `log-00000000000000000001`.
fn seq_in_name(name: &str, prefix: &str) -> Option<u64> {
    name.strip_prefix(prefix)?.parse().ok()
}

fn file_name(prefix: &str, seq: u64) -> String {
    format!("{prefix}{seq:020}")
}

/// Files of `dir` named `prefix<seq>`, sorted by seq.
fn list(dir: &Path, prefix: &str) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error(dir))? {
        let entry = entry.map_err(io_error(dir))?;
        if let Some(seq) = entry
            .file_name()
            .to_str()
            .and_then(|name| seq_in_name(name, prefix))
        {
            found.push((seq, entry.path()));
        }
    }
    found.sort();
    Ok(found)
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|handle| handle.sync_all())
        .map_err(io_error(dir))
}

impl Store {
    /// Opens (creating if needed) and locks the state directory, recovers
    /// the ledger with `build` (given the snapshot, if any) and the log, and
    /// starts a new log segment. A snapshot `build` finds damaged
    /// ([`ForestError::Damaged`]) is passed over for the next older one, as
    /// one that does not read is.
    ///
    /// # Errors
    ///
    /// An unwritable or locked directory, a damaged snapshot with no usable
    /// fallback, or what `build` returns.
    pub fn open(
        options: StoreOptions,
        build: impl FnMut(Option<SnapshotState>) -> anyhow::Result<Ledger>,
    ) -> anyhow::Result<(Store, Ledger, RecoveryReport)> {
        Store::open_with(options, build, true)
    }

    /// [`Store::open`]; placements in doubt are resolved (taken back, the
    /// resolution logged) only when `resolve_in_doubt`. A member of a
    /// replica group keeps them pending: the group's chain settles them,
    /// and its log must hold the chain's effects only.
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    pub fn open_with(
        options: StoreOptions,
        mut build: impl FnMut(Option<SnapshotState>) -> anyhow::Result<Ledger>,
        resolve_in_doubt: bool,
    ) -> anyhow::Result<(Store, Ledger, RecoveryReport)> {
        let dir = options.dir.clone();
        if dir.exists() && !dir.is_dir() {
            anyhow::bail!(
                "state directory {} is a file, not a directory: give --state-dir a directory (or `none`)",
                dir.display()
            );
        }
        fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        let lock_path = dir.join("LOCK");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_error(&lock_path))?;
        match lock_within(&lock, LOCK_PATIENCE) {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => return Err(StoreError::Locked(dir).into()),
            Err(fs::TryLockError::Error(source)) => {
                return Err(StoreError::Io {
                    path: lock_path,
                    source,
                }
                .into());
            }
        }
        let mut report = RecoveryReport::default();
        let snapshots = list(&dir, "snapshot-")?;
        let mut older = snapshots.iter().rev();
        // The newest snapshot that reads and builds: recovery checks the
        // side records' checksums as it builds (see `read_snapshot`), so a
        // damaged one may show only then.
        let mut ledger = loop {
            let started = std::time::Instant::now();
            let (path, snapshot) = read_next_snapshot(&mut older, &mut report);
            report.snapshot_read += started.elapsed();
            report.snapshot_seq = snapshot.as_ref().map(|snapshot| snapshot.last_seq);
            report.settings_changed = snapshot
                .as_ref()
                .is_some_and(|snapshot| snapshot.settings_digest != options.settings_digest);
            let started = std::time::Instant::now();
            let built = build(snapshot);
            report.state_build += started.elapsed();
            match (built, path) {
                (Ok(ledger), _) => break ledger,
                (Err(error), Some(path)) if is_damage(&error) => report
                    .unreadable_snapshots
                    .push(format!("{}: {error:#}", path.display())),
                (Err(error), _) => return Err(error),
            }
        };
        let after_seq = report.snapshot_seq.unwrap_or(0);
        let snapshot_bytes = report
            .snapshot_seq
            .and_then(|seq| fs::metadata(dir.join(file_name("snapshot-", seq))).ok())
            .map_or(0, |metadata| metadata.len());
        let started = std::time::Instant::now();
        let last_seq = replay_log(&dir, after_seq, &mut ledger, &mut report)?;
        report.log_replay = started.elapsed();
        ledger.enable_journal();
        if resolve_in_doubt {
            report.in_doubt_placements = ledger.resolve_in_doubt();
        }
        report.in_doubt = report.in_doubt_placements.len() as u64;
        let segment = create_segment(&dir, last_seq + 1)?;
        let store = Store {
            options,
            _lock: lock,
            pending: Mutex::new(Pending {
                frames: Vec::new(),
                last_seq,
            }),
            segment: Mutex::new(segment),
            written_seq: AtomicU64::new(last_seq),
            log_bytes: AtomicU64::new(0),
            last_snapshot_bytes: AtomicU64::new(snapshot_bytes),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            space_failure: Mutex::new(None),
            recovered_from: report.snapshot_seq,
        };
        let resolution = store.append(ledger.take_journal());
        store.sync(resolution)?;
        store.flush()?;
        crate::allocator::give_back_freed_heap();
        Ok((store, ledger, report))
    }

    pub fn dir(&self) -> &Path {
        &self.options.dir
    }

    /// The sequence number of the last effect appended.
    pub fn last_seq(&self) -> u64 {
        self.pending.lock().last_seq
    }

    /// Where the snapshot holding effects up to `last_seq` is (or would be)
    /// written in `dir`.
    pub fn snapshot_path(dir: &Path, last_seq: u64) -> PathBuf {
        dir.join(file_name("snapshot-", last_seq))
    }

    /// Encodes `effects` as the next log frames (not yet written). Call with
    /// the ledger locked, so the log keeps the ledger's order. Returns the
    /// sequence number to [`Store::sync`] to.
    pub fn append(&self, effects: Vec<Effect>) -> u64 {
        let mut pending = self.pending.lock();
        for effect in &effects {
            pending.last_seq += 1;
            let mut encoder = Encoder::default();
            encoder.u64(pending.last_seq);
            codec::put_effect(&mut encoder, effect);
            codec::put_frame(&mut pending.frames, &encoder.bytes);
        }
        pending.last_seq
    }

    /// Makes everything up to `seq` written (and, under
    /// [`FsyncPolicy::EveryRequest`], on disk). Concurrent callers share one
    /// write and one fsync. Blocking.
    ///
    /// # Errors
    ///
    /// A failed write or fsync; the store then refuses further syncs (the
    /// log could have a hole), so the sidecar answers errors instead of
    /// acknowledging what it cannot keep. A write that failed for lack of
    /// space is the exception: the file is cut back to its last whole frame,
    /// the frames go back in front of the pending ones, and a later call
    /// (after a backoff) writes them again, so each effect is logged once.
    pub fn sync(&self, seq: u64) -> Result<(), StoreError> {
        if self.written_seq.load(Ordering::Acquire) >= seq
            && self.options.fsync != FsyncPolicy::EveryRequest
        {
            return Ok(());
        }
        let mut segment = self.segment.lock();
        self.check_failed(&segment.path)?;
        if self.written_seq.load(Ordering::Acquire) < seq {
            self.write_pending(&mut segment)?;
        }
        if self.options.fsync == FsyncPolicy::EveryRequest && segment.dirty {
            if let Err(source) = segment.file.sync_data() {
                return Err(self.fail(&segment.path, source));
            }
            segment.dirty = false;
        }
        Ok(())
    }

    /// Writes the frames appended so far to `segment` (locked by the
    /// caller); the last sequence number written.
    fn write_pending(&self, segment: &mut Segment) -> Result<u64, StoreError> {
        self.check_space_backoff(&segment.path)?;
        let (frames, last_seq) = {
            let mut pending = self.pending.lock();
            (std::mem::take(&mut pending.frames), pending.last_seq)
        };
        if frames.is_empty() {
            return Ok(last_seq);
        }
        if let Err(source) = segment.file.write_all(&frames) {
            return Err(self.write_failed(segment, frames, source));
        }
        segment.good_len += frames.len() as u64;
        self.space_recovered();
        segment.dirty = true;
        self.log_bytes
            .fetch_add(frames.len() as u64, Ordering::Relaxed);
        self.written_seq.store(last_seq, Ordering::Release);
        Ok(last_seq)
    }

    /// Writes and fsyncs whatever is pending (interval policy, shutdown).
    pub fn flush(&self) -> Result<(), StoreError> {
        let last_seq = self.pending.lock().last_seq;
        self.sync(last_seq)?;
        let mut segment = self.segment.lock();
        if segment.dirty && self.options.fsync != FsyncPolicy::Never {
            if let Err(source) = segment.file.sync_data() {
                return Err(self.fail(&segment.path, source));
            }
            segment.dirty = false;
        }
        Ok(())
    }

    fn check_failed(&self, path: &Path) -> Result<(), StoreError> {
        if self.failed.load(Ordering::Acquire) {
            return Err(StoreError::Damaged {
                path: path.to_path_buf(),
                reason: "an earlier write failed; restart to recover".to_string(),
            });
        }
        Ok(())
    }

    fn fail(&self, path: &Path, source: io::Error) -> StoreError {
        self.failed.store(true, Ordering::Release);
        *self.failure.lock() = Some(format!("{}: {source}", path.display()));
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// While out of space, refuses at once until the next retry is due.
    fn check_space_backoff(&self, path: &Path) -> Result<(), StoreError> {
        match &*self.space_failure.lock() {
            Some(failure) if Instant::now() < failure.retry_at => Err(StoreError::OutOfSpace {
                path: path.to_path_buf(),
                reason: failure.reason.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// A write of `frames` failed with `source`. Out of space: cut the file
    /// back to its last whole frame, keep the frames for the next attempt
    /// and back off. Anything else, or a failed cut: the permanent latch.
    fn write_failed(
        &self,
        segment: &mut Segment,
        frames: Vec<u8>,
        source: io::Error,
    ) -> StoreError {
        if !is_out_of_space(&source) {
            return self.fail(&segment.path, source);
        }
        let good_len = segment.good_len;
        let cut = segment
            .file
            .set_len(good_len)
            .and_then(|()| segment.file.seek(SeekFrom::Start(good_len)).map(|_| ()));
        if let Err(cut_error) = cut {
            return self.fail(&segment.path, cut_error);
        }
        {
            let mut pending = self.pending.lock();
            let mut restored = frames;
            restored.extend_from_slice(&pending.frames);
            pending.frames = restored;
        }
        let now = Instant::now();
        let mut space_failure = self.space_failure.lock();
        let attempts = space_failure.as_ref().map_or(0, |failure| failure.attempts) + 1;
        let wait = SPACE_RETRY_FIRST
            .saturating_mul(1 << attempts.min(8))
            .min(SPACE_RETRY_LONGEST);
        let since = space_failure.as_ref().map_or(now, |failure| failure.since);
        *space_failure = Some(SpaceFailure {
            reason: source.to_string(),
            since,
            retry_at: now + wait,
            attempts,
        });
        StoreError::OutOfSpace {
            path: segment.path.clone(),
            reason: source.to_string(),
        }
    }

    fn space_recovered(&self) {
        if let Some(failure) = self.space_failure.lock().take() {
            tracing::warn!(
                attempts = failure.attempts,
                out_of_space_ms = failure.since.elapsed().as_millis() as u64,
                "state log writable again"
            );
        }
    }

    /// Whether the state can be written now (for readiness).
    pub fn health(&self) -> StoreHealth {
        if self.failed.load(Ordering::Acquire) {
            return StoreHealth::Failed {
                reason: self
                    .failure
                    .lock()
                    .clone()
                    .unwrap_or_else(|| "an earlier write failed".to_string()),
            };
        }
        match &*self.space_failure.lock() {
            Some(failure) => StoreHealth::OutOfSpace {
                reason: failure.reason.clone(),
                since: failure.since.elapsed(),
            },
            None => StoreHealth::Writable,
        }
    }

    /// Whether the log has grown enough since the last snapshot.
    pub fn snapshot_due(&self) -> bool {
        let log = self.log_bytes.load(Ordering::Relaxed);
        log >= self
            .options
            .snapshot_after_log_bytes
            .max(self.last_snapshot_bytes.load(Ordering::Relaxed))
    }
}

fn create_segment(dir: &Path, first_seq: u64) -> Result<Segment, StoreError> {
    let path = dir.join(file_name("log-", first_seq));
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)
        .map_err(io_error(&path))?;
    let mut header = Vec::with_capacity(LOG_HEADER_LEN);
    header.extend_from_slice(LOG_MAGIC);
    header.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&first_seq.to_le_bytes());
    if let Err(source) = file.write_all(&header).and_then(|()| file.sync_all()) {
        // A header-less segment before later ones would stop recovery.
        let _ = fs::remove_file(&path);
        return Err(io_error(&path)(source));
    }
    sync_dir(dir)?;
    Ok(Segment {
        file,
        path,
        dirty: false,
        good_len: LOG_HEADER_LEN as u64,
    })
}

/// Replays every segment's effects after `after_seq` into `ledger`; cuts
/// the log at the first damaged frame. Returns the last sequence number.
fn replay_log(
    dir: &Path,
    after_seq: u64,
    ledger: &mut Ledger,
    report: &mut RecoveryReport,
) -> Result<u64, StoreError> {
    let segments = list(dir, "log-")?;
    let mut last_seq = after_seq;
    let mut cut_here: Option<usize> = None;
    for (position, (_, path)) in segments.iter().enumerate() {
        let data = fs::read(path).map_err(io_error(path))?;
        // Earlier versions' logs are read as they are (see FORMAT_VERSION).
        let header_ok = data.len() >= LOG_HEADER_LEN
            && &data[..16] == LOG_MAGIC
            && data[16..20]
                .try_into()
                .map(u32::from_le_bytes)
                .is_ok_and(|version| (1..=FORMAT_VERSION).contains(&version));
        if !header_ok {
            if data.len() < LOG_HEADER_LEN && position + 1 == segments.len() {
                // Created but its header never reached the disk.
                let _ = fs::remove_file(path);
                continue;
            }
            return Err(StoreError::Damaged {
                path: path.clone(),
                reason: "not a neardup log of a known version".to_string(),
            });
        }
        let mut offset = LOG_HEADER_LEN;
        loop {
            match codec::read_frame(&data, offset) {
                Frame::End => break,
                Frame::Valid(payload, next) => {
                    let mut decoder = Decoder::new(payload);
                    let decoded = decoder.u64().and_then(|seq| {
                        codec::get_effect(&mut decoder).map(|effect| (seq, effect))
                    });
                    let Ok((seq, effect)) = decoded else {
                        cut(path, offset, data.len(), "undecodable record", report)?;
                        cut_here = Some(position);
                        break;
                    };
                    if seq > after_seq {
                        if seq != last_seq + 1 {
                            cut(path, offset, data.len(), "gap in sequence numbers", report)?;
                            cut_here = Some(position);
                            break;
                        }
                        ledger.replay(effect);
                        report.replayed_effects += 1;
                        last_seq = seq;
                    }
                    offset = next;
                }
                Frame::Damaged(reason) => {
                    cut(path, offset, data.len(), reason, report)?;
                    cut_here = Some(position);
                    break;
                }
            }
        }
        if cut_here.is_some() {
            break;
        }
    }
    if let Some(position) = cut_here {
        for (_, later) in &segments[position + 1..] {
            report.dropped_bytes += fs::metadata(later).map_or(0, |metadata| metadata.len());
            fs::remove_file(later).map_err(io_error(later))?;
        }
        sync_dir(dir)?;
    }
    Ok(last_seq)
}

fn cut(
    path: &Path,
    offset: usize,
    length: usize,
    reason: &str,
    report: &mut RecoveryReport,
) -> Result<(), StoreError> {
    report.cut = Some(format!("{} at byte {offset}: {reason}", path.display()));
    report.dropped_bytes += (length - offset) as u64;
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_error(path))?;
    file.set_len(offset as u64)
        .and_then(|()| file.sync_all())
        .map_err(io_error(path))
}

/// The newest snapshot that reads back whole; damaged ones are reported.
/// The next snapshot of `older` (newest first) that reads, with its path;
/// those that do not read are noted in `report`. `(None, None)` when none
/// is left.
fn read_next_snapshot<'a>(
    older: &mut impl Iterator<Item = &'a (u64, PathBuf)>,
    report: &mut RecoveryReport,
) -> (Option<&'a Path>, Option<SnapshotState>) {
    for (_, path) in older {
        match read_snapshot(path) {
            Ok(snapshot) => return (Some(path), Some(snapshot)),
            Err(reason) => report
                .unreadable_snapshots
                .push(format!("{}: {reason}", path.display())),
        }
    }
    (None, None)
}

/// Whether building the state failed because the snapshot is damaged (an
/// older one may serve).
fn is_damage(error: &anyhow::Error) -> bool {
    matches!(
        error.downcast_ref::<ForestError>(),
        Some(ForestError::Damaged(_))
    )
}

/// How long [`Store::open`] waits for the state directory's lock before
/// it says another process holds it.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(250);

/// Takes `lock`'s file lock, trying again for up to `patience`. A lock
/// just given back can still be held for a moment by a child process of
/// this one: a child starting (between `fork` and `exec`) holds a copy of
/// every open file, the lock file's too, until its program starts. A
/// store reopened in a process that starts others (a test binary, a
/// sidecar that restarts its store) met that as "in use by another
/// process".
fn lock_within(lock: &fs::File, patience: std::time::Duration) -> Result<(), fs::TryLockError> {
    let started = std::time::Instant::now();
    loop {
        match lock.try_lock() {
            Err(fs::TryLockError::WouldBlock) if started.elapsed() < patience => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            outcome => return outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_sort_by_sequence() {
        assert_eq!(file_name("log-", 12), "log-00000000000000000012");
        assert_eq!(seq_in_name("log-00000000000000000012", "log-"), Some(12));
        assert_eq!(seq_in_name("log-x", "log-"), None);
    }

    /// A lock given back within the patience is taken; one held longer is
    /// still refused.
    #[test]
    fn a_lock_given_back_soon_is_waited_for() {
        let path = std::env::temp_dir().join(format!("neardup-lock-test-{}", std::process::id()));
        let open = || {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .expect("lock file")
        };
        let (holder, waiter) = (open(), open());
        holder.try_lock().expect("first lock");
        let short = std::time::Duration::from_millis(20);
        assert!(matches!(
            lock_within(&waiter, short),
            Err(fs::TryLockError::WouldBlock)
        ));
        let giving_back = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(holder);
        });
        assert!(lock_within(&waiter, std::time::Duration::from_secs(5)).is_ok());
        giving_back.join().expect("thread");
        drop(waiter);
        let _ = fs::remove_file(&path);
    }
}
