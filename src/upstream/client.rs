//! The one HTTP client of the cluster, and the requests the sidecar makes
//! on its own account: a JSON (or NDJSON) body out, the whole answer back.
//!
//! Design: one pooled `reqwest` client. [`Upstream::send`] streams a
//! request as it is (the pass-through and the write path use it);
//! [`Upstream::call`] sends a body the sidecar wrote, with its content type,
//! and reads the answer whole, whatever its status, so the caller decides
//! what a refusal means (the similar lookup and the Explorer hand it back to
//! their client, the backfill retries a bulk). [`Upstream::call_json`] is for
//! callers that can only go on with a success: anything else becomes a
//! [`ClusterError`] that says which request failed and what the cluster said.
//!
//! Environment proxies are ignored: the cluster is addressed directly. A
//! timeout is the time without progress (connect, or between bytes), not a
//! total, so long searches, scroll pages and big bulks are not cut while
//! data flows.

use std::time::Duration;

use bytes::Bytes;
use reqwest::Method;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap, HeaderValue};
use serde_json::Value;

/// Why a request to the cluster got no answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    #[error("cannot reach the cluster at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("the cluster at {url} did not answer within {timeout:?}")]
    Timeout { url: String, timeout: Duration },
    /// The TLS handshake failed: the cluster's certificate is not trusted,
    /// it refused ours, or it does not speak TLS; the detail ends with
    /// what to do ([`super::tls_hint`]).
    #[error("TLS with the cluster at {url} failed: {detail}")]
    Certificate { url: String, detail: String },
    /// The connection broke after the request may have been sent.
    #[error("the connection to the cluster at {url} broke before its answer: {detail}")]
    Interrupted { url: String, detail: String },
    /// The request could not be signed (`--upstream-auth aws-sigv4`): it
    /// was not sent.
    #[error("cannot sign the request to the cluster at {url}: {detail}")]
    Signing { url: String, detail: String },
}

impl UpstreamError {
    /// Whether the cluster may have received (and carried out) the
    /// request: anything but a connection that was never made.
    pub fn may_have_arrived(&self) -> bool {
        !matches!(
            self,
            UpstreamError::Unreachable { .. }
                | UpstreamError::Certificate { .. }
                | UpstreamError::Signing { .. }
        )
    }
}

/// Why a request the sidecar made on its own account did not succeed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClusterError {
    /// No answer: unreachable or silent.
    #[error("{request}: {error}")]
    Unanswered {
        request: String,
        error: UpstreamError,
    },
    /// An answer other than 2xx.
    #[error("the cluster answered {request} with {status}: {answer}")]
    Refused {
        request: String,
        status: StatusCode,
        answer: String,
    },
    /// A 2xx answer that is not JSON.
    #[error("the cluster's answer to {request} is not JSON: {answer}")]
    NotJson { request: String, answer: String },
    /// The index (or every index of a pattern) does not exist.
    #[error("the cluster has no index [{index}]: {answer}")]
    NoIndex { index: String, answer: String },
}

/// A body the sidecar writes itself; its content type goes with it.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// No body, no content type.
    Empty,
    /// `application/json`.
    Json(&'a Value),
    /// `application/x-ndjson` (a `_bulk` body, every line ended).
    NdJson(&'a str),
}

/// The cluster's whole answer to one request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON, if it is.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The body as JSON, or as one JSON string when it is not (for error
    /// texts and for answers read field by field).
    pub fn json_or_text(&self) -> Value {
        self.json()
            .unwrap_or_else(|| Value::String(String::from_utf8_lossy(&self.body).into_owned()))
    }
}

/// TLS towards the cluster, read from its files
/// ([`crate::config::UpstreamTlsSettings::load`]).
#[derive(Debug, Clone, Default)]
pub struct UpstreamTls {
    /// PEM bundle added to the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// Client certificate and key, PEM, one after the other.
    pub identity_pem: Option<Vec<u8>>,
    /// No verification of the cluster's certificate.
    pub insecure: bool,
    /// Every request signed with SigV4 (`--upstream-auth aws-sigv4`).
    pub aws_signing: Option<AwsSigning>,
}

/// Where SigV4 signatures are scoped (`--aws-region`, `--aws-service`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsSigning {
    pub region: String,
    /// `es` (Amazon OpenSearch Service) or `aoss` (OpenSearch Serverless).
    pub service: String,
}

