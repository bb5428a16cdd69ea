//! Tests of [`super`]: the table answers as a list of (key, node) pairs,
//! keeps its order, directory and fill, and takes many entries at once.

use proptest::prelude::*;

use super::*;

/// The key whose mixed value is `mixed`: so tests can put keys where they
/// want them (next to a high half's edge, sharing a low half).
fn unmix(mix: KeyMix, mixed: u32) -> u32 {
    mix.unmix(mixed)
}

impl Shard<ShortKeys> {
    /// Every entry's key within the shard, in place order.
    fn within_keys(&self) -> Vec<(usize, u64)> {
        let mut high = 0;
        let mut keys = Vec::new();
        for (place, entry) in self.places.iter().enumerate() {
            if is_vacant::<ShortKeys>(entry) {
                continue;
            }
            while self.start(high + 1) <= place {
                high += 1;
            }
            keys.push((
                place,
                self.layout.within_of(high, self.layout.low_of(*entry)),
            ));
        }
        keys
    }

    /// The order, the homes, the directory and the count hold.
    fn check_invariants(&self) -> Result<(), TestCaseError> {
        if self.places.is_empty() {
            prop_assert_eq!(self.len, 0);
            return Ok(());
        }
        prop_assert_eq!(self.starts.len(), self.layout.directory_len());
        // In order: the positions of the entries' high parts are checked
        // below; all of them (up to 2^18 when the entries are wide) once
        // per run ([`Self::check_directory_order`]).
        let keys = self.within_keys();
        prop_assert_eq!(keys.len(), self.len);
        for pair in keys.windows(2) {
            prop_assert!(pair[0].1 <= pair[1].1, "out of order: {:?}", pair);
        }
        for &(place, within) in &keys {
            let home = self.home(within);
            prop_assert!(home <= place);
            prop_assert!((home..place).all(|at| !is_vacant::<ShortKeys>(&self.places[at])));
            // The directory separates this entry's high bits from the others.
            let entry_high = self.layout.high(within);
            prop_assert!(self.start(entry_high) <= place);
            prop_assert!(self.start(entry_high + 1) > place);
        }
        Ok(())
    }

    /// The whole directory is in order.
    fn check_directory_order(&self) -> Result<(), TestCaseError> {
        prop_assert!(self.starts.windows(2).all(|pair| pair[0] <= pair[1]));
        Ok(())
    }

    /// Places of the shard's entries and tail, in bytes.
    fn place_bytes(&self) -> usize {
        self.places.capacity() * size_of::<Entry>()
    }
}

impl KeyNodeTable {
    /// The first prefix shard `number` takes.
    fn prefix_of_shard(&self, number: usize) -> usize {
        self.shard_of_prefix
            .iter()
            .position(|&shard| usize::from(shard) == number)
            .unwrap_or(0)
    }

    /// Every entry's mixed key, shard after shard, in place order.
    fn mixed_keys(&self) -> Vec<u32> {
        let mut keys: Vec<u32> = Vec::new();
        for (number, shard) in self.shards.iter().enumerate() {
            let prefix = self.prefix_of_shard(number);
            keys.extend(
                shard
                    .within_keys()
                    .into_iter()
                    .map(|(_, within)| (shard.layout.mixed(prefix, within) >> 32) as u32),
            );
        }
        keys
    }

    /// Each shard's invariants, the count, the map of prefixes (each shard
    /// takes the prefixes of its bits, side by side) and that each key is
    /// in the shard its prefix names.
    fn check_invariants(&self) -> Result<(), TestCaseError> {
        let mut prefixes = 0;
        for (number, shard) in self.shards.iter().enumerate() {
            shard.check_invariants()?;
            let first = self.prefix_of_shard(number);
            let taken = 1 << (MAX_DEPTH - shard.layout.depth);
            prop_assert_eq!(first % taken, 0);
            for prefix in first..first + taken {
                prop_assert_eq!(usize::from(self.shard_of_prefix[prefix]), number);
            }
            prefixes += taken;
            for (_, within) in shard.within_keys() {
                let mixed = shard.layout.mixed(first, within);
                prop_assert_eq!(self.shard_number(mixed), number);
            }
        }
        prop_assert_eq!(prefixes, PREFIXES);
        let keys = self.mixed_keys();
        prop_assert_eq!(keys.len(), self.len);
        prop_assert_eq!(
            self.len,
            self.shards.iter().map(|shard| shard.len).sum::<usize>()
        );
        Ok(())
    }

