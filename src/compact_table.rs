//! An open-addressing hash table of small `Copy` entries that grows by half
//! and fills to 85 %: the tables that hold one or several entries per node
//! (short-text LSH keys, the exact fast path, the ledger's document keys).
//!
//! Motivation: a `hashbrown` table doubles when it is 7/8 full, so right
//! after growing it is under half full, and it spends a control byte per
//! place besides. Over a fill its places cost 1/0.44 to 1/0.875 entries
//! each, and whatever point a measurement lands on, tables sized by the
//! node count all double at the same moment. For 8-byte entries that is
//! 9 bytes a place, 10 to 20 bytes an entry.
//!
//! Design: linear probing over one vector of entries, placed by the
//! caller's 64-bit hash scaled to the table's length (the hash's high bits,
//! so any length works, not only powers of two). An entry type names one
//! value that never holds data ([`TableEntry::VACANT`]); a lookup walks
//! from the hash's place to the first vacant place. Removal shifts the
//! entries after it back (no tombstones, so lookups never slow down with
//! churn). The table grows by half when an insert would take it past 85 %,
//! so it is between 57 % and 85 % full: 8-byte entries cost 9.4 to 14
//! bytes each. Growing re-places entries in their old order, which is
//! nearly the new order, so the new vector is written almost front to back.
//!
//! Consequences: a lookup that finds nothing reads about 3 places at 57 %
//! and 22 at 85 % (a few cache lines: the places are contiguous); there is
//! no per-place tag, so the caller's `eq` runs on every entry passed, which
//! suits entries that carry their own key (not ones that must be looked up
//! elsewhere to compare, like [`crate::slots`]' numbers). The caller gives
//! the hash of every entry when the table grows or shifts entries back.

use std::hash::{BuildHasher, Hash};

use crate::capture::Capture;
use crate::hashing::FingerprintBuildHasher;
use crate::radix::sort_stably_by;
use crate::units::NodeId;

/// An entry of a [`CompactTable`]: small, `Copy`, and with one value that
/// stands for an empty place.
pub trait TableEntry: Copy {
    /// The empty place; never inserted.
    const VACANT: Self;
    fn is_vacant(&self) -> bool;
}

/// The table fills to this fraction (percent) before it grows.
const MAX_LOAD_PERCENT: usize = 85;

/// Places of the smallest table that holds anything.
const MIN_PLACES: usize = 8;

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct CompactTable<T> {
    places: Vec<T>,
    len: usize,
    /// The places as of a snapshot's moment, while one is taken (every
    /// write of a place goes through [`Self::set`]).
    capture: Capture<T>,
}

impl<T> Default for CompactTable<T> {
    fn default() -> Self {
        CompactTable {
            places: Vec::new(),
            len: 0,
            capture: Capture::default(),
        }
    }
}

/// The place `hash` starts from in a table of `places`: the hash scaled to
/// the length (its high bits choose).
fn home(hash: u64, places: usize) -> usize {
    ((u128::from(hash) * places as u128) >> 64) as usize
}

/// Entries a table of `places` holds before it grows (always fewer than
/// `places`, so every walk meets a vacant place).
fn max_len(places: usize) -> usize {
    places * MAX_LOAD_PERCENT / 100
}

