//! A text kept in a side record, decoded at its first read.
//!
//! Motivation: confirming a document reads the side records of about a
//! dozen candidates, and most of them are turned away by their shingles or
//! sketch before any letter is read (measured on the overlap stream: three
//! in four short texts decoded were never read). Decoding their letters
//! anyway (checking UTF-8, or widening the compact form of
//! [`crate::compact_text`]) was most of the cost of keeping them compact.
//!
//! Design: [`RecordText`] holds either text already known (a document's
//! own, analysed) or the bytes of its record, copied as they are, and
//! decodes those once, at the first read ([`std::ops::Deref`] to `str`).
//!
//! Consequences: a text is checked when it is read, not when its record
//! is: bytes that are not a text (a damaged record) read as the text with
//! each bad sequence replaced by U+FFFD, never a panic. Records are
//! checked as structures when they enter the engine (snapshots and the log
//! carry checksums), so this is a guard, not a path.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

/// A text a node keeps: known, or its record's bytes decoded at first
/// read.
#[derive(Clone)]
pub struct RecordText(Form);

#[derive(Clone)]
enum Form {
    Known(Box<str>),
    Encoded {
        bytes: Box<[u8]>,
        compact: bool,
        decoded: OnceLock<Box<str>>,
    },
}

impl RecordText {
    /// The text whose record bytes are `bytes`: UTF-8, or the compact form
    /// when `compact`.
    pub fn encoded(bytes: &[u8], compact: bool) -> RecordText {
        RecordText(Form::Encoded {
            bytes: bytes.into(),
            compact,
            decoded: OnceLock::new(),
        })
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Form::Known(text) => text,
            Form::Encoded {
                bytes,
                compact,
                decoded,
            } => decoded.get_or_init(|| decode(bytes, *compact)),
        }
    }
}

fn decode(bytes: &[u8], compact: bool) -> Box<str> {
    if compact {
        crate::compact_text::decode(bytes)
            .unwrap_or_else(|_| char::REPLACEMENT_CHARACTER.to_string())
            .into_boxed_str()
    } else {
        match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => text.into(),
            Err(_) => String::from_utf8_lossy(bytes).into(),
        }
    }
}

impl Deref for RecordText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Default for RecordText {
    fn default() -> RecordText {
        RecordText(Form::Known(Box::default()))
    }
}

impl From<Box<str>> for RecordText {
    fn from(text: Box<str>) -> RecordText {
        RecordText(Form::Known(text))
    }
}

impl From<String> for RecordText {
    fn from(text: String) -> RecordText {
        RecordText(Form::Known(text.into_boxed_str()))
    }
}

impl From<&str> for RecordText {
    fn from(text: &str) -> RecordText {
        RecordText(Form::Known(text.into()))
    }
}

impl PartialEq for RecordText {
    fn eq(&self, other: &RecordText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for RecordText {}

impl fmt::Debug for RecordText {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), formatter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoded_text_reads_as_the_text_it_encodes() {
        let mut compact = Vec::new();
        crate::compact_text::encode("新闻 news", &mut compact);
        assert_eq!(&*RecordText::encoded(&compact, true), "新闻 news");
        assert_eq!(
            &*RecordText::encoded("新闻 news".as_bytes(), false),
            "新闻 news"
        );
        assert_eq!(
            RecordText::encoded(&compact, true),
            RecordText::from("新闻 news")
        );
    }

    #[test]
    fn bytes_that_are_not_a_text_read_without_panic() {
        assert_eq!(&*RecordText::encoded(&[0xC3], false), "\u{FFFD}");
        assert_eq!(&*RecordText::encoded(&[0x80], true), "\u{FFFD}");
    }
}
