//! The ledger's document keys: which node each stored document was
//! placed at, by the node's number ([`DocumentKeys`]).
//!
//! Why by number: an entry names its node in 4 bytes where the node's
//! fingerprint took 8 (a key per document: the ledger's largest table),
//! and a key whose node is gone reads as absent at once, so forgetting
//! such keys needs no walk of the whole table under the write lock, and
//! no log of which ones a walk forgot (see `docs/decisions.md`).
//!
//! Why in a key-node table ([`crate::key_node_table`]): the keys pass
//! through a seeded bijection of `u64`, and the table's shards and their
//! directories stand for the mixed key's top 16 bits, so an entry keeps
//! the other 48 and the node: 10 bytes, where a table of whole keys took
//! 12. And the table grows a shard (a few megabytes) at a time, each a
//! mapping of its own, where a whole table's growth held writes for up
//! to 2.8 s at 100 M keys. A snapshot copies each shard whole before its
//! first change after the capture's start ([`DocumentKeys::start_capture`]).

use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

use crate::capture::{CaptureSink, Image};
use crate::forest::Forest;
use crate::hashing::FingerprintBuildHasher;
use crate::key_node_table::{KeyFormat, KeyNodeTable};
use crate::table_capture::TableCapture;
use crate::units::{Fingerprint, NodeId};

/// A stored document's identity: a hash of its concrete index and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocumentKey(pub u64);

impl DocumentKey {
    pub fn new(index: &str, id: &str) -> Self {
        let mut bytes = Vec::with_capacity(index.len() + id.len() + 1);
        bytes.extend_from_slice(index.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
        DocumentKey(xxh3_64(&bytes))
    }
}

/// A whole key and the number of its node, 12 bytes: what a snapshot's
/// capture copies ([`DocumentKeys::start_capture`]), the key in two halves
/// so that the entry is aligned to 4.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct KeyEntry {
    key: [u32; 2],
    pub(super) node: NodeId,
}

impl KeyEntry {
    fn new(key: u64, node: NodeId) -> Self {
        KeyEntry {
            key: [key as u32, (key >> 32) as u32],
            node,
        }
    }

    pub(super) fn key(&self) -> u64 {
        u64::from(self.key[0]) | u64::from(self.key[1]) << 32
    }
}

/// The document keys' format in a [`KeyNodeTable`]: 64-bit keys, entries
/// of the 48 bits below the mixed key's top 16 and the node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DocumentKeyFormat;

/// The kept 48 bits and the node plus one, in 10 bytes (alignment 2). A
/// vacant place is all zeros (no entry's node field is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentKeyEntry([u16; 5]);

impl KeyFormat for DocumentKeyFormat {
    type Key = DocumentKey;
    type Entry = DocumentKeyEntry;
    type Mix = KeyMix;
    const KEY_BITS: u32 = 64;
    const NARROW_NODE_BITS: u32 = 32;
    const VACANT: DocumentKeyEntry = DocumentKeyEntry([0; 5]);

    fn seeded() -> KeyMix {
        KeyMix::seeded()
    }

    fn mix(mix: KeyMix, key: DocumentKey) -> u64 {
        mix.mix(key.0)
    }

    fn unmix(mix: KeyMix, mixed: u64) -> DocumentKey {
        DocumentKey(mix.unmix(mixed))
    }

    fn entry(low: u64, node: NodeId, _node_bits: u32) -> DocumentKeyEntry {
        let stored = node.wrapping_add(1);
        DocumentKeyEntry([
            low as u16,
            (low >> 16) as u16,
            (low >> 32) as u16,
            stored as u16,
            (stored >> 16) as u16,
        ])
    }

    fn low(entry: DocumentKeyEntry, _node_bits: u32) -> u64 {
        let [a, b, c, _, _] = entry.0;
        u64::from(a) | u64::from(b) << 16 | u64::from(c) << 32
    }

    fn node(entry: DocumentKeyEntry, _node_bits: u32) -> NodeId {
        let [_, _, _, low, high] = entry.0;
        (NodeId::from(low) | NodeId::from(high) << 16).wrapping_sub(1)
    }
}

/// A seeded bijection of `u64` (xor, odd multiplies and xor-shifts are
/// each invertible): a snapshot gives back the keys themselves, and
/// crafted document ids cannot aim at one shard.
#[derive(Debug, Clone, Copy)]
pub struct KeyMix {
    seed: u64,
}

const MIX_FIRST: u64 = 0xbf58_476d_1ce4_e5b9;
const MIX_SECOND: u64 = 0x94d0_49bb_1331_11eb;

/// The inverse of an odd `u64` modulo 2^64 (Newton's iteration doubles
/// the correct low bits each step: 3, 6, 12, 24, 48, 96).
const fn inverse_of(odd: u64) -> u64 {
    let mut inverse = odd;
    let mut step = 0;
    while step < 5 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
        step += 1;
    }
    inverse
}

