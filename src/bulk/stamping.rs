//! What gets stamped: one rule for the sidecar and for `neardup stamp`.
//!
//! Motivation: the sidecar and the offline command must agree on which
//! documents carry a `cluster_root`, or a file stamped offline and the same
//! body sent through the sidecar group differently.
//!
//! Design: an item is stamped where it can create a document whose text
//! the stamp describes:
//!
//! - `index` and `create` sources (and `_doc` / `_create` bodies): the
//!   source itself;
//! - an `update` with an `upsert` object: the upsert (it is the document
//!   when the id is new);
//! - an `update` with `doc_as_upsert: true`: its `doc` (clients use that
//!   idiom to send whole documents);
//! - nothing else here: a partial `doc` or a script changes a stored
//!   document, which only the sidecar can read: it places the result again
//!   ([`super::partial`]; `neardup stamp` leaves them as they are), and
//!   `delete` has no source.
//!
//! A plain source keeps its bytes, with the stamps inserted before its
//! closing brace ([`super::insert_fields`]); an update body is serialised
//! again (its stamped object is nested).
//!
//! Consequences: an upsert stamp counts only when the cluster says it
//! created the document, a `doc_as_upsert` stamp when it created or
//! replaced it ([`StampTarget::stored`]).

use serde_json::{Map, Value};

use super::ActionKind;

/// Where a stamp goes in a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StampTarget {
    /// The source itself (`index`, `create`, `_doc`, `_create`).
    Source,
    /// The `upsert` object of an update.
    Upsert,
    /// The `doc` object of an update with `doc_as_upsert`.
    DocAsUpsert,
    /// The `doc` of a partial update that rewrites the text: the document
    /// it makes (the stored one merged with it) was placed. Only the
    /// sidecar, which reads the stored document, stamps it
    /// ([`super::partial`]); [`StampTarget::of`] never answers it.
    MergedDoc,
}

impl StampTarget {
    /// Where the stamp of an item of `kind` with this parsed source goes;
    /// `None` when the item is not stamped.
    pub fn of(kind: ActionKind, source: &Map<String, Value>) -> Option<StampTarget> {
        match kind {
            ActionKind::Index | ActionKind::Create => Some(StampTarget::Source),
            ActionKind::Update => {
                if source.get("upsert").is_some_and(Value::is_object) {
                    Some(StampTarget::Upsert)
                } else if source.get("doc_as_upsert").and_then(Value::as_bool) == Some(true)
                    && source.get("doc").is_some_and(Value::is_object)
                {
                    Some(StampTarget::DocAsUpsert)
                } else {
                    None
                }
            }
            ActionKind::Delete => None,
        }
    }

    /// The key of the stamped object inside an update body.
    fn nested_key(self) -> Option<&'static str> {
        match self {
            StampTarget::Source => None,
            StampTarget::Upsert => Some("upsert"),
            StampTarget::DocAsUpsert | StampTarget::MergedDoc => Some("doc"),
        }
    }

    /// The document whose text is fingerprinted, inside `source` (the
    /// source wrapped as a value).
    pub fn document(self, source: &Value) -> Option<&Value> {
        match self.nested_key() {
            None => Some(source),
            Some(key) => source.get(key),
        }
    }

    /// Whether the cluster stored the stamped document, given its answer.
    pub fn stored(self, status: u16, result: Option<&str>) -> bool {
        (200..300).contains(&status)
            && match self {
                StampTarget::Source => true,
                StampTarget::Upsert => result == Some("created"),
                StampTarget::DocAsUpsert => matches!(result, Some("created" | "updated")),
                // `noop`: the document already held this text and stamp.
                StampTarget::MergedDoc => matches!(result, Some("updated" | "noop")),
            }
    }

    /// The source line with `stamps` in it. A plain source keeps its bytes
    /// (`original`, stamps inserted before the closing brace); an update
    /// body is serialised again.
    pub fn stamp(
        self,
        mut source: Map<String, Value>,
        original: &[u8],
        stamps: &[(&str, &str)],
    ) -> Vec<u8> {
        let Some(key) = self.nested_key() else {
            return super::insert_fields(original, source, stamps);
        };
        if let Some(Value::Object(inner)) = source.get_mut(key) {
            for (name, value) in stamps {
                inner.insert((*name).to_string(), Value::from(*value));
            }
        }
        Value::Object(source).to_string().into_bytes()
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

    #[test]
    fn sources_upserts_and_doc_as_upsert_are_stamped_and_nothing_else() {
        let plain = object(json!({"title": "x"}));
        assert_eq!(
            StampTarget::of(ActionKind::Index, &plain),
            Some(StampTarget::Source)
        );
        assert_eq!(
            StampTarget::of(ActionKind::Create, &plain),
            Some(StampTarget::Source)
        );
        let upsert = object(json!({"doc": {"t": "x"}, "upsert": {"t": "y"}}));
        assert_eq!(
            StampTarget::of(ActionKind::Update, &upsert),
            Some(StampTarget::Upsert)
        );
        let doc_as_upsert = object(json!({"doc": {"t": "x"}, "doc_as_upsert": true}));
        assert_eq!(
            StampTarget::of(ActionKind::Update, &doc_as_upsert),
            Some(StampTarget::DocAsUpsert)
        );
        let partial = object(json!({"doc": {"t": "x"}}));
        assert_eq!(StampTarget::of(ActionKind::Update, &partial), None);
        let script = object(json!({"script": {"source": "ctx._source.n++"}}));
        assert_eq!(StampTarget::of(ActionKind::Update, &script), None);
        assert_eq!(StampTarget::of(ActionKind::Delete, &plain), None);
    }

    #[test]
    fn the_document_is_the_stamped_object() {
        let body = json!({"doc": {"t": "x"}, "upsert": {"t": "y"}});
        assert_eq!(
            StampTarget::Upsert.document(&body),
            Some(&json!({"t": "y"}))
        );
        assert_eq!(
            StampTarget::DocAsUpsert.document(&body),
            Some(&json!({"t": "x"}))
        );
        assert_eq!(StampTarget::Source.document(&body), Some(&body));
    }

    #[test]
    fn updates_are_stamped_in_their_nested_object() {
        let source = object(json!({"doc": {"t": "x"}, "upsert": {"t": "y"}}));
        let bytes = StampTarget::Upsert.stamp(source, b"", &[("cluster_root", "r")]);
        assert_eq!(
            bytes,
            br#"{"doc":{"t":"x"},"upsert":{"t":"y","cluster_root":"r"}}"#.to_vec()
        );
        let original = br#"{"t": "x"}"#;
        let source = object(json!({"t": "x"}));
        let bytes = StampTarget::Source.stamp(source, original, &[("cluster_root", "r")]);
        assert_eq!(bytes, br#"{"t": "x","cluster_root":"r"}"#.to_vec());
    }

    #[test]
    fn what_counts_as_stored() {
        assert!(StampTarget::Upsert.stored(201, Some("created")));
        assert!(!StampTarget::Upsert.stored(200, Some("updated")));
        assert!(StampTarget::DocAsUpsert.stored(200, Some("updated")));
        assert!(!StampTarget::DocAsUpsert.stored(200, Some("noop")));
        assert!(StampTarget::Source.stored(201, Some("created")));
        assert!(!StampTarget::Source.stored(429, None));
        assert!(StampTarget::MergedDoc.stored(200, Some("updated")));
        assert!(StampTarget::MergedDoc.stored(200, Some("noop")));
        assert!(!StampTarget::MergedDoc.stored(404, None));
    }
}
