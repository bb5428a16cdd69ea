//! Fuzzing of the bulk parser and of the stamping of sources (proptest
//! driven): bodies assembled from valid and broken lines of every kind the
//! cluster can receive. Properties: no panic; every accepted body keeps its
//! structure once stamped; a stamped source is a JSON object with the stamp;
//! without stamps the segments are the body, byte for byte.
//!
//! `PROPTEST_CASES` sets the number of bodies (`scripts/fuzz` runs a
//! million); cases found once are kept in `fuzz_bulk.proptest-regressions`
//! and in `found_cases` below.

use std::sync::LazyLock;

use neardup::bulk::{self, ActionKind};
use neardup::engine::Analyzer;
use neardup::fingerprint::{FingerprintConfig, Fingerprinter};
use neardup::units::format_fingerprint;
use proptest::prelude::*;
use serde_json::Value;

/// Bodies the parser accepted (the rest get the cluster's error).
static ACCEPTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

static ANALYZER: LazyLock<Analyzer> = LazyLock::new(|| {
    Analyzer::new(
        Fingerprinter::new(FingerprintConfig::default()).expect("fingerprinter"),
        &neardup::confirm::ConfirmationConfig::default(),
    )
});

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("。，！？……".to_string()),
        Just("😀🎉👍🏽".to_string()),
        Just("a\u{200b}b\u{200d}c\u{feff}d".to_string()),
        Just("港口新航線週一開通，每週兩班".to_string()),
        Just("Mixed 中文 and English 123 ١٢٣ русский".to_string()),
        "[\\p{Han}，。]{0,40}",
        "\\PC{0,60}",
        ".{0,20}",
    ]
}

fn escaped(text: &str) -> String {
    Value::from(text).to_string()
}

fn deep(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

fn action_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (prop_oneof![Just("index"), Just("create"), Just("update"), Just("delete")], 0..5u8)
            .prop_map(|(action, id)| format!("{{\"{action}\":{{\"_index\":\"news\",\"_id\":\"{id}\"}}}}")),
        1 => Just("{\"index\":{}}".to_string()),
        1 => Just("{\"index\":{\"_id\":7}".to_string()),
        1 => Just("{\"index\":{},\"extra\":1}".to_string()),
        1 => Just("{\"frob\":{}}".to_string()),
        1 => Just("{\"index\":[]}".to_string()),
        1 => Just("[1,2]".to_string()),
        1 => Just("{\"index\":".to_string()),
        1 => Just("{}".to_string()),
        1 => Just("null".to_string()),
    ]
}

fn source_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => (text(), text()).prop_map(|(title, content)| {
            format!("{{\"title\":{},\"content\":{}}}", escaped(&title), escaped(&content)).into_bytes()
        }),
        1 => Just(b"{}".to_vec()),
        1 => Just(b"\"a string\"".to_vec()),
        1 => Just(b"[1,2,3]".to_vec()),
        1 => Just(b"null".to_vec()),
        1 => Just(b"{\"content\":".to_vec()),
        1 => Just(deep(300).into_bytes()),
        1 => Just(format!("{{\"content\":{}}}", deep(120)).into_bytes()),
        1 => Just(b"{\"content\":\"x\",\"content\":\"y\"}".to_vec()),
        1 => Just(b"{\"n\":18446744073709551616123,\"f\":1e400,\"content\":\"\xe6\xb5\x8b\"}".to_vec()),
        1 => Just(b"{\"cluster_root\":\"old\",\"content\":\"already stamped\"}".to_vec()),
        1 => Just(b"{\"content\":\"\xff\xfe invalid utf-8\"}".to_vec()),
        1 => Just(format!("{{\"content\":{}}}", escaped(&"长文".repeat(20_000))).into_bytes()),
        1 => Just(b"{\"doc\":{\"content\":\"x\"},\"upsert\":{\"content\":\"y\"}}".to_vec()),
    ]
}

