//! A stable radix sort by a 32-bit digit, for the bulk builds of recovery.
//!
//! Motivation: recovery sorts tens of millions of entries (index entries
//! by key, table entries by their place in the table); a comparison sort
//! took seconds where a byte per pass takes a fraction of one.
//!
//! Design: least significant byte first, four passes, each skipped when
//! every value has the same byte; the first pass reads the input in parts,
//! so entries collected apart need no joining copy.

/// The values of `parts`, one after another, sorted by `digits`, keeping
/// the order of equal ones (a radix sort, a byte per pass: tens of
/// millions of entries in well under a second, where a comparison sort
/// took seconds). The first pass reads the parts, so joining them costs no
/// copy of its own.
pub(crate) fn sort_stably_by<T: Copy + Default>(
    parts: Vec<Vec<T>>,
    digits: impl Fn(T) -> u32,
) -> Vec<T> {
    let total = parts.iter().map(Vec::len).sum();
    let digit = |value: T, shift: u32| ((digits(value) >> shift) & 0xff) as usize;
    let starts_of = |counts: [usize; 256]| {
        let mut starts = [0usize; 256];
        let mut total = 0;
        for (start, count) in starts.iter_mut().zip(counts) {
            *start = total;
            total += count;
        }
        starts
    };
    let mut counts = [0usize; 256];
    for part in &parts {
        for &value in part {
            counts[digit(value, 0)] += 1;
        }
    }
    let mut starts = starts_of(counts);
    let mut values = vec![T::default(); total];
    for part in parts {
        for value in part {
            let slot = &mut starts[digit(value, 0)];
            values[*slot] = value;
            *slot += 1;
        }
    }
    let mut sorted = vec![T::default(); total];
    for shift in [8u32, 16, 24] {
        let mut counts = [0usize; 256];
        for &value in &values {
            counts[digit(value, shift)] += 1;
        }
        if counts.contains(&total) {
            continue;
        }
        let mut starts = starts_of(counts);
        for &value in &values {
            let slot = &mut starts[digit(value, shift)];
            sorted[*slot] = value;
            *slot += 1;
        }
        std::mem::swap(&mut values, &mut sorted);
    }
    values
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
}
