//! Recovery of the engine from a snapshot: the forest, the side records,
//! and the candidate indexes from the snapshot's pairs (format 9,
//! [`crate::candidates::captured`]) or rebuilt from the records.
//!
//! Motivation: recovery time is this at scale (100 M nodes: the forest,
//! 100 M side records, some 640 M index entries), and a sidecar that
//! restarts is down until it finishes. At that scale the side records (24
//! GB) are more than the page cache beside the engine holds, so each pass
//! over them is a read of the disk: seven passes (checksums, counting,
//! numbering, adopting, exact hashes, cutting runs, indexing) made a
//! recovery of 100 M nodes read about 150 GB.
//!
//! Design: one pass over the side records, in the order they are in the
//! snapshot. A walk checks each block's checksum, finds its records, gives
//! each the number of its node (the node records are in the same order),
//! adopts the block where it is in the mapped snapshot (no copy), lists
//! its exact hashes and cuts its records into runs; the runs go to the
//! threads that index them, a few runs behind the walk, while the pages
//! are still in memory. Nothing is built one entry at a time where it can
//! be built whole: the candidate indexes from their entries sorted by key
//! ([`ShingleIndex::builder`], [`SketchIndex::builder`]), the forest's
//! multi-index laid out once, its node table filled in its own order
//! ([`crate::slots::FingerprintSlots::number_all`]), the exact-hash table
//! from the hashes sorted by tag. See [`Engine::restore`] for the threads.
//!
//! Consequences: the snapshot file stays mapped (and its disk space held,
//! after it is deleted) while any of its records lives; a snapshot whose
//! side records fail their checksum is found damaged here, not when read
//! (the store then falls back to an older one).

use std::collections::HashMap;
use std::sync::{Arc, mpsc};

use parking_lot::Mutex;

use super::exact_hashes::{ExactHashes, ListedExactHashes};
use super::side_check::{DeferredCheck, FrameIndex, SideRecordsCheck, read_index};
use super::side_data::{EncodedSides, RecordRun, SideStore, SidesChunk};
use super::side_file::{MAX_SEGMENT_BYTES, SideStorage, record_offsets_with};
use super::side_record::{RecordKeys, record_fingerprint};
use super::{Engine, ForestState};
use crate::candidates::captured::CandidatePairs;
use crate::candidates::shingle_index::{
    LshShape, ShingleBucketsBuilder, ShingleIndex, ShingleIndexBuilder,
};
use crate::candidates::sketch_index::{SketchIndex, SketchIndexBuilder};
use crate::confirm::ConfirmationConfig;
use crate::fingerprint::Fingerprinter;
use crate::forest::{Forest, ForestConfig, ForestCounters, ForestError, Indexing, NodeRecord};
use crate::units::{Fingerprint, NodeId};

