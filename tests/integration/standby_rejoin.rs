//! A replica group's members that join or rejoin on their own (issue 30,
//! docs/standby.md), against the real server: from the published snapshot
//! after the log was truncated, on their state directory after a restart,
//! and after a deposition or a record that never landed. The helpers and
//! the one-at-a-time lock are `standby.rs`'s.
//!
//! - the leader publishes snapshots and truncates the log; a member
//!   joining after record 1 is gone does so from the snapshot, equal to
//!   the leader.
//! - a standby killed and restarted on its state directory resumes (the
//!   chain's start deleted meanwhile: it did not reread it), nothing set
//!   aside.
//! - a leader deposed by a pause restarts itself on its state directory
//!   (no manual step), follows the new leader and ends equal to it.
//! - a leader whose last record never landed sets its state aside and
//!   rejoins from the chain.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::stories::Article;
use support::{Osmem, Sidecar, client, free_port, replica, stats, wait_for_role};

use crate::standby::{
    LEASE, ONE_AT_A_TIME, corpus, load, member, records, signal, wait_until_caught_up,
};
use crate::support;

/// Whether record `number` of `group` is still in the log.
async fn record_exists(osmem: &str, group: &str, number: u64) -> bool {
    !records(osmem, group, number, 1).await.is_empty()
}

/// The group's manifest of its newest published snapshot, if any.
async fn manifest(osmem: &str, group: &str) -> Option<Value> {
    let answer = client()
        .get(format!(
            "{osmem}/neardup-replica-{group}-snapshot/_doc/latest"
        ))
        .send()
        .await
        .ok()?;
    let body: Value = answer.json().await.ok()?;
    (body["found"] == true).then(|| body["_source"].clone())
}

/// Snapshots often (a few KB of log), so that a short test publishes and
/// truncates.
const SNAPSHOT_OFTEN: [&str; 2] = ["--snapshot-after", "4kb"];

fn member_on(osmem: &Osmem, group: &str, name: &str, state_dir: &str) -> Sidecar {
    member_on_with(osmem, group, name, state_dir, &SNAPSHOT_OFTEN)
}

