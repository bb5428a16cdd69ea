//! Property tests of the in-order comparison of short texts (`edits`):
//! the alignment is a longest common subsequence whose gaps cover every
//! unmatched element exactly once, and the word-level summary never panics
//! and does not depend on which text comes first.

use neardup::confirm::edits::{GapPosition, align, compare, compare_with_until};
use neardup::confirm::synonyms::Synonyms;
use proptest::prelude::*;

/// Longest common subsequence length by the textbook table.
fn lcs_length(left: &[u8], right: &[u8]) -> usize {
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

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(0..PIECES.len(), 0..14)
        .prop_map(|pieces| pieces.into_iter().map(|piece| PIECES[piece]).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

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