impl Engine {
    /// An engine with the forest of these node records (from a snapshot,
    /// [`Forest::restore`]) and this side data; the candidate indexes and
    /// the exact-hash table are rebuilt from the side data, in arrival
    /// order. Side records of nodes the forest does not hold are dropped.
    ///
    /// Recovery time is this function at scale, so its work is split
    /// between threads. One walks the side records once ([`walk_records`]:
    /// checksums, node numbers, storing, exact hashes, runs), then builds
    /// the exact-hash table; this one builds the forest meanwhile; a third
    /// indexes runs from the start, and the other two join it when done
    /// (reading a record and computing its LSH band keys is most of the
    /// work). Runs are kept in order, since the bounded buckets keep the
    /// newest of a full key and so must see entries in arrival order.
    /// Last, the walking thread builds one half of the LSH's buckets, this
    /// one the other half, and a third the sketch index.
    ///
    /// # Errors
    ///
    /// What [`Forest::restore`] returns; [`ForestError::Damaged`] when
    /// the side records fail their checksum or are cut short.
    pub fn restore(
        fingerprinter: Fingerprinter,
        forest: ForestState,
        confirmation: ConfirmationConfig,
        side_storage: SideStorage,
        sides: &EncodedSides,
        candidates: Option<CandidatePairs>,
    ) -> Result<Self, ForestError> {
        Self::restore_in_runs(
            fingerprinter,
            forest,
            confirmation,
            side_storage,
            sides,
            candidates,
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
        candidates: Option<CandidatePairs>,
        records_per_run: usize,
    ) -> Result<Self, ForestError> {
        let records_per_run = records_per_run.max(1);
        let mut side_data = SideStore::new(side_storage);
        let mut exact_hashes = ExactHashes::default();
        let short_text_search = confirmation.short_text_search;
        let ForestState {
            config,
            mut nodes,
            counters,
        } = forest_state;
        if !short_text_search {
            // Nothing finds a short text by its shingles now: within `k`
            // must (a state written while that search was on).
            for node in &mut nodes {
                node.indexing = Indexing::WithinK;
            }
        }
        // The snapshot's pairs serve when short texts were searched then
        // as they are now; else the records are indexed again.
        let candidates =
            candidates.filter(|pairs| pairs.texts.short_text_search == short_text_search);
        let inputs = RestoreInputs {
            config,
            nodes,
            counters,
            side_data: &mut side_data,
            exact_hashes: &mut exact_hashes,
            sides,
        };
        let (forest, walked, short_texts, long_texts) = match candidates {
            Some(pairs) => restore_from_pairs(inputs, pairs),
            None => restore_from_records(inputs, short_text_search, records_per_run),
        };
        let (mut short_texts, mut long_texts) = (short_texts, long_texts);
        let (unstored, deferred) = walked?;
        let forest = forest?;
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
        engine.side_records_check = SideRecordsCheck::start(deferred);
        Ok(engine)
    }
}

/// What both ways of restoring take: the forest's parts, and where the
/// side records and exact hashes go.
struct RestoreInputs<'a, 'b> {
    config: ForestConfig,
    nodes: Vec<NodeRecord>,
    counters: ForestCounters,
    side_data: &'b mut SideStore,
    exact_hashes: &'b mut ExactHashes,
    sides: &'a EncodedSides,
}

/// What the restore's threads give back: the forest, the numbers of the
/// nodes whose record could not be stored (or the damage the walk found),
/// and the two candidate indexes.
type Restored = (
    Result<Forest, ForestError>,
    Result<WalkOutcome, ForestError>,
    ShingleIndex,
    SketchIndex,
);

/// [`Engine::restore`] with the candidate indexes built from a
/// snapshot's pairs: the walk over the side records (checksums, numbers,
/// storing, exact hashes) beside the forest, then one of the LSH's halves
/// on the walking thread; the sketch index and the other half on a thread
/// of their own from the start (no record is read for them). At 100 M
/// nodes the forest is the longest task (about 30 s of a core); written
/// after it, the sketch index and the half were 9 s more with one core
/// idle.
fn restore_from_pairs(inputs: RestoreInputs<'_, '_>, pairs: CandidatePairs) -> Restored {
    let ([first_half, second_half], long_texts, texts) = pairs.into_tables();
    // The walk and the forest read the node records; the last of the two
    // lets them go (the sketch index and the first half are built
    // meanwhile: 1.5 GiB more at the peak at 100 M nodes, for 6 s).
    let nodes = Arc::new(inputs.nodes);
    let walking_nodes = Arc::clone(&nodes);
    std::thread::scope(|scope| {
        let walking = scope.spawn(move || {
            let walked = walk_then_list(
                inputs.sides,
                walking_nodes,
                inputs.side_data,
                inputs.exact_hashes,
                None,
                RECORDS_PER_RUN,
            );
            (walked, second_half.into_short_half())
        });
        let tables = scope.spawn(move || {
            let long_texts = CandidatePairs::long_index(long_texts, texts);
            (long_texts, first_half.into_short_half())
        });
        let forest = Forest::restore(inputs.config, &nodes, inputs.counters);
        drop(nodes);
        let (long_texts, first_half) = match tables.join() {
            Ok(joined) => joined,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let (walked, second_half) = match walking.join() {
            Ok(joined) => joined,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let short_texts = CandidatePairs::short_index([first_half, second_half], texts);
        (forest, walked, short_texts, long_texts)
    })
}

/// [`Engine::restore`] with the candidate indexes built from the side
/// records (a snapshot before version 9, or one written while short texts
/// were searched otherwise).
fn restore_from_records(
    inputs: RestoreInputs<'_, '_>,
    short_text_search: bool,
    records_per_run: usize,
) -> Restored {
    let RestoreInputs {
        config,
        nodes,
        counters,
        side_data,
        exact_hashes,
        sides,
    } = inputs;
    let indexing = RunIndexing::new(sides.len().div_ceil(records_per_run));
    // Runs cut by the walk and not yet taken: a few, so that their
    // pages are still in memory when they are indexed.
    let (run_sender, run_receiver) = mpsc::sync_channel::<NumberedRun<'_>>(RUNS_AHEAD);
    let run_receiver = Mutex::new(Some(run_receiver));
    // Ends when the walk is done and every run it sent is taken. A
    // thread that panics here closes the queue, so that the walk does
    // not wait on it for room.
    let index_runs = || {
        let _closing = CloseOnPanic(&run_receiver);
        loop {
            let run = run_receiver.lock().as_ref().map(mpsc::Receiver::recv);
            let Some(Ok(run)) = run else { break };
            indexing.finish(run.number, index_run(&run, short_text_search));
        }
    };
    let (walker_indexed, walker_done_indexing) = mpsc::channel::<()>();
    let (second_half_sender, second_half_receiver) = mpsc::channel::<ShingleBucketsBuilder>();
    // The walk and the forest read the node records; the last of the
    // two lets them go.
    let nodes = Arc::new(nodes);
    let walking_nodes = Arc::clone(&nodes);
    std::thread::scope(|scope| {
        let (indexing, index_runs) = (&indexing, &index_runs);
        // Dropped if this thread panics, so that the walking thread,
        // waiting for its half, does not wait for ever.
        let second_half_sender = second_half_sender;
        let helper = scope.spawn(index_runs);
        let walking = scope.spawn(move || {
            let walked = walk_then_list(
                sides,
                walking_nodes,
                side_data,
                exact_hashes,
                Some(run_sender),
                records_per_run,
            );
            index_runs();
            drop(walker_indexed);
            // Comes once every run is indexed.
            let second_half = second_half_receiver.recv().ok();
            (walked, second_half.map(ShingleBucketsBuilder::build))
        });
        let forest = Forest::restore(config, &nodes, counters);
        drop(nodes);
        index_runs();
        // Every run is indexed once the helper and the walking thread
        // are done with them (the walker sends nothing: its sender is
        // dropped).
        if let Err(panic) = helper.join() {
            std::panic::resume_unwind(panic);
        }
        let _ = walker_done_indexing.recv();
        let mut short_texts = Vec::new();
        let mut long_texts = Vec::new();
        for run in indexing.take() {
            short_texts.push(run.short_texts);
            long_texts.push(run.long_texts);
        }
        let mut short_texts = ShingleIndexBuilder::concat(short_texts)
            .unwrap_or_else(|| ShingleIndex::builder(LshShape::default()));
        // The LSH's two halves and the sketch index are built at once,
        // on the walking thread, this one and a third: at 100 M nodes
        // the sketch index took 12 s, and built after one half it left
        // a core idle that long.
        let [first_half, second_half] = short_texts.take_halves();
        let _ = second_half_sender.send(second_half);
        let long_texts = scope.spawn(move || SketchIndexBuilder::concat(long_texts).build());
        let first_half = first_half.build();
        let long_texts = match long_texts.join() {
            Ok(built) => built,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let (walked, second_half) = match walking.join() {
            Ok(joined) => joined,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let short_texts = match second_half {
            Some(second_half) => short_texts.assemble([first_half, second_half]),
            None => ShingleIndex::new(LshShape::default()),
        };
        (forest, walked, short_texts, long_texts)
    })
}

/// Closes the queue of runs when the thread holding it panics.
struct CloseOnPanic<'a, T>(&'a Mutex<Option<mpsc::Receiver<T>>>);

impl<T> Drop for CloseOnPanic<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().take();
        }
    }
}

/// Runs cut by the walk and waiting to be indexed (a run is
/// [`RECORDS_PER_RUN`] records, some 8 MB).
const RUNS_AHEAD: usize = 4;

/// What the walk over the side records leaves besides the stored records:
/// the numbers of nodes whose record could not be stored (sorted, each
/// once) and every exact hash the records list.
struct Walked {
    unstored: Vec<NodeId>,
    listed: ListedExactHashes,
    deferred: Vec<DeferredCheck>,
}

/// What the walk leaves the engine: the numbers of the nodes whose record
/// could not be stored, and the frames of records adopted unread, to be
/// checked after recovery.
type WalkOutcome = (Vec<NodeId>, Vec<DeferredCheck>);

/// [`walk_records`], then the exact-hash table built from the hashes it
/// listed, once the node records (`nodes`, shared with the forest's
/// thread) are let go; the numbers of the nodes whose record could not be
/// stored.
fn walk_then_list<'a>(
    sides: &'a EncodedSides,
    nodes: Arc<Vec<NodeRecord>>,
    side_data: &mut SideStore,
    exact_hashes: &mut ExactHashes,
    runs: Option<mpsc::SyncSender<NumberedRun<'a>>>,
    records_per_run: usize,
) -> Result<WalkOutcome, ForestError> {
    let walked = walk_records(sides, &nodes, side_data, runs, records_per_run);
    drop(nodes);
    let walked = walked?;
    walked.listed.insert_into(exact_hashes, &walked.unstored);
    Ok((walked.unstored, walked.deferred))
}

