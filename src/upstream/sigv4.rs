//! AWS Signature Version 4 for Amazon OpenSearch Service (`es`) and
//! OpenSearch Serverless (`aoss`).
//!
//! Motivation: a domain with IAM access checks a signature over each
//! request's method, path, query, some headers and body. A client's own
//! signature cannot survive the sidecar (stamping changes the body), so
//! the sidecar signs every request it sends, after stamping.
//!
//! Design: the algorithm as AWS documents it, on the HMAC and SHA-256 of
//! `aws-lc-rs` (already linked through rustls; `aws-sigv4` would add 39
//! crates and a second `http`, see `docs/decisions.md`). What is signed is
//! exactly what is sent, and what is sent means what the client meant:
//!
//! - the path goes as the client wrote it (its escapes kept byte for byte;
//!   the HTTP client only escapes what a URL cannot carry and, by the URL
//!   standard, resolves `.`/`..` segments, as it does for every request);
//!   the canonical URI is that path with dot and empty segments removed
//!   and every byte but `A-Z a-z 0-9 - _ . ~ /` escaped once more, as
//!   botocore computes it for these services;
//! - the query is sent with each name and value in canonical encoding, in
//!   the client's order ([`wire_form`]): decoded as the cluster decodes a
//!   query (`+` is a space, `%XX` a byte), then escaped keeping only the
//!   unreserved characters. The cluster reads the same values, and every
//!   reading of the canonical query (raw, or decoded and encoded again)
//!   gives the same text, so `?q=a+b` stays a search for `a b` (a space,
//!   `%20`) and its signature holds. A name or value with a malformed
//!   escape (`%zz`) goes as it came, for the cluster to refuse;
//! - no byte is replaced: escapes are decoded to bytes, never through a
//!   lossy UTF-8 conversion, so an id with `%FF` stays that id.
//!
//! Signed headers: `host`, `x-amz-content-sha256` (the body's hash, which
//! OpenSearch Serverless requires), `x-amz-date` and, with temporary
//! credentials, `x-amz-security-token`. Checked against botocore's signer
//! (`tests/python/test_sigv4.py`) and AWS's published example.

use aws_lc_rs::{digest, hmac};
use chrono::{DateTime, Utc};

/// Credentials to sign with.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    /// For temporary credentials (a role's, an instance's).
    pub session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// A request to sign.
pub struct Unsigned<'a> {
    pub method: &'a str,
    /// `host[:port]` as the `Host` header carries it.
    pub host: &'a str,
    /// As the caller would send it (percent-encoded or not).
    pub path_and_query: &'a str,
    /// `None` for a body streamed unread (signed as `UNSIGNED-PAYLOAD`).
    pub body: Option<&'a [u8]>,
}

/// What the signed request carries: its path and query in canonical form
/// (send this one), and the headers to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub path_and_query: String,
    pub headers: Vec<(&'static str, String)>,
}

/// Signs `request` for `service` in `region` at `time`.
pub fn sign(
    request: &Unsigned<'_>,
    credentials: &Credentials,
    region: &str,
    service: &str,
    time: DateTime<Utc>,
) -> Signed {
    let (path, query) = request
        .path_and_query
        .split_once('?')
        .unwrap_or((request.path_and_query, ""));
    let canonical_uri = encode(&remove_dot_segments(path), true);
    let query_text = canonical_query(query);
    let amz_date = time.format("%Y%m%dT%H%M%SZ").to_string();
    let date = &amz_date[..8];
    let payload_hash = match request.body {
        Some(body) => hex(digest::digest(&digest::SHA256, body).as_ref()),
        None => "UNSIGNED-PAYLOAD".to_string(),
    };
    let mut headers: Vec<(&'static str, String)> = vec![
        ("host", request.host.trim().to_string()),
        ("x-amz-content-sha256", payload_hash.clone()),
        ("x-amz-date", amz_date.clone()),
    ];
    if let Some(token) = &credentials.session_token {
        headers.push(("x-amz-security-token", token.clone()));
    }
    let signed_headers = headers
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(";");
    let canonical_headers: String = headers
        .iter()
        .map(|(name, value)| format!("{name}:{value}\n"))
        .collect();
    let canonical_request = format!(
        "{}\n{canonical_uri}\n{query_text}\n{canonical_headers}\n{signed_headers}\n{payload_hash}",
        request.method.to_ascii_uppercase(),
    );
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical_request.as_bytes()).as_ref())
    );
    let key = signing_key(&credentials.secret_access_key, date, region, service);
    let signature = hex(hmac::sign(&key, string_to_sign.as_bytes()).as_ref());
    headers.retain(|(name, _)| *name != "host");
    headers.push((
        "authorization",
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            credentials.access_key_id
        ),
    ));
    Signed {
        path_and_query: request.path_and_query.to_string(),
        headers,
    }
}

