//! Script-aware word segmentation and sentence splitting.
//!
//! Motivation: Chinese has no spaces, other scripts do, and real articles mix
//! both ("人工智能（AI）", English glossary terms in Chinese text). One
//! segmenter for everything would either cut English into letters or leave
//! Chinese as one long token.
//!
//! Design: the normalised text is split into maximal runs of Han characters
//! and runs of everything else. Han runs go to one shared, lazily built
//! `jieba_rs::Jieba` (building it loads a 5 MB dictionary, so it is done once
//! per process); other runs use Unicode word boundaries (UAX #29). Tokens
//! without a letter or digit (punctuation, spaces) and stop words are dropped.
//!
//! Consequences: segmentation is deterministic (jieba without the HMM for
//! unknown words, which would make a one-character typo change the
//! segmentation of its neighbours).

use std::sync::LazyLock;

use jieba_rs::Jieba;
use unicode_segmentation::UnicodeSegmentation;

use super::normalize::{is_han, is_letter_or_digit};
use super::stopwords::is_stop_word;

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// Build the shared segmenter now (it is otherwise built on first use).
pub fn warm_up() {
    LazyLock::force(&JIEBA);
}

/// Call `on_word` for every feature word of `text`, in text order.
pub fn for_each_word<'text>(text: &'text str, mut on_word: impl FnMut(&'text str)) {
    for (run, run_is_han) in script_runs(text) {
        if run_is_han {
            for token in JIEBA.cut(run, false) {
                keep_word(token.word, &mut on_word);
            }
        } else {
            for word in run.unicode_words() {
                keep_word(word, &mut on_word);
            }
        }
    }
}

/// jieba's TF-IDF extractor, configured to keep every word: it is only used
/// for its IDF table, which jieba-rs keeps private.
static TF_IDF: LazyLock<jieba_rs::TfIdf> = LazyLock::new(|| {
    let mut extractor = jieba_rs::TfIdf::default();
    *extractor.config_mut() = jieba_rs::KeywordExtractConfig::builder()
        .set_stop_words(std::collections::BTreeSet::new())
        .min_keyword_length(1)
        .use_hmm(false)
        .build();
    extractor
});

/// The IDF of a word the table does not know (the table's median).
static MEDIAN_IDF: LazyLock<f64> = LazyLock::new(|| {
    use jieba_rs::KeywordExtract;
    TF_IDF
        .extract_keywords(&JIEBA, "qqqqzzzzxxxx", 1, Vec::new())
        .first()
        .map_or(10.0, |keyword| keyword.weight)
});

/// Call `on_word(word, occurrences × idf)` once per distinct feature word of
/// each script run of `text`.
pub fn for_each_weighted_word(text: &str, mut on_word: impl FnMut(&str, f64)) {
    use jieba_rs::KeywordExtract;
    for (run, run_is_han) in script_runs(text) {
        if run_is_han {
            // The extractor weighs tf × idf / (words in the run): undo the
            // division so runs of different lengths compare.
            let words_in_run = JIEBA.tag(run, false).len() as f64;
            for keyword in TF_IDF.extract_keywords(&JIEBA, run, usize::MAX, Vec::new()) {
                keep_word(&keyword.keyword, &mut |word: &str| {
                    on_word(word, keyword.weight * words_in_run)
                });
            }
        } else {
            for word in run.unicode_words() {
                keep_word(word, &mut |word: &str| on_word(word, *MEDIAN_IDF));
            }
        }
    }
}

/// Call `on_name` for every word of the Han runs of `text` that jieba tags
/// as one of `tags` (part-of-speech tags such as `ns`, place name).
pub fn for_each_tagged_word<'text>(
    text: &'text str,
    tags: &[&str],
    mut on_name: impl FnMut(&'text str),
) {
    for (run, run_is_han) in script_runs(text) {
        if run_is_han {
            for tagged in JIEBA.tag(run, false) {
                if tags.contains(&tagged.tag) {
                    on_name(tagged.word);
                }
            }
        }
    }
}

/// What ends the name of a street, a lane or a village: "胜利路",
/// "春风大道", "幸福里巷" are places whatever jieba's dictionary says.
const ADDRESS_ENDINGS: [&str; 7] = ["路", "街", "巷", "弄", "村", "镇", "大道"];

/// Common nouns that end like an address but name none.
const NOT_ADDRESSES: [&str; 12] = [
    "公路", "铁路", "道路", "马路", "线路", "网路", "思路", "出路", "一路", "大街", "街道", "农村",
];

