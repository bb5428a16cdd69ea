//! Where two texts differ, word by word, for people to read (the compare
//! box and the class pages of the Explorer).
//!
//! Design: [`diff`] aligns two raw texts word by word (a Han character is
//! a word, so is a run of other letters and digits) on their normalised
//! forms, so width, case and Traditional/Simplified variants count as the
//! same and punctuation is not compared. Clauses are aligned first and
//! words only inside the clauses that differ, with
//! [`crate::confirm::edits::align`] (the longest common subsequence with
//! the fewest gaps), so a long article costs a few small tables instead of
//! one of its length squared.
//!
//! Consequences: a run of differing clauses too large to align word by
//! word (a table over [`MAX_ALIGNED_CELLS`] cells once the shared start and
//! end are set aside) is marked as differing whole.

use std::ops::Range;

use serde::Serialize;

use crate::confirm::edits::align;
use crate::fingerprint::normalize::is_han;
use crate::fingerprint::{NormalizeOptions, normalize};

/// Largest word table aligned for one pair of differing clauses (two
/// `i32` per cell: 2 MB).
const MAX_ALIGNED_CELLS: usize = 250_000;

/// A run of a text, shared with the other text or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Span {
    pub text: String,
    pub differs: bool,
}

/// The two texts cut into runs that the other text shares and runs it does
/// not (see the module doc). Concatenating a side's runs gives its text.
pub fn diff(options: NormalizeOptions, left: &str, right: &str) -> (Vec<Span>, Vec<Span>) {
    let options = NormalizeOptions {
        strip_links_and_mentions: false,
        ..options
    };
    let (left_words, right_words) = (words(left, options), words(right, options));
    let (left_shared, right_shared) = shared_words(&left_words, &right_words);
    (
        spans(left, &left_words, &left_shared),
        spans(right, &right_words, &right_shared),
    )
}

/// A word of a raw text: its byte range, normalised form and clause.
#[derive(Debug)]
struct Word {
    bytes: Range<usize>,
    key: String,
    clause: usize,
}

fn ends_clause(c: char, next: Option<char>) -> bool {
    matches!(
        c,
        '。' | '！' | '？' | '!' | '?' | '；' | ';' | '，' | '、' | '：' | '\n'
    ) || (matches!(c, '.' | ',' | ':') && next.is_none_or(char::is_whitespace))
}

fn words(text: &str, options: NormalizeOptions) -> Vec<Word> {
    let mut words = Vec::new();
    let mut clause = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let mut end = start + c.len_utf8();
        if !is_han(c) && c.is_alphanumeric() {
            while let Some(&(next_start, next)) = chars.peek() {
                if is_han(next) || !next.is_alphanumeric() {
                    break;
                }
                end = next_start + next.len_utf8();
                chars.next();
            }
        } else if !is_han(c) {
            if ends_clause(c, chars.peek().map(|&(_, next)| next)) {
                clause += 1;
            }
            continue;
        }
        let key = text
            .get(start..end)
            .map(|word| normalize(word, options))
            .unwrap_or_default();
        words.push(Word {
            bytes: start..end,
            key,
            clause,
        });
    }
    words
}

/// Word index ranges of the clauses that hold words.
fn clauses(words: &[Word]) -> Vec<Range<usize>> {
    let mut clauses: Vec<Range<usize>> = Vec::new();
    for (index, word) in words.iter().enumerate() {
        match clauses.last_mut() {
            Some(last) if words[last.start].clause == word.clause => last.end = index + 1,
            _ => clauses.push(index..index + 1),
        }
    }
    clauses
}

/// Which words of each side the other side shares, in order.
fn shared_words(left: &[Word], right: &[Word]) -> (Vec<bool>, Vec<bool>) {
    let mut left_shared = vec![true; left.len()];
    let mut right_shared = vec![true; right.len()];
    let (left_clauses, right_clauses) = (clauses(left), clauses(right));
    let clause_keys = |words: &[Word], clauses: &[Range<usize>]| -> Vec<Vec<String>> {
        clauses
            .iter()
            .map(|clause| {
                words[clause.clone()]
                    .iter()
                    .map(|w| w.key.clone())
                    .collect()
            })
            .collect()
    };
    let word_range = |clauses: &[Range<usize>], range: Range<usize>, total: usize| match (
        clauses.get(range.start),
        range.end.checked_sub(1).and_then(|last| clauses.get(last)),
    ) {
        (Some(first), Some(last)) if !range.is_empty() => first.start..last.end,
        _ => {
            // An empty clause range: the position between two clauses.
            let at = clauses
                .get(range.start)
                .map_or(total, |clause| clause.start);
            at..at
        }
    };
    let mut gaps = Vec::new();
    align(
        &clause_keys(left, &left_clauses),
        &clause_keys(right, &right_clauses),
        |ours, theirs, _| {
            gaps.push((
                word_range(&left_clauses, ours, left.len()),
                word_range(&right_clauses, theirs, right.len()),
            ))
        },
    );
    for (ours, theirs) in gaps {
        let (ours_shared, theirs_shared) = align_words(&left[ours.clone()], &right[theirs.clone()]);
        left_shared[ours].copy_from_slice(&ours_shared);
        right_shared[theirs].copy_from_slice(&theirs_shared);
    }
    (left_shared, right_shared)
}

