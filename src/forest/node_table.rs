//! The forest's nodes: fingerprint → [`Node`], as a map would hold them,
//! in less memory.
//!
//! Motivation: a std map of fingerprint → node keeps 48-byte entries in a
//! table whose size is a power of two at most 7/8 full; right after it
//! doubles, half of it is empty, and hashing spreads the entries so every
//! page of it is touched: about 100 bytes per node at 500 k nodes, most of
//! the forest.
//!
//! Design: the nodes with their fingerprints in one vector, a slot each
//! (48 bytes), found through a table of 4-byte slot numbers hashed by the
//! slot's fingerprint. The vector grows by reallocation, and a large block
//! grows in place or by remapping, so capacity it has not used yet costs
//! address space, not memory. A removed node's slot goes on a free list and
//! is reused; shrinking packs the live slots (the numbers never leave this
//! module).
//!
//! Consequences: about 56 bytes per node. A lookup reads the table, then
//! the slot: two cache misses where the map had one.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::Node;
use crate::candidates::multi_index::FingerprintBuildHasher;
use crate::units::Fingerprint;

/// `leaf_slot` of a slot that holds no node.
const VACANT: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Copy)]
struct Slot {
    fingerprint: Fingerprint,
    node: Node,
}

impl Slot {
    fn is_vacant(&self) -> bool {
        self.node.leaf_slot == VACANT
    }
}

/// Fingerprint → node; see the module documentation.
#[derive(Debug, Clone, Default)]
pub(super) struct NodeTable {
    /// Slot numbers, hashed by their slot's fingerprint.
    numbers: HashTable<u32>,
    slots: Vec<Slot>,
    vacant: Vec<u32>,
    hasher: FingerprintBuildHasher,
}

impl NodeTable {
    pub(super) fn len(&self) -> usize {
        self.numbers.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }

    /// Nodes the table holds without growing.
    pub(super) fn capacity(&self) -> usize {
        self.numbers.capacity()
    }

    pub(super) fn reserve(&mut self, additional: usize) {
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.numbers.reserve(additional, |&number| {
            hasher.hash_one(slots[number as usize].fingerprint)
        });
        self.slots
            .reserve(additional.saturating_sub(self.vacant.len()));
    }

    fn number(&self, fingerprint: Fingerprint) -> Option<u32> {
        let slots = &self.slots;
        self.numbers
            .find(self.hasher.hash_one(fingerprint), |&number| {
                slots[number as usize].fingerprint == fingerprint
            })
            .copied()
    }

    pub(super) fn get(&self, fingerprint: &Fingerprint) -> Option<&Node> {
        let number = self.number(*fingerprint)?;
        Some(&self.slots[number as usize].node)
    }

    pub(super) fn get_mut(&mut self, fingerprint: &Fingerprint) -> Option<&mut Node> {
        let number = self.number(*fingerprint)?;
        Some(&mut self.slots[number as usize].node)
    }

    pub(super) fn contains_key(&self, fingerprint: &Fingerprint) -> bool {
        self.number(*fingerprint).is_some()
    }

    /// Sets `fingerprint`'s node; returns the node it replaced.
    pub(super) fn insert(&mut self, fingerprint: Fingerprint, node: Node) -> Option<Node> {
        debug_assert_ne!(node.leaf_slot, VACANT, "a node's leaf slot is never VACANT");
        let hash = self.hasher.hash_one(fingerprint);
        let (slots, hasher) = (&self.slots, &self.hasher);
        let entry = self.numbers.entry(
            hash,
            |&number| slots[number as usize].fingerprint == fingerprint,
            |&number| hasher.hash_one(slots[number as usize].fingerprint),
        );
        let vacant_entry = match entry {
            hashbrown::hash_table::Entry::Occupied(occupied) => {
                let slot = &mut self.slots[*occupied.get() as usize];
                return Some(std::mem::replace(&mut slot.node, node));
            }
            hashbrown::hash_table::Entry::Vacant(vacant_entry) => vacant_entry,
        };
        let slot = Slot { fingerprint, node };
        let number = match self.vacant.pop() {
            Some(number) => {
                self.slots[number as usize] = slot;
                number
            }
            None => {
                // More than 4 billion nodes would not fit in memory anyway.
                let number = u32::try_from(self.slots.len()).unwrap_or(VACANT - 1);
                self.slots.push(slot);
                number
            }
        };
        vacant_entry.insert(number);
        None
    }

    /// Takes `fingerprint`'s node out.
    pub(super) fn remove(&mut self, fingerprint: &Fingerprint) -> Option<Node> {
        let slots = &self.slots;
        let (number, _) = self
            .numbers
            .find_entry(self.hasher.hash_one(*fingerprint), |&number| {
                slots[number as usize].fingerprint == *fingerprint
            })
            .ok()?
            .remove();
        let slot = &mut self.slots[number as usize];
        let node = slot.node;
        slot.node.leaf_slot = VACANT;
        self.vacant.push(number);
        Some(node)
    }

    /// Every node with its fingerprint, in slot order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Fingerprint, &Node)> + '_ {
        self.slots
            .iter()
            .filter(|slot| !slot.is_vacant())
            .map(|slot| (&slot.fingerprint, &slot.node))
    }

    /// Packs the live nodes into fresh storage sized for `capacity`.
    pub(super) fn shrink_to(&mut self, capacity: usize) {
        let mut packed = NodeTable {
            hasher: self.hasher,
            ..NodeTable::default()
        };
        packed.reserve(capacity.max(self.len()));
        for slot in self.slots.iter().filter(|slot| !slot.is_vacant()) {
            packed.insert(slot.fingerprint, slot.node);
        }
        *self = packed;
    }

    /// Heap bytes: the number table, the slots in use or waiting for reuse
    /// (capacity past them is address space the vector has not touched).
    pub(super) fn heap_bytes(&self) -> usize {
        self.numbers.allocation_size()
            + self.slots.len() * size_of::<Slot>()
            + self.vacant.capacity() * size_of::<u32>()
    }
}
