//! What a [`super::KeyNodeTable`] stores its keys as: the trait a format
//! of keys and entries implements ([`KeyFormat`]), and the format of the
//! candidate keys, exact-hash tags and slot tags ([`ShortKeys`]: 32-bit
//! keys in 5-byte entries). The ledger's document keys are 64-bit keys in
//! 10-byte entries (`crate::ledger`), laid out by the same table.
//!
//! Why a trait: the table's layout (shards, a directory of positions
//! standing for the key bits an entry leaves out, entries in key order)
//! is the same whatever the key's width; only the entry's bytes and the
//! bijection the keys go through differ.

use std::fmt::Debug;
use std::hash::BuildHasher;

use crate::hashing::FingerprintBuildHasher;
use crate::units::NodeId;

/// A table's keys and entries. A mixed key is `KEY_BITS` wide, at the top
/// of a `u64`; of its bits, the top 16 are the shard's and its
/// directory's, and an entry keeps the rest beside its node.
pub trait KeyFormat: Debug + Clone + Copy + Default + PartialEq + Eq {
    /// The key callers give.
    type Key: Copy;
    /// An entry: a vacant place is [`Self::VACANT`].
    type Entry: Copy + PartialEq + Debug;
    /// The table's seeded bijection of keys.
    type Mix: Copy + Debug;
    /// Bits of a key.
    const KEY_BITS: u32;
    /// Bits of an entry's node while node numbers fit them (the node is
    /// stored plus one); the field widens up to 32 bits, an entry keeping
    /// a bit of the key fewer for each.
    const NARROW_NODE_BITS: u32;
    const VACANT: Self::Entry;

    fn seeded() -> Self::Mix;

    /// `key` through the bijection, at the top of a `u64`.
    fn mix(mix: Self::Mix, key: Self::Key) -> u64;

    /// The key [`Self::mix`] gave `mixed` from (a snapshot's copy keeps
    /// the keys themselves: the next process draws its own bijection).
    fn unmix(mix: Self::Mix, mixed: u64) -> Self::Key;

    /// An entry of the kept bits `low` and node `node`, its node field
    /// `node_bits` wide.
    fn entry(low: u64, node: NodeId, node_bits: u32) -> Self::Entry;

    /// The kept bits of an entry whose node field is `node_bits` wide.
    fn low(entry: Self::Entry, node_bits: u32) -> u64;

    /// The node of an entry whose node field is `node_bits` wide.
    fn node(entry: Self::Entry, node_bits: u32) -> NodeId;
}

/// 32-bit keys, 5-byte entries: the key's low 16 bits and the node in 24
/// (widened past 2^24 − 1 nodes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShortKeys;

/// An entry in five bytes, little-endian: the node plus one in its low
/// node bits, the kept bits of the key above them. A vacant place is all
/// zeros (no entry's node field is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry([u8; 5]);

impl Entry {
    fn value(self) -> u64 {
        let [a, b, c, d, e] = self.0;
        u64::from(u32::from_le_bytes([a, b, c, d])) | (u64::from(e) << 32)
    }
}

/// A seeded bijection of `u32` (xor, odd multiplies and xor-shifts are
/// each invertible).
#[derive(Debug, Clone, Copy)]
pub struct KeyMix {
    pub(super) xor: u32,
    pub(super) multiplier: u32,
}

impl KeyMix {
    /// The bijection's two numbers: a snapshot keeps them, so that a
    /// table recovered with the same mix takes its keys in the order they
    /// were copied ([`super::KeyNodeTable::with_mix`]).
    pub fn parts(self) -> [u32; 2] {
        [self.xor, self.multiplier]
    }

    /// The mix of [`Self::parts`] (the multiplier made odd).
    pub fn from_parts([xor, multiplier]: [u32; 2]) -> Self {
        KeyMix {
            xor,
            multiplier: multiplier | 1,
        }
    }

    pub(super) fn mix(self, key: u32) -> u32 {
        let mut mixed = (key ^ self.xor).wrapping_mul(self.multiplier);
        mixed ^= mixed >> 16;
        mixed = mixed.wrapping_mul(0x7feb_352d);
        mixed ^ (mixed >> 15)
    }

    /// The key [`Self::mix`] gave `mixed` from.
    pub(super) fn unmix(self, mixed: u32) -> u32 {
        let mut key = mixed ^ (mixed >> 15) ^ (mixed >> 30);
        key = key.wrapping_mul(inverse_of(0x7feb_352d));
        key ^= key >> 16;
        key.wrapping_mul(inverse_of(self.multiplier)) ^ self.xor
    }
}

/// The inverse of an odd `u32` modulo 2^32 (Newton's iteration doubles
/// the correct low bits each step: 3, 6, 12, 24, 48).
const fn inverse_of(odd: u32) -> u32 {
    let mut inverse = odd;
    let mut step = 0;
    while step < 4 {
        inverse = inverse.wrapping_mul(2u32.wrapping_sub(odd.wrapping_mul(inverse)));
        step += 1;
    }
    inverse
}

impl KeyFormat for ShortKeys {
    type Key = u32;
    type Entry = Entry;
    type Mix = KeyMix;
    const KEY_BITS: u32 = 32;
    const NARROW_NODE_BITS: u32 = 24;
    const VACANT: Entry = Entry([0; 5]);

    fn seeded() -> KeyMix {
        let seed = FingerprintBuildHasher::default().hash_one(0x006b_6579_5f6d_6978_u64);
        KeyMix {
            xor: seed as u32,
            multiplier: ((seed >> 32) as u32) | 1,
        }
    }

    fn mix(mix: KeyMix, key: u32) -> u64 {
        u64::from(mix.mix(key)) << 32
    }

    fn unmix(mix: KeyMix, mixed: u64) -> u32 {
        mix.unmix((mixed >> 32) as u32)
    }

    fn entry(low: u64, node: NodeId, node_bits: u32) -> Entry {
        let value = (low << node_bits) | (u64::from(node) + 1);
        let bytes = value.to_le_bytes();
        Entry([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4]])
    }

    fn low(entry: Entry, node_bits: u32) -> u64 {
        entry.value() >> node_bits
    }

    fn node(entry: Entry, node_bits: u32) -> NodeId {
        let stored = entry.value() & ((1 << node_bits) - 1);
        (stored as NodeId).wrapping_sub(1)
    }
}
