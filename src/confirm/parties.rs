//! Party slots: where a form names the person it is about.
//!
//! Motivation: court decisions and administrative notices are written from
//! forms, and two of them can differ only in a person's full name:
//! "原告张建国不服被告…" / "原告刘秀兰不服被告…" (issue 46). The names are real
//! names that the dictionary does not know, so jieba cuts them into
//! ordinary characters or words, and neither the name rule of the short
//! texts nor the span rule of the long ones ([`super::spans`]) sees a name
//! there. A reprint of one decision never changes its parties.
//!
//! Design: no dictionary. A form announces its parties with a few role
//! words (原告, 被告, 第三人, 委托代理人, 申请人, 上诉人, 法定代表人, 当事人, …:
//! [`PARTY_ROLES`]); the name that follows has the shape of a Chinese full
//! name, a surname from the common surname list ([`SURNAMES`], one or two
//! characters) and one or two given characters. A difference between two
//! aligned texts that lies, on both sides, inside such a slot (it starts
//! at the surname or within the given name and ends before the name's
//! longest possible end) swaps one party for another: the texts are two
//! documents, however little else differs. English forms name their parties
//! after the same kind of word (plaintiff, petitioner, …) in capitalised
//! words; where the case of the text is known, a difference inside those
//! words on both sides is a party swapped too.
//!
//! Consequences: a name whose surname is not on the list, or a party named
//! without a role word before it, is not seen. A typo that hits a party's
//! name reads as another party (rare: one character in a few hundred, in a
//! slot of three). The check is a handful of comparisons per difference and
//! runs only on differences with letters on both sides.

use std::ops::Range;

use crate::fingerprint::normalize::is_han;

/// Words that introduce a party, its representative or an officer of the
/// court in Chinese forms (longest first where one ends another).
pub const PARTY_ROLES: &[&str] = &[
    "原告",
    "被告",
    "被告人",
    "第三人",
    "原审原告",
    "原审被告",
    "原审第三人",
    "上诉人",
    "被上诉人",
    "申请人",
    "被申请人",
    "再审申请人",
    "申诉人",
    "被申诉人",
    "申请执行人",
    "被执行人",
    "案外人",
    "代理人",
    "委托代理人",
    "诉讼代理人",
    "委托诉讼代理人",
    "法定代理人",
    "指定代理人",
    "辩护人",
    "法定代表人",
    "负责人",
    "主要负责人",
    "当事人",
    "犯罪嫌疑人",
    "被害人",
    "罪犯",
    "证人",
    "审判长",
    "审判员",
    "陪审员",
    "书记员",
    "法官助理",
    "执行员",
    "仲裁员",
    "投诉人",
    "被投诉人",
    "举报人",
    "被举报人",
    "经营者",
    "业主",
    "户主",
    "承租人",
    "出租人",
    "借款人",
    "出借人",
    "保证人",
    "担保人",
    "继承人",
    "被继承人",
    "监护人",
    "被监护人",
    "受送达人",
    "联系人",
    "失主",
    "死者",
    "患者",
];

/// The last characters of [`PARTY_ROLES`] (a test holds the two together).
const ROLE_ENDINGS: &[char] = &['告', '人', '员', '者', '主', '理', '长', '犯'];

/// Common Chinese surnames of one character (those that are mostly
/// function words or numerals after a role word, 和, 都, 应, 于…, left out but
/// 于, too common a surname to leave out).
const SURNAMES: &str = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫阎段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂佟臧闵苟邬边卞姬师仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝官封谈匡鞠惠荆乐冀郁胥南班储栗燕楚鄢劳谌奚皮粟冼蔺楼盘满闻厉伊仝郜海阚花权强帅屠豆朴盖练廉禹井祖漆巴丰支卿狄索宣晋云容敬扈晁芮阙浦戈鹿邸雍辜羊裘亓邰赫杭况逯茹诸慕玉银嵩蔚";

