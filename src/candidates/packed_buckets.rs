//! The buckets of one narrow block of the multi-index, packed: each entry
//! keeps only the bits its bucket does not already say, in whole bytes, and
//! the buckets of every block value lie in one vector, those of
//! consecutive values (a group) back to back, with room after each group.
//!
//! Motivation: with a vector per bucket, the index's buckets held about
//! eight fingerprints each at 500 k nodes, and each 8-byte fingerprint cost
//! 12 bytes (the slack of growing by a quarter from four, and the
//! allocator's header and rounding of each small block). With `k + 1`
//! copies per node that was about 50 bytes per node, the largest part of
//! the forest after its own slot. Then with a vector per group of buckets
//! (issue 49's fifth part), past about 20 M nodes the allocator held 17
//! bytes per node it did not use: each group's vector, 1–10 KB, grew by an
//! eighth in turn, and each move left a hole too small for the next group
//! to grow into.
//!
//! Design: every fingerprint in the bucket of block value `v` has `v` in the
//! block's bits, so an entry is the other `64 − width` bits (the bits below
//! the block, then those above it, shifted down), little-endian in the
//! fewest whole bytes: 6 for the default 16-bit blocks.
//! - The buckets of 2^g consecutive block values (a group) lie back to back
//!   in the group's slot, a stretch of one vector of all slots, with the
//!   table's `8 − entry bytes` bytes of padding at its end so that a scan
//!   loads every entry as one 8-byte word. Each block value keeps its
//!   bucket's start and end (a query reads one pair); a group's slot ends
//!   where the next one starts. An insert shifts the rest of its group by
//!   one entry and moves the bounds after it; a removal does the reverse.
//! - When the table is laid out, each group's slot holds its entries and a
//!   sixteenth more (and one). A group that outgrows its slot is an outlier:
//!   it moves to a vector of its own (grown by an eighth; its buckets'
//!   bounds then count from that vector's start, marked by the start's top
//!   bit) and back to its slot once it fits in seven eighths of it.
//! - The table is laid out again, in place, when its outliers have grown by
//!   a sixteenth of its bytes since the last time, or its entries have
//!   halved: the vector grows (by remapping, without a copy), the groups
//!   move in two passes (see [`PackedBuckets::lay_out`]) and the outliers
//!   come back to their new slots.
//! - Groups start 256 buckets wide; when they hold more than 256 entries on
//!   average, every group is split in two as the table is laid out again,
//!   until each bucket is a group of its own (from about 17 M nodes at
//!   `k = 3`; an insert then appends to its bucket's slot).
//!
//! Consequences: the slots are one allocation, which the allocator maps on
//! its own from 1 MiB, so no hole is left between groups at any size. A
//! table costs its entries, a sixteenth at most of room (less as the
//! groups fill their slots) and its outliers' room: 6.3 bytes an entry on
//! average over a fill. An insert or removal moves half a group on average
//! and up to 256 bounds. Laying out moves the whole table once, every 4–5 %
//! of its growth (25 moves of each entry over a fill from empty; the pure
//! forest fills as fast as with a vector per group): a pause of
//! milliseconds at 1 M entries, tens at 10 M.

use std::collections::HashMap;

use crate::allocator::MAPPED_BLOCK_BYTES;
use crate::hashing::approx_map_heap_bytes;

/// A group that averages more entries than this is split (while a group
/// spans more than one bucket).
const SPLIT_AVERAGE_ENTRIES: usize = 256;

/// Groups span at most 2^8 buckets, so an insert moves at most 256 bounds.
const MAX_GROUP_BITS: u32 = 8;

/// An outlier's vector grows by at least this many entries.
const MIN_GROWTH_ENTRIES: usize = 16;

/// Laid out, a group's slot has room for this share of its entries more
/// (a sixteenth); the table is laid out again when its outliers have grown
/// by this share of its bytes.
const LAYOUT_SHARE: usize = 16;

/// ... or by at least this many bytes (a small table).
const MIN_LAYOUT_GROWTH_BYTES: usize = 4096;

