//! Reading the fingerprinted fields out of a JSON document.
//!
//! Paths follow the cluster's own rules for field names: `article.body`
//! reaches `{"article": {"body": …}}` and also a literal `"article.body"` key
//! (Elasticsearch treats both the same); arrays are walked element by element
//! (an array of objects contributes each object's value). Strings are taken as
//! they are; numbers and booleans as their JSON text; null and missing fields
//! contribute nothing.

use serde_json::Value;

/// Character that separates the text of two fields in the normalised text.
/// It ends a sentence and is never part of a word, so no feature spans two
/// fields.
pub const FIELD_SEPARATOR: char = '\u{1e}';

/// A fingerprinted field: its path and its boost (`title^0.5`, the syntax
/// of the cluster's own `multi_match`), which scales the weight of its
/// features. The default boost is 1.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSpec {
    pub path: String,
    pub boost: f64,
}

impl std::str::FromStr for FieldSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (path, boost) = match text.rsplit_once('^') {
            Some((path, boost)) => {
                let boost: f64 = boost
                    .parse()
                    .map_err(|_| format!("field `{text}`: the boost after `^` must be a number"))?;
                if !(boost.is_finite() && boost >= 0.0) {
                    return Err(format!(
                        "field `{text}`: the boost must be a finite number ≥ 0"
                    ));
                }
                (path, boost)
            }
            None => (text, 1.0),
        };
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(format!(
                "field path `{path}` is empty or has an empty segment"
            ));
        }
        Ok(FieldSpec {
            path: path.to_string(),
            boost,
        })
    }
}

/// Text of the configured `fields` of `document`: one part per field, in
/// order, joined by [`FIELD_SEPARATOR`] (a missing field is an empty part, so
/// part `i` is always field `i`; values of a multi-valued field are joined by
/// a line break). `None` when none of them has any text.
pub fn extract_fields_text(document: &Value, fields: &[FieldSpec]) -> Option<String> {
    extract_fields_text_noting_gaps(document, fields).0
}

/// [`extract_fields_text`], and the configured fields that held no text
/// (absent, empty or not text), in configuration order, found in the same
/// walk: a body under another name leaves only the headline to
/// fingerprint, which merges different stories.
pub fn extract_fields_text_noting_gaps<'spec>(
    document: &Value,
    fields: &'spec [FieldSpec],
) -> (Option<String>, Vec<&'spec str>) {
    let mut text = String::new();
    let mut found_any = false;
    let mut gaps = Vec::new();
    for (position, field) in fields.iter().enumerate() {
        if position > 0 {
            text.push(FIELD_SEPARATOR);
        }
        let mut first_value = true;
        for value in values_at(document, &field.path)
            .into_iter()
            .filter_map(value_text)
        {
            if value.trim().is_empty() {
                continue;
            }
            if !first_value {
                text.push('\n');
            }
            // The separator must not occur inside a field.
            text.extend(
                value
                    .chars()
                    .map(|c| if c == FIELD_SEPARATOR { ' ' } else { c }),
            );
            first_value = false;
            found_any = true;
        }
        if first_value {
            gaps.push(field.path.as_str());
        }
    }
    (found_any.then_some(text), gaps)
}

/// The configured fields of `document` that hold no text (see
/// [`extract_fields_text_noting_gaps`]).
pub fn fields_without_text<'spec>(document: &Value, fields: &'spec [FieldSpec]) -> Vec<&'spec str> {
    extract_fields_text_noting_gaps(document, fields).1
}

/// The leaf values at `path` in `document`, in document order, by the
/// cluster's rules for field names (see the module doc). Shared by text
/// extraction and by `stamp --time-field`, so both read paths alike.
pub fn values_at<'doc>(document: &'doc Value, path: &str) -> Vec<&'doc Value> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    collect_values(document, &segments, &mut out);
    out
}

fn collect_values<'doc>(value: &'doc Value, segments: &[&str], out: &mut Vec<&'doc Value>) {
    match value {
        Value::Array(items) => {
            for item in items {
                collect_values(item, segments, out);
            }
        }
        Value::Object(object) if !segments.is_empty() => {
            // `a.b.c` may be stored as {"a": {"b.c": …}} or {"a.b": {"c": …}}:
            // try every split of the remaining path, shortest key first.
            for key_len in 1..=segments.len() {
                let key = segments[..key_len].join(".");
                if let Some(child) = object.get(&key) {
                    collect_values(child, &segments[key_len..], out);
                }
            }
        }
        _ if !segments.is_empty() => {}
        leaf => out.push(leaf),
    }
}

