//! The units every stage shares: fingerprints, times, durations and sizes.
//!
//! Motivation: every stage of the data path speaks of a fingerprint and of
//! an arrival time, and settings speak of durations (`48h`) and sizes
//! (`100mb`). When these lived in the forest and in the server, every
//! candidate index imported the forest for a type alias, and the settings
//! imported the server for a parser.
//!
//! Design: plain aliases (a fingerprint is a `u64` everywhere, so the
//! indexes stay free to store it however they like), a fingerprint's
//! distance and its stamped form (16 hex digits, what `cluster_root` holds
//! and every endpoint reads back), one wall clock, one
//! reader of `<number><unit>` shared by durations and sizes, and the reader
//! of document times used by `stamp --time-field` and `rebuild`.
//!
//! Consequences: nothing here depends on any other module of the crate.

use serde_json::Value;

/// A 64-bit simhash.
pub type Fingerprint = u64;

/// A fingerprint stored in four 16-bit words: alignment 2, so a record
/// holding it beside 16- and 48-bit fields packs without padding (the
/// forest's node slots, 38 bytes; its expiry queue's entries, 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FingerprintWords([u16; 4]);

impl FingerprintWords {
    pub fn new(fingerprint: Fingerprint) -> Self {
        FingerprintWords([
            fingerprint as u16,
            (fingerprint >> 16) as u16,
            (fingerprint >> 32) as u16,
            (fingerprint >> 48) as u16,
        ])
    }

    #[inline]
    pub fn get(self) -> Fingerprint {
        let [a, b, c, d] = self.0;
        u64::from(a) | u64::from(b) << 16 | u64::from(c) << 32 | u64::from(d) << 48
    }
}

/// A node's number where 4 bytes must do for a fingerprint's 8: dense,
/// handed out by the forest ([`crate::forest::Forest::number`]), kept while
/// its node lives and reused after it goes.
pub type NodeId = u32;

/// A point in time: Unix milliseconds of arrival.
pub type Millis = i64;

/// Number of differing bits of two fingerprints.
pub fn hamming_distance(a: Fingerprint, b: Fingerprint) -> u32 {
    (a ^ b).count_ones()
}

/// Fingerprint as 16 lowercase hex digits (the stamped form).
pub fn format_fingerprint(fingerprint: Fingerprint) -> String {
    format!("{fingerprint:016x}")
}

/// Parse the stamped form back (exactly 16 hex digits, either case).
pub fn parse_fingerprint(text: &str) -> Option<Fingerprint> {
    if text.len() != 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(text, 16).ok()
}

/// The wall clock in milliseconds since the epoch (0 before 1970, which no
/// clock of a running system reads).
pub fn now_millis() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            Millis::try_from(elapsed.as_millis()).unwrap_or(Millis::MAX)
        })
}

/// Splits `"48h"` into `("48", "h")` (the unit trimmed).
fn split_number_and_unit(text: &str) -> (&str, &str) {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    (number, unit.trim())
}

/// A positive duration: `48h`, `30m`, `90s`, `7d`, `1500ms`; `never` is
/// `None` (no expiry, no limit). `what` names the setting in errors.
pub fn parse_duration(text: &str, what: &str) -> anyhow::Result<Option<Millis>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("never") {
        return Ok(None);
    }
    let (number, unit) = split_number_and_unit(text);
    let number: i64 = number.parse().map_err(|_| {
        anyhow::anyhow!("{what} `{text}`: expected a number and a unit (ms, s, m, h, d) or `never`")
    })?;
    let unit_millis = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => anyhow::bail!("{what} `{text}`: unknown unit `{unit}` (expected ms, s, m, h or d)"),
    };
    match number.checked_mul(unit_millis) {
        Some(millis) if millis > 0 => Ok(Some(millis)),
        _ => anyhow::bail!("{what} `{text}` must be positive and at most about 292 million years"),
    }
}

/// A retention: a duration or `never`.
pub fn parse_retention(text: &str) -> anyhow::Result<Option<Millis>> {
    parse_duration(text, "retention")
}

/// A byte size: a number with an optional unit `b`, `kb`, `mb`, `gb`
/// (powers of 1024, as the cluster reads `100mb`).
pub fn parse_size(text: &str) -> anyhow::Result<usize> {
    let text = text.trim().to_ascii_lowercase();
    let (number, unit) = split_number_and_unit(&text);
    let number: usize = number.parse().map_err(|_| {
        anyhow::anyhow!("size `{text}`: expected a number and a unit (b, kb, mb, gb)")
    })?;
    let unit: usize = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        other => anyhow::bail!("size `{text}`: unknown unit `{other}` (b, kb, mb, gb)"),
    };
    number
        .checked_mul(unit)
        .filter(|&size| size > 0)
        .ok_or_else(|| anyhow::anyhow!("size `{text}` must be positive and fit in memory"))
}