const MIX_FIRST_INVERSE: u64 = inverse_of(MIX_FIRST);
const MIX_SECOND_INVERSE: u64 = inverse_of(MIX_SECOND);

impl KeyMix {
    fn seeded() -> Self {
        use std::hash::BuildHasher;
        KeyMix {
            seed: FingerprintBuildHasher::default().hash_one(0x646f_635f_6b65_7973_u64),
        }
    }

    fn mix(self, key: u64) -> u64 {
        let mut mixed = key ^ self.seed;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(MIX_FIRST);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(MIX_SECOND);
        mixed ^ (mixed >> 31)
    }

    fn unmix(self, mixed: u64) -> u64 {
        let mut key = mixed ^ (mixed >> 31) ^ (mixed >> 62);
        key = key.wrapping_mul(MIX_SECOND_INVERSE);
        key ^= (key >> 27) ^ (key >> 54);
        key = key.wrapping_mul(MIX_FIRST_INVERSE);
        key ^= (key >> 30) ^ (key >> 60);
        key ^ self.seed
    }
}

/// Places a pass over the keys visits for each node removed (and each
/// call): a pass ends after about a 64th of the keys' count in removals,
/// so the numbers held for it are a few percent of the nodes.
pub const KEY_SWEEP_PLACES_PER_REMOVAL: usize = 64;

/// A key costs a snapshot's slice about this many times the bytes of its
/// copy: each is read from its shard, its mix undone and written whole
/// (about 9 ns a key; the other tables' slices are copies of memory).
pub(super) const KEY_COPY_WEIGHT: usize = 4;

/// Document key → the node its document was placed at, by number.
///
/// A node's number is held out of reuse after the node is removed
/// ([`crate::forest::numbers::NumberHold`]) until a whole pass over the keys has
/// forgotten the keys that name it, so a key never names a newer node: a
/// key whose node is gone reads as absent, whenever the pass reaches it.
/// The pass is spread over the writes ([`DocumentKeys::sweep_some`]),
/// where forgetting such keys was one walk of the whole table under the
/// write lock, and which keys it forgot had to be logged: a node
/// expired and made again from the same text took back the old keys.
#[derive(Debug, Default)]
pub struct DocumentKeys {
    table: KeyNodeTable<DocumentKeyFormat>,
    /// The mixed key the pass over the keys goes on from.
    pass: u64,
    /// While a snapshot is taken (writers reach it through `&mut`).
    capture: TableCapture<DocumentKeyFormat, KeyEntry>,
}

impl DocumentKeys {
    /// Before a change to the shard of `key`: copied first if a capture
    /// runs and has not copied it yet.
    fn before_change(&mut self, key: DocumentKey) {
        self.capture.before_change(&self.table, key);
    }

    /// Before a change to any shard.
    fn before_changes(&mut self) {
        self.capture.before_changes(&self.table);
    }

    pub(super) fn get(&self, key: DocumentKey, forest: &Forest) -> Option<Fingerprint> {
        forest.fingerprint_at(self.table.get(key)?)
    }

    /// Sets `key`'s node to `fingerprint`'s (none when it has no node);
    /// returns the fingerprint of the node it had, if that node is alive.
    pub(super) fn insert(
        &mut self,
        key: DocumentKey,
        fingerprint: Fingerprint,
        forest: &Forest,
    ) -> Option<Fingerprint> {
        let Some(node) = forest.number(fingerprint) else {
            return self.remove(key, forest).flatten();
        };
        forest.fingerprint_at(self.set(key, node)?)
    }

    /// Sets `key`'s node to `node`; the node it had.
    fn set(&mut self, key: DocumentKey, node: NodeId) -> Option<NodeId> {
        self.before_change(key);
        self.table.replace_or_insert(key, |_| true, node)
    }

    /// Takes `key` out; the node it had. (During a capture its shard is
    /// copied first even when `key` is absent: the copier would copy it
    /// anyway, and the common case walks once.)
    fn take(&mut self, key: DocumentKey) -> Option<NodeId> {
        self.before_change(key);
        self.table.remove(key)
    }

    /// Adds `(key, node)` pairs all at once; of keys given twice, or
    /// given again, the later stays. Into an empty table, sorted by mixed
    /// key and written front to back (recovery: a radix sort, then each
    /// shard in one pass).
    fn add_all(&mut self, pairs: impl Iterator<Item = (DocumentKey, NodeId)>) {
        self.before_changes();
        if !self.table.is_empty() {
            for (key, node) in pairs {
                self.table.replace_or_insert(key, |_| true, node);
            }
            return;
        }
        let mix = self.table.mix();
        // Entries of the mixed key here, not the key: 12 bytes to sort.
        let mixed: Vec<KeyEntry> = pairs
            .map(|(key, node)| KeyEntry::new(mix.mix(key.0), node))
            .collect();
        let mut sorted = crate::radix::sort_stably_by(vec![mixed], |entry| entry.key[1]);
        // Keys that share their high half are rare: each such run sorted
        // by the low half, keeping the order of equal keys.
        for run in sorted.chunk_by_mut(|one, other| one.key[1] == other.key[1]) {
            if run.len() > 1 {
                run.sort_by_key(KeyEntry::key);
            }
        }
        // Of equal keys, the last given.
        let last_of_each = sorted.iter().enumerate().filter_map(|(at, entry)| {
            let later = sorted.get(at + 1);
            (later.is_none_or(|later| later.key() != entry.key()))
                .then_some((entry.key(), entry.node))
        });
        self.table.insert_all_mixed_in_order(last_of_each);
    }