/// The key of one day, region and service.
fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> hmac::Key {
    let step = |key: &[u8], data: &str| {
        hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
    };
    let day = step(format!("AWS4{secret}").as_bytes(), date);
    let region = step(day.as_ref(), region);
    let service = step(region.as_ref(), service);
    let signing = step(service.as_ref(), "aws4_request");
    hmac::Key::new(hmac::HMAC_SHA256, signing.as_ref())
}

/// The path with dot segments and empty segments removed (botocore's
/// `remove_dot_segments`, which these services apply before comparing).
fn remove_dot_segments(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            segment => segments.push(segment),
        }
    }
    let mut out = format!("/{}", segments.join("/"));
    if path.ends_with('/') && !segments.is_empty() {
        out.push('/');
    }
    out
}

/// The query as sent (names and values already in canonical encoding, see
/// [`wire_form`]), its pairs sorted; a pair without `=` has an empty value.
fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(&str, &str)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect();
    pairs.sort_unstable();
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// What to send for a client's `path_and_query`: the path as it is, the
/// query's names and values in canonical encoding, in the client's order
/// (see the module's documentation).
pub fn wire_form(path_and_query: &str) -> String {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return path_and_query.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => format!(
                "{}={}",
                canonical_component(name),
                canonical_component(value)
            ),
            None => canonical_component(pair),
        })
        .collect();
    if pairs.is_empty() {
        return path.to_string();
    }
    format!("{path}?{}", pairs.join("&"))
}

/// One query name or value decoded as the cluster decodes it (`+` a space)
/// and escaped canonically; as it came when an escape is malformed.
fn canonical_component(text: &str) -> String {
    let plus_as_space = text.replace('+', " ");
    match percent_decode(&plus_as_space) {
        Some(bytes) => encode_bytes(&bytes, false),
        None => text.to_string(),
    }
}

/// Percent-encodes every byte but `A-Z a-z 0-9 - _ . ~` (and `/` when
/// `keep_slashes`).
fn encode(text: &str, keep_slashes: bool) -> String {
    encode_bytes(text.as_bytes(), keep_slashes)
}

