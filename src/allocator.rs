//! What the process asks of glibc's allocator.
//!
//! Motivation: the engine's large tables (candidate keys, exact hashes,
//! document keys, node slots, list arenas) are vectors of megabytes that
//! are replaced by larger ones as they grow. glibc serves an allocation
//! from its own mapping only above a threshold that it raises to the size
//! of any mapped block freed (up to 32 MiB); after the first table grows,
//! the next ones come from the heap, and each replaced vector leaves a
//! hole the process keeps. Measured on the overlap stream: 17 B/node of
//! `RssAnon` growth between 100 k and 500 k nodes (243 against 226), with
//! 2.6 instead of 6.5 MiB freed but held at 500 k.
//!
//! Design: [`keep_large_blocks_mapped`] fixes the threshold at 1 MiB, so
//! every block of a megabyte or more is a mapping of its own that goes
//! back to the system whole when freed. The binary calls it first thing;
//! the capacity benches (`overlap`, `capacity`) call it too, so they
//! measure what the sidecar runs.
//! Other allocators and platforms: nothing to do. Blocks of 4 MiB or more
//! are also advised onto transparent huge pages
//! ([`LargeBlocksOnHugePages`], the library's global allocator).
//!
//! Consequences: each allocation of 1 MiB or more is a `mmap`/`munmap`
//! pair and its pages fault in when first written (a request body of
//! several megabytes pays some tens of microseconds); glibc's own trimming
//! threshold stops adapting too (it stays at its default, 128 KiB).

/// Blocks of this size or more are mappings of their own.
pub const MAPPED_BLOCK_BYTES: usize = 1 << 20;

/// Fixes glibc's mapping threshold at 1 MiB (see the module docs). Call
/// before the process allocates much; harmless elsewhere.
pub fn keep_large_blocks_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MAPPED_BLOCK_BYTES as i32);
    }
}

/// Returns free heap memory to the system (after recovery, whose decoded
/// snapshot and log are as large as the state): glibc otherwise keeps
/// memory freed below its heap top.
pub fn give_back_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Blocks of this size or more are asked to be backed by huge pages.
pub const HUGE_PAGE_BLOCK_BYTES: usize = 4 << 20;

/// The system's allocator, with every block of [`HUGE_PAGE_BLOCK_BYTES`]
/// or more marked for transparent huge pages (`madvise(MADV_HUGEPAGE)`).
///
/// Motivation: the engine's large tables (node slots, the number table,
/// block tables, document keys, candidate buckets) are gigabytes at 100 M
/// nodes, written and read at random places: each 4 KiB page faulted in
/// on its own, and a random read of such a table was mostly the
/// processor walking page tables (a virtual machine's walks are long). A
/// 2 MiB page covers 512 of 4 KiB in one entry and faults once. Most
/// distributions set huge pages to `madvise` (given only where asked), and
/// nothing asked: recovery of 100 M nodes built its tables in 22.5–24.4 s,
/// 20.0–20.3 s on huge pages (`docs/performance.md`, thirty-first part;
/// `place` did not move, its time is the side records read from disk).
///
/// Design: a wrapper around [`std::alloc::System`]; after an allocation
/// or a reallocation of a large block, the pages of the whole block are
/// advised (the block is a mapping of its own, [`keep_large_blocks_mapped`],
/// so the advice covers its mapping whole and glibc can still grow it
/// with `mremap`). Smaller blocks, from glibc's heap, are left as they are:
/// a heap of small blocks freed here and there would hold whole huge pages
/// for a few live bytes.
///
/// Consequences: a large block's last huge page is resident once any of
/// its bytes is written (at most 2 MiB a block); where the system set
/// huge pages to `never`, the advice does nothing.
pub struct LargeBlocksOnHugePages;

// SAFETY: every call is passed on to `System` unchanged; the advice only
// changes how the kernel backs pages the block owns.
unsafe impl std::alloc::GlobalAlloc for LargeBlocksOnHugePages {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let block = unsafe { std::alloc::System.alloc(layout) };
        advise_huge_pages(block, layout.size());
        block
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let block = unsafe { std::alloc::System.alloc_zeroed(layout) };
        advise_huge_pages(block, layout.size());
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as `alloc`.
        unsafe { std::alloc::System.dealloc(block, layout) }
    }

    unsafe fn realloc(
        &self,
        block: *mut u8,
        layout: std::alloc::Layout,
        new_size: usize,
    ) -> *mut u8 {
        // SAFETY: as `alloc`.
        let block = unsafe { std::alloc::System.realloc(block, layout, new_size) };
        advise_huge_pages(block, new_size);
        block
    }
}

/// Advises huge pages over the pages of a block of `size` bytes at
/// `block`, when it is large (advice only: a failure changes nothing).
fn advise_huge_pages(block: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if !block.is_null() && size >= HUGE_PAGE_BLOCK_BYTES {
        // SAFETY: reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let start = block as usize & !(page - 1);
        let end = (block as usize).saturating_add(size).next_multiple_of(page);
        // SAFETY: the range is the block's own pages, rounded out to whole
        // pages (of its own mapping; for a block of glibc's heap, a page
        // it may share with its neighbours); the advice changes no byte.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}