/// Word-by-word alignment of two runs of differing clauses: the shared
/// start and end first, the middle only when its table is small enough.
fn align_words(left: &[Word], right: &[Word]) -> (Vec<bool>, Vec<bool>) {
    let mut left_shared = vec![false; left.len()];
    let mut right_shared = vec![false; right.len()];
    let same = |a: &Word, b: &Word| a.key == b.key;
    let prefix = left
        .iter()
        .zip(right)
        .take_while(|(a, b)| same(a, b))
        .count();
    let suffix = left[prefix..]
        .iter()
        .rev()
        .zip(right[prefix..].iter().rev())
        .take_while(|(a, b)| same(a, b))
        .count();
    left_shared[..prefix].fill(true);
    right_shared[..prefix].fill(true);
    let (left_end, right_end) = (left.len() - suffix, right.len() - suffix);
    left_shared[left_end..].fill(true);
    right_shared[right_end..].fill(true);
    let (left_middle, right_middle) = (&left[prefix..left_end], &right[prefix..right_end]);
    if left_middle.is_empty()
        || right_middle.is_empty()
        || left_middle.len() * right_middle.len() > MAX_ALIGNED_CELLS
    {
        return (left_shared, right_shared);
    }
    let keys = |words: &[Word]| -> Vec<String> { words.iter().map(|w| w.key.clone()).collect() };
    left_shared[prefix..left_end].fill(true);
    right_shared[prefix..right_end].fill(true);
    align(
        &keys(left_middle),
        &keys(right_middle),
        |ours, theirs, _| {
            left_shared[prefix + ours.start..prefix + ours.end].fill(false);
            right_shared[prefix + theirs.start..prefix + theirs.end].fill(false);
        },
    );
    (left_shared, right_shared)
}

/// The text cut into runs; what lies between two differing words, or
/// before a differing first word, differs too (one highlight per edit,
/// punctuation included: "【编者按】…").
fn spans(text: &str, words: &[Word], shared: &[bool]) -> Vec<Span> {
    fn push(spans: &mut Vec<Span>, piece: &str, differs: bool) {
        if piece.is_empty() {
            return;
        }
        match spans.last_mut() {
            Some(last) if last.differs == differs => last.text.push_str(piece),
            _ => spans.push(Span {
                text: piece.to_string(),
                differs,
            }),
        }
    }
    let mut spans = Vec::new();
    let mut position = 0;
    for (index, word) in words.iter().enumerate() {
        let between_differing = (index == 0 || !shared[index - 1]) && !shared[index];
        push(
            &mut spans,
            text.get(position..word.bytes.start).unwrap_or_default(),
            between_differing,
        );
        push(
            &mut spans,
            text.get(word.bytes.clone()).unwrap_or_default(),
            !shared[index],
        );
        position = word.bytes.end;
    }
    push(&mut spans, text.get(position..).unwrap_or_default(), false);
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(spans: &[Span]) -> Vec<&str> {
        spans
            .iter()
            .filter(|span| span.differs)
            .map(|span| span.text.as_str())
            .collect()
    }

    #[test]
    fn diff_marks_the_changed_words_only() {
        let (left, right) = diff(
            NormalizeOptions::default(),
            "青禾地铁3号线今日开通，沿线设站18座。",
            "【转载】青禾地铁3号线今日开通，沿线设站20座。",
        );
        assert_eq!(marked(&left), ["18"]);
        assert_eq!(marked(&right), ["【转载", "20"]);
        let joined: String = right.iter().map(|span| span.text.as_str()).collect();
        assert_eq!(joined, "【转载】青禾地铁3号线今日开通，沿线设站20座。");
    }

    #[test]
    fn diff_ignores_width_case_and_script() {
        let (left, right) = diff(
            NormalizeOptions::default(),
            "青禾地铁3号线开通 Harlow Bay",
            "青禾地鐵３號線開通 HARLOW bay",
        );
        assert!(marked(&left).is_empty(), "{left:?}");
        assert!(marked(&right).is_empty(), "{right:?}");
    }

    #[test]
    fn diff_aligns_long_texts_clause_by_clause() {
        let body: String = (0..400)
            .map(|n| format!("第{n}段的内容说明了一些事情。"))
            .collect();
        let edited = body.replace("第200段的内容", "第200段的新内容");
        let (left, right) = diff(NormalizeOptions::default(), &body, &edited);
        assert!(marked(&left).is_empty(), "{:?}", marked(&left));
        assert_eq!(marked(&right), ["新"]);
    }

    #[test]
    fn diff_of_texts_with_nothing_in_common_marks_everything() {
        let (left, right) = diff(NormalizeOptions::default(), "abc def", "ghi");
        assert_eq!(marked(&left), ["abc def"]);
        assert_eq!(marked(&right), ["ghi"]);
    }
}
