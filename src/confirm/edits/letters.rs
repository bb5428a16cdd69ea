//! The letters of a text as an alignment reads them: letters and digits,
//! lowercased, with where words may break between them, the credit lines
//! ("来源：…") and the tags (`#…`, `@…`) marked.
//!
//! Motivation: the alignment, its outline and the reading of its gaps must
//! see the same letters; one reader keeps them so.

use std::ops::Range;
use std::sync::LazyLock;

use crate::fingerprint::letters::EllipsisWatch;
use crate::fingerprint::{FIELD_SEPARATOR, normalize};

/// The letters and digits of a text, and where words may break between
/// them (punctuation, whitespace or a field separator stood there).
pub(super) struct Letters {
    pub(super) chars: Vec<char>,
    /// `breaks[i]`: a word may not run from `chars[i - 1]` into `chars[i]`.
    pub(super) breaks: Vec<bool>,
    /// `continued[i]`: only whitespace, a comma or a semicolon stood
    /// before `chars[i]` (a break, but the sentence goes on).
    pub(super) continued: Vec<bool>,
    /// `spaced[i]`: only whitespace stood before `chars[i]`.
    pub(super) spaced: Vec<bool>,
    /// `capital[i]`: `chars[i]` was a capital letter (the letters are
    /// compared lowercased).
    pub(super) capital: Vec<bool>,
    /// `field_starts[i]`: `chars[i]` begins a field (the body after the
    /// title), a place where reposts add credit lines as at the text's edges.
    pub(super) field_starts: Vec<bool>,
    /// `credit[i]`: `chars[i]` is part of a credit line (see
    /// [`mark_credits`]).
    pub(super) credit: Vec<bool>,
    /// `tagged[i]`: `chars[i]` begins a word written right after `#` or
    /// `@` (a hashtag or a mention).
    pub(super) tagged: Vec<bool>,
    /// A platform cut the text short: it ends in an ellipsis
    /// ([`crate::fingerprint::letters::CUT_MARK`],
    /// or "..." in text not yet reduced to letters), or in one followed by
    /// at most [`MAX_CUT_TRAILER_LETTERS`] letters, which are then left out
    /// (the platform's "全文", "网页链接", "via": see
    /// [`letters_before_cut`]).
    pub(super) cut_short: bool,
}

/// Most letters after an ellipsis that still make it the place where a
/// platform cut a post: what it writes after the cut ("…全文", "... 网页链接",
/// "… more").
pub(super) const MAX_CUT_TRAILER_LETTERS: usize = 4;

/// Where a platform cut `text` (see [`Letters::cut_short`]): the number
/// of letters before its last ellipsis, when at most
/// [`MAX_CUT_TRAILER_LETTERS`] letters follow it. The alignment and its
/// outline read the letters up to there: what follows is the platform's.
pub(super) fn letters_before_cut(text: &str) -> Option<usize> {
    let (mut letters, mut watch, mut last_ellipsis) = (0usize, EllipsisWatch::default(), None);
    for c in text.chars() {
        if letter_of(c).is_some() {
            letters += 1;
            watch.letter();
        } else if watch.ellipsis_at(c) {
            last_ellipsis = Some(letters);
        }
    }
    last_ellipsis.filter(|&at| at > 0 && letters - at <= MAX_CUT_TRAILER_LETTERS)
}

/// Words that open a credit line, compared with whole chunks (letters
/// between two breaks): "来源：新华社", "Reporting by …", "via @…". The chunk
/// after one of them names the source, and is part of the credit too.
pub(super) const CREDIT_WORDS: &[&str] = &[
    "来源",
    "原标题",
    "责任编辑",
    "编辑",
    "记者",
    "通讯员",
    "作者",
    "稿源",
    "出处",
    "转载自",
    "转自",
    "来自",
    "source",
    "via",
    "reporting",
    "editing",
    "credit",
];

/// Openings of a chunk that make it a credit line by themselves, when the
/// source follows without punctuation ("来源新华社"). "来自" only opens the
/// last chunk of a field ("——来自人民网"): inside a text it is an ordinary
/// verb.
pub(super) const CREDIT_OPENINGS: &[&str] = &["来源", "原标题", "责任编辑", "稿源", "转载自"];

