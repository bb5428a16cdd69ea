//! Letters in about a byte each: a static prefix code for the texts side
//! records keep.
//!
//! Motivation: a node's side record keeps letters (a short text's letters,
//! a long text's lead and headline: lowercase letters and digits), and
//! they were most of its bytes: two a Han letter, one an ASCII one
//! ([`crate::compact_text`]). Chinese text carries about ten bits a Han
//! character and English four or five a letter, so a code that gives the
//! common characters short codes keeps the same letters in about a third
//! less (issue 49: side records down by half).
//!
//! Design: a canonical Huffman code with a fixed table
//! ([`table`], written by `scripts/make-text-code` from jieba-rs's word list
//! and the letter frequencies of English; no text the engine is judged on):
//! the 2 048 commonest Han characters, the lowercase ASCII letters and
//! digits, the field separator, and two escapes, one for any other Han
//! character (its offset in the block, 15 bits) and one for any other
//! character (its code point, 21 bits). Codes are 5 to 15 bits, written
//! from the high bit down; the last byte is filled with one bits, which no
//! code shorter than the longest begins with, so the reader stops there.
//! A reader looks a code up by its first [`PRIMARY_BITS`] bits, and a
//! longer one by the canonical code's first code of each length.
//!
//! Consequences: the table is part of the state format (side records of
//! tags 5 and 6 in [`crate::engine`]); changing it means new record tags.
//! A text of another script may code longer than its UTF-8, which is why
//! the encoder ([`crate::encoding::Encoder::text`]) keeps whichever is
//! shorter. Decoding checks every character and never panics.

use std::sync::LazyLock;

mod table;

/// A Han character outside the table follows this symbol as its offset
/// from [`HAN_START`] in [`HAN_OFFSET_BITS`] bits.
const HAN_ESCAPE: char = '\u{E000}';
/// Any other character follows this symbol as its code point in
/// [`CODE_POINT_BITS`] bits.
const ANY_ESCAPE: char = '\u{E001}';
const HAN_START: u32 = 0x4E00;
const HAN_END: u32 = 0x9FFF;
const HAN_OFFSET_BITS: u32 = 15;
const CODE_POINT_BITS: u32 = 21;
/// The longest code the table may have.
const MAX_BITS: u32 = 16;
/// Codes this short are found by one lookup.
const PRIMARY_BITS: u32 = 11;

/// A symbol's code and length, packed: code above, length in the low
/// byte (0: no code).
type PackedCode = u32;

fn pack(code: u32, length: u32) -> PackedCode {
    code << 8 | length
}

/// What a symbol of the table stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Symbol {
    Char(char),
    HanEscape,
    AnyEscape,
}

struct Code {
    ascii: [PackedCode; 128],
    han: Box<[PackedCode]>,
    han_escape: PackedCode,
    any_escape: PackedCode,
    /// By a code's first [`PRIMARY_BITS`] bits: its symbol's index and
    /// length (`index << 8 | length`), or 0 for a longer code.
    primary: Box<[u32]>,
    /// Per length: the first code of that length and the index of its
    /// symbol, and how many there are.
    first_code: [u32; MAX_BITS as usize + 1],
    first_index: [u32; MAX_BITS as usize + 1],
    count: [u32; MAX_BITS as usize + 1],
    symbols: Box<[Symbol]>,
}

static CODE: LazyLock<Code> = LazyLock::new(|| Code::new(table::SYMBOLS_OF_LENGTH, table::SYMBOLS));

