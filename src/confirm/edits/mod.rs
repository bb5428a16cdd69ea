//! How two short texts differ once aligned in reading order.
//!
//! Motivation: a set measure (Jaccard of character bigrams) cannot see order
//! or meaning. Two questions with the same characters in another order
//! ("from A to B" / "from B to A"), or two headlines that swap one figure
//! written in words ("第二届" / "第三届"), share almost all their
//! bigrams. A reprint of a short text adds something (a prefix, a tag, a
//! link), drops or swaps a function word, or changes punctuation: read in
//! order, nearly all of the shorter text is still there, in one piece, and
//! no content word changed. Recurring headlines ("…开幕" / "…闭幕", another
//! minister's name) differ in exactly one content word.
//!
//! Design: a longest common subsequence of the two texts' letters and digits
//! (dynamic programming, both texts are short), the one with the fewest
//! gaps, walked from the start to list the gaps between matched characters.
//! A gap with characters on both sides is a substitution; gaps before the
//! first and after the last match are the edges, where reposts add their
//! prefixes and tags. Each gap is then read word by word (jieba's tags for
//! Chinese, stop words for other scripts): whether it swaps, cuts, adds or
//! drops a content word, whether it is marked off by punctuation, whether it
//! lies in a credit line ("来源：…").
//!
//! Consequences: cost is quadratic in length, so it is only for short
//! texts and headlines (below `short_text_chars`, 100 by default: at most
//! 10 000 cells). Words are looked up only when the texts differ.

use std::ops::Range;

use crate::confirm::synonyms::Synonyms;
use crate::fingerprint::normalize;
use crate::fingerprint::tokenize::{WordKind, WordMark, word_marks};

mod alignment;
mod letters;
mod outline;
mod rewording;
mod summary;
pub use alignment::ANCHOR_CHARS;
pub use alignment::{GapPosition, align};
use alignment::{one_sided_on_either_side, shared_span};
use letters::Letters;
pub use letters::is_numeral;
pub use outline::{AlignmentOutline, OutlineLetters, outline, outline_of};
pub use rewording::opens_to_another_person;
use rewording::{
    WordSwap, addressee_names, declared_synonyms, edge_word_swapped_for_synonym, swaps_a_morpheme,
    swaps_a_party, swaps_an_addressee, swaps_for_an_opposite,
};
pub use summary::{EditSummary, RepostReading};

/// A shared span shorter than this is a headline's (see
/// `Side::piece_at_span_edge`).
const MAX_HEADLINE_CHARS: usize = 40;

/// Fewest letters of a Latin-script clause that continues a sentence at an
/// edge of the shared span (shorter: a word a repost glued on).
const MIN_CLAUSE_LETTERS: usize = 4;

/// Fewest words added or dropped inside the shared span that make a clause
/// when one of them is a content word: one word is a reprint's filler
/// ("进一步", "latest"), a clause changes what the text says.
const MIN_CLAUSE_WORDS: usize = 2;

/// Fewest Han characters added at an edge, run into the text, that make a
/// change of content (see `Side::attached_words_at_edge`): a two-character
/// "转发" typed straight after a post is a repost's mark.
const MIN_ATTACHED_HAN: usize = 4;

/// One text of a comparison: its letters and digits and their words.
struct Side<'a> {
    letters: &'a Letters,
    marks: &'a [WordMark],
}

/// Which edge of the shared span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    Before,
    After,
}

/// How the letters next to the shared span (up to the nearest break) stand
/// to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EdgePiece {
    /// Nothing there, or something a repost puts around a text: marked off
    /// by punctuation (a tag, a comment, a credit), or not Chinese words.
    Apart,
    /// Part of the sentence: Chinese words run into the span, or a clause
    /// of four or more Han characters after a bare space. `content`: it
    /// holds a content word; `fact`: a name, place, time or numeral.
    Part { content: bool, fact: bool },
}

