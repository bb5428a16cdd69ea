//! Spans swapped in place: what tells two notices of one form apart.
//!
//! Motivation: notices written from one form (a court's hearing notice, a
//! road closure, a fine) share their headline, their frame and often every
//! figure; only a name, a street or a party differs. By every set measure
//! (sketch Jaccard, number containment, headline bigrams) two of them are
//! one text, and the form's whole run became one class. A reprint of an
//! article does not do that: it adds or removes whole pieces (a credit
//! line, an editor's note, a paragraph, the end), and a typo changes one
//! letter. What differs between two texts that otherwise align is what
//! identifies them (issue 28: "what differs is what identifies").
//!
//! Design: a long text's node keeps the first [`KEPT_LEAD_CHARS`] letters
//! and digits of its body (the lead; forms put their parties, places and
//! case numbers first). Two leads are aligned in
//! reading order ([`super::edits::align`]) over all of both (what one has
//! past the other's end falls after the last anchor). Matched runs of at least
//! [`ANCHOR_LETTERS`] letters are anchors; what lies between two anchors is
//! one region. A region with at least [`MIN_SWAPPED_LETTERS`] unmatched
//! letters on both sides (digits aside: figures have their own rule), not
//! two function words, and holding a name on each Chinese side (a word
//! jieba tags as a person, place or organisation, or characters it cuts
//! one by one: a name it does not know) is a span swapped in place: the
//! two texts are two documents. So is any gap that swaps a party's full
//! name after a role word ([`super::parties`]: "原告…不服"), anchored or not.
//! Regions before the first anchor (where credit lines and outlets' leads
//! are replaced) and after the last (where the cut of the window falls) are
//! not judged, nor is any pair whose anchors cover less than
//! [`MIN_ANCHORED_SHARE`] of the shorter lead (an editor's note or a paragraph
//! put first: the leads do not align, and the rule abstains).
//!
//! Consequences: a typo (one letter replaced, dropped, doubled or two
//! swapped) never reads as a swapped span; three typos within a few
//! letters of each other can. A repost that swaps a common Chinese word
//! keeps joining; one that swaps an English word for another that is not a
//! stop word does not (no case is kept to tell English names). A passage
//! moved inside the lead can read as a swap when the regions it leaves
//! hold names (DEV: 0.9855 → 0.9853).
//! A name swapped for one that differs in a single letter reads as a typo
//! ("张三" / "张四": missed) unless the dictionary tags both words as names
//! of one kind and length ("兰州" / "赣州": two places). Only the lead is seen: a form whose
//! parties come after the first [`KEPT_LEAD_CHARS`] letters is not told
//! apart here (its figures may still be). Nodes recorded with a shorter lead
//! are compared over the length both have. The alignment is quadratic in
//! the lead's length and runs only for two long texts that every other rule
//! would join, and only when their leads differ after a common start.

use std::ops::Range;

use super::edits::{GapPosition, align};
use super::parties::swaps_a_party_in_leads;
use crate::fingerprint::normalize::is_han;
use crate::fingerprint::stopwords::is_stop_word;
use crate::fingerprint::tokenize::{holds_a_name, known_name_at};

/// How much of a body's start a long text's node keeps (letters and
/// digits): the window in which a span swapped in place is seen.
pub const KEPT_LEAD_CHARS: usize = 128;

/// A matched run of Han characters this long is an anchor of the
/// alignment, not a chance match of common characters.
const ANCHOR_LETTERS: usize = 3;

/// The same for a run with other letters: 26 letters match by chance far
/// more often than thousands of Han characters.
const ANCHOR_LETTERS_LATIN: usize = 6;

/// An anchor this long or shorter can be a word two swapped names share
/// (see [`Regions::crossing_swaps`]).
const CROSSED_ANCHOR_LETTERS: usize = 4;

/// The same for other letters ("parkboulevard": a lead keeps no spaces).
const CROSSED_ANCHOR_LETTERS_LATIN: usize = 16;

/// Letters a region needs on both sides to be a span swapped in place: one
/// letter replaced is a typo.
const MIN_SWAPPED_LETTERS: usize = 2;

