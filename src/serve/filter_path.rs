//! The cluster's `filter_path` response filter, applied by the sidecar.
//!
//! Motivation: a client may ask for `_bulk?filter_path=items.*.error` to get
//! only the errors back, but the sidecar needs every item's status and id to
//! keep its counts right. So the sidecar removes `filter_path` from the
//! request it forwards and applies it itself to the full answer.
//!
//! Design: the documented rules: comma-separated dotted paths; `*` matches
//! any part of a key, `**` any number of levels; arrays are transparent (a
//! path goes through every element); a path starting with `-` excludes what
//! it matches, after the inclusions. A response with nothing left is `{}`.
//! [`split_filter_path`] takes the parameter off the forwarded query.

use serde_json::{Map, Value};

use super::route::decode;

/// A parsed `filter_path` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterPath {
    include: Vec<Vec<String>>,
    exclude: Vec<Vec<String>>,
}

impl FilterPath {
    /// Parses the query-string value; `None` when it names no path.
    pub fn parse(text: &str) -> Option<Self> {
        let mut include = Vec::new();
        let mut exclude = Vec::new();
        for path in text
            .split(',')
            .map(str::trim)
            .filter(|path| !path.is_empty())
        {
            let (target, path) = match path.strip_prefix('-') {
                Some(rest) => (&mut exclude, rest),
                None => (&mut include, path),
            };
            let segments: Vec<String> = path.split('.').map(str::to_string).collect();
            if segments.iter().all(|segment| !segment.is_empty()) {
                target.push(segments);
            }
        }
        (!include.is_empty() || !exclude.is_empty()).then_some(FilterPath { include, exclude })
    }

    /// The filtered response.
    pub fn apply(&self, value: Value) -> Value {
        let included = if self.include.is_empty() {
            Some(value)
        } else {
            let paths: Vec<&[String]> = self.include.iter().map(Vec::as_slice).collect();
            include(value, &paths)
        };
        let mut result = included.unwrap_or_else(|| Value::Object(Map::new()));
        for path in &self.exclude {
            exclude(&mut result, path);
        }
        result
    }
}

/// Whether a glob pattern with `*` wildcards matches `key`.
fn glob_matches(pattern: &str, key: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return true;
    };
    let Some(mut rest) = key.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(position) => rest = &rest[position + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The paths that continue below `key`; `true` in the second slot when some
/// path ends at `key` (the whole value is kept).
fn descend<'a>(paths: &[&'a [String]], key: &str) -> (Vec<&'a [String]>, bool) {
    let mut below = Vec::new();
    let mut whole = false;
    for path in paths {
        let Some((head, tail)) = path.split_first() else {
            continue;
        };
        if head == "**" {
            // Zero levels: the rest of the path applies to this key...
            let (deeper, ends_here) = descend(&[tail], key);
            below.extend(deeper);
            whole |= ends_here || tail.is_empty();
            // ...or `**` swallows this key too.
            below.push(path);
        } else if glob_matches(head, key) {
            if tail.is_empty() {
                whole = true;
            } else {
                below.push(tail);
            }
        }
    }
    (below, whole)
}

fn include(value: Value, paths: &[&[String]]) -> Option<Value> {
    match value {
        Value::Object(object) => {
            let mut kept = Map::new();
            for (key, child) in object {
                let (below, whole) = descend(paths, &key);
                if whole {
                    kept.insert(key, child);
                } else if !below.is_empty()
                    && let Some(child) = include(child, &below)
                {
                    kept.insert(key, child);
                }
            }
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(elements) => {
            let kept: Vec<Value> = elements
                .into_iter()
                .filter_map(|element| include(element, paths))
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        _ => None,
    }
}

fn exclude(value: &mut Value, path: &[String]) {
    let Some((head, tail)) = path.split_first() else {
        return;
    };
    match value {
        Value::Object(object) => {
            if tail.is_empty() {
                object.retain(|key, _| !glob_matches(head, key));
                return;
            }
            for (key, child) in object.iter_mut() {
                if head == "**" {
                    exclude(child, path);
                    exclude(child, tail);
                } else if glob_matches(head, key) {
                    exclude(child, tail);
                }
            }
        }
        Value::Array(elements) => {
            for element in elements {
                exclude(element, path);
            }
        }
        _ => {}
    }
}

/// Takes `filter_path` off a query string: the query to forward (without
/// it) and the filter to apply to the answer.
pub fn split_filter_path(query: Option<&str>) -> (String, Option<FilterPath>) {
    let Some(query) = query else {
        return (String::new(), None);
    };
    let mut kept = Vec::new();
    let mut filter = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("filter_path", value)) => {
                filter = FilterPath::parse(&decode(&value.replace('+', " ")));
            }
            _ => kept.push(pair),
        }
    }
    (kept.join("&"), filter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filter_path_is_taken_off_the_query() {
        let (query, filter) =
            split_filter_path(Some("refresh=true&filter_path=items.*.error,took&pretty"));
        assert_eq!(query, "refresh=true&pretty");
        assert!(filter.is_some());
        assert_eq!(split_filter_path(None).0, "");
    }

    fn filtered(filter: &str, value: Value) -> Value {
        FilterPath::parse(filter).expect("a filter").apply(value)
    }

    fn bulk_response() -> Value {
        json!({
            "took": 3,
            "errors": true,
            "items": [
                {"index": {"_index": "a", "_id": "1", "status": 201, "result": "created"}},
                {"create": {"_index": "a", "_id": "2", "status": 409,
                            "error": {"type": "version_conflict_engine_exception", "reason": "x"}}}
            ]
        })
    }

    #[test]
    fn only_errors_of_bulk_items() {
        assert_eq!(
            filtered("items.*.error", bulk_response()),
            json!({"items": [{"create": {"error": {"type": "version_conflict_engine_exception", "reason": "x"}}}]})
        );
    }

    #[test]
    fn several_paths_and_wildcards_in_keys() {
        assert_eq!(
            filtered("took,items.*._i*", bulk_response()),
            json!({"took": 3, "items": [
                {"index": {"_index": "a", "_id": "1"}},
                {"create": {"_index": "a", "_id": "2"}}
            ]})
        );
    }

    #[test]
    fn double_star_matches_any_depth() {
        assert_eq!(
            filtered("**.status", bulk_response()),
            json!({"items": [{"index": {"status": 201}}, {"create": {"status": 409}}]})
        );
    }

    #[test]
    fn exclusions_apply_after_inclusions() {
        assert_eq!(
            filtered("-items", bulk_response()),
            json!({"took": 3, "errors": true})
        );
        assert_eq!(
            filtered("items,-items.*.error", bulk_response()),
            json!({"items": [
                {"index": {"_index": "a", "_id": "1", "status": 201, "result": "created"}},
                {"create": {"_index": "a", "_id": "2", "status": 409}}
            ]})
        );
    }

    #[test]
    fn nothing_matched_is_an_empty_object() {
        assert_eq!(filtered("nothing.here", bulk_response()), json!({}));
        assert_eq!(FilterPath::parse(" , "), None);
    }

    #[test]
    fn globs() {
        assert!(glob_matches("*", "index"));
        assert!(glob_matches("in*x", "index"));
        assert!(!glob_matches("in*x", "inde"));
        assert!(glob_matches("*dex", "index"));
        assert!(glob_matches("i*d*x", "index"));
        assert!(!glob_matches("index", "indexes"));
    }
}