/// What a repost glues onto a post's edge to say it is one ("…贯通转发"):
/// not a clause of the post. Each is also a label before the post
/// ([`is_repost_label`]).
const REPOST_MARKERS: &[&str] = &["转发", "转发微博", "转载", "repost", "rt"];

/// Labels a repost puts before the post it repeats, beside
/// [`REPOST_MARKERS`], that are not glued onto its end ("快讯｜", "转：").
const OPENING_LABELS: &[&str] = &["转", "转帖", "快讯", "速报", "分享", "breaking"];

/// Every label a repost puts before the post it repeats, marked off from
/// it ("转发：", "转发微博//@…：", "快讯｜", "RT @…:"): they say how it was
/// passed on, not what it reports, and two reposts of one post label it
/// each their own way.
fn repost_labels() -> impl Iterator<Item = &'static str> {
    REPOST_MARKERS.iter().chain(OPENING_LABELS).copied()
}

/// `letters` are one of [`repost_labels`].
fn is_repost_label(letters: &[char]) -> bool {
    repost_labels().any(|label| label.chars().eq(letters.iter().copied()))
}

/// Marks the credit lines of `letters`: a chunk equal to a
/// [`CREDIT_WORDS`] entry and the chunk after it, a chunk opening with a
/// [`CREDIT_OPENINGS`] entry, a field's last chunk opening with "来自",
/// and the text's first chunk when it is a repost's label
/// ([`repost_labels`]) marked off from what follows, with the mentions and
/// tags right after it. Two reprints that credit different outlets, or
/// label their repost differently, differ only there.
fn mark_credits(letters: &mut Letters) {
    let length = letters.chars.len();
    let mut chunks = Vec::new();
    let mut start = 0;
    for index in 1..=length {
        if index == length || letters.breaks[index] {
            chunks.push(start..index);
            start = index;
        }
    }
    let mut credit = vec![false; length];
    for (position, chunk) in chunks.iter().enumerate() {
        let letters_of_chunk = &letters.chars[chunk.clone()];
        let equals = |word: &str| word.chars().eq(letters_of_chunk.iter().copied());
        let opens_with = |word: &str| {
            let mut rest = letters_of_chunk.iter().copied();
            word.chars().all(|c| rest.next() == Some(c))
        };
        let field_ends = chunk.end == length || letters.field_starts[chunk.end];
        if CREDIT_WORDS.iter().any(|word| equals(word)) {
            credit[chunk.clone()].fill(true);
            if let Some(next) = chunks.get(position + 1) {
                credit[next.clone()].fill(true);
            }
        } else if CREDIT_OPENINGS.iter().any(|opening| opens_with(opening))
            || (field_ends && opens_with("来自"))
        {
            credit[chunk.clone()].fill(true);
        }
    }
    // A repost's label, and the mentions and tags of its chain after it
    // ("转发微博//@林间小路：…").
    if let [label, _, ..] = chunks.as_slice()
        && is_repost_label(&letters.chars[label.clone()])
    {
        credit[label.clone()].fill(true);
        for chunk in chunks[1..chunks.len() - 1]
            .iter()
            .take_while(|chunk| letters.tagged[chunk.start])
        {
            credit[chunk.clone()].fill(true);
        }
    }
    letters.credit = credit;
}

/// The letter an alignment compares for `c`: letters and digits,
/// lowercased; `None` for everything else (punctuation, spaces, field
/// separators).
pub(super) fn letter_of(c: char) -> Option<char> {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric().then(|| c.to_ascii_lowercase());
    }
    // The common ideographs have no case: no table to search.
    if matches!(c, '\u{4e00}'..='\u{9fff}') {
        return Some(c);
    }
    normalize::is_letter_or_digit(c).then(|| c.to_lowercase().next().unwrap_or(c))
}

