//! One document in, its class out: fingerprint, exact fast path, candidate
//! search beyond the simhash, confirmation, forest assignment, expiry of side
//! data.
//!
//! Motivation: the forest only knows fingerprints, but several decisions need
//! more than a fingerprint. A verbatim reprint should not pay for
//! segmentation again (the exact fast path). A short text's simhash is too
//! weak to trust at distance ≤ k (seeds 000 and 003) and too unstable to
//! find its reprints there; a long text's simhash moves past k when the edit
//! lands in the sentence that carries it. And two texts can be close by every
//! measure of text yet report different figures or places.
//!
//! Design: the engine owns the [`Forest`] and per-node side data: the root,
//! the exact hashes that map to the node, and for short texts the bigram
//! set, number and place signatures, for long texts the bottom-k sketch,
//! number set and headline bigrams. Candidates come from three places: the
//! forest's multi-index (within k), the short-text MinHash LSH
//! ([`crate::candidates::shingle_index`]) and the long-text sketch index
//! ([`sketch`]). Every candidate is confirmed before it counts:
//!
//! - short text: bigram Jaccard with the candidate and with its root, same
//!   numbers, same places when both name any, and close in reading order
//!   ([`crate::confirm::edits`]; very short texts only with the same letters);
//! - long text found by sketch: estimated Jaccard of the bodies, similar
//!   headlines when both have one, one number set containing the other;
//! - long text within k: the number-set containment and the headlines.
//!
//! An identical fingerprint (SPEC §3 rule 1) is confirmed the same way;
//! a text its node does not confirm takes the nearest fingerprint, one bit
//! flipped, that is free or whose node confirms it.
//!
//! Confirmed candidates from the two extra searches go to
//! [`Forest::assign_with_candidates`], where their roots compete under the
//! same rules as the roots of simhash neighbours. Side data of expired nodes
//! is dropped with them.
//!
//! A short text alone (no long text) is found by the LSH, never needed
//! within `k`: its node is placed [`Indexing::TextOnly`] and costs no
//! block entries ([`indexing_of_texts`]).
//!
//! Consequences: a leaf found by the extra searches may be more than `k`
//! from every other member of its class, and two roots may be within `k`
//! when confirmation kept them apart or the earlier is a short text alone;
//! with both searches and all checks off the forest is exactly SPEC §3.
//! Side data costs memory per node (reported in [`EngineStats`];
//! `benches/engine_scale.rs` measures it).

mod analysis;
pub mod batch;
pub mod capture;
pub mod commonness;
mod exact_hashes;
mod mapped_file;
mod plan;
mod recent;
mod restore;
mod search;
pub(crate) mod segment_files;
mod side_check;
mod side_data;
pub mod side_file;
#[cfg(test)]
mod side_props;
mod side_record;
#[cfg(test)]
mod side_tests;
#[cfg(test)]
mod tests;

pub use analysis::{Analysis, Analyzer, short_headline};
use exact_hashes::ExactHashes;
pub use side_check::{SideRecordsCheck, SideRecordsState, SidesCheck};
use side_data::SideStore;
pub use side_data::{EncodedSides, SideSnapshot};
use side_file::{SideFileStats, SideStorage};
pub use side_record::{
    SideRecord, SideView, get_long, get_short, get_side, put_long, put_short, put_side,
    record_exact_hashes, skip_side,
};

use crate::candidates::shingle_index::{LshShape, ShingleIndex};
use crate::candidates::sketch_index::SketchIndex;
use crate::confirm::{ConfirmationConfig, FoundBy, LongText, NodeTexts, ShortText, node_confirms};
use crate::fingerprint::Fingerprinter;
use crate::forest::{
    Assignment, Forest, ForestConfig, ForestCounters, Indexing, NodeRecord, Placement,
};
use crate::units::{Fingerprint, Millis, NodeId};

