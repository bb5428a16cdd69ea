//! A placement in two halves: deciding, which only reads the engine
//! (`&self`), and applying, which changes it (`&mut self`).
//!
//! Motivation: deciding is most of a placement's cost (the searches and
//! every confirmation); applying is a few map updates. Split this way, the
//! decisions of many documents can be taken at once against one state, on
//! as many threads as there are, and only the short second half needs the
//! engine to itself ([`super::batch`]). [`Engine::place`] is the two halves
//! back to back, so one document and a batch share every line that decides.
//!
//! Design: a [`Plan`] holds the analysis and what was decided: the node of
//! an identical earlier text (the exact fast path), or the node the text
//! takes with the roots it may join. The choice among several roots (rule
//! 4, by leaf count) is left to the apply step, which reads the counts as
//! they are then.

use super::recent::Footprint;
use super::{
    Analysis, Engine, EngineEffect, EngineStats, IDENTICAL_FINGERPRINT_PROBES, Placed,
    confirm_record, count_confirmation, placed,
};
use crate::candidates::sketch_index::SketchIndex;
use crate::confirm::boilerplate::MIN_IDENTIFYING_WEIGHT;
use crate::confirm::{FoundBy, LongText, NodeTexts, ShortText, UNKNOWN_WEIGHT};
use crate::fingerprint::PreparedText;
use crate::forest::Placement;
use crate::forest::numbers::NodeNumbers;
use crate::units::{Fingerprint, Millis, NodeId};

/// What placing one text was decided to be, against some state of the engine.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) decision: Decision,
    /// What the decision read (empty for a text found by the exact fast
    /// path before it was analysed).
    pub(super) footprint: Footprint,
    /// Confirmations counted while deciding, added to the engine's when
    /// the plan is applied.
    confirmations: EngineStats,
    /// The texts as the stream judged them, when the sentences it found
    /// common made the body stop identifying the story (see
    /// [`Engine::learned_weight`]): the node keeps these.
    learned: Option<LearnedTexts>,
}

/// A text's descriptions with its body judged by the sentences the stream
/// found common: the long text's identifying weight lowered, and the
/// short description (the repost reading's) given its headline and that
/// weight, so the headline decides on both paths.
#[derive(Debug)]
struct LearnedTexts {
    long: Option<LongText>,
    short: Option<ShortText>,
}

#[derive(Debug)]
pub(super) enum Decision {
    /// The same normalised text is on this node. `analysis` is `None` for a
    /// text found there before it was analysed ([`Engine::add_prepared`]).
    Exact {
        node: Fingerprint,
        analysis: Option<Analysis>,
    },
    /// The text takes `node` (counted there if it is one), else joins one
    /// of `roots` (a new root when there are none).
    Place {
        node: Fingerprint,
        roots: Vec<Fingerprint>,
        analysis: Analysis,
    },
}

impl Plan {
    /// A text the exact fast path found on `node`.
    pub(super) fn exact(node: Fingerprint) -> Plan {
        Plan {
            decision: Decision::Exact {
                node,
                analysis: None,
            },
            footprint: Footprint::default(),
            confirmations: EngineStats::default(),
            learned: None,
        }
    }

    /// The analysis the plan was made from, to decide again.
    pub(super) fn into_analysis(self) -> Option<Analysis> {
        match self.decision {
            Decision::Exact { analysis, .. } => analysis,
            Decision::Place { analysis, .. } => Some(analysis),
        }
    }
}

impl Engine {
    /// Place prepared text: the exact fast path, else simhash, candidates
    /// from the three searches, confirmation and assignment.
    pub fn add_prepared(&mut self, prepared: &PreparedText, now: Millis) -> Placed {
        if let Some(node) = self.exact_node(prepared.exact_hash) {
            let plan = Plan::exact(node);
            return self.apply(plan, now);
        }
        let analysis = self.analyzer.analyze(prepared);
        self.place(analysis, now)
    }

