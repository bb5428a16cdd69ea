//! The `_bulk` NDJSON format, read the way OpenSearch and Elasticsearch read
//! it, and the stamping of one source line.
//!
//! Motivation: the sidecar must find every `index`/`create` source in a
//! request, stamp it, and later pair each item with the cluster's per-item
//! result. If it read the body differently from the cluster, a stamp would
//! land on the wrong document or a result would be credited to the wrong
//! item. So the rules here are the cluster's (its bulk request parser):
//!
//! - lines end at `\n`; a `\r` before it is JSON whitespace; the body must
//!   end with `\n`, else the whole request is rejected;
//! - empty and whitespace-only lines between items are skipped;
//! - an action line is an object whose first key is `index`, `create`,
//!   `update` or `delete`, with an object of metadata as its value; the
//!   cluster reads no further, so later keys and a missing last `}` pass
//!   (the reader here must never be stricter than the cluster's, or a
//!   document the cluster stores would go unstamped);
//! - `index`, `create` and `update` take the next line as their source;
//!   `delete` has none; an action whose source line is missing at the very end
//!   of the body is ignored, as the cluster ignores it;
//! - a request without any item is rejected.
//!
//! Errors carry the cluster's exception type and wording, so a client sees
//! the error it would have seen without the sidecar. Sources are not
//! validated here: a source the sidecar cannot read goes through unstamped
//! and the cluster gives that item its own error.
//!
//! Design: pure functions over bytes; item positions are byte ranges into the
//! body, so stamping copies the untouched bytes around each source.

pub mod partial;
pub mod stamping;

use std::ops::Range;

use serde_json::Value;

/// The four bulk actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    Index,
    Create,
    Update,
    Delete,
}

impl ActionKind {
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Index => "index",
            ActionKind::Create => "create",
            ActionKind::Update => "update",
            ActionKind::Delete => "delete",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        match name {
            "index" => Some(ActionKind::Index),
            "create" => Some(ActionKind::Create),
            "update" => Some(ActionKind::Update),
            "delete" => Some(ActionKind::Delete),
            _ => None,
        }
    }

    /// Whether the action takes a source line.
    pub fn has_source(self) -> bool {
        self != ActionKind::Delete
    }
}

/// One item of a bulk request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkItem {
    pub kind: ActionKind,
    /// The action line, without its line terminator.
    pub action: Range<usize>,
    /// The source line without its terminator (`\r\n` or `\n`), for every
    /// action but `delete`.
    pub source: Option<Range<usize>>,
    /// `_index` from the metadata, when given as a string.
    pub index: Option<String>,
    /// `_id` from the metadata, when given (numbers are read as text).
    pub id: Option<String>,
}

/// A request the cluster rejects as a whole (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct BulkError {
    /// The exception type the cluster reports.
    pub error_type: &'static str,
    pub reason: String,
}

impl BulkError {
    fn new(error_type: &'static str, reason: impl Into<String>) -> Self {
        BulkError {
            error_type,
            reason: reason.into(),
        }
    }

    fn malformed(line: usize, detail: impl std::fmt::Display) -> Self {
        BulkError::new(
            "illegal_argument_exception",
            format!("Malformed action/metadata line [{line}], {detail}"),
        )
    }
}

/// Splits a bulk body into items, or rejects it as the cluster would.
pub fn parse_bulk(body: &[u8]) -> Result<Vec<BulkItem>, BulkError> {
    if body.is_empty() {
        return Err(BulkError::new(
            "parse_exception",
            "request body is required",
        ));
    }
    if body.last() != Some(&b'\n') {
        return Err(BulkError::new(
            "illegal_argument_exception",
            "The bulk request must be terminated by a newline [\\n]",
        ));
    }
    let mut items = Vec::new();
    let mut lines = Lines::new(body);
    while let Some((line_number, action)) = lines.next() {
        let content = &body[action.clone()];
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let (kind, index, id) = parse_action(content, line_number)?;
        let source = if kind.has_source() {
            match lines.next() {
                Some((_, source)) => Some(source),
                // The cluster ignores an action whose source is missing at
                // the end of the body.
                None => break,
            }
        } else {
            None
        };
        items.push(BulkItem {
            kind,
            action,
            source,
            index,
            id,
        });
    }
    if items.is_empty() {
        return Err(BulkError::new(
            "action_request_validation_exception",
            "Validation Failed: 1: no requests added;",
        ));
    }
    Ok(items)
}

