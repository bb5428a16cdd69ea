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
//! A stamped document with no text in any fingerprinted field has no
//! fingerprint to place: the sidecar gives it a class of its own instead,
//! [`class_of_its_own`], a root no fingerprinted document can have (roots
//! are 16 hex digits; this one starts `nofingerprint-`), and no `simhash`.
//! Left without a root it would share the list page's one collapse group
//! of documents lacking the field with every unrelated document of its
//! kind (issue 44). `neardup stamp` still passes such a document
//! unstamped: its output is the same on every run, which a random root
//! would break (not settled yet; see `docs/decisions.md`).
//!
//! Consequences: an upsert stamp counts only when the cluster says it
//! created the document, a `doc_as_upsert` stamp when it created or
//! replaced it ([`StampTarget::stored`]). A class of its own is placed in
//! no forest: the Explorer and `/_neardup/classes` know it by its prefix.

use serde_json::{Map, Value};

use super::ActionKind;

/// How the root of a document that could not be fingerprinted starts: not
/// a hex digit, so no fingerprint's root can equal it; 30 characters with
/// its number, within the template's `ignore_above` (32).
pub const OWN_CLASS_PREFIX: &str = "nofingerprint-";

/// A new root for a document that could not be fingerprinted: the prefix
/// and 64 random bits (from the system's generator; the clock and a counter
/// if it fails), so two such documents never share a class.
pub fn class_of_its_own() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut bytes = [0u8; 8];
    let number = if aws_lc_rs::rand::fill(&mut bytes).is_ok() {
        u64::from_le_bytes(bytes)
    } else {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos() as u64);
        nanos ^ COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed) << 48
    };
    format!("{OWN_CLASS_PREFIX}{number:016x}")
}

/// Whether `root` is a class of its own ([`class_of_its_own`]).
pub fn is_class_of_its_own(root: &str) -> bool {
    root.starts_with(OWN_CLASS_PREFIX)
}

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
    fn classes_of_their_own_differ_and_no_fingerprint_root_looks_like_one() {
        let (one, other) = (class_of_its_own(), class_of_its_own());
        assert_ne!(one, other);
        assert!(is_class_of_its_own(&one) && one.len() <= 32, "{one}");
        assert_eq!(crate::units::parse_fingerprint(&one), None);
        assert!(!is_class_of_its_own(&crate::units::format_fingerprint(
            u64::MAX
        )));
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
