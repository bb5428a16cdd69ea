//! A table of (32-bit key, node number) entries in 5 bytes each: the
//! candidate keys that hold one node (most keys of the short-text LSH and
//! the long-text sketch index), the exact fast path's hash tags, and the
//! forest's node numbers under a tag of their fingerprint ([`crate::slots`]).
//! The same layout keeps the ledger's 64-bit document keys in 10-byte
//! entries: the table is generic over the key's format ([`KeyFormat`]);
//! what follows describes the 32-bit keys.
//!
//! Motivation: these were 8-byte entries of an open-addressing table of
//! whole keys, 8.7–9.8 bytes a key at its 82–92 % fill, and at 10 M nodes they
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
//! in 24 bits (five bytes); its high 16 bits are its shard's (below) and
//! the rest read from the shard's directory of positions, `starts[h]`,
//! which separates the entries whose high bits are below `h` (before it)
//! from the others (at or after it). Past 2^24 − 1 nodes the node field
//! widens a bit at a time, each shard when it is first given such a
//! number (laid out again: a shard's copy), and the entry keeps a bit of
//! the key fewer, its directory standing for one more (twice its
//! positions): 2 MiB of directories per table at 100 M nodes, against 1
//! byte an entry that a node field of 32 bits from the first key would
//! cost. An insert or removal moves the
//! entries up to the next vacant place by one (a few, as in any linear
//! probing) and the directory's positions that fall among them. A shard
//! grows by an eighth past 92 % full, placing the old entries in their
//! order; entries displaced past the last home go in a short tail of
//! places (a run reaching its end lengthens the tail).
//!
//! Consequences: 5.4–6.1 bytes a key (82–92 % full; 6.5–7.3 with the
//! node in 32 bits until issue 49's eighteenth part) where the 8-byte
//! entries took 8.7–9.8; keys are compared in full (a key is never
//! confused with another sharing its low half), so what a lookup finds is
//! unchanged. The directories cost 256 KiB per table from its first key
//! (a map of 512 bytes besides), and a read (a cache miss a small table
//! did not have: `neardup stamp` of 50 000 documents is 4 % slower, of
//! 200 000 as fast), and a small table's insert moves many of its
//! positions (each place of a table of a few hundred covers hundreds of
//! high halves; the run is found by doubling then halving and moved in
//! one pass).
//! Positions are `u32`: a shard holds fewer than 2^32 places.
//!
//! Shards: the table is one or more shards, each the table above for
//! the mixed keys that share its top bits (none at first, at most 8), its
//! directory standing for the next `16 - bits` (so the directories of all
//! shards hold 2^16 positions among them). A shard that would grow past
//! 4 MiB splits in two by its next bit instead; the shards a key's top 8
//! bits name are looked up in a map of 256. Before, the table was laid
//! out anew whole when it grew: a write held for the copy of all its
//! entries (0.9–2.7 s at 100 M nodes) with the old and new places side by
//! side; now a copy is at most a shard's. Shards of a megabyte or more
//! are mappings of their own ([`crate::allocator`]): 256 fixed shards of
//! half a megabyte each at 10 M nodes left 20 B/node of freed heap behind
//! as they grew. Mixed keys are spread evenly, so shards of one depth
//! fill, grow and split alike.

use crate::units::NodeId;

mod format;
mod shard;

#[cfg(test)]
use format::Entry;
pub use format::{KeyFormat, KeyMix, ShortKeys};
use shard::{
    GROWTH_DIVISOR, HIGH_BITS, InOrder, Layout, MAX_DEPTH, MIN_HOMES, Shard, homes_for, max_len,
    place_bytes, wide_for,
};
#[cfg(test)]
use shard::{TAIL_PLACES, is_vacant};

const PREFIXES: usize = 1 << MAX_DEPTH;

/// A shard whose places would grow past this many bytes splits in two
/// instead (while it has fewer than [`MAX_DEPTH`] bits): shards of 2 to
/// 4.5 MiB, each a mapping of its own ([`crate::allocator`]), laid out
/// anew in a few milliseconds.
const SPLIT_BYTES: usize = 4 << 20;

/// Heap bytes a table that holds anything has besides its places,
/// whatever its size while its node numbers fit the narrow node field:
/// its shards' directories (2^16 positions among them, twice as many for
/// each bit the node field widens by), the map of prefixes to shards and
/// the shards themselves.
pub const FIXED_BYTES: usize = ((1 << HIGH_BITS) + 1) * size_of::<u32>()
    + PREFIXES * size_of::<u16>()
    + size_of::<Shard<ShortKeys>>();

