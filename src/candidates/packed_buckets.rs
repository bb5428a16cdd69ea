//! The buckets of one narrow block of the multi-index, packed: each entry
//! keeps only the bits its bucket does not already say, in whole bytes, and
//! the buckets of consecutive block values lie back to back in one vector.
//!
//! Motivation: with a vector per bucket, the index's buckets held about
//! eight fingerprints each at 500 k nodes, and each 8-byte fingerprint cost
//! 12 bytes (the slack of growing by a quarter from four, and the
//! allocator's header and rounding of each small block). With `k + 1`
//! copies per node that was about 50 bytes per node, the largest part of
//! the forest after its own slot.
//!
//! Design: every fingerprint in the bucket of block value `v` has `v` in the
//! block's bits, so an entry is the other `64 − width` bits (the bits below
//! the block, then those above it, shifted down), little-endian in the
//! fewest whole bytes: 6 for the default 16-bit blocks. The buckets of 2^g
//! consecutive block values (a group) share one byte vector, each bucket's
//! end, counted in entries from the start of its group, kept in a `u32` per
//! block value. An insert shifts the rest of its group by one entry and
//! moves the ends after it; a removal does the reverse. Groups start 256
//! buckets wide; when they hold more than 256 entries on average, every
//! group is split in two (one copy of the table, a few times in the index's
//! life) until each bucket is a group of its own (from about 10 M nodes at
//! `k = 3`; an insert then appends to its bucket, as with the per-bucket
//! vectors). A group grows by an eighth (at least
//! 16 entries) and keeps `8 − entry bytes` bytes of padding after its last
//! entry, so that a scan loads every entry as one 8-byte word.
//!
//! Consequences: about 6.5 bytes per entry at any size (the group's slack
//! and a header per ~200 entries), against 12 with a vector per bucket. An
//! insert or removal moves half a group on average (up to a kilobyte) and
//! up to 256 ends; a split copies the table once. A query reads a bucket's
//! end besides the group's header: at 10 M nodes `within` takes 2.2 µs
//! where the per-bucket vectors took 1.7 (`benches/forest_scale.rs`).

/// A group that averages more entries than this is split (while a group
/// spans more than one bucket).
const SPLIT_AVERAGE_ENTRIES: usize = 256;

/// Groups span at most 2^8 buckets, so an insert moves at most 256 ends.
const MAX_GROUP_BITS: u32 = 8;

/// A group's vector grows by at least this many entries.
const MIN_GROWTH_ENTRIES: usize = 16;

/// One packed table; see the module docs.
#[derive(Debug, Clone)]
pub(super) struct PackedBuckets {
    /// Bits below the block.
    shift: u32,
    width: u32,
    /// Bytes per entry: the `64 − width` other bits, rounded up.
    entry_bytes: usize,
    /// Each group spans 2^`group_bits` consecutive block values.
    group_bits: u32,
    /// Per block value: the end of its bucket, in entries from the start of
    /// its group.
    ends: Vec<u32>,
    /// Each group's entries, then `8 − entry_bytes` bytes of padding (an
    /// empty group holds nothing).
    groups: Vec<Vec<u8>>,
    entries: usize,
    /// Sum of the groups' capacities, in bytes.
    capacity_bytes: usize,
    /// Groups are split when they average more entries than this
    /// ([`SPLIT_AVERAGE_ENTRIES`]; tests split sooner).
    split_average_entries: usize,
}

/// One bucket as stored: `count` entries of `entry_bytes` each, followed
/// by padding so that every entry can be read as an 8-byte word.
#[derive(Debug, Clone, Copy)]
pub(super) struct PackedBucket<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) count: usize,
}

impl PackedBucket<'_> {
    /// The word holding entry `index`'s bytes in its low bits.
    #[inline]
    pub(super) fn word(&self, entry_bytes: usize, index: usize) -> u64 {
        let at = index * entry_bytes;
        self.bytes
            .get(at..at + 8)
            .and_then(|bytes| bytes.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    }
}

