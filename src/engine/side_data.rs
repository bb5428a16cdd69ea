//! Where the engine keeps what a node has besides its forest record (its
//! root, its exact-text hashes, the text it is confirmed by: one record,
//! [`super::side_record`]), and the records on their way to and from a
//! snapshot.
//!
//! Motivation: confirmation ([`crate::confirm`]) needs a node's text, the
//! exact fast path needs its hashes, expiry needs both to clean the indexes,
//! and a snapshot must write all of it while the engine goes on.
//!
//! Design: one encoded record per node in the engine's [`SideFile`]
//! (off the heap; the engine keeps a 6-byte location per node, in a
//! vector by the forest's node number, so the side data has no table of
//! its own and the candidate indexes hold the forest's numbers). The
//! record's layout is the snapshot's, so a snapshot copies records as bytes
//! ([`SideSnapshot`]) and recovery hands them over encoded
//! ([`EncodedSides`]). A record never changes: a node that gains an exact
//! hash gets a new one.
//!
//! Consequences: a candidate's texts are decoded (a few small allocations)
//! each time it is tried.

use super::side_check::{DeferredCheck, SidesCheck};
use super::side_file::{
    MappedFile, SideFile, SideFileLimits, SideFileReader, SideFileStats, SideLocation, SideStorage,
};
use super::side_record::{
    SideRecord, SideView, decode_record, put_side, record_has_exact_hash, record_short_text,
};
use std::path::Path;

use crate::capture::{Capture, CaptureSink, Image};
use crate::confirm::ShortText;
use crate::encoding::Encoder;
use crate::forest::NodeRecord;
use crate::units::{Fingerprint, NodeId};

/// The location of a node whose record could not be stored.
const NOWHERE: SideLocation = SideLocation::NOWHERE;

/// Locations one compaction step looks at ([`SideStore::compact_some`]):
/// a sweep of the table is this many per record stored, so at 10 M nodes
/// a round passes the table while about 40 000 records (15 MB) are
/// written, against the at least 5 MB it gives back (half the live bytes).
const COMPACTION_SWEEP_PER_STEP: usize = 256;

/// Record bytes one compaction step copies at most (and one record more
/// if larger): a step stays a few microseconds.
const COMPACTION_BYTES_PER_STEP: usize = 16 << 10;

/// Steps without looking again after a round found no segment to empty
/// (it cannot happen while every live record has its location here).
const COMPACTION_BACKOFF_STEPS: u32 = 1024;

/// Every node's side record: its location (5 bytes in RAM, by the forest's
/// node number), the record in the [`SideFile`].
#[derive(Debug, Default)]
pub(super) struct SideStore {
    /// Per node number ([`crate::forest::Forest::number`]): its record's
    /// location, [`NOWHERE`] for a node without one.
    locations: Vec<SideLocation>,
    /// Locations that are not [`NOWHERE`].
    stored: usize,
    file: SideFile,
    /// Reused to encode records.
    buffer: Encoder,
    /// The locations as of a snapshot's moment, while one is taken.
    capture: Capture<SideLocation>,
    /// While a compaction round runs: the next place of `locations` its
    /// sweep looks at.
    sweep: Option<usize>,
    /// Steps to wait before looking for a round again.
    backoff: u32,
}

impl SideStore {
    pub(super) fn new(storage: SideStorage) -> Self {
        SideStore::with_limits(storage, SideFileLimits::default())
    }

    pub(super) fn with_limits(storage: SideStorage, limits: SideFileLimits) -> Self {
        SideStore {
            file: SideFile::with_limits(storage, limits),
            ..SideStore::default()
        }
    }

    /// Nodes with a stored record.
    pub(super) fn len(&self) -> usize {
        self.stored
    }

    fn location(&self, id: NodeId) -> SideLocation {
        self.locations.get(id as usize).copied().unwrap_or(NOWHERE)
    }

