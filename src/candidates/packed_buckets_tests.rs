//! Tests of the packed buckets: entries keep every bit, groups split without
//! losing or moving an entry to another bucket, and the capacity count
//! stays exact.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

/// The block layouts the multi-index uses for `k` = 3 to 16, and both
/// ends of the word.
const LAYOUTS: [(u32, u32); 6] = [(48, 16), (0, 16), (20, 16), (51, 13), (0, 4), (40, 20)];

fn block_value(table_shift: u32, width: u32, fingerprint: u64) -> u64 {
    (fingerprint >> table_shift) & (u64::MAX >> (64 - width))
}

fn mix(seed: u64) -> u64 {
    let mut mixed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^ (mixed >> 31)
}

/// The table's content, checked bucket by bucket against `model`.
fn assert_holds(
    table: &PackedBuckets,
    shift: u32,
    width: u32,
    model: &BTreeSet<u64>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(table.len(), model.len());
    let listed: BTreeSet<u64> = table.fingerprints().into_iter().collect();
    prop_assert_eq!(&listed, model);
    for &fingerprint in model {
        let value = block_value(shift, width, fingerprint);
        prop_assert!(table.contains(value, table.rest_of(fingerprint)));
    }
    prop_assert_eq!(
        table.tracked_capacity_bytes(),
        table.recount_capacity_bytes()
    );
    Ok(())
}