/// Common Chinese surnames of two characters.
const COMPOUND_SURNAMES: &[&str] = &[
    "欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "尉迟", "公孙", "慕容", "长孙", "宇文", "司徒",
    "夏侯", "轩辕", "令狐", "钟离", "端木", "西门", "南宫", "独孤", "百里", "呼延", "澹台", "万俟",
];

/// Given characters a Chinese name has after its surname.
pub(crate) const MAX_GIVEN_CHARS: usize = 2;

/// Words that introduce a party in English forms (compared lowercased,
/// as whole words).
const ENGLISH_PARTY_ROLES: &[&str] = &[
    "plaintiff",
    "plaintiffs",
    "defendant",
    "defendants",
    "petitioner",
    "respondent",
    "appellant",
    "appellee",
    "claimant",
    "applicant",
    "debtor",
    "creditor",
    "decedent",
    "guardian",
    "ward",
    "attorney",
    "counsel",
    "v",
    "vs",
    "versus",
    "of",
];

/// Role words looked for in a long text's lead, whose letters run together
/// without case or spaces: the longer words of [`ENGLISH_PARTY_ROLES`]
/// ("of" and "v" are inside too many words).
const ENGLISH_LEAD_ROLES: &[&str] = &[
    "plaintiff",
    "defendant",
    "petitioner",
    "respondent",
    "appellant",
    "appellee",
    "claimant",
    "applicant",
    "decedent",
    "guardian",
    "attorney",
];

/// In a lead, a party's name starts within this many letters of its role
/// word (a first name and an initial before the difference) and ends
/// within the second number.
const LEAD_NAME_START_LETTERS: usize = 12;
const LEAD_NAME_LETTERS: usize = 28;

/// `gap` of a lead (letters only, lowercased and run together) lies in the
/// name after an English role word: the role ends at most
/// [`LEAD_NAME_START_LETTERS`] letters before the gap, the gap ends within
/// [`LEAD_NAME_LETTERS`] of it, and holds letters only.
fn in_english_lead_party_name(chars: &[char], gap: &Range<usize>) -> bool {
    if gap.is_empty() || gap.end > chars.len() {
        return false;
    }
    if !chars[gap.clone()].iter().all(|c| c.is_ascii_lowercase()) {
        return false;
    }
    let earliest = gap.start.saturating_sub(LEAD_NAME_START_LETTERS);
    (earliest..=gap.start).any(|name_start| {
        gap.end <= name_start + LEAD_NAME_LETTERS
            && chars[name_start..gap.start]
                .iter()
                .all(|c| c.is_ascii_lowercase())
            && ENGLISH_LEAD_ROLES.iter().any(|role| {
                let length = role.len();
                name_start >= length
                    && role
                        .chars()
                        .eq(chars[name_start - length..name_start].iter().copied())
            })
    })
}

/// Two aligned leads of long texts (letters and digits, run together, as
/// [`super::LongText`] keeps them) differ at `our_gap` and `their_gap` in a
/// party's name: Chinese ([`swaps_a_chinese_party`]) or English (a gap on
/// both sides in the letters after a role word such as "plaintiff").
pub fn swaps_a_party_in_leads(
    ours: &[char],
    our_gap: &Range<usize>,
    theirs: &[char],
    their_gap: &Range<usize>,
) -> bool {
    swaps_a_chinese_party(ours, our_gap, theirs, their_gap)
        || (!our_gap.is_empty()
            && !their_gap.is_empty()
            && in_english_lead_party_name(ours, our_gap)
            && in_english_lead_party_name(theirs, their_gap))
}

/// Words of an English name after its role word: a first name, an initial,
/// a last name and one more (a second last name or a suffix).
const MAX_ENGLISH_NAME_WORDS: usize = 4;