impl Side<'_> {
    /// The letters of this text just outside `span` on `edge`, up to the
    /// nearest break, and how they stand to the span (see [`EdgePiece`]).
    /// `span_chars`: the span's length (a space ends a headline's clause
    /// only: posts separate sentences with spaces).
    fn piece_at_span_edge(&self, span: &Range<usize>, edge: Edge, span_chars: usize) -> EdgePiece {
        let Letters {
            chars,
            breaks,
            continued,
            spaced,
            capital,
            ..
        } = self.letters;
        let strong_break = |i: usize| breaks[i] && !continued[i];
        // The piece runs from the span to the nearest mark (a clause of an
        // English sentence is several words); `boundary`: the index whose
        // break separates it from the span; `after_break`: the first letter
        // after that break.
        let (piece, boundary) = match edge {
            Edge::Before => {
                if span.start == 0 {
                    return EdgePiece::Apart;
                }
                let start = (0..span.start)
                    .rev()
                    .find(|&i| strong_break(i))
                    .unwrap_or(0);
                (start..span.start, span.start)
            }
            Edge::After => {
                if span.end >= chars.len() {
                    return EdgePiece::Apart;
                }
                let end = (span.end + 1..chars.len())
                    .find(|&i| strong_break(i))
                    .unwrap_or(chars.len());
                (span.end..end, span.end)
            }
        };
        if self.letters.only_tags_or_repost_marker(&piece)
            || (edge == Edge::After && self.letters.opens_byline(&piece))
        {
            return EdgePiece::Apart;
        }
        let han = chars[piece.clone()]
            .iter()
            .filter(|&&c| normalize::is_han(c))
            .count();
        let part = if !breaks[boundary] {
            // Run into the span: Chinese words of the sentence (Latin
            // letters glued on are a cut word or a tag).
            han > 0
        } else if continued[boundary] {
            // After a comma the sentence goes on, and after a space in a
            // headline or in English, unless a capital starts a new one.
            let comma = !spaced[boundary];
            (han >= MIN_ATTACHED_HAN && (comma || span_chars < MAX_HEADLINE_CHARS))
                || (han == 0 && !capital[boundary] && piece.len() >= MIN_CLAUSE_LETTERS)
        } else {
            false
        };
        if !part {
            return EdgePiece::Apart;
        }
        EdgePiece::Part {
            content: self.has_content_in(piece.clone()),
            fact: self.has_entity_in(piece),
        }
    }

    /// `added`, at the start or end of this text, runs into the rest of it
    /// with no punctuation or space between.
    fn attached_at_edge(&self, added: &Range<usize>) -> bool {
        let Letters { chars, breaks, .. } = self.letters;
        if added.start == 0 {
            added.end < chars.len() && !breaks[added.end]
        } else {
            added.end == chars.len() && !breaks[added.start]
        }
    }

    /// `added`, at the start or end of this text, is Chinese words run
    /// straight into the rest of it: at least [`MIN_ATTACHED_HAN`] Han
    /// characters holding a content word, attached (see
    /// [`Side::attached_at_edge`]). Reposts mark what they add (brackets,
    /// `#tags#`, a colon, a dash, a link, a space: "快讯｜…", "… 转发");
    /// words run into the sentence are part of it ("长江中下游强降雨持续" /
    /// "强降雨持续").
    fn attached_words_at_edge(&self, added: Range<usize>) -> bool {
        self.attached_at_edge(&added)
            && self.letters.chars[added.clone()]
                .iter()
                .filter(|&&c| normalize::is_han(c))
                .count()
                >= MIN_ATTACHED_HAN
            && self.has_content_in(added)
    }

    /// `range` starts or ends a field: characters added there are at an
    /// edge of the text's body or title.
    fn at_field_edge(&self, range: &Range<usize>) -> bool {
        let field_starts = &self.letters.field_starts;
        field_starts.get(range.start).copied().unwrap_or(false)
            || field_starts.get(range.end).copied().unwrap_or(false)
    }

    /// Some content word (or name, time or numeral) overlaps `range`.
    fn has_content_in(&self, range: Range<usize>) -> bool {
        self.marks[range]
            .iter()
            .any(|mark| matches!(mark.kind, WordKind::Content | WordKind::Entity))
    }

    /// `range` (not empty) is whole words of this text: none runs in from
    /// before it or on past it.
    fn whole_words(&self, range: Range<usize>) -> bool {
        self.marks[range.start].word_start == range.start
            && (range.end == self.marks.len()
                || self.marks[range.end].word_start != self.marks[range.end - 1].word_start)
    }

    /// How many words overlap `range`.
    fn words_in(&self, range: Range<usize>) -> usize {
        let mut starts: Vec<usize> = self.marks[range]
            .iter()
            .map(|mark| mark.word_start)
            .collect();
        starts.dedup();
        starts.len()
    }

    /// Some name, time word or numeral overlaps `range`.
    fn has_entity_in(&self, range: Range<usize>) -> bool {
        self.marks[range]
            .iter()
            .any(|mark| mark.kind == WordKind::Entity)
    }

    /// A content word runs across `point` (between `point - 1` and `point`).
    fn content_cut_at(&self, point: usize) -> bool {
        point > 0
            && point < self.marks.len()
            && self.marks[point - 1].word_start == self.marks[point].word_start
            && matches!(self.marks[point].kind, WordKind::Content | WordKind::Entity)
    }

    /// `added` (a range of `other`) stands at `point` of this text and
    /// changes a word, wherever it slides: an insertion between equal
    /// characters can be aligned at several points ("进入" / "进一步进入"
    /// reads as "进|一步进|入" or as "|进一步|进入"; "快讯快到…" as an
    /// inner "讯快" or a leading "快讯"), and at any of them it may be a
    /// harmless whole word or tag. It changes a word at a point inside the
    /// text when it cuts one of this text's content words there and is not
    /// whole words of the other text either (dropping "的" from "最牛的车"
    /// leaves "牛车", one word, but "的" was a word of its own), or when it
    /// is (part of) a name, time or numeral of the other text.
    fn added_changes_wherever_aligned(
        &self,
        point: usize,
        other: &Side,
        added: Range<usize>,
    ) -> bool {
        self.at_every_alignment(point, other, added, |at, added| {
            at > 0
                && at < self.marks.len()
                && ((self.content_cut_at(at) && !other.whole_words(added.clone()))
                    || other.has_entity_in(added))
        })
    }

    /// `added` (of `other`, inserted at `point` of this text) is a clause
    /// wherever it can be aligned: two or more words, one of them a content
    /// word ("进一步" inserted before "进入" may be aligned as "一步进",
    /// which spans three words; it is one adverb).
    fn added_is_a_clause_wherever_aligned(
        &self,
        point: usize,
        other: &Side,
        added: Range<usize>,
    ) -> bool {
        self.at_every_alignment(point, other, added, |_, added| {
            other.words_in(added.clone()) >= MIN_CLAUSE_WORDS && other.has_content_in(added)
        })
    }

    /// `holds` is true at every place `added` (of `other`) can be inserted
    /// in this text with the same letters matched: `point`, and the shifts
    /// to either side over letters the insertion repeats ("讯快" / "快讯").
    /// Stops at the first place where it is false.
    fn at_every_alignment(
        &self,
        point: usize,
        other: &Side,
        added: Range<usize>,
        mut holds: impl FnMut(usize, Range<usize>) -> bool,
    ) -> bool {
        if !holds(point, added.clone()) {
            return false;
        }
        let (ours, theirs) = (&self.letters.chars, &other.letters.chars);
        let (mut at, mut from, mut to) = (point, added.start, added.end);
        while at > 0
            && from > 0
            && theirs[from - 1] == theirs[to - 1]
            && ours[at - 1] == theirs[from - 1]
        {
            (at, from, to) = (at - 1, from - 1, to - 1);
            if !holds(at, from..to) {
                return false;
            }
        }
        let (mut at, mut from, mut to) = (point, added.start, added.end);
        while at < ours.len()
            && to < theirs.len()
            && theirs[from] == theirs[to]
            && ours[at] == theirs[to]
        {
            (at, from, to) = (at + 1, from + 1, to + 1);
            if !holds(at, from..to) {
                return false;
            }
        }
        true
    }
}

