//! What the index holds: the engine plus the document each `_index`/`_id`
//! stands for, so class counts follow the cluster's answers.
//!
//! Motivation: the sidecar must stamp a document before the cluster has seen
//! it, but only the cluster decides whether it is stored. A document the
//! cluster rejected (429, mapping error, version conflict) must not stay
//! counted, nor leave behind a class that nothing in the index belongs to;
//! a client that retries the same `_index`/`_id` after a timeout must not
//! count twice; an `index` that replaces a document with other text moves
//! the count from the old node to the new one; a delete takes it back.
//!
//! Design: two phases. [`Ledger::place`] places the document in the forest
//! and counts it, tentatively, so that concurrent requests already see it
//! (two copies sent at the same time by two clients end in one class). When
//! the cluster's answer arrives, [`Ledger::stored`] records which key now
//! holds which fingerprint (and takes back a count that was already held by
//! that key), or [`Ledger::not_stored`] takes the tentative count back
//! ([`Engine::forget_document`] removes a node left without documents).
//! Keys are 64-bit hashes of `_index` and `_id`; the cluster's concrete
//! index name (from its answer, not the request, which may name an alias) is
//! used. A key names its node by number ([`DocumentKeys`]): a key whose
//! node expired reads as absent at once, and is forgotten by a pass over
//! the keys spread over the writes that follow.
//!
//! Consequences: counts are exact for documents written through the sidecar
//! since the ledger was created; a 64-bit key collision (about one in 10^10
//! at a million documents) would merge the counts of two documents.

pub mod capture;
mod keys;

use std::collections::{HashMap, VecDeque};

use crate::confirm::ConfirmationConfig;
use crate::engine::batch::PlannedBatch;
use crate::engine::commonness::CommonSentenceRecord;
use crate::engine::side_file::SideStorage;
use crate::engine::{Analysis, Engine, EngineEffect, Placed};
use crate::fingerprint::Fingerprinter;
use crate::forest::{Forest, ForestConfig, ForestError};
use crate::units::{Fingerprint, Millis};
use keys::KeyEntry;
pub use keys::{DocumentKey, DocumentKeys, KEY_SWEEP_PLACES_PER_REMOVAL};

/// Counters of what the cluster answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LedgerStats {
    /// Stamped documents the cluster stored.
    pub stored: u64,
    /// Stamped documents it did not store (their tentative count was taken back).
    pub not_stored: u64,
    /// Stores of a key that already held the same fingerprint (retries, re-indexing).
    pub restored: u64,
    /// Stores of a key that held another fingerprint (the count moved).
    pub replaced: u64,
    /// Deletes of a known key.
    pub deleted: u64,
    /// Keys currently tracked.
    pub keys: usize,
    /// Placements counted before the cluster's answer (in flight, or being
    /// read back).
    pub awaiting_answer: u64,
}

/// A ledger's state held for writing a snapshot (see [`Ledger::snapshot_parts`]).
#[derive(Debug)]
pub struct SnapshotParts {
    pub counters: crate::forest::ForestCounters,
    pub nodes: Vec<crate::forest::NodeRecord>,
    pub sides: crate::engine::SideSnapshot,
    pub keys: Vec<(DocumentKey, Fingerprint)>,
    pub pending: Vec<(Fingerprint, u32)>,
    /// Where the pending placements were sent, oldest first per fingerprint.
    pub sent: Vec<(Fingerprint, SentTo)>,
    /// The learned boilerplate table.
    pub common_sentences: Vec<CommonSentenceRecord>,
}

