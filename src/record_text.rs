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

/// A form of text smaller than UTF-8 for the letters side records keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Two bytes a Han character, one an ASCII one
    /// ([`crate::compact_text`]; records of tags 3 and 4).
    Compact,
    /// A static prefix code, about a byte a letter ([`crate::text_code`];
    /// records of tags 5 and 6).
    Coded,
}

impl Packing {
    /// How many bytes `text` takes in this form.
    pub fn encoded_len(self, text: &str) -> usize {
        match self {
            Packing::Compact => crate::compact_text::encoded_len(text),
            Packing::Coded => crate::text_code::encoded_len(text),
        }
    }
    /// Appends `text` in this form to `out`.
    pub fn encode(self, text: &str, out: &mut Vec<u8>) {
        match self {
            Packing::Compact => crate::compact_text::encode(text, out),
            Packing::Coded => crate::text_code::encode(text, out),
        }
    }
    /// The text whose form is `bytes`, or what is wrong with them.
    pub fn decode(self, bytes: &[u8]) -> Result<String, &'static str> {
        match self {
            Packing::Compact => crate::compact_text::decode(bytes),
            Packing::Coded => crate::text_code::decode(bytes),
        }
    }
}

/// A text a node keeps: known, or its record's bytes decoded at first
/// read.
#[derive(Clone)]
pub struct RecordText(Form);

#[derive(Clone)]
enum Form {
    Known(Box<str>),
    Encoded {
        bytes: Box<[u8]>,
        /// `None`: UTF-8.
        packing: Option<Packing>,
        decoded: OnceLock<Box<str>>,
    },
}

impl RecordText {
    /// The text whose record bytes are `bytes`: UTF-8, or packed in
    /// `packing`'s form.
    pub fn encoded(bytes: &[u8], packing: Option<Packing>) -> RecordText {
        RecordText(Form::Encoded {
            bytes: bytes.into(),
            packing,
            decoded: OnceLock::new(),
        })
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Form::Known(text) => text,
            Form::Encoded {
                bytes,
                packing,
                decoded,
            } => decoded.get_or_init(|| decode(bytes, *packing)),
        }
    }
}

fn decode(bytes: &[u8], packing: Option<Packing>) -> Box<str> {
    match packing {
        Some(packing) => packing
            .decode(bytes)
            .unwrap_or_else(|_| char::REPLACEMENT_CHARACTER.to_string())
            .into_boxed_str(),
        None => match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => text.into(),
            Err(_) => String::from_utf8_lossy(bytes).into(),
        },
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
        for packing in [Packing::Compact, Packing::Coded] {
            let mut packed = Vec::new();
            packing.encode("新闻 news", &mut packed);
            assert_eq!(&*RecordText::encoded(&packed, Some(packing)), "新闻 news");
            assert_eq!(
                RecordText::encoded(&packed, Some(packing)),
                RecordText::from("新闻 news")
            );
        }
        assert_eq!(
            &*RecordText::encoded("新闻 news".as_bytes(), None),
            "新闻 news"
        );
    }

    #[test]
    fn bytes_that_are_not_a_text_read_without_panic() {
        assert_eq!(&*RecordText::encoded(&[0xC3], None), "\u{FFFD}");
        assert_eq!(
            &*RecordText::encoded(&[0x80], Some(Packing::Compact)),
            "\u{FFFD}"
        );
        // A Han escape cut short.
        assert_eq!(
            &*RecordText::encoded(&[0x00], Some(Packing::Coded)),
            "\u{FFFD}"
        );
    }

    /// `bytes` read one character at a time in `packing`'s form.
    fn read_chars(packing: Packing, bytes: &[u8]) -> Vec<Result<char, &'static str>> {
        match packing {
            Packing::Compact => crate::compact_text::chars(bytes).collect(),
            Packing::Coded => crate::text_code::chars(bytes).collect(),
        }
    }

    const PACKINGS: [Packing; 2] = [Packing::Compact, Packing::Coded];

    proptest::proptest! {
        #[test]
        fn any_text_comes_back_in_each_form(text in "\\PC{0,40}") {
            for packing in PACKINGS {
                let mut out = Vec::new();
                packing.encode(&text, &mut out);
                proptest::prop_assert_eq!(out.len(), packing.encoded_len(&text));
                proptest::prop_assert_eq!(packing.decode(&out), Ok(text.clone()));
            }
        }

        /// Any bytes decode or fail without panic, and one character at a
        /// time gives what the whole text does, nothing after its first
        /// error.
        #[test]
        fn chars_are_the_decoded_text_up_to_the_first_error(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        ) {
            for packing in PACKINGS {
                let read = read_chars(packing, &bytes);
                let errors = read.iter().filter(|c| c.is_err()).count();
                proptest::prop_assert!(errors <= 1);
                proptest::prop_assert!(errors == 0 || read.last().is_some_and(Result::is_err));
                let text: Result<String, &str> = read.into_iter().collect();
                proptest::prop_assert_eq!(text, packing.decode(&bytes));
            }
        }
    }
}