/// How long the surname at `chars[at]` is, when one starts there.
pub(crate) fn surname_at(chars: &[char], at: usize) -> Option<usize> {
    let pair = chars.get(at..at + 2);
    if pair.is_some_and(|pair| {
        COMPOUND_SURNAMES
            .iter()
            .any(|surname| surname.chars().eq(pair.iter().copied()))
    }) {
        return Some(2);
    }
    let first = *chars.get(at)?;
    SURNAMES.contains(first).then_some(1)
}

/// A role word of [`PARTY_ROLES`] ends right before `chars[at]`. Most
/// positions are ruled out by the last character alone (every role ends in
/// one of a few), before any role is compared.
fn role_ends_at(chars: &[char], at: usize) -> bool {
    let Some(&last) = at.checked_sub(1).and_then(|before| chars.get(before)) else {
        return false;
    };
    if !ROLE_ENDINGS.contains(&last) {
        return false;
    }
    PARTY_ROLES.iter().any(|role| {
        let length = role.chars().count();
        at >= length && role.chars().eq(chars[at - length..at].iter().copied())
    })
}

/// `gap` (a range of `chars`, letters as the confirmation compares them)
/// lies inside the full name that fills a Chinese party slot: a role word,
/// then a surname, then at most [`MAX_GIVEN_CHARS`] given characters, all
/// of them Han, and the gap within the name.
pub fn in_chinese_party_name(chars: &[char], gap: &Range<usize>) -> bool {
    if gap.is_empty() || gap.end > chars.len() {
        return false;
    }
    // The name starts at most a surname and a given character before the gap.
    let earliest = gap.start.saturating_sub(3);
    (earliest..=gap.start).rev().any(|name_start| {
        if !role_ends_at(chars, name_start) {
            return false;
        }
        let Some(surname) = surname_at(chars, name_start) else {
            return false;
        };
        gap.end <= name_start + surname + MAX_GIVEN_CHARS
            && gap.start < name_start + surname + MAX_GIVEN_CHARS
            && chars[name_start..gap.end].iter().all(|&c| is_han(c))
    })
}

/// The point `at` (between `chars[at - 1]` and `chars[at]`) lies inside a
/// Chinese party's name, after its surname and before its last possible
/// given character: where a longer given name has a character more.
fn inside_chinese_party_name(chars: &[char], at: usize) -> bool {
    let earliest = at.saturating_sub(2 + MAX_GIVEN_CHARS - 1);
    (earliest..at).any(|name_start| {
        role_ends_at(chars, name_start)
            && surname_at(chars, name_start).is_some_and(|surname| {
                name_start + surname <= at
                    && at < name_start + surname + MAX_GIVEN_CHARS
                    && chars
                        .get(name_start..at)
                        .is_some_and(|name| name.iter().all(|&c| is_han(c)))
                    && role_ends_at(chars, name_start)
            })
    })
}

/// Two aligned texts differ, at `ours` and `theirs`, in the full name of a
/// Chinese party: the difference lies inside a party slot on both sides
/// (see [`in_chinese_party_name`]), or one side has given characters the
/// other lacks inside the name ("李涵" / "李艳涵", "施凯薇" / "施宏凯": the
/// alignment matches the shared characters and leaves one-sided gaps).
/// Characters one side has right after a whole name ("张三诉" / "张三起诉")
/// are a word added, not a name changed.
pub fn swaps_a_chinese_party(
    ours: &[char],
    our_gap: &Range<usize>,
    theirs: &[char],
    their_gap: &Range<usize>,
) -> bool {
    // One side inserts into a name the other has: strictly inside the
    // longer name (a given character follows), at a point inside the other.
    let inserted = |side: &[char], gap: &Range<usize>, other: &[char], point: usize| {
        gap.len() <= MAX_GIVEN_CHARS
            && in_chinese_party_name(side, gap)
            && inside_chinese_party_name(side, gap.end)
            && inside_chinese_party_name(other, point)
    };
    match (our_gap.is_empty(), their_gap.is_empty()) {
        (false, false) => {
            in_chinese_party_name(ours, our_gap) && in_chinese_party_name(theirs, their_gap)
        }
        (false, true) => inserted(ours, our_gap, theirs, their_gap.start),
        (true, false) => inserted(theirs, their_gap, ours, our_gap.start),
        (true, true) => false,
    }
}