/// One change of the ledger's state, as persistence logs it.
// Most effects are an engine's placement (see [`EngineEffect`]): boxing it
// would add an allocation to nearly every effect to shrink the rare others.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Engine(EngineEffect),
    /// `key` now holds the document placed at `fingerprint`.
    KeyStored {
        key: DocumentKey,
        fingerprint: Fingerprint,
    },
    /// `key` holds no tracked document any more.
    KeyRemoved {
        key: DocumentKey,
    },
    /// Keys whose node is gone were forgotten: logged by builds before
    /// keys named their nodes by number, replayed as nothing (such a key
    /// reads as absent, forgotten or not).
    KeysSwept,
    /// The cluster's answer for one placement at `fingerprint` came back
    /// (stored or not): it is no longer in doubt.
    Settled {
        fingerprint: Fingerprint,
    },
    /// The placement at `fingerprint` just made is sent to `sent_to`: what
    /// a read-back asks the cluster for if its answer never comes.
    Sent {
        fingerprint: Fingerprint,
        sent_to: SentTo,
    },
}

/// Where a placement's document is sent: the index as the request named it
/// (an alias reads back as well) and its `_id`, when the request gave one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SentTo {
    pub index: String,
    pub id: Option<String>,
}

/// A placement whose answer never came back (a crash, a takeover), with
/// where it was sent when that is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InDoubt {
    pub fingerprint: Fingerprint,
    /// `None`: a placement from a state written before targets were kept,
    /// or one never sent; the crash rule has already taken its count back.
    pub sent_to: Option<SentTo>,
}

/// The validated pieces a ledger's engine is made of: `config` validates
/// settings into them; a state is opened with them, empty
/// ([`Ledger::empty`]) or recovered (`persist::open_state`).
#[derive(Debug, Clone)]
pub struct EngineParts {
    pub fingerprinter: Fingerprinter,
    pub forest: ForestConfig,
    pub confirmation: ConfirmationConfig,
    pub side_storage: SideStorage,
}

impl EngineParts {
    /// A new engine of these pieces, holding no node.
    ///
    /// # Errors
    ///
    /// A forest configuration the forest refuses (a negative retention).
    pub fn into_engine(self) -> Result<Engine, ForestError> {
        Ok(Engine::new(
            self.fingerprinter,
            Forest::new(self.forest)?,
            self.confirmation,
        )
        .with_side_storage(self.side_storage))
    }
}

/// The engine and the key → fingerprint map of stored documents.
#[derive(Debug)]
pub struct Ledger {
    engine: Engine,
    node_of_key: DocumentKeys,
    stats: LedgerStats,
    /// Key changes since the last [`Ledger::take_journal`], when journaling.
    key_journal: Option<Vec<Effect>>,
    /// Placements whose answer has not come back: fingerprint → how many.
    pending: HashMap<Fingerprint, u32>,
    /// Where pending placements were sent, oldest first: an answer settles
    /// the oldest of its fingerprint (identical texts in flight at once may
    /// be told apart wrongly; a read-back then asks about the other copy).
    sent: HashMap<Fingerprint, VecDeque<SentTo>>,
}

impl Ledger {
    pub fn new(mut engine: Engine) -> Self {
        // The keys name nodes by number.
        engine.node_number_hold().start();
        Ledger {
            engine,
            node_of_key: DocumentKeys::default(),
            stats: LedgerStats::default(),
            key_journal: None,
            pending: HashMap::new(),
            sent: HashMap::new(),
        }
    }

    /// An empty ledger around a new engine made of `parts`.
    ///
    /// # Errors
    ///
    /// A forest configuration the forest refuses.
    pub fn empty(parts: EngineParts) -> Result<Self, ForestError> {
        Ok(Ledger::new(parts.into_engine()?))
    }

    /// A ledger with this engine, these keys and these unsettled placements
    /// and where they were sent (from a snapshot).
    pub fn restore(
        engine: Engine,
        keys: DocumentKeys,
        pending: impl IntoIterator<Item = (Fingerprint, u32)>,
        sent: impl IntoIterator<Item = (Fingerprint, SentTo)>,
    ) -> Self {
        let mut ledger = Ledger::new(engine);
        ledger.node_of_key = keys;
        ledger.pending.extend(pending);
        for (fingerprint, sent_to) in sent {
            ledger
                .sent
                .entry(fingerprint)
                .or_default()
                .push_back(sent_to);
        }
        ledger
    }