/// Content ranges of the `\n`-terminated lines of `body`, numbered from 1.
struct Lines<'a> {
    body: &'a [u8],
    position: usize,
    line_number: usize,
}

impl<'a> Lines<'a> {
    fn new(body: &'a [u8]) -> Self {
        Lines {
            body,
            position: 0,
            line_number: 0,
        }
    }

    fn next(&mut self) -> Option<(usize, Range<usize>)> {
        let rest = self.body.get(self.position..)?;
        let length = rest.iter().position(|&byte| byte == b'\n')?;
        let start = self.position;
        let mut end = start + length;
        if end > start && self.body[end - 1] == b'\r' {
            end -= 1;
        }
        self.position = start + length + 1;
        self.line_number += 1;
        Some((self.line_number, start..end))
    }
}

/// Reads one action line: its kind, `_index` and `_id`. `line_number` is
/// used in the error text.
pub fn parse_action(
    content: &[u8],
    line_number: usize,
) -> Result<(ActionKind, Option<String>, Option<String>), BulkError> {
    let value: Value = match serde_json::from_slice(content) {
        Ok(value) => value,
        // OpenSearch stops reading an action line after its metadata
        // object, so a line missing its last `}` is accepted there.
        Err(error) if error.is_eof() => {
            let mut closed = content.to_vec();
            closed.push(b'}');
            serde_json::from_slice(&closed).map_err(|_| parse_error(line_number, &error))?
        }
        Err(error) => return Err(parse_error(line_number, &error)),
    };
    let Value::Object(action) = value else {
        return Err(BulkError::malformed(
            line_number,
            format!("expected START_OBJECT but found [{}]", token_name(&value)),
        ));
    };
    // Keys after the action are ignored, as OpenSearch ignores them
    // (Elasticsearch rejects the line; then nothing is stored anyway).
    let Some((name, metadata)) = action.iter().next() else {
        return Err(BulkError::malformed(
            line_number,
            "expected FIELD_NAME but found [END_OBJECT]",
        ));
    };
    let Some(kind) = ActionKind::from_name(name) else {
        return Err(BulkError::malformed(
            line_number,
            format!("expected one of [create, delete, index, update] but found [{name}]"),
        ));
    };
    let Value::Object(metadata) = metadata else {
        return Err(BulkError::malformed(
            line_number,
            format!("expected START_OBJECT but found [{}]", token_name(metadata)),
        ));
    };
    let index = metadata
        .get("_index")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = metadata.get("_id").and_then(scalar_text);
    Ok((kind, index, id))
}

fn parse_error(line_number: usize, error: &serde_json::Error) -> BulkError {
    BulkError::new(
        "x_content_parse_exception",
        format!("[{line_number}:{}] {error}", error.column()),
    )
}

/// A string or number as text (ids may be sent as numbers).
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The name the cluster's JSON parser gives the first token of `value`.
fn token_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "VALUE_NULL",
        Value::Bool(true) => "VALUE_TRUE",
        Value::Bool(false) => "VALUE_FALSE",
        Value::Number(_) => "VALUE_NUMBER",
        Value::String(_) => "VALUE_STRING",
        Value::Array(_) => "START_ARRAY",
        Value::Object(_) => "START_OBJECT",
    }
}

/// Parses a source line as a JSON object; `None` for anything else.
pub fn parse_source(content: &[u8]) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_slice(content) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

