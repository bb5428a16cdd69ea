//! Values keyed by fingerprint, each in a numbered slot: a map that costs
//! its entries and 4 bytes of table per entry, and whose entries have
//! numbers other structures can hold instead of the 8-byte fingerprint.
//!
//! Motivation: the forest's nodes and the engine's side records are both
//! one value per fingerprint, millions of them. A std map keeps each
//! entry in a power-of-two table at most 7/8 full: right after it doubles,
//! half of it is empty, and hashing spreads the entries so every page of it
//! is touched. And the candidate indexes hold several entries per node, so
//! 4 bytes instead of 8 in each counts more than once.
//!
//! Design: the values with their fingerprints in one vector of slots, found
//! through a [`KeyNodeTable`] of slot numbers under a 32-bit tag of the
//! fingerprint's seeded hash (5 bytes a number, 82–92 % full; a
//! `hashbrown` table of 4-byte numbers was 5 bytes a place, 44–88 % full,
//! until issue 49's eighth part; a tag two fingerprints share costs a slot
//! read). The vector grows by
//! reallocation, and a large block grows in place or by remapping, so
//! capacity it has not used yet costs address space, not memory. A bit per
//! slot says whether it is in use; a removed value's slot is reused, so a
//! number names one value from its insertion to its removal, and no
//! value is ever renumbered ([`FingerprintSlots::release_spare`] gives back
//! the free slots at the end only), so other structures can hold numbers.
//! A structure that keeps numbers after their value is removed (the
//! ledger's document keys, which forget them in passes) has removed
//! numbers held out of reuse until it has passed over itself twice since
//! ([`FingerprintSlots::hold_released_numbers`]).
//!
//! Consequences: a lookup reads the table, then the slot (two cache misses
//! where a map had one); the number table grows without reading a slot. Numbers are `u32`: a table holds fewer than 2^32 values.

use std::hash::BuildHasher;
use std::path::Path;

use crate::capture::{Capture, CaptureSink, Image};
use crate::hashing::FingerprintBuildHasher;
use crate::key_node_table::KeyNodeTable;
use crate::units::{Fingerprint, FingerprintWords};

/// What the number table holds under one tag
/// ([`FingerprintSlots::numbers_tagged_like`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaggedNumbers {
    None,
    One(u32),
    /// Two or more: the slots tell which, if any, is the fingerprint's.
    Several,
}

/// All 2^32 − 1 numbers are in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no slot number left")]
pub struct NoNumberLeft;

/// Fingerprint → value, each in a numbered slot; see the module docs.
#[derive(Debug, Clone)]
pub struct FingerprintSlots<T> {
    /// Slot numbers, by a 32-bit tag of their slot's fingerprint
    /// ([`Self::tag`]; a tag shared by two costs a slot read).
    numbers: KeyNodeTable,
    slots: Vec<Slot<T>>,
    /// One bit per slot: in use.
    used: Vec<u64>,
    /// Numbers of slots not in use, reused before the slots grow.
    vacant: Vec<u32>,
    /// Numbers removed while another structure may still name them, kept
    /// out of reuse until it says it no longer does
    /// ([`Self::hold_released_numbers`]).
    held: Option<HeldNumbers>,
    hasher: FingerprintBuildHasher,
    /// The slots as of a snapshot's moment, while one is taken.
    capture: Capture<Slot<T>>,
    /// The bits of slots in use as of that moment (copied a slice at a
    /// time as the slots are: a copy at the start was 12.5 MB of fresh
    /// pages with writes locked out, at 100 M nodes).
    used_capture: Capture<u64>,
}

/// Where a capture of the slots goes ([`FingerprintSlots::start_capture`]).
#[derive(Debug)]
pub struct SlotsSinks<T> {
    slots: CaptureSink<Slot<T>>,
    used: CaptureSink<u64>,
}

impl<T: Copy> SlotsSinks<T> {
    /// Moves what was copied so far into the images (outside the lock).
    pub fn flush(&self) {
        self.slots.flush();
        self.used.flush();
    }
}

/// Released numbers not yet free for reuse: those released during the
/// holder's current pass over what names them, and during its last one.
#[derive(Debug, Clone, Default)]
struct HeldNumbers {
    this_pass: Vec<u32>,
    last_pass: Vec<u32>,
}

/// A value with its fingerprint, in four 16-bit words: a slot is as
/// aligned as its value, so a value of alignment 2 and 30 bytes makes a
/// slot of 38 (a `(u64, T)` pair is aligned to 8: 40). At 100 M nodes
/// the forest's slots are 3.8 GB.
#[derive(Debug, Clone, Copy)]
pub struct Slot<T> {
    fingerprint: FingerprintWords,
    pub value: T,
}