/// Below this share of the shorter window in anchors, the leads do not
/// align and nothing is judged.
const MIN_ANCHORED_SHARE: f64 = 0.5;

/// Windows shorter than this (letters) are too short to judge.
const MIN_WINDOW_LETTERS: usize = 16;

/// Whether two leads (letters and digits, as [`LongText::lead`] keeps them)
/// align except for a span swapped in place between two anchors (see the
/// module doc).
///
/// [`LongText::lead`]: super::LongText::lead
pub fn lead_swaps_a_span(ours: &str, theirs: &str) -> bool {
    // Most joins are of copies whose leads are one text: no allocation then.
    if ours == theirs {
        return false;
    }
    let ours: Vec<char> = ours.chars().collect();
    let theirs: Vec<char> = theirs.chars().collect();
    let shorter = ours.len().min(theirs.len());
    if shorter < MIN_WINDOW_LETTERS {
        return false;
    }
    let common_start = ours
        .iter()
        .zip(&theirs)
        .take_while(|(left, right)| left == right)
        .count();
    if common_start == shorter {
        return false;
    }
    let mut gaps = Vec::new();
    align(
        &ours[common_start..],
        &theirs[common_start..],
        |left, right, position| {
            let shift = |range: Range<usize>| range.start + common_start..range.end + common_start;
            gaps.push((shift(left), shift(right), position));
        },
    );
    // Matched runs and gaps in reading order: the run before each gap, then
    // the gap; the common start is the first run.
    let mut regions = Regions::new(&ours, &theirs);
    let (mut left_at, mut right_at) = (0, 0);
    for (left, right, position) in gaps {
        regions.matched(left_at..left.start, right_at..right.start);
        if position == GapPosition::Trailing {
            // Past the last match: where a window's cut falls.
            return regions.verdict(shorter);
        }
        regions.gap(left.clone(), right.clone());
        (left_at, right_at) = (left.end, right.end);
    }
    regions.matched(left_at..ours.len(), right_at..theirs.len());
    regions.verdict(shorter)
}

/// The regions between anchors of one alignment, built run by run.
struct Regions<'a> {
    ours: &'a [char],
    theirs: &'a [char],
    /// Letters in anchors so far.
    anchored: usize,
    /// Where the open region starts on each side, when an anchor is before it.
    open_from: Option<(usize, usize)>,
    /// Letters (not digits: figures are compared on their own) of the open
    /// region on each side that the other side lacks; a chance match of a
    /// letter or two inside it is not counted.
    unmatched: (usize, usize),
    /// Some gap of the open region has [`MIN_SWAPPED_LETTERS`] on both sides.
    gap_swaps: bool,
    /// Some gap of the open region replaces one character of a name the
    /// dictionary knows with another's ("兰州" / "赣州"), not a typo.
    gap_swaps_a_known_name: bool,
    /// Some region between two anchors swaps a span.
    swapped: bool,
    /// The last region closed was one-sided (letters on one side only)
    /// and the anchor that closed it is short: in case the next region is
    /// one-sided the other way (see [`Regions::crossing_swaps`]).
    one_sided: Option<OneSided>,
}

/// A region with letters on one side only, closed by a short anchor.
#[derive(Clone)]
struct OneSided {
    /// The letters are on our side.
    ours: bool,
    /// The region on the side that has letters.
    range: Range<usize>,
    letters: usize,
}

impl<'a> Regions<'a> {
    fn new(ours: &'a [char], theirs: &'a [char]) -> Self {
        Regions {
            ours,
            theirs,
            anchored: 0,
            open_from: None,
            unmatched: (0, 0),
            gap_swaps: false,
            gap_swaps_a_known_name: false,
            swapped: false,
            one_sided: None,
        }
    }