impl Code {
    /// The canonical code of `symbols`, `symbols_of_length[n]` of them of
    /// length `n` in turn.
    fn new(symbols_of_length: [u16; MAX_BITS as usize + 1], symbols: &str) -> Code {
        let symbols: Box<[Symbol]> = symbols
            .chars()
            .map(|c| match c {
                HAN_ESCAPE => Symbol::HanEscape,
                ANY_ESCAPE => Symbol::AnyEscape,
                c => Symbol::Char(c),
            })
            .collect();
        let mut code = Code {
            ascii: [0; 128],
            han: vec![0; (HAN_END - HAN_START + 1) as usize].into_boxed_slice(),
            han_escape: 0,
            any_escape: 0,
            primary: vec![0; 1 << PRIMARY_BITS].into_boxed_slice(),
            first_code: [0; MAX_BITS as usize + 1],
            first_index: [0; MAX_BITS as usize + 1],
            count: [0; MAX_BITS as usize + 1],
            symbols,
        };
        let mut next_code = 0u32;
        let mut index = 0u32;
        for length in 1..=MAX_BITS {
            next_code <<= 1;
            let count = u32::from(symbols_of_length[length as usize]);
            code.first_code[length as usize] = next_code;
            code.first_index[length as usize] = index;
            code.count[length as usize] = count;
            for offset in 0..count {
                let value = next_code + offset;
                code.place(index + offset, value, length);
            }
            next_code += count;
            index += count;
        }
        code
    }

    /// Enters symbol `index`, of code `value` and `length`, in the tables.
    fn place(&mut self, index: u32, value: u32, length: u32) {
        let packed = pack(value, length);
        match self.symbols[index as usize] {
            Symbol::HanEscape => self.han_escape = packed,
            Symbol::AnyEscape => self.any_escape = packed,
            Symbol::Char(c) if c.is_ascii() => self.ascii[c as usize] = packed,
            Symbol::Char(c) => {
                if let Some(slot) = (u32::from(c))
                    .checked_sub(HAN_START)
                    .and_then(|offset| self.han.get_mut(offset as usize))
                {
                    *slot = packed;
                }
            }
        }
        if length <= PRIMARY_BITS {
            let spread = PRIMARY_BITS - length;
            let first = (value << spread) as usize;
            for slot in &mut self.primary[first..first + (1 << spread)] {
                *slot = index << 8 | length;
            }
        }
    }

    /// How `c` is written: one code, or an escape's code and its payload
    /// (value and width in bits).
    fn codes_of(&self, c: char) -> (PackedCode, Option<(u32, u32)>) {
        let value = u32::from(c);
        if value < 128 {
            let packed = self.ascii[value as usize];
            if packed != 0 {
                return (packed, None);
            }
        } else if (HAN_START..=HAN_END).contains(&value) {
            let packed = self.han[(value - HAN_START) as usize];
            if packed != 0 {
                return (packed, None);
            }
            return (self.han_escape, Some((value - HAN_START, HAN_OFFSET_BITS)));
        }
        (self.any_escape, Some((value, CODE_POINT_BITS)))
    }

    /// The symbol whose code begins the 16 bits `window` (high bit first),
    /// and its length; `None` if no code does.
    fn symbol_at(&self, window: u32) -> Option<(Symbol, u32)> {
        let entry = self.primary[(window >> (MAX_BITS - PRIMARY_BITS)) as usize];
        if entry & 0xFF != 0 {
            return Some((self.symbols[(entry >> 8) as usize], entry & 0xFF));
        }
        for length in PRIMARY_BITS + 1..=MAX_BITS {
            let value = window >> (MAX_BITS - length);
            let offset = value.wrapping_sub(self.first_code[length as usize]);
            if offset < self.count[length as usize] {
                let index = self.first_index[length as usize] + offset;
                return Some((self.symbols[index as usize], length));
            }
        }
        None
    }
}

/// Writes bits high bit first.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    pending: u64,
    pending_bits: u32,
}

impl BitWriter<'_> {
    fn put(&mut self, value: u32, bits: u32) {
        self.pending = self.pending << bits | u64::from(value);
        self.pending_bits += bits;
        while self.pending_bits >= 8 {
            self.pending_bits -= 8;
            self.out.push((self.pending >> self.pending_bits) as u8);
        }
    }

    fn put_packed(&mut self, packed: PackedCode) {
        self.put(packed >> 8, packed & 0xFF);
    }

    /// Fills the last byte with one bits.
    fn finish(mut self) {
        if self.pending_bits > 0 {
            let fill = 8 - self.pending_bits;
            self.put((1 << fill) - 1, fill);
        }
    }
}

