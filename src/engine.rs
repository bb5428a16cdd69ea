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
//! ([`crate::shingle_index`]) and the long-text sketch index
//! ([`crate::sketch`]). Every candidate is confirmed before it counts:
//!
//! - short text: bigram Jaccard with the candidate and with its root, same
//!   numbers, same places when both name any, and close in reading order
//!   ([`crate::edits`]; very short texts only with the same letters);
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
//! Consequences: a leaf found by the extra searches may be more than `k`
//! from every other member of its class, and two roots may be within `k`
//! when confirmation kept them apart; with both searches and all checks off
//! the forest is exactly SPEC §3. Side data costs memory per node (reported
//! in [`EngineStats`]; `benches/engine_scale.rs` measures it).

use std::collections::HashMap;
use std::sync::Arc;

use crate::edits::{self, EditSummary};
use crate::fingerprint::{
    Fingerprinter, PreparedText, bigram_jaccard, jaccard, letters_with_breaks, shared_count,
};
use crate::forest::{Assignment, Fingerprint, Forest, Millis, Placement};
use crate::shingle_index::{LshShape, ShingleIndex};
use crate::sketch::{SKETCH_SIZE, SketchIndex, estimate_jaccard};
use crate::synonyms::Synonyms;

/// How many distinct exact-text hashes are remembered per node: enough for
/// the usual handful of verbatim variants without unbounded growth on a node
/// that thousands of slightly different texts hash to.
const MAX_EXACT_HASHES_PER_NODE: usize = 4;

/// How many one-bit flips a text whose fingerprint is taken by a node that
/// does not confirm it tries (see
/// [`ConfirmationConfig::confirm_identical_fingerprints`]). When all are
/// taken too (a report recurring more often than this within the
/// retention), it joins the node of its own fingerprint as rule 1 says:
/// each probe costs a confirmation, and this bounds them.
const IDENTICAL_FINGERPRINT_PROBES: u32 = 8;

/// Lowest bigram Jaccard at which a short text that contains (or is
/// contained in) a candidate can still join it.
const CONTAINED_JACCARD_FLOOR: f64 = 0.5;

/// How candidates are found (the two extra searches) and confirmed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmationConfig {
    /// A short text joins a candidate node only if the character-bigram
    /// Jaccard similarity of the two texts is at least this, or at least
    /// 0.5 with `min_short_containment` of one text's bigrams inside the
    /// other's...
    pub min_short_jaccard: f64,
    /// See `min_short_jaccard`.
    pub min_short_containment: f64,
    /// ...and its similarity to the candidate's root (the class's first
    /// text) is at least this, so a class cannot drift away from its root
    /// one small step at a time (templates that differ in one word chain
    /// that way; real reprints are all close to their original).
    pub min_short_root_jaccard: f64,
    /// ...and both report the same numbers (long texts found by sketch: the
    /// numbers of one are all in the other)...
    pub require_same_numbers: bool,
    /// ...and, when both name places, the same places.
    pub require_same_places: bool,
    /// A long text found through its shingle sketch joins only at this
    /// estimated character-5-gram Jaccard similarity or more...
    pub min_long_jaccard: f64,
    /// ...and, when both documents have a headline, at this headline
    /// character-bigram Jaccard similarity or more.
    pub min_headline_jaccard: f64,
    /// Look short texts up in the MinHash LSH (`shingle_index`) besides the
    /// simhash multi-index. Off: short texts join only simhash neighbours
    /// (still confirmed), and the LSH costs no memory.
    pub short_text_search: bool,
    /// Look long texts up by their bottom-k sketch (`sketch`). Off: no
    /// sketch is computed or stored (about 300 bytes less per long node).
    pub long_text_search: bool,
    /// Short texts are also compared in reading order ([`crate::edits`]):
    /// a short text joins only when at most [`allowed_unmatched_chars`] of
    /// the shorter one's letters are outside the common subsequence, the
    /// texts differ in at most one place besides marked tags at their
    /// edges (a word swapped, added or dropped: see
    /// [`EditSummary::unmarked_edits`]), and no numeral was replaced by
    /// another. Off: bigram sets only.
    pub short_edit_check: bool,
    /// With `short_edit_check`, texts whose shorter one has fewer letters
    /// and digits than this join only when both have the same letters in
    /// the same order: in a text of a few characters one character is a
    /// different question ("打开X" / "关闭X"), and no character measure
    /// tells an added word from an added repost tag.
    pub min_fuzzy_chars: usize,
    /// With `short_edit_check`, a short text does not join a text it
    /// differs from in a content word (see
    /// [`EditSummary::content_word_changed`]): recurring headlines differ in
    /// one name, verb or figure ("…开幕" / "…闭幕"), while a reprint adds
    /// tags and fillers or swaps a function word. Long texts' similar
    /// headlines with a content word swapped disagree too, unless the bodies
    /// are the same text. Off: one swapped word of any kind is allowed.
    pub content_word_check: bool,
    /// Words the user declared equivalent: swapping one for another is not a
    /// change of content (see [`crate::synonyms`]). Empty by default.
    pub synonyms: Arc<Synonyms>,
    /// Long simhash neighbours (not only sketch candidates) join only with
    /// agreeing headlines: one boilerplate body (a disclaimer, a notice)
    /// under unrelated headlines carries the fingerprint otherwise.
    pub neighbour_headline_check: bool,
    /// Long simhash neighbours join only when their bodies share at least
    /// this estimated character-5-gram Jaccard similarity: a shared
    /// headline and frame can carry two reports' simhashes within k while
    /// half their sentences differ (a yearly notice). Reprints, even cut to
    /// three quarters with a boilerplate block added, stay above it.
    pub min_neighbour_jaccard: f64,
    /// A text whose fingerprint is already a node joins that node only if
    /// the node's text confirms it, like any candidate (SPEC §3 rule 1
    /// trusts the fingerprint alone). Otherwise it takes the nearest
    /// fingerprint, one bit flipped, that is free or whose node confirms:
    /// every node stays one class member, and two texts that differ only
    /// in their figures (a recurring report) no longer share a node.
    pub confirm_identical_fingerprints: bool,
}

impl Default for ConfirmationConfig {
    fn default() -> Self {
        ConfirmationConfig {
            min_short_jaccard: 0.65,
            min_short_containment: 0.9,
            min_short_root_jaccard: 0.5,
            require_same_numbers: true,
            require_same_places: true,
            min_long_jaccard: 0.7,
            min_headline_jaccard: 0.2,
            short_text_search: true,
            long_text_search: true,
            short_edit_check: true,
            min_fuzzy_chars: 12,
            content_word_check: true,
            synonyms: Arc::new(Synonyms::empty()),
            neighbour_headline_check: true,
            min_neighbour_jaccard: 0.5,
            confirm_identical_fingerprints: true,
        }
    }
}

/// What a short text's node remembers to confirm later candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortText {
    pub shingles: Box<[u32]>,
    /// The letters and digits of the text, fields separated by
    /// [`crate::fingerprint::FIELD_SEPARATOR`].
    pub letters: Box<str>,
    pub number_signature: u64,
    pub place_signature: u64,
}

/// What a long text's node remembers to confirm sketch candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongText {
    pub sketch: Box<[u32]>,
    /// Letters and digits of the headline, when the document has one.
    pub headline: Option<Box<str>>,
    /// The first [`LEAD_CHARS`] letters and digits of the body.
    pub lead: Box<str>,
    pub numbers: Box<[u32]>,
}

/// How much of a body's start is kept to recognise a headline taken from it.
const LEAD_CHARS: usize = 48;

