//! The sidecar's own endpoints: health, stats, metrics, the fingerprint of
//! a posted text, a class by its root, the similar documents of a document,
//! and the index template.
//!
//! Design: read-only views of the ledger, taken under its lock for as short
//! a time as a copy takes; `similar` asks the cluster through
//! [`crate::upstream`] (a `get` for the document's stamp, then a `term`
//! search), passing the client's headers so its credentials apply, and
//! hands a refusal back as the cluster gave it. `/metrics` hands its gauges
//! to [`super::metrics`], which writes every series.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::errors::{SidecarError, json_response, response_from};
use super::metrics::{BackfillGauges, Gauges, resident_bytes};
use super::sidecar::Sidecar;
use crate::backfill::JobState;
use crate::confirm::measures::jaccard;
use crate::fingerprint::sketch::{SKETCH_SIZE, estimate_jaccard};
use crate::persist::StoreHealth;
use crate::units::{Millis, format_fingerprint, hamming_distance, parse_fingerprint};
use crate::upstream::{self, Payload, StoredDocument, encode_component};

/// Largest body accepted by `/_neardup/fingerprint`.
const MAX_FINGERPRINT_BODY: usize = 16 << 20;

/// Members listed by `/_neardup/classes/{root}` unless `size` says otherwise.
const DEFAULT_MEMBERS_LISTED: usize = 100;

/// Index patterns of the shipped index template.
pub const DEFAULT_TEMPLATE_PATTERNS: [&str; 2] = ["articles*", "news*"];

/// The component template (`mappings/component-template.json`): the stamped
/// fields as keywords. Fingerprints are unsigned 64-bit numbers, which `long`
/// cannot hold; as 16-digit hex keywords they collapse, aggregate and match
/// exactly. A component, so it composes with the user's own index template
/// (only one index template applies to an index, the highest priority one).
pub fn component_template(root_field: &str, simhash_field: &str) -> Value {
    let keyword = json!({ "type": "keyword", "ignore_above": 32 });
    let mut properties = serde_json::Map::new();
    properties.insert(root_field.to_string(), keyword.clone());
    properties.insert(simhash_field.to_string(), keyword);
    json!({
        "template": { "mappings": { "properties": properties } },
        "_meta": {
            "description": "neardup stamps: cluster_root (class id) and simhash (own fingerprint), 16 lowercase hex digits each. Keyword, never numeric: an unsigned 64-bit value does not fit a signed long. Add this component to the composed_of list of your own index template.",
            "managed_by": "neardup"
        }
    })
}

/// The index template (`mappings/index-template.json`) that applies the
/// component to `patterns` when no higher-priority template claims an index.
pub fn index_template(patterns: &[String]) -> Value {
    let patterns: Vec<String> = if patterns.is_empty() {
        DEFAULT_TEMPLATE_PATTERNS
            .iter()
            .map(|pattern| (*pattern).to_string())
            .collect()
    } else {
        patterns.to_vec()
    };
    json!({
        "index_patterns": patterns,
        "priority": 10,
        "composed_of": [COMPONENT_TEMPLATE],
        "_meta": {
            "description": "neardup: applies the neardup-stamps component to indices that no higher-priority template claims. Edit index_patterns to match your article indices.",
            "managed_by": "neardup"
        }
    })
}

/// Name of the component template.
pub const COMPONENT_TEMPLATE: &str = "neardup-stamps";

