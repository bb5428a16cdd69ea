//! The state directory runs out of space: writes are refused with 503 and
//! readiness says why; when space returns the sidecar recovers by itself,
//! without a restart, and its log replays every effect exactly once. Under
//! `--on-state-failure pass` writes go on unstamped, marked, and a backfill
//! stamps them afterwards.
//!
//! The fault is a file-size limit on the sidecar's process (`prlimit
//! --fsize`, util-linux, no privilege): its appends fail with EFBIG as they
//! would with ENOSPC, so these tests run everywhere, not only where a tmpfs
//! can be mounted.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Osmem, Sidecar, TempDir, client, get_json, send_json, stamps_in, stats};

const INDEX: &str = "news-full";

/// The sidecar's state runs out of space from now on: a soft file-size
/// limit (`prlimit --fsize` on its process, which needs no privilege) at
/// the size its largest log segment has, so the next append fails with
/// EFBIG, which the sidecar treats as a full disk (ENOSPC). Raised again by
/// [`give_space_back`].
fn fill_state(sidecar: &Sidecar, state_dir: &Path) {
    let log_len = largest_log_segment(state_dir);
    set_file_size_limit(sidecar, &format!("{log_len}:unlimited"));
}

fn largest_log_segment(state_dir: &Path) -> u64 {
    std::fs::read_dir(state_dir)
        .expect("state dir")
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("log-"))
        .filter_map(|entry| entry.metadata().ok())
        .map(|metadata| metadata.len())
        .max()
        .expect("a log segment")
}

fn give_space_back(sidecar: &Sidecar) {
    set_file_size_limit(sidecar, "unlimited:unlimited");
}

/// The soft limit only: raising a hard limit needs a privilege.
fn set_file_size_limit(sidecar: &Sidecar, value: &str) {
    let limited = Command::new("prlimit")
        .args([
            "--pid",
            &sidecar.pid().to_string(),
            &format!("--fsize={value}"),
        ])
        .status()
        .unwrap_or_else(|error| panic!("prlimit (util-linux) is needed: {error}"));
    assert!(limited.success(), "prlimit --fsize={value}");
}

/// `count` distinct articles, ids `{prefix}{n}`, long enough that their
/// logged effects need several pages of the file system.
fn bulk(prefix: &str, count: usize) -> String {
    let sentences = support::demo_sentences(12);
    let mut random = support::Xorshift(0xd15c_f011 ^ prefix.len() as u64);
    let mut body = String::new();
    for number in 0..count {
        let content: String = (0..8)
            .map(|_| sentences[random.below(sentences.len())].as_str())
            .collect();
        body.push_str(
            &json!({"index": {"_index": INDEX, "_id": format!("{prefix}{number}")}}).to_string(),
        );
        body.push('\n');
        body.push_str(
            &json!({"title": format!("{prefix} {number}"), "content": content}).to_string(),
        );
        body.push('\n');
    }
    body
}