impl<T: TableEntry> CompactTable<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries the table holds without growing.
    pub fn capacity(&self) -> usize {
        max_len(self.places.len())
    }

    /// Bytes of its one allocation.
    pub fn allocation_size(&self) -> usize {
        self.places.capacity() * size_of::<T>()
    }

    /// Writes place `place` (its value kept first while a capture runs).
    #[inline]
    fn set(&mut self, place: usize, entry: T) {
        self.capture.before_write(&self.places, place);
        self.places[place] = entry;
    }

    /// Starts capturing the entries as they are now ([`crate::capture`]);
    /// call with writes locked out.
    pub fn start_capture(&self) {
        self.capture.start(&self.places);
    }

    /// Copies up to `budget` more places of the capture; `true` once done.
    pub fn capture_some(&self, budget: usize) -> bool {
        self.capture.copy_some(&self.places, budget)
    }

    /// The captured places (vacant ones too: leaving them out is left to
    /// the caller, after the lock) once all are copied (the capture ends).
    pub fn take_capture(&self) -> Option<Vec<T>> {
        self.capture.take()
    }

    /// Ends a capture without its image.
    pub fn stop_capture(&self) {
        self.capture.stop();
    }

    fn next(&self, place: usize) -> usize {
        if place + 1 == self.places.len() {
            0
        } else {
            place + 1
        }
    }

    /// Where the entry `eq` accepts is, walking from `hash`'s place.
    fn position(&self, hash: u64, mut eq: impl FnMut(&T) -> bool) -> Option<usize> {
        if self.places.is_empty() {
            return None;
        }
        let mut place = home(hash, self.places.len());
        loop {
            let entry = &self.places[place];
            if entry.is_vacant() {
                return None;
            }
            if eq(entry) {
                return Some(place);
            }
            place = self.next(place);
        }
    }

    /// The first entry from `hash`'s place that `eq` accepts.
    pub fn find(&self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&T> {
        let place = self.position(hash, eq)?;
        Some(&self.places[place])
    }

    /// As [`Self::find`], to change the entry in place. The change must
    /// keep the entry's hash.
    pub fn find_mut(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&mut T> {
        let place = self.position(hash, eq)?;
        self.capture.before_write(&self.places, place);
        Some(&mut self.places[place])
    }

    /// Calls `each` on every entry from `hash`'s place to the first vacant
    /// one, in order: where all entries of one key are, when several
    /// share it.
    pub fn for_each_match(&self, hash: u64, mut each: impl FnMut(&T)) {
        if self.places.is_empty() {
            return;
        }
        let mut place = home(hash, self.places.len());
        while !self.places[place].is_vacant() {
            each(&self.places[place]);
            place = self.next(place);
        }
    }

    /// Adds `entry` (whose hash is `hash`) without looking for an equal
    /// one: the caller knows there is none, or wants both. `hasher` gives
    /// any entry's hash, for growing. A vacant `entry` is not added.
    pub fn insert(&mut self, hash: u64, entry: T, hasher: impl Fn(&T) -> u64) {
        if entry.is_vacant() {
            return;
        }
        self.reserve(1, hasher);
        self.place_new(hash, entry);
    }

    /// Adds many entries at once (recovery): the table sized once, then the
    /// entries placed in the order of their places, so it is written front
    /// to back where one insert at a time went to a random place each. An
    /// entry `same` as one already placed replaces it (the later wins, as a
    /// map's `extend` does).
    pub fn insert_all(
        &mut self,
        entries: &[T],
        same: impl Fn(&T, &T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) {
        self.reserve(entries.len(), &hasher);
        let Ok(count) = u32::try_from(entries.len()) else {
            for entry in entries {
                self.place_or_replace(hasher(entry), *entry, &same);
            }
            return;
        };
        // The place's bits (the hash's high half) above the entry's index.
        let order: Vec<u64> = (0..count)
            .zip(entries)
            .map(|(index, entry)| hasher(entry) >> 32 << 32 | u64::from(index))
            .collect();
        for packed in sort_stably_by(vec![order], |packed| (packed >> 32) as u32) {
            let entry = entries[(packed as u32) as usize];
            self.place_or_replace(hasher(&entry), entry, &same);
        }
    }

    /// Puts `entry` in the place of one `same` as it on its walk, or in the
    /// first vacant place; the table has room.
    fn place_or_replace(&mut self, hash: u64, entry: T, same: impl Fn(&T, &T) -> bool) {
        if entry.is_vacant() {
            return;
        }
        let mut place = home(hash, self.places.len());
        while !self.places[place].is_vacant() {
            if same(&self.places[place], &entry) {
                self.set(place, entry);
                return;
            }
            place = self.next(place);
        }
        self.set(place, entry);
        self.len += 1;
    }

    /// Puts an entry into the first vacant place from its hash's place;
    /// the table has room.
    fn place_new(&mut self, hash: u64, entry: T) {
        let mut place = home(hash, self.places.len());
        while !self.places[place].is_vacant() {
            place = self.next(place);
        }
        self.set(place, entry);
        self.len += 1;
    }

    /// Takes out the first entry from `hash`'s place that `eq` accepts, and
    /// shifts the entries after it back so no walk stops early.
    pub fn remove(
        &mut self,
        hash: u64,
        eq: impl FnMut(&T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) -> Option<T> {
        let mut hole = self.position(hash, eq)?;
        let removed = self.places[hole];
        let places = self.places.len();
        let mut place = self.next(hole);
        while !self.places[place].is_vacant() {
            let start = home(hasher(&self.places[place]), places);
            // The entry may move back into the hole unless its walk starts
            // after the hole (cyclically, in (hole, place]).
            let starts_after_hole = if hole <= place {
                hole < start && start <= place
            } else {
                hole < start || start <= place
            };
            if !starts_after_hole {
                self.set(hole, self.places[place]);
                hole = place;
            }
            place = self.next(place);
        }
        self.set(hole, T::VACANT);
        self.len -= 1;
        Some(removed)
    }

    /// Makes room for `additional` more entries, growing by half (or more,
    /// when asked for more) at once.
    pub fn reserve(&mut self, additional: usize, hasher: impl Fn(&T) -> u64) {
        let needed = self.len.saturating_add(additional);
        if needed <= self.capacity() {
            return;
        }
        let mut places = self.places.len().max(MIN_PLACES);
        while max_len(places) < needed {
            places += places / 2;
        }
        self.replace_places(places, hasher, |_| true);
    }

    /// Keeps the entries `keep` accepts, in a table sized for them.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool, hasher: impl Fn(&T) -> u64) {
        let kept = self
            .places
            .iter()
            .filter(|entry| !entry.is_vacant() && keep(entry))
            .count();
        if kept == self.len {
            return;
        }
        let mut places = MIN_PLACES;
        while max_len(places) < kept {
            places += places / 2;
        }
        let places = if kept == 0 { 0 } else { places };
        self.replace_places(places, hasher, keep);
    }

    fn replace_places(
        &mut self,
        places: usize,
        hasher: impl Fn(&T) -> u64,
        mut keep: impl FnMut(&T) -> bool,
    ) {
        // A capture running copies what it has not yet: the places move.
        self.capture.complete(&self.places);
        let old = std::mem::replace(&mut self.places, vec![T::VACANT; places]);
        self.len = 0;
        for entry in old {
            if !entry.is_vacant() && keep(&entry) {
                self.place_new(hasher(&entry), entry);
            }
        }
    }

    /// The entries, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.places.iter().filter(|entry| !entry.is_vacant())
    }
}

/// An entry found by a key of its own (a hash already, or close to one).
pub trait KeyedEntry: TableEntry {
    type Key: Copy + Eq + Hash;
    fn key(&self) -> Self::Key;
}

/// A key and a node number: 8 bytes (candidate keys holding one node, the
/// exact fast path's hash tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyNode {
    pub key: u32,
    pub node: NodeId,
}

