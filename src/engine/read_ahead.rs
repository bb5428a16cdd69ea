//! Reading a placement's candidate records from the disk together, once
//! the side records no longer fit in the page cache.
//!
//! Motivation: at 100 M nodes the side records are 27 GB beside an 11 GB
//! heap on a 23 GiB machine, so most of a placement's candidates (a dozen
//! short ones and as many long ones, each with its class root) are read
//! from the disk, one page fault at a time: each waits for the one before,
//! and `place` took 244 µs at the median and 3.1 ms at p99. Asked for
//! together, the reads overlap in the device's queue.
//!
//! Design: a search takes its first candidates from its ranking and asks
//! the kernel to read each one's first page (`MADV_WILLNEED`) when
//! `mincore` says it is not in memory, then confirms them as before, in
//! the same order: only when pages are read changes, never what is read.
//! A [`ReadAheadGate`] decides whether to: every [`WINDOW`] placements it
//! compares the process's page faults that waited for the disk (off) or
//! the pages found missing (on) with a threshold. Off costs one
//! `getrusage` per window; on costs a `mincore` per candidate.
//!
//! Consequences: a node whose side records fit in memory pays nothing; one
//! whose records are on the disk pays a system call or two per candidate,
//! and its placements wait for about one read per search instead of one
//! per candidate. A record longer than what is read ahead still faults
//! for the rest (long texts' records; short ones fit in a page or two).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Placements between two decisions of the gate.
pub(super) const WINDOW: u32 = 256;

/// Faults that waited for the disk, per window, that turn reading ahead
/// on: one placement in sixteen.
const FAULTS_TO_START: u64 = (WINDOW / 16) as u64;

/// Pages found missing, per window, that keep it on: one placement in
/// thirty-two.
const MISSING_TO_STAY: u32 = WINDOW / 32;

/// Bytes of a record asked for: its length and the start of its texts (a
/// short text's record, lean, is some 270 bytes).
pub(super) const READ_AHEAD_BYTES: usize = 512;

/// Whether placements read their candidates' records ahead (see the
/// module's documentation). Shared by the threads that plan.
#[derive(Debug, Default)]
pub(super) struct ReadAheadGate {
    placements: AtomicU32,
    on: AtomicBool,
    /// The process's major faults when the window started.
    faults_then: AtomicU64,
    /// Pages found missing since the window started.
    missing: AtomicU32,
}

impl ReadAheadGate {
    pub(super) fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    #[cfg(test)]
    pub(super) fn start(&self) {
        self.on.store(true, Ordering::Relaxed);
    }

    /// Pages asked for that were not in memory.
    pub(super) fn note_missing(&self, pages: usize) {
        let pages = u32::try_from(pages).unwrap_or(u32::MAX);
        self.missing.fetch_add(pages, Ordering::Relaxed);
    }

    /// One more placement; every [`WINDOW`] the gate decides again.
    pub(super) fn placement(&self) {
        let placements = self.placements.fetch_add(1, Ordering::Relaxed) + 1;
        if !placements.is_multiple_of(WINDOW) {
            return;
        }
        let faults = process_major_faults();
        let waited = faults.saturating_sub(self.faults_then.swap(faults, Ordering::Relaxed));
        let missing = self.missing.swap(0, Ordering::Relaxed);
        self.on.store(
            reads_ahead_next(self.is_on(), waited, missing),
            Ordering::Relaxed,
        );
    }
}

/// The gate's rule: on when a window's placements waited for the disk in
/// page faults, and kept on while the pages they ask for are missing
/// (reading ahead turns those faults into pages found in memory, so
/// faults alone would turn it off again).
pub(super) fn reads_ahead_next(on: bool, faults: u64, missing: u32) -> bool {
    faults >= FAULTS_TO_START || (on && missing >= MISSING_TO_STAY)
}

/// Page faults of this process that read from the disk, so far (0 where
/// the system cannot say: reading ahead then stays off).
fn process_major_faults() -> u64 {
    // SAFETY: `getrusage` only fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `usage` outlives the call.
    let done = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if done == 0 {
        u64::try_from(usage.ru_majflt).unwrap_or(0)
    } else {
        0
    }
}

/// Asks the kernel to read the pages under `bytes` of a mapping if any is
/// not in memory, without touching them: whether one was missing. Advice
/// only: an error reads nothing ahead.
pub(super) fn read_ahead(bytes: *const u8, length: usize) -> bool {
    let page = page_size();
    let first = (bytes as usize) & !(page - 1);
    let end = (bytes as usize).saturating_add(length.max(1));
    let span = end.div_ceil(page) * page - first;
    let mut resident = [0u8; 4];
    let pages = (span / page).min(resident.len());
    // SAFETY: `mincore` reads nothing of the range and writes one byte per
    // page into `resident`, which holds `pages`; the range is asked of
    // this process's mappings only (an unmapped one is an error, ignored).
    let asked = unsafe {
        libc::mincore(
            first as *mut libc::c_void,
            pages * page,
            resident.as_mut_ptr(),
        )
    };
    if asked != 0 || resident[..pages].iter().all(|state| state & 1 == 1) {
        return false;
    }
    // SAFETY: advice on pages of a mapping this process holds; the kernel
    // changes no byte of it.
    unsafe {
        libc::madvise(
            first as *mut libc::c_void,
            pages * page,
            libc::MADV_WILLNEED,
        );
    }
    true
}

