//! Stop words: function words that say nothing about which story a text
//! tells. Removing them keeps reprints that add or drop a particle (的, 了,
//! "the") at the same fingerprint.
//!
//! The lists are short on purpose: only closed-class words (particles,
//! pronouns, conjunctions, prepositions, auxiliaries). Content words are never
//! stop words, however common; weighting handles frequency.

use std::collections::HashSet;
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

static STOP_WORDS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| CHINESE.iter().chain(ENGLISH).copied().collect());

/// True if `word` (already normalised: lowercase, Simplified) is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(word)
}