impl TableEntry for KeyNode {
    // No node has the last number (see `slots`).
    const VACANT: Self = KeyNode {
        key: 0,
        node: NodeId::MAX,
    };
    fn is_vacant(&self) -> bool {
        self.node == NodeId::MAX
    }
}

impl KeyedEntry for KeyNode {
    type Key = u32;
    fn key(&self) -> u32 {
        self.key
    }
}

/// A [`CompactTable`] of keyed entries, each placed by a hash of its key
/// seeded per table (crafted keys cannot aim at one place).
#[derive(Debug, Clone)]
pub struct KeyedTable<E> {
    table: CompactTable<E>,
    hasher: FingerprintBuildHasher,
}

impl<E> Default for KeyedTable<E> {
    fn default() -> Self {
        KeyedTable {
            table: CompactTable::default(),
            hasher: FingerprintBuildHasher::default(),
        }
    }
}

impl<E: KeyedEntry> KeyedTable<E> {
    fn hash(&self, key: E::Key) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The entry of `key` that `eq` accepts (several may share a key).
    pub fn find(&self, key: E::Key, mut eq: impl FnMut(&E) -> bool) -> Option<&E> {
        self.table
            .find(self.hash(key), |entry| entry.key() == key && eq(entry))
    }

    /// As [`Self::find`], to change the entry in place (not its key).
    pub fn find_mut(&mut self, key: E::Key, mut eq: impl FnMut(&E) -> bool) -> Option<&mut E> {
        let hash = self.hash(key);
        self.table
            .find_mut(hash, |entry| entry.key() == key && eq(entry))
    }

    pub fn get(&self, key: E::Key) -> Option<&E> {
        self.find(key, |_| true)
    }

    pub fn get_mut(&mut self, key: E::Key) -> Option<&mut E> {
        self.find_mut(key, |_| true)
    }

    /// Adds `entry` without looking for one of the same key.
    pub fn insert(&mut self, entry: E) {
        let hasher = self.hasher;
        self.table.insert(self.hash(entry.key()), entry, |entry| {
            hasher.hash_one(entry.key())
        });
    }

