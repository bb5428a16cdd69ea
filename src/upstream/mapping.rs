//! What the cluster's mapping says of a field, read before a job relies on
//! it (`GET /{index}/_mapping/field/{field}`, the same in Elasticsearch and
//! OpenSearch).
//!
//! Motivation: a misspelled `--time-field` let a backfill place every
//! document "now" without a word, and a text field failed deep inside the
//! read with the cluster's raw 400. Checking the mapping first says what is
//! wrong in the user's terms.

use axum::http::{HeaderMap, Method};
use serde_json::Value;

use super::client::{ClusterError, Payload, Upstream, encode_component};

/// The type of `field` in each concrete index of `index` (`None`: the index
/// does not map it).
///
/// # Errors
///
/// The cluster unreachable, or refusing the request (no such index).
pub async fn field_types(
    upstream: &Upstream,
    headers: &HeaderMap,
    index: &str,
    field: &str,
) -> Result<Vec<(String, Option<String>)>, ClusterError> {
    let path = format!(
        "/{}/_mapping/field/{}",
        encode_component(index),
        encode_component(field)
    );
    let answer = upstream
        .call_json(Method::GET, &path, headers, Payload::Empty)
        .await?;
    Ok(types_in(&answer, field))
}

/// Reads a field-mapping answer: index → the field's `type`. A server that
/// answers with the whole mapping instead is read through its `properties`.
fn types_in(answer: &Value, field: &str) -> Vec<(String, Option<String>)> {
    let mut types: Vec<(String, Option<String>)> = answer
        .as_object()
        .into_iter()
        .flatten()
        .map(|(index, mappings)| {
            let mappings = &mappings["mappings"];
            let leaf = field.rsplit('.').next().unwrap_or(field);
            let kind = mappings[field]["mapping"][leaf]["type"]
                .as_str()
                .or_else(|| in_properties(mappings, field))
                .map(str::to_string);
            (index.clone(), kind)
        })
        .collect();
    types.sort();
    types
}

/// The type of the dotted `field` in a whole mapping's `properties`.
fn in_properties<'a>(mapping: &'a Value, field: &str) -> Option<&'a str> {
    let mut node = mapping;
    for part in field.split('.') {
        node = node.get("properties")?.get(part)?;
    }
    node.get("type")?.as_str()
}

/// Field types a document's time can be read from: dates and epoch numbers.
pub fn is_time_type(kind: &str) -> bool {
    matches!(
        kind,
        "date"
            | "date_nanos"
            | "long"
            | "integer"
            | "unsigned_long"
            | "double"
            | "float"
            | "scaled_float"
    )
}

/// Why `field` cannot order `index` by time, if it cannot: missing in
/// some index, or of a type that holds no time. `option` is how the caller
/// named the field (`[time_field]` in a request body, `--time-field` on the
/// command line); each index is named once.
pub fn time_field_problem(
    option: &str,
    index: &str,
    field: &str,
    types: &[(String, Option<String>)],
) -> Option<String> {
    if types.is_empty() {
        return None;
    }
    let missing: Vec<&str> = types
        .iter()
        .filter(|(_, kind)| kind.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    if !missing.is_empty() {
        let whole = missing.len() == types.len();
        let which = if whole && missing == [index] {
            format!("index [{index}] has no such field")
        } else if whole {
            format!(
                "no index of [{index}] has such a field ({})",
                missing.join(", ")
            )
        } else {
            let verb = if missing.len() == 1 { "has" } else { "have" };
            format!("[{}] of [{index}] {verb} no such field", missing.join(", "))
        };
        return Some(format!(
            "{option} [{field}]: {which} (check its name in the index mapping)"
        ));
    }
    let wrong: Vec<String> = types
        .iter()
        .filter_map(|(name, kind)| {
            let kind = kind.as_deref()?;
            (!is_time_type(kind)).then(|| format!("{kind} in [{name}]"))
        })
        .collect();
    (!wrong.is_empty()).then(|| {
        format!(
            "{option} [{field}] is {}: a document's time must be a date or an epoch number",
            wrong.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_missing_or_textual_time_field_is_named_and_a_date_passes() {
        let answer = json!({
            "news-1": {"mappings": {"published_at": {"full_name": "published_at", "mapping": {"published_at": {"type": "date"}}}}},
            "news-2": {"mappings": {}},
        });
        let types = types_in(&answer, "published_at");
        assert_eq!(
            types,
            vec![
                ("news-1".to_string(), Some("date".to_string())),
                ("news-2".to_string(), None)
            ]
        );
        let problem =
            time_field_problem("[time_field]", "news-*", "published_at", &types).expect("missing");
        assert_eq!(
            problem,
            "[time_field] [published_at]: [news-2] of [news-*] has no such field (check its name in the index mapping)"
        );
        let alone = vec![("news".to_string(), None)];
        let problem = time_field_problem("--time-field", "news", "pubdate", &alone).expect("one");
        assert_eq!(
            problem,
            "--time-field [pubdate]: index [news] has no such field (check its name in the index mapping)"
        );
        let text = vec![("news".to_string(), Some("text".to_string()))];
        let problem = time_field_problem("[time_field]", "news", "title", &text).expect("text");
        assert!(problem.contains("text in [news]"), "{problem}");
        let date = vec![("news".to_string(), Some("date".to_string()))];
        assert_eq!(
            time_field_problem("[time_field]", "news", "published_at", &date),
            None
        );
        let whole = json!({"news": {"mappings": {"properties": {"meta": {"properties": {"at": {"type": "date"}}}}}}});
        assert_eq!(
            types_in(&whole, "meta.at"),
            vec![("news".to_string(), Some("date".to_string()))]
        );
        let nested = json!({"blog": {"mappings": {"meta.at": {"full_name": "meta.at", "mapping": {"at": {"type": "long"}}}}}});
        assert_eq!(
            time_field_problem(
                "[time_field]",
                "blog",
                "meta.at",
                &types_in(&nested, "meta.at")
            ),
            None
        );
    }
}
