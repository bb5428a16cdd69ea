//! Byte encoding shared by the durable state ([`crate::persist`]) and the
//! engine's off-heap side data ([`crate::engine`]): little-endian
//! fixed-width integers, length-prefixed strings and lists; and, for side
//! records, variable-length counts and text in its shorter form
//! ([`Encoder::text`]).
//!
//! Motivation: a node's side record has one layout wherever it is written
//! (the side file, the snapshot), so a snapshot copies records as bytes.

pub use crate::record_text::Packing;

/// The forms a text may be in, by the layout that holds it; its header
/// names which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextForms {
    /// UTF-8 or compact, one bit (side records of tags 3 and 4).
    CompactOrUtf8,
    /// UTF-8, compact or coded, two bits (tags 5 and 6): a text no code
    /// keeps short (rare characters, traditional script) stays compact.
    Any,
}

impl TextForms {
    fn header_bits(self) -> u32 {
        match self {
            TextForms::CompactOrUtf8 => 1,
            TextForms::Any => 2,
        }
    }
}

/// A malformed payload inside a valid frame (a format error, not a torn write).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed record: {0}")]
pub struct DecodeError(pub &'static str);

/// The width byte of a list [`Encoder::ascending_u32s`] writes whole.
const UNSORTED: u8 = 0xFF;

/// Writes values into a payload.
#[derive(Debug, Default)]
pub struct Encoder {
    pub bytes: Vec<u8>,
}

impl Encoder {
    pub fn u8(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }
    pub fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }
    pub fn i64(&mut self, value: i64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }
    pub fn count(&mut self, length: usize) -> &mut Self {
        self.u32(u32::try_from(length).unwrap_or(u32::MAX))
    }
    pub fn str(&mut self, text: &str) -> &mut Self {
        self.count(text.len());
        self.bytes.extend_from_slice(text.as_bytes());
        self
    }
    pub fn u32s(&mut self, values: &[u32]) -> &mut Self {
        self.count(values.len());
        self.u32_values(values)
    }
    /// The values alone, each in 4 bytes (after whatever count the list's
    /// form has).
    fn u32_values(&mut self, values: &[u32]) -> &mut Self {
        for &value in values {
            self.u32(value);
        }
        self
    }
    pub fn u64s(&mut self, values: &[u64]) -> &mut Self {
        self.count(values.len());
        for &value in values {
            self.u64(value);
        }
        self
    }
    /// `value` in 7-bit groups, low first, the high bit set on every
    /// byte but the last (LEB128): one byte below 128.
    pub fn varint(&mut self, mut value: u64) -> &mut Self {
        while value >= 0x80 {
            self.bytes.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
        self
    }
    /// `text` in the shortest of the `forms` (a packed form is smaller
    /// than UTF-8 and slower to read; on a tie the quicker to read): a
    /// varint of the length in bytes, with the form in its low bits, comes
    /// first. The reader is told the forms by what it reads (a record's
    /// tags).
    pub fn text(&mut self, text: &str, forms: TextForms) -> &mut Self {
        let coded = match forms {
            TextForms::CompactOrUtf8 => usize::MAX,
            TextForms::Any => Packing::Coded.encoded_len(text),
        };
        let (length, form) = [
            (text.len(), None),
            (Packing::Compact.encoded_len(text), Some(Packing::Compact)),
            (coded, Some(Packing::Coded)),
        ]
        .into_iter()
        .min_by_key(|&(length, _)| length)
        .unwrap_or((text.len(), None));
        let form_number = match form {
            None => 0,
            Some(Packing::Compact) => 1,
            Some(Packing::Coded) => 2,
        };
        self.varint(((length as u64) << forms.header_bits()) | form_number);
        match form {
            Some(packing) => packing.encode(text, &mut self.bytes),
            None => self.bytes.extend_from_slice(text.as_bytes()),
        }
        self
    }
    /// A list of 32-bit values after a varint count.
    pub fn short_u32s(&mut self, values: &[u32]) -> &mut Self {
        self.varint(values.len() as u64);
        self.u32_values(values)
    }
    /// An ascending list of 32-bit values as its gaps, each in the bits
    /// the largest gap needs: a varint count, then (when not empty) a byte
    /// with that width and the gaps packed low bit first. A bottom-k
    /// sketch's 64 values take about 26 bits each so. A list that is not
    /// ascending is written whole after the width byte [`UNSORTED`].
    pub fn ascending_u32s(&mut self, values: &[u32]) -> &mut Self {
        self.varint(values.len() as u64);
        if values.is_empty() {
            return self;
        }
        if values.windows(2).any(|pair| pair[0] > pair[1]) {
            return self.u8(UNSORTED).u32_values(values);
        }
        let mut previous = 0;
        let largest_gap = values
            .iter()
            .map(|&value| value - std::mem::replace(&mut previous, value))
            .max()
            .unwrap_or(0);
        let width = 32 - largest_gap.leading_zeros();
        self.u8(width as u8);
        let (mut pending, mut pending_bits, mut previous) = (0u64, 0u32, 0u32);
        for &value in values {
            pending |= u64::from(value - previous) << pending_bits;
            pending_bits += width;
            previous = value;
            while pending_bits >= 8 {
                self.bytes.push(pending as u8);
                pending >>= 8;
                pending_bits -= 8;
            }
        }
        if pending_bits > 0 {
            self.bytes.push(pending as u8);
        }
        self
    }
}

/// Reads values from a payload.
#[derive(Debug)]
pub struct Decoder<'a> {
    data: &'a [u8],
    position: usize,
}