/// Signs each request: the scope, the credentials' chain, and the parts
/// of the cluster's URL the signature covers.
#[derive(Debug)]
struct Signer {
    scope: AwsSigning,
    chain: super::aws_credentials::CredentialChain,
    /// `scheme://host[:port]`.
    origin: String,
    /// `host[:port]`, as the `Host` header carries it.
    host: String,
    /// The path of the upstream URL (`""` or `/prefix`).
    base_path: String,
}

/// The cluster, as the sidecar, `rebuild` and `backfill` reach it.
#[derive(Debug, Clone)]
pub struct Upstream {
    client: reqwest::Client,
    base: String,
    timeout: Duration,
    signer: Option<std::sync::Arc<Signer>>,
    /// What TLS was given, for the hint of a failed handshake.
    tls_given: super::tls_hint::TlsGiven,
    /// `Authorization: Basic` from credentials written in the URL (taken
    /// out of `base`, see [`super::userinfo`]).
    url_credentials: Option<HeaderValue>,
    /// A client certificate is presented to the cluster.
    presents_certificate: bool,
}

impl Upstream {
    pub fn new(base: &str, timeout: Duration, tls: &UpstreamTls) -> anyhow::Result<Self> {
        let (base, url_credentials) = super::userinfo::split(base.trim_end_matches('/'))?;
        let parsed = reqwest::Url::parse(&base)
            .map_err(|error| anyhow::anyhow!("upstream URL `{base}`: {error}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            anyhow::bail!("upstream URL `{base}`: the scheme must be http or https");
        }
        let builder = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .read_timeout(timeout)
            .pool_idle_timeout(Duration::from_secs(60));
        let mut builder = super::roots::for_scheme(builder, parsed.scheme());
        if let Some(pem) = &tls.ca_pem {
            let roots = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|error| anyhow::anyhow!("--upstream-ca: not a PEM bundle: {error}"))?;
            builder = builder.tls_certs_merge(roots);
        }
        if let Some(pem) = &tls.identity_pem {
            let identity = reqwest::Identity::from_pem(pem).map_err(|error| {
                anyhow::anyhow!(
                    "--upstream-cert/--upstream-key: not a certificate and its key: {error}"
                )
            })?;
            builder = builder.identity(identity);
        }
        if tls.insecure {
            builder = builder.tls_danger_accept_invalid_certs(true);
        }
        let client = builder
            .build()
            .map_err(|error| super::roots::explain(error, &base))?;
        let signer = tls.aws_signing.as_ref().map(|scope| {
            let host = match parsed.port() {
                Some(port) => format!("{}:{port}", parsed.host_str().unwrap_or_default()),
                None => parsed.host_str().unwrap_or_default().to_string(),
            };
            std::sync::Arc::new(Signer {
                scope: scope.clone(),
                chain: super::aws_credentials::CredentialChain::new(Some(scope.region.clone())),
                origin: format!("{}://{host}", parsed.scheme()),
                host,
                base_path: parsed.path().trim_end_matches('/').to_string(),
            })
        });
        Ok(Upstream {
            client,
            base,
            timeout,
            signer,
            tls_given: super::tls_hint::TlsGiven {
                ca: tls.ca_pem.is_some(),
                client_certificate: tls.identity_pem.is_some(),
            },
            url_credentials,
            presents_certificate: tls.identity_pem.is_some(),
        })
    }

    /// Whether every request is signed (then a body must be read before it
    /// is sent: the signature covers its hash).
    pub fn signs_requests(&self) -> bool {
        self.signer.is_some()
    }

    /// Whether requests reach the cluster with an identity of the
    /// sidecar's (SigV4, a client certificate, credentials in the URL),
    /// which a request could borrow (see `serve::hosts`).
    pub fn holds_identity(&self) -> bool {
        self.signer.is_some() || self.presents_certificate || self.url_credentials.is_some()
    }