/// Estimated body Jaccard from which two long texts count as one body
/// under reworded headlines (see [`LongText::same_body`]). Recurring
/// reports share their frame but not their facts, and stay below it.
const SAME_BODY_JACCARD: f64 = 0.9;

/// How much of a headline must appear in the other copy's lead.
const HEADLINE_PREFIX_CHARS: usize = 16;

impl ShortText {
    /// A short candidate (and the root of its class, when that is another
    /// node) is close enough to join: similar bigrams, close to the root too
    /// (a class cannot drift one word at a time), the same numbers, and the
    /// same places when both name any (a place added by a repost, "【北京】…",
    /// is not a different place).
    fn confirms(
        &self,
        candidate: &ShortText,
        candidate_root: Option<&ShortText>,
        config: &ConfirmationConfig,
    ) -> bool {
        let places_differ = self.place_signature != 0
            && candidate.place_signature != 0
            && self.place_signature != candidate.place_signature;
        let numbers_differ = self.number_signature != candidate.number_signature;
        let vetoed = (config.require_same_places && places_differ)
            || (config.require_same_numbers && numbers_differ);
        let root_is_close = candidate_root.is_none_or(|root| {
            jaccard(&self.shingles, &root.shingles) >= config.min_short_root_jaccard
        });
        !vetoed
            && (!config.short_edit_check
                || edits_allow_join(
                    &edits::compare_with(&self.letters, &candidate.letters, &config.synonyms),
                    config,
                ))
            && short_texts_close(
                &self.shingles,
                &candidate.shingles,
                config.min_short_jaccard,
                config.min_short_containment,
            )
            && root_is_close
    }
}

impl LongText {
    /// Truncation drops figures and an added paragraph brings some, but a
    /// reprint never changes them: one number set contains the other.
    fn numbers_compatible(&self, other: &LongText) -> bool {
        one_contains_the_other(&self.numbers, &other.numbers)
    }

    /// A candidate found by the sketch index joins when the bodies' estimated
    /// Jaccard is high enough, the headlines agree and the numbers are
    /// compatible.
    fn confirms_sketch_candidate(&self, candidate: &LongText, config: &ConfirmationConfig) -> bool {
        (!config.require_same_numbers || self.numbers_compatible(candidate))
            && self.headlines_agree(candidate, config)
            && estimate_jaccard(&self.sketch, &candidate.sketch, SKETCH_SIZE)
                >= config.min_long_jaccard
    }

    /// Headlines agree when they are similar (character bigrams), or when
    /// one is the start of the other copy's body: aggregators title a
    /// reprint with its first sentence. With `content_word_check`, similar
    /// headlines that are one headline with a word swapped ("…英文版出版发行"
    /// / "…法文版出版发行") over bodies that are not the same text do not
    /// agree: a recurring report keeps its headline's frame, a reprint keeps
    /// its facts.
    fn headlines_agree(&self, other: &LongText, config: &ConfirmationConfig) -> bool {
        let (Some(ours), Some(theirs)) = (&self.headline, &other.headline) else {
            return true;
        };
        let taken_from_lead = |headline: &str, lead: &str| {
            let prefix: String = headline
                .chars()
                .filter(|&c| c != ' ')
                .take(HEADLINE_PREFIX_CHARS)
                .collect();
            prefix.chars().count() >= 8 && lead.contains(prefix.as_str())
        };
        if taken_from_lead(ours, &other.lead) || taken_from_lead(theirs, &self.lead) {
            return true;
        }
        bigram_jaccard(ours, theirs) >= config.min_headline_jaccard
            && !(config.content_word_check
                && one_fact_edited(ours, theirs, &config.synonyms)
                && !self.same_body(other, &config.synonyms))
    }

    /// The bodies share at least `min_jaccard` of their text (estimated by
    /// their sketches; true without sketches).
    fn shares_enough_body(&self, other: &LongText, min_jaccard: f64) -> bool {
        self.sketch.is_empty()
            || other.sketch.is_empty()
            || estimate_jaccard(&self.sketch, &other.sketch, SKETCH_SIZE) >= min_jaccard
    }

    /// The bodies are (nearly) the same text, by their sketches, and their
    /// leads do not swap a word either: then a headline edit is an editor's
    /// rewording, not another report (wire reprints retitle a story:
    /// "…PROPOSALS" / "…IDEAS"; a recurring report swaps the word in its
    /// lead too: "…一书法文版…" / "…一书俄文版…"). Unknown without sketches
    /// (`long_text_search` off).
    fn same_body(&self, other: &LongText, synonyms: &Synonyms) -> bool {
        !self.sketch.is_empty()
            && !other.sketch.is_empty()
            && estimate_jaccard(&self.sketch, &other.sketch, SKETCH_SIZE) >= SAME_BODY_JACCARD
            && !one_fact_edited(&self.lead, &other.lead, synonyms)
    }
}

/// Two headlines are one headline with a content word swapped for another
/// or dropped inside it (see [`EditSummary::content_word_replaced`] and
/// [`EditSummary::content_word_dropped`]): at least half of each is the same
/// words in the same order. Added words are not enough (a
/// reprint titled with its lead sentence adds places, dates and names to
/// the original headline's words), and neither is a figure written another
/// way ("第二十九次" / "第29次").
fn one_fact_edited(ours: &str, theirs: &str, synonyms: &Synonyms) -> bool {
    let summary = edits::compare_with(ours, theirs, synonyms);
    let common = summary.shorter_chars - summary.unmatched_in_shorter;
    (summary.content_word_replaced || summary.content_word_dropped)
        && common * 2 >= summary.shorter_chars
        && common * 2 >= summary.longer_chars
}

#[derive(Debug, Clone)]
struct NodeSideData {
    /// The node's root. Fixed for the node's life: trees never merge, and a
    /// root leaves only together with its whole tree.
    root: Fingerprint,
    exact_hashes: Vec<u64>,
    /// Set when the text that created the node was short.
    short_text: Option<ShortText>,
    /// Set when it was long.
    long_text: Option<LongText>,
}

impl NodeSideData {
    /// Heap bytes owned (not counting the struct itself).
    fn heap_bytes(&self) -> usize {
        let short = self
            .short_text
            .as_ref()
            .map_or(0, |short| short.shingles.len() * 4 + short.letters.len());
        let long = self.long_text.as_ref().map_or(0, |long| {
            (long.sketch.len() + long.numbers.len()) * 4
                + long.headline.as_ref().map_or(0, |headline| headline.len())
                + long.lead.len()
        });
        self.exact_hashes.capacity() * 8 + short + long
    }
}

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
}

/// Fingerprinter + forest + side data.
#[derive(Debug)]
pub struct Engine {
    analyzer: Analyzer,
    forest: Forest,
    confirmation: ConfirmationConfig,
    fingerprint_of_exact_hash: HashMap<u64, Fingerprint>,
    /// Shared (`Arc`) so a snapshot can hold on to it while the engine goes
    /// on: side data never changes but for its exact hashes (copied on write).
    side_data: HashMap<Fingerprint, Arc<NodeSideData>>,
    short_texts: ShingleIndex,
    long_texts: SketchIndex,
    /// Heap bytes owned by the values of `side_data`, kept up to date.
    side_heap_bytes: usize,
    stats: EngineStats,
    /// Effects of every change since the last [`Engine::take_journal`],
    /// when journaling is on (persistence).
    journal: Option<Vec<EngineEffect>>,
}