pub async fn health(sidecar: &Sidecar) -> Response {
    let probe = sidecar
        .upstream
        .send(
            Method::GET,
            "/",
            HeaderMap::new(),
            reqwest::Body::from(Vec::new()),
        )
        .await;
    let (upstream_status, reachable) = match &probe {
        Ok(answer) => (Some(answer.status().as_u16()), true),
        Err(_) => (None, false),
    };
    let tls_failure = match &probe {
        Err(crate::upstream::UpstreamError::Certificate { detail, .. }) => Some(detail.clone()),
        _ => None,
    };
    // Readiness: not ready while writes are refused, for whatever reason.
    let state = sidecar.ledger.health();
    let passing = sidecar.on_state_failure.forwards_unstamped();
    let (state_status, state_reason) = match &state {
        StoreHealth::Writable => ("writable", None),
        StoreHealth::OutOfSpace { reason, since } => (
            "out_of_space",
            Some(format!(
                "state directory out of space for {}s ({reason}); retrying",
                since.as_secs()
            )),
        ),
        StoreHealth::Failed { reason } => (
            "failed",
            Some(format!("state cannot be written: {reason}; restart needed")),
        ),
    };
    let state_ok = state == StoreHealth::Writable;
    let mut reasons = Vec::new();
    match &tls_failure {
        Some(detail) => reasons.push(format!(
            "TLS with upstream {} failed: {detail}",
            sidecar.upstream.base()
        )),
        None if !reachable => {
            reasons.push(format!("upstream {} unreachable", sidecar.upstream.base()));
        }
        None => {}
    }
    if let Some(reason) = &state_reason
        && !passing
    {
        reasons.push(reason.clone());
    }
    let status_word = if !reasons.is_empty() {
        if tls_failure.is_some() {
            "upstream_tls_failure"
        } else if reachable {
            "state_unavailable"
        } else {
            "upstream_unreachable"
        }
    } else if state_ok {
        "ok"
    } else {
        "degraded"
    };
    let body = json!({
        "status": status_word,
        "ready": reasons.is_empty(),
        "reasons": reasons,
        "upstream": {
            "url": sidecar.upstream.base(),
            "reachable": reachable,
            "status": upstream_status,
        },
        "state": {
            "status": state_status,
            "reason": state_reason,
            "on_state_failure": if passing { "pass" } else { "reject" },
        },
        "replica": sidecar.replica.as_ref().map(|replica| replica.to_json()),
        "uptime_seconds": sidecar.started.elapsed().as_secs(),
    });
    let status = if reasons.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    json_response(status, &body)
}

/// Liveness: the process runs and answers, whatever its dependencies do.
pub fn live(sidecar: &Sidecar) -> Response {
    json_response(
        StatusCode::OK,
        &json!({
            "status": "alive",
            "uptime_seconds": sidecar.started.elapsed().as_secs(),
        }),
    )
}

fn gauges(sidecar: &Sidecar) -> (Gauges, crate::engine::EngineStats, u64) {
    let ledger = sidecar.ledger.read();
    let forest = ledger.engine().forest().stats();
    let engine = ledger.engine().stats();
    let gauges = Gauges {
        nodes: forest.nodes,
        roots: forest.roots,
        documents: forest.documents,
        heap_bytes: forest.approx_heap_bytes
            + engine.approx_heap_bytes
            + ledger.approx_heap_bytes(),
        resident_bytes: None,
        in_flight_bytes: sidecar.admission.in_flight_bytes(),
        ledger: ledger.stats(),
        ..Gauges::default()
    };
    (gauges, engine, forest.expired_nodes)
}

pub fn stats(sidecar: &Sidecar) -> Response {
    let (gauges, engine, expired) = gauges(sidecar);
    let ledger = gauges.ledger;
    let body = json!({
        "forest": {
            "nodes": gauges.nodes,
            "roots": gauges.roots,
            "documents": gauges.documents,
            "expired_nodes": expired,
        },
        "engine": {
            "exact_hits": engine.exact_hits,
            "confirmations": engine.confirmations,
            "confirmations_rejected": engine.confirmations_rejected,
            // Sentences in the table of boilerplate learned from the stream.
            "common_sentence_entries": engine.common_sentences,
        },
        "cluster_outcomes": {
            "stored": ledger.stored,
            "not_stored": ledger.not_stored,
            "restored": ledger.restored,
            "replaced": ledger.replaced,
            "deleted": ledger.deleted,
            "tracked_keys": ledger.keys,
            "awaiting_answer": ledger.awaiting_answer,
        },
        "memory": {
            "approx_heap_bytes": gauges.heap_bytes,
            "resident_bytes": resident_bytes(),
            "in_flight_bytes": gauges.in_flight_bytes,
        },
        "backfill": sidecar.backfill.get().map(|backfill| backfill.progress().to_json()),
        "unstamped_forwarded": sidecar.metrics.unstamped_forwarded.load(std::sync::atomic::Ordering::Relaxed),
        // Sent with a class of their own: no text in any fingerprinted field.
        "not_fingerprinted": sidecar.metrics.not_fingerprinted_documents.load(std::sync::atomic::Ordering::Relaxed),
        "stamp_mapping": {
            "not_keyword": sidecar.stamp_mapping.not_keyword(),
            "patterns_not_covered": sidecar.stamp_mapping.patterns_not_covered(),
        },
        "replica": sidecar.replica.as_ref().map(|replica| replica.to_json()),
        "uptime_seconds": sidecar.started.elapsed().as_secs(),
    });
    json_response(StatusCode::OK, &body)
}

