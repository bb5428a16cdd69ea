//! Reading the fingerprinted fields out of a JSON document.
//!
//! Paths follow the cluster's own rules for field names: `article.body`
//! reaches `{"article": {"body": …}}` and also a literal `"article.body"` key
//! (Elasticsearch treats both the same); arrays are walked element by element
//! (an array of objects contributes each object's value). Strings are taken as
//! they are; numbers and booleans as their JSON text; null and missing fields
//! contribute nothing.

use serde_json::Value;

use super::FIELD_SEPARATOR;

/// Text of the configured `fields` of `document`, joined by
/// [`FIELD_SEPARATOR`]; `None` when none of them has any text.
pub fn extract_fields_text(document: &Value, fields: &[String]) -> Option<String> {
    let mut text = String::new();
    let mut found_any = false;
    for path in fields {
        let segments: Vec<&str> = path.split('.').collect();
        let mut values = Vec::new();
        collect_values(document, &segments, &mut values);
        for value in values {
            if value.trim().is_empty() {
                continue;
            }
            if found_any {
                text.push(FIELD_SEPARATOR);
            }
            text.push_str(&value);
            found_any = true;
        }
    }
    found_any.then_some(text)
}

fn collect_values(value: &Value, segments: &[&str], out: &mut Vec<String>) {
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
        Value::String(text) => out.push(text.clone()),
        Value::Number(number) => out.push(number.to_string()),
        Value::Bool(flag) => out.push(flag.to_string()),
        Value::Null | Value::Object(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
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
        let expected =
            ["nested", "literal", "p1", "p2", "a", "b"].join(&FIELD_SEPARATOR.to_string());
        assert_eq!(text, Some(expected));
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
