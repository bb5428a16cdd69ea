//! The two extra candidate searches of a placement (short texts by LSH,
//! long texts by sketch), each confirming its candidates in the index's
//! order within a bound per document.
//!
//! Motivation: on a feed whose texts share phrases, a document meets dozens
//! of candidates, and more as the engine fills; each short one costs an
//! alignment. Bounding the tries keeps a document's cost flat (see
//! `docs/decisions.md`, "A document tries a bounded number of candidates").

use super::side_record::record_texts;
use super::{Engine, EngineStats, confirm_record, count_confirmation};
use crate::confirm::{FoundBy, LongText, NodeTexts};
use crate::units::Fingerprint;

/// How many short-text candidates one document may try to confirm. On a
/// stream whose texts overlap (shared phrases, recurring fragments) the LSH
/// returns hundreds of candidates that share a band and little else; they
/// come ranked (most bands shared, then newest), so the ones past this
/// bound are the least likely, and each costs an alignment. With the
/// per-class bound below this keeps a document's cost flat as the engine
/// fills.
pub(super) const MAX_SHORT_CONFIRMATIONS: usize = 12;

/// How many long-text candidates one document may try to confirm (found by
/// shared sketch values, ranked like the short ones). A sketch check is
/// cheap, but each is a random read of a node's side data, and a feed of
/// texts built from shared sentences offers hundreds.
pub(super) const MAX_LONG_CONFIRMATIONS: usize = 16;

/// How many members of one class a document tries. A copy may be close to
/// one sibling and not to another (each repost edits its own way), so one
/// try is too few (DEV short F1 −0.003 at 3); a class whose six closest
/// members do not confirm does not confirm through a seventh.
pub(super) const MAX_TRIES_PER_CLASS: usize = 6;

/// How many other headlines one body must be carried under before it counts
/// as boilerplate (see [`Engine::body_is_common`]).
pub(super) const COMMON_BODY_HEADLINES: usize = 2;

impl Engine {
    /// Short texts: candidates by shingle overlap, since their simhash
    /// rarely stays within k of a reprint's (see
    /// [`crate::candidates::shingle_index`]); confirmed here, in the index's
    /// order (closest, then newest), one confirmed member per class, at most
    /// [`MAX_TRIES_PER_CLASS`] tried per class and
    /// [`MAX_SHORT_CONFIRMATIONS`] in all.
    pub(super) fn shingle_candidates(
        &self,
        fingerprint: Fingerprint,
        own: NodeTexts<'_>,
        band_keys: &[u64],
        stats: &mut EngineStats,
    ) -> Vec<Fingerprint> {
        if own.short.is_none() || !self.confirmation.short_text_search {
            return Vec::new();
        }
        let (side_data, config) = (&self.side_data, &self.confirmation);
        // Roots from the forest (in memory), not from the side records.
        let forest = &self.forest;
        // (class root, tries, confirmed)
        let mut classes: Vec<(Fingerprint, usize, bool)> = Vec::new();
        let mut tries = 0;
        let mut confirmed = Vec::new();
        let ranked = self.short_texts.ranked_by_keys(band_keys, |node| {
            forest.fingerprint_at(node).unwrap_or(Fingerprint::MAX)
        });
        for node in ranked {
            let Some((candidate, root)) = forest.fingerprint_and_root_at(node) else {
                continue;
            };
            if tries == MAX_SHORT_CONFIRMATIONS {
                break;
            }
            if candidate == fingerprint {
                continue;
            }
            let class = match classes.iter().position(|(known, _, _)| *known == root) {
                Some(position) => &mut classes[position],
                None => {
                    classes.push((root, 0, false));
                    let last = classes.len() - 1;
                    &mut classes[last]
                }
            };
            if class.2 || class.1 == MAX_TRIES_PER_CLASS {
                continue;
            }
            class.1 += 1;
            tries += 1;
            let verdict = side_data.record_of(node).and_then(|record| {
                confirm_record(
                    side_data,
                    |root| forest.number(root),
                    candidate,
                    record,
                    own,
                    FoundBy::SharedText,
                    config,
                )
            });
            if count_confirmation(stats, verdict) {
                class.2 = true;
                confirmed.push(candidate);
            }
        }
        confirmed
    }

    /// Whether the body of `own` is boilerplate learned from the stream:
    /// among its first [`MAX_LONG_CONFIRMATIONS`] sketch candidates, at
    /// least [`COMMON_BODY_HEADLINES`] carry the same body under headlines
    /// that are neither `own`'s nor one another's. A site's disclaimer,
    /// cookie notice or newsletter box under each of its stories is that;
    /// a story reprinted by many outlets keeps its headline or one of a
    /// few (each retitling is one more headline, rarely two unrelated
    /// ones). Read from the nodes the engine holds now, so recovery and a
    /// batch decide the same (the sketch keys are in the footprint).
    pub(super) fn body_is_common(&self, own: &LongText) -> bool {
        if !own.identifies_by_body() || own.headline.is_none() {
            return false;
        }
        let (side_data, forest, config) = (&self.side_data, &self.forest, &self.confirmation);
        let ranked = self.long_texts.ranked(&own.sketch, |node| {
            forest.fingerprint_at(node).unwrap_or(Fingerprint::MAX)
        });
        let mut other_headlines: Vec<LongText> = Vec::new();
        for node in ranked.take(MAX_LONG_CONFIRMATIONS) {
            let texts = side_data
                .record_of(node)
                .and_then(|record| record_texts(record).ok());
            let Some((_, Some(theirs))) = texts else {
                continue;
            };
            if own.carries_body_under_another_headline(&theirs, config)
                && !other_headlines
                    .iter()
                    .any(|known| known.headlines_are_one(&theirs, config))
            {
                other_headlines.push(theirs);
                if other_headlines.len() == COMMON_BODY_HEADLINES {
                    return true;
                }
            }
        }
        false
    }

    /// Long texts: candidates by shared text, when the edit moved the
    /// simhash (see [`crate::candidates::sketch_index`]); confirmed here, in
    /// the index's order (most probes shared, then newest), one confirmed
    /// member per class and at most [`MAX_LONG_CONFIRMATIONS`] tried.
    pub(super) fn sketch_candidates(
        &self,
        fingerprint: Fingerprint,
        own: NodeTexts<'_>,
        stats: &mut EngineStats,
    ) -> Vec<Fingerprint> {
        let Some(own_long) = own.long else {
            return Vec::new();
        };
        let mut confirmed_classes: Vec<Fingerprint> = Vec::new();
        let mut confirmed = Vec::new();
        let mut tries = 0;
        let (side_data, forest) = (&self.side_data, &self.forest);
        let ranked = self.long_texts.ranked(&own_long.sketch, |node| {
            forest.fingerprint_at(node).unwrap_or(Fingerprint::MAX)
        });
        for node in ranked {
            let Some((candidate, root)) = forest.fingerprint_and_root_at(node) else {
                continue;
            };
            if tries == MAX_LONG_CONFIRMATIONS {
                break;
            }
            if candidate == fingerprint {
                continue;
            }
            if confirmed_classes.contains(&root) {
                continue;
            }
            let texts = side_data
                .record_of(node)
                .and_then(|record| record_texts(record).ok());
            let Some((_, Some(theirs))) = texts else {
                continue;
            };
            tries += 1;
            let verdict = own_long.confirms_sketch_candidate(&theirs, &self.confirmation);
            if count_confirmation(stats, Some(verdict)) {
                confirmed_classes.push(root);
                confirmed.push(candidate);
            }
        }
        confirmed
    }
}
