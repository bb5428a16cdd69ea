//! One node's side record: its layout, and how it is written and read.
//!
//! Motivation: the engine's side file, the log (an added node's effect
//! carries its record) and snapshots all hold the same record; one layout,
//! read in one place, lets a snapshot copy records as bytes and recovery
//! read them without decoding what it does not need.
//!
//! Design: fingerprint, root (at a fixed offset, [`ROOT_OFFSET`]), the
//! exact hashes, then the short text and the long text, each after a
//! presence byte ([`put_side`], [`get_side`]). Readers that need one part
//! skip the others: the root alone, the texts, the exact hashes
//! ([`record_has_exact_hash`], no allocation), or what the candidate
//! indexes need ([`RecordKeys`], into reused buffers).
//!
//! Consequences: the layout is part of the state format (snapshots and the
//! log); changing it is a format change (`crate::persist`).

use crate::confirm::{LongText, ShortText, UNKNOWN_WEIGHT};
use crate::encoding::{DecodeError, Decoder, Encoder};
use crate::units::Fingerprint;

/// Byte offset of the root in a record (after the fingerprint).
const ROOT_OFFSET: usize = 8;

/// The root named by an encoded record.
pub(super) fn record_root(record: &[u8]) -> Option<Fingerprint> {
    let bytes = record.get(ROOT_OFFSET..ROOT_OFFSET + 8)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// The texts of an encoded record (skipping its fingerprint, root and
/// exact hashes).
pub(super) fn record_texts(
    record: &[u8],
) -> Result<(Option<ShortText>, Option<LongText>), DecodeError> {
    let mut decoder = Decoder::new(record);
    decoder.u64()?;
    decoder.u64()?;
    decoder.skip_u64s()?;
    Ok((get_short(&mut decoder)?, get_long(&mut decoder)?))
}

/// The short text of an encoded record, the rest left undecoded.
pub(super) fn record_short_text(record: &[u8]) -> Result<Option<ShortText>, DecodeError> {
    let mut decoder = Decoder::new(record);
    decoder.skip(16)?;
    decoder.skip_u64s()?;
    get_short(&mut decoder)
}

/// Decodes a whole record.
pub(super) fn decode_record(record: &[u8]) -> Result<SideRecord, DecodeError> {
    get_side(&mut Decoder::new(record))
}

/// Whether an encoded record lists `exact_hash` (without allocating).
pub(super) fn record_has_exact_hash(record: &[u8], exact_hash: u64) -> bool {
    let mut decoder = Decoder::new(record);
    if decoder.skip(16).is_err() {
        return false;
    }
    let Ok(count) = decoder.count() else {
        return false;
    };
    (0..count).any(|_| matches!(decoder.u64(), Ok(hash) if hash == exact_hash))
}

/// The length of the side record at `decoder`'s position, which is moved
/// past it; checks the structure without decoding (no allocation).
pub fn skip_side(decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
    decoder.skip(16)?;
    decoder.skip_u64s()?;
    let short_tag = decoder.u8()?;
    if short_tag != 0 {
        decoder.skip_u32s()?;
        decoder.skip_str()?;
        decoder.skip(16)?;
        if short_tag == 2 {
            decoder.skip(5)?;
        }
    }
    let long_tag = decoder.u8()?;
    if long_tag != 0 {
        decoder.skip_u32s()?;
        if decoder.u8()? != 0 {
            decoder.skip_str()?;
        }
        decoder.skip_str()?;
        decoder.skip_u32s()?;
        if long_tag != 1 {
            decoder.skip(4)?;
        }
        if long_tag == 3 {
            decoder.skip_u32s()?;
        }
    }
    Ok(())
}

/// What the indexes need of a record, decoded into reused buffers.
#[derive(Debug, Default)]
pub(super) struct RecordKeys {
    pub(super) fingerprint: Fingerprint,
    pub(super) exact_hashes: Vec<u64>,
    pub(super) shingles: Option<Vec<u32>>,
    pub(super) sketch: Option<Vec<u32>>,
    buffer_shingles: Vec<u32>,
    buffer_sketch: Vec<u32>,
}

/// The fingerprint of an encoded record (its first field).
pub(super) fn record_fingerprint(record: &[u8]) -> Option<Fingerprint> {
    Some(Fingerprint::from_le_bytes(
        record.get(..8)?.try_into().ok()?,
    ))
}

impl RecordKeys {
    /// Reads `record`'s fingerprint and exact hashes only (they come
    /// first), leaving the rest as it was.
    pub(super) fn read_exact_hashes(&mut self, record: &[u8]) -> Result<(), DecodeError> {
        let mut decoder = Decoder::new(record);
        self.fingerprint = decoder.u64()?;
        decoder.u64()?;
        decoder.u64s_into(&mut self.exact_hashes)?;
        Ok(())
    }

    /// Reads `record`'s fingerprint, exact hashes, shingles and sketch.
    pub(super) fn read(&mut self, record: &[u8]) -> Result<(), DecodeError> {
        if let Some(shingles) = self.shingles.take() {
            self.buffer_shingles = shingles;
        }
        if let Some(sketch) = self.sketch.take() {
            self.buffer_sketch = sketch;
        }
        let mut decoder = Decoder::new(record);
        self.fingerprint = decoder.u64()?;
        decoder.u64()?;
        decoder.u64s_into(&mut self.exact_hashes)?;
        let short_tag = decoder.u8()?;
        if short_tag != 0 {
            let mut shingles = std::mem::take(&mut self.buffer_shingles);
            decoder.u32s_into(&mut shingles)?;
            self.shingles = Some(shingles);
            decoder.skip_str()?;
            decoder.skip(16)?;
            if short_tag == 2 {
                decoder.skip(5)?;
            }
        }
        if decoder.u8()? != 0 {
            let mut sketch = std::mem::take(&mut self.buffer_sketch);
            decoder.u32s_into(&mut sketch)?;
            self.sketch = Some(sketch);
        }
        Ok(())
    }
}

/// A node's side data, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct SideView<'a> {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub exact_hashes: &'a [u64],
    pub short_text: Option<&'a ShortText>,
    pub long_text: Option<&'a LongText>,
}