/// The forest a snapshot holds: its node records, in the order
/// [`Forest::restore`] numbers them (the first record is node 0), with the
/// forest's settings and counters.
/// The records are given, not lent: recovery lets them go once the forest
/// is built and the side records numbered (48 bytes a node that the rest
/// of recovery, the candidate indexes' bulk builds, no longer has to find).
#[derive(Debug, Clone)]
pub struct ForestState {
    pub config: ForestConfig,
    pub nodes: Vec<NodeRecord>,
    pub counters: ForestCounters,
}

/// How many expired nodes placing one document may remove, in the sidecar
/// and in `stamp` alike: each document adds at most one node, so expiry
/// keeps up with ingest while the work per document stays bounded (the
/// sidecar's background task expires the rest when no write comes).
pub const EXPIRY_BUDGET_PER_DOCUMENT: usize = 8;

/// How many distinct exact-text hashes are remembered per node: enough for
/// the usual handful of verbatim variants without unbounded growth on a node
/// that thousands of slightly different texts hash to.
const MAX_EXACT_HASHES_PER_NODE: usize = 4;

/// How many one-bit flips a text whose fingerprint is taken by a node that
/// does not confirm it tries to confirm (see
/// [`ConfirmationConfig::confirm_identical_fingerprints`]): each costs a
/// confirmation, and this bounds them. Past them the text takes the first
/// free flip unconfirmed (a report recurring more often than this within
/// the retention, see `Engine::node_for`).
const IDENTICAL_FINGERPRINT_PROBES: u32 = 8;

/// Where a document went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The document's own fingerprint.
    pub fingerprint: Fingerprint,
    /// Its class: the root's fingerprint.
    pub root: Fingerprint,
    pub placement: Placement,
    /// Documents in the class, this one included.
    pub class_documents: u64,
    /// True when the exact fast path found the text without segmenting it.
    pub exact_hit: bool,
}

/// Counters of the engine's own work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineStats {
    pub exact_hits: u64,
    pub confirmations: u64,
    pub confirmations_rejected: u64,
    pub side_data_nodes: usize,
    pub exact_hash_entries: usize,
    /// Approximate heap bytes of the engine's own structures (side data,
    /// exact-hash map, short-text LSH, long-text sketch index), excluding
    /// the forest's (see [`crate::forest::ForestStats`]).
    pub approx_heap_bytes: usize,
    /// Sentences in the table of boilerplate learned from the stream
    /// ([`commonness`]; its heap is in `approx_heap_bytes`).
    pub common_sentences: usize,
    /// Of these: the side data of the nodes (records, map, exact hashes).
    pub side_data_heap_bytes: usize,
    /// Of these: the short-text LSH and the long-text sketch index.
    pub candidate_index_heap_bytes: usize,
    /// The side records, off the heap (see [`side_file`]).
    pub side_file: SideFileStats,
}

/// Fingerprinter + forest + side data.
#[derive(Debug)]
pub struct Engine {
    analyzer: Analyzer,
    forest: Forest,
    confirmation: ConfirmationConfig,
    /// The exact fast path: text hash → node number.
    exact_hashes: ExactHashes,
    /// Each node's side record (off the heap), by the forest's node number.
    side_data: SideStore,
    short_texts: ShingleIndex,
    long_texts: SketchIndex,
    stats: EngineStats,
    /// Effects of every change since the last [`Engine::take_journal`],
    /// when journaling is on (persistence).
    journal: Option<Vec<EngineEffect>>,
    /// What changed lately, to check decisions taken on an earlier state
    /// ([`batch`]).
    recent: recent::RecentChanges,
    /// Sentences the stream carries in many classes: boilerplate learned
    /// ([`commonness`]).
    common_sentences: commonness::CommonSentences,
    /// The check of the side records recovery adopted unread
    /// ([`side_check`]); sound for an engine not recovered so.
    side_records_check: SideRecordsCheck,
}

