//! A text kept in a side record, decoded at its first read.
//!
//! Motivation: confirming a document reads the side records of about a
//! dozen candidates, and most of them are turned away by their shingles or
//! sketch before any letter is read (measured on the overlap stream: three
//! in four short texts decoded were never read). Decoding their letters
//! anyway (checking UTF-8, or widening the compact form of
//! [`crate::compact_text`]) was most of the cost of keeping them compact.
//!
//! Design: [`RecordText`] holds text already known (a document's own,
//! analysed), the bytes of its record, copied as they are, or a text the
//! record leaves out because another gives it back (a lean record's lead,
//! from its letters); it decodes or derives once, at the first read
//! ([`std::ops::Deref`] to `str`). A reader that looks at each letter once
//! takes them from the bytes as they are decoded ([`RecordText::chars`]).
//!
//! Consequences: a text is checked when it is read, not when its record
//! is: bytes that are not a text (a damaged record) read as the text up
//! to the damage, each bad sequence replaced by U+FFFD, never a panic. Records are
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
    /// A text a record leaves out because another of its texts gives it
    /// back (a lean record's lead, from its letters): `derive(source,
    /// argument)`, at the first read.
    Derived {
        source: Box<RecordText>,
        derive: fn(&RecordText, u8) -> String,
        argument: u8,
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

    /// The text `derive(&source, argument)` gives, computed at its first
    /// read: a text a record need not keep.
    pub fn derived(
        source: RecordText,
        derive: fn(&RecordText, u8) -> String,
        argument: u8,
    ) -> RecordText {
        RecordText(Form::Derived {
            source: Box::new(source),
            derive,
            argument,
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
            Form::Derived {
                source,
                derive,
                argument,
                decoded,
            } => decoded.get_or_init(|| derive(source, *argument).into_boxed_str()),
        }
    }

    /// The text's characters, as [`RecordText::as_str`] has them; packed
    /// letters not yet decoded are read from their bytes as they come, so
    /// a reader that looks at each letter once (hashing a lean record's
    /// shingles, taking its lead) builds no text.
    pub fn chars(&self) -> TextChars<'_> {
        match &self.0 {
            Form::Encoded {
                bytes,
                packing: Some(packing),
                decoded,
            } if decoded.get().is_none() => packed_chars(bytes, *packing),
            _ => TextChars::Decoded(self.as_str().chars()),
        }
    }

    /// Whether the text has been decoded or derived (a known text has):
    /// lets tests show that a reader left it as bytes.
    #[cfg(test)]
    pub(crate) fn is_decoded(&self) -> bool {
        match &self.0 {
            Form::Known(_) => true,
            Form::Encoded { decoded, .. } | Form::Derived { decoded, .. } => {
                decoded.get().is_some()
            }
        }
    }

    /// About how many bytes of UTF-8 the text takes, without decoding it.
    pub fn estimated_len(&self) -> usize {
        match &self.0 {
            Form::Known(text) => text.len(),
            Form::Encoded { bytes, packing, .. } => match packing {
                None => bytes.len(),
                Some(Packing::Compact) => bytes.len() * 3 / 2,
                Some(Packing::Coded) => bytes.len() * 2,
            },
            Form::Derived { source, .. } => source.estimated_len(),
        }
    }
}

/// A packed text's letters up to the first damage, then U+FFFD: as lossy
/// UTF-8 reads.
fn decode(bytes: &[u8], packing: Option<Packing>) -> Box<str> {
    let Some(packing) = packing else {
        return match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => text.into(),
            Err(_) => String::from_utf8_lossy(bytes).into(),
        };
    };
    let mut text = String::with_capacity(bytes.len() * 2);
    text.extend(packed_chars(bytes, packing));
    text.into_boxed_str()
}

/// The characters of `bytes` in `packing`'s form, read as they come.
fn packed_chars(bytes: &[u8], packing: Packing) -> TextChars<'_> {
    match packing {
        Packing::Compact => TextChars::Compact(crate::compact_text::chars(bytes)),
        Packing::Coded => TextChars::Coded(crate::text_code::chars(bytes)),
    }
}

/// See [`RecordText::chars`].
pub enum TextChars<'a> {
    Decoded(std::str::Chars<'a>),
    Compact(crate::compact_text::Chars<'a>),
    Coded(crate::text_code::Chars<'a>),
}

impl Iterator for TextChars<'_> {
    type Item = char;

    fn next(&mut self) -> Option<char> {
        let packed = match self {
            TextChars::Decoded(chars) => return chars.next(),
            TextChars::Compact(chars) => chars.next(),
            TextChars::Coded(chars) => chars.next(),
        };
        packed.map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
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

    #[test]
    fn a_derived_text_is_taken_once_at_its_first_read() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static TAKEN: AtomicUsize = AtomicUsize::new(0);
        fn first_letters(source: &RecordText, count: u8) -> String {
            TAKEN.fetch_add(1, Ordering::Relaxed);
            source.chars().take(usize::from(count)).collect()
        }
        let mut packed = Vec::new();
        Packing::Coded.encode("新闻报道", &mut packed);
        let derived = RecordText::derived(
            RecordText::encoded(&packed, Some(Packing::Coded)),
            first_letters,
            2,
        );
        assert_eq!(TAKEN.load(Ordering::Relaxed), 0);
        assert_eq!(derived.estimated_len(), packed.len() * 2);
        assert_eq!(&*derived, "新闻");
        assert_eq!(&*derived.clone(), "新闻");
        assert_eq!(derived.chars().collect::<String>(), "新闻");
        assert_eq!(TAKEN.load(Ordering::Relaxed), 1);
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

        /// A record's text read a character at a time from its bytes is
        /// the text decoded whole: its letters up to any damage, then
        /// U+FFFD.
        #[test]
        fn a_texts_chars_are_its_decoded_letters(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            text in "\\PC{0,40}",
        ) {
            for packing in PACKINGS {
                let mut packed = Vec::new();
                packing.encode(&text, &mut packed);
                for bytes in [&bytes, &packed] {
                    let read: String = RecordText::encoded(bytes, Some(packing)).chars().collect();
                    let whole = RecordText::encoded(bytes, Some(packing));
                    proptest::prop_assert_eq!(&read, &*whole);
                    proptest::prop_assert_eq!(whole.chars().collect::<String>(), read.clone());
                    let good: String = read_chars(packing, bytes).into_iter().map_while(Result::ok).collect();
                    let damaged = read_chars(packing, bytes).iter().any(Result::is_err);
                    proptest::prop_assert_eq!(read, good + if damaged { "\u{FFFD}" } else { "" });
                }
            }
            let utf8 = RecordText::encoded(&bytes, None);
            proptest::prop_assert_eq!(utf8.chars().collect::<String>(), String::from_utf8_lossy(&bytes));
        }
    }
}