/// One change of the engine's state, enough to redo it without deciding
/// again ([`Engine::replay`]): what persistence writes to its log.
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
    },
    /// One document of `fingerprint` was taken back ([`Engine::forget_document`]).
    Forgotten { fingerprint: Fingerprint },
    /// These nodes expired.
    Expired { removed: Vec<Fingerprint> },
    /// One document of `fingerprint` was uncounted, the node kept
    /// ([`Engine::uncount`]).
    Uncounted { fingerprint: Fingerprint },
}

/// Side data held for a snapshot (see [`Engine::side_snapshot`]).
#[derive(Debug, Default)]
pub struct SideSnapshot(Vec<(u64, Fingerprint, Arc<NodeSideData>)>);

impl SideSnapshot {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Puts the entries in the arrival order of their nodes; `nodes` must
    /// be sorted by fingerprint. Entries without a node go last.
    pub fn sort_by_arrival(&mut self, nodes_by_fingerprint: &[crate::forest::NodeRecord]) {
        self.0
            .sort_unstable_by_key(|(_, fingerprint, _)| *fingerprint);
        let mut nodes = nodes_by_fingerprint.iter().peekable();
        for (arrival, fingerprint, _) in &mut self.0 {
            while nodes
                .next_if(|node| node.fingerprint < *fingerprint)
                .is_some()
            {}
            *arrival = match nodes.peek() {
                Some(node) if node.fingerprint == *fingerprint => node.arrival,
                _ => u64::MAX,
            };
        }
        self.0.sort_unstable_by_key(|(arrival, _, _)| *arrival);
    }

    pub fn for_each<'a>(&'a self, mut visit: impl FnMut(SideView<'a>)) {
        for (_, fingerprint, side) in &self.0 {
            visit(SideView {
                fingerprint: *fingerprint,
                root: side.root,
                exact_hashes: &side.exact_hashes,
                short_text: side.short_text.as_ref(),
                long_text: side.long_text.as_ref(),
            });
        }
    }
}

/// A node's side data, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct SideView<'a> {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub exact_hashes: &'a [u64],
    pub short_text: Option<&'a ShortText>,
    pub long_text: Option<&'a LongText>,
}

/// A node's side data as a snapshot stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideRecord {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub exact_hashes: Vec<u64>,
    pub short_text: Option<ShortText>,
    pub long_text: Option<LongText>,
}