impl PackedBuckets {
    /// An empty table for the block of `width` bits above `shift` low bits
    /// (`width` from 1 to 20, `shift + width` at most 64).
    pub(super) fn new(shift: u32, width: u32) -> Self {
        let entry_bytes = (64 - width).div_ceil(8) as usize;
        let group_bits = width.min(MAX_GROUP_BITS);
        PackedBuckets {
            shift,
            width,
            entry_bytes,
            group_bits,
            ends: vec![0; 1 << width],
            groups: vec![Vec::new(); 1 << (width - group_bits)],
            entries: 0,
            capacity_bytes: 0,
            split_average_entries: SPLIT_AVERAGE_ENTRIES,
        }
    }

    /// An empty table that splits its groups past `split_average_entries`.
    #[cfg(test)]
    pub(super) fn splitting_at(shift: u32, width: u32, split_average_entries: usize) -> Self {
        PackedBuckets {
            split_average_entries,
            ..PackedBuckets::new(shift, width)
        }
    }

    /// Each group spans 2^this buckets.
    #[cfg(test)]
    pub(super) fn group_bits(&self) -> u32 {
        self.group_bits
    }

    pub(super) fn entry_bytes(&self) -> usize {
        self.entry_bytes
    }

    /// The entry bits of a word: the low `64 − width`.
    pub(super) fn rest_mask(&self) -> u64 {
        u64::MAX >> self.width
    }

    fn low_mask(&self) -> u64 {
        if self.shift == 0 {
            0
        } else {
            u64::MAX >> (64 - self.shift)
        }
    }

    /// `fingerprint` without the block's bits: the bits below the block,
    /// then those above it.
    pub(super) fn rest_of(&self, fingerprint: u64) -> u64 {
        let above = fingerprint
            .checked_shr(self.shift + self.width)
            .unwrap_or(0);
        (fingerprint & self.low_mask()) | (above << self.shift)
    }

    /// The fingerprint whose block holds `block_value` and whose other bits
    /// are `rest`.
    pub(super) fn fingerprint_of(&self, block_value: u64, rest: u64) -> u64 {
        let above = (rest >> self.shift)
            .checked_shl(self.shift + self.width)
            .unwrap_or(0);
        above | (block_value << self.shift) | (rest & self.low_mask())
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries
    }

    /// Heap bytes: the groups' vectors and the table of ends.
    pub(super) fn heap_bytes(&self) -> usize {
        self.capacity_bytes
            + self.ends.capacity() * size_of::<u32>()
            + self.groups.capacity() * size_of::<Vec<u8>>()
    }

    /// The groups' capacities, recounted (the table keeps a running total).
    #[cfg(test)]
    pub(super) fn recount_capacity_bytes(&self) -> usize {
        self.groups.iter().map(Vec::capacity).sum()
    }

    #[cfg(test)]
    pub(super) fn tracked_capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    fn padding(&self) -> usize {
        8 - self.entry_bytes
    }

    /// The block values of group `group`.
    fn group_span(&self, group: usize) -> std::ops::Range<usize> {
        (group << self.group_bits)..((group + 1) << self.group_bits)
    }

    /// Where bucket `block_value`'s entries are in its group, in entries.
    fn bucket_span(&self, block_value: usize) -> std::ops::Range<usize> {
        let group_start = block_value >> self.group_bits << self.group_bits;
        let start = if block_value == group_start {
            0
        } else {
            self.ends[block_value - 1] as usize
        };
        start..self.ends[block_value] as usize
    }

