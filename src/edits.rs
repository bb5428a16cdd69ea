//! How two short texts differ once aligned in reading order.
//!
//! Motivation: a set measure (Jaccard of character bigrams) cannot see order
//! or meaning. Two questions with the same characters in another order
//! ("from A to B" / "from B to A"), or two headlines that swap one figure
//! written in words ("第二届" / "第三届"), share almost all their
//! bigrams. A reprint of a short text adds something (a prefix, a tag, a
//! link), drops or swaps one word, or changes punctuation: read in order,
//! nearly all of the shorter text is still there, in one piece.
//!
//! Design: a longest common subsequence of the two texts' letters and digits
//! (dynamic programming, both texts are short), walked from the start to
//! list the gaps between matched characters. A gap with characters on both
//! sides is a substitution; gaps before the first and after the last match
//! are the edges, where reposts add their prefixes and tags.
//!
//! Consequences: cost is quadratic in length, so it is only for short
//! texts (below `short_text_chars`, 100 by default: at most 10 000 cells).

use crate::fingerprint::{FIELD_SEPARATOR, normalize};

/// The differences between two short texts, aligned in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EditSummary {
    /// Letters and digits of the shorter text.
    pub shorter_chars: usize,
    /// Letters and digits of the longer text.
    pub longer_chars: usize,
    /// Characters of the shorter text outside the common subsequence:
    /// what a reprint changed or dropped of it, or what another text says
    /// in another order.
    pub unmatched_in_shorter: usize,
    /// Gaps inside the texts (not at either edge) with characters on both
    /// sides: one word swapped for another.
    pub interior_substitutions: usize,
    /// Some gap replaces a numeral (digit or Chinese numeral) with another:
    /// "第二届" / "第三届", "七点半" / "九点半".
    pub numeral_replaced: bool,
}

impl EditSummary {
    /// The two texts have the same letters and digits, in the same order.
    pub fn identical(&self) -> bool {
        self.unmatched_in_shorter == 0 && self.shorter_chars == self.longer_chars
    }
}

/// Digits and the Chinese numerals (the characters numbers are written with).
pub fn is_numeral(c: char) -> bool {
    c.is_ascii_digit() || crate::fingerprint::is_chinese_numeral(c)
}

/// Where a gap between matched elements lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapPosition {
    /// Before the first match (or the whole of both, with no match at all).
    Leading,
    /// Between two matches.
    Interior,
    /// After the last match.
    Trailing,
}

