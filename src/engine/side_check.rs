//! The side records recovery adopts without reading them, checked against
//! their checksums after recovery, on a thread of their own.
//!
//! Motivation: at 100 M nodes a snapshot's side records are 27 GB of its
//! 37, more than the page cache beside the engine, and recovery read them
//! all from the disk to check each frame, give each record its node, and
//! list its exact hashes: most of a recovery of 90 s. Since version 10 a
//! snapshot follows each frame of records with its index (each record's
//! length, its node's position and its exact hashes), which is all
//! recovery needs of a record; the records are adopted where they are in
//! the mapped snapshot.
//!
//! Design: recovery reads the indexes ([`read_index`]) and hands the
//! records' checksums to a [`SideRecordsCheck`], which reads each frame
//! once (`pread`, then dropped from the page cache) and compares, in the
//! idle I/O class so that placements' reads go first. The engine serves
//! meanwhile. A snapshot waits for the check: it copies the
//! records, and must not copy damage into a new snapshot that would then
//! pass for sound.
//!
//! Consequences: damage in the side records is found within a minute of
//! recovery instead of during it; until then a candidate's damaged record
//! may be read (decoding never panics: a record that does not decode is
//! no match). Damage found stops snapshots (the check's outcome says why),
//! and the sidecar sets the snapshot aside and exits, so that its restart
//! recovers from the snapshot before (`crate::serve`), as recovery does
//! when it finds damage itself. See `docs/decisions.md`.

use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::side_file::MappedFile;
use crate::encoding::Decoder;
use crate::units::NodeId;

/// A checksum a block of side records is still to be checked against:
/// the checksum of `payload` (a range of the mapped file holding the
/// block) must be `expected`.
///
/// Motivation: a snapshot's side records are most of it (24 GB of 28 at
/// 100 M nodes, more than the page cache beside the engine), so a reader
/// that checked them up front read them from disk once for the check and
/// again for recovery. Recovery checks each block in its one pass, just
/// before it uses the block.
#[derive(Debug, Clone)]
pub struct SidesCheck {
    pub payload: std::ops::Range<usize>,
    pub expected: u32,
    /// The snapshot format's checksum.
    pub checksum: fn(&[u8]) -> u32,
}

impl SidesCheck {
    pub(super) fn holds(&self, file: &MappedFile) -> bool {
        file.bytes()
            .get(self.payload.clone())
            .is_some_and(|payload| self.holds_for(payload))
    }

    /// Reads [`Self::payload`] of `file` once into `buffer`
    /// ([`MappedFile::read_once`]): whether it checks out.
    ///
    /// # Errors
    ///
    /// The range is not in the file, or reading it failed.
    pub(super) fn read_checked(
        &self,
        file: &MappedFile,
        buffer: &mut Vec<u8>,
    ) -> std::io::Result<bool> {
        file.read_once(self.payload.clone(), buffer)?;
        Ok(self.holds_for(buffer))
    }

    /// Whether `payload` (the bytes of [`Self::payload`], read) checks out.
    pub(super) fn holds_for(&self, payload: &[u8]) -> bool {
        (self.checksum)(payload) == self.expected
    }
}

/// A frame of side records adopted unread: its file and its checksum.
#[derive(Debug, Clone)]
pub(super) struct DeferredCheck {
    pub(super) file: MappedFile,
    pub(super) check: SidesCheck,
}

/// Where the check of the adopted side records stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideRecordsState {
    /// Frames are still being read.
    Checking,
    /// Every frame holds its checksum (or none was adopted unread).
    Sound,
    /// A frame fails its checksum or cannot be read: why.
    Damaged(String),
}

/// The check of the side records recovery adopted unread (shared: the
/// engine keeps one, the snapshot writer waits on it).
#[derive(Debug, Clone)]
pub struct SideRecordsCheck {
    shared: Arc<(Mutex<SideRecordsState>, Condvar)>,
}

impl Default for SideRecordsCheck {
    fn default() -> Self {
        SideRecordsCheck::settled(SideRecordsState::Sound)
    }
}

impl SideRecordsCheck {
    fn settled(state: SideRecordsState) -> Self {
        SideRecordsCheck {
            shared: Arc::new((Mutex::new(state), Condvar::new())),
        }
    }

    /// Starts checking `frames` in order on a thread of its own; sound at
    /// once when there are none.
    pub(super) fn start(frames: Vec<DeferredCheck>) -> Self {
        if frames.is_empty() {
            return SideRecordsCheck::default();
        }
        let check = SideRecordsCheck::settled(SideRecordsState::Checking);
        let shared = Arc::clone(&check.shared);
        let spawned = std::thread::Builder::new()
            .name("side-records-check".to_string())
            .spawn(move || {
                yield_the_disk();
                let outcome = check_frames(&frames);
                drop(frames);
                let (state, settled) = &*shared;
                *state.lock() = outcome;
                settled.notify_all();
            });
        if let Err(error) = spawned {
            return SideRecordsCheck::settled(SideRecordsState::Damaged(format!(
                "cannot start the check of the side records: {error}"
            )));
        }
        check
    }

