//! Unit tests of the side file: records across segments, blocks, adopted
//! files, segments given back, compaction.

use super::*;

fn storages() -> Vec<SideStorage> {
    vec![SideStorage::default(), SideStorage::Memory]
}

#[test]
fn records_read_back_across_segments() {
    for storage in storages() {
        let mut file = SideFile::new(storage);
        let records: Vec<Vec<u8>> = (0..3000u32)
            .map(|index| vec![(index % 251) as u8; 300 + (index as usize % 700)])
            .collect();
        let locations: Vec<SideLocation> = records
            .iter()
            .map(|record| file.append(record).expect("appended"))
            .collect();
        assert!(file.stats().segments > 1, "{:?}", file.stats());
        for (record, location) in records.iter().zip(&locations) {
            assert_eq!(file.record(*location), Some(record.as_slice()));
        }
    }
}

#[test]
fn a_block_of_records_reads_back_between_appends_and_is_given_back() {
    for storage in storages() {
        let mut file = SideFile::new(storage);
        let before = file.append(b"before").expect("appended");
        let records: Vec<Vec<u8>> = (0..500u32)
            .map(|index| vec![(index % 251) as u8; index as usize % 90])
            .collect();
        let mut block = Vec::new();
        for record in &records {
            block.extend_from_slice(&(record.len() as u32).to_le_bytes());
            block.extend_from_slice(record);
        }
        let locations = file.append_block(&block).expect("stored");
        let after = file.append(b"after").expect("appended");
        assert_eq!(locations.len(), records.len());
        for (record, location) in records.iter().zip(&locations) {
            assert_eq!(file.record(*location), Some(record.as_slice()));
        }
        assert_eq!(file.record(before), Some(&b"before"[..]));
        assert_eq!(file.record(after), Some(&b"after"[..]));
        assert_eq!(file.stats().segments, 3);
        for location in locations {
            file.release(location);
        }
        assert_eq!(
            file.stats().segments,
            2,
            "the block's segment is given back"
        );
        assert_eq!(file.append_block(&[]), Some(Vec::new()));
        assert_eq!(file.append_block(&block[..block.len() - 1]), None);
        assert_eq!(file.append_block(&[1, 0]), None);
        assert_eq!(file.stats().segments, 2);
    }
}