impl<'a> Decoder<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Decoder { data, position: 0 }
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .position
            .checked_add(count)
            .ok_or(DecodeError("length overflow"))?;
        let bytes = self
            .data
            .get(self.position..end)
            .ok_or(DecodeError("record cut short"))?;
        self.position = end;
        Ok(bytes)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut buffer = [0u8; 8];
        buffer.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(buffer))
    }
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        let mut buffer = [0u8; 8];
        buffer.copy_from_slice(self.take(8)?);
        Ok(i64::from_le_bytes(buffer))
    }
    pub fn count(&mut self) -> Result<usize, DecodeError> {
        let length = self.u32()? as usize;
        // Every element takes at least one byte: a larger count is damage.
        if length > self.data.len() - self.position {
            return Err(DecodeError("list longer than its record"));
        }
        Ok(length)
    }
    pub fn str(&mut self) -> Result<&'a str, DecodeError> {
        let length = self.count()?;
        // SIMD validation: side records are decoded each time their node is
        // a candidate, and std's check of CJK text showed at 4% of a document.
        simdutf8::basic::from_utf8(self.take(length)?).map_err(|_| DecodeError("text is not UTF-8"))
    }
    pub fn u32s(&mut self) -> Result<Vec<u32>, DecodeError> {
        let mut values = Vec::new();
        self.u32s_into(&mut values)?;
        Ok(values)
    }
    /// Reads `count` values of 4 bytes each into `values` (cleared first).
    fn u32_values_into(&mut self, count: usize, values: &mut Vec<u32>) -> Result<(), DecodeError> {
        let bytes = self.take(count.checked_mul(4).ok_or(DecodeError("length overflow"))?)?;
        values.clear();
        values.extend(
            bytes
                .chunks_exact(4)
                .map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])),
        );
        Ok(())
    }
    /// Skips `count` values of 4 bytes each.
    fn skip_u32_values(&mut self, count: usize) -> Result<(), DecodeError> {
        self.skip(count.checked_mul(4).ok_or(DecodeError("length overflow"))?)
    }
    pub fn u64s(&mut self) -> Result<Vec<u64>, DecodeError> {
        let mut values = Vec::new();
        self.u64s_into(&mut values)?;
        Ok(values)
    }
    /// Reads a list written by [`Encoder::u64s`] into `values` (cleared
    /// first), reusing its allocation.
    pub fn u64s_into(&mut self, values: &mut Vec<u64>) -> Result<(), DecodeError> {
        let length = self.count()?;
        let bytes = self.take(
            length
                .checked_mul(8)
                .ok_or(DecodeError("length overflow"))?,
        )?;
        values.clear();
        values.extend(bytes.chunks_exact(8).map(|chunk| {
            let mut buffer = [0u8; 8];
            buffer.copy_from_slice(chunk);
            u64::from_le_bytes(buffer)
        }));
        Ok(())
    }
    /// Skips a list written by [`Encoder::u64s`].
    pub fn skip_u64s(&mut self) -> Result<(), DecodeError> {
        let length = self.count()?;
        self.take(
            length
                .checked_mul(8)
                .ok_or(DecodeError("length overflow"))?,
        )?;
        Ok(())
    }
    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.position
    }
    /// The next `count` bytes as they are: values of a fixed width read
    /// together, one bounds check for all.
    pub fn bytes(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        self.take(count)
    }
    /// Skips `count` bytes.
    pub fn skip(&mut self, count: usize) -> Result<(), DecodeError> {
        self.take(count).map(|_| ())
    }
    /// Skips a list written by [`Encoder::u32s`].
    pub fn skip_u32s(&mut self) -> Result<(), DecodeError> {
        let length = self.count()?;
        self.skip_u32_values(length)
    }
    /// Skips a string written by [`Encoder::str`] (not checked for UTF-8).
    pub fn skip_str(&mut self) -> Result<(), DecodeError> {
        let length = self.count()?;
        self.skip(length)
    }
    /// Reads a list written by [`Encoder::u32s`] into `values` (cleared
    /// first), reusing its allocation.
    pub fn u32s_into(&mut self, values: &mut Vec<u32>) -> Result<(), DecodeError> {
        let length = self.count()?;
        self.u32_values_into(length, values)
    }
    /// Reads a value written by [`Encoder::varint`].
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7F)
                .checked_shl(shift)
                .filter(|part| part >> shift == u64::from(byte & 0x7F))
                .ok_or(DecodeError("varint overflow"))?;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(DecodeError("varint overflow"))
    }
    /// A varint count of elements of at least one byte each, checked
    /// against what is left.
    fn short_count(&mut self) -> Result<usize, DecodeError> {
        let length = usize::try_from(self.varint()?).map_err(|_| DecodeError("length overflow"))?;
        if length > self.data.len() - self.position {
            return Err(DecodeError("list longer than its record"));
        }
        Ok(length)
    }
    /// The varint count of a packed list: values may take less than a byte
    /// each (a width of 0 bits, none), so the bound is eight a byte left,
    /// and eight more.
    fn packed_count(&mut self) -> Result<usize, DecodeError> {
        let length = usize::try_from(self.varint()?).map_err(|_| DecodeError("length overflow"))?;
        let left = self.data.len() - self.position;
        if length > left.saturating_add(1).saturating_mul(8) {
            return Err(DecodeError("list longer than its record"));
        }
        Ok(length)
    }
    /// Reads a text written by [`Encoder::text`] with `forms`.
    pub fn text(&mut self, forms: TextForms) -> Result<String, DecodeError> {
        match self.text_bytes(forms)? {
            (bytes, Some(packing)) => packing.decode(bytes).map_err(DecodeError),
            (bytes, None) => simdutf8::basic::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|_| DecodeError("text is not UTF-8")),
        }
    }
    /// A text written by [`Encoder::text`] with `forms`, its bytes kept
    /// to be decoded at its first read ([`crate::record_text`]: most are
    /// never read).
    pub fn record_text(
        &mut self,
        forms: TextForms,
    ) -> Result<crate::record_text::RecordText, DecodeError> {
        let (bytes, packing) = self.text_bytes(forms)?;
        Ok(crate::record_text::RecordText::encoded(bytes, packing))
    }
    /// Skips a text written by [`Encoder::text`] with `forms` (not
    /// checked).
    pub fn skip_text(&mut self, forms: TextForms) -> Result<(), DecodeError> {
        self.text_bytes(forms).map(|_| ())
    }
    /// The bytes of a text written by [`Encoder::text`] with `forms`, and
    /// their packing (`None`: UTF-8).
    pub(crate) fn text_bytes(
        &mut self,
        forms: TextForms,
    ) -> Result<(&'a [u8], Option<Packing>), DecodeError> {
        let header = self.varint()?;
        let bits = forms.header_bits();
        let length = usize::try_from(header >> bits).map_err(|_| DecodeError("length overflow"))?;
        let packing = match header & ((1 << bits) - 1) {
            0 => None,
            1 => Some(Packing::Compact),
            2 => Some(Packing::Coded),
            _ => return Err(DecodeError("unknown text form")),
        };
        Ok((self.take(length)?, packing))
    }
    /// Reads a list written by [`Encoder::short_u32s`] into `values`
    /// (cleared first), reusing its allocation.
    pub fn short_u32s_into(&mut self, values: &mut Vec<u32>) -> Result<(), DecodeError> {
        let length = self.short_count()?;
        self.u32_values_into(length, values)
    }
    /// Reads a list written by [`Encoder::short_u32s`].
    pub fn short_u32s(&mut self) -> Result<Vec<u32>, DecodeError> {
        let mut values = Vec::new();
        self.short_u32s_into(&mut values)?;
        Ok(values)
    }
    /// Skips a list written by [`Encoder::short_u32s`].
    pub fn skip_short_u32s(&mut self) -> Result<(), DecodeError> {
        let length = self.short_count()?;
        self.skip_u32_values(length)
    }
    /// Reads a list written by [`Encoder::ascending_u32s`] into `values`
    /// (cleared first), reusing its allocation.
    pub fn ascending_u32s_into(&mut self, values: &mut Vec<u32>) -> Result<(), DecodeError> {
        let count = self.packed_count()?;
        values.clear();
        if count == 0 {
            return Ok(());
        }
        let width = self.u8()?;
        if width == UNSORTED {
            return self.u32_values_into(count, values);
        }
        if width > 32 {
            return Err(DecodeError("gap width over 32 bits"));
        }
        let width = width as usize;
        let bytes = self.take(packed_len(count, width as u32)?)?;
        let mask = (1u64 << width) - 1;
        let mut value = 0u32;
        values.reserve(count);
        for position in 0..count {
            let bit = position * width;
            // Eight bytes from the gap's first: one load where the list
            // goes on that far, the last few byte by byte.
            let word = match bytes.get(bit / 8..bit / 8 + 8) {
                Some(eight) => u64::from_le_bytes(eight.try_into().unwrap_or_default()),
                None => bytes
                    .get(bit / 8..)
                    .unwrap_or_default()
                    .iter()
                    .rev()
                    .fold(0u64, |word, &byte| word << 8 | u64::from(byte)),
            };
            let gap = (word >> (bit % 8)) & mask;
            value = value
                .checked_add(gap as u32)
                .ok_or(DecodeError("ascending list past 32 bits"))?;
            values.push(value);
        }
        Ok(())
    }
    /// Skips a list written by [`Encoder::ascending_u32s`].
    pub fn skip_ascending_u32s(&mut self) -> Result<(), DecodeError> {
        let count = self.packed_count()?;
        if count == 0 {
            return Ok(());
        }
        match self.u8()? {
            UNSORTED => self.skip_u32_values(count),
            width if width > 32 => Err(DecodeError("gap width over 32 bits")),
            width => self.skip(packed_len(count, u32::from(width))?),
        }
    }
    pub fn is_done(&self) -> bool {
        self.position == self.data.len()
    }
}

