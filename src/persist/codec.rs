//! Byte encoding of effects and snapshot records, and the checksummed frame
//! both files are made of.
//!
//! Design: little-endian fixed-width integers, length-prefixed strings and
//! lists; every frame is `[payload length u32][checksum u32][payload]`, the
//! checksum being the low 32 bits of the payload's xxh3. A frame that is
//! cut short or whose checksum does not match ends the readable part of a
//! file: that is how a torn write (a crash in the middle of `write`) shows.

use xxhash_rust::xxh3::xxh3_64;

pub use crate::encoding::{DecodeError, Decoder, Encoder};
use crate::engine::{EngineEffect, get_long, get_short, put_long, put_short};
pub use crate::engine::{get_side, put_side, skip_side};
use crate::forest::{Indexing, NodeRecord};
use crate::ledger::{DocumentKey, Effect, SentTo};

/// Largest frame accepted when reading (guards against a damaged length).
pub const MAX_FRAME: usize = 64 << 20;

/// Appends one frame holding `payload`.
pub fn put_frame(out: &mut Vec<u8>, payload: &[u8]) {
    let length = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(&checksum(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// A frame's checksum of its payload.
pub fn checksum(payload: &[u8]) -> u32 {
    (xxh3_64(payload) & 0xffff_ffff) as u32
}

/// What reading a frame at some offset found.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A whole frame with a valid checksum, and the offset after it.
    Valid(&'a [u8], usize),
    /// The data ends exactly here.
    End,
    /// A frame cut short or damaged: nothing from here on can be trusted.
    Damaged(&'static str),
}

/// Reads the frame starting at `offset`.
pub fn read_frame(data: &[u8], offset: usize) -> Frame<'_> {
    let Some(rest) = data.get(offset..) else {
        return Frame::Damaged("offset beyond the data");
    };
    if rest.is_empty() {
        return Frame::End;
    }
    let (Some(length), Some(expected)) = (le_u32(rest, 0), le_u32(rest, 4)) else {
        return Frame::Damaged("frame header cut short");
    };
    let length = length as usize;
    if length > MAX_FRAME {
        return Frame::Damaged("frame length out of range");
    }
    let Some(payload) = rest.get(8..8 + length) else {
        return Frame::Damaged("frame cut short");
    };
    if checksum(payload) != expected {
        return Frame::Damaged("checksum mismatch");
    }
    Frame::Valid(payload, offset + 8 + length)
}

fn le_u32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

const TAG_PLACED: u8 = 1;
const TAG_FORGOTTEN: u8 = 2;
const TAG_EXPIRED: u8 = 3;
const TAG_KEY_STORED: u8 = 4;
const TAG_KEY_REMOVED: u8 = 5;
const TAG_KEYS_SWEPT: u8 = 6;
const TAG_SETTLED: u8 = 7;
const TAG_UNCOUNTED: u8 = 8;
const TAG_SENT: u8 = 9;
/// A placement that taught the learned boilerplate table: as
/// [`TAG_PLACED`], then its sentence keys.
const TAG_PLACED_LEARNING: u8 = 10;

/// One effect as a log payload, after its sequence number.
pub fn put_effect(encoder: &mut Encoder, effect: &Effect) {
    match effect {
        Effect::Engine(EngineEffect::Placed {
            now,
            fingerprint,
            root,
            exact_hash,
            short_text,
            long_text,
            sentences,
        }) => {
            let tag = if sentences.is_empty() {
                TAG_PLACED
            } else {
                TAG_PLACED_LEARNING
            };
            encoder.u8(tag).i64(*now).u64(*fingerprint).u64(*root);
            match exact_hash {
                None => encoder.u8(0),
                Some(hash) => encoder.u8(1).u64(*hash),
            };
            put_short(encoder, short_text.as_ref());
            put_long(encoder, long_text.as_ref(), short_text.as_ref());
            if !sentences.is_empty() {
                encoder.u64s(sentences);
            }
        }
        Effect::Engine(EngineEffect::Forgotten { fingerprint }) => {
            encoder.u8(TAG_FORGOTTEN).u64(*fingerprint);
        }
        Effect::Engine(EngineEffect::Expired { removed }) => {
            encoder.u8(TAG_EXPIRED).u64s(removed);
        }
        Effect::KeyStored { key, fingerprint } => {
            encoder.u8(TAG_KEY_STORED).u64(key.0).u64(*fingerprint);
        }
        Effect::KeyRemoved { key } => {
            encoder.u8(TAG_KEY_REMOVED).u64(key.0);
        }
        Effect::KeysSwept => {
            encoder.u8(TAG_KEYS_SWEPT);
        }
        Effect::Settled { fingerprint } => {
            encoder.u8(TAG_SETTLED).u64(*fingerprint);
        }
        Effect::Engine(EngineEffect::Uncounted { fingerprint }) => {
            encoder.u8(TAG_UNCOUNTED).u64(*fingerprint);
        }
        Effect::Sent {
            fingerprint,
            sent_to,
        } => {
            encoder.u8(TAG_SENT).u64(*fingerprint);
            put_sent_to(encoder, sent_to);
        }
    }
}

/// Where a placement was sent: the index, then the id when there is one.
pub fn put_sent_to(encoder: &mut Encoder, sent_to: &SentTo) {
    encoder.str(&sent_to.index);
    match &sent_to.id {
        None => encoder.u8(0),
        Some(id) => encoder.u8(1).str(id),
    };
}

pub fn get_sent_to(decoder: &mut Decoder<'_>) -> Result<SentTo, DecodeError> {
    let index = decoder.str()?.to_string();
    let id = match decoder.u8()? {
        0 => None,
        _ => Some(decoder.str()?.to_string()),
    };
    Ok(SentTo { index, id })
}

pub fn get_effect(decoder: &mut Decoder<'_>) -> Result<Effect, DecodeError> {
    let effect = match decoder.u8()? {
        tag @ (TAG_PLACED | TAG_PLACED_LEARNING) => {
            let now = decoder.i64()?;
            let fingerprint = decoder.u64()?;
            let root = decoder.u64()?;
            let exact_hash = match decoder.u8()? {
                0 => None,
                _ => Some(decoder.u64()?),
            };
            let short_text = get_short(decoder)?;
            let long_text = get_long(decoder, short_text.as_ref())?;
            Effect::Engine(EngineEffect::Placed {
                now,
                fingerprint,
                root,
                exact_hash,
                short_text,
                long_text,
                sentences: if tag == TAG_PLACED_LEARNING {
                    decoder.u64s()?
                } else {
                    Vec::new()
                },
            })
        }
        TAG_FORGOTTEN => Effect::Engine(EngineEffect::Forgotten {
            fingerprint: decoder.u64()?,
        }),
        TAG_EXPIRED => Effect::Engine(EngineEffect::Expired {
            removed: decoder.u64s()?,
        }),
        TAG_KEY_STORED => Effect::KeyStored {
            key: DocumentKey(decoder.u64()?),
            fingerprint: decoder.u64()?,
        },
        TAG_KEY_REMOVED => Effect::KeyRemoved {
            key: DocumentKey(decoder.u64()?),
        },
        TAG_KEYS_SWEPT => Effect::KeysSwept,
        TAG_SETTLED => Effect::Settled {
            fingerprint: decoder.u64()?,
        },
        TAG_UNCOUNTED => Effect::Engine(EngineEffect::Uncounted {
            fingerprint: decoder.u64()?,
        }),
        TAG_SENT => Effect::Sent {
            fingerprint: decoder.u64()?,
            sent_to: get_sent_to(decoder)?,
        },
        _ => return Err(DecodeError("unknown effect tag")),
    };
    Ok(effect)
}

/// A node's record, its indexing last (a byte: 0 within `k`, 1 text only).
pub fn put_node(encoder: &mut Encoder, node: &NodeRecord) {
    encoder
        .u64(node.fingerprint)
        .u64(node.root)
        .i64(node.born)
        .u64(node.arrival)
        .i64(node.touched)
        .u32(node.documents)
        .u8(match node.indexing {
            Indexing::WithinK => 0,
            Indexing::TextOnly => 1,
        });
}

/// A node's record as [`put_node`] writes it; `with_indexing: false` reads
/// the layout before its last byte (every node within `k`).
pub fn get_node(decoder: &mut Decoder<'_>, with_indexing: bool) -> Result<NodeRecord, DecodeError> {
    Ok(NodeRecord {
        fingerprint: decoder.u64()?,
        root: decoder.u64()?,
        born: decoder.i64()?,
        arrival: decoder.u64()?,
        touched: decoder.i64()?,
        documents: decoder.u32()?,
        indexing: if with_indexing {
            match decoder.u8()? {
                0 => Indexing::WithinK,
                1 => Indexing::TextOnly,
                _ => return Err(DecodeError("unknown node indexing")),
            }
        } else {
            Indexing::WithinK
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::{LongText, ShortText};
    use crate::engine::SideRecord;

    fn round_trip(effect: Effect) {
        let mut encoder = Encoder::default();
        put_effect(&mut encoder, &effect);
        let mut decoder = Decoder::new(&encoder.bytes);
        assert_eq!(get_effect(&mut decoder).expect("decodes"), effect);
        assert!(decoder.is_done());
    }

    #[test]
    fn side_records_are_skipped_exactly_and_carried_encoded() {
        let records = [
            SideRecord {
                fingerprint: 1,
                root: 2,
                exact_hashes: vec![3, 4],
                short_text: Some(ShortText::new(
                    vec![5, 6].into_boxed_slice(),
                    "短文本 twenty".into(),
                    7,
                    8,
                )),
                long_text: None,
            },
            SideRecord {
                fingerprint: 14,
                root: 2,
                exact_hashes: vec![15],
                short_text: Some(
                    ShortText::new(vec![16].into_boxed_slice(), "标题\u{1e}正文".into(), 17, 18)
                        .with_headline(0, 42),
                ),
                long_text: None,
            },
            SideRecord {
                fingerprint: 9,
                root: 9,
                exact_hashes: Vec::new(),
                short_text: None,
                long_text: Some(LongText {
                    sketch: vec![10, 11, 12].into_boxed_slice(),
                    headline: Some("标题".into()),
                    lead: "导语".into(),
                    numbers: vec![13].into_boxed_slice(),
                    name_slots: vec![14, 15].into_boxed_slice(),
                    identifying_weight: 120,
                }),
            },
        ];
        let mut encoder = Encoder::default();
        let mut sides = crate::engine::EncodedSides::default();
        for record in &records {
            put_side(&mut encoder, &record.view());
            sides.push(record);
        }
        let mut decoder = Decoder::new(&encoder.bytes);
        for _ in &records {
            skip_side(&mut decoder).expect("skips");
        }
        assert!(decoder.is_done());
        assert_eq!(sides.len(), 3);
        assert_eq!(sides.decoded().collect::<Vec<_>>(), records.to_vec());
        // A record cut short is an error, not a wrong length.
        let cut = &encoder.bytes[..encoder.bytes.len() - 1];
        let mut decoder = Decoder::new(cut);
        skip_side(&mut decoder).expect("first is whole");
        skip_side(&mut decoder).expect("second is whole");
        assert!(skip_side(&mut decoder).is_err());
    }

    #[test]
    fn every_effect_round_trips() {
        round_trip(Effect::Engine(EngineEffect::Placed {
            now: -5,
            fingerprint: u64::MAX,
            root: 7,
            exact_hash: Some(9),
            short_text: Some(ShortText::new(
                vec![1, 2, 3].into_boxed_slice(),
                "短文本".into(),
                4,
                5,
            )),
            long_text: None,
            sentences: vec![11, u64::MAX],
        }));
        round_trip(Effect::Engine(EngineEffect::Placed {
            now: 1,
            fingerprint: 2,
            root: 2,
            exact_hash: None,
            short_text: None,
            long_text: Some(LongText {
                sketch: vec![8; 64].into_boxed_slice(),
                headline: Some("标题".into()),
                lead: "导语".into(),
                numbers: Box::default(),
                name_slots: Box::default(),
                identifying_weight: 0,
            }),
            sentences: Vec::new(),
        }));
        round_trip(Effect::Engine(EngineEffect::Forgotten { fingerprint: 3 }));
        round_trip(Effect::Engine(EngineEffect::Expired {
            removed: vec![1, 2],
        }));
        round_trip(Effect::KeyStored {
            key: DocumentKey(11),
            fingerprint: 12,
        });
        round_trip(Effect::KeyRemoved {
            key: DocumentKey(13),
        });
        round_trip(Effect::Sent {
            fingerprint: 14,
            sent_to: SentTo {
                index: "news-别名".into(),
                id: Some("a/1".into()),
            },
        });
        round_trip(Effect::Sent {
            fingerprint: 15,
            sent_to: SentTo {
                index: "news".into(),
                id: None,
            },
        });
    }

    #[test]
    fn frames_detect_tears_and_damage() {
        let mut data = Vec::new();
        put_frame(&mut data, b"first");
        put_frame(&mut data, b"second");
        let Frame::Valid(first, next) = read_frame(&data, 0) else {
            panic!("first frame");
        };
        assert_eq!(first, b"first");
        let Frame::Valid(second, end) = read_frame(&data, next) else {
            panic!("second frame");
        };
        assert_eq!(second, b"second");
        assert_eq!(read_frame(&data, end), Frame::End);
        // A write torn anywhere in the second frame.
        for cut in next + 1..end {
            assert!(
                matches!(read_frame(&data[..cut], next), Frame::Damaged(_)),
                "cut at {cut}"
            );
        }
        let mut flipped = data.clone();
        flipped[end - 1] ^= 1;
        assert_eq!(
            read_frame(&flipped, next),
            Frame::Damaged("checksum mismatch")
        );
    }

    #[test]
    fn damaged_payloads_are_errors_not_panics() {
        for payload in [
            &[][..],
            &[TAG_PLACED, 1, 2][..],
            &[99][..],
            &[TAG_EXPIRED, 255, 255, 255, 255][..],
        ] {
            assert!(get_effect(&mut Decoder::new(payload)).is_err());
        }
    }

    #[test]
    fn a_node_keeps_its_indexing_and_the_layout_before_it_reads_within_k() {
        let node = |indexing| NodeRecord {
            fingerprint: 1,
            root: 2,
            born: -3,
            arrival: 4,
            touched: 5,
            documents: 6,
            indexing,
        };
        for indexing in [Indexing::WithinK, Indexing::TextOnly] {
            let mut encoder = Encoder::default();
            put_node(&mut encoder, &node(indexing));
            let mut decoder = Decoder::new(&encoder.bytes);
            assert_eq!(get_node(&mut decoder, true), Ok(node(indexing)));
            assert!(decoder.is_done());
            // Before version 6 a record ended before the indexing byte.
            let before = &encoder.bytes[..encoder.bytes.len() - 1];
            let mut decoder = Decoder::new(before);
            assert_eq!(get_node(&mut decoder, false), Ok(node(Indexing::WithinK)));
            assert!(decoder.is_done());
        }
        let mut encoder = Encoder::default();
        put_node(&mut encoder, &node(Indexing::WithinK));
        let last = encoder.bytes.len() - 1;
        encoder.bytes[last] = 7;
        assert!(get_node(&mut Decoder::new(&encoder.bytes), true).is_err());
    }
}