/// The one pass over the side records (see the module's documentation):
/// each block checked against its checksum, its records given their
/// node's number and stored in `side_data`, their exact hashes listed, and
/// the records sent to `runs` in runs of `records_per_run` with their
/// numbers, in order.
fn walk_records<'a>(
    sides: &'a EncodedSides,
    nodes: &[NodeRecord],
    side_data: &mut SideStore,
    runs: Option<mpsc::SyncSender<NumberedRun<'a>>>,
    records_per_run: usize,
) -> Result<Walked, ForestError> {
    let mut numbering = Numbering::new(nodes);
    let mut keys = RecordKeys::default();
    let mut listed = ListedExactHashes::default();
    let mut unstored = Vec::new();
    let mut run = NumberedRun::starting(0, 0);
    let mut deferred = Vec::new();
    let mut buffer = Vec::new();
    let damaged = || ForestError::Damaged("side records fail their checksum".to_string());
    let chunks = sides.chunks(MAX_SEGMENT_BYTES);
    // With no runs to cut and the records adopted where they are, a chunk
    // with an index (version 10) is not read: its index says all the walk
    // needs, and its checksum is checked after recovery (`side_check`).
    let unread = runs.is_none() && side_data.adopts_mapped();
    if let (None, Some(first)) = (&runs, chunks.first()) {
        if unread && first.has_index() {
            first.read_index_ahead();
        } else {
            first.read_ahead();
        }
    }
    for (position, chunk) in chunks.iter().enumerate() {
        if unread && let Some(index) = chunk.read_index(&mut buffer) {
            let index = index.ok_or_else(|| {
                ForestError::Damaged("the side records' index fails its checksum".to_string())
            })?;
            let FrameIndex { offsets, ids } = read_index(
                index,
                chunk.records,
                chunk.bytes.len(),
                nodes.len(),
                |exact_hash, id| {
                    listed.push(exact_hash, id);
                },
            )
            .ok_or_else(|| {
                ForestError::Damaged("the side records' index does not match them".to_string())
            })?;
            if let Some(next) = chunks.get(position + 1) {
                next.read_index_ahead();
            }
            deferred.extend(chunk.deferred_check());
            side_data.put_chunk_at(chunk, offsets, &ids, &mut unstored);
            continue;
        }
        // Runs are indexed from the mapping, a few behind the walk; with
        // no runs to cut, nothing reads the records again during recovery,
        // so each chunk is read once and let go of, the next one read
        // ahead meanwhile.
        let bytes = if runs.is_some() {
            chunk.read_in_order();
            chunk
                .checks_out()
                .then_some(chunk.bytes)
                .ok_or_else(damaged)?
        } else {
            let bytes = chunk.read_once(&mut buffer).ok_or_else(damaged)?;
            if let Some(next) = chunks.get(position + 1) {
                next.read_ahead();
            }
            bytes
        };
        // Each record read once, where its length is found: its node's
        // number, then its exact hashes.
        let mut ids: Vec<Option<NodeId>> = Vec::with_capacity(chunk.records);
        let offsets = record_offsets_with(bytes, |record| {
            let id = numbering.number(record);
            if let Some(id) = id
                && keys.read_exact_hashes(record).is_ok()
            {
                for &exact_hash in &keys.exact_hashes {
                    listed.push(exact_hash, id);
                }
            }
            ids.push(id);
        })
        .filter(|offsets| offsets.len() == chunk.records)
        .ok_or_else(|| ForestError::Damaged("side records do not match their count".to_string()))?;
        if let Some(runs) = &runs {
            run = cut_into_runs(chunk, &offsets, &ids, run, records_per_run, runs);
        }
        side_data.put_chunk_at(chunk, offsets, &ids, &mut unstored);
    }
    if let Some(runs) = runs
        && run.records.records > 0
    {
        let _ = runs.send(run);
    }
    unstored.sort_unstable();
    unstored.dedup();
    Ok(Walked {
        unstored,
        listed,
        deferred,
    })
}