/// The top bit of a bucket's start: its group is an outlier, and its
/// bounds count from the start of the group's own vector.
const OUTLIER: u32 = 1 << 31;

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
    /// Per block value: its bucket's start and end, in entries from the
    /// start of `slots` (or of its outlier's vector, see [`OUTLIER`]).
    bounds: Vec<[u32; 2]>,
    /// Per group, and one past the last: where its slot starts in `slots`,
    /// in entries.
    slot_starts: Vec<u32>,
    /// Every group's slot, then padding.
    slots: Vec<u8>,
    /// The groups that outgrew their slots: entries, then padding.
    outliers: HashMap<u32, Vec<u8>>,
    /// Sum of the outliers' capacities, in bytes.
    outlier_bytes: usize,
    /// `outlier_bytes` and `entries` when the table was last laid out.
    outlier_bytes_at_layout: usize,
    entries_at_layout: usize,
    entries: usize,
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

/// Where the slots for groups of `sizes` entries start, each with room for
/// a sixteenth more and one (and where the last ends), in entries; all at
/// 0 for an empty table.
fn slot_starts_for(sizes: &[usize]) -> Vec<u32> {
    let mut slot_starts = Vec::with_capacity(sizes.len() + 1);
    let empty = sizes.iter().all(|&size| size == 0);
    let mut next = 0usize;
    for &size in sizes {
        slot_starts.push(next as u32);
        if !empty {
            next += size + size / LAYOUT_SHARE + 1;
        }
    }
    slot_starts.push(next as u32);
    slot_starts
}