    /// [`Self::check_invariants`], and every directory in order.
    fn check_all(&self) -> Result<(), TestCaseError> {
        self.check_invariants()?;
        for shard in &self.shards {
            shard.check_directory_order()?;
        }
        Ok(())
    }

    /// Bytes of the places of all shards (without directories).
    fn place_bytes(&self) -> usize {
        self.shards.iter().map(Shard::place_bytes).sum()
    }
}

#[derive(Debug, Clone)]
enum Step {
    Insert(u32, NodeId),
    Remove(u32, NodeId),
    Replace(u32, NodeId, NodeId),
    GetOrInsert(u32, NodeId),
    ReplaceOrInsert(u32, NodeId, NodeId),
    ShiftIn(u32, NodeId),
}

/// Mixed keys crowded at the edges of a few high halves (and shards),
/// sharing low ones.
fn crowded_mixed() -> impl Strategy<Value = u32> {
    (
        prop_oneof![
            Just(0u32),
            Just(1),
            Just(2),
            Just(0x00ff),
            Just(0x0100),
            Just(0x7fff),
            Just(0xffff)
        ],
        prop_oneof![
            Just(0u32),
            Just(1),
            Just(0x8000),
            Just(0xfffe),
            Just(0xffff)
        ],
    )
        .prop_map(|(high, low)| high << 16 | low)
}

/// Node numbers the tests use: small ones, mostly, and some at and past
/// the node field's first widths (24 bits, 25, 26), so that shards widen
/// while they hold entries (a test below widens to all 32 bits, whose
/// directory is 64 MiB).
const NODES: [NodeId; 7] = [0, 1, 2, 3, (1 << 24) - 2, (1 << 24) - 1, (1 << 25) + 5];

fn node() -> impl Strategy<Value = NodeId> {
    prop_oneof![
        8 => 0..4u32,
        1 => proptest::sample::select(&NODES[4..]),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (crowded_mixed(), node()).prop_map(|(key, node)| Step::Insert(key, node)),
        3 => (crowded_mixed(), node()).prop_map(|(key, node)| Step::Remove(key, node)),
        1 => (crowded_mixed(), node(), node()).prop_map(|(key, old, new)| Step::Replace(key, old, new)),
        2 => (crowded_mixed(), node()).prop_map(|(key, node)| Step::GetOrInsert(key, node)),
        2 => (crowded_mixed(), node(), node()).prop_map(|(key, old, new)| Step::ReplaceOrInsert(key, old, new)),
        2 => (crowded_mixed(), node()).prop_map(|(key, node)| Step::ShiftIn(key, node)),
    ]
}