/// Whether one gap of an alignment changes a content word (see
/// [`EditSummary::content_word_changed`]). `ours` is the gap in the shorter
/// text, `theirs` in the longer.
fn gap_changes_content(
    shorter: &Side,
    longer: &Side,
    ours: Range<usize>,
    theirs: Range<usize>,
    position: GapPosition,
    synonyms: &Synonyms,
) -> bool {
    match (ours.is_empty(), theirs.is_empty(), position) {
        // A substitution inside the texts: either side's words count, unless
        // the user declared the two words synonyms.
        (false, false, GapPosition::Interior) => {
            (shorter.has_content_in(ours.clone()) || longer.has_content_in(theirs.clone()))
                && !declared_synonyms(
                    &shorter.letters.chars,
                    ours,
                    &longer.letters.chars,
                    theirs,
                    synonyms,
                )
        }
        // At an edge the longer text may carry a repost's tag: only what the
        // shorter text loses counts.
        (false, false, _) => shorter.has_content_in(ours),
        // Characters on one side only: a change when they cut a word of the
        // other text, or are a name, time or numeral (an added or dropped
        // filler, particle or adjective is not).
        // (A field's edge is an edge: a credit line before the body.)
        (true, false, GapPosition::Interior) => {
            !longer.at_field_edge(&theirs)
                && shorter.added_changes_wherever_aligned(ours.start, longer, theirs)
        }
        (false, true, GapPosition::Interior) => {
            !shorter.at_field_edge(&ours)
                && longer.added_changes_wherever_aligned(theirs.start, shorter, ours)
        }
        // Characters on one side only at an edge: a repost's tag or link,
        // unless they are words run into the sentence.
        (true, false, _) => longer.attached_words_at_edge(theirs),
        (false, true, _) => shorter.attached_words_at_edge(ours),
        (true, true, _) => false,
    }
}