/// A document's time: epoch seconds or milliseconds (numbers below 10^11
/// are seconds, which covers dates until the year 5138), or an RFC 3339 /
/// `YYYY-MM-DD HH:MM:SS` / `YYYY-MM-DD` string (UTC unless an offset is
/// given).
pub fn parse_time(value: &Value) -> Option<Millis> {
    match value {
        Value::Number(number) => epoch_number_to_millis(number.as_f64()?),
        Value::String(text) => parse_time_text(text.trim()),
        _ => None,
    }
}

fn epoch_number_to_millis(number: f64) -> Option<Millis> {
    if !number.is_finite() {
        return None;
    }
    let millis = if number.abs() < 1e11 {
        number * 1000.0
    } else {
        number
    };
    (millis.abs() < 1e16).then_some(millis as Millis)
}

fn parse_time_text(text: &str) -> Option<Millis> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    if let Ok(number) = text.parse::<f64>() {
        return epoch_number_to_millis(number);
    }
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.timestamp_millis());
    }
    for format in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y/%m/%d %H:%M:%S",
    ] {
        if let Ok(time) = NaiveDateTime::parse_from_str(text, format) {
            return Some(time.and_utc().timestamp_millis());
        }
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprint_words_give_the_fingerprint_back_at_alignment_2() {
        assert_eq!(align_of::<FingerprintWords>(), 2);
        for fingerprint in [
            0,
            1,
            0xffff,
            0x1_0000,
            1 << 63,
            u64::MAX,
            0x0123_4567_89ab_cdef,
        ] {
            assert_eq!(FingerprintWords::new(fingerprint).get(), fingerprint);
        }
    }

    #[test]
    fn fingerprints_round_trip_as_hex() {
        assert_eq!(format_fingerprint(0xab), "00000000000000ab");
        assert_eq!(parse_fingerprint("00000000000000AB"), Some(0xab));
        assert_eq!(parse_fingerprint("ab"), None);
        assert_eq!(parse_fingerprint("+000000000000000"), None);
    }

    #[test]
    fn durations_and_retentions() {
        assert_eq!(parse_retention("48h").ok(), Some(Some(172_800_000)));
        assert_eq!(parse_retention("1500ms").ok(), Some(Some(1500)));
        assert_eq!(parse_retention("never").ok(), Some(None));
        assert!(parse_retention("0h").is_err());
        assert!(parse_retention("5w").is_err());
        assert!(parse_retention("h").is_err());
        let error = parse_duration("5w", "upstream_timeout")
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.starts_with("upstream_timeout `5w`"), "{error}");
    }

    #[test]
    fn sizes_read_like_the_clusters() {
        assert_eq!(parse_size("100mb").ok(), Some(100 << 20));
        assert_eq!(parse_size("512KB").ok(), Some(512 << 10));
        assert_eq!(parse_size("42").ok(), Some(42));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1tb").is_err());
        assert!(parse_size("mb").is_err());
    }

    #[test]
    fn times_in_every_supported_form() {
        assert_eq!(parse_time(&json!(1_700_000_000)), Some(1_700_000_000_000));
        assert_eq!(
            parse_time(&json!(1_700_000_000_123i64)),
            Some(1_700_000_000_123)
        );
        assert_eq!(
            parse_time(&json!("2024-01-02T03:04:05Z")),
            Some(1_704_164_645_000)
        );
        assert_eq!(
            parse_time(&json!("2024-01-02T11:04:05+08:00")),
            Some(1_704_164_645_000)
        );
        assert_eq!(
            parse_time(&json!("2024-01-02 03:04:05")),
            Some(1_704_164_645_000)
        );
        assert_eq!(parse_time(&json!("2024-01-02")), Some(1_704_153_600_000));
        assert_eq!(parse_time(&json!("1700000000")), Some(1_700_000_000_000));
        assert_eq!(parse_time(&json!("yesterday")), None);
        assert_eq!(parse_time(&json!(null)), None);
        assert_eq!(parse_time(&json!(1e300)), None);
    }

    #[test]
    fn the_clock_reads_after_2020() {
        assert!(now_millis() > 1_577_836_800_000);
    }
}
