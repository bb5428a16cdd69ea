//! One record of the group's effect log: the frames of the local log for a
//! range of sequence numbers, as a document of the log index.
//!
//! Motivation: the chain of records is the group's durable state; a standby
//! must apply exactly what the leader logged, and must notice when what it
//! reads does not follow what it applied.
//!
//! Design: `effects` holds the local log's frames byte for byte
//! (`persist::codec`: `[len][checksum][seq, effect]` each), deflated when
//! over 1 KiB, then base64 as the `binary` type wants. Each record names its
//! predecessor's digest (`prev_digest`; record 1 names the group's uuid) and
//! its own: an HMAC keyed with the group's secret ([`super::auth`]) over the
//! previous digest, the number, epoch, writer, sequence range and the
//! uncompressed frames. A reader refuses a record whose digest does not
//! match its content (altered, or written without the secret), or whose
//! frames are damaged or not numbered `first_seq..=last_seq`. `kind` is
//! `effects`, or `epoch` for the record a new leader writes first (no
//! effects).
//!
//! Consequences: decoding never panics: any damage is an error naming it.
//! Format 2 (keyed digests) is not read by format-1 members, nor the other
//! way round: a group is upgraded from format 1 by starting it anew. Format
//! 3 (compact side records) members read format 2 records; format-2 members
//! refuse format 3, so a group's standbys are upgraded before its leader.

use std::io::{Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

use super::auth::GroupKey;
use crate::encoding::{Decoder, Encoder};
use crate::ledger::Effect;
use crate::persist::codec::{self, Frame};

/// Record format written; this and [`OLDEST_RECORD_FORMAT_READ`] and every
/// one between are read. Format 3 carries side records in their compact
/// layout, which a format-2 reader would misread: it refuses them instead;
/// format 4 side records with their letters coded (tags 5 and 6).
pub const RECORD_FORMAT: u64 = 4;
/// The oldest record format read (format 2: keyed digests; format 1 had
/// none and is not read).
pub const OLDEST_RECORD_FORMAT_READ: u64 = 2;

/// Frames longer than this are deflated.
const DEFLATE_ABOVE: usize = 1024;

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Effects,
    /// The first record of a leader's tenure: the fence against the last.
    Epoch,
}

/// One record of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub number: u64,
    pub epoch: u64,
    pub writer: String,
    pub kind: Kind,
    pub first_seq: u64,
    /// `first_seq - 1` when the record holds no effect.
    pub last_seq: u64,
    pub prev_digest: String,
    pub digest: String,
    /// The local log's frames, uncompressed.
    pub frames: Vec<u8>,
}

/// The frames of `effects`, numbered from `first_seq`, as `Store::append`
/// writes them.
pub fn encode_frames(first_seq: u64, effects: &[Effect], out: &mut Vec<u8>) {
    for (offset, effect) in effects.iter().enumerate() {
        let mut encoder = Encoder::default();
        encoder.u64(first_seq + offset as u64);
        codec::put_effect(&mut encoder, effect);
        codec::put_frame(out, &encoder.bytes);
    }
}

