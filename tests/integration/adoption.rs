//! Adopting an index and the first hour (issue 44), against the real server
//! through `neardup serve` and `neardup backfill`: an index made by dynamic
//! mapping is adopted and its list page collapses; a stamp field of another
//! type and a time field the index lacks are refused at once, in the
//! request's own terms; documents that cannot be fingerprinted each stay a
//! group of their own.

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Osmem, Sidecar, client, demo_bulk, get_json, post_bulk, send_json, stats};

/// The README's list page (`mappings/list-page.json`), on `index`.
async fn list_page(server: &str, index: &str) -> (u16, Value) {
    let query: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/mappings/list-page.json"
        ))
        .expect("list page"),
    )
    .expect("JSON");
    send_json(
        reqwest::Method::POST,
        &format!("{server}/{index}/_search"),
        &query,
    )
    .await
}

async fn refresh(server: &str, index: &str) {
    let _ = client()
        .post(format!("{server}/{index}/_refresh"))
        .send()
        .await;
}

/// The demo's articles written straight into the cluster (no sidecar, no
/// template): the index is made by dynamic mapping.
async fn index_the_demo_directly(server: &str, index: &str) -> usize {
    let (body, documents) = demo_bulk(index);
    let (status, answer) = post_bulk(&format!("{server}/_bulk"), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    refresh(server, index).await;
    documents.len()
}

/// The type `field` has in `index`'s mapping, read from the cluster.
async fn mapped_type(server: &str, index: &str, field: &str) -> Value {
    let (status, mapping) = get_json(&format!("{server}/{index}/_mapping")).await;
    assert_eq!(status, 200, "{mapping}");
    mapping[index]["mappings"]["properties"][field]["type"].clone()
}

async fn wait_for_backfill(sidecar: &str, state: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, status) = get_json(&format!("{sidecar}/_neardup/backfill")).await;
        if status["state"] == state {
            return status;
        }
        assert!(Instant::now() < deadline, "backfill not {state}: {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The list page's groups, asserted to answer 200.
async fn collapsed_groups(server: &str, index: &str) -> Vec<Value> {
    refresh(server, index).await;
    let (status, page) = list_page(server, index).await;
    assert_eq!(status, 200, "the list page on {index}: {page}");
    page["hits"]["hits"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_made_by_dynamic_mapping_is_adopted_and_its_list_page_collapses() {
    let osmem = Osmem::start();
    let documents = index_the_demo_directly(&osmem.url, "news-old").await;
    // No template: exactly the index a template cannot help.
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (status, started) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &json!({"index": "news-old", "time_field": "published_at"}),
    )
    .await;
    assert_eq!(status, 200, "{started}");
    let done = wait_for_backfill(&sidecar.url, "done").await;
    assert_eq!(done["documents"]["stamped"], documents, "{done}");
    assert_eq!(
        mapped_type(&osmem.url, "news-old", "cluster_root").await,
        "keyword"
    );
    assert_eq!(
        mapped_type(&osmem.url, "news-old", "simhash").await,
        "keyword"
    );
    let groups = collapsed_groups(&osmem.url, "news-old").await;
    assert!(
        !groups.is_empty() && groups.len() < documents,
        "collapsed: {} groups of {documents}",
        groups.len()
    );

    // The command line maps them too.
    let state = support::TempDir::new("adoption-offline");
    index_the_demo_directly(&osmem.url, "news-older").await;
    let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args([
            "backfill",
            "--upstream",
            &osmem.url,
            "--index",
            "news-older",
        ])
        .args(["--time-field", "published_at", "-q", "--state-dir"])
        .arg(state.path())
        .stdin(Stdio::null())
        .output()
        .expect("neardup backfill");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        mapped_type(&osmem.url, "news-older", "cluster_root").await,
        "keyword"
    );
    let groups = collapsed_groups(&osmem.url, "news-older").await;
    assert!(groups.len() < documents, "collapsed: {}", groups.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stamp_field_of_another_type_is_refused_at_once_with_the_way_out() {
    let osmem = Osmem::start();
    // Stamps written earlier straight into the cluster, mapped as text.
    let (status, answer) = send_json(
        reqwest::Method::PUT,
        &format!("{}/news-text/_doc/1?refresh=true", osmem.url),
        &json!({"title": "港口新航线周一开通", "content": "港口新航线周一开通，每周两班。", "cluster_root": "0123456789abcdef"}),
    )
    .await;
    assert!(status < 300, "{answer}");
    assert_eq!(
        mapped_type(&osmem.url, "news-text", "cluster_root").await,
        "text"
    );
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (status, refused) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &json!({"index": "news-text"}),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    let reason = refused["error"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("[cluster_root] is text in [news-text]"),
        "{reason}"
    );
    assert!(reason.contains("Reindex"), "{reason}");
    assert!(reason.contains("\"type\":\"keyword\""), "{reason}");
    let (_, idle) = get_json(&format!("{}/_neardup/backfill", sidecar.url)).await;
    assert_eq!(idle["state"], "idle", "nothing started: {idle}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_field_the_index_lacks_is_refused_at_once_naming_the_body_field() {
    let osmem = Osmem::start();
    index_the_demo_directly(&osmem.url, "news-old").await;
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (status, refused) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &json!({"index": "news-old", "time_field": "pubdate"}),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["type"], "illegal_argument_exception");
    let reason = refused["error"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("[time_field] [pubdate]"), "{reason}");
    assert!(!reason.contains("--time-field"), "{reason}");
    assert_eq!(reason.matches("news-old").count(), 1, "{reason}");
    let (_, idle) = get_json(&format!("{}/_neardup/backfill", sidecar.url)).await;
    assert_eq!(idle["state"], "idle", "nothing started: {idle}");
    // Nothing was mapped either: the request was refused before.
    assert_eq!(
        mapped_type(&osmem.url, "news-old", "cluster_root").await,
        Value::Null
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_without_fingerprinted_text_are_each_a_group_of_their_own() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &["--install-template"]);
    // Two unrelated articles whose text is under other names than the
    // fingerprinted `title` and `content`: one by `_doc`, one by `_bulk`.
    let answer = client()
        .put(format!("{}/news-other/_doc/1?refresh=true", sidecar.url))
        .header("content-type", "application/json")
        .body(json!({"headline": "Harbour strike ends after nine days", "body": "Dockworkers at Harlow Bay returned to work on Monday.", "published_at": "2026-03-10T09:00:00Z"}).to_string())
        .send()
        .await
        .expect("PUT");
    assert_eq!(answer.status().as_u16(), 201);
    let root = answer
        .headers()
        .get("x-neardup-cluster-root")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(root.starts_with("nofingerprint-"), "{root:?}");
    assert!(
        answer.headers().contains_key("x-neardup-not-fingerprinted"),
        "{:?}",
        answer.headers()
    );
    let bulk = format!(
        "{}\n{}\n",
        json!({"index": {"_index": "news-other", "_id": "2"}}),
        json!({"headline": "Museum restores a Ming dynasty gazetteer", "body": "Three years of work on the Jiangcheng gazetteer ended this week.", "published_at": "2026-03-11T09:00:00Z"})
    );
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), bulk).await;
    assert_eq!(status, 200, "{answer}");

    let groups = collapsed_groups(&osmem.url, "news-other").await;
    assert_eq!(groups.len(), 2, "each its own group: {groups:?}");
    let roots: Vec<&str> = groups
        .iter()
        .filter_map(|group| group["fields"]["cluster_root"][0].as_str())
        .collect();
    assert_eq!(roots.len(), 2, "{groups:?}");
    assert_ne!(roots[0], roots[1]);
    assert!(roots.contains(&root.as_str()), "{roots:?}");
    assert_eq!(stats(&sidecar.url).await["not_fingerprinted"], 2);
    // The class API says what such a class is.
    let (status, class) = get_json(&format!("{}/_neardup/classes/{root}", sidecar.url)).await;
    assert_eq!(status, 404, "{class}");
    assert!(
        class["error"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("not fingerprinted")),
        "{class}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_gives_documents_without_fingerprinted_text_a_class_of_their_own() {
    let osmem = Osmem::start();
    let bulk = format!(
        "{}\n{}\n{}\n{}\n",
        json!({"index": {"_index": "news-bare", "_id": "1"}}),
        json!({"headline": "Harbour strike ends after nine days", "body": "Dockworkers returned on Monday.", "published_at": "2026-03-10T09:00:00Z"}),
        json!({"index": {"_index": "news-bare", "_id": "2"}}),
        json!({"headline": "Museum restores a Ming dynasty gazetteer", "body": "Three years of work ended.", "published_at": "2026-03-11T09:00:00Z"}),
    );
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", osmem.url), bulk).await;
    assert_eq!(status, 200, "{answer}");
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let request = json!({"index": "news-bare", "restart": true});
    let (status, started) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 200, "{started}");
    let done = wait_for_backfill(&sidecar.url, "done").await;
    assert_eq!(done["documents"]["stamped_not_fingerprinted"], 2, "{done}");
    let groups = collapsed_groups(&osmem.url, "news-bare").await;
    assert_eq!(groups.len(), 2, "each its own group: {groups:?}");
    // Read again, they are known by their roots, not stamped anew.
    let (status, again) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 200, "{again}");
    let done = wait_for_backfill(&sidecar.url, "done").await;
    assert_eq!(done["documents"]["already_stamped"], 2, "{done}");
    assert_eq!(done["documents"]["stamped"], 0, "{done}");
}
