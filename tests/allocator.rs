//! The binary's allocator setting: blocks of a megabyte or more stay
//! mappings of their own even after a larger mapped block was freed (which
//! by glibc's default raises its threshold, and the next tables of that
//! size come from the heap, leaving holes when they are replaced). Its own
//! process, so no other test allocates meanwhile.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn blocks_of_a_megabyte_stay_mapped_after_a_larger_one_is_freed() {
    fn mapped_bytes() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        unsafe { libc::mallinfo2() }.hblkhd
    }
    neardup::allocator::keep_large_blocks_mapped();
    let large = vec![1u8; 8 << 20];
    drop(std::hint::black_box(large));
    let before = mapped_bytes();
    let table = vec![1u8; 2 << 20];
    let after = mapped_bytes();
    std::hint::black_box(&table);
    assert!(
        after >= before + (2 << 20),
        "a 2 MiB block after an 8 MiB one was freed came from the heap ({before} -> {after} mapped bytes)"
    );
}
