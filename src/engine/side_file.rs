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
//! record is found by a [`SideLocation`] (segment, offset): 8 bytes in
//! RAM. Records never change once written; a record that is no longer
//! needed is released, and a full segment whose records are all released
//! is unmapped, which gives its disk space back. Segments start at
//! [`FIRST_SEGMENT_BYTES`] (tests create many small engines) and double up
//! to [`MAX_SEGMENT_BYTES`]. A segment's space is reserved with
//! `posix_fallocate` before it is mapped, so a full disk shows when a
//! segment is created (that segment then lives in anonymous memory, counted
//! in [`SideFileStats::anonymous_segments`]), never as a fault on a write.
//!
//! Segments are shared (`Arc`) with snapshots: a snapshot keeps reading the
//! records it was given while the engine appends and releases.
//!
//! Consequences: a node whose class lives for weeks keeps its segment (and
//! the segment's released records) on disk; segments are not compacted.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapOptions, MmapRaw};

/// Size of the first segment.
pub const FIRST_SEGMENT_BYTES: usize = 1 << 20;

/// Size segments grow to (a record larger than this gets a segment of its
/// own size).
pub const MAX_SEGMENT_BYTES: usize = 64 << 20;

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

/// Where one record is: 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SideLocation {
    segment: u32,
    offset: u32,
}

impl SideLocation {
    /// No record: no segment has this number, so reading it finds nothing.
    pub const NOWHERE: SideLocation = SideLocation {
        segment: u32::MAX,
        offset: u32::MAX,
    };
}

/// A file mapped read-only, shared by whoever reads from it: a snapshot,
/// whose side records recovery adopts where they are instead of copying
/// them into a segment file (at 10 M nodes that copy was 3.6 GB written
/// and most of recovery's time).
///
/// The file must not change while mapped: snapshots are written once
/// under a temporary name, renamed, and only ever deleted (a deleted file
/// stays readable while mapped; its disk space comes back when the last
/// segment reading it is given back).
#[derive(Debug, Clone)]
pub struct MappedFile {
    map: Arc<MmapRaw>,
}

impl MappedFile {
    /// Maps the whole file at `path`, read-only.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or mapped (an empty file cannot be).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = File::open(path)?;
        // SAFETY: mapped read-only; the file is a snapshot, which nothing
        // writes once it has its name (see the type's documentation).
        let map = unsafe { MmapOptions::new().map(&file)? };
        Ok(MappedFile {
            map: Arc::new(MmapRaw::from(map)),
        })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping lives as long as `self`, and nothing writes
        // to it (read-only, see above).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.map.len()) }
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
        if range.start > range.end || range.end > file.map.len() {
            return None;
        }
        Some(Segment {
            map: Arc::clone(&file.map),
            start: range.start,
            len: range.end - range.start,
            writable: false,
        })
    }

    fn len(&self) -> usize {
        self.len
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

/// Creates, reserves, maps and unlinks a file of `size` bytes.
fn map_new_file(directory: &Path, size: usize) -> std::io::Result<MmapRaw> {
    map_new_file_with(directory, size, |_| Ok(()))
}

/// Creates, reserves and unlinks a file holding `contents`, and maps it.
fn map_new_file_holding(directory: &Path, contents: &[u8]) -> std::io::Result<MmapRaw> {
    use std::os::unix::fs::FileExt;
    map_new_file_with(directory, contents.len(), |file| {
        file.write_all_at(contents, 0)
    })
}

/// Creates and reserves a file of `size` bytes, has `fill` write it, maps
/// and unlinks it.
fn map_new_file_with(
    directory: &Path,
    size: usize,
    fill: impl FnOnce(&File) -> std::io::Result<()>,
) -> std::io::Result<MmapRaw> {
    static NEXT_FILE: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(directory)?;
    let path = directory.join(format!(
        "neardup-side-{}-{}.tmp",
        std::process::id(),
        NEXT_FILE.fetch_add(1, Ordering::Relaxed)
    ));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    let mapped = reserve(&file, size)
        .and_then(|()| fill(&file))
        .and_then(|()| MmapOptions::new().len(size).map_raw(&file));
    let unlinked = std::fs::remove_file(&path);
    let map = mapped?;
    unlinked?;
    Ok(map)
}

/// Reserves `size` bytes of disk for `file`, so that writing through the
/// mapping can never meet a full disk.
fn reserve(file: &File, size: usize) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let length = libc::off_t::try_from(size).map_err(std::io::Error::other)?;
    // SAFETY: a plain system call on a file descriptor we own.
    let result = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, length) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(result))
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
}