/// Adds `chunk`'s records (starting at `offsets`, as
/// [`record_offsets`] finds them; numbered as `ids` says) to `run`,
/// sending each run that fills to `runs`; the run that is not full yet.
fn cut_into_runs<'a>(
    chunk: &SidesChunk<'a>,
    offsets: &[u32],
    ids: &[Option<NodeId>],
    mut run: NumberedRun<'a>,
    records_per_run: usize,
    runs: &mpsc::SyncSender<NumberedRun<'a>>,
) -> NumberedRun<'a> {
    let mut taken = 0;
    let mut start = 0;
    while taken < offsets.len() {
        let take = (records_per_run - run.records.records).min(offsets.len() - taken);
        // A record ends where the next starts, the last at the chunk's end.
        let end = offsets
            .get(taken + take)
            .map_or(chunk.bytes.len(), |&next| next as usize);
        run.records.push(&chunk.bytes[start..end], take);
        run.ids.extend_from_slice(&ids[taken..taken + take]);
        taken += take;
        start = end;
        if run.records.records == records_per_run {
            let next = NumberedRun::starting(run.number + 1, run.records.first + records_per_run);
            // The receivers live until every thread is done.
            let _ = runs.send(std::mem::replace(&mut run, next));
        }
    }
    run
}

/// Nodes a side record may lie ahead of its node among the node records
/// before its number is looked up instead (records of nodes without side
/// data are skipped on the way).
const NUMBERING_LOOKAHEAD: usize = 64;