    /// Whether node `id` has a stored record.
    pub(super) fn contains(&self, id: NodeId) -> bool {
        self.location(id) != NOWHERE
    }

    /// The encoded record of node `id`.
    pub(super) fn record_of(&self, id: NodeId) -> Option<&[u8]> {
        self.file.record(self.location(id))
    }

    /// The short text of node `id`, if it has one.
    pub(super) fn short_text(&self, id: NodeId) -> Option<ShortText> {
        record_short_text(self.record_of(id)?).ok().flatten()
    }

    /// The whole record of node `id`.
    pub(super) fn decoded(&self, id: NodeId) -> Option<SideRecord> {
        decode_record(self.record_of(id)?).ok()
    }

    /// Stores `side` as node `id`'s record, replacing the one it had;
    /// `false` when the record could not be stored (the node then has
    /// none).
    pub(super) fn put(&mut self, id: NodeId, side: SideView<'_>) -> bool {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.bytes.clear();
        put_side(&mut buffer, &side);
        let stored = self.put_at(id, &buffer.bytes);
        self.buffer = buffer;
        stored
    }

    /// Stores an encoded `record` as node `id`'s, releasing the one it had;
    /// `false` when no space could be had (the node then keeps no record).
    pub(super) fn put_at(&mut self, id: NodeId, record: &[u8]) -> bool {
        let location = self.file.append(record).unwrap_or(NOWHERE);
        let stored = self.locate(id, location);
        self.compact_step();
        stored
    }

    /// One step of compaction of the usual size ([`Self::compact_some`]).
    pub(super) fn compact_step(&mut self) {
        self.compact_some(COMPACTION_SWEEP_PER_STEP, COMPACTION_BYTES_PER_STEP);
    }

    /// One bounded step of compaction ([`super::side_file`]): starts a
    /// round when the file wants one; in a round, looks at up to `sweep`
    /// more places of the table of locations and moves the records there
    /// that lie in segments being emptied, up to `max_bytes` of them (one
    /// record more if larger). When the sweep has passed the whole table,
    /// every chosen segment has been emptied and given back, and the round
    /// ends. Called for each record stored and each batch of removals, so
    /// the rounds keep pace with what is written and released. Whether a
    /// round still runs.
    pub(super) fn compact_some(&mut self, sweep: usize, max_bytes: usize) -> bool {
        let start = match self.sweep {
            Some(start) => start,
            None => {
                if self.backoff > 0 {
                    self.backoff -= 1;
                    return false;
                }
                if !self.file.wants_compaction() {
                    return false;
                }
                if self.file.start_compaction() == 0 {
                    self.backoff = COMPACTION_BACKOFF_STEPS;
                    return false;
                }
                0
            }
        };
        let end = start.saturating_add(sweep).min(self.locations.len());
        let mut moved = 0;
        let mut at = start;
        while at < end && moved < max_bytes {
            let location = self.locations[at];
            if self.file.is_evacuating(location) {
                let Some(new) = self.file.relocate(location) else {
                    // No space for the copy: tried again at the next step.
                    break;
                };
                self.capture.before_write(&self.locations, at);
                self.locations[at] = new;
                moved += self.file.record(new).map_or(0, <[u8]>::len) + 4;
            }
            at += 1;
        }
        if at < self.locations.len() {
            self.sweep = Some(at);
            return true;
        }
        let stranded = self.file.finish_compaction();
        debug_assert_eq!(stranded, 0, "a record left in a segment being emptied");
        self.sweep = None;
        false
    }

    /// Runs a compaction round to its end now, choosing the segments even
    /// when the file would not start one yet (tests).
    #[cfg(test)]
    pub(super) fn compact_now(&mut self) {
        if self.sweep.is_none() {
            if self.file.start_compaction() == 0 {
                return;
            }
            self.sweep = Some(0);
        }
        while self.compact_some(usize::MAX, usize::MAX) {}
    }

