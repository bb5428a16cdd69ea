//! A key-node table as of one moment, copied a piece at a time while the
//! table goes on changing (the way of [`crate::capture`] for tables whose
//! changes move entries: the ledger's document keys, the candidate
//! indexes' keys; [`crate::key_node_table`]).
//!
//! Motivation: an insert or a removal shifts the entries up to the next
//! vacant place and the directory's positions among them, and a growth or
//! a split lays a shard out anew, so the value a place had at the start
//! is no before-image to keep. A first version kept a shard whole: before
//! a change to a shard the copier had not finished, the rest of it was
//! copied (up to 4.5 MiB). A placement changes 8 LSH keys and 4 sketch
//! keys in as many shards, so the first placements of a capture copied
//! most of the candidate tables: one took 154 ms at 10 M nodes, and the
//! copies, staged on the heap between slices, held 260 MiB there.
//!
//! Design: what a change changes is one key's entries (an entry added or
//! taken out, a bucket's oldest shifted out), whatever places move. The
//! copier walks the keys in the order of their mixed value, a piece at a
//! time ([`TableCapture::copy_some`]), and goes on from a mixed key (the
//! table may have grown or split its shards meanwhile); a piece never ends
//! inside a key's entries. Before a change to a key the copier has not
//! reached, [`TableCapture::before_change`] copies that key's entries (as
//! they still are: unchanged since the start) and notes it; the copier
//! skips the keys noted. A key added after the start is noted with no
//! entries. A change to every key ([`TableCapture::before_changes`]: a
//! retain) copies all that is left first.
//!
//! Consequences: the copy holds each key of the start with its entries in
//! the order the table keeps them (a bucket's oldest first): the copier's
//! keys in their mixed order (a table of the same mix is written from
//! them front to back), those copied before changes apart. A change during a capture costs a lookup of its key's entries
//! and a note of its mixed key (a few hundred bytes per thousand writes
//! until the capture ends).

use std::collections::HashSet;

use parking_lot::Mutex;

use crate::capture::{CaptureSink, Image};
use crate::hashing::FingerprintBuildHasher;
use crate::key_node_table::{KeyFormat, KeyNodeTable};
use crate::units::NodeId;

/// A capture of one table under way (`None` while none runs).
pub struct TableCapture<F: KeyFormat, E> {
    state: Mutex<Option<CaptureState<F, E>>>,
}

impl<F: KeyFormat, E> Default for TableCapture<F, E> {
    fn default() -> Self {
        TableCapture {
            state: Mutex::new(None),
        }
    }
}

impl<F: KeyFormat, E> std::fmt::Debug for TableCapture<F, E> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let running = self.state.lock().is_some();
        formatter
            .debug_struct("TableCapture")
            .field("running", &running)
            .finish()
    }
}

struct CaptureState<F: KeyFormat, E> {
    /// The mixed key the copier goes on from: keys below it are copied
    /// (`None`: all are).
    cursor: Option<u64>,
    /// Keys at or past the cursor copied (or added) before a change: the
    /// copier skips them.
    ahead: HashSet<u64, FingerprintBuildHasher>,
    /// Stretches of keys at or past the cursor copied whole before a
    /// pass over them (`end` is `None` for the end of the table).
    ahead_stretches: Vec<(u64, Option<u64>)>,
    /// The copier's copies: keys in ascending order of their mixed value.
    sink: CaptureSink<E>,
    /// Copies made before a change or a pass: keys in no order.
    ahead_sink: CaptureSink<E>,
    /// What a key and its node are copied as.
    entry: fn(F::Key, NodeId) -> E,
}

/// Whether a change copied key `mixed` ahead of the copier.
fn copied_ahead(
    ahead: &HashSet<u64, FingerprintBuildHasher>,
    stretches: &[(u64, Option<u64>)],
    mixed: u64,
) -> bool {
    (!ahead.is_empty() && ahead.contains(&mixed))
        || stretches
            .iter()
            .any(|&(start, end)| start <= mixed && end.is_none_or(|end| mixed < end))
}

impl<F: KeyFormat, E: Copy> CaptureState<F, E> {
    fn is_copied(&self, mixed: u64) -> bool {
        self.cursor.is_none_or(|cursor| mixed < cursor)
            || copied_ahead(&self.ahead, &self.ahead_stretches, mixed)
    }

    /// Before a change to `key` (mixed: `mixed`): its entries copied if
    /// the copier has not reached it and no change copied them.
    fn copy_key(&mut self, table: &KeyNodeTable<F>, key: F::Key, mixed: u64) {
        if self.is_copied(mixed) {
            return;
        }
        self.ahead.insert(mixed);
        let entry = self.entry;
        let mut entries = Vec::new();
        table.key_entries(key, |node| entries.push(entry(key, node)));
        self.ahead_sink.stage(entries);
    }