/// The top [`MAX_DEPTH`] bits of a mixed key: which shard takes it is
/// looked up by them.
fn prefix_of(mixed: u64) -> usize {
    (mixed >> (64 - MAX_DEPTH)) as usize
}

/// `count` entries of the whole table, as a shard of `depth` bits takes
/// them (a fraction 2^-depth, and a sixteenth more for the shards that
/// get more than their even share).
fn share_of(count: usize, depth: u32) -> usize {
    let share = count >> depth;
    share + share / 16 + usize::from(count > 0)
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct KeyNodeTable<F: KeyFormat = ShortKeys> {
    mix: F::Mix,
    /// The shard of each value of the mixed key's top [`MAX_DEPTH`] bits
    /// (a shard of `depth` bits has `2^(MAX_DEPTH - depth)` of them, side
    /// by side).
    shard_of_prefix: Box<[u16]>,
    shards: Vec<Shard<F>>,
    len: usize,
    /// [`SPLIT_BYTES`]; smaller in tests, so that small tables split.
    split_bytes: usize,
}

impl<F: KeyFormat> Default for KeyNodeTable<F> {
    fn default() -> Self {
        KeyNodeTable {
            mix: F::seeded(),
            shard_of_prefix: vec![0; PREFIXES].into_boxed_slice(),
            shards: vec![Shard::default()],
            len: 0,
            split_bytes: SPLIT_BYTES,
        }
    }
}

impl<F: KeyFormat> KeyNodeTable<F> {
    /// A table whose shards split past `split_bytes` (tests of tables
    /// that hold many shards with few entries).
    #[cfg(test)]
    pub(crate) fn splitting_at(split_bytes: usize) -> Self {
        KeyNodeTable {
            split_bytes,
            ..KeyNodeTable::default()
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries the table holds without growing (each shard its share).
    pub fn capacity(&self) -> usize {
        self.shards.iter().map(|shard| max_len(shard.homes)).sum()
    }

    /// Bytes of its allocations (the shards' places and directories, and
    /// the map of prefixes).
    pub fn allocation_size(&self) -> usize {
        self.shards
            .iter()
            .map(Shard::allocation_size)
            .sum::<usize>()
            + self.shards.capacity() * size_of::<Shard<F>>()
            + self.shard_of_prefix.len() * size_of::<u16>()
    }

    fn shard_number(&self, mixed: u64) -> usize {
        usize::from(self.shard_of_prefix[prefix_of(mixed)])
    }

    /// The shard of `key` and its key there.
    fn locate(&self, key: F::Key) -> (usize, u64) {
        let mixed = F::mix(self.mix, key);
        let number = self.shard_number(mixed);
        (number, self.shards[number].layout.within(mixed))
    }

    /// Runs `change` on shard `number` with `mixed` as the shard reads it,
    /// keeping the count.
    fn change<R>(
        &mut self,
        number: usize,
        mixed: u64,
        change: impl FnOnce(&mut Shard<F>, u64) -> R,
    ) -> R {
        let shard = &mut self.shards[number];
        let before = shard.len;
        let result = change(shard, shard.layout.within(mixed));
        self.len = self.len - before + shard.len;
        result
    }

    /// The shard `mixed` goes to, with room for one more entry there: a
    /// shard that would grow past [`SPLIT_BYTES`] splits first.
    fn room_for_one(&mut self, mixed: u64) -> usize {
        loop {
            let number = self.shard_number(mixed);
            if !self.shards[number].splits_for(1, self.split_bytes) {
                return number;
            }
            self.split(number);
        }
    }

    /// Shard `number` as two shards of one bit more, each taking the
    /// half of its keys that bit chooses (and of its prefixes).
    fn split(&mut self, number: usize) {
        let shard = std::mem::take(&mut self.shards[number]);
        let layout = Layout::new(shard.layout.depth + 1, shard.layout.wide);
        let ones = shard
            .entries()
            .filter(|&(within, _)| within >> 63 == 1)
            .count();
        let counts = [shard.len - ones, ones];
        // Each half of the homes the shard would have grown to: as full as
        // after a growth.
        let half_grown = (shard.homes + shard.homes / GROWTH_DIVISOR) / 2;
        let [mut zero, mut one] =
            counts.map(|count| InOrder::new(homes_for(count, half_grown), layout));
        for (within, node) in shard.entries() {
            let half = if within >> 63 == 1 {
                &mut one
            } else {
                &mut zero
            };
            half.push(within << 1, node);
        }
        zero.finish(&mut self.shards[number]);
        let mut upper = Shard::default();
        one.finish(&mut upper);
        self.shards.push(upper);
        // Fewer than 2^MAX_DEPTH shards.
        let upper_number = u16::try_from(self.shards.len() - 1).unwrap_or(u16::MAX);
        let upper_bit = 1 << (MAX_DEPTH - layout.depth);
        for (prefix, shard_number) in self.shard_of_prefix.iter_mut().enumerate() {
            if usize::from(*shard_number) == number && prefix & upper_bit != 0 {
                *shard_number = upper_number;
            }
        }
    }

    /// The node of the first entry of `key` that `accept` takes.
    pub fn find(&self, key: F::Key, accept: impl FnMut(NodeId) -> bool) -> Option<NodeId> {
        let (number, within) = self.locate(key);
        self.shards[number].find(within, accept)
    }

    pub fn get(&self, key: F::Key) -> Option<NodeId> {
        self.find(key, |_| true)
    }

    /// Gives the first entry of `key` that `accept` takes the node `node`;
    /// whether there was one.
    pub fn replace(
        &mut self,
        key: F::Key,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> bool {
        let (number, within) = self.locate(key);
        self.shards[number].replace(within, accept, node)
    }

    /// Adds an entry without looking for one of the same key (after those
    /// there are). `NodeId::MAX` is no node and is not added.
    pub fn insert(&mut self, key: F::Key, node: NodeId) {
        self.insert_mixed(F::mix(self.mix, key), node);
    }

    /// [`Self::insert`] of an entry whose key is mixed already.
    fn insert_mixed(&mut self, mixed: u64, node: NodeId) {
        if node == NodeId::MAX {
            return;
        }
        let number = self.room_for_one(mixed);
        self.change(number, mixed, |shard, within| shard.insert(within, node));
    }

    /// Drops the first (oldest) entry of `key` and adds `node` after its
    /// last, without moving any other entry; whether `key` had an entry
    /// (nothing is added when it had none). `NodeId::MAX` is no node.
    pub fn shift_in(&mut self, key: F::Key, node: NodeId) -> bool {
        if node == NodeId::MAX {
            return false;
        }
        let (number, within) = self.locate(key);
        self.shards[number].shift_in(within, node)
    }

    /// Takes out the first entry of `key` that `accept` takes; its node.
    pub fn remove_if(&mut self, key: F::Key, accept: impl FnMut(NodeId) -> bool) -> Option<NodeId> {
        let mixed = F::mix(self.mix, key);
        let number = self.shard_number(mixed);
        self.change(number, mixed, |shard, within| {
            shard.remove_if(within, accept)
        })
    }

    pub fn remove(&mut self, key: F::Key) -> Option<NodeId> {
        self.remove_if(key, |_| true)
    }

    /// Makes room for `additional` more entries: shards that would grow
    /// past [`SPLIT_BYTES`] split, then each makes room for its share
    /// (growing by an eighth, or more when asked for more).
    pub fn reserve(&mut self, additional: usize) {
        while let Some(number) = self.shards.iter().position(|shard| {
            shard.splits_for(share_of(additional, shard.layout.depth), self.split_bytes)
        }) {
            self.split(number);
        }
        for shard in &mut self.shards {
            shard.reserve(share_of(additional, shard.layout.depth));
        }
    }

    /// Gives back room beyond what `capacity` entries (at least those
    /// held) need: each shard keeps room for its share, or its own.
    pub fn shrink_to(&mut self, capacity: usize) {
        for shard in &mut self.shards {
            let share = if capacity == 0 {
                0
            } else {
                share_of(capacity, shard.layout.depth)
            };
            shard.shrink_to(share);
        }
    }

    /// The table's bijection of keys ([`KeyFormat::mix`]).
    pub fn mix(&self) -> F::Mix {
        self.mix
    }

    /// Shards, numbered from 0: a shard that splits keeps its number for
    /// one half, and the other half takes the next number.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The number of the shard that holds `key` (a change to the table
    /// for `key` changes that shard alone, or splits it).
    pub fn shard_of(&self, key: F::Key) -> usize {
        self.shard_number(F::mix(self.mix, key))
    }

    /// The number of the shard that holds mixed key `mixed`.
    pub fn shard_of_mixed(&self, mixed: u64) -> usize {
        self.shard_number(mixed)
    }

    /// The entries of shard `number`, as mixed key and node, in order.
    pub fn shard_entries(&self, number: usize) -> impl Iterator<Item = (u64, NodeId)> + '_ {
        self.shard_entries_from(number, 0)
    }

    /// The entries of shard `number` whose mixed key's bits below the
    /// shard's are those of `from` or more, as mixed key and node, in
    /// order (all of them from 0).
    pub fn shard_entries_from(
        &self,
        number: usize,
        from: u64,
    ) -> impl Iterator<Item = (u64, NodeId)> + '_ {
        let prefix = self
            .shard_of_prefix
            .iter()
            .position(|&shard| usize::from(shard) == number)
            .unwrap_or(0);
        let shard = &self.shards[number];
        let layout = shard.layout;
        shard
            .entries_from(layout.within(from))
            .map(move |(within, node)| (layout.mixed(prefix, within), node))
    }

    /// The entries from mixed key `from` on to the end of the shard that
    /// holds it, in order, and the first mixed key of the next shard
    /// (`None`: it was the last). By key, so that a walk a piece at a
    /// time goes on where it left off across growths and splits.
    pub fn entries_of_shard_from(
        &self,
        from: u64,
    ) -> (impl Iterator<Item = (u64, NodeId)> + '_, Option<u64>) {
        let number = self.shard_number(from);
        let depth = self.shards[number].layout.depth;
        let next = if depth == 0 {
            None
        } else {
            let next_own = (from >> (64 - depth)) + 1;
            (next_own < 1 << depth).then(|| next_own << (64 - depth))
        };
        (self.shard_entries_from(number, from), next)
    }

    /// The entries of `key`, oldest first, as the table's walk finds them.
    pub fn key_entries(&self, key: F::Key, mut visit: impl FnMut(NodeId)) {
        self.find(key, |node| {
            visit(node);
            false
        });
    }

    /// Every entry, as mixed key and node, in order of the mixed key.
    pub fn entries(&self) -> impl Iterator<Item = (u64, NodeId)> + '_ {
        (0..PREFIXES)
            .filter(|&prefix| {
                prefix == 0 || self.shard_of_prefix[prefix - 1] != self.shard_of_prefix[prefix]
            })
            .flat_map(|prefix| self.shard_entries(usize::from(self.shard_of_prefix[prefix])))
    }

    /// Keeps the entries whose node `keep` takes.
    pub fn retain(&mut self, mut keep: impl FnMut(NodeId) -> bool) {
        for shard in &mut self.shards {
            shard.retain(&mut keep);
        }
        self.len = self.shards.iter().map(|shard| shard.len).sum();
    }

    /// A pass over the table a piece at a time: from mixed key `mixed` on
    /// (0 starts a pass), looks at about `budget` places and takes out the
    /// entries whose node `keep` refuses. Gives the places looked at and
    /// the mixed key the pass goes on from (`None`: it ended). By key, so
    /// that growths and splits between pieces do not make it skip any.
    pub fn sweep_from(
        &mut self,
        mixed: u64,
        budget: usize,
        keep: impl FnMut(NodeId) -> bool,
    ) -> (usize, Option<u64>) {
        let number = self.shard_number(mixed);
        let layout = self.shards[number].layout;
        let (looked, next) = self.change(number, mixed, |shard, within| {
            shard.sweep_from(within, budget, keep)
        });
        if let Some(within) = next {
            return (looked, Some(layout.mixed(prefix_of(mixed), within)));
        }
        // On from the first key of the next shard, if any.
        let depth = layout.depth;
        if depth == 0 {
            return (looked, None);
        }
        let next_own = (mixed >> (64 - depth)) + 1;
        let next = (next_own < 1 << depth).then(|| next_own << (64 - depth));
        (looked, next)
    }

    /// Adds many entries at once, given as their mixed key
    /// ([`KeyFormat::mix`]) and node, in ascending order of the mixed key
    /// (a key given more than once has its entries side by side, as
    /// inserts leave them): into an empty table they are written front to
    /// back, in shards of one depth chosen for their count, without a copy
    /// or a sort; into a table that holds entries, one at a time.
    pub fn insert_all_mixed_in_order(
        &mut self,
        entries: impl Iterator<Item = (u64, NodeId)> + Clone,
    ) {
        let entries = entries.filter(|&(_, node)| node != NodeId::MAX);
        if !self.is_empty() {
            for (mixed, node) in entries {
                self.insert_mixed(mixed, node);
            }
            return;
        }
        // One pass counts the entries of each prefix: the total chooses
        // the shards' depth, and a shard's count is its prefixes'.
        let mut prefix_counts = vec![0usize; PREFIXES];
        let mut last_node = 0;
        for (mixed, node) in entries.clone() {
            prefix_counts[prefix_of(mixed)] += 1;
            last_node = last_node.max(node);
        }
        let count: usize = prefix_counts.iter().sum();
        if count == 0 {
            return;
        }
        let depth = (0..=MAX_DEPTH)
            .find(|&depth| {
                place_bytes::<F>(homes_for(share_of(count, depth), MIN_HOMES)) <= self.split_bytes
            })
            .unwrap_or(MAX_DEPTH);
        let layout = Layout::new(depth, wide_for::<F>(last_node));
        let shard_of = |mixed: u64| prefix_of(mixed) >> (MAX_DEPTH - depth);
        let counts: Vec<usize> = prefix_counts
            .chunks(1 << (MAX_DEPTH - depth))
            .map(|prefixes| prefixes.iter().sum())
            .collect();
        let mut entries = entries.peekable();
        let mut last = None;
        let mut shards = Vec::with_capacity(counts.len());
        for (number, &count) in counts.iter().enumerate() {
            let mut builder = InOrder::new(homes_for(count, MIN_HOMES), layout);
            while let Some(&(mixed, node)) = entries.peek() {
                if shard_of(mixed) != number {
                    break;
                }
                debug_assert!(last <= Some(mixed), "entries in ascending order");
                last = Some(mixed);
                builder.push(layout.within(mixed), node);
                entries.next();
            }
            let mut shard = Shard::default();
            builder.finish(&mut shard);
            self.len += shard.len;
            shards.push(shard);
        }
        self.shards = shards;
        for (prefix, shard_number) in self.shard_of_prefix.iter_mut().enumerate() {
            // At most 2^MAX_DEPTH shards.
            *shard_number = u16::try_from(prefix >> (MAX_DEPTH - depth)).unwrap_or(u16::MAX);
        }
    }

    /// The node of the first entry of `key` that `accept` takes, or `node`
    /// added under `key` when none does (one walk where a lookup and then
    /// an insert took two). `accept` sees each of the key's entries at
    /// most once, in the order they were added, even when the shard grows
    /// during the walk: it may count them.
    pub fn find_or_insert(
        &mut self,
        key: F::Key,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> Option<NodeId> {
        let mixed = F::mix(self.mix, key);
        let number = self.room_for_one(mixed);
        self.change(number, mixed, |shard, within| {
            shard.find_or_insert(within, accept, node)
        })
    }

    /// Gives the first entry of `key` that `accept` takes the node `node`
    /// (its node before is given back), or adds `node` under `key` when
    /// none does (one walk).
    pub fn replace_or_insert(
        &mut self,
        key: F::Key,
        accept: impl FnMut(NodeId) -> bool,
        node: NodeId,
    ) -> Option<NodeId> {
        let mixed = F::mix(self.mix, key);
        let number = self.room_for_one(mixed);
        self.change(number, mixed, |shard, within| {
            shard.replace_or_insert(within, accept, node)
        })
    }
}

/// The 32-bit keys' own ways in: the order recovery sorts its entries
/// by, and entries packed in a `u64`.
impl KeyNodeTable<ShortKeys> {
    /// An empty table whose keys go through `mix` (another table's: a
    /// snapshot's pairs, copied in that table's order, are then written
    /// front to back).
    pub fn with_mix(mix: KeyMix) -> Self {
        KeyNodeTable {
            mix,
            ..KeyNodeTable::default()
        }
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

    /// [`Self::insert_all_mixed_in_order`] of entries given as
    /// [`Self::order_of`] their key in the high half and the node in the
    /// low half (recovery's candidate keys and exact-hash tags, sorted so
    /// already).
    pub fn insert_all_in_order(&mut self, entries: impl Iterator<Item = u64> + Clone) {
        self.insert_all_mixed_in_order(
            entries.map(|packed| ((packed >> 32) << 32, packed as NodeId)),
        );
    }

    /// Adds many entries at once: into an empty table, sorted by mixed key
    /// and written front to back; otherwise one at a time. Recovery gives
    /// its entries sorted already ([`Self::insert_all_in_order`]); the
    /// tests build tables of any keys this way.
    #[cfg(test)]
    pub fn insert_all(&mut self, entries: &[(u32, NodeId)]) {
        let entries: Vec<u64> = entries
            .iter()
            .map(|&(key, node)| u64::from(self.mix.mix(key)) << 32 | u64::from(node))
            .collect();
        let sorted = crate::radix::sort_stably_by(vec![entries], |packed| (packed >> 32) as u32);
        self.insert_all_in_order(sorted.into_iter());
    }
}

#[cfg(test)]
#[path = "key_node_table_tests.rs"]
mod tests;