/// `gap` (of `side`) holds only digits that the other text lost from the
/// front of a number it keeps (`$620` / `$20`, `7,000` / `,000`: a copy cut
/// inside a figure), where the whole number has at least three digits.
fn lost_leading_digits(
    side: &Letters,
    gap: &Range<usize>,
    other: &Letters,
    other_gap: &Range<usize>,
) -> bool {
    if gap.is_empty() || !other_gap.is_empty() {
        return false;
    }
    let digits = |range: Range<usize>| side.chars[range].iter().all(char::is_ascii_digit);
    let number_end = (gap.end..side.chars.len())
        .find(|&i| !side.chars[i].is_ascii_digit())
        .unwrap_or(side.chars.len());
    digits(gap.clone())
        && number_end > gap.end
        && number_end - gap.start >= 3
        && (gap.start == 0 || !side.chars[gap.start - 1].is_ascii_digit())
        && other_gap.start < other.chars.len()
        && other.chars[other_gap.start].is_ascii_digit()
}

/// Aligns the letters and digits of two texts (other characters and field
/// separators are skipped) and summarises their differences.
pub fn compare(left: &str, right: &str) -> EditSummary {
    compare_with(left, right, &Synonyms::empty())
}

/// [`compare`], where a content word swapped for a declared synonym is not
/// a change of content (see [`crate::confirm::synonyms`]).
pub fn compare_with(left: &str, right: &str, synonyms: &Synonyms) -> EditSummary {
    compare_with_until(left, right, synonyms, |_| false)
}

