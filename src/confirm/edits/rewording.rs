//! How a short repost rewords what it copies, and what it may not reword:
//! the synonym lookups, one character of a compound reworded, a synonym at
//! a text's edge, and a form's party swapped (issue 46).
//!
//! Motivation: a repost swaps a word for a synonym (实行 / 实施, 参加 / 参与)
//! and changes nothing it reports; a form swaps its party and is another
//! document. Both are one gap of the alignment; these are the readings of
//! that gap beyond the words' tags ([`super::compare_with`]).
//!
//! Design: a gap is a synonym when the user's list or the built-in
//! thesaurus pairs it, with a few shared characters around it; a
//! two-character content word with one character replaced and the other
//! kept is a rewording unless the two characters are opposites or a
//! series ([`OPPOSITE_MORPHEMES`]); a verb or adjective swapped for another
//! is a predicate swap, which a short post may hold where it may hold no
//! other content change ([`WordSwap::is_predicate_swap`]); a word whose sense is
//! reversed (停, 降, 拆, …) swapped for one whose sense is not is a changed
//! fact ([`WordSwap::reverses_a_sense`]), and so is a verb of an act not yet
//! done (筹, 预, 审, …) swapped for one of a deed
//! ([`WordSwap::changes_the_stage`]); a party's name is read by
//! [`crate::confirm::parties`].
//!
//! Consequences: one character of an ordinary word replaced by another
//! that is not listed as its opposite joins, even where the two words name
//! different things (two colours, two crops); names, places, times and
//! numerals are facts and are counted apart, so the list needs only the
//! ordinary opposites and series. A verb swapped for one of another action
//! of the same stage that is neither its synonym nor its reverse (参加 /
//! 观看, 完工 / 交付) reads as a rewording: telling them apart needs a
//! lexicon of senses (docs/quality.md measures the cost).

use std::ops::Range;

use super::letters::{Letters, is_numeral};
use crate::confirm::parties::{
    MAX_GIVEN_CHARS, in_english_party_name, surname_at, swaps_a_chinese_party, word_around,
};
use crate::confirm::synonyms::Synonyms;
use crate::fingerprint::letters::BREAK_MARKED;
use crate::fingerprint::tokenize::{WordKind, WordMark};
use crate::fingerprint::{FIELD_SEPARATOR, normalize};

/// Shared characters around a swapped word taken into the lookup of a
/// declared synonym: "英" / "法" is the swap, "英文" / "法文" or "英文版" /
/// "法文版" the words a user lists.
const SYNONYM_CONTEXT_CHARS: usize = 3;

/// The gap `ours` / `theirs` swaps one declared synonym for another, with up
/// to [`SYNONYM_CONTEXT_CHARS`] of the characters they share on each side.
pub(super) fn declared_synonyms(
    shorter: &[char],
    ours: Range<usize>,
    longer: &[char],
    theirs: Range<usize>,
    synonyms: &Synonyms,
) -> bool {
    if synonyms.is_empty() {
        return false;
    }
    let shared_before = (0..=SYNONYM_CONTEXT_CHARS)
        .take_while(|&count| {
            count <= ours.start
                && count <= theirs.start
                && shorter[ours.start - count..ours.start]
                    == longer[theirs.start - count..theirs.start]
        })
        .last()
        .unwrap_or(0);
    let shared_after = (0..=SYNONYM_CONTEXT_CHARS)
        .take_while(|&count| {
            ours.end + count <= shorter.len()
                && theirs.end + count <= longer.len()
                && shorter[ours.end..ours.end + count] == longer[theirs.end..theirs.end + count]
        })
        .last()
        .unwrap_or(0);
    // Two buffers for all the lookups (up to 16 pairs per gap).
    let (mut our_word, mut their_word) = (String::new(), String::new());
    (0..=shared_before).any(|before| {
        (0..=shared_after).any(|after| {
            our_word.clear();
            our_word.extend(&shorter[ours.start - before..ours.end + after]);
            their_word.clear();
            their_word.extend(&longer[theirs.start - before..theirs.end + after]);
            synonyms.equivalent(&our_word, &their_word)
        })
    })
}