#[test]
fn records_of_a_mapped_file_are_adopted_where_they_are() {
    let directory = std::env::temp_dir().join(format!("neardup-side-adopt-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("directory");
    let path = directory.join("snapshot");
    let records: [&[u8]; 3] = [b"one", b"", b"three"];
    let mut contents = b"header".to_vec();
    for record in records {
        contents.extend_from_slice(&(record.len() as u32).to_le_bytes());
        contents.extend_from_slice(record);
    }
    let end = contents.len();
    contents.extend_from_slice(b"trailer");
    std::fs::write(&path, &contents).expect("written");
    let mapped = MappedFile::open(&path).expect("mapped");
    // Deleted while mapped, as an old snapshot is: still readable.
    std::fs::remove_file(&path).expect("removed");
    let mut file = SideFile::new(SideStorage::Directory(directory.clone()));
    assert_eq!(file.adopt(&mapped, 5..end), None, "not whole records");
    assert_eq!(file.adopt(&mapped, 6..end + 1), None, "not whole records");
    let locations = file.adopt(&mapped, 6..end).expect("adopted");
    drop(mapped);
    let appended = file.append(b"after").expect("appended");
    for (record, location) in records.iter().zip(&locations) {
        assert_eq!(file.record(*location), Some(*record));
    }
    assert_eq!(file.record(appended), Some(&b"after"[..]));
    assert_eq!(file.stats().segments, 2);
    assert_eq!(file.stats().anonymous_bytes, 0);
    for location in locations {
        file.release(location);
    }
    assert_eq!(
        file.stats().segments,
        1,
        "the adopted segment is given back"
    );
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn a_segment_whose_records_are_all_released_is_given_back() {
    let mut file = SideFile::new(SideStorage::default());
    let record = vec![7u8; 100_000];
    let locations: Vec<SideLocation> = (0..40)
        .map(|_| file.append(&record).expect("appended"))
        .collect();
    let before = file.stats();
    assert!(before.segments >= 3, "{before:?}");
    assert_eq!(before.anonymous_segments, 0);
    for location in &locations[..30] {
        file.release(*location);
    }
    let after = file.stats();
    assert!(after.segments < before.segments, "{before:?} {after:?}");
    assert!(after.mapped_bytes < before.mapped_bytes);
    assert_eq!(after.live_bytes, 10 * (100_000 + 4));
    for location in &locations[30..] {
        assert_eq!(file.record(*location), Some(record.as_slice()));
    }
}

#[test]
fn a_reader_keeps_its_segments_after_they_are_given_back() {
    let mut file = SideFile::new(SideStorage::default());
    let first = file.append(b"first").expect("appended");
    let reader = file.reader();
    file.release(first);
    // A record larger than the first segment opens another; the first,
    // empty, is given back.
    file.append(&vec![1u8; FIRST_SEGMENT_BYTES + 1])
        .expect("appended");
    assert_eq!(file.record(first), None);
    assert_eq!(reader.record(first), Some(&b"first"[..]));
}

#[test]
fn an_unusable_directory_falls_back_to_memory() {
    let mut file = SideFile::new(SideStorage::Directory(PathBuf::from(
        "/proc/neardup-cannot-write-here",
    )));
    let location = file.append(b"kept anyway").expect("appended");
    assert_eq!(file.record(location), Some(&b"kept anyway"[..]));
    assert_eq!(file.stats().anonymous_segments, 1);
}

#[test]
fn a_location_from_elsewhere_reads_nothing() {
    let mut file = SideFile::new(SideStorage::Memory);
    file.append(b"x").expect("appended");
    let bogus = SideLocation::new(0, FIRST_SEGMENT_BYTES - 2).expect("a location");
    assert_eq!(file.record(bogus), None);
    let missing = SideLocation::new(9, 0).expect("a location");
    assert_eq!(file.record(missing), None);
}

/// Small segments, compaction from the first released byte.
fn small() -> SideFileLimits {
    SideFileLimits {
        first_segment_bytes: 4096,
        max_segment_bytes: 4096,
        min_garbage_bytes: 0,
    }
}

/// Moves every record of the segments a round chose, as the side store's
/// sweep does: `locations` updated in place.
fn compact(file: &mut SideFile, locations: &mut [SideLocation]) -> usize {
    let chosen = file.start_compaction();
    for location in locations.iter_mut() {
        if file.is_evacuating(*location) {
            *location = file.relocate(*location).expect("moved");
        }
    }
    assert_eq!(file.finish_compaction(), 0, "every chosen segment emptied");
    chosen
}

#[test]
fn compaction_moves_the_live_records_and_gives_their_segments_back() {
    for storage in storages() {
        let mut file = SideFile::with_limits(storage, small());
        let records: Vec<Vec<u8>> = (0..2000u32)
            .map(|index| vec![(index % 251) as u8; 20 + index as usize % 200])
            .collect();
        let mut kept = Vec::new();
        let mut kept_locations = Vec::new();
        for (index, record) in records.iter().enumerate() {
            let location = file.append(record).expect("appended");
            // One record in ten lives on (a long class), the rest expire.
            if index % 10 == 0 {
                kept.push(record.clone());
                kept_locations.push(location);
            } else {
                file.release(location);
            }
        }
        let before = file.stats();
        assert!(before.segments > 50, "{before:?}");
        assert!(file.wants_compaction());
        let chosen = compact(&mut file, &mut kept_locations);
        let after = file.stats();
        assert!(chosen + 1 >= before.segments, "{chosen} of {before:?}");
        assert_eq!(after.live_bytes, before.live_bytes);
        assert_eq!(after.moved_records, kept.len() as u64 - 1, "{after:?}");
        assert!(
            after.mapped_bytes <= after.live_bytes + 2 * 4096,
            "{before:?} {after:?}"
        );
        for (record, location) in kept.iter().zip(&kept_locations) {
            assert_eq!(file.record(*location), Some(record.as_slice()));
        }
        // Freed ids are reused: the table does not grow with the stream.
        let table = file.segments.len();
        for record in &records {
            let location = file.append(record).expect("appended");
            file.release(location);
        }
        compact(&mut file, &mut kept_locations);
        assert!(file.segments.len() <= table + 2, "{table}");
        for (record, location) in kept.iter().zip(&kept_locations) {
            assert_eq!(file.record(*location), Some(record.as_slice()));
        }
    }
}

#[test]
fn a_reader_taken_before_a_compaction_reads_the_records_where_they_were() {
    let mut file = SideFile::with_limits(SideStorage::default(), small());
    let locations: Vec<SideLocation> = (0..400u32)
        .map(|index| file.append(&[index as u8; 100]).expect("appended"))
        .collect();
    let kept: Vec<usize> = (0..locations.len()).step_by(7).collect();
    for (index, location) in locations.iter().enumerate() {
        if !kept.contains(&index) {
            file.release(*location);
        }
    }
    let reader = file.reader();
    let before: Vec<SideLocation> = kept.iter().map(|&index| locations[index]).collect();
    let mut after = before.clone();
    compact(&mut file, &mut after);
    assert_ne!(before, after, "records moved");
    for ((&index, old), new) in kept.iter().zip(&before).zip(&after) {
        let expected = [index as u8; 100];
        assert_eq!(reader.record(*old), Some(&expected[..]));
        assert_eq!(file.record(*new), Some(&expected[..]));
    }
}

#[test]
fn adopted_records_are_moved_out_and_their_mapped_file_let_go() {
    let directory =
        std::env::temp_dir().join(format!("neardup-side-compact-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("directory");
    let path = directory.join("snapshot");
    let mut contents = Vec::new();
    let records: Vec<Vec<u8>> = (0..300u32).map(|index| vec![index as u8; 50]).collect();
    for record in &records {
        contents.extend_from_slice(&(record.len() as u32).to_le_bytes());
        contents.extend_from_slice(record);
    }
    std::fs::write(&path, &contents).expect("written");
    let mapped = MappedFile::open(&path).expect("mapped");
    std::fs::remove_file(&path).expect("removed");
    let mut file = SideFile::with_limits(SideStorage::Directory(directory.clone()), small());
    let mut locations = file.adopt(&mapped, 0..contents.len()).expect("adopted");
    let mut kept = Vec::new();
    let mut kept_locations = Vec::new();
    for (index, location) in locations.drain(..).enumerate() {
        if index % 50 == 0 {
            kept.push(records[index].clone());
            kept_locations.push(location);
        } else {
            file.release(location);
        }
    }
    assert_eq!(Arc::strong_count(mapped.map()), 2);
    compact(&mut file, &mut kept_locations);
    assert_eq!(
        Arc::strong_count(mapped.map()),
        1,
        "the adopted segment is given back"
    );
    for (record, location) in kept.iter().zip(&kept_locations) {
        assert_eq!(file.record(*location), Some(record.as_slice()));
    }
    let _ = std::fs::remove_dir_all(&directory);
}

#[test]
fn segments_are_sized_by_what_is_live() {
    let mut file = SideFile::new(SideStorage::Memory);
    let record = vec![1u8; 1000];
    // 40 MB written, at most 1 MB live: every segment stays the smallest.
    let mut live = std::collections::VecDeque::new();
    for _ in 0..40_000 {
        live.push_back(file.append(&record).expect("appended"));
        if live.len() > 1000
            && let Some(location) = live.pop_front()
        {
            file.release(location);
        }
        assert!(file.stats().mapped_bytes <= 3 * FIRST_SEGMENT_BYTES as u64);
    }
    // Grown to 40 MB live, the segments are larger (as many as before
    // compaction, 1 + 2 + 4 + ... MB, give or take).
    for _ in 0..40_000 {
        file.append(&record).expect("appended");
    }
    let stats = file.stats();
    assert!(stats.segments < 30, "{stats:?}");
    assert!(stats.mapped_bytes < stats.live_bytes * 2, "{stats:?}");
}

#[test]
fn a_location_is_five_bytes_and_holds_what_a_file_has() {
    assert_eq!(size_of::<SideLocation>(), 5);
    let last_offset = MAX_SEGMENT_BYTES - 1;
    let far = SideLocation::new(16_382, last_offset).expect("the last of each");
    assert_eq!((far.segment(), far.offset()), (16_382, last_offset));
    assert_ne!(far, SideLocation::NOWHERE);
    assert_eq!(SideLocation::new(16_383, 0), None);
    assert_eq!(SideLocation::new(0, MAX_SEGMENT_BYTES), None);
    assert_eq!(SideLocation::NOWHERE.segment(), usize::MAX);
    let near = SideLocation::new(3, 70_000).expect("a location");
    assert_eq!((near.segment(), near.offset()), (3, 70_000));
    let first = SideLocation::new(0, 0).expect("a location");
    assert_eq!((first.segment(), first.offset()), (0, 0));
}

#[path = "../../tests/support/smaps.rs"]
mod smaps;
use smaps::mapping_flags;

#[test]
#[cfg(target_os = "linux")]
fn a_segment_file_is_read_a_page_a_fault_and_in_order_for_a_snapshot() {
    let mut file = SideFile::new(SideStorage::default());
    let location = file.append(b"a record").expect("appended");
    let address = file.record(location).expect("read back").as_ptr() as usize;
    let flags = mapping_flags(address);
    assert!(flags.iter().any(|flag| flag == "rr"), "{flags:?}");
    let reader = file.reader();
    reader.read_in_order();
    let flags = mapping_flags(address);
    assert!(flags.iter().any(|flag| flag == "sr"), "{flags:?}");
    reader.read_at_random();
    let flags = mapping_flags(address);
    assert!(flags.iter().any(|flag| flag == "rr"), "{flags:?}");
}

#[test]
#[cfg(target_os = "linux")]
fn segments_adopted_from_a_snapshot_are_read_a_page_a_fault_once_recovery_is_done() {
    let directory =
        std::env::temp_dir().join(format!("neardup-side-advice-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("directory");
    let path = directory.join("snapshot");
    let record = vec![7u8; 200_000];
    let mut contents = (record.len() as u32).to_le_bytes().to_vec();
    contents.extend_from_slice(&record);
    std::fs::write(&path, &contents).expect("written");
    let mapped = MappedFile::open(&path).expect("mapped");
    let mut file = SideFile::new(SideStorage::Directory(directory.clone()));
    let locations = file.adopt(&mapped, 0..contents.len()).expect("adopted");
    let address = file.record(locations[0]).expect("read back").as_ptr() as usize + 100_000;
    let flags = mapping_flags(address);
    assert!(
        !flags.iter().any(|flag| flag == "rr"),
        "read in order first: {flags:?}"
    );
    file.read_at_random();
    let flags = mapping_flags(address);
    assert!(flags.iter().any(|flag| flag == "rr"), "{flags:?}");
    drop(mapped);
    drop(file);
    let _ = std::fs::remove_dir_all(&directory);
}

/// Recovery's read of a range it walks once: the file's bytes, whatever
/// the buffer held; a range past the end is an error, not a short read.
#[test]
fn a_range_read_once_is_the_files_bytes() {
    let directory = std::env::temp_dir().join(format!("neardup-read-once-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("directory");
    let path = directory.join("snapshot");
    let contents: Vec<u8> = (0..100_000u32).map(|value| (value % 251) as u8).collect();
    std::fs::write(&path, &contents).expect("written");
    let mapped = MappedFile::open(&path).expect("mapped");
    let mut buffer = vec![7; 10];
    mapped.read_once(5..70_005, &mut buffer).expect("read");
    assert_eq!(buffer, contents[5..70_005]);
    mapped
        .read_once(99_990..100_000, &mut buffer)
        .expect("read");
    assert_eq!(buffer, contents[99_990..]);
    assert!(mapped.read_once(99_990..100_001, &mut buffer).is_err());
    // The mapping still reads the same bytes after their pages were let go.
    assert_eq!(&mapped.bytes()[5..70_005], &contents[5..70_005]);
    let _ = std::fs::remove_dir_all(&directory);
}
