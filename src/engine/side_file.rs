//! Off-heap storage of the nodes' side records: append-only segments,
//! memory-mapped.
//!
//! Motivation: what confirmation reads of a node (bigrams, letters, sketch,
//! lead) was most of a node's memory (746 of ~1 200 bytes at 500 k nodes),
//! and it is read only when the node is a candidate. In a memory-mapped
//! file it costs page cache, which the OS fills with what is read (recent
//! stories) and takes back under pressure, instead of anonymous memory.
//!
//! Design: records are appended to segments, each a file created in the
//! configured directory and unlinked at once, so nothing is left behind
//! after a crash (persistence keeps its own copy of every record in its
//! log and snapshots; this file is a cache of the heap, not state). A
//! record is found by a [`SideLocation`] (segment, offset): 5 bytes in
//! RAM. Records never change once written; a record that is no longer
//! needed is released, and a segment whose records are all released is
//! unmapped, which gives its disk space back (and its id to the next
//! segment). A new segment is a quarter of the live bytes, rounded up to
//! a power of two, from [`FIRST_SEGMENT_BYTES`] (tests create many small
//! engines) up to [`MAX_SEGMENT_BYTES`]. A segment's space is reserved with
//! `posix_fallocate` before it is mapped, so a full disk shows when a
//! segment is created (that segment then lives in anonymous memory, counted
//! in [`SideFileStats::anonymous_segments`]), never as a fault on a write.
//! A segment's file is mapped with random-read advice: a record read from
//! disk costs its page, not the kernel's read-around (the device's
//! readahead, megabytes); a snapshot's pass over the records asks for
//! read-ahead while it runs ([`SideFileReader::read_in_order`]; the files are made in
//! [`super::segment_files`]).
//!
//! Compaction: under a stream with expiry almost every record of a
//! segment is released within the retention, but a node of a class that
//! lives for weeks keeps its record, and without more its whole segment,
//! where it was written: the file grew by a segment after another (issue
//! 49: 17 → 579 MiB in a 330 s soak at a flat 67 k nodes). So once the
//! released bytes in full segments pass half the live bytes (and
//! [`MIN_GARBAGE_BYTES`]), a round starts ([`SideFile::start_compaction`]):
//! every full segment at most a third live (or if none, two thirds) is to
//! be emptied, and its
//! records are copied to the current segment one at a time
//! ([`SideFile::relocate`]) by the owner of the locations, which walks its
//! table of locations in bounded slices ([`super::side_data`]); the
//! segment goes when its last record has left. The alternative, a node's
//! record kept with its class so that a class's records go together, needs
//! a class's records to be found by class on every expiry and is no help
//! to the nodes of one long class that expire one by one; it was not
//! tried.
//!
//! Segments are shared (`Arc`) with snapshots: a snapshot keeps reading the
//! records it was given while the engine appends, releases and moves them
//! (a moved record is a copy; the snapshot reads the original, which its
//! segment keeps until the snapshot lets it go).
//!
//! Consequences: the file stays within about 1.5 times the live bytes plus
//! the current segment and [`MIN_GARBAGE_BYTES`] (more while a snapshot
//! holds segments already emptied, until it is written). A record of a
//! long-lived node is copied again each time its segment is emptied: at
//! most twice its size per byte given back, and under expiry far less
//! (a segment is emptied when nearly all of it has expired).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::{Advice, MmapOptions, MmapRaw};

use super::mapped_file::ADVICE_ALIGNMENT;
pub use super::mapped_file::MappedFile;
use super::segment_files::{map_new_file, map_new_file_holding};

mod location;
pub use location::SideLocation;

/// Size of the first segment.
pub const FIRST_SEGMENT_BYTES: usize = 1 << 20;

/// Size segments grow to (a record larger than this gets a segment of its
/// own size).
pub const MAX_SEGMENT_BYTES: usize = 64 << 20;

/// Released bytes below which no compaction starts (see
/// [`SideFile::wants_compaction`]).
pub const MIN_GARBAGE_BYTES: u64 = 4 << 20;

/// Bytes before each record: its length.
const LENGTH_BYTES: usize = 4;

/// Where the side records go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideStorage {
    /// Files in this directory (unlinked as soon as they are created).
    Directory(PathBuf),
    /// Anonymous memory: no file, the records count as the process's own
    /// memory (for tests and for machines without a writable disk).
    Memory,
}

