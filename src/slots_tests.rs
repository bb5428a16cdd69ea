//! Unit and property tests of the numbered slots.
use std::collections::HashMap;

use super::*;

proptest::proptest! {
    #[test]
    fn slots_keep_what_a_map_keeps_and_numbers_name_one_value(
        operations in proptest::collection::vec(
            (0u8..3, 0u64..40, proptest::num::u32::ANY), 0..400),
    ) {
        let mut slots = FingerprintSlots::default();
        let mut model: HashMap<Fingerprint, u32> = HashMap::new();
        for (operation, fingerprint, value) in operations {
            match operation {
                0 => {
                    let replaced = slots.insert(fingerprint, value).expect("numbers left");
                    proptest::prop_assert_eq!(replaced, model.insert(fingerprint, value));
                }
                1 => {
                    let removed = slots.remove(fingerprint).map(|(_, value)| value);
                    proptest::prop_assert_eq!(removed, model.remove(&fingerprint));
                }
                _ => {
                    let numbers: Vec<(Fingerprint, Option<u32>)> =
                        model.keys().map(|&fingerprint| (fingerprint, slots.number(fingerprint))).collect();
                    slots.release_spare(0);
                    for (fingerprint, number) in numbers {
                        proptest::prop_assert_eq!(slots.number(fingerprint), number, "renumbered");
                    }
                    proptest::prop_assert!(slots.number_bound() == 0 || slots.at(slots.number_bound() as u32 - 1).is_some());
                }
            }
            proptest::prop_assert_eq!(slots.len(), model.len());
            for (&fingerprint, value) in &model {
                proptest::prop_assert_eq!(slots.get(fingerprint), Some(value));
                let number = slots.number(fingerprint).expect("a number");
                proptest::prop_assert_eq!(slots.at(number), Some((fingerprint, value)));
            }
            let mut listed: Vec<(Fingerprint, u32)> =
                slots.iter().map(|(_, fingerprint, &value)| (fingerprint, value)).collect();
            listed.sort_unstable();
            let mut expected: Vec<(Fingerprint, u32)> =
                model.iter().map(|(&fingerprint, &value)| (fingerprint, value)).collect();
            expected.sort_unstable();
            proptest::prop_assert_eq!(listed, expected);
        }
    }
}

#[test]
fn a_held_number_is_reused_only_after_the_second_pass_ends() {
    let mut slots: FingerprintSlots<u32> = FingerprintSlots::default();
    slots.hold_released_numbers();
    let number = |slots: &mut FingerprintSlots<u32>, fingerprint| {
        slots
            .number_or_insert(fingerprint, || 0)
            .expect("numbers left")
    };
    let held = number(&mut slots, 1);
    number(&mut slots, 2);
    slots.remove(1);
    assert!(slots.holds_released_numbers());
    assert_ne!(number(&mut slots, 3), held);
    slots.holder_pass_ended();
    assert_ne!(number(&mut slots, 4), held);
    slots.holder_pass_ended();
    assert!(!slots.holds_released_numbers());
    assert_eq!(number(&mut slots, 5), held);
    // A held number at the end keeps its slot through a release of
    // spare memory, so the vector does not hand it out again.
    let last = number(&mut slots, 6);
    slots.remove(6);
    slots.release_spare(0);
    assert!(slots.number_bound() > last as usize);
    assert_ne!(number(&mut slots, 7), last);
}

