//! A table of a snapshot's frame headers, after its end record.
//!
//! Motivation: a reader learns where each frame starts from the header of
//! the frame before it. At 100 M nodes a snapshot has about 52 000 frames
//! spread over 38 GB (the side records' frames, most of the file, are
//! skipped unread), and that walk read one header at a time from the
//! disk: 9 s of recovery's 80 spent on reads of a few kilobytes each, one
//! waiting on the other, before anything was decoded.
//!
//! Design: the writer notes every frame's first [`HEADER_BYTES`] bytes and
//! where it starts; after the end record it writes them as one frame of
//! their own (checksummed like every frame), then a trailer: the table's
//! offset and [`TRAILER_MAGIC`]. A reader finds the trailer in the file's
//! last bytes and takes headers from the table, reading from the file
//! only the headers it does not list. A table that is missing, cut short
//! or fails its checksum is ignored: the walk reads the headers as before.
//! Readers that stop at the end record (every build since version 1)
//! never see the table, so the format version does not change.

use std::fs::File;

use super::codec::{self, Frame};

/// A frame's first bytes: length, checksum, its kind and (for frames of
/// records) their count.
pub(super) const HEADER_BYTES: usize = 13;

/// The last bytes of a snapshot that has a table of its frames.
const TRAILER_MAGIC: &[u8; 8] = b"NDFRAMES";

/// The table's offset, then [`TRAILER_MAGIC`].
const TRAILER_BYTES: usize = 16;

/// The table's kind byte (a frame no reader decodes as a record).
const FRAME_TABLE: u8 = b'F';

/// A frame's first bytes: length, checksum, its kind and (for frames of
/// records) their count. Read with `pread`, not through the mapping,
/// whose fault would read the megabytes around it; once per frame, when
/// the file has no table of them.
pub(super) struct FrameHeader(pub(super) [u8; HEADER_BYTES]);

impl FrameHeader {
    pub(super) fn field(&self, at: usize) -> u32 {
        u32::from_le_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]])
    }

    pub(super) fn length(&self) -> usize {
        self.field(0) as usize
    }

    pub(super) fn kind(&self) -> u8 {
        self.0[8]
    }
}

/// The headers of the frames written so far, and where each starts.
#[derive(Default)]
pub(super) struct FrameTableWriter {
    entries: Vec<u8>,
    count: usize,
}

impl FrameTableWriter {
    /// Notes the frame `framed` (header and payload), written at `offset`.
    pub(super) fn note(&mut self, offset: u64, framed: &[u8]) {
        let mut header = [0u8; HEADER_BYTES];
        let known = framed.len().min(HEADER_BYTES);
        header[..known].copy_from_slice(&framed[..known]);
        self.entries.extend_from_slice(&offset.to_le_bytes());
        self.entries.extend_from_slice(&header);
        self.count += 1;
    }

    /// The table as a frame, then the trailer, to be written at `offset`
    /// (right after the end record).
    pub(super) fn finish(self, offset: u64) -> Vec<u8> {
        let mut payload = Vec::with_capacity(5 + self.entries.len());
        payload.push(FRAME_TABLE);
        payload.extend_from_slice(&u32::try_from(self.count).unwrap_or(u32::MAX).to_le_bytes());
        payload.extend_from_slice(&self.entries);
        let mut written = Vec::with_capacity(payload.len() + 8 + TRAILER_BYTES);
        codec::put_frame(&mut written, &payload);
        written.extend_from_slice(&offset.to_le_bytes());
        written.extend_from_slice(TRAILER_MAGIC);
        written
    }
}

/// Where a reader gets frame headers: the file's table when it has a sound
/// one, else the file.
pub(super) struct FrameHeaders<'a> {
    handle: &'a File,
    /// Offsets and headers, ascending by offset (as written).
    table: Vec<(u64, [u8; HEADER_BYTES])>,
    /// Headers read from the file, not found in the table.
    reads: usize,
}

impl<'a> FrameHeaders<'a> {
    /// The headers of the snapshot `data` (mapped), whose file is `handle`.
    pub(super) fn new(handle: &'a File, data: &[u8]) -> Self {
        FrameHeaders {
            handle,
            table: read_table(data).unwrap_or_default(),
            reads: 0,
        }
    }

    /// The header of the frame at `offset`; `None` where fewer than its
    /// bytes are left in the file (the reader then names the frame's
    /// damage, or finds the end).
    pub(super) fn at(&mut self, offset: usize) -> Option<FrameHeader> {
        let wanted = offset as u64;
        if let Ok(found) = self.table.binary_search_by_key(&wanted, |&(at, _)| at) {
            return Some(FrameHeader(self.table[found].1));
        }
        use std::os::unix::fs::FileExt;
        self.reads += 1;
        let mut bytes = [0u8; HEADER_BYTES];
        self.handle.read_exact_at(&mut bytes, wanted).ok()?;
        Some(FrameHeader(bytes))
    }

    /// How many headers were read from the file.
    #[cfg(test)]
    pub(super) fn reads(&self) -> usize {
        self.reads
    }
}

