//! Reading a whole index a page at a time: the one scanner of backfill and
//! rebuild.
//!
//! Design: two orders.
//!
//! - Oldest first ([`ScanOrder::Oldest`], backfill): sorted by the time
//!   field (documents without one last) and a tiebreak, read through a
//!   point in time paged with `search_after`, so a page's last sort key is a
//!   position to resume from. The point in time is opened in OpenSearch's
//!   form (`POST /{index}/_search/point_in_time`), then in Elasticsearch's
//!   (`POST /{index}/_pit`); where neither answers (older versions, a proxy
//!   that forbids them) the same sorted search goes through a scroll, which
//!   cannot start after a key: it starts at the key's time and drops the
//!   hits up to the key.
//! - Index order ([`ScanOrder::IndexOrder`], rebuild): sorted by `_doc`, the
//!   cheapest full read, through a scroll. Not a point in time: `_doc` is
//!   not unique across shards, so `search_after` on it can skip documents,
//!   and the unique tiebreak Elasticsearch adds to a point in time
//!   (`_shard_doc`) exists on OpenSearch only from 3.3.
//!
//! Consequences:
//!
//! - The first page asks for the total (`track_total_hits`), later pages
//!   do not.
//! - On Elasticsearch a point in time adds `_shard_doc` to the sort, so its
//!   hits carry one sort value more than asked for; it stays in the resume
//!   key, where it can only break a tie the unique tiebreak never leaves.
//! - The default tiebreak, `_id`, is taken on OpenSearch and through a
//!   scroll; on an Elasticsearch point in time it becomes the `_shard_doc`
//!   Elasticsearch appends itself, its documented tiebreak (Elasticsearch 8
//!   refuses sorting on `_id` unless `indices.id_field_data.enabled`). A
//!   tiebreak given by name is used as given.
//! - A scroll answered without a scroll id ends after its first page.

use std::cmp::Ordering as CmpOrdering;

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::client::{ClusterError, Payload, Upstream, hits_total};

/// The tiebreak asked for when none is given: `_id` on OpenSearch and
/// through a scroll; on an Elasticsearch point in time, its own
/// `_shard_doc` instead (see [`Scan::open`]).
pub const DEFAULT_TIEBREAK: &str = "_id";

/// Where an oldest-first read starts.
#[derive(Debug, Clone, PartialEq)]
pub enum ScanStart {
    Beginning,
    /// Right after this sort key.
    After(Vec<Value>),
    /// At documents whose time field is at least this (raw, as sorted), and
    /// at those without one.
    From(Value),
}

/// The order of a read.
#[derive(Debug, Clone, PartialEq)]
pub enum ScanOrder {
    /// By `time_field` ascending (missing last, when there is one), then by
    /// `tiebreak_field`, which should be unique per document.
    Oldest {
        time_field: Option<String>,
        tiebreak_field: String,
        start: ScanStart,
    },
    /// The index's own order (`_doc`); no position to resume from.
    IndexOrder,
}

/// What to read, and how.
#[derive(Debug, Clone)]
pub struct ScanRequest {
    /// An index, alias or pattern, as it stands in the path.
    pub index: String,
    pub order: ScanOrder,
    pub page_size: usize,
    /// How long the cluster keeps the point in time or scroll between
    /// pages (`5m`).
    pub keep_alive: &'static str,
    /// Hits carry `_seq_no` and `_primary_term` (for guarded updates).
    pub versions: bool,
    /// Sent with every request (the caller's credentials).
    pub headers: HeaderMap,
}

