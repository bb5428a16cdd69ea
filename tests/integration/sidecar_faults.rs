//! `neardup serve` against a small recording upstream of the tests' own, for
//! what the real server cannot show: the exact headers that arrive, bodies
//! split over the upstream limit, and answers a cluster gives under stress
//! (429 per item and per request, 5xx, unreadable answers, silence).

use crate::support;

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::{
    Recorded, RecordingUpstream, Sidecar, client, first_bulk, json_of, post_bulk, stats,
};

/// A cluster-like bulk answer: every item gets `status` (201 → created).
fn bulk_answer(request: &Recorded, status: u16) -> Vec<u8> {
    let text = String::from_utf8_lossy(&request.body).to_string();
    let mut items = Vec::new();
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let mut position = 0;
    while let Some(action) = lines.next() {
        // Read like OpenSearch: a missing last `}` is fine.
        let action: Value = serde_json::from_str(action)
            .or_else(|_| serde_json::from_str(&format!("{action}}}")))
            .unwrap_or(Value::Null);
        let Some((kind, metadata)) = action.as_object().and_then(|object| object.iter().next())
        else {
            break;
        };
        if kind != "delete" {
            lines.next();
        }
        position += 1;
        let id = metadata["_id"]
            .as_str()
            .map_or_else(|| format!("auto{position}"), str::to_string);
        let mut item = json!({"_index": metadata["_index"].as_str().unwrap_or("news"), "_id": id, "status": status});
        if (200..300).contains(&status) {
            item["result"] = json!("created");
        } else {
            item["error"] =
                json!({"type": "es_rejected_execution_exception", "reason": "queue full"});
        }
        items.push(json!({ kind.as_str(): item }));
    }
    json!({"took": 1, "errors": !(200..300).contains(&status), "items": items})
        .to_string()
        .into_bytes()
}

fn json_header() -> Vec<(String, String)> {
    vec![("content-type".into(), "application/json".into())]
}

fn articles(count: usize) -> String {
    let mut body = String::new();
    for number in 0..count {
        body.push_str(&json!({"index": {"_index": "news", "_id": number.to_string()}}).to_string());
        body.push('\n');
        body.push_str(
            &json!({
                "title": format!("第{number}号公告：某市图书馆延长开放时间"),
                "content": format!("为方便读者，市图书馆自下月起延长开放时间，周一至周五开放至晚上九点，周末开放至晚上八点。这是第{number}份通知。")
            })
            .to_string(),
        );
        body.push('\n');
    }
    body
}

