//! Long texts (articles): the rules that confirm a candidate found by
//! simhash distance or by a shared sketch.

use super::config::ConfirmationConfig;
use super::edits;
use super::measures::{bigram_jaccard, one_contains_the_other};
use super::synonyms::Synonyms;
use crate::fingerprint::normalize;
use crate::fingerprint::sketch::{SKETCH_SIZE, estimate_jaccard};
use crate::record_text::RecordText;

/// What a long text's node remembers to confirm sketch candidates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LongText {
    pub sketch: Box<[u32]>,
    /// Letters and digits of the headline, when the document has one.
    pub headline: Option<RecordText>,
    /// The first [`KEPT_LEAD_CHARS`] letters and digits of the body (the
    /// first [`LEAD_CHARS`] in nodes recorded before): the span check of
    /// [`super::spans`] reads all of it, the other rules its start
    /// ([`LongText::lead_start`]).
    ///
    /// [`KEPT_LEAD_CHARS`]: super::spans::KEPT_LEAD_CHARS
    pub lead: RecordText,
    pub numbers: Box<[u32]>,
    /// Where the body names people, and by what shape of name
    /// ([`super::name_slots`]); empty for nodes recorded before.
    pub name_slots: Box<[u32]>,
    /// How much of the body identifies its story without the headline
    /// ([`super::boilerplate::identifying_weight`]); [`UNKNOWN_WEIGHT`] for
    /// nodes recorded before it was kept (they identify, as they did).
    pub identifying_weight: u32,
}

/// The identifying weight of a node recorded before it was kept.
pub const UNKNOWN_WEIGHT: u32 = u32::MAX;

/// How much of a body's start recognises a headline taken from it, tells
/// the script of a body and shows a fact swapped in the lead.
pub const LEAD_CHARS: usize = 48;

/// The body Jaccard a sketch candidate needs, given the two bodies' leads:
/// [`ConfirmationConfig::min_long_jaccard_chinese`] when both are Chinese,
/// [`ConfirmationConfig::min_long_jaccard`] otherwise.
pub fn sketch_join_bar(ours: &str, theirs: &str, config: &ConfirmationConfig) -> f64 {
    if lead_is_chinese(ours) && lead_is_chinese(theirs) {
        config.min_long_jaccard_chinese
    } else {
        config.min_long_jaccard
    }
}

/// The headline bigram Jaccard two headlines need to agree:
/// [`ConfirmationConfig::min_headline_jaccard_chinese`] when both are
/// Chinese, [`ConfirmationConfig::min_headline_jaccard`] otherwise.
pub fn headline_bar(ours: &str, theirs: &str, config: &ConfirmationConfig) -> f64 {
    if lead_is_chinese(ours) && lead_is_chinese(theirs) {
        config.min_headline_jaccard_chinese
    } else {
        config.min_headline_jaccard
    }
}

/// Most letters of a body's lead (or of a headline) are Han characters.
pub fn lead_is_chinese(lead: &str) -> bool {
    let (mut han, mut letters) = (0usize, 0usize);
    for c in lead.chars().filter(|&c| normalize::is_letter_or_digit(c)) {
        letters += 1;
        han += usize::from(normalize::is_han(c));
    }
    han * 2 > letters
}

/// Estimated body Jaccard from which two long texts count as one body
/// under reworded headlines (see [`LongText::same_body`]). Recurring
/// reports share their frame but not their facts, and stay below it.
const SAME_BODY_JACCARD: f64 = 0.9;

/// The headline similarity (character bigrams) at which two headlines over
/// a body that does not identify its story are one headline: a repost's
/// edits to a headline (a tag, a source, punctuation) keep most bigrams;
/// another story's headline, even in the same words' vocabulary, does not.
const STRICT_HEADLINE_JACCARD: f64 = 0.5;

/// How much of a headline must appear in the other copy's lead.
const HEADLINE_PREFIX_CHARS: usize = 16;

impl LongText {
    /// The first [`LEAD_CHARS`] letters of the lead.
    pub fn lead_start(&self) -> &str {
        match self.lead.char_indices().nth(LEAD_CHARS) {
            Some((end, _)) => &self.lead[..end],
            None => &self.lead,
        }
    }

    /// Truncation drops figures and an added paragraph brings some, but a
    /// reprint never changes them: one number set contains the other.
    pub fn numbers_compatible(&self, other: &LongText) -> bool {
        one_contains_the_other(&self.numbers, &other.numbers)
    }

    /// A candidate found by the sketch index joins when the bodies' estimated
    /// Jaccard is high enough, the headlines agree, the numbers are
    /// compatible and no span is swapped in the leads.
    pub fn confirms_sketch_candidate(
        &self,
        candidate: &LongText,
        config: &ConfirmationConfig,
    ) -> bool {
        (!config.require_same_numbers || self.numbers_compatible(candidate))
            && self.headlines_agree(candidate, config)
            && estimate_jaccard(&self.sketch, &candidate.sketch, SKETCH_SIZE)
                >= sketch_join_bar(self.lead_start(), candidate.lead_start(), config)
            && !self.swaps_a_span_with(candidate, config)
    }