/// `content` (one JSON object) with `fields` set to string values. When none
/// of them exists yet they are inserted as text before the closing brace and
/// every other byte stays as it was; otherwise the parsed object is updated
/// and serialised again (key order and number text are kept).
pub fn insert_fields(
    content: &[u8],
    object: serde_json::Map<String, Value>,
    fields: &[(&str, &str)],
) -> Vec<u8> {
    let already_present = fields.iter().any(|(name, _)| object.contains_key(*name));
    let trimmed_len = content
        .iter()
        .rposition(|byte| !byte.is_ascii_whitespace())
        .map_or(0, |last| last + 1);
    if !already_present && trimmed_len > 0 && content[trimmed_len - 1] == b'}' {
        let mut out = Vec::with_capacity(content.len() + 80);
        out.extend_from_slice(&content[..trimmed_len - 1]);
        for (position, (name, value)) in fields.iter().enumerate() {
            if position > 0 || !object.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(Value::from(*name).to_string().as_bytes());
            out.push(b':');
            out.extend_from_slice(Value::from(*value).to_string().as_bytes());
        }
        out.push(b'}');
        out.extend_from_slice(&content[trimmed_len..]);
        return out;
    }
    let mut object = object;
    for (name, value) in fields {
        object.insert((*name).to_string(), Value::from(*value));
    }
    Value::Object(object).to_string().into_bytes()
}

