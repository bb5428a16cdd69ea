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
    let mut folded: String = decoded.nfkc().flat_map(char::to_lowercase).collect();
    if options.fold_traditional && folded.chars().any(is_han) {
        folded = zhconv::zhconv(&folded, zhconv::Variant::ZhHans);
    }
    if options.strip_links_and_mentions {
        folded = strip_links_and_mentions(&folded);
    }
    folded
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
fn strip_links_and_mentions(text: &str) -> String {
    if !text.contains("://") && !text.contains("www.") && !text.contains('@') {
        return text.to_string();
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
}
