//! A replica group as one sidecar (issue 43) and its records kept by the
//! group's secret (issue 48): real `neardup serve` members against the
//! real server (osmem-server), loopback only, bounded in time, one test
//! at a time (leases are timing).
//!
//! - a leader stopped with SIGTERM lets its lease go: a standby leads at
//!   once (well under the lease), and a write sent meanwhile is held and
//!   served, not refused;
//! - nothing makes effects between taking the lease and the epoch record:
//!   an expiry due then (a test-only pause in that window) is in no record,
//!   and the chain stays whole (every record's effects follow the last);
//! - a record forged straight into the cluster (no secret) is refused,
//!   never applied, and the group goes on: the leader replaces it;
//! - the leader killed while its only standby is behind the truncated
//!   log: the standby restarts itself, joins from the published snapshot
//!   and takes over, nobody helping;
//! - the leader killed while a new member downloads the published
//!   snapshot: the member finishes, follows the log and takes over with
//!   every acknowledged document;
//! - a group that fails over midway through a stream whose boilerplate is
//!   learned stamps every document as one sidecar that never stopped
//!   (issue 46: the learned table is in the group's records).

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::stories::{self, Article};
use support::{Osmem, Sidecar, TempDir, client, free_port, replica, stats, wait_for_role};

const INDEX: &str = "news-group";
const LEASE: &str = "3s";

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn articles(count: usize) -> Vec<Article> {
    stories::corpus(0x6120_7772_6974, count)
        .into_iter()
        .flatten()
        .take(count)
        .collect()
}

fn member_args<'a>(group: &'a str, name: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    support::replica_member_args(group, name, LEASE, extra)
}

