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
const HAN_ESCAPE_SYMBOL: u32 = HAN_ESCAPE as u32;
const ANY_ESCAPE_SYMBOL: u32 = ANY_ESCAPE as u32;
const HAN_START: u32 = 0x4E00;
const HAN_END: u32 = 0x9FFF;
const HAN_OFFSET_BITS: u32 = 15;
const CODE_POINT_BITS: u32 = 21;
/// The longest code the table may have.
const MAX_BITS: u32 = 16;
/// The most bits one symbol takes: the longest code and a code point.
const SYMBOL_BITS: u32 = MAX_BITS + CODE_POINT_BITS;
/// Codes this short are found by one lookup.
const PRIMARY_BITS: u32 = 12;

/// A symbol's code and length, packed: code above, length in the low
/// byte (0: no code).
type PackedCode = u32;

fn pack(code: u32, length: u32) -> PackedCode {
    code << 8 | length
}

struct Code {
    ascii: [PackedCode; 128],
    han: Box<[PackedCode]>,
    han_escape: PackedCode,
    any_escape: PackedCode,
    /// By a code's first [`PRIMARY_BITS`] bits: its symbol and length
    /// (`symbol << 8 | length`, a symbol being its character or an
    /// escape), or 0 for a longer code.
    primary: Box<[u32; 1 << PRIMARY_BITS]>,
    /// Per length: the first code of that length and the index of its
    /// symbol, and how many there are.
    first_code: [u32; MAX_BITS as usize + 1],
    first_index: [u32; MAX_BITS as usize + 1],
    count: [u32; MAX_BITS as usize + 1],
    /// Characters, and [`HAN_ESCAPE`] and [`ANY_ESCAPE`] for the escapes.
    symbols: Box<[char]>,
}

static CODE: LazyLock<Code> = LazyLock::new(|| Code::new(table::SYMBOLS_OF_LENGTH, table::SYMBOLS));

