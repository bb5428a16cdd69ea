//! Stage 4 of the data path: is a candidate really a copy?
//!
//! Motivation: a candidate from any search ([`crate::candidates`]) is only
//! close by one measure. A short text's simhash is too weak to trust at
//! distance ≤ k (seeds 000 and 003); two long texts can share a frame and
//! most sentences yet report different figures or places; two headlines
//! can be one headline with a name swapped. Every candidate is confirmed by
//! what its node remembers of its text before it counts.
//!
//! Design: a node keeps [`ShortText`] (bigrams, letters, number and place
//! signatures) or [`LongText`] (sketch, numbers, headline, lead), computed
//! once when the node is created ([`crate::engine::Analyzer`]). The rules:
//!
//! - short text ([`short`]): bigram Jaccard with the candidate and with its
//!   root, same numbers, no contradicting places (one text's places may
//!   add to the other's), and close in
//!   reading order ([`edits`]; very short texts only with the same letters);
//! - long text found by sketch ([`long`]): estimated Jaccard of the bodies,
//!   similar headlines when both have one, one number set containing the
//!   other;
//! - long text within k: the number-set containment, the headlines and a
//!   floor on shared body text;
//! - any two long texts: no span swapped in place in their leads
//!   ([`spans`]: two notices of one form differ in a name, a street, a
//!   party);
//! - any two texts: no party of a form swapped for another ([`parties`]:
//!   a full name after 原告, 第三人, "Plaintiff", which no dictionary knows;
//!   [`name_slots`]: in a long English body, another person's name where
//!   the other names someone, anywhere in the body).
//!
//! [`synonyms`] (the user's and a built-in Chinese thesaurus) relax the
//! content-word check. The rules read their bars from
//! [`ConfirmationConfig`] and measure with [`measures`] (Jaccard and
//! containment of hash sets), which the explanations of `crate::explain`
//! call too, so a figure shown is the figure weighed.
//!
//! Consequences: confirmation is pure and reads only the two nodes' texts
//! (and the candidate's root for short texts), so its cost per candidate is
//! bounded by the short-text length (the alignment is quadratic in it).

pub mod boilerplate;
mod config;
pub mod edits;
mod long;
pub mod measures;
pub mod name_slots;
pub mod parties;
mod short;
pub mod spans;
pub mod synonyms;

pub use config::ConfirmationConfig;
pub use long::{
    LEAD_CHARS, LongText, UNKNOWN_WEIGHT, headline_bar, lead_is_chinese, sketch_join_bar,
};
pub use short::{
    MIN_REPOST_CONTAINMENT, ShortText, allowed_content_changes, allowed_cut_chars,
    allowed_unmatched_chars, edits_allow_join, read_as_repost, repost_allows_join,
    repost_shape_allows_join, repost_shape_excluded, short_texts_close,
};

/// How a candidate was found: long texts found by shared text meet a
/// higher bar than simhash neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// Within Hamming distance k (or the text's own fingerprint).
    SimhashDistance,
    /// By shared shingles (the short-text index).
    SharedText,
}

/// The texts a node keeps to confirm candidates against it: one of the two
/// is set, by the length of the text that created the node.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeTexts<'a> {
    pub short: Option<&'a ShortText>,
    pub long: Option<&'a LongText>,
}

/// Whether a node (`candidate`, in the class of a root whose short text
/// `candidate_root` reads, when that is another node) confirms a new text
/// `own` (see the module doc); `None` when the node keeps nothing of the
/// new text's kind to confirm against. The root's text is read only when
/// the short-text rule gets to it (a random read of the side records,
/// which most candidates fail before).
pub fn node_confirms(
    own: NodeTexts<'_>,
    candidate: NodeTexts<'_>,
    candidate_root: impl FnOnce() -> Option<ShortText>,
    found_by: FoundBy,
    config: &ConfirmationConfig,
) -> Option<bool> {
    // Two long texts are compared as long texts; a long text keeps a short
    // description too when it is of a length to meet a short repost.
    if let (Some(ours), Some(theirs)) = (own.long, candidate.long) {
        // Notices of a length to keep a short description too, addressed
        // to two persons: their leads keep no punctuation to tell it.
        if let (Some(short_ours), Some(short_theirs)) = (own.short, candidate.short)
            && edits::opens_to_another_person(&short_ours.letters, || &short_theirs.letters)
        {
            return Some(false);
        }
        // A long simhash neighbour is trusted, but for its figures, its
        // headline (when both have one) and a floor on shared text. A long
        // text found by shared text (the short-text index finds posts of a
        // length to be reposted) must share as much as a sketch candidate,
        // or read as one post and its repost.
        let as_neighbour = (!config.require_same_numbers || ours.numbers_compatible(theirs))
            && (!config.neighbour_headline_check || ours.headlines_agree(theirs, config))
            && ours.shares_enough_body(theirs, config.min_neighbour_jaccard);
        // A sketch candidate's rule ends with the span check; the others
        // take it last, as the rarest to matter and the dearest.
        let confirmed = match found_by {
            FoundBy::SimhashDistance => as_neighbour && !ours.swaps_a_span_with(theirs, config),
            FoundBy::SharedText => {
                as_neighbour
                    && (ours.confirms_sketch_candidate(theirs, config)
                        || match (own.short, candidate.short) {
                            (Some(short_ours), Some(short_theirs)) => {
                                short_ours.confirms(short_theirs, candidate_root, config)
                                    && !ours.swaps_a_span_with(theirs, config)
                            }
                            _ => false,
                        })
            }
        };
        return Some(confirmed);
    }
    let (ours, theirs) = (own.short?, candidate.short?);
    Some(ours.confirms(theirs, candidate_root, config))
}
