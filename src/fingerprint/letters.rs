//! The letters a short text's node keeps for the in-order comparison
//! ([`crate::confirm::edits`]): letters and digits with one character where
//! words may break between them, and what kind of break it was.
//!
//! Motivation: the alignment reads where a repost marked what it added
//! (a tag, a comment after a dash, a new sentence) from the punctuation
//! between letters; keeping one character per break, not the punctuation
//! itself, keeps the node's text small and the reading the same.

use super::fields::FIELD_SEPARATOR;
use super::normalize::is_letter_or_digit;

/// The letters and digits of `text` with its field separators, and one
/// character where words may break between two letters: a space where only
/// whitespace stood, [`BREAK_CONTINUED`] where a comma or semicolon did (the
/// sentence goes on), [`BREAK_MARKED`] where other punctuation did (a
/// repost marks what it adds with it), [`BREAK_TAG`] where `#` or `@` did
/// right before the word (also at the start of a field), [`CUT_MARK`]
/// where an ellipsis did (also after the last letter).
pub fn letters_with_breaks(text: &str) -> String {
    let mut letters = String::with_capacity(text.len());
    let mut skipped: Option<char> = None;
    // The last character skipped was `#` or `@`: the word ahead is a tag.
    let mut tag_sign = false;
    // Whether an ellipsis was among the characters skipped since the last
    // letter.
    let (mut watch, mut ellipsis) = (EllipsisWatch::default(), false);
    for c in text.chars() {
        if c == FIELD_SEPARATOR || is_letter_or_digit(c) {
            let at_start = letters.is_empty() || letters.ends_with(FIELD_SEPARATOR);
            if c != FIELD_SEPARATOR && tag_sign {
                letters.push(BREAK_TAG);
            } else if let Some(break_char) = skipped
                && c != FIELD_SEPARATOR
                && !at_start
            {
                letters.push(if ellipsis { CUT_MARK } else { break_char });
            }
            watch.letter();
            ellipsis = false;
            letters.push(c);
            skipped = None;
            tag_sign = false;
        } else {
            ellipsis |= watch.ellipsis_at(c);
            tag_sign = matches!(c, '#' | '@' | '＃' | '＠');
            let this = if c.is_whitespace() {
                ' '
            } else if matches!(c, ',' | '，' | '、' | ';' | '；') {
                BREAK_CONTINUED
            } else {
                BREAK_MARKED
            };
            // The strongest break between two letters stands for all.
            skipped = Some(match (skipped, this) {
                (Some(BREAK_MARKED), _) | (_, BREAK_MARKED) => BREAK_MARKED,
                (Some(BREAK_CONTINUED), _) | (_, BREAK_CONTINUED) => BREAK_CONTINUED,
                _ => ' ',
            });
        }
    }
    if ellipsis && letters.chars().next_back().is_some_and(is_letter_or_digit) {
        letters.push(CUT_MARK);
    }
    letters
}

/// Stands for punctuation that marks something off (a tag, a comment, a
/// new sentence) in [`letters_with_breaks`].
pub const BREAK_MARKED: char = '|';

/// Stands for `#` or `@` right before a word (a hashtag or a mention: what
/// a repost tags a text with) in [`letters_with_breaks`]; a marked break.
pub const BREAK_TAG: char = '#';

/// Stands for a comma or semicolon in [`letters_with_breaks`].
pub const BREAK_CONTINUED: char = ',';

/// Stands for an ellipsis ("…", "...": normalised text has the second) in
/// [`letters_with_breaks`]; a marked break. At a text's end, or before a
/// few last letters ("…全文", "... 网页链接"), it is where a platform cut
/// a post, so what another text says after the same words is what the cut
/// hid, not more said ([`crate::confirm::edits`]). The one character,
/// because normalised letters never hold it otherwise.
pub const CUT_MARK: char = '…';

/// Finds ellipses in a text read one character at a time: "…"
/// ([`CUT_MARK`]) or three full stops in a row. One reader for the letters
/// a node keeps and for the comparison that reads them, or text not yet
/// reduced to letters (`crate::confirm::edits`).
#[derive(Debug, Default, Clone, Copy)]
pub struct EllipsisWatch {
    /// Full stops in a row just read.
    stops: usize,
}

impl EllipsisWatch {
    /// A letter was read: a run of full stops ends.
    pub fn letter(&mut self) {
        self.stops = 0;
    }

    /// `c`, not a letter, was read: whether it ends an ellipsis (or goes
    /// on with one).
    pub fn ellipsis_at(&mut self, c: char) -> bool {
        self.stops = if c == '.' { self.stops + 1 } else { 0 };
        self.stops >= 3 || c == CUT_MARK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_keep_their_breaks_and_tag_signs() {
        assert_eq!(
            letters_with_breaks("#world news, today: ok"),
            "#world news,today|ok"
        );
        assert_eq!(letters_with_breaks("a #tag and @b"), "a#tag and#b");
        assert_eq!(
            letters_with_breaks("转发 #社会新闻# 标题"),
            "转发#社会新闻|标题"
        );
    }

    #[test]
    fn a_text_ending_in_an_ellipsis_ends_in_the_cut_mark() {
        assert_eq!(letters_with_breaks("请稍等... "), "请稍等…");
        assert_eq!(letters_with_breaks("and more…"), "and more…");
        // Inside the text it is a break of its own; two full stops are none.
        assert_eq!(letters_with_breaks("wait... what"), "wait…what");
        assert_eq!(letters_with_breaks("上... #话题"), "上#话题");
        assert_eq!(letters_with_breaks("the end.."), "the end");
        assert_eq!(letters_with_breaks("..."), "");
    }
}
