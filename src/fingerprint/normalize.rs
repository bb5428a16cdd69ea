//! Text normalisation before segmentation.
//!
//! Motivation: reprints differ from their original in ways that carry no
//! meaning: full-width vs half-width characters, letter case, Traditional vs
//! Simplified script, HTML entity remnants, links and `@user` mentions added by
//! the reposting account. If those survive into the features, two copies of
//! one story get different fingerprints.
//!
//! Design: one pass per step, in a fixed order: HTML entities → NFKC
//! (full-width → half-width, compatibility forms) → lowercase → Traditional →
//! Simplified (only when the text has Han characters) → links and mentions
//! replaced by a space. Punctuation and whitespace are kept here: they mark
//! word and sentence boundaries for the next steps, which drop them.
//!
//! NFKC and lowercasing are the costly steps, so they take a shortcut that
//! gives the same output: normalisation never reaches across a character
//! that starts with a starter no other character composes with (a
//! "boundary"), so text splits there into pieces normalised independently.
//! The characters of most text (ASCII, the main CJK block, CJK and
//! full-width punctuation) are such boundaries with a known one-character
//! result; one followed by another boundary is mapped directly, and only the
//! pieces around other characters go through the full algorithm.
//!
//! Consequences: the normalised text is only used for features; the
//! document's source is never modified.

use unicode_normalization::UnicodeNormalization;

/// Which optional normalisation steps run. All on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NormalizeOptions {
    /// Map Traditional Chinese to Simplified, so a `s2t` copy of a story has
    /// the same features as its original.
    pub fold_traditional: bool,
    /// Replace URLs and `@user` mentions by a space (reposts add them).
    pub strip_links_and_mentions: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions {
            fold_traditional: true,
            strip_links_and_mentions: true,
        }
    }
}

/// Normalise `text` for feature extraction.
pub fn normalize(text: &str, options: NormalizeOptions) -> String {
    let decoded = decode_html_entities(text);
    let mut folded = nfkc_lowercase(&decoded);
    if options.fold_traditional && folded.chars().any(is_han) {
        folded = zhconv::zhconv(&folded, zhconv::Variant::ZhHans);
    }
    if options.strip_links_and_mentions {
        folded = strip_links_and_mentions(folded);
    }
    folded
}

/// [`normalize`] without the lowercasing: for the letters short texts are
/// compared by, where a capital letter tells a new sentence from a clause
/// that continues one. Short texts only (no shortcut: the plain NFKC).
pub fn normalize_keeping_case(text: &str, options: NormalizeOptions) -> String {
    let decoded = decode_html_entities(text);
    let folded: String = decoded.nfkc().collect();
    let mut folded = expand_digit_units(&strip_emoji_codes(&folded));
    if options.fold_traditional && folded.chars().any(is_han) {
        folded = zhconv::zhconv(&folded, zhconv::Variant::ZhHans);
    }
    if options.strip_links_and_mentions {
        folded = strip_links_and_mentions(folded);
    }
    folded
}

/// Longest emoji code: `[` + at most this many characters + `]`.
const MAX_EMOJI_CODE_CHARS: usize = 4;