    /// The cluster's URL, without credentials.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// How long a request may go without progress.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends one request as it is; `path_and_query` starts with `/`.
    pub async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        headers: HeaderMap,
        body: reqwest::Body,
    ) -> Result<reqwest::Response, UpstreamError> {
        let (url, headers) = match &self.signer {
            None => {
                let mut headers = headers;
                if let Some(credentials) = &self.url_credentials
                    && !headers.contains_key(header::AUTHORIZATION)
                {
                    headers.insert(header::AUTHORIZATION, credentials.clone());
                }
                (format!("{}{}", self.base, path_and_query), headers)
            }
            Some(signer) => {
                self.signed(signer, &method, path_and_query, headers, &body)
                    .await?
            }
        };
        self.client
            .request(method, &url)
            .headers(headers)
            .body(body)
            .send()
            .await
            .map_err(|error| self.classify(&url, &error))
    }

    /// The URL and headers of a request signed by `signer`: the client's
    /// `Authorization` and `X-Amz-*` headers give way to the signature's.
    async fn signed(
        &self,
        signer: &Signer,
        method: &Method,
        path_and_query: &str,
        mut headers: HeaderMap,
        body: &reqwest::Body,
    ) -> Result<(String, HeaderMap), UpstreamError> {
        let failed = |detail: String| UpstreamError::Signing {
            url: format!("{}{path_and_query}", self.base),
            detail,
        };
        let credentials = signer.chain.credentials().await.map_err(failed)?;
        // Signed as the HTTP client will send it (it escapes what a URL
        // cannot carry): parsed here once, sent as parsed.
        let wire = super::sigv4::wire_form(&format!("{}{path_and_query}", signer.base_path));
        let url = reqwest::Url::parse(&format!("{}{wire}", signer.origin))
            .map_err(|error| failed(format!("not a URL path: {error}")))?;
        let sent = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let signed = super::sigv4::sign(
            &super::sigv4::Unsigned {
                method: method.as_str(),
                host: &signer.host,
                path_and_query: &sent,
                body: body.as_bytes(),
            },
            &credentials,
            &signer.scope.region,
            &signer.scope.service,
            chrono::Utc::now(),
        );
        let theirs: Vec<_> = headers
            .keys()
            .filter(|name| name.as_str().starts_with("x-amz-"))
            .cloned()
            .collect();
        for name in theirs {
            headers.remove(name);
        }
        headers.remove(header::AUTHORIZATION);
        for (name, value) in signed.headers {
            let value = HeaderValue::from_str(&value)
                .map_err(|_| failed(format!("the {name} header cannot carry its value")))?;
            headers.insert(name, value);
        }
        Ok((url.to_string(), headers))
    }

    /// Reads a whole response body.
    pub async fn read_body(
        &self,
        url_for_errors: &str,
        response: reqwest::Response,
    ) -> Result<Bytes, UpstreamError> {
        response
            .bytes()
            .await
            .map_err(|error| self.classify(url_for_errors, &error))
    }

    /// Sends `payload` with `headers` (its content type replacing any) and
    /// reads the whole answer, whatever its status.
    ///
    /// # Errors
    ///
    /// No answer: the cluster unreachable, or silent past the timeout.
    pub async fn call(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &HeaderMap,
        payload: Payload<'_>,
    ) -> Result<Answer, UpstreamError> {
        let mut headers = headers.clone();
        let body = match payload {
            Payload::Empty => reqwest::Body::from(Vec::new()),
            Payload::Json(value) => {
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                reqwest::Body::from(value.to_string())
            }
            Payload::NdJson(text) => {
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/x-ndjson"),
                );
                reqwest::Body::from(text.to_string())
            }
        };
        let response = self.send(method, path_and_query, headers, body).await?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = self.read_body(path_and_query, response).await?;
        Ok(Answer {
            status,
            headers,
            body,
        })
    }

    /// [`Upstream::call`] for a caller that needs a 2xx JSON answer.
    ///
    /// # Errors
    ///
    /// No answer, an answer other than 2xx, or one that is not JSON.
    pub async fn call_json(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &HeaderMap,
        payload: Payload<'_>,
    ) -> Result<Value, ClusterError> {
        let request = || format!("{method} {path_and_query}");
        let answer = self
            .call(method.clone(), path_and_query, headers, payload)
            .await
            .map_err(|error| ClusterError::Unanswered {
                request: request(),
                error,
            })?;
        if !answer.status.is_success() {
            return Err(ClusterError::Refused {
                request: request(),
                status: answer.status,
                answer: answer.json_or_text().to_string(),
            });
        }
        answer.json().ok_or_else(|| ClusterError::NotJson {
            request: request(),
            answer: String::from_utf8_lossy(&answer.body).into_owned(),
        })
    }

    /// `POST /{index}/_search` (`POST /_search` without an index) with a
    /// JSON query; the answer whatever its status. `index` is an index
    /// expression: names, wildcards and commas (percent-encoded here).
    ///
    /// # Errors
    ///
    /// No answer.
    pub async fn search(
        &self,
        index: Option<&str>,
        headers: &HeaderMap,
        query: &Value,
    ) -> Result<Answer, UpstreamError> {
        let path = match index {
            Some(index) => format!("/{}/_search", encode_component(index)),
            None => "/_search".to_string(),
        };
        self.call(Method::POST, &path, headers, Payload::Json(query))
            .await
    }

    fn classify(&self, url: &str, error: &reqwest::Error) -> UpstreamError {
        if error.is_timeout() {
            UpstreamError::Timeout {
                url: url.to_string(),
                timeout: self.timeout,
            }
        } else if is_tls_failure(error) {
            let chain = error_chain(error);
            let hint =
                super::tls_hint::hint(&chain.to_ascii_lowercase(), &self.base, self.tls_given);
            UpstreamError::Certificate {
                url: url.to_string(),
                detail: format!("{chain} ({hint})"),
            }
        } else if error.is_connect() {
            UpstreamError::Unreachable {
                url: url.to_string(),
                detail: error_chain(error),
            }
        } else {
            UpstreamError::Interrupted {
                url: url.to_string(),
                detail: error_chain(error),
            }
        }
    }
}