/// Pairs of characters that make a word its opposite, or another of a
/// series, when one replaces the other in a compound (开幕 / 闭幕, 进口 /
/// 出口, 金牌 / 银牌, 春季 / 秋季), two characters a pair: general opposites of
/// Chinese word formation, written for this rule; a start and a finish
/// among them (开工 / 完工, 启动 / 完成).
const OPPOSITE_MORPHEMES: &str = concat!(
    "开闭开关进出入出上下增减涨跌涨降升降升跌高低大小多少前后左右内外",
    "中外买卖胜负输赢胜败正负正副主副主客首末始终早晚新旧长短有无男女",
    "东西南北东南东北西南西北盈亏收支来去老少春秋春夏春冬夏秋夏冬秋冬",
    "真假是非对错得失好坏强弱轻重快慢冷热远近深浅宽窄厚薄软硬明暗生死",
    "攻守兴衰利弊功过赏罚供需借还借贷金银银铜金铜冠亚亚季甲乙乙丙单双",
    "阴阳日夜昼夜晴雨早午午晚初末初终半全批驳准驳赞反支反同异合分离合",
    "聚散存取存贷收发接送起落起止出归往返母父子女兄弟姐妹夫妻师生官民",
    "敌友增降开完开竣启完启竣始完始竣",
);

/// A substitution of one character for another inside a two-character
/// content word that keeps its other character in place (增长 / 增加, 游客 /
/// 旅客, 接待 / 接纳): a word reworded with a near-synonym of the same
/// formation, as reposts do, not a different thing named, unless the two
/// characters are opposites ([`OPPOSITE_MORPHEMES`]) or numerals, or the
/// word is a name, a place or a time (those are facts, counted apart).
pub(super) fn swaps_a_morpheme(
    (shorter, shorter_marks): (&Letters, &[WordMark]),
    (longer, longer_marks): (&Letters, &[WordMark]),
    ours: &Range<usize>,
    theirs: &Range<usize>,
) -> bool {
    if ours.len() != 1 || theirs.len() != 1 {
        return false;
    }
    let (left, right) = (shorter.chars[ours.start], longer.chars[theirs.start]);
    if !normalize::is_han(left)
        || !normalize::is_han(right)
        || is_numeral(left)
        || is_numeral(right)
    {
        return false;
    }
    if opposite_morphemes(left, right) {
        return false;
    }
    // The two-character content word around `at` and the other character's
    // offset in it.
    let word = |marks: &[WordMark], at: usize| {
        let start = marks[at].word_start;
        let end = (start..marks.len())
            .find(|&i| marks[i].word_start != start)
            .unwrap_or(marks.len());
        (marks[at].kind == WordKind::Content && end - start == 2).then_some(start)
    };
    let (Some(our_word), Some(their_word)) = (
        word(shorter_marks, ours.start),
        word(longer_marks, theirs.start),
    ) else {
        return false;
    };
    let (our_offset, their_offset) = (ours.start - our_word, theirs.start - their_word);
    our_offset == their_offset
        && shorter.chars[our_word + 1 - our_offset] == longer.chars[their_word + 1 - their_offset]
}

/// Longest word, in letters, looked for at a text's edge by
/// [`edge_word_swapped_for_synonym`].
const MAX_EDGE_WORD_CHARS: usize = 4;

/// A gap outside the shared span on both sides (`ours` of the shorter text,
/// `theirs` of the longer) is a word swapped for a synonym that the longer
/// text's addition runs on from: at the end, the start of `theirs` pairs
/// with `ours`; at the start, the end of `theirs` does.
pub(super) fn edge_word_swapped_for_synonym(
    shorter: &Letters,
    ours: &Range<usize>,
    longer: &Letters,
    theirs: &Range<usize>,
    span: &Range<usize>,
    synonyms: &Synonyms,
) -> bool {
    if synonyms.is_empty() || ours.len() > MAX_EDGE_WORD_CHARS {
        return false;
    }
    let at_end = ours.start >= span.end;
    (1..=theirs.len().min(MAX_EDGE_WORD_CHARS)).any(|length| {
        let candidate = if at_end {
            theirs.start..theirs.start + length
        } else {
            theirs.end - length..theirs.end
        };
        declared_synonyms(
            &shorter.chars,
            ours.clone(),
            &longer.chars,
            candidate,
            synonyms,
        )
    })
}

