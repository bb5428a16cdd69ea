//! Character shingles of a text, hashed: for confirming short texts
//! (sorted sets, Jaccard) and as simhash features.
//!
//! Motivation: a lean side record (`crate::engine::side_record`) leaves a
//! short text's shingles out and takes them back from its letters, which
//! happens at every read of the record: the letters' version is written
//! for speed and tested against the normalised text's.

use xxhash_rust::xxh3::xxh3_64;

use super::fields::FIELD_SEPARATOR;
use super::normalize;

/// Sorted, de-duplicated 32-bit hashes of the character shingles of width
/// `width` of normalised text (only letters and digits count).
pub fn shingle_set(normalized: &str, width: usize) -> Vec<u32> {
    let mut hashes = Vec::with_capacity(normalized.len() / 2);
    for_each_shingle(normalized, width, |shingle| {
        hashes.push(xxh3_64(shingle) as u32);
    });
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// [`shingle_set`] of a short text's letters ([`super::letters::letters_with_breaks`]),
/// lowercased: for most texts the set [`super::Fingerprinter::shingle_set`] took
/// from the normalised text, so that a side record need not keep it
/// (`crate::engine::side_record`; the writer checks that it is). Read each
/// time a lean record's shingles are, so it is written for speed: one pass
/// over each field's lowercased letters, each window hashed where it lies.
pub fn shingle_set_of_letters(letters: &str, width: usize) -> Vec<u32> {
    shingle_set_of_chars(letters.chars(), letters.len(), width)
}

/// [`shingle_set_of_letters`] of letters given one at a time (a lean
/// record's, decoded as they are hashed), about `bytes` bytes of UTF-8.
pub fn shingle_set_of_chars(
    letters: impl Iterator<Item = char>,
    bytes: usize,
    width: usize,
) -> Vec<u32> {
    let mut hashes = shingle_hashes_of_chars(letters, bytes, width);
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// The hashes [`shingle_set_of_letters`] makes its set of, as they come:
/// unsorted, a window that recurs there each time. What takes their
/// minima (MinHash band keys, at recovery) needs no more, and the sort
/// was a tenth of recovery's time at 100 M nodes.
pub fn shingle_hashes_of_letters(letters: &str, width: usize) -> Vec<u32> {
    shingle_hashes_of_chars(letters.chars(), letters.len(), width)
}

/// [`shingle_hashes_of_letters`] of letters given one at a time (a lean
/// record's, decoded as they are hashed), about `bytes` bytes of UTF-8.
pub fn shingle_hashes_of_chars(
    letters: impl Iterator<Item = char>,
    bytes: usize,
    width: usize,
) -> Vec<u32> {
    match width {
        0 => {
            let lowered: String = letters.flat_map(char::to_lowercase).collect();
            shingle_set(&lowered, width)
        }
        2 => bigram_hashes_of_chars(letters, bytes),
        _ => window_hashes_of_chars(letters, bytes, width),
    }
}

/// [`shingle_hashes_of_chars`] at width 2, the default, which recovery
/// runs on every lean record (44 % of its time at 10 M nodes of the
/// stream's texts): a field's letters are kept as characters, a store
/// each (pushing UTF-8 to a text cost more than decoding the letters),
/// and its bigrams are hashed in a loop of their own, each from a word
/// holding its two letters' UTF-8.
fn bigram_hashes_of_chars(letters: impl Iterator<Item = char>, bytes: usize) -> Vec<u32> {
    let mut hashes = Vec::with_capacity(bytes / 2);
    let mut field: Vec<char> = Vec::with_capacity(bytes / 2 + 1);
    for c in letters {
        if c == FIELD_SEPARATOR {
            hash_field_bigrams(&field, &mut hashes);
            field.clear();
        } else {
            normalize::for_each_lowercase_letter(c, |letter| field.push(letter));
        }
    }
    hash_field_bigrams(&field, &mut hashes);
    hashes
}

/// Pushes the hash of each bigram of `field`, or of its one letter.
fn hash_field_bigrams(field: &[char], hashes: &mut Vec<u32>) {
    let Some((&first, rest)) = field.split_first() else {
        return;
    };
    let (mut previous, mut previous_len) = utf8_word(first);
    if rest.is_empty() {
        hashes.push(xxh3_64(&previous.to_le_bytes()[..previous_len]) as u32);
        return;
    }
    for &c in rest {
        let (current, len) = utf8_word(c);
        let window = (previous | current << (8 * previous_len)).to_le_bytes();
        hashes.push(xxh3_64(&window[..previous_len + len]) as u32);
        (previous, previous_len) = (current, len);
    }
}

/// `c`'s UTF-8, low byte first, and its length.
fn utf8_word(c: char) -> (u64, usize) {
    let mut utf8 = [0u8; 4];
    let len = c.encode_utf8(&mut utf8).len();
    (u64::from(u32::from_le_bytes(utf8)), len)
}

/// [`shingle_hashes_of_chars`] at any width above 0.
fn window_hashes_of_chars(
    letters: impl Iterator<Item = char>,
    bytes: usize,
    width: usize,
) -> Vec<u32> {
    let mut hashes = Vec::with_capacity(bytes / 2);
    // The current field's letters, lowercased, and where each starts in
    // it: each window is then one slice of it, hashed where it lies.
    let mut field = String::with_capacity(bytes);
    let mut starts: Vec<usize> = Vec::with_capacity(bytes / 2 + 1);
    for c in letters {
        if c == FIELD_SEPARATOR {
            hash_field_windows(&field, &mut starts, width, &mut hashes);
            field.clear();
            starts.clear();
        } else {
            normalize::for_each_lowercase_letter(c, |letter| {
                starts.push(field.len());
                field.push(letter);
            });
        }
    }
    hash_field_windows(&field, &mut starts, width, &mut hashes);
    hashes
}

/// Pushes the hash of each window of `width` letters of `field` (whose
/// letters start at `starts`, which gets the end too), or of the whole
/// field when it is no longer than a window, as [`for_each_shingle`] does.
fn hash_field_windows(field: &str, starts: &mut Vec<usize>, width: usize, hashes: &mut Vec<u32>) {
    if starts.is_empty() {
        return;
    }
    let bytes = field.as_bytes();
    if starts.len() <= width {
        hashes.push(xxh3_64(bytes) as u32);
        return;
    }
    starts.push(bytes.len());
    for window in starts.windows(width + 1) {
        hashes.push(xxh3_64(&bytes[window[0]..window[width]]) as u32);
    }
}

pub(super) fn for_each_shingle(normalized: &str, width: usize, mut on_shingle: impl FnMut(&[u8])) {
    // The field's letters and digits, and the offset of each of them in it
    // (then the end): runs of letters are copied whole.
    let mut compact = String::new();
    let mut boundaries = Vec::new();
    for field_text in normalized.split(FIELD_SEPARATOR) {
        compact.clear();
        boundaries.clear();
        let mut run_start = None;
        for (index, c) in field_text.char_indices() {
            if normalize::is_letter_or_digit(c) {
                let start = *run_start.get_or_insert(index);
                boundaries.push(compact.len() + (index - start));
            } else if let Some(start) = run_start.take() {
                compact.push_str(&field_text[start..index]);
            }
        }
        if let Some(start) = run_start {
            compact.push_str(&field_text[start..]);
        }
        boundaries.push(compact.len());
        let char_count = boundaries.len() - 1;
        if char_count == 0 {
            continue;
        }
        if char_count <= width {
            on_shingle(compact.as_bytes());
            continue;
        }
        let bytes = compact.as_bytes();
        for window in boundaries.windows(width + 1) {
            on_shingle(&bytes[window[0]..window[width]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shingles_of_letters_are_those_of_the_lowercased_text() {
        for text in [
            "周末去哪儿玩",
            "Parks IN autumn",
            "a\u{1e}周末|去哪儿",
            "İstanbul ΣΟΦΊΑ",
            "\u{1e}\u{1e}x",
        ] {
            for width in 0..5 {
                let lowered: String = text.chars().flat_map(char::to_lowercase).collect();
                assert_eq!(
                    shingle_set_of_letters(text, width),
                    shingle_set(&lowered, width),
                    "{text} {width}"
                );
            }
        }
    }

    proptest::proptest! {
        /// The bigram path gives the general path's hashes, in its order.
        #[test]
        fn bigrams_are_the_windows_of_two(
            text in "[a-zA-Z0-9 |#,\u{1e}\u{4e00}-\u{4e20}\u{3000}-\u{3010}\u{3040}-\u{3050}\u{c0}-\u{17f}\u{391}-\u{3c9}\u{130}]{0,30}",
        ) {
            proptest::prop_assert_eq!(
                bigram_hashes_of_chars(text.chars(), text.len()),
                window_hashes_of_chars(text.chars(), text.len(), 2)
            );
        }

        #[test]
        fn shingles_of_any_letters_are_those_of_the_lowercased_text(
            text in "[a-zA-Z0-9 |#,\u{1e}\u{4e00}-\u{4e20}\u{3000}-\u{3010}\u{3040}-\u{3050}\u{c0}-\u{17f}\u{391}-\u{3c9}\u{130}]{0,30}",
            width in 1usize..5,
        ) {
            let lowered: String = text.chars().flat_map(char::to_lowercase).collect();
            proptest::prop_assert_eq!(shingle_set_of_letters(&text, width), shingle_set(&lowered, width));
        }
    }
}