    /// Adds keys given with their node's fingerprint, all at once: each
    /// fingerprint looked up in `forest` (a key whose node is not there is
    /// left out); of keys given twice, or given again, the later stays.
    pub fn add_by_fingerprint(&mut self, keys: Vec<(DocumentKey, Fingerprint)>, forest: &Forest) {
        self.add_all(
            keys.into_iter()
                .filter_map(|(key, fingerprint)| Some((key, forest.number(fingerprint)?))),
        );
    }

    /// A snapshot's keys, all at once, each naming its node by number; a
    /// key given twice keeps the later node.
    pub fn from_numbered(keys: Vec<(DocumentKey, NodeId)>) -> Self {
        let mut document_keys = DocumentKeys::default();
        document_keys.add_all(keys.into_iter());
        document_keys
    }

    /// Takes `key` out: `None` when it was not there, `Some(None)` when
    /// its node is gone.
    pub(super) fn remove(
        &mut self,
        key: DocumentKey,
        forest: &Forest,
    ) -> Option<Option<Fingerprint>> {
        Some(forest.fingerprint_at(self.take(key)?))
    }

    /// Forgets every key whose node is gone, at once.
    pub(super) fn sweep_all(&mut self, forest: &Forest) {
        self.before_changes();
        self.table.retain(|node| forest.holds_number(node));
        self.pass = 0;
    }

    /// Goes on with the pass over the keys for about `budget` places,
    /// forgetting the keys whose node is gone; whether a pass ended.
    pub(super) fn sweep_some(&mut self, budget: usize, forest: &Forest) -> bool {
        self.sweep_some_keeping(budget, |node| forest.holds_number(node))
    }

    /// [`Self::sweep_some`], forgetting the keys whose node `keep` refuses.
    fn sweep_some_keeping(&mut self, budget: usize, mut keep: impl FnMut(NodeId) -> bool) -> bool {
        let mut budget = budget.max(1);
        loop {
            self.capture.before_pass_from(&self.table, self.pass);
            let (looked, next) = self.table.sweep_from(self.pass, budget, &mut keep);
            let Some(next) = next else {
                self.pass = 0;
                return true;
            };
            self.pass = next;
            budget = budget.saturating_sub(looked);
            if budget == 0 {
                return false;
            }
        }
    }

    /// Every key and the fingerprint of its node, keys whose node is gone
    /// left out.
    pub(super) fn iter<'a>(
        &'a self,
        forest: &'a Forest,
    ) -> impl Iterator<Item = (DocumentKey, Fingerprint)> + 'a {
        let mix = self.table.mix();
        self.table.entries().filter_map(move |(mixed, node)| {
            Some((DocumentKey(mix.unmix(mixed)), forest.fingerprint_at(node)?))
        })
    }

    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// Bytes of the table's places, directories and shards.
    pub(super) fn allocation_size(&self) -> usize {
        self.table.allocation_size()
    }

    /// Starts capturing the keys as they are now: call with writes locked
    /// out. The copies go to the sink, whole keys with their nodes (in a
    /// file of `directory` when large); [`Self::capture_some`] copies the
    /// shards in order, and a change to a shard not yet copied copies it
    /// first. A capture already running is dropped.
    pub(super) fn start_capture(&self, directory: Option<&Path>) -> [CaptureSink<KeyEntry>; 2] {
        self.capture.start(&self.table, directory, |key, node| {
            KeyEntry::new(key.0, node)
        })
    }

    /// Copies shards, a piece of one at a time, until about `budget` keys
    /// are copied; `true` once all are (or no capture runs). Writes must
    /// be locked out meanwhile.
    pub(super) fn capture_some(&self, budget: usize) -> bool {
        self.capture.copy_some(&self.table, budget)
    }

    /// The keys as of the capture's start, in no order, once all are
    /// copied (the capture ends).
    pub(super) fn take_capture(&self) -> Option<Image<KeyEntry>> {
        let [mut keys, ahead] = self.capture.take()?;
        keys.extend_from_slice(&ahead);
        Some(keys)
    }

    /// Ends a capture without its image.
    pub(super) fn stop_capture(&self) {
        self.capture.stop();
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
