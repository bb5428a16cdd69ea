//! Is the stamp mapped so the pages can use it? Checked once per index.
//!
//! Motivation: an index that no template covers maps `cluster_root`
//! dynamically as `text` (with a `.keyword` sub-field): stamps are written,
//! but `collapse` and `terms` on `cluster_root` fail, and nothing said so
//! until the list page broke (issue 31: `[[serve.index]] pattern = "blog-*"`
//! outside the template's patterns).
//!
//! Design: after the cluster stored the first stamped document of an index
//! (the concrete index of its answer), a task reads the mapping of the root
//! field there ([`crate::upstream::mapping::field_types`]); anything but
//! `keyword` is warned about once, naming the fix, and listed in
//! `/_neardup/stats` (`stamp_mapping.not_keyword`). Checked indices are
//! remembered (bounded), so the check costs one request per index.

use std::collections::{BTreeMap, HashSet};

use axum::http::HeaderMap;
use parking_lot::Mutex;

use crate::upstream::Upstream;
use crate::upstream::mapping::field_types;

/// Indices remembered as checked; beyond it, new indices are not checked.
const MAX_CHECKED: usize = 10_000;

/// The indices checked, and those whose root field is not a keyword.
#[derive(Debug, Default)]
pub struct StampMappingChecks {
    checked: Mutex<HashSet<String>>,
    not_keyword: Mutex<BTreeMap<String, String>>,
}

impl StampMappingChecks {
    /// Index → the type its root field has, for those that are not
    /// `keyword` (at most 100, for stats).
    pub fn not_keyword(&self) -> BTreeMap<String, String> {
        self.not_keyword
            .lock()
            .iter()
            .take(100)
            .map(|(index, kind)| (index.clone(), kind.clone()))
            .collect()
    }

    /// The indices of `stored` not checked yet, marked as checked.
    pub(super) fn claim(&self, stored: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut checked = self.checked.lock();
        stored
            .into_iter()
            .filter(|index| checked.len() < MAX_CHECKED && checked.insert(index.clone()))
            .collect()
    }

    fn record(&self, index: &str, kind: &str) {
        self.not_keyword
            .lock()
            .insert(index.to_string(), kind.to_string());
    }
}

/// Reads the root field's mapping in `indices` and records (and warns
/// about) those where it is not a keyword.
pub(super) async fn check(
    checks: &StampMappingChecks,
    upstream: &Upstream,
    headers: &HeaderMap,
    field: &str,
    indices: Vec<String>,
) {
    for index in indices {
        let Ok(types) = field_types(upstream, headers, &index, field).await else {
            continue;
        };
        for (concrete, kind) in types {
            let kind = kind.unwrap_or_else(|| "unmapped".to_string());
            if kind != "keyword" {
                tracing::warn!(
                    index = concrete,
                    field,
                    mapped_as = kind,
                    "stamps are not mapped as keyword in this index: collapse and terms on them fail; add \"composed_of\": [\"neardup-stamps\"] to its template (or list its pattern in --template-patterns with --install-template), then reindex"
                );
                checks.record(&concrete, &kind);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_index_is_claimed_once() {
        let checks = StampMappingChecks::default();
        assert_eq!(
            checks.claim(["news".to_string(), "blog".to_string()]),
            vec!["news".to_string(), "blog".to_string()]
        );
        assert_eq!(
            checks.claim(["news".to_string(), "blog-2".to_string()]),
            vec!["blog-2".to_string()]
        );
        checks.record("blog", "text");
        assert_eq!(checks.not_keyword()["blog"], "text");
    }
}