    /// One matched run: `ours` and `theirs` are the same letters.
    fn matched(&mut self, ours: Range<usize>, theirs: Range<usize>) {
        let run = &self.ours[ours.clone()];
        let anchor_letters = if run.iter().all(|&c| is_han(c)) {
            ANCHOR_LETTERS
        } else {
            ANCHOR_LETTERS_LATIN
        };
        if run.len() < anchor_letters {
            return;
        }
        let mut one_sided = None;
        if let Some((ours_from, theirs_from)) = self.open_from {
            if self.gap_swaps_a_known_name
                || self.region_swaps(ours_from..ours.start, theirs_from..theirs.start)
                || self.crossing_swaps(ours.start, theirs.start)
            {
                self.swapped = true;
            }
            let (left, right) = self.unmatched;
            let crossed_anchor_letters = if run.iter().all(|&c| is_han(c)) {
                CROSSED_ANCHOR_LETTERS
            } else {
                CROSSED_ANCHOR_LETTERS_LATIN
            };
            if run.len() <= crossed_anchor_letters {
                one_sided = match (left, right) {
                    (0, 0) => None,
                    (_, 0) => Some(OneSided {
                        ours: true,
                        range: ours_from..ours.start,
                        letters: left,
                    }),
                    (0, _) => Some(OneSided {
                        ours: false,
                        range: theirs_from..theirs.start,
                        letters: right,
                    }),
                    _ => None,
                };
            }
        }
        self.one_sided = one_sided;
        self.anchored += run.len();
        self.open_from = Some((ours.end, theirs.end));
        self.unmatched = (0, 0);
        self.gap_swaps = false;
        self.gap_swaps_a_known_name = false;
    }

    /// A gap: `ours` and `theirs` are what each side has that the other lacks.
    fn gap(&mut self, ours: Range<usize>, theirs: Range<usize>) {
        // A party's full name swapped for another's ([`super::parties`]):
        // the role word before it is anchor enough, even at the lead's start
        // ("原告…" / "原告…" share two letters only), and any difference in
        // a name counts ("joshuadixon" / "johndixon" leave "ua" / "n").
        if swaps_a_party_in_leads(self.ours, &ours, self.theirs, &theirs) {
            self.swapped = true;
        }
        if ours.len() == 1
            && theirs.len() == 1
            && known_name_at(self.ours, ours.start)
                .is_some_and(|name| known_name_at(self.theirs, theirs.start) == Some(name))
        {
            self.gap_swaps_a_known_name = true;
        }
        let letters = |side: &[char]| side.iter().filter(|c| !c.is_ascii_digit()).count();
        let (ours, theirs) = (letters(&self.ours[ours]), letters(&self.theirs[theirs]));
        self.unmatched.0 += ours;
        self.unmatched.1 += theirs;
        self.gap_swaps |= ours >= MIN_SWAPPED_LETTERS && theirs >= MIN_SWAPPED_LETTERS;
    }

    /// The open region, now closed by an anchor, swaps a span: enough
    /// letters on both sides (in one gap, or more than typos leave), not a
    /// function word swapped for another, and a name on both sides where
    /// the side is Chinese (a repost swaps a common word: "这份邮件" /
    /// "这份微博"; a form swaps a party). Other scripts' leads are kept
    /// without case, so their names cannot be told from other words.
    fn region_swaps(&self, ours: Range<usize>, theirs: Range<usize>) -> bool {
        let (left, right) = self.unmatched;
        let enough = left >= MIN_SWAPPED_LETTERS
            && right >= MIN_SWAPPED_LETTERS
            && (self.gap_swaps || (left > MIN_SWAPPED_LETTERS && right > MIN_SWAPPED_LETTERS));
        enough && self.side_texts_swap(ours, theirs)
    }

    /// What two sides of a region hold is a swap: not a function word for
    /// another, and a name on each side that is Chinese.
    fn side_texts_swap(&self, ours: Range<usize>, theirs: Range<usize>) -> bool {
        let text = |side: &[char]| side.iter().collect::<String>();
        let function_words = is_stop_word(&text(&self.ours[ours.clone()]))
            && is_stop_word(&text(&self.theirs[theirs.clone()]));
        let names = |side: &[char]| {
            let side = text(side);
            !side.chars().any(is_han) || holds_a_name(&side)
        };
        let named = names(&self.ours[ours]) && names(&self.theirs[theirs]);
        !function_words && named
    }

