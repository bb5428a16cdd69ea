//! Stop words: function words that say nothing about which story a text
//! tells. Removing them keeps reprints that add or drop a particle (的, 了,
//! "the") at the same fingerprint.
//!
//! The lists are short on purpose: only closed-class words (particles,
//! pronouns, conjunctions, prepositions, auxiliaries). Content words are never
//! stop words, however common; weighting handles frequency.

use std::sync::LazyLock;

const CHINESE: &[&str] = &[
    "的", "地", "得", "了", "着", "过", "是", "在", "和", "与", "及", "或", "也", "都", "就", "而",
    "并", "又", "还", "但", "却", "所", "把", "被", "让", "给", "从", "对", "向", "于", "以", "为",
    "之", "其", "这", "那", "这个", "那个", "这些", "那些", "这样", "那样", "我", "你", "他", "她",
    "它", "我们", "你们", "他们", "她们", "它们", "自己", "啊", "吗", "呢", "吧", "呀", "哦", "嗯",
    "哈", "啦", "嘛", "么", "哪", "个", "一个", "有", "没有", "不", "很", "将", "已", "已经",
    "因为", "所以", "如果", "虽然", "但是", "而且", "以及", "或者", "并且", "等", "等等", "上",
    "中", "下", "里", "之一", "即", "则", "且", "由", "由于", "通过", "进行", "对于", "关于",
];

const ENGLISH: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "if", "then", "of", "to", "in", "on", "at", "by", "for",
    "with", "from", "as", "into", "about", "is", "are", "was", "were", "be", "been", "being", "am",
    "do", "does", "did", "has", "have", "had", "it", "its", "this", "that", "these", "those", "i",
    "you", "he", "she", "we", "they", "me", "him", "her", "us", "them", "my", "your", "his", "our",
    "their", "not", "no", "so", "than", "too", "very", "can", "will", "would", "shall", "should",
    "may", "might", "must", "also", "just", "s", "t", "which", "who", "whom", "what", "there",
    "here", "all", "any", "some",
];

/// Every stop word is at most this many bytes long (checked by a test).
const MAX_LEN: usize = 7;

/// The stop words as [`key`]s, sorted: a lookup is a binary search over
/// integers (this runs for every word of every text, and hashing the
/// string cost more).
static STOP_WORDS: LazyLock<Vec<u64>> = LazyLock::new(|| {
    let mut keys: Vec<u64> = CHINESE
        .iter()
        .chain(ENGLISH)
        .filter_map(|word| key(word))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
});

/// A word of at most [`MAX_LEN`] bytes as one integer: its bytes, then its
/// length in the last byte (so "a" and "a\0" differ). `None` for longer
/// words, which are never stop words.
fn key(word: &str) -> Option<u64> {
    let bytes = word.as_bytes();
    if bytes.len() > MAX_LEN {
        return None;
    }
    let mut packed = [0u8; 8];
    packed[..bytes.len()].copy_from_slice(bytes);
    packed[MAX_LEN] = bytes.len() as u8;
    Some(u64::from_le_bytes(packed))
}

/// True if `word` (already normalised: lowercase, Simplified) is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    key(word).is_some_and(|key| STOP_WORDS.binary_search(&key).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_word_fits_a_key_and_is_found() {
        for word in CHINESE.iter().chain(ENGLISH) {
            assert!(word.len() <= MAX_LEN, "{word}");
            assert!(is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn other_words_are_not_stop_words() {
        for word in [
            "",
            "新书",
            "book",
            "th",
            "thee",
            "的的",
            "a\0",
            "一个个",
            "theirs",
        ] {
            assert!(!is_stop_word(word), "{word:?}");
        }
    }
}