pub fn metrics(sidecar: &Sidecar) -> Response {
    let (mut gauges, _, _) = gauges(sidecar);
    gauges.resident_bytes = resident_bytes();
    gauges.state_writable = sidecar.ledger.health() == StoreHealth::Writable;
    gauges.replica = sidecar
        .replica
        .as_deref()
        .map(super::replica_endpoints::gauges_of);
    gauges.backfill = sidecar.backfill.get().map(|backfill| {
        let progress = backfill.progress();
        BackfillGauges {
            counts: progress.counts,
            running: progress.state == JobState::Running,
            docs_per_second: progress.rate().unwrap_or(0.0),
        }
    });
    let text = sidecar.metrics.render(&gauges);
    let mut response = Response::new(Body::from(text));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// `POST /_neardup/fingerprint`: `{"text": "…"}`, a document
/// (`{"document": {…}, "index": "name"}`), or two of either (`"texts"`,
/// `"documents"`) to see how they compare (`"lang": "zh"`: the decision's
/// requirements in Chinese).
pub async fn fingerprint(sidecar: Arc<Sidecar>, request: Request) -> Response {
    let mut stream = request.into_body().into_data_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let Ok(chunk) = chunk else {
            return bad_request("cannot read the request body");
        };
        if body.len() + chunk.len() > MAX_FINGERPRINT_BODY {
            return SidecarError::TooLarge {
                limit: MAX_FINGERPRINT_BODY,
            }
            .into_response();
        }
        body.extend_from_slice(&chunk);
    }
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(&body) else {
        return bad_request(
            "expected a JSON object with `text`, `document`, `texts` or `documents`",
        );
    };
    let index = request
        .get("index")
        .and_then(Value::as_str)
        .map(str::to_string);
    let documents: Vec<Value> = if let Some(text) = request.get("text") {
        vec![text.clone()]
    } else if let Some(document) = request.get("document") {
        vec![document.clone()]
    } else if let Some(Value::Array(many)) =
        request.get("texts").or_else(|| request.get("documents"))
    {
        many.clone()
    } else {
        return bad_request("expected `text`, `document`, `texts` or `documents`");
    };
    if documents.is_empty() || documents.len() > 2 {
        return bad_request("give one or two texts or documents");
    }
    // The Explorer's compare box asks for its page's language.
    let in_chinese = request.get("lang").and_then(Value::as_str) == Some("zh");
    let analyzer = sidecar.analyzers.for_index(index.as_deref()).clone();
    let (confirmation, max_distance) = {
        let ledger = sidecar.ledger.read();
        let engine = ledger.engine();
        (
            engine.confirmation().clone(),
            engine.forest().max_distance(),
        )
    };
    let worker = tokio::task::spawn_blocking(move || {
        let described = describe_all(&analyzer, &documents)?;
        // Two texts: the decision the engine would make, and its figures.
        let mut decision = match described.as_slice() {
            [first, second] => crate::explain::explain(
                analyzer.fingerprinter(),
                &confirmation,
                max_distance,
                &first.prepared,
                &second.prepared,
            )
            .ok(),
            _ => None,
        };
        if in_chinese && let Some(decision) = &mut decision {
            decision.requirements_in_chinese();
        }
        Ok::<_, String>((described, decision))
    })
    .await;
    let Ok(described) = worker else {
        return SidecarError::Internal("fingerprinting failed".into()).into_response();
    };
    let (described, decision) = match described {
        Ok(described) => described,
        Err(reason) => return bad_request(&reason),
    };
    let ledger = sidecar.ledger.read();
    let forest = ledger.engine().forest();
    let mut outputs: Vec<Value> = Vec::new();
    for description in &described {
        let mut output = description.json.clone();
        if let Some(node) = forest.node(description.simhash) {
            output["node"] = json!({
                "cluster_root": format_fingerprint(node.root),
                "documents": node.documents,
            });
        }
        outputs.push(output);
    }
    drop(ledger);
    let body = match described.as_slice() {
        [_] => outputs.remove(0),
        [left, right] => json!({
            "fingerprints": outputs,
            "comparison": {
                "hamming_distance": hamming_distance(left.simhash, right.simhash),
                "within_k": hamming_distance(left.simhash, right.simhash) <= sidecar.ledger.read().engine().forest().max_distance(),
                "short_text_jaccard": jaccard(&left.shingles, &right.shingles),
                "long_text_jaccard_estimate": if left.sketch.is_empty() || right.sketch.is_empty() {
                    Value::Null
                } else {
                    json!(estimate_jaccard(&left.sketch, &right.sketch, SKETCH_SIZE))
                },
                "identical_text": left.exact_hash == right.exact_hash,
                "decision": decision,
            }
        }),
        _ => Value::Null,
    };
    json_response(StatusCode::OK, &body)
}