/// Appends `text`'s coded form to `out`.
pub fn encode(text: &str, out: &mut Vec<u8>) {
    let code = &*CODE;
    let mut writer = BitWriter {
        out,
        pending: 0,
        pending_bits: 0,
    };
    for c in text.chars() {
        let (packed, payload) = code.codes_of(c);
        writer.put_packed(packed);
        if let Some((value, bits)) = payload {
            writer.put(value, bits);
        }
    }
    writer.finish();
}

/// How many bytes [`encode`] writes for `text`.
pub fn encoded_len(text: &str) -> usize {
    let code = &*CODE;
    let bits: usize = text
        .chars()
        .map(|c| {
            let (packed, payload) = code.codes_of(c);
            ((packed & 0xFF) + payload.map_or(0, |(_, bits)| bits)) as usize
        })
        .sum();
    bits.div_ceil(8)
}

/// The text whose coded form is `bytes`, or what is wrong with them.
pub fn decode(bytes: &[u8]) -> Result<String, &'static str> {
    let mut text = String::with_capacity(bytes.len() * 2);
    for c in chars(bytes) {
        text.push(c?);
    }
    Ok(text)
}

/// The characters whose coded form is `bytes`, one at a time: after the
/// first error, nothing.
pub fn chars(bytes: &[u8]) -> Chars<'_> {
    Chars {
        code: &CODE,
        bytes,
        position: 0,
    }
}

/// See [`chars`].
#[derive(Clone)]
pub struct Chars<'a> {
    code: &'a Code,
    bytes: &'a [u8],
    /// In bits.
    position: usize,
}

impl Chars<'_> {
    /// The 32 bits from `position` on (one bits past the end).
    fn peek(&self) -> u32 {
        let start = self.position / 8;
        let mut word = [0xFF; 8];
        let available = self.bytes.len().saturating_sub(start).min(8);
        word[..available].copy_from_slice(&self.bytes[start..start + available]);
        (u64::from_be_bytes(word) << (self.position % 8) >> 32) as u32
    }

    fn remaining_bits(&self) -> usize {
        self.bytes.len() * 8 - self.position
    }

    fn fail(&mut self, error: &'static str) -> Option<Result<char, &'static str>> {
        self.position = self.bytes.len() * 8;
        Some(Err(error))
    }
}

impl Iterator for Chars<'_> {
    type Item = Result<char, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        let remaining = self.remaining_bits();
        if remaining == 0 {
            return None;
        }
        let window = self.peek();
        // The last byte's fill: ones, fewer than the shortest code that
        // is all ones (the longest).
        if remaining < 8 && window >> (32 - remaining) == (1 << remaining) - 1 {
            self.position = self.bytes.len() * 8;
            return None;
        }
        let Some((symbol, length)) = self.code.symbol_at(window >> (32 - MAX_BITS)) else {
            return self.fail("text is not in the letter code");
        };
        let payload_bits = match symbol {
            Symbol::Char(_) => 0,
            Symbol::HanEscape => HAN_OFFSET_BITS,
            Symbol::AnyEscape => CODE_POINT_BITS,
        };
        if (length + payload_bits) as usize > remaining {
            return self.fail("text cut short");
        }
        self.position += length as usize;
        let payload = match payload_bits {
            0 => 0,
            bits => self.peek() >> (32 - bits),
        };
        self.position += payload_bits as usize;
        let c = match symbol {
            Symbol::Char(c) => Some(c),
            Symbol::HanEscape => {
                char::from_u32(HAN_START + payload).filter(|_| payload <= HAN_END - HAN_START)
            }
            Symbol::AnyEscape => char::from_u32(payload),
        };
        match c {
            Some(c) => Some(Ok(c)),
            None => self.fail("text is not Unicode"),
        }
    }
}

#[cfg(test)]
mod tests;
