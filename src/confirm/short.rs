//! Short texts (headlines, posts, questions): the rules that confirm a
//! candidate.

use std::sync::OnceLock;

use super::config::ConfirmationConfig;
use super::edits::{self, EditSummary, OutlineLetters, RepostReading};
use super::measures::{containment, jaccard, shared_count};
use crate::fingerprint::FIELD_SEPARATOR;
use crate::fingerprint::normalize::is_letter_or_digit;
use crate::fingerprint::places::places_compatible;
use crate::record_text::RecordText;

/// Lowest bigram Jaccard at which a short text that contains (or is
/// contained in) a candidate can still join it.
const CONTAINED_JACCARD_FLOOR: f64 = 0.5;

/// What a short text's node remembers to confirm later candidates.
#[derive(Debug, Clone)]
pub struct ShortText {
    /// The shingle set ([`ShortText::shingles`]): known, or taken from the
    /// letters at the first read when a lean record left it out (most
    /// candidates read for another reason never need it).
    shingles: OnceLock<Box<[u32]>>,
    /// The letters and digits of the text, fields separated by
    /// [`crate::fingerprint::FIELD_SEPARATOR`].
    pub letters: RecordText,
    pub number_signature: u64,
    pub place_signature: u64,
    /// Which field of `letters` is the headline, when the text has both a
    /// headline and a body with letters: then the headline may decide (see
    /// [`ShortText::headlines_allow`]). `None` for texts of one field and
    /// for nodes recorded before it was kept.
    pub headline_field: Option<u8>,
    /// How much of the body identifies its story without the headline
    /// ([`super::boilerplate::identifying_weight`]); meaningful only with
    /// `headline_field`.
    pub body_weight: u32,
    /// The shingle width with which `shingles` are the shingles of the
    /// lowercased letters ([`crate::fingerprint::shingle_set_of_letters`]),
    /// when the writer of this text checked that they are: its side record
    /// then leaves them out.
    pub shingles_from_letters: Option<u8>,
    /// The letters as the alignment's outline reads them, read at first
    /// use: a document's own text is outlined against each candidate.
    outline_letters: OutlineLettersOnce,
}

/// A text's [`OutlineLetters`], read at first use. Not part of the text's
/// value (two texts with and without it read compare equal) and never
/// stored.
#[derive(Debug, Clone, Default)]
struct OutlineLettersOnce(OnceLock<OutlineLetters>);

impl PartialEq for OutlineLettersOnce {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for OutlineLettersOnce {}

impl PartialEq for ShortText {
    fn eq(&self, other: &ShortText) -> bool {
        self.shingles() == other.shingles()
            && self.letters == other.letters
            && self.number_signature == other.number_signature
            && self.place_signature == other.place_signature
            && self.headline_field == other.headline_field
            && self.body_weight == other.body_weight
            && self.shingles_from_letters == other.shingles_from_letters
    }
}

impl Eq for ShortText {}

impl ShortText {
    pub fn new(
        shingles: Box<[u32]>,
        letters: RecordText,
        number_signature: u64,
        place_signature: u64,
    ) -> ShortText {
        ShortText {
            shingles: OnceLock::from(shingles),
            letters,
            number_signature,
            place_signature,
            headline_field: None,
            body_weight: super::long::UNKNOWN_WEIGHT,
            shingles_from_letters: None,
            outline_letters: OutlineLettersOnce::default(),
        }
    }

    /// A text whose shingles are those of its `letters` at `width`, taken
    /// at their first read (a lean record's).
    pub fn with_shingles_from_letters(
        letters: RecordText,
        width: u8,
        number_signature: u64,
        place_signature: u64,
    ) -> ShortText {
        ShortText {
            shingles: OnceLock::new(),
            shingles_from_letters: Some(width),
            ..ShortText::new(Box::default(), letters, number_signature, place_signature)
        }
    }

    /// The text's shingle set, sorted.
    pub fn shingles(&self) -> &[u32] {
        self.shingles.get_or_init(|| {
            let width = self.shingles_from_letters.map_or(0, usize::from);
            if width == 0 {
                return Box::default();
            }
            crate::fingerprint::shingle_set_of_chars(
                self.letters.chars(),
                self.letters.estimated_len(),
                width,
            )
            .into_boxed_slice()
        })
    }