    /// The node holding the same normalised text, if any (the exact fast
    /// path).
    pub(super) fn exact_node(&self, exact_hash: u64) -> Option<Fingerprint> {
        let side_data = &self.side_data;
        let id = self.exact_hashes.get(exact_hash, |node| {
            side_data.holds_exact_hash(node, exact_hash)
        })?;
        self.forest.fingerprint_at(id)
    }

    /// Places an analysed text: the exact fast path, else candidates from the
    /// three searches, confirmation and assignment. The document is counted
    /// in its node (see [`Engine::forget_document`] to take it back).
    pub fn place(&mut self, analysis: Analysis, now: Millis) -> Placed {
        let plan = self.plan(analysis);
        self.apply(plan, now)
    }

    /// Decides where a text goes, changing nothing: the exact fast path,
    /// else its own node (or a free one next to it), the candidates of the
    /// two extra searches and of the forest within `k`, confirmed.
    pub(super) fn plan(&self, analysis: Analysis) -> Plan {
        let footprint = self.footprint(&analysis);
        if let Some(node) = self.exact_node(analysis.exact_hash) {
            return Plan {
                decision: Decision::Exact {
                    node,
                    analysis: Some(analysis),
                },
                footprint,
                confirmations: EngineStats::default(),
                learned: None,
            };
        }
        let mut confirmations = EngineStats::default();
        // A body whose identifying sentences the stream found to be many
        // classes' boilerplate identifies nothing: the headline decides,
        // as for the prior's boilerplate.
        let learned = self.learned_weight(&analysis).map(|weight| LearnedTexts {
            long: analysis
                .long_text
                .as_ref()
                .map(|long| long.with_identifying_weight(weight)),
            short: self.short_with_learned_weight(&analysis, weight),
        });
        let own = NodeTexts {
            short: learned
                .as_ref()
                .and_then(|learned| learned.short.as_ref())
                .or(analysis.short_text.as_ref()),
            long: learned
                .as_ref()
                .and_then(|learned| learned.long.as_ref())
                .or(analysis.long_text.as_ref()),
        };
        let (mut node, mut roots) =
            self.decide(analysis.fingerprint, own, &footprint, &mut confirmations);
        // A body the stream carries under other stories' headlines, which
        // does not tell this one's, is judged as boilerplate: the headline
        // decides. Asked only of a text that joins something (judging the
        // body boilerplate only makes joins stricter, so a text that joins
        // nothing is placed the same), and decided again if so. The node
        // keeps the text as analysed; the next text decides from the state.
        let joins = !roots.is_empty() || self.forest.number(node).is_some();
        if joins
            && !analysis.headline_told_by_body
            && let Some(long) = own.long
            && self.body_is_common(long)
        {
            let common_body = long.with_body_not_identifying();
            let own = NodeTexts {
                long: Some(&common_body),
                ..own
            };
            (node, roots) = self.decide(analysis.fingerprint, own, &footprint, &mut confirmations);
        }
        Plan {
            decision: Decision::Place {
                node,
                roots,
                analysis,
            },
            footprint,
            confirmations,
            learned,
        }
    }

    /// The short description of a text with a headline, given the
    /// headline's field and `weight` as its body's (see
    /// `ShortText::headlines_allow`).
    fn short_with_learned_weight(&self, analysis: &Analysis, weight: u32) -> Option<ShortText> {
        let short = analysis.short_text.as_ref()?;
        analysis.long_text.as_ref()?.headline.as_ref()?;
        let field = u8::try_from(self.analyzer.fingerprinter().headline_field()?).ok()?;
        Some(
            short
                .clone()
                .with_headline(field, weight.min(short.body_weight)),
        )
    }

