//! Property tests of the in-order comparison of short texts (`edits`):
//! the alignment is a longest common subsequence whose gaps cover every
//! unmatched element exactly once, and the word-level summary never panics
//! and does not depend on which text comes first.

use neardup::confirm::edits::{GapPosition, align, compare, compare_with_until, outline};
use neardup::confirm::synonyms::Synonyms;
use neardup::confirm::{
    ConfirmationConfig, repost_allows_join, repost_shape_allows_join, repost_shape_excluded,
};
use neardup::fingerprint::normalize::is_letter_or_digit;
use proptest::prelude::*;

/// Longest common subsequence length by the textbook table.
fn lcs_length<T: PartialEq>(left: &[T], right: &[T]) -> usize {
    let mut table = vec![vec![0usize; right.len() + 1]; left.len() + 1];
    for i in 0..left.len() {
        for j in 0..right.len() {
            table[i + 1][j + 1] = if left[i] == right[j] {
                table[i][j] + 1
            } else {
                table[i][j + 1].max(table[i + 1][j])
            };
        }
    }
    table[left.len()][right.len()]
}

/// Pieces that make texts with shared words, function words, names, times,
/// numerals, punctuation, field separators and English words.
const PIECES: &[&str] = &[
    "本台",
    "明天",
    "将",
    "直播",
    "开幕",
    "闭幕",
    "会议",
    "的",
    "了",
    "怎么",
    "如何",
    "李强",
    "李克强",
    "今天",
    "第二",
    "届",
    "进一步",
    "进入",
    "海带",
    "，",
    "：",
    "【话题】",
    " ",
    "\u{1e}",
    "转发",
    "the",
    "bank",
    "adds",
    "reserves",
    "6-1/4",
    "six",
    "#",
    "（图）",
    "長江",
    "中下游",
];

/// Credit lines and repost labels, beside the pieces above, for the
/// properties that must hold with credits in the texts too.
const CREDITS: &[&str] = &[
    "来源",
    "记者",
    "via",
    "Reuters",
    "转发：",
    "快讯｜",
    "RT @ab ",
];

fn piece(index: usize) -> Option<&'static str> {
    PIECES
        .get(index)
        .or_else(|| CREDITS.get(index - PIECES.len()))
        .copied()
}

const ALL_PIECES: usize = PIECES.len() + CREDITS.len();

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..14)
        .prop_map(|pieces| pieces.into_iter().map(|piece| PIECES[piece]).collect())
}

/// A text and a copy of it: pieces added before and after, and a few of
/// its own pieces replaced or dropped; or an unrelated text.
fn text_and_copy() -> impl Strategy<Value = (String, String)> {
    (
        prop::collection::vec(0..ALL_PIECES, 4..24),
        prop::collection::vec(0..ALL_PIECES, 0..6),
        prop::collection::vec(0..ALL_PIECES, 0..6),
        prop::collection::vec((0usize..24, 0..=ALL_PIECES), 0..4),
        prop::collection::vec(0..ALL_PIECES, 0..14),
        0..4u8,
    )
        .prop_map(|(base, prefix, suffix, edits, unrelated, kind)| {
            let join = |pieces: &[usize]| -> String {
                pieces.iter().filter_map(|&index| piece(index)).collect()
            };
            let mut copy = base.clone();
            for (at, piece) in edits {
                if copy.is_empty() {
                    break;
                }
                // ALL_PIECES drops the piece.
                let at = at % copy.len();
                if piece == ALL_PIECES {
                    copy.remove(at);
                } else {
                    copy[at] = piece;
                }
            }
            let copy = format!("{}{}{}", join(&prefix), join(&copy), join(&suffix));
            if kind == 0 {
                (join(&base), join(&unrelated))
            } else {
                (join(&base), copy)
            }
        })
}

/// A text of letters and a copy edited letter by letter: cut at both
/// ends, letters replaced, dropped or added inside, a comment before and
/// after (each sometimes a credit line): pairs near every bound of the
/// repost reading's shape.
fn text_and_lettered_copy() -> impl Strategy<Value = (String, String)> {
    const LETTERS: &[&str] = &[
        "a",
        "b",
        "c",
        "d",
        "e",
        "北",
        "京",
        "上",
        "海",
        "雨",
        " ",
        "，",
        "来源",
        "via",
        "…",
        "...",
        "转发：",
    ];
    let letters = || prop::collection::vec(0..LETTERS.len(), 0..24);
    (
        prop::collection::vec(0..LETTERS.len(), 8..80),
        (0usize..12, 0usize..12),
        prop::collection::vec((0usize..80, 0..=LETTERS.len()), 0..8),
        (letters(), letters()),
    )
        .prop_map(
            move |(base, (cut_start, cut_end), edits, (before, after))| {
                let join = |pieces: &[usize]| -> String {
                    pieces
                        .iter()
                        .filter_map(|&index| LETTERS.get(index))
                        .copied()
                        .collect()
                };
                let end = base
                    .len()
                    .saturating_sub(cut_end)
                    .max(cut_start.min(base.len()));
                let mut copy = base[cut_start.min(base.len())..end].to_vec();
                for (at, letter) in edits {
                    let at = at % (copy.len() + 1);
                    match letter {
                        // LETTERS.len() drops a letter; an even place adds one.
                        drop if drop == LETTERS.len() && at < copy.len() => {
                            copy.remove(at);
                        }
                        add if at % 2 == 0 && add < LETTERS.len() => copy.insert(at, add),
                        replace if at < copy.len() && replace < LETTERS.len() => copy[at] = replace,
                        _ => {}
                    }
                }
                (
                    join(&base),
                    format!("{}{}{}", join(&before), join(&copy), join(&after)),
                )
            },
        )
}