/// One page of hits.
#[derive(Debug, Clone, Default)]
pub struct ScanPage {
    pub hits: Vec<Value>,
    /// Documents the read will see (first page only).
    pub total: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PitFlavor {
    /// `POST /{index}/_search/point_in_time`, answered with `pit_id`.
    OpenSearch,
    /// `POST /{index}/_pit`, answered with `id`.
    Elasticsearch,
}

enum Cursor {
    Pit {
        id: String,
        flavor: PitFlavor,
        search_after: Option<Vec<Value>>,
    },
    Scroll {
        id: Option<String>,
    },
}

/// An index being read, a page at a time.
pub struct Scan {
    cursor: Cursor,
    index: String,
    size: usize,
    sort: Value,
    query: Option<Value>,
    keep_alive: &'static str,
    versions: bool,
    headers: HeaderMap,
    first: bool,
    /// Hits up to this key are dropped (a scroll cannot `search_after`).
    skip_through: Option<Vec<Value>>,
    /// The sort ends in Elasticsearch's own `_shard_doc`: keys are
    /// comparable within this read only.
    implicit_tiebreak: bool,
}

impl Scan {
    /// Opens the read: a point in time when the order allows one and the
    /// cluster has one, else a scroll (opened with the first page).
    ///
    /// # Errors
    ///
    /// No answer, or the index does not exist.
    pub async fn open(upstream: &Upstream, request: ScanRequest) -> Result<Scan, ClusterError> {
        let ScanRequest {
            index,
            order,
            page_size,
            keep_alive,
            versions,
            headers,
        } = request;
        let mut scan = Scan {
            cursor: Cursor::Scroll { id: None },
            index,
            size: page_size,
            sort: json!(["_doc"]),
            query: None,
            keep_alive,
            versions,
            headers,
            first: true,
            skip_through: None,
            implicit_tiebreak: false,
        };
        let ScanOrder::Oldest {
            time_field,
            tiebreak_field,
            start,
        } = order
        else {
            // Index order: a scroll, opened with the first page.
            return Ok(scan);
        };
        let time_sort = time_field.as_ref().map(|field| {
            json!({ field.as_str(): {"order": "asc", "missing": "_last", "unmapped_type": "date"} })
        });
        let tiebreak_sort = json!({ tiebreak_field.as_str(): {"order": "asc"} });
        let (query, search_after) = match start {
            ScanStart::Beginning => (None, None),
            ScanStart::After(key) => (None, Some(key)),
            ScanStart::From(raw) => (
                time_field.as_deref().map(|field| at_or_after(field, &raw)),
                None,
            ),
        };
        match open_point_in_time(upstream, &scan.index, keep_alive, &scan.headers).await? {
            Some((id, PitFlavor::Elasticsearch)) if tiebreak_field == DEFAULT_TIEBREAK => {
                // Elasticsearch's documented tiebreak for a point in time is
                // the `_shard_doc` it appends itself (sorting on `_id` is
                // refused by default). Its values mean nothing in another
                // point in time, so a resume starts at the key's time: the
                // documents of that instant are read again, and the job
                // knows them by their stamps.
                scan.sort = Value::Array(time_sort.clone().into_iter().collect());
                scan.implicit_tiebreak = true;
                scan.query = match (&search_after, &time_field) {
                    (Some(key), Some(field)) => key.first().map(|raw| at_or_after(field, raw)),
                    _ => query,
                };
                scan.cursor = Cursor::Pit {
                    id,
                    flavor: PitFlavor::Elasticsearch,
                    search_after: None,
                };
            }
            Some((id, flavor)) => {
                scan.sort = Value::Array(time_sort.into_iter().chain([tiebreak_sort]).collect());
                scan.cursor = Cursor::Pit {
                    id,
                    flavor,
                    search_after,
                };
                scan.query = query;
            }
            None => {
                scan.sort = Value::Array(time_sort.into_iter().chain([tiebreak_sort]).collect());
                // A scroll cannot start after a key: it starts at the key's
                // time and drops what comes up to the key.
                scan.query = match (&search_after, &time_field) {
                    (Some(key), Some(field)) => key.first().map(|raw| at_or_after(field, raw)),
                    _ => query,
                };
                scan.skip_through = search_after;
            }
        }
        Ok(scan)
    }

    /// Whether a key of this read still orders documents in a later read
    /// (not when the tiebreak is Elasticsearch's `_shard_doc`: then only
    /// the time part of a key does).
    pub fn keys_survive_reopening(&self) -> bool {
        !self.implicit_tiebreak
    }