/// A word that is, or ends, the name of a street, a lane or a village:
/// a word of three or more characters with an address ending ("青年路"), or
/// the ending alone after a word of two characters or more ("春风" "大道"),
/// not one of the common
/// nouns shaped like one ("高速公路", "步行街" read as such too: rare
/// in what two leads swap).
fn is_address(word: &str, after_a_word: bool) -> bool {
    let Some(ending) = ADDRESS_ENDINGS
        .iter()
        .find(|ending| word.ends_with(**ending))
    else {
        return false;
    };
    if NOT_ADDRESSES.iter().any(|noun| word.ends_with(noun)) {
        return false;
    }
    let letters = word.chars().count();
    let ending_letters = ending.chars().count();
    letters >= ending_letters + 2 || (letters == ending_letters && after_a_word)
}

/// Whether a run of Han text holds a name: a word jieba tags as a person,
/// place or organisation (nr…, ns…, nt, nz), a street's or a village's
/// name ([`ADDRESS_ENDINGS`]), or two or more characters in a row that
/// jieba's dictionary cuts one by one and that are not function words (a
/// name it does not know: "乔某", "佳和").
pub fn holds_a_name(text: &str) -> bool {
    for (run, run_is_han) in script_runs(text) {
        if !run_is_han {
            continue;
        }
        let mut single_run = 0;
        let mut after_a_word = false;
        for tagged in JIEBA.tag(run, false) {
            let tag = tagged.tag;
            if is_name_tag(tag) || is_address(tagged.word, after_a_word) {
                return true;
            }
            // A street's own name is a word of two or more characters
            // ("青年" 路), not a measure word or a pronoun ("这条" 路).
            after_a_word = tagged.word.chars().count() >= 2
                && !is_function_tag(tag)
                && !tag.starts_with('m')
                && !tag.starts_with('q');
            if tagged.word.chars().count() == 1 && !is_function_tag(tag) && !tag.starts_with('m') {
                single_run += 1;
                if single_run >= 2 {
                    return true;
                }
            } else {
                single_run = 0;
            }
        }
    }
    false
}

/// What a character belongs to, for telling a changed fact from a changed
/// particle in a short text (see [`crate::confirm::edits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordMark {
    /// Index of the first character of the word holding this character.
    pub word_start: usize,
    pub kind: WordKind,
    /// A Chinese verb or adjective (jieba's v… and a… tags: 获悉, 开展,
    /// 成功, 顺利): what a reprint rewords most, as opposed to a noun, which
    /// names the thing the text is about (see
    /// [`crate::confirm::edits::RepostReading::predicate_swaps`]).
    pub predicate: bool,
}

/// The kind of word a character belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordKind {
    /// A closed-class word: pronoun, adverb, preposition, conjunction,
    /// particle, interjection (怎么/如何, 还/仍, 的, 了, "the", "also").
    /// Swapping or dropping one does not change what a text reports.
    Function,
    /// A Chinese name of a person, place or organisation, a time word or a
    /// numeral: what a fact is about. A reprint neither swaps one nor adds
    /// or drops one inside a short text (今天, 上半年, a name in a list).
    Entity,
    /// Any other word: a noun, verb or adjective.
    Content,
    /// A number written in digits (numbers are compared on their own).
    Other,
}

/// jieba part-of-speech tags of closed-class words: pronouns (r…), adverbs
/// (d, dg, and ad for adverbial adjectives such as 正式), prepositions (p),
/// conjunctions (c), particles (u…), modal particles (y), interjections (e),
/// onomatopoeia (o), and jieba's zg (bound characters such as 仍).
fn is_function_tag(tag: &str) -> bool {
    matches!(
        tag.as_bytes().first(),
        Some(b'r' | b'd' | b'p' | b'c' | b'u' | b'y' | b'e' | b'o')
    ) || matches!(tag, "ad" | "zg")
}

/// jieba part-of-speech tags of names (nr… persons, ns… places, nt
/// organisations, nz other proper nouns), time words (t…) and numerals (m…).
fn is_entity_tag(tag: &str) -> bool {
    is_name_tag(tag) || matches!(tag.as_bytes().first(), Some(b't' | b'm'))
}

/// jieba part-of-speech tags of names: persons (nr…), places (ns…),
/// organisations (nt) and other proper nouns (nz).
/// The name jieba reads around `chars[at]` (in a window of a few
/// characters either side), when its dictionary tags the word holding
/// that character as a person, a place or an organisation: how far before
/// `at` the word starts, its length, and the kind of name (`nr`, `ns`,
/// `nt`). "兰州" / "赣州" differ in one character and are both places of two
/// characters starting at it; a typo ("介绍" / "介昭", "莫斯科州" / "莫五科")
/// makes no such pair.
pub fn known_name_at(chars: &[char], at: usize) -> Option<(usize, usize, &'static str)> {
    const WINDOW: usize = 3;
    let from = at.saturating_sub(WINDOW);
    let to = (at + WINDOW + 1).min(chars.len());
    if from >= to || !chars.get(at).copied().is_some_and(is_han) {
        return None;
    }
    let window: String = chars[from..to].iter().collect();
    let mut position = from;
    for tagged in JIEBA.tag(&window, false) {
        let letters = tagged.word.chars().count();
        if (position..position + letters).contains(&at) {
            let kind = ["nr", "ns", "nt"]
                .into_iter()
                .find(|kind| tagged.tag.starts_with(kind))?;
            return (letters >= 2).then_some((at - position, letters, kind));
        }
        position += letters;
    }
    None
}

