//! Byte encoding shared by the durable state ([`crate::persist`]) and the
//! engine's off-heap side data ([`crate::engine`]): little-endian
//! fixed-width integers, length-prefixed strings and lists.
//!
//! Motivation: a node's side record has one layout wherever it is written
//! (the side file, the snapshot), so a snapshot copies records as bytes.

/// A malformed payload inside a valid frame (a format error, not a torn write).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed record: {0}")]
pub struct DecodeError(pub &'static str);

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
        let length = self.count()?;
        let bytes = self.take(
            length
                .checked_mul(4)
                .ok_or(DecodeError("length overflow"))?,
        )?;
        Ok(bytes
            .chunks_exact(4)
            .map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            .collect())
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
    /// Skips `count` bytes.
    pub fn skip(&mut self, count: usize) -> Result<(), DecodeError> {
        self.take(count).map(|_| ())
    }
    /// Skips a list written by [`Encoder::u32s`].
    pub fn skip_u32s(&mut self) -> Result<(), DecodeError> {
        let length = self.count()?;
        self.skip(
            length
                .checked_mul(4)
                .ok_or(DecodeError("length overflow"))?,
        )
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
        let bytes = self.take(
            length
                .checked_mul(4)
                .ok_or(DecodeError("length overflow"))?,
        )?;
        values.clear();
        values.extend(
            bytes
                .chunks_exact(4)
                .map(|chunk| u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])),
        );
        Ok(())
    }
    pub fn is_done(&self) -> bool {
        self.position == self.data.len()
    }
}
