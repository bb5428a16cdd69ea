//! Finding the documents that carry given stamps: a `terms` search on the
//! stamp field, read a page at a time through a scroll.
//!
//! Motivation: a text can have any number of exact copies, all with one
//! stamp; a single search of at most 10 000 hits could end before the copy
//! a read-back looks for (a write in doubt without an `_id`, or one from
//! before a crash). A scroll needs no sort key and is standard on
//! Elasticsearch and OpenSearch; the caller says when it has seen enough.

use axum::http::{HeaderMap, Method};
use serde_json::{Value, json};

use crate::ledger::DocumentKey;
use crate::serve::sidecar::Sidecar;
use crate::units::{Fingerprint, format_fingerprint, parse_fingerprint};
use crate::upstream::{Payload, encode_component};

/// Stamps looked for per search.
const STAMPS_PER_SEARCH: usize = 1_000;

/// Hits per page of a search for stamps.
const STAMP_HITS_PER_PAGE: usize = 1_000;

/// How long the cluster keeps a search for stamps between its pages.
const STAMP_SCROLL_KEEP_ALIVE: &str = "1m";

/// A hit's key and the stamp in its `field`.
pub(super) fn key_and_stamp(hit: &Value, field: &str) -> Option<(DocumentKey, Fingerprint)> {
    let key = DocumentKey::new(hit["_index"].as_str()?, hit["_id"].as_str()?);
    Some((key, parse_fingerprint(hit["_source"][field].as_str()?)?))
}

/// Searches `index` (every index when `None`) for documents holding one
/// of `stamps`, in batches of stamps, each read a page at a time through a
/// scroll (standard on Elasticsearch and OpenSearch, needs no sort key),
/// handing each page to `take` until it answers `true` (enough) or the
/// hits end. Hits carry the stamp field and `more_fields`.
pub(super) async fn scroll_stamps(
    sidecar: &Sidecar,
    headers: &HeaderMap,
    index: Option<&str>,
    stamps: &[Fingerprint],
    more_fields: &[&str],
    mut take: impl FnMut(&[Value]) -> bool,
) -> Result<(), String> {
    let field = sidecar.simhash_field.as_str();
    let mut fields = vec![field];
    fields.extend_from_slice(more_fields);
    let path = match index {
        Some(index) => format!(
            "/{}/_search?scroll={STAMP_SCROLL_KEEP_ALIVE}",
            encode_component(index)
        ),
        None => format!(
            "/_search?scroll={STAMP_SCROLL_KEEP_ALIVE}&ignore_unavailable=true&allow_no_indices=true"
        ),
    };
    let mut distinct: Vec<Fingerprint> = stamps.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    for batch in distinct.chunks(STAMPS_PER_SEARCH) {
        let wanted: Vec<String> = batch
            .iter()
            .map(|&stamp| format_fingerprint(stamp))
            .collect();
        let query = json!({
            "size": STAMP_HITS_PER_PAGE,
            "_source": fields,
            "query": { "terms": { field: wanted } },
        });
        let mut answer = sidecar
            .upstream
            .call_json(Method::POST, &path, headers, Payload::Json(&query))
            .await
            .map_err(|error| error.to_string())?;
        let mut scroll_id: Option<String> = None;
        let outcome = loop {
            if let Some(id) = answer["_scroll_id"].as_str() {
                scroll_id = Some(id.to_string());
            }
            let page = crate::upstream::hits(&answer);
            if take(page) {
                break Ok(true);
            }
            let Some(id) = scroll_id.as_deref().filter(|_| !page.is_empty()) else {
                break Ok(false);
            };
            let next = json!({ "scroll": STAMP_SCROLL_KEEP_ALIVE, "scroll_id": id });
            match sidecar
                .upstream
                .call_json(
                    Method::POST,
                    "/_search/scroll",
                    headers,
                    Payload::Json(&next),
                )
                .await
            {
                Ok(next) => answer = next,
                Err(error) => break Err(error.to_string()),
            }
        };
        if let Some(id) = scroll_id {
            let clear = json!({ "scroll_id": [id] });
            if let Err(error) = sidecar
                .upstream
                .call_json(
                    Method::DELETE,
                    "/_search/scroll",
                    headers,
                    Payload::Json(&clear),
                )
                .await
            {
                tracing::debug!(%error, "cannot clear a search for stamps");
            }
        }
        if outcome? {
            return Ok(());
        }
    }
    Ok(())
}
