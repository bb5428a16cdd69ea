//! `kill -9` of `neardup serve` in the middle of a bulk load into the real
//! server (osmem-server), then a restart on the same state directory and
//! the rest of the load, reprints of pre-crash stories included. Checks:
//! every document acknowledged to a client is in the index with its stamp,
//! no story is split by the crash, and the counts match the index. Also a
//! graceful stop (SIGTERM) that leaves a snapshot, and a second sidecar
//! refused on a locked state directory.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::stories::{self, Article, wholly_grouped};
use support::{Osmem, Sidecar, TempDir, client, stamps_in, stats};

const INDEX: &str = "news-crash";
const STORIES: usize = 240;
const DOCUMENTS_PER_BULK: usize = 40;

/// The test's stories (see `support::stories`).
fn corpus() -> Vec<Vec<Article>> {
    stories::corpus(0x5eed_1234_abcd, STORIES)
}

fn bulk_body(articles: &[Article]) -> String {
    stories::bulk_body(INDEX, articles)
}

/// Sends one bulk; the ids the cluster acknowledged, or `None` when no
/// answer came (the sidecar died).
async fn send(url: &str, articles: &[Article]) -> Option<Vec<String>> {
    let response = client()
        .post(format!("{url}/_bulk"))
        .header("content-type", "application/x-ndjson")
        .body(bulk_body(articles))
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let answer: Value = response.json().await.ok()?;
    Some(
        answer["items"]
            .as_array()?
            .iter()
            .filter(|item| {
                item["index"]["status"]
                    .as_u64()
                    .is_some_and(|status| status < 300)
            })
            .filter_map(|item| item["index"]["_id"].as_str().map(str::to_string))
            .collect(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_sidecar_loses_nothing_acknowledged_and_splits_no_story() {
    let stories = corpus();
    // Before the crash: every original and its first reprint; after: the rest.
    let before: Vec<Article> = stories
        .iter()
        .flat_map(|story| story[..2].to_vec())
        .collect();
    let after: Vec<Article> = stories
        .iter()
        .flat_map(|story| story[2..].to_vec())
        .collect();
    let order: Vec<Article> = before.iter().chain(&after).cloned().collect();
    let grouped = wholly_grouped(&order);
    assert!(
        grouped.len() * 10 >= STORIES * 9,
        "only {} stories group whole",
        grouped.len()
    );

    let osmem = Osmem::start();
    let state = TempDir::new("crash-state");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(
        &osmem.url,
        &state_dir,
        &["--install-template", "--template-patterns", "news*"],
    );

    // Phase 1: three clients; the sidecar is killed once half the bulks
    // have been answered, with more in flight.
    let bulks: Vec<Vec<Article>> = before
        .chunks(DOCUMENTS_PER_BULK)
        .map(<[Article]>::to_vec)
        .collect();
    let total_bulks = bulks.len();
    let queue = Arc::new(std::sync::Mutex::new(bulks));
    let answered = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    for _ in 0..3 {
        let queue = queue.clone();
        let answered = answered.clone();
        let url = sidecar.url.clone();
        clients.push(tokio::spawn(async move {
            let mut acknowledged = Vec::new();
            let mut unanswered = Vec::new();
            loop {
                let Some(bulk) = queue.lock().expect("queue").pop() else {
                    break;
                };
                match send(&url, &bulk).await {
                    Some(ids) => {
                        acknowledged.extend(ids);
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                    None => unanswered.push(bulk),
                }
            }
            (acknowledged, unanswered)
        }));
    }
    while answered.load(Ordering::SeqCst) < total_bulks / 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    sidecar.kill();
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    let mut to_retry: Vec<Vec<Article>> = Vec::new();
    for handle in clients {
        let (ids, unanswered) = handle.await.expect("client");
        acknowledged.extend(ids);
        to_retry.extend(unanswered);
    }
    assert!(!to_retry.is_empty(), "the kill came after the load");

    // Restart on the same state: clients retry what got no answer, then
    // the rest of the load (reprints of stories from before the crash).
    let sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    for bulk in to_retry.iter().chain(
        &after
            .chunks(DOCUMENTS_PER_BULK)
            .map(<[Article]>::to_vec)
            .collect::<Vec<_>>(),
    ) {
        let ids = send(&sidecar.url, bulk)
            .await
            .expect("answered after the restart");
        assert_eq!(ids.len(), bulk.len());
        acknowledged.extend(ids);
    }

    let stored = stamps_in(&osmem.url, INDEX).await;
    for id in &acknowledged {
        let source = stored
            .get(id)
            .unwrap_or_else(|| panic!("acknowledged {id} is not in the index"));
        assert!(
            source["cluster_root"].is_string() && source["simhash"].is_string(),
            "{id} unstamped"
        );
    }
    assert_eq!(
        stored.len(),
        order.len(),
        "every document is in the index once"
    );
    let mut roots: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for source in stored.values() {
        let story = source["story"].as_u64().expect("story") as usize;
        roots
            .entry(story)
            .or_default()
            .insert(source["cluster_root"].as_str().expect("root").to_string());
    }
    let split: Vec<(&usize, &BTreeSet<String>)> = roots
        .iter()
        .filter(|(story, roots)| grouped.contains(story) && roots.len() > 1)
        .collect();
    assert!(split.is_empty(), "stories split by the crash: {split:?}");

    let stats = stats(&sidecar.url).await;
    assert_eq!(stats["forest"]["documents"], stored.len() as u64, "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_leaves_a_snapshot_and_the_next_start_resumes() {
    let osmem = Osmem::start();
    let state = TempDir::new("graceful-state");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let stories = corpus();
    let first: Vec<Article> = stories
        .iter()
        .take(20)
        .map(|story| story[0].clone())
        .collect();
    assert!(send(&sidecar.url, &first).await.is_some());
    let before = stats(&sidecar.url).await;
    assert!(sidecar.terminate().success());
    let snapshots = std::fs::read_dir(state.path())
        .expect("state dir")
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("snapshot-"))
        .count();
    assert_eq!(snapshots, 1);

    let sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let after = stats(&sidecar.url).await;
    assert_eq!(after["forest"], before["forest"]);
    // A reprint of a story from before the stop joins its class.
    a_reprint_joins_its_class(&osmem.url, &sidecar.url, &stories[3]).await;

    // The state directory is locked while this sidecar runs.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args([
            "serve",
            "--upstream",
            &osmem.url,
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
            &state_dir,
        ])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("second sidecar");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("in use by another neardup"));
}

/// Damage in the side records of the snapshot a sidecar starts from is
/// found after recovery (format 10 adopts them unread): the sidecar sets
/// the snapshot aside and starts again in its own process, from the
/// snapshot before and the log, on the same address, with every document
/// of both stops and the classes they made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_side_records_found_after_a_start_send_it_to_the_snapshot_before() {
    let osmem = Osmem::start();
    let state = TempDir::new("damaged-records-state");
    let state_dir = state.path().to_string_lossy().to_string();
    let stories = corpus();
    let firsts = |range: std::ops::Range<usize>| -> Vec<Article> {
        stories[range]
            .iter()
            .map(|story| story[0].clone())
            .collect()
    };
    let mut sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    assert!(send(&sidecar.url, &firsts(0..20)).await.is_some());
    assert!(sidecar.terminate().success());
    let mut sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    assert!(send(&sidecar.url, &firsts(20..40)).await.is_some());
    let before = stats(&sidecar.url).await;
    assert!(sidecar.terminate().success());
    let snapshots = support::state::snapshot_files(state.path());
    assert_eq!(snapshots.len(), 2, "{snapshots:?}");
    let newest = snapshots.last().expect("two").clone();
    support::state::flip_a_byte_in_frame(&newest, b'S');

    let listen = format!("127.0.0.1:{}", support::free_port());
    let sidecar = Sidecar::start_listening(&osmem.url, &listen, &state_dir, &[]);
    let aside = format!("{}.damaged", newest.display());
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !std::path::Path::new(&aside).exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the snapshot was not set aside"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!newest.exists());
    // The same process, started again: it answers once recovered.
    let after = loop {
        let answer = client()
            .get(format!("{}/_neardup/stats", sidecar.url))
            .send()
            .await;
        if let Ok(answer) = answer
            && answer.status().is_success()
        {
            break answer.json::<Value>().await.expect("stats");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no answer after the restart"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(after["forest"], before["forest"]);
    a_reprint_joins_its_class(&osmem.url, &sidecar.url, &stories[25]).await;
}

/// Sends `story`'s second article through the sidecar at `url`: it must
/// be stamped with the class of the story's first, sent before.
async fn a_reprint_joins_its_class(cluster: &str, url: &str, story: &[Article]) {
    let reprint = story[1].clone();
    assert!(send(url, std::slice::from_ref(&reprint)).await.is_some());
    let stored = stamps_in(cluster, INDEX).await;
    assert_eq!(
        stored[&reprint.id]["cluster_root"],
        stored[&story[0].id]["cluster_root"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_alone_is_enough_to_rebuild_the_forest() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(
        &osmem.url,
        &["--install-template", "--template-patterns", "news*"],
    );
    let stories = corpus();
    let first: Vec<Article> = stories
        .iter()
        .take(30)
        .flat_map(|story| story[..2].to_vec())
        .collect();
    assert!(send(&sidecar.url, &first).await.is_some());
    let before = stats(&sidecar.url).await;
    drop(sidecar);
    let stored = stamps_in(&osmem.url, INDEX).await;
    let classes: BTreeSet<&str> = stored
        .values()
        .filter_map(|source| source["cluster_root"].as_str())
        .collect();

    // The command, into a new state directory...
    let rebuilt = TempDir::new("rebuilt-state");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["rebuild", "--index", "news-*", "--upstream", &osmem.url])
        .args(["--state-dir", &rebuilt.path().to_string_lossy()])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rebuild");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sidecar = Sidecar::start_with_state(&osmem.url, &rebuilt.path().to_string_lossy(), &[]);
    let after = stats(&sidecar.url).await;
    assert_eq!(after["forest"]["documents"], before["forest"]["documents"]);
    assert_eq!(after["forest"]["roots"], classes.len() as u64);
    // ...and a reprint of a story indexed before joins its class.
    let reprint = stories[7][2].clone();
    assert!(
        send(&sidecar.url, std::slice::from_ref(&reprint))
            .await
            .is_some()
    );
    drop(sidecar);

    // The same on start: `serve --rebuild-index` with an empty state directory.
    let empty = TempDir::new("rebuild-on-start");
    let sidecar = Sidecar::start_with_state(
        &osmem.url,
        &empty.path().to_string_lossy(),
        &["--rebuild-index", INDEX],
    );
    let on_start = stats(&sidecar.url).await;
    assert_eq!(on_start["forest"]["documents"], stored.len() as u64 + 1);
    let stored = stamps_in(&osmem.url, INDEX).await;
    assert_eq!(
        stored[&reprint.id]["cluster_root"],
        stored[&stories[7][0].id]["cluster_root"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cluster_stopped_mid_load_costs_no_count() {
    let mut osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let stories = corpus();
    let articles: Vec<Article> = stories.iter().flat_map(|story| story.to_vec()).collect();
    let mut acknowledged = 0usize;
    let mut refused = 0usize;
    for (position, bulk) in articles.chunks(DOCUMENTS_PER_BULK).enumerate() {
        if position == 6 {
            osmem.stop();
        }
        let response = client()
            .post(format!("{}/_bulk", sidecar.url))
            .header("content-type", "application/x-ndjson")
            .body(bulk_body(bulk))
            .send()
            .await
            .expect("the sidecar answers");
        let status = response.status().as_u16();
        let answer: Value = response.json().await.expect("a JSON answer");
        if status == 200 {
            acknowledged += answer["items"].as_array().map_or(0, Vec::len);
        } else {
            assert_eq!(status, 502, "{answer}");
            assert_eq!(answer["status"], 502);
            refused += 1;
        }
    }
    assert!(acknowledged > 0 && refused > 0);
    let stats = stats(&sidecar.url).await;
    assert_eq!(stats["forest"]["documents"], acknowledged as u64);
}

/// Regression: after an upstream failure the single-document path took the
/// placement back without logging it, so a crash right after left a node
/// for a document the cluster never got.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_document_the_cluster_never_got_leaves_no_node_after_a_crash() {
    let unreachable = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        format!("http://{}", listener.local_addr().expect("address"))
    };
    let state = TempDir::new("never-got");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&unreachable, &state_dir, &[]);
    let response = client()
        .put(format!("{}/{INDEX}/_doc/lost", sidecar.url))
        .json(&json!({"title": "地铁新线今日开通", "content": "地铁三号线东延段今日开通运营，沿线设站七座，首班车六点发出。"}))
        .send()
        .await
        .expect("the sidecar answers");
    assert_eq!(response.status().as_u16(), 502);
    assert_eq!(stats(&sidecar.url).await["forest"]["nodes"], 0);
    sidecar.kill();
    let restarted = Sidecar::start_with_state(&unreachable, &state_dir, &[]);
    let after = stats(&restarted.url).await;
    assert_eq!(after["forest"]["nodes"], 0, "{after}");
    assert_eq!(after["forest"]["documents"], 0, "{after}");
}
