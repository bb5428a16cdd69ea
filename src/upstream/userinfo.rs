//! Credentials written in the upstream URL (`https://user:pass@host`) are
//! taken out of it at once, so that no text the sidecar shows carries them.
//!
//! Motivation: the URL is shown in `/_neardup/health` (unauthenticated),
//! `/_neardup/stats`, the startup line, the log, and in every error that
//! names the cluster (a 502's body). A password there would reach anyone
//! who can call the sidecar or read its log.
//!
//! Design: [`split`] returns the URL without its userinfo, which is the
//! only form the sidecar keeps and shows, and the `Authorization: Basic`
//! header the userinfo stood for (marked sensitive), which
//! [`super::Upstream`] adds to a request that carries no `Authorization`
//! of its own, as the HTTP client did with a URL's userinfo. [`redact`] is
//! for texts written before the URL is known to parse.
//!
//! Consequences: the credentials live only in that header value; a client's
//! own `Authorization` still wins.

use reqwest::header::HeaderValue;

/// The base URL without userinfo, and the Basic credentials it carried.
///
/// # Errors
///
/// The URL does not parse (the error text is redacted).
pub fn split(base: &str) -> anyhow::Result<(String, Option<HeaderValue>)> {
    let mut parsed = reqwest::Url::parse(base)
        .map_err(|error| anyhow::anyhow!("upstream URL `{}`: {error}", redact(base)))?;
    if parsed.username().is_empty() && parsed.password().is_none() {
        return Ok((base.to_string(), None));
    }
    let user = percent_decoded(parsed.username());
    let password = parsed.password().map(percent_decoded).unwrap_or_default();
    let mut credentials = user;
    credentials.push(b':');
    credentials.extend_from_slice(&password);
    let mut header = HeaderValue::from_str(&format!("Basic {}", base64(&credentials)))
        .map_err(|_| anyhow::anyhow!("upstream URL `{}`: credentials unusable", redact(base)))?;
    header.set_sensitive(true);
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    let without = parsed.as_str().trim_end_matches('/').to_string();
    Ok((without, Some(header)))
}

/// `text` with the userinfo of any URL in it (`scheme://…@`) removed.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("://") {
        let (before, after) = rest.split_at(start + 3);
        out.push_str(before);
        let authority_end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '`')
            .unwrap_or(after.len());
        let authority = &after[..authority_end];
        match authority.rfind('@') {
            Some(at) => out.push_str(&authority[at + 1..]),
            None => out.push_str(authority),
        }
        rest = &after[authority_end..];
    }
    out.push_str(rest);
    out
}

fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut position = 0;
    while position < bytes.len() {
        if bytes[position] == b'%'
            && let Some(hex) = bytes.get(position + 1..position + 3)
            && let Ok(hex) = std::str::from_utf8(hex)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            position += 3;
            continue;
        }
        out.push(bytes[position]);
        position += 1;
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (position, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if position <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_becomes_a_basic_header() {
        let (base, header) = split("https://elastic:p%40ss@search:9200/prefix").expect("a URL");
        assert_eq!(base, "https://search:9200/prefix");
        let header = header.expect("credentials");
        assert!(header.is_sensitive());
        // base64("elastic:p@ss")
        assert_eq!(header.to_str().ok(), Some("Basic ZWxhc3RpYzpwQHNz"));
        let (base, header) = split("http://127.0.0.1:9200").expect("a URL");
        assert_eq!(base, "http://127.0.0.1:9200");
        assert!(header.is_none());
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
    }

    #[test]
    fn urls_in_texts_lose_their_userinfo() {
        assert_eq!(
            redact("upstream URL `https://u:secret@h:1/x`: bad"),
            "upstream URL `https://h:1/x`: bad"
        );
        assert_eq!(redact("http://h/a@b"), "http://h/a@b");
        assert_eq!(redact("no url"), "no url");
    }
}
