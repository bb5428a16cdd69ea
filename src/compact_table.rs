//! An open-addressing hash table of small `Copy` entries that fills to
//! 92 % and grows by an eighth: the ledger's document keys. (The candidate
//! indexes' keys, the exact fast path's hash tags and the forest's node
//! numbers are in [`crate::key_node_table`], which keeps only half of each
//! key.)
//!
//! Motivation: a `hashbrown` table doubles when it is 7/8 full, so right
//! after growing it is under half full, and it spends a control byte per
//! place besides. Over a fill its places cost 1/0.44 to 1/0.875 entries
//! each, and whatever point a measurement lands on, tables sized by the
//! node count all double at the same moment. For 8-byte entries that is
//! 9 bytes a place, 10 to 20 bytes an entry.
//!
//! Design: linear probing over one vector of entries, placed by the
//! caller's 64-bit hash scaled to the table's length (its high bits, so any
//! length works). An entry type names one value that never holds data
//! ([`TableEntry::VACANT`]). Entries stay in the order of their home places
//! (Robin Hood: an insert goes after the entries of its home and before
//! those of later homes, which move one place on), so a lookup stops at the
//! first entry of a later home, not only at a vacant place: a search that
//! finds nothing walks about as far as one that finds. Removal shifts the
//! entries after it back until one is at its home (no tombstones). The
//! table grows by an eighth when an insert would take it past 92 %, so it
//! is 82–92 % full: 8-byte entries cost 8.7 to 9.8 bytes each (10.9 at the
//! 73 % a quarter left, 9.4 to 14 at the 57–85 % of plain linear probing
//! before issue 49). Growing places the old entries in their old order,
//! which is nearly the new one.
//!
//! Consequences: a walk passes about 6 entries at 92 % (contiguous: a cache
//! line or two), and an insert there moves a few dozen one place on; with
//! no per-place tag, the caller's `eq` runs on every entry passed and the
//! caller's hash of an entry tells its distance from home, which suits
//! entries that carry their own key (not ones compared through a slot, like
//! [`crate::slots`]' numbers). Growing by an eighth copies each entry about
//! eight times over a fill (four by a quarter, two by half); the overlap
//! bench placed as fast either way (docs/performance.md, issue 49, seventh
//! part).

use std::hash::{BuildHasher, Hash};
use std::path::Path;

use crate::capture::{Capture, CaptureSink, Image};
use crate::hashing::FingerprintBuildHasher;
use crate::radix::sort_stably_filling;

/// An entry of a [`CompactTable`]: small, `Copy`, and with one value that
/// stands for an empty place.
pub trait TableEntry: Copy {
    /// The empty place; never inserted.
    const VACANT: Self;
    fn is_vacant(&self) -> bool;
}

/// The table fills to this fraction (percent) before it grows.
const MAX_LOAD_PERCENT: usize = 92;

/// The table grows by its length divided by this.
const GROWTH_DIVISOR: usize = 8;

/// A walk asks an entry's distance from home every this many entries.
const DISTANCE_CHECK_EVERY: usize = 4;

/// Places of the smallest table that holds anything.
const MIN_PLACES: usize = 8;

/// Whether two entries are one (the later replaces the earlier).
type Same<'a, T> = dyn Fn(&T, &T) -> bool + 'a;

/// Where the next entry given in the order of homes goes
/// ([`CompactTable::place_in_order`]).
#[derive(Debug, Default)]
struct InOrder {
    cursor: usize,
    last_home: usize,
}

