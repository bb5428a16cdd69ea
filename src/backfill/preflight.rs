//! What a backfill checks, and puts right, before it is accepted.
//!
//! Motivation: an index that existed before the sidecar (made by dynamic
//! mapping, or by a template older than ours) is exactly what backfill is
//! for, and exactly where our template cannot help: templates apply only
//! when an index is created. Stamping such an index mapped `cluster_root`
//! dynamically as `text`, so the list page's collapse failed after a job
//! that reported `done` (issue 44). And a time field the index lacks was
//! accepted (200 `running`) and failed later, naming a command-line flag in
//! an HTTP answer.
//!
//! Design: before the job starts, so the request itself gets the answer:
//!
//! 1. the time field, if given, must be a date or an epoch number in every
//!    index of the request ([`mapping::time_field_problem`]), named as the
//!    caller gave it (`[time_field]` in a request body, `--time-field` on
//!    the command line);
//! 2. each stamp field (the root and the simhash field) must be a `keyword`
//!    in every index: where one is of another type the job is refused with
//!    the way out (a reindex into an index that maps them as keyword);
//! 3. where one is absent, it is added as a `keyword` (`PUT
//!    /{indices}/_mapping`: the cluster accepts new fields in an existing
//!    mapping) before any stamp is written.
//!
//! Consequences: the caller's credentials must allow a mapping change on
//! the index where a stamp field is absent (`manage` on Elasticsearch, the
//! `indices:admin/mapping/put` action on OpenSearch); a refusal comes back
//! as the cluster gave it, before anything is stamped. An index or pattern
//! that matches nothing passes (the read finds nothing to stamp).

use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::{Map, Value, json};

use super::settings::{OptionNames, StartError};
use crate::upstream::mapping::{self, field_types};
use crate::upstream::{ClusterError, Payload, Upstream, encode_component};

/// Concrete indices per `PUT _mapping` request (keeps the path short).
const INDICES_PER_MAPPING_REQUEST: usize = 50;

/// Checks the job's fields in the mapping of `index`, and maps the absent
/// stamp fields as `keyword`. Returns the indices whose mapping was
/// extended.
///
/// # Errors
///
/// [`StartError::Invalid`] for a time field that cannot order the index or
/// a stamp field of another type; [`StartError::Cluster`] when the cluster
/// cannot be asked, or refuses (no such index, no right to change the
/// mapping).
pub async fn check_and_map(
    upstream: &Upstream,
    headers: &HeaderMap,
    index: &str,
    time_field: Option<&str>,
    stamp_fields: [&str; 2],
    names: OptionNames,
) -> Result<Vec<String>, StartError> {
    if let Some(field) = time_field {
        let types = field_types(upstream, headers, index, field).await?;
        if let Some(problem) = mapping::time_field_problem(names.time_field(), index, field, &types)
        {
            return Err(StartError::Invalid(problem));
        }
    }
    let mut absent: Vec<(String, Vec<&str>)> = Vec::new();
    let mut wrong: Vec<String> = Vec::new();
    for field in stamp_fields {
        for (concrete, kind) in field_types(upstream, headers, index, field).await? {
            match kind.as_deref() {
                Some("keyword") => {}
                Some(other) => wrong.push(format!("[{field}] is {other} in [{concrete}]")),
                None => match absent.iter_mut().find(|(name, _)| *name == concrete) {
                    Some((_, fields)) => fields.push(field),
                    None => absent.push((concrete, vec![field])),
                },
            }
        }
    }
    if !wrong.is_empty() {
        return Err(StartError::Invalid(wrong_type_message(
            &wrong,
            stamp_fields,
        )));
    }
    // Indices lacking the same fields go in one request.
    let mut added = Vec::new();
    let mut groups: Vec<(Vec<&str>, Vec<String>)> = Vec::new();
    for (concrete, fields) in absent {
        match groups.iter_mut().find(|(group, _)| *group == fields) {
            Some((_, indices)) => indices.push(concrete),
            None => groups.push((fields, vec![concrete])),
        }
    }
    for (fields, indices) in groups {
        let body = json!({ "properties": keyword_properties(&fields) });
        for chunk in indices.chunks(INDICES_PER_MAPPING_REQUEST) {
            let path = format!("/{}/_mapping", encode_component(&chunk.join(",")));
            upstream
                .call_json(Method::PUT, &path, headers, Payload::Json(&body))
                .await?;
            tracing::info!(
                indices = chunk.join(", "),
                fields = fields.join(", "),
                "backfill: stamp fields absent from the mapping added as keyword"
            );
            added.extend(chunk.iter().cloned());
        }
    }
    Ok(added)
}

/// `{"a": {"type": "keyword"}}`, dotted names as nested objects (`a.b` →
/// `{"a": {"properties": {"b": …}}}`), as a mapping's `properties` reads.
fn keyword_properties(fields: &[&str]) -> Value {
    let mut properties = Map::new();
    for field in fields {
        let path: Vec<&str> = field.split('.').collect();
        insert_keyword(&mut properties, &path);
    }
    Value::Object(properties)
}

fn insert_keyword(properties: &mut Map<String, Value>, path: &[&str]) {
    match path {
        [] => {}
        [leaf] => {
            properties.insert((*leaf).to_string(), json!({ "type": "keyword" }));
        }
        [parent, rest @ ..] => {
            let entry = properties
                .entry((*parent).to_string())
                .or_insert_with(|| json!({ "properties": {} }));
            if let Some(inner) = entry.get_mut("properties").and_then(Value::as_object_mut) {
                insert_keyword(inner, rest);
            }
        }
    }
}

fn wrong_type_message(wrong: &[String], stamp_fields: [&str; 2]) -> String {
    let mapping = keyword_properties(&stamp_fields);
    format!(
        "{}: the stamps must be keyword, or collapse and terms on them fail, and a field's type cannot change in an existing index. Reindex into a new index whose mapping holds {mapping} (mappings/component-template.json; --install-template maps new indices of --template-patterns so), then backfill that index",
        wrong.join(", ")
    )
}

impl From<ClusterError> for StartError {
    fn from(error: ClusterError) -> Self {
        StartError::Cluster(error)
    }
}

/// The status a refused start answers with: the cluster's own for its
/// refusals (a missing index, no right to change the mapping), 502 when it
/// could not be asked.
pub fn cluster_status(error: &ClusterError) -> StatusCode {
    match error {
        ClusterError::Refused { status, .. } => *status,
        ClusterError::NoIndex { .. } => StatusCode::NOT_FOUND,
        ClusterError::Unanswered { .. } | ClusterError::NotJson { .. } => StatusCode::BAD_GATEWAY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_stamp_fields_are_mapped_as_keyword_dotted_names_nested() {
        assert_eq!(
            keyword_properties(&["cluster_root", "simhash"]),
            json!({"cluster_root": {"type": "keyword"}, "simhash": {"type": "keyword"}})
        );
        assert_eq!(
            keyword_properties(&["neardup.root", "neardup.simhash"]),
            json!({"neardup": {"properties": {
                "root": {"type": "keyword"}, "simhash": {"type": "keyword"}
            }}})
        );
    }

    #[test]
    fn a_stamp_field_of_another_type_is_refused_with_the_way_out() {
        let message = wrong_type_message(
            &["[cluster_root] is text in [news]".to_string()],
            ["cluster_root", "simhash"],
        );
        assert!(message.contains("Reindex"), "{message}");
        assert!(message.contains("\"type\":\"keyword\""), "{message}");
    }
}