/// One change of the engine's state, enough to redo it without deciding
/// again ([`Engine::replay`]): what persistence writes to its log.
// Placements are nearly every effect; boxing their texts would add an
// allocation to each to shrink the rare others.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEffect {
    /// A document was placed at `fingerprint` in the class of `root`.
    /// `exact_hash` is `None` for the exact fast path; the side data is set
    /// when the placement created the node.
    Placed {
        now: Millis,
        fingerprint: Fingerprint,
        root: Fingerprint,
        exact_hash: Option<u64>,
        short_text: Option<ShortText>,
        long_text: Option<LongText>,
        /// The keys of its body's sentences, when it taught the learned
        /// boilerplate table ([`commonness`]); empty otherwise.
        sentences: Vec<u64>,
    },
    /// One document of `fingerprint` was taken back ([`Engine::forget_document`]).
    Forgotten { fingerprint: Fingerprint },
    /// These nodes expired.
    Expired { removed: Vec<Fingerprint> },
    /// One document of `fingerprint` was uncounted, the node kept
    /// ([`Engine::uncount`]).
    Uncounted { fingerprint: Fingerprint },
}

/// How a new node of these texts is indexed: a short text alone is found
/// by its shingles when that search is on, so "within `k`" leaves it out
/// (see [`Indexing`]); anything else is found within `k`.
pub fn indexing_of_texts(
    short_text_search: bool,
    short: Option<&ShortText>,
    long: Option<&LongText>,
) -> Indexing {
    if short_text_search && short.is_some() && long.is_none() {
        Indexing::TextOnly
    } else {
        Indexing::WithinK
    }
}

impl Engine {
    pub fn new(
        fingerprinter: Fingerprinter,
        forest: Forest,
        confirmation: ConfirmationConfig,
    ) -> Self {
        let common_sentences = commonness::CommonSentences::new(
            confirmation.common_sentence_classes,
            commonness::DEFAULT_CAPACITY,
            forest.config().retention,
        );
        Engine {
            analyzer: Analyzer::new(fingerprinter, &confirmation),
            common_sentences,
            forest,
            confirmation,
            exact_hashes: ExactHashes::default(),
            side_data: SideStore::new(SideStorage::default()),
            short_texts: ShingleIndex::new(LshShape::default()),
            long_texts: SketchIndex::default(),
            stats: EngineStats::default(),
            side_records_check: SideRecordsCheck::default(),
            journal: None,
            recent: recent::RecentChanges::default(),
        }
    }

    /// Keeps the side records in `storage` from now on (the default is the
    /// system's temporary directory). Call before the first document: the
    /// records already stored are dropped.
    pub fn with_side_storage(mut self, storage: SideStorage) -> Self {
        self.side_data.move_to(storage);
        self
    }

    /// Starts recording [`EngineEffect`]s.
    pub fn enable_journal(&mut self) {
        self.journal.get_or_insert_with(Vec::new);
    }