impl<T> Slot<T> {
    pub fn new(fingerprint: Fingerprint, value: T) -> Self {
        Slot {
            fingerprint: FingerprintWords::new(fingerprint),
            value,
        }
    }

    #[inline]
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint.get()
    }
}

/// The slots in use as of one moment ([`FingerprintSlots::start_capture`]).
#[derive(Debug, Default)]
pub struct SlotsImage<T> {
    slots: Image<Slot<T>>,
    used: Image<u64>,
}

impl<T: Copy> SlotsImage<T> {
    /// The fingerprint of slot `number`, if it was in use.
    pub fn fingerprint_at(&self, number: u32) -> Option<Fingerprint> {
        let index = number as usize;
        let used = self
            .used
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0);
        used.then(|| self.slots.get(index).map(Slot::fingerprint))
            .flatten()
    }

    /// Slot `number`'s fingerprint and value, if it was in use.
    pub fn get(&self, number: u32) -> Option<(Fingerprint, &T)> {
        let fingerprint = self.fingerprint_at(number)?;
        self.slots
            .get(number as usize)
            .map(|slot| (fingerprint, &slot.value))
    }

    /// Every slot in use: its number, fingerprint and value, in number order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Fingerprint, &T)> + '_ {
        self.slots
            .iter()
            .zip(0u32..)
            .filter(|&(_, number)| {
                let number = number as usize;
                self.used
                    .get(number / 64)
                    .is_some_and(|word| word & (1 << (number % 64)) != 0)
            })
            .map(|(slot, number)| (number, slot.fingerprint(), &slot.value))
    }
}

impl<T> Default for FingerprintSlots<T> {
    fn default() -> Self {
        FingerprintSlots {
            numbers: KeyNodeTable::default(),
            slots: Vec::new(),
            used: Vec::new(),
            vacant: Vec::new(),
            held: None,
            hasher: FingerprintBuildHasher::default(),
            capture: Capture::default(),
            used_capture: Capture::default(),
        }
    }
}

