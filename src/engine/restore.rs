//! Recovery of the engine from a snapshot: the forest, the side records and
//! the indexes rebuilt from them.
//!
//! Motivation: recovery time is this at scale (10 M nodes: the forest, 10 M
//! side records, some 64 M index entries), and a sidecar that restarts is
//! down until it finishes.
//!
//! Design: nothing is built one entry at a time where it can be built
//! whole. The side records of a version-2 snapshot are adopted where they
//! are in the mapped snapshot file (no copy); the candidate indexes are
//! built from their entries sorted by key ([`ShingleIndex::builder`],
//! [`SketchIndex::builder`]); the forest's multi-index lays each table out
//! once; the forest's node table is filled in the order of its table
//! ([`crate::slots::FingerprintSlots::number_all`]). The side records are
//! kept by the forest's node numbers, which follow the snapshot's node
//! records, so the records' numbers come from a walk of the two lists side
//! by side, before the forest exists. The exact-hash table is still one
//! insert per node. The work is shared by two threads; see
//! [`Engine::restore`].
//!
//! Consequences: the snapshot file stays mapped (and its disk space held,
//! after it is deleted) while any of its records lives; at 10 M nodes
//! recovery takes about a third of the time of one insert at a time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, mpsc};

use parking_lot::Mutex;

use super::exact_hashes::ExactHashes;
use super::side_data::{EncodedSides, RecordRun, SideStore};
use super::side_file::SideStorage;
use super::side_record::{RecordKeys, record_fingerprint};
use super::{Engine, ForestState};
use crate::candidates::shingle_index::{
    LshShape, ShingleBucketsBuilder, ShingleIndex, ShingleIndexBuilder,
};
use crate::candidates::sketch_index::{SketchIndex, SketchIndexBuilder};
use crate::confirm::ConfirmationConfig;
use crate::fingerprint::Fingerprinter;
use crate::forest::{Forest, ForestError, NodeRecord};
use crate::radix::sort_stably_by;
use crate::units::{Fingerprint, NodeId};

impl Engine {
    /// An engine with the forest of these node records (from a snapshot,
    /// [`Forest::restore`]) and this side data; the candidate indexes and
    /// the exact-hash table are rebuilt from the side data, in arrival
    /// order. Side records of nodes the forest does not hold are dropped.
    ///
    /// Recovery time is this function at scale, so its work is split
    /// between two threads. A second thread finds each record's node
    /// number, stores the records (adopting those of a mapped snapshot) and
    /// fills the exact-hash table; this one builds the forest meanwhile. Then both
    /// take runs of records from a shared counter and collect their index
    /// entries (reading a record and computing its LSH band keys is most of
    /// the work); runs are kept in order, since the bounded buckets keep
    /// the newest of a full key and so must see entries in arrival order.
    /// Last, the other thread builds one half of the LSH's buckets, this
    /// one the other half and the sketch index.
    ///
    /// # Errors
    ///
    /// Whatever `build_forest` returns.
    pub fn restore(
        fingerprinter: Fingerprinter,
        forest: ForestState,
        confirmation: ConfirmationConfig,
        side_storage: SideStorage,
        sides: &EncodedSides,
    ) -> Result<Self, ForestError> {
        Self::restore_in_runs(
            fingerprinter,
            forest,
            confirmation,
            side_storage,
            sides,
            RECORDS_PER_RUN,
        )
    }