proptest::proptest! {
    #[test]
    fn numbering_all_at_once_is_numbering_one_by_one(
        fingerprints in proptest::collection::vec(0u64..60, 0..300),
        later in proptest::collection::vec(0u64..80, 0..20),
    ) {
        let entries: Vec<(Fingerprint, u32)> = (0u32..)
            .zip(&fingerprints)
            .map(|(value, &fingerprint)| (fingerprint, value))
            .collect();
        let mut one_by_one = FingerprintSlots::default();
        let expected: Vec<u32> = entries
            .iter()
            .map(|&(fingerprint, value)| one_by_one.number_or_insert(fingerprint, || value).expect("numbers left"))
            .collect();
        let mut at_once = FingerprintSlots::default();
        let slots = entries.iter().map(|&(fingerprint, value)| Slot::new(fingerprint, value)).collect();
        proptest::prop_assert_eq!(at_once.number_all(slots).expect("numbers left"), expected);
        proptest::prop_assert_eq!(at_once.len(), one_by_one.len());
        // Then used as any table: lookups, inserts, removals.
        for fingerprint in later {
            proptest::prop_assert_eq!(at_once.at(at_once.number(fingerprint).unwrap_or(u32::MAX)), one_by_one.at(one_by_one.number(fingerprint).unwrap_or(u32::MAX)));
            proptest::prop_assert_eq!(
                at_once.number_or_insert(fingerprint, || 7),
                one_by_one.number_or_insert(fingerprint, || 7)
            );
            proptest::prop_assert_eq!(at_once.remove(fingerprint / 2), one_by_one.remove(fingerprint / 2));
        }
    }
}

#[test]
fn numbering_many_at_once_finds_repeats_among_colliding_places() {
    // 300 k fingerprints: some pairs share the 32 bits the table places
    // them by (about five expected), and every 97th repeats an earlier one.
    let fingerprints: Vec<Fingerprint> = (0..300_000u64)
        .map(|index| {
            let source = if index % 97 == 96 { index / 3 } else { index };
            source.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        })
        .collect();
    let mut one_by_one = FingerprintSlots::default();
    let expected: Vec<u32> = fingerprints
        .iter()
        .map(|&fingerprint| {
            one_by_one
                .number_or_insert(fingerprint, || 0u8)
                .expect("numbers")
        })
        .collect();
    let mut at_once = FingerprintSlots::default();
    let numbers = at_once
        .number_all(
            fingerprints
                .iter()
                .map(|&fingerprint| Slot::new(fingerprint, 0u8))
                .collect(),
        )
        .expect("numbers");
    assert_eq!(numbers, expected);
    for &fingerprint in &fingerprints {
        assert_eq!(at_once.number(fingerprint), one_by_one.number(fingerprint));
    }
}

#[test]
fn a_removed_values_number_is_reused_and_no_longer_names_it() {
    let mut slots = FingerprintSlots::default();
    let first = slots.number_or_insert(7, || 'a').expect("numbers left");
    assert_eq!(slots.number_or_insert(7, || 'z'), Ok(first));
    assert_eq!(slots.remove(7), Some((first, 'a')));
    assert_eq!(slots.at(first), None);
    assert_eq!(slots.number_or_insert(9, || 'b'), Ok(first));
    assert_eq!(slots.at(first), Some((9, &'b')));
}

#[test]
fn a_capture_keeps_which_slots_were_in_use_at_its_start() {
    let fingerprint = |index: u64| index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let add = |slots: &mut FingerprintSlots<u64>, indexes: std::ops::Range<u64>| {
        for index in indexes {
            slots
                .number_or_insert(fingerprint(index), || index)
                .expect("numbers");
        }
    };
    let mut slots = FingerprintSlots::default();
    add(&mut slots, 0..1000);
    let sinks = slots.start_capture(None);
    // Before anything is copied: 500 numbers freed, 300 of them taken
    // again by new values, 200 left free; then a slice copied, and
    // more freed and added behind it.
    for index in (0..1000u64).step_by(2) {
        slots.remove(fingerprint(index));
    }
    add(&mut slots, 1000..1300);
    assert!(!slots.capture_some(100));
    for index in (1..1000u64).step_by(4) {
        slots.remove(fingerprint(index));
    }
    add(&mut slots, 1300..2000);
    while !slots.capture_some(100) {
        sinks.flush();
    }
    sinks.flush();
    let image = slots.take_capture().expect("all copied");
    let captured: Vec<(u32, Fingerprint, u64)> = image
        .iter()
        .map(|(number, fingerprint, &value)| (number, fingerprint, value))
        .collect();
    let expected: Vec<(u32, Fingerprint, u64)> = (0..1000u64)
        .map(|index| (index as u32, fingerprint(index), index))
        .collect();
    assert_eq!(captured, expected);
}