    /// Recovery is done with the records in order: see
    /// [`SideFile::read_at_random`].
    pub(super) fn read_at_random(&self) {
        self.file.read_at_random();
    }

    /// Stores `chunk`'s records (at `offsets`, as
    /// [`super::side_file::record_offsets`] finds
    /// them) as the records of the nodes `ids` gives them (the same order;
    /// a record without a number is not kept), each replacing the one its
    /// node had: the records of a mapped snapshot are adopted where they
    /// are (unless records are to be kept in memory), others written as a
    /// block in one go. The numbers of nodes whose record could not be
    /// stored go to `unstored`.
    pub(super) fn put_chunk_at(
        &mut self,
        chunk: &SidesChunk<'_>,
        offsets: Vec<u32>,
        ids: &[Option<NodeId>],
        unstored: &mut Vec<NodeId>,
    ) {
        if let Some(&largest) = ids.iter().flatten().max() {
            self.reserve_through(largest);
        }
        let stored = match &chunk.mapped {
            Some((file, range)) if self.file.keeps_files() => {
                self.file.adopt_at(file, range.clone(), offsets)
            }
            _ => self.file.append_block(chunk.bytes),
        };
        let Some(locations) = stored else {
            for (id, record) in ids.iter().zip(EncodedSides::records_in(chunk.bytes)) {
                if let Some(id) = *id
                    && !self.put_at(id, record)
                {
                    unstored.push(id);
                }
            }
            return;
        };
        for (id, location) in ids.iter().zip(locations) {
            match *id {
                Some(id) => {
                    if !self.locate(id, location) {
                        unstored.push(id);
                    }
                }
                None => self.file.release(location),
            }
        }
    }

    /// Whether [`Self::put_chunk_at`] adopts a mapped chunk where it is,
    /// without reading it (records are kept in files).
    pub(super) fn adopts_mapped(&self) -> bool {
        self.file.keeps_files()
    }

    /// Room in the table of locations for numbers up to `id`.
    fn reserve_through(&mut self, id: NodeId) {
        let needed = id as usize + 1;
        if self.locations.len() < needed {
            self.locations.resize(needed, NOWHERE);
        }
    }

    /// Makes `location` node `id`'s record, releasing the one it had;
    /// `false` when it is [`NOWHERE`].
    fn locate(&mut self, id: NodeId, location: SideLocation) -> bool {
        self.reserve_through(id);
        self.capture.before_write(&self.locations, id as usize);
        let Some(stored) = self.locations.get_mut(id as usize) else {
            if location != NOWHERE {
                self.file.release(location);
            }
            return false;
        };
        let previous = std::mem::replace(stored, location);
        if previous != NOWHERE {
            self.file.release(previous);
            self.stored -= 1;
        }
        if location != NOWHERE {
            self.stored += 1;
        }
        location != NOWHERE
    }

    /// Removes node `id`'s record (its number was freed): the record,
    /// decoded (`None` when it had none or it does not decode).
    pub(super) fn remove(&mut self, id: NodeId) -> Option<SideRecord> {
        self.capture.before_write(&self.locations, id as usize);
        let location = std::mem::replace(self.locations.get_mut(id as usize)?, NOWHERE);
        if location == NOWHERE {
            return None;
        }
        self.stored -= 1;
        let record = self
            .file
            .record(location)
            .and_then(|record| decode_record(record).ok());
        self.file.release(location);
        record
    }

    /// Drops the places past `bound` (the forest's
    /// [`crate::forest::Forest::number_bound`], after removals gave back
    /// its last numbers), giving their memory back when most are gone.
    pub(super) fn fit_to(&mut self, bound: usize) {
        if bound >= self.locations.len() {
            return;
        }
        self.capture.complete(&self.locations);
        for location in self.locations.drain(bound..) {
            if location != NOWHERE {
                self.file.release(location);
                self.stored -= 1;
            }
        }
        if self.locations.capacity() > 4096 && self.locations.len() < self.locations.capacity() / 4
        {
            self.locations.shrink_to(self.locations.len() * 2);
        }
    }