    /// A name swapped for another that shares a word with it ("西环街（幸福路
    /// 至友谊街段）" / "友谊街（东风南路至红旗东路段）"): the alignment anchors
    /// the shared word, and what each side swapped falls on either side of
    /// it, one-sided both times: ours before the short anchor, theirs
    /// after it (or the other way). The two one-sided pieces, without the
    /// anchor, are judged as the two sides of one region: a repost that
    /// drops a phrase before a word and adds one after it ("请传出去" /
    /// "也叫青腰虫") holds no name on one side.
    fn crossing_swaps(&self, ours_end: usize, theirs_end: usize) -> bool {
        let Some(first) = &self.one_sided else {
            return false;
        };
        let (ours_from, theirs_from) = self.open_from.unwrap_or_default();
        let (left, right) = self.unmatched;
        let (ours, theirs, left, right) = match first.ours {
            true if left == 0 => (
                first.range.clone(),
                theirs_from..theirs_end,
                first.letters,
                right,
            ),
            false if right == 0 => (
                ours_from..ours_end,
                first.range.clone(),
                left,
                first.letters,
            ),
            _ => return false,
        };
        left > MIN_SWAPPED_LETTERS
            && right > MIN_SWAPPED_LETTERS
            && self.side_texts_swap(ours, theirs)
    }