/// Bytes of `count` values packed in `width` bits each.
fn packed_len(count: usize, width: u32) -> Result<usize, DecodeError> {
    count
        .checked_mul(width as usize)
        .map(|bits| bits.div_ceil(8))
        .ok_or(DecodeError("length overflow"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_take_one_byte_below_128_and_come_back() {
        let values = [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX];
        let mut encoder = Encoder::default();
        for value in values {
            encoder.varint(value);
        }
        assert_eq!(encoder.bytes[..3], [0, 1, 127]);
        let mut decoder = Decoder::new(&encoder.bytes);
        for value in values {
            assert_eq!(decoder.varint(), Ok(value));
        }
        assert!(decoder.is_done());
        // Eleven bytes, or bits past the 64th, are damage.
        assert!(Decoder::new(&[0xFF; 11]).varint().is_err());
        let mut past = vec![0xFF; 9];
        past.push(0x02);
        assert!(Decoder::new(&past).varint().is_err());
        assert!(Decoder::new(&[0x80]).varint().is_err());
    }

    #[test]
    fn ascending_lists_take_the_bits_of_their_largest_gap() {
        let lists: [&[u32]; 6] = [
            &[],
            &[0],
            &[5, 5, 9],
            &[1 << 20, 3 << 20, u32::MAX],
            &[9, 3],
            &[0, 0, 0],
        ];
        for values in lists {
            let mut encoder = Encoder::default();
            encoder.ascending_u32s(values).ascending_u32s(values);
            let mut decoder = Decoder::new(&encoder.bytes);
            let mut read = vec![7];
            decoder.ascending_u32s_into(&mut read).expect("reads");
            assert_eq!(read, values);
            decoder.skip_ascending_u32s().expect("skips");
            assert!(decoder.is_done(), "{values:?}");
        }
        // 64 gaps below 2^20 take 20 bits each: 160 bytes and two.
        let values: Vec<u32> = (1..=64).map(|step| step * ((1 << 20) - 1)).collect();
        let mut encoder = Encoder::default();
        encoder.ascending_u32s(&values);
        assert_eq!(encoder.bytes.len(), 2 + 160);
        // A width past 32 bits, or gaps past 2^32, are damage.
        assert!(
            Decoder::new(&[1, 33, 0, 0, 0, 0, 0])
                .ascending_u32s_into(&mut Vec::new())
                .is_err()
        );
        let mut past = Encoder::default();
        past.ascending_u32s(&[u32::MAX, u32::MAX]);
        past.bytes[6..10].copy_from_slice(&[0xFF; 4]);
        assert!(
            Decoder::new(&past.bytes)
                .ascending_u32s_into(&mut Vec::new())
                .is_err()
        );
    }

    #[test]
    fn text_is_kept_in_its_shortest_form() {
        for (text, compact) in [
            ("秋景美", 1 + 6),
            ("autumn", 1 + 6),
            ("한국어", 1 + 9),
            ("", 1),
        ] {
            for forms in [TextForms::CompactOrUtf8, TextForms::Any] {
                let mut encoder = Encoder::default();
                encoder.text(text, forms).text(text, forms);
                let shortest = match forms {
                    TextForms::CompactOrUtf8 => compact,
                    TextForms::Any => 1 + Packing::Coded.encoded_len(text).min(compact - 1),
                };
                assert_eq!(encoder.bytes.len(), 2 * shortest, "{text}");
                let mut decoder = Decoder::new(&encoder.bytes);
                assert_eq!(decoder.text(forms).as_deref(), Ok(text));
                decoder.skip_text(forms).expect("skips");
                assert!(decoder.is_done());
            }
        }
        // The code keeps common letters in less than the compact form; rare
        // ones stay compact.
        let letters = "国家统计局今天发布数据显示经济平稳增长";
        assert!(
            Packing::Coded.encoded_len(letters) * 3 < Packing::Compact.encoded_len(letters) * 2
        );
        let rare = "龘靐齉爩";
        let mut encoder = Encoder::default();
        encoder.text(rare, TextForms::Any);
        assert_eq!(encoder.bytes[0] & 3, 1, "compact");
        assert_eq!(
            Decoder::new(&encoder.bytes).text(TextForms::Any).as_deref(),
            Ok(rare)
        );
        // A fourth form is damage.
        assert!(Decoder::new(&[3, 0]).text(TextForms::Any).is_err());
    }
}