/// A node's side data as a snapshot stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideRecord {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub exact_hashes: Vec<u64>,
    pub short_text: Option<ShortText>,
    pub long_text: Option<LongText>,
}

impl SideRecord {
    pub fn view(&self) -> SideView<'_> {
        SideView {
            fingerprint: self.fingerprint,
            root: self.root,
            exact_hashes: &self.exact_hashes,
            short_text: self.short_text.as_ref(),
            long_text: self.long_text.as_ref(),
        }
    }
}

pub fn put_short(encoder: &mut Encoder, short: Option<&ShortText>) {
    match short {
        None => {
            encoder.u8(0);
        }
        Some(short) => {
            // Tag 2: the record ends with the headline field and the body's
            // weight (tag 1, without them, is still read).
            let tag = if short.headline_field.is_some() { 2 } else { 1 };
            encoder
                .u8(tag)
                .u32s(&short.shingles)
                .str(&short.letters)
                .u64(short.number_signature)
                .u64(short.place_signature);
            if let Some(field) = short.headline_field {
                encoder.u8(field).u32(short.body_weight);
            }
        }
    }
}

pub fn get_short(decoder: &mut Decoder<'_>) -> Result<Option<ShortText>, DecodeError> {
    let tag = decoder.u8()?;
    if tag == 0 {
        return Ok(None);
    }
    // Arguments are read in order: the record's layout.
    let short = ShortText::new(
        decoder.u32s()?.into_boxed_slice(),
        decoder.str()?.into(),
        decoder.u64()?,
        decoder.u64()?,
    );
    if tag == 2 {
        let field = decoder.u8()?;
        return Ok(Some(short.with_headline(field, decoder.u32()?)));
    }
    Ok(Some(short))
}

pub fn put_long(encoder: &mut Encoder, long: Option<&LongText>) {
    match long {
        None => {
            encoder.u8(0);
        }
        Some(long) => {
            // Tag 2: the record ends with the identifying weight (tag 1,
            // without it, is still read); tag 3: then the name slots, when
            // there are any (so that a record without them stays readable
            // by the builds before them).
            let tag = if long.name_slots.is_empty() { 2 } else { 3 };
            encoder.u8(tag).u32s(&long.sketch);
            match &long.headline {
                None => encoder.u8(0),
                Some(headline) => encoder.u8(1).str(headline),
            };
            encoder
                .str(&long.lead)
                .u32s(&long.numbers)
                .u32(long.identifying_weight);
            if !long.name_slots.is_empty() {
                encoder.u32s(&long.name_slots);
            }
        }
    }
}

pub fn get_long(decoder: &mut Decoder<'_>) -> Result<Option<LongText>, DecodeError> {
    let tag = decoder.u8()?;
    if tag == 0 {
        return Ok(None);
    }
    let sketch = decoder.u32s()?.into_boxed_slice();
    let headline = match decoder.u8()? {
        0 => None,
        _ => Some(decoder.str()?.into()),
    };
    let lead = decoder.str()?.into();
    let numbers = decoder.u32s()?.into_boxed_slice();
    let identifying_weight = match tag {
        1 => UNKNOWN_WEIGHT,
        _ => decoder.u32()?,
    };
    let name_slots = match tag {
        3 => decoder.u32s()?.into_boxed_slice(),
        _ => Box::default(),
    };
    Ok(Some(LongText {
        sketch,
        headline,
        lead,
        numbers,
        name_slots,
        identifying_weight,
    }))
}

pub fn put_side(encoder: &mut Encoder, side: &SideView<'_>) {
    encoder
        .u64(side.fingerprint)
        .u64(side.root)
        .u64s(side.exact_hashes);
    put_short(encoder, side.short_text);
    put_long(encoder, side.long_text);
}

pub fn get_side(decoder: &mut Decoder<'_>) -> Result<SideRecord, DecodeError> {
    Ok(SideRecord {
        fingerprint: decoder.u64()?,
        root: decoder.u64()?,
        exact_hashes: decoder.u64s()?,
        short_text: get_short(decoder)?,
        long_text: get_long(decoder)?,
    })
}
