//! The alignment under every in-order comparison: one longest common
//! subsequence of two sequences, the one with the fewest gaps, and the gaps
//! it leaves, by position (the edges, where reposts add, or inside).
//!
//! Generic over the elements: the comparison aligns letters, the word diff
//! of `crate::explain` aligns clauses and words. [`shared_span`] reads an
//! alignment of letters as a repost: the span its anchors cover.

use std::ops::Range;

/// Shortest run of letters matched in one piece that anchors the shared
/// span: shorter runs are letters a comment happens to share.
pub const ANCHOR_CHARS: usize = 3;

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
/// `on_gap` with the index ranges of every gap that has elements on both
/// sides (a substitution) or on one side (an insertion). Returns the length
/// of the common subsequence.
pub fn align<T: PartialEq>(
    left: &[T],
    right: &[T],
    mut on_gap: impl FnMut(Range<usize>, Range<usize>, GapPosition),
) -> usize {
    let (rows, columns) = (left.len(), right.len());
    // Among the longest common subsequences, the one with the fewest gaps:
    // "breaking: reagan says" against "reagan says" is one leading gap, not
    // "reagan"'s first letters matched inside "breaking" and the rest later.
    // score[i][j][state]: best (matches × weight − gaps opened) for left[i..]
    // and right[j..], with state 1 when a gap is already open.
    let weight = (rows + columns + 2) as i32;
    let width = columns + 1;
    // Per cell, the scores of both states side by side.
    let mut score = vec![[0i32; 2]; (rows + 1) * width];
    for i in (0..=rows).rev() {
        for j in (0..=columns).rev() {
            if i == rows && j == columns {
                continue;
            }
            let matched = if i < rows && j < columns && left[i] == right[j] {
                weight + score[(i + 1) * width + j + 1][0]
            } else {
                i32::MIN
            };
            let skip_left = if i < rows {
                score[(i + 1) * width + j][1]
            } else {
                i32::MIN
            };
            let skip_right = if j < columns {
                score[i * width + j + 1][1]
            } else {
                i32::MIN
            };
            let skipped = skip_left.max(skip_right);
            // State 0 opens a gap to skip (cost 1), state 1 is in one.
            score[i * width + j] = [matched.max(skipped.saturating_sub(1)), matched.max(skipped)];
        }
    }
    let at = |state: usize, i: usize, j: usize| score[i * width + j][state];
    // Walk the chosen alignment; a gap is closed by the next match.
    let (mut i, mut j, mut state) = (0, 0, 0);
    let (mut gap_i, mut gap_j) = (0, 0);
    let mut position = GapPosition::Leading;
    let mut common = 0;
    while i < rows || j < columns {
        let best = at(state, i, j);
        let open_cost = if state == 1 { 0 } else { 1 };
        let matches =
            i < rows && j < columns && left[i] == right[j] && best == weight + at(0, i + 1, j + 1);
        // Before the first match, skip when skipping is as good: an added
        // prefix stays one leading gap ("breaking: black…" / "black…")
        // instead of an inner one after a shared first letter.
        let skip_left = i < rows && best == at(1, i + 1, j) - open_cost;
        let skip_right = j < columns && best == at(1, i, j + 1) - open_cost;
        let leading = position == GapPosition::Leading;
        if matches && !(leading && (skip_left || skip_right)) {
            if gap_i < i || gap_j < j {
                on_gap(gap_i..i, gap_j..j, position);
            }
            position = GapPosition::Interior;
            (i, j, state) = (i + 1, j + 1, 0);
            (gap_i, gap_j) = (i, j);
            common += 1;
        } else if skip_left {
            (i, state) = (i + 1, 1);
        } else {
            (j, state) = (j + 1, 1);
        }
    }
    if gap_i < rows || gap_j < columns {
        let position = match position {
            GapPosition::Leading => GapPosition::Leading,
            _ => GapPosition::Trailing,
        };
        on_gap(gap_i..rows, gap_j..columns, position);
    }
    common
}

/// The shared span of an alignment, in the shorter text and in the longer:
/// from the first to the last run of at least [`ANCHOR_CHARS`] matched
/// letters (empty when there is none). `gaps` are in order.
pub(super) fn shared_span(
    gaps: &[(Range<usize>, Range<usize>, GapPosition)],
    shorter_len: usize,
    longer_len: usize,
) -> (Range<usize>, Range<usize>) {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (ours, theirs, _) in gaps {
        if ours.start > i {
            runs.push((i, j, ours.start - i));
        }
        (i, j) = (ours.end, theirs.end);
    }
    if shorter_len > i && longer_len > j {
        runs.push((i, j, (shorter_len - i).min(longer_len - j)));
    }
    // A run that reaches an edge of the shorter text anchors the span
    // however short it is: nothing of the shorter text lies beyond it.
    let anchors: Vec<&(usize, usize, usize)> = runs
        .iter()
        .filter(|&&(i, _, len)| len >= ANCHOR_CHARS || i == 0 || i + len == shorter_len)
        .collect();
    match (anchors.first(), anchors.last()) {
        (Some(&&(first_i, first_j, _)), Some(&&(last_i, last_j, last_len))) => {
            (first_i..last_i + last_len, first_j..last_j + last_len)
        }
        _ => (0..0, 0..0),
    }
}

/// Two gaps, each of at most [`MAX_MORPHEME_CHARS`] letters on one side
/// only, the first on one text's side and the second on the other's: a
/// word that one text writes with a letter before the letter they share
/// and the other with one after it.
pub(super) fn one_sided_on_either_side(
    ours_before: &Range<usize>,
    theirs_before: &Range<usize>,
    ours: &Range<usize>,
    theirs: &Range<usize>,
) -> bool {
    let one_sided = |on: &Range<usize>, off: &Range<usize>| {
        off.is_empty() && (1..=MAX_MORPHEME_CHARS).contains(&on.len())
    };
    (one_sided(theirs_before, ours_before) && one_sided(ours, theirs))
        || (one_sided(ours_before, theirs_before) && one_sided(theirs, ours))
}

/// Most letters of a morpheme added or dropped around a kept letter (see
/// [`one_sided_on_either_side`]).
const MAX_MORPHEME_CHARS: usize = 2;