fn check(steps: &[Step], split_bytes: usize) -> Result<(), TestCaseError> {
    let mut table = KeyNodeTable {
        split_bytes,
        ..KeyNodeTable::<ShortKeys>::default()
    };
    let mix = table.mix;
    let key_of = |mixed: u32| unmix(mix, mixed);
    // The pairs as a list, in the order they were added.
    let mut model: Vec<(u32, NodeId)> = Vec::new();
    for step in steps {
        match *step {
            Step::Insert(mixed, node) => {
                table.insert(key_of(mixed), node);
                model.push((mixed, node));
            }
            Step::Remove(mixed, node) => {
                let removed = table.remove_if(key_of(mixed), |held| held == node);
                let position = model.iter().position(|&pair| pair == (mixed, node));
                prop_assert_eq!(removed, position.map(|_| node));
                if let Some(position) = position {
                    model.remove(position);
                }
            }
            Step::Replace(mixed, old, new) => {
                let replaced = table.replace(key_of(mixed), |held| held == old, new);
                let position = model.iter().position(|&pair| pair == (mixed, old));
                prop_assert_eq!(replaced, position.is_some());
                if let Some(position) = position {
                    model[position].1 = new;
                }
            }
            Step::GetOrInsert(mixed, node) => {
                let held = table.find_or_insert(key_of(mixed), |_| true, node);
                let first = model.iter().find(|pair| pair.0 == mixed).map(|pair| pair.1);
                prop_assert_eq!(held, first);
                if first.is_none() {
                    model.push((mixed, node));
                }
            }
            Step::ShiftIn(mixed, node) => {
                let shifted = table.shift_in(key_of(mixed), node);
                let first = model.iter().position(|pair| pair.0 == mixed);
                prop_assert_eq!(shifted, first.is_some());
                if let Some(first) = first {
                    model.remove(first);
                    model.push((mixed, node));
                }
            }
            Step::ReplaceOrInsert(mixed, old, new) => {
                table.replace_or_insert(key_of(mixed), |held| held == old, new);
                match model.iter().position(|&pair| pair == (mixed, old)) {
                    Some(position) => model[position].1 = new,
                    None => model.push((mixed, new)),
                }
            }
        }
        table.check_invariants()?;
        prop_assert_eq!(table.len(), model.len());
        for &(mixed, _) in &model {
            let first = model.iter().find(|pair| pair.0 == mixed).map(|pair| pair.1);
            prop_assert_eq!(table.get(key_of(mixed)), first);
            // A key's entries, in the order they were added.
            let held: Vec<NodeId> = model
                .iter()
                .filter(|pair| pair.0 == mixed)
                .map(|pair| pair.1)
                .collect();
            let mut walked = Vec::new();
            table.find(key_of(mixed), |kept| {
                walked.push(kept);
                false
            });
            prop_assert_eq!(&walked, &held);
            for node in NODES {
                let found = table.find(key_of(mixed), |kept| kept == node);
                prop_assert_eq!(found.is_some(), held.contains(&node));
            }
        }
    }
    table.check_all()?;
    Ok(())
}

proptest! {
    #[test]
    fn the_table_answers_as_a_list_of_pairs(steps in proptest::collection::vec(step(), 0..200)) {
        check(&steps, SPLIT_BYTES)?;
    }

    /// The same with shards that split past their smallest size: the
    /// crowded keys split them down to the last bit.
    #[test]
    fn the_table_answers_as_a_list_of_pairs_while_its_shards_split(
        steps in proptest::collection::vec(step(), 0..200),
    ) {
        check(&steps, place_bytes::<ShortKeys>(MIN_HOMES))?;
    }

    #[test]
    fn entries_added_at_once_are_found_as_those_added_one_by_one(
        mixed in proptest::collection::vec(crowded_mixed(), 0..150),
        already in proptest::collection::vec(crowded_mixed(), 0..3),
    ) {
        for start_empty in [true, false] {
            // Small shards: entries at once go into many.
            let mut at_once = KeyNodeTable {
                split_bytes: place_bytes::<ShortKeys>(4 * MIN_HOMES),
                ..KeyNodeTable::<ShortKeys>::default()
            };
            let mut one_by_one = KeyNodeTable::<ShortKeys>::default();
            let mix = at_once.mix;
            let key_of = |mixed: u32| unmix(mix, mixed);
            one_by_one.mix = at_once.mix;
            if !start_empty {
                for &mixed in &already {
                    at_once.insert(key_of(mixed), 99);
                    one_by_one.insert(key_of(mixed), 99);
                }
            }
            let pairs: Vec<(u32, NodeId)> = mixed
                .iter()
                .enumerate()
                .map(|(node, &mixed)| (key_of(mixed), node as NodeId))
                .collect();
            at_once.insert_all(&pairs);
            for &(key, node) in &pairs {
                one_by_one.insert(key, node);
            }
            at_once.check_all()?;
            prop_assert_eq!(at_once.len(), one_by_one.len());
            for &(key, node) in &pairs {
                prop_assert_eq!(at_once.get(key), one_by_one.get(key));
                prop_assert!(at_once.find(key, |held| held == node).is_some());
            }
        }
    }
}