#[derive(Debug, Default, Clone, Copy)]
struct SegmentUse {
    live_records: u64,
    live_bytes: u64,
    anonymous: bool,
}

/// The append-only store of side records.
#[derive(Debug, Default)]
pub struct SideFile {
    storage: SideStorage,
    /// By segment id; `None` once given back.
    segments: Vec<Option<Arc<Segment>>>,
    usage: Vec<SegmentUse>,
    /// Write cursor in the last segment.
    cursor: usize,
    stats: SideFileStats,
}

impl SideFile {
    pub fn new(storage: SideStorage) -> Self {
        SideFile {
            storage,
            ..SideFile::default()
        }
    }

    /// Appends one record; `None` only when no memory at all could be had
    /// for it.
    pub fn append(&mut self, record: &[u8]) -> Option<SideLocation> {
        let needed = record.len().checked_add(LENGTH_BYTES)?;
        let length = u32::try_from(record.len()).ok()?;
        let fits = self
            .segments
            .last()
            .and_then(Option::as_ref)
            .is_some_and(|segment| self.cursor + needed <= segment.len());
        if !fits {
            self.open_segment(needed)?;
        }
        let segment_id = self.segments.len().checked_sub(1)?;
        let segment = self.segments.last()?.as_ref()?;
        let offset = self.cursor;
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
        Some(SideLocation {
            segment: u32::try_from(segment_id).ok()?,
            offset: u32::try_from(offset).ok()?,
        })
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
        if range.is_empty() {
            return Some(Vec::new());
        }
        let segment = Segment::part_of(file, range)?;
        self.add_full_segment(segment, false, offsets)
    }

    /// Makes `segment`, full of the records at `offsets`, the last one.
    fn add_full_segment(
        &mut self,
        segment: Segment,
        anonymous: bool,
        offsets: Vec<u32>,
    ) -> Option<Vec<SideLocation>> {
        let bytes = segment.len();
        self.add_segment(segment, anonymous);
        self.cursor = bytes;
        let segment_id = u32::try_from(self.segments.len() - 1).ok()?;
        let usage = self.usage.last_mut()?;
        usage.live_records = offsets.len() as u64;
        usage.live_bytes = bytes as u64;
        self.stats.live_bytes += bytes as u64;
        Some(
            offsets
                .into_iter()
                .map(|offset| SideLocation {
                    segment: segment_id,
                    offset,
                })
                .collect(),
        )
    }

    fn open_segment(&mut self, needed: usize) -> Option<()> {
        let previous = self.segments.last().and_then(Option::as_ref);
        let grown = previous.map_or(FIRST_SEGMENT_BYTES, |segment| {
            (segment.len() * 2).min(MAX_SEGMENT_BYTES)
        });
        let size = grown.max(needed);
        let (segment, anonymous) = Segment::create(&self.storage, size)?;
        self.add_segment(segment, anonymous);
        self.cursor = 0;
        Some(())
    }