/// Each side record's node number: the position of its node among the
/// node records ([`Forest::restore`] numbers the records in order), `None`
/// when no node has its fingerprint. Both lists are in arrival order, so
/// the number is found by walking them side by side; a record found out
/// of step is looked up in a map built only then.
struct Numbering<'a> {
    nodes: &'a [NodeRecord],
    cursor: usize,
    by_fingerprint: Option<HashMap<Fingerprint, usize>>,
}

impl<'a> Numbering<'a> {
    fn new(nodes: &'a [NodeRecord]) -> Self {
        Numbering {
            nodes,
            cursor: 0,
            by_fingerprint: None,
        }
    }

    fn number(&mut self, record: &[u8]) -> Option<NodeId> {
        let fingerprint = record_fingerprint(record)?;
        let ahead = self
            .nodes
            .get(self.cursor..)
            .unwrap_or_default()
            .iter()
            .take(NUMBERING_LOOKAHEAD)
            .position(|node| node.fingerprint == fingerprint);
        if let Some(ahead) = ahead {
            let number = self.cursor + ahead;
            self.cursor = number + 1;
            return NodeId::try_from(number).ok();
        }
        let nodes = self.nodes;
        // The first node of a fingerprint seen twice (which the forest
        // refuses anyway).
        let by_fingerprint = self.by_fingerprint.get_or_insert_with(|| {
            nodes
                .iter()
                .enumerate()
                .map(|(position, node)| (node.fingerprint, position))
                .rev()
                .collect()
        });
        by_fingerprint
            .get(&fingerprint)
            .and_then(|&number| NodeId::try_from(number).ok())
    }
}

/// Records indexed per unit of work shared by the threads: small enough
/// to balance them, large enough that taking one costs nothing.
const RECORDS_PER_RUN: usize = 1 << 15;

/// Consecutive records, the `number`th run of the walk, with their nodes'
/// numbers.
struct NumberedRun<'a> {
    number: usize,
    records: RecordRun<'a>,
    ids: Vec<Option<NodeId>>,
}

impl NumberedRun<'_> {
    fn starting(number: usize, first: usize) -> Self {
        NumberedRun {
            number,
            records: RecordRun::starting_at(first),
            ids: Vec::new(),
        }
    }
}

/// What one run of records adds to the candidate indexes.
struct RunIndexes {
    short_texts: ShingleIndexBuilder,
    long_texts: SketchIndexBuilder,
}

