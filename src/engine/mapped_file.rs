//! A snapshot file mapped read-only, for recovery to read and the side
//! file to adopt.
//!
//! Motivation: a snapshot's side records are most of it; recovery takes
//! them where they are in the file (see [`MappedFile`]) instead of copying
//! them into segment files.
//!
//! Design: one shared read-only mapping (`Arc`), read as a byte slice,
//! with read-ahead asked for over the ranges recovery walks in order.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use memmap2::{Advice, MmapOptions, MmapRaw};

/// Advice starts on a multiple of this: every page size in use (4, 16 or
/// 64 KiB) divides it, as `madvise` wants of its address.
pub(super) const ADVICE_ALIGNMENT: usize = 64 << 10;

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

    /// Asks the kernel to read ahead through `range` (recovery's one pass
    /// over a snapshot's side records); advice only, as
    /// [`super::side_file::SideFileReader::read_in_order`].
    pub fn read_in_order(&self, range: std::ops::Range<usize>) {
        if range.start < range.end && range.end <= self.map.len() {
            let page_start = range.start & !(ADVICE_ALIGNMENT - 1);
            let _ = self
                .map
                .advise_range(Advice::Sequential, page_start, range.end - page_start);
        }
    }

    pub(super) fn map(&self) -> &Arc<MmapRaw> {
        &self.map
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping lives as long as `self`, and nothing writes
        // to it (read-only, see above).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.map.len()) }
    }
}