    /// `point_in_time` (OpenSearch's), `pit` (Elasticsearch's) or `scroll`.
    pub fn kind(&self) -> &'static str {
        match &self.cursor {
            Cursor::Pit {
                flavor: PitFlavor::OpenSearch,
                ..
            } => "point_in_time",
            Cursor::Pit {
                flavor: PitFlavor::Elasticsearch,
                ..
            } => "pit",
            Cursor::Scroll { .. } => "scroll",
        }
    }

    /// The next page; no hits at the end.
    ///
    /// # Errors
    ///
    /// No answer, an answer other than 2xx, or one that is not JSON.
    pub async fn next_page(&mut self, upstream: &Upstream) -> Result<ScanPage, ClusterError> {
        loop {
            if !self.first && matches!(self.cursor, Cursor::Scroll { id: None }) {
                return Ok(ScanPage::default());
            }
            let mut body = json!({
                "size": self.size,
                "sort": self.sort,
            });
            if self.versions {
                body["seq_no_primary_term"] = Value::Bool(true);
            }
            body["track_total_hits"] = Value::Bool(self.first);
            if let Some(query) = &self.query {
                body["query"] = query.clone();
            }
            let keep_alive = self.keep_alive;
            let (path, body) = match &self.cursor {
                Cursor::Pit {
                    id, search_after, ..
                } => {
                    // Both flavours search a point in time the same way: no
                    // index in the path, the id in the body.
                    body["pit"] = json!({"id": id, "keep_alive": keep_alive});
                    if let Some(after) = search_after {
                        body["search_after"] = Value::Array(after.clone());
                    }
                    ("/_search".to_string(), body)
                }
                Cursor::Scroll { id: None } => {
                    (format!("/{}/_search?scroll={keep_alive}", self.index), body)
                }
                Cursor::Scroll { id: Some(id) } => (
                    "/_search/scroll".to_string(),
                    json!({"scroll": keep_alive, "scroll_id": id}),
                ),
            };
            let mut value = upstream
                .call_json(Method::POST, &path, &self.headers, Payload::Json(&body))
                .await?;
            let total = if self.first { hits_total(&value) } else { None };
            self.first = false;
            let mut hits = match value.pointer_mut("/hits/hits").map(Value::take) {
                Some(Value::Array(hits)) => hits,
                _ => Vec::new(),
            };
            match &mut self.cursor {
                Cursor::Pit {
                    id, search_after, ..
                } => {
                    // The id may change from page to page (OpenSearch
                    // answers `pit_id`, Elasticsearch `pit_id` or `id`).
                    if let Some(next) = value
                        .get("pit_id")
                        .or_else(|| value.get("id"))
                        .and_then(Value::as_str)
                    {
                        *id = next.to_string();
                    }
                    if let Some(last) = hits
                        .last()
                        .and_then(|hit| hit.get("sort"))
                        .and_then(Value::as_array)
                    {
                        *search_after = Some(last.clone());
                    }
                }
                Cursor::Scroll { id } => {
                    if let Some(next) = value.get("_scroll_id").and_then(Value::as_str) {
                        *id = Some(next.to_string());
                    }
                }
            }
            if let Some(through) = &self.skip_through {
                let before = hits.len();
                hits.retain(|hit| {
                    hit.get("sort")
                        .and_then(Value::as_array)
                        .is_none_or(|key| compare_keys(key, through) == CmpOrdering::Greater)
                });
                if hits.is_empty() && before > 0 {
                    // A whole page before the resume point: read on.
                    continue;
                }
                self.skip_through = None;
            }
            return Ok(ScanPage { hits, total });
        }
    }

    /// Frees the point in time or scroll on the cluster (best effort: it
    /// expires by itself after the keep-alive).
    pub async fn close(&self, upstream: &Upstream) {
        let (path, body) = match &self.cursor {
            Cursor::Pit {
                id,
                flavor: PitFlavor::OpenSearch,
                ..
            } => ("/_search/point_in_time", json!({"pit_id": [id]})),
            Cursor::Pit {
                id,
                flavor: PitFlavor::Elasticsearch,
                ..
            } => ("/_pit", json!({"id": id})),
            Cursor::Scroll { id: Some(id) } => ("/_search/scroll", json!({"scroll_id": id})),
            Cursor::Scroll { id: None } => return,
        };
        let _ = upstream
            .call(Method::DELETE, path, &self.headers, Payload::Json(&body))
            .await;
    }
}

