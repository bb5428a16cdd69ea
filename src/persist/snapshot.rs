//! The snapshot file: the whole state as of one sequence number, written
//! once and read back at recovery.
//!
//! Motivation: a snapshot bounds recovery to itself plus the log after it;
//! at 10 M nodes it is 4 GB, most of it side records, so how it is read
//! decides recovery time.
//!
//! Design: magic, format version, then checksummed frames (header, nodes,
//! side records, keys, pending placements, end). Version 2 stores each side
//! record after its length, the side file's layout, and is read mapped: the
//! side records stay where they are, as ranges of the mapping the side file
//! adopts; everything else is decoded, the frames of nodes and keys (most
//! of the rest) on two threads once the end is found. Version 1 (records
//! bare) still loads, by copying them.
//!
//! Consequences: a snapshot must never change while mapped (nothing of
//! neardup's edits one: it is written under a temporary name, renamed, and
//! deleted).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::codec::{self, Decoder, Encoder, Frame};
use super::frame_table::{FrameHeader, FrameHeaders, FrameTableWriter};
use crate::candidates::captured::{CandidatePairs, CandidateTable, CandidateTexts};
use crate::engine::commonness::{CommonSentenceRecord, REMEMBERED_CLASSES};
use crate::engine::side_file::MappedFile;
use crate::engine::{EncodedSides, SidesCheck, record_exact_hashes};
use crate::forest::{ForestCounters, NodeRecord};
use crate::ledger::capture::SnapshotImage;
use crate::ledger::{DocumentKey, SentTo};
use crate::units::{Fingerprint, Millis, NodeId};

const SNAPSHOT_MAGIC: &[u8; 16] = b"NEARDUP\0SNAPSHOT";
/// Version of the snapshot format written; a reader reads this and every
/// earlier one and refuses newer ones. Version 2 stores each side record
/// after its length, as the side file lays records out, so recovery maps
/// them where they are instead of copying them (version 1: without).
/// Version 3 may hold long texts with their identifying weight (side record
/// tag 2), which a build that reads up to version 2 would misread. Version
/// 4 adds where pending placements were sent (frames `T`) and the learned
/// boilerplate table (frames `L`). Version 5 holds side records in their
/// compact layout (`crate::engine::side_record`: short-text tag 3, long-text
/// tag 4), which a build that reads up to 4 would misread; every snapshot
/// is written as version 5, since nearly every one holds such records.
/// Version 6 writes nodes with whether "within `k`" finds them (frames
/// `M`; the `N` frames before it hold nodes that it finds, all of them).
/// Version 7 writes each document key with its node's position among the
/// snapshot's nodes (frames `J`), not its fingerprint (frames `K`):
/// recovery numbers the nodes in that order, so a key's node number is
/// read where a lookup per key would cost seconds at 100 M keys. Version 8
/// holds side records whose letters are coded (`crate::text_code`:
/// short-text tag 5, long-text tag 6), which a build that reads up to 7
/// would refuse record by record. Version 9 adds the candidate indexes'
/// pairs (frames `C`, then one frame `I` of their counts), which recovery
/// builds the indexes from instead of the side records. Version 10 follows
/// each frame of side records with its index (frames `X`: each record's
/// length, node position and exact hashes), so that recovery leaves the
/// records unread.
pub const SNAPSHOT_FORMAT_VERSION: u32 = 10;