    /// The effects recorded since the last call (none when journaling is off).
    pub fn take_journal(&mut self) -> Vec<EngineEffect> {
        self.journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn record(&mut self, effect: impl FnOnce() -> EngineEffect) {
        if let Some(journal) = &mut self.journal {
            journal.push(effect());
        }
    }

    /// Redoes a recorded effect (recovery from a log). Nothing is journaled.
    pub fn replay(&mut self, effect: EngineEffect) {
        self.recent.barrier();
        let journal = self.journal.take();
        match effect {
            EngineEffect::Placed {
                now,
                fingerprint,
                root,
                exact_hash,
                short_text,
                long_text,
                sentences,
            } => {
                let indexing = self.indexing_of(short_text.as_ref(), long_text.as_ref());
                let assignment = self
                    .forest
                    .apply_placement(fingerprint, root, now, indexing);
                if !sentences.is_empty() {
                    let changed =
                        self.common_sentences
                            .placed_keys(sentences, assignment.root, now);
                    if !changed.is_empty() {
                        self.recent.sentences_changed(&changed);
                    }
                }
                match exact_hash {
                    None => self.stats.exact_hits += 1,
                    Some(exact_hash) => {
                        self.remember(fingerprint, assignment, exact_hash, short_text, long_text)
                    }
                }
            }
            EngineEffect::Forgotten { fingerprint } => {
                self.forget_document(fingerprint);
            }
            EngineEffect::Expired { removed } => {
                let removed = self.forest.apply_expiry(&removed);
                self.drop_side_data(&removed.ids, &[]);
            }
            EngineEffect::Uncounted { fingerprint } => {
                self.forest.forget_document(fingerprint);
            }
        }
        self.journal = journal;
    }

    /// The side data of every node, shared with the engine: cheap enough to
    /// take under the ledger lock (one pass, pointers copied), so a snapshot
    /// can be written after the lock is released. Ordered later, outside the
    /// lock ([`SideSnapshot::sort_by_arrival`]).
    /// The learned boilerplate table's entries, sorted (snapshots).
    pub fn common_sentence_records(&self) -> Vec<commonness::CommonSentenceRecord> {
        self.common_sentences.records()
    }

    /// The learned boilerplate table as a snapshot held it (recovery).
    pub fn restore_common_sentences(&mut self, records: &[commonness::CommonSentenceRecord]) {
        self.common_sentences.restore(records);
    }

    pub fn side_snapshot(&self) -> SideSnapshot {
        self.side_data.snapshot(|id| self.forest.fingerprint_at(id))
    }

    /// The side record of `fingerprint`'s node, decoded.
    fn side_record(&self, fingerprint: Fingerprint) -> Option<SideRecord> {
        self.side_data.decoded(self.forest.number(fingerprint)?)
    }

    /// Every node's side data, in the forest's arrival order (snapshots).
    pub fn side_records(&self) -> Vec<SideRecord> {
        self.forest
            .node_records()
            .into_iter()
            .filter_map(|node| self.side_record(node.fingerprint))
            .collect()
    }

    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.analyzer.fingerprinter
    }