    /// Everything a snapshot holds, taken at once (no sorting, side data
    /// shared): what a capture ([`Ledger::start_capture`]) gives, in one
    /// pause of the length of the copy (tests compare the two).
    pub fn snapshot_parts(&self) -> SnapshotParts {
        let forest = self.engine.forest();
        let nodes = forest.node_records_unsorted();
        let sides = self.engine.side_snapshot();
        SnapshotParts {
            counters: forest.counters(),
            nodes,
            sides,
            keys: self.node_of_key.iter(self.engine.forest()).collect(),
            pending: self.pending_records(),
            sent: self.sent_records(),
            common_sentences: self.engine.common_sentence_records(),
        }
    }

    /// Placements still waiting for the cluster's answer, sorted (snapshots).
    pub fn pending_records(&self) -> Vec<(Fingerprint, u32)> {
        let mut pending: Vec<(Fingerprint, u32)> = self
            .pending
            .iter()
            .map(|(&fingerprint, &count)| (fingerprint, count))
            .collect();
        pending.sort_unstable();
        pending
    }

    /// Where each pending placement was sent, sorted by fingerprint, oldest
    /// first within one (snapshots).
    pub fn sent_records(&self) -> Vec<(Fingerprint, SentTo)> {
        let mut sent: Vec<(Fingerprint, SentTo)> = self
            .sent
            .iter()
            .flat_map(|(&fingerprint, targets)| {
                targets
                    .iter()
                    .map(move |target| (fingerprint, target.clone()))
            })
            .collect();
        sent.sort_by_key(|&(fingerprint, _)| fingerprint);
        sent
    }

    /// After a crash or a takeover: placements whose answer never came back
    /// may or may not be in the index. Those whose destination is known
    /// stay pending, to be read back as a live write in doubt is
    /// (`serve::write::in_doubt`), which settles each one. The others get
    /// the crash rule: their count is taken back (a client that got no
    /// answer retries, and the retry counts), but their nodes stay, so a
    /// stamp that did reach the index still names a known class (and a
    /// document found later with that stamp is counted again,
    /// [`Ledger::adopt`]). Returns every placement in doubt, sorted, one
    /// per placement. Call once per process: a second call would hand the
    /// same pending placements out again.
    pub fn resolve_in_doubt(&mut self) -> Vec<InDoubt> {
        let mut resolved = Vec::new();
        let pending: Vec<(Fingerprint, u32)> = self.pending_records();
        for (fingerprint, count) in pending {
            let targets: Vec<SentTo> = self
                .sent
                .get(&fingerprint)
                .map(|targets| targets.iter().take(count as usize).cloned().collect())
                .unwrap_or_default();
            for _ in targets.len()..count as usize {
                self.engine.uncount(fingerprint);
                self.settled(fingerprint);
                resolved.push(InDoubt {
                    fingerprint,
                    sent_to: None,
                });
            }
            resolved.extend(targets.into_iter().map(|target| InDoubt {
                fingerprint,
                sent_to: Some(target),
            }));
        }
        resolved.sort_by(|a, b| (a.fingerprint, &a.sent_to).cmp(&(b.fingerprint, &b.sent_to)));
        resolved
    }

    fn settled(&mut self, fingerprint: Fingerprint) {
        self.release_pending(fingerprint);
        self.record_key(Effect::Settled { fingerprint });
    }

    /// The placement at `fingerprint` just made goes to `sent_to`: if its
    /// answer never comes, a read-back asks the cluster there.
    pub fn sending(&mut self, fingerprint: Fingerprint, sent_to: SentTo) {
        // Copied only for a journal (the sidecar's; not offline stamping).
        if self.key_journal.is_some() {
            self.record_key(Effect::Sent {
                fingerprint,
                sent_to: sent_to.clone(),
            });
        }
        self.sent.entry(fingerprint).or_default().push_back(sent_to);
    }