fn encode_bytes(bytes: &[u8], keep_slashes: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        if byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'_' | b'.' | b'~')
            || (keep_slashes && byte == b'/')
        {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The bytes `%XX` stand for; `None` when a `%` is not followed by two
/// hex digits.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        if bytes[position] == b'%' {
            let pair = bytes.get(position + 1..position + 3)?;
            let pair = std::str::from_utf8(pair).ok()?;
            out.push(u8::from_str_radix(pair, 16).ok()?);
            position += 3;
        } else {
            out.push(bytes[position]);
            position += 1;
        }
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn example_credentials() -> Credentials {
        // AWS's documented example key pair.
        Credentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        }
    }

    #[test]
    fn the_signing_key_matches_the_documented_example() {
        // docs.aws.amazon.com, "Examples of how to derive a signing key".
        let key = signing_key(
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "20120215",
            "us-east-1",
            "iam",
        );
        let probe = hmac::sign(&key, b"");
        let expected = hmac::sign(
            &hmac::Key::new(
                hmac::HMAC_SHA256,
                &(0..32)
                    .map(|at| {
                        u8::from_str_radix(
                            &"f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
                                [at * 2..at * 2 + 2],
                            16,
                        )
                        .unwrap_or(0)
                    })
                    .collect::<Vec<u8>>(),
            ),
            b"",
        );
        assert_eq!(probe.as_ref(), expected.as_ref());
    }

    #[test]
    fn queries_are_sent_canonically_and_mean_what_the_client_meant() {
        assert_eq!(wire_form("/news/_search?q=a+b"), "/news/_search?q=a%20b");
        assert_eq!(wire_form("/news/_search?q=a%2Bb"), "/news/_search?q=a%2Bb");
        assert_eq!(
            wire_form("/n/_search?filter_path=items.*.error&refresh&b=%e6%96%b0"),
            "/n/_search?filter_path=items.%2A.error&refresh&b=%E6%96%B0"
        );
        assert_eq!(
            wire_form("/n/_doc/a%2Fb%FF?x=%zz&&y=1"),
            "/n/_doc/a%2Fb%FF?x=%zz&y=1"
        );
        assert_eq!(wire_form("/n?"), "/n");
        // The order stays the client's; only the signature sorts.
        assert_eq!(wire_form("/?b=1&a=2"), "/?b=1&a=2");
        assert_eq!(canonical_query("b=1&a=2&refresh"), "a=2&b=1&refresh=");
    }

    #[test]
    fn the_canonical_uri_is_the_path_as_sent_escaped_once_more() {
        assert_eq!(remove_dot_segments("/a/./b/../c/"), "/a/c/");
        assert_eq!(remove_dot_segments("/a//b"), "/a/b");
        assert_eq!(remove_dot_segments(""), "/");
        assert_eq!(
            encode("/my%20index/_doc/a%2Fb", true),
            "/my%2520index/_doc/a%252Fb"
        );
        assert_eq!(encode("/a+b", true), "/a%2Bb");
        assert_eq!(percent_decode("%FF%e6"), Some(vec![0xFF, 0xE6]));
        assert_eq!(percent_decode("%4"), None);
    }

    #[test]
    fn a_request_is_signed_with_the_documented_headers() {
        let time = Utc
            .with_ymd_and_hms(2015, 8, 30, 12, 36, 0)
            .single()
            .unwrap_or_default();
        let signed = sign(
            &Unsigned {
                method: "GET",
                host: "example.amazonaws.com",
                path_and_query: "/?Param2=value2&Param1=value1",
                body: Some(b""),
            },
            &example_credentials(),
            "us-east-1",
            "service",
            time,
        );
        assert_eq!(signed.path_and_query, "/?Param2=value2&Param1=value1");
        let header = |name: &str| {
            signed
                .headers
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.as_str())
        };
        assert_eq!(header("x-amz-date"), Some("20150830T123600Z"));
        assert_eq!(
            header("x-amz-content-sha256"),
            Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        );
        let authorization = header("authorization").unwrap_or_default();
        assert!(authorization.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature="
        ));
        let with_token = sign(
            &Unsigned {
                method: "POST",
                host: "example.amazonaws.com",
                path_and_query: "/_bulk",
                body: Some(b"{}\n"),
            },
            &Credentials {
                session_token: Some("token".into()),
                ..example_credentials()
            },
            "eu-west-1",
            "aoss",
            time,
        );
        assert!(
            with_token
                .headers
                .contains(&("x-amz-security-token", "token".into()))
        );
        assert!(
            with_token
                .headers
                .iter()
                .any(|(name, value)| *name == "authorization"
                    && value.contains(
                        "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token"
                    ))
        );
    }
}