    /// Takes out the entry of `key` that `eq` accepts.
    pub fn remove_if(&mut self, key: E::Key, mut eq: impl FnMut(&E) -> bool) -> Option<E> {
        let hasher = self.hasher;
        self.table.remove(
            self.hash(key),
            |entry| entry.key() == key && eq(entry),
            |entry| hasher.hash_one(entry.key()),
        )
    }

    pub fn remove(&mut self, key: E::Key) -> Option<E> {
        self.remove_if(key, |_| true)
    }

    /// Adds many entries at once, in the order of their places (see
    /// [`CompactTable::insert_all`]); of entries with one key the last
    /// stays.
    pub fn insert_all(&mut self, entries: &[E]) {
        let hasher = self.hasher;
        self.table.insert_all(
            entries,
            |a, b| a.key() == b.key(),
            |entry| hasher.hash_one(entry.key()),
        );
    }

    pub fn reserve(&mut self, additional: usize) {
        let hasher = self.hasher;
        self.table
            .reserve(additional, |entry| hasher.hash_one(entry.key()));
    }

    /// Keeps the entries `keep` accepts.
    pub fn retain(&mut self, keep: impl FnMut(&E) -> bool) {
        let hasher = self.hasher;
        self.table
            .retain(keep, |entry| hasher.hash_one(entry.key()));
    }

    /// The entries, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &E> {
        self.table.iter()
    }

    /// See [`CompactTable::start_capture`].
    pub fn start_capture(&self) {
        self.table.start_capture();
    }

    /// See [`CompactTable::capture_some`].
    pub fn capture_some(&self, budget: usize) -> bool {
        self.table.capture_some(budget)
    }

    /// See [`CompactTable::take_capture`].
    pub fn take_capture(&self) -> Option<Vec<E>> {
        self.table.take_capture()
    }

    /// See [`CompactTable::stop_capture`].
    pub fn stop_capture(&self) {
        self.table.stop_capture();
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Bytes of its one allocation.
    pub fn allocation_size(&self) -> usize {
        self.table.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    type Pair = KeyNode;

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
                    match table.find_mut(hash(key), |pair| pair.key == key) {
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
            for key in 0..64 {
                let found = table
                    .find(hash(key), |pair| pair.key == key)
                    .map(|pair| pair.node);
                prop_assert_eq!(found, model.get(&key).copied());
            }
            let mut listed: Vec<(u32, u32)> =
                table.iter().map(|pair| (pair.key, pair.node)).collect();
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
    fn it_grows_by_half_and_stays_between_57_and_85_percent_full() {
        let mut table = CompactTable::<Pair>::default();
        let hasher = |pair: &Pair| spread_hash(pair.key);
        let mut lowest_fill = 1.0f64;
        for key in 0..200_000u32 {
            table.insert(spread_hash(key), Pair { key, node: key }, hasher);
            let places = table.places.len() as f64;
            let fill = table.len() as f64 / places;
            assert!(fill <= 0.85 + 1e-9);
            if key > 1000 {
                lowest_fill = lowest_fill.min(fill);
            }
        }
        assert!(lowest_fill > 0.55, "lowest fill {lowest_fill}");
        for key in (0..200_000u32).step_by(7) {
            assert_eq!(
                table.find(spread_hash(key), |pair| pair.key == key),
                Some(&Pair { key, node: key })
            );
        }
    }

    #[test]
    fn entries_added_at_once_are_found_as_if_added_one_by_one() {
        for hash in [crowded_hash as fn(u32) -> u64, spread_hash] {
            let hasher = |pair: &Pair| hash(pair.key);
            let same = |a: &Pair, b: &Pair| a.key == b.key;
            let mut at_once = CompactTable::<Pair>::default();
            at_once.insert(hash(7), Pair { key: 7, node: 1 }, hasher);
            // Key 3 twice: the later wins, as with a map.
            let entries: Vec<Pair> = (0..500u32)
                .map(|key| Pair { key, node: key * 2 })
                .chain([Pair { key: 3, node: 99 }])
                .collect();
            at_once.insert_all(&entries, same, hasher);
            assert_eq!(at_once.len(), 500);
            assert!(at_once.len() <= at_once.capacity());
            for key in 0..500u32 {
                let expected = if key == 3 { 99 } else { key * 2 };
                assert_eq!(
                    at_once
                        .find(hash(key), |pair| pair.key == key)
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
        table.for_each_match(crowded_hash(3), |pair| {
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
}