/// Some [`CREDIT_WORDS`] entry occurs in `letters`, or they open with a
/// repost's label ([`repost_labels`]). Called for every candidate
/// outlined: a letter is first looked up in a 64-bit set of the words'
/// first letters (by their value modulo 64), and only a letter in it is
/// compared with the words.
pub(super) fn letters_hold_credit_word(letters: &[char]) -> bool {
    static WORDS: LazyLock<(u64, Vec<Vec<char>>)> = LazyLock::new(|| {
        let words: Vec<Vec<char>> = CREDIT_WORDS
            .iter()
            .map(|word| word.chars().collect())
            .collect();
        let firsts = words
            .iter()
            .filter_map(|word| word.first())
            .fold(0u64, |set, &first| set | 1 << (first as u32 % 64));
        (firsts, words)
    });
    let (firsts, words) = &*WORDS;
    repost_labels().any(|label| {
        let mut rest = letters.iter();
        label.chars().all(|c| rest.next() == Some(&c))
    }) || (0..letters.len()).any(|at| {
        firsts >> (letters[at] as u32 % 64) & 1 == 1
            && words.iter().any(|word| letters[at..].starts_with(word))
    })
}

/// Digits and the Chinese numerals (the characters numbers are written with).
pub fn is_numeral(c: char) -> bool {
    c.is_ascii_digit() || crate::fingerprint::is_chinese_numeral(c)
}

impl Letters {
    pub(super) fn of(text: &str) -> Letters {
        let mut letters = Letters {
            chars: Vec::with_capacity(text.len()),
            breaks: Vec::with_capacity(text.len()),
            continued: Vec::with_capacity(text.len()),
            spaced: Vec::with_capacity(text.len()),
            capital: Vec::with_capacity(text.len()),
            field_starts: Vec::with_capacity(text.len()),
            credit: Vec::new(),
            tagged: Vec::with_capacity(text.len()),
            cut_short: false,
        };
        // What a platform wrote after its cut is not read.
        let cut = letters_before_cut(text);
        letters.cut_short = cut.is_some();
        let (mut skipped, mut marked, mut new_field) = (false, false, false);
        let (mut comma, mut tag_sign) = (false, false);
        for c in text.chars() {
            if let Some(letter) = letter_of(c) {
                if cut == Some(letters.chars.len()) {
                    break;
                }
                letters.chars.push(letter);
                letters.breaks.push(skipped);
                letters.continued.push(skipped && !marked);
                letters.spaced.push(skipped && !marked && !comma);
                comma = false;
                letters.capital.push(c.is_uppercase());
                letters.field_starts.push(new_field);
                letters.tagged.push(tag_sign);
                (skipped, marked, new_field, tag_sign) = (false, false, false, false);
            } else {
                skipped = true;
                tag_sign = matches!(c, '#' | '@' | '＃' | '＠');
                let is_comma = matches!(c, ',' | '，' | '、' | ';' | '；');
                comma |= is_comma;
                marked |= !(c.is_whitespace() || is_comma);
                new_field |= c == FIELD_SEPARATOR;
            }
        }
        mark_credits(&mut letters);
        letters
    }
}

impl Letters {
    /// `piece` holds only hashtags and mentions ("#markets", "@CNN": a
    /// repost's tags), or is a repost marker ([`REPOST_MARKERS`]).
    pub(super) fn only_tags_or_repost_marker(&self, piece: &Range<usize>) -> bool {
        if piece.is_empty() {
            return false;
        }
        let only_tags = piece
            .clone()
            .filter(|&i| i == piece.start || self.breaks[i])
            .all(|word_start| self.tagged[word_start]);
        let text: String = self.chars[piece.clone()].iter().collect();
        only_tags || REPOST_MARKERS.contains(&text.as_str())
    }

    /// `piece` opens with a byline: "by" and a name in capitals ("… by
    /// JANE DOE", "by JOHN Q. PUBLIC"), how wire copy credits its writers.
    /// Two words in capitals after "by", the first of two letters or more
    /// (one word could be an agency's initials, "by NYPD", which says who
    /// did what).
    pub(super) fn opens_byline(&self, piece: &Range<usize>) -> bool {
        let mut bounds = piece
            .clone()
            .filter(|&i| i == piece.start || self.breaks[i])
            .chain(std::iter::once(piece.end));
        let (Some(by), Some(first), Some(second), Some(after)) =
            (bounds.next(), bounds.next(), bounds.next(), bounds.next())
        else {
            return false;
        };
        let in_capitals = |word: Range<usize>, fewest: usize| {
            word.len() >= fewest
                && word
                    .clone()
                    .all(|i| self.capital[i] || !self.chars[i].is_alphabetic())
        };
        self.chars[by..first] == ['b', 'y']
            && in_capitals(first..second, 2)
            && in_capitals(second..after, 1)
    }
}
