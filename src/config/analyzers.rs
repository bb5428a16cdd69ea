//! Which analyzer reads a document: the engine's fields, or the fields
//! configured for its index pattern (`[[serve.index]]`). One forest for all
//! indices; only the fields read differ.

use anyhow::Context;
use serde::Deserialize;

use super::engine::EngineSettings;
use crate::engine::Analyzer;
use crate::fingerprint::Fingerprinter;
use crate::ledger::EngineParts;

/// Other fields for indices whose name matches `pattern` (`*` wildcards).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexFields {
    pub pattern: String,
    pub fields: Vec<String>,
    pub headline_field: Option<String>,
}

/// The analyzers: the default one and those of index patterns.
#[derive(Debug, Clone)]
pub struct Analyzers {
    default: Analyzer,
    by_pattern: Vec<(String, Analyzer)>,
}

impl Analyzers {
    /// The analyzers of an engine made of `parts` (its own fields by
    /// default) and of the `[[serve.index]]` entries.
    pub fn of_engine(
        parts: &EngineParts,
        engine: &EngineSettings,
        indices: &[IndexFields],
    ) -> anyhow::Result<Self> {
        let default = Analyzer::new(parts.fingerprinter.clone(), &parts.confirmation);
        Analyzers::new(default, engine, indices)
    }

    /// Builds one analyzer per `[[serve.index]]` entry, each with the engine
    /// settings but its own fields.
    pub fn new(
        default: Analyzer,
        engine: &EngineSettings,
        indices: &[IndexFields],
    ) -> anyhow::Result<Self> {
        let mut by_pattern = Vec::new();
        for entry in indices {
            let mut settings = engine.clone();
            settings.fields = Some(entry.fields.clone());
            if entry.headline_field.is_some() {
                settings.headline_field = entry.headline_field.clone();
            }
            let fingerprinter = Fingerprinter::new(settings.fingerprint_config())
                .with_context(|| format!("fields of index pattern `{}`", entry.pattern))?;
            let analyzer = default.with_fingerprinter(fingerprinter);
            by_pattern.push((entry.pattern.clone(), analyzer));
        }
        Ok(Analyzers {
            default,
            by_pattern,
        })
    }

    /// The analyzer for documents of `index` (the default when unknown).
    /// The `[[serve.index]]` patterns, in order.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.by_pattern.iter().map(|(pattern, _)| pattern.as_str())
    }

    pub fn for_index(&self, index: Option<&str>) -> &Analyzer {
        index
            .and_then(|index| {
                self.by_pattern
                    .iter()
                    .find(|(pattern, _)| wildcard_matches(pattern, index))
            })
            .map_or(&self.default, |(_, analyzer)| analyzer)
    }
}

/// `*` matches any run of characters.
fn wildcard_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(position) => rest = &rest[position + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_patterns() {
        assert!(wildcard_matches("news-*", "news-2026.11"));
        assert!(wildcard_matches("*", "anything"));
        assert!(wildcard_matches("a*c*e", "abcde"));
        assert!(!wildcard_matches("news-*", "blog-1"));
        assert!(wildcard_matches("exact", "exact"));
        assert!(!wildcard_matches("exact", "exactly"));
    }
}