struct Description {
    prepared: crate::fingerprint::PreparedText,
    simhash: u64,
    exact_hash: u64,
    shingles: Vec<u32>,
    sketch: Vec<u32>,
    json: Value,
}

/// The field a bare text stands for: the first fingerprinted field that is
/// not the headline (`content` by default).
fn body_field(fingerprinter: &crate::fingerprint::Fingerprinter) -> String {
    let headline = fingerprinter.config().headline_field.as_deref();
    let paths: Vec<&str> = fingerprinter.field_paths().collect();
    paths
        .iter()
        .find(|path| Some(**path) != headline)
        .or(paths.first())
        .map_or_else(|| "content".to_string(), |path| (*path).to_string())
}

fn describe_all(
    analyzer: &crate::engine::Analyzer,
    documents: &[Value],
) -> Result<Vec<Description>, String> {
    let fingerprinter = analyzer.fingerprinter();
    documents
        .iter()
        .map(|document| {
            // A text is read as the body of a document, so that texts and
            // documents go through the engine's one path (fields, headline,
            // body figures and sketch alike).
            let as_document;
            let document = match document {
                Value::String(text) => {
                    as_document = json!({ body_field(fingerprinter): text });
                    &as_document
                }
                Value::Object(_) => document,
                _ => return Err("a text is a string, a document an object".to_string()),
            };
            let prepared = fingerprinter
                .prepare_document(document)
                .ok_or_else(|| "the document has no text in the configured fields".to_string())?;
            let simhash = fingerprinter.simhash(&prepared);
            let short = fingerprinter.is_short(&prepared);
            let shingles = fingerprinter.shingle_set(&prepared);
            let sketch = if short {
                Vec::new()
            } else {
                fingerprinter.body_sketch(&prepared)
            };
            let normalized: String = prepared.normalized.chars().take(2_000).collect();
            let json = json!({
                "simhash": format_fingerprint(simhash),
                "exact_hash": format_fingerprint(prepared.exact_hash),
                "chars": prepared.char_count,
                "short": short,
                "headline": fingerprinter.headline(&prepared),
                "numbers": fingerprinter.body_number_set(&prepared).len(),
                "normalized": normalized,
            });
            Ok(Description {
                simhash,
                exact_hash: prepared.exact_hash,
                shingles,
                sketch,
                json,
                prepared,
            })
        })
        .collect()
}

/// What `/_neardup/classes` and the Explorer say of a class of its own.
pub fn not_fingerprinted_class(root: &str) -> String {
    format!(
        "[{root}] is the class of one document that had no text in the fingerprinted fields: it was not fingerprinted, is grouped with no other document, and no forest holds it"
    )
}