    /// One more placement at `fingerprint` waits for the cluster's answer.
    fn hold_pending(&mut self, fingerprint: Fingerprint) {
        *self.pending.entry(fingerprint).or_default() += 1;
    }

    /// One placement at `fingerprint` got its answer. Targets beyond the
    /// placements left go, oldest first: a placement sent has its target
    /// from the moment it is made, so one answered takes one, while the
    /// crash rule for placements without a target keeps the others (a
    /// replay of the same effects does the same).
    fn release_pending(&mut self, fingerprint: Fingerprint) {
        let left = match self.pending.get_mut(&fingerprint) {
            Some(count) => {
                *count -= 1;
                *count
            }
            None => 0,
        };
        if left == 0 {
            self.pending.remove(&fingerprint);
        }
        if let Some(targets) = self.sent.get_mut(&fingerprint) {
            while targets.len() > left as usize {
                targets.pop_front();
            }
            if targets.is_empty() {
                self.sent.remove(&fingerprint);
            }
        }
    }

    /// Every key and its fingerprint, sorted (snapshots).
    pub fn key_records(&self) -> Vec<(DocumentKey, Fingerprint)> {
        let mut keys: Vec<(DocumentKey, Fingerprint)> =
            self.node_of_key.iter(self.engine.forest()).collect();
        keys.sort_unstable();
        keys
    }

    /// Starts recording [`Effect`]s (of the engine and of the keys).
    pub fn enable_journal(&mut self) {
        self.engine.enable_journal();
        self.key_journal.get_or_insert_with(Vec::new);
    }

