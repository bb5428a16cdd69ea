//! Short texts (headlines, posts, questions): the rules that confirm a
//! candidate.

use super::ConfirmationConfig;
use super::edits::{self, EditSummary};
use crate::fingerprint::{jaccard, places_compatible, shared_count};

/// Lowest bigram Jaccard at which a short text that contains (or is
/// contained in) a candidate can still join it.
const CONTAINED_JACCARD_FLOOR: f64 = 0.5;

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

impl ShortText {
    /// A short candidate (and the root of its class, when that is another
    /// node) is close enough to join: similar bigrams, close to the root too
    /// (a class cannot drift one word at a time), the same numbers, and the
    /// no contradicting places (a place added by a repost, "【北京】…", is
    /// not a different place: see [`places_compatible`]).
    pub fn confirms(
        &self,
        candidate: &ShortText,
        candidate_root: Option<&ShortText>,
        config: &ConfirmationConfig,
    ) -> bool {
        if config.short_edit_check && config.repost_reading {
            return self.confirms_as_repost(candidate, candidate_root, config);
        }
        let places_differ = !places_compatible(self.place_signature, candidate.place_signature);
        let numbers_differ = self.number_signature != candidate.number_signature;
        let vetoed = (config.require_same_places && places_differ)
            || (config.require_same_numbers && numbers_differ);
        let root_is_close = candidate_root.is_none_or(|root| {
            jaccard(&self.shingles, &root.shingles) >= config.min_short_root_jaccard
        });
        !vetoed
            && short_texts_close(
                &self.shingles,
                &candidate.shingles,
                config.min_short_jaccard,
                config.min_short_containment,
            )
            && root_is_close
            && (!config.short_edit_check
                || edits_allow_join(
                    &edits::compare_with(&self.letters, &candidate.letters, &config.synonyms),
                    config,
                ))
    }

    /// The repost reading (see [`edits::RepostReading`]): cheap bounds on
    /// shared bigrams first (with the candidate, and with its root, so a
    /// class cannot drift), then the alignment.
    fn confirms_as_repost(
        &self,
        candidate: &ShortText,
        candidate_root: Option<&ShortText>,
        config: &ConfirmationConfig,
    ) -> bool {
        let places_differ = !places_compatible(self.place_signature, candidate.place_signature);
        if config.require_same_places && places_differ {
            return false;
        }
        if containment(&self.shingles, &candidate.shingles) < MIN_REPOST_CONTAINMENT {
            return false;
        }
        if candidate_root.is_some_and(|root| {
            containment(&self.shingles, &root.shingles) < config.min_short_root_jaccard
        }) {
            return false;
        }
        // Most alignments fail on their shape: the words are then not read.
        let summary = edits::compare_with_until(
            &self.letters,
            &candidate.letters,
            &config.synonyms,
            |shape| !shape.identical() && !repost_shape_allows_join(shape, config),
        );
        repost_allows_join(&summary, config)
    }
}

/// Lowest share of the smaller bigram set found in the other for a repost
/// to be aligned at all: an original inside a repost that doubled it with
/// a comment keeps most of its bigrams.
pub const MIN_REPOST_CONTAINMENT: f64 = 0.5;

/// The share of the smaller of two sorted sets that lies in the other.
pub fn containment(ours: &[u32], theirs: &[u32]) -> f64 {
    let smaller = ours.len().min(theirs.len());
    if smaller == 0 {
        return 0.0;
    }
    shared_count(ours, theirs) as f64 / smaller as f64
}

/// How many letters of the shorter text may lie outside the shared span:
/// two in a headline, then a quarter of what is beyond 24 letters (a post
/// of 80 letters may lose 16: a cut start or end, a dropped last word).
pub fn allowed_cut_chars(shorter_chars: usize) -> usize {
    2 + shorter_chars.saturating_sub(24) / 4
}

/// The repost reading allows two short texts to join: the comment does not
/// outweigh the shared span, little of the shorter text was cut, the span
/// holds few edits for its length, no figure and no name, place or time
/// changed, no clause continues the sentence at an edge, and at most one
/// content word per 40 letters of the span changed.
pub fn repost_allows_join(summary: &EditSummary, config: &ConfirmationConfig) -> bool {
    if summary.identical() {
        return true;
    }
    let reading = &summary.repost;
    let span = reading.span_chars;
    repost_shape_allows_join(summary, config)
        && !(config.require_same_numbers && reading.figure_changes > 0)
        && !(config.content_word_check && reading.fact_changes > 0)
        && !(config.content_word_check
            && (reading.clauses > 0 || reading.content_changes > span / 40))
}

/// The part of [`repost_allows_join`] that needs only the alignment's
/// shape (see [`edits::compare_with_until`]), for texts that are not
/// identical: the text is long enough to compare, the comment does not
/// outweigh the shared span, little was cut, and the span holds few edits
/// for its length.
pub fn repost_shape_allows_join(summary: &EditSummary, config: &ConfirmationConfig) -> bool {
    let shorter = summary.shorter_chars;
    let reading = &summary.repost;
    let span = reading.span_chars;
    shorter >= config.min_fuzzy_chars
        && span > 0
        // A repost's comment does not outweigh the text it reposts: a
        // short text found inside a long one is a quote, not a copy.
        && summary.longer_chars <= 2 * span
        && reading.cut_chars <= allowed_cut_chars(shorter)
        && reading.inside_unmatched <= 2 + span / 15
        && reading.inside_edits <= 1 + span / 25
}

/// Bigram sets of two short texts are close enough: Jaccard at least
/// `min_jaccard`, or at least [`CONTAINED_JACCARD_FLOOR`] when one set lies
/// almost wholly (`min_containment`) inside the other. A repost that only
/// added something (a prefix, a tag, a link) keeps all of the original's
/// bigrams; two different questions that share a frame ("…的意思是什么")
/// each have bigrams of their own.
pub fn short_texts_close(
    ours: &[u32],
    theirs: &[u32],
    min_jaccard: f64,
    min_containment: f64,
) -> bool {
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

/// How many letters of the shorter of two short texts may lie outside their
/// common subsequence: two (a swapped word), one more per 30 letters.
pub fn allowed_unmatched_chars(shorter_chars: usize) -> usize {
    2 + shorter_chars / 30
}

/// The in-order comparison of two short texts allows them to join (see
/// [`ConfirmationConfig::short_edit_check`]).
pub fn edits_allow_join(summary: &EditSummary, config: &ConfirmationConfig) -> bool {
    if summary.shorter_chars < config.min_fuzzy_chars {
        return summary.identical();
    }
    summary.unmatched_in_shorter <= allowed_unmatched_chars(summary.shorter_chars)
        && summary.interior_substitutions <= 1
        && summary.unmarked_edits <= 1
        && !(config.require_same_numbers && summary.numeral_replaced)
        && !(config.content_word_check && summary.content_word_changed)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