impl Default for SideStorage {
    /// The system's temporary directory.
    fn default() -> Self {
        SideStorage::Directory(std::env::temp_dir())
    }
}

/// One mapped region: a whole mapping of its own, or part of a shared
/// read-only one ([`MappedFile`]). A writable one is written only past
/// the end of what has been handed out (by the owning [`SideFile`], which
/// `&mut` makes the only writer); read only at records already written.
#[derive(Debug)]
struct Segment {
    map: Arc<MmapRaw>,
    start: usize,
    len: usize,
    writable: bool,
}

impl Segment {
    fn of_own(map: MmapRaw) -> Segment {
        Segment {
            len: map.len(),
            map: Arc::new(map),
            start: 0,
            writable: true,
        }
    }

    /// A new segment of `size` bytes and whether it is anonymous memory;
    /// `None` when not even anonymous memory could be mapped.
    fn create(storage: &SideStorage, size: usize) -> Option<(Segment, bool)> {
        if let SideStorage::Directory(directory) = storage {
            match map_new_file(directory, size) {
                Ok(map) => return Some((Segment::of_own(map), false)),
                Err(error) => tracing::warn!(
                    directory = %directory.display(),
                    %error,
                    "side data segment kept in memory: its file could not be created"
                ),
            }
        }
        let map = MmapOptions::new().len(size).map_anon().ok()?;
        Some((Segment::of_own(MmapRaw::from(map)), true))
    }

    /// A segment holding `contents`, written to its file in one go
    /// (buffered writes, no page faults on the mapping), and whether it is
    /// anonymous memory.
    fn create_holding(storage: &SideStorage, contents: &[u8]) -> Option<(Segment, bool)> {
        if let SideStorage::Directory(directory) = storage {
            match map_new_file_holding(directory, contents) {
                Ok(map) => return Some((Segment::of_own(map), false)),
                Err(error) => tracing::warn!(
                    directory = %directory.display(),
                    %error,
                    "side data segment kept in memory: its file could not be created"
                ),
            }
        }
        let map = MmapOptions::new().len(contents.len()).map_anon().ok()?;
        let segment = Segment::of_own(MmapRaw::from(map));
        segment.write(0, contents).then_some((segment, true))
    }

    /// The bytes `range` of `file`, read-only.
    fn part_of(file: &MappedFile, range: std::ops::Range<usize>) -> Option<Segment> {
        if range.start > range.end || range.end > file.map().len() {
            return None;
        }
        Some(Segment {
            map: Arc::clone(file.map()),
            start: range.start,
            len: range.end - range.start,
            writable: false,
        })
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Tells the kernel how the segment's pages will be read (advice only:
    /// an error changes nothing but the reads' size).
    fn advise(&self, advice: Advice) {
        let page_start = self.start & !(ADVICE_ALIGNMENT - 1);
        let _ = self
            .map
            .advise_range(advice, page_start, self.start + self.len - page_start);
    }

    /// The `length` bytes at `offset`, if inside the segment.
    fn bytes(&self, offset: usize, length: usize) -> Option<&[u8]> {
        let end = offset.checked_add(length)?;
        if end > self.len {
            return None;
        }
        // SAFETY: the range is inside the segment, inside the mapping,
        // which lives as long as `self`. Bytes below the write cursor are
        // never written again (the file is append-only and private to this
        // process: created by us and unlinked; or read-only), and callers
        // only read records that were written before their location was
        // handed out, so no write aliases them.
        Some(unsafe {
            std::slice::from_raw_parts(self.map.as_ptr().add(self.start + offset), length)
        })
    }

    /// Copies `data` to `offset`, which must be at or past the write
    /// cursor; `false` for a read-only segment.
    fn write(&self, offset: usize, data: &[u8]) -> bool {
        let Some(end) = offset.checked_add(data.len()) else {
            return false;
        };
        if !self.writable || end > self.len {
            return false;
        }
        // SAFETY: inside the segment's own, writable mapping; the range is
        // past every record handed out (the owning `SideFile` is the only
        // writer and writes only at its cursor), so no reader holds a
        // reference to it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.map.as_mut_ptr().add(self.start + offset),
                data.len(),
            );
        }
        true
    }
}