/// [`compare_with`] that stops once the shape of the alignment is known
/// (the letters' counts, the repost reading's span, cut, inside edits and
/// inside unmatched letters, and the unmatched letters of the shorter
/// text) if `give_up` says so: the fields that need the words are then
/// left at zero. For a caller that rejects on the shape alone: the words
/// (a segmentation and tagging of both texts) are most of an alignment's
/// cost, and on a feed of texts sharing sentences nearly every alignment
/// fails on its shape.
pub fn compare_with_until(
    left: &str,
    right: &str,
    synonyms: &Synonyms,
    give_up: impl FnOnce(&EditSummary) -> bool,
) -> EditSummary {
    let (mut shorter, mut longer) = (Letters::of(left), Letters::of(right));
    if shorter.chars.len() > longer.chars.len() {
        std::mem::swap(&mut shorter, &mut longer);
    }
    let mut summary = EditSummary {
        shorter_chars: shorter.chars.len(),
        longer_chars: longer.chars.len(),
        ..EditSummary::default()
    };
    // The common case for headlines and leads: nothing to align.
    if shorter.chars == longer.chars {
        summary.repost.span_chars = shorter.chars.len();
        return summary;
    }
    let mut gaps: Vec<(Range<usize>, Range<usize>, GapPosition)> = Vec::new();
    let common = align(&shorter.chars, &longer.chars, |ours, theirs, position| {
        gaps.push((ours, theirs, position));
    });
    let (span, longer_span) = shared_span(&gaps, shorter.chars.len(), longer.chars.len());
    summary.repost.span_chars = span.len();
    summary.repost.cut_chars = shorter.chars.len() - span.len();
    let all_credit =
        |credit: &[bool], range: &Range<usize>| credit[range.clone()].iter().all(|&c| c);
    // Letters of the shorter text in credit lines the other text words
    // otherwise: not changes of the text.
    let is_credit = |ours: &Range<usize>, theirs: &Range<usize>| {
        all_credit(&shorter.credit, ours) && all_credit(&longer.credit, theirs)
    };
    // A gap inside the shared span on both sides.
    let is_inside = |ours: &Range<usize>, theirs: &Range<usize>| {
        span.start <= ours.start
            && ours.end <= span.end
            && longer_span.start <= theirs.start
            && theirs.end <= longer_span.end
            && !span.is_empty()
    };
    // A shorter text cut off with an ellipsis right where the span ends:
    // what the longer one says after it is what the cut hid (a post's
    // opening and its full text), if the span is more than a headline.
    summary.repost.cut_short = shorter.cut_short || longer.cut_short;
    let cut_where_span_ends = shorter.cut_short
        && span.end == shorter.chars.len()
        && longer_span.end < longer.chars.len();
    summary.repost.cut_too_soon = cut_where_span_ends && span.len() < MAX_HEADLINE_CHARS;
    if cut_where_span_ends && span.len() >= MAX_HEADLINE_CHARS {
        summary.repost.hidden_chars = longer.chars.len() - longer_span.end;
    }
    // The shape first: counted without the words. A word rewritten around
    // one letter it keeps ("破获" / "侦破", "启动" / "开启": one text has a
    // letter before it, the other one after) is one edit, not two.
    let mut unmatched_credit = 0;
    let mut previous_inside: Option<(&Range<usize>, &Range<usize>)> = None;
    for (ours, theirs, _) in &gaps {
        if is_credit(ours, theirs) {
            unmatched_credit += ours.len();
            // A credit line or a repost's label the other text words its
            // own way was not cut from the post.
            if ours.end <= span.start || span.end <= ours.start {
                summary.repost.cut_chars = summary.repost.cut_chars.saturating_sub(ours.len());
            }
            previous_inside = None;
        } else if is_inside(ours, theirs) {
            let rewritten_around_one_letter =
                previous_inside.is_some_and(|(ours_before, theirs_before)| {
                    ours.start == ours_before.end + 1
                        && one_sided_on_either_side(ours_before, theirs_before, ours, theirs)
                });
            summary.repost.inside_edits += usize::from(!rewritten_around_one_letter);
            summary.repost.inside_unmatched += ours.len();
            previous_inside = Some((ours, theirs));
        } else {
            previous_inside = None;
        }
    }
    summary.unmatched_in_shorter = shorter.chars.len() - common - unmatched_credit;
    if give_up(&summary) {
        return summary;
    }
    // Words are looked up at the first gap.
    let mut marks: Option<(Vec<WordMark>, Vec<WordMark>)> = None;
    // Edges of the span where a word was swapped for a synonym.
    let mut synonym_at_edge: Vec<Edge> = Vec::new();
    let addressees = addressee_names(&shorter, &longer);
    for (ours, theirs, position) in gaps {
        if is_credit(&ours, &theirs) {
            continue;
        }
        let replaces_numeral = !ours.is_empty()
            && !theirs.is_empty()
            && shorter.chars[ours.clone()].iter().any(|&c| is_numeral(c))
            && longer.chars[theirs.clone()].iter().any(|&c| is_numeral(c));
        if !ours.is_empty() && !theirs.is_empty() {
            if position == GapPosition::Interior {
                summary.interior_substitutions += 1;
            }
            summary.numeral_replaced |= replaces_numeral;
        }
        let interior_substitution =
            !ours.is_empty() && !theirs.is_empty() && position == GapPosition::Interior;
        let (shorter_marks, longer_marks) = marks.get_or_insert_with(|| {
            (
                word_marks(&shorter.chars, &shorter.breaks),
                word_marks(&longer.chars, &longer.breaks),
            )
        });
        let shorter_side = Side {
            letters: &shorter,
            marks: shorter_marks,
        };
        let longer_side = Side {
            letters: &longer,
            marks: longer_marks,
        };
        let changed = gap_changes_content(
            &shorter_side,
            &longer_side,
            ours.clone(),
            theirs.clone(),
            position,
            synonyms,
        );
        let unmarked = match (ours.is_empty(), theirs.is_empty(), position) {
            (_, _, GapPosition::Interior) => {
                !(longer_side.at_field_edge(&theirs) || shorter_side.at_field_edge(&ours))
            }
            (true, false, _) => longer_side.attached_at_edge(&theirs),
            (false, true, _) => shorter_side.attached_at_edge(&ours),
            _ => false,
        };
        summary.unmarked_edits += usize::from(unmarked);
        summary.content_word_changed |= changed;
        summary.content_word_replaced |= changed && interior_substitution;
        summary.content_word_dropped |= position == GapPosition::Interior
            && theirs.is_empty()
            && shorter_marks[ours.clone()]
                .iter()
                .any(|mark| matches!(mark.kind, WordKind::Content | WordKind::Entity));
        let reading = &mut summary.repost;
        reading.fact_changes +=
            usize::from(swaps_an_addressee(addressees.as_ref(), &ours, &theirs));
        if is_inside(&ours, &theirs) {
            let changed_inside = gap_changes_content(
                &shorter_side,
                &longer_side,
                ours.clone(),
                theirs.clone(),
                GapPosition::Interior,
                synonyms,
            );
            // Whole words added or dropped are a reprint's fillers ("正式",
            // "进一步", "also"); a clause is not.
            let clause_changed = (ours.is_empty()
                && shorter_side.added_is_a_clause_wherever_aligned(
                    ours.start,
                    &longer_side,
                    theirs.clone(),
                ))
                || (theirs.is_empty()
                    && longer_side.added_is_a_clause_wherever_aligned(
                        theirs.start,
                        &shorter_side,
                        ours.clone(),
                    ));
            let reworded = changed_inside
                && swaps_a_morpheme(
                    (shorter_side.letters, shorter_side.marks),
                    (longer_side.letters, longer_side.marks),
                    &ours,
                    &theirs,
                );
            reading.content_changes += usize::from((changed_inside && !reworded) || clause_changed);
            // One word swapped for another: read once, for a rewording and
            // for a sense reversed.
            let word_swap = changed_inside
                .then(|| {
                    WordSwap::of(
                        (shorter_side.letters, shorter_side.marks),
                        (longer_side.letters, longer_side.marks),
                        &ours,
                        &theirs,
                    )
                })
                .flatten();
            reading.predicate_swaps += usize::from(
                !reworded
                    && !clause_changed
                    && word_swap.is_some_and(|swap| swap.is_predicate_swap()),
            );
            // A name, place or time by its words' tags on either side; a
            // numeral replaced by another, or digits ("一" inside 进一步 is
            // part of an ordinary word).
            let digits = |side: &Side, range: &Range<usize>| {
                side.letters.chars[range.clone()]
                    .iter()
                    .any(char::is_ascii_digit)
            };
            let lost_digits = lost_leading_digits(&shorter, &ours, &longer, &theirs)
                || lost_leading_digits(&longer, &theirs, &shorter, &ours);
            reading.figure_changes += usize::from(
                !lost_digits
                    && (replaces_numeral
                        || digits(&shorter_side, &ours)
                        || digits(&longer_side, &theirs)),
            );
            // Two words a thesaurus pairs are one meaning, whatever jieba
            // tags them ("同比增长" / "同比增加": the second is one word it tags
            // as a numeral).
            let entity = shorter_side.has_entity_in(ours.clone())
                || longer_side.has_entity_in(theirs.clone());
            let paired = entity
                && !ours.is_empty()
                && !theirs.is_empty()
                && declared_synonyms(
                    &shorter.chars,
                    ours.clone(),
                    &longer.chars,
                    theirs.clone(),
                    synonyms,
                );
            reading.fact_changes += usize::from(!lost_digits && !paired && entity);
            // A form's party swapped for another: a name no dictionary knows.
            reading.fact_changes += usize::from(swaps_a_party(&shorter, &ours, &longer, &theirs));
            reading.fact_changes += usize::from(
                swaps_for_an_opposite(&shorter, &ours, &longer, &theirs)
                    || word_swap
                        .is_some_and(|swap| swap.reverses_a_sense() || swap.changes_the_stage()),
            );
        } else if !ours.is_empty() && !theirs.is_empty() {
            // Outside the span on both sides.
            // A word at the text's edge swapped for its synonym before the
            // repost's tag ("…人参加。" / "…人参与。#话题#"): the alignment
            // ends the shared span before it.
            if edge_word_swapped_for_synonym(&shorter, &ours, &longer, &theirs, &span, synonyms) {
                // Nor is the synonym a clause the longer text adds there.
                let edge = if ours.start >= span.end {
                    Edge::After
                } else {
                    Edge::Before
                };
                synonym_at_edge.push(edge);
                continue;
            }
            // Otherwise the shorter text's letters there were replaced by
            // the other's, not just cut. (Gaps lie between runs, so a gap is
            // wholly inside or wholly outside the span.) In a post, a title or
            // tag marked
            // off by punctuation and replaced by another is a repost's new
            // title, not a changed fact: only its letters count, as cut. (In
            // a headline it is what the headline is about: "青春之城|今晚开播"
            // / "淬火|今晚开播".)
            let marked_off = span.len() >= MAX_HEADLINE_CHARS
                && if ours.end <= span.start {
                    ours.end < shorter.chars.len()
                        && shorter.breaks[ours.end]
                        && !shorter.continued[ours.end]
                } else {
                    shorter.breaks[ours.start] && !shorter.continued[ours.start]
                };
            if marked_off {
                continue;
            }
            reading.content_changes += usize::from(shorter_side.has_content_in(ours.clone()));
            reading.fact_changes += usize::from(shorter_side.has_entity_in(ours.clone()));
            reading.figure_changes += usize::from(
                replaces_numeral || shorter.chars[ours].iter().any(char::is_ascii_digit),
            );
        }
    }
    let longer_adds = longer_span.start > 0 || longer_span.end < longer.chars.len();
    if !span.is_empty() && longer_adds {
        let (_, longer_marks) = marks.get_or_insert_with(|| {
            (
                word_marks(&shorter.chars, &shorter.breaks),
                word_marks(&longer.chars, &longer.breaks),
            )
        });
        let longer_side = Side {
            letters: &longer,
            marks: longer_marks,
        };
        // What the longer text adds around the span: a comment, or the
        // same sentence going on. (What the shorter text has there was cut,
        // and counts as cut.)
        for edge in [Edge::Before, Edge::After] {
            if synonym_at_edge.contains(&edge)
                || (edge == Edge::After && summary.repost.rest_hidden_by_cut())
            {
                continue;
            }
            if let EdgePiece::Part { content, fact } =
                longer_side.piece_at_span_edge(&longer_span, edge, span.len())
            {
                summary.repost.clauses += usize::from(content);
                summary.repost.fact_changes += usize::from(fact);
            }
        }
    }
    summary
}

#[cfg(test)]
mod tests;
