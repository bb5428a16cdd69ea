//! A table of (32-bit key, node number) entries in 6 bytes each: the
//! candidate keys that hold one node (most keys of the short-text LSH and
//! the long-text sketch index), the exact fast path's hash tags, and the
//! forest's node numbers under a tag of their fingerprint ([`crate::slots`]).
//!
//! Motivation: these were 8-byte entries of a [`crate::compact_table`]
//! table, 8.7–9.8 bytes a key at its 82–92 % fill, and at 10 M nodes they
//! were the largest structure after the forest's own slots (about 60 bytes
//! a node together). The key's high half need not be stored: the
//! multi-index's buckets stand for a block of the fingerprint the same way.
//!
//! Design: keys first pass through a bijection of `u32` seeded per table
//! (a crafted set of keys cannot pile into one stretch). Linear probing
//! with the home place scaled from the mixed key (its high bits, any
//! length), in Robin Hood order, which with a scaled home is the order of
//! the keys themselves: the table is a sorted array with vacant places
//! spread through it. An entry stores the key's low 16 bits and the node
//! (three 16-bit words); its high 16 bits are read from a directory of
//! 2^16 + 1 positions, `starts[h]`, which separates the entries whose high
//! half is below `h` (before it) from the others (at or after it). An
//! insert or removal moves the entries up to the next vacant place by one
//! (a few, as in any linear probing) and the directory's positions that
//! fall among them. The table grows by an eighth past 92 % full, placing
//! the old entries in their order; entries displaced past the last home
//! go in a short tail of places (a run reaching its end grows the table).
//!
//! Consequences: 6.5–7.3 bytes a key (82–92 % full) where the 8-byte
//! entries took 8.7–9.8; keys are compared in full (a key is never
//! confused with another sharing its low half), so what a lookup finds is
//! unchanged. The directory costs 256 KiB per table from its first key
//! and a read (a cache miss a small table did not have: `neardup stamp` of
//! 50 000 documents is 4 % slower, of 200 000 as fast), and a small
//! table's insert moves many of its positions (each place of a table of a
//! few hundred covers hundreds of high halves; the run is found by doubling
//! then halving and moved in one pass).
//! Positions are `u32`: a table holds fewer than 2^32 places (24 GiB of
//! entries; a forest of `u32` node numbers fills about a tenth of that).

use std::hash::BuildHasher;

use crate::hashing::FingerprintBuildHasher;
use crate::units::NodeId;

/// Bits of the key the directory stands for; the entry keeps the rest.
const HIGH_BITS: u32 = 16;
const DIRECTORY_LEN: usize = (1 << HIGH_BITS) + 1;

/// Heap bytes of a table's directory: a table that holds anything has
/// these besides its places, whatever its size.
pub const DIRECTORY_BYTES: usize = DIRECTORY_LEN * size_of::<u32>();

/// The table fills to this fraction (percent) before it grows.
const MAX_LOAD_PERCENT: usize = 92;

/// The table grows by its homes divided by this.
const GROWTH_DIVISOR: usize = 8;

/// Places after the last home, for entries displaced past it.
const TAIL_PLACES: usize = 64;

/// Homes of the smallest table that holds anything.
const MIN_HOMES: usize = 8;

/// An entry: the mixed key's low half, then the node's two halves. No node
/// has the last number (see [`crate::slots`]): it marks a vacant place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry([u16; 3]);

impl Entry {
    const VACANT: Entry = Entry([0, u16::MAX, u16::MAX]);

    fn new(low: u16, node: NodeId) -> Self {
        Entry([low, node as u16, (node >> 16) as u16])
    }

    fn is_vacant(&self) -> bool {
        self.0[1] == u16::MAX && self.0[2] == u16::MAX
    }

    fn low(&self) -> u16 {
        self.0[0]
    }

    fn node(&self) -> NodeId {
        u32::from(self.0[1]) | (u32::from(self.0[2]) << 16)
    }

    fn set_node(&mut self, node: NodeId) {
        *self = Entry::new(self.low(), node);
    }
}

/// A seeded bijection of `u32` (xor, odd multiplies and xor-shifts are
/// each invertible).
#[derive(Debug, Clone, Copy)]
struct KeyMix {
    xor: u32,
    multiplier: u32,
}

