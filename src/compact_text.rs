//! Text in fewer bytes than UTF-8 for the scripts the sidecar mostly keeps:
//! one byte per ASCII character, two per common Han character.
//!
//! Motivation: a node's side record keeps letters of its text (a short
//! text's letters, a long text's lead and headline), and most of them are
//! Han characters, three bytes each in UTF-8. Two bytes suffice for the
//! 20 992 characters of the CJK Unified Ideographs block, which is where
//! nearly all of them are; records are a third smaller for it.
//!
//! Design: each character is one code unit of its own:
//! - `0x00–0x7F`: that ASCII character;
//! - a lead byte and one more byte for the blocks where text mostly is:
//!   `0x80–0xD1` for U+4E00–U+9FFF (Han), `0xD2–0xDF` for U+0080–U+0E7F
//!   (Latin, Greek, Cyrillic, Hebrew, Arabic and more), `0xE0–0xEF` for
//!   U+3000–U+3FFF (CJK punctuation, kana), `0xF0–0xFE` for U+2000–U+2EFF
//!   (general punctuation and symbols);
//! - `0xFF` and three bytes (the code point, little-endian) for any other.
//!
//! Consequences: the format is part of the state (side records); text of
//! other scripts can be longer than its UTF-8, which is why the encoder
//! ([`crate::encoding::Encoder::text`]) keeps whichever of the two is
//! shorter. Decoding checks every code point and never panics. The format is
//! read and written through [`crate::encoding`].

/// The blocks with a two-byte form: first lead byte, last lead byte, and
/// the code point of the first lead's first character.
const TWO_BYTE_BLOCKS: [(u8, u8, u32); 4] = [
    (0x80, 0xD1, 0x4E00),
    (0xD2, 0xDF, 0x0080),
    (0xE0, 0xEF, 0x3000),
    (0xF0, 0xFE, 0x2000),
];

/// Lead byte of a character written as its code point.
const ANY_CHARACTER: u8 = 0xFF;

/// How a character is written: itself (ASCII), a lead byte and one more,
/// or [`ANY_CHARACTER`] and its code point.
enum Form {
    Ascii(u8),
    TwoBytes(u8, u8),
    CodePoint(u32),
}

fn form_of(c: char) -> Form {
    let code = u32::from(c);
    if code < 0x80 {
        return Form::Ascii(code as u8);
    }
    TWO_BYTE_BLOCKS
        .iter()
        .find(|&&(first, last, start)| {
            code >= start && code - start < (u32::from(last - first) + 1) << 8
        })
        .map_or(Form::CodePoint(code), |&(first, _, start)| {
            let offset = code - start;
            Form::TwoBytes(first + (offset >> 8) as u8, offset as u8)
        })
}

/// Appends `text`'s compact form to `out`.
pub fn encode(text: &str, out: &mut Vec<u8>) {
    for c in text.chars() {
        match form_of(c) {
            Form::Ascii(byte) => out.push(byte),
            Form::TwoBytes(lead, low) => out.extend_from_slice(&[lead, low]),
            Form::CodePoint(code) => {
                out.push(ANY_CHARACTER);
                out.extend_from_slice(&code.to_le_bytes()[..3]);
            }
        }
    }
}

/// How many bytes [`encode`] writes for `text`.
pub fn encoded_len(text: &str) -> usize {
    text.chars()
        .map(|c| match form_of(c) {
            Form::Ascii(_) => 1,
            Form::TwoBytes(..) => 2,
            Form::CodePoint(_) => 4,
        })
        .sum()
}

/// The text whose compact form is `bytes`, or what is wrong with them.
pub fn decode(bytes: &[u8]) -> Result<String, &'static str> {
    let mut text = String::with_capacity(bytes.len() * 3 / 2);
    for c in chars(bytes) {
        text.push(c?);
    }
    Ok(text)
}

/// The characters whose compact form is `bytes`, one at a time (a reader
/// that only looks at them need not build the text): after the first
/// error, nothing.
pub fn chars(bytes: &[u8]) -> Chars<'_> {
    Chars { bytes, position: 0 }
}

/// See [`chars`].
#[derive(Debug, Clone)]
pub struct Chars<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl Iterator for Chars<'_> {
    type Item = Result<char, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.bytes;
        let position = self.position;
        let lead = *bytes.get(position)?;
        let (code, width) = match lead {
            0x00..=0x7F => (u32::from(lead), 1),
            ANY_CHARACTER => match bytes.get(position + 1..position + 4) {
                Some(code_bytes) => (
                    u32::from_le_bytes([code_bytes[0], code_bytes[1], code_bytes[2], 0]),
                    4,
                ),
                None => return self.fail("text cut short"),
            },
            _ => {
                let Some(&low) = bytes.get(position + 1) else {
                    return self.fail("text cut short");
                };
                // The blocks of TWO_BYTE_BLOCKS, matched directly: this
                // runs for every letter of every record read.
                let (first, start) = match lead {
                    0x80..=0xD1 => (0x80, 0x4E00),
                    0xD2..=0xDF => (0xD2, 0x0080),
                    0xE0..=0xEF => (0xE0, 0x3000),
                    _ => (0xF0, 0x2000),
                };
                (start + (u32::from(lead - first) << 8 | u32::from(low)), 2)
            }
        };
        match char::from_u32(code) {
            Some(c) => {
                self.position = position + width;
                Some(Ok(c))
            }
            None => self.fail("text is not Unicode"),
        }
    }
}

impl Chars<'_> {
    /// `error`, and nothing after it.
    fn fail(&mut self, error: &'static str) -> Option<Result<char, &'static str>> {
        self.position = self.bytes.len();
        Some(Err(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn han_takes_two_bytes_and_ascii_one() {
        let mut out = Vec::new();
        encode("一a龥", &mut out);
        assert_eq!(out, [0x80, 0x00, b'a', 0xD1, 0xA5]);
        assert_eq!(decode(&out).as_deref(), Ok("一a龥"));
        assert_eq!(encoded_len("一a龥"), 5);
    }

    #[test]
    fn every_block_edge_comes_back() {
        for &(first, last, start) in &TWO_BYTE_BLOCKS {
            let end = start + ((u32::from(last - first) + 1) << 8);
            for code in [start - 1, start, end - 1, end] {
                let Some(c) = char::from_u32(code) else {
                    continue;
                };
                let text = c.to_string();
                let mut out = Vec::new();
                encode(&text, &mut out);
                assert_eq!(out.len(), encoded_len(&text), "{code:#x}");
                assert_eq!(decode(&out).as_deref(), Ok(text.as_str()), "{code:#x}");
            }
        }
    }

    #[test]
    fn damage_is_an_error() {
        assert!(decode(&[0x80]).is_err());
        assert!(decode(&[0xFF, 0x00]).is_err());
        // A surrogate and a code point past Unicode.
        assert!(decode(&[0xFF, 0x00, 0xD8, 0x00]).is_err());
        assert!(decode(&[0xFF, 0x00, 0x00, 0x11]).is_err());
    }

    #[test]
    fn the_decoders_blocks_are_the_table() {
        for &(first, last, start) in &TWO_BYTE_BLOCKS {
            for lead in first..=last {
                let code = start + (u32::from(lead - first) << 8) + 7;
                assert_eq!(
                    decode(&[lead, 7]),
                    Ok(char::from_u32(code).expect("char").to_string())
                );
            }
        }
    }
}