/// Time words that place nothing in time ("lately", "the other day",
/// "now"): a reprint swaps one for another (近日 / 日前) without changing
/// when anything happened, so they read as function words, not as the time
/// a fact is about (今天, 上半年, 三月 still are).
const VAGUE_TIME_WORDS: [&str; 12] = [
    "近日",
    "日前",
    "近期",
    "最近",
    "近来",
    "目前",
    "当前",
    "眼下",
    "如今",
    "此前",
    "前不久",
    "不久前",
];

fn is_name_tag(tag: &str) -> bool {
    tag.starts_with("nr") || tag.starts_with("ns") || matches!(tag, "nt" | "nz")
}

/// The word of every character of `chars`: Han runs are segmented and
/// tagged by jieba (dictionary only, as everywhere here); other words run
/// to the next break or Han character and are function words when they are
/// stop words ("the", "of"), else content words, or [`WordKind::Other`]
/// when they are digits. No word runs across a break (`breaks[i]`:
/// punctuation or a space stood before `chars[i]`).
pub fn word_marks(chars: &[char], breaks: &[bool]) -> Vec<WordMark> {
    let mut marks = Vec::with_capacity(chars.len());
    let mut run = String::new();
    let mut index = 0;
    while index < chars.len() {
        if !is_han(chars[index]) {
            let word_start = index;
            run.clear();
            while index < chars.len()
                && !is_han(chars[index])
                && (index == word_start || !breaks.get(index).copied().unwrap_or(false))
            {
                run.push(chars[index]);
                index += 1;
            }
            let kind = if run.chars().all(|c| c.is_ascii_digit()) {
                WordKind::Other
            } else if is_stop_word(&run) {
                WordKind::Function
            } else {
                WordKind::Content
            };
            marks.extend((word_start..index).map(|_| WordMark {
                word_start,
                kind,
                predicate: false,
            }));
            continue;
        }
        let run_start = index;
        run.clear();
        while index < chars.len()
            && is_han(chars[index])
            && (index == run_start || !breaks.get(index).copied().unwrap_or(false))
        {
            run.push(chars[index]);
            index += 1;
        }
        for tagged in JIEBA.tag(&run, false) {
            let kind = if is_function_tag(tagged.tag) || VAGUE_TIME_WORDS.contains(&tagged.word) {
                WordKind::Function
            } else if is_entity_tag(tagged.tag) {
                WordKind::Entity
            } else {
                WordKind::Content
            };
            let predicate = matches!(tagged.tag.as_bytes().first(), Some(b'v' | b'a'));
            for _ in tagged.start..tagged.end {
                marks.push(WordMark {
                    word_start: run_start + tagged.start,
                    kind,
                    predicate,
                });
            }
        }
    }
    marks
}

fn keep_word<'text>(word: &'text str, on_word: &mut impl FnMut(&'text str)) {
    if word.chars().any(is_letter_or_digit) && !is_stop_word(word) {
        on_word(word);
    }
}

/// Maximal runs of Han and of non-Han characters, in order.
fn script_runs(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let run_is_han = is_han(first);
        let run_len = rest
            .char_indices()
            .find(|&(_, c)| is_han(c) != run_is_han)
            .map_or(rest.len(), |(index, _)| index);
        let (run, after) = rest.split_at(run_len);
        rest = after;
        Some((run, run_is_han))
    })
}

/// Split normalised text into sentences: at `。！？!?；;：:…`, at line breaks,
/// and at an ASCII `.` followed by whitespace. Empty pieces are skipped.
pub fn sentences(text: &str) -> Vec<&str> {
    sentences_with_lengths(text)
        .into_iter()
        .map(|(sentence, _)| sentence)
        .collect()
}

/// The `count` sentences of `text` with the most letters and digits, longest
/// first; ties keep text order.
pub fn longest_sentences(text: &str, count: usize) -> Vec<&str> {
    let mut sentences = sentences_with_lengths(text);
    // Stable: equal lengths stay in text order.
    sentences.sort_by_key(|&(_, length)| std::cmp::Reverse(length));
    sentences
        .into_iter()
        .take(count)
        .map(|(sentence, _)| sentence)
        .collect()
}