const SNAPSHOT_HEADER: u8 = b'H';
/// Nodes before version 6 (each within `k`).
const SNAPSHOT_NODES: u8 = b'N';
/// Nodes with their indexing (version 6).
const SNAPSHOT_INDEXED_NODES: u8 = b'M';
const SNAPSHOT_SIDES: u8 = b'S';
/// The index of the side records' frame before it (version 10).
const SNAPSHOT_SIDES_INDEX: u8 = b'X';
/// Keys with their node's fingerprint (before version 7).
const SNAPSHOT_KEYS: u8 = b'K';
/// Keys with their node's position among the nodes (version 7).
const SNAPSHOT_NUMBERED_KEYS: u8 = b'J';
const SNAPSHOT_PENDING: u8 = b'P';
const SNAPSHOT_SENT: u8 = b'T';
const SNAPSHOT_COMMON_SENTENCES: u8 = b'L';
/// Pairs of one candidate table (version 9).
const SNAPSHOT_CANDIDATE_PAIRS: u8 = b'C';
/// The candidate tables' counts, after their pairs (version 9).
const SNAPSHOT_CANDIDATES: u8 = b'I';
const PAIRS_PER_FRAME: usize = 1 << 16;
const SNAPSHOT_END: u8 = b'E';
const NODES_PER_FRAME: usize = 4096;
/// A frame of side records is cut once it holds this many bytes: each
/// becomes one read-only segment of the side file at recovery.
const SIDE_BYTES_PER_FRAME: usize = 8 << 20;
const KEYS_PER_FRAME: usize = 8192;

/// A snapshot as read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotState {
    /// Sequence number of the last effect it includes.
    pub last_seq: u64,
    pub created: Millis,
    pub settings_digest: String,
    pub counters: ForestCounters,
    pub nodes: Vec<NodeRecord>,
    pub sides: EncodedSides,
    /// Document keys with their node's fingerprint (snapshots before
    /// version 7, and states rebuilt from an index).
    pub keys: Vec<(DocumentKey, Fingerprint)>,
    /// Document keys with their node's position among `nodes` (version 7).
    pub numbered_keys: Vec<(DocumentKey, NodeId)>,
    /// Placements waiting for the cluster's answer when it was written.
    pub pending: Vec<(Fingerprint, u32)>,
    /// Where they were sent, oldest first per fingerprint.
    pub sent: Vec<(Fingerprint, SentTo)>,
    /// The learned boilerplate table (version 4).
    pub common_sentences: Vec<CommonSentenceRecord>,
    /// The candidate indexes' pairs (version 9; else they are rebuilt
    /// from the side records).
    pub candidates: Option<CandidatePairs>,
}