/// The body cut into one segment per item: its action line, its source
/// line and any blank lines before it (the last segment runs to the end of
/// the body), with the source line replaced where `replacements` has bytes
/// (the line terminator stays). Concatenated without replacements, the
/// segments are the body, byte for byte.
pub fn segments(body: &[u8], items: &[BulkItem], replacements: &[Option<&[u8]>]) -> Vec<Vec<u8>> {
    let mut segments = Vec::with_capacity(items.len());
    let mut cursor = 0;
    for (position, item) in items.iter().enumerate() {
        let last_line_end = item
            .source
            .as_ref()
            .map_or(item.action.end, |source| source.end);
        let end = if position + 1 == items.len() {
            body.len()
        } else {
            body[last_line_end..]
                .iter()
                .position(|&byte| byte == b'\n')
                .map_or(body.len(), |offset| last_line_end + offset + 1)
        };
        let mut segment = Vec::with_capacity(end - cursor + 80);
        match (replacements.get(position).copied().flatten(), &item.source) {
            (Some(replacement), Some(source)) => {
                segment.extend_from_slice(&body[cursor..source.start]);
                segment.extend_from_slice(replacement);
                segment.extend_from_slice(&body[source.end..end]);
            }
            _ => segment.extend_from_slice(&body[cursor..end]),
        }
        segments.push(segment);
        cursor = end;
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(body: &str) -> Vec<ActionKind> {
        parse_bulk(body.as_bytes())
            .expect("valid bulk")
            .into_iter()
            .map(|item| item.kind)
            .collect()
    }

    #[test]
    fn all_four_actions_with_and_without_sources() {
        let body = "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"t\":1}\n\
                    {\"create\":{\"_id\":7}}\n{\"t\":2}\n\
                    {\"update\":{\"_id\":\"1\"}}\n{\"doc\":{\"t\":3}}\n\
                    {\"delete\":{\"_id\":\"1\"}}\n";
        let items = parse_bulk(body.as_bytes()).expect("valid");
        assert_eq!(
            items.iter().map(|item| item.kind).collect::<Vec<_>>(),
            [
                ActionKind::Index,
                ActionKind::Create,
                ActionKind::Update,
                ActionKind::Delete
            ]
        );
        assert_eq!(items[0].index.as_deref(), Some("a"));
        assert_eq!(items[1].id.as_deref(), Some("7"));
        assert_eq!(
            &body.as_bytes()[items[0].source.clone().expect("source")],
            b"{\"t\":1}"
        );
        assert_eq!(items[3].source, None);
    }

    #[test]
    fn crlf_blank_lines_and_whitespace_lines() {
        let body = "\r\n{\"index\":{}}\r\n{\"t\":1}\r\n   \n\n{\"delete\":{\"_id\":\"x\"}}\r\n";
        let items = parse_bulk(body.as_bytes()).expect("valid");
        assert_eq!(items.len(), 2);
        assert_eq!(
            &body.as_bytes()[items[0].source.clone().expect("source")],
            b"{\"t\":1}"
        );
    }

    #[test]
    fn body_must_end_with_a_newline() {
        let error = parse_bulk(b"{\"index\":{}}\n{\"t\":1}").expect_err("no final newline");
        assert_eq!(error.error_type, "illegal_argument_exception");
        assert_eq!(
            error.reason,
            "The bulk request must be terminated by a newline [\\n]"
        );
    }

    #[test]
    fn empty_and_blank_bodies() {
        assert_eq!(
            parse_bulk(b"").expect_err("empty").reason,
            "request body is required"
        );
        assert_eq!(
            parse_bulk(b"\n  \n").expect_err("blank").error_type,
            "action_request_validation_exception"
        );
    }

    #[test]
    fn an_action_without_source_at_the_end_is_ignored() {
        assert_eq!(
            kinds("{\"delete\":{\"_id\":\"1\"}}\n{\"index\":{}}\n"),
            [ActionKind::Delete]
        );
        assert_eq!(
            parse_bulk(b"{\"index\":{}}\n")
                .expect_err("nothing left")
                .error_type,
            "action_request_validation_exception"
        );
    }

    #[test]
    fn malformed_action_lines_get_the_clusters_messages() {
        let reason = |body: &str| parse_bulk(body.as_bytes()).expect_err("malformed").reason;
        assert_eq!(
            reason("{\"t\":1}\n\"x\"\n"),
            "Malformed action/metadata line [1], expected one of [create, delete, index, update] but found [t]"
        );
        assert_eq!(
            reason("\"x\"\n"),
            "Malformed action/metadata line [1], expected START_OBJECT but found [VALUE_STRING]"
        );
        assert_eq!(
            reason("{}\n"),
            "Malformed action/metadata line [1], expected FIELD_NAME but found [END_OBJECT]"
        );
        assert_eq!(
            reason("{\"index\":[]}\n{}\n"),
            "Malformed action/metadata line [1], expected START_OBJECT but found [START_ARRAY]"
        );
        let error = parse_bulk(b"{\"index\":\n").expect_err("invalid JSON");
        assert_eq!(error.error_type, "x_content_parse_exception");
        let error = parse_bulk(b"{\"index\":{}]\n{}\n").expect_err("invalid JSON");
        assert_eq!(error.error_type, "x_content_parse_exception");
    }

    #[test]
    fn action_lines_are_read_as_leniently_as_the_cluster_reads_them() {
        let items =
            parse_bulk(b"{\"index\":{\"_id\":\"1\"},\"x\":1}\n{}\n{\"delete\":{\"_id\":\"2\"}\n")
                .expect("accepted");
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].id.as_deref(), Some("2"));
    }

    #[test]
    fn fields_are_inserted_before_the_closing_brace() {
        let content = br#"{"title":"a", "n": 12345678901234567890123} "#;
        let object = parse_source(content).expect("object");
        let out = insert_fields(
            content,
            object,
            &[("cluster_root", "00ff"), ("simhash", "01")],
        );
        assert_eq!(
            out,
            br#"{"title":"a", "n": 12345678901234567890123,"cluster_root":"00ff","simhash":"01"} "#
        );
    }

    #[test]
    fn fields_are_inserted_into_an_empty_object() {
        let out = insert_fields(b"{}", serde_json::Map::new(), &[("a", "1"), ("b", "2")]);
        assert_eq!(out, br#"{"a":"1","b":"2"}"#);
    }

    #[test]
    fn existing_fields_are_replaced_and_big_numbers_kept() {
        let content = br#"{"cluster_root":"old","n":18446744073709551616123,"x":1.50}"#;
        let object = parse_source(content).expect("object");
        let out = insert_fields(
            content,
            object,
            &[("cluster_root", "new"), ("simhash", "s")],
        );
        assert_eq!(
            out,
            br#"{"cluster_root":"new","n":18446744073709551616123,"x":1.50,"simhash":"s"}"#
        );
    }

    #[test]
    fn sources_that_are_not_objects_are_not_read() {
        assert!(parse_source(b"[1,2]").is_none());
        assert!(parse_source(b"{\"a\":").is_none());
        assert!(parse_source(b"\xff\xfe").is_none());
    }
}
