//! A stable radix sort by a 32-bit digit, for the bulk builds of recovery.
//!
//! Motivation: recovery sorts tens of millions of entries (index entries
//! by key, table entries by their place in the table); a comparison sort
//! took seconds where a byte per pass takes a fraction of one. And it
//! sorts them beside everything recovery has built so far: a second copy
//! of hundreds of millions of entries was most of what recovery of 100 M
//! nodes held above the engine it built.
//!
//! Design: the most significant byte first, from the input's parts into
//! the output (each part freed once read: entries collected apart need no
//! joining copy, nor a second copy of all of them); then each of the 256
//! ranges by its three lower bytes, least significant first, through a
//! scratch buffer the size of the largest range. Every pass is a counting
//! sort, so equal digits keep their order; a pass whose byte is the same
//! for every value is skipped.
//!
//! Consequences: about one copy of the entries plus a 256th of them (for
//! digits spread evenly, as hashed keys are; the largest range when they
//! are not), where least-significant-first over the whole took two.

/// The values of `parts`, one after another, sorted by `digits`, keeping
/// the order of equal ones (a radix sort, a byte per pass: tens of
/// millions of entries in well under a second, where a comparison sort
/// took seconds).
pub(crate) fn sort_stably_by<T: Copy + Default>(
    parts: Vec<Vec<T>>,
    digits: impl Fn(T) -> u32,
) -> Vec<T> {
    sort_stably_filling(parts, T::default(), digits)
}

/// [`sort_stably_by`] for values without a default: `filler` holds the
/// places until they are written.
pub(crate) fn sort_stably_filling<T: Copy>(
    parts: Vec<Vec<T>>,
    filler: T,
    digits: impl Fn(T) -> u32,
) -> Vec<T> {
    let total = parts.iter().map(Vec::len).sum();
    let digit = |value: T, shift: u32| ((digits(value) >> shift) & 0xff) as usize;
    let mut counts = [0usize; 256];
    for part in &parts {
        for &value in part {
            counts[digit(value, 24)] += 1;
        }
    }
    let range_starts = starts_of(&counts);
    let mut next = range_starts;
    let mut values = vec![filler; total];
    for part in parts {
        for value in part {
            let slot = &mut next[digit(value, 24)];
            values[*slot] = value;
            *slot += 1;
        }
    }
    let largest = counts.iter().copied().filter(|&count| count > 1).max();
    let mut scratch = vec![filler; largest.unwrap_or(0)];
    for (&start, &count) in range_starts.iter().zip(&counts) {
        if count < 2 {
            continue;
        }
        let range = &mut values[start..start + count];
        let scratch = &mut scratch[..count];
        let mut in_scratch = false;
        for shift in [0u32, 8, 16] {
            let moved = if in_scratch {
                distribute(scratch, range, |value| digit(value, shift))
            } else {
                distribute(range, scratch, |value| digit(value, shift))
            };
            in_scratch ^= moved;
        }
        if in_scratch {
            range.copy_from_slice(scratch);
        }
    }
    values
}

/// Each bucket's first place, for buckets of these sizes in order.
fn starts_of(counts: &[usize; 256]) -> [usize; 256] {
    let mut starts = [0usize; 256];
    let mut total = 0;
    for (start, &count) in starts.iter_mut().zip(counts) {
        *start = total;
        total += count;
    }
    starts
}

/// One counting-sort pass of `from` into `to` by `byte` (equal bytes keep
/// their order); `false`, and nothing moved, when every value has the same
/// byte.
fn distribute<T: Copy>(from: &[T], to: &mut [T], byte: impl Fn(T) -> usize) -> bool {
    let mut counts = [0usize; 256];
    for &value in from {
        counts[byte(value)] += 1;
    }
    if counts.contains(&from.len()) {
        return false;
    }
    let mut next = starts_of(&counts);
    for &value in from {
        let slot = &mut next[byte(value)];
        to[*slot] = value;
        *slot += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_radix_sort_orders_by_the_high_half_and_keeps_ties_in_order() {
        let mut values: Vec<u64> = (0..5_000u64)
            .map(|index| {
                // 8 high halves spread over every byte, each many times.
                let group = index.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61;
                (group.wrapping_mul(0x9e37_79b9_7f4a_7c15) & 0xffff_ffff_0000_0000) | index
            })
            .collect();
        let mut expected = values.clone();
        expected.sort_by_key(|value| value >> 32);
        let second = values.split_off(1234);
        let sorted = sort_stably_by(vec![values, Vec::new(), second], |value| {
            (value >> 32) as u32
        });
        assert_eq!(sorted, expected);
    }

    proptest::proptest! {
        /// Whatever the digits and however the input is cut into parts,
        /// the order is that of a stable comparison sort.
        #[test]
        fn the_radix_sort_is_a_stable_sort_by_the_digits(
            digits in proptest::collection::vec(proptest::num::u32::ANY, 0..3000),
            cuts in proptest::collection::vec(0usize..3000, 0..5),
            digit_mask in proptest::sample::select(vec![u32::MAX, 0xff00_00ff, 0x00ff_0000, 0xf000_0000, 0]),
        ) {
            // Each value's position goes with it: ties must keep it.
            let values: Vec<(u32, u32)> = digits.into_iter().zip(0u32..).collect();
            let mut expected = values.clone();
            expected.sort_by_key(|&(digit, _)| digit & digit_mask);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|cut| cut.min(values.len())).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut from = 0;
            for cut in cuts {
                parts.push(values[from..cut].to_vec());
                from = cut;
            }
            parts.push(values[from..].to_vec());
            let sorted = sort_stably_by(parts, |(digit, _)| digit & digit_mask);
            proptest::prop_assert_eq!(sorted, expected);
        }
    }
}