    /// The effects recorded since the last call, in the order they happened.
    pub fn take_journal(&mut self) -> Vec<Effect> {
        self.drain_engine_journal();
        self.key_journal
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Moves the engine's effects into the ledger's journal, so that a key
    /// effect recorded next comes after them.
    fn drain_engine_journal(&mut self) {
        if let Some(journal) = &mut self.key_journal {
            journal.extend(self.engine.take_journal().into_iter().map(Effect::Engine));
        }
    }

    /// Redoes a logged effect (recovery). Nothing is journaled.
    pub fn replay(&mut self, effect: Effect) {
        match effect {
            Effect::Engine(effect) => {
                let removals = match &effect {
                    EngineEffect::Placed { fingerprint, .. } => {
                        self.hold_pending(*fingerprint);
                        0
                    }
                    EngineEffect::Expired { removed } => removed.len(),
                    EngineEffect::Forgotten { .. } => 1,
                    EngineEffect::Uncounted { .. } => 0,
                };
                self.engine.replay(effect);
                self.sweep_keys_some(removals);
            }
            Effect::Settled { fingerprint } => self.release_pending(fingerprint),
            Effect::Sent {
                fingerprint,
                sent_to,
            } => self.sent.entry(fingerprint).or_default().push_back(sent_to),
            Effect::KeyStored { key, fingerprint } => {
                self.node_of_key
                    .insert(key, fingerprint, self.engine.forest());
            }
            Effect::KeyRemoved { key } => {
                self.node_of_key.remove(key, self.engine.forest());
            }
            // Logged by builds before keys named nodes by number: a key
            // whose node is gone reads as absent now, swept or not.
            Effect::KeysSwept => {}
        }
    }

    /// Forgets every key whose node is gone now, at once (a key whose node
    /// is gone reads as absent anyway: this only frees its place and lets
    /// the numbers held for it go).
    pub fn sweep_keys(&mut self) {
        self.node_of_key.sweep_all(self.engine.forest());
        self.engine.node_number_hold().release_all();
    }

    /// Goes on with the pass over the keys after `removals` nodes were
    /// removed ([`KEY_SWEEP_PLACES_PER_REMOVAL`] places for each, and for
    /// the call), while numbers are held for it.
    fn sweep_keys_some(&mut self, removals: usize) {
        if !self.engine.node_number_hold().holds_any() {
            return;
        }
        let budget = KEY_SWEEP_PLACES_PER_REMOVAL.saturating_mul(removals.saturating_add(1));
        if self.node_of_key.sweep_some(budget, self.engine.forest()) {
            self.engine.node_number_hold().pass_ended();
        }
    }

    fn record_key(&mut self, effect: Effect) {
        self.drain_engine_journal();
        if let Some(journal) = &mut self.key_journal {
            journal.push(effect);
        }
    }

    /// How long nodes live (`None`: nothing expires).
    pub fn retention(&self) -> Option<Millis> {
        self.engine.forest().config().retention
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Places an analysed document and counts it tentatively; settle it with
    /// [`Ledger::stored`] or [`Ledger::not_stored`].
    pub fn place(&mut self, analysis: Analysis, now: Millis) -> Placed {
        let placed = self.engine.place(analysis, now);
        self.hold_pending(placed.fingerprint);
        placed
    }

    /// Records the engine's changes from now on, so decisions taken under
    /// a shared lock can be checked when they are applied
    /// ([`crate::engine::Engine::track_changes`]).
    pub fn track_changes(&mut self) {
        self.engine.track_changes();
    }

    /// Decides where each of `analyses` (a request's sources, in order;
    /// `None`: not stamped) would go, changing nothing: on `threads`
    /// threads, under a shared lock ([`crate::engine::batch`]).
    pub fn plan_batch(&self, analyses: Vec<Option<Analysis>>, threads: usize) -> PlannedBatch {
        self.engine
            .plan_batch(analyses, threads, |analysis| analysis)
    }

    /// [`Ledger::place`] of the next item of `batch`, with the answer
    /// placing it alone would give; `None` for an item without a plan.
    pub fn place_next(&mut self, batch: &mut PlannedBatch, now: Millis) -> Option<Placed> {
        let placed = self.engine.place_next(batch, now)?;
        self.hold_pending(placed.fingerprint);
        Some(placed)
    }

    /// A document found in the index with its stamps (backfill): counted
    /// once under `key` at its stamped place. Nothing happens when `key`
    /// already holds that fingerprint (a document read again after a
    /// restart, or one written through the sidecar). Returns whether it was
    /// counted now.
    pub fn adopt(
        &mut self,
        key: DocumentKey,
        analysis: Option<Analysis>,
        fingerprint: Fingerprint,
        root: Fingerprint,
        now: Millis,
    ) -> bool {
        if self.node_of_key.get(key, self.engine.forest()) == Some(fingerprint) {
            return false;
        }
        self.engine.adopt(analysis, fingerprint, root, now);
        self.hold_pending(fingerprint);
        self.stored(key, fingerprint);
        true
    }

    /// Copies the class of `root` from `from` (a backfill's history frame),
    /// uncounted (see [`Engine::carry_class`]). Each copied node is logged
    /// as placed, uncounted and settled, so a replay holds no placement in
    /// doubt for it. Returns how many nodes were copied.
    pub fn carry_class(&mut self, from: &Engine, root: Fingerprint) -> usize {
        let carried = self.engine.carry_class(from, root);
        for &fingerprint in &carried {
            self.record_key(Effect::Settled { fingerprint });
        }
        carried.len()
    }

    /// The cluster stored the document placed at `fingerprint` under `key`.
    pub fn stored(&mut self, key: DocumentKey, fingerprint: Fingerprint) {
        self.settled(fingerprint);
        self.stats.stored += 1;
        self.record_key(Effect::KeyStored { key, fingerprint });
        let previous = self
            .node_of_key
            .insert(key, fingerprint, self.engine.forest());
        match previous {
            // Already counted for this key: take back the tentative count.
            Some(previous) if previous == fingerprint => {
                self.stats.restored += 1;
                self.engine.forget_document(fingerprint);
            }
            Some(previous) => {
                self.stats.replaced += 1;
                self.engine.forget_document(previous);
            }
            None => return,
        }
        // A node left without documents is removed.
        self.sweep_keys_some(1);
    }

    /// The cluster stored the document placed at `fingerprint` but did not
    /// say under which id (it stays counted; a later delete cannot find it).
    pub fn stored_untracked(&mut self, fingerprint: Fingerprint) {
        self.settled(fingerprint);
        self.stats.stored += 1;
    }

    /// The cluster did not store the document placed at `fingerprint`.
    pub fn not_stored(&mut self, fingerprint: Fingerprint) {
        self.settled(fingerprint);
        self.stats.not_stored += 1;
        self.engine.forget_document(fingerprint);
        self.sweep_keys_some(1);
    }

    /// The cluster was asked and does not hold the document placed at
    /// `fingerprint` (or could not tell): its count is taken back, as after
    /// a crash ([`Ledger::resolve_in_doubt`]), and its node stays, so a
    /// stamp that reaches the index late still names a known class.
    pub fn not_found(&mut self, fingerprint: Fingerprint) {
        self.settled(fingerprint);
        self.stats.not_stored += 1;
        self.engine.uncount(fingerprint);
    }

    /// The cluster deleted the document under `key`.
    pub fn deleted(&mut self, key: DocumentKey) {
        let Some(previous) = self.node_of_key.remove(key, self.engine.forest()) else {
            return;
        };
        self.record_key(Effect::KeyRemoved { key });
        self.stats.deleted += 1;
        // A key whose node is gone counts nothing any more.
        if let Some(previous) = previous {
            self.engine.forget_document(previous);
            self.sweep_keys_some(1);
        }
    }

    /// The fingerprint of the node stored under `key`, if known and alive.
    pub fn fingerprint_of(&self, key: DocumentKey) -> Option<Fingerprint> {
        self.node_of_key.get(key, self.engine.forest())
    }

    /// Expires nodes (see [`Engine::expire`]), and goes on with the pass
    /// that forgets the keys of removed nodes.
    pub fn expire(&mut self, now: Millis, max_removals: usize) -> (usize, bool) {
        let (removed, more_pending) = self.engine.expire(now, max_removals);
        self.sweep_keys_some(removed);
        (removed, more_pending)
    }

    pub fn stats(&self) -> LedgerStats {
        LedgerStats {
            keys: self.node_of_key.len(),
            awaiting_answer: self.pending.values().map(|&count| u64::from(count)).sum(),
            ..self.stats
        }
    }

    /// Heap bytes of the key table.
    pub fn approx_heap_bytes(&self) -> usize {
        self.node_of_key.allocation_size()
    }

    /// Heap bytes by structure: the engine's, then the key table.
    pub fn heap_by_structure(&self) -> Vec<(&'static str, usize)> {
        let mut parts = self.engine.heap_by_structure();
        parts.push(("document keys", self.approx_heap_bytes()));
        parts
    }
}

/// A small ledger and placements, for the tests of the modules that settle
/// writes.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;
    use crate::fingerprint::FingerprintConfig;

    pub fn ledger_with(retention: Option<Millis>) -> Ledger {
        let fingerprinter = Fingerprinter::new(FingerprintConfig::default()).expect("valid");
        let forest = Forest::new(ForestConfig {
            retention,
            ..ForestConfig::default()
        })
        .expect("valid");
        Ledger::new(Engine::new(
            fingerprinter,
            forest,
            ConfirmationConfig::default(),
        ))
    }

    pub fn ledger() -> Ledger {
        ledger_with(None)
    }

    pub fn place_at(ledger: &mut Ledger, text: &str, now: Millis) -> Placed {
        let analyzer = ledger.engine().analyzer().clone();
        let prepared = analyzer.fingerprinter().prepare(text);
        ledger.place(analyzer.analyze(&prepared), now)
    }

    /// Places `text` and returns its fingerprint.
    pub fn place(ledger: &mut Ledger, text: &str) -> Fingerprint {
        place_at(ledger, text, 0).fingerprint
    }
}

#[cfg(test)]
mod tests;
