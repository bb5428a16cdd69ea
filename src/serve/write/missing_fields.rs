//! Documents that lack a fingerprinted field: counted, and said once.
//!
//! Motivation: with the body under `body` where the configuration says
//! `content`, only headlines are fingerprinted, and different stories with
//! the same headline ("Weather update") become exact reprints. Nothing
//! fails, so nothing would tell the operator.
//!
//! Design: every stamped source is checked for text in each configured
//! field ([`crate::fingerprint::Fingerprinter::fields_without_text`]); such
//! documents count in `neardup_documents_missing_fields_total`, and the
//! first one of each index and field logs a warning naming the fields the
//! document does have. A document with no text in any fingerprinted field
//! is warned about once per index, as what happens to it: a class of its
//! own, grouped with nothing ([`crate::bulk::stamping::class_of_its_own`]).
//! The set of warned pairs is bounded.

use std::collections::HashSet;

use parking_lot::Mutex;
use serde_json::Value;

use crate::serve::metrics::Metrics;

/// At most this many (index, field) pairs are remembered as warned.
const MAX_WARNED: usize = 1024;

/// What one document lacks, and what it has (for the warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MissingFields {
    pub missing: Vec<String>,
    /// Its top-level fields (at most 12), so the operator sees the name
    /// the text is under.
    pub present: Vec<String>,
    /// No fingerprinted field had text: nothing was fingerprinted.
    pub all: bool,
}

impl MissingFields {
    /// `None` when `document` has text in every configured field (`missing`
    /// lists those it has none in, from its analysis).
    pub fn of(missing: Vec<&str>, document: &Value, all: bool) -> Option<MissingFields> {
        if missing.is_empty() {
            return None;
        }
        Some(MissingFields {
            missing: missing.into_iter().map(str::to_string).collect(),
            present: document
                .as_object()
                .map(|object| object.keys().take(12).cloned().collect())
                .unwrap_or_default(),
            all,
        })
    }
}

/// The (index, field) pairs already warned about.
#[derive(Debug, Default)]
pub struct MissingFieldWarnings {
    warned: Mutex<HashSet<(String, String)>>,
}

impl MissingFieldWarnings {
    /// Counts one document of `index` that lacks fields, and warns about
    /// each field the first time it is missing in that index.
    pub(super) fn note(&self, metrics: &Metrics, index: Option<&str>, fields: &MissingFields) {
        Metrics::add(&metrics.documents_missing_fields, 1);
        let index = index.unwrap_or("(no index)");
        let mut warned = self.warned.lock();
        if fields.all {
            // Keyed apart from the fields: one warning per index.
            let key = (index.to_string(), String::new());
            if warned.len() < MAX_WARNED && !warned.contains(&key) {
                warned.insert(key);
                tracing::warn!(
                    index,
                    fields = fields.missing.join(", "),
                    document_fields = fields.present.join(", "),
                    "documents have no text in any fingerprinted field: each is stamped with a class of its own (a cluster_root starting nofingerprint-, no simhash) and grouped with no other document; set the fields with --fields, or per index with [[serve.index]]"
                );
            }
            return;
        }
        for field in &fields.missing {
            if warned.len() >= MAX_WARNED || warned.contains(&(index.to_string(), field.clone())) {
                continue;
            }
            warned.insert((index.to_string(), field.clone()));
            tracing::warn!(
                index,
                field = field.as_str(),
                document_fields = fields.present.join(", "),
                "documents have no text in a fingerprinted field: they are grouped on the other fingerprinted fields alone (set them with --fields, or per index with [[serve.index]])"
            );
        }
    }

    #[cfg(test)]
    fn warned(&self) -> usize {
        self.warned.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{FingerprintConfig, Fingerprinter};

    #[test]
    fn each_index_and_field_is_warned_once_and_every_document_counted() {
        let fingerprinter = Fingerprinter::new(FingerprintConfig::default()).expect("valid");
        let document = serde_json::json!({"title": "Weather update", "body": "Rain"});
        let missing = MissingFields::of(
            fingerprinter.fields_without_text(&document),
            &document,
            false,
        )
        .expect("content missing");
        assert_eq!(missing.missing, vec!["content".to_string()]);
        assert_eq!(
            missing.present,
            vec!["title".to_string(), "body".to_string()]
        );
        let complete = serde_json::json!({"title": "Weather update", "content": "Rain"});
        assert_eq!(
            MissingFields::of(
                fingerprinter.fields_without_text(&complete),
                &complete,
                false
            ),
            None
        );
        let metrics = Metrics::default();
        let warnings = MissingFieldWarnings::default();
        for _ in 0..3 {
            warnings.note(&metrics, Some("news"), &missing);
        }
        warnings.note(&metrics, Some("blog"), &missing);
        assert_eq!(warnings.warned(), 2);
        let nothing = serde_json::json!({"headline": "Weather update", "body": "Rain"});
        let all = MissingFields::of(fingerprinter.fields_without_text(&nothing), &nothing, true)
            .expect("all missing");
        warnings.note(&metrics, Some("news"), &all);
        warnings.note(&metrics, Some("news"), &all);
        assert_eq!(
            warnings.warned(),
            3,
            "one warning per index when nothing is fingerprinted"
        );
        assert_eq!(
            metrics
                .documents_missing_fields
                .load(std::sync::atomic::Ordering::Relaxed),
            6
        );
    }
}