    /// [`Self::restore`], the records indexed in runs of `records_per_run`.
    pub(super) fn restore_in_runs(
        fingerprinter: Fingerprinter,
        forest_state: ForestState,
        confirmation: ConfirmationConfig,
        side_storage: SideStorage,
        sides: &EncodedSides,
        records_per_run: usize,
    ) -> Result<Self, ForestError> {
        let mut side_data = SideStore::new(side_storage);
        let mut exact_hashes = ExactHashes::default();
        exact_hashes.reserve(sides.len());
        let short_text_search = confirmation.short_text_search;
        let runs = sides.runs(records_per_run);
        let indexing = RunIndexing::new(runs.len());
        let forest_built: OnceLock<Result<Forest, ForestError>> = OnceLock::new();
        // Each value below is sent once it is ready, and each "done" is the
        // sender being dropped; a thread that panics drops its senders, so
        // its partner never waits for it.
        let (numbers_sender, numbers_receiver) = mpsc::channel::<Arc<[Option<NodeId>]>>();
        let (forest_sender, forest_receiver) = mpsc::channel::<()>();
        let (storing_indexed, storing_done_indexing) = mpsc::channel::<()>();
        let (second_half_sender, second_half_receiver) = mpsc::channel::<ShingleBucketsBuilder>();
        let index_runs = |forest: &Forest, ids: &[Option<NodeId>]| {
            while let Some(run) = indexing.next_run() {
                let indexes = index_run(&runs[run], ids, forest, short_text_search);
                indexing.finish(run, indexes);
            }
        };
        // Both threads read the node records first (numbering, the forest),
        // and each lets them go when done: the last one frees them.
        let ForestState {
            config,
            nodes,
            counters,
        } = forest_state;
        let nodes = Arc::new(nodes);
        let numbering_nodes = Arc::clone(&nodes);
        let (mut short_texts, mut long_texts, orphans, unstored) = std::thread::scope(|scope| {
            let (side_data, exact_hashes, forest_built, indexing, index_runs) = (
                &mut side_data,
                &mut exact_hashes,
                &forest_built,
                &indexing,
                &index_runs,
            );
            let storing = scope.spawn(move || {
                let mut keys = RecordKeys::default();
                let ids: Arc<[Option<NodeId>]> = node_numbers(&numbering_nodes, sides).into();
                drop(numbering_nodes);
                let _ = numbers_sender.send(Arc::clone(&ids));
                let mut unstored = side_data.put_all_at(&ids, sides);
                unstored.sort_unstable();
                unstored.dedup();
                let mut listed = ListedExactHashes::default();
                for (record, id) in sides.iter().zip(ids.iter()) {
                    let Some(id) = *id else { continue };
                    if unstored.binary_search(&id).is_ok()
                        || keys.read_exact_hashes(record).is_err()
                    {
                        continue;
                    }
                    for &exact_hash in &keys.exact_hashes {
                        listed.push(exact_hash, id);
                    }
                }
                listed.insert_into(exact_hashes);
                // Ends when the forest is built (or its thread gone).
                let _ = forest_receiver.recv();
                if let Some(Ok(forest)) = forest_built.get() {
                    index_runs(forest, &ids);
                }
                drop(storing_indexed);
                // Comes once every run is indexed.
                let second_half = second_half_receiver.recv().ok();
                let second_half = second_half.map(ShingleBucketsBuilder::build);
                (second_half, unstored)
            });
            let forest = forest_built.get_or_init(|| {
                let forest = Forest::restore(config, &nodes, counters);
                drop(nodes);
                forest
            });
            drop(forest_sender);
            if let (Ok(forest), Ok(ids)) = (forest, numbers_receiver.recv()) {
                index_runs(forest, &ids);
            }
            // Ends when the storing thread is done indexing runs (it sends
            // nothing: its sender is dropped).
            let _ = storing_done_indexing.recv();
            let mut short_texts = Vec::new();
            let mut long_texts = Vec::new();
            let mut orphans = Vec::new();
            for run in indexing.take() {
                short_texts.push(run.short_texts);
                long_texts.push(run.long_texts);
                orphans.extend(run.orphans);
            }
            let mut short_texts = ShingleIndexBuilder::concat(short_texts)
                .unwrap_or_else(|| ShingleIndex::builder(LshShape::default()));
            // The LSH's two halves are built on the two threads.
            let [first_half, second_half] = short_texts.take_halves();
            let _ = second_half_sender.send(second_half);
            let first_half = first_half.build();
            let long_texts = SketchIndexBuilder::concat(long_texts).build();
            let (second_half, unstored) = match storing.join() {
                Ok(built) => built,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            let short_texts = match second_half {
                Some(second_half) => short_texts.assemble([first_half, second_half]),
                None => ShingleIndex::new(LshShape::default()),
            };
            (short_texts, long_texts, orphans, unstored)
        });
        let forest = forest_built
            .into_inner()
            .unwrap_or_else(|| Err(ForestError::Damaged("the forest was not built".into())))?;
        // A node whose record found no space is no candidate: nothing could
        // confirm it. Its index entries go here.
        if !unstored.is_empty() {
            let mut keys = RecordKeys::default();
            for record in sides.iter() {
                if keys.read(record).is_err() {
                    continue;
                }
                let Some(id) = forest
                    .number(keys.fingerprint)
                    .filter(|id| unstored.binary_search(id).is_ok())
                else {
                    continue;
                };
                if let Some(shingles) = &keys.shingles {
                    short_texts.remove(id, shingles);
                }
                if let Some(sketch) = &keys.sketch {
                    long_texts.remove(id, sketch);
                }
            }
        }
        // The records adopted from the snapshot were read in order; from
        // now on they are read one at a time, a page a fault.
        side_data.read_at_random();
        let mut engine = Engine::new(fingerprinter, forest, confirmation);
        engine.side_data = side_data;
        engine.exact_hashes = exact_hashes;
        engine.short_texts = short_texts;
        engine.long_texts = long_texts;
        // Records of nodes the forest does not hold (a snapshot that
        // disagrees with itself) go: nothing could place them.
        engine.drop_side_data(&orphans, &[]);
        Ok(engine)
    }
}

/// Nodes a side record may lie ahead of its node among the node records
/// before its number is looked up instead (records of nodes without side
/// data are skipped on the way).
const NUMBERING_LOOKAHEAD: usize = 64;

/// Each side record's node number: the position of its node among `nodes`
/// ([`Forest::restore`] numbers the records in order), `None` when no node
/// has its fingerprint. Both lists are in arrival order, so the number is
/// found by walking them side by side; a record found out of step is
/// looked up in a map built only then.
fn node_numbers(nodes: &[NodeRecord], sides: &EncodedSides) -> Vec<Option<NodeId>> {
    let mut numbers = Vec::with_capacity(sides.len());
    let mut unplaced = Vec::new();
    let mut cursor = 0;
    for (position, record) in sides.iter().enumerate() {
        let Some(fingerprint) = record_fingerprint(record) else {
            numbers.push(None);
            continue;
        };
        let ahead = nodes
            .get(cursor..)
            .unwrap_or_default()
            .iter()
            .take(NUMBERING_LOOKAHEAD)
            .position(|node| node.fingerprint == fingerprint);
        match ahead {
            Some(ahead) => {
                numbers.push(NodeId::try_from(cursor + ahead).ok());
                cursor += ahead + 1;
            }
            None => {
                numbers.push(None);
                unplaced.push((position, fingerprint));
            }
        }
    }
    if !unplaced.is_empty() {
        let by_fingerprint: HashMap<Fingerprint, usize> = nodes
            .iter()
            .enumerate()
            .map(|(position, node)| (node.fingerprint, position))
            .rev()
            .collect();
        for (position, fingerprint) in unplaced {
            numbers[position] = by_fingerprint
                .get(&fingerprint)
                .and_then(|&node| NodeId::try_from(node).ok());
        }
    }
    numbers
}

/// Records indexed per unit of work shared by the two threads: small
/// enough to balance them, large enough that taking one costs nothing.
const RECORDS_PER_RUN: usize = 1 << 15;

/// What one run of records adds to the candidate indexes, and the numbers
/// its records were given that the forest does not give their nodes.
struct RunIndexes {
    short_texts: ShingleIndexBuilder,
    long_texts: SketchIndexBuilder,
    orphans: Vec<NodeId>,
}

fn index_run(
    run: &RecordRun<'_>,
    ids: &[Option<NodeId>],
    forest: &Forest,
    short_text_search: bool,
) -> RunIndexes {
    let mut indexes = RunIndexes {
        short_texts: ShingleIndex::builder(LshShape::default()),
        long_texts: SketchIndex::builder(),
        orphans: Vec::new(),
    };
    let mut keys = RecordKeys::default();
    let mut band_keys = Vec::new();
    let ids = ids.get(run.first..).unwrap_or_default();
    for (record, id) in run.iter().zip(ids) {
        let Some(id) = *id else { continue };
        if keys.read(record).is_err() {
            continue;
        }
        if forest.fingerprint_at(id) != Some(keys.fingerprint) {
            indexes.orphans.push(id);
            continue;
        }
        if let Some(shingles) = &keys.shingles
            && short_text_search
        {
            indexes.short_texts.add(id, shingles, &mut band_keys);
        }
        if let Some(sketch) = &keys.sketch {
            indexes.long_texts.add(id, sketch);
        }
    }
    indexes
}

/// Runs of records handed out to whichever thread asks next, and what
/// each added, kept in run order (the indexes keep the newest of a full
/// bucket, so entries must come in arrival order).
struct RunIndexing {
    next: AtomicUsize,
    runs: usize,
    indexed: Mutex<Vec<Option<RunIndexes>>>,
}

impl RunIndexing {
    fn new(runs: usize) -> Self {
        RunIndexing {
            next: AtomicUsize::new(0),
            runs,
            indexed: Mutex::new((0..runs).map(|_| None).collect()),
        }
    }