    /// This text, noting whether its shingles are those of its letters at
    /// `width` (see [`ShortText::shingles_from_letters`]).
    pub fn checking_shingles_against_letters(mut self, width: usize) -> ShortText {
        self.shingles_from_letters = u8::try_from(width).ok().filter(|_| {
            crate::fingerprint::shingle_set_of_letters(&self.letters, width)[..] == *self.shingles()
        });
        self
    }

    /// This text with its headline field and its body's identifying weight
    /// known (see [`ShortText::headlines_allow`]).
    pub fn with_headline(mut self, headline_field: u8, body_weight: u32) -> ShortText {
        self.headline_field = Some(headline_field);
        self.body_weight = body_weight;
        self
    }

    /// The headline's letters, when the text keeps which field it is.
    pub fn headline(&self) -> Option<&str> {
        let field = usize::from(self.headline_field?);
        self.letters.split(FIELD_SEPARATOR).nth(field)
    }

    /// The body's letters: every field but the headline.
    fn body_letters(&self) -> impl Iterator<Item = &str> {
        let headline = self.headline_field.map(usize::from);
        self.letters
            .split(FIELD_SEPARATOR)
            .enumerate()
            .filter(move |(position, _)| Some(*position) != headline)
            .map(|(_, part)| part)
    }

    /// Two short texts that both carry a headline and a body may join only
    /// if their headlines are one headline (or one is the other's opening
    /// words), unless both bodies identify their story by themselves. A
    /// short body, and above all a site's boilerplate under each of its
    /// stories' headlines ("live coverage in progress, tap to open…"),
    /// says nothing about which story it is: the rule long texts follow
    /// ([`super::LongText::headlines_agree`]), for the texts too short to
    /// be long. Reposts without a headline field are not touched.
    pub fn headlines_allow(&self, candidate: &ShortText, config: &ConfirmationConfig) -> bool {
        if !config.short_headline_check {
            return true;
        }
        // Decided by what the texts keep beside their letters when it can
        // be: a candidate's letters are decoded at their first read.
        if self.headline_field.is_none() || candidate.headline_field.is_none() {
            return true;
        }
        let identifies = |text: &ShortText| {
            text.body_weight != super::long::UNKNOWN_WEIGHT
                && text.body_weight >= super::boilerplate::MIN_IDENTIFYING_WEIGHT
        };
        if identifies(self) && identifies(candidate) {
            return true;
        }
        let (Some(ours), Some(theirs)) = (self.headline(), candidate.headline()) else {
            return true;
        };
        let opens = |headline: &str, text: &ShortText| {
            let prefix: String = headline
                .chars()
                .filter(|&c| is_letter_or_digit(c))
                .take(HEADLINE_OPENING_CHARS)
                .collect();
            prefix.chars().count() >= MIN_HEADLINE_OPENING_CHARS
                && text.body_letters().any(|body| {
                    let compact: String = body.chars().filter(|&c| is_letter_or_digit(c)).collect();
                    compact.contains(prefix.as_str())
                })
        };
        super::long::headline_texts_are_one(ours, theirs, config)
            || opens(ours, candidate)
            || opens(theirs, self)
    }

    /// The letters as the outline reads them (read once).
    pub fn outline_letters(&self) -> &OutlineLetters {
        self.outline_letters
            .0
            .get_or_init(|| OutlineLetters::of(&self.letters))
    }
}

impl ShortText {
    /// A short candidate (and the root of its class, when that is another
    /// node) is close enough to join: similar bigrams, close to the root too
    /// (a class cannot drift one word at a time), the same numbers, and the
    /// no contradicting places (a place added by a repost, "【北京】…", is
    /// not a different place: see [`places_compatible`]).
    ///
    /// `candidate_root` reads the root's text; it is called only when the
    /// candidate itself passes the cheaper checks.
    pub fn confirms(
        &self,
        candidate: &ShortText,
        candidate_root: impl FnOnce() -> Option<ShortText>,
        config: &ConfirmationConfig,
    ) -> bool {
        if !self.headlines_allow(candidate, config) {
            return false;
        }
        if config.short_edit_check && config.repost_reading {
            return self.confirms_as_repost(candidate, candidate_root, config);
        }
        let places_differ = !places_compatible(self.place_signature, candidate.place_signature);
        let numbers_differ = self.number_signature != candidate.number_signature;
        let vetoed = (config.require_same_places && places_differ)
            || (config.require_same_numbers && numbers_differ);
        let root_is_close = || {
            candidate_root().is_none_or(|root| {
                jaccard(self.shingles(), root.shingles()) >= config.min_short_root_jaccard
            })
        };
        !vetoed
            && short_texts_close(
                self.shingles(),
                candidate.shingles(),
                config.min_short_jaccard,
                config.min_short_containment,
            )
            && root_is_close()
            && (!config.short_edit_check
                || edits_allow_join(
                    &edits::compare_with(&self.letters, &candidate.letters, &config.synonyms),
                    config,
                ))
    }