impl Record {
    /// A record, its digest computed.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        key: &GroupKey,
        number: u64,
        epoch: u64,
        writer: &str,
        kind: Kind,
        first_seq: u64,
        last_seq: u64,
        prev_digest: &str,
        frames: Vec<u8>,
    ) -> Record {
        let mut record = Record {
            number,
            epoch,
            writer: writer.to_string(),
            kind,
            first_seq,
            last_seq,
            prev_digest: prev_digest.to_string(),
            digest: String::new(),
            frames,
        };
        record.digest = record.computed_digest(key);
        record
    }

    fn digest_numbers(&self) -> [u8; 33] {
        let mut numbers = [0u8; 33];
        for (slot, number) in [self.number, self.epoch, self.first_seq, self.last_seq]
            .into_iter()
            .enumerate()
        {
            numbers[slot * 8..slot * 8 + 8].copy_from_slice(&number.to_le_bytes());
        }
        numbers[32] = match self.kind {
            Kind::Effects => 1,
            Kind::Epoch => 2,
        };
        numbers
    }

    /// The digest's input, as the parts the key tags.
    fn with_digest_parts<R>(&self, use_parts: impl FnOnce(&[&[u8]]) -> R) -> R {
        let numbers = self.digest_numbers();
        use_parts(&[
            self.prev_digest.as_bytes(),
            self.writer.as_bytes(),
            &numbers,
            &self.frames,
        ])
    }

    fn computed_digest(&self, key: &GroupKey) -> String {
        self.with_digest_parts(|parts| key.tag("record", parts))
    }

    fn digest_is_authentic(&self, key: &GroupKey) -> bool {
        self.with_digest_parts(|parts| key.verify("record", parts, &self.digest))
    }

    /// The record as the document created in the log index.
    pub fn to_document(&self, group_uuid: &str, written_at_ms: i64) -> Value {
        let (encoding, payload) = if self.frames.len() > DEFLATE_ABOVE {
            let mut encoder =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            // Writing into a Vec cannot fail.
            let compressed = encoder
                .write_all(&self.frames)
                .and_then(|()| encoder.finish());
            match compressed {
                Ok(bytes) => ("deflate", bytes),
                Err(_) => ("none", self.frames.clone()),
            }
        } else {
            ("none", self.frames.clone())
        };
        json!({
            "format": RECORD_FORMAT,
            "group_uuid": group_uuid,
            "record": self.number,
            "epoch": self.epoch,
            "writer": self.writer,
            "kind": match self.kind { Kind::Effects => "effects", Kind::Epoch => "epoch" },
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "prev_digest": self.prev_digest,
            "digest": self.digest,
            "encoding": encoding,
            "effects": BASE64.encode(&payload),
            "bytes": self.frames.len(),
            "written_at_ms": written_at_ms,
        })
    }

    /// A record read back from its document (`_source`), checked: format,
    /// group, digest (keyed with the group's secret).
    ///
    /// # Errors
    ///
    /// A field missing or of the wrong type, another format, another
    /// group's record, undecodable effects, a digest that does not match
    /// (damaged, altered, or written without the group's secret).
    pub fn from_document(
        source: &Value,
        group_uuid: &str,
        key: &GroupKey,
    ) -> Result<Record, String> {
        let number = |field: &str| {
            source[field]
                .as_u64()
                .ok_or_else(|| format!("record field `{field}` missing or not a number"))
        };
        let text = |field: &str| {
            source[field]
                .as_str()
                .ok_or_else(|| format!("record field `{field}` missing or not a string"))
        };
        let format = number("format")?;
        if !(OLDEST_RECORD_FORMAT_READ..=RECORD_FORMAT).contains(&format) {
            return Err(format!(
                "record format {format}, this version reads {OLDEST_RECORD_FORMAT_READ} to {RECORD_FORMAT} (a group of format 1 is upgraded by starting it anew; to move to a newer format, upgrade the standbys before the leader)"
            ));
        }
        if text("group_uuid")? != group_uuid {
            return Err("the record belongs to another group (uuid)".to_string());
        }
        let kind = match text("kind")? {
            "effects" => Kind::Effects,
            "epoch" => Kind::Epoch,
            other => return Err(format!("unknown record kind `{other}`")),
        };
        let payload = BASE64
            .decode(text("effects")?)
            .map_err(|error| format!("record effects are not base64: {error}"))?;
        let frames = match text("encoding")? {
            "none" => payload,
            "deflate" => {
                let mut frames = Vec::new();
                flate2::read::DeflateDecoder::new(payload.as_slice())
                    .take(codec::MAX_FRAME as u64 * 4)
                    .read_to_end(&mut frames)
                    .map_err(|error| format!("record effects do not inflate: {error}"))?;
                frames
            }
            other => return Err(format!("unknown record encoding `{other}`")),
        };
        let record = Record {
            number: number("record")?,
            epoch: number("epoch")?,
            writer: text("writer")?.to_string(),
            kind,
            first_seq: number("first_seq")?,
            last_seq: number("last_seq")?,
            prev_digest: text("prev_digest")?.to_string(),
            digest: text("digest")?.to_string(),
            frames,
        };
        if !record.digest_is_authentic(key) {
            return Err(format!(
                "record {} does not match its digest: damaged, altered, or written without the group's secret",
                record.number
            ));
        }
        if record.last_seq + 1 < record.first_seq {
            return Err(format!("record {} has an inverted range", record.number));
        }
        Ok(record)
    }

    /// The effects of the record's frames, in order.
    ///
    /// # Errors
    ///
    /// A damaged frame, an undecodable effect, sequence numbers other than
    /// `first_seq..=last_seq`.
    pub fn effects(&self) -> Result<Vec<Effect>, String> {
        let mut effects = Vec::new();
        let mut expected = self.first_seq;
        let mut offset = 0;
        loop {
            match codec::read_frame(&self.frames, offset) {
                Frame::End => break,
                Frame::Damaged(reason) => {
                    return Err(format!("record {}: frame {reason}", self.number));
                }
                Frame::Valid(payload, next) => {
                    let mut decoder = Decoder::new(payload);
                    let seq = decoder
                        .u64()
                        .map_err(|error| format!("record {}: {error}", self.number))?;
                    if seq != expected {
                        return Err(format!(
                            "record {}: effect numbered {seq}, expected {expected}",
                            self.number
                        ));
                    }
                    let effect = codec::get_effect(&mut decoder)
                        .map_err(|error| format!("record {}: {error}", self.number))?;
                    effects.push(effect);
                    expected += 1;
                    offset = next;
                }
            }
        }
        if expected != self.last_seq + 1 {
            return Err(format!(
                "record {}: effects end at {}, the record says {}",
                self.number,
                expected.saturating_sub(1),
                self.last_seq
            ));
        }
        Ok(effects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Fingerprint;

    fn effects(count: u64) -> Vec<Effect> {
        (0..count)
            .map(|n| Effect::Settled {
                fingerprint: Fingerprint::from(n * 7919),
            })
            .collect()
    }

    fn key() -> GroupKey {
        GroupKey::new(&crate::config::GroupSecret::new(
            b"0123456789abcdef".to_vec(),
        ))
    }

    fn record(first_seq: u64, count: u64) -> Record {
        let mut frames = Vec::new();
        encode_frames(first_seq, &effects(count), &mut frames);
        Record::new(
            &key(),
            3,
            2,
            "a-1",
            Kind::Effects,
            first_seq,
            first_seq + count - 1,
            "prev",
            frames,
        )
    }

    #[test]
    fn records_round_trip_small_and_deflated() {
        for count in [1, 400] {
            let written = record(10, count);
            let document = written.to_document("uuid", 0);
            let read = Record::from_document(&document, "uuid", &key()).unwrap();
            assert_eq!(read, written);
            assert_eq!(read.effects().unwrap(), effects(count));
        }
        assert_eq!(record(1, 400).to_document("u", 0)["encoding"], "deflate");
    }

    #[test]
    fn records_of_format_2_are_read_and_of_a_newer_format_refused() {
        let written = record(10, 3);
        let mut document = written.to_document("uuid", 0);
        assert_eq!(document["format"], RECORD_FORMAT);
        document["format"] = json!(2);
        assert_eq!(
            Record::from_document(&document, "uuid", &key()),
            Ok(written)
        );
        for format in [1, RECORD_FORMAT + 1] {
            document["format"] = json!(format);
            let refused = Record::from_document(&document, "uuid", &key());
            assert!(
                refused.is_err_and(|error| error.contains("record format")),
                "format {format}"
            );
        }
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let document = record(10, 5).to_document("uuid", 0);
        assert!(Record::from_document(&document, "other", &key()).is_err());
        for (field, value) in [
            ("effects", json!("!!")),
            ("digest", json!("0000000000000000")),
            ("first_seq", json!(11)),
            ("kind", json!("other")),
            ("format", json!(99)),
            ("record", json!("x")),
            ("encoding", json!("deflate")),
        ] {
            let mut damaged = document.clone();
            damaged[field] = value;
            assert!(
                Record::from_document(&damaged, "uuid", &key()).is_err(),
                "{field}"
            );
        }
        // Frames whose numbers do not follow the record's range.
        let mut frames = Vec::new();
        encode_frames(20, &effects(2), &mut frames);
        let wrong = Record::new(&key(), 1, 1, "a", Kind::Effects, 10, 11, "p", frames);
        assert!(wrong.effects().is_err());
        let mut cut = record(10, 5);
        cut.frames.truncate(cut.frames.len() - 3);
        assert!(cut.effects().is_err());
        assert!(Record::from_document(&Value::Null, "uuid", &key()).is_err());
    }

    #[test]
    fn a_record_written_without_the_groups_secret_is_refused() {
        let mut frames = Vec::new();
        encode_frames(10, &effects(2), &mut frames);
        let other_key = GroupKey::new(&crate::config::GroupSecret::new(
            b"another-secret-16".to_vec(),
        ));
        let forged = Record::new(
            &other_key,
            3,
            2,
            "a-1",
            Kind::Effects,
            10,
            11,
            "prev",
            frames,
        );
        let error = Record::from_document(&forged.to_document("uuid", 0), "uuid", &key())
            .expect_err("forged");
        assert!(error.contains("secret"), "{error}");
        // An altered field of a genuine record is refused too.
        let mut altered = record(10, 2).to_document("uuid", 0);
        altered["writer"] = json!("mallory-1");
        assert!(Record::from_document(&altered, "uuid", &key()).is_err());
    }

    #[test]
    fn an_epoch_record_holds_an_empty_range() {
        let epoch = Record::new(&key(), 7, 3, "b-2", Kind::Epoch, 41, 40, "d", Vec::new());
        let read = Record::from_document(&epoch.to_document("u", 0), "u", &key()).unwrap();
        assert_eq!(read.effects().unwrap(), Vec::new());
        assert_eq!(read.kind, Kind::Epoch);
    }
}