    /// Whether node `id`'s record lists `exact_hash`.
    pub(super) fn holds_exact_hash(&self, id: NodeId, exact_hash: u64) -> bool {
        self.record_of(id)
            .is_some_and(|record| record_has_exact_hash(record, exact_hash))
    }

    /// Keeps the records in `storage` from now on (a record that cannot be
    /// copied is lost, as when it could not be stored).
    pub(super) fn move_to(&mut self, storage: SideStorage) {
        self.capture.complete(&self.locations);
        let limits = self.file.limits();
        let previous = std::mem::replace(&mut self.file, SideFile::with_limits(storage, limits));
        self.sweep = None;
        for location in &mut self.locations {
            if *location == NOWHERE {
                continue;
            }
            *location = previous
                .record(*location)
                .and_then(|record| self.file.append(record))
                .unwrap_or(NOWHERE);
            if *location == NOWHERE {
                self.stored -= 1;
            }
        }
    }

    /// The nodes' record locations and the segments that hold them; cheap
    /// enough to take under a lock (one pass, 24 bytes per node).
    /// `fingerprint_of` names each node number's fingerprint.
    pub(super) fn snapshot(
        &self,
        fingerprint_of: impl Fn(NodeId) -> Option<Fingerprint>,
    ) -> SideSnapshot {
        SideSnapshot {
            entries: (0u32..)
                .zip(&self.locations)
                .filter(|&(_, &location)| location != NOWHERE)
                .filter_map(|(id, &location)| Some((0, fingerprint_of(id)?, location)))
                .collect(),
            file: self.file.reader(),
        }
    }

    /// Starts capturing the locations as they are now (call with writes
    /// locked out; [`crate::capture`]): the segments holding their records
    /// now, kept for the capture.
    pub(super) fn start_capture(&self) -> (SideFileReader, CaptureSink<SideLocation>) {
        let sink = self.capture.start(&self.locations, self.file.directory());
        (self.file.reader(), sink)
    }

    /// Where captures' images go: the side file's directory (none when the
    /// records are in anonymous memory).
    pub(super) fn directory(&self) -> Option<&Path> {
        self.file.directory()
    }

    /// Copies up to `budget` more locations; `true` once all are copied.
    pub(super) fn capture_some(&self, budget: usize) -> bool {
        self.capture.copy_some(&self.locations, budget)
    }

    /// The captured locations by node number, once all are copied (the
    /// capture ends).
    pub(super) fn take_capture(&self) -> Option<Image<SideLocation>> {
        self.capture.take()
    }

    /// Ends a capture without its image.
    pub(super) fn stop_capture(&self) {
        self.capture.stop();
    }

    /// Heap bytes: the table of locations (its untouched capacity is
    /// address space only) and the segment table (the records are in
    /// [`Self::file_stats`]).
    pub(super) fn heap_bytes(&self) -> usize {
        self.locations.len() * size_of::<SideLocation>()
            + self.file.heap_bytes()
            + self.buffer.bytes.capacity()
    }

    pub(super) fn file_stats(&self) -> SideFileStats {
        self.file.stats()
    }
}

/// Side records encoded one after another, each after its length: a
/// snapshot's side data on its way to [`crate::engine::Engine::restore`]
/// without a decoded copy of each. Blocks read from a version-2 snapshot
/// are ranges of the mapped file, which the side file adopts where they
/// are; others are owned bytes, which it copies.
#[derive(Debug, Default, Clone)]
pub struct EncodedSides {
    blocks: Vec<SidesBlock>,
    count: usize,
}

/// Records as the side file lays them out (each after its length, 4
/// bytes little-endian).
#[derive(Debug, Clone)]
enum SidesBlock {
    Owned(Vec<u8>),
    Mapped(MappedBlock),
}

