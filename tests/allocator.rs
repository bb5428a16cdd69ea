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

#[cfg(target_os = "linux")]
#[path = "support/smaps.rs"]
mod smaps;

/// Large blocks (the engine's tables) are advised onto huge pages (flag
/// `hg`), and stay so as they grow; small ones, from the heap, are not.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn large_blocks_are_advised_onto_huge_pages_and_stay_so_as_they_grow() {
    if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
        // CI's machine has them: a skip there would hide the check.
        assert!(
            std::env::var_os("CI").is_none(),
            "this kernel has no transparent huge pages: the check cannot run"
        );
        eprintln!("this kernel has no transparent huge pages: nothing to advise");
        return;
    }
    neardup::allocator::keep_large_blocks_mapped();
    let mut table = vec![7u64; neardup::allocator::HUGE_PAGE_BLOCK_BYTES / 8];
    assert!(
        smaps::mapping_flags(table.as_ptr() as usize).contains(&"hg".to_string()),
        "a table of {} bytes is not advised",
        neardup::allocator::HUGE_PAGE_BLOCK_BYTES
    );
    table.resize(table.len() * 16, 9);
    assert!(smaps::mapping_flags(table.as_ptr() as usize).contains(&"hg".to_string()));
    assert!(
        smaps::mapping_flags(table.as_ptr() as usize + table.len() * 8 - 1)
            .contains(&"hg".to_string())
    );
    assert_eq!(table[0], 7);
    assert_eq!(table[table.len() - 1], 9);
    let small = vec![1u8; 64 << 10];
    assert!(!smaps::mapping_flags(small.as_ptr() as usize).contains(&"hg".to_string()));
}