/// Waits until the standby at `follower` applied what `leader` confirmed.
async fn wait_until_caught_up(follower: &str, leader: &str) {
    let started = Instant::now();
    loop {
        let (ahead, behind) = (replica(leader).await, replica(follower).await);
        if ahead["applied"] == behind["applied"] {
            return;
        }
        assert_eq!(behind["role"], "standby", "{behind}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{behind} vs {ahead}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A bulk's status and body.
async fn post(url: &str, articles: &[Article]) -> (u16, Value) {
    let response = client()
        .post(format!("{url}/_bulk"))
        .header("content-type", "application/x-ndjson")
        .body(stories::bulk_body(INDEX, articles))
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Every record of `group`'s log, in order, read from the server.
async fn chain(osmem: &str, group: &str) -> Vec<Value> {
    let (status, answer) = support::send_json(
        reqwest::Method::POST,
        &format!("{osmem}/neardup-replica-{group}-log/_mget"),
        &json!({ "ids": (1..=500).map(|n| n.to_string()).collect::<Vec<_>>() }),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    answer["docs"]
        .as_array()
        .expect("docs")
        .iter()
        .filter(|doc| doc["found"] == true)
        .map(|doc| doc["_source"].clone())
        .collect()
}

/// The chain's effects follow one another without a gap or an overlap.
fn assert_whole(chain: &[Value]) {
    let mut last_seq = 0;
    for (position, record) in chain.iter().enumerate() {
        assert_eq!(record["record"], position as u64 + 1, "gap in the chain");
        assert_eq!(
            record["first_seq"].as_u64(),
            Some(last_seq + 1),
            "record {} does not follow effect {last_seq}: {}",
            position + 1,
            json!({"first_seq": record["first_seq"], "last_seq": record["last_seq"], "kind": record["kind"]})
        );
        last_seq = record["last_seq"].as_u64().expect("last_seq");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_stopped_with_sigterm_hands_the_lease_over_at_once() {
    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    let mut leader = Sidecar::start(&osmem.url, &member_args("release", "a", &[]));
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let standby = Sidecar::start(&osmem.url, &member_args("release", "b", &[]));
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;
    let docs = articles(60);
    assert_eq!(post(&standby.url, &docs[..20]).await.0, 200);

    // A write through the standby while the leader stops: held, then
    // served by the standby once it leads.
    let stopping = std::thread::spawn(move || {
        let asked = Instant::now();
        let status = leader.terminate();
        (asked, status)
    });
    let held = {
        let url = standby.url.clone();
        let bulk = docs[20..40].to_vec();
        tokio::spawn(async move { post(&url, &bulk).await })
    };
    let took_over = wait_for_role(&standby.url, "leader", Duration::from_secs(10)).await;
    let (asked, status) = stopping.join().expect("stopped");
    let handover = asked.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        handover < Duration::from_millis(2_500),
        "the lease ({LEASE}) went over in {handover:?}: not released"
    );
    assert_eq!(took_over["epoch"], 2, "{took_over}");
    let (status, body) = held.await.expect("client");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["errors"], false, "{body}");
    assert_eq!(post(&standby.url, &docs[40..]).await.0, 200);
    assert_eq!(stats(&standby.url).await["forest"]["documents"], 60);
    assert_whole(&chain(&osmem.url, "release").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_expiry_due_while_taking_over_is_in_no_record() {
    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    // Nodes expire a second after they were placed; the standby pauses
    // for three seconds between taking the lease and its epoch record.
    let short = ["--retention", "1s"];
    let mut leader = Sidecar::start(&osmem.url, &member_args("expiry", "a", &short));
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let state = TempDir::new("expiry-standby");
    let standby = Sidecar::start_with_env(
        &osmem.url,
        &state.path().to_string_lossy(),
        &member_args("expiry", "b", &short),
        &[("NEARDUP_TEST_TAKEOVER_PAUSE_MS", "3000")],
    );
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;
    let docs = articles(20);
    assert_eq!(post(&leader.url, &docs[..10]).await.0, 200);
    // The standby holds the nodes (applied from the chain), now old.
    let started = Instant::now();
    while stats(&standby.url).await["forest"]["nodes"] == 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "not applied");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    leader.kill();
    let taking_over = wait_for_role(&standby.url, "taking_over", Duration::from_secs(15)).await;
    assert_eq!(taking_over["acting"], true, "{taking_over}");
    // Within the lease, before the epoch record: the nodes are due, the
    // maintenance runs every second, and nothing expires.
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let during = stats(&standby.url).await;
    assert_eq!(during["replica"]["role"], "taking_over", "{during}");
    assert_eq!(
        during["forest"]["expired_nodes"], 0,
        "an effect before the epoch record: {during}"
    );
    wait_for_role(&standby.url, "leader", Duration::from_secs(10)).await;
    // It expires as the leader, in records of its own; writes go on.
    assert_eq!(post(&standby.url, &docs[10..]).await.0, 200);
    let started = Instant::now();
    while stats(&standby.url).await["forest"]["expired_nodes"] == 0 {
        assert!(started.elapsed() < Duration::from_secs(10), "never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(replica(&standby.url).await["role"], "leader");
    assert_whole(&chain(&osmem.url, "expiry").await);
    // A member joining now reads the whole chain and follows.
    let joiner = Sidecar::start(&osmem.url, &member_args("expiry", "c", &short));
    wait_for_role(&joiner.url, "standby", Duration::from_secs(20)).await;
    assert_eq!(post(&standby.url, &articles(25)[20..]).await.0, 200);
    wait_until_caught_up(&joiner.url, &standby.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_record_forged_into_the_cluster_is_refused_and_the_group_goes_on() {
    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    let leader = Sidecar::start(&osmem.url, &member_args("forged", "a", &[]));
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let standby = Sidecar::start(&osmem.url, &member_args("forged", "b", &[]));
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;
    let docs = articles(30);
    assert_eq!(post(&leader.url, &docs[..10]).await.0, 200);
    let before = chain(&osmem.url, "forged").await;
    let last = before.last().expect("a record");
    let next = last["record"].as_u64().expect("number") + 1;
    // Someone who can write the cluster, without the group's secret,
    // takes the next number with a record of their own (an effect-free
    // record chained to the last one, digest made up).
    let forged = json!({
        "format": 2, "group_uuid": last["group_uuid"], "record": next,
        "epoch": last["epoch"], "writer": "mallory-1", "kind": "epoch",
        "first_seq": last["last_seq"].as_u64().expect("seq") + 1,
        "last_seq": last["last_seq"], "prev_digest": last["digest"],
        "digest": "00000000000000000000000000000000", "encoding": "none",
        "effects": "", "bytes": 0, "written_at_ms": 0,
    });
    let (status, answer) = support::send_json(
        reqwest::Method::PUT,
        &format!("{}/neardup-replica-forged-log/_create/{next}", osmem.url),
        &forged,
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    // The group goes on: the leader's next record replaces the forgery,
    // the standby never applies it and follows.
    assert_eq!(post(&leader.url, &docs[10..20]).await.0, 200);
    assert_eq!(post(&standby.url, &docs[20..]).await.0, 200);
    let after = chain(&osmem.url, "forged").await;
    assert_ne!(after[next as usize - 1]["writer"], "mallory-1");
    assert_whole(&after);
    wait_until_caught_up(&standby.url, &leader.url).await;
    assert_eq!(replica(&leader.url).await["role"], "leader");
    assert_eq!(
        stats(&standby.url).await["forest"],
        stats(&leader.url).await["forest"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_killed_while_its_standby_is_behind_the_truncated_log_is_replaced_without_a_person()
 {
    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    // Snapshots often, so the log is truncated behind them quickly.
    let often = ["--snapshot-after", "4kb"];
    let mut leader = Sidecar::start(&osmem.url, &member_args("behind", "a", &often));
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let state = TempDir::new("behind-standby");
    let listen = format!("127.0.0.1:{}", free_port());
    let behind = Sidecar::start_listening(
        &osmem.url,
        &listen,
        &state.path().to_string_lossy(),
        &member_args("behind", "b", &often),
    );
    wait_for_role(&behind.url, "standby", Duration::from_secs(20)).await;
    let node_before = replica(&behind.url).await["node"].clone();

    // The standby sleeps while the leader writes far past the margin the
    // truncation keeps (32 records): bulks of two, two records each.
    let docs = articles(120);
    let stop = |signal: &str| {
        let status = std::process::Command::new("kill")
            .args([signal, &behind.pid().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    };
    stop("-STOP");
    for bulk in docs[..100].chunks(2) {
        assert_eq!(post(&leader.url, bulk).await.0, 200);
    }
    // Published and truncated behind the snapshot (the leader's task does
    // it after each snapshot, a moment after the write).
    let started = Instant::now();
    while chain(&osmem.url, "behind").await[0]["record"] == 1 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the log was not truncated"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The leader dies while the standby is that far behind.
    leader.kill();
    stop("-CONT");

    // Stranded, it steps down and restarts itself (same process, same
    // address): it joins from the published snapshot, nobody helping,
    // then takes the lease over; writes go on through it with nothing
    // acknowledged lost.
    let node_before = node_before.as_str().expect("node").to_string();
    support::wait_for_rejoin(&behind.url, &node_before, Duration::from_secs(40)).await;
    wait_for_role(&behind.url, "leader", Duration::from_secs(20)).await;
    for bulk in docs[100..].chunks(5) {
        assert_eq!(post(&behind.url, bulk).await.0, 200);
    }
    assert_eq!(stats(&behind.url).await["forest"]["documents"], 120);
}

/// Snapshots often (a few KB of log), so a short test publishes one.
const SNAPSHOT_OFTEN: [&str; 2] = ["--snapshot-after", "4kb"];

/// Whether the group has published a snapshot.
async fn published(osmem: &str, group: &str) -> bool {
    let answer = client()
        .get(format!(
            "{osmem}/neardup-replica-{group}-snapshot/_doc/latest"
        ))
        .send()
        .await;
    match answer {
        Ok(answer) => answer
            .json::<Value>()
            .await
            .is_ok_and(|body| body["found"] == true),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_killed_while_a_member_downloads_the_snapshot_is_replaced_by_that_member() {
    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    let mut leader = Sidecar::start(&osmem.url, &member_args("download", "a", &SNAPSHOT_OFTEN));
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let docs = articles(80);
    let started = Instant::now();
    let mut sent = 0;
    while sent < 40 || !published(&osmem.url, "download").await {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no snapshot published"
        );
        if sent < 60 {
            assert_eq!(post(&leader.url, &docs[sent..sent + 5]).await.0, 200);
            sent += 5;
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // Acknowledged after the snapshot: in the log only.
    assert_eq!(post(&leader.url, &docs[sent..sent + 5]).await.0, 200);
    sent += 5;

    // A new member reads the published snapshot slowly (a test-only pause
    // before each chunk); the leader dies meanwhile.
    let state = TempDir::new("downloading");
    let dir = state.path().to_path_buf();
    let joining = {
        let (url, dir) = (osmem.url.clone(), dir.to_string_lossy().to_string());
        tokio::task::spawn_blocking(move || {
            Sidecar::start_with_env(
                &url,
                &dir,
                &member_args("download", "b", &SNAPSHOT_OFTEN),
                &[("NEARDUP_TEST_DOWNLOAD_PAUSE_MS", "1500")],
            )
        })
    };
    let downloading = || {
        std::fs::read_dir(&dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|entry| entry.file_name().to_string_lossy().ends_with(".download"))
        })
    };
    let started = Instant::now();
    while !downloading() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the new member never started downloading"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    leader.kill();

    // It finishes the download, follows the log to its end, and takes the
    // lease over: nothing acknowledged is lost, and writes go on through it.
    let joined = joining.await.expect("joined");
    wait_for_role(&joined.url, "leader", Duration::from_secs(20)).await;
    assert_eq!(
        stats(&joined.url).await["forest"]["documents"],
        sent as u64,
        "every acknowledged document"
    );
    for bulk in docs[sent..].chunks(5) {
        assert_eq!(post(&joined.url, bulk).await.0, 200);
    }
    assert_eq!(stats(&joined.url).await["forest"]["documents"], 80);
    assert_whole(&chain(&osmem.url, "download").await);
}

/// The column pages of `identity.rs` as articles with ids `learn-N`.
fn learning_articles() -> Vec<Article> {
    crate::identity::column_pages()
        .into_iter()
        .enumerate()
        .map(|(number, (title, content))| Article {
            id: format!("learn-{number}"),
            story: number,
            title,
            content,
        })
        .collect()
}

/// Each document of `index` with its `cluster_root`, by id.
async fn roots_in(osmem: &str, index: &str) -> Vec<(String, Value)> {
    support::stamps_in(osmem, index)
        .await
        .into_iter()
        .map(|(id, source)| (id, source["cluster_root"].clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_that_fails_over_midway_stamps_as_a_sidecar_that_never_stopped() {
    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    let pages = learning_articles();
    let (before, after) = pages.split_at(4);
    // One sidecar that never stops: it learns the footer from the first
    // pages, and the pages after it are as many stories as headlines.
    let alone_index = "news-learn-alone";
    {
        let alone = Sidecar::start(
            &osmem.url,
            &["--install-template", "--template-patterns", "news*"],
        );
        for half in [before, after] {
            let answer = support::post_bulk(
                &format!("{}/_bulk", alone.url),
                stories::bulk_body(alone_index, half),
            )
            .await;
            assert_eq!(answer.0, 200, "{}", answer.1);
            assert_eq!(answer.1["errors"], false, "{}", answer.1);
        }
    }
    let alone = roots_in(&osmem.url, alone_index).await;
    assert_eq!(alone.len(), pages.len(), "{alone:?}");
    let later: std::collections::BTreeSet<String> = alone
        .iter()
        .filter(|(id, _)| after.iter().any(|page| &page.id == id))
        .map(|(_, root)| root.to_string())
        .collect();
    assert_eq!(later.len(), after.len(), "learned: {alone:?}");

    // A group: the leader places the first pages and stops; the standby
    // leads and places the rest with the table the records taught it.
    let mut leader = Sidecar::start(&osmem.url, &member_args("learn", "a", &[]));
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let standby = Sidecar::start(&osmem.url, &member_args("learn", "b", &[]));
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;
    let (status, body) = post(&leader.url, before).await;
    assert_eq!((status, &body["errors"]), (200, &json!(false)), "{body}");
    wait_until_caught_up(&standby.url, &leader.url).await;
    assert!(leader.terminate().success());
    wait_for_role(&standby.url, "leader", Duration::from_secs(10)).await;
    let (status, body) = post(&standby.url, after).await;
    assert_eq!((status, &body["errors"]), (200, &json!(false)), "{body}");
    let group = roots_in(&osmem.url, INDEX).await;
    assert_eq!(
        group, alone,
        "the group stamps as the sidecar that never stopped"
    );
}