    /// The two leads align except for a span swapped in place (see
    /// [`super::spans`]), or the bodies name another person in one place
    /// ([`super::name_slots`]), and the check is on.
    pub fn swaps_a_span_with(&self, other: &LongText, config: &ConfirmationConfig) -> bool {
        config.lead_span_check
            && (super::name_slots::swaps_a_named_party(&self.name_slots, &other.name_slots)
                || super::spans::lead_swaps_a_span(&self.lead, &other.lead))
    }

    /// Headlines agree when they are similar (character bigrams), or when
    /// one is the start of the other copy's body: aggregators title a
    /// reprint with its first sentence. With `content_word_check`, similar
    /// headlines that are one headline with a word swapped ("…英文版出版发行"
    /// / "…法文版出版发行") over bodies that are not the same text do not
    /// agree: a recurring report keeps its headline's frame, a reprint keeps
    /// its facts.
    ///
    /// When either body does not identify its story by itself (see
    /// [`super::boilerplate`]: a disclaimer, a paywall, a footer), the shared
    /// body says nothing and the headline decides: both documents have one
    /// (or neither has), and they are one headline, not two with a fact
    /// swapped.
    pub fn headlines_agree(&self, other: &LongText, config: &ConfirmationConfig) -> bool {
        if !(self.identifies_by_body() && other.identifies_by_body()) {
            return self.headlines_are_one(other, config);
        }
        let (Some(ours), Some(theirs)) = (&self.headline, &other.headline) else {
            return true;
        };
        let taken_from_lead = |headline: &str, lead: &str| {
            let prefix: String = headline
                .chars()
                .filter(|&c| normalize::is_letter_or_digit(c))
                .take(HEADLINE_PREFIX_CHARS)
                .collect();
            prefix.chars().count() >= 8 && lead.contains(prefix.as_str())
        };
        if taken_from_lead(ours, other.lead_start()) || taken_from_lead(theirs, self.lead_start()) {
            return true;
        }
        bigram_jaccard(ours, theirs) >= headline_bar(ours, theirs, config)
            && !(config.content_word_check
                && one_fact_edited(ours, theirs, &config.synonyms)
                && !self.same_body(other, &config.synonyms))
    }

    /// The body holds enough text outside boilerplate sentences to tell
    /// its story without a headline ([`super::boilerplate::MIN_IDENTIFYING_WEIGHT`]).
    pub fn identifies_by_body(&self) -> bool {
        self.identifying_weight >= super::boilerplate::MIN_IDENTIFYING_WEIGHT
    }

    /// `other` carries this text's body (estimated Jaccard at least
    /// [`SAME_BODY_JACCARD`]) under a headline that is not this one's (see
    /// [`LongText::headlines_are_one`]). Several such others, under
    /// headlines that are not one another's either, make the body
    /// boilerplate learned from the stream (see `Engine::plan`): one body
    /// under many stories' headlines identifies none of them.
    pub fn carries_body_under_another_headline(
        &self,
        other: &LongText,
        config: &ConfirmationConfig,
    ) -> bool {
        self.headline.is_some()
            && other.headline.is_some()
            && !self.sketch.is_empty()
            && estimate_jaccard(&self.sketch, &other.sketch, SKETCH_SIZE) >= SAME_BODY_JACCARD
            && !self.headlines_are_one(other, config)
    }

    /// This text with its body marked as not identifying its story: the
    /// headline decides its joins (see [`LongText::headlines_agree`]).
    pub fn with_body_not_identifying(&self) -> LongText {
        self.with_identifying_weight(0)
    }

    /// This text with its body weighed `weight` (see
    /// [`LongText::identifies_by_body`]).
    pub fn with_identifying_weight(&self, weight: u32) -> LongText {
        LongText {
            identifying_weight: weight,
            ..self.clone()
        }
    }

    /// The two headlines are one headline: both absent, or similar at
    /// [`STRICT_HEADLINE_JACCARD`] with no fact swapped.
    pub fn headlines_are_one(&self, other: &LongText, config: &ConfirmationConfig) -> bool {
        match (&self.headline, &other.headline) {
            (None, None) => true,
            (Some(ours), Some(theirs)) => headline_texts_are_one(ours, theirs, config),
            _ => false,
        }
    }

