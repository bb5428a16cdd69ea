//! Which part of a body identifies its story: a site's boilerplate does not.
//!
//! Motivation: a portal publishes many different stories whose body, as the
//! crawler sees it, is the same disclaimer, paywall, login wall, "video
//! loading" line or press footer. Two such documents share their whole body
//! and differ only in the headline; a rule that trusts a shared body ("a
//! retitled reprint") merges every story of that portal into one class. What
//! tells these apart is not how much text two documents share but whether
//! the shared text says which story it is.
//!
//! Design: two signals, both general.
//!
//! - A prior that needs no history, for the first hours of a deployment:
//!   a sentence that carries one of a small list of generic boilerplate
//!   phrases (rights, disclaimers, subscription and login walls, loading
//!   notices, "click for the original", contact and deletion requests,
//!   editor credits, app and follow prompts; Chinese and English) is not
//!   identifying. The phrases are the genre's vocabulary, not any site's
//!   text: a news sentence rarely says "all rights reserved" or
//!   "不代表本站观点".
//! - The stream (`Engine::body_is_common`): a body the engine already
//!   holds under two other stories' headlines, when the new document's
//!   headline is not told by its body ([`headline_told_by_body`]), is
//!   boilerplate whatever it says. A story reprinted under many headlines
//!   keeps its headline's words in its body; a cookie notice under "Bus
//!   drivers ratify contract" does not.
//!
//! [`identifying_weight`] measures what is left: the body's letters outside
//! boilerplate sentences, a Han character counting as one and a Latin letter
//! or digit as a half (an English word of five letters carries about what
//! two or three Chinese characters do). A body identifies its story by itself when that weight
//! reaches [`MIN_IDENTIFYING_WEIGHT`] and the stream does not find it common; otherwise
//! the headline decides ([`super::LongText::headlines_agree`]).
//!
//! Consequences: a real article is never affected by the prior unless most
//! of its text is boilerplate sentences; a retitled reprint of a short
//! article (under about 80 Chinese characters or 30 English words of its
//! own) needs agreeing headlines to join; and a boilerplate page reposted
//! under the same headline still joins.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use crate::fingerprint::normalize;
use crate::fingerprint::stopwords::is_stop_word;

/// The weight ([`identifying_weight`]) a body needs to identify its story
/// without its headline: about a paragraph of news text.
pub const MIN_IDENTIFYING_WEIGHT: u32 = 80;

/// Phrases of the boilerplate genre in Chinese, matched anywhere in a
/// sentence's Han characters.
const CHINESE_MARKERS: &[&str] = &[
    "版权所有",
    "版权归",
    "版权声明",
    "版权属于",
    "免责声明",
    "不代表本",
    "仅代表作者",
    "本网站",
    "本站立场",
    "本站观点",
    "本站所",
    "本站转载",
    "本站内容",
    "转载请",
    "禁止转载",
    "不得转载",
    "谢绝转载",
    "转载自",
    "如有侵权",
    "若有侵权",
    "涉嫌侵权",
    "侵权请",
    "侵删",
    "未经授权不得",
    "未经许可不得",
    "不得复制",
    "保留所有权利",
    "请读者自行",
    "仅供参考",
    "自行核实",
    "联系删除",
    "联系我们",
    "联系电话",
    "电子邮箱",
    "责任编辑",
    "原标题",
    "付费内容",
    "订阅后",
    "登录后查看",
    "登录后阅读",
    "登录后可",
    "请登录",
    "注册会员",
    "会员专享",
    "阅读全文",
    "查看原文",
    "阅读原文",
    "点击查看",
    "点击进入",
    "点击播放",
    "加载中",
    "正在加载",
    "请稍候",
    "扫描二维码关注",
    "扫描下方二维码",
    "扫码关注",
    "长按识别",
    "关注公众号",
    "下载客户端",
    "图片来源网络",
    "许可证编号",
    "举报电话",
    "举报邮箱",
    "不良信息",
    "读者群",
    "新闻线索",
    "爆料",
];