    fn verdict(&self, shorter: usize) -> bool {
        self.swapped && self.anchored as f64 >= MIN_ANCHORED_SHARE * shorter as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(text: &str) -> String {
        text.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    }

    fn swaps(ours: &str, theirs: &str) -> bool {
        lead_swaps_a_span(&letters(ours), &letters(theirs))
    }

    #[test]
    fn a_street_or_a_party_swapped_in_a_form_is_another_notice() {
        assert!(swaps(
            "Elm Street between Oak Avenue and Cedar Lane will be closed from May 2 for sewer work",
            "Elm Street between Birch Road and Walnut Drive will be closed from May 2 for sewer work"
        ));
        assert!(swaps(
            "本院定于2024年3月5日在第三法庭公开审理原告明远公司诉被告张建国买卖合同纠纷一案",
            "本院定于2024年3月5日在第三法庭公开审理原告明远公司诉被告李秀英买卖合同纠纷一案"
        ));
        assert!(swaps(
            "市交警支队通告：因道路施工，建设路青年街至光明路段将于本月实行交通管制，请车辆绕行",
            "市交警支队通告：因道路施工，胜利路人民街至和平路段将于本月实行交通管制，请车辆绕行"
        ));
    }

    #[test]
    fn a_reprints_edits_are_not_a_swapped_span() {
        let lead = "The city council approved the budget for the new library on Monday after a long debate";
        // Identical, a typo (one letter replaced, two swapped, one dropped).
        assert!(!swaps(lead, lead));
        assert!(!swaps(lead, &lead.replace("budget", "budgat")));
        assert!(!swaps(lead, &lead.replace("library", "lirbary")));
        assert!(!swaps(lead, &lead.replace("approved", "aproved")));
        // An outlet's credit line replaced at the start, a word inserted.
        assert!(!swaps(
            &format!("LONDON (Reuters) - {lead}"),
            &format!("From our wires: {lead}")
        ));
        assert!(!swaps(
            lead,
            &lead.replace("new library", "new public library")
        ));
        // The window cut after a paragraph put first: nothing aligns.
        assert!(!swaps(
            lead,
            &format!("Editor's note: this story was updated with comment. {lead}")
        ));
        let chinese = "国务院新闻办公室今天举行发布会，介绍今年前三季度国民经济运行情况，有关负责人回答记者提问";
        assert!(!swaps(chinese, &chinese.replace("介绍", "介昭")));
        assert!(!swaps(
            &format!("央视网消息（新闻联播）：{chinese}"),
            &format!("【光明网】{chinese}")
        ));
    }

    #[test]
    fn a_common_chinese_word_swapped_by_a_repost_is_not_a_name() {
        let lead =
            "医师强调如果每个收到这份邮件的人能够转发给其他人就能挽救一条生命请大家转告身边的朋友";
        assert!(!swaps(lead, &lead.replace("邮件", "微博")));
    }

    #[test]
    fn streets_swapped_for_ones_that_share_a_name_are_other_notices() {
        let form = |section: &str| {
            format!(
                "市公安局交通警察支队通告：因举办马拉松比赛，决定对以下道路实行临时交通管制。管制路段：{section}。管制期间禁止机动车通行，请提前绕行"
            )
        };
        // The shared street anchors the alignment between the two swaps.
        assert!(swaps(
            &form("东湖街（幸福路至友谊街段）"),
            &form("友谊街（东风南路至红旗东路段）")
        ));
        // Streets jieba does not tag as places.
        assert!(swaps(
            &form("春风大道（青年路至胜利路段）"),
            &form("黄河路（春风北路至学府北路段）")
        ));
        let closure = |section: &str| {
            format!(
                "Washington Boulevard between {section} will be closed to through traffic from May 19 through May 30 for water main replacement"
            )
        };
        assert!(swaps(
            &closure("Park Boulevard and Water Road"),
            &closure("Madison Lane and Park Boulevard")
        ));
    }

    #[test]
    fn a_phrase_dropped_before_a_word_and_another_added_after_it_is_not_a_swap() {
        // A chain letter reposted: "请大家转发" dropped before the insect's
        // name, "也叫青腰虫" added after it: no name on the dropped side.
        let ours = "紧急提醒请大家转发隐翅虫在你身上时千万不要用手拍打它的体液有毒接触皮肤会溃烂告诉孩子和朋友用嘴轻轻吹走就好";
        let theirs = "紧急提醒隐翅虫也叫青腰虫在你身上时千万不要用手拍打它的体液有毒接触皮肤会溃烂告诉孩子和朋友用嘴轻轻吹走就好";
        assert!(!swaps(ours, theirs));
    }

    #[test]
    fn a_place_swapped_for_one_that_differs_in_a_character_is_another_report() {
        let prices = |city: &str| {
            format!(
                "2023年7月2日{city}蔬菜批发市场主要农产品批发价格单位元公斤蔬菜类茄子347黄瓜667西红柿270菠菜138"
            )
        };
        assert!(swaps(&prices("兰州"), &prices("赣州")));
        assert!(swaps(&prices("广州"), &prices("杭州")));
        // A typo inside a name makes no name of the same kind and length.
        assert!(!swaps(&prices("莫斯科州"), &prices("莫五科州")));
    }

    #[test]
    fn a_partys_full_name_the_dictionary_does_not_know_is_another_document() {
        let decision = |party: &str| {
            format!(
                "城南区人民法院行政判决书原告{party}不服被告城南区市场监督管理局作出的行政处罚决定于2024年3月5日向本院提起行政诉讼本院依法组成合议庭公开开庭审理了本案"
            )
        };
        assert!(swaps(&decision("田志远"), &decision("韩晓梅")));
        // One surname, a given name one character longer: one-sided gaps.
        assert!(swaps(&decision("李涵"), &decision("李艳涵")));
        // At the lead's very start, behind a role word of two letters.
        let appeal = |party: &str| {
            format!(
                "上诉人{party}因与被上诉人城南建设工程有限公司买卖合同纠纷一案不服城南区人民法院民事判决向本院提起上诉"
            )
        };
        assert!(swaps(&appeal("施凯薇"), &appeal("施宏凯")));
        // English: the letters after "plaintiff".
        let complaint = |party: &str| {
            format!(
                "Case No. 2024-CV-74330. Plaintiff {party}, represented by attorney Adam Harris, filed a complaint against Cobalt Logistics"
            )
        };
        assert!(swaps(&complaint("Joshua Dixon"), &complaint("John Dixon")));
        // A reprint of one decision keeps its parties.
        assert!(!swaps(
            &decision("田志远"),
            &format!("来源：城南法院网{}", decision("田志远"))
        ));
    }

    #[test]
    fn leads_too_short_to_judge_are_not_judged() {
        assert!(!swaps("road closed on elm", "road closed on oak"));
    }
}
