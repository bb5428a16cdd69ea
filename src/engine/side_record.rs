//! One node's side record: its layout, and how it is written and read.
//!
//! Motivation: the engine's side file, the log (an added node's effect
//! carries its record) and snapshots all hold the same record; one layout,
//! read in one place, lets a snapshot copy records as bytes and recovery
//! read them without decoding what it does not need.
//!
//! Design: fingerprint, root (at a fixed offset, [`ROOT_OFFSET`]), the
//! exact hashes, then the short text and the long text, each after a tag
//! ([`put_side`], [`get_side`]). Readers that need one part skip the
//! others: the root alone, the texts, the exact hashes
//! ([`record_has_exact_hash`], no allocation), or what the candidate
//! indexes need ([`RecordKeys`], into reused buffers).
//!
//! The texts are written compact (short-text tag 5, long-text tag 6):
//! counts as varints, parts that are empty or zero left out behind flags,
//! a long text's sketch as its gaps in the bits the largest needs, and the
//! letters, headline and lead each in the shortest of UTF-8, two bytes a
//! Han letter ([`crate::compact_text`]) and a prefix code of about a byte
//! a letter ([`crate::text_code`]). They are decoded at their first read
//! ([`crate::record_text`]): most candidates are turned away by their
//! shingles or sketch first. Tags 3 and 4 (UTF-8 or two bytes a Han
//! letter) are the same layout as written before the code. With
//! `--lean-side-records`, a short text's shingles are left out too when
//! its letters give them back (nearly always: they are the letters'
//! bigrams), and the lead of a text of middle length is left out when it
//! is the opening of those letters (the writer checks both). The
//! layouts before (short-text tags 1 to 3, long-text tags 1 to 4) are
//! still read.
//!
//! Consequences: the layout is part of the state format (snapshots and the
//! log); changing it is a format change (`crate::persist`). A reader of a
//! lean record's shingles hashes the letters again (about half a
//! microsecond), which candidates whose shingles are read and recovery
//! pay: measured, about a tenth of the placing rate, which is why lean
//! records are not the default.

use crate::confirm::spans::KEPT_LEAD_CHARS;
use crate::confirm::{LongText, ShortText, UNKNOWN_WEIGHT};
use crate::encoding::{DecodeError, Decoder, Encoder, Packing, TextForms};
use crate::fingerprint::FIELD_SEPARATOR;
use crate::fingerprint::normalize::for_each_lowercase_letter;
use crate::fingerprint::{shingle_hashes_of_chars, shingle_hashes_of_letters};
use crate::record_text::RecordText;
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
    let short = get_short(&mut decoder)?;
    let long = get_long(&mut decoder, short.as_ref())?;
    Ok((short, long))
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
    skip_short(decoder)?;
    skip_long(decoder)
}