pub(super) fn write_snapshot(
    path: &Path,
    image: &SnapshotImage,
    last_seq: u64,
    now: Millis,
    settings_digest: &str,
) -> io::Result<u64> {
    let file = File::create(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut written = 0u64;
    let mut frame_table = FrameTableWriter::default();
    let mut frame = |out: &mut BufWriter<File>, payload: &[u8]| -> io::Result<()> {
        let mut framed = Vec::with_capacity(payload.len() + 8);
        codec::put_frame(&mut framed, payload);
        frame_table.note(20 + written, &framed);
        written += framed.len() as u64;
        out.write_all(&framed)
    };
    out.write_all(SNAPSHOT_MAGIC)?;
    out.write_all(&SNAPSHOT_FORMAT_VERSION.to_le_bytes())?;
    let mut header = Encoder::default();
    header
        .u8(SNAPSHOT_HEADER)
        .u64(last_seq)
        .i64(now)
        .str(settings_digest)
        .u64(image.counters().next_arrival)
        .u64(image.counters().expired_nodes)
        .u64(image.node_count() as u64)
        .u64(image.side_count() as u64)
        .u64(image.key_count() as u64);
    frame(&mut out, &header.bytes)?;
    let mut nodes = image.nodes().peekable();
    while nodes.peek().is_some() {
        let chunk: Vec<NodeRecord> = nodes.by_ref().take(NODES_PER_FRAME).collect();
        let mut encoder = Encoder::default();
        encoder.u8(SNAPSHOT_INDEXED_NODES).count(chunk.len());
        for node in &chunk {
            codec::put_node(&mut encoder, node);
        }
        frame(&mut out, &encoder.bytes)?;
    }
    // Records are copied as the side file holds them: the same layout,
    // each after its length; each frame of them is followed by its index
    // (version 10: frames `X`), which recovery reads instead of them.
    let mut chunk = SidesFrame::default();
    let mut result = Ok(());
    image.for_each_side_record(|position, record| {
        if result.is_err() {
            return;
        }
        if chunk.records > 0 && chunk.records_bytes.len() + 4 + record.len() > SIDE_BYTES_PER_FRAME
        {
            result = chunk.flush(&mut |payload| frame(&mut out, payload));
        }
        chunk.push(position, record);
    });
    result?;
    chunk.flush(&mut |payload| frame(&mut out, payload))?;
    let mut keys = image.keys_by_position().peekable();
    while keys.peek().is_some() {
        let chunk: Vec<(DocumentKey, NodeId)> = keys.by_ref().take(KEYS_PER_FRAME).collect();
        let mut encoder = Encoder::default();
        encoder.u8(SNAPSHOT_NUMBERED_KEYS).count(chunk.len());
        for (key, position) in chunk {
            encoder.u64(key.0).u32(position);
        }
        frame(&mut out, &encoder.bytes)?;
    }
    for chunk in image.pending.chunks(KEYS_PER_FRAME) {
        let mut encoder = Encoder::default();
        encoder.u8(SNAPSHOT_PENDING).count(chunk.len());
        for (fingerprint, count) in chunk {
            encoder.u64(*fingerprint).u32(*count);
        }
        frame(&mut out, &encoder.bytes)?;
    }
    for chunk in image.sent.chunks(KEYS_PER_FRAME) {
        let mut encoder = Encoder::default();
        encoder.u8(SNAPSHOT_SENT).count(chunk.len());
        for (fingerprint, sent_to) in chunk {
            encoder.u64(*fingerprint);
            codec::put_sent_to(&mut encoder, sent_to);
        }
        frame(&mut out, &encoder.bytes)?;
    }
    for chunk in image.common_sentences.chunks(KEYS_PER_FRAME) {
        let mut encoder = Encoder::default();
        encoder.u8(SNAPSHOT_COMMON_SENTENCES).count(chunk.len());
        for record in chunk {
            encoder.u64(record.key);
            for root in record.roots {
                encoder.u32(root);
            }
            encoder.u8(record.classes).i64(record.touched);
        }
        frame(&mut out, &encoder.bytes)?;
    }
    let mut counts = [[0u64; 2]; 3];
    for table in CandidateTable::ALL {
        for in_order in [true, false] {
            let mut pairs = image.candidate_pairs(table, in_order).peekable();
            while pairs.peek().is_some() {
                let chunk: Vec<(u32, u32)> = pairs.by_ref().take(PAIRS_PER_FRAME).collect();
                let mut encoder = Encoder::default();
                encoder
                    .u8(SNAPSHOT_CANDIDATE_PAIRS)
                    .u8(table as u8)
                    .u8(u8::from(in_order))
                    .count(chunk.len());
                for (key, position) in &chunk {
                    encoder.u32(*key).u32(*position);
                }
                counts[table as usize][usize::from(in_order)] += chunk.len() as u64;
                frame(&mut out, &encoder.bytes)?;
            }
        }
    }
    let texts = image.candidate_texts();
    let mut candidates = Encoder::default();
    candidates
        .u8(SNAPSHOT_CANDIDATES)
        .u8(u8::from(texts.short_text_search))
        .u64(texts.short as u64)
        .u64(texts.long as u64);
    for table in CandidateTable::ALL {
        let [xor, multiplier] = image.candidate_mix(table);
        let [ahead, in_order] = counts[table as usize];
        candidates.u32(xor).u32(multiplier).u64(in_order).u64(ahead);
    }
    frame(&mut out, &candidates.bytes)?;
    let mut end = Encoder::default();
    end.u8(SNAPSHOT_END).u64(last_seq);
    frame(&mut out, &end.bytes)?;
    let table = frame_table.finish(20 + written);
    out.write_all(&table)?;
    written += table.len() as u64;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(written + 20)
}

/// A frame of side records being filled, and its index: each record's
/// length, its node's position among the snapshot's nodes and its exact
/// hashes, which is all recovery reads of a record (the records
/// themselves are adopted where they are, their checksum checked after
/// recovery: `crate::engine::side_check`).
#[derive(Default)]
struct SidesFrame {
    records: usize,
    records_bytes: Vec<u8>,
    index: Encoder,
    exact_hashes: Vec<u64>,
}

impl SidesFrame {
    fn push(&mut self, position: u32, record: &[u8]) {
        let length = u32::try_from(record.len()).unwrap_or(u32::MAX);
        self.records_bytes.extend_from_slice(&length.to_le_bytes());
        self.records_bytes.extend_from_slice(record);
        if !record_exact_hashes(record, &mut self.exact_hashes) {
            self.exact_hashes.clear();
        }
        self.index
            .u32(length)
            .u32(position)
            .u64s(&self.exact_hashes);
        self.records += 1;
    }

    /// Writes the frame of records, then its index, through `frame`.
    fn flush(&mut self, frame: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        if self.records == 0 {
            return Ok(());
        }
        let mut encoder = Encoder::default();
        encoder.u8(SNAPSHOT_SIDES).count(self.records);
        encoder.bytes.extend_from_slice(&self.records_bytes);
        frame(&encoder.bytes)?;
        encoder.bytes.clear();
        encoder.u8(SNAPSHOT_SIDES_INDEX).count(self.records);
        encoder.bytes.extend_from_slice(&self.index.bytes);
        frame(&encoder.bytes)?;
        self.records = 0;
        self.records_bytes.clear();
        self.index.bytes.clear();
        Ok(())
    }
}

/// When the frame at `offset` holds side records (version 2 on), adds
/// them to `sides` unread, with the checksum their frame gives, and
/// returns the offset after it; `None` for any other frame (or none).
///
/// Motivation: the side records are most of a snapshot, and recovery
/// reads each once, checking its frame's checksum then (see
/// [`crate::engine::SidesCheck`]): reading them here as well was a second
/// pass over the disk when the file is larger than the page cache. Only
/// its header is read ([`FrameHeader`]).
fn skim_side_frame(
    header: Option<&FrameHeader>,
    headers: &mut FrameHeaders<'_>,
    file: &MappedFile,
    offset: usize,
    sides: &mut EncodedSides,
) -> Result<Option<usize>, String> {
    let Some(header) = header.filter(|header| header.kind() == SNAPSHOT_SIDES) else {
        return Ok(None);
    };
    let (length, expected, records) = (header.length(), header.field(4), header.field(9) as usize);
    let body_start = offset + 8;
    let body_end = body_start.saturating_add(length);
    if !(5..=codec::MAX_FRAME).contains(&length) || body_end > file.bytes().len() {
        return Ok(None);
    }
    if records > length - 5 {
        return Err("side records do not match their count".to_string());
    }
    let check = SidesCheck {
        payload: body_start..body_end,
        expected,
        checksum: codec::checksum,
    };
    if !sides.push_mapped(file, body_start + 5..body_end, records, Some(check)) {
        return Err("side records do not match their count".to_string());
    }
    // Its index, when the next frame is one (version 10): kept unread too,
    // and checked when recovery reads it.
    let Some(index) = headers
        .at(body_end)
        .filter(|next| next.kind() == SNAPSHOT_SIDES_INDEX && next.length() >= 5)
    else {
        return Ok(Some(body_end));
    };
    let index_start = body_end + 8;
    let index_end = index_start.saturating_add(index.length());
    if index.length() > codec::MAX_FRAME
        || index_end > file.bytes().len()
        || index.field(9) as usize != records
    {
        return Err("the side records' index does not match them".to_string());
    }
    sides.index_last(SidesCheck {
        payload: index_start..index_end,
        expected: index.field(4),
        checksum: codec::checksum,
    });
    Ok(Some(index_end))
}

/// The node records, document keys and candidate pairs of a snapshot,
/// in file order.
#[derive(Debug, Default)]
struct NodesAndKeys {
    nodes: Vec<NodeRecord>,
    keys: Vec<(DocumentKey, Fingerprint)>,
    numbered_keys: Vec<(DocumentKey, NodeId)>,
    pairs: CandidatePairs,
}

impl NodesAndKeys {
    /// `more` after these.
    fn append(&mut self, more: NodesAndKeys) {
        append(&mut self.nodes, more.nodes);
        append(&mut self.keys, more.keys);
        append(&mut self.numbered_keys, more.numbered_keys);
        self.pairs.append(more.pairs);
    }
}

/// What a snapshot's candidate frame says of one table: its mix, and
/// how many pairs the copier took and how many were copied ahead of it.
#[derive(Debug, Default, Clone, Copy)]
struct CandidateTableEnd {
    mix: [u32; 2],
    counts: (u64, u64),
}

/// A frame of nodes, keys or candidate pairs, found by its header and
/// decoded later.
#[derive(Debug, Clone, Copy)]
struct BulkFrame {
    offset: usize,
    length: usize,
}

/// When the frame at `offset` holds nodes, keys or candidate pairs
/// (`with_pairs`: a snapshot of version 9 or later) and fits in the file:
/// notes it in `frames` (its payload unread: its checksum is checked when
/// it is decoded) and gives the offset after it. Anything else is left to
/// the reader, which decodes it or names its damage.
fn defer_bulk_frame(
    header: Option<&FrameHeader>,
    with_pairs: bool,
    file_length: usize,
    offset: usize,
    frames: &mut Vec<BulkFrame>,
) -> Option<usize> {
    let header = header.filter(|header| match header.kind() {
        SNAPSHOT_NODES | SNAPSHOT_INDEXED_NODES | SNAPSHOT_KEYS | SNAPSHOT_NUMBERED_KEYS => true,
        SNAPSHOT_CANDIDATE_PAIRS => with_pairs,
        _ => false,
    })?;
    let length = header.length();
    let end = offset.checked_add(8 + length)?;
    if length > codec::MAX_FRAME || end > file_length {
        return None;
    }
    frames.push(BulkFrame { offset, length });
    Some(end)
}

/// The nodes, keys and candidate pairs of `frames`, in their order, each
/// frame checked against its checksum: decoded on two threads (the frames
/// cut in two halves by bytes), where one thread decoding all of them was
/// 11 s of one core at 100 M nodes before anything else could start (the
/// pairs, about 50 B a node, were a serial second more at 10 M). A pair
/// naming a position at or past `node_count` is damage. The first damage
/// in file order is the error.
fn decode_bulk_frames(
    data: &[u8],
    frames: &[BulkFrame],
    node_count: u64,
) -> Result<NodesAndKeys, String> {
    let total: usize = frames.iter().map(|frame| frame.length).sum();
    let mut running = 0;
    let split = frames
        .iter()
        .position(|frame| {
            running += frame.length;
            running > total / 2
        })
        .map_or(frames.len(), |at| at + 1);
    let (first, second) = frames.split_at(split);
    let (first, second) = std::thread::scope(|scope| {
        let second = scope.spawn(|| decode_frames(data, second, node_count));
        (decode_frames(data, first, node_count), second.join())
    });
    let mut decoded = first?;
    decoded.append(second.map_err(|_| "a thread decoding the snapshot failed".to_string())??);
    Ok(decoded)
}

/// `more` after `into`'s values; taken whole, not copied, when `into` has
/// none (most often: all node frames fall in one half).
fn append<T>(into: &mut Vec<T>, mut more: Vec<T>) {
    if into.is_empty() {
        std::mem::swap(into, &mut more);
    } else {
        into.append(&mut more);
    }
}

/// [`decode_bulk_frames`] of one thread.
fn decode_frames(
    data: &[u8],
    frames: &[BulkFrame],
    node_count: u64,
) -> Result<NodesAndKeys, String> {
    let mut decoded = NodesAndKeys::default();
    for frame in frames {
        let body = match codec::read_frame(data, frame.offset) {
            Frame::Valid(body, _) => body,
            Frame::End => return Err("snapshot ends without its end record".to_string()),
            Frame::Damaged(reason) => return Err(reason.to_string()),
        };
        let mut decoder = Decoder::new(body);
        decode_bulk_frame(&mut decoder, &mut decoded, node_count)?;
    }
    Ok(decoded)
}

/// One frame of nodes, keys or candidate pairs, from its kind on.
fn decode_bulk_frame(
    decoder: &mut Decoder<'_>,
    into: &mut NodesAndKeys,
    node_count: u64,
) -> Result<(), String> {
    match decoder.u8().map_err(|error| error.to_string())? {
        kind @ (SNAPSHOT_NODES | SNAPSHOT_INDEXED_NODES) => {
            decode_nodes(decoder, &mut into.nodes, kind == SNAPSHOT_INDEXED_NODES)
        }
        SNAPSHOT_NUMBERED_KEYS => decode_keys(decoder, &mut into.numbered_keys, Decoder::u32),
        SNAPSHOT_CANDIDATE_PAIRS => decode_pairs(decoder, &mut into.pairs, node_count),
        _ => decode_keys(decoder, &mut into.keys, Decoder::u64),
    }
}

/// A frame of one candidate table's pairs, after its kind: the table,
/// whether the capture's copier took them, then each folded key and its
/// node's position among the snapshot's nodes.
fn decode_pairs(
    decoder: &mut Decoder<'_>,
    pairs: &mut CandidatePairs,
    node_count: u64,
) -> Result<(), String> {
    let malformed = |error: codec::DecodeError| error.to_string();
    let table = CandidateTable::from_number(decoder.u8().map_err(malformed)?)
        .ok_or("unknown candidate table")?;
    let in_order = decoder.u8().map_err(malformed)? != 0;
    let count = decoder.count().map_err(malformed)?;
    let bytes = decoder
        .bytes(count.checked_mul(8).ok_or("length overflow")?)
        .map_err(malformed)?;
    pairs.start_part(table, in_order, count);
    for pair in bytes.chunks_exact(8) {
        let key = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
        let position = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
        if u64::from(position) >= node_count {
            return Err("a candidate pair names no node".to_string());
        }
        pairs.push(table, in_order, key, position);
    }
    Ok(())
}

/// A frame of nodes' records, after its kind.
fn decode_nodes(
    decoder: &mut Decoder<'_>,
    nodes: &mut Vec<NodeRecord>,
    with_indexing: bool,
) -> Result<(), String> {
    let malformed = |error: codec::DecodeError| error.to_string();
    for _ in 0..decoder.count().map_err(malformed)? {
        nodes.push(codec::get_node(decoder, with_indexing).map_err(malformed)?);
    }
    Ok(())
}

/// A frame of document keys, after its kind: each key and what names its
/// node (`node`: a fingerprint before version 7, a position from it).
fn decode_keys<'a, T>(
    decoder: &mut Decoder<'a>,
    keys: &mut Vec<(DocumentKey, T)>,
    node: impl Fn(&mut Decoder<'a>) -> Result<T, codec::DecodeError>,
) -> Result<(), String> {
    let malformed = |error: codec::DecodeError| error.to_string();
    for _ in 0..decoder.count().map_err(malformed)? {
        let key = DocumentKey(decoder.u64().map_err(malformed)?);
        keys.push((key, node(decoder).map_err(malformed)?));
    }
    Ok(())
}

/// Reads one snapshot file, checking every frame but those of side
/// records (which recovery checks as it reads them) and the totals. The file
/// is mapped: the side records of a version-2 snapshot stay where they
/// are (in [`EncodedSides`] as ranges of the mapping), everything else is
/// decoded.
pub fn read_snapshot(path: &Path) -> Result<SnapshotState, String> {
    let file = MappedFile::open(path).map_err(|error| match error.kind() {
        io::ErrorKind::InvalidInput => "file too short".to_string(),
        _ => error.to_string(),
    })?;
    let handle = File::open(path).map_err(|error| error.to_string())?;
    let data = file.bytes();
    let mut headers = FrameHeaders::new(&handle, data);
    let Some((magic, version)) = data.get(..20).map(|start| start.split_at(16)) else {
        return Err("file too short".to_string());
    };
    if magic != SNAPSHOT_MAGIC {
        return Err("not a neardup snapshot".to_string());
    }
    let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
    if !(1..=SNAPSHOT_FORMAT_VERSION).contains(&version) {
        return Err(format!(
            "format version {version}, this build reads 1 to {SNAPSHOT_FORMAT_VERSION}"
        ));
    }
    let mut state = SnapshotState::default();
    let mut expected = (0u64, 0u64, 0u64);
    let mut saw_header = false;
    let mut offset = 20;
    // Frames of nodes and keys, decoded on two threads once the end is
    // found (`decode_bulk_frames`).
    let mut bulk_frames = Vec::new();
    let mut bulk_frames_inline = NodesAndKeys::default();
    // The candidate indexes' texts, mixes and counts (the pairs are
    // decoded with the bulk frames; their counts are checked then).
    let mut candidates: Option<(CandidateTexts, [CandidateTableEnd; 3])> = None;
    loop {
        let header = headers.at(offset);
        if version >= 2
            && let Some(next) = skim_side_frame(
                header.as_ref(),
                &mut headers,
                &file,
                offset,
                &mut state.sides,
            )?
        {
            offset = next;
            continue;
        }
        if let Some(next) = defer_bulk_frame(
            header.as_ref(),
            version >= 9,
            data.len(),
            offset,
            &mut bulk_frames,
        ) {
            offset = next;
            continue;
        }
        let (body, next) = match codec::read_frame(data, offset) {
            Frame::Valid(body, next) => (body, next),
            Frame::End | Frame::Damaged("frame header cut short") => {
                return Err("snapshot ends without its end record".to_string());
            }
            Frame::Damaged(reason) => return Err(reason.to_string()),
        };
        offset = next;
        let mut decoder = Decoder::new(body);
        let malformed = |error: codec::DecodeError| error.to_string();
        match decoder.u8().map_err(malformed)? {
            SNAPSHOT_HEADER => {
                state.last_seq = decoder.u64().map_err(malformed)?;
                state.created = decoder.i64().map_err(malformed)?;
                state.settings_digest = decoder.str().map_err(malformed)?.to_string();
                state.counters = ForestCounters {
                    next_arrival: decoder.u64().map_err(malformed)?,
                    expired_nodes: decoder.u64().map_err(malformed)?,
                };
                expected = (
                    decoder.u64().map_err(malformed)?,
                    decoder.u64().map_err(malformed)?,
                    decoder.u64().map_err(malformed)?,
                );
                saw_header = true;
            }
            SNAPSHOT_NODES | SNAPSHOT_INDEXED_NODES | SNAPSHOT_KEYS | SNAPSHOT_NUMBERED_KEYS => {
                // A bulk frame too long to defer: its damage is named here.
                let mut decoded = NodesAndKeys::default();
                decode_bulk_frame(&mut Decoder::new(body), &mut decoded, expected.0)?;
                bulk_frames_inline.append(decoded);
            }
            SNAPSHOT_CANDIDATE_PAIRS if version >= 9 => {
                // As a bulk frame too long to defer.
                let mut decoded = NodesAndKeys::default();
                decode_bulk_frame(&mut Decoder::new(body), &mut decoded, expected.0)?;
                bulk_frames_inline.append(decoded);
            }
            SNAPSHOT_SIDES if version == 1 => {
                for _ in 0..decoder.count().map_err(malformed)? {
                    let start = decoder.position();
                    codec::skip_side(&mut decoder).map_err(malformed)?;
                    state.sides.push_encoded(&body[start..decoder.position()]);
                }
            }
            SNAPSHOT_PENDING => {
                for _ in 0..decoder.count().map_err(malformed)? {
                    let fingerprint = decoder.u64().map_err(malformed)?;
                    state
                        .pending
                        .push((fingerprint, decoder.u32().map_err(malformed)?));
                }
            }
            SNAPSHOT_SENT if version >= 4 => {
                for _ in 0..decoder.count().map_err(malformed)? {
                    let fingerprint = decoder.u64().map_err(malformed)?;
                    let sent_to = codec::get_sent_to(&mut decoder).map_err(malformed)?;
                    state.sent.push((fingerprint, sent_to));
                }
            }
            SNAPSHOT_COMMON_SENTENCES if version >= 4 => {
                for _ in 0..decoder.count().map_err(malformed)? {
                    let key = decoder.u64().map_err(malformed)?;
                    let mut roots = [0u32; REMEMBERED_CLASSES];
                    for root in &mut roots {
                        *root = decoder.u32().map_err(malformed)?;
                    }
                    state.common_sentences.push(CommonSentenceRecord {
                        key,
                        roots,
                        classes: decoder.u8().map_err(malformed)?,
                        touched: decoder.i64().map_err(malformed)?,
                    });
                }
            }
            SNAPSHOT_CANDIDATES if version >= 9 => {
                let texts = CandidateTexts {
                    short_text_search: decoder.u8().map_err(malformed)? != 0,
                    short: decoder.u64().map_err(malformed)? as usize,
                    long: decoder.u64().map_err(malformed)? as usize,
                };
                let mut tables = [CandidateTableEnd::default(); 3];
                for table in &mut tables {
                    table.mix = [
                        decoder.u32().map_err(malformed)?,
                        decoder.u32().map_err(malformed)?,
                    ];
                    table.counts = (
                        decoder.u64().map_err(malformed)?,
                        decoder.u64().map_err(malformed)?,
                    );
                }
                candidates = Some((texts, tables));
            }
            SNAPSHOT_END => {
                let last_seq = decoder.u64().map_err(malformed)?;
                if version >= 9 && candidates.is_none() {
                    return Err("snapshot ends without its candidate pairs".to_string());
                }
                let mut decoded = bulk_frames_inline;
                decoded.append(decode_bulk_frames(data, &bulk_frames, expected.0)?);
                let NodesAndKeys {
                    nodes,
                    keys,
                    numbered_keys,
                    mut pairs,
                } = decoded;
                if let Some((texts, tables)) = candidates {
                    pairs.texts = texts;
                    for (table, end) in pairs.tables.iter_mut().zip(tables) {
                        table.mix = end.mix;
                        if end.counts != (table.in_order.len() as u64, table.ahead.len() as u64) {
                            return Err("candidate pairs do not match their count".to_string());
                        }
                    }
                    state.candidates = Some(pairs);
                }
                (state.nodes, state.keys, state.numbered_keys) = (nodes, keys, numbered_keys);
                let counts = (
                    state.nodes.len() as u64,
                    state.sides.len() as u64,
                    (state.keys.len() + state.numbered_keys.len()) as u64,
                );
                if !saw_header || last_seq != state.last_seq || counts != expected {
                    return Err("totals do not match the header".to_string());
                }
                let node_count = state.nodes.len();
                if state
                    .numbered_keys
                    .iter()
                    .any(|&(_, position)| position as usize >= node_count)
                {
                    return Err("a document key names no node".to_string());
                }
                return Ok(state);
            }
            _ => return Err("unknown record".to_string()),
        }
    }
}