/// The gap (`ours` of the shorter text, `theirs` of the longer) swaps one
/// party of a form for another, in Chinese or in capitalised English words
/// ([`crate::confirm::parties`]).
pub(super) fn swaps_a_party(
    shorter: &Letters,
    ours: &Range<usize>,
    longer: &Letters,
    theirs: &Range<usize>,
) -> bool {
    let english = |side: &Letters, gap: &Range<usize>| {
        in_english_party_name(&side.chars, &side.breaks, &side.capital, gap)
    };
    // One side's letters inside a name where the other has none: the
    // alignment matched a few letters of two names ("Sean" / "Andrew"
    // share "an"). Another word at a point inside the other's name: not a
    // whole word added ("Jr", an initial), nor a word grown around the
    // other's ("Marlow" / "#CityOfMarlow").
    let word = |side: &Letters, at: usize| -> String {
        side.chars[word_around(&side.breaks, side.chars.len(), at)]
            .iter()
            .collect()
    };
    let another_word = |side: &Letters, gap: &Range<usize>, other: &Letters, point: usize| {
        let starts_a_word = gap.start == 0 || side.breaks.get(gap.start) == Some(&true);
        let ends_a_word = gap.end >= side.chars.len() || side.breaks.get(gap.end) == Some(&true);
        if (starts_a_word && ends_a_word) || point >= other.chars.len() {
            return false;
        }
        let (ours, theirs) = (word(side, gap.start), word(other, point));
        !(ours.contains(theirs.as_str()) || theirs.contains(ours.as_str()))
    };
    let inserted = |side: &Letters, gap: &Range<usize>, other: &Letters, point: usize| {
        english(side, gap)
            && english(other, &(point..point + 1))
            && another_word(side, gap, other, point)
    };
    swaps_a_chinese_party(&shorter.chars, ours, &longer.chars, theirs)
        || match (ours.is_empty(), theirs.is_empty()) {
            (false, false) => english(shorter, ours) && english(longer, theirs),
            (false, true) => inserted(shorter, ours, longer, theirs.start),
            (true, false) => inserted(longer, theirs, shorter, ours.start),
            (true, true) => false,
        }
}

/// A word of one or two Han characters replaced, inside the texts, by one
/// that holds the opposite of one of its characters ([`OPPOSITE_MORPHEMES`]
/// in any position: 增长 / 下降, 开幕 / 闭幕, 上涨 / 下跌): what the text
/// reports turned around, a fact changed, however long the span is around
/// it (one reworded content word per 40 letters is otherwise allowed).
pub(super) fn swaps_for_an_opposite(
    shorter: &Letters,
    ours: &Range<usize>,
    longer: &Letters,
    theirs: &Range<usize>,
) -> bool {
    let word = |letters: &Letters, range: &Range<usize>| {
        (1..=2).contains(&range.len())
            && letters.chars[range.clone()]
                .iter()
                .all(|&c| normalize::is_han(c))
    };
    word(shorter, ours)
        && word(longer, theirs)
        && shorter.chars[ours.clone()].iter().any(|&left| {
            longer.chars[theirs.clone()]
                .iter()
                .any(|&right| opposite_morphemes(left, right))
        })
}

/// Characters whose sense is to stop, close, remove, lower, lose or refuse
/// (停, 关, 拆, 降, 减, 跌, 失, 败, 拒, 废, …): a word holding one reports
/// the reverse of a word without one (启动 / 暂停, 开通 / 停运, 新建 / 拆除,
/// 夺得 / 丢掉), whichever pair of words it is. A reprint's synonym keeps the
/// sense (下降 / 减少 both hold one).
const REVERSIVE_MORPHEMES: &str =
    "停暂关闭拆撤废禁失丢降减跌亏败输拒否罢缩退衰亡灭毁弃损缺止除消掉";

/// Characters whose sense is an act not yet done: planned, prepared,
/// sought, applied for, under review or awaited (预, 拟, 筹, 谋, 寻, 申, 审,
/// 议, 估, 盼). A verb holding one reports another stage of the act than a
/// verb without one (筹备 / 举办, 审议 / 通过, 预约 / 接待, 寻求 / 取得): a
/// repost rewords a plan as a plan (筹备 / 准备), never as the deed.
const PROSPECTIVE_MORPHEMES: &str = "预拟筹谋寻申审议估盼";

/// Verbs of that sense whose characters have others too (计 in 统计, 备 in
/// 配备, 待 in 接待): listed whole.
const PROSPECTIVE_VERBS: [&str; 17] = [
    "计划", "准备", "打算", "策划", "规划", "争取", "力争", "期待", "期望", "希望", "等待", "考虑",
    "酝酿", "讨论", "商量", "试图", "尝试",
];

/// Longest word (in letters) on each side of a swap read as one predicate
/// reworded or one sense reversed: a swap of longer phrases is more than a
/// word's rewording.
const MAX_SWAPPED_WORD_CHARS: usize = 4;

