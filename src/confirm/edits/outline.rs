//! What two texts' letters allow their alignment to be, known without
//! aligning them: both lengths and the length of their longest common
//! subsequence.
//!
//! Motivation: on a feed whose short texts share sentences, most
//! candidates that reach an alignment fail it on its shape (too much of the
//! shorter text unmatched). The dynamic program of [`super::align`] fills
//! a table of both lengths' product and records its gaps; the length of
//! the longest common subsequence alone takes one pass over the longer
//! text with the shorter one's positions as bits (the bit-parallel method
//! of Allison and Dix, in the form of Crochemore et al.: `V' = (V + U) |
//! (V − U)` with `U = V & match(c)`), about a hundred word operations for
//! two headlines. A caller that rejects on the count of unmatched letters
//! rejects from the outline, and aligns only what may pass.
//!
//! The outline reads the letters exactly as the alignment does
//! ([`super::letters::letter_of`]), so its `common` is the alignment's.

use super::letters::{letter_of, letters_before_cut, letters_hold_credit_word};

/// The letters of the shorter of two texts (by letter count; the first
/// when both have as many) and of the longer, and the length of their
/// longest common subsequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlignmentOutline {
    pub shorter_chars: usize,
    pub longer_chars: usize,
    /// Letters in a longest common subsequence; `None` when the shorter
    /// text has more than [`MAX_OUTLINED_CHARS`] letters (not computed).
    pub common: Option<usize>,
}

/// Longest shorter text whose common subsequence the outline computes: its
/// positions fit one 128-bit word.
pub const MAX_OUTLINED_CHARS: usize = 128;

/// Places of the table from a letter to its positions: twice the most
/// distinct letters a 128-letter text has.
const MASK_SLOTS: usize = 256;

/// One text's letters as an alignment compares them, read once so that a
/// text outlined against many others is read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineLetters {
    letters: Box<[char]>,
    /// The text may hold a credit line: its letters contain a credit word
    /// (see [`super::letters`]). When they do not, no letter of it is a
    /// credit's.
    pub may_hold_credit: bool,
    /// A platform cut the text short (an ellipsis at its end: see
    /// [`crate::fingerprint::letters::CUT_MARK`]); the other text may then
    /// go on for longer than a comment would.
    pub cut_short: bool,
}

impl OutlineLetters {
    pub fn of(text: &str) -> OutlineLetters {
        let cut = letters_before_cut(text);
        let letters: Box<[char]> = text
            .chars()
            .filter_map(letter_of)
            .take(cut.unwrap_or(usize::MAX))
            .collect();
        let may_hold_credit = letters_hold_credit_word(&letters);
        OutlineLetters {
            letters,
            may_hold_credit,
            cut_short: cut.is_some(),
        }
    }

    pub fn len(&self) -> usize {
        self.letters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.letters.is_empty()
    }
}

/// The outline of `left` against `right` (see [`AlignmentOutline`]).
pub fn outline(left: &str, right: &str) -> AlignmentOutline {
    outline_of(&OutlineLetters::of(left), &OutlineLetters::of(right))
}

/// [`outline`] of texts whose letters are read.
pub fn outline_of(left: &OutlineLetters, right: &OutlineLetters) -> AlignmentOutline {
    let (shorter, longer) = if left.len() > right.len() {
        (right, left)
    } else {
        (left, right)
    };
    let common = (shorter.len() <= MAX_OUTLINED_CHARS)
        .then(|| common_subsequence_length(&shorter.letters, &longer.letters));
    AlignmentOutline {
        shorter_chars: shorter.len(),
        longer_chars: longer.len(),
        common,
    }
}

