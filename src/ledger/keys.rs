//! The ledger's document keys: which node each stored document was
//! placed at, by the node's number ([`DocumentKeys`]).
//!
//! Why by number: an entry is 12 bytes where the node's fingerprint made
//! it 16 (a key per document: the ledger's largest table), and a key whose
//! node is gone reads as absent at once, so forgetting such keys needs no
//! walk of the whole table under the write lock, and no log of which ones
//! a walk forgot (see `docs/decisions.md`).

use xxhash_rust::xxh3::xxh3_64;

use crate::compact_table::{KeyedEntry, KeyedTable, SweepPass, TableEntry};
use crate::forest::Forest;
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

/// A key and the number of the node its document was placed at: 12
/// bytes in a [`KeyedTable`] (82–92 % full; 16 with the node's
/// fingerprint, until issue 49's sixteenth part), the key in two halves so
/// that the entry is aligned to 4.
#[derive(Debug, Clone, Copy)]
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
}

impl TableEntry for KeyEntry {
    const VACANT: Self = KeyEntry {
        key: [u32::MAX, u32::MAX],
        node: 0,
    };
    fn is_vacant(&self) -> bool {
        self.key == [u32::MAX, u32::MAX]
    }
}

/// The key value that marks an empty place; a document key with this hash
/// is kept as the one below it (one more 64-bit collision, as unlikely as
/// any other).
const VACANT_KEY: u64 = u64::MAX;

fn kept_key(key: DocumentKey) -> u64 {
    if key.0 == VACANT_KEY {
        VACANT_KEY - 1
    } else {
        key.0
    }
}

impl KeyedEntry for KeyEntry {
    type Key = u64;
    fn key(&self) -> u64 {
        u64::from(self.key[0]) | u64::from(self.key[1]) << 32
    }
}

/// Places a pass over the keys visits for each node removed (and each
/// call): a pass ends after about a 64th of the keys' count in removals,
/// so the numbers held for it are a few percent of the nodes.
pub const KEY_SWEEP_PLACES_PER_REMOVAL: usize = 64;

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
    pub(super) table: KeyedTable<KeyEntry>,
    pass: SweepPass,
}

impl DocumentKeys {
    pub(super) fn get(&self, key: DocumentKey, forest: &Forest) -> Option<Fingerprint> {
        let entry = self.table.get(kept_key(key))?;
        forest.fingerprint_at(entry.node)
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
        let key = kept_key(key);
        if let Some(entry) = self.table.get_mut(key) {
            let previous = std::mem::replace(&mut entry.node, node);
            return forest.fingerprint_at(previous);
        }
        self.table.insert(KeyEntry::new(key, node));
        None
    }

    /// Adds keys given with their node's fingerprint, all at once: each
    /// fingerprint looked up in `forest` (a key whose node is not there is
    /// left out); of keys given twice, or given again, the later stays.
    pub fn add_by_fingerprint(&mut self, keys: Vec<(DocumentKey, Fingerprint)>, forest: &Forest) {
        let entries: Vec<KeyEntry> = keys
            .into_iter()
            .filter_map(|(key, fingerprint)| {
                Some(KeyEntry::new(kept_key(key), forest.number(fingerprint)?))
            })
            .collect();
        self.table.insert_all(entries);
    }

    /// A snapshot's keys, all at once, each naming its node by number; a
    /// key given twice keeps the later node.
    pub fn from_numbered(keys: Vec<(DocumentKey, NodeId)>) -> Self {
        let entries: Vec<KeyEntry> = keys
            .into_iter()
            .map(|(key, node)| KeyEntry::new(kept_key(key), node))
            .collect();
        let mut keys = DocumentKeys::default();
        keys.table.insert_all(entries);
        keys
    }

    /// Takes `key` out: `None` when it was not there, `Some(None)` when
    /// its node is gone.
    pub(super) fn remove(
        &mut self,
        key: DocumentKey,
        forest: &Forest,
    ) -> Option<Option<Fingerprint>> {
        let entry = self.table.remove(kept_key(key))?;
        Some(forest.fingerprint_at(entry.node))
    }

    /// Forgets every key whose node is gone, at once.
    pub(super) fn sweep_all(&mut self, forest: &Forest) {
        self.table.retain(|entry| forest.holds_number(entry.node));
        self.pass = SweepPass::default();
    }

    /// Goes on with the pass over the keys for `budget` places, forgetting
    /// the keys whose node is gone; whether a pass ended.
    pub(super) fn sweep_some(&mut self, budget: usize, forest: &Forest) -> bool {
        self.table.sweep_some(&mut self.pass, budget, |entry| {
            forest.holds_number(entry.node)
        })
    }

    /// Every key and the fingerprint of its node, keys whose node is gone
    /// left out.
    pub(super) fn iter<'a>(
        &'a self,
        forest: &'a Forest,
    ) -> impl Iterator<Item = (DocumentKey, Fingerprint)> + 'a {
        self.table.iter().filter_map(|entry| {
            let fingerprint = forest.fingerprint_at(entry.node)?;
            Some((DocumentKey(entry.key()), fingerprint))
        })
    }

    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    pub(super) fn allocation_size(&self) -> usize {
        self.table.allocation_size()
    }
}