/// A range of a mapped snapshot holding `records` records, adopted where
/// it is by the side file; its frame's checksum, if not yet checked, and
/// the frame's index (each record's length, node position and exact
/// hashes: version 10), if the snapshot has one.
#[derive(Debug, Clone)]
struct MappedBlock {
    file: MappedFile,
    range: std::ops::Range<usize>,
    records: usize,
    check: Option<SidesCheck>,
    index: Option<SidesCheck>,
}

impl SidesBlock {
    fn bytes(&self) -> &[u8] {
        match self {
            SidesBlock::Owned(bytes) => bytes,
            SidesBlock::Mapped(block) => block.file.bytes().get(block.range.clone()).unwrap_or(&[]),
        }
    }
}

/// Consecutive records of an [`EncodedSides`]: records `first..first +
/// records`, in slices of whole records.
#[derive(Debug, Default)]
pub(super) struct RecordRun<'a> {
    pub(super) first: usize,
    pub(super) records: usize,
    slices: Vec<&'a [u8]>,
}

impl<'a> RecordRun<'a> {
    pub(super) fn starting_at(first: usize) -> Self {
        RecordRun {
            first,
            records: 0,
            slices: Vec::new(),
        }
    }

    /// Adds `records` whole records, laid out in `slice`.
    pub(super) fn push(&mut self, slice: &'a [u8], records: usize) {
        if records > 0 {
            self.slices.push(slice);
            self.records += records;
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.slices
            .iter()
            .flat_map(|slice| EncodedSides::records_in(slice))
    }
}

/// Part of an [`EncodedSides`] for [`SideStore::put_chunk_at`]: whole
/// records, and where they are if in a mapped file.
pub(super) struct SidesChunk<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) records: usize,
    mapped: Option<(&'a MappedFile, std::ops::Range<usize>)>,
    check: Option<&'a SidesCheck>,
    index: Option<&'a SidesCheck>,
}

impl SidesChunk<'_> {
    /// `false` when the chunk's frame fails the checksum it came with
    /// (a chunk without one has been checked, or is not from a file).
    pub(super) fn checks_out(&self) -> bool {
        match (self.mapped.as_ref(), self.check) {
            (Some((file, _)), Some(check)) => check.holds(file),
            _ => true,
        }
    }

    /// Asks the kernel to start reading a mapped chunk, which
    /// [`Self::read_once`] will read next.
    pub(super) fn read_ahead(&self) {
        if let Some((file, range)) = &self.mapped {
            file.read_ahead(self.checked_range(range));
        }
    }

    /// What a read of the mapped `range` takes: the checksum's payload,
    /// which holds the records' range (and the frame's count before
    /// them); without one, the records alone.
    fn checked_range(&self, range: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        self.check
            .map_or_else(|| range.clone(), |check| check.payload.clone())
    }

    /// The chunk's bytes, checked against their checksum, read once:
    /// a mapped chunk with `pread` into `buffer`, its pages then dropped
    /// from the page cache ([`MappedFile::read_once`]); `None` when they
    /// fail the checksum or cannot be read.
    pub(super) fn read_once<'b>(&'b self, buffer: &'b mut Vec<u8>) -> Option<&'b [u8]> {
        let Some((file, range)) = &self.mapped else {
            return Some(self.bytes);
        };
        let payload = self.checked_range(range);
        let start = range.start.checked_sub(payload.start)?;
        let end = range.end.checked_sub(payload.start)?;
        file.read_once(payload, buffer).ok()?;
        if self.check.is_some_and(|check| !check.holds_for(buffer)) {
            return None;
        }
        buffer.get(start..end)
    }

    /// The chunk's index (version 10: each record's length, node position
    /// and exact hashes, after the index frame's kind and count), read
    /// once and checked against its checksum: `None` for a chunk without
    /// one, `Some(None)` when it fails its checksum or cannot be read.
    pub(super) fn read_index<'b>(&self, buffer: &'b mut Vec<u8>) -> Option<Option<&'b [u8]>> {
        let ((file, _), index) = (self.mapped.as_ref()?, self.index?);
        let checked = index.read_checked(file, buffer).unwrap_or(false);
        Some(checked.then(|| buffer.get(5..)).flatten())
    }

    /// Whether the chunk is mapped and has an index (version 10).
    pub(super) fn has_index(&self) -> bool {
        self.mapped.is_some() && self.index.is_some()
    }

    /// Asks the kernel to start reading the chunk's index, if it has one.
    pub(super) fn read_index_ahead(&self) {
        if let (Some((file, _)), Some(index)) = (&self.mapped, self.index) {
            file.read_ahead(index.payload.clone());
        }
    }

    /// The check of the chunk's records against their checksum, for after
    /// recovery (when recovery adopts them unread); `None` when there is
    /// nothing to check (not mapped, or checked).
    pub(super) fn deferred_check(&self) -> Option<DeferredCheck> {
        let (file, _) = self.mapped.as_ref()?;
        Some(DeferredCheck {
            file: (*file).clone(),
            check: self.check?.clone(),
        })
    }

    /// Asks the kernel to read ahead through a mapped chunk.
    pub(super) fn read_in_order(&self) {
        if let Some((file, range)) = &self.mapped {
            file.read_in_order(range.clone());
        }
    }
}