/// The whole words of `marks` that `range` (not empty) overlaps.
fn covering_words(marks: &[WordMark], range: &Range<usize>) -> Range<usize> {
    let start = marks[range.start].word_start;
    let last_word = marks[range.end - 1].word_start;
    let end = (range.end..marks.len())
        .find(|&at| marks[at].word_start != last_word)
        .unwrap_or(marks.len());
    start..end
}

/// The Han words (at most [`MAX_SWAPPED_WORD_CHARS`] letters) that the
/// non-empty `range` of a side overlaps, or `None`.
fn swapped_word<'a>(
    (letters, marks): (&'a Letters, &'a [WordMark]),
    range: &Range<usize>,
) -> Option<SwappedWord<'a>> {
    if range.is_empty() {
        return None;
    }
    let words = covering_words(marks, range);
    let chars = &letters.chars[words.clone()];
    (chars.len() <= MAX_SWAPPED_WORD_CHARS && chars.iter().all(|&c| normalize::is_han(c)))
        .then_some(SwappedWord {
            chars,
            marks: &marks[words],
        })
}

/// The whole words one side of a gap swaps ([`swapped_word`]).
#[derive(Clone, Copy)]
struct SwappedWord<'a> {
    chars: &'a [char],
    marks: &'a [WordMark],
}

impl SwappedWord<'_> {
    /// A verb or an adjective, not a name.
    fn is_predicate(&self) -> bool {
        self.marks
            .iter()
            .all(|mark| mark.predicate && mark.kind != WordKind::Entity)
    }

    /// It holds a character of [`REVERSIVE_MORPHEMES`].
    fn is_reversed(&self) -> bool {
        self.chars.iter().any(|&c| REVERSIVE_MORPHEMES.contains(c))
    }

    /// It reports an act not yet done ([`PROSPECTIVE_MORPHEMES`],
    /// [`PROSPECTIVE_VERBS`]).
    fn is_prospective(&self) -> bool {
        self.chars
            .iter()
            .any(|&c| PROSPECTIVE_MORPHEMES.contains(c))
            || self.chars.windows(2).any(|pair| {
                PROSPECTIVE_VERBS
                    .iter()
                    .any(|verb| verb.chars().eq(pair.iter().copied()))
            })
    }
}

/// A gap with words on both sides, each at most [`MAX_SWAPPED_WORD_CHARS`]
/// Han letters: one word swapped for another, read once for both
/// questions below.
#[derive(Clone, Copy)]
pub(super) struct WordSwap<'a> {
    ours: SwappedWord<'a>,
    theirs: SwappedWord<'a>,
}

impl<'a> WordSwap<'a> {
    /// The words the gap `ours` / `theirs` swaps, when it is such a swap.
    pub(super) fn of(
        shorter: (&'a Letters, &'a [WordMark]),
        longer: (&'a Letters, &'a [WordMark]),
        ours: &Range<usize>,
        theirs: &Range<usize>,
    ) -> Option<WordSwap<'a>> {
        Some(WordSwap {
            ours: swapped_word(shorter, ours)?,
            theirs: swapped_word(longer, theirs)?,
        })
    }

    /// One verb or adjective swapped for another (获悉 / 得知, 开展 / 举办,
    /// 成功 / 顺利): the rewording a repost makes, which a thesaurus may not
    /// list. A noun swapped names another thing (审计 / 机构编制委员会,
    /// 苹果 / 梨), and is not one.
    pub(super) fn is_predicate_swap(&self) -> bool {
        self.ours.is_predicate() && self.theirs.is_predicate()
    }

    /// A word whose sense is reversed ([`REVERSIVE_MORPHEMES`]) swapped for
    /// one whose sense is not, or the other way: what the text reports
    /// turned around (启动 / 暂停), a fact changed however long the span.
    pub(super) fn reverses_a_sense(&self) -> bool {
        self.ours.is_reversed() != self.theirs.is_reversed()
    }

    /// A verb of an act not yet done ([`PROSPECTIVE_MORPHEMES`]) swapped for
    /// a verb of one that is (筹备 / 举办, 审议 / 发布): another stage of the
    /// act, a fact changed however long the span. Nouns are left alone (计划
    /// / 方案 name one plan).
    pub(super) fn changes_the_stage(&self) -> bool {
        self.is_predicate_swap() && self.ours.is_prospective() != self.theirs.is_prospective()
    }
}