fn member_on_with(
    osmem: &Osmem,
    group: &str,
    name: &str,
    state_dir: &str,
    extra: &[&str],
) -> Sidecar {
    let args = support::replica_member_args(group, name, LEASE, extra);
    Sidecar::start_with_state(&osmem.url, state_dir, &args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_joins_from_the_published_snapshot_after_the_log_was_truncated() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let first: Vec<Article> = stories.iter().map(|story| story[0].clone()).collect();
    let osmem = Osmem::start();
    let state_a = support::TempDir::new("state");
    let leader = member_on(&osmem, "trunc", "a", &state_a.path().to_string_lossy());
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    // Small bulks: many records, several snapshots published.
    load(&leader.url, &first, 2).await;
    let started = Instant::now();
    let truncated = loop {
        let published = manifest(&osmem.url, "trunc").await;
        if let Some(published) = &published
            && published["record"].as_u64().unwrap_or(0) > 40
            && !record_exists(&osmem.url, "trunc", 1).await
        {
            break published.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no snapshot published and the log truncated within 30 s: {published:?}"
        );
        // More records, and a snapshot due again.
        load(&leader.url, &first[..8], 2).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let head = replica(&leader.url).await["applied"]["record"]
        .as_u64()
        .unwrap_or(0);
    let mut kept = 0;
    for from in (1..=head).step_by(16) {
        kept += records(&osmem.url, "trunc", from, 16).await.len();
    }
    eprintln!(
        "published snapshot at record {} (seq {}, {} bytes); log holds {kept} of {head} records",
        truncated["record"], truncated["last_seq"], truncated["bytes"]
    );
    assert!(
        (kept as u64) < head,
        "the log was not truncated: {kept} records"
    );

    // A new member: the chain's start is gone, so only the snapshot helps.
    let state_c = support::TempDir::new("state");
    let started = Instant::now();
    let joined = member_on(&osmem, "trunc", "c", &state_c.path().to_string_lossy());
    wait_for_role(&joined.url, "standby", Duration::from_secs(20)).await;
    eprintln!("joined from the snapshot in {:?}", started.elapsed());
    load(&leader.url, &stories[3][1..], 1).await;
    wait_until_caught_up(&joined.url, &leader.url).await;
    assert_eq!(
        stats(&joined.url).await["forest"],
        stats(&leader.url).await["forest"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_restarted_with_its_state_resumes_without_rereading_the_chain() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let first: Vec<Article> = stories.iter().map(|story| story[0].clone()).collect();
    let osmem = Osmem::start();
    let state_b = support::TempDir::new("state");
    let dir_b = state_b.path().to_string_lossy().to_string();
    let leader = member(&osmem, "resume", "a");
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let mut standby = member_on(&osmem, "resume", "b", &dir_b);
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;
    load(&leader.url, &first[..80], 10).await;
    wait_until_caught_up(&standby.url, &leader.url).await;
    let applied = replica(&standby.url).await["applied"]["record"]
        .as_u64()
        .expect("applied");
    // Its place in the chain is written once a second, after its log is
    // synced: a fixed sleep was too short on a loaded machine, and a
    // member whose mark lagged behind the records deleted below could not
    // resume (it is then stranded, which is not what this test is about).
    wait_for_mark(&dir_b, applied, Duration::from_secs(20)).await;
    standby.kill();

    // Meanwhile the group goes on, and the chain's start disappears: a
    // member that reread the chain from record 1 would wait forever.
    load(&leader.url, &first[80..], 10).await;
    delete_records(&osmem.url, "resume", json!({"lt": applied})).await;
    assert!(!record_exists(&osmem.url, "resume", 1).await);

    let started = Instant::now();
    let standby = member_on(&osmem, "resume", "b", &dir_b);
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;
    wait_until_caught_up(&standby.url, &leader.url).await;
    eprintln!("resumed from its own state in {:?}", started.elapsed());
    assert_eq!(
        stats(&standby.url).await["forest"],
        stats(&leader.url).await["forest"]
    );
    assert!(!set_aside_in(&dir_b), "a resumable state was set aside");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deposed_leader_restarted_on_its_state_rejoins_as_a_standby() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let first: Vec<Article> = stories.iter().map(|story| story[0].clone()).collect();
    let osmem = Osmem::start();
    let state_a = support::TempDir::new("state");
    let dir_a = state_a.path().to_string_lossy().to_string();
    let old = Sidecar::start_listening(
        &osmem.url,
        &format!("127.0.0.1:{}", free_port()),
        &dir_a,
        &support::replica_member_args("deposed", "a", LEASE, &["--snapshot-after", "4kb"]),
    );
    let old_node = wait_for_role(&old.url, "leader", Duration::from_secs(20)).await["node"].clone();
    let new = member(&osmem, "deposed", "b");
    wait_for_role(&new.url, "standby", Duration::from_secs(20)).await;
    load(&old.url, &first[..60], 10).await;
    wait_until_caught_up(&new.url, &old.url).await;

    // Paused past its lease: the standby takes over and writes on.
    signal(&old, "-STOP");
    wait_for_role(&new.url, "leader", Duration::from_secs(15)).await;
    load(&new.url, &first[60..], 10).await;
    signal(&old, "-CONT");

    // Deposed, it restarts itself on the same state directory (same
    // process and address, a new node id), with no manual step.
    let old_node = old_node.as_str().expect("node").to_string();
    support::wait_for_rejoin(&old.url, &old_node, Duration::from_secs(30)).await;
    load(&new.url, &stories[5][1..], 1).await;
    wait_until_caught_up(&old.url, &new.url).await;
    assert_eq!(
        stats(&old.url).await["forest"],
        stats(&new.url).await["forest"]
    );
    eprintln!(
        "deposed leader restarted: state set aside: {}",
        set_aside_in(&dir_a)
    );
}

/// Deletes the records of `group`'s log whose number is in `range` (a
/// range query's bounds), as a truncation or a lost write would.
async fn delete_records(cluster: &str, group: &str, range: Value) {
    let (status, answer) = support::send_json(
        reqwest::Method::POST,
        &format!("{cluster}/neardup-replica-{group}-log/_delete_by_query?refresh=true"),
        &json!({"query": {"range": {"record": range}}}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
}

/// Waits until the member's place in the chain kept in `dir`
/// (`replica.json`) is at `record` or later.
async fn wait_for_mark(dir: &str, record: u64, limit: Duration) {
    let path = std::path::Path::new(dir).join("replica.json");
    let started = Instant::now();
    loop {
        let kept = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|mark| mark["record"].as_u64());
        if kept.is_some_and(|kept| kept >= record) {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "the member's place in the chain stayed at {kept:?}, not {record}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `dir` holds a state set aside.
fn set_aside_in(dir: &str) -> bool {
    std::fs::read_dir(dir)
        .expect("state dir")
        .flatten()
        .any(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("set-aside-")
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_whose_last_record_never_landed_sets_its_state_aside_and_rejoins() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let first: Vec<Article> = stories.iter().map(|story| story[0].clone()).collect();
    let osmem = Osmem::start();
    let state_a = support::TempDir::new("state");
    let dir_a = state_a.path().to_string_lossy().to_string();
    let mut old = member_on_with(&osmem, "landed", "a", &dir_a, &[]);
    wait_for_role(&old.url, "leader", Duration::from_secs(20)).await;
    load(&old.url, &first[..60], 10).await;
    // Its place in the chain is written once a second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let last = replica(&old.url).await["applied"]["record"]
        .as_u64()
        .expect("applied");
    old.kill();
    // As if its last record had never landed: its local log holds effects
    // the chain does not.
    delete_records(&osmem.url, "landed", json!({"gte": last})).await;
    assert!(!record_exists(&osmem.url, "landed", last).await);

    // Another member takes over and writes other effects at those numbers.
    let new = member(&osmem, "landed", "b");
    wait_for_role(&new.url, "leader", Duration::from_secs(20)).await;
    load(&new.url, &first[60..], 10).await;

    let old = member_on_with(&osmem, "landed", "a", &dir_a, &[]);
    wait_for_role(&old.url, "standby", Duration::from_secs(20)).await;
    assert!(set_aside_in(&dir_a), "a diverged state was not set aside");
    wait_until_caught_up(&old.url, &new.url).await;
    assert_eq!(
        stats(&old.url).await["forest"],
        stats(&new.url).await["forest"]
    );
}
