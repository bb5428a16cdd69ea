//! A side-file segment's file: created, reserved on disk, mapped with
//! random-read advice and unlinked at once.
//!
//! Motivation: a segment is a cache of records the log and snapshots hold,
//! so nothing of it may outlive the process, a full disk must show when a
//! segment is made and not as a fault on a write through the mapping, and
//! a record read from disk should cost its page, not the device's
//! read-around.
//!
//! Design: the file is created under a unique name, reserved with
//! `posix_fallocate`, written (for a segment made whole, at recovery),
//! mapped, advised `MADV_RANDOM` and unlinked; the mapping keeps it.
//!
//! Consequences: a crash leaves nothing behind; on a file system without
//! `posix_fallocate` support the segment goes to anonymous memory (the
//! caller's fallback); a pass over the records in order (a snapshot's)
//! must ask for read-ahead itself.

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Advice, MmapOptions, MmapRaw};

/// Creates, reserves, maps and unlinks a file of `size` bytes.
pub(crate) fn map_new_file(directory: &Path, size: usize) -> std::io::Result<MmapRaw> {
    map_new_file_with(directory, size, |_| Ok(()))
}

/// Creates, reserves and unlinks a file holding `contents`, and maps it.
pub(super) fn map_new_file_holding(directory: &Path, contents: &[u8]) -> std::io::Result<MmapRaw> {
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
    let (file, path) = create_file(directory)?;
    let mapped = reserve(&file, size)
        .and_then(|()| fill(&file))
        .and_then(|()| MmapOptions::new().len(size).map_raw(&file));
    let unlinked = std::fs::remove_file(&path);
    let map = mapped?;
    unlinked?;
    // Records are read one at a time, wherever their node is: a page
    // fault reads that page, not the kernel's read-around (the device's
    // readahead, 8 MiB here), which on a side file mostly on disk read
    // hundreds of gigabytes for 100 M nodes (issue 49).
    let _ = map.advise(Advice::Random);
    Ok(map)
}

/// A file of `size` bytes made in `directory`, mapped and unlinked, with
/// no disk reserved yet: its handle is kept so that each part is reserved
/// ([`reserve_range`]) before it is written through the mapping (an image
/// written a slice at a time, where reserving all of it at once would be a
/// pause of its own).
pub(crate) fn map_new_sparse_file(
    directory: &Path,
    size: usize,
) -> std::io::Result<(File, MmapRaw)> {
    let (file, path) = create_file(directory)?;
    let mapped = file
        .set_len(size as u64)
        .and_then(|()| MmapOptions::new().len(size).map_raw(&file));
    let unlinked = std::fs::remove_file(&path);
    let map = mapped?;
    unlinked?;
    Ok((file, map))
}

/// A new file of a unique name in `directory`, for reading and writing.
fn create_file(directory: &Path) -> std::io::Result<(File, std::path::PathBuf)> {
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
    Ok((file, path))
}

/// Reserves `size` bytes of disk for `file`, so that writing through the
/// mapping can never meet a full disk.
fn reserve(file: &File, size: usize) -> std::io::Result<()> {
    reserve_range(file, 0, size)
}

/// Reserves the bytes `offset..offset + len` of `file` on disk.
pub(crate) fn reserve_range(file: &File, offset: usize, len: usize) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let start = libc::off_t::try_from(offset).map_err(std::io::Error::other)?;
    let length = libc::off_t::try_from(len).map_err(std::io::Error::other)?;
    // SAFETY: a plain system call on a file descriptor we own.
    let result = unsafe { libc::posix_fallocate(file.as_raw_fd(), start, length) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(result))
    }
}
