//! Reading an index oldest first, a page at a time: a point-in-time with
//! `search_after` (OpenSearch `_search/point_in_time`, Elasticsearch
//! `_pit`), or a scroll where neither answers.

use std::cmp::Ordering as CmpOrdering;

use anyhow::Context;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};

use super::job::{JobConfig, Start, compare_keys};
use crate::upstream::Upstream;

/// How long the cluster keeps the point-in-time or scroll between pages.
const KEEP_ALIVE: &str = "5m";

/// One page of hits.
pub(super) struct Page {
    pub(super) hits: Vec<Value>,
    pub(super) total: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PitFlavor {
    /// `POST /{index}/_search/point_in_time`.
    OpenSearch,
    /// `POST /{index}/_pit`.
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

/// Reads the index oldest first, a page at a time.
pub(super) struct Reader {
    cursor: Cursor,
    index: String,
    size: usize,
    sort: Value,
    query: Option<Value>,
    first: bool,
    /// Hits up to this key are dropped (a scroll cannot `search_after`).
    skip_through: Option<Vec<Value>>,
}

impl Reader {
    pub(super) async fn open(
        upstream: &Upstream,
        config: &JobConfig,
        start: Start,
        size: usize,
    ) -> anyhow::Result<Reader> {
        let mut sort = Vec::new();
        if let Some(field) = &config.time_field {
            sort.push(json!({ field.as_str(): {"order": "asc", "missing": "_last", "unmapped_type": "date"} }));
        }
        sort.push(json!({ config.tiebreak_field.as_str(): {"order": "asc"} }));
        let time_field = config.time_field.clone().unwrap_or_default();
        let (query, search_after) = match start {
            Start::Beginning => (None, None),
            Start::After(key) => (None, Some(key)),
            Start::From(raw) => (
                Some(json!({"bool": {"should": [
                    {"range": { time_field.as_str(): {"gte": raw} }},
                    {"bool": {"must_not": {"exists": {"field": time_field.as_str()}}}}
                ], "minimum_should_match": 1}})),
                None,
            ),
        };
        let mut headers = config.headers.clone();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let index = config.index.clone();
        let attempts = [
            (
                PitFlavor::OpenSearch,
                format!("/{index}/_search/point_in_time?keep_alive={KEEP_ALIVE}"),
                "pit_id",
            ),
            (
                PitFlavor::Elasticsearch,
                format!("/{index}/_pit?keep_alive={KEEP_ALIVE}"),
                "id",
            ),
        ];
        let mut cursor = None;
        for (flavor, path, id_field) in attempts {
            let (status, value) =
                request_json(upstream, Method::POST, &path, &headers, String::new()).await?;
            if status.is_success()
                && let Some(id) = value.get(id_field).and_then(Value::as_str)
            {
                cursor = Some(Cursor::Pit {
                    id: id.to_string(),
                    flavor,
                    search_after: search_after.clone(),
                });
                break;
            }
            if value.to_string().contains("index_not_found_exception") {
                anyhow::bail!("the cluster has no index [{index}]: {value}");
            }
        }
        let skip_through = match (&cursor, &search_after) {
            (None, Some(key)) => Some(key.clone()),
            _ => None,
        };
        let query = match (&cursor, search_after) {
            // A scroll cannot start after a key: start at its time, drop
            // what comes before it.
            (None, Some(key)) if config.time_field.is_some() => key.first().map(|raw| {
                json!({"bool": {"should": [
                    {"range": { time_field.as_str(): {"gte": raw} }},
                    {"bool": {"must_not": {"exists": {"field": time_field.as_str()}}}}
                ], "minimum_should_match": 1}})
            }),
            _ => query,
        };
        Ok(Reader {
            cursor: cursor.unwrap_or(Cursor::Scroll { id: None }),
            index,
            size,
            sort: Value::Array(sort),
            query,
            first: true,
            skip_through,
        })
    }

    pub(super) fn name(&self) -> &'static str {
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

    pub(super) async fn next_page(
        &mut self,
        upstream: &Upstream,
        headers: &HeaderMap,
    ) -> anyhow::Result<Page> {
        let mut headers = headers.clone();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        loop {
            let mut body = json!({
                "size": self.size,
                "sort": self.sort,
                "seq_no_primary_term": true,
                "track_total_hits": self.first,
            });
            if let Some(query) = &self.query {
                body["query"] = query.clone();
            }
            let (path, body) = match &self.cursor {
                Cursor::Pit {
                    id,
                    flavor,
                    search_after,
                } => {
                    body["pit"] = json!({"id": id, "keep_alive": KEEP_ALIVE});
                    if let Some(after) = search_after {
                        body["search_after"] = Value::Array(after.clone());
                    }
                    let _ = flavor;
                    ("/_search".to_string(), body)
                }
                Cursor::Scroll { id: None } => {
                    (format!("/{}/_search?scroll={KEEP_ALIVE}", self.index), body)
                }
                Cursor::Scroll { id: Some(id) } => (
                    "/_search/scroll".to_string(),
                    json!({"scroll": KEEP_ALIVE, "scroll_id": id}),
                ),
            };
            let (status, value) =
                request_json(upstream, Method::POST, &path, &headers, body.to_string()).await?;
            if !status.is_success() {
                anyhow::bail!("the cluster answered POST {path} with {status}: {value}");
            }
            let total = self
                .first
                .then(|| {
                    value["hits"]["total"]["value"]
                        .as_u64()
                        .or_else(|| value["hits"]["total"].as_u64())
                })
                .flatten();
            self.first = false;
            let mut hits = value["hits"]["hits"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            match &mut self.cursor {
                Cursor::Pit {
                    id, search_after, ..
                } => {
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
            return Ok(Page { hits, total });
        }
    }

    pub(super) async fn close(&self, upstream: &Upstream, headers: &HeaderMap) {
        let mut headers = headers.clone();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
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
        let _ = request_json(upstream, Method::DELETE, path, &headers, body.to_string()).await;
    }
}

/// Sends a request and reads its JSON answer (any status).
pub(super) async fn request_json(
    upstream: &Upstream,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: String,
) -> anyhow::Result<(StatusCode, Value)> {
    let answer = upstream
        .send(
            method.clone(),
            path,
            headers.clone(),
            reqwest::Body::from(body),
        )
        .await
        .with_context(|| format!("{method} {path}"))?;
    let status = answer.status();
    let bytes = upstream
        .read_body(path, answer)
        .await
        .with_context(|| format!("{method} {path}"))?;
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Ok((status, value))
}
