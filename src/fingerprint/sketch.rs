//! Bottom-k sketches: a long text's character 5-grams in 64 numbers.
//!
//! Motivation: the simhash of a long text's longest sentence stays within k
//! bits for most reprints, but not when the edit lands in that sentence (a
//! typo, a credit line glued to it) or removes it (truncation). Those copies
//! still share most of their text with the original, and a sketch estimates
//! how much.
//!
//! Design: a text's sketch is the `k` smallest distinct 32-bit hashes of its
//! character 5-grams (a bottom-k MinHash sketch: one hash per shingle, not
//! one per permutation, so it costs a pass over the text). Two sketches
//! estimate the Jaccard similarity of the full shingle sets: of the `k`
//! smallest hashes of their union, the share found in both.
//!
//! Consequences: about `k × 4` bytes per long node. The index that finds
//! candidates by their sketch is [`crate::candidates::sketch_index`].

/// Sketch size: the Jaccard estimate's standard error is about
/// `sqrt(J(1-J)/k)`, 0.05 at J = 0.7 for k = 64.
pub const SKETCH_SIZE: usize = 64;

/// The `size` smallest distinct values of `hashes`, ascending.
pub fn bottom_k(hashes: impl IntoIterator<Item = u32>, size: usize) -> Vec<u32> {
    let mut all: Vec<u32> = hashes.into_iter().collect();
    // Partition around the (2·size)-th smallest first (linear), then sort
    // only that prefix; repeated shingles can leave fewer than `size`
    // distinct values in it, and then the whole set is sorted after all.
    let prefix = size.saturating_mul(2);
    if all.len() > prefix + 1 {
        all.select_nth_unstable(prefix);
        let mut head = all[..=prefix].to_vec();
        head.sort_unstable();
        head.dedup();
        if head.len() >= size {
            head.truncate(size);
            return head;
        }
    }
    all.sort_unstable();
    all.dedup();
    all.truncate(size);
    all
}

/// Estimated Jaccard similarity of the sets behind two bottom-k sketches
/// (ascending, distinct) of size `size`.
pub fn estimate_jaccard(left: &[u32], right: &[u32], size: usize) -> f64 {
    let (mut i, mut j, mut taken, mut shared) = (0, 0, 0usize, 0usize);
    while taken < size && (i < left.len() || j < right.len()) {
        match (left.get(i), right.get(j)) {
            (Some(a), Some(b)) if a == b => {
                shared += 1;
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a < b => i += 1,
            (Some(_), Some(_)) => j += 1,
            (Some(_), None) => i += 1,
            (None, _) => j += 1,
        }
        taken += 1;
    }
    if taken == 0 {
        1.0
    } else {
        shared as f64 / taken as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bottom_k_keeps_the_smallest_distinct_values() {
        assert_eq!(bottom_k([5, 1, 9, 1, 3], 3), vec![1, 3, 5]);
        assert_eq!(bottom_k([2], 3), vec![2]);
        // Long inputs take the partition path; many repeats force the fallback.
        let many: Vec<u32> = (0..1000u32)
            .rev()
            .map(|value| value.wrapping_mul(2_654_435_761))
            .collect();
        let mut expected = many.clone();
        expected.sort_unstable();
        expected.truncate(8);
        assert_eq!(bottom_k(many, 8), expected);
        let repeats = std::iter::repeat_n(1u32, 100).chain([7, 5, 3]);
        assert_eq!(bottom_k(repeats, 3), vec![1, 3, 5]);
    }

    #[test]
    fn jaccard_estimate_is_exact_for_small_sets_and_close_for_large_ones() {
        assert_eq!(estimate_jaccard(&[1, 2, 3], &[1, 2, 3], 64), 1.0);
        assert_eq!(estimate_jaccard(&[1, 2], &[3, 4], 64), 0.0);
        assert!((estimate_jaccard(&[1, 2, 3], &[2, 3, 4], 64) - 0.5).abs() < 1e-9);
        // Large sets: 1000 shared of 1400 → J ≈ 0.714.
        let mix = |value: u32| value.wrapping_mul(2_654_435_761);
        let left = bottom_k((0..1200).map(mix), SKETCH_SIZE);
        let right = bottom_k((200..1400).map(mix), SKETCH_SIZE);
        let estimate = estimate_jaccard(&left, &right, SKETCH_SIZE);
        assert!((estimate - 1000.0 / 1400.0).abs() < 0.15, "{estimate}");
    }
}