/// Bytes of the slots vector whose last slot ends at entry `end`: with the
/// padding, none when it holds no slot.
fn slots_bytes(end: u32, entry_bytes: usize) -> usize {
    if end == 0 {
        0
    } else {
        end as usize * entry_bytes + 8 - entry_bytes
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
            bounds: vec![[0, 0]; 1 << width],
            slot_starts: vec![0; (1 << (width - group_bits)) + 1],
            slots: Vec::new(),
            outliers: HashMap::new(),
            outlier_bytes: 0,
            outlier_bytes_at_layout: 0,
            entries_at_layout: 0,
            entries: 0,
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

    /// The groups that outgrew their slots.
    #[cfg(test)]
    pub(super) fn outlier_count(&self) -> usize {
        self.outliers.len()
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

    /// Heap bytes: the slots, the outliers, the bounds and the slots'
    /// starts. The slots count their length: their vector is a mapping of
    /// at least [`MAPPED_BLOCK_BYTES`] whose pages past the length are
    /// never written.
    pub(super) fn heap_bytes(&self) -> usize {
        self.slots.len()
            + self.outlier_bytes
            + approx_map_heap_bytes(self.outliers.capacity(), size_of::<(u32, Vec<u8>)>())
            + self.bounds.capacity() * size_of::<[u32; 2]>()
            + self.slot_starts.capacity() * size_of::<u32>()
    }

    /// The slots' and outliers' capacities, recounted (the table keeps a
    /// running total of the outliers').
    #[cfg(test)]
    pub(super) fn recount_capacity_bytes(&self) -> usize {
        self.slots.len() + self.outliers.values().map(Vec::capacity).sum::<usize>()
    }

    #[cfg(test)]
    pub(super) fn tracked_capacity_bytes(&self) -> usize {
        self.slots.len() + self.outlier_bytes
    }

    fn padding(&self) -> usize {
        8 - self.entry_bytes
    }

    fn group_count(&self) -> usize {
        self.bounds.len() >> self.group_bits
    }

    /// The block values of group `group`.
    fn group_span(&self, group: usize) -> std::ops::Range<usize> {
        (group << self.group_bits)..((group + 1) << self.group_bits)
    }

    /// The bucket of `block_value` (empty for a value out of range).
    pub(super) fn bucket(&self, block_value: u64) -> PackedBucket<'_> {
        let Some(&[start, end]) = usize::try_from(block_value)
            .ok()
            .and_then(|value| self.bounds.get(value))
        else {
            return PackedBucket {
                bytes: &[],
                count: 0,
            };
        };
        let storage = if start & OUTLIER == 0 {
            &self.slots
        } else {
            let group = (block_value >> self.group_bits) as u32;
            self.outliers.get(&group).map_or(&[][..], Vec::as_slice)
        };
        let start = (start & !OUTLIER) as usize;
        let end = end as usize;
        PackedBucket {
            bytes: storage
                .get(start * self.entry_bytes..end * self.entry_bytes + self.padding())
                .unwrap_or(&[]),
            count: end.saturating_sub(start),
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
            .filter(|&value| value < self.bounds.len())
        else {
            return;
        };
        let group = block_value >> self.group_bits;
        let span = self.group_span(group);
        let entry_bytes = self.entry_bytes;
        let rest_bytes = &rest.to_le_bytes()[..entry_bytes];
        let group_end = self.bounds[span.end - 1][1] as usize;
        let in_slot = self.bounds[block_value][0] & OUTLIER == 0;
        if in_slot && group_end < self.slot_starts[group + 1] as usize {
            let at = self.bounds[block_value][1] as usize * entry_bytes;
            self.slots
                .copy_within(at..group_end * entry_bytes, at + entry_bytes);
            self.slots[at..at + entry_bytes].copy_from_slice(rest_bytes);
        } else {
            if in_slot {
                self.move_to_outliers(group);
            }
            // Bounds now count from the start of the outlier's vector.
            let at = self.bounds[block_value][1] as usize * entry_bytes;
            let group_entries = self.bounds[span.end - 1][1] as usize;
            let bytes = self.outliers.entry(group as u32).or_default();
            let before = bytes.capacity();
            if bytes.len() + entry_bytes > bytes.capacity() {
                bytes.reserve_exact((group_entries / 8).max(MIN_GROWTH_ENTRIES) * entry_bytes);
            }
            self.outlier_bytes += bytes.capacity() - before;
            let old_len = bytes.len();
            bytes.resize(old_len + entry_bytes, 0);
            bytes.copy_within(at..old_len, at + entry_bytes);
            bytes[at..at + entry_bytes].copy_from_slice(rest_bytes);
        }
        self.shift_bounds(block_value, span.end, 1);
        self.entries += 1;
        self.lay_out_when_due();
    }

    /// Moves bucket `block_value`'s end, and the buckets after it up to
    /// `group_end`, by `by` entries (an entry added or removed).
    fn shift_bounds(&mut self, block_value: usize, group_end: usize, by: i32) {
        let by = by as u32;
        self.bounds[block_value][1] = self.bounds[block_value][1].wrapping_add(by);
        for [start, end] in &mut self.bounds[block_value + 1..group_end] {
            *start = start.wrapping_add(by);
            *end = end.wrapping_add(by);
        }
    }

    /// After an insert: splits the groups when they are full on average, or
    /// lays the table out again when its outliers have grown enough.
    fn lay_out_when_due(&mut self) {
        if self.group_bits > 0 && self.entries > self.group_count() * self.split_average_entries {
            self.lay_out(self.group_bits - 1);
        } else if self.outlier_bytes
            > self.outlier_bytes_at_layout
                + ((self.slots.len() + self.outlier_bytes_at_layout) / LAYOUT_SHARE)
                    .max(MIN_LAYOUT_GROWTH_BYTES)
        {
            self.lay_out(self.group_bits);
        }
    }

    /// Moves full group `group` from its slot to a vector of its own, with
    /// room for an eighth more.
    fn move_to_outliers(&mut self, group: usize) {
        let span = self.group_span(group);
        let slot_start = self.slot_starts[group];
        let group_end = self.bounds[span.end - 1][1];
        let entries = (group_end - slot_start) as usize;
        let entry_bytes = self.entry_bytes;
        let room = (entries / 8).max(MIN_GROWTH_ENTRIES);
        let mut bytes = Vec::with_capacity((entries + room) * entry_bytes + self.padding());
        bytes.extend_from_slice(
            self.slots
                .get(slot_start as usize * entry_bytes..group_end as usize * entry_bytes)
                .unwrap_or(&[]),
        );
        bytes.resize(entries * entry_bytes + self.padding(), 0);
        self.outlier_bytes += bytes.capacity();
        self.outliers.insert(group as u32, bytes);
        for [start, end] in &mut self.bounds[span] {
            *start = (*start - slot_start) | OUTLIER;
            *end -= slot_start;
        }
    }

    /// Moves outlier `group` back to its slot, which holds its entries.
    fn move_to_slot(&mut self, group: usize) {
        let Some(bytes) = self.outliers.remove(&(group as u32)) else {
            return;
        };
        self.outlier_bytes -= bytes.capacity();
        let span = self.group_span(group);
        let slot_start = self.slot_starts[group];
        let length = self.bounds[span.end - 1][1] as usize * self.entry_bytes;
        let at = slot_start as usize * self.entry_bytes;
        if let (Some(slot), Some(entries)) =
            (self.slots.get_mut(at..at + length), bytes.get(..length))
        {
            slot.copy_from_slice(entries);
        }
        for [start, end] in &mut self.bounds[span] {
            *start = (*start & !OUTLIER) + slot_start;
            *end += slot_start;
        }
    }

    /// Removes `rest` from `block_value`'s bucket; `false` if it was not
    /// there.
    pub(super) fn remove(&mut self, block_value: u64, rest: u64) -> bool {
        let bucket = self.bucket(block_value);
        let Some(index) = (0..bucket.count)
            .find(|&index| bucket.word(self.entry_bytes, index) & self.rest_mask() == rest)
        else {
            return false;
        };
        let block_value = block_value as usize;
        let group = block_value >> self.group_bits;
        let span = self.group_span(group);
        let entry_bytes = self.entry_bytes;
        let [start, _] = self.bounds[block_value];
        let at = ((start & !OUTLIER) as usize + index) * entry_bytes;
        let group_end = self.bounds[span.end - 1][1] as usize * entry_bytes;
        if start & OUTLIER == 0 {
            self.slots.copy_within(at + entry_bytes..group_end, at);
            self.shift_bounds(block_value, span.end, -1);
        } else {
            if let Some(bytes) = self.outliers.get_mut(&(group as u32)) {
                let before = bytes.capacity();
                let old_len = bytes.len();
                bytes.copy_within(at + entry_bytes..old_len, at);
                bytes.truncate(old_len - entry_bytes);
                if bytes.capacity() > 2 * bytes.len() + MIN_GROWTH_ENTRIES * entry_bytes {
                    bytes.shrink_to(bytes.len() + bytes.len() / 8);
                }
                self.outlier_bytes -= before - bytes.capacity();
            }
            self.shift_bounds(block_value, span.end, -1);
            let slot = (self.slot_starts[group + 1] - self.slot_starts[group]) as usize;
            if self.bounds[span.end - 1][1] as usize <= slot - slot / 8 {
                self.move_to_slot(group);
            }
        }
        self.entries -= 1;
        if self.entries * 2 <= self.entries_at_layout {
            self.lay_out(self.group_bits);
        }
        true
    }

    /// Where bucket `block_value`'s entries are in its group's storage, in
    /// entries from the group's first.
    fn span_in_group(&self, block_value: usize) -> std::ops::Range<usize> {
        let [start, end] = self.bounds[block_value];
        let origin = if start & OUTLIER == 0 {
            self.slot_starts[block_value >> self.group_bits]
        } else {
            0
        };
        ((start & !OUTLIER) - origin) as usize..(end - origin) as usize
    }

    /// Lays the table out again, in place, with groups of 2^`group_bits`
    /// buckets (at most the present width).
    ///
    /// Groups keep their order and their entries move within the one
    /// vector: first those that move towards its start, in order, then
    /// those that move towards its end, in reverse order, then the outliers
    /// into their new slots. No move overwrites entries not yet moved: a
    /// group's new slot holds it, so it ends before the next group's new
    /// slot and its old place (moving down) or after the previous group's
    /// (moving up). The vector grows first (by remapping: no copy, and only
    /// the new tail's pages are touched) or shrinks last.
    fn lay_out(&mut self, group_bits: u32) {
        let group_bits = group_bits.min(self.group_bits);
        let halvings = self.group_bits - group_bits;
        let group_count = self.bounds.len() >> group_bits;
        let entry_bytes = self.entry_bytes;
        let spans: Vec<std::ops::Range<usize>> = (0..self.bounds.len())
            .map(|block_value| self.span_in_group(block_value))
            .collect();
        // Each new group's first entry in its old group, its size, and
        // where it is in `slots` (if its old group is not an outlier).
        let mut offsets = Vec::with_capacity(group_count);
        let mut sizes = Vec::with_capacity(group_count);
        let mut sources = Vec::with_capacity(group_count);
        for group in 0..group_count {
            let first = group << group_bits;
            let last = first + (1 << group_bits) - 1;
            let (offset, size) = (spans[first].start, spans[last].end - spans[first].start);
            let old_group = group >> halvings;
            let in_slots = self.bounds[first][0] & OUTLIER == 0;
            offsets.push(offset);
            sizes.push(size);
            sources.push(in_slots.then(|| self.slot_starts[old_group] as usize + offset));
        }
        let slot_starts = slot_starts_for(&sizes);
        let new_bytes = slots_bytes(slot_starts[group_count], entry_bytes);
        if new_bytes > self.slots.len() {
            // At least a mapped block's size, so that the vector is a
            // mapping from the start and grows by remapping: a block of the
            // heap grown in turn left holes (3–7 MiB at 1 M nodes).
            let capacity = new_bytes.max(MAPPED_BLOCK_BYTES);
            self.slots
                .reserve_exact(capacity.saturating_sub(self.slots.len()));
            self.slots.resize(new_bytes, 0);
        }
        let move_group = |slots: &mut Vec<u8>, group: usize, source: usize| {
            let target = slot_starts[group] as usize * entry_bytes;
            let source = source * entry_bytes..(source + sizes[group]) * entry_bytes;
            slots.copy_within(source, target);
        };
        for group in 0..group_count {
            if let Some(source) = sources[group].filter(|&at| slot_starts[group] as usize <= at) {
                move_group(&mut self.slots, group, source);
            }
        }
        for group in (0..group_count).rev() {
            if let Some(source) = sources[group].filter(|&at| slot_starts[group] as usize > at) {
                move_group(&mut self.slots, group, source);
            }
        }
        for group in (0..group_count).filter(|&group| sources[group].is_none()) {
            let Some(bytes) = self.outliers.get(&((group >> halvings) as u32)) else {
                continue;
            };
            let entries = bytes
                .get(offsets[group] * entry_bytes..(offsets[group] + sizes[group]) * entry_bytes)
                .unwrap_or(&[]);
            let at = slot_starts[group] as usize * entry_bytes;
            if let Some(target) = self.slots.get_mut(at..at + entries.len()) {
                target.copy_from_slice(entries);
            }
        }
        if new_bytes == 0 {
            self.slots = Vec::new();
        } else if new_bytes < self.slots.len() {
            self.slots.truncate(new_bytes);
            self.slots.shrink_to(new_bytes.max(MAPPED_BLOCK_BYTES));
        }
        for (block_value, span) in spans.into_iter().enumerate() {
            let group = block_value >> group_bits;
            let moved_by = slot_starts[group] as usize - offsets[group];
            self.bounds[block_value] =
                [(span.start + moved_by) as u32, (span.end + moved_by) as u32];
        }
        self.group_bits = group_bits;
        self.install(slot_starts);
    }

    /// Takes `slot_starts` as the slots' layout, no group an outlier (the
    /// caller has put every group in its slot).
    fn install(&mut self, slot_starts: Vec<u32>) {
        self.slot_starts = slot_starts;
        self.outliers = HashMap::new();
        self.outlier_bytes = 0;
        self.outlier_bytes_at_layout = 0;
        self.entries_at_layout = self.entries;
    }

    /// Every stored fingerprint, in the order of the table.
    pub(super) fn fingerprints(&self) -> Vec<u64> {
        let mut fingerprints = Vec::with_capacity(self.entries);
        for block_value in 0..self.bounds.len() {
            let bucket = self.bucket(block_value as u64);
            for index in 0..bucket.count {
                let rest = bucket.word(self.entry_bytes, index) & self.rest_mask();
                fingerprints.push(self.fingerprint_of(block_value as u64, rest));
            }
        }
        fingerprints
    }

    /// Adds `fingerprints` (absent and distinct) at once: the table is laid
    /// out anew with its groups as wide as the total allows, each entry
    /// written once in its place, where one by one each insert moved half a
    /// group.
    pub(super) fn insert_all(&mut self, fingerprints: &[u64]) {
        // Into an empty table (recovery), the fingerprints as given: a copy
        // for each of the k + 1 tables was gigabytes at 100 M nodes.
        let all: std::borrow::Cow<'_, [u64]> = if self.entries == 0 {
            std::borrow::Cow::Borrowed(fingerprints)
        } else {
            let mut all = self.fingerprints();
            all.extend_from_slice(fingerprints);
            std::borrow::Cow::Owned(all)
        };
        let all: &[u64] = &all;
        let mut group_bits = self.width.min(MAX_GROUP_BITS);
        while group_bits > 0
            && all.len() > (self.bounds.len() >> group_bits) * self.split_average_entries
        {
            group_bits -= 1;
        }
        self.group_bits = group_bits;
        let mut counts = vec![0u32; self.bounds.len()];
        for &fingerprint in all {
            counts[self.block_of(fingerprint)] += 1;
        }
        let sizes: Vec<usize> = (0..self.group_count())
            .map(|group| {
                self.group_span(group)
                    .map(|block_value| counts[block_value] as usize)
                    .sum()
            })
            .collect();
        let entry_bytes = self.entry_bytes;
        let slot_starts = slot_starts_for(&sizes);
        let slots_length = slots_bytes(slot_starts[sizes.len()], entry_bytes);
        let mut slots = Vec::new();
        if slots_length > 0 {
            slots.reserve_exact(slots_length.max(MAPPED_BLOCK_BYTES));
            slots.resize(slots_length, 0);
        }
        // Each bucket's start, then (after the writes) its end.
        let mut cursors = vec![0u32; self.bounds.len()];
        for (group, &slot_start) in slot_starts.iter().take(sizes.len()).enumerate() {
            let mut running = slot_start;
            for block_value in self.group_span(group) {
                cursors[block_value] = running;
                self.bounds[block_value][0] = running;
                running += counts[block_value];
            }
        }
        drop(counts);
        // Each width its own copy of the loop, so that an entry is a move
        // of known size (a call to memcpy each, before: 2 % of recovery).
        match entry_bytes {
            6 => self.scatter(all, &mut slots, &mut cursors, 6),
            7 => self.scatter(all, &mut slots, &mut cursors, 7),
            8 => self.scatter(all, &mut slots, &mut cursors, 8),
            other => self.scatter(all, &mut slots, &mut cursors, other),
        }
        for (bounds, end) in self.bounds.iter_mut().zip(cursors) {
            bounds[1] = end;
        }
        self.entries = all.len();
        self.slots = slots;
        self.install(slot_starts);
    }

    /// The block value `fingerprint` is filed under in this table.
    fn block_of(&self, fingerprint: u64) -> usize {
        let block_mask = u64::MAX >> (64 - self.width);
        ((fingerprint >> self.shift) & block_mask) as usize
    }

    /// Writes each of `fingerprints` at its bucket's cursor in `slots` and
    /// moves the cursor on, for entries of `entry_bytes` (inlined where it
    /// is called, so that a constant width makes each write one move).
    #[inline(always)]
    fn scatter(
        &self,
        fingerprints: &[u64],
        slots: &mut [u8],
        cursors: &mut [u32],
        entry_bytes: usize,
    ) {
        for &fingerprint in fingerprints {
            let block_value = self.block_of(fingerprint);
            let at = cursors[block_value] as usize * entry_bytes;
            let rest = self.rest_of(fingerprint).to_le_bytes();
            if let (Some(target), Some(bytes)) =
                (slots.get_mut(at..at + entry_bytes), rest.get(..entry_bytes))
            {
                target.copy_from_slice(bytes);
            }
            cursors[block_value] += 1;
        }
    }
}

#[cfg(test)]
#[path = "packed_buckets_tests.rs"]
mod tests;