/// What the indexes need of a record, decoded into reused buffers.
#[derive(Debug, Default)]
pub(super) struct RecordKeys {
    pub(super) fingerprint: Fingerprint,
    pub(super) exact_hashes: Vec<u64>,
    /// The short text's shingle hashes, for MinHash band keys only: a
    /// lean record's are taken from its letters unsorted, a shingle that
    /// recurs there each time (a minimum does not depend on either).
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

/// The exact hashes an encoded record lists, into `into`; `false` when
/// the record does not read that far. A snapshot's index of its side
/// records keeps them, so that recovery need not read the records.
pub fn record_exact_hashes(record: &[u8], into: &mut Vec<u64>) -> bool {
    read_leading_fields(record, into).is_ok()
}

/// Reads a record's fingerprint and exact hashes (into `exact_hashes`):
/// the fields every record starts with.
fn read_leading_fields(
    record: &[u8],
    exact_hashes: &mut Vec<u64>,
) -> Result<Fingerprint, DecodeError> {
    let mut decoder = Decoder::new(record);
    let fingerprint = decoder.u64()?;
    decoder.u64()?;
    decoder.u64s_into(exact_hashes)?;
    Ok(fingerprint)
}

impl RecordKeys {
    /// Reads `record`'s fingerprint and exact hashes only (they come
    /// first), leaving the rest as it was.
    pub(super) fn read_exact_hashes(&mut self, record: &[u8]) -> Result<(), DecodeError> {
        self.fingerprint = read_leading_fields(record, &mut self.exact_hashes)?;
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
        if let Some(forms) = short_text_forms(short_tag) {
            let mut shingles = std::mem::take(&mut self.buffer_shingles);
            read_compact_short_shingles(&mut decoder, &mut shingles, forms)?;
            self.shingles = Some(shingles);
        } else if short_tag != 0 {
            let mut shingles = std::mem::take(&mut self.buffer_shingles);
            decoder.u32s_into(&mut shingles)?;
            self.shingles = Some(shingles);
            decoder.skip_str()?;
            decoder.skip(16)?;
            if short_tag == 2 {
                decoder.skip(5)?;
            }
        }
        match decoder.u8()? {
            0 => {}
            LONG_COMPACT | LONG_CODED => {
                decoder.u8()?;
                let mut sketch = std::mem::take(&mut self.buffer_sketch);
                decoder.ascending_u32s_into(&mut sketch)?;
                self.sketch = Some(sketch);
            }
            _ => {
                let mut sketch = std::mem::take(&mut self.buffer_sketch);
                decoder.u32s_into(&mut sketch)?;
                self.sketch = Some(sketch);
            }
        }
        Ok(())
    }
}

/// The shingles of a compact short text (after its tag), stored or taken
/// from its letters (unsorted, see [`RecordKeys::shingles`]), into
/// `shingles`; `decoder` is left past the text.
fn read_compact_short_shingles(
    decoder: &mut Decoder<'_>,
    shingles: &mut Vec<u32>,
    forms: TextForms,
) -> Result<(), DecodeError> {
    let flags = decoder.u8()?;
    if flags & SHORT_KEEPS_SHINGLES != 0 {
        decoder.short_u32s_into(shingles)?;
        decoder.skip_text(forms)?;
    } else {
        let width = usize::from(flags >> SHORT_WIDTH_SHIFT);
        if width == 0 {
            return Err(DecodeError("short text without shingles or width"));
        }
        *shingles = shingle_hashes_of_text(decoder, width, forms)?;
    }
    skip_compact_short_tail(decoder, flags)
}

/// The shingle hashes of the letters `decoder` reads next, unsorted
/// ([`shingle_hashes_of_letters`]); compact letters are hashed as they are
/// decoded, with no text built between.
fn shingle_hashes_of_text(
    decoder: &mut Decoder<'_>,
    width: usize,
    forms: TextForms,
) -> Result<Vec<u32>, DecodeError> {
    match decoder.text_bytes(forms)? {
        (bytes, None) => {
            let letters =
                simdutf8::basic::from_utf8(bytes).map_err(|_| DecodeError("text is not UTF-8"))?;
            Ok(shingle_hashes_of_letters(letters, width))
        }
        (bytes, Some(Packing::Compact)) => hashes_of_chars(
            crate::compact_text::chars(bytes),
            bytes.len() * 3 / 2,
            width,
        ),
        (bytes, Some(Packing::Coded)) => {
            hashes_of_chars(crate::text_code::chars(bytes), bytes.len() * 2, width)
        }
    }
}

/// The shingle hashes of `letters` as they are decoded; the first error
/// if there is one.
fn hashes_of_chars(
    letters: impl Iterator<Item = Result<char, &'static str>>,
    expected: usize,
    width: usize,
) -> Result<Vec<u32>, DecodeError> {
    let mut error = None;
    let letters = letters.map_while(|letter| {
        letter
            .map_err(|message| error = Some(DecodeError(message)))
            .ok()
    });
    let hashes = shingle_hashes_of_chars(letters, expected, width);
    match error {
        Some(error) => Err(error),
        None => Ok(hashes),
    }
}

/// Skips what follows a compact short text's letters: the signatures and
/// the headline field its `flags` say it has.
fn skip_compact_short_tail(decoder: &mut Decoder<'_>, flags: u8) -> Result<(), DecodeError> {
    for flag in [SHORT_HAS_NUMBERS, SHORT_HAS_PLACES] {
        if flags & flag != 0 {
            decoder.skip(8)?;
        }
    }
    if flags & SHORT_HAS_HEADLINE != 0 {
        decoder.skip(1)?;
        decoder.varint()?;
    }
    Ok(())
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

/// Short-text tag of the compact layout with compact letters (tags 1 and
/// 2, the fixed-width layouts before it, are still read).
const SHORT_COMPACT: u8 = 3;
/// Long-text tag of the compact layout with compact letters (tags 1 to 3
/// are still read).
const LONG_COMPACT: u8 = 4;
/// The compact layouts with each text in the shortest of its forms, coded
/// ([`crate::text_code`]) for most: what is written.
const SHORT_CODED: u8 = 5;
const LONG_CODED: u8 = 6;

/// The forms a short text's letters may be in by its tag, if it has the
/// compact layout.
fn short_text_forms(tag: u8) -> Option<TextForms> {
    match tag {
        SHORT_COMPACT => Some(TextForms::CompactOrUtf8),
        SHORT_CODED => Some(TextForms::Any),
        _ => None,
    }
}

/// The forms a long text's headline and lead may be in by its tag, if it
/// has the compact layout.
fn long_text_forms(tag: u8) -> Option<TextForms> {
    match tag {
        LONG_COMPACT => Some(TextForms::CompactOrUtf8),
        LONG_CODED => Some(TextForms::Any),
        _ => None,
    }
}

/// Flags of a compact short text: which optional parts follow.
const SHORT_HAS_HEADLINE: u8 = 1;
const SHORT_HAS_NUMBERS: u8 = 1 << 1;
const SHORT_HAS_PLACES: u8 = 1 << 2;
const SHORT_KEEPS_SHINGLES: u8 = 1 << 3;
/// The flags' high four bits: the shingle width the reader takes the
/// shingles from the letters with, when they are left out.
const SHORT_WIDTH_SHIFT: u32 = 4;

/// Flags of a compact long text.
const LONG_HAS_HEADLINE: u8 = 1;
const LONG_HAS_NAME_SLOTS: u8 = 1 << 1;
const LONG_HAS_NUMBERS: u8 = 1 << 2;
/// The lead is left out: it is the opening of the short text's letters
/// ([`lead_of_letters`]), which the record holds, without the field the
/// flags' high four bits name (its position plus one; 0: none).
const LONG_LEAD_FROM_LETTERS: u8 = 1 << 3;
const LONG_SKIPPED_FIELD_SHIFT: u32 = 4;

pub fn put_short(encoder: &mut Encoder, short: Option<&ShortText>) {
    let Some(short) = short else {
        encoder.u8(0);
        return;
    };
    // A lean record: the shingles are left out, since the letters give
    // them back (checked off the engine's lock when the text was analysed,
    // [`ShortText::checking_shingles_against_letters`], with
    // `--lean-side-records`).
    let derived_width = lean_width(short);
    let flags = match derived_width {
        Some(width) => width << SHORT_WIDTH_SHIFT,
        None => SHORT_KEEPS_SHINGLES,
    } | flags_of([
        (short.headline_field.is_some(), SHORT_HAS_HEADLINE),
        (short.number_signature != 0, SHORT_HAS_NUMBERS),
        (short.place_signature != 0, SHORT_HAS_PLACES),
    ]);
    encoder.u8(SHORT_CODED).u8(flags);
    if derived_width.is_none() {
        encoder.short_u32s(short.shingles());
    }
    encoder.text(&short.letters, TextForms::Any);
    if short.number_signature != 0 {
        encoder.u64(short.number_signature);
    }
    if short.place_signature != 0 {
        encoder.u64(short.place_signature);
    }
    if let Some(field) = short.headline_field {
        encoder.u8(field).varint(u64::from(short.body_weight));
    }
}

pub fn get_short(decoder: &mut Decoder<'_>) -> Result<Option<ShortText>, DecodeError> {
    let tag = decoder.u8()?;
    match (tag, short_text_forms(tag)) {
        (0, _) => Ok(None),
        (_, Some(forms)) => get_compact_short(decoder, forms).map(Some),
        _ => {
            // Arguments are read in order: the record's layout.
            let short = ShortText::new(
                decoder.u32s()?.into_boxed_slice(),
                RecordText::from(decoder.str()?),
                decoder.u64()?,
                decoder.u64()?,
            );
            if tag == 2 {
                let field = decoder.u8()?;
                return Ok(Some(short.with_headline(field, decoder.u32()?)));
            }
            Ok(Some(short))
        }
    }
}

fn get_compact_short(
    decoder: &mut Decoder<'_>,
    forms: TextForms,
) -> Result<ShortText, DecodeError> {
    let flags = decoder.u8()?;
    let stored = if flags & SHORT_KEEPS_SHINGLES != 0 {
        Some(decoder.short_u32s()?)
    } else {
        None
    };
    // Most candidates' letters are never read: decoded at the first read.
    let letters = decoder.record_text(forms)?;
    let width = flags >> SHORT_WIDTH_SHIFT;
    let number_signature = optional_u64(decoder, flags & SHORT_HAS_NUMBERS != 0)?;
    let place_signature = optional_u64(decoder, flags & SHORT_HAS_PLACES != 0)?;
    // A lean record's shingles are taken from its letters at their first
    // read: candidates read for their long text never need them.
    let mut short = match stored {
        Some(shingles) => ShortText::new(
            shingles.into_boxed_slice(),
            letters,
            number_signature,
            place_signature,
        ),
        None if width == 0 => return Err(DecodeError("short text without shingles or width")),
        None => {
            ShortText::with_shingles_from_letters(letters, width, number_signature, place_signature)
        }
    };
    if flags & SHORT_HAS_HEADLINE != 0 {
        let field = decoder.u8()?;
        let weight =
            u32::try_from(decoder.varint()?).map_err(|_| DecodeError("weight overflow"))?;
        short = short.with_headline(field, weight);
    }
    Ok(short)
}

/// The flags of the parts that are present.
fn flags_of<const N: usize>(parts: [(bool, u8); N]) -> u8 {
    parts
        .into_iter()
        .filter(|&(present, _)| present)
        .fold(0, |flags, (_, flag)| flags | flag)
}

/// The shingle width of a short text whose record is lean (its shingles
/// left out, taken back from its letters at this width), if it is.
fn lean_width(short: &ShortText) -> Option<u8> {
    short
        .shingles_from_letters
        .filter(|width| (1..16).contains(width))
}

fn optional_u64(decoder: &mut Decoder<'_>, present: bool) -> Result<u64, DecodeError> {
    if present { decoder.u64() } else { Ok(0) }
}

/// Skips a short text written by [`put_short`] (any tag).
fn skip_short(decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
    let tag = decoder.u8()?;
    match (tag, short_text_forms(tag)) {
        (0, _) => {}
        (_, Some(forms)) => {
            let flags = decoder.u8()?;
            if flags & SHORT_KEEPS_SHINGLES != 0 {
                decoder.skip_short_u32s()?;
            }
            decoder.skip_text(forms)?;
            skip_compact_short_tail(decoder, flags)?;
        }
        _ => {
            decoder.skip_u32s()?;
            decoder.skip_str()?;
            decoder.skip(16)?;
            if tag == 2 {
                decoder.skip(5)?;
            }
        }
    }
    Ok(())
}

/// Writes `long`; `short` is the short text written before it in the same
/// record (a text of middle length keeps both), whose letters may give
/// back the lead.
pub fn put_long(encoder: &mut Encoder, long: Option<&LongText>, short: Option<&ShortText>) {
    let Some(long) = long else {
        encoder.u8(0);
        return;
    };
    // In a lean record only: taking the lead back costs each read of the
    // record (measured: 36 → 52 µs a place where most candidates are of
    // middle length). The headline is not known to a short text of middle
    // length: each field is tried as the one the lead leaves out (the
    // title, mostly first).
    let lean_short = short.filter(|short| lean_width(short).is_some());
    let skipped_field = lean_short.and_then(|short| {
        let fields = short.letters.split(FIELD_SEPARATOR).count().min(15);
        (0..=fields as u8).find(|&skipped| *lead_of_letters(&short.letters, skipped) == *long.lead)
    });
    let lead_from_letters = skipped_field.is_some();
    let flags = skipped_field.map_or(0, |skipped| skipped << LONG_SKIPPED_FIELD_SHIFT)
        | flags_of([
            (long.headline.is_some(), LONG_HAS_HEADLINE),
            (!long.name_slots.is_empty(), LONG_HAS_NAME_SLOTS),
            (!long.numbers.is_empty(), LONG_HAS_NUMBERS),
            (lead_from_letters, LONG_LEAD_FROM_LETTERS),
        ]);
    encoder
        .u8(LONG_CODED)
        .u8(flags)
        .ascending_u32s(&long.sketch);
    if let Some(headline) = &long.headline {
        encoder.text(headline, TextForms::Any);
    }
    if !lead_from_letters {
        encoder.text(&long.lead, TextForms::Any);
    }
    if !long.numbers.is_empty() {
        encoder.short_u32s(&long.numbers);
    }
    encoder.varint(u64::from(long.identifying_weight));
    if !long.name_slots.is_empty() {
        encoder.short_u32s(&long.name_slots);
    }
}

/// The lead a long text takes from its body (`Fingerprinter::body_lead`),
/// read from a short text's letters: every field but the `skipped`-th
/// (counted from 1; 0 skips none), lowercased, letters and digits only,
/// the first [`KEPT_LEAD_CHARS`]. A record's reader takes it at the
/// lead's first read ([`RecordText::derived`]), from the letters' bytes.
fn lead_of_letters(letters: &RecordText, skipped: u8) -> String {
    let headline = usize::from(skipped).checked_sub(1);
    let mut lead = String::with_capacity(KEPT_LEAD_CHARS * 3);
    let mut kept = 0;
    let mut position = 0;
    for c in letters.chars() {
        if kept == KEPT_LEAD_CHARS {
            break;
        }
        if c == FIELD_SEPARATOR {
            position += 1;
            continue;
        }
        if Some(position) == headline {
            continue;
        }
        for_each_lowercase_letter(c, |letter| {
            if kept < KEPT_LEAD_CHARS {
                lead.push(letter);
                kept += 1;
            }
        });
    }
    lead
}

/// Reads a long text written by [`put_long`]; `short` is the record's short
/// text, read before it.
pub fn get_long(
    decoder: &mut Decoder<'_>,
    short: Option<&ShortText>,
) -> Result<Option<LongText>, DecodeError> {
    let tag = decoder.u8()?;
    match (tag, long_text_forms(tag)) {
        (0, _) => Ok(None),
        (_, Some(forms)) => get_compact_long(decoder, short, forms).map(Some),
        _ => get_fixed_long(decoder, tag).map(Some),
    }
}

fn get_compact_long(
    decoder: &mut Decoder<'_>,
    short: Option<&ShortText>,
    forms: TextForms,
) -> Result<LongText, DecodeError> {
    let flags = decoder.u8()?;
    let mut sketch = Vec::new();
    decoder.ascending_u32s_into(&mut sketch)?;
    let headline = match flags & LONG_HAS_HEADLINE {
        0 => None,
        _ => Some(decoder.record_text(forms)?),
    };
    let lead = match (flags & LONG_LEAD_FROM_LETTERS, short) {
        (0, _) => decoder.record_text(forms)?,
        (_, Some(short)) => RecordText::derived(
            short.letters.clone(),
            lead_of_letters,
            flags >> LONG_SKIPPED_FIELD_SHIFT,
        ),
        (_, None) => return Err(DecodeError("lead from letters without a short text")),
    };
    let numbers = match flags & LONG_HAS_NUMBERS {
        0 => Box::default(),
        _ => decoder.short_u32s()?.into_boxed_slice(),
    };
    let identifying_weight =
        u32::try_from(decoder.varint()?).map_err(|_| DecodeError("weight overflow"))?;
    let name_slots = match flags & LONG_HAS_NAME_SLOTS {
        0 => Box::default(),
        _ => decoder.short_u32s()?.into_boxed_slice(),
    };
    Ok(LongText {
        sketch: sketch.into_boxed_slice(),
        headline,
        lead,
        numbers,
        name_slots,
        identifying_weight,
    })
}

/// A long text of the fixed-width layouts (tags 1 to 3).
fn get_fixed_long(decoder: &mut Decoder<'_>, tag: u8) -> Result<LongText, DecodeError> {
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
    Ok(LongText {
        sketch,
        headline,
        lead,
        numbers,
        name_slots,
        identifying_weight,
    })
}

/// Skips a long text written by [`put_long`] (any tag).
fn skip_long(decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
    let tag = decoder.u8()?;
    match (tag, long_text_forms(tag)) {
        (0, _) => {}
        (_, Some(forms)) => {
            let flags = decoder.u8()?;
            decoder.skip_ascending_u32s()?;
            if flags & LONG_HAS_HEADLINE != 0 {
                decoder.skip_text(forms)?;
            }
            if flags & LONG_LEAD_FROM_LETTERS == 0 {
                decoder.skip_text(forms)?;
            }
            if flags & LONG_HAS_NUMBERS != 0 {
                decoder.skip_short_u32s()?;
            }
            decoder.varint()?;
            if flags & LONG_HAS_NAME_SLOTS != 0 {
                decoder.skip_short_u32s()?;
            }
        }
        _ => {
            decoder.skip_u32s()?;
            if decoder.u8()? != 0 {
                decoder.skip_str()?;
            }
            decoder.skip_str()?;
            decoder.skip_u32s()?;
            if tag != 1 {
                decoder.skip(4)?;
            }
            if tag == 3 {
                decoder.skip_u32s()?;
            }
        }
    }
    Ok(())
}

pub fn put_side(encoder: &mut Encoder, side: &SideView<'_>) {
    encoder
        .u64(side.fingerprint)
        .u64(side.root)
        .u64s(side.exact_hashes);
    put_short(encoder, side.short_text);
    put_long(encoder, side.long_text, side.short_text);
}

pub fn get_side(decoder: &mut Decoder<'_>) -> Result<SideRecord, DecodeError> {
    let fingerprint = decoder.u64()?;
    let root = decoder.u64()?;
    let exact_hashes = decoder.u64s()?;
    let short_text = get_short(decoder)?;
    let long_text = get_long(decoder, short_text.as_ref())?;
    Ok(SideRecord {
        fingerprint,
        root,
        exact_hashes,
        short_text,
        long_text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoder;

    /// A lean record's letters, packed or UTF-8, hashed as they are
    /// decoded: the hashes the decoded text gives; damaged packed letters
    /// are an error.
    #[test]
    fn letters_are_hashed_as_they_are_decoded() {
        // Common letters (coded), rare ones (compact), another script
        // (UTF-8).
        for text in [
            "周末去哪儿玩 Parks in AUTUMN\u{1e}秋景",
            "龘靐齉爩",
            "한국어 글자",
        ] {
            for forms in [TextForms::CompactOrUtf8, TextForms::Any] {
                let mut encoder = Encoder::default();
                encoder.text(text, forms);
                let mut decoder = Decoder::new(&encoder.bytes);
                assert_eq!(
                    shingle_hashes_of_text(&mut decoder, 2, forms),
                    Ok(shingle_hashes_of_letters(text, 2)),
                    "{text} {forms:?}"
                );
                assert!(decoder.is_done());
            }
        }
        // Four bytes of compact text (the length is doubled, plus one):
        // a Han letter, then a code point cut short.
        let damaged = [4 << 1 | 1, 0x80, 0x00, 0xFF, 0x00];
        let forms = TextForms::CompactOrUtf8;
        assert!(shingle_hashes_of_text(&mut Decoder::new(&damaged), 2, forms).is_err());
        // One byte of coded text (the length times four, plus two): an
        // escape cut short.
        let damaged = [1 << 2 | 2, 0x00];
        assert!(shingle_hashes_of_text(&mut Decoder::new(&damaged), 2, TextForms::Any).is_err());
    }
}