/// The table at the end of `data`, when it ends with a trailer naming a
/// sound one that ends where the trailer starts.
fn read_table(data: &[u8]) -> Option<Vec<(u64, [u8; HEADER_BYTES])>> {
    let trailer_start = data.len().checked_sub(TRAILER_BYTES)?;
    let trailer = &data[trailer_start..];
    if &trailer[8..] != TRAILER_MAGIC {
        return None;
    }
    let offset = usize::try_from(u64::from_le_bytes(trailer[..8].try_into().ok()?)).ok()?;
    let Frame::Valid(payload, next) = codec::read_frame(&data[..trailer_start], offset) else {
        return None;
    };
    let (&kind, rest) = payload.split_first()?;
    if kind != FRAME_TABLE || next != trailer_start || rest.len() < 4 {
        return None;
    }
    let count = u32::from_le_bytes(rest[..4].try_into().ok()?) as usize;
    let entries = &rest[4..];
    if entries.len() != count.checked_mul(8 + HEADER_BYTES)? {
        return None;
    }
    let table: Vec<(u64, [u8; HEADER_BYTES])> = entries
        .chunks_exact(8 + HEADER_BYTES)
        .filter_map(|entry| {
            let (at, header) = entry.split_at(8);
            Some((
                u64::from_le_bytes(at.try_into().ok()?),
                header.try_into().ok()?,
            ))
        })
        .collect();
    // Ascending, and every frame before the table.
    let ordered = table.windows(2).all(|pair| pair[0].0 < pair[1].0)
        && table.last().is_none_or(|&(at, _)| at < offset as u64);
    ordered.then_some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of three frames, with a table of them or without.
    fn frames_file(with_table: bool) -> (TempPath, Vec<u64>) {
        let mut bytes = b"NEARDUP\0SNAPSHOT\x0a\0\0\0".to_vec();
        let mut table = FrameTableWriter::default();
        let mut offsets = Vec::new();
        for (kind, count) in [(b'M', 3u32), (b'S', 40), (b'E', 0)] {
            let mut payload = vec![kind];
            payload.extend_from_slice(&count.to_le_bytes());
            payload.extend(std::iter::repeat_n(7u8, 100));
            let mut framed = Vec::new();
            codec::put_frame(&mut framed, &payload);
            offsets.push(bytes.len() as u64);
            table.note(bytes.len() as u64, &framed);
            bytes.extend_from_slice(&framed);
        }
        if with_table {
            let at = bytes.len() as u64;
            bytes.extend_from_slice(&table.finish(at));
        }
        (TempPath::with(&bytes), offsets)
    }

    /// A file of `bytes` in the temporary directory, removed when dropped.
    struct TempPath(std::path::PathBuf);

    impl TempPath {
        fn with(bytes: &[u8]) -> Self {
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let number = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = std::env::temp_dir().join(format!(
                "neardup-frame-table-{}-{number}",
                std::process::id()
            ));
            std::fs::write(&path, bytes).expect("write");
            TempPath(path)
        }
    }

    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn headers_of(path: &std::path::Path, offsets: &[u64]) -> (Vec<(u8, u32)>, usize) {
        let data = std::fs::read(path).expect("read");
        let handle = File::open(path).expect("open");
        let mut headers = FrameHeaders::new(&handle, &data);
        let found = offsets
            .iter()
            .map(|&offset| {
                let header = headers.at(offset as usize).expect("a header");
                (header.kind(), header.field(9))
            })
            .collect();
        (found, headers.reads())
    }

    /// With a table, every header comes from it and none is read from the
    /// file; they are the headers the file holds.
    #[test]
    fn headers_come_from_the_table_without_a_read_of_the_file() {
        let (with, offsets) = frames_file(true);
        let (without, _) = frames_file(false);
        let (from_table, reads) = headers_of(&with.0, &offsets);
        assert_eq!(reads, 0);
        let (from_file, reads) = headers_of(&without.0, &offsets);
        assert_eq!(reads, offsets.len());
        assert_eq!(from_table, from_file);
        assert_eq!(from_table, vec![(b'M', 3), (b'S', 40), (b'E', 0)]);
    }

    /// A table that fails its checksum, or one cut short, is not used:
    /// the headers are read from the file.
    #[test]
    fn a_damaged_or_cut_table_is_ignored() {
        let (with, offsets) = frames_file(true);
        let mut bytes = std::fs::read(&with.0).expect("read");
        let table_at = bytes.len() - 30;
        bytes[table_at] ^= 0x40;
        let damaged = TempPath::with(&bytes);
        let (found, reads) = headers_of(&damaged.0, &offsets);
        assert_eq!((found.len(), reads), (3, 3));
        bytes[table_at] ^= 0x40;
        bytes.truncate(bytes.len() - 1);
        let cut = TempPath::with(&bytes);
        let (found, reads) = headers_of(&cut.0, &offsets);
        assert_eq!((found.len(), reads), (3, 3));
    }
}