proptest! {
    /// Entries given in the table's own order of keys (as recovery's
    /// candidate indexes give their single-node keys) make the table that
    /// inserting them one at a time makes, into an empty table or not.
    #[test]
    fn entries_given_in_the_tables_order_are_placed_as_one_by_one(
        keys in proptest::collection::btree_set(proptest::num::u32::ANY, 0..300),
        already in proptest::collection::vec(proptest::num::u32::ANY, 0..3),
    ) {
        for start_empty in [true, false] {
            let mut in_order = KeyNodeTable {
                split_bytes: place_bytes::<ShortKeys>(4 * MIN_HOMES),
                ..KeyNodeTable::<ShortKeys>::default()
            };
            let mut one_by_one = KeyNodeTable {
                mix: in_order.mix,
                ..KeyNodeTable::<ShortKeys>::default()
            };
            if !start_empty {
                for &key in &already {
                    in_order.insert(key, 99);
                    one_by_one.insert(key, 99);
                }
            }
            let mut entries: Vec<u64> = keys
                .iter()
                .zip(0u32..)
                .map(|(&key, node)| u64::from(in_order.order_of(key)) << 32 | u64::from(node))
                .collect();
            entries.sort_unstable();
            in_order.insert_all_in_order(entries.iter().copied());
            for (&key, node) in keys.iter().zip(0u32..) {
                one_by_one.insert(key, node);
            }
            in_order.check_all()?;
            prop_assert_eq!(in_order.len(), one_by_one.len());
            for &key in &keys {
                prop_assert_eq!(in_order.get(key), one_by_one.get(key));
            }
        }
    }
}

#[test]
fn a_walk_that_grows_its_shard_shows_each_entry_to_accept_once() {
    // Entries of the largest key go at the last home: from the 66th, its
    // run reaches past the tail and the insert grows the shard mid-walk.
    let mut table = KeyNodeTable::<ShortKeys>::default();
    let key = unmix(table.mix, u32::MAX);
    for added in 0..200u32 {
        let mut seen = 0;
        let held = table.find_or_insert(
            key,
            |_| {
                seen += 1;
                false
            },
            added,
        );
        assert_eq!((held, seen), (None, added));
    }
    let mut order = Vec::new();
    table.find(key, |node| {
        order.push(node);
        false
    });
    assert_eq!(order, (0..200).collect::<Vec<_>>());
}

#[test]
fn an_entry_is_five_bytes() {
    assert_eq!(size_of::<Entry>(), 5);
}

#[test]
fn a_node_number_past_the_fields_width_widens_its_shard_alone() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    for key in 0..3_000_000u32 {
        table.insert(key.wrapping_mul(0x9e37_79b9), key);
    }
    assert!(table.shards.len() > 1);
    assert!(table.shards.iter().all(|shard| shard.layout.wide == 0));
    let (target, _) = table.locate(7);
    let directory = table.shards[target].starts.len();
    table.insert(7, 1 << 24);
    assert_eq!(table.shards[target].layout.wide, 1);
    assert_eq!(table.shards[target].starts.len(), 2 * directory - 1);
    for (number, shard) in table.shards.iter().enumerate() {
        assert_eq!(shard.layout.wide, u32::from(number == target));
    }
    table.insert(8, NodeId::MAX - 1);
    table.replace(7, |node| node == 1 << 24, (1 << 30) + 3);
    table.check_all().expect("invariants after widening");
    for key in (0..3_000_000u32).step_by(3) {
        assert_eq!(
            table.find(key.wrapping_mul(0x9e37_79b9), |node| node == key),
            Some(key)
        );
    }
    assert_eq!(
        table.find(7, |node| node == (1 << 30) + 3),
        Some((1 << 30) + 3)
    );
    assert_eq!(
        table.find(8, |node| node == NodeId::MAX - 1),
        Some(NodeId::MAX - 1)
    );
    // Entries given at once take the width their largest node needs.
    let mut at_once = KeyNodeTable::<ShortKeys>::default();
    at_once.insert_all(&[(1, 5), (2, 1 << 27), (3, 9)]);
    assert!(at_once.shards.iter().all(|shard| shard.layout.wide == 4));
    assert_eq!(at_once.get(2), Some(1 << 27));
    assert_eq!(at_once.get(3), Some(9));
}

