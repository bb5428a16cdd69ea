//! Which headers cross the sidecar, both ways.
//!
//! Headers go through unchanged except the hop-by-hop ones (RFC 9110
//! §7.6.1) and `Host`, so `Authorization`, API keys, `compatible-with`
//! content types (`application/vnd.elasticsearch+json; compatible-with=8`)
//! and `X-Opaque-Id` reach the cluster, and `X-Elastic-Product` comes back:
//! the Elasticsearch clients refuse a server that does not send it.

use reqwest::header::{self, HeaderMap, HeaderName};

/// Headers that belong to one connection, not to the request.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn is_hop_by_hop(name: &HeaderName, connection_listed: &[String]) -> bool {
    let name = name.as_str();
    HOP_BY_HOP.contains(&name) || connection_listed.iter().any(|listed| listed == name)
}

/// Names listed in `Connection` are hop-by-hop too.
fn connection_listed(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect()
}

/// The client's headers as they go to the cluster. `body_rewritten`: the
/// sidecar sends a body of its own (stamped, decompressed), so length and
/// encoding headers are its own too, and the answer is asked for
/// uncompressed (the sidecar reads it).
pub fn request_headers(headers: &HeaderMap, body_rewritten: bool) -> HeaderMap {
    let listed = connection_listed(headers);
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if is_hop_by_hop(name, &listed) || name == header::HOST {
            continue;
        }
        if body_rewritten
            && (name == header::CONTENT_LENGTH
                || name == header::CONTENT_ENCODING
                || name == header::ACCEPT_ENCODING)
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The cluster's headers as they go back to the client. `body_rewritten`:
/// the sidecar re-encoded the body, so the length is recomputed.
pub fn response_headers(headers: &HeaderMap, body_rewritten: bool) -> HeaderMap {
    let listed = connection_listed(headers);
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if is_hop_by_hop(name, &listed) {
            continue;
        }
        if body_rewritten && name == header::CONTENT_LENGTH {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// Only the client's credentials, for requests the sidecar makes on a
/// client's behalf (backfill, reading a write in doubt back).
pub fn credentials(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        out.insert(header::AUTHORIZATION, value.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn hop_by_hop_and_host_headers_stay_behind() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("sidecar:9201"));
        headers.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, x-trace"),
        );
        headers.insert("x-trace", HeaderValue::from_static("1"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic eDp5"),
        );
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/vnd.elasticsearch+x-ndjson; compatible-with=8"),
        );
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("10"));
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let passed = request_headers(&headers, false);
        let names: Vec<&str> = passed.keys().map(HeaderName::as_str).collect();
        assert_eq!(
            names,
            [
                "authorization",
                "content-type",
                "content-length",
                "accept-encoding"
            ]
        );
        let rewritten = request_headers(&headers, true);
        let names: Vec<&str> = rewritten.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["authorization", "content-type"]);
    }

    #[test]
    fn the_product_header_comes_back() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-elastic-product",
            HeaderValue::from_static("Elasticsearch"),
        );
        headers.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
        let back = response_headers(&headers, true);
        assert_eq!(back.len(), 1);
        assert!(back.contains_key("x-elastic-product"));
    }
}
