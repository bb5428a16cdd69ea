//! A snapshot file mapped read-only, for recovery to read and the side
//! file to adopt.
//!
//! Motivation: a snapshot's side records are most of it; recovery takes
//! them where they are in the file (see [`MappedFile`]) instead of copying
//! them into segment files.
//!
//! Design: one shared read-only mapping (`Arc`), read as a byte slice,
//! with read-ahead asked for over the ranges recovery walks in order; or,
//! where recovery only needs to read a range once, read with `pread` and
//! then dropped from the page cache (see [`MappedFile::read_once`]).

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
    file: Arc<File>,
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
            file: Arc::new(file),
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

    /// Reads `range` into `buffer` with `pread`, not through the mapping,
    /// then asks the kernel to drop those pages from its cache: a read
    /// that nothing will repeat soon (recovery's walk over a snapshot's
    /// side records when the candidate indexes come from its pairs).
    /// Through the mapping, the walk left up to the whole side records
    /// (27 GB at 100 M nodes of the stream's texts) in the page cache and
    /// mapped in the process, for the kernel to reclaim page by page while
    /// the heap grew beside them.
    ///
    /// # Errors
    ///
    /// The range is not in the file, or reading it failed.
    pub fn read_once(
        &self,
        range: std::ops::Range<usize>,
        buffer: &mut Vec<u8>,
    ) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt as _;
        if range.start > range.end || range.end > self.map.len() {
            return Err(std::io::Error::other("a range past the file's end"));
        }
        buffer.clear();
        buffer.resize(range.len(), 0);
        self.file.read_exact_at(buffer, range.start as u64)?;
        self.drop_cached(range);
        Ok(())
    }

    /// Asks the kernel to start reading `range` into its cache, for a
    /// [`Self::read_once`] of it to come: the reads of a walk overlap its
    /// work on the range before (advice only).
    pub fn read_ahead(&self, range: std::ops::Range<usize>) {
        self.advise(range, libc::POSIX_FADV_WILLNEED);
    }

    /// Asks the kernel to drop `range`'s pages from its cache (advice
    /// only: pages mapped by a reader stay).
    fn drop_cached(&self, range: std::ops::Range<usize>) {
        self.advise(range, libc::POSIX_FADV_DONTNEED);
    }

    fn advise(&self, range: std::ops::Range<usize>, advice: libc::c_int) {
        use std::os::fd::AsRawFd as _;
        let (Ok(start), Ok(length)) = (
            libc::off_t::try_from(range.start),
            libc::off_t::try_from(range.len()),
        ) else {
            return;
        };
        // SAFETY: a plain system call on a file descriptor we own.
        let _ = unsafe { libc::posix_fadvise(self.file.as_raw_fd(), start, length, advice) };
    }

    pub(super) fn map(&self) -> &Arc<MmapRaw> {
        &self.map
    }

    /// The open file, for reads that do not go through the mapping.
    pub fn handle(&self) -> &File {
        &self.file
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping lives as long as `self`, and nothing writes
        // to it (read-only, see above).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.map.len()) }
    }
}