    /// The repost reading (see [`edits::RepostReading`]): cheap bounds
    /// first (shared bigrams, the letters' outline), then shared bigrams
    /// with the candidate's root (so a class cannot drift; a read of
    /// another record), then the alignment.
    fn confirms_as_repost(
        &self,
        candidate: &ShortText,
        candidate_root: impl FnOnce() -> Option<ShortText>,
        config: &ConfirmationConfig,
    ) -> bool {
        let places_differ = !places_compatible(self.place_signature, candidate.place_signature);
        if config.require_same_places && places_differ {
            return false;
        }
        if containment(self.shingles(), candidate.shingles()) < MIN_REPOST_CONTAINMENT {
            return false;
        }
        // Most candidates that get this far leave too much of the shorter
        // text unmatched: known from the letters alone, without aligning.
        if shape_excluded(self.outline_letters(), candidate.outline_letters(), config) {
            return false;
        }
        if candidate_root().is_some_and(|root| {
            containment(self.shingles(), root.shingles()) < config.min_short_root_jaccard
        }) {
            return false;
        }
        // Most alignments fail on their shape: the words are then not read.
        let summary = read_as_repost(&self.letters, &candidate.letters, config, true);
        repost_allows_join(&summary, config)
    }
}

/// The repost reading of two short texts ([`edits::compare_with`]), in
/// whichever order they came. The reading takes the shorter text for the
/// post and the longer for the repost around it; two texts of as many
/// letters are read both ways, and the reading that lets them join is
/// kept: which of the two arrived first decides nothing ("DA says X" and
/// "X, DA says" each cut what the other adds). With `stop_on_shape`, a
/// reading whose shape fails leaves the words unread
/// ([`edits::compare_with_until`]).
pub fn read_as_repost(
    ours: &str,
    theirs: &str,
    config: &ConfirmationConfig,
    stop_on_shape: bool,
) -> EditSummary {
    let read = |first: &str, second: &str| {
        edits::compare_with_until(first, second, &config.synonyms, |shape| {
            stop_on_shape && !shape.identical() && !repost_shape_allows_join(shape, config)
        })
    };
    let summary = read(ours, theirs);
    if summary.shorter_chars != summary.longer_chars || repost_allows_join(&summary, config) {
        return summary;
    }
    let other_way = read(theirs, ours);
    if repost_allows_join(&other_way, config) {
        other_way
    } else {
        summary
    }
}

/// How many of a headline's letters are looked for in the other text's
/// body, and how many it needs, to read it as that body's opening words.
const HEADLINE_OPENING_CHARS: usize = 16;
const MIN_HEADLINE_OPENING_CHARS: usize = 8;

/// Lowest share of the smaller bigram set found in the other for a repost
/// to be aligned at all: an original inside a repost that doubled it with
/// a comment keeps most of its bigrams.
pub const MIN_REPOST_CONTAINMENT: f64 = 0.5;

/// How many letters of the shorter text may lie outside the shared span:
/// two in a headline, then a quarter of what is beyond 24 letters (a post
/// of 80 letters may lose 16: a cut start or end, a dropped last word).
pub fn allowed_cut_chars(shorter_chars: usize) -> usize {
    2 + shorter_chars.saturating_sub(24) / 4
}

/// The repost reading allows two short texts to join: the comment does not
/// outweigh the shared span, little of the shorter text was cut, the span
/// holds few edits for its length, no figure and no name, place or time
/// changed, no clause continues the sentence at an edge, and no more
/// content words changed than [`allowed_content_changes`].
pub fn repost_allows_join(summary: &EditSummary, config: &ConfirmationConfig) -> bool {
    if summary.identical() {
        return true;
    }
    let reading = &summary.repost;
    repost_shape_allows_join(summary, config)
        && !(config.require_same_numbers && reading.figure_changes > 0)
        && !(config.content_word_check && reading.fact_changes > 0)
        && !(config.content_word_check
            && (reading.clauses > 0 || reading.content_changes > allowed_content_changes(reading)))
}

/// How many content words the repost reading lets change inside the span:
/// one per 40 letters (a reworded repost), none when a platform cut one of
/// the texts short (a cut copies, it does not reword). A verb or adjective
/// swapped for another ([`RepostReading::predicate_swaps`]) counts from 20
/// letters: one in a post of 20 to 59 letters, two from 60; other content
/// words still one per 40.
pub fn allowed_content_changes(reading: &RepostReading) -> usize {
    if reading.cut_short {
        return 0;
    }
    let others = reading
        .content_changes
        .saturating_sub(reading.predicate_swaps);
    if others > reading.span_chars / 40 {
        return reading.span_chars / 40;
    }
    if reading.span_chars >= MIN_PREDICATE_SWAP_SPAN {
        (reading.span_chars + MIN_PREDICATE_SWAP_SPAN) / 40
    } else {
        reading.span_chars / 40
    }
}

/// Shortest span in which a verb or adjective may be swapped for another:
/// a headline's length and more (a shorter text is mostly its one fact).
const MIN_PREDICATE_SWAP_SPAN: usize = 20;

/// The part of [`repost_allows_join`] that needs only the alignment's
/// shape (see [`edits::compare_with_until`]), for texts that are not
/// identical: the text is long enough to compare, the comment does not
/// outweigh the shared span, little was cut, the span holds few edits
/// for its length, and a text a platform cut short is not one cut within
/// a headline's length of its opening while the other goes on.
pub fn repost_shape_allows_join(summary: &EditSummary, config: &ConfirmationConfig) -> bool {
    let shorter = summary.shorter_chars;
    let reading = &summary.repost;
    let span = reading.span_chars;
    shorter >= config.min_fuzzy_chars
        && span > 0
        // A repost's comment does not outweigh the text it reposts: a
        // short text found inside a long one is a quote, not a copy.
        && summary.longer_chars - reading.hidden_chars <= 2 * span
        // A text cut before it says which post it was cut from.
        && !reading.cut_too_soon
        && reading.cut_chars <= allowed_cut_chars(shorter)
        && reading.inside_unmatched <= 2 + span / 15
        && reading.inside_edits <= 1 + span / 25
}

/// No alignment of `ours` and `theirs` can have a shape that
/// [`repost_shape_allows_join`] allows, by their letter counts and the
/// length of their longest common subsequence ([`edits::outline`]). Never
/// true of a pair the alignment would let join (a property test holds it
/// to that).
///
/// Why it follows: a shape that passes has the shorter text at least
/// `min_fuzzy_chars` long, the longer at most twice the span (itself at
/// most the shorter), and every unmatched letter of the shorter text is
/// either cut (at most [`allowed_cut_chars`]) or inside the span (at most
/// `2 + span / 15`, the span being what is not cut), unless it lies in a
/// credit line; so these two bounds hold only for texts without one
/// ([`OutlineLetters::may_hold_credit`]).
pub fn repost_shape_excluded(ours: &str, theirs: &str, config: &ConfirmationConfig) -> bool {
    shape_excluded(
        &OutlineLetters::of(ours),
        &OutlineLetters::of(theirs),
        config,
    )
}

/// [`repost_shape_excluded`] of texts whose letters are read.
fn shape_excluded(
    ours: &OutlineLetters,
    theirs: &OutlineLetters,
    config: &ConfirmationConfig,
) -> bool {
    let outline = edits::outline_of(ours, theirs);
    let shorter = outline.shorter_chars;
    if outline.longer_chars > 2 * shorter && !ours.cut_short && !theirs.cut_short {
        // Not identical either: that needs as many letters on both sides.
        // (What a cut text's original says after the cut is no comment.)
        return true;
    }
    if outline.common == Some(shorter) && shorter == outline.longer_chars {
        // Identical letters join whatever their length.
        return false;
    }
    let too_short = shorter < config.min_fuzzy_chars;
    // Unmatched letters: at most the cut, and inside the span (what is
    // left of the shorter text) `2 + span / 15`; most with the most cut.
    let most_cut = allowed_cut_chars(shorter).min(shorter);
    let most_unmatched = most_cut + 2 + (shorter - most_cut) / 15;
    let too_unmatched = outline
        .common
        .is_some_and(|common| shorter - common > most_unmatched);
    // Letters in credit lines are neither unmatched nor a difference (two
    // texts differing only there are identical).
    (too_short || too_unmatched) && !ours.may_hold_credit && !theirs.may_hold_credit
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
    fn two_texts_of_as_many_letters_join_in_either_order() {
        let config = ConfirmationConfig::default();
        let headline = "FBI says suspect in mall shooting was known to local police for years";
        let repost = "Suspect in mall shooting was known to local police for years , FBI says";
        // One reading cuts "FBI says" and reads the other's as a comment after
        // a comma; the other runs it into the sentence as a clause.
        let one_way = edits::compare_with(repost, headline, &config.synonyms);
        assert_eq!(one_way.shorter_chars, one_way.longer_chars);
        assert!(!repost_allows_join(&one_way, &config), "{one_way:?}");
        for (first, second) in [(headline, repost), (repost, headline)] {
            for stop_on_shape in [false, true] {
                let summary = read_as_repost(first, second, &config, stop_on_shape);
                assert!(repost_allows_join(&summary, &config), "{summary:?}");
            }
        }
        // Texts of different lengths are read once, the shorter as the post.
        let longer = format!("{repost} today");
        assert_eq!(
            read_as_repost(headline, &longer, &config, false),
            edits::compare_with(headline, &longer, &config.synonyms)
        );
    }

    #[test]
    fn shingles_left_out_of_a_record_are_those_of_its_letters_at_their_first_read() {
        let letters = "周末去哪儿玩\u{1e}Parks IN autumn";
        let taken = crate::fingerprint::shingle_set_of_letters(letters, 2);
        let lean = ShortText::with_shingles_from_letters(letters.into(), 2, 0, 7);
        assert!(lean.shingles.get().is_none());
        assert_eq!(lean.shingles(), &taken[..]);
        let known = ShortText::new(taken.into_boxed_slice(), letters.into(), 0, 7);
        assert_eq!(
            ShortText::with_shingles_from_letters(letters.into(), 2, 0, 7),
            {
                let mut known = known;
                known.shingles_from_letters = Some(2);
                known
            }
        );
    }

    #[test]
    fn headlines_of_two_identifying_bodies_leave_the_candidates_letters_undecoded() {
        use crate::record_text::{Packing, RecordText};
        let identifying = crate::confirm::boilerplate::MIN_IDENTIFYING_WEIGHT;
        let ours = titled("周末去哪儿玩", "城北公园的银杏叶黄了", identifying);
        let mut coded = Vec::new();
        Packing::Coded.encode("秋天去哪儿玩\u{1e}城北公园的银杏叶黄了", &mut coded);
        let theirs = ShortText::new(
            Box::default(),
            RecordText::encoded(&coded, Some(Packing::Coded)),
            0,
            0,
        );
        let config = ConfirmationConfig::default();
        // No headline field: nothing to compare, nothing read.
        assert!(ours.headlines_allow(&theirs, &config));
        assert!(!theirs.letters.is_decoded());
        // Both bodies identify their story: the headlines are not read.
        let theirs = theirs.with_headline(0, identifying);
        assert!(ours.headlines_allow(&theirs, &config));
        assert!(!theirs.letters.is_decoded());
        // A body that does not: they are.
        let ours = titled("周末去哪儿玩", "城北公园的银杏叶黄了", 0);
        ours.headlines_allow(&theirs, &config);
        assert!(theirs.letters.is_decoded());
    }

    /// `count` distinct letters from `first` on.
    fn distinct(first: u32, count: u32) -> String {
        (first..first + count).filter_map(char::from_u32).collect()
    }

    fn titled(headline: &str, body: &str, body_weight: u32) -> ShortText {
        ShortText::new(
            Box::default(),
            format!("{headline}{FIELD_SEPARATOR}{body}").into(),
            0,
            0,
        )
        .with_headline(0, body_weight)
    }

    #[test]
    fn a_short_body_under_two_other_headlines_does_not_join() {
        let config = ConfirmationConfig::default();
        let body = "图文直播正在进行中 请点击进入|关注本网视频号 第一时间获取直播提醒";
        let ours = titled("惠州上线24个长者食堂", body, 30);
        let theirs = titled("农技专家田间支招 水竹镇花生提质", body, 30);
        assert!(!ours.headlines_allow(&theirs, &config));
        // One headline, a punctuation edit: the headline is one.
        let again = titled("惠州上线24个长者食堂！", body, 30);
        assert!(ours.headlines_allow(&again, &config));
        // A headline that is the other's opening words.
        let opening = titled("关注本网视频号第一时间获取", body, 30);
        assert!(opening.headlines_allow(&theirs, &config));
        // Both bodies tell their story: the headline does not decide.
        let (told_ours, told_theirs) = (titled("甲", body, 90), titled("乙", body, 90));
        assert!(told_ours.headlines_allow(&told_theirs, &config));
        // Without a headline field (a post, a node recorded before), or
        // with the check off, nothing changes.
        let post = ShortText::new(Box::default(), body.into(), 0, 0);
        assert!(post.headlines_allow(&theirs, &config));
        let off = ConfirmationConfig {
            short_headline_check: false,
            ..ConfirmationConfig::default()
        };
        assert!(ours.headlines_allow(&theirs, &off));
    }

    #[test]
    fn the_outline_excludes_just_past_the_shape_bounds() {
        let config = ConfirmationConfig::default();
        let shape_allows = |ours: &str, theirs: &str| {
            repost_shape_allows_join(&edits::compare(ours, theirs), &config)
        };
        // 60 letters: 11 may be cut, and 2 + 49 / 15 = 5 unmatched inside
        // the span, in at most 1 + 49 / 25 = 2 gaps.
        let text = distinct(0x4e00, 60);
        let letters: Vec<char> = text.chars().collect();
        let piece = |range: std::ops::Range<usize>| letters[range].iter().collect::<String>();
        let at_bound = format!(
            "{}{}{}{}{}{}",
            distinct(0x5000, 11),
            piece(11..30),
            distinct(0x5100, 3),
            piece(33..45),
            distinct(0x5200, 2),
            piece(47..60)
        );
        assert!(shape_allows(&text, &at_bound));
        assert!(!repost_shape_excluded(&text, &at_bound, &config));
        let past_bound = at_bound.replacen(&piece(47..48), &distinct(0x5300, 1), 1);
        assert!(!shape_allows(&text, &past_bound));
        assert!(repost_shape_excluded(&text, &past_bound, &config));
        // A comment as long as the text: the longer at twice the span.
        let commented = format!("{text}，{}", distinct(0x6000, 60));
        assert!(shape_allows(&text, &commented));
        assert!(!repost_shape_excluded(&text, &commented, &config));
        let longer = format!("{commented}{}", distinct(0x7000, 1));
        assert!(!shape_allows(&text, &longer));
        assert!(repost_shape_excluded(&text, &longer, &config));
        // A credit line's letters are not unmatched: not excluded.
        let credited = format!("{}来源{}", piece(0..40), distinct(0x5400, 20));
        assert!(!repost_shape_excluded(&text, &credited, &config));
    }

    #[test]
    fn a_post_cut_short_joins_its_whole_text_but_may_not_reword_it() {
        let config = ConfirmationConfig::default();
        let joins = |ours: &str, theirs: &str| {
            !repost_shape_excluded(ours, theirs, &config)
                && repost_allows_join(&edits::compare(ours, theirs), &config)
        };
        let full = "市体育中心游泳馆今天起恢复对外开放，每天上午八点到晚上九点接待市民，\
                    周一下午闭馆清洁，学生凭证件可以享受半价优惠，馆内新增了儿童戏水池和恒温淋浴间，\
                    暑期还将开设免费游泳培训班，名额有限，报名请拨打服务热线或到前台登记";
        let opening = "市体育中心游泳馆今天起恢复对外开放，每天上午八点到晚上九点接待市民，\
                       周一下午闭馆清洁，学生凭证件可以享";
        // More than twice as long as what the cut kept: the rest is the
        // text the cut hid, not a comment.
        let cut = format!("{opening}…全文");
        assert!(
            edits::compare(&cut, full).longer_chars > 2 * edits::compare(&cut, full).shorter_chars
        );
        assert!(joins(&cut, full));
        // Without the ellipsis the longer text goes on with a clause.
        assert!(!joins(opening, full));
        // One word reworded in 40 letters joins a whole text; a cut copy
        // copies, so the same change is another story's.
        let reworded = full.replacen("恢复", "重启", 1);
        assert!(joins(&reworded, full));
        let cut_reworded = cut.replacen("恢复", "重启", 1);
        assert!(!joins(&cut_reworded, full));
        // Cut within a headline's length of its opening, a post could be
        // the opening of another.
        // (Whole, its first sentence would read as a post that another
        // commented on.)
        let first_sentence = "市体育中心游泳馆今天起恢复对外开放，每天上午八点到晚上九点接待市民";
        let two_sentences =
            format!("{first_sentence}。周一下午闭馆清洁，学生凭证件可以享受半价优惠");
        assert!(joins(first_sentence, &two_sentences));
        assert!(!joins(&format!("{first_sentence}……"), &two_sentences));
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
}