#[test]
fn the_last_node_number_is_no_node() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    table.insert(5, NodeId::MAX);
    table.insert_all(&[(6, NodeId::MAX)]);
    assert!(table.is_empty());
    assert_eq!(table.get(5), None);
}

#[test]
fn it_grows_by_an_eighth_and_stays_between_82_and_92_percent_full() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    let mut fills = Vec::new();
    for key in 0..200_000u32 {
        let homes = table.shards[0].homes;
        table.insert(key.wrapping_mul(0x9e37_79b9), key);
        if table.shards[0].homes != homes && homes > 1000 {
            // Grown from just past 92 % to an eighth more homes.
            assert_eq!(table.shards[0].homes, homes + homes / 8);
            fills.push((key as usize) as f64 / homes as f64);
        }
    }
    // One shard at this size.
    assert_eq!(table.shards.len(), 1);
    assert!(fills.len() > 10);
    assert!(
        fills.iter().all(|&fill| (0.91..=0.921).contains(&fill)),
        "{fills:?}"
    );
    let fill = table.len() as f64 / table.shards[0].homes as f64;
    assert!((0.81..=0.921).contains(&fill), "{fill}");
    for key in 0..200_000u32 {
        assert_eq!(table.get(key.wrapping_mul(0x9e37_79b9)), Some(key));
    }
    // The directory and the map aside, 5 bytes a place.
    assert_eq!(
        table.allocation_size() - FIXED_BYTES,
        (table.shards[0].homes + TAIL_PLACES) * 5
    );
}

#[test]
fn a_shard_past_its_size_splits_and_grows_alone() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    let keys = 3_000_000u32;
    let mut shards_seen = vec![1];
    for key in 0..keys {
        table.insert(key.wrapping_mul(0x9e37_79b9), key);
        if table.shards.len() != *shards_seen.last().unwrap_or(&0) {
            shards_seen.push(table.shards.len());
        }
    }
    // 3 M entries are 18 MB: split into shards of 2 to 4.5 MiB.
    assert!(table.shards.len() >= 4, "{}", table.shards.len());
    assert!(shards_seen.windows(2).all(|pair| pair[1] == pair[0] + 1));
    for shard in &table.shards {
        assert!(
            shard.place_bytes() <= SPLIT_BYTES + SPLIT_BYTES / 8,
            "{}",
            shard.place_bytes()
        );
        assert!(
            shard.place_bytes() >= SPLIT_BYTES / 3,
            "{}",
            shard.place_bytes()
        );
    }
    for key in (0..keys).step_by(7) {
        assert_eq!(table.get(key.wrapping_mul(0x9e37_79b9)), Some(key));
    }
    table.check_all().expect("invariants after splits");
    let homes: usize = table.shards.iter().map(|shard| shard.homes).sum();
    let fill = table.len() as f64 / homes as f64;
    assert!((0.81..=0.921).contains(&fill), "{fill}");
    // One shard's keys only, until it grows: the others keep their places.
    let before: Vec<usize> = table.shards.iter().map(|shard| shard.homes).collect();
    let mix = table.mix;
    let target = table.shard_number(0);
    let mut added = 0u32;
    while table.shards.len() == before.len() && table.shards[target].homes == before[target] {
        table.insert(unmix(mix, added), added);
        added += 1;
    }
    for (number, &homes) in before.iter().enumerate() {
        if number != target {
            assert_eq!(table.shards[number].homes, homes);
        }
    }
    assert_eq!(table.len(), keys as usize + added as usize);
    // Reserving for many more splits the shards before it grows them.
    table.reserve(20_000_000);
    assert!(table.capacity() >= table.len() + 20_000_000);
    assert!(table.shards.len() > 32);
    table.check_all().expect("invariants after a reserve");
    for key in (0..keys).step_by(7) {
        assert_eq!(table.get(key.wrapping_mul(0x9e37_79b9)), Some(key));
    }
}