/// Whether `error` came from the TLS handshake (a certificate not
/// trusted, expired or for another name; a client certificate refused).
fn is_tls_failure(error: &reqwest::Error) -> bool {
    let chain = error_chain(error).to_ascii_lowercase();
    [
        "certificate",
        "invalid peer",
        "tls handshake",
        "unknownissuer",
        "handshake failure",
    ]
    .iter()
    .any(|mark| chain.contains(mark))
        || super::tls_hint::is_plain_http_answer(&chain)
}

/// Percent-encodes a path segment or a query-string value: every byte but
/// the unreserved ones of RFC 3986 (letters, digits, `-._~`) and the two an
/// index expression is made of (`*` wildcards, `,` lists), which both
/// clusters read the same whether escaped or not.
pub fn encode_component(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~*,".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
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
    pub source: Value,
}

/// `hits.total` of a search answer: `{"value": N, "relation": …}` since
/// Elasticsearch 7 and on OpenSearch, a bare number before (and with
/// `rest_total_hits_as_int`).
pub fn hits_total(answer: &Value) -> Option<u64> {
    let total = &answer["hits"]["total"];
    total["value"].as_u64().or_else(|| total.as_u64())
}

/// The hits of a search answer (none when it has none).
pub fn hits(answer: &Value) -> &[Value] {
    answer["hits"]["hits"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn components_are_encoded_but_index_expressions_stay_readable() {
        assert_eq!(encode_component("a/b c"), "a%2Fb%20c");
        assert_eq!(encode_component("news-2026.11"), "news-2026.11");
        assert_eq!(encode_component("news*,blog"), "news*,blog");
        assert_eq!(encode_component("新闻"), "%E6%96%B0%E9%97%BB");
        assert_eq!(encode_component("a+b&c=d#e%"), "a%2Bb%26c%3Dd%23e%25");
    }

    #[test]
    fn totals_are_read_in_both_shapes() {
        assert_eq!(
            hits_total(&json!({"hits": {"total": {"value": 7, "relation": "eq"}}})),
            Some(7)
        );
        assert_eq!(hits_total(&json!({"hits": {"total": 3}})), Some(3));
        assert_eq!(hits_total(&json!({"hits": {}})), None);
        assert!(hits(&json!({})).is_empty());
    }

    #[test]
    fn an_answer_that_is_not_json_is_kept_as_text() {
        let answer = Answer {
            status: StatusCode::BAD_GATEWAY,
            headers: HeaderMap::new(),
            body: Bytes::from_static(b"<html>bad gateway</html>"),
        };
        assert_eq!(answer.json(), None);
        assert_eq!(answer.json_or_text(), json!("<html>bad gateway</html>"));
    }
}