    /// Makes `segment` the one written to.
    fn add_segment(&mut self, segment: Segment, anonymous: bool) {
        // The segment being left may already be empty.
        let last = self.segments.len().checked_sub(1);
        self.stats.segments += 1;
        self.stats.mapped_bytes += segment.len() as u64;
        if anonymous {
            self.stats.anonymous_bytes += segment.len() as u64;
            if matches!(self.storage, SideStorage::Directory(_)) {
                self.stats.anonymous_segments += 1;
            }
        }
        self.segments.push(Some(Arc::new(segment)));
        self.usage.push(SegmentUse {
            anonymous,
            ..SegmentUse::default()
        });
        if let Some(last) = last {
            self.give_back_if_unused(last);
        }
    }

    /// The record at `location`.
    pub fn record(&self, location: SideLocation) -> Option<&[u8]> {
        let segment = self.segments.get(location.segment as usize)?.as_ref()?;
        record_in(segment, location.offset as usize)
    }

    /// The record at `location` is no longer needed.
    pub fn release(&mut self, location: SideLocation) {
        let id = location.segment as usize;
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
        if id + 1 < self.segments.len() {
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
        }
    }

    /// The segments as they are now, for reading records after the engine
    /// has moved on (snapshots).
    pub fn reader(&self) -> SideFileReader {
        SideFileReader {
            segments: self.segments.clone(),
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
    }
}

/// Where each record of `block` (records after their lengths) starts;
/// `None` unless the block is exactly whole records.
pub(super) fn record_offsets(block: &[u8]) -> Option<Vec<u32>> {
    let mut offsets = Vec::new();
    let mut offset = 0;
    while offset < block.len() {
        let length = block.get(offset..offset + LENGTH_BYTES)?;
        let length = u32::from_le_bytes(length.try_into().ok()?) as usize;
        offsets.push(u32::try_from(offset).ok()?);
        offset += LENGTH_BYTES + length;
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
        let segment = self.segments.get(location.segment as usize)?.as_ref()?;
        record_in(segment, location.offset as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storages() -> Vec<SideStorage> {
        vec![SideStorage::default(), SideStorage::Memory]
    }

    #[test]
    fn records_read_back_across_segments() {
        for storage in storages() {
            let mut file = SideFile::new(storage);
            let records: Vec<Vec<u8>> = (0..3000u32)
                .map(|index| vec![(index % 251) as u8; 300 + (index as usize % 700)])
                .collect();
            let locations: Vec<SideLocation> = records
                .iter()
                .map(|record| file.append(record).expect("appended"))
                .collect();
            assert!(file.stats().segments > 1, "{:?}", file.stats());
            for (record, location) in records.iter().zip(&locations) {
                assert_eq!(file.record(*location), Some(record.as_slice()));
            }
        }
    }

    #[test]
    fn a_block_of_records_reads_back_between_appends_and_is_given_back() {
        for storage in storages() {
            let mut file = SideFile::new(storage);
            let before = file.append(b"before").expect("appended");
            let records: Vec<Vec<u8>> = (0..500u32)
                .map(|index| vec![(index % 251) as u8; index as usize % 90])
                .collect();
            let mut block = Vec::new();
            for record in &records {
                block.extend_from_slice(&(record.len() as u32).to_le_bytes());
                block.extend_from_slice(record);
            }
            let locations = file.append_block(&block).expect("stored");
            let after = file.append(b"after").expect("appended");
            assert_eq!(locations.len(), records.len());
            for (record, location) in records.iter().zip(&locations) {
                assert_eq!(file.record(*location), Some(record.as_slice()));
            }
            assert_eq!(file.record(before), Some(&b"before"[..]));
            assert_eq!(file.record(after), Some(&b"after"[..]));
            assert_eq!(file.stats().segments, 3);
            for location in locations {
                file.release(location);
            }
            assert_eq!(
                file.stats().segments,
                2,
                "the block's segment is given back"
            );
            assert_eq!(file.append_block(&[]), Some(Vec::new()));
            assert_eq!(file.append_block(&block[..block.len() - 1]), None);
            assert_eq!(file.append_block(&[1, 0]), None);
            assert_eq!(file.stats().segments, 2);
        }
    }

    #[test]
    fn records_of_a_mapped_file_are_adopted_where_they_are() {
        let directory =
            std::env::temp_dir().join(format!("neardup-side-adopt-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("directory");
        let path = directory.join("snapshot");
        let records: [&[u8]; 3] = [b"one", b"", b"three"];
        let mut contents = b"header".to_vec();
        for record in records {
            contents.extend_from_slice(&(record.len() as u32).to_le_bytes());
            contents.extend_from_slice(record);
        }
        let end = contents.len();
        contents.extend_from_slice(b"trailer");
        std::fs::write(&path, &contents).expect("written");
        let mapped = MappedFile::open(&path).expect("mapped");
        // Deleted while mapped, as an old snapshot is: still readable.
        std::fs::remove_file(&path).expect("removed");
        let mut file = SideFile::new(SideStorage::Directory(directory.clone()));
        assert_eq!(file.adopt(&mapped, 5..end), None, "not whole records");
        assert_eq!(file.adopt(&mapped, 6..end + 1), None, "not whole records");
        let locations = file.adopt(&mapped, 6..end).expect("adopted");
        drop(mapped);
        let appended = file.append(b"after").expect("appended");
        for (record, location) in records.iter().zip(&locations) {
            assert_eq!(file.record(*location), Some(*record));
        }
        assert_eq!(file.record(appended), Some(&b"after"[..]));
        assert_eq!(file.stats().segments, 2);
        assert_eq!(file.stats().anonymous_bytes, 0);
        for location in locations {
            file.release(location);
        }
        assert_eq!(
            file.stats().segments,
            1,
            "the adopted segment is given back"
        );
        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn a_segment_whose_records_are_all_released_is_given_back() {
        let mut file = SideFile::new(SideStorage::default());
        let record = vec![7u8; 100_000];
        let locations: Vec<SideLocation> = (0..40)
            .map(|_| file.append(&record).expect("appended"))
            .collect();
        let before = file.stats();
        assert!(before.segments >= 3, "{before:?}");
        assert_eq!(before.anonymous_segments, 0);
        for location in &locations[..30] {
            file.release(*location);
        }
        let after = file.stats();
        assert!(after.segments < before.segments, "{before:?} {after:?}");
        assert!(after.mapped_bytes < before.mapped_bytes);
        assert_eq!(after.live_bytes, 10 * (100_000 + 4));
        for location in &locations[30..] {
            assert_eq!(file.record(*location), Some(record.as_slice()));
        }
    }

    #[test]
    fn a_reader_keeps_its_segments_after_they_are_given_back() {
        let mut file = SideFile::new(SideStorage::default());
        let first = file.append(b"first").expect("appended");
        let reader = file.reader();
        file.release(first);
        // A record larger than the first segment opens another; the first,
        // empty, is given back.
        file.append(&vec![1u8; FIRST_SEGMENT_BYTES + 1])
            .expect("appended");
        assert_eq!(file.record(first), None);
        assert_eq!(reader.record(first), Some(&b"first"[..]));
    }

    #[test]
    fn an_unusable_directory_falls_back_to_memory() {
        let mut file = SideFile::new(SideStorage::Directory(PathBuf::from(
            "/proc/neardup-cannot-write-here",
        )));
        let location = file.append(b"kept anyway").expect("appended");
        assert_eq!(file.record(location), Some(&b"kept anyway"[..]));
        assert_eq!(file.stats().anonymous_segments, 1);
    }

    #[test]
    fn a_location_from_elsewhere_reads_nothing() {
        let mut file = SideFile::new(SideStorage::Memory);
        file.append(b"x").expect("appended");
        let bogus = SideLocation {
            segment: 0,
            offset: (FIRST_SEGMENT_BYTES - 2) as u32,
        };
        assert_eq!(file.record(bogus), None);
        let missing = SideLocation {
            segment: 9,
            offset: 0,
        };
        assert_eq!(file.record(missing), None);
    }
}