/// Aligns two sequences along one longest common subsequence and calls
/// `on_gap` with every gap that has elements on both sides (a substitution)
/// or on one side (an insertion). Returns the length of the common
/// subsequence.
pub fn align<T: PartialEq>(
    left: &[T],
    right: &[T],
    mut on_gap: impl FnMut(&[T], &[T], GapPosition),
) -> usize {
    let (rows, columns) = (left.len(), right.len());
    // suffix[i][j]: length of the longest common subsequence of left[i..]
    // and right[j..].
    let width = columns + 1;
    let mut suffix = vec![0u32; (rows + 1) * width];
    for i in (0..rows).rev() {
        for j in (0..columns).rev() {
            suffix[i * width + j] = if left[i] == right[j] {
                suffix[(i + 1) * width + j + 1] + 1
            } else {
                suffix[(i + 1) * width + j].max(suffix[i * width + j + 1])
            };
        }
    }
    // Walk one optimal alignment; a gap is closed by the next match.
    let (mut i, mut j) = (0, 0);
    let (mut gap_i, mut gap_j) = (0, 0);
    let mut position = GapPosition::Leading;
    while i < rows && j < columns {
        if left[i] == right[j] {
            if gap_i < i || gap_j < j {
                on_gap(&left[gap_i..i], &right[gap_j..j], position);
            }
            position = GapPosition::Interior;
            i += 1;
            j += 1;
            (gap_i, gap_j) = (i, j);
        } else if suffix[(i + 1) * width + j] >= suffix[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    if gap_i < rows || gap_j < columns {
        let position = match position {
            GapPosition::Leading => GapPosition::Leading,
            _ => GapPosition::Trailing,
        };
        on_gap(&left[gap_i..], &right[gap_j..], position);
    }
    suffix[0] as usize
}

/// Aligns the letters and digits of two texts (other characters and field
/// separators are skipped) and summarises their differences.
pub fn compare(left: &str, right: &str) -> EditSummary {
    let letters = |text: &str| -> Vec<char> {
        text.chars()
            .filter(|&c| c != FIELD_SEPARATOR && normalize::is_letter_or_digit(c))
            .collect()
    };
    let (mut shorter, mut longer) = (letters(left), letters(right));
    if shorter.len() > longer.len() {
        std::mem::swap(&mut shorter, &mut longer);
    }
    let mut summary = EditSummary {
        shorter_chars: shorter.len(),
        longer_chars: longer.len(),
        ..EditSummary::default()
    };
    let common = align(&shorter, &longer, |ours, theirs, position| {
        if ours.is_empty() || theirs.is_empty() {
            return;
        }
        if position == GapPosition::Interior {
            summary.interior_substitutions += 1;
        }
        if ours.iter().any(|&c| is_numeral(c)) && theirs.iter().any(|&c| is_numeral(c)) {
            summary.numeral_replaced = true;
        }
    });
    summary.unmatched_in_shorter = shorter.len() - common;
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_added_prefix_and_tag_leave_the_shorter_text_whole() {
        let summary = compare(
            "周末去哪儿玩这五个公园",
            "转发：周末去哪儿玩？这五个公园 #出行#",
        );
        assert_eq!(summary.unmatched_in_shorter, 0);
        assert_eq!(summary.interior_substitutions, 0);
        assert!(!summary.numeral_replaced);
        assert!(!summary.identical());
    }

    #[test]
    fn one_swapped_word_is_one_interior_substitution() {
        let summary = compare("市长今天会见外国客人", "市长今天会晤外国客人");
        assert_eq!(summary.unmatched_in_shorter, 1);
        assert_eq!(summary.interior_substitutions, 1);
        assert!(!summary.numeral_replaced);
    }

    #[test]
    fn the_same_words_in_another_order_leave_much_unmatched() {
        let summary = compare("从东湖公园骑车到西山森林", "从西山森林骑车到东湖公园");
        assert!(summary.unmatched_in_shorter >= 4, "{summary:?}");
        // Two single-character swaps are two substitutions.
        let swapped = compare("请从北门进站南门出站", "请从南门进站北门出站");
        assert_eq!(swapped.interior_substitutions, 2);
    }

    #[test]
    fn a_numeral_replaced_by_another_is_noticed() {
        assert!(
            compare(
                "第十届读书节第一次筹备会召开",
                "第十届读书节第二次筹备会召开"
            )
            .numeral_replaced
        );
        assert!(compare("七点半叫我起床", "九点半叫我起床").numeral_replaced);
        // Adding a word that contains a numeral is not a replacement.
        assert!(!compare("各地加强秋季防火", "各地进一步加强秋季防火").numeral_replaced);
    }

    #[test]
    fn gaps_are_reported_with_their_position() {
        let mut gaps = Vec::new();
        let common = align(
            &[9, 1, 2, 3, 4],
            &[1, 7, 3, 4, 5, 6],
            |ours, theirs, position| {
                gaps.push((ours.to_vec(), theirs.to_vec(), position));
            },
        );
        assert_eq!(common, 3);
        assert_eq!(
            gaps,
            vec![
                (vec![9], vec![], GapPosition::Leading),
                (vec![2], vec![7], GapPosition::Interior),
                (vec![], vec![5, 6], GapPosition::Trailing),
            ]
        );
        let mut positions = Vec::new();
        align(&[1], &[2], |_, _, position| positions.push(position));
        assert_eq!(positions, vec![GapPosition::Leading]);
    }

    #[test]
    fn punctuation_case_and_field_separators_are_ignored() {
        let summary = compare("Hello, world!", "hello world");
        // Case is normalised before this; here only punctuation is skipped.
        assert_eq!(summary.unmatched_in_shorter, 1);
        let summary = compare("标题\u{1e}正文", "标题正文");
        assert!(summary.identical());
    }
}
