//! Tests of [`super`]: the table answers as a map, keeps the order of
//! homes, grows as it says and takes many entries at once.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::units::NodeId;

/// A key and a value: an 8-byte entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pair {
    key: u32,
    node: NodeId,
}

impl TableEntry for Pair {
    const VACANT: Self = Pair {
        key: 0,
        node: NodeId::MAX,
    };
    fn is_vacant(&self) -> bool {
        self.node == NodeId::MAX
    }
}

/// Few distinct hashes, so walks are long, wrap around the end and
/// shifts move entries past other keys' places.
fn crowded_hash(key: u32) -> u64 {
    u64::from(key % 5).wrapping_mul(0x3333_3333_3333_3333) | u64::from(key % 5 == 4) << 63
}

fn spread_hash(key: u32) -> u64 {
    u64::from(key).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[derive(Debug, Clone)]
enum Step {
    Insert(u32, u32),
    Remove(u32),
    Retain(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..64u32, 0..1000u32).prop_map(|(key, value)| Step::Insert(key, value)),
        3 => (0..64u32).prop_map(Step::Remove),
        1 => (2..5u32).prop_map(Step::Retain),
    ]
}

fn check(steps: &[Step], hash: fn(u32) -> u64) -> Result<(), TestCaseError> {
    let mut table = CompactTable::<Pair>::default();
    let mut model: HashMap<u32, u32> = HashMap::new();
    let hasher = |pair: &Pair| hash(pair.key);
    for step in steps {
        match *step {
            Step::Insert(key, value) => {
                match table.find_mut(hash(key), |pair| pair.key == key, hasher) {
                    Some(pair) => pair.node = value,
                    None => table.insert(hash(key), Pair { key, node: value }, hasher),
                }
                model.insert(key, value);
            }
            Step::Remove(key) => {
                let removed = table.remove(hash(key), |pair| pair.key == key, hasher);
                prop_assert_eq!(removed.map(|pair| pair.node), model.remove(&key));
            }
            Step::Retain(divisor) => {
                table.retain(|pair| pair.key % divisor != 0, hasher);
                model.retain(|key, _| key % divisor != 0);
            }
        }
        prop_assert_eq!(table.len(), model.len());
        prop_assert!(table.len() <= table.capacity());
        assert_in_order_of_homes(&table, hash);
        for key in 0..64 {
            let found = table
                .find(hash(key), |pair| pair.key == key, hasher)
                .map(|pair| pair.node);
            prop_assert_eq!(found, model.get(&key).copied());
        }
        let mut listed: Vec<(u32, u32)> = table.iter().map(|pair| (pair.key, pair.node)).collect();
        listed.sort_unstable();
        let mut expected: Vec<(u32, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
        expected.sort_unstable();
        prop_assert_eq!(listed, expected);
    }
    Ok(())
}

proptest! {
    #[test]
    fn the_table_answers_as_a_map(steps in proptest::collection::vec(step(), 0..300)) {
        check(&steps, crowded_hash)?;
        check(&steps, spread_hash)?;
    }
}

#[test]
fn it_grows_by_an_eighth_and_stays_between_82_and_92_percent_full() {
    let mut table = CompactTable::<Pair>::default();
    let hasher = |pair: &Pair| spread_hash(pair.key);
    let mut lowest_fill = 1.0f64;
    for key in 0..200_000u32 {
        table.insert(spread_hash(key), Pair { key, node: key }, hasher);
        let places = table.places.len() as f64;
        let fill = table.len() as f64 / places;
        assert!(fill <= 0.92 + 1e-9);
        if key > 1000 {
            lowest_fill = lowest_fill.min(fill);
        }
    }
    assert!(lowest_fill > 0.81, "lowest fill {lowest_fill}");
    for key in (0..200_000u32).step_by(7) {
        assert_eq!(
            table.find(spread_hash(key), |pair| pair.key == key, hasher),
            Some(&Pair { key, node: key })
        );
    }
}

/// Every entry is on its key's walk, and the entries are in the order
/// of their homes: none is farther from its home than the one after
/// it is from its own, plus one (the Robin Hood order lookups rely on).
fn assert_in_order_of_homes(table: &CompactTable<Pair>, hash: fn(u32) -> u64) {
    let places = table.places.len();
    for place in 0..places {
        let (entry, next) = (table.places[place], table.places[(place + 1) % places]);
        if entry.is_vacant() || next.is_vacant() {
            continue;
        }
        let here = table.distance(place, hash(entry.key));
        let after = table.distance((place + 1) % places, hash(next.key));
        assert!(
            after == 0 || after <= here + 1,
            "place {place}: {here} then {after}"
        );
    }
}

#[test]
fn entries_stay_in_the_order_of_their_homes_through_inserts_and_removals() {
    for hash in [crowded_hash as fn(u32) -> u64, spread_hash] {
        let hasher = |pair: &Pair| hash(pair.key);
        let mut table = CompactTable::<Pair>::default();
        for key in 0..3000u32 {
            table.insert(hash(key), Pair { key, node: key }, hasher);
            if key % 3 == 0 {
                table.remove(hash(key / 2), |pair| pair.key == key / 2, hasher);
            }
        }
        assert_in_order_of_homes(&table, hash);
        // A lookup of a key that is not there stops early, and of one
        // that is finds it.
        assert_eq!(table.find(hash(0), |pair| pair.key == 0, hasher), None);
        assert!(
            table
                .find(hash(2999), |pair| pair.key == 2999, hasher)
                .is_some()
        );
    }
}

#[test]
fn entries_added_at_once_are_found_as_if_added_one_by_one() {
    // Into a table that holds one entry already, and into an empty one
    // (recovery: each entry placed in the order of homes).
    for (hash, first) in [
        (crowded_hash as fn(u32) -> u64, true),
        (spread_hash, true),
        (crowded_hash, false),
        (spread_hash, false),
    ] {
        let hasher = |pair: &Pair| hash(pair.key);
        let same = |a: &Pair, b: &Pair| a.key == b.key;
        let mut at_once = CompactTable::<Pair>::default();
        if first {
            at_once.insert(hash(7), Pair { key: 7, node: 1 }, hasher);
        }
        // Key 3 twice: the later wins, as with a map.
        let entries: Vec<Pair> = (0..500u32)
            .map(|key| Pair { key, node: key * 2 })
            .chain([Pair { key: 3, node: 99 }])
            .collect();
        at_once.insert_all(entries, same, hasher);
        assert_in_order_of_homes(&at_once, hash);
        assert_eq!(at_once.len(), 500);
        assert!(at_once.len() <= at_once.capacity());
        for key in 0..500u32 {
            let expected = if key == 3 { 99 } else { key * 2 };
            assert_eq!(
                at_once
                    .find(hash(key), |pair| pair.key == key, hasher)
                    .map(|pair| pair.node),
                Some(expected)
            );
        }
    }
}

#[test]
fn several_entries_may_share_a_key_and_are_all_walked() {
    let mut table = CompactTable::<Pair>::default();
    let hasher = |pair: &Pair| crowded_hash(pair.key);
    for value in 0..5 {
        table.insert(
            crowded_hash(3),
            Pair {
                key: 3,
                node: value,
            },
            hasher,
        );
    }
    let mut seen = Vec::new();
    table.for_each_match(crowded_hash(3), hasher, |pair| {
        if pair.key == 3 {
            seen.push(pair.node)
        }
    });
    seen.sort_unstable();
    assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    // A vacant entry is never stored.
    table.insert(0, Pair::VACANT, hasher);
    assert_eq!(table.len(), 5);
}

proptest! {
    // Entries moved across the end before the pass reaches them are rare:
    // enough cases to meet them.
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// A pass spread over many calls, with inserts and removals moving
    /// entries between them (around the end too, with crowded hashes),
    /// forgets every entry that was to go before it began.
    #[test]
    fn a_pass_spread_over_changes_forgets_all_it_began_with(
        steps in proptest::collection::vec((0u8..4, 0u32..80, 1usize..12), 0..500),
        crowded in proptest::bool::ANY,
    ) {
        let hash = if crowded { crowded_hash } else { spread_hash };
        let hasher = |entry: &Pair| hash(entry.key);
        let mut table: CompactTable<Pair> = CompactTable::default();
        let mut pass = SweepPass::default();
        let mut doomed: std::collections::HashSet<NodeId> = std::collections::HashSet::new();
        let mut doomed_before_pass = doomed.clone();
        let mut next_node: NodeId = 0;
        for (operation, key, budget) in steps {
            let present = table.find(hash(key), |entry| entry.key == key, hasher).copied();
            match (operation, present) {
                (0, None) => {
                    table.insert(hash(key), Pair { key, node: next_node }, hasher);
                    next_node += 1;
                }
                (1, Some(_)) => {
                    table.remove(hash(key), |entry| entry.key == key, hasher);
                }
                (2, Some(entry)) => {
                    doomed.insert(entry.node);
                }
                _ => {
                    let ended = table.sweep_some(&mut pass, budget, |entry| !doomed.contains(&entry.node), hasher);
                    if ended {
                        let left: Vec<Pair> = table
                            .iter()
                            .filter(|entry| doomed_before_pass.contains(&entry.node))
                            .copied()
                            .collect();
                        prop_assert!(left.is_empty(), "the pass missed {left:?}");
                        doomed_before_pass = doomed.clone();
                    }
                }
            }
        }
    }
}