/// The words of a text whose letters are `chars`, split where `breaks` is
/// set: (start, end) of each word holding `at`.
pub(crate) fn word_around(breaks: &[bool], chars_len: usize, at: usize) -> Range<usize> {
    let start = (0..=at).rev().find(|&i| breaks[i] || i == 0).unwrap_or(0);
    let end = (at + 1..chars_len)
        .find(|&i| breaks[i])
        .unwrap_or(chars_len);
    start..end
}

/// `gap` lies inside the capitalised words of an English name that follows
/// a role word ("Plaintiff John Smith", "v. Mary Jones"): the text's letters
/// `chars` (lowercased), where words break (`breaks[i]`: a space or
/// punctuation stood before `chars[i]`) and which letters were capitals.
pub fn in_english_party_name(
    chars: &[char],
    breaks: &[bool],
    capital: &[bool],
    gap: &Range<usize>,
) -> bool {
    let len = chars.len();
    if gap.is_empty() || gap.end > len || breaks.len() != len || capital.len() != len {
        return false;
    }
    if !chars[gap.clone()].iter().all(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    // Walk back over capitalised words from the gap's word to a role word.
    let mut word = word_around(breaks, len, gap.start);
    // The gap must end inside the name's words: at most this many words on.
    let mut words_back = 0;
    loop {
        if !capital[word.start] {
            return false;
        }
        words_back += 1;
        if words_back > MAX_ENGLISH_NAME_WORDS || word.start == 0 {
            return false;
        }
        let before = word_around(breaks, len, word.start - 1);
        let text: String = chars[before.clone()].iter().collect();
        if ENGLISH_PARTY_ROLES.contains(&text.as_str()) {
            break;
        }
        word = before;
    }
    // Forward from the gap's word: the gap ends within capitalised words.
    let mut end_word = word_around(breaks, len, gap.start);
    while end_word.end < gap.end {
        end_word = word_around(breaks, len, end_word.end);
        if !capital[end_word.start] {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    fn swapped(ours: &str, theirs: &str) -> bool {
        // The one gap between two texts that share a start and an end.
        let (ours, theirs) = (chars(ours), chars(theirs));
        let start = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
        let end = ours
            .iter()
            .rev()
            .zip(theirs.iter().rev())
            .take_while(|(a, b)| a == b)
            .count()
            .min(ours.len() - start)
            .min(theirs.len() - start);
        swaps_a_chinese_party(
            &ours,
            &(start..ours.len() - end),
            &theirs,
            &(start..theirs.len() - end),
        )
    }

    #[test]
    fn a_full_name_swapped_in_a_party_slot_is_another_party() {
        assert!(swapped(
            "原告田志远不服被告某区市场监督管理局作出的行政处罚决定",
            "原告韩晓梅不服被告某区市场监督管理局作出的行政处罚决定"
        ));
        // One surname, another given name; one given character only.
        assert!(swapped(
            "第三人汤立及其委托代理人到庭",
            "第三人汤雨桐及其委托代理人到庭"
        ));
        assert!(swapped("委托代理人邵凯律师", "委托代理人邵楠律师"));
        // Another surname, the same given name; a compound surname.
        assert!(swapped("上诉人姚佳因与被上诉人", "上诉人苗佳因与被上诉人"));
        assert!(swapped("申请人欧阳明与被申请人", "申请人贺子明与被申请人"));
        // A given character more or less inside one surname's name: the
        // alignment leaves one-sided gaps only.
        assert!(swapped("第三人李涵男", "第三人李艳涵男"));
        assert!(swapped("第三人李艳涵男", "第三人李涵男"));
    }

    #[test]
    fn words_after_a_role_that_are_not_names_are_not_parties() {
        // A repost rewording what follows the role word.
        assert!(!swapped("被告辩称其行为合法", "被告认为其行为合法"));
        // No role word before the name.
        assert!(!swapped("记者田志远报道", "记者韩晓梅报道"));
        // The difference runs past a name's longest end.
        assert!(!swapped(
            "原告田志远不服被告的决定",
            "原告田志远及其妻子不服被告的决定"
        ));
        // A word added right after a whole name.
        assert!(!swapped("原告张三诉被告", "原告张三起诉被告"));
    }

    #[test]
    fn english_names_after_a_role_word_are_parties() {
        // Letters lowercased, word breaks and capitals as the confirmation
        // keeps them.
        let read = |text: &str| {
            let mut chars = Vec::new();
            let mut breaks = Vec::new();
            let mut capital = Vec::new();
            let mut broke = true;
            for c in text.chars() {
                if c.is_alphanumeric() {
                    chars.push(c.to_ascii_lowercase());
                    breaks.push(broke);
                    capital.push(c.is_uppercase());
                    broke = false;
                } else {
                    broke = true;
                }
            }
            (chars, breaks, capital)
        };
        let (chars, breaks, capital) = read("Plaintiff John Smith v. Acme Corp filed");
        let at = |word: &str| {
            let text: String = chars.iter().collect();
            let start = text.find(word).unwrap_or(0);
            start..start + word.len()
        };
        assert!(in_english_party_name(
            &chars,
            &breaks,
            &capital,
            &at("smith")
        ));
        assert!(in_english_party_name(
            &chars,
            &breaks,
            &capital,
            &at("john")
        ));
        assert!(in_english_party_name(
            &chars,
            &breaks,
            &capital,
            &at("acme")
        ));
        assert!(!in_english_party_name(
            &chars,
            &breaks,
            &capital,
            &at("filed")
        ));
        let (chars, breaks, capital) = read("the court said John Smith filed");
        let text: String = chars.iter().collect();
        let start = text.find("smith").unwrap_or(0);
        assert!(!in_english_party_name(
            &chars,
            &breaks,
            &capital,
            &(start..start + 5)
        ));
    }

    #[test]
    fn english_names_in_a_lead_after_a_role_word_are_parties() {
        let lead = |name: &str| {
            chars(&format!(
                "caseno2024cv74330plaintiff{name}representedbyattorneyadamharrisfiledacomplaint"
            ))
        };
        // "joshuadixon" / "johndixon": the alignment leaves "ua" / "n".
        let (ours, theirs) = (lead("joshuadixon"), lead("johndixon"));
        let at = 26 + 4;
        assert!(swaps_a_party_in_leads(
            &ours,
            &(at..at + 2),
            &theirs,
            &(at..at + 1)
        ));
        // A difference far past the role word is not in its name.
        let ours = lead("joshuadixon");
        let far = ours.len() - 4;
        assert!(!swaps_a_party_in_leads(
            &ours,
            &(far..far + 2),
            &ours,
            &(far..far + 2)
        ));
        // One side only: letters added, not a name swapped.
        assert!(!swaps_a_party_in_leads(
            &ours,
            &(at..at + 2),
            &ours,
            &(at..at)
        ));
    }

    #[test]
    fn every_role_ends_in_a_listed_character() {
        for role in PARTY_ROLES {
            let last = role.chars().last().unwrap_or_default();
            assert!(ROLE_ENDINGS.contains(&last), "{role}");
        }
    }

    #[test]
    fn odd_ranges_are_not_parties() {
        let text = chars("原告田志远");
        assert!(!in_chinese_party_name(&text, &(3..3)));
        assert!(!in_chinese_party_name(&text, &(4..9)));
        assert!(!in_chinese_party_name(&[], &(0..1)));
        assert!(!in_english_party_name(&[], &[], &[], &(0..1)));
    }
}
