//! Updates that change a stored document: what a partial `doc` rewrites,
//! and the document it makes.
//!
//! Motivation: newsrooms correct and rewrite articles with partial
//! updates. A stamp describes the text it was computed from; an update
//! whose `doc` rewrites a fingerprinted field leaves a stamp that no longer
//! describes its document, unless the result is placed again. Only the
//! sidecar can do that (it reads the stored document); `neardup stamp`
//! has no cluster and keeps [`super::stamping`]'s rule.
//!
//! Design: pure functions over parsed JSON, the cluster's own rules:
//!
//! - a partial `doc` is merged into the stored source key by key: where
//!   both values are objects the merge recurses, anything else (arrays,
//!   `null`, scalars) replaces; keys are literal (`"a.b"` stays a dotted
//!   key, as in the cluster's source);
//! - a `doc` rewrites a fingerprinted field when one of its keys is the
//!   field's path, a shorter path that holds it (an object to recurse into,
//!   or anything else, which replaces the whole object), or when the field
//!   is reached through a dotted key.

use serde_json::{Map, Value};

/// What an update item does to the text of the document it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateEffect {
    /// Stamped by [`super::stamping`]'s rule (an upsert or `doc_as_upsert`),
    /// or leaves every fingerprinted field as it was: nothing to do here.
    Unchanged,
    /// A partial `doc` that rewrites a fingerprinted field: the stored
    /// document merged with it is placed, and the stamps ride in the `doc`.
    RewritesText,
    /// A script: what it does is known only once the cluster ran it; the
    /// result is read back and stamped after.
    Scripted,
}

impl UpdateEffect {
    /// The effect of an update body (the source line of an `update` item,
    /// or an `_update` request's body) on the fields at `field_paths`.
    pub fn of<'a>(
        body: &Map<String, Value>,
        field_paths: impl IntoIterator<Item = &'a str>,
    ) -> UpdateEffect {
        if super::stamping::StampTarget::of(super::ActionKind::Update, body).is_some() {
            return UpdateEffect::Unchanged;
        }
        if body.get("script").is_some() {
            return UpdateEffect::Scripted;
        }
        let Some(Value::Object(doc)) = body.get("doc") else {
            return UpdateEffect::Unchanged;
        };
        let mut paths = field_paths.into_iter();
        if paths.any(|path| rewrites(doc, &path.split('.').collect::<Vec<_>>())) {
            UpdateEffect::RewritesText
        } else {
            UpdateEffect::Unchanged
        }
    }
}

/// Whether merging `doc` can change the values at the path `segments`.
fn rewrites(doc: &Map<String, Value>, segments: &[&str]) -> bool {
    (1..=segments.len()).any(|key_len| {
        let key = segments[..key_len].join(".");
        match doc.get(&key) {
            None => false,
            Some(_) if key_len == segments.len() => true,
            // An object merges: only its keys on the path matter.
            Some(Value::Object(inner)) => rewrites(inner, &segments[key_len..]),
            // Anything else replaces the object that held the field.
            Some(_) => true,
        }
    })
}

/// Merges a partial `doc` into `stored`, as the cluster applies it.
pub fn merge(stored: &mut Map<String, Value>, doc: &Map<String, Value>) {
    for (key, value) in doc {
        match (stored.get_mut(key), value) {
            (Some(Value::Object(held)), Value::Object(change)) => merge(held, change),
            _ => {
                stored.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }

    const FIELDS: [&str; 2] = ["title", "article.body"];

    #[test]
    fn a_doc_that_touches_a_fingerprinted_field_rewrites_the_text() {
        let effect = |body: Value| UpdateEffect::of(&object(body), FIELDS);
        assert_eq!(
            effect(json!({"doc": {"title": "new"}})),
            UpdateEffect::RewritesText
        );
        assert_eq!(
            effect(json!({"doc": {"article": {"body": "new"}}})),
            UpdateEffect::RewritesText
        );
        assert_eq!(
            effect(json!({"doc": {"article.body": "new"}})),
            UpdateEffect::RewritesText
        );
        assert_eq!(
            effect(json!({"doc": {"article": null}})),
            UpdateEffect::RewritesText
        );
        assert_eq!(
            effect(json!({"doc": {"title": null}})),
            UpdateEffect::RewritesText
        );
    }

    #[test]
    fn a_doc_beside_the_fingerprinted_fields_changes_nothing() {
        let effect = |body: Value| UpdateEffect::of(&object(body), FIELDS);
        assert_eq!(
            effect(json!({"doc": {"views": 3}})),
            UpdateEffect::Unchanged
        );
        assert_eq!(
            effect(json!({"doc": {"article": {"author": "x"}}})),
            UpdateEffect::Unchanged
        );
        assert_eq!(
            effect(json!({"doc": {"article.author": "x", "titles": "y"}})),
            UpdateEffect::Unchanged
        );
        // Today's stamping rule covers upserts and doc_as_upsert.
        assert_eq!(
            effect(json!({"doc": {"title": "x"}, "upsert": {"title": "x"}})),
            UpdateEffect::Unchanged
        );
        assert_eq!(
            effect(json!({"doc": {"title": "x"}, "doc_as_upsert": true})),
            UpdateEffect::Unchanged
        );
        assert_eq!(
            effect(json!({"script": {"source": "ctx._source.n++"}})),
            UpdateEffect::Scripted
        );
        assert_eq!(effect(json!({})), UpdateEffect::Unchanged);
    }

    #[test]
    fn objects_merge_and_everything_else_replaces() {
        let mut stored = object(json!({
            "title": "old",
            "article": {"body": "old body", "author": "a"},
            "tags": ["x", "y"],
            "n": 1
        }));
        merge(
            &mut stored,
            &object(json!({
                "title": "new",
                "article": {"body": "new body"},
                "tags": ["z"],
                "n": null,
                "article.extra": 1
            })),
        );
        assert_eq!(
            Value::Object(stored),
            json!({
                "title": "new",
                "article": {"body": "new body", "author": "a"},
                "tags": ["z"],
                "n": null,
                "article.extra": 1
            })
        );
    }
}