/// Phrases of the boilerplate genre in English, matched as whole words
/// (lower case, one space between words). Words that news reports use in
/// their own sentences ("subscribers", "copyright", "infringes", "log in")
/// are not listed alone, only in the phrases of a notice.
const ENGLISH_MARKERS: &[&str] = &[
    "all rights reserved",
    "disclaimer",
    "do not necessarily reflect",
    "does not necessarily reflect",
    "views expressed",
    "opinions expressed",
    "reproduced without permission",
    "used without permission",
    "without prior written permission",
    "may not be reproduced",
    "may not be republished",
    "contact us",
    "terms of use",
    "terms of service",
    "privacy policy",
    "we use cookies",
    "use of cookies",
    "accept cookies",
    "subscribe to",
    "subscribe now",
    "please subscribe",
    "subscription required",
    "your subscription",
    "sign in to",
    "sign up for our",
    "log in to",
    "must be logged in",
    "free account",
    "available to registered",
    "for registered users",
    "read the full",
    "continue reading",
    "read more",
    "click here",
    "tap here",
    "video is loading",
    "page is loading",
    "content is loading",
    "video loading",
    "please wait",
    "enable javascript",
    "your browser does not",
    "update your browser",
    "download our app",
    "follow us",
    "our newsletter",
    "advertisement",
    "sponsored content",
    "may not be published",
    "rewritten or redistributed",
    "news tip",
    "story idea",
    "email our newsroom",
    "community guidelines",
    "comments are moderated",
    "support local journalism",
    "delivered to your inbox",
    "committed to accuracy",
    "makes no representations",
    "for informational purposes",
    "infringes your rights",
    "trouble signing in",
    "photo galleries",
    "swipe for more",
    "click play",
];

/// The Chinese phrases, found in one pass over a sentence's Han characters.
static CHINESE_MATCHER: LazyLock<AhoCorasick> =
    LazyLock::new(|| AhoCorasick::new(CHINESE_MARKERS).unwrap_or_else(|_| unreachable_matcher()));

/// The English phrases padded with a space at both ends, found in one pass
/// over a sentence's space-padded words: whole words only, and two phrases
/// that share a space are both found.
static ENGLISH_MATCHER: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let padded: Vec<String> = ENGLISH_MARKERS
        .iter()
        .map(|marker| format!(" {marker} "))
        .collect();
    AhoCorasick::new(&padded).unwrap_or_else(|_| unreachable_matcher())
});

/// The matchers are built from the constant lists above, which are valid
/// patterns; an automaton that matches nothing keeps this path panic-free.
fn unreachable_matcher() -> AhoCorasick {
    AhoCorasick::new(Vec::<String>::new()).unwrap_or_else(|_| unreachable!("no pattern"))
}

/// A sentence with one phrase of the genre is boilerplate only when what
/// else it says weighs at most this (in half weights: about 30 Han
/// characters or 60 Latin letters); with two phrases it is boilerplate
/// whatever its length. A notice is short and formulaic; one phrase in a
/// longer sentence is more likely the news talking about it ("copyright
/// trade") or a tag stuck to the last sentence of a cut article ("… Read
/// more").
const MAX_BESIDE_ONE_PHRASE: u64 = 60;

/// The share of a headline's words that must appear in its body for the
/// body to tell the headline's story (see [`headline_told_by_body`]). A
/// news body repeats most of its headline's words (DEV: 98 % of copies reach
/// a fifth); a boilerplate body repeats none.
const MIN_HEADLINE_WORDS_IN_BODY: f64 = 0.25;

/// Whether `body` tells the story `headline` names (both normalised): at
/// least [`MIN_HEADLINE_WORDS_IN_BODY`] of the headline's words appear in
/// the body, a word being a Han character bigram or a Latin word of three
/// letters or more that is not a stop word. True for a headline without
/// such words (nothing to tell).
pub fn headline_told_by_body(headline: &str, body: &str) -> bool {
    // Words are slices of the headline: this runs for every long text.
    let mut words: Vec<&str> = Vec::new();
    let mut runs = headline
        .char_indices()
        .filter(|&(_, c)| normalize::is_letter_or_digit(c))
        .peekable();
    while let Some((start, first)) = runs.next() {
        let han = normalize::is_han(first);
        let mut ends = vec![start + first.len_utf8()];
        while let Some(&(at, c)) = runs.peek() {
            if at != *ends.last().unwrap_or(&at) || normalize::is_han(c) != han {
                break;
            }
            ends.push(at + c.len_utf8());
            runs.next();
        }
        let end = ends.last().copied().unwrap_or(start);
        if han {
            // Each bigram ends where its second character does.
            let mut from = start;
            for pair in ends.windows(2) {
                words.push(&headline[from..pair[1]]);
                from = pair[0];
            }
        } else if ends.len() >= 3 && !is_stop_word(&headline[start..end]) {
            words.push(&headline[start..end]);
        }
    }
    words.sort_unstable();
    words.dedup();
    if words.is_empty() {
        return true;
    }
    let told = words.iter().filter(|word| body.contains(**word)).count();
    told as f64 >= MIN_HEADLINE_WORDS_IN_BODY * words.len() as f64
}