impl Code {
    /// The canonical code of `symbols`, `symbols_of_length[n]` of them of
    /// length `n` in turn.
    fn new(symbols_of_length: [u16; MAX_BITS as usize + 1], symbols: &str) -> Code {
        let symbols: Box<[char]> = symbols.chars().collect();
        let mut code = Code {
            ascii: [0; 128],
            han: vec![0; (HAN_END - HAN_START + 1) as usize].into_boxed_slice(),
            han_escape: 0,
            any_escape: 0,
            primary: Box::new([0; 1 << PRIMARY_BITS]),
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
        let symbol = self.symbols[index as usize];
        match symbol {
            HAN_ESCAPE => self.han_escape = packed,
            ANY_ESCAPE => self.any_escape = packed,
            c if c.is_ascii() => self.ascii[c as usize] = packed,
            c => {
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
                *slot = u32::from(symbol) << 8 | length;
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

    /// The symbol whose code begins the 16 bits `window` (high bit first)
    /// and its length, packed (`symbol << 8 | length`); 0 if no code does.
    fn symbol_at(&self, window: u32) -> u32 {
        let entry = self.primary
            [(window >> (MAX_BITS - PRIMARY_BITS)) as usize & ((1 << PRIMARY_BITS) - 1)];
        if entry != 0 {
            return entry;
        }
        for length in PRIMARY_BITS + 1..=MAX_BITS {
            let value = window >> (MAX_BITS - length);
            let offset = value.wrapping_sub(self.first_code[length as usize]);
            if offset < self.count[length as usize] {
                let index = self.first_index[length as usize] + offset;
                return u32::from(self.symbols[index as usize]) << 8 | length;
            }
        }
        0
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
        next_byte: 0,
        buffer: 0,
        buffered: 0,
    }
}

/// See [`chars`]. Reads the text through a 64-bit buffer: eight bytes at
/// a time while eight remain (this runs for every letter of every record
/// read), then byte by byte.
#[derive(Clone)]
pub struct Chars<'a> {
    code: &'a Code,
    bytes: &'a [u8],
    /// The next byte not yet counted in `buffered`.
    next_byte: usize,
    /// The bits not yet read, from the high bit down; the bits below the
    /// `buffered` high ones are zero or the next bytes' own bits.
    buffer: u64,
    buffered: u32,
}

impl Chars<'_> {
    /// Fills the buffer to at least 57 bits, or with every byte left,
    /// when it holds fewer than a symbol may take.
    fn refill(&mut self) {
        if self.buffered >= SYMBOL_BITS {
            return;
        }
        if let Some(word) = self
            .bytes
            .get(self.next_byte..self.next_byte + 8)
            .and_then(|word| <[u8; 8]>::try_from(word).ok())
        {
            // The bytes past the whole ones taken land in the low bits:
            // they are the bits the next refill puts there again.
            self.buffer |= u64::from_be_bytes(word) >> self.buffered;
            let taken = (63 - self.buffered) / 8;
            self.next_byte += taken as usize;
            self.buffered += taken * 8;
            return;
        }
        while self.buffered <= 56 {
            let Some(&byte) = self.bytes.get(self.next_byte) else {
                return;
            };
            self.buffer |= u64::from(byte) << (56 - self.buffered);
            self.buffered += 8;
            self.next_byte += 1;
        }
    }

    fn fail(&mut self, error: &'static str) -> Option<Result<char, &'static str>> {
        self.next_byte = self.bytes.len();
        self.buffered = 0;
        Some(Err(error))
    }
}

impl Iterator for Chars<'_> {
    type Item = Result<char, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        self.refill();
        let buffered = self.buffered;
        // Most letters: a character (not an escape) whose code is found by
        // one lookup in bits all buffered.
        if buffered >= PRIMARY_BITS {
            let entry = self.code.primary[(self.buffer >> (64 - PRIMARY_BITS)) as usize];
            let (symbol, length) = (entry >> 8, entry & 0xFF);
            if length != 0
                && symbol < HAN_ESCAPE_SYMBOL
                && let Some(c) = char::from_u32(symbol)
            {
                self.buffer <<= length;
                self.buffered -= length;
                return Some(Ok(c));
            }
        }
        if buffered == 0 {
            return None;
        }
        // Under SYMBOL_BITS buffered, every byte is in: ones past the
        // text. Over, only bits buffered are read.
        let window = self.buffer | u64::MAX.checked_shr(buffered).unwrap_or(0);
        // The last byte's fill: ones, fewer than the shortest code that
        // is all ones (the longest).
        if buffered < 8 && window >> (64 - buffered) == (1 << buffered) - 1 {
            self.buffered = 0;
            return None;
        }
        let entry = self.code.symbol_at((window >> (64 - MAX_BITS)) as u32);
        if entry == 0 {
            return self.fail("text is not in the letter code");
        }
        let (symbol, length) = (entry >> 8, entry & 0xFF);
        let payload_bits = match symbol {
            HAN_ESCAPE_SYMBOL => HAN_OFFSET_BITS,
            ANY_ESCAPE_SYMBOL => CODE_POINT_BITS,
            _ => 0,
        };
        let width = length + payload_bits;
        if width > buffered {
            return self.fail("text cut short");
        }
        self.buffer <<= width;
        self.buffered -= width;
        let payload = match payload_bits {
            0 => 0,
            bits => (window << length >> (64 - bits)) as u32,
        };
        let c = match symbol {
            HAN_ESCAPE_SYMBOL => {
                char::from_u32(HAN_START + payload).filter(|_| payload <= HAN_END - HAN_START)
            }
            ANY_ESCAPE_SYMBOL => char::from_u32(payload),
            _ => char::from_u32(symbol),
        };
        match c {
            Some(c) => Some(Ok(c)),
            None => self.fail("text is not Unicode"),
        }
    }
}

#[cfg(test)]
mod tests;