#[test]
fn an_entry_keeps_every_bit_outside_its_block() {
    for (shift, width) in LAYOUTS {
        let table = PackedBuckets::new(shift, width);
        assert_eq!(
            table.entry_bytes(),
            (64 - width).div_ceil(8) as usize,
            "{shift}/{width}"
        );
        for seed in 0..1000 {
            let fingerprint = mix(seed);
            let rest = table.rest_of(fingerprint);
            assert_eq!(rest & !table.rest_mask(), 0, "rest wider than its mask");
            let value = block_value(shift, width, fingerprint);
            assert_eq!(table.fingerprint_of(value, rest), fingerprint);
        }
        for fingerprint in [0, u64::MAX, 1, 1 << 63] {
            let value = block_value(shift, width, fingerprint);
            assert_eq!(
                table.fingerprint_of(value, table.rest_of(fingerprint)),
                fingerprint
            );
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    Insert(u64),
    Remove(u64),
    /// Lay the table out again now, with groups half as wide if `true`.
    LayOut(bool),
}

/// Fingerprints over few block values and few other bits, so buckets hold
/// many entries, removals hit, and some entries differ only at the edges.
fn crowded_fingerprint() -> impl Strategy<Value = u64> {
    (0..6u64, 0..40u64, any::<bool>()).prop_map(|(block, other, top)| {
        (block << 48) | (block << 20) | other | (u64::from(top) << 63) | (other << 40)
    })
}

/// Fingerprints of 400, their block values spread over many groups.
fn spread_fingerprint() -> impl Strategy<Value = u64> {
    (0..400u64).prop_map(mix)
}

fn fingerprint() -> impl Strategy<Value = u64> {
    prop_oneof![crowded_fingerprint(), spread_fingerprint()]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => fingerprint().prop_map(Step::Insert),
        2 => fingerprint().prop_map(Step::Remove),
        1 => any::<bool>().prop_map(Step::LayOut),
    ]
}

proptest! {
    #[test]
    fn the_table_holds_what_was_inserted_and_not_removed(
        steps in proptest::collection::vec(step(), 0..400),
        layout in 0..LAYOUTS.len(),
        split_average_entries in 1..6usize,
    ) {
        let (shift, width) = LAYOUTS[layout];
        let mut table = PackedBuckets::splitting_at(shift, width, split_average_entries);
        let mut model = BTreeSet::new();
        for step in &steps {
            match *step {
                Step::Insert(fingerprint) => {
                    if model.insert(fingerprint) {
                        table.insert(
                            block_value(shift, width, fingerprint),
                            table.rest_of(fingerprint),
                        );
                    }
                }
                Step::Remove(fingerprint) => {
                    let removed = table.remove(
                        block_value(shift, width, fingerprint),
                        table.rest_of(fingerprint),
                    );
                    prop_assert_eq!(removed, model.remove(&fingerprint));
                }
                Step::LayOut(halved) => {
                    let group_bits = table.group_bits();
                    table.lay_out(if halved { group_bits.saturating_sub(1) } else { group_bits });
                    prop_assert_eq!(table.outlier_count(), 0);
                    assert_holds(&table, shift, width, &model)?;
                }
            }
        }
        assert_holds(&table, shift, width, &model)?;
        let mut at_once = PackedBuckets::splitting_at(shift, width, split_average_entries);
        let (first_half, second_half) = model.iter().copied().partition::<Vec<u64>, _>(|f| f % 2 == 0);
        at_once.insert_all(&first_half);
        at_once.insert_all(&second_half);
        assert_holds(&at_once, shift, width, &model)?;
        // Laid out at once, groups are as wide as the size allows; one by
        // one, they were split at the table's largest size.
        prop_assert!(at_once.group_bits() >= table.group_bits());
    }
}

#[test]
fn groups_split_as_the_table_fills_and_keep_their_buckets() {
    let (shift, width) = (48, 16);
    let mut table = PackedBuckets::splitting_at(shift, width, 4);
    let mut model = BTreeSet::new();
    assert_eq!(table.group_bits(), 8);
    for seed in 0..(256 * 4 * 8) {
        let fingerprint = mix(seed);
        if model.insert(fingerprint) {
            table.insert(
                block_value(shift, width, fingerprint),
                table.rest_of(fingerprint),
            );
        }
    }
    // 8 192 entries at 4 per group: 2 048 groups of 32 buckets.
    assert_eq!(table.group_bits(), 5);
    assert_holds(&table, shift, width, &model).expect("holds after splits");
    for fingerprint in model.clone().iter().step_by(3) {
        assert!(table.remove(
            block_value(shift, width, *fingerprint),
            table.rest_of(*fingerprint)
        ));
        model.remove(fingerprint);
    }
    assert_holds(&table, shift, width, &model).expect("holds after removals");
}

#[test]
fn a_table_emptied_holds_no_group_memory() {
    let (shift, width) = (0, 16);
    let mut table = PackedBuckets::new(shift, width);
    let fingerprints: Vec<u64> = (0..100_000).map(mix).collect();
    for &fingerprint in &fingerprints {
        table.insert(
            block_value(shift, width, fingerprint),
            table.rest_of(fingerprint),
        );
    }
    // Packed: 6 bytes per entry and an eighth of room at most, not
    // counting the fixed table of ends.
    assert!(table.tracked_capacity_bytes() >= 100_000 * 6);
    assert!(table.tracked_capacity_bytes() < 100_000 * 7);
    for &fingerprint in &fingerprints {
        assert!(table.remove(
            block_value(shift, width, fingerprint),
            table.rest_of(fingerprint)
        ));
    }
    assert_eq!(table.len(), 0);
    assert_eq!(table.tracked_capacity_bytes(), 0);
    assert_eq!(table.recount_capacity_bytes(), 0);
}

/// Fills `table` (a 16-bit block at the bottom) with `count` more
/// fingerprints of `mix`, from seed `from`.
fn fill(table: &mut PackedBuckets, from: u64, count: u64) {
    for seed in from..from + count {
        let fingerprint = mix(seed);
        table.insert(block_value(0, 16, fingerprint), table.rest_of(fingerprint));
    }
}

#[test]
fn a_filled_table_is_one_vector_with_a_sixteenth_of_room_and_few_outliers() {
    let mut table = PackedBuckets::new(0, 16);
    let mut filled = 0;
    for size in [50_000, 400_000, 1_500_000, 5_000_000] {
        fill(&mut table, filled, size - filled);
        filled = size;
        let groups = 1usize << (16 - table.group_bits());
        let (stored, slots) = (table.tracked_capacity_bytes(), table.slots.len());
        assert!(
            table.outlier_count() * LAYOUT_SHARE < groups,
            "{size}: {} outliers of {groups} groups",
            table.outlier_count()
        );
        // 6 bytes an entry, a sixteenth of room at most, and the
        // outliers' own room.
        assert!(
            stored as f64 <= size as f64 * 6.0 * 1.10,
            "{size}: {:.2} bytes an entry",
            stored as f64 / size as f64
        );
        assert!(
            slots * 10 >= stored * 9,
            "{size}: most bytes are the slots'"
        );
    }
    // Past 2^16 × 256 entries each bucket is a group of its own.
    fill(&mut table, filled, 17_000_000 - filled);
    assert_eq!(table.group_bits(), 0);
}

#[test]
fn a_table_whose_size_holds_still_stays_the_same_size() {
    let mut table = PackedBuckets::new(0, 16);
    let live = 300_000u64;
    fill(&mut table, 0, live);
    let mut largest = 0;
    let mut after_first_turn = 0;
    // Ten turns of the whole table: the oldest out, a new one in.
    for seed in live..live * 11 {
        let oldest = mix(seed - live);
        assert!(table.remove(block_value(0, 16, oldest), table.rest_of(oldest)));
        fill(&mut table, seed, 1);
        if seed == live * 2 {
            after_first_turn = table.tracked_capacity_bytes();
        }
        largest = largest.max(table.tracked_capacity_bytes());
    }
    assert_eq!(table.len(), live as usize);
    assert!(
        largest as f64 <= after_first_turn as f64 * 1.15,
        "{largest} bytes at most against {after_first_turn} after one turn"
    );
    assert!((largest as f64) < live as f64 * 6.0 * 1.25);
}

#[test]
fn a_group_that_outgrows_its_slot_moves_out_and_back() {
    let (shift, width) = (0, 16);
    let mut table = PackedBuckets::new(shift, width);
    // 200 entries in each of the 256 groups, one bucket per group.
    let in_group = |group: u64, index: u64| (index << 20) | (group << 8);
    for index in 0..200 {
        for group in 0..256 {
            let fingerprint = in_group(group, index);
            table.insert(
                block_value(shift, width, fingerprint),
                table.rest_of(fingerprint),
            );
        }
    }
    table.lay_out(table.group_bits());
    assert_eq!(table.outlier_count(), 0);
    let model = |table: &PackedBuckets| table.fingerprints().into_iter().collect::<BTreeSet<_>>();
    let before = model(&table);
    // Group 7 outgrows its slot (200 entries and a sixteenth, and one).
    for index in 200..240 {
        let fingerprint = in_group(7, index);
        table.insert(
            block_value(shift, width, fingerprint),
            table.rest_of(fingerprint),
        );
    }
    assert_eq!(table.outlier_count(), 1);
    assert_eq!(table.bucket(7 << 8).count, 240);
    assert_eq!(
        table.bucket(8 << 8).count,
        200,
        "the next group keeps its slot"
    );
    // Back under seven eighths of its slot, it moves back.
    for index in (0..240).rev().take(60) {
        let fingerprint = in_group(7, index);
        assert!(table.remove(
            block_value(shift, width, fingerprint),
            table.rest_of(fingerprint)
        ));
    }
    assert_eq!(table.outlier_count(), 0);
    assert_eq!(
        model(&table),
        before
            .into_iter()
            .filter(|f| (f >> 20) < 180 || (f >> 8) & 0xff != 7)
            .collect()
    );
    assert_eq!(
        table.tracked_capacity_bytes(),
        table.recount_capacity_bytes()
    );
}