/// One line, or a well-formed pair (an action and its source), which most
/// real bodies are made of.
fn line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => (prop_oneof![Just("index"), Just("create")], 0..5u8, source_line()).prop_map(|(action, id, source)| {
            let mut pair = format!("{{\"{action}\":{{\"_index\":\"news\",\"_id\":\"{id}\"}}}}\n").into_bytes();
            pair.extend_from_slice(&source);
            pair
        }),
        2 => action_line().prop_map(String::into_bytes),
        2 => source_line(),
        1 => Just(Vec::new()),
        1 => Just(b"   \t".to_vec()),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((line(), any::<bool>()), 0..12),
        prop::bool::weighted(0.85),
    )
        .prop_map(|(lines, final_newline)| {
            let mut body = Vec::new();
            let count = lines.len();
            for (position, (line, crlf)) in lines.into_iter().enumerate() {
                body.extend_from_slice(&line);
                if position + 1 < count || final_newline {
                    body.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
                }
            }
            body
        })
}

fn check(body: &[u8]) -> Result<(), TestCaseError> {
    let Ok(items) = bulk::parse_bulk(body) else {
        return Ok(());
    };
    ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut previous_end = 0;
    for item in &items {
        prop_assert!(item.action.start >= previous_end && item.action.end <= body.len());
        prop_assert_eq!(item.source.is_some(), item.kind.has_source());
        if let Some(source) = &item.source {
            prop_assert!(source.start > item.action.end && source.end <= body.len());
            previous_end = source.end;
        } else {
            previous_end = item.action.end;
        }
    }
    let unchanged: Vec<Option<&[u8]>> = items.iter().map(|_| None).collect();
    prop_assert_eq!(
        bulk::segments(body, &items, &unchanged).concat(),
        body.to_vec()
    );

    // Stamp every source the sidecar would stamp.
    let mut stamped: Vec<Option<Vec<u8>>> = Vec::with_capacity(items.len());
    for item in &items {
        let replacement = match (item.kind, &item.source) {
            (ActionKind::Index | ActionKind::Create, Some(source)) => {
                let original = &body[source.clone()];
                bulk::parse_source(original).and_then(|object| {
                    let document = Value::Object(object);
                    let analysis = ANALYZER.analyze_document(&document)?;
                    let root = format_fingerprint(analysis.fingerprint());
                    let Value::Object(object) = document else {
                        return None;
                    };
                    let out = bulk::insert_fields(
                        original,
                        object,
                        &[("cluster_root", &root), ("simhash", &root)],
                    );
                    Some((out, root))
                })
            }
            _ => None,
        };
        if let Some((out, root)) = &replacement {
            let parsed: Value = serde_json::from_slice(out).map_err(|error| {
                TestCaseError::fail(format!("stamped source is not JSON: {error}"))
            })?;
            prop_assert_eq!(
                parsed.get("cluster_root").and_then(Value::as_str),
                Some(root.as_str())
            );
        }
        stamped.push(replacement.map(|(out, _)| out));
    }
    let replacements: Vec<Option<&[u8]>> = stamped.iter().map(|bytes| bytes.as_deref()).collect();
    let output = bulk::segments(body, &items, &replacements).concat();
    let reparsed = bulk::parse_bulk(&output)
        .map_err(|error| TestCaseError::fail(format!("stamped body rejected: {error}")))?;
    let kinds = |items: &[bulk::BulkItem]| items.iter().map(|item| item.kind).collect::<Vec<_>>();
    prop_assert_eq!(kinds(&reparsed), kinds(&items));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(2_000),
        failure_persistence: Some(Box::new(proptest::test_runner::FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn bulk_bodies_never_break_the_parser_or_the_stamping(body in body()) {
        check(&body)?;
    }
}

/// Runs after the property above in the same process when filtered by
/// `scripts/fuzz`; prints how many bodies were accepted.
#[test]
fn zz_report_accepted_bodies() {
    eprintln!(
        "fuzz_bulk: {} bodies accepted by the parser so far in this process",
        ACCEPTED.load(std::sync::atomic::Ordering::Relaxed)
    );
}

/// Bodies that once needed a fix, kept as regression tests.
#[test]
fn found_cases() {
    for body in [
        &b"{\"index\":{}}\n{\"content\":\"\xff\"}\n"[..],
        b"{\"index\":{\"_id\":7}\n{\"content\":\"x\"}\n",
        b"{\"index\":{},\"x\":1}\r\n{\"content\":\"y\"}\r\n",
        b"\n\n{\"delete\":{\"_id\":\"1\"}}\n{\"index\":{}}\n",
        b"{\"index\":{}}\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
        b"{\"create\":{}}\n{\"cluster_root\":\"old\",\"content\":\"already stamped\"}",
    ] {
        check(body).expect("regression case");
    }
}
