//! The figures of a text: what a reprint never changes and a recurring
//! report always does.
//!
//! Motivation: two reports from one template ("…第二届…" / "…第三届…", "3.5%"
//! / "4.1%") are close by every measure of text; their figures tell them
//! apart. Confirmation ([`crate::confirm`]) compares the figures found here.

use std::borrow::Cow;

/// The numbers of a text, in order: runs of ASCII digits with inner `.`,
/// `,` or `/` (`3.5`, `1,200`, `1987/88`; full-width digits are ASCII after
/// NFKC), mixed fractions (`6-1/4`, not the range `11-20`), and numbers
/// written in Chinese numerals: runs of two or more (`十五`, `二〇二三`,
/// `一百二十九`), one after `第` (`第八`), or one before a counter of
/// sessions, batches, ranks or time (`二次`, `三届`, `五名`, `两年`). Any
/// other lone numeral is not counted: it is part of too many ordinary words
/// (一些, 统一, 十分). English number words count as the digits they stand
/// for ("six" is `6`): wire reports write small figures out. Digits
/// followed by 十, 百 or 千 count as the number they make (`6千` is `6000`,
/// so `1亿6千万` and `1亿6000万` report the same figures), and magnitudes
/// right after digits (`千万` in `6千万`) are not a number of their own.
pub(super) fn numbers_in(text: &str) -> Vec<Cow<'_, str>> {
    let mut numbers: Vec<Cow<'_, str>> = english_number_words(text).map(Cow::Borrowed).collect();
    let mut start = None;
    let mut previous = None;
    for (index, c) in text.char_indices() {
        let inside_number = c.is_ascii_digit()
            || (matches!(c, '.' | ',' | '/')
                && start.is_some()
                && text[index + 1..].starts_with(|next: char| next.is_ascii_digit()))
            || (c == '-' && start.is_some() && starts_with_fraction(&text[index + 1..]));
        match (inside_number, start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                let next = text[index..].chars().find(|c| !c.is_whitespace());
                numbers.push(with_magnitude(&text[begin..index], next));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(begin) = start {
        numbers.push(Cow::Borrowed(&text[begin..]));
    }
    let mut run_start: Option<usize> = None;
    let mut run_chars = 0;
    let (mut after_ordinal, mut after_digits) = (false, false);
    for (index, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if is_chinese_numeral(c) {
            if run_start.is_none() {
                run_start = Some(index);
                run_chars = 0;
                after_ordinal = previous == Some('第');
                after_digits = previous.is_some_and(|previous| previous.is_ascii_digit());
            }
            run_chars += 1;
        } else if let Some(begin) = run_start.take()
            && (run_chars >= 2 || after_ordinal || is_counter(c))
            && !(after_digits && text[begin..index].chars().all(is_magnitude))
        {
            numbers.push(Cow::Borrowed(&text[begin..index]));
        }
        if !c.is_whitespace() {
            previous = Some(c);
        }
    }
    numbers
}

/// The Chinese numerals that scale the number before them.
fn is_magnitude(c: char) -> bool {
    matches!(c, '十' | '百' | '千' | '万' | '亿')
}

/// `digits` as the number it makes with the character after it (spaces
/// between are a copy's spacing, not a separation): `6` before
/// 千 is `6000` (only whole numbers before 十, 百 or 千; 万 and 亿 are
/// units both ways of writing keep: `1亿6000万`).
fn with_magnitude(digits: &str, next: Option<char>) -> Cow<'_, str> {
    let zeros = match next {
        Some('十') => 1,
        Some('百') => 2,
        Some('千') => 3,
        _ => return Cow::Borrowed(digits),
    };
    if !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Cow::Borrowed(digits);
    }
    Cow::Owned(format!("{digits}{}", "0".repeat(zeros)))
}

/// `text` starts with a fraction, digits `/` digits.
fn starts_with_fraction(text: &str) -> bool {
    let numerator = text.bytes().take_while(u8::is_ascii_digit).count();
    numerator > 0
        && text[numerator..].starts_with('/')
        && text[numerator + 1..].starts_with(|c: char| c.is_ascii_digit())
}

/// The English cardinal number words of lower-cased text, as digits.
fn english_number_words(text: &str) -> impl Iterator<Item = &'static str> + '_ {
    // Runs of ASCII letters, found by bytes: Chinese text has few or none.
    let bytes = text.as_bytes();
    let mut position = 0;
    std::iter::from_fn(move || {
        while position < bytes.len() && !bytes[position].is_ascii_alphabetic() {
            position += 1;
        }
        if position == bytes.len() {
            return None;
        }
        let start = position;
        while position < bytes.len() && bytes[position].is_ascii_alphabetic() {
            position += 1;
        }
        Some(&text[start..position])
    })
    .filter_map(|word| match word {
        "zero" => Some("0"),
        "one" => Some("1"),
        "two" => Some("2"),
        "three" => Some("3"),
        "four" => Some("4"),
        "five" => Some("5"),
        "six" => Some("6"),
        "seven" => Some("7"),
        "eight" => Some("8"),
        "nine" => Some("9"),
        "ten" => Some("10"),
        "eleven" => Some("11"),
        "twelve" => Some("12"),
        "thirteen" => Some("13"),
        "fourteen" => Some("14"),
        "fifteen" => Some("15"),
        "sixteen" => Some("16"),
        "seventeen" => Some("17"),
        "eighteen" => Some("18"),
        "nineteen" => Some("19"),
        "twenty" => Some("20"),
        "thirty" => Some("30"),
        "forty" => Some("40"),
        "fifty" => Some("50"),
        "sixty" => Some("60"),
        "seventy" => Some("70"),
        "eighty" => Some("80"),
        "ninety" => Some("90"),
        "hundred" => Some("100"),
        "thousand" => Some("1000"),
        "million" => Some("1000000"),
        "billion" => Some("1000000000"),
        _ => None,
    })
}

/// Counters after which a lone Chinese numeral is a number: sessions,
/// batches, issues, ranks, people, ages, times and durations.
fn is_counter(c: char) -> bool {
    matches!(
        c,
        '次' | '届'
            | '期'
            | '批'
            | '轮'
            | '号'
            | '季'
            | '名'
            | '位'
            | '项'
            | '条'
            | '岁'
            | '倍'
            | '场'
            | '年'
            | '月'
            | '日'
            | '天'
            | '周'
    )
}

/// The characters Chinese numbers are written with (〇 to 亿).
pub fn is_chinese_numeral(c: char) -> bool {
    matches!(
        c,
        '〇' | '零'
            | '一'
            | '二'
            | '两'
            | '三'
            | '四'
            | '五'
            | '六'
            | '七'
            | '八'
            | '九'
            | '十'
            | '百'
            | '千'
            | '万'
            | '亿'
    )
}