    fn next_run(&self) -> Option<usize> {
        let run = self.next.fetch_add(1, Ordering::Relaxed);
        (run < self.runs).then_some(run)
    }

    fn finish(&self, run: usize, indexes: RunIndexes) {
        if let Some(slot) = self.indexed.lock().get_mut(run) {
            *slot = Some(indexes);
        }
    }

    /// What every run added, in run order.
    fn take(&self) -> Vec<RunIndexes> {
        std::mem::take(&mut *self.indexed.lock())
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Every exact hash the side records list, with the node listing it, in
/// the order the records are read (arrival order): the exact-hash table is
/// built from these, not one insert at a time.
///
/// Motivation: an insert whose 32-bit tag another hash holds asks whether
/// that node's record lists the same hash, and reads the record: about 2 %
/// of 100 M inserts, each a read out of order in a snapshot mapped for
/// reading in order, which made the kernel read 8 MiB around each (1.9 TB
/// in 23 minutes of a recovery of 100 M nodes). The hashes are all read by
/// this pass anyway: sorted by tag, the nodes that list one hash are side
/// by side, and the last of them holds it, as inserting them in turn gave.
#[derive(Default)]
struct ListedExactHashes {
    /// (hash, node), in parts of [`LISTED_PER_PART`] (the radix sort
    /// frees each part once read).
    parts: Vec<Vec<(u64, NodeId)>>,
}

/// Entries per part of [`ListedExactHashes`].
const LISTED_PER_PART: usize = 1 << 20;

impl ListedExactHashes {
    fn push(&mut self, exact_hash: u64, node: NodeId) {
        if self
            .parts
            .last()
            .is_none_or(|part| part.len() >= LISTED_PER_PART)
        {
            self.parts.push(Vec::with_capacity(LISTED_PER_PART));
        }
        if let Some(part) = self.parts.last_mut() {
            part.push((exact_hash, node));
        }
    }

    /// Inserts each hash once, held by the last node that lists it; no
    /// record is read.
    fn insert_into(self, exact_hashes: &mut ExactHashes) {
        let by_tag = sort_stably_by(self.parts, |(exact_hash, _)| (exact_hash >> 32) as u32);
        for same_tag in by_tag.chunk_by(|a, b| a.0 >> 32 == b.0 >> 32) {
            for (position, &(exact_hash, node)) in same_tag.iter().enumerate() {
                let listed_later = same_tag[position + 1..]
                    .iter()
                    .any(|&(later, _)| later == exact_hash);
                if !listed_later {
                    exact_hashes.insert(exact_hash, node, |_| false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built from the listed hashes, the table answers as inserting them in
    /// turn with each record read answered: a hash listed by several nodes
    /// is held by the last, hashes sharing a tag are each found.
    #[test]
    fn listed_exact_hashes_make_the_table_inserts_in_turn_make() {
        let shared_tag = 0x0abc_0000_0000_0000u64;
        let listed: [(u64, NodeId); 6] = [
            (shared_tag | 1, 0),
            (0x1111_0000_0000_0001, 1),
            (shared_tag | 2, 2),
            (shared_tag | 1, 3),
            (0x2222_0000_0000_0001, 3),
            (0x1111_0000_0000_0001, 4),
        ];
        let lists = |node: NodeId, exact_hash: u64| listed.contains(&(exact_hash, node));
        let mut in_turn = ExactHashes::default();
        for &(exact_hash, node) in &listed {
            in_turn.insert(exact_hash, node, |holder| lists(holder, exact_hash));
        }
        let mut built = ExactHashes::default();
        let mut all = ListedExactHashes::default();
        for &(exact_hash, node) in &listed {
            all.push(exact_hash, node);
        }
        all.insert_into(&mut built);
        assert_eq!(built.len(), in_turn.len());
        for (exact_hash, holder) in [
            (shared_tag | 1, 3),
            (shared_tag | 2, 2),
            (0x1111_0000_0000_0001, 4),
            (0x2222_0000_0000_0001, 3),
        ] {
            let found = |table: &ExactHashes| table.get(exact_hash, |node| lists(node, exact_hash));
            assert_eq!(found(&built), Some(holder));
            assert_eq!(found(&in_turn), Some(holder));
        }
    }
}