/// How much of `body` (normalised text: lower case, punctuation kept) is
/// outside boilerplate sentences: Han characters count one, other letters
/// and digits a half. Sentences end at sentence punctuation and at line
/// breaks.
pub fn identifying_weight(body: &str) -> u32 {
    read_body(body).weight
}

/// A sentence's key for boilerplate learned from the stream
/// (`engine::commonness`): a hash of its letters and digits (with digits
/// left out, the stock sentences of one genre that differ in a figure read
/// as one, and reprints under new headlines were lost: measured, not
/// kept), and its weight in half-letters (see [`identifying_weight`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentenceKey {
    pub hash: u64,
    pub weight_in_halves: u32,
}

/// Sentences lighter than this (in half-letters: 8 Han characters, 16
/// other letters) are not keyed: "he said", a photo credit, a dateline
/// recur everywhere and weigh little.
pub const MIN_KEYED_HALVES: u64 = 16;

/// What a body's sentences say about its story.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyIdentity {
    /// [`identifying_weight`].
    pub weight: u32,
    /// The keys of the sentences counted in `weight` (from
    /// [`MIN_KEYED_HALVES`]), in body order.
    pub sentences: Vec<SentenceKey>,
    /// The body without its boilerplate sentences, when it had some and
    /// something else is left; `None` when the body is to be read whole
    /// (nothing to remove, or nothing but boilerplate).
    pub identifying_text: Option<String>,
}

/// Reads `body` sentence by sentence (see [`identifying_weight`]).
pub fn read_body(body: &str) -> BodyIdentity {
    read_body_with(body, true)
}

/// [`read_body`]; with `prior` false no sentence is boilerplate by the
/// list of phrases (to measure what the stream learns without it).
pub fn read_body_with(body: &str, prior: bool) -> BodyIdentity {
    let mut sentences: Vec<ReadSentence> = Vec::new();
    let mut sentence = Sentence::default();
    let mut sentence_start = 0;
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if normalize::is_letter_or_digit(c) {
            sentence.push(c);
            continue;
        }
        // A full stop ends an English sentence only before a space or the
        // end (not in "3.5" or "u.s.").
        let ends_sentence = match c {
            '.' => chars.peek().is_none_or(|(_, next)| next.is_whitespace()),
            _ => is_sentence_end(c),
        };
        if ends_sentence {
            let end = at + c.len_utf8();
            sentences.push(sentence.take(sentence_start..end, ends_paragraph(c), prior));
            sentence_start = end;
        } else {
            sentence.word_break();
        }
    }
    sentences.push(sentence.take(sentence_start..body.len(), true, prior));
    mark_boilerplate_paragraphs(&mut sentences);
    let weight_in_halves: u64 = sentences
        .iter()
        .filter(|sentence| !sentence.boilerplate)
        .map(|sentence| sentence.weight_in_halves)
        .sum();
    let weight = u32::try_from(weight_in_halves / 2).unwrap_or(u32::MAX);
    let any_boilerplate = sentences
        .iter()
        .any(|sentence| sentence.boilerplate && sentence.weight_in_halves > 0);
    let identifying_text = (weight > 0 && any_boilerplate).then(|| {
        let mut kept = String::with_capacity(body.len());
        for sentence in &sentences {
            let text = body.get(sentence.range.clone()).unwrap_or_default();
            if !sentence.boilerplate {
                kept.push_str(text);
            } else if text.ends_with(crate::fingerprint::FIELD_SEPARATOR) {
                // The fields are still read one by one.
                kept.push(crate::fingerprint::FIELD_SEPARATOR);
            } else {
                kept.push(' ');
            }
        }
        kept
    });
    let keys = sentences
        .iter()
        .filter(|sentence| !sentence.boilerplate && sentence.weight_in_halves >= MIN_KEYED_HALVES)
        .map(|sentence| SentenceKey {
            hash: sentence.hash,
            weight_in_halves: u32::try_from(sentence.weight_in_halves).unwrap_or(u32::MAX),
        })
        .collect();
    BodyIdentity {
        weight,
        sentences: keys,
        identifying_text,
    }
}

/// One sentence of a body, read.
#[derive(Debug)]
struct ReadSentence {
    range: std::ops::Range<usize>,
    weight_in_halves: u64,
    /// [`SentenceKey::hash`].
    hash: u64,
    boilerplate: bool,
    /// The sentence ends its paragraph (a line break, a field's end).
    ends_paragraph: bool,
}