    /// The identifying weight of `analysis`'s long text without the
    /// sentences the stream found common, when that takes a body that
    /// identified its story below [`MIN_IDENTIFYING_WEIGHT`]; `None`
    /// otherwise (nothing changes).
    pub(super) fn learned_weight(&self, analysis: &Analysis) -> Option<u32> {
        let long = analysis.long_text.as_ref()?;
        if !long.identifies_by_body() || long.identifying_weight == UNKNOWN_WEIGHT {
            return None;
        }
        let common_halves = self
            .common_sentences
            .common_halves(&analysis.body_sentences);
        let common = u32::try_from(common_halves / 2).unwrap_or(u32::MAX);
        let weight = long.identifying_weight.saturating_sub(common);
        // A stock sentence or two in a story's own text (a company's
        // description, a standing quote) leave it a story: the stream
        // judges a body only when most of it is what many classes carry.
        (weight < MIN_IDENTIFYING_WEIGHT && common >= weight).then_some(weight)
    }

    /// The node a text takes and the roots it may join: its own node (or a
    /// free one next to it), the candidates of the two extra searches and
    /// of the forest within `k`, confirmed against `own`.
    fn decide(
        &self,
        fingerprint: Fingerprint,
        own: NodeTexts<'_>,
        footprint: &Footprint,
        confirmations: &mut EngineStats,
    ) -> (Fingerprint, Vec<Fingerprint>) {
        let node = self.node_for(fingerprint, own);
        let mut extra_candidates =
            self.shingle_candidates(node, own, &footprint.shingle_keys, confirmations);
        extra_candidates.extend(self.sketch_candidates(node, own, confirmations));
        if self.forest.number(node).is_some() {
            // Counted on its node: no root to choose.
            return (node, Vec::new());
        }
        let (side_data, config) = (&self.side_data, &self.confirmation);
        let confirm = |candidate: Fingerprint, id: NodeId, numbers: NodeNumbers<'_>| {
            let verdict = side_data.record_of(id).and_then(|record| {
                confirm_record(
                    side_data,
                    |root| numbers.number(root),
                    candidate,
                    record,
                    own,
                    FoundBy::SimhashDistance,
                    config,
                )
            });
            count_confirmation(confirmations, verdict)
        };
        let roots = self
            .forest
            .candidate_roots(node, &extra_candidates, confirm);
        (node, roots)
    }

    /// What deciding `analysis` reads beside the forest within `k`: its
    /// exact hash and its keys in the two text indices (the ones its node
    /// is stored under too).
    fn footprint(&self, analysis: &Analysis) -> Footprint {
        let mut footprint =
            self.index_keys(analysis.short_text.as_ref(), analysis.long_text.as_ref());
        footprint.simhash = analysis.fingerprint;
        footprint.exact_hash = analysis.exact_hash;
        if self.common_sentences.enabled() {
            footprint.sentence_keys = analysis.body_sentences.iter().map(|key| key.hash).collect();
        }
        footprint
    }

    /// The keys a node of these texts is stored under (and a text looks
    /// up) in the short-text and long-text indices (simhash and exact hash
    /// left at 0).
    pub(super) fn index_keys(
        &self,
        short: Option<&ShortText>,
        long: Option<&LongText>,
    ) -> Footprint {
        let shingle_keys = match short {
            Some(short) if self.confirmation.short_text_search => {
                self.short_texts.band_keys(short.shingles())
            }
            _ => Vec::new(),
        };
        let sketch_keys = long.map_or_else(Vec::new, |long| {
            SketchIndex::keys(&long.sketch).map(u64::from).collect()
        });
        Footprint {
            simhash: 0,
            exact_hash: 0,
            shingle_keys,
            sketch_keys,
            sentence_keys: Vec::new(),
        }
    }

    /// Carries a plan out on the engine as it is now. The plan must have
    /// been decided on this state, or on one whose differences cannot
    /// change it (see [`super::batch`]).
    pub(super) fn apply(&mut self, plan: Plan, now: Millis) -> Placed {
        self.stats.confirmations += plan.confirmations.confirmations;
        self.stats.confirmations_rejected += plan.confirmations.confirmations_rejected;
        let (node, roots, analysis) = match plan.decision {
            Decision::Exact { node, .. } => {
                self.stats.exact_hits += 1;
                let assignment = self.forest.assign(node, now);
                self.record(|| EngineEffect::Placed {
                    now,
                    fingerprint: node,
                    root: assignment.root,
                    exact_hash: None,
                    short_text: None,
                    long_text: None,
                    sentences: Vec::new(),
                });
                return placed(node, assignment, true);
            }
            Decision::Place {
                node,
                roots,
                analysis,
            } => (node, roots, analysis),
        };
        let Analysis {
            exact_hash,
            mut short_text,
            mut long_text,
            body_sentences,
            ..
        } = analysis;
        if let Some(learned) = plan.learned {
            long_text = learned.long.or(long_text);
            short_text = learned.short.or(short_text);
        }
        let indexing = self.indexing_of(short_text.as_ref(), long_text.as_ref());
        let assignment = self.forest.assign_to_roots(node, now, &roots, indexing);
        let changed = self
            .common_sentences
            .placed(&body_sentences, assignment.root, now);
        if !changed.is_empty() {
            self.recent.sentences_changed(&changed);
        }
        let new_node = assignment.placement != Placement::ExistingNode;
        self.recent
            .placed(exact_hash, new_node.then_some((node, &plan.footprint)));
        if self.journal.is_some() {
            let (short_text, long_text) = if new_node {
                (short_text.clone(), long_text.clone())
            } else {
                (None, None)
            };
            // What the table learnt, for a replay to learn it too.
            let sentences = self.common_sentences.keys_to_learn(&body_sentences);
            self.record(|| EngineEffect::Placed {
                now,
                fingerprint: node,
                root: assignment.root,
                exact_hash: Some(exact_hash),
                short_text,
                long_text,
                sentences,
            });
        }
        let shingle_keys = Some(plan.footprint.shingle_keys.as_slice());
        self.remember_keyed(
            node,
            assignment,
            exact_hash,
            short_text,
            long_text,
            shingle_keys,
        );
        placed(node, assignment, false)
    }

    /// The node a text takes. Rule 1 with confirmation: an identical
    /// fingerprint joins only if the node's text confirms too; otherwise
    /// the text takes the nearest fingerprint (one bit flipped) that is free
    /// or whose node confirms. The first [`IDENTICAL_FINGERPRINT_PROBES`]
    /// flips are confirmed; past them a text only looks for a free flip
    /// (a lookup, no confirmation): a template recurring more often than
    /// that (a notice, a bulletin) must not join the first one's node
    /// unconfirmed, and its neighbours within `k` of the free node are
    /// still confirmed by the search that follows. Only when all 64 flips
    /// are taken does the text join its own fingerprint's node, as rule 1
    /// says. The node stays within one bit of the fingerprint either way
    /// (what [`super::batch`] relies on).
    fn node_for(&self, fingerprint: Fingerprint, own: NodeTexts<'_>) -> Fingerprint {
        if !self.confirmation.confirm_identical_fingerprints {
            return fingerprint;
        }
        let flip = |bit: u32| fingerprint ^ (1 << bit);
        std::iter::once(fingerprint)
            .chain((0..IDENTICAL_FINGERPRINT_PROBES).map(flip))
            .find(|&probe| {
                let Some(id) = self.forest.number(probe) else {
                    return true;
                };
                self.side_data
                    .record_of(id)
                    .and_then(|record| {
                        confirm_record(
                            &self.side_data,
                            |root| self.forest.number(root),
                            probe,
                            record,
                            own,
                            FoundBy::SimhashDistance,
                            &self.confirmation,
                        )
                    })
                    .unwrap_or(true)
            })
            .or_else(|| {
                (IDENTICAL_FINGERPRINT_PROBES..Fingerprint::BITS)
                    .map(flip)
                    .find(|&probe| self.forest.number(probe).is_none())
            })
            .unwrap_or(fingerprint)
    }
}