/// Documents counted once no placement awaits an answer (a write whose
/// answer never came is read back first; at most 20 s).
async fn settled_documents(sidecar: &str) -> u64 {
    let started = std::time::Instant::now();
    loop {
        let stats = stats(sidecar).await;
        let awaiting = stats["cluster_outcomes"]["awaiting_answer"].as_u64();
        if awaiting == Some(0) || started.elapsed() > Duration::from_secs(20) {
            return stats["forest"]["documents"].as_u64().expect("documents");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn documents_counted(sidecar: &str) -> u64 {
    stats(sidecar).await["forest"]["documents"]
        .as_u64()
        .expect("documents")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn credentials_and_product_headers_pass_both_ways() {
    let upstream = RecordingUpstream::start(|request| {
        let mut headers = json_header();
        headers.push(("x-elastic-product".into(), "Elasticsearch".into()));
        let body = if request.path_and_query.contains("_bulk") {
            bulk_answer(request, 201)
        } else {
            b"{}".to_vec()
        };
        (StatusCode::OK, headers, body)
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let content_type = "application/vnd.elasticsearch+x-ndjson; compatible-with=8";
    let response = client()
        .post(format!("{}/_bulk?refresh=wait_for", sidecar.url))
        .header("authorization", "ApiKey c2VjcmV0")
        .header("content-type", content_type)
        .header("x-opaque-id", "trace-1")
        .body(articles(2))
        .send()
        .await
        .expect("bulk");
    assert_eq!(
        response
            .headers()
            .get("x-elastic-product")
            .map(|value| value.as_bytes()),
        Some(&b"Elasticsearch"[..])
    );
    let response = client()
        .get(format!("{}/news/_search?q=x", sidecar.url))
        .basic_auth("reader", Some("secret"))
        .send()
        .await
        .expect("search");
    assert!(response.headers().contains_key("x-elastic-product"));
    // The client's two requests (not the sidecar's own: its look at the
    // cluster at start, its check of the stamp mapping after the first
    // write).
    let recorded: Vec<_> = upstream
        .recorded()
        .into_iter()
        .filter(|request| {
            request.path_and_query != "/" && !request.path_and_query.contains("/_mapping/")
        })
        .collect();
    assert_eq!(recorded.len(), 2);
    let bulk = &recorded[0];
    assert_eq!(bulk.path_and_query, "/_bulk?refresh=wait_for");
    assert_eq!(bulk.headers["authorization"], "ApiKey c2VjcmV0");
    assert_eq!(bulk.headers["content-type"], content_type);
    assert_eq!(bulk.headers["x-opaque-id"], "trace-1");
    assert!(String::from_utf8_lossy(&bulk.body).contains("\"cluster_root\":\""));
    let search = &recorded[1];
    assert_eq!(search.path_and_query, "/news/_search?q=x");
    assert!(
        search.headers["authorization"]
            .to_str()
            .is_ok_and(|value| value.starts_with("Basic "))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stamped_body_over_the_upstream_limit_is_split_and_the_answers_joined() {
    let upstream = RecordingUpstream::start(|request| {
        (StatusCode::OK, json_header(), bulk_answer(request, 201))
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &["--upstream-max-content-length", "2kb"]);
    let body = articles(20);
    assert!(body.len() > 4096);
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let items = answer["items"].as_array().expect("items");
    let ids: Vec<&str> = items
        .iter()
        .filter_map(|item| item["index"]["_id"].as_str())
        .collect();
    let expected: Vec<String> = (0..20).map(|number| number.to_string()).collect();
    assert_eq!(ids, expected);
    assert_eq!(answer["errors"], false);
    let recorded = upstream.recorded();
    assert!(recorded.len() >= 3, "{} requests", recorded.len());
    assert!(recorded.iter().all(|request| request.body.len() <= 2048));
    assert_eq!(documents_counted(&sidecar.url).await, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn items_the_cluster_rejects_with_429_are_not_counted() {
    let upstream = RecordingUpstream::start(|request| {
        (StatusCode::OK, json_header(), bulk_answer(request, 429))
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), articles(5)).await;
    assert_eq!(status, 200);
    assert_eq!(answer["items"][0]["index"]["status"], 429);
    let stats = stats(&sidecar.url).await;
    assert_eq!(stats["forest"]["documents"], 0);
    assert_eq!(stats["forest"]["nodes"], 0);
    assert_eq!(stats["cluster_outcomes"]["not_stored"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn whole_request_errors_pass_back_and_count_nothing() {
    for (status, body) in [
        (
            StatusCode::TOO_MANY_REQUESTS,
            br#"{"error":{"type":"es_rejected_execution_exception","reason":"busy"},"status":429}"#
                .to_vec(),
        ),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            br#"{"error":{"type":"cluster_block_exception","reason":"blocked"},"status":503}"#
                .to_vec(),
        ),
        (
            StatusCode::OK,
            br#"{"took":1,"errors":false,"items":[{"index":{"_id":"0","sta"#.to_vec(),
        ),
    ] {
        let answer = body.clone();
        let upstream =
            RecordingUpstream::start(move |_| (status, json_header(), answer.clone())).await;
        let sidecar = Sidecar::start(&upstream.url, &[]);
        let response = client()
            .post(format!("{}/_bulk", sidecar.url))
            .header("content-type", "application/x-ndjson")
            .body(articles(3))
            .send()
            .await
            .expect("bulk");
        assert_eq!(response.status(), status);
        assert_eq!(
            response.bytes().await.expect("body").to_vec(),
            body,
            "answer passed back as it came"
        );
        // The unreadable 200 is read back; this upstream cannot tell, so
        // the counts are taken back at the last read.
        assert_eq!(settled_documents(&sidecar.url).await, 0, "status {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_silent_cluster_gives_504_and_counts_nothing() {
    let upstream = RecordingUpstream::start_delayed(Duration::from_secs(3), |_| {
        (StatusCode::OK, json_header(), b"{}".to_vec())
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &["--upstream-timeout", "1s"]);
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), articles(2)).await;
    assert_eq!(status, 504, "{answer}");
    assert_eq!(answer["error"]["type"], "timeout_exception");
    // Read back; the silent cluster cannot tell, so the counts are taken
    // back at the last read and the classes kept (a late store still
    // names one).
    assert_eq!(settled_documents(&sidecar.url).await, 0);
    assert!(stats(&sidecar.url).await["forest"]["nodes"].as_u64() > Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn action_lines_the_cluster_accepts_are_stamped() {
    let upstream = RecordingUpstream::start(|request| {
        (StatusCode::OK, json_header(), bulk_answer(request, 201))
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let body = concat!(
        "{\"index\":{\"_index\":\"news\",\"_id\":\"1\"},\"extra\":1}\n",
        "{\"title\":\"夜市开放\",\"content\":\"步行街夜市本周五起开放，营业到凌晨一点，设摊位一百二十个。\"}\n",
        "{\"index\":{\"_index\":\"news\",\"_id\":\"2\"}\n",
        "{\"title\":\"夜市开放\",\"content\":\"步行街夜市本周五起开放，营业到凌晨一点，设摊位一百二十个。\"}\n",
    );
    let (status, _) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 200);
    let forwarded = String::from_utf8_lossy(&first_bulk(&upstream).body).to_string();
    assert_eq!(
        forwarded.matches("\"cluster_root\"").count(),
        2,
        "{forwarded}"
    );
    assert_eq!(documents_counted(&sidecar.url).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_beyond_the_in_flight_budget_get_429() {
    let upstream = RecordingUpstream::start_delayed(Duration::from_secs(3), |request| {
        (StatusCode::OK, json_header(), bulk_answer(request, 201))
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &["--max-in-flight-bytes", "1kb"]);
    let body = articles(4);
    let first = {
        let url = format!("{}/_bulk", sidecar.url);
        let body = body.clone();
        tokio::spawn(async move { post_bulk(&url, body).await })
    };
    // Wait until the first request holds its bytes (bounded).
    for _ in 0..200 {
        let held = stats(&sidecar.url).await["memory"]["in_flight_bytes"].as_u64();
        if held.is_some_and(|bytes| bytes > 0) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, answer) = json_of(
        client()
            .post(format!("{}/_bulk", sidecar.url))
            .header("content-type", "application/x-ndjson")
            .body(body)
            .send()
            .await
            .expect("second bulk"),
    )
    .await;
    assert_eq!(status, 429, "{answer}");
    assert_eq!(answer["error"]["type"], "es_rejected_execution_exception");
    let (status, _) = first.await.expect("first bulk");
    assert_eq!(status, 200);
    assert_eq!(documents_counted(&sidecar.url).await, 4);
}
