//! The set measures confirmation weighs: Jaccard similarity and
//! containment of sorted hash sets (bigrams, numbers), and the bigram
//! Jaccard of two short strings (headlines).
//!
//! Motivation: the rules ([`super::short`], [`super::long`]) and the
//! figures that explain them (`crate::explain`) must measure alike; one
//! file holds the measures both call.

use crate::fingerprint::normalize::is_letter_or_digit;

/// Jaccard similarity of the character-bigram sets of two strings (letters
/// and digits only). Used on headlines, which are short.
pub fn bigram_jaccard(left: &str, right: &str) -> f64 {
    let bigrams = |text: &str| {
        let chars: Vec<char> = text.chars().filter(|&c| is_letter_or_digit(c)).collect();
        let mut pairs: Vec<(char, char)> =
            chars.windows(2).map(|pair| (pair[0], pair[1])).collect();
        if pairs.is_empty()
            && let [only] = chars[..]
        {
            pairs.push((only, only));
        }
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    };
    let (left, right) = (bigrams(left), bigrams(right));
    if left.is_empty() && right.is_empty() {
        return 1.0;
    }
    let common = left
        .iter()
        .filter(|pair| right.binary_search(pair).is_ok())
        .count();
    common as f64 / (left.len() + right.len() - common) as f64
}

/// Jaccard similarity of two sorted, de-duplicated sets.
pub fn jaccard(a: &[u32], b: &[u32]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let common = shared_count(a, b);
    common as f64 / (a.len() + b.len() - common) as f64
}

/// Number of values two sorted, de-duplicated sets have in common (one
/// merge pass).
pub fn shared_count(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

/// The share of the smaller of two sorted sets that lies in the other.
pub fn containment(ours: &[u32], theirs: &[u32]) -> f64 {
    let smaller = ours.len().min(theirs.len());
    if smaller == 0 {
        return 0.0;
    }
    shared_count(ours, theirs) as f64 / smaller as f64
}

/// True when every element of one sorted set is in the other.
pub fn one_contains_the_other(left: &[u32], right: &[u32]) -> bool {
    shared_count(left, right) == left.len().min(right.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigram_jaccard_of_short_strings() {
        assert_eq!(bigram_jaccard("abcd", "abcd"), 1.0);
        assert!((bigram_jaccard("abcd", "abce") - 0.5).abs() < 1e-9);
        assert_eq!(bigram_jaccard("a b", "ab"), 1.0);
        assert_eq!(bigram_jaccard("x", "y"), 0.0);
        assert_eq!(bigram_jaccard("", "!"), 1.0);
    }

    #[test]
    fn sets_share_and_contain() {
        assert!((jaccard(&[1, 2, 3], &[2, 3, 4]) - 0.5).abs() < 1e-9);
        assert_eq!(jaccard(&[], &[]), 1.0);
        assert_eq!(shared_count(&[1, 3, 5, 7], &[3, 4, 5]), 2);
        assert!((containment(&[1, 2], &[1, 2, 3, 4]) - 1.0).abs() < 1e-9);
        assert_eq!(containment(&[], &[1]), 0.0);
        assert!(one_contains_the_other(&[2, 3], &[1, 2, 3]));
        assert!(!one_contains_the_other(&[2, 5], &[1, 2, 3]));
    }
}
