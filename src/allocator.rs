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
//! Other allocators and platforms: nothing to do.
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
