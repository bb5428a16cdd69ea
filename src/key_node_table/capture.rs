//! A key-node table as of one moment, copied a shard piece at a time
//! while the table goes on changing ([`crate::capture`]'s way for tables
//! whose changes move entries: the ledger's document keys, the candidate
//! indexes' keys).
//!
//! Motivation: an insert or a removal shifts the entries up to the next
//! vacant place and the directory's positions among them, and a growth or
//! a split lays a shard out anew, so the value a place had at the start
//! is no before-image to keep: a shard is the unit that stays whole.
//!
//! Design: [`TableCapture::start`] (writes locked out) notes the shards;
//! the copier ([`TableCapture::copy_some`]) copies them in order, a piece
//! of one at a time, and before a write changes a shard the copier has
//! not finished, [`TableCapture::before_change`] copies what is left of
//! it (as it still is: unchanged since the start). A piece never ends
//! inside a key's entries: the copier goes on from a key, and a key of
//! many entries (a candidate bucket) would be copied twice otherwise. A
//! shard split off one after the start holds only keys of one copied
//! whole before it split (the split is a change of that shard).
//!
//! Consequences: the copy holds each key with its entries in the order
//! the table keeps them (a bucket's oldest first); the shards' pieces
//! come in no order of keys. A write to an uncopied shard pays for the
//! copy of what is left of it (a shard is at most a few megabytes).

use parking_lot::Mutex;

use super::{KeyFormat, KeyNodeTable};
use crate::capture::{CaptureSink, Image};
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
    /// Shards at the start.
    shards: usize,
    /// One bit a shard: copied.
    copied: Vec<u64>,
    /// The copier's next shard.
    next: usize,
    /// The mixed key the copier goes on from in shard `next` (0: its
    /// start).
    next_from: u64,
    sink: CaptureSink<E>,
    /// What a key and its node are copied as.
    entry: fn(F::Key, NodeId) -> E,
}

impl<F: KeyFormat, E: Copy> CaptureState<F, E> {
    fn is_copied(&self, shard: usize) -> bool {
        shard >= self.shards || self.copied[shard / 64] & (1 << (shard % 64)) != 0
    }

    /// Copies what is left of `shard` (as it is: not changed since the
    /// start), before a change to it.
    fn copy_rest(&mut self, shard: usize, table: &KeyNodeTable<F>) {
        if self.is_copied(shard) {
            return;
        }
        let from = if shard == self.next {
            self.next_from
        } else {
            0
        };
        self.copy_piece(shard, from, usize::MAX, table);
    }

    /// Copies about `budget` entries of `shard` from mixed key `from` on,
    /// and the rest of the last key's; the entries copied. The shard is
    /// marked copied when its last is.
    fn copy_piece(
        &mut self,
        shard: usize,
        from: u64,
        budget: usize,
        table: &KeyNodeTable<F>,
    ) -> usize {
        let mix = table.mix();
        let entry = self.entry;
        let mut entries = table.shard_entries_from(shard, from).peekable();
        let mut last_key = None;
        let mut taken = 0usize;
        let piece = std::iter::from_fn(|| {
            let &(mixed, _) = entries.peek()?;
            if taken >= budget && last_key != Some(mixed) {
                return None;
            }
            let (mixed, node) = entries.next()?;
            last_key = Some(mixed);
            taken += 1;
            Some(entry(F::unmix(mix, mixed), node))
        });
        let copied = self.sink.stage(piece);
        match entries.peek() {
            Some(&(mixed, _)) => {
                (self.next, self.next_from) = (shard, mixed);
            }
            None => {
                self.copied[shard / 64] |= 1 << (shard % 64);
            }
        }
        copied
    }
}

impl<F: KeyFormat, E: Copy> TableCapture<F, E> {
    /// Starts capturing `table` as it is now: call with writes locked
    /// out. Each key and node is copied as `entry` makes them, into a
    /// sink of `capacity` values (in a file of `directory` when large).
    /// A capture already running is dropped.
    pub fn start(
        &self,
        table: &KeyNodeTable<F>,
        directory: Option<&std::path::Path>,
        entry: fn(F::Key, NodeId) -> E,
    ) -> CaptureSink<E> {
        let sink = CaptureSink::new(table.len(), directory);
        let shards = table.shard_count();
        *self.state.lock() = Some(CaptureState {
            shards,
            copied: vec![0; shards.div_ceil(64)],
            next: 0,
            next_from: 0,
            sink: sink.clone(),
            entry,
        });
        sink
    }

    /// Before a change to `table` for `key`: what is left of its shard is
    /// copied first if a capture runs (with none, a test of a `None`).
    pub fn before_change(&mut self, table: &KeyNodeTable<F>, key: F::Key) {
        if let Some(state) = self.state.get_mut() {
            state.copy_rest(table.shard_of(key), table);
        }
    }

    /// [`Self::before_change`] for the shard of mixed key `mixed`.
    pub fn before_change_mixed(&mut self, table: &KeyNodeTable<F>, mixed: u64) {
        if let Some(state) = self.state.get_mut() {
            state.copy_rest(table.shard_of_mixed(mixed), table);
        }
    }

    /// Before a change to any shard of `table`.
    pub fn before_changes(&mut self, table: &KeyNodeTable<F>) {
        if let Some(state) = self.state.get_mut() {
            for shard in 0..state.shards {
                state.copy_rest(shard, table);
            }
        }
    }

    /// Copies shards, a piece of one at a time, until about `budget`
    /// entries are copied; `true` once all are (or no capture runs).
    /// Writes must be locked out meanwhile.
    pub fn copy_some(&self, table: &KeyNodeTable<F>, budget: usize) -> bool {
        let mut state = self.state.lock();
        let Some(state) = state.as_mut() else {
            return true;
        };
        let mut copied = 0;
        while state.next < state.shards && copied < budget {
            let shard = state.next;
            if state.is_copied(shard) {
                (state.next, state.next_from) = (shard + 1, 0);
                continue;
            }
            let from = state.next_from;
            copied += state.copy_piece(shard, from, budget - copied, table).max(1);
        }
        state.next >= state.shards
    }

    /// The entries as of the capture's start, in no order of keys (a
    /// key's in the table's order), once all are copied (the capture
    /// ends); `None` before.
    pub fn take(&self) -> Option<Image<E>> {
        let mut state = self.state.lock();
        if state.as_ref().is_none_or(|state| state.next < state.shards) {
            return None;
        }
        state.take().map(|state| state.sink.take_image())
    }

    /// Ends a capture without its image.
    pub fn stop(&self) {
        *self.state.lock() = None;
    }
}