impl<T: Copy> FingerprintSlots<T> {
    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }

    /// Values the table holds without growing.
    pub fn capacity(&self) -> usize {
        self.numbers.capacity()
    }

    /// The key a fingerprint's number is kept under: its seeded hash's high
    /// half (fingerprints of near duplicates share most of their bits).
    fn tag(&self, fingerprint: Fingerprint) -> u32 {
        (self.hasher.hash_one(fingerprint) >> 32) as u32
    }

    pub fn reserve(&mut self, additional: usize) {
        self.numbers.reserve(additional);
        self.slots
            .reserve(additional.saturating_sub(self.vacant.len()));
    }

    /// The number of `fingerprint`'s slot.
    pub fn number(&self, fingerprint: Fingerprint) -> Option<u32> {
        let slots = &self.slots;
        self.numbers.find(self.tag(fingerprint), |number| {
            slots[number as usize].fingerprint() == fingerprint
        })
    }

    /// An empty table that keeps numbers under the same tags as this one
    /// (tests that need two fingerprints of one tag).
    #[cfg(test)]
    pub(crate) fn empty_like(&self) -> Self {
        FingerprintSlots {
            hasher: self.hasher,
            ..FingerprintSlots::default()
        }
    }

    /// Where `fingerprint` is kept in the number table's order: numbers
    /// looked up in this order walk the table front to back (recovery
    /// looks up millions at once, each a miss of a table of gigabytes in
    /// any other order).
    pub fn table_order(&self, fingerprint: Fingerprint) -> u32 {
        self.numbers.order_of(self.tag(fingerprint))
    }

    /// The numbers kept under `fingerprint`'s tag, their slots unread: the
    /// one such number is `fingerprint`'s if any is, which its caller
    /// checks by reading the slot later, in an order of its choosing.
    pub fn numbers_tagged_like(&self, fingerprint: Fingerprint) -> TaggedNumbers {
        let mut tagged = TaggedNumbers::None;
        self.numbers.find(self.tag(fingerprint), |number| {
            tagged = match tagged {
                TaggedNumbers::None => TaggedNumbers::One(number),
                _ => TaggedNumbers::Several,
            };
            tagged == TaggedNumbers::Several
        });
        tagged
    }

    pub fn contains(&self, fingerprint: Fingerprint) -> bool {
        self.number(fingerprint).is_some()
    }

    pub fn get(&self, fingerprint: Fingerprint) -> Option<&T> {
        let number = self.number(fingerprint)?;
        Some(&self.slots[number as usize].value)
    }

    pub fn get_mut(&mut self, fingerprint: Fingerprint) -> Option<&mut T> {
        let number = self.number(fingerprint)?;
        self.capture.before_write(&self.slots, number as usize);
        Some(&mut self.slots[number as usize].value)
    }

    /// Whether slot `number` is in use.
    pub fn is_used(&self, number: u32) -> bool {
        let number = number as usize;
        self.used
            .get(number / 64)
            .is_some_and(|word| word & (1 << (number % 64)) != 0)
    }

    fn mark(&mut self, number: u32, used: bool) {
        let number = number as usize;
        if self.used.len() <= number / 64 {
            self.used.resize(number / 64 + 1, 0);
        }
        self.used_capture.before_write(&self.used, number / 64);
        let bit = 1 << (number % 64);
        if used {
            self.used[number / 64] |= bit;
        } else {
            self.used[number / 64] &= !bit;
        }
    }

    /// The fingerprint and value in slot `number`, if it is in use.
    pub fn at(&self, number: u32) -> Option<(Fingerprint, &T)> {
        if !self.is_used(number) {
            return None;
        }
        let slot = self.slots.get(number as usize)?;
        Some((slot.fingerprint(), &slot.value))
    }

    /// The fingerprint and value in slot `number`, if it is in use, the
    /// value to change.
    pub fn at_mut(&mut self, number: u32) -> Option<(Fingerprint, &mut T)> {
        if !self.is_used(number) {
            return None;
        }
        self.capture.before_write(&self.slots, number as usize);
        self.slots
            .get_mut(number as usize)
            .map(|slot| (slot.fingerprint(), &mut slot.value))
    }

    /// The number of `fingerprint`'s slot, filled with `value()` if it had
    /// none.
    ///
    /// # Errors
    ///
    /// [`NoNumberLeft`] when a new slot would need a number past `u32`.
    pub fn number_or_insert(
        &mut self,
        fingerprint: Fingerprint,
        value: impl FnOnce() -> T,
    ) -> Result<u32, NoNumberLeft> {
        let tag = self.tag(fingerprint);
        let slots = &self.slots;
        if let Some(number) = self.numbers.find(tag, |number| {
            slots[number as usize].fingerprint() == fingerprint
        }) {
            return Ok(number);
        }
        let slot = Slot::new(fingerprint, value());
        let number = match self.vacant.pop() {
            Some(number) => {
                self.capture.before_write(&self.slots, number as usize);
                self.slots[number as usize] = slot;
                number
            }
            None => {
                let number = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&number| number != u32::MAX)
                    .ok_or(NoNumberLeft)?;
                self.slots.push(slot);
                number
            }
        };
        self.numbers.insert(tag, number);
        self.mark(number, true);
        Ok(number)
    }

    /// The numbers of `entries`' fingerprints as [`Self::number_or_insert`]
    /// one by one would give them (a fingerprint seen again keeps its first
    /// value and number), for an empty table (recovery; a table in use
    /// takes them one by one). Numbers follow the entries' order; the table
    /// is written in its own order, front to back, where one insert at a
    /// time was a probe at a random place of hundreds of megabytes.
    ///
    /// # Errors
    ///
    /// [`NoNumberLeft`] when the entries need more than `u32` numbers.
    pub fn number_all(&mut self, entries: Vec<Slot<T>>) -> Result<Vec<u32>, NoNumberLeft> {
        if !self.slots.is_empty() {
            return entries
                .into_iter()
                .map(|slot| self.number_or_insert(slot.fingerprint(), || slot.value))
                .collect();
        }
        if u32::try_from(entries.len()).map_or(true, |count| count == u32::MAX) {
            return Err(NoNumberLeft);
        }
        // (the number table's order of the tag, index), sorted once: the
        // order the number table is written in, where a fingerprint given
        // twice sits among the entries of its tag.
        let placed: Vec<u64> = (0u32..)
            .zip(&entries)
            .map(|(index, slot)| {
                u64::from(self.table_order(slot.fingerprint())) << 32 | u64::from(index)
            })
            .collect();
        let placed = crate::radix::sort_stably_by(vec![placed], |packed| (packed >> 32) as u32);
        let index_of = |packed: u64| packed as u32;
        // A fingerprint seen again points at its first (entries of one tag
        // are kept in entry order by the sort).
        let mut first_of: Vec<u32> = Vec::new();
        for run in placed.chunk_by(|a, b| a >> 32 == b >> 32) {
            for (later, &packed) in run.iter().enumerate().skip(1) {
                let index = index_of(packed);
                let fingerprint = entries[index as usize].fingerprint();
                if let Some(&first) = run[..later].iter().find(|&&earlier| {
                    entries[index_of(earlier) as usize].fingerprint() == fingerprint
                }) {
                    if first_of.is_empty() {
                        first_of = (0..u32::try_from(entries.len()).unwrap_or(u32::MAX)).collect();
                    }
                    first_of[index as usize] = first_of[index_of(first) as usize];
                }
            }
        }
        let mut numbers = Vec::with_capacity(entries.len());
        if first_of.is_empty() {
            // Each entry's slot is its place (fewer than u32::MAX, checked
            // above): the entries are the slots, not copied (gigabytes at
            // 100 M nodes, each page faulted in anew).
            numbers.extend(0..u32::try_from(entries.len()).unwrap_or(u32::MAX));
            self.slots = entries;
        } else {
            self.slots.reserve(entries.len());
            for (index, slot) in (0u32..).zip(entries) {
                match first_of.get(index as usize) {
                    Some(&first) if first != index => numbers.push(numbers[first as usize]),
                    _ => {
                        numbers.push(u32::try_from(self.slots.len()).unwrap_or(u32::MAX));
                        self.slots.push(slot);
                    }
                }
            }
        }
        let count = self.slots.len();
        self.used_capture.complete(&self.used);
        self.used = vec![u64::MAX; count / 64];
        if !count.is_multiple_of(64) {
            self.used.push((1u64 << (count % 64)) - 1);
        }
        if first_of.is_empty() {
            // Every entry has the number of its place in the entries.
            self.numbers.insert_all_in_order(placed.iter().copied());
        } else {
            self.numbers.insert_all_in_order(
                placed
                    .iter()
                    .filter(|&&packed| first_of[index_of(packed) as usize] == index_of(packed))
                    .map(|&packed| {
                        packed >> 32 << 32 | u64::from(numbers[index_of(packed) as usize])
                    }),
            );
        }
        Ok(numbers)
    }

    /// Sets `fingerprint`'s value; returns the one it replaced.
    ///
    /// # Errors
    ///
    /// [`NoNumberLeft`], as for [`Self::number_or_insert`].
    pub fn insert(
        &mut self,
        fingerprint: Fingerprint,
        value: T,
    ) -> Result<Option<T>, NoNumberLeft> {
        let mut inserted = false;
        let number = self.number_or_insert(fingerprint, || {
            inserted = true;
            value
        })?;
        if inserted {
            return Ok(None);
        }
        self.capture.before_write(&self.slots, number as usize);
        let slot = &mut self.slots[number as usize].value;
        Ok(Some(std::mem::replace(slot, value)))
    }

    /// Takes `fingerprint`'s value out; its slot number is free for reuse.
    pub fn remove(&mut self, fingerprint: Fingerprint) -> Option<(u32, T)> {
        let tag = self.tag(fingerprint);
        let slots = &self.slots;
        let number = self.numbers.remove_if(tag, |number| {
            slots[number as usize].fingerprint() == fingerprint
        })?;
        self.mark(number, false);
        match &mut self.held {
            Some(held) => held.this_pass.push(number),
            None => self.vacant.push(number),
        }
        Some((number, self.slots[number as usize].value))
    }

    /// From now on a removed value's number is held out of reuse until
    /// the second [`Self::holder_pass_ended`] after its removal (or
    /// [`Self::release_held_numbers`]): for a structure that names values
    /// by number and forgets the numbers of removed values in passes over
    /// itself, so that a number it still holds never names a newer value.
    pub fn hold_released_numbers(&mut self) {
        self.held.get_or_insert_with(HeldNumbers::default);
    }

    /// Whether numbers are held ([`Self::hold_released_numbers`]).
    pub fn holds_released_numbers(&self) -> bool {
        self.held
            .as_ref()
            .is_some_and(|held| !held.this_pass.is_empty() || !held.last_pass.is_empty())
    }

    /// The holder has passed over everything it names once more: numbers
    /// released before its pass began are free for reuse.
    pub fn holder_pass_ended(&mut self) {
        if let Some(held) = &mut self.held {
            let free = std::mem::replace(&mut held.last_pass, std::mem::take(&mut held.this_pass));
            self.vacant.extend(free);
        }
    }

    /// The holder names no released number any more: all are free.
    pub fn release_held_numbers(&mut self) {
        self.holder_pass_ended();
        self.holder_pass_ended();
    }

    /// Every slot in use: its number, fingerprint and value, in number order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Fingerprint, &T)> + '_ {
        self.iter_numbers(0..u32::MAX)
    }

    /// [`Slots::iter`] restricted to the numbers in `numbers`, so a long
    /// walk can be taken in parts.
    pub fn iter_numbers(
        &self,
        numbers: std::ops::Range<u32>,
    ) -> impl Iterator<Item = (u32, Fingerprint, &T)> + '_ {
        let start = (numbers.start as usize).min(self.slots.len());
        let end = (numbers.end as usize).clamp(start, self.slots.len());
        self.slots[start..end]
            .iter()
            .zip(numbers.start..)
            .filter(|&(_, number)| self.is_used(number))
            .map(|(slot, number)| (number, slot.fingerprint(), &slot.value))
    }

    /// Gives back memory after many removals, every value keeping its
    /// number: the number table shrinks to hold `capacity` (at least the
    /// values), the free slots at the end of the vector go, and the other
    /// free numbers are reused lowest first from now on, so that later
    /// removals can free the end too.
    pub fn release_spare(&mut self, capacity: usize) {
        self.numbers.shrink_to(capacity);
        let mut end = self.slots.len();
        while end > 0 && !self.is_used(end as u32 - 1) {
            end -= 1;
        }
        // A held number keeps its slot: it must not be handed out again by
        // the vector growing back over it.
        if let Some(held) = &self.held {
            let past_held = held
                .this_pass
                .iter()
                .chain(&held.last_pass)
                .map(|&number| number as usize + 1)
                .max();
            end = end.max(past_held.unwrap_or(0));
        }
        if end < self.slots.len() {
            self.capture.complete(&self.slots);
            self.used_capture.complete(&self.used);
        }
        self.slots.truncate(end);
        self.slots.shrink_to_fit();
        self.used.truncate(end.div_ceil(64));
        self.used.shrink_to_fit();
        // Highest first: `pop` takes the lowest.
        self.vacant.retain(|&number| (number as usize) < end);
        self.vacant.sort_unstable_by(|a, b| b.cmp(a));
        self.vacant.shrink_to_fit();
    }

    /// Starts capturing the slots as they are now ([`crate::capture`]):
    /// call with writes locked out. The slots, and the bits saying which
    /// are in use (one a slot), are copied a slice at a time by
    /// [`Self::capture_some`]; the sinks move the copies into the images,
    /// outside the lock ([`crate::capture::CaptureSink::flush`]).
    pub fn start_capture(&self, directory: Option<&Path>) -> SlotsSinks<T> {
        SlotsSinks {
            slots: self.capture.start(&self.slots, directory),
            used: self.used_capture.start(&self.used, None),
        }
    }

    /// Copies up to `budget` more slots of the capture (and the bits of
    /// as many); `true` once done.
    pub fn capture_some(&self, budget: usize) -> bool {
        let used_done = self
            .used_capture
            .copy_some(&self.used, budget.div_ceil(64).max(1));
        self.capture.copy_some(&self.slots, budget) && used_done
    }

    /// The captured slots in use, once all are copied (the capture ends).
    pub fn take_capture(&self) -> Option<SlotsImage<T>> {
        // Both images or neither: the bits are known copied (a copy of
        // nothing says whether all is) before the slots' image is taken.
        if !self.used_capture.copy_some(&self.used, 0) {
            return None;
        }
        let slots = self.capture.take()?;
        let used = self.used_capture.take()?;
        Some(SlotsImage { slots, used })
    }

    /// Ends a capture without its image.
    pub fn stop_capture(&self) {
        self.capture.stop();
        self.used_capture.stop();
    }

    /// One more than the largest number in use or waiting for reuse.
    pub fn number_bound(&self) -> usize {
        self.slots.len()
    }

    /// Heap bytes: the number table, the slots in use or waiting for reuse
    /// (capacity past them is address space the vector has not touched),
    /// the bits and the free list.
    pub fn heap_bytes(&self) -> usize {
        self.numbers.allocation_size()
            + self.slots.len() * size_of::<Slot<T>>()
            + self.used.len() * size_of::<u64>()
            + self.vacant.capacity() * size_of::<u32>()
            + self.held.as_ref().map_or(0, |held| {
                (held.this_pass.capacity() + held.last_pass.capacity()) * size_of::<u32>()
            })
    }
}

#[cfg(test)]
#[path = "slots_tests.rs"]
mod tests;