fn page_size() -> usize {
    // SAFETY: `sysconf` has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|size| size.is_power_of_two())
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_turns_on_with_faults_and_stays_on_while_pages_are_missing() {
        assert!(!reads_ahead_next(false, 0, 1000));
        assert!(reads_ahead_next(false, FAULTS_TO_START, 0));
        assert!(reads_ahead_next(true, 0, MISSING_TO_STAY));
        assert!(!reads_ahead_next(
            true,
            FAULTS_TO_START - 1,
            MISSING_TO_STAY - 1
        ));
    }

    #[test]
    fn placements_that_read_ahead_place_as_those_that_do_not() {
        // Reposts of a few short posts, each edited its own way: every
        // post meets more candidates than a search reads ahead.
        let posts = [
            "市政府今天宣布新建三座公园，预计明年春天开放",
            "暴雨导致城区多条道路积水，交通部门提醒市民绕行",
            "本地足球队昨晚客场获胜，积分升至联赛第二",
        ];
        let edits = [
            "",
            "转发：",
            "【快讯】",
            "#本地新闻# ",
            "据报道，",
            "消息：",
        ];
        let tails = ["", "。", "！", " 来源：晚报", "（图）", " 转"];
        let texts: Vec<String> = (0..90)
            .map(|number| {
                let post = posts[number % posts.len()];
                let edit = edits[(number / 3) % edits.len()];
                let tail = tails[(number / 7) % tails.len()];
                format!("{edit}{post}{tail}")
            })
            .collect();
        let place_all = |reading_ahead: bool| {
            let mut engine = crate::engine::tests::engine();
            if reading_ahead {
                engine.read_ahead.start();
            }
            let placed: Vec<_> = texts
                .iter()
                .enumerate()
                .map(|(number, text)| {
                    let placed = engine.add_text(text, number as i64);
                    (placed.root, placed.placement, placed.class_documents)
                })
                .collect();
            assert_eq!(engine.read_ahead.is_on(), reading_ahead);
            placed
        };
        let classes: std::collections::HashSet<_> =
            place_all(false).iter().map(|placed| placed.0).collect();
        assert!(classes.len() < 10, "the reposts join: {classes:?}");
        assert_eq!(place_all(true), place_all(false));
    }

    #[test]
    fn pages_in_memory_are_not_read_ahead_and_pages_on_the_disk_are() {
        let resident = vec![7u8; 8192];
        assert!(!read_ahead(resident.as_ptr(), 300));
        assert!(!read_ahead(resident.as_ptr().wrapping_add(4000), 300));

        let directory =
            std::env::temp_dir().join(format!("neardup-read-ahead-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("directory");
        let path = directory.join("file");
        let mut file = std::fs::File::create(&path).expect("create");
        std::io::Write::write_all(&mut file, &vec![1u8; 1 << 20]).expect("write");
        file.sync_all().expect("sync");
        let descriptor = std::os::fd::AsRawFd::as_raw_fd(&file);
        // SAFETY: advice on the whole of an open file: its clean pages
        // leave the page cache.
        unsafe { libc::posix_fadvise(descriptor, 0, 0, libc::POSIX_FADV_DONTNEED) };
        let file = std::fs::File::open(&path).expect("open");
        let map = memmap2::MmapOptions::new()
            .map_raw_read_only(&file)
            .expect("map");
        let middle = map.as_ptr().wrapping_add(512 << 10);
        // A file system in memory (tmpfs) keeps every page: nothing to read.
        if !on_a_file_system_in_memory(&directory) {
            assert!(read_ahead(middle, 300), "a dropped page is asked for");
        }
        // SAFETY: inside the mapping, which is alive.
        let _byte = unsafe { std::ptr::read_volatile(middle) };
        assert!(!read_ahead(middle, 300), "a page read is in memory");
        let _ = std::fs::remove_dir_all(&directory);
    }

    fn on_a_file_system_in_memory(path: &std::path::Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let Ok(name) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return true;
        };
        // SAFETY: `statfs` fills the struct it is given from a valid path.
        let mut status: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let done = unsafe { libc::statfs(name.as_ptr(), &mut status) };
        done != 0 || status.f_type == libc::TMPFS_MAGIC
    }
}
