//! The cluster's answer to a write: read whole, and the parts the sidecar
//! reads from it through typed structs (the rest goes back to the client
//! as it came).

use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;

/// The cluster's answer, read whole.
pub(super) struct UpstreamAnswer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// The parts of a bulk answer the sidecar reads. Items stay raw: they go
/// back to the client as they came.
#[derive(Debug, Deserialize)]
pub(super) struct BulkAnswer {
    #[serde(default)]
    pub took: u64,
    pub items: Vec<Value>,
}

/// The items of a whole bulk answer (status 200), when there is one per
/// request item; else `None` and nothing can be settled from it.
pub(super) fn answered_items(
    status: StatusCode,
    parsed: Option<&Value>,
    expected: usize,
) -> Option<&[Value]> {
    parsed
        .filter(|_| status == StatusCode::OK)
        .and_then(|value| value.get("items"))
        .and_then(Value::as_array)
        .filter(|answered| answered.len() == expected)
        .map(Vec::as_slice)
}

/// Whether an answer without readable items may come after the write was
/// carried out: a 2xx, or a 5xx that is not the cluster's own error (a
/// proxy's 502/504 page, a connection cut). A 4xx (429 included), or the
/// cluster's error object, refused the request as a whole.
pub(super) fn may_have_been_applied(status: StatusCode, parsed: Option<&Value>) -> bool {
    let clusters_error = parsed.is_some_and(|value| value["error"].is_object());
    status.is_success() || (status.is_server_error() && !clusters_error)
}

/// One document's outcome: a bulk item's inner object, or the answer of a
/// single-document API.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Outcome<'a> {
    #[serde(rename = "_index", borrow, default)]
    pub index: Option<&'a str>,
    #[serde(rename = "_id", borrow, default)]
    pub id: Option<&'a str>,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(borrow, default)]
    pub result: Option<&'a str>,
    /// The document's version after the write.
    #[serde(rename = "_version", default)]
    pub version: Option<u64>,
}

impl<'a> Outcome<'a> {
    /// A bulk item: `{"<action>": {…}}`.
    pub fn of_item(item: &'a Value) -> Option<Outcome<'a>> {
        let inner = item.as_object()?.values().next()?;
        Outcome::deserialize(inner).ok()
    }

    /// A single-document answer, whose status is the HTTP status.
    pub fn of_document(answer: &'a Value, status: u16) -> Option<Outcome<'a>> {
        let mut outcome = Outcome::deserialize(answer).ok()?;
        outcome.status = Some(status);
        Some(outcome)
    }

    pub fn succeeded(&self) -> bool {
        self.status
            .is_some_and(|status| (200..300).contains(&status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_are_read_from_items_and_single_answers() {
        let item =
            json!({"index": {"_index": "news", "_id": "1", "status": 201, "result": "created"}});
        let outcome = Outcome::of_item(&item).unwrap_or_default();
        assert_eq!(outcome.index, Some("news"));
        assert_eq!(outcome.id, Some("1"));
        assert_eq!(outcome.status, Some(201));
        assert_eq!(outcome.result, Some("created"));
        assert!(outcome.succeeded());
        let failed = json!({"create": {"_index": "news", "_id": "1", "status": 409, "error": {"type": "version_conflict_engine_exception"}}});
        assert!(!Outcome::of_item(&failed).is_some_and(|outcome| outcome.succeeded()));
        let single = json!({"_index": "news", "_id": "2", "result": "updated"});
        let outcome = Outcome::of_document(&single, 200).unwrap_or_default();
        assert_eq!((outcome.id, outcome.status), (Some("2"), Some(200)));
        assert!(Outcome::of_item(&json!("not an item")).is_none());
    }

    #[test]
    fn only_a_whole_ok_answer_with_every_item_is_settled() {
        let answer = json!({"took": 1, "items": [{"index": {"status": 201}}]});
        assert!(answered_items(StatusCode::OK, Some(&answer), 1).is_some());
        assert!(answered_items(StatusCode::OK, Some(&answer), 2).is_none());
        assert!(answered_items(StatusCode::CREATED, Some(&answer), 1).is_none());
        assert!(answered_items(StatusCode::OK, None, 1).is_none());
    }
}
