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
//!   floor on shared body text.
//!
//! [`synonyms`] (the user's and a built-in Chinese thesaurus) relax the
//! content-word check.
//!
//! Consequences: confirmation is pure and reads only the two nodes' texts
//! (and the candidate's root for short texts), so its cost per candidate is
//! bounded by the short-text length (the alignment is quadratic in it).

pub mod edits;
mod long;
mod short;
pub mod synonyms;

use std::sync::Arc;

pub use long::{LEAD_CHARS, LongText, lead_is_chinese, sketch_join_bar};
pub use short::{
    MIN_REPOST_CONTAINMENT, ShortText, allowed_cut_chars, allowed_unmatched_chars, containment,
    edits_allow_join, repost_allows_join, repost_shape_allows_join, repost_shape_excluded,
    short_texts_close,
};
use synonyms::Synonyms;

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
    /// ...and, when both name places, no place of one missing from the
    /// other unless all of the other's places are in it (a repost adds a
    /// place; another story names another).
    pub require_same_places: bool,
    /// A long text found through its shingle sketch joins only at this
    /// estimated character-5-gram Jaccard similarity or more...
    pub min_long_jaccard: f64,
    /// The same, when both bodies are Chinese (most letters of their leads
    /// are Han characters). A character 5-gram spans two or three Chinese
    /// words but about one English one, so a post reposted with a comment
    /// and a few words changed keeps less of its 5-grams in Chinese; in
    /// English, paraphrased sentences that go on differently (MRPC) sit
    /// between 0.6 and 0.7.
    pub min_long_jaccard_chinese: f64,
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
    /// Short texts are also compared in reading order ([`crate::confirm::edits`]):
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
    /// Short texts are read as one text plus what a repost put around it
    /// ([`edits::RepostReading`]): comments and tags outside the shared
    /// span are free, a quarter of the shorter text may be cut, and edits
    /// inside the span are allowed by its length, never of a fact. Off: the
    /// earlier bounds (bigram Jaccard, at most one edit anywhere).
    pub repost_reading: bool,
    /// Words declared equivalent (the user's groups, the built-in thesaurus):
    /// swapping one for another is not a change of content (see
    /// [`crate::confirm::synonyms`]). By default the built-in thesaurus alone.
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
            min_long_jaccard_chinese: 0.6,
            min_headline_jaccard: 0.2,
            short_text_search: true,
            long_text_search: true,
            short_edit_check: true,
            min_fuzzy_chars: 12,
            content_word_check: true,
            repost_reading: true,
            synonyms: Arc::new(Synonyms::builtin()),
            neighbour_headline_check: true,
            min_neighbour_jaccard: 0.5,
            confirm_identical_fingerprints: true,
        }
    }
}

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
        // A long simhash neighbour is trusted, but for its figures, its
        // headline (when both have one) and a floor on shared text. A long
        // text found by shared text (the short-text index finds posts of a
        // length to be reposted) must share as much as a sketch candidate,
        // or read as one post and its repost.
        let as_neighbour = (!config.require_same_numbers || ours.numbers_compatible(theirs))
            && (!config.neighbour_headline_check || ours.headlines_agree(theirs, config))
            && ours.shares_enough_body(theirs, config.min_neighbour_jaccard);
        let found_by_text_confirmed = || {
            ours.confirms_sketch_candidate(theirs, config)
                || match (own.short, candidate.short) {
                    (Some(ours), Some(theirs)) => ours.confirms(theirs, candidate_root, config),
                    _ => false,
                }
        };
        return Some(
            as_neighbour && (found_by == FoundBy::SimhashDistance || found_by_text_confirmed()),
        );
    }
    let (ours, theirs) = (own.short?, candidate.short?);
    Some(ours.confirms(theirs, candidate_root, config))
}