/// Boilerplate comes in blocks: a paragraph most of whose text is in
/// boilerplate sentences is boilerplate whole (a cookie notice's or a
/// disclaimer's sentences without a phrase of the list of their own).
fn mark_boilerplate_paragraphs(sentences: &mut [ReadSentence]) {
    let mut paragraph_start = 0;
    for index in 0..sentences.len() {
        if !sentences[index].ends_paragraph && index + 1 < sentences.len() {
            continue;
        }
        let paragraph = &mut sentences[paragraph_start..=index];
        let total: u64 = paragraph.iter().map(|s| s.weight_in_halves).sum();
        let marked: u64 = paragraph
            .iter()
            .filter(|s| s.boilerplate)
            .map(|s| s.weight_in_halves)
            .sum();
        if marked * 2 >= total {
            for sentence in paragraph.iter_mut() {
                sentence.boilerplate = true;
            }
        }
        paragraph_start = index + 1;
    }
}

fn ends_paragraph(c: char) -> bool {
    matches!(c, '\n' | '\r') || c == crate::fingerprint::FIELD_SEPARATOR
}

/// One sentence as it is read: its Han characters run together, its other
/// words one space apart and padded with spaces at both ends, so an English
/// phrase is matched as whole words (" log in " is not in "catalog
/// indicates").
struct Sentence {
    han: String,
    words: String,
    weight_in_halves: u64,
    in_word: bool,
    /// FNV-1a of the letters and digits, as they come, one space per
    /// word break.
    hash: u64,
}