/// The letters an alignment compares, as the engine reads them.
fn letters(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| is_letter_or_digit(c))
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn the_outline_counts_the_letters_and_their_common_subsequence(left in text(), right in text()) {
        let found = outline(&left, &right);
        let (ours, theirs) = (letters(&left), letters(&right));
        prop_assert_eq!(found.shorter_chars, ours.len().min(theirs.len()));
        prop_assert_eq!(found.longer_chars, ours.len().max(theirs.len()));
        prop_assert_eq!(found.common, Some(lcs_length(&ours, &theirs)));
    }

    #[test]
    fn a_pair_the_outline_excludes_never_has_a_joining_shape(
        (left, right) in text_and_lettered_copy(),
        min_fuzzy_chars in 0usize..16,
    ) {
        let config = ConfirmationConfig { min_fuzzy_chars, ..ConfirmationConfig::default() };
        if repost_shape_excluded(&left, &right, &config) {
            let whole = compare(&left, &right);
            prop_assert!(!whole.identical(), "{:?}", whole);
            prop_assert!(!repost_shape_allows_join(&whole, &config), "{:?}", whole);
        }
    }

    #[test]
    fn a_pair_the_outline_excludes_never_joins((left, right) in text_and_copy(), min_fuzzy_chars in 0usize..16) {
        let config = ConfirmationConfig { min_fuzzy_chars, ..ConfirmationConfig::default() };
        if repost_shape_excluded(&left, &right, &config) {
            let whole = compare(&left, &right);
            prop_assert!(!repost_allows_join(&whole, &config), "{:?}", whole);
        }
    }

    #[test]
    fn the_alignment_is_a_longest_common_subsequence_with_exact_gaps(
        left in prop::collection::vec(0u8..4, 0..24),
        right in prop::collection::vec(0u8..4, 0..24),
    ) {
        let mut covered_left = vec![0u8; left.len()];
        let mut covered_right = vec![0u8; right.len()];
        let mut positions = Vec::new();
        let common = align(&left, &right, |ours, theirs, position| {
            assert!(!(ours.is_empty() && theirs.is_empty()), "empty gap");
            for index in ours {
                covered_left[index] += 1;
            }
            for index in theirs {
                covered_right[index] += 1;
            }
            positions.push(position);
        });
        prop_assert_eq!(common, lcs_length(&left, &right));
        // Every element is matched or in exactly one gap.
        let gapped_left = covered_left.iter().filter(|&&count| count == 1).count();
        let gapped_right = covered_right.iter().filter(|&&count| count == 1).count();
        prop_assert!(covered_left.iter().chain(&covered_right).all(|&count| count <= 1));
        prop_assert_eq!(gapped_left, left.len() - common);
        prop_assert_eq!(gapped_right, right.len() - common);
        // Leading only first, trailing only last.
        for (index, position) in positions.iter().enumerate() {
            if *position == GapPosition::Leading {
                prop_assert_eq!(index, 0);
            }
            if *position == GapPosition::Trailing {
                prop_assert_eq!(index, positions.len() - 1);
            }
        }
    }

    #[test]
    fn the_summary_never_panics_and_is_symmetric_in_its_counts(left in text(), right in text()) {
        let forward = compare(&left, &right);
        let backward = compare(&right, &left);
        prop_assert_eq!(forward.shorter_chars, backward.shorter_chars);
        prop_assert_eq!(forward.longer_chars, backward.longer_chars);
        prop_assert_eq!(forward.unmatched_in_shorter, backward.unmatched_in_shorter);
        prop_assert!(forward.unmatched_in_shorter <= forward.shorter_chars);
        if left == right {
            prop_assert!(forward.identical());
            prop_assert!(!forward.content_word_changed);
            prop_assert_eq!(forward.unmarked_edits, 0);
        }
    }

    #[test]
    fn an_alignment_stopped_at_its_shape_has_the_same_shape(left in text(), right in text()) {
        let whole = compare(&left, &right);
        let shape = compare_with_until(&left, &right, &Synonyms::empty(), |_| true);
        prop_assert_eq!(shape.shorter_chars, whole.shorter_chars);
        prop_assert_eq!(shape.longer_chars, whole.longer_chars);
        prop_assert_eq!(shape.unmatched_in_shorter, whole.unmatched_in_shorter);
        prop_assert_eq!(shape.identical(), whole.identical());
        prop_assert_eq!(shape.repost.span_chars, whole.repost.span_chars);
        prop_assert_eq!(shape.repost.cut_chars, whole.repost.cut_chars);
        prop_assert_eq!(shape.repost.inside_edits, whole.repost.inside_edits);
        prop_assert_eq!(shape.repost.inside_unmatched, whole.repost.inside_unmatched);
        let not_stopped = compare_with_until(&left, &right, &Synonyms::empty(), |_| false);
        prop_assert_eq!(not_stopped, whole);
    }
}