impl KeyMix {
    fn seeded() -> Self {
        let seed = FingerprintBuildHasher::default().hash_one(0x006b_6579_5f6d_6978_u64);
        KeyMix {
            xor: seed as u32,
            multiplier: ((seed >> 32) as u32) | 1,
        }
    }

    fn mix(self, key: u32) -> u32 {
        let mut mixed = (key ^ self.xor).wrapping_mul(self.multiplier);
        mixed ^= mixed >> 16;
        mixed = mixed.wrapping_mul(0x7feb_352d);
        mixed ^ (mixed >> 15)
    }
}

fn high(mixed: u32) -> usize {
    (mixed >> (32 - HIGH_BITS)) as usize
}

fn low(mixed: u32) -> u16 {
    mixed as u16
}

/// The mixed key of an entry whose high half is `high`.
fn mixed_of(high: usize, low: u16) -> u32 {
    ((high as u32) << (32 - HIGH_BITS)) | u32::from(low)
}

/// The place `mixed` starts from in a table of `homes` homes: the key
/// scaled to the length (its high bits choose).
fn home(mixed: u32, homes: usize) -> usize {
    ((u64::from(mixed) * homes as u64) >> 32) as usize
}

/// Entries a table of `homes` holds before it grows.
fn max_len(homes: usize) -> usize {
    homes * MAX_LOAD_PERCENT / 100
}