    /// See [`Forest::number_hold`].
    pub fn node_number_hold(&mut self) -> crate::forest::numbers::NumberHold<'_> {
        self.forest.number_hold()
    }

    pub fn forest(&self) -> &Forest {
        &self.forest
    }

    /// How candidates are confirmed (read by [`crate::explain`]).
    pub fn confirmation(&self) -> &ConfirmationConfig {
        &self.confirmation
    }

    /// Fingerprint and place a JSON document. `None` when none of the
    /// configured fields holds text (such a document is not grouped).
    pub fn add_document(&mut self, document: &serde_json::Value, now: Millis) -> Option<Placed> {
        let prepared = self.analyzer.fingerprinter.prepare_document(document)?;
        Some(self.add_prepared(&prepared, now))
    }

    /// Fingerprint and place raw text.
    pub fn add_text(&mut self, text: &str, now: Millis) -> Placed {
        let prepared = self.analyzer.fingerprinter.prepare(text);
        self.add_prepared(&prepared, now)
    }

    /// A cloneable handle that computes [`Analysis`] without the engine:
    /// callers that hold the engine behind a lock analyse outside it.
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// Places a document that already carries stamps (backfill, an index
    /// read back): at its stamped `fingerprint` under its stamped `root`
    /// (see [`Forest::apply_placement`]), the decision not taken again, so
    /// the stamp in the index stays true. `analysis` (of its text) gives the
    /// side data a new node keeps for later confirmations.
    pub fn adopt(
        &mut self,
        analysis: Option<Analysis>,
        fingerprint: Fingerprint,
        root: Fingerprint,
        now: Millis,
    ) -> Placed {
        self.recent.barrier();
        let indexing = analysis.as_ref().map_or(Indexing::WithinK, |analysis| {
            self.indexing_of(analysis.short_text.as_ref(), analysis.long_text.as_ref())
        });
        let assignment = self
            .forest
            .apply_placement(fingerprint, root, now, indexing);
        let new_node = assignment.placement != Placement::ExistingNode;
        let (exact_hash, short_text, long_text) = match analysis {
            Some(analysis) if new_node => (
                Some(analysis.exact_hash),
                analysis.short_text,
                analysis.long_text,
            ),
            Some(analysis) => (Some(analysis.exact_hash), None, None),
            None => (None, None, None),
        };
        self.record(|| EngineEffect::Placed {
            now,
            fingerprint,
            root: assignment.root,
            exact_hash,
            short_text: short_text.clone(),
            long_text: long_text.clone(),
            sentences: Vec::new(),
        });
        match exact_hash {
            Some(exact_hash) => {
                self.remember(fingerprint, assignment, exact_hash, short_text, long_text);
            }
            // As a replay of the exact fast path counts it.
            None => self.stats.exact_hits += 1,
        }
        placed(fingerprint, assignment, false)
    }

    /// Copies the class of `root` from `from` (a backfill's history frame)
    /// into this engine, every node uncounted (their documents belong to
    /// the other frame), with its side data, so that a document placed next
    /// meets the story it continues. The root keeps its birth time (rule 4
    /// tie-break), leaves their last touch (their expiry). Nothing happens
    /// when `root` is already a node here. Returns the nodes copied.
    pub fn carry_class(&mut self, from: &Engine, root: Fingerprint) -> Vec<Fingerprint> {
        let Some(class) = from.forest.class(root) else {
            return Vec::new();
        };
        if self.forest.contains(root) {
            return Vec::new();
        }
        self.recent.barrier();
        let mut carried = Vec::with_capacity(class.members.len());
        for member in class.members {
            let Some(node) = from.forest.node(member) else {
                continue;
            };
            if self.forest.contains(member) {
                continue;
            }
            let now = if member == root {
                node.born
            } else {
                node.touched
            };
            let side = from.side_record(member);
            let exact_hash = side
                .as_ref()
                .and_then(|side| side.exact_hashes.first().copied());
            let (short_text, long_text) =
                side.map_or((None, None), |side| (side.short_text, side.long_text));
            let indexing = self.indexing_of(short_text.as_ref(), long_text.as_ref());
            let assignment = self.forest.apply_placement(member, root, now, indexing);
            self.record(|| EngineEffect::Placed {
                now,
                fingerprint: member,
                root: assignment.root,
                exact_hash,
                short_text: short_text.clone(),
                long_text: long_text.clone(),
                sentences: Vec::new(),
            });
            match exact_hash {
                Some(exact_hash) => {
                    self.remember(member, assignment, exact_hash, short_text, long_text);
                }
                None => self.stats.exact_hits += 1,
            }
            self.uncount(member);
            carried.push(member);
        }
        carried
    }

    /// [`indexing_of_texts`] under this engine's settings.
    fn indexing_of(&self, short: Option<&ShortText>, long: Option<&LongText>) -> Indexing {
        indexing_of_texts(self.confirmation.short_text_search, short, long)
    }

    /// Keeps what a placed text leaves behind: its side data and candidate
    /// index entries when it created the node, and its exact hash.
    fn remember(
        &mut self,
        fingerprint: Fingerprint,
        assignment: Assignment,
        exact_hash: u64,
        own_short_text: Option<ShortText>,
        own_long_text: Option<LongText>,
    ) {
        self.remember_keyed(
            fingerprint,
            assignment,
            exact_hash,
            own_short_text,
            own_long_text,
            None,
        );
    }

    /// [`Engine::remember`] with the short text's band keys when they were
    /// computed already (a placement's footprint).
    fn remember_keyed(
        &mut self,
        fingerprint: Fingerprint,
        assignment: Assignment,
        exact_hash: u64,
        own_short_text: Option<ShortText>,
        own_long_text: Option<LongText>,
        shingle_keys: Option<&[u64]>,
    ) {
        let new_node = assignment.placement != Placement::ExistingNode;
        let Some(id) = self.forest.number(fingerprint) else {
            return;
        };
        let mut side = match self.side_data.decoded(id) {
            Some(side) if !new_node => side,
            _ => SideRecord {
                fingerprint,
                root: assignment.root,
                exact_hashes: Vec::new(),
                short_text: None,
                long_text: None,
            },
        };
        let known_hash = side.exact_hashes.contains(&exact_hash);
        let add_hash = !known_hash && side.exact_hashes.len() < MAX_EXACT_HASHES_PER_NODE;
        if !new_node && !add_hash && self.side_data.contains(id) {
            return;
        }
        if new_node {
            side.short_text = own_short_text;
            side.long_text = own_long_text;
        }
        if add_hash {
            side.exact_hashes.push(exact_hash);
        }
        // A node whose record found no space is no candidate: nothing could
        // confirm it.
        if !self.side_data.put(id, side.view()) {
            return;
        }
        if new_node {
            if let Some(short_text) = &side.short_text
                && self.confirmation.short_text_search
            {
                match shingle_keys {
                    Some(keys) => self.short_texts.insert_keyed(id, keys),
                    None => self.short_texts.insert(id, short_text.shingles()),
                }
            }
            if let Some(long_text) = &side.long_text {
                self.long_texts.insert(id, &long_text.sketch);
            }
        }
        if add_hash {
            let side_data = &self.side_data;
            self.exact_hashes.insert(exact_hash, id, |node| {
                side_data.holds_exact_hash(node, exact_hash)
            });
        }
    }

    /// Expire up to about `max_removals` nodes (see [`Forest::expire`]) and
    /// drop their side data. Returns the number of nodes removed and whether
    /// more expired nodes are pending.
    pub fn expire(&mut self, now: Millis, max_removals: usize) -> (usize, bool) {
        let progress = self.forest.expire(now, max_removals);
        self.drop_side_data(&progress.removed.ids, &progress.removed.fingerprints);
        if !progress.removed.is_empty() {
            let removed = progress.removed.fingerprints.clone();
            self.record(|| EngineEffect::Expired { removed });
        }
        (progress.removed.len(), progress.more_pending)
    }

    /// Takes back one document counted in `fingerprint`'s node: the cluster
    /// rejected it, or it was deleted or replaced. A node left with no
    /// documents and nothing under it is removed with its side data, so no
    /// class remains that nothing in the index belongs to. Returns whether a
    /// document was taken back.
    pub fn forget_document(&mut self, fingerprint: Fingerprint) -> bool {
        if !self.forest.forget_document(fingerprint) {
            return false;
        }
        self.record(|| EngineEffect::Forgotten { fingerprint });
        let removed = self.forest.remove_if_unused(fingerprint);
        self.drop_side_data(&removed.ids, &removed.fingerprints);
        true
    }

    /// Takes back one document of `fingerprint` but keeps the node even
    /// when no document is left: for documents that may or may not be in
    /// the index (their stamp must keep naming a known class).
    pub fn uncount(&mut self, fingerprint: Fingerprint) -> bool {
        let uncounted = self.forest.forget_document(fingerprint);
        if uncounted {
            self.record(|| EngineEffect::Uncounted { fingerprint });
        }
        uncounted
    }

    /// Drops the side data and index entries of removed nodes (by the
    /// numbers they had). With their `fingerprints` (same order), the
    /// removals are noted for decisions taken before them ([`recent`]);
    /// without, the caller has set a barrier.
    fn drop_side_data(&mut self, removed: &[NodeId], fingerprints: &[Fingerprint]) {
        if removed.is_empty() {
            return;
        }
        for (position, &id) in removed.iter().enumerate() {
            let side = self.side_data.remove(id);
            if let Some(side) = &side {
                if let Some(short_text) = &side.short_text {
                    self.short_texts.remove(id, short_text.shingles());
                }
                if let Some(long_text) = &side.long_text {
                    self.long_texts.remove(id, &long_text.sketch);
                }
                for &exact_hash in &side.exact_hashes {
                    self.exact_hashes.remove(exact_hash, id);
                }
            }
            if let Some(&fingerprint) = fingerprints.get(position) {
                let (exact_hashes, keys) = match side.as_ref() {
                    Some(side) => (
                        side.exact_hashes.as_slice(),
                        self.index_keys(side.short_text.as_ref(), side.long_text.as_ref()),
                    ),
                    None => (&[][..], self.index_keys(None, None)),
                };
                self.recent.removed(fingerprint, exact_hashes, &keys);
            }
        }
        self.side_data.fit_to(self.forest.number_bound());
        // Releases are what compaction gives back: a step for each batch,
        // so the file shrinks while only expiry runs (the sidecar idle).
        self.side_data.compact_step();
    }

    /// Heap bytes by structure: the forest's, then the engine's own
    /// (capacity bench, docs/performance.md).
    pub fn heap_by_structure(&self) -> Vec<(&'static str, usize)> {
        let mut parts = self.forest.heap_by_structure();
        parts.extend([
            (
                "side records: locations and in-heap records",
                self.side_data.heap_bytes(),
            ),
            ("exact-hash table", self.exact_hashes.heap_bytes()),
            (
                "short-text candidates (LSH buckets)",
                self.short_texts.approx_heap_bytes(),
            ),
            (
                "long-text candidates (sketch index)",
                self.long_texts.approx_heap_bytes(),
            ),
            (
                "learned boilerplate table",
                self.common_sentences.approx_heap_bytes(),
            ),
        ]);
        parts
    }

    fn side_data_heap_bytes(&self) -> usize {
        self.side_data.heap_bytes() + self.exact_hashes.heap_bytes()
    }

    fn candidate_index_heap_bytes(&self) -> usize {
        self.short_texts.approx_heap_bytes() + self.long_texts.approx_heap_bytes()
    }

    /// The check of the side records recovery adopted unread (see
    /// [`side_check`]): a snapshot waits for it.
    pub fn side_records_check(&self) -> SideRecordsCheck {
        self.side_records_check.clone()
    }

    pub fn stats(&self) -> EngineStats {
        let side_data_heap_bytes = self.side_data_heap_bytes();
        let candidate_index_heap_bytes = self.candidate_index_heap_bytes();
        EngineStats {
            side_data_nodes: self.side_data.len(),
            exact_hash_entries: self.exact_hashes.len(),
            approx_heap_bytes: side_data_heap_bytes
                + candidate_index_heap_bytes
                + self.common_sentences.approx_heap_bytes(),
            common_sentences: self.common_sentences.len(),
            side_data_heap_bytes,
            candidate_index_heap_bytes,
            side_file: self.side_data.file_stats(),
            ..self.stats
        }
    }
}

