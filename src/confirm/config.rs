//! The confirmation settings: the bars each rule holds a candidate to, and
//! which of the checks and extra searches are on.

use std::sync::Arc;

use super::synonyms::Synonyms;

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
    /// character-bigram Jaccard similarity or more. Letter bigrams of
    /// alphabetic headlines are few and common ("in", "re", "an"): two
    /// unrelated English headlines share 0.2 of them in 1.9 % of DEV's
    /// random English pairs; 0.3 would keep those apart, but splits
    /// retitled reprints ("Tiny see-through frog discovered…" / "Researchers
    /// describe new glass frog species…"), so the default stays 0.2.
    pub min_headline_jaccard: f64,
    /// The same when both headlines are Chinese (most letters Han): a
    /// character bigram is most of a word there, and unrelated headlines
    /// share few.
    pub min_headline_jaccard_chinese: f64,
    /// Look short texts up in the MinHash LSH (`shingle_index`) besides the
    /// simhash multi-index. Off: short texts join only simhash neighbours
    /// (still confirmed), and the LSH costs no memory.
    pub short_text_search: bool,
    /// Look long texts up by their bottom-k sketch (`sketch`). Off: no
    /// sketch is computed or stored (about 300 bytes less per long node).
    pub long_text_search: bool,
    /// Short texts are also compared in reading order ([`crate::confirm::edits`]):
    /// a short text joins only when at most [`super::allowed_unmatched_chars`] of
    /// the shorter one's letters are outside the common subsequence, the
    /// texts differ in at most one place besides marked tags at their
    /// edges (a word swapped, added or dropped: see
    /// [`super::edits::EditSummary::unmarked_edits`]), and no numeral was replaced by
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
    /// [`super::edits::EditSummary::content_word_changed`]): recurring headlines differ in
    /// one name, verb or figure ("…开幕" / "…闭幕"), while a reprint adds
    /// tags and fillers or swaps a function word. Long texts' similar
    /// headlines with a content word swapped disagree too, unless the bodies
    /// are the same text. Off: one swapped word of any kind is allowed.
    pub content_word_check: bool,
    /// Short texts are read as one text plus what a repost put around it
    /// ([`super::edits::RepostReading`]): comments and tags outside the shared
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
    /// Two long texts whose leads align except for a span swapped in place
    /// (a name, a street, a party: two notices of one form) stay apart
    /// (see [`crate::confirm::spans`]).
    pub lead_span_check: bool,
    /// Two short texts that both have a headline and a body join only if
    /// the headlines are one, unless both bodies identify their story by
    /// themselves (see `ShortText::headlines_allow`).
    pub short_headline_check: bool,
    /// Sentences with a phrase of the boilerplate genre (rights,
    /// disclaimers, walls, footers; [`super::boilerplate`]) do not identify
    /// a story: the prior that serves before the stream has taught anything.
    pub boilerplate_prior: bool,
    /// A sentence that this many classes carried is boilerplate learned
    /// from the stream (`engine::commonness`); 0 learns nothing.
    pub common_sentence_classes: u8,
    /// A text whose fingerprint is already a node joins that node only if
    /// the node's text confirms it, like any candidate (SPEC §3 rule 1
    /// trusts the fingerprint alone). Otherwise it takes the nearest
    /// fingerprint, one bit flipped, that is free or whose node confirms:
    /// every node stays one class member, and two texts that differ only
    /// in their figures (a recurring report) no longer share a node.
    pub confirm_identical_fingerprints: bool,
    /// Side records leave out a short text's shingles, which the reader
    /// takes back from its letters, and keep the letters two bytes a Han
    /// letter (`engine::side_record`): records about half the size, each
    /// read of one costing a hashing of its letters. Stamps are the same.
    pub lean_side_records: bool,
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
            min_headline_jaccard_chinese: 0.2,
            short_text_search: true,
            long_text_search: true,
            short_edit_check: true,
            min_fuzzy_chars: 12,
            content_word_check: true,
            repost_reading: true,
            synonyms: Arc::new(Synonyms::builtin()),
            neighbour_headline_check: true,
            min_neighbour_jaccard: 0.5,
            lead_span_check: true,
            short_headline_check: true,
            boilerplate_prior: true,
            common_sentence_classes: 3,
            confirm_identical_fingerprints: true,
            lean_side_records: false,
        }
    }
}