#[test]
fn entries_added_at_once_go_into_shards_of_one_size() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    let pairs: Vec<(u32, NodeId)> = (0..2_000_000u32)
        .map(|key| (key.wrapping_mul(0x9e37_79b9), key))
        .collect();
    table.insert_all(&pairs);
    assert!(table.shards.len() > 1 && table.shards.len().is_power_of_two());
    let layout = table.shards[0].layout;
    assert!(table.shards.iter().all(|shard| shard.layout == layout));
    for &(key, node) in pairs.iter().step_by(5) {
        assert_eq!(table.get(key), Some(node));
    }
    assert_eq!(table.len(), pairs.len());
}

#[test]
fn keys_that_share_a_low_half_or_a_high_half_stay_apart() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    let mix = table.mix;
    let key_of = |mixed: u32| unmix(mix, mixed);
    for (node, mixed) in [0x0001_0005u32, 0x0002_0005, 0x0001_0006, 0xffff_0005]
        .into_iter()
        .enumerate()
    {
        table.insert(key_of(mixed), node as NodeId);
    }
    assert_eq!(table.get(key_of(0x0001_0005)), Some(0));
    assert_eq!(table.get(key_of(0x0002_0005)), Some(1));
    assert_eq!(table.get(key_of(0x0001_0006)), Some(2));
    assert_eq!(table.get(key_of(0xffff_0005)), Some(3));
    assert_eq!(table.get(key_of(0x0003_0005)), None);
    assert_eq!(table.remove(key_of(0x0002_0005)), Some(1));
    assert_eq!(table.get(key_of(0x0001_0005)), Some(0));
    assert_eq!(table.get(key_of(0x0002_0005)), None);
}

#[test]
fn unmix_undoes_the_mix() {
    let mix = ShortKeys::seeded();
    for key in [0u32, 1, 0xdead_beef, u32::MAX] {
        assert_eq!(unmix(mix, mix.mix(key)), key);
    }
}

#[test]
fn shrinking_keeps_every_entry_in_fewer_places() {
    let mut table = KeyNodeTable::<ShortKeys>::default();
    for key in 0..20_000u32 {
        table.insert(key.wrapping_mul(0x9e37_79b9), key);
    }
    for key in 1_000..20_000u32 {
        assert_eq!(table.remove(key.wrapping_mul(0x9e37_79b9)), Some(key));
    }
    let before = table.place_bytes();
    table.shrink_to(0);
    assert!(table.place_bytes() < before / 4);
    assert!(table.capacity() >= 1_000);
    for key in 0..1_000u32 {
        assert_eq!(table.get(key.wrapping_mul(0x9e37_79b9)), Some(key));
    }
    for key in 0..1_000u32 {
        table.remove(key.wrapping_mul(0x9e37_79b9));
    }
    table.shrink_to(0);
    assert_eq!(
        (table.allocation_size(), table.len()),
        (
            size_of::<Shard<ShortKeys>>() + PREFIXES * size_of::<u16>(),
            0
        )
    );
    table.insert(3, 4);
    assert_eq!(table.get(3), Some(4));
}