/// Homes for `needed` entries: `from` (at least [`MIN_HOMES`]) grown by
/// an eighth at a time.
fn homes_for(needed: usize, from: usize) -> usize {
    let mut homes = from.max(MIN_HOMES);
    while max_len(homes) < needed {
        homes += homes / GROWTH_DIVISOR;
    }
    homes
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct KeyNodeTable {
    mix: KeyMix,
    /// `homes` places that mixed keys scale to, then [`TAIL_PLACES`].
    places: Vec<Entry>,
    homes: usize,
    /// Empty while `places` is; then [`DIRECTORY_LEN`] positions (module
    /// docs).
    starts: Vec<u32>,
    len: usize,
}

impl Default for KeyNodeTable {
    fn default() -> Self {
        KeyNodeTable {
            mix: KeyMix::seeded(),
            places: Vec::new(),
            homes: 0,
            starts: Vec::new(),
            len: 0,
        }
    }
}

/// Where a walk for a key ended.
enum Walk {
    /// At an entry of the key.
    Found(usize),
    /// Where the key would go: a vacant place or the first entry of a
    /// larger key (`None`: past the last place).
    Absent(Option<usize>),
}

impl KeyNodeTable {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries the table holds without growing.
    pub fn capacity(&self) -> usize {
        max_len(self.homes)
    }

    /// Bytes of its allocations (the places and the directory).
    pub fn allocation_size(&self) -> usize {
        self.places.capacity() * size_of::<Entry>() + self.starts.capacity() * size_of::<u32>()
    }

    fn home(&self, mixed: u32) -> usize {
        home(mixed, self.homes)
    }

    fn start(&self, high: usize) -> usize {
        self.starts[high] as usize
    }

    /// From the key's home: past the entries of smaller keys, then each
    /// entry of the key until `accept` takes one.
    fn walk(&self, mixed: u32, mut accept: impl FnMut(NodeId) -> bool) -> Walk {
        if self.places.is_empty() {
            return Walk::Absent(None);
        }
        let (key_high, key_low) = (high(mixed), low(mixed));
        let (first, after) = (self.start(key_high), self.start(key_high + 1));
        let mut place = self.home(mixed);
        while place < self.places.len() {
            let entry = self.places[place];
            if entry.is_vacant() || place >= after || (place >= first && entry.low() > key_low) {
                return Walk::Absent(Some(place));
            }
            if place >= first && entry.low() == key_low && accept(entry.node()) {
                return Walk::Found(place);
            }
            place += 1;
        }
        Walk::Absent(None)
    }

    /// The node of the first entry of `key` that `accept` takes.
    pub fn find(&self, key: u32, accept: impl FnMut(NodeId) -> bool) -> Option<NodeId> {
        match self.walk(self.mix.mix(key), accept) {
            Walk::Found(place) => Some(self.places[place].node()),
            Walk::Absent(_) => None,
        }
    }

    pub fn get(&self, key: u32) -> Option<NodeId> {
        self.find(key, |_| true)
    }

    /// Gives the first entry of `key` that `accept` takes the node `node`;
    /// whether there was one.
    pub fn replace(&mut self, key: u32, accept: impl FnMut(NodeId) -> bool, node: NodeId) -> bool {
        match self.walk(self.mix.mix(key), accept) {
            Walk::Found(place) => {
                self.places[place].set_node(node);
                true
            }
            Walk::Absent(_) => false,
        }
    }

    /// Adds an entry without looking for one of the same key (after those
    /// there are). `NodeId::MAX` is no node and is not added.
    pub fn insert(&mut self, key: u32, node: NodeId) {
        self.insert_mixed(self.mix.mix(key), node);
    }

    /// The directory after an entry of high half `key_high` went to `place`
    /// and the entries from there to `vacant` moved one place on.
    fn moved_on(&mut self, key_high: usize, place: usize, vacant: usize) {
        let (place, vacant) = (place as u32, vacant as u32);
        // Entries of this high half and below start by `place` at the latest
        // (the positions are in order: those past it are a run that ends
        // here; in a small table, a run of many high halves).
        let below = &mut self.starts[..=key_high];
        let past = run_from_end(below, |start| start > place);
        let below_len = below.len();
        below[below_len - past..].fill(place);
        // Those above: after the new entry, and one on where they moved.
        let above = &mut self.starts[key_high + 1..];
        let moved = run_from_start(above, |start| start <= vacant);
        for start in &mut above[..moved] {
            *start = if *start <= place {
                place + 1
            } else {
                *start + 1
            };
        }
    }

    /// Takes out the first entry of `key` that `accept` takes; its node.
    pub fn remove_if(&mut self, key: u32, accept: impl FnMut(NodeId) -> bool) -> Option<NodeId> {
        let mixed = self.mix.mix(key);
        let Walk::Found(place) = self.walk(mixed, accept) else {
            return None;
        };
        let removed = self.places[place].node();
        // The entries after it that are not at their home move one back.
        let mut entry_high = high(mixed);
        let mut next = place + 1;
        while next < self.places.len() && !self.places[next].is_vacant() {
            while self.start(entry_high + 1) <= next {
                entry_high += 1;
            }
            let entry = self.places[next];
            if self.home(mixed_of(entry_high, entry.low())) == next {
                break;
            }
            next += 1;
        }
        self.places.copy_within(place + 1..next, place);
        self.places[next - 1] = Entry::VACANT;
        self.len -= 1;
        // Positions among the entries moved back move back with them.
        let above = &mut self.starts[high(mixed) + 1..];
        let moved = run_from_start(above, |start| (start as usize) < next);
        for start in &mut above[..moved] {
            *start -= 1;
        }
        Some(removed)
    }

    pub fn remove(&mut self, key: u32) -> Option<NodeId> {
        self.remove_if(key, |_| true)
    }

    /// Makes room for `additional` more entries, growing by an eighth (or
    /// more, when asked for more) at once.
    pub fn reserve(&mut self, additional: usize) {
        let needed = self.len.saturating_add(additional);
        if needed > max_len(self.homes) {
            self.place_over(homes_for(needed, self.homes));
        }
    }

    /// Gives back room beyond what `capacity` entries (at least those
    /// held) need.
    pub fn shrink_to(&mut self, capacity: usize) {
        let needed = capacity.max(self.len);
        if needed == 0 {
            (self.places, self.starts, self.homes) = (Vec::new(), Vec::new(), 0);
            return;
        }
        let homes = homes_for(needed, MIN_HOMES);
        if homes < self.homes {
            self.place_over(homes);
        }
    }

    /// The entries placed again over `homes` homes, in their order.
    fn place_over(&mut self, homes: usize) {
        let old_places = std::mem::take(&mut self.places);
        let old_starts = std::mem::take(&mut self.starts);
        let mut builder = InOrder::new(homes);
        let mut entry_high = 0;
        for (place, entry) in old_places.iter().enumerate() {
            if entry.is_vacant() {
                continue;
            }
            while old_starts[entry_high + 1] as usize <= place {
                entry_high += 1;
            }
            builder.push(mixed_of(entry_high, entry.low()), entry.node());
        }
        builder.finish(self);
    }

    /// The key as this table orders it (a bijection of the key): entries
    /// given in this order ([`Self::insert_all_in_order`]) need no sort.
    pub fn order_of(&self, key: u32) -> u32 {
        self.mix.mix(key)
    }

    /// [`Self::order_of`] as a function that does not borrow the table.
    pub fn orderer(&self) -> impl Fn(u32) -> u32 + Copy + use<> {
        let mix = self.mix;
        move |key| mix.mix(key)
    }

    /// Adds many entries at once, given as [`Self::order_of`] their key in
    /// the high half and the node in the low half, in ascending order (a
    /// key given more than once has its entries side by side, as inserts
    /// leave them): into an empty table they are written front to back,
    /// without a copy or a sort (recovery's candidate keys and exact-hash
    /// tags, sorted so already); into a table that holds entries, one at a
    /// time.
    pub fn insert_all_in_order(&mut self, entries: impl Iterator<Item = u64> + Clone) {
        let entries = entries.filter(|&packed| packed as NodeId != NodeId::MAX);
        if !self.is_empty() {
            for packed in entries {
                self.insert_mixed((packed >> 32) as u32, packed as NodeId);
            }
            return;
        }
        let mut builder = InOrder::new(homes_for(entries.clone().count(), MIN_HOMES));
        let mut last = None;
        for packed in entries {
            debug_assert!(last <= Some(packed >> 32), "entries in ascending order");
            last = Some(packed >> 32);
            builder.push((packed >> 32) as u32, packed as NodeId);
        }
        builder.finish(self);
    }

    /// Adds many entries at once: into an empty table, sorted by mixed key
    /// and written front to back; otherwise one at a time. Recovery gives
    /// its entries sorted already ([`Self::insert_all_in_order`]); the
    /// tests build tables of any keys this way.
    #[cfg(test)]
    pub fn insert_all(&mut self, entries: &[(u32, NodeId)]) {
        let entries: Vec<u64> = entries
            .iter()
            .filter(|&&(_, node)| node != NodeId::MAX)
            .map(|&(key, node)| u64::from(self.mix.mix(key)) << 32 | u64::from(node))
            .collect();
        if !self.is_empty() {
            for packed in entries {
                self.insert_mixed((packed >> 32) as u32, packed as NodeId);
            }
            return;
        }
        let sorted = crate::radix::sort_stably_by(vec![entries], |packed| (packed >> 32) as u32);
        let mut builder = InOrder::new(homes_for(sorted.len(), MIN_HOMES));
        for packed in sorted {
            builder.push((packed >> 32) as u32, packed as NodeId);
        }
        builder.finish(self);
    }

    /// [`Self::insert`] of an entry whose key is mixed already.
    fn insert_mixed(&mut self, mixed: u32, node: NodeId) {
        if let Err(room) = self.find_or_room(mixed, |_| false) {
            self.put(room, mixed, node);
        }
    }

    /// The node of the first entry of `key` that `accept` takes, or `node`
    /// added under `key` when none does (one walk where a lookup and then
    /// an insert took two).
    pub fn find_or_insert(
        &mut self,
        key: u32,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> Option<NodeId> {
        let mixed = self.mix.mix(key);
        match self.find_or_room(mixed, accept) {
            Ok(place) => Some(self.places[place].node()),
            Err(room) => {
                self.put(room, mixed, node);
                None
            }
        }
    }

    /// Gives the first entry of `key` that `accept` takes the node `node`,
    /// or adds `node` under `key` when none does (one walk).
    pub fn replace_or_insert(
        &mut self,
        key: u32,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) {
        let mixed = self.mix.mix(key);
        match self.find_or_room(mixed, accept) {
            Ok(place) => self.places[place].set_node(node),
            Err(room) => self.put(room, mixed, node),
        }
    }

    /// With room for one more entry: the place of the first entry of
    /// `mixed` that `accept` takes, or where one would go and the first
    /// vacant place from there.
    fn find_or_room(
        &mut self,
        mixed: u32,
        mut accept: impl FnMut(NodeId) -> bool,
    ) -> Result<usize, (usize, usize)> {
        self.reserve(1);
        loop {
            match self.walk(mixed, &mut accept) {
                Walk::Found(place) => return Ok(place),
                Walk::Absent(Some(place)) => {
                    if let Some(vacant) =
                        (place..self.places.len()).find(|&at| self.places[at].is_vacant())
                    {
                        return Err((place, vacant));
                    }
                }
                Walk::Absent(None) => {}
            }
            // The run reaches past the last place: more homes.
            self.place_over(self.homes + self.homes / GROWTH_DIVISOR + TAIL_PLACES);
        }
    }

    /// Adds an entry at `place`, the entries from there to `vacant` moving
    /// one place on; `NodeId::MAX` is no node and is not added.
    fn put(&mut self, (place, vacant): (usize, usize), mixed: u32, node: NodeId) {
        if node == NodeId::MAX {
            return;
        }
        self.places.copy_within(place..vacant, place + 1);
        self.places[place] = Entry::new(low(mixed), node);
        self.len += 1;
        self.moved_on(high(mixed), place, vacant);
    }
}

/// How many positions from the start of `starts` (in order) `inside`
/// takes: doubling steps, then halving, so a run of a few is found in a
/// few reads (a large table's usual case) and one of thousands in a few
/// dozen.
fn run_from_start(starts: &[u32], inside: impl Fn(u32) -> bool) -> usize {
    let mut outside = 1;
    while outside <= starts.len() && inside(starts[outside - 1]) {
        outside *= 2;
    }
    let inside_len = outside / 2;
    let end = outside.min(starts.len() + 1) - 1;
    inside_len + starts[inside_len..end].partition_point(|&start| inside(start))
}

/// As [`run_from_start`], from the end of `starts` back.
fn run_from_end(starts: &[u32], inside: impl Fn(u32) -> bool) -> usize {
    let mut outside = 1;
    while outside <= starts.len() && inside(starts[starts.len() - outside]) {
        outside *= 2;
    }
    let inside_len = outside / 2;
    let end = outside.min(starts.len() + 1) - 1;
    let window = &starts[starts.len() - end..starts.len() - inside_len];
    inside_len + (window.len() - window.partition_point(|&start| !inside(start)))
}

/// Places entries given in the order of their mixed keys into fresh
/// places: each at its home or right after the one before, the directory
/// written as the high halves go by.
struct InOrder {
    places: Vec<Entry>,
    starts: Vec<u32>,
    homes: usize,
    /// The next place free after the last entry placed.
    cursor: usize,
    /// The next high half whose start is not written yet.
    next_high: usize,
    len: usize,
}

impl InOrder {
    fn new(homes: usize) -> Self {
        InOrder {
            places: vec![Entry::VACANT; homes + TAIL_PLACES],
            starts: vec![0; DIRECTORY_LEN],
            homes,
            cursor: 0,
            next_high: 0,
            len: 0,
        }
    }

    fn push(&mut self, mixed: u32, node: NodeId) {
        let place = home(mixed, self.homes).max(self.cursor);
        if place >= self.places.len() {
            // A run past the tail (not seen with mixed keys): room for it.
            self.places.resize(place + TAIL_PLACES, Entry::VACANT);
        }
        self.places[place] = Entry::new(low(mixed), node);
        while self.next_high <= high(mixed) {
            self.starts[self.next_high] = place as u32;
            self.next_high += 1;
        }
        self.cursor = place + 1;
        self.len += 1;
    }

    fn finish(mut self, table: &mut KeyNodeTable) {
        for start in &mut self.starts[self.next_high..] {
            *start = self.cursor as u32;
        }
        self.places.shrink_to_fit();
        table.places = self.places;
        table.starts = self.starts;
        table.homes = self.homes;
        table.len = self.len;
    }
}

#[cfg(test)]
#[path = "key_node_table_tests.rs"]
mod tests;
