//! Place signatures: the place names of a text as a 64-bit set, and when
//! two such sets contradict each other.
//!
//! Motivation: short texts that name different places are different news
//! however similar the rest ("…发布会】北京" / "…发布会】浙江"), while a
//! repost that adds a place (a tag "【北京】", a credit "来自中国新闻网")
//! names the original's places and more. A node keeps one `u64` for this.
//! Person and organisation tags were measured too: too unreliable on
//! headlines (they split reposts).
//!
//! Design: the writer ([`place_signature_of`]) and the reader
//! ([`places_compatible`]) share the format (a mark in the top byte, a
//! Bloom filter of two bits per name below it), so they live together.

use xxhash_rust::xxh3::xxh3_64;

use super::tokenize;

/// Marks a place signature as a set (top byte); the low
/// [`PLACE_SET_BITS`] bits are its Bloom filter, two bits per place name.
const PLACE_SET_MARK: u64 = 0xA5 << 56;
const PLACE_SET_BITS: u64 = 56;

/// The set of place names in normalised text (words jieba tags `ns`) as a
/// small Bloom filter ([`places_compatible`] reads it); 0 when there are
/// none.
pub fn place_signature_of(normalized: &str) -> u64 {
    let mut signature = 0;
    tokenize::for_each_tagged_word(normalized, &["ns"], |name| {
        let hash = xxh3_64(name.as_bytes());
        signature |=
            PLACE_SET_MARK | 1 << (hash % PLACE_SET_BITS) | 1 << ((hash >> 8) % PLACE_SET_BITS);
    });
    signature
}

/// Two place signatures ([`place_signature_of`]) do not
/// contradict each other: either names no place, or one's places are all
/// among the other's (a repost adds places; another story names others).
/// A signature without the set mark is a hash of the whole list, written
/// into state by earlier versions: it matches only an equal hash and never
/// vetoes a set (the alignment still sees a swapped place name).
pub fn places_compatible(ours: u64, theirs: u64) -> bool {
    let is_set = |signature: u64| signature & (0xFF << 56) == PLACE_SET_MARK;
    if ours == 0 || theirs == 0 || ours == theirs {
        return true;
    }
    match (is_set(ours), is_set(theirs)) {
        (true, true) => {
            let shared = ours & theirs;
            shared == ours || shared == theirs
        }
        (false, false) => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{FingerprintConfig, Fingerprinter};

    fn fingerprinter() -> Fingerprinter {
        Fingerprinter::new(FingerprintConfig::default()).expect("default config is valid")
    }

    #[test]
    fn places_are_compared_as_sets_one_may_add_to_the_other() {
        let f = fingerprinter();
        let signature = |text: &str| f.place_signature(&f.prepare(text));
        let compatible = |a: &str, b: &str| places_compatible(signature(a), signature(b));
        assert_eq!(signature("今天天气很好"), 0);
        assert_ne!(signature("北京"), 0);
        assert_eq!(signature("北京和上海"), signature("上海与北京"));
        assert!(!compatible("发布会在北京举行", "发布会在上海举行"));
        // A repost's credit or tag adds a place; the original's stay.
        assert!(compatible(
            "发布会在北京举行",
            "发布会在北京举行——来自上海新闻"
        ));
        assert!(compatible(
            "发布会在北京举行——来自上海新闻",
            "发布会在北京举行"
        ));
        assert!(!compatible("北京和上海", "北京和广州"));
        assert!(compatible("今天天气很好", "发布会在上海举行"));
    }

    #[test]
    fn place_hashes_of_earlier_versions_match_only_themselves() {
        let set = fingerprinter().place_signature(&fingerprinter().prepare("北京"));
        let legacy = 0x1234_5678_9abc_def0;
        assert!(places_compatible(legacy, legacy));
        assert!(!places_compatible(legacy, legacy + 1));
        assert!(places_compatible(legacy, set) && places_compatible(set, legacy));
    }
}