impl PartialEq for EncodedSides {
    /// The same records in the same order, wherever they are held.
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.iter().eq(other.iter())
    }
}

impl Eq for EncodedSides {}

impl EncodedSides {
    pub fn push(&mut self, record: &SideRecord) {
        let mut encoder = Encoder::default();
        put_side(&mut encoder, &record.view());
        self.push_encoded(&encoder.bytes);
    }

    /// Adds a record already encoded by [`put_side`].
    pub fn push_encoded(&mut self, record: &[u8]) {
        if !matches!(self.blocks.last(), Some(SidesBlock::Owned(_))) {
            self.blocks.push(SidesBlock::Owned(Vec::new()));
        }
        if let Some(SidesBlock::Owned(bytes)) = self.blocks.last_mut() {
            let length = u32::try_from(record.len()).unwrap_or(u32::MAX);
            bytes.extend_from_slice(&length.to_le_bytes());
            bytes.extend_from_slice(record);
            self.count += 1;
        }
    }

    /// Adds the records in `range` of `file`, laid out as the side file
    /// lays them out, to be checked against `check` when first used; the
    /// range is read only then (recovery's one pass), and must be
    /// `records` whole records ([`SideStore::put_chunk_at`] refuses it
    /// otherwise). `false` (nothing added) when the range is not in the
    /// file.
    pub fn push_mapped(
        &mut self,
        file: &MappedFile,
        range: std::ops::Range<usize>,
        records: usize,
        check: Option<SidesCheck>,
    ) -> bool {
        if range.start > range.end || range.end > file.bytes().len() {
            return false;
        }
        self.blocks.push(SidesBlock::Mapped(MappedBlock {
            file: file.clone(),
            range,
            records,
            check,
            index: None,
        }));
        self.count += records;
        true
    }

    /// Gives the last block added by [`Self::push_mapped`] its index: the
    /// range of the same file holding an index frame's payload, with its
    /// checksum (version 10; see `crate::persist::snapshot`).
    pub fn index_last(&mut self, index: SidesCheck) {
        if let Some(SidesBlock::Mapped(block)) = self.blocks.last_mut() {
            block.index = Some(index);
        }
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded records, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.blocks
            .iter()
            .flat_map(|block| Self::records_in(block.bytes()))
    }