/// Opens a point in time on `index`: OpenSearch's form first, then
/// Elasticsearch's. `None` when neither answers with an id (the other
/// flavour's path is "no handler", an older version has neither).
///
/// # Errors
///
/// No answer, or the index does not exist.
async fn open_point_in_time(
    upstream: &Upstream,
    index: &str,
    keep_alive: &str,
    headers: &HeaderMap,
) -> Result<Option<(String, PitFlavor)>, ClusterError> {
    let attempts = [
        (
            PitFlavor::OpenSearch,
            format!("/{index}/_search/point_in_time?keep_alive={keep_alive}"),
            "pit_id",
        ),
        (
            PitFlavor::Elasticsearch,
            format!("/{index}/_pit?keep_alive={keep_alive}"),
            "id",
        ),
    ];
    for (flavor, path, id_field) in attempts {
        let answer = upstream
            .call(Method::POST, &path, headers, Payload::Empty)
            .await
            .map_err(|error| ClusterError::Unanswered {
                request: format!("POST {path}"),
                error,
            })?;
        let value = answer.json_or_text();
        if answer.status.is_success()
            && let Some(id) = value.get(id_field).and_then(Value::as_str)
        {
            return Ok(Some((id.to_string(), flavor)));
        }
        // A missing index is an error, whichever flavour says it.
        let answer = value.to_string();
        if answer.contains("index_not_found_exception") {
            return Err(ClusterError::NoIndex {
                index: index.to_string(),
                answer,
            });
        }
    }
    Ok(None)
}

/// Documents whose `field` is at least `raw`, and those without it (they
/// sort last).
fn at_or_after(field: &str, raw: &Value) -> Value {
    json!({"bool": {"should": [
        {"range": { field: {"gte": raw} }},
        {"bool": {"must_not": {"exists": {"field": field}}}}
    ], "minimum_should_match": 1}})
}

/// Sort keys compared as the cluster sorts them: numbers by value, strings
/// by their bytes, missing values last, element by element; a shorter key
/// first when one is a prefix of the other.
pub fn compare_keys(left: &[Value], right: &[Value]) -> CmpOrdering {
    for (a, b) in left.iter().zip(right) {
        let order = match (a, b) {
            (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => a
                    .as_f64()
                    .partial_cmp(&b.as_f64())
                    .unwrap_or(CmpOrdering::Equal),
            },
            (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Value::Null, Value::Null) => CmpOrdering::Equal,
            (Value::Null, _) => CmpOrdering::Greater,
            (_, Value::Null) => CmpOrdering::Less,
            _ => a.to_string().cmp(&b.to_string()),
        };
        if order != CmpOrdering::Equal {
            return order;
        }
    }
    left.len().cmp(&right.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_compare_as_the_cluster_sorts() {
        let key = |time: i64, id: &str| vec![json!(time), json!(id)];
        assert_eq!(compare_keys(&key(1, "b"), &key(2, "a")), CmpOrdering::Less);
        assert_eq!(compare_keys(&key(2, "a"), &key(2, "b")), CmpOrdering::Less);
        assert_eq!(compare_keys(&key(2, "b"), &key(2, "b")), CmpOrdering::Equal);
        assert_eq!(
            compare_keys(&key(i64::MAX, "a"), &key(5, "z")),
            CmpOrdering::Greater
        );
        // Ids compare by bytes: "10" sorts before "9".
        assert_eq!(compare_keys(&key(1, "10"), &key(1, "9")), CmpOrdering::Less);
        // A missing time sorts last.
        assert_eq!(
            compare_keys(&[Value::Null, json!("a")], &key(5, "z")),
            CmpOrdering::Greater
        );
    }

    #[test]
    fn a_start_time_keeps_documents_without_a_time() {
        let query = at_or_after("published_at", &json!(100));
        assert_eq!(
            query["bool"]["should"][0]["range"]["published_at"]["gte"],
            100
        );
        assert_eq!(
            query["bool"]["should"][1]["bool"]["must_not"]["exists"]["field"],
            "published_at"
        );
    }
}