/// Whether `candidate`'s node, whose side record is `record`, confirms a
/// text with these texts (see [`crate::confirm`]); `None` when there is
/// nothing to confirm against. `number_of` names the node number of the
/// candidate's root (whose short text the short-text rule reads).
fn confirm_record(
    side_data: &SideStore,
    number_of: impl FnOnce(Fingerprint) -> Option<NodeId>,
    candidate: Fingerprint,
    record: &[u8],
    own: NodeTexts<'_>,
    found_by: FoundBy,
    config: &ConfirmationConfig,
) -> Option<bool> {
    let root = side_record::record_root(record)?;
    let (short, long) = side_record::record_texts(record).ok()?;
    // The root's short text is read only by the short-text rule, and only
    // for a candidate that passes its own checks.
    let root_short_text = || {
        (root != candidate)
            .then(|| number_of(root))
            .flatten()
            .and_then(|root_id| side_data.short_text(root_id))
    };
    node_confirms(
        own,
        NodeTexts {
            short: short.as_ref(),
            long: long.as_ref(),
        },
        root_short_text,
        found_by,
        config,
    )
}

/// Counts a confirmation in the engine's stats; a candidate with nothing to
/// confirm against (`None`) passes uncounted.
fn count_confirmation(stats: &mut EngineStats, confirmed: Option<bool>) -> bool {
    let Some(confirmed) = confirmed else {
        return true;
    };
    stats.confirmations += 1;
    if !confirmed {
        stats.confirmations_rejected += 1;
    }
    confirmed
}

fn placed(fingerprint: Fingerprint, assignment: Assignment, exact_hit: bool) -> Placed {
    Placed {
        fingerprint,
        root: assignment.root,
        placement: assignment.placement,
        class_documents: assignment.class_documents,
        exact_hit,
    }
}