async fn post_bulk(sidecar: &str, body: String) -> (u16, reqwest::header::HeaderMap, Value) {
    let response = client()
        .post(format!("{sidecar}/_bulk?refresh=true"))
        .header("content-type", "application/x-ndjson")
        .body(body)
        .send()
        .await
        .expect("bulk");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn wait_for_health(sidecar: &str, status: u16, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let (got, body) = get_json(&format!("{sidecar}/_neardup/health")).await;
        if got == status {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "health not {status} in time: {got} {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_state_directory_turns_readiness_red_and_heals_by_itself_when_space_returns() {
    let osmem = Osmem::start();
    let state = TempDir::new("full-state");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);

    let (status, _, answer) = post_bulk(&sidecar.url, bulk("a", 20)).await;
    assert_eq!(status, 200, "{answer}");
    wait_for_health(&sidecar.url, 200, Duration::from_secs(5)).await;

    fill_state(&sidecar, state.path());
    let (status, _, refused) = post_bulk(&sidecar.url, bulk("b", 40)).await;
    assert_eq!(status, 503, "{refused}");
    assert_eq!(
        refused["error"]["type"], "neardup_state_exception",
        "{refused}"
    );
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["ready"], false, "{health}");
    assert_eq!(health["state"]["status"], "out_of_space", "{health}");
    assert!(
        health["reasons"][0]
            .as_str()
            .is_some_and(|reason| reason.contains("out of space")),
        "{health}"
    );
    // Known unwritable: the next write is refused before anything is placed
    // (nothing waits in memory for it).
    let not_stored = stats(&sidecar.url).await["cluster_outcomes"]["not_stored"].clone();
    assert_eq!(not_stored, 40);
    let (status, _, refused) = post_bulk(&sidecar.url, bulk("b", 40)).await;
    assert_eq!(status, 503, "{refused}");
    assert_eq!(
        stats(&sidecar.url).await["cluster_outcomes"]["not_stored"],
        not_stored
    );
    let (status, live) = get_json(&format!("{}/_neardup/health/live", sidecar.url)).await;
    assert_eq!((status, &live["status"]), (200, &json!("alive")));
    let metrics = support::metrics_text(&sidecar.url).await;
    assert!(metrics.contains("neardup_state_writable 0"), "{metrics}");

    // Space returns: no restart, readiness comes back, writes go through.
    give_space_back(&sidecar);
    let healed = wait_for_health(&sidecar.url, 200, Duration::from_secs(10)).await;
    assert_eq!(healed["state"]["status"], "writable", "{healed}");
    let (status, _, answer) = post_bulk(&sidecar.url, bulk("c", 20)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");

    let stored = stamps_in(&osmem.url, INDEX).await;
    assert_eq!(stored.len(), 40, "the refused bulk reached nothing");
    assert!(stored.keys().all(|id| !id.starts_with('b')));
    let before = stats(&sidecar.url).await;
    assert_eq!(before["forest"]["documents"], 40, "{before}");

    // The log kept across the failure replays every effect once.
    sidecar.kill();
    let sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let after = stats(&sidecar.url).await;
    assert_eq!(after["forest"], before["forest"], "{after}");
    assert_eq!(after["cluster_outcomes"]["tracked_keys"], 40, "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_pass_a_full_state_directory_forwards_writes_unstamped_and_a_backfill_stamps_them() {
    let osmem = Osmem::start();
    let state = TempDir::new("full-state-pass");
    let state_dir = state.path().to_string_lossy().to_string();
    let sidecar =
        Sidecar::start_with_state(&osmem.url, &state_dir, &["--on-state-failure", "pass"]);

    fill_state(&sidecar, state.path());
    let (status, headers, answer) = post_bulk(&sidecar.url, bulk("p", 30)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    assert_eq!(
        headers
            .get("x-neardup-unstamped")
            .and_then(|value| value.to_str().ok()),
        Some("state-unavailable")
    );
    let stored = stamps_in(&osmem.url, INDEX).await;
    assert_eq!(stored.len(), 30);
    assert!(
        stored
            .values()
            .all(|source| source.get("cluster_root").is_none())
    );
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(status, 200, "writes are accepted: {health}");
    assert_eq!(health["status"], "degraded", "{health}");
    let metrics = support::metrics_text(&sidecar.url).await;
    assert!(
        metrics.contains("neardup_unstamped_forwarded_total 1"),
        "{metrics}"
    );

    give_space_back(&sidecar);
    let deadline = Instant::now() + Duration::from_secs(10);
    while get_json(&format!("{}/_neardup/health", sidecar.url))
        .await
        .1["status"]
        != "ok"
    {
        assert!(Instant::now() < deadline, "state did not heal");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, started) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &json!({"index": INDEX}),
    )
    .await;
    assert_eq!(status, 200, "{started}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let done = loop {
        let (_, progress) = get_json(&format!("{}/_neardup/backfill", sidecar.url)).await;
        if progress["state"] != "running" {
            break progress;
        }
        assert!(Instant::now() < deadline, "{progress}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["documents"]["stamped"], 30, "{done}");
    let stored = stamps_in(&osmem.url, INDEX).await;
    assert!(
        stored
            .values()
            .all(|source| source["cluster_root"].is_string())
    );
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 30);
}

/// A file-size limit (`prlimit --fsize` on the running sidecar) instead of
/// a full disk: the write past it fails with EFBIG (the signal that would
/// kill the process is handled), readiness goes red, and raising the limit
/// heals it without a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_size_limit_is_survived_and_healed_like_a_full_disk() {
    let osmem = Osmem::start();
    let state = TempDir::new("fsize-state");
    let state_dir = state.path().to_string_lossy().to_string();
    let sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let (status, _, answer) = post_bulk(&sidecar.url, bulk("a", 10)).await;
    assert_eq!(status, 200, "{answer}");
    // Not at the log's size but a little above: the first appends pass.
    let log_len = largest_log_segment(state.path());
    set_file_size_limit(&sidecar, &format!("{}:unlimited", log_len + 512));
    let (status, _, refused) = post_bulk(&sidecar.url, bulk("b", 40)).await;
    assert_eq!(status, 503, "{refused}");
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["state"]["status"], "out_of_space", "{health}");

    give_space_back(&sidecar);
    wait_for_health(&sidecar.url, 200, Duration::from_secs(10)).await;
    let (status, _, answer) = post_bulk(&sidecar.url, bulk("c", 10)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 20);
}