impl Engine {
    pub fn new(
        fingerprinter: Fingerprinter,
        forest: Forest,
        confirmation: ConfirmationConfig,
    ) -> Self {
        Engine {
            analyzer: Analyzer {
                fingerprinter,
                long_text_search: confirmation.long_text_search,
            },
            forest,
            confirmation,
            fingerprint_of_exact_hash: HashMap::new(),
            side_data: HashMap::new(),
            short_texts: ShingleIndex::new(LshShape::default()),
            long_texts: SketchIndex::default(),
            side_heap_bytes: 0,
            stats: EngineStats::default(),
            journal: None,
        }
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
        let journal = self.journal.take();
        match effect {
            EngineEffect::Placed {
                now,
                fingerprint,
                root,
                exact_hash,
                short_text,
                long_text,
            } => {
                let assignment = self.forest.apply_placement(fingerprint, root, now);
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
                self.drop_side_data(&removed);
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
    pub fn side_snapshot(&self) -> SideSnapshot {
        SideSnapshot(
            self.side_data
                .iter()
                .map(|(&fingerprint, side)| (0, fingerprint, Arc::clone(side)))
                .collect(),
        )
    }

    /// Every node's side data, in the forest's arrival order (snapshots).
    pub fn side_records(&self) -> Vec<SideRecord> {
        self.forest
            .node_records()
            .into_iter()
            .filter_map(|node| {
                let side = self.side_data.get(&node.fingerprint)?;
                Some(SideRecord {
                    fingerprint: node.fingerprint,
                    root: side.root,
                    exact_hashes: side.exact_hashes.clone(),
                    short_text: side.short_text.clone(),
                    long_text: side.long_text.clone(),
                })
            })
            .collect()
    }

    /// An engine with this forest and side data (from a snapshot); the
    /// candidate indexes and the exact-hash map are rebuilt from the side
    /// data, in arrival order.
    pub fn restore(
        fingerprinter: Fingerprinter,
        forest: Forest,
        confirmation: ConfirmationConfig,
        sides: Vec<SideRecord>,
    ) -> Self {
        let mut engine = Engine::new(fingerprinter, forest, confirmation);
        engine.side_data.reserve(sides.len());
        engine.fingerprint_of_exact_hash.reserve(sides.len());
        for record in sides {
            if !engine.forest.contains(record.fingerprint) {
                continue;
            }
            let side = NodeSideData {
                root: record.root,
                exact_hashes: record.exact_hashes,
                short_text: record.short_text,
                long_text: record.long_text,
            };
            if let Some(short_text) = &side.short_text
                && engine.confirmation.short_text_search
            {
                engine
                    .short_texts
                    .insert(record.fingerprint, &short_text.shingles);
            }
            if let Some(long_text) = &side.long_text {
                engine
                    .long_texts
                    .insert(record.fingerprint, &long_text.sketch);
            }
            for &exact_hash in &side.exact_hashes {
                engine
                    .fingerprint_of_exact_hash
                    .insert(exact_hash, record.fingerprint);
            }
            engine.side_heap_bytes += side.heap_bytes();
            engine.side_data.insert(record.fingerprint, Arc::new(side));
        }
        engine
    }

    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.analyzer.fingerprinter
    }

    pub fn forest(&self) -> &Forest {
        &self.forest
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

    /// Place prepared text: the exact fast path, else simhash, candidates
    /// from the three searches, confirmation and assignment.
    pub fn add_prepared(&mut self, prepared: &PreparedText, now: Millis) -> Placed {
        if let Some(placed) = self.place_exact(prepared.exact_hash, now) {
            return placed;
        }
        let analysis = self.analyzer.analyze(prepared);
        self.place(analysis, now)
    }

    /// A cloneable handle that computes [`Analysis`] without the engine:
    /// callers that hold the engine behind a lock analyse outside it.
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// The exact fast path alone: places the text if the same normalised
    /// text was seen before.
    fn place_exact(&mut self, exact_hash: u64, now: Millis) -> Option<Placed> {
        let &fingerprint = self.fingerprint_of_exact_hash.get(&exact_hash)?;
        self.stats.exact_hits += 1;
        let assignment = self.forest.assign(fingerprint, now);
        self.record(|| EngineEffect::Placed {
            now,
            fingerprint,
            root: assignment.root,
            exact_hash: None,
            short_text: None,
            long_text: None,
        });
        Some(placed(fingerprint, assignment, true))
    }

    /// Places an analysed text: the exact fast path, else candidates from the
    /// three searches, confirmation and assignment. The document is counted
    /// in its node (see [`Engine::forget_document`] to take it back).
    pub fn place(&mut self, analysis: Analysis, now: Millis) -> Placed {
        if let Some(placed) = self.place_exact(analysis.exact_hash, now) {
            return placed;
        }
        let Analysis {
            exact_hash,
            fingerprint,
            short_text: own_short_text,
            long_text: own_long_text,
        } = analysis;
        let config = self.confirmation.clone();
        let side_data = &self.side_data;
        // Rule 1 with confirmation: an identical fingerprint joins only if
        // the node's text confirms too; otherwise the text takes the nearest
        // fingerprint (one bit flipped) that is free or whose node confirms.
        let fingerprint = if config.confirm_identical_fingerprints {
            let forest = &self.forest;
            std::iter::once(fingerprint)
                .chain((0..IDENTICAL_FINGERPRINT_PROBES).map(|bit| fingerprint ^ (1 << bit)))
                .find(|&probe| {
                    !forest.contains(probe)
                        || confirm_candidate(
                            side_data,
                            probe,
                            own_short_text.as_ref(),
                            own_long_text.as_ref(),
                            &config,
                        )
                        .unwrap_or(true)
                })
                .unwrap_or(fingerprint)
        } else {
            fingerprint
        };
        // Long texts: candidates by shared text too, when the edit moved the
        // simhash (see `sketch`).
        let sketch_candidates: Vec<Fingerprint> = match &own_long_text {
            Some(own) => self
                .long_texts
                .candidates(&own.sketch)
                .into_iter()
                .filter(|&candidate| candidate != fingerprint)
                .filter(|candidate| {
                    side_data
                        .get(candidate)
                        .and_then(|side| side.long_text.as_ref())
                        .is_some_and(|theirs| own.confirms_sketch_candidate(theirs, &config))
                })
                .collect(),
            None => Vec::new(),
        };
        let stats = &mut self.stats;
        let mut confirm = |candidate: Fingerprint| {
            let Some(confirmed) = confirm_candidate(
                side_data,
                candidate,
                own_short_text.as_ref(),
                own_long_text.as_ref(),
                &config,
            ) else {
                return true;
            };
            stats.confirmations += 1;
            if !confirmed {
                stats.confirmations_rejected += 1;
            }
            confirmed
        };
        // Short texts: candidates by shingle overlap too, since their simhash
        // rarely stays within k of a reprint's (see `shingle_index`).
        let shingle_candidates: Vec<Fingerprint> = match &own_short_text {
            Some(own) if config.short_text_search => self
                .short_texts
                .candidates(&own.shingles)
                .into_iter()
                .filter(|&candidate| candidate != fingerprint && confirm(candidate))
                .collect(),
            _ => Vec::new(),
        };
        let mut extra_candidates = shingle_candidates;
        extra_candidates.extend(sketch_candidates);
        let assignment =
            self.forest
                .assign_with_candidates(fingerprint, now, &extra_candidates, confirm);
        if self.journal.is_some() {
            let new_node = assignment.placement != Placement::ExistingNode;
            let (short_text, long_text) = if new_node {
                (own_short_text.clone(), own_long_text.clone())
            } else {
                (None, None)
            };
            self.record(|| EngineEffect::Placed {
                now,
                fingerprint,
                root: assignment.root,
                exact_hash: Some(exact_hash),
                short_text,
                long_text,
            });
        }
        self.remember(
            fingerprint,
            assignment,
            exact_hash,
            own_short_text,
            own_long_text,
        );
        placed(fingerprint, assignment, false)
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
        let assignment = self.forest.apply_placement(fingerprint, root, now);
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
            let side = from.side_data.get(&member);
            let exact_hash = side.and_then(|side| side.exact_hashes.first().copied());
            let short_text = side.and_then(|side| side.short_text.clone());
            let long_text = side.and_then(|side| side.long_text.clone());
            let assignment = self.forest.apply_placement(member, root, now);
            self.record(|| EngineEffect::Placed {
                now,
                fingerprint: member,
                root: assignment.root,
                exact_hash,
                short_text: short_text.clone(),
                long_text: long_text.clone(),
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
        let short_text_search = self.confirmation.short_text_search;
        let side = Arc::make_mut(self.side_data.entry(fingerprint).or_insert_with(|| {
            Arc::new(NodeSideData {
                root: assignment.root,
                exact_hashes: Vec::new(),
                short_text: None,
                long_text: None,
            })
        }));
        let side_bytes_before = side.heap_bytes();
        if assignment.placement != Placement::ExistingNode {
            if let Some(short_text) = own_short_text {
                if short_text_search {
                    self.short_texts.insert(fingerprint, &short_text.shingles);
                }
                side.short_text = Some(short_text);
            }
            if let Some(long_text) = own_long_text {
                self.long_texts.insert(fingerprint, &long_text.sketch);
                side.long_text = Some(long_text);
            }
        }
        if side.exact_hashes.len() < MAX_EXACT_HASHES_PER_NODE {
            side.exact_hashes.push(exact_hash);
            self.fingerprint_of_exact_hash
                .insert(exact_hash, fingerprint);
        }
        self.side_heap_bytes = self.side_heap_bytes + side.heap_bytes() - side_bytes_before;
    }

    /// Expire up to about `max_removals` nodes (see [`Forest::expire`]) and
    /// drop their side data. Returns the number of nodes removed and whether
    /// more expired nodes are pending.
    pub fn expire(&mut self, now: Millis, max_removals: usize) -> (usize, bool) {
        let progress = self.forest.expire(now, max_removals);
        self.drop_side_data(&progress.removed);
        if !progress.removed.is_empty() {
            let removed = progress.removed.clone();
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
        self.drop_side_data(&removed);
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

    fn drop_side_data(&mut self, removed: &[Fingerprint]) {
        for fingerprint in removed {
            if let Some(side) = self.side_data.remove(fingerprint) {
                self.side_heap_bytes = self.side_heap_bytes.saturating_sub(side.heap_bytes());
                if let Some(short_text) = &side.short_text {
                    self.short_texts.remove(*fingerprint, &short_text.shingles);
                }
                if let Some(long_text) = &side.long_text {
                    self.long_texts.remove(*fingerprint, &long_text.sketch);
                }
                for exact_hash in &side.exact_hashes {
                    self.fingerprint_of_exact_hash.remove(exact_hash);
                }
            }
        }
    }

    fn approx_heap_bytes(&self) -> usize {
        let map_entry = |key: usize, value: usize| key + value + 1;
        self.side_data.capacity() * map_entry(8, 8)
            + self.side_data.len() * (16 + std::mem::size_of::<NodeSideData>())
            + self.side_heap_bytes
            + self.fingerprint_of_exact_hash.capacity() * map_entry(8, 8)
            + self.short_texts.approx_heap_bytes()
            + self.long_texts.approx_heap_bytes()
    }

    pub fn stats(&self) -> EngineStats {
        EngineStats {
            side_data_nodes: self.side_data.len(),
            exact_hash_entries: self.fingerprint_of_exact_hash.len(),
            approx_heap_bytes: self.approx_heap_bytes(),
            ..self.stats
        }
    }
}

/// Everything the engine needs to place a text, computed without the
/// engine: the exact hash, the simhash and the side data the node will keep.
#[derive(Debug, Clone)]
pub struct Analysis {
    exact_hash: u64,
    fingerprint: Fingerprint,
    short_text: Option<ShortText>,
    long_text: Option<LongText>,
}

impl Analysis {
    /// The text's own fingerprint (the exact fast path may still place the
    /// text on the node of an identical earlier text).
    pub fn fingerprint(&self) -> Fingerprint {
        self.fingerprint
    }

    /// Hash of the normalised text.
    pub fn exact_hash(&self) -> u64 {
        self.exact_hash
    }

    /// The side data a node of this text keeps, as a snapshot stores it
    /// (for a node rebuilt at `fingerprint` in the class of `root`).
    pub fn side_record(self, fingerprint: Fingerprint, root: Fingerprint) -> SideRecord {
        SideRecord {
            fingerprint,
            root,
            exact_hashes: vec![self.exact_hash],
            short_text: self.short_text,
            long_text: self.long_text,
        }
    }
}

/// Computes [`Analysis`]: the costly, lock-free part of placing a document
/// (segmentation, simhash, shingles, sketch). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Analyzer {
    fingerprinter: Fingerprinter,
    long_text_search: bool,
}

impl Analyzer {
    /// An analyzer for other fields than the engine's own (per-index
    /// settings). `long_text_search` must match the engine's, or long texts
    /// lack the sketch its index expects.
    pub fn new(fingerprinter: Fingerprinter, long_text_search: bool) -> Self {
        Analyzer {
            fingerprinter,
            long_text_search,
        }
    }

    pub fn long_text_search(&self) -> bool {
        self.long_text_search
    }

    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.fingerprinter
    }

    /// Analyses a JSON document; `None` when none of the configured fields
    /// holds text.
    pub fn analyze_document(&self, document: &serde_json::Value) -> Option<Analysis> {
        let prepared = self.fingerprinter.prepare_document(document)?;
        Some(self.analyze(&prepared))
    }

    /// Analyses prepared text.
    pub fn analyze(&self, prepared: &PreparedText) -> Analysis {
        let (short_text, long_text) = self.describe(prepared);
        Analysis {
            exact_hash: prepared.exact_hash,
            fingerprint: self.fingerprinter.simhash(prepared),
            short_text,
            long_text,
        }
    }

    /// What the node of this text will remember, and what its candidates are
    /// confirmed against: a short text's bigrams, numbers and places, or a
    /// long text's sketch, numbers, headline and lead.
    fn describe(&self, prepared: &PreparedText) -> (Option<ShortText>, Option<LongText>) {
        let fingerprinter = &self.fingerprinter;
        if fingerprinter.is_short(prepared) {
            let short_text = ShortText {
                shingles: fingerprinter.shingle_set(prepared).into_boxed_slice(),
                letters: fingerprinter.letters(prepared).into_boxed_str(),
                number_signature: fingerprinter.number_signature(prepared),
                place_signature: fingerprinter.place_signature(prepared),
            };
            return (Some(short_text), None);
        }
        let long_text = LongText {
            sketch: if self.long_text_search {
                fingerprinter.body_sketch(prepared).into_boxed_slice()
            } else {
                Box::default()
            },
            numbers: fingerprinter.body_number_set(prepared).into_boxed_slice(),
            headline: fingerprinter
                .headline(prepared)
                .map(|headline| letters_with_breaks(headline).into_boxed_str()),
            lead: fingerprinter
                .body_lead(prepared, LEAD_CHARS)
                .into_boxed_str(),
        };
        (None, Some(long_text))
    }
}

/// Bigram sets of two short texts are close enough: Jaccard at least
/// `min_jaccard`, or at least [`CONTAINED_JACCARD_FLOOR`] when one set lies
/// almost wholly (`min_containment`) inside the other. A repost that only
/// added something (a prefix, a tag, a link) keeps all of the original's
/// bigrams; two different questions that share a frame ("…的意思是什么")
/// each have bigrams of their own.
fn short_texts_close(ours: &[u32], theirs: &[u32], min_jaccard: f64, min_containment: f64) -> bool {
    let similarity = jaccard(ours, theirs);
    if similarity >= min_jaccard {
        return true;
    }
    if similarity < CONTAINED_JACCARD_FLOOR {
        return false;
    }
    let smaller = ours.len().min(theirs.len());
    shared_count(ours, theirs) as f64 >= min_containment * smaller as f64
}

/// Whether `candidate`'s node confirms a text with this side data (see the
/// module doc); `None` when there is nothing to confirm against (the node
/// keeps no side data of the text's kind).
fn confirm_candidate(
    side_data: &HashMap<Fingerprint, Arc<NodeSideData>>,
    candidate: Fingerprint,
    own_short_text: Option<&ShortText>,
    own_long_text: Option<&LongText>,
    config: &ConfirmationConfig,
) -> Option<bool> {
    let candidate_side = side_data.get(&candidate)?;
    match (own_short_text, own_long_text) {
        (Some(ours), _) => {
            let theirs = candidate_side.short_text.as_ref()?;
            let root_text = side_data
                .get(&candidate_side.root)
                .filter(|_| candidate_side.root != candidate)
                .and_then(|root| root.short_text.as_ref());
            Some(ours.confirms(theirs, root_text, config))
        }
        // A long simhash neighbour is trusted, but for its figures, its
        // headline (when both have one) and a floor on shared text.
        (None, Some(ours)) => {
            let theirs = candidate_side.long_text.as_ref()?;
            Some(
                (!config.require_same_numbers || ours.numbers_compatible(theirs))
                    && (!config.neighbour_headline_check || ours.headlines_agree(theirs, config))
                    && ours.shares_enough_body(theirs, config.min_neighbour_jaccard),
            )
        }
        (None, None) => None,
    }
}

/// How many letters of the shorter of two short texts may lie outside their
/// common subsequence: two (a swapped word), one more per 30 letters.
pub fn allowed_unmatched_chars(shorter_chars: usize) -> usize {
    2 + shorter_chars / 30
}

/// The in-order comparison of two short texts allows them to join (see
/// [`ConfirmationConfig::short_edit_check`]).
fn edits_allow_join(summary: &EditSummary, config: &ConfirmationConfig) -> bool {
    if summary.shorter_chars < config.min_fuzzy_chars {
        return summary.identical();
    }
    summary.unmatched_in_shorter <= allowed_unmatched_chars(summary.shorter_chars)
        && summary.interior_substitutions <= 1
        && summary.unmarked_edits <= 1
        && !(config.require_same_numbers && summary.numeral_replaced)
        && !(config.content_word_check && summary.content_word_changed)
}

/// True when every element of one sorted set is in the other.
fn one_contains_the_other(left: &[u32], right: &[u32]) -> bool {
    shared_count(left, right) == left.len().min(right.len())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::FingerprintConfig;
    use crate::forest::ForestConfig;

    const HOUR: Millis = 3_600_000;

    fn engine_with(confirmation: ConfirmationConfig) -> Engine {
        let fingerprinter = Fingerprinter::new(FingerprintConfig::default()).expect("valid");
        let forest = Forest::new(ForestConfig::default()).expect("valid");
        Engine::new(fingerprinter, forest, confirmation)
    }

    /// Whether every text of `texts`, added in order to a fresh engine,
    /// joins the first one's class.
    fn texts_join(confirmation: ConfirmationConfig, texts: &[&str]) -> bool {
        let mut engine = engine_with(confirmation);
        let root = engine.add_text(texts[0], 0).root;
        (1..texts.len()).all(|index| engine.add_text(texts[index], index as Millis).root == root)
    }

    fn engine() -> Engine {
        engine_with(ConfirmationConfig::default())
    }

    #[test]
    fn verbatim_reprint_takes_the_exact_fast_path() {
        let mut engine = engine();
        let first = engine.add_text("今天天气很好，我们去公园散步。", 0);
        let again = engine.add_text("今天天气很好, 我们去公园散步!", 1);
        assert!(!first.exact_hit);
        assert!(again.exact_hit);
        assert_eq!(again.root, first.root);
        assert_eq!(again.placement, Placement::ExistingNode);
        assert_eq!(again.class_documents, 2);
        assert_eq!(engine.stats().exact_hits, 1);
    }

    #[test]
    fn short_repost_with_prefix_joins_through_shingle_candidates() {
        let mut engine = engine();
        let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
        let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 1);
        assert_ne!(repost.fingerprint, original.fingerprint);
        assert_eq!(repost.root, original.root);
    }

    #[test]
    fn short_texts_with_different_numbers_stay_apart_unless_allowed() {
        let text_one = "全市第3季度新增就业岗位一万个，创历史新高";
        let text_two = "全市第4季度新增就业岗位一万个，创历史新高";
        let mut strict = engine();
        let one = strict.add_text(text_one, 0);
        assert_ne!(strict.add_text(text_two, 1).root, one.root);
        let mut lenient = engine_with(ConfirmationConfig {
            require_same_numbers: false,
            ..ConfirmationConfig::default()
        });
        let one = lenient.add_text(text_one, 0);
        assert_eq!(lenient.add_text(text_two, 1).root, one.root);
    }

    #[test]
    fn a_class_does_not_drift_away_from_its_root() {
        // b is close to a; c is close to b but far from a (the root).
        let a = "明天有小雨气温下降请市民出门带伞注意保暖";
        let b = "明天有小雨气温下降请市民出门带伞注意安全";
        let c = "后天有小雨气温下降请市民出门带伞注意安全出行";
        // Bigram Jaccard: a–b 0.81, b–c 0.82, a–c 0.67.
        let with_root_check = |min_short_root_jaccard| {
            let mut engine = engine_with(ConfirmationConfig {
                min_short_jaccard: 0.7,
                min_short_root_jaccard,
                // b and c each swap a content word: without this, no step joins.
                content_word_check: false,
                ..ConfirmationConfig::default()
            });
            let root = engine.add_text(a, 0).root;
            assert_eq!(engine.add_text(b, 1).root, root);
            engine.add_text(c, 2).root == root
        };
        assert!(!with_root_check(0.7), "c must not join through b");
        assert!(
            with_root_check(0.0),
            "without the root check c chains in through b"
        );
    }

    #[test]
    fn short_texts_naming_different_places_stay_apart_unless_allowed() {
        let beijing = "【城市高质量发展系列新闻发布会】北京";
        let shanghai = "【城市高质量发展系列新闻发布会】上海";
        let mut strict = engine();
        let first = strict.add_text(beijing, 0);
        assert_ne!(strict.add_text(shanghai, 1).root, first.root);
        // A repost that adds a place-free tag still joins.
        assert_eq!(
            strict
                .add_text("转发：【城市高质量发展系列新闻发布会】北京", 2)
                .root,
            first.root
        );
        // A place swapped for another is also a content word swapped.
        let mut lenient = engine_with(ConfirmationConfig {
            require_same_places: false,
            content_word_check: false,
            ..ConfirmationConfig::default()
        });
        let first = lenient.add_text(beijing, 0);
        assert_eq!(lenient.add_text(shanghai, 1).root, first.root);
    }

    const LONG_BODY: &str = "本市今天召开城市更新工作推进会，会议总结了过去一年老旧小区改造、背街小巷整治和公共空间提升等方面取得的进展，并对下一阶段的重点任务作出具体部署。\
        会议指出，要坚持以居民需求为导向，统筹推进基础设施补短板和社区服务完善。\
        据介绍，今年全市计划改造老旧小区120个，涉及居民4万余户，同步加装电梯300部。";

    fn article(title: &str, content: &str) -> serde_json::Value {
        serde_json::json!({"title": title, "content": content})
    }

    #[test]
    fn long_copy_edited_in_its_longest_sentence_joins_through_its_sketch() {
        let mut engine = engine();
        let original = engine.add_document(&article("城市更新推进会召开", LONG_BODY), 0);
        // Typos in the longest sentence move the simhash; most text is shared.
        let edited = LONG_BODY
            .replace("老旧小区改造", "老旧小区改建")
            .replace("重点任务", "重要任务");
        let copy = engine.add_document(&article("城市更新推进会召开", &edited), 1);
        let (original, copy) = (original.expect("text"), copy.expect("text"));
        assert_ne!(copy.fingerprint, original.fingerprint);
        assert_eq!(copy.root, original.root);
        // A truncated copy keeps a subset of the numbers: it joins too.
        let truncated = &LONG_BODY[..LONG_BODY.find("同步加装").expect("marker")];
        assert_eq!(
            engine
                .add_document(&article("", truncated), 2)
                .map(|p| p.root),
            Some(original.root)
        );
    }

    #[test]
    fn headline_taken_from_the_other_copys_lead_agrees() {
        let long_text = |headline: Option<&str>, lead: &str| LongText {
            sketch: Box::default(),
            headline: headline.map(Into::into),
            lead: lead.into(),
            numbers: Box::default(),
        };
        let original = long_text(
            Some("老城焕新民生为先"),
            "本市今天召开城市更新工作推进会会议总结了过去一年",
        );
        // An aggregator's copy titled with the lead: no bigram in common.
        let lead_titled = long_text(
            Some("本市今天召开城市更新工作推进会会议"),
            "本市今天召开城市更新工作推进会",
        );
        assert!(lead_titled.headlines_agree(&original, &ConfirmationConfig::default()));
        assert!(original.headlines_agree(&lead_titled, &ConfirmationConfig::default()));
        // An unrelated headline over the same body does not agree.
        let unrelated = long_text(
            Some("暴雨预警发布后各区启动应急响应"),
            "本市今天召开城市更新工作推进会",
        );
        assert!(!unrelated.headlines_agree(&original, &ConfirmationConfig::default()));
        // Too short a headline proves nothing; no headline never disagrees.
        let tiny = long_text(Some("本市今天"), "x");
        assert!(!tiny.headlines_agree(&original, &ConfirmationConfig::default()));
        assert!(long_text(None, "x").headlines_agree(&original, &ConfirmationConfig::default()));
    }

    #[test]
    fn long_text_with_other_numbers_or_another_headline_stays_apart() {
        let mut engine = engine();
        let original = engine
            .add_document(&article("城市更新推进会召开", LONG_BODY), 0)
            .expect("text");
        let edited = LONG_BODY.replace("老旧小区改造", "老旧小区改建");
        // Same story shape, other figures: a different report.
        let other_figures = edited.replace("120个", "95个").replace("4万", "3万");
        let figures = engine
            .add_document(&article("城市更新推进会召开", &other_figures), 1)
            .expect("text");
        assert_ne!(figures.root, original.root);
        // The same body under an unrelated headline: boilerplate, not a reprint.
        let unrelated = engine
            .add_document(&article("暴雨预警发布后各区启动应急响应", &edited), 2)
            .expect("text");
        assert_ne!(unrelated.root, original.root);
    }

    #[test]
    fn a_recurring_report_with_a_headline_word_swapped_stays_apart_but_a_retitled_reprint_joins() {
        let report = |edition: &str| {
            let body = format!(
                "{LONG_BODY}市档案馆编写的城市更新画册{edition}版近日出版，面向海内外发行。\
                 画册{edition}版收录了十年来的改造案例，{edition}版读者可以了解城市的变化。"
            );
            article(&format!("城市更新画册{edition}版出版发行"), &body)
        };
        let join = |confirmation: ConfirmationConfig, second: &serde_json::Value| {
            let mut engine = engine_with(confirmation);
            let first = engine.add_document(&report("英文"), 0).expect("text");
            engine.add_document(second, 1).expect("text").root == first.root
        };
        let strict = ConfirmationConfig::default();
        let lenient = ConfirmationConfig {
            content_word_check: false,
            ..strict.clone()
        };
        let other_edition = report("法文");
        assert!(
            !join(strict.clone(), &other_edition),
            "another edition is another report"
        );
        assert!(
            join(lenient, &other_edition),
            "found as a candidate otherwise"
        );
        // The same body under a reworded headline: an editor's retitling.
        let mut retitled = report("英文");
        retitled["title"] = "城市更新画册英文版印刷发行".into();
        assert!(join(strict.clone(), &retitled));
        // Declared synonyms make another edition a rewording.
        let synonyms = crate::synonyms::Synonyms::parse("英文, 法文", Default::default());
        let with_synonyms = ConfirmationConfig {
            synonyms: Arc::new(synonyms.expect("valid")),
            ..strict
        };
        assert!(join(with_synonyms, &other_edition));
    }

    #[test]
    fn reprints_that_credit_different_outlets_join_whichever_arrives_first() {
        let article =
            |content: &str| serde_json::json!({"title": "图书馆延长开放时间", "content": content});
        let text = "为方便读者，市图书馆自下月起延长开放时间，周一至周五开放至晚上九点。";
        let copies = [
            format!("（来源：第晨报）{text}"),
            format!("（来源：第晚报）{text}"),
            format!("{text}——来自城市日报"),
            format!("（来源：城市日报）{text}"),
            text.to_string(),
        ];
        // Every rotation of the list, forwards and backwards.
        for rotation in 0..copies.len() {
            for backwards in [false, true] {
                let mut order: Vec<&String> = copies.iter().collect();
                order.rotate_left(rotation);
                if backwards {
                    order.reverse();
                }
                let mut engine = engine();
                let roots: Vec<Fingerprint> = order
                    .iter()
                    .enumerate()
                    .map(|(index, content)| {
                        let placed = engine.add_document(&article(content), index as Millis);
                        placed.expect("text").root
                    })
                    .collect();
                assert!(
                    roots.iter().all(|&root| root == roots[0]),
                    "{order:?}: {roots:x?}"
                );
            }
        }
    }

    #[test]
    fn a_recurring_report_that_swaps_its_fact_only_in_headline_and_lead_stays_apart() {
        // One word differs, in the headline and in the lead: the bodies are
        // nearly the same text, so the leads tell the editions apart.
        let report = |edition: &str| {
            article(
                &format!("城市更新画册{edition}版出版发行"),
                &format!(
                    "市档案馆编写的城市更新画册{edition}版近日出版，面向海内外发行。{LONG_BODY}"
                ),
            )
        };
        let mut engine = engine();
        let first = engine.add_document(&report("英文"), 0).expect("text");
        let other = engine.add_document(&report("法文"), 1).expect("text");
        assert_ne!(other.root, first.root);
        let again = engine.add_document(&report("英文"), 2).expect("text");
        assert_eq!(again.root, first.root);
    }

    #[test]
    fn a_short_text_with_a_declared_synonym_joins() {
        let first = "南湖大桥夜间施工期间实行单向通行";
        let synonym = "南湖大桥夜间施工期间实施单向通行";
        assert!(!texts_join(
            ConfirmationConfig::default(),
            &[first, synonym]
        ));
        let synonyms = crate::synonyms::Synonyms::parse("实行, 实施\n", Default::default());
        let declared = ConfirmationConfig {
            synonyms: Arc::new(synonyms.expect("valid")),
            ..ConfirmationConfig::default()
        };
        assert!(texts_join(declared.clone(), &[first, synonym]));
        // Other swaps are still changes.
        assert!(!texts_join(
            declared,
            &[first, "南湖大桥夜间施工期间取消单向通行"]
        ));
    }

    #[test]
    fn contained_short_texts_join_at_a_lower_jaccard() {
        let set = |range: std::ops::Range<u32>| range.collect::<Vec<u32>>();
        // 10 bigrams inside 18: Jaccard 0.56, fully contained.
        assert!(short_texts_close(&set(0..10), &set(0..18), 0.65, 0.9));
        // Same Jaccard, but each side has bigrams of its own.
        assert!(!short_texts_close(&set(0..14), &set(4..18), 0.65, 0.9));
        // Contained, but too small a share of the larger text.
        assert!(!short_texts_close(&set(0..5), &set(0..20), 0.65, 0.9));
        assert!(short_texts_close(&set(0..20), &set(0..20), 0.65, 0.9));
    }

    #[test]
    fn short_texts_with_the_same_words_in_another_order_stay_apart() {
        // Word features would give both one fingerprint, and an existing
        // fingerprint joins without confirmation (rule 1).
        let mut engine = engine();
        let first = engine.add_text("打开蓝牙", 0);
        let second = engine.add_text("蓝牙打开", 1);
        assert_ne!(second.fingerprint, first.fingerprint);
        assert_ne!(second.root, first.root);
    }

    #[test]
    fn short_texts_in_another_order_or_with_two_swaps_stay_apart() {
        let mut engine = engine();
        let first = engine.add_text("这趟列车从东湖站出发，经过三个换乘站，最终到达西山站", 0);
        // Same characters, the two stations swapped: bigrams barely differ.
        let swapped = engine.add_text("这趟列车从西山站出发，经过三个换乘站，最终到达东湖站", 1);
        assert_ne!(swapped.root, first.root);
        // A repost that only adds a tag still joins.
        let repost = engine.add_text(
            "转发：这趟列车从东湖站出发，经过三个换乘站，最终到达西山站 #出行#",
            2,
        );
        assert_eq!(repost.root, first.root);
        let mut lenient = engine_with(ConfirmationConfig {
            short_edit_check: false,
            ..ConfirmationConfig::default()
        });
        let first = lenient.add_text("这趟列车从东湖站出发，经过三个换乘站，最终到达西山站", 0);
        let swapped = lenient.add_text("这趟列车从西山站出发，经过三个换乘站，最终到达东湖站", 1);
        assert_eq!(swapped.root, first.root, "bigrams alone join them");
    }

    #[test]
    fn a_short_text_with_one_swapped_function_word_joins_but_not_with_a_replaced_numeral() {
        let mut engine = engine();
        let first = engine.add_text("市体育中心今晚怎么举行第二届社区篮球联赛开幕式", 0);
        let synonym = engine.add_text("市体育中心今晚如何举行第二届社区篮球联赛开幕式", 1);
        assert_eq!(synonym.root, first.root);
        let other_edition = engine.add_text("市体育中心今晚怎么举行第三届社区篮球联赛开幕式", 2);
        assert_ne!(other_edition.root, first.root);
    }

    #[test]
    fn short_texts_that_differ_in_a_content_word_stay_apart_unless_allowed() {
        let opening = "本台明天将直播全市青少年科技创新大赛开幕式";
        let closing = "本台明天将直播全市青少年科技创新大赛闭幕式";
        // An added filler word is not a changed fact.
        let filler = "本台明天将直播全市青少年科技创新大赛正式开幕式";
        // Two words added in two places is a rewrite, not a repost.
        let two_fillers = "本台明天将正式直播全市青少年科技创新大赛积极开幕式";
        let strict = ConfirmationConfig::default();
        assert!(!texts_join(strict.clone(), &[opening, closing]));
        assert!(texts_join(strict.clone(), &[opening, filler]));
        assert!(!texts_join(strict, &[opening, two_fillers]));
        let lenient = ConfirmationConfig {
            content_word_check: false,
            ..ConfirmationConfig::default()
        };
        assert!(texts_join(lenient, &[opening, closing]));
    }

    #[test]
    fn very_short_texts_join_only_the_same_letters() {
        let mut engine = engine();
        let first = engine.add_text("帮我订明早的闹钟", 0);
        assert_ne!(engine.add_text("帮我订明早的闹钟吧", 1).root, first.root);
        // Punctuation and width are not letters: the exact path joins.
        assert_eq!(engine.add_text("帮我订明早的闹钟！", 2).root, first.root);
        let mut lenient = engine_with(ConfirmationConfig {
            min_fuzzy_chars: 0,
            ..ConfirmationConfig::default()
        });
        let first = lenient.add_text("帮我订明早的闹钟", 0);
        assert_eq!(lenient.add_text("帮我订明早的闹钟吧", 1).root, first.root);
    }

    #[test]
    fn long_neighbours_with_unrelated_headlines_stay_apart() {
        let notice = "本号所发内容仅供读者参考，不构成任何投资、医疗或法律方面的建议，读者据此操作风险自担，本号对因使用上述内容而产生的任何直接或间接损失不承担责任，也不对其准确性、完整性和及时性作出任何保证。\
            转载请注明出处，未经许可不得用于商业用途，违者将依法追究相关责任。\
            如对内容有疑问，请通过页面下方的留言功能与编辑部联系，我们会尽快回复并处理相关问题。";
        let mut engine = engine();
        let first = engine
            .add_document(&article("支教老师到岗", notice), 0)
            .expect("text");
        let other = engine
            .add_document(&article("观鸟步道开放", notice), 1)
            .expect("text");
        // One fingerprint (the body dominates), but the headlines disagree.
        assert_ne!(other.root, first.root);
        let mut lenient = engine_with(ConfirmationConfig {
            neighbour_headline_check: false,
            confirm_identical_fingerprints: false,
            ..ConfirmationConfig::default()
        });
        let first = lenient
            .add_document(&article("支教老师到岗", notice), 0)
            .expect("text");
        let other = lenient
            .add_document(&article("观鸟步道开放", notice), 1)
            .expect("text");
        assert_eq!(other.root, first.root);
    }

    #[test]
    fn long_neighbours_that_share_less_than_half_their_body_stay_apart_unless_allowed() {
        // One headline and one longest sentence (so one simhash), and the
        // rest of the two bodies different: a yearly notice, not a reprint.
        let longest = "市委组织部近日下发通知，要求各级党组织在元旦春节期间认真开展走访慰问老党员和生活困难党员活动。";
        let notice = |rest: &str| {
            article(
                "组织部下发通知开展节日走访慰问",
                &format!("{longest}{rest}"),
            )
        };
        let this_year = notice(
            "通知要求用心用情做好走访工作。对新中国成立前入党的老党员要普遍走访。\
             要关心关爱基层干部。做好因公牺牲干部家属的慰问。",
        );
        let last_year = notice(
            "各地要结合实际制定方案。慰问资金由党费列支并及时拨付。\
             严禁借慰问之名送礼。活动情况请于一月底前报送。",
        );
        let apart = |min_neighbour_jaccard: f64| {
            let mut engine = engine_with(ConfirmationConfig {
                min_neighbour_jaccard,
                ..ConfirmationConfig::default()
            });
            let first = engine.add_document(&this_year, 0).expect("text");
            let second = engine.add_document(&last_year, 1).expect("text");
            second.root != first.root
        };
        assert!(apart(0.5));
        assert!(!apart(0.0), "the same fingerprint joins without the floor");
    }

    #[test]
    fn an_identical_fingerprint_with_other_figures_takes_a_free_one() {
        let report = |figure: &str| {
            article(
                "本周蔬菜价格",
                &format!(
                    "市农业部门今天发布本周主要蔬菜批发价格监测情况，各品种价格总体平稳，供应充足，市场运行有序，\
                     部分叶菜受天气影响上市量略有减少，根茎类蔬菜库存较多，预计下周价格仍将保持稳定。\
                     其中白菜每公斤{figure}元，与上周相比有所变化。"
                ),
            )
        };
        let mut engine = engine();
        let first = engine.add_document(&report("1.8"), 0).expect("text");
        let second = engine.add_document(&report("2.3"), 1).expect("text");
        // The longest sentence (and so the simhash) is the same in both.
        let analyzer = engine.analyzer().clone();
        let own = analyzer.analyze_document(&report("2.3")).expect("text");
        assert_eq!(own.fingerprint(), first.fingerprint);
        assert_ne!(second.root, first.root);
        assert_eq!((second.fingerprint ^ first.fingerprint).count_ones(), 1);
        // A later copy of the second report finds its node again.
        let again = engine.add_document(&report("2.3"), 2).expect("text");
        assert_eq!(again.root, second.root);
        // Off: rule 1 joins on the fingerprint alone.
        let mut trusting = engine_with(ConfirmationConfig {
            confirm_identical_fingerprints: false,
            ..ConfirmationConfig::default()
        });
        let first = trusting.add_document(&report("1.8"), 0).expect("text");
        let second = trusting.add_document(&report("2.3"), 1).expect("text");
        assert_eq!(second.root, first.root);
    }

    #[test]
    fn unrelated_short_texts_are_separate() {
        let mut engine = engine();
        let open = engine.add_text("打开蓝牙", 0);
        assert_ne!(engine.add_text("关闭蓝牙", 1).root, open.root);
    }

    #[test]
    fn expiry_drops_side_data_with_the_nodes() {
        let mut engine = engine();
        let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
        assert_eq!(engine.stats().side_data_nodes, 1);
        let (removed, _) = engine.expire(72 * HOUR, 100);
        assert_eq!(removed, 1);
        let stats = engine.stats();
        assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
        // The repost now starts a class of its own: nothing stale was found.
        let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 72 * HOUR);
        assert_eq!(repost.placement, Placement::NewRoot);
        assert_ne!(repost.root, original.root);
        // And the original text is fingerprinted again, not found by exact hash.
        assert!(
            !engine
                .add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 72 * HOUR)
                .exact_hit
        );
    }

    #[test]
    fn analysis_outside_the_engine_places_like_add_text() {
        let mut direct = engine();
        let mut split = engine();
        let analyzer = split.analyzer().clone();
        for text in [
            "周末去哪儿玩？这五个公园的秋景美到不想走",
            "转发：周末去哪儿玩？这五个公园的秋景美到不想走",
            "周末去哪儿玩？这五个公园的秋景美到不想走",
        ] {
            let expected = direct.add_text(text, 0);
            let prepared = analyzer.fingerprinter().prepare(text);
            assert_eq!(split.place(analyzer.analyze(&prepared), 0), expected);
        }
    }

    #[test]
    fn a_rejected_only_document_leaves_no_class_behind() {
        let mut engine = engine();
        let placed = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
        assert!(engine.forget_document(placed.fingerprint));
        assert_eq!(engine.forest().stats().nodes, 0);
        let stats = engine.stats();
        assert_eq!((stats.side_data_nodes, stats.exact_hash_entries), (0, 0));
        // Nothing left to take back.
        assert!(!engine.forget_document(placed.fingerprint));
    }

    #[test]
    fn forgetting_a_root_with_members_keeps_the_class() {
        let mut engine = engine();
        let original = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
        let repost = engine.add_text("转发：周末去哪儿玩？这五个公园的秋景美到不想走", 1);
        assert_eq!(repost.root, original.root);
        assert!(engine.forget_document(original.fingerprint));
        let class = engine.forest().class(original.root).expect("class stays");
        assert_eq!(class.documents, 1);
        // Taking back the last member removes the leaf, then the empty root.
        assert!(engine.forget_document(repost.fingerprint));
        assert_eq!(engine.forest().stats().nodes, 0);
        assert_eq!(engine.stats().side_data_nodes, 0);
    }

    #[test]
    fn a_node_with_other_documents_stays_when_one_is_taken_back() {
        let mut engine = engine();
        let first = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 0);
        let second = engine.add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 1);
        assert!(second.exact_hit);
        assert!(engine.forget_document(first.fingerprint));
        let node = engine.forest().node(first.fingerprint).expect("node stays");
        assert_eq!(node.documents, 1);
        assert!(
            engine
                .add_text("周末去哪儿玩？这五个公园的秋景美到不想走", 2)
                .exact_hit
        );
    }
}
