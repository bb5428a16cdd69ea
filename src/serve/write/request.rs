//! What every step of one write needs to know about its request.

use std::sync::Arc;

use axum::http::request::Parts;
use axum::http::{HeaderMap, Method};

use crate::serve::filter_path::{FilterPath, split_filter_path};
use crate::serve::sidecar::Sidecar;
use crate::upstream;

/// One write's request, as the steps after admission see it.
pub(super) struct WriteRequest<'a> {
    pub sidecar: &'a Sidecar,
    /// The same, for work that outlives the request (reading writes in
    /// doubt back).
    pub shared: Arc<Sidecar>,
    pub method: Method,
    /// The forwarded path and query (`filter_path` taken off: the sidecar
    /// needs every item of the answer, and applies the filter itself).
    pub path_and_query: String,
    /// The client's headers as they go to the cluster (the body is the
    /// sidecar's: read, decompressed, stamped).
    pub headers: HeaderMap,
    pub filter: Option<FilterPath>,
    /// The index named in the path (`/{index}/_bulk`, `/{index}/_doc`).
    pub path_index: Option<String>,
}

impl<'a> WriteRequest<'a> {
    pub fn new(sidecar: &'a Arc<Sidecar>, parts: &Parts, path_index: Option<String>) -> Self {
        let (query, filter) = split_filter_path(parts.uri.query());
        sidecar.lent_credentials.offer(&parts.headers);
        WriteRequest {
            sidecar,
            shared: sidecar.clone(),
            method: parts.method.clone(),
            path_and_query: with_query(parts.uri.path(), &query),
            headers: upstream::request_headers(&parts.headers, true),
            filter,
            path_index,
        }
    }
}

fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}