/// How much the side file holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideFileStats {
    /// Segments mapped now.
    pub segments: usize,
    /// Their total size (disk, or memory for anonymous segments).
    pub mapped_bytes: u64,
    /// Of which: in anonymous memory.
    pub anonymous_bytes: u64,
    /// Bytes of records not yet released.
    pub live_bytes: u64,
    /// Segments that could not get a file (since the start).
    pub anonymous_segments: u64,
    /// Records moved by compaction (since the start).
    pub moved_records: u64,
    /// Their bytes (lengths included).
    pub moved_bytes: u64,
    /// Compaction rounds finished (since the start).
    pub compactions: u64,
    /// Segments a round chose that still held records at its end: 0
    /// unless a live record's location was missed (a bug; the segment is
    /// kept, as before compaction).
    pub stranded_segments: u64,
}

/// How large segments are and when released records are compacted away.
/// The defaults are the engine's; tests shrink them to see many segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SideFileLimits {
    /// The smallest segment.
    pub first_segment_bytes: usize,
    /// The largest (a larger record gets a segment of its own size).
    pub max_segment_bytes: usize,
    /// Compaction starts once the released records in full segments are
    /// this many bytes and half the live bytes.
    pub min_garbage_bytes: u64,
}

impl Default for SideFileLimits {
    fn default() -> Self {
        SideFileLimits {
            first_segment_bytes: FIRST_SEGMENT_BYTES,
            max_segment_bytes: MAX_SEGMENT_BYTES,
            min_garbage_bytes: MIN_GARBAGE_BYTES,
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct SegmentUse {
    live_records: u64,
    live_bytes: u64,
    anonymous: bool,
    /// Its records are being moved out (a compaction round chose it).
    evacuating: bool,
}

/// The store of side records: appended, released, and moved out of
/// segments mostly released ([`SideFile::relocate`]).
#[derive(Debug, Default)]
pub struct SideFile {
    storage: SideStorage,
    limits: SideFileLimits,
    /// By segment id; `None` once given back (its id is reused).
    segments: Vec<Option<Arc<Segment>>>,
    usage: Vec<SegmentUse>,
    /// Ids of segments given back, for the next segments.
    free_ids: Vec<u32>,
    /// The segment written to.
    current: Option<usize>,
    /// Write cursor in the current segment.
    cursor: usize,
    stats: SideFileStats,
}

impl SideFile {
    pub fn new(storage: SideStorage) -> Self {
        SideFile::with_limits(storage, SideFileLimits::default())
    }

    pub fn with_limits(storage: SideStorage, limits: SideFileLimits) -> Self {
        SideFile {
            storage,
            limits,
            ..SideFile::default()
        }
    }

    pub fn limits(&self) -> SideFileLimits {
        self.limits
    }

    fn current_segment(&self) -> Option<&Arc<Segment>> {
        self.segments.get(self.current?)?.as_ref()
    }

    /// Appends one record; `None` only when no memory at all could be had
    /// for it (or 16 383 segments are alive at once).
    pub fn append(&mut self, record: &[u8]) -> Option<SideLocation> {
        let needed = record.len().checked_add(LENGTH_BYTES)?;
        let length = u32::try_from(record.len()).ok()?;
        let fits = self
            .current_segment()
            .is_some_and(|segment| self.cursor + needed <= segment.len());
        if !fits {
            self.open_segment(needed)?;
        }
        let segment_id = self.current?;
        let segment = self.current_segment()?;
        let offset = self.cursor;
        // Checked first: a record written where no location can name it
        // would count as live for ever.
        let location = SideLocation::new(segment_id, offset)?;
        if !segment.write(offset, &length.to_le_bytes())
            || !segment.write(offset + LENGTH_BYTES, record)
        {
            return None;
        }
        self.cursor += needed;
        let usage = &mut self.usage[segment_id];
        usage.live_records += 1;
        usage.live_bytes += needed as u64;
        self.stats.live_bytes += needed as u64;
        Some(location)
    }

    /// Stores `block`, records laid out as this file lays them out (each
    /// after its length, 4 bytes little-endian), as a segment of its own
    /// written in one go: recovery stores millions of records, and one by
    /// one through the mapping each new page was a fault the kernel zeroed
    /// before the copy. The records' locations in order; `None` when the
    /// block is not such records or no memory at all could be had (nothing
    /// is stored then).
    pub fn append_block(&mut self, block: &[u8]) -> Option<Vec<SideLocation>> {
        let offsets = record_offsets(block)?;
        if block.is_empty() {
            return Some(Vec::new());
        }
        let (segment, anonymous) = Segment::create_holding(&self.storage, block)?;
        self.add_full_segment(segment, anonymous, offsets)
    }

    /// Takes the records in `range` of `file` (laid out as in
    /// [`Self::append_block`]) where they are, as a read-only segment:
    /// nothing is copied or written. Their locations in order; `None` when
    /// the range is not such records.
    pub fn adopt(
        &mut self,
        file: &MappedFile,
        range: std::ops::Range<usize>,
    ) -> Option<Vec<SideLocation>> {
        let offsets = record_offsets(file.bytes().get(range.clone())?)?;
        self.adopt_at(file, range, offsets)
    }

    /// [`Self::adopt`] of records whose offsets in `range` (from
    /// [`record_offsets`]) the caller has: recovery walks each range once.
    pub(super) fn adopt_at(
        &mut self,
        file: &MappedFile,
        range: std::ops::Range<usize>,
        offsets: Vec<u32>,
    ) -> Option<Vec<SideLocation>> {
        if range.is_empty() {
            return Some(Vec::new());
        }
        let segment = Segment::part_of(file, range)?;
        self.add_full_segment(segment, false, offsets)
    }

    /// Makes `segment`, full of the records at `offsets`, the current one
    /// (full: the next record opens another).
    fn add_full_segment(
        &mut self,
        segment: Segment,
        anonymous: bool,
        offsets: Vec<u32>,
    ) -> Option<Vec<SideLocation>> {
        let bytes = segment.len();
        let id = self.add_segment(segment, anonymous);
        self.cursor = bytes;
        // Past the numbers a location holds: the records stay in memory.
        SideLocation::new(id, 0)?;
        let usage = &mut self.usage[id];
        usage.live_records = offsets.len() as u64;
        usage.live_bytes = bytes as u64;
        self.stats.live_bytes += bytes as u64;
        // Offsets are u32 and the segment's number passed: none is refused.
        offsets
            .into_iter()
            .map(|offset| SideLocation::new(id, offset as usize))
            .collect()
    }

    /// The size of the next segment: a quarter of what is live, rounded up
    /// to a power of two, within the limits. Sized by what is live, not by
    /// what was written, so a small forest under a long stream keeps small
    /// segments (and its file a small multiple of what is live).
    fn next_segment_size(&self) -> usize {
        let quarter = usize::try_from(self.stats.live_bytes / 4).unwrap_or(usize::MAX);
        quarter
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
            .clamp(
                self.limits.first_segment_bytes,
                self.limits.max_segment_bytes,
            )
    }

    fn open_segment(&mut self, needed: usize) -> Option<()> {
        let size = self.next_segment_size().max(needed);
        let (segment, anonymous) = Segment::create(&self.storage, size)?;
        self.add_segment(segment, anonymous);
        Some(())
    }

    /// Makes `segment` the one written to (cursor at its start); its id.
    fn add_segment(&mut self, segment: Segment, anonymous: bool) -> usize {
        // The segment being left may already be empty.
        let previous = self.current;
        self.stats.segments += 1;
        self.stats.mapped_bytes += segment.len() as u64;
        if anonymous {
            self.stats.anonymous_bytes += segment.len() as u64;
            if matches!(self.storage, SideStorage::Directory(_)) {
                self.stats.anonymous_segments += 1;
            }
        }
        let usage = SegmentUse {
            anonymous,
            ..SegmentUse::default()
        };
        let id = match self.free_ids.pop() {
            Some(id) => {
                let id = id as usize;
                self.segments[id] = Some(Arc::new(segment));
                self.usage[id] = usage;
                id
            }
            None => {
                self.segments.push(Some(Arc::new(segment)));
                self.usage.push(usage);
                self.segments.len() - 1
            }
        };
        self.current = Some(id);
        self.cursor = 0;
        if let Some(previous) = previous {
            self.give_back_if_unused(previous);
        }
        id
    }

    /// The record at `location`.
    pub fn record(&self, location: SideLocation) -> Option<&[u8]> {
        let segment = self.segments.get(location.segment())?.as_ref()?;
        record_in(segment, location.offset())
    }

    /// From now on records are read one at a time: every segment, those
    /// adopted from a snapshot too (recovery read them in order), is read
    /// a page a fault.
    pub fn read_at_random(&self) {
        advise_all(&self.segments, Advice::Random);
    }

    /// The record at `location` is no longer needed.
    pub fn release(&mut self, location: SideLocation) {
        let id = location.segment();
        let Some(bytes) = self
            .record(location)
            .map(|record| record.len() + LENGTH_BYTES)
        else {
            return;
        };
        let Some(usage) = self.usage.get_mut(id) else {
            return;
        };
        usage.live_records = usage.live_records.saturating_sub(1);
        usage.live_bytes = usage.live_bytes.saturating_sub(bytes as u64);
        self.stats.live_bytes = self.stats.live_bytes.saturating_sub(bytes as u64);
        if self.current != Some(id) {
            self.give_back_if_unused(id);
        }
    }

    fn give_back_if_unused(&mut self, id: usize) {
        let unused = self
            .usage
            .get(id)
            .is_some_and(|usage| usage.live_records == 0);
        if !unused {
            return;
        }
        if let Some(segment) = self.segments.get_mut(id).and_then(Option::take) {
            self.stats.segments -= 1;
            self.stats.mapped_bytes -= segment.len() as u64;
            if self.usage[id].anonymous {
                self.stats.anonymous_bytes -= segment.len() as u64;
            }
            self.usage[id] = SegmentUse::default();
            if let Ok(id) = u32::try_from(id) {
                self.free_ids.push(id);
            }
        }
    }

    /// Bytes of released records in segments no longer written to: what
    /// compaction can give back.
    pub fn garbage_bytes(&self) -> u64 {
        let (current_len, current_live) = match self.current_segment() {
            Some(segment) => (
                segment.len() as u64,
                self.current.map_or(0, |id| self.usage[id].live_bytes),
            ),
            None => (0, 0),
        };
        (self.stats.mapped_bytes.saturating_sub(current_len))
            .saturating_sub(self.stats.live_bytes.saturating_sub(current_live))
    }

    /// Whether enough is released that a compaction round is worth it: at
    /// least [`SideFileLimits::min_garbage_bytes`] and half the live bytes
    /// (so the file stays within about 1.5 times what is live, plus a
    /// segment and that minimum). Constant time.
    pub fn wants_compaction(&self) -> bool {
        let garbage = self.garbage_bytes();
        garbage >= self.limits.min_garbage_bytes && garbage >= self.stats.live_bytes / 2
    }

    /// Starts a compaction round: the full segments (not written to any
    /// more) at most a third live are to be emptied, or if there are none,
    /// those at most two thirds live (when [`Self::wants_compaction`], the
    /// average full segment is at most two thirds live, so there is one).
    /// Emptying the emptiest first copies least: under expiry a segment
    /// only half expired yet will be emptier later, and its records that
    /// expire meanwhile need no copy (on the soak stream, a threshold of
    /// two thirds alone copied half as many bytes as were written). The
    /// number of segments chosen.
    pub fn start_compaction(&mut self) -> usize {
        let chosen = self.choose_segments(1, 3);
        if chosen > 0 {
            return chosen;
        }
        self.choose_segments(2, 3)
    }

    /// Marks the full segments at most `numerator / denominator` live to
    /// be emptied; their number.
    fn choose_segments(&mut self, numerator: u64, denominator: u64) -> usize {
        let mut chosen = 0;
        for (id, segment) in self.segments.iter().enumerate() {
            let Some(segment) = segment else {
                continue;
            };
            // The current segment only once full (a block or adopted
            // records are): it is written to no more.
            let written_to = Some(id) == self.current && self.cursor < segment.len();
            let usage = &mut self.usage[id];
            if !written_to && usage.live_bytes * denominator <= segment.len() as u64 * numerator {
                usage.evacuating = true;
                chosen += 1;
            }
        }
        chosen
    }

    /// Whether the record at `location` is to be moved ([`Self::relocate`]):
    /// its segment is being emptied.
    #[inline]
    pub fn is_evacuating(&self, location: SideLocation) -> bool {
        self.usage
            .get(location.segment())
            .is_some_and(|usage| usage.evacuating)
    }

    /// Copies the record at `location` to the current segment and releases
    /// it where it was (giving its segment back once that was its last
    /// record): its new location, `None` (nothing changed) when there is no
    /// such record or no space for it.
    pub fn relocate(&mut self, location: SideLocation) -> Option<SideLocation> {
        // Held while the record is copied: the source outlives its release.
        let source = Arc::clone(self.segments.get(location.segment())?.as_ref()?);
        let record = record_in(&source, location.offset())?;
        let moved = self.append(record)?;
        self.stats.moved_records += 1;
        self.stats.moved_bytes += (record.len() + LENGTH_BYTES) as u64;
        self.release(location);
        Some(moved)
    }

    /// Ends a compaction round; the segments chosen that still hold
    /// records (none, when every live record's location was relocated:
    /// the caller's sweep missed a record otherwise) are no longer
    /// emptied. Their number. A chosen segment whose records were all
    /// released meanwhile is not one of them, though it may still be
    /// there: the current segment, full when it was chosen, is kept until
    /// the next record needs a new one.
    pub fn finish_compaction(&mut self) -> usize {
        let mut left = 0;
        for usage in &mut self.usage {
            if usage.evacuating {
                usage.evacuating = false;
                if usage.live_records > 0 {
                    left += 1;
                }
            }
        }
        self.stats.compactions += 1;
        self.stats.stranded_segments += left as u64;
        left
    }

    /// The segments as they are now, for reading records after the engine
    /// has moved on (snapshots).
    pub fn reader(&self) -> SideFileReader {
        SideFileReader {
            segments: self.segments.clone(),
        }
    }

    /// The directory records go to (`None`: anonymous memory).
    pub fn directory(&self) -> Option<&Path> {
        match &self.storage {
            SideStorage::Directory(directory) => Some(directory),
            SideStorage::Memory => None,
        }
    }

    /// Whether records go to files (not anonymous memory).
    pub fn keeps_files(&self) -> bool {
        matches!(self.storage, SideStorage::Directory(_))
    }

    pub fn stats(&self) -> SideFileStats {
        self.stats
    }

    /// Heap bytes of the segment table.
    pub fn heap_bytes(&self) -> usize {
        self.segments.capacity() * std::mem::size_of::<Option<Arc<Segment>>>()
            + self.usage.capacity() * std::mem::size_of::<SegmentUse>()
            + self.free_ids.capacity() * std::mem::size_of::<u32>()
    }
}

/// Where each record of `block` (records after their lengths) starts;
/// `None` unless the block is exactly whole records.
pub(super) fn record_offsets(block: &[u8]) -> Option<Vec<u32>> {
    record_offsets_with(block, |_| {})
}

/// [`record_offsets`], handing each record to `each` as it is found
/// (recovery's walk reads each record where it finds its length, in one
/// pass over a block larger than the processor's caches).
pub(super) fn record_offsets_with(block: &[u8], mut each: impl FnMut(&[u8])) -> Option<Vec<u32>> {
    let mut offsets = Vec::new();
    let mut offset = 0;
    while offset < block.len() {
        let length = block.get(offset..offset + LENGTH_BYTES)?;
        let length = u32::from_le_bytes(length.try_into().ok()?) as usize;
        offsets.push(u32::try_from(offset).ok()?);
        let record_start = offset + LENGTH_BYTES;
        each(block.get(record_start..record_start + length)?);
        offset = record_start + length;
    }
    (offset == block.len()).then_some(offsets)
}

fn record_in(segment: &Segment, offset: usize) -> Option<&[u8]> {
    let length = segment.bytes(offset, LENGTH_BYTES)?;
    let length = u32::from_le_bytes(length.try_into().ok()?) as usize;
    segment.bytes(offset + LENGTH_BYTES, length)
}

/// Reads records of a [`SideFile`] as it was when this was taken.
#[derive(Debug, Clone, Default)]
pub struct SideFileReader {
    segments: Vec<Option<Arc<Segment>>>,
}

impl SideFileReader {
    pub fn record(&self, location: SideLocation) -> Option<&[u8]> {
        let segment = self.segments.get(location.segment())?.as_ref()?;
        record_in(segment, location.offset())
    }

    /// For a pass over the records in about the order they were written (a
    /// snapshot's): the kernel reads ahead of each fault. Followed by
    /// [`Self::read_at_random`].
    pub fn read_in_order(&self) {
        advise_all(&self.segments, Advice::Sequential);
    }

    /// Back to one page a fault, as the engine reads (see
    /// [`super::segment_files`]).
    pub fn read_at_random(&self) {
        advise_all(&self.segments, Advice::Random);
    }
}

/// [`Segment::advise`] for every segment alive.
fn advise_all(segments: &[Option<Arc<Segment>>], advice: Advice) {
    for segment in segments.iter().flatten() {
        segment.advise(advice);
    }
}

#[cfg(test)]
#[path = "side_file_tests.rs"]
mod tests;
