//! Stage 8 of the data path: the one HTTP client of the cluster, and which
//! headers cross it.
//!
//! Design: one pooled `reqwest` client. Headers go through unchanged except
//! the hop-by-hop ones (RFC 9110 §7.6.1) and `Host`, so `Authorization`, API
//! keys, `compatible-with` content types and `X-Opaque-Id` reach the cluster,
//! and `X-Elastic-Product` comes back to Elasticsearch clients. Environment
//! proxies are ignored: the cluster is addressed directly. A timeout is the
//! time without progress (connect, or between bytes), not a total, so long
//! searches and big bulks are not cut while data flows.

use std::time::Duration;

use reqwest::Method;
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

/// Why a request to the cluster failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    #[error("cannot reach the cluster at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("the cluster at {url} did not answer within {timeout:?}")]
    Timeout { url: String, timeout: Duration },
}

/// The cluster, as the sidecar (and `rebuild`) reach it.
#[derive(Debug, Clone)]
pub struct Upstream {
    client: reqwest::Client,
    base: String,
    timeout: Duration,
}

impl Upstream {
    pub fn new(base: &str, timeout: Duration) -> anyhow::Result<Self> {
        let base = base.trim_end_matches('/').to_string();
        let parsed = reqwest::Url::parse(&base)
            .map_err(|error| anyhow::anyhow!("upstream URL `{base}`: {error}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            anyhow::bail!("upstream URL `{base}`: the scheme must be http or https");
        }
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .read_timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(60))
            .build()?;
        Ok(Upstream {
            client,
            base,
            timeout,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends one request; `path_and_query` starts with `/`.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        headers: HeaderMap,
        body: reqwest::Body,
    ) -> Result<reqwest::Response, UpstreamError> {
        let url = format!("{}{}", self.base, path_and_query);
        self.client
            .request(method, &url)
            .headers(headers)
            .body(body)
            .send()
            .await
            .map_err(|error| self.classify(&url, &error))
    }

    /// Reads a whole response body.
    pub async fn read_body(
        &self,
        url_for_errors: &str,
        response: reqwest::Response,
    ) -> Result<bytes::Bytes, UpstreamError> {
        response
            .bytes()
            .await
            .map_err(|error| self.classify(url_for_errors, &error))
    }

    fn classify(&self, url: &str, error: &reqwest::Error) -> UpstreamError {
        if error.is_timeout() {
            UpstreamError::Timeout {
                url: url.to_string(),
                timeout: self.timeout,
            }
        } else {
            UpstreamError::Unreachable {
                url: url.to_string(),
                detail: error_chain(error),
            }
        }
    }
}

/// A document as the cluster returns it (a search hit, or the answer of
/// `GET /{index}/_doc/{id}`): the parts the sidecar reads.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct StoredDocument {
    #[serde(rename = "_index", default)]
    pub index: Option<String>,
    #[serde(rename = "_id", default)]
    pub id: Option<String>,
    #[serde(rename = "_source", default)]
    pub source: serde_json::Value,
}

/// An error and its sources, one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

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