/// Length of a longest common subsequence of `pattern` (at most
/// [`MAX_OUTLINED_CHARS`] elements) and `text`.
fn common_subsequence_length(pattern: &[char], text: &[char]) -> usize {
    debug_assert!(pattern.len() <= MAX_OUTLINED_CHARS);
    let mut table = MatchTable::new();
    for (position, &letter) in pattern.iter().enumerate() {
        table.add(letter, position);
    }
    // Bit i of `unmatched` is set while pattern position i is not yet the
    // end of a matched prefix of the best subsequences (the Allison–Dix
    // row, negated).
    let mut unmatched = u128::MAX;
    for &letter in text {
        let matches = table.positions(letter);
        if matches == 0 {
            continue;
        }
        let taken = unmatched & matches;
        unmatched = unmatched.wrapping_add(taken) | (unmatched - taken);
    }
    let used = if pattern.len() == 128 {
        u128::MAX
    } else {
        (1u128 << pattern.len()) - 1
    };
    (!unmatched & used).count_ones() as usize
}

/// A letter's positions in the pattern, as bits: open addressing over
/// [`MASK_SLOTS`] places, at most half full.
struct MatchTable {
    letters: [u32; MASK_SLOTS],
    positions: [u128; MASK_SLOTS],
}

/// No letter is this value (above `char::MAX`).
const EMPTY: u32 = u32::MAX;

impl MatchTable {
    fn new() -> MatchTable {
        MatchTable {
            letters: [EMPTY; MASK_SLOTS],
            positions: [0; MASK_SLOTS],
        }
    }

    fn slot(letter: char) -> usize {
        ((letter as u32).wrapping_mul(0x9E37_79B1) >> 24) as usize
    }

    fn add(&mut self, letter: char, position: usize) {
        let mut slot = Self::slot(letter);
        while self.letters[slot] != EMPTY && self.letters[slot] != letter as u32 {
            slot = (slot + 1) % MASK_SLOTS;
        }
        self.letters[slot] = letter as u32;
        self.positions[slot] |= 1u128 << position;
    }

    fn positions(&self, letter: char) -> u128 {
        let mut slot = Self::slot(letter);
        loop {
            match self.letters[slot] {
                EMPTY => return 0,
                found if found == letter as u32 => return self.positions[slot],
                _ => slot = (slot + 1) % MASK_SLOTS,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook table.
    fn textbook(left: &[char], right: &[char]) -> usize {
        let mut table = vec![vec![0usize; right.len() + 1]; left.len() + 1];
        for i in 1..=left.len() {
            for j in 1..=right.len() {
                table[i][j] = if left[i - 1] == right[j - 1] {
                    table[i - 1][j - 1] + 1
                } else {
                    table[i - 1][j].max(table[i][j - 1])
                };
            }
        }
        table[left.len()][right.len()]
    }

    #[test]
    fn common_subsequence_of_known_pairs() {
        let cases = [
            ("abcbdab", "bdcaba", 4),
            ("", "abc", 0),
            ("abc", "", 0),
            ("abc", "abc", 3),
            ("北京今天下雨", "今天北京下雨了", 4),
        ];
        for (left, right, expected) in cases {
            let found = outline(left, right).common;
            assert_eq!(found, Some(expected), "{left} / {right}");
        }
    }

    #[test]
    fn a_pattern_of_128_letters_uses_every_bit() {
        let pattern: String = (0..128u32)
            .map(|i| char::from_u32(0x4e00 + i % 100).unwrap_or('x'))
            .collect();
        let text: String = pattern.chars().rev().chain(pattern.chars()).collect();
        let chars: Vec<char> = pattern.chars().collect();
        let other: Vec<char> = text.chars().collect();
        assert_eq!(
            outline(&pattern, &text).common,
            Some(textbook(&chars, &other))
        );
        let longer: String = pattern.chars().chain("x".chars()).collect();
        assert_eq!(outline(&longer, &longer.repeat(2)).common, None);
    }

    #[test]
    fn letters_are_read_as_the_alignment_reads_them() {
        // Case, punctuation and spaces do not count; digits do.
        let found = outline("Hello, World 2024!", "hello world2024");
        assert_eq!(found.shorter_chars, 14);
        assert_eq!(found.longer_chars, 14);
        assert_eq!(found.common, Some(14));
    }
}