    /// The bodies share at least `min_jaccard` of their text (estimated by
    /// their sketches; true without sketches).
    pub fn shares_enough_body(&self, other: &LongText, min_jaccard: f64) -> bool {
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
    pub fn same_body(&self, other: &LongText, synonyms: &Synonyms) -> bool {
        !self.sketch.is_empty()
            && !other.sketch.is_empty()
            && estimate_jaccard(&self.sketch, &other.sketch, SKETCH_SIZE) >= SAME_BODY_JACCARD
            && !one_fact_edited(self.lead_start(), other.lead_start(), synonyms)
    }
}

/// Two headlines are one headline with a content word swapped for another
/// or dropped inside it (see [`EditSummary::content_word_replaced`] and
/// [`EditSummary::content_word_dropped`]): at least half of each is the same
/// words in the same order. Added words are not enough (a
/// reprint titled with its lead sentence adds places, dates and names to
/// the original headline's words), and neither is a figure written another
/// way ("第二十九次" / "第29次").
/// Two headlines are one headline: similar at [`STRICT_HEADLINE_JACCARD`]
/// with no fact swapped.
pub(super) fn headline_texts_are_one(
    ours: &str,
    theirs: &str,
    config: &ConfirmationConfig,
) -> bool {
    bigram_jaccard(ours, theirs) >= STRICT_HEADLINE_JACCARD
        && !(config.content_word_check && one_fact_edited(ours, theirs, &config.synonyms))
}

fn one_fact_edited(ours: &str, theirs: &str, synonyms: &Synonyms) -> bool {
    let summary = edits::compare_with(ours, theirs, synonyms);
    let common = summary.shorter_chars - summary.unmatched_in_shorter;
    (summary.content_word_replaced || summary.content_word_dropped)
        && common * 2 >= summary.shorter_chars
        && common * 2 >= summary.longer_chars
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long text with this lead and a sketch sharing `shared` of its 64
    /// smallest values with [`body`]`(lead, 64)`'s.
    fn body(lead: &str, shared: u32) -> LongText {
        let sketch: Vec<u32> = (0..shared).chain(1_000..1_000 + (64 - shared)).collect();
        LongText {
            sketch: sketch.into_boxed_slice(),
            headline: None,
            lead: lead.into(),
            numbers: Box::default(),
            name_slots: Box::default(),
            identifying_weight: UNKNOWN_WEIGHT,
        }
    }

    #[test]
    fn chinese_bodies_join_a_sketch_candidate_at_a_lower_jaccard() {
        let config = ConfirmationConfig::default();
        let chinese = "中央电视台焦点访谈已经播出可口可乐承认旗下果汁含有禁用农药";
        let english = "thecouncilapprovedthebudgetforthenewlibraryonmonday";
        // 42 of 64 shared: an estimated Jaccard of 0.66.
        assert!(body(chinese, 42).confirms_sketch_candidate(&body(chinese, 64), &config));
        assert!(!body(english, 42).confirms_sketch_candidate(&body(english, 64), &config));
        // One Chinese body and one English: the general bar.
        assert!(!body(chinese, 42).confirms_sketch_candidate(&body(english, 64), &config));
        let same_bar = ConfirmationConfig {
            min_long_jaccard_chinese: 0.7,
            ..ConfirmationConfig::default()
        };
        assert!(!body(chinese, 42).confirms_sketch_candidate(&body(chinese, 64), &same_bar));
        // 36 of 64 (0.56) stays apart in both scripts.
        assert!(!body(chinese, 36).confirms_sketch_candidate(&body(chinese, 64), &config));
    }

    #[test]
    fn english_and_chinese_headlines_have_their_own_bars() {
        let titled = |headline: &str| LongText {
            headline: Some(headline.into()),
            ..body("thecouncilapprovedthebudget", 64)
        };
        let config = ConfirmationConfig {
            min_headline_jaccard: 0.3,
            ..ConfirmationConfig::default()
        };
        // Two unrelated English headlines share a fifth of their letter
        // bigrams ("re", "in", "an", …).
        let (recycling, rain) = (
            titled("lakewood expands recycling program"),
            titled("heavy rain closes roads in cleveland area"),
        );
        let english = bigram_jaccard(
            "lakewood expands recycling program",
            "heavy rain closes roads in cleveland area",
        );
        assert!((0.2..0.3).contains(&english), "{english}");
        assert!(!recycling.headlines_agree(&rain, &config));
        let lenient = ConfirmationConfig {
            min_headline_jaccard: 0.2,
            ..config.clone()
        };
        assert!(recycling.headlines_agree(&rain, &lenient));
        // Chinese headlines keep the lower bar: a bigram is most of a word.
        let (ours, theirs) = ("城市更新推进会召开", "城市更新工作推进会今天召开");
        assert!(bigram_jaccard(ours, theirs) < 0.5);
        assert!(titled(ours).headlines_agree(&titled(theirs), &config));
        let chinese_strict = ConfirmationConfig {
            min_headline_jaccard_chinese: 0.5,
            ..config
        };
        assert!(!titled(ours).headlines_agree(&titled(theirs), &chinese_strict));
    }

    #[test]
    fn a_lead_is_chinese_when_most_letters_are_han() {
        assert!(lead_is_chinese("可口可乐承认旗下果汁含有禁用农药"));
        assert!(lead_is_chinese("ai人工智能大会今天在上海开幕"));
        assert!(!lead_is_chinese("reaganaskscongresstoact"));
        assert!(!lead_is_chinese("nasa发射新卫星launchedtoday"));
        assert!(!lead_is_chinese(""));
    }
}