/// Where a pass over a table is ([`CompactTable::sweep_some`]): a pass
/// that forgets entries spread over many calls, between which the table
/// changes. An insert moves entries on by one place, a removal moves them
/// back by one; so the pass steps back a place for each removal since its
/// last step, and at the end visits the entries moved across it to the
/// first places. A table laid out anew starts the pass again.
#[derive(Debug, Default, Clone, Copy)]
pub struct SweepPass {
    place: usize,
    places: usize,
    removals: u64,
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct CompactTable<T> {
    places: Vec<T>,
    len: usize,
    /// Entries taken out so far by [`Self::remove`] (see [`SweepPass`]).
    removals: u64,
    /// The places as of a snapshot's moment, while one is taken (every
    /// write of a place goes through [`Self::set`]).
    capture: Capture<T>,
}

impl<T> Default for CompactTable<T> {
    fn default() -> Self {
        CompactTable {
            places: Vec::new(),
            len: 0,
            removals: 0,
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
    pub fn start_capture(&self, directory: Option<&Path>) -> CaptureSink<T> {
        self.capture.start(&self.places, directory)
    }

    /// Copies up to `budget` more places of the capture; `true` once done.
    pub fn capture_some(&self, budget: usize) -> bool {
        self.capture.copy_some(&self.places, budget)
    }

    /// The captured places (vacant ones too: leaving them out is left to
    /// the caller, after the lock) once all are copied (the capture ends).
    pub fn take_capture(&self) -> Option<Image<T>> {
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

    /// How far `place` is past the home of the entry there.
    fn distance(&self, place: usize, hash_of_entry: u64) -> usize {
        let places = self.places.len();
        let start = home(hash_of_entry, places);
        if place >= start {
            place - start
        } else {
            place + places - start
        }
    }

    /// Calls `visit` on each entry of the walk of `hash` (from its home to
    /// the first vacant place or the first entry nearer its own home than
    /// an entry of `hash` would be there) until it returns `true`; where.
    fn walk(
        &self,
        hash: u64,
        hasher: impl Fn(&T) -> u64,
        mut visit: impl FnMut(&T) -> bool,
    ) -> Option<usize> {
        if self.places.is_empty() {
            return None;
        }
        let mut place = home(hash, self.places.len());
        let mut distance = 0;
        loop {
            let entry = &self.places[place];
            if entry.is_vacant() {
                return None;
            }
            if visit(entry) {
                return Some(place);
            }
            // After an entry of a later home every entry is of a later
            // home: the check may come late, and most walks end before it.
            if distance % DISTANCE_CHECK_EVERY == DISTANCE_CHECK_EVERY - 1
                && self.distance(place, hasher(entry)) < distance
            {
                return None;
            }
            place = self.next(place);
            distance += 1;
        }
    }

    /// The first entry of `hash`'s walk that `eq` accepts.
    pub fn find(
        &self,
        hash: u64,
        eq: impl FnMut(&T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) -> Option<&T> {
        let place = self.walk(hash, hasher, eq)?;
        Some(&self.places[place])
    }

    /// As [`Self::find`], to change the entry in place. The change must
    /// keep the entry's hash.
    pub fn find_mut(
        &mut self,
        hash: u64,
        eq: impl FnMut(&T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) -> Option<&mut T> {
        let place = self.walk(hash, hasher, eq)?;
        self.capture.before_write(&self.places, place);
        Some(&mut self.places[place])
    }

    /// Calls `each` on every entry of `hash`'s walk, in order: all entries
    /// of one key are on it, when several share it (and others may be).
    pub fn for_each_match(&self, hash: u64, hasher: impl Fn(&T) -> u64, mut each: impl FnMut(&T)) {
        self.walk(hash, hasher, |entry| {
            each(entry);
            false
        });
    }

    /// Adds `entry` (whose hash is `hash`) without looking for an equal
    /// one: the caller knows there is none, or wants both. `hasher` gives
    /// any entry's hash, for growing. A vacant `entry` is not added.
    pub fn insert(&mut self, hash: u64, entry: T, hasher: impl Fn(&T) -> u64) {
        if entry.is_vacant() {
            return;
        }
        self.reserve(1, &hasher);
        self.place_new(hash, entry, hasher);
    }

    /// Adds many entries at once (recovery): the table sized once, then the
    /// entries placed in the order of their places, so it is written front
    /// to back where one insert at a time went to a random place each. An
    /// entry `same` as one already placed replaces it (the later wins, as a
    /// map's `extend` does).
    pub fn insert_all(
        &mut self,
        entries: Vec<T>,
        same: impl Fn(&T, &T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) {
        self.reserve(entries.len(), &hasher);
        // The entries themselves sorted by their places' bits (the hash's
        // high half), then read in turn: a sort of their indexes read them
        // at random after it, a cache and TLB miss each at 100 M entries.
        let sorted = sort_stably_filling(vec![entries], T::VACANT, |entry| {
            (hasher(&entry) >> 32) as u32
        });
        // Into an empty table (recovery), in that order: each at its home
        // or right after the one before.
        let mut in_order = (self.len == 0).then(InOrder::default);
        for entry in sorted {
            match &mut in_order {
                Some(in_order) => {
                    self.place_in_order(in_order, hasher(&entry), entry, Some(&same), &hasher);
                }
                None => self.place_or_replace(hasher(&entry), entry, &same, &hasher),
            }
        }
    }

    /// Adds `entry`, which comes in (nearly) the order of homes after the
    /// entries placed through `in_order` into a table that held nothing
    /// else: at its home or right after the last one placed, and out of
    /// order (or past the end) on its walk. With `same`, an entry `same` as
    /// one placed replaces it.
    fn place_in_order(
        &mut self,
        in_order: &mut InOrder,
        hash: u64,
        entry: T,
        same: Option<&Same<'_, T>>,
        hasher: &impl Fn(&T) -> u64,
    ) {
        let places = self.places.len();
        let start = home(hash, places);
        let place = start.max(in_order.cursor);
        if start >= in_order.last_home && place < places {
            let replaced = same.and_then(|same| {
                (start..in_order.cursor).find(|&at| same(&self.places[at], &entry))
            });
            if let Some(at) = replaced {
                self.set(at, entry);
                return;
            }
            self.set(place, entry);
            self.len += 1;
            (in_order.cursor, in_order.last_home) = (place + 1, start);
            return;
        }
        match same {
            Some(same) => self.place_or_replace(hash, entry, same, hasher),
            None => self.place_new(hash, entry, hasher),
        }
        if in_order.cursor < places && !self.places[in_order.cursor].is_vacant() {
            in_order.cursor += 1;
        }
    }

    /// Puts `entry` in the place of one `same` as it on its walk, or adds
    /// it; the table has room.
    fn place_or_replace(
        &mut self,
        hash: u64,
        entry: T,
        same: impl Fn(&T, &T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) {
        if entry.is_vacant() {
            return;
        }
        match self.walk(hash, &hasher, |resident| same(resident, &entry)) {
            Some(place) => self.set(place, entry),
            None => self.place_new(hash, entry, hasher),
        }
    }

    fn previous(&self, place: usize) -> usize {
        if place == 0 {
            self.places.len() - 1
        } else {
            place - 1
        }
    }

    /// Adds an entry on its walk, after the entries of its home and before
    /// those of later homes, moving those one place on; the table has room.
    fn place_new(&mut self, hash: u64, entry: T, hasher: impl Fn(&T) -> u64) {
        let mut place = home(hash, self.places.len());
        let mut distance = 0;
        // Past the entries no nearer their home than this one would be.
        while !self.places[place].is_vacant()
            && self.distance(place, hasher(&self.places[place])) >= distance
        {
            place = self.next(place);
            distance += 1;
        }
        // The entries from here to the first vacant place move one on: in
        // one copy when they do not wrap around the end and no capture
        // needs their old values.
        let mut vacant = place;
        while !self.places[vacant].is_vacant() {
            vacant = self.next(vacant);
        }
        if vacant > place && !self.capture.is_running_mut() {
            self.places.copy_within(place..vacant, place + 1);
            vacant = place;
        }
        while vacant != place {
            let before = self.previous(vacant);
            let moved = self.places[before];
            self.set(vacant, moved);
            vacant = before;
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
        let hole = self.walk(hash, &hasher, eq)?;
        self.removals += 1;
        Some(self.remove_at(hole, &hasher))
    }

    /// Takes out the entry at `hole`, shifting the entries after it back.
    fn remove_at(&mut self, mut hole: usize, hasher: &impl Fn(&T) -> u64) -> T {
        let removed = self.places[hole];
        // Every entry after the hole that is not at its home moves one
        // place back, which keeps the order of homes.
        let mut place = self.next(hole);
        loop {
            let entry = self.places[place];
            if entry.is_vacant() || self.distance(place, hasher(&entry)) == 0 {
                break;
            }
            self.set(hole, entry);
            hole = place;
            place = self.next(place);
        }
        self.set(hole, T::VACANT);
        self.len -= 1;
        removed
    }

    /// Goes on with `pass` over the table for at most `budget` visits,
    /// taking out each entry `keep` rejects; whether the pass ended. Every
    /// entry in the table from a pass's start to its end is visited in it
    /// (see [`SweepPass`]).
    pub fn sweep_some(
        &mut self,
        pass: &mut SweepPass,
        budget: usize,
        mut keep: impl FnMut(&T) -> bool,
        hasher: impl Fn(&T) -> u64,
    ) -> bool {
        let places = self.places.len();
        if pass.places != places {
            // Laid out anew (or the first pass): from the start again.
            *pass = SweepPass {
                place: 0,
                places,
                removals: self.removals,
            };
        }
        // An entry not yet visited may have moved back past the pass's
        // place, by one place for each removal before it since.
        let moved_back = usize::try_from(self.removals - pass.removals).unwrap_or(usize::MAX);
        let mut place = pass.place.saturating_sub(moved_back);
        pass.removals = self.removals;
        let mut visits = 0;
        while place < places && visits < budget {
            visits += 1;
            let entry = self.places[place];
            if !entry.is_vacant() && !keep(&entry) {
                // The entries after it shift back: this place again.
                self.remove_at(place, &hasher);
            } else {
                place += 1;
            }
        }
        if place < places {
            pass.place = place;
            return false;
        }
        // Inserts may have moved entries across the end: they lie before
        // the first vacant place.
        let mut place = 0;
        while let Some(&entry) = self.places.get(place) {
            if entry.is_vacant() {
                break;
            }
            if keep(&entry) {
                place += 1;
            } else {
                self.remove_at(place, &hasher);
            }
        }
        pass.place = 0;
        true
    }

    /// Makes room for `additional` more entries, growing by an eighth (or
    /// more, when asked for more) at once.
    pub fn reserve(&mut self, additional: usize, hasher: impl Fn(&T) -> u64) {
        let needed = self.len.saturating_add(additional);
        if needed <= self.capacity() {
            return;
        }
        let mut places = self.places.len().max(MIN_PLACES);
        while max_len(places) < needed {
            places += places / GROWTH_DIVISOR;
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
            places += places / GROWTH_DIVISOR;
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
        // The old entries in the order of their homes: from the first
        // vacant place on (those before it wrapped around the end). Homes
        // scale with the hash, so that is the new order but for entries of
        // one old home that land on two new ones: each entry goes to its
        // home or right after the last one placed, and the few out of
        // order (or wrapping around the end) are inserted on their walk.
        let start = old.iter().position(TableEntry::is_vacant).unwrap_or(0);
        let mut in_order = InOrder::default();
        for &entry in old[start..].iter().chain(&old[..start]) {
            if !entry.is_vacant() && keep(&entry) {
                self.place_in_order(&mut in_order, hasher(&entry), entry, None, &hasher);
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
        let hasher = self.hasher;
        self.table.find(
            self.hash(key),
            |entry| entry.key() == key && eq(entry),
            |entry| hasher.hash_one(entry.key()),
        )
    }

    /// As [`Self::find`], to change the entry in place (not its key).
    pub fn find_mut(&mut self, key: E::Key, mut eq: impl FnMut(&E) -> bool) -> Option<&mut E> {
        let (hash, hasher) = (self.hash(key), self.hasher);
        self.table.find_mut(
            hash,
            |entry| entry.key() == key && eq(entry),
            |entry| hasher.hash_one(entry.key()),
        )
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
    pub fn insert_all(&mut self, entries: Vec<E>) {
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

    /// See [`CompactTable::sweep_some`].
    pub fn sweep_some(
        &mut self,
        pass: &mut SweepPass,
        budget: usize,
        keep: impl FnMut(&E) -> bool,
    ) -> bool {
        let hasher = self.hasher;
        self.table
            .sweep_some(pass, budget, keep, |entry| hasher.hash_one(entry.key()))
    }

    /// See [`CompactTable::start_capture`].
    pub fn start_capture(&self, directory: Option<&Path>) -> CaptureSink<E> {
        self.table.start_capture(directory)
    }

    /// See [`CompactTable::capture_some`].
    pub fn capture_some(&self, budget: usize) -> bool {
        self.table.capture_some(budget)
    }

    /// See [`CompactTable::take_capture`].
    pub fn take_capture(&self) -> Option<Image<E>> {
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
#[path = "compact_table_tests.rs"]
mod tests;