/// `GET /_neardup/classes/{root}?size=N`.
pub fn class(sidecar: &Sidecar, root: &str, query: Option<&str>) -> Response {
    if crate::bulk::stamping::is_class_of_its_own(root) {
        return SidecarError::NotFound(not_fingerprinted_class(root)).into_response();
    }
    let Some(root) = parse_fingerprint(root) else {
        return bad_request("a class id is 16 hexadecimal digits");
    };
    let limit = query_value(query, "size")
        .and_then(|size| size.parse::<usize>().ok())
        .unwrap_or(DEFAULT_MEMBERS_LISTED);
    let ledger = sidecar.ledger.read();
    let forest = ledger.engine().forest();
    let Some(class) = forest.class(root) else {
        return SidecarError::NotFound(format!(
            "no class with root [{}]",
            format_fingerprint(root)
        ))
        .into_response();
    };
    let Some(root_node) = forest.node(root) else {
        return SidecarError::NotFound("class root vanished".into()).into_response();
    };
    let members: Vec<Value> = class
        .members
        .iter()
        .take(limit)
        .filter_map(|&member| forest.node(member))
        .map(|node| {
            json!({
                "simhash": format_fingerprint(node.fingerprint),
                "documents": node.documents,
                "born": time_text(node.born),
                "is_root": node.is_root,
            })
        })
        .collect();
    let body = json!({
        "cluster_root": format_fingerprint(root),
        "nodes": class.nodes,
        "documents": class.documents,
        "born": time_text(root_node.born),
        "touched": time_text(root_node.touched),
        "members": members,
        "members_listed": members.len(),
    });
    drop(ledger);
    json_response(StatusCode::OK, &body)
}

/// `GET /{index}/_neardup/similar/{id}?size=N`: the other documents of the
/// document's class, newest search semantics left to the cluster.
pub async fn similar(sidecar: &Sidecar, request: Request, index: &str, id: &str) -> Response {
    let (parts, _) = request.into_parts();
    let headers = upstream::request_headers(&parts.headers, true);
    let size = query_value(parts.uri.query(), "size")
        .and_then(|size| size.parse::<u32>().ok())
        .unwrap_or(10);
    let get_path = format!(
        "/{}/_doc/{}?_source_includes={}",
        encode_component(index),
        encode_component(id),
        encode_component(&sidecar.root_field)
    );
    let answer = match sidecar
        .upstream
        .call(Method::GET, &get_path, &headers, Payload::Empty)
        .await
    {
        Ok(answer) => answer,
        Err(error) => return SidecarError::from(error).into_response(),
    };
    if !answer.status.is_success() {
        return response_from(answer.status, json_headers(), Body::from(answer.body));
    }
    let document: StoredDocument = serde_json::from_slice(&answer.body).unwrap_or_default();
    let Some(root) = document
        .source
        .get(&sidecar.root_field)
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return SidecarError::NotFound(format!(
            "document [{id}] in [{index}] has no [{}] stamp",
            sidecar.root_field
        ))
        .into_response();
    };
    let concrete_index = document.index.unwrap_or_else(|| index.to_string());
    let query = json!({
        "size": size,
        "track_total_hits": true,
        "query": { "bool": {
            "filter": [{ "term": { sidecar.root_field.as_str(): root } }],
            "must_not": [{ "ids": { "values": [id] } }]
        }}
    });
    let answer = match sidecar.upstream.search(Some(index), &headers, &query).await {
        Ok(answer) => answer,
        Err(error) => return SidecarError::from(error).into_response(),
    };
    let status = answer.status;
    let Some(mut result) = answer.json() else {
        return response_from(status, json_headers(), Body::from(answer.body));
    };
    if status.is_success()
        && let Value::Object(object) = &mut result
    {
        object.insert("_index".into(), Value::from(concrete_index));
        object.insert("_id".into(), Value::from(id));
        object.insert(sidecar.root_field.clone(), Value::from(root));
    }
    json_response(status, &result)
}

fn json_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=UTF-8"),
    );
    headers
}

fn bad_request(reason: &str) -> Response {
    SidecarError::IllegalArgument(reason.to_string()).into_response()
}

fn query_value<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

fn time_text(millis: Millis) -> Value {
    chrono::DateTime::from_timestamp_millis(millis).map_or(Value::from(millis), |time| {
        Value::from(time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_the_shipped_files() {
        let read = |name: &str| -> Value {
            let path = format!("{}/mappings/{name}", env!("CARGO_MANIFEST_DIR"));
            serde_json::from_str(&std::fs::read_to_string(path).expect("shipped")).expect("JSON")
        };
        assert_eq!(
            component_template("cluster_root", "simhash"),
            read("component-template.json")
        );
        assert_eq!(index_template(&[]), read("index-template.json"));
        let custom = index_template(&["blog-*".to_string()]);
        assert_eq!(custom["index_patterns"], json!(["blog-*"]));
    }
}