/// The text of a leaf: strings as they are, numbers and booleans as their
/// JSON text; null and objects have none.
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null | Value::Object(_) | Value::Array(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(names: &[&str]) -> Vec<FieldSpec> {
        names
            .iter()
            .map(|name| name.parse().expect("valid field"))
            .collect()
    }

    #[test]
    fn title_and_content_are_joined_with_the_separator() {
        let document = json!({"title": "T", "content": "C", "other": "x"});
        let text = extract_fields_text(&document, &fields(&["title", "content"]));
        assert_eq!(text, Some(format!("T{FIELD_SEPARATOR}C")));
    }

    #[test]
    fn nested_dotted_and_array_paths() {
        let document = json!({
            "article": {"body": "nested", "tags": ["a", "b"]},
            "meta.note": "literal",
            "parts": [{"text": "p1"}, {"text": "p2"}, {"text": null}],
        });
        let text = extract_fields_text(
            &document,
            &fields(&["article.body", "meta.note", "parts.text", "article.tags"]),
        );
        // One part per field; values of a multi-valued field on their own lines.
        let expected = ["nested", "literal", "p1\np2", "a\nb"].join(&FIELD_SEPARATOR.to_string());
        assert_eq!(text, Some(expected));
    }

    #[test]
    fn fields_without_text_are_named_in_order() {
        let fields: Vec<FieldSpec> = ["title^0.5", "content", "meta.summary"]
            .iter()
            .map(|spec| spec.parse().expect("spec"))
            .collect();
        let document = json!({"title": "Weather update", "body": "Rain", "content": "  ", "meta": {"summary": 3}});
        assert_eq!(fields_without_text(&document, &fields), vec!["content"]);
        assert!(
            fields_without_text(
                &json!({"title": "t", "content": "c", "meta.summary": "s"}),
                &fields
            )
            .is_empty()
        );
    }

    #[test]
    fn values_at_returns_leaves_of_every_form_of_a_path() {
        let document =
            json!({"meta": {"at": 5}, "meta.at": "x", "list": [{"at": true}, {"at": null}]});
        assert_eq!(
            values_at(&document, "meta.at"),
            vec![&json!(5), &json!("x")]
        );
        assert_eq!(
            values_at(&document, "list.at"),
            vec![&json!(true), &json!(null)]
        );
        // A path that ends at an object yields it (it has no text).
        assert_eq!(values_at(&document, "meta"), vec![&json!({"at": 5})]);
        assert!(values_at(&document, "missing.path").is_empty());
    }

    #[test]
    fn boosts_parse_and_bad_specs_are_rejected() {
        assert_eq!(
            "title^0.5".parse::<FieldSpec>(),
            Ok(FieldSpec {
                path: "title".into(),
                boost: 0.5
            })
        );
        assert_eq!(
            "a.b".parse::<FieldSpec>(),
            Ok(FieldSpec {
                path: "a.b".into(),
                boost: 1.0
            })
        );
        for bad in ["", "a..b", "title^", "title^x", "title^-1", "^2"] {
            assert!(bad.parse::<FieldSpec>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn separator_inside_a_value_is_neutralised() {
        let document = json!({"title": "a\u{1e}b"});
        assert_eq!(
            extract_fields_text(&document, &fields(&["title"])),
            Some("a b".to_string())
        );
    }

    #[test]
    fn missing_empty_and_non_text_fields() {
        let document =
            json!({"title": "", "content": null, "count": 7, "flag": true, "object": {"x": 1}});
        assert_eq!(
            extract_fields_text(&document, &fields(&["title", "content", "object"])),
            None
        );
        assert_eq!(
            extract_fields_text(&document, &fields(&["count", "flag"])),
            Some(format!("7{FIELD_SEPARATOR}true"))
        );
        assert_eq!(
            extract_fields_text(&json!("just a string"), &fields(&["title"])),
            None
        );
    }
}