    /// The bucket of `block_value` (empty for a value out of range).
    pub(super) fn bucket(&self, block_value: u64) -> PackedBucket<'_> {
        let Ok(block_value) = usize::try_from(block_value) else {
            return PackedBucket {
                bytes: &[],
                count: 0,
            };
        };
        if block_value >= self.ends.len() {
            return PackedBucket {
                bytes: &[],
                count: 0,
            };
        }
        let span = self.bucket_span(block_value);
        let group = &self.groups[block_value >> self.group_bits];
        let start = span.start * self.entry_bytes;
        let end = span.end * self.entry_bytes + self.padding();
        PackedBucket {
            bytes: group.get(start..end).unwrap_or(&[]),
            count: span.len(),
        }
    }

    /// Whether `rest` is in `block_value`'s bucket.
    pub(super) fn contains(&self, block_value: u64, rest: u64) -> bool {
        let bucket = self.bucket(block_value);
        (0..bucket.count)
            .any(|index| bucket.word(self.entry_bytes, index) & self.rest_mask() == rest)
    }

    /// Adds `rest` to `block_value`'s bucket (the caller knows it is absent).
    pub(super) fn insert(&mut self, block_value: u64, rest: u64) {
        let Some(block_value) = usize::try_from(block_value)
            .ok()
            .filter(|&value| value < self.ends.len())
        else {
            return;
        };
        let group_index = block_value >> self.group_bits;
        let span = self.group_span(group_index);
        let group_entries = self.ends[span.end - 1] as usize;
        let at = self.ends[block_value] as usize * self.entry_bytes;
        let (entry_bytes, padding) = (self.entry_bytes, self.padding());
        let group = &mut self.groups[group_index];
        let before = group.capacity();
        if group.is_empty() {
            group.reserve_exact(MIN_GROWTH_ENTRIES * entry_bytes + padding);
            group.resize(padding, 0);
        } else if group.len() + entry_bytes > group.capacity() {
            group.reserve_exact((group_entries / 8).max(MIN_GROWTH_ENTRIES) * entry_bytes);
        }
        self.capacity_bytes += group.capacity() - before;
        let old_len = group.len();
        group.resize(old_len + entry_bytes, 0);
        group.copy_within(at..old_len, at + entry_bytes);
        group[at..at + entry_bytes].copy_from_slice(&rest.to_le_bytes()[..entry_bytes]);
        for end in &mut self.ends[block_value..span.end] {
            *end += 1;
        }
        self.entries += 1;
        if self.group_bits > 0 && self.entries > self.groups.len() * self.split_average_entries {
            self.split_groups();
        }
    }

    /// Removes `rest` from `block_value`'s bucket; `false` if it was not
    /// there.
    pub(super) fn remove(&mut self, block_value: u64, rest: u64) -> bool {
        let Some(block_value) = usize::try_from(block_value)
            .ok()
            .filter(|&value| value < self.ends.len())
        else {
            return false;
        };
        let bucket = self.bucket(block_value as u64);
        let Some(index) = (0..bucket.count)
            .find(|&index| bucket.word(self.entry_bytes, index) & self.rest_mask() == rest)
        else {
            return false;
        };
        let group_index = block_value >> self.group_bits;
        let span = self.group_span(group_index);
        let at = (self.bucket_span(block_value).start + index) * self.entry_bytes;
        let entry_bytes = self.entry_bytes;
        let group = &mut self.groups[group_index];
        let before = group.capacity();
        let old_len = group.len();
        group.copy_within(at + entry_bytes..old_len, at);
        group.truncate(old_len - entry_bytes);
        for end in &mut self.ends[block_value..span.end] {
            *end -= 1;
        }
        if self.ends[span.end - 1] == 0 {
            *group = Vec::new();
        } else if group.capacity() > 2 * group.len() + MIN_GROWTH_ENTRIES * entry_bytes {
            group.shrink_to(group.len() + group.len() / 8);
        }
        self.capacity_bytes -= before - group.capacity();
        self.entries -= 1;
        true
    }

    /// A group of `entries` (bytes, without padding) with its padding and
    /// room for an eighth more; an empty group holds nothing.
    fn new_group(&self, entries: &[u8]) -> Vec<u8> {
        if entries.is_empty() {
            return Vec::new();
        }
        let mut group = Vec::with_capacity(entries.len() + entries.len() / 8 + self.padding());
        group.extend_from_slice(entries);
        group.resize(entries.len() + self.padding(), 0);
        group
    }

    /// Halves every group: each group's lower and upper halves of buckets
    /// become groups of their own.
    fn split_groups(&mut self) {
        let old_bits = self.group_bits;
        let new_bits = old_bits - 1;
        let old_groups = std::mem::take(&mut self.groups);
        let mut groups = Vec::with_capacity(old_groups.len() * 2);
        for (group_index, old_group) in old_groups.into_iter().enumerate() {
            let first = group_index << old_bits;
            let middle = first + (1 << new_bits);
            let last = first + (1 << old_bits) - 1;
            let lower_entries = self.ends[middle - 1] as usize;
            let all_entries = self.ends[last] as usize;
            let split_at = lower_entries * self.entry_bytes;
            let all_bytes = all_entries * self.entry_bytes;
            groups.push(self.new_group(old_group.get(..split_at).unwrap_or(&[])));
            groups.push(self.new_group(old_group.get(split_at..all_bytes).unwrap_or(&[])));
            for end in &mut self.ends[middle..=last] {
                *end -= lower_entries as u32;
            }
        }
        self.group_bits = new_bits;
        self.capacity_bytes = groups.iter().map(Vec::capacity).sum();
        self.groups = groups;
    }

    /// Every stored fingerprint, in the order of the table.
    pub(super) fn fingerprints(&self) -> Vec<u64> {
        let mut fingerprints = Vec::with_capacity(self.entries);
        for block_value in 0..self.ends.len() {
            let bucket = self.bucket(block_value as u64);
            for index in 0..bucket.count {
                let rest = bucket.word(self.entry_bytes, index) & self.rest_mask();
                fingerprints.push(self.fingerprint_of(block_value as u64, rest));
            }
        }
        fingerprints
    }

    /// Adds `fingerprints` (absent and distinct) at once: the table is laid
    /// out anew with its groups as wide as the total allows, each group
    /// written once at its size, where one by one each insert moved half a
    /// group.
    pub(super) fn insert_all(&mut self, fingerprints: &[u64]) {
        let mut all = self.fingerprints();
        all.extend_from_slice(fingerprints);
        let block_mask = u64::MAX >> (64 - self.width);
        let block_of = |fingerprint: u64| ((fingerprint >> self.shift) & block_mask) as usize;
        let mut group_bits = self.width.min(MAX_GROUP_BITS);
        while group_bits > 0
            && all.len() > (self.ends.len() >> group_bits) * self.split_average_entries
        {
            group_bits -= 1;
        }
        self.group_bits = group_bits;
        let mut counts = vec![0u32; self.ends.len()];
        for &fingerprint in &all {
            counts[block_of(fingerprint)] += 1;
        }
        // Each bucket's start in its group, then (after the writes) its end.
        let mut cursors = vec![0u32; self.ends.len()];
        let group_count = self.ends.len() >> group_bits;
        let group_sizes: Vec<usize> = (0..group_count)
            .map(|group_index| {
                let mut running = 0u32;
                for block_value in self.group_span(group_index) {
                    cursors[block_value] = running;
                    running += counts[block_value];
                }
                running as usize
            })
            .collect();
        drop(counts);
        let padding = self.padding();
        let mut groups: Vec<Vec<u8>> = group_sizes
            .iter()
            .map(|&size| {
                if size == 0 {
                    Vec::new()
                } else {
                    vec![0u8; size * self.entry_bytes + padding]
                }
            })
            .collect();
        for &fingerprint in &all {
            let block_value = block_of(fingerprint);
            let at = cursors[block_value] as usize * self.entry_bytes;
            let rest = self.rest_of(fingerprint);
            groups[block_value >> group_bits][at..at + self.entry_bytes]
                .copy_from_slice(&rest.to_le_bytes()[..self.entry_bytes]);
            cursors[block_value] += 1;
        }
        self.ends = cursors;
        self.entries = all.len();
        self.capacity_bytes = groups.iter().map(Vec::capacity).sum();
        self.groups = groups;
    }
}

#[cfg(test)]
mod tests {
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
    }

    /// Fingerprints over few block values and few other bits, so buckets hold
    /// many entries, removals hit, and some entries differ only at the edges.
    fn crowded_fingerprint() -> impl Strategy<Value = u64> {
        (0..6u64, 0..40u64, any::<bool>()).prop_map(|(block, other, top)| {
            (block << 48) | (block << 20) | other | (u64::from(top) << 63) | (other << 40)
        })
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => crowded_fingerprint().prop_map(Step::Insert),
            1 => crowded_fingerprint().prop_map(Step::Remove),
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
}