    /// The records, in order, in chunks: mapped blocks as they are, owned
    /// ones cut at `max_bytes` (or one record, if larger).
    pub(super) fn chunks(&self, max_bytes: usize) -> Vec<SidesChunk<'_>> {
        let mut chunks = Vec::new();
        for block in &self.blocks {
            match block {
                SidesBlock::Owned(bytes) => {
                    chunks.extend(
                        Self::cut(bytes, max_bytes).map(|(bytes, records)| SidesChunk {
                            bytes,
                            records,
                            mapped: None,
                            check: None,
                            index: None,
                        }),
                    );
                }
                SidesBlock::Mapped(mapped) => chunks.push(SidesChunk {
                    bytes: block.bytes(),
                    records: mapped.records,
                    mapped: Some((&mapped.file, mapped.range.clone())),
                    check: mapped.check.as_ref(),
                    index: mapped.index.as_ref(),
                }),
            }
        }
        chunks
    }

    /// `bytes` in blocks of whole records of at most `max_bytes` (or one
    /// record, if larger), each with its count.
    fn cut(bytes: &[u8], max_bytes: usize) -> impl Iterator<Item = (&[u8], usize)> + '_ {
        let mut rest = bytes;
        std::iter::from_fn(move || {
            let mut end = 0;
            let mut records = 0;
            while let Some(length) = rest.get(end..end + 4) {
                let length = u32::from_le_bytes(length.try_into().ok()?) as usize;
                let next = end + 4 + length;
                if next > rest.len() || (records > 0 && next > max_bytes) {
                    break;
                }
                end = next;
                records += 1;
            }
            if records == 0 {
                return None;
            }
            let (block, after) = rest.split_at(end);
            rest = after;
            Some((block, records))
        })
    }

    /// The records of a block of them.
    pub(super) fn records_in(bytes: &[u8]) -> impl Iterator<Item = &[u8]> + '_ {
        let mut rest = bytes;
        std::iter::from_fn(move || {
            let (length, after) = rest.split_first_chunk::<4>()?;
            let length = u32::from_le_bytes(*length) as usize;
            let record = after.get(..length)?;
            rest = &after[length..];
            Some(record)
        })
    }

    /// The records decoded (those that do not decode are left out).
    pub fn decoded(&self) -> impl Iterator<Item = SideRecord> + '_ {
        self.iter().filter_map(|record| decode_record(record).ok())
    }
}

/// Side data held for a snapshot (see [`crate::engine::Engine::side_snapshot`]):
/// the nodes' record locations and the segments that hold them.
#[derive(Debug, Default)]
pub struct SideSnapshot {
    pub(super) entries: Vec<(u64, Fingerprint, SideLocation)>,
    pub(super) file: SideFileReader,
}

impl SideSnapshot {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Puts the entries in the arrival order of their nodes; `nodes` must
    /// be sorted by fingerprint. Entries without a node go last.
    pub fn sort_by_arrival(&mut self, nodes_by_fingerprint: &[NodeRecord]) {
        self.entries
            .sort_unstable_by_key(|(_, fingerprint, _)| *fingerprint);
        let mut nodes = nodes_by_fingerprint.iter().peekable();
        for (arrival, fingerprint, _) in &mut self.entries {
            while nodes
                .next_if(|node| node.fingerprint < *fingerprint)
                .is_some()
            {}
            *arrival = match nodes.peek() {
                Some(node) if node.fingerprint == *fingerprint => node.arrival,
                _ => u64::MAX,
            };
        }
        self.entries
            .sort_unstable_by_key(|(arrival, _, _)| *arrival);
    }

    /// Each entry's record, encoded as [`put_side`] writes it (an entry
    /// whose record cannot be read is skipped: it cannot happen while the
    /// snapshot holds its segments).
    pub fn for_each_encoded<'a>(&'a self, mut visit: impl FnMut(&'a [u8])) {
        // Entries are in the order their nodes arrived, about the order
        // their records were written.
        self.file.read_in_order();
        for (_, _, location) in &self.entries {
            if let Some(record) = self.file.record(*location) {
                visit(record);
            }
        }
        self.file.read_at_random();
    }
}