impl Default for Sentence {
    fn default() -> Self {
        Sentence {
            han: String::new(),
            words: String::new(),
            weight_in_halves: 0,
            in_word: false,
            hash: FNV_OFFSET,
        }
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// The finaliser of MurmurHash3: FNV's low bits are weak, and the tables
/// keyed by this hash select buckets by them.
fn avalanche(mut hash: u64) -> u64 {
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^ (hash >> 33)
}

impl Sentence {
    fn push(&mut self, c: char) {
        self.hash = (self.hash ^ u64::from(c)).wrapping_mul(FNV_PRIME);
        if normalize::is_han(c) {
            self.han.push(c);
            self.weight_in_halves += 2;
            self.word_break();
            return;
        }
        if !self.in_word {
            if self.words.is_empty() {
                self.words.push(' ');
            }
            self.in_word = true;
        }
        self.words.push(c);
        self.weight_in_halves += 1;
    }

    fn word_break(&mut self) {
        if self.in_word {
            self.hash = (self.hash ^ u64::from(b' ')).wrapping_mul(FNV_PRIME);
            self.words.push(' ');
            self.in_word = false;
        }
    }

    /// The sentence as read; starts the next one.
    fn take(
        &mut self,
        range: std::ops::Range<usize>,
        ends_paragraph: bool,
        prior: bool,
    ) -> ReadSentence {
        self.word_break();
        let read = ReadSentence {
            range,
            weight_in_halves: self.weight_in_halves,
            hash: avalanche(self.hash),
            boilerplate: prior && is_boilerplate(&self.han, &self.words, self.weight_in_halves),
            ends_paragraph,
        };
        *self = Sentence::default();
        read
    }
}

/// A sentence (its Han characters, and its other words space-padded) is
/// boilerplate: a phrase of the genre in a short sentence, or two in any.
fn is_boilerplate(han: &str, words: &str, weight_in_halves: u64) -> bool {
    let mut found = [false; CHINESE_MARKERS.len() + ENGLISH_MARKERS.len()];
    let mut phrases = 0;
    let mut phrase_halves = 0;
    let mut note = |index: usize, halves: u64| {
        if !found[index] {
            found[index] = true;
            phrases += 1;
            phrase_halves += halves;
        }
    };
    if !han.is_empty() {
        for found in CHINESE_MATCHER.find_overlapping_iter(han) {
            let marker = CHINESE_MARKERS[found.pattern().as_usize()];
            note(
                found.pattern().as_usize(),
                2 * marker.chars().count() as u64,
            );
        }
    }
    if !words.is_empty() {
        for found in ENGLISH_MATCHER.find_overlapping_iter(words) {
            let index = found.pattern().as_usize();
            let letters = ENGLISH_MARKERS[index].chars().filter(|c| *c != ' ').count();
            note(CHINESE_MARKERS.len() + index, letters as u64);
        }
    }
    match phrases {
        0 => false,
        1 => weight_in_halves.saturating_sub(phrase_halves) <= MAX_BESIDE_ONE_PHRASE,
        _ => true,
    }
}

fn is_sentence_end(c: char) -> bool {
    matches!(
        c,
        '。' | '！' | '？' | '!' | '?' | ';' | '；' | '\n' | '\r' | '…' | '|'
    ) || c == crate::fingerprint::FIELD_SEPARATOR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_news_body_tells_its_headline_and_a_site_notice_does_not() {
        let story = "本市今天召开城市更新工作推进会，今年计划改造老旧小区120个。";
        assert!(headline_told_by_body("我市召开城市更新推进会", story));
        assert!(!headline_told_by_body("第36届冰雪节6月15日开幕", story));
        let notice = "this site uses cookies. sign up for our morning briefing.";
        assert!(!headline_told_by_body(
            "bus drivers ratify tentative contract",
            notice
        ));
        let report = "the city's bus drivers voted on monday to ratify the contract.";
        assert!(headline_told_by_body(
            "fairview bus drivers ratify tentative contract",
            report
        ));
        // Stop words are not the story's words ("for", "our" are in it).
        assert!(!headline_told_by_body(
            "ministers meet for our budget talks",
            notice
        ));
        // Nothing to tell: a headline of figures and punctuation only.
        assert!(headline_told_by_body("12 · 34", notice));
    }

    #[test]
    fn a_disclaimer_identifies_nothing() {
        let zh = "本站所载文章仅代表作者个人观点，不代表本站立场。如有侵权，请联系删除。";
        assert_eq!(identifying_weight(zh), 0);
        let en = "the views expressed here do not necessarily reflect our own. \
                  all rights reserved. please subscribe to continue reading.";
        assert_eq!(identifying_weight(en), 0);
    }

    #[test]
    fn press_footers_and_portal_licences_identify_nothing() {
        // A wire footer, a tip line, a comment policy; a Chinese portal's
        // licence number and report line: the genre, on every page.
        let en = "this material may not be published, broadcast, rewritten or redistributed. \
                  have a news tip? email our newsroom. \
                  comments are moderated and may be removed if they break our community guidelines.";
        assert_eq!(identifying_weight(en), 0);
        let zh = "互联网新闻信息服务许可证编号：1432060232。违法和不良信息举报电话：010-12345678。";
        assert_eq!(identifying_weight(zh), 0);
    }

    #[test]
    fn a_news_body_keeps_its_sentences_and_loses_its_footer() {
        let story = "市政府昨天通过了新的公园建设预算，总额为三亿元。";
        let footer = "责任编辑：王某。";
        let alone = identifying_weight(story);
        assert_eq!(
            alone,
            story.chars().filter(|&c| normalize::is_han(c)).count() as u32
        );
        assert_eq!(identifying_weight(&format!("{story}{footer}")), alone);
    }

    #[test]
    fn latin_letters_weigh_a_half_and_decimals_do_not_end_a_sentence() {
        // 24 letters and digits in one sentence: weight 12.
        assert_eq!(identifying_weight("shares rose 3.5 percent today"), 12);
    }

    #[test]
    fn the_identifying_text_is_the_body_without_its_boilerplate() {
        let story = "市政府昨天通过了新的公园建设预算。";
        let footer = "责任编辑：王某。";
        let read = read_body(&format!("{story}{footer}"));
        assert_eq!(
            read.identifying_text.as_deref(),
            Some(format!("{story} ").as_str())
        );
        // Nothing to remove, or nothing else left: the body is read whole.
        assert_eq!(read_body(story).identifying_text, None);
        assert_eq!(read_body(footer).identifying_text, None);
    }

    #[test]
    fn news_about_a_notice_is_not_a_notice() {
        // One phrase in a long sentence: the news talks about copyright
        // trade, or a cut article ends in a tag; both stay identifying.
        let trade = "中华优秀传统文化主题出版物成为版权交易热点，大型历史文献图书第一至三编、\
                     新中国建设以来最大规模的儒家文献整理项目等系统性典籍集体亮相，\
                     了解新时代中国的成就成为越来越多国际出版人的选择，版权所有方纷纷签约";
        assert!(
            identifying_weight(trade) > 60,
            "{}",
            identifying_weight(trade)
        );
        let cut = "for the year to date it said load factor fell to 36.2 pct from 40.3 pct \
                   a year before as revenue passenger miles rose 3.3 pct t read more";
        assert!(identifying_weight(cut) > 40, "{}", identifying_weight(cut));
        // Subscribers in business news are not a subscription wall.
        assert_eq!(
            identifying_weight("netflix added five million subscribers"),
            17
        );
    }

    #[test]
    fn english_phrases_match_whole_words_only() {
        // "catalog indicates" holds the letters of "log in", not the words.
        assert_eq!(identifying_weight("the catalog indicates growth"), 12);
        assert_eq!(identifying_weight("please log in to read"), 0);
    }
}