/// Emoji codes of social platforms (`[泪]`, `[哈哈]`, `[doge]`) replaced by
/// a mark: a repost adds and drops them anywhere in a post, and they say
/// nothing of what it reports. A code is one to four Han or ASCII letters
/// in square brackets (at least two when none is Han: `a[i]` is no code).
pub fn strip_emoji_codes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('[') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let code_end = after
            .char_indices()
            .take(MAX_EMOJI_CODE_CHARS + 1)
            .find(|&(_, c)| c == ']')
            .map(|(index, _)| index);
        let is_code = code_end.is_some_and(|end| {
            let code = &after[..end];
            code.chars().all(|c| is_han(c) || c.is_ascii_alphabetic())
                && (code.chars().any(is_han) || code.len() >= 2)
        });
        match code_end.filter(|_| is_code) {
            Some(end) => {
                out.push('|');
                rest = &after[end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Digits followed by 十, 百 or 千 written out (`6千万` → `6000万`, `3百` →
/// `300`): the same figure as reposts write it either way.
pub fn expand_digit_units(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut previous_digit = false;
    for c in text.chars() {
        let zeros = match c {
            '十' => 1,
            '百' => 2,
            '千' => 3,
            _ => 0,
        };
        if zeros > 0 && previous_digit {
            out.extend(std::iter::repeat_n('0', zeros));
            previous_digit = false;
            continue;
        }
        previous_digit = c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// NFKC, then each character lowercased: the same as
/// `text.nfkc().flat_map(char::to_lowercase).collect()`, with the shortcut
/// of the module docs. A character with a [`boundary_mapping`] that is
/// followed by another (or ends the text) is a piece of its own, mapped
/// directly; runs of other pieces are normalised in one call.
fn nfkc_lowercase(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Start of the text not yet written, which needs the full algorithm.
    let mut pending: Option<usize> = None;
    // Otherwise, start of the text not yet written, which maps to itself
    // (copied in one piece when something else comes).
    let mut verbatim_from = 0;
    let mut chars = text.char_indices().peekable();
    let mut mapping = chars.peek().and_then(|&(_, c)| boundary_mapping(c));
    while let Some((index, c)) = chars.next() {
        let next_mapping = chars.peek().and_then(|&(_, next)| boundary_mapping(next));
        let ends_piece = next_mapping.is_some() || chars.peek().is_none();
        match mapping {
            Some(mapped) if ends_piece => {
                if let Some(start) = pending.take() {
                    out.extend(text[start..index].nfkc().flat_map(char::to_lowercase));
                    verbatim_from = index;
                }
                if mapped != c {
                    out.push_str(&text[verbatim_from..index]);
                    out.push(mapped);
                    verbatim_from = index + c.len_utf8();
                }
            }
            _ => {
                if pending.is_none() {
                    out.push_str(&text[verbatim_from..index]);
                    pending = Some(index);
                }
            }
        }
        mapping = next_mapping;
    }
    match pending {
        Some(start) => out.extend(text[start..].nfkc().flat_map(char::to_lowercase)),
        None => out.push_str(&text[verbatim_from..]),
    }
    out
}

/// For a boundary character (its NFKC decomposition starts with a starter
/// that never composes with a preceding character) whose NFKC form alone is
/// one character: that character, lowercased. `None` for every other
/// character (which only means "no shortcut"). The tests check every
/// character listed here against the full algorithm.
fn boundary_mapping(c: char) -> Option<char> {
    match c {
        '\0'..='\x7f' => Some(c.to_ascii_lowercase()),
        // CJK unified ideographs, CJK punctuation (、。〃 and brackets) and
        // common general punctuation: already NFKC, no case.
        '\u{4e00}'..='\u{9fff}'
        | '\u{3001}'..='\u{3003}'
        | '\u{3008}'..='\u{3011}'
        | '\u{3014}'..='\u{301f}'
        | '\u{2010}'
        | '\u{2013}'..='\u{2015}'
        | '\u{2018}'..='\u{2019}'
        | '\u{201c}'..='\u{201d}'
        | '\u{00b7}' => Some(c),
        // Ideographic space → space; full-width ASCII → ASCII.
        '\u{3000}' => Some(' '),
        '\u{ff01}'..='\u{ff5e}' => {
            char::from_u32(c as u32 - 0xfee0).map(|ascii| ascii.to_ascii_lowercase())
        }
        _ => None,
    }
}

/// Calls `keep` with each letter or digit of `c` lowercased (a
/// character may lowercase to more than one): what a short text's
/// shingles and a long text's lead are taken from. ASCII and the main CJK
/// block, nearly every letter, take the quick paths.
#[inline(always)]
pub fn for_each_lowercase_letter(c: char, mut keep: impl FnMut(char)) {
    if c.is_ascii() {
        if c.is_ascii_alphanumeric() {
            keep(c.to_ascii_lowercase());
        }
    } else if matches!(c, '\u{4e00}'..='\u{9fff}') {
        keep(c);
    } else {
        for lower in c.to_lowercase() {
            if is_letter_or_digit(lower) {
                keep(lower);
            }
        }
    }
}

/// `char::is_alphanumeric`, answered without the Unicode tables for ASCII
/// and the main CJK block (all letters), the bulk of the text.
pub fn is_letter_or_digit(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        matches!(c, '\u{4e00}'..='\u{9fff}') || c.is_alphanumeric()
    }
}

/// True for CJK unified ideographs (all extension blocks) and compatibility
/// ideographs: the characters that jieba segments.
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2EBEF
        | 0x30000..=0x323AF
        | 0x3007)
}

/// Decode the HTML entities that survive scraping (`&nbsp;`, `&amp;`,
/// `&#12345;`, `&#x4e2d;`). Unknown entities are left as they are.
fn decode_html_entities(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let entity_end = after
            .char_indices()
            .take(10)
            .find(|&(_, c)| c == ';')
            .map(|(i, _)| i);
        let decoded = entity_end.and_then(|end| decode_entity(&after[..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &after[end + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

fn decode_entity(name: &str) -> Option<char> {
    match name {
        "nbsp" | "ensp" | "emsp" | "thinsp" => Some(' '),
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "mdash" => Some('—'),
        "ndash" => Some('–'),
        "hellip" => Some('…'),
        "ldquo" => Some('“'),
        "rdquo" => Some('”'),
        "lsquo" => Some('‘'),
        "rsquo" => Some('’'),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

/// Replace `http(s)://…` and `www.…` links and `@name` mentions with a space.
/// A link ends at whitespace or at the first character that cannot appear in
/// a URL (which includes every Han character); a mention ends at whitespace,
/// punctuation other than `_`/`-`/`.`, or a colon.
fn strip_links_and_mentions(text: String) -> String {
    if !text.contains("://") && !text.contains("www.") && !text.contains('@') {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut position = 0;
    while position < text.len() {
        let rest = &text[position..];
        let link_len = link_length(rest);
        if link_len > 0 {
            out.push(' ');
            position += link_len;
            continue;
        }
        if let Some(after_at) = rest.strip_prefix('@') {
            let name_len: usize = after_at
                .chars()
                .take_while(|&c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
                .map(char::len_utf8)
                .sum();
            if name_len > 0
                && out
                    .chars()
                    .last()
                    .is_none_or(|c| !c.is_ascii_alphanumeric())
            {
                out.push(' ');
                position += 1 + name_len;
                continue;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        out.push(c);
        position += c.len_utf8();
    }
    out
}

fn link_length(rest: &str) -> usize {
    let starts_link =
        rest.starts_with("http://") || rest.starts_with("https://") || rest.starts_with("www.");
    if !starts_link {
        return 0;
    }
    rest.chars()
        .take_while(|&c| {
            c.is_ascii_graphic() && !matches!(c, '"' | '\'' | '<' | '>' | '(' | ')' | '[' | ']')
        })
        .map(char::len_utf8)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use unicode_normalization::char::{canonical_combining_class, decompose_compatible};
    use unicode_normalization::{IsNormalized, is_nfkc_quick};

    /// The definition `nfkc_lowercase` must match.
    fn nfkc_lowercase_reference(text: &str) -> String {
        text.nfkc().flat_map(char::to_lowercase).collect()
    }

    #[test]
    fn boundary_mappings_are_boundaries_with_their_nfkc_form() {
        let mut mapped = 0;
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            let Some(mapping) = boundary_mapping(c) else {
                continue;
            };
            mapped += 1;
            assert_eq!(
                nfkc_lowercase_reference(&c.to_string()),
                mapping.to_string(),
                "{c:?}"
            );
            let mut first = None;
            decompose_compatible(c, |part| {
                first.get_or_insert(part);
            });
            let first = first.expect("a character decomposes to at least itself");
            // A starter that is NFKC_QC=Yes never composes with a preceding
            // character (those are NFKC_QC=Maybe).
            assert_eq!(canonical_combining_class(first), 0, "{c:?}");
            assert_eq!(
                is_nfkc_quick(std::iter::once(first)),
                IsNormalized::Yes,
                "{c:?}"
            );
        }
        assert!(mapped > 20_000);
    }

    #[test]
    fn letter_or_digit_is_is_alphanumeric() {
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            assert_eq!(is_letter_or_digit(c), c.is_alphanumeric(), "{c:?}");
        }
    }

    #[test]
    fn nfkc_shortcut_handles_composition_next_to_mapped_characters() {
        for text in [
            "e\u{301}",
            "ｶﾞ中ﾞa\u{308}，\u{301}",
            "\u{1100}\u{1161}\u{11a8}中",
            "İ Σ ﬁ ½ K ㈱ … ①",
            "",
            "\u{301}",
        ] {
            assert_eq!(
                nfkc_lowercase(text),
                nfkc_lowercase_reference(text),
                "{text:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn nfkc_shortcut_matches_the_full_algorithm(
            text in proptest::collection::vec(
                proptest::sample::select(vec![
                    'a', 'E', ' ', '.', '中', '國', '，', 'Ａ', '\u{3000}', '。', '「', '—',
                    '·', '\u{301}', '\u{308}', '\u{327}', '\u{3099}', '\u{309a}', 'ﾞ',
                    'ｶ', 'か', 'ウ', '\u{1100}', '\u{1161}', '\u{11a8}', '가', 'é', 'Å',
                    'İ', 'Σ', 'ﬁ', '½', '\u{212a}', '\u{f900}', '\u{2f00}', '…', '①',
                    '\u{fa6e}', '\u{0f73}', '\u{0f71}', '\u{0f72}', '\u{1e}', '\n',
                ]),
                0..24,
            )
        ) {
            let text: String = text.into_iter().collect();
            prop_assert_eq!(nfkc_lowercase(&text), nfkc_lowercase_reference(&text));
        }

        #[test]
        fn nfkc_shortcut_matches_on_any_text(text in "\\PC{0,32}") {
            prop_assert_eq!(nfkc_lowercase(&text), nfkc_lowercase_reference(&text));
        }
    }

    #[test]
    fn full_width_and_case_are_folded() {
        let text = normalize("ＡＢＣ１２３ Hello", NormalizeOptions::default());
        assert_eq!(text, "abc123 hello");
    }

    #[test]
    fn traditional_is_folded_to_simplified() {
        let text = normalize("經濟發展與國際貿易", NormalizeOptions::default());
        assert_eq!(text, "经济发展与国际贸易");
        let kept = normalize(
            "經濟",
            NormalizeOptions {
                fold_traditional: false,
                ..NormalizeOptions::default()
            },
        );
        assert_eq!(kept, "經濟");
    }

    #[test]
    fn entities_are_decoded() {
        assert_eq!(
            normalize(
                "a&nbsp;b &amp; c &#20013;&#x6587; &bogus; &",
                NormalizeOptions::default()
            ),
            "a b & c 中文 &bogus; &"
        );
    }

    #[test]
    fn links_and_mentions_become_spaces() {
        let text = normalize(
            "看这里 http://t.cn/abc123 好消息 via @some_user：正文 mail a@b",
            NormalizeOptions::default(),
        );
        assert_eq!(text, "看这里   好消息 via  :正文 mail a@b");
    }

    #[test]
    fn link_stops_at_han_text() {
        assert_eq!(
            normalize("www.example.com新闻", NormalizeOptions::default()),
            " 新闻"
        );
    }

    #[test]
    fn emoji_codes_are_marks_and_other_brackets_stay() {
        assert_eq!(strip_emoji_codes("感动中国啊[泪][泪]！"), "感动中国啊||！");
        assert_eq!(strip_emoji_codes("好消息[doge]"), "好消息|");
        assert_eq!(
            strip_emoji_codes("见附件[图1] [Reuters report]"),
            "见附件[图1] [Reuters report]"
        );
        assert_eq!(strip_emoji_codes("数组a[i]"), "数组a[i]");
    }

    #[test]
    fn digit_units_are_written_out() {
        assert_eq!(expand_digit_units("共1亿6千万元"), "共1亿6000万元");
        assert_eq!(expand_digit_units("3百人 十分 二十"), "300人 十分 二十");
    }
}