    /// Before a pass over the keys from `from` on in its shard (a sweep,
    /// which may take out any of them): the keys of that stretch not yet
    /// copied are copied, and the stretch noted.
    fn copy_stretch(&mut self, table: &KeyNodeTable<F>, from: u64) {
        let Some(cursor) = self.cursor else {
            return;
        };
        let start = from.max(cursor);
        let (entries, end) = table.entries_of_shard_from(start);
        if end.is_some_and(|end| end <= start) {
            return;
        }
        let mix = table.mix();
        let entry = self.entry;
        let (ahead, stretches) = (&self.ahead, &self.ahead_stretches);
        self.ahead_sink.stage(
            entries
                .filter(|&(mixed, _)| !copied_ahead(ahead, stretches, mixed))
                .map(|(mixed, node)| entry(F::unmix(mix, mixed), node)),
        );
        self.ahead_stretches.push((start, end));
    }

    /// Copies about `budget` entries from the cursor on, and the rest of
    /// the last key's; the entries looked at.
    fn copy_piece(&mut self, table: &KeyNodeTable<F>, budget: usize) -> usize {
        let Some(from) = self.cursor else {
            return 0;
        };
        let mix = table.mix();
        let entry = self.entry;
        let (entries, next_shard) = table.entries_of_shard_from(from);
        let mut entries = entries.peekable();
        let (mut last_key, mut skipping) = (None, false);
        let mut looked = 0usize;
        let (ahead, stretches) = (&self.ahead, &self.ahead_stretches);
        let piece = std::iter::from_fn(|| {
            loop {
                let &(mixed, _) = entries.peek()?;
                let new_key = last_key != Some(mixed);
                if looked >= budget && new_key {
                    return None;
                }
                let (mixed, node) = entries.next()?;
                looked += 1;
                if new_key {
                    last_key = Some(mixed);
                    skipping = copied_ahead(ahead, stretches, mixed);
                }
                if !skipping {
                    return Some(entry(F::unmix(mix, mixed), node));
                }
            }
        });
        self.sink.stage(piece);
        self.cursor = match entries.peek() {
            Some(&(mixed, _)) => Some(mixed),
            None => next_shard,
        };
        looked
    }
}

impl<F: KeyFormat, E: Copy> TableCapture<F, E> {
    /// Starts capturing `table` as it is now: call with writes locked
    /// out. Each key and node is copied as `entry` makes them, into two
    /// sinks (in files of `directory` when large): the copier's, keys in
    /// the table's order, and the copies made before changes, keys in no
    /// order. A capture already running is dropped.
    pub fn start(
        &self,
        table: &KeyNodeTable<F>,
        directory: Option<&std::path::Path>,
        entry: fn(F::Key, NodeId) -> E,
    ) -> [CaptureSink<E>; 2] {
        let sink = CaptureSink::new(table.len(), directory);
        let ahead_sink = CaptureSink::new(table.len(), directory);
        *self.state.lock() = Some(CaptureState {
            cursor: Some(0),
            ahead: HashSet::default(),
            ahead_stretches: Vec::new(),
            sink: sink.clone(),
            ahead_sink: ahead_sink.clone(),
            entry,
        });
        [sink, ahead_sink]
    }

    /// Before a change to `table` for `key`: its entries are copied
    /// first if a capture runs and has not copied them (with none, a test
    /// of a `None`).
    pub fn before_change(&mut self, table: &KeyNodeTable<F>, key: F::Key) {
        if let Some(state) = self.state.get_mut() {
            state.copy_key(table, key, F::mix(table.mix(), key));
        }
    }

    /// Before a pass that may change any key of `table` from mixed key
    /// `from` to the end of its shard ([`KeyNodeTable::sweep_from`]).
    pub fn before_pass_from(&mut self, table: &KeyNodeTable<F>, from: u64) {
        if let Some(state) = self.state.get_mut() {
            state.copy_stretch(table, from);
        }
    }

    /// Before a change to any key of `table`: all that is left is copied.
    pub fn before_changes(&mut self, table: &KeyNodeTable<F>) {
        if let Some(state) = self.state.get_mut() {
            while state.cursor.is_some() {
                state.copy_piece(table, usize::MAX);
            }
        }
    }

    /// Copies keys in order, a piece at a time, until about `budget`
    /// entries are looked at; `true` once all are (or no capture runs).
    /// Writes must be locked out meanwhile.
    pub fn copy_some(&self, table: &KeyNodeTable<F>, budget: usize) -> bool {
        let mut state = self.state.lock();
        let Some(state) = state.as_mut() else {
            return true;
        };
        let mut looked = 0;
        while state.cursor.is_some() && looked < budget {
            looked += state.copy_piece(table, budget - looked).max(1);
        }
        state.cursor.is_none()
    }

    /// The entries as of the capture's start, once all are copied (the
    /// capture ends), a key's in the table's order: the copier's (keys
    /// in ascending order of their mixed value) and those copied before
    /// changes (keys in no order); `None` before.
    pub fn take(&self) -> Option<[Image<E>; 2]> {
        let mut state = self.state.lock();
        if state.as_ref().is_none_or(|state| state.cursor.is_some()) {
            return None;
        }
        state
            .take()
            .map(|state| [state.sink.take_image(), state.ahead_sink.take_image()])
    }

    /// Ends a capture without its image.
    pub fn stop(&self) {
        *self.state.lock() = None;
    }
}
