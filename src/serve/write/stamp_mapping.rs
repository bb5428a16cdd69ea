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
    /// Index patterns the sidecar stamps that no template maps as keyword
    /// (found at start) → what a new index there would map it as.
    patterns_not_covered: Mutex<BTreeMap<String, String>>,
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

    /// Patterns found at start whose new indices would not map the root
    /// field as a keyword.
    pub fn patterns_not_covered(&self) -> BTreeMap<String, String> {
        self.patterns_not_covered.lock().clone()
    }

    /// The indices of `stored` not checked yet, marked as checked.
    /// (Called for every settled write: an index seen before costs a hash
    /// lookup, no allocation.)
    pub(super) fn claim<'a>(&self, stored: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut checked = self.checked.lock();
        let mut new = Vec::new();
        for index in stored {
            if checked.len() < MAX_CHECKED && !checked.contains(index) {
                checked.insert(index.to_string());
                new.push(index.to_string());
            }
        }
        new
    }

    fn record(&self, index: &str, kind: &str) {
        self.not_keyword
            .lock()
            .insert(index.to_string(), kind.to_string());
    }
}

/// At start: asks the cluster what a new index of each pattern would map the
/// root field as (`POST /_index_template/_simulate_index/{name}`, a name the
/// pattern matches), and records (and warns about) the patterns where it
/// would not be a keyword. A cluster without the API is not asked again.
pub async fn check_patterns(
    checks: &StampMappingChecks,
    upstream: &Upstream,
    field: &str,
    patterns: impl IntoIterator<Item = String>,
) {
    for pattern in patterns {
        let name = pattern.replace('*', "neardup-probe");
        let path = format!(
            "/_index_template/_simulate_index/{}",
            crate::upstream::encode_component(&name)
        );
        let answer = upstream
            .call_json(
                axum::http::Method::POST,
                &path,
                &HeaderMap::new(),
                crate::upstream::Payload::Empty,
            )
            .await;
        let Ok(answer) = answer else {
            tracing::debug!(
                pattern,
                "cannot simulate a new index: template coverage not checked at start"
            );
            return;
        };
        let kind = answer["template"]["mappings"]["properties"][field]["type"]
            .as_str()
            .unwrap_or("text (dynamic)")
            .to_string();
        if kind != "keyword" {
            tracing::warn!(
                pattern,
                field,
                mapped_as = kind,
                "no index template maps the stamps of this pattern as keyword: collapse on them will fail there; add it to --template-patterns with --install-template, or \"composed_of\": [\"neardup-stamps\"] to its template"
            );
            checks.patterns_not_covered.lock().insert(pattern, kind);
        }
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
            checks.claim(["news", "blog"]),
            vec!["news".to_string(), "blog".to_string()]
        );
        assert_eq!(checks.claim(["news", "blog-2"]), vec!["blog-2".to_string()]);
        checks.record("blog", "text");
        assert_eq!(checks.not_keyword()["blog"], "text");
    }
}