/// [`sentences`], each with its number of letters and digits (counted once
/// here rather than on every comparison of a sort).
fn sentences_with_lengths(text: &str) -> Vec<(&str, usize)> {
    let mut pieces = Vec::new();
    let mut start = 0;
    // Letters and digits of the sentence so far; a sentence without any is
    // skipped.
    let mut length = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        let ends_sentence = match c {
            // A colon ends a clause too: credit leads ("某某网消息：") and
            // labels ("来源：") stay out of the sentence they introduce.
            '。' | '!' | '?' | ';' | ':' | '…' | '\n' | '\r' | '\u{2029}' | '\u{1e}' => true,
            '.' => chars.peek().is_none_or(|&(_, next)| next.is_whitespace()),
            c => {
                length += usize::from(is_letter_or_digit(c));
                false
            }
        };
        if ends_sentence {
            let end = index + c.len_utf8();
            if length > 0 {
                pieces.push((&text[start..end], length));
            }
            start = end;
            length = 0;
        }
    }
    if length > 0 {
        pieces.push((&text[start..], length));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_word(text, |word| out.push(word));
        out
    }

    #[test]
    fn mixed_scripts_are_segmented_by_their_own_rules() {
        assert_eq!(
            words("人工智能(ai)推动经济发展 machine learning rocks"),
            vec![
                "人工智能",
                "ai",
                "推动",
                "经济",
                "发展",
                "machine",
                "learning",
                "rocks"
            ]
        );
    }

    #[test]
    fn tf_idf_weighs_rare_words_above_common_ones_and_counts_repeats() {
        let mut weights = std::collections::HashMap::new();
        for_each_weighted_word("中国中国量子纠缠 hello", |word, weight| {
            weights.insert(word.to_string(), weight);
        });
        // "中国" twice: tf 2; "量子纠缠" is two words.
        let (common, rare) = (weights["中国"] / 2.0, weights["量子"]);
        assert!(
            rare > common,
            "idf of a rare word {rare} must exceed a common one's {common}"
        );
        assert_eq!(weights["hello"], *MEDIAN_IDF);
        assert_eq!(weights.len(), 4);
    }

    #[test]
    fn punctuation_and_stop_words_are_not_features() {
        assert_eq!(words("我的 新书, the book!"), vec!["新书", "book"]);
    }

    #[test]
    fn sentences_split_on_cjk_and_ascii_terminators() {
        assert_eq!(
            sentences("第一句。第二句!third one. 3.5 stays\nlast"),
            vec!["第一句。", "第二句!", "third one.", " 3.5 stays\n", "last"]
        );
        assert_eq!(sentences("来源:新华社"), vec!["来源:", "新华社"]);
    }

    #[test]
    fn verbs_and_adjectives_are_predicates_and_vague_times_are_no_facts() {
        let marks_of = |text: &str| {
            let chars: Vec<char> = text.chars().collect();
            let marks = word_marks(&chars, &vec![false; chars.len()]);
            (chars, marks)
        };
        let (chars, marks) = marks_of("图书馆举行读书活动");
        let at = |word: &str| {
            let first = word.chars().next().unwrap_or_default();
            marks[chars.iter().position(|&c| c == first).unwrap_or_default()]
        };
        assert!(at("举行").predicate && at("举行").kind == WordKind::Content);
        assert!(!at("图书馆").predicate);
        // A time that places nothing reads as a function word; a date does not.
        let (_, vague) = marks_of("近日城北开放");
        assert_eq!(vague[0].kind, WordKind::Function);
        let (_, dated) = marks_of("今天城北开放");
        assert_eq!(dated[0].kind, WordKind::Entity);
    }

    #[test]
    fn longest_sentences_come_longest_first_and_ties_in_text_order() {
        let text = "ab。abcd。xy。wxyz。a";
        assert_eq!(longest_sentences(text, 1), vec!["abcd。"]);
        assert_eq!(longest_sentences(text, 3), vec!["abcd。", "wxyz。", "ab。"]);
        assert_eq!(longest_sentences(text, 10).len(), 5);
    }
}

#[cfg(test)]
mod address_tests {
    use super::holds_a_name;

    #[test]
    fn streets_and_villages_are_names_whatever_the_dictionary_says() {
        for street in [
            "春风大道",
            "青年路",
            "胜利路至学府北路段",
            "柳树巷",
            "王家村",
        ] {
            assert!(holds_a_name(street), "{street}");
        }
        for noun in ["高速公路", "道路", "知道了", "铁路", "修路"] {
            assert!(!holds_a_name(noun), "{noun}");
        }
    }
}