fn index_run(run: &NumberedRun<'_>, short_text_search: bool) -> RunIndexes {
    let mut indexes = RunIndexes {
        short_texts: ShingleIndex::builder(LshShape::default()),
        long_texts: SketchIndex::builder(),
    };
    // Room for every record as a short text and as a long one (a record
    // is one or both): pages never written are never faulted in, and the
    // room left is given back below, where a part grown by doubling was
    // copied into new pages at each step.
    let records = run.records.records;
    if short_text_search {
        indexes.short_texts.reserve(records);
    }
    indexes.long_texts.reserve(records);
    let mut keys = RecordKeys::default();
    let mut band_keys = Vec::new();
    for (record, id) in run.records.iter().zip(&run.ids) {
        let Some(id) = *id else { continue };
        if keys.read(record).is_err() {
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
    indexes.short_texts.shrink_to_fit();
    indexes.long_texts.shrink_to_fit();
    indexes
}

/// What each run added, kept in run order (the indexes keep the newest of
/// a full bucket, so entries must come in arrival order).
struct RunIndexing {
    indexed: Mutex<Vec<Option<RunIndexes>>>,
}

impl RunIndexing {
    fn new(runs: usize) -> Self {
        RunIndexing {
            indexed: Mutex::new((0..runs).map(|_| None).collect()),
        }
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

#[cfg(test)]
mod tests {
    use super::super::side_file::record_offsets;
    use super::*;

    /// A thread that panics while it takes runs closes the queue: the walk,
    /// which may be waiting for room in it, gets an error instead of
    /// waiting for ever.
    #[test]
    fn a_thread_that_panics_while_taking_runs_closes_the_queue() {
        let (sender, receiver) = mpsc::sync_channel::<u32>(1);
        let receiver = Mutex::new(Some(receiver));
        std::thread::scope(|scope| {
            let taker = scope.spawn(|| {
                let _closing = CloseOnPanic(&receiver);
                panic!("a run that cannot be indexed");
            });
            assert!(taker.join().is_err());
        });
        assert!(receiver.lock().is_none());
        assert!(sender.send(1).is_err(), "nobody takes runs any more");
    }

    /// Records cut into runs from chunks of any size come out in order,
    /// each run numbered and starting where the one before ended, with
    /// its records' numbers.
    #[test]
    fn runs_cut_from_chunks_keep_the_records_in_order() {
        let mut sides = EncodedSides::default();
        for index in 0..10u8 {
            sides.push_encoded(&vec![index; 3 + usize::from(index % 3)]);
        }
        let all: Vec<&[u8]> = sides.iter().collect();
        for chunk_bytes in [1, 15, 1000] {
            for records_per_run in [1, 3, 4, 10, 11] {
                let (sender, receiver) = mpsc::sync_channel(all.len() + 1);
                let mut run = NumberedRun::starting(0, 0);
                let mut first_id = 0;
                for chunk in sides.chunks(chunk_bytes) {
                    let offsets = record_offsets(chunk.bytes).expect("whole records");
                    let count = offsets.len() as NodeId;
                    let ids: Vec<Option<NodeId>> = (first_id..first_id + count).map(Some).collect();
                    first_id += count;
                    run = cut_into_runs(&chunk, &offsets, &ids, run, records_per_run, &sender);
                }
                if run.records.records > 0 {
                    sender.send(run).expect("sent");
                }
                drop(sender);
                let mut seen = Vec::new();
                let mut seen_ids = Vec::new();
                for (number, run) in receiver.iter().enumerate() {
                    assert_eq!(run.number, number);
                    assert_eq!(run.records.first, seen.len());
                    let records: Vec<&[u8]> = run.records.iter().collect();
                    assert_eq!(records.len(), run.records.records);
                    assert_eq!(run.ids.len(), records.len());
                    assert!(records.len() <= records_per_run);
                    seen.extend(records);
                    seen_ids.extend(run.ids);
                }
                assert_eq!(
                    seen, all,
                    "chunks of {chunk_bytes}, runs of {records_per_run}"
                );
                let expected: Vec<Option<NodeId>> = (0..all.len() as NodeId).map(Some).collect();
                assert_eq!(seen_ids, expected);
            }
        }
    }

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
        all.insert_into(&mut built, &[]);
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