    pub fn state(&self) -> SideRecordsState {
        self.shared.0.lock().clone()
    }

    /// Waits until the check is done: `Err` with the damage it found.
    ///
    /// # Errors
    ///
    /// A frame fails its checksum or cannot be read.
    pub fn wait(&self) -> Result<(), String> {
        let (state, settled) = &*self.shared;
        let mut state = state.lock();
        while *state == SideRecordsState::Checking {
            settled.wait(&mut state);
        }
        match &*state {
            SideRecordsState::Damaged(reason) => Err(reason.clone()),
            _ => Ok(()),
        }
    }
}

/// `ioprio_set`'s constants (linux/ioprio.h): the idle class, where a
/// priority's class sits, and "one thread (or process)".
const IOPRIO_CLASS_IDLE: libc::c_long = 3;
const IOPRIO_CLASS_SHIFT: libc::c_long = 13;
const IOPRIO_WHO_PROCESS: libc::c_long = 1;

/// Puts this thread's reads in the idle I/O class: the device serves them
/// when placements' own reads (a candidate's record, a page fault) do not
/// wait. The check reads tens of gigabytes in megabytes at a time, and
/// a placement's one page queued behind them waited 11–13 ms at p99
/// (`docs/performance.md`, twenty-seventh part); in the idle class, 6 ms.
/// Schedulers that keep no classes (`none`) ignore it; an error changes
/// only the order of reads.
fn yield_the_disk() {
    // SAFETY: `ioprio_set` on the calling thread (who 0) changes only the
    // class its reads are queued in.
    unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
        );
    }
}

/// Reads each frame once, the next one asked for ahead, and compares it
/// with its checksum: the first damage found, or sound.
fn check_frames(frames: &[DeferredCheck]) -> SideRecordsState {
    let mut buffer = Vec::new();
    if let Some(first) = frames.first() {
        first.file.read_ahead(first.check.payload.clone());
    }
    for (position, frame) in frames.iter().enumerate() {
        let checked = frame.check.read_checked(&frame.file, &mut buffer);
        if let Some(next) = frames.get(position + 1) {
            next.file.read_ahead(next.check.payload.clone());
        }
        let reason = match checked {
            Err(error) => format!("cannot read them: {error}"),
            Ok(false) => "they fail their checksum".to_string(),
            Ok(true) => continue,
        };
        return SideRecordsState::Damaged(format!(
            "the side records at bytes {}..{} of the snapshot recovered from: {reason}",
            frame.check.payload.start, frame.check.payload.end
        ));
    }
    SideRecordsState::Sound
}

/// What a frame's index gives recovery: each record's offset in the
/// frame (of its length, as [`super::side_file::record_offsets`] gives
/// them) and its node's number (`None` past the `nodes` there are).
pub(super) struct FrameIndex {
    pub(super) offsets: Vec<u32>,
    pub(super) ids: Vec<Option<NodeId>>,
}

/// Reads an index frame's payload (after its kind and count) for a frame
/// of `records` records taking `frame_bytes`, handing each numbered
/// record's exact hashes to `listed`; `None` when it does not read or
/// does not match the frame.
pub(super) fn read_index(
    index: &[u8],
    records: usize,
    frame_bytes: usize,
    nodes: usize,
    mut listed: impl FnMut(u64, NodeId),
) -> Option<FrameIndex> {
    let mut decoder = Decoder::new(index);
    let mut offsets = Vec::with_capacity(records);
    let mut ids = Vec::with_capacity(records);
    let mut exact_hashes = Vec::new();
    let mut offset = 0usize;
    for _ in 0..records {
        let length = decoder.u32().ok()? as usize;
        let position = decoder.u32().ok()?;
        decoder.u64s_into(&mut exact_hashes).ok()?;
        offsets.push(u32::try_from(offset).ok()?);
        offset = offset.checked_add(4)?.checked_add(length)?;
        let id = Some(position)
            .filter(|&position| (position as usize) < nodes)
            .and_then(|position| NodeId::try_from(position).ok());
        if let Some(id) = id {
            for &exact_hash in &exact_hashes {
                listed(exact_hash, id);
            }
        }
        ids.push(id);
    }
    (offset == frame_bytes && decoder.position() == index.len())
        .then_some(FrameIndex { offsets, ids })
}

#[cfg(test)]
mod tests {
    use super::{IOPRIO_CLASS_IDLE, IOPRIO_CLASS_SHIFT, IOPRIO_WHO_PROCESS};

    #[test]
    fn the_check_reads_in_the_idle_io_class() {
        let class = std::thread::spawn(|| {
            super::yield_the_disk();
            // SAFETY: `ioprio_get` of the calling thread reads its class.
            let value = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
            value >> IOPRIO_CLASS_SHIFT
        })
        .join()
        .expect("thread");
        assert_eq!(class, IOPRIO_CLASS_IDLE, "the idle class");
    }
}