/// The person's name that opens `letters` or one of its fields (a body
/// under its title): a surname and one or two given characters, all Han,
/// then a colon or a full stop (not a comma or a space: "张伟，你好" opens a
/// sentence), and not a mention ("@张伟："). A summons or a letter names whom
/// it is addressed to there ("韦亮舒：本院受理原告…诉你…"), a headline whom
/// it quotes ("王毅：…").
fn addressee_name(letters: &Letters) -> Option<Range<usize>> {
    let field_starts = (0..letters.chars.len()).filter(|&at| at == 0 || letters.field_starts[at]);
    field_starts.into_iter().find_map(|start| {
        if letters.tagged[start] {
            return None;
        }
        let surname = surname_at(&letters.chars, start)?;
        (start + surname + 1..=start + surname + MAX_GIVEN_CHARS)
            .find(|&end| {
                end < letters.chars.len()
                    && letters.breaks[end]
                    && !letters.continued[end]
                    && (start + 1..end).all(|inside| !letters.breaks[inside])
                    && letters.chars[start..end]
                        .iter()
                        .all(|&c| normalize::is_han(c))
            })
            .map(|end| start..end)
    })
}

/// Where both texts name whom they are addressed to ([`addressee_name`]):
/// read once per comparison, for every gap.
pub(super) fn addressee_names(
    shorter: &Letters,
    longer: &Letters,
) -> Option<(Range<usize>, Range<usize>)> {
    Some((addressee_name(shorter)?, addressee_name(longer)?))
}

/// The gap lies inside the names both texts open with (`names`, from
/// [`addressee_names`]): another person is addressed, however alike the
/// rest (a court's summons to each defendant). Without this, the name reads
/// as a repost's title marked off before the text ("快讯：…"), which a
/// repost may replace.
pub(super) fn swaps_an_addressee(
    names: Option<&(Range<usize>, Range<usize>)>,
    ours: &Range<usize>,
    theirs: &Range<usize>,
) -> bool {
    let within =
        |gap: &Range<usize>, name: &Range<usize>| name.start <= gap.start && gap.end <= name.end;
    names.is_some_and(|(our_name, their_name)| {
        !(ours.is_empty() && theirs.is_empty())
            && within(ours, our_name)
            && within(theirs, their_name)
    })
}

/// Letters of each field's opening read for [`opens_to_another_person`]: a
/// name of at most four letters, the mark after it and the letter after
/// that.
const OPENING_CHARS: usize = 12;

/// Two texts (letters as [`super::compare`] takes them) open addressed to,
/// or quoting, two different persons ([`addressee_name`]: "韦亮舒：本院受理…" /
/// "韦舒：本院受理…"): another document, however alike the rest. For texts
/// too long for the repost reading, whose lead keeps no punctuation. Only
/// each field's first letters are read, those of `ours` first: most texts
/// open with no name, and then `theirs` is not asked for (a candidate's
/// letters are decoded from its record at their first read).
pub fn opens_to_another_person<'a>(ours: &str, theirs: impl FnOnce() -> &'a str) -> bool {
    let opening = |text: &str| -> Option<Vec<char>> {
        text.split(FIELD_SEPARATOR).find_map(|field| {
            // Most fields open with no mark within a name's length: not read.
            let mark = field.chars().take(5).position(|c| c == BREAK_MARKED)?;
            if mark < 2 {
                return None;
            }
            let prefix: String = field.chars().take(OPENING_CHARS).collect();
            let letters = Letters::of(&prefix);
            let name = addressee_name(&letters)?;
            Some(letters.chars[name].to_vec())
        })
    };
    opening(ours).is_some_and(|our_name| opening(theirs()).is_some_and(|name| name != our_name))
}

/// `left` and `right` are a pair of [`OPPOSITE_MORPHEMES`], in either order.
fn opposite_morphemes(left: char, right: char) -> bool {
    let mut listed = OPPOSITE_MORPHEMES.chars();
    while let (Some(first), Some(second)) = (listed.next(), listed.next()) {
        if (first, second) == (left, right) || (first, second) == (right, left) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposites_are_listed_in_pairs_and_read_either_way() {
        assert_eq!(OPPOSITE_MORPHEMES.chars().count() % 2, 0);
        assert!(opposite_morphemes('开', '闭') && opposite_morphemes('闭', '开'));
        assert!(opposite_morphemes('金', '银'));
        assert!(!opposite_morphemes('游', '旅'));
    }
}
