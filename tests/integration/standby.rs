//! A replica group of real `neardup serve` processes against the real
//! server (osmem-server): a leader and warm standbys kept and fenced
//! through the cluster (issue 30, docs/standby.md). Each test is bounded in
//! time and runs on loopback only; they run one at a time (leases are
//! timing, and the machine is shared).
//!
//! - failover: `kill -9` of the leader mid-load; a standby leads within
//!   10 s (default 5 s lease; the other tests use 3 s); every acknowledged write is in the index, stamped, its class in
//!   the new leader's forest; no story split; counts equal the index.
//! - fencing: a leader paused (SIGSTOP) past its lease, then resumed,
//!   acknowledges no further write as leader, and no record after the new
//!   leader's epoch record is its.
//! - a write sent to a standby: forwarded to the leader with its query,
//!   answered as the leader answers; the role endpoints.
//! - a member joining a running group reads the chain and ends equal to
//!   the leader; it can then take over.
//! - members that join from a published snapshot or rejoin on their own
//!   state: `standby_rejoin.rs`.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use neardup::config::DEFAULT_REPLICA_LEASE;
use serde_json::{Value, json};
use support::stories::{self, Article, wholly_grouped};
use support::{
    Osmem, Sidecar, TEST_SECRET, client, free_port, replica, stamps_in, stats, wait_for_role,
};

const INDEX: &str = "news-standby";
const STORIES: usize = 160;
const DOCUMENTS_PER_BULK: usize = 40;
pub(crate) const LEASE: &str = "3s";

/// One test at a time: leases are timing, and the machine is shared.
pub(crate) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The test's stories (see `support::stories`).
pub(crate) fn corpus() -> Vec<Vec<Article>> {
    stories::corpus(0x5eed_5741_d8b1, STORIES)
}

fn bulk_body(articles: &[Article]) -> String {
    stories::bulk_body(INDEX, articles)
}

/// One bulk's answer: status, headers, body (`None`: no answer at all).
async fn post(url: &str, articles: &[Article]) -> Option<(u16, reqwest::header::HeaderMap, Value)> {
    let response = client()
        .post(format!("{url}/_bulk"))
        .header("content-type", "application/x-ndjson")
        .body(bulk_body(articles))
        .send()
        .await
        .ok()?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    Some((status, headers, body))
}

/// The ids a 2xx bulk answer acknowledged; `None` for no answer or another
/// status.
async fn send(url: &str, articles: &[Article]) -> Option<Vec<String>> {
    let (status, _, answer) = post(url, articles).await?;
    if !(200..300).contains(&status) {
        return None;
    }
    Some(acknowledged_ids(&answer))
}

fn acknowledged_ids(answer: &Value) -> Vec<String> {
    answer["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|item| {
                    item["index"]["status"]
                        .as_u64()
                        .is_some_and(|status| status < 300)
                })
                .filter_map(|item| item["index"]["_id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn member(osmem: &Osmem, group: &str, name: &str) -> Sidecar {
    member_with_lease(osmem, group, name, LEASE)
}

fn member_with_lease(osmem: &Osmem, group: &str, name: &str, lease: &str) -> Sidecar {
    Sidecar::start(
        &osmem.url,
        &support::replica_member_args(group, name, lease, &[]),
    )
}

/// Waits until `follower` applied as far as `leader` confirmed.
pub(crate) async fn wait_until_caught_up(follower: &str, leader: &str) {
    let started = Instant::now();
    loop {
        let (ahead, behind) = (replica(leader).await, replica(follower).await);
        if ahead["applied"] == behind["applied"] {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{follower} did not catch up: {behind} vs {ahead}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The group's records `from..from + count`, read from the server itself.
pub(crate) async fn records(osmem: &str, group: &str, from: u64, count: u64) -> Vec<Value> {
    let ids: Vec<String> = (from..from + count).map(|n| n.to_string()).collect();
    let (status, answer) = support::send_json(
        reqwest::Method::POST,
        &format!("{osmem}/neardup-replica-{group}-log/_mget"),
        &json!({ "ids": ids }),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_leader_loses_nothing_acknowledged_and_a_standby_takes_over() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
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
        "only {} group whole",
        grouped.len()
    );

    // The default lease (5 s): the issue asks for a takeover within 10 s.
    let osmem = Osmem::start();
    let mut leader = member_with_lease(&osmem, "failover", "a", DEFAULT_REPLICA_LEASE);
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let standby = member_with_lease(&osmem, "failover", "b", DEFAULT_REPLICA_LEASE);
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;

    // Three clients on the leader; killed once half the bulks are answered.
    let bulks: Vec<Vec<Article>> = before
        .chunks(DOCUMENTS_PER_BULK)
        .map(<[Article]>::to_vec)
        .collect();
    let total_bulks = bulks.len();
    let queue = Arc::new(std::sync::Mutex::new(bulks));
    let answered = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::new();
    for _ in 0..3 {
        let (queue, answered, url) = (queue.clone(), answered.clone(), leader.url.clone());
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
    leader.kill();
    let killed_at = Instant::now();
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    let mut to_retry: Vec<Vec<Article>> = Vec::new();
    for handle in clients {
        let (ids, unanswered) = handle.await.expect("client");
        acknowledged.extend(ids);
        to_retry.extend(unanswered);
    }
    assert!(!to_retry.is_empty(), "the kill came after the load");

    let took_over = wait_for_role(&standby.url, "leader", Duration::from_secs(10)).await;
    let takeover = killed_at.elapsed();
    assert!(takeover < Duration::from_secs(10), "took {takeover:?}");
    assert_eq!(took_over["epoch"], 2, "{took_over}");
    eprintln!("standby led {takeover:?} after the kill (lease {DEFAULT_REPLICA_LEASE})");

    // Clients retry what got no answer on the new leader, then the rest.
    for bulk in to_retry.iter().chain(
        &after
            .chunks(DOCUMENTS_PER_BULK)
            .map(<[Article]>::to_vec)
            .collect::<Vec<_>>(),
    ) {
        let ids = send(&standby.url, bulk)
            .await
            .expect("answered by the new leader");
        assert_eq!(ids.len(), bulk.len());
        acknowledged.extend(ids);
    }

    let stored = stamps_in(&osmem.url, INDEX).await;
    let mut roots: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for id in &acknowledged {
        let source = stored
            .get(id)
            .unwrap_or_else(|| panic!("acknowledged {id} is not in the index"));
        assert!(source["cluster_root"].is_string(), "{id} unstamped");
    }
    assert_eq!(stored.len(), order.len(), "every document once");
    for source in stored.values() {
        let story = source["story"].as_u64().expect("story") as usize;
        roots
            .entry(story)
            .or_default()
            .insert(source["cluster_root"].as_str().expect("root").to_string());
    }
    let split: Vec<_> = roots
        .iter()
        .filter(|(story, roots)| grouped.contains(story) && roots.len() > 1)
        .collect();
    assert!(split.is_empty(), "stories split by the failover: {split:?}");
    // Every stamp in the index names a class of the new leader's forest.
    for root in roots.values().flatten().collect::<BTreeSet<_>>() {
        let (status, class) =
            support::get_json(&format!("{}/_neardup/classes/{root}", standby.url)).await;
        assert_eq!(
            status, 200,
            "class {root} not in the new leader's forest: {class}"
        );
    }
    // Counts equal the index (the old leader's writes in doubt are read
    // back from the cluster in the background: allow it a moment).
    let started = Instant::now();
    loop {
        let documents = stats(&standby.url).await["forest"]["documents"].clone();
        if documents == stored.len() as u64 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "forest counts {documents}, the index holds {}",
            stored.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_leader_acknowledges_nothing_after_its_lease() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let articles: Vec<Article> = stories.iter().flat_map(|story| story.to_vec()).collect();
    let mut bulks = articles.chunks(DOCUMENTS_PER_BULK).map(<[Article]>::to_vec);
    let osmem = Osmem::start();
    // The old leader reaches the cluster through a proxy that can answer
    // its bulks late (the group's own requests go through at once): a
    // bulk is then held between the fence before forwarding and the one
    // before answering when the leader is paused.
    let proxy = support::LateProxy::start_bulks_late(&osmem.url, Duration::ZERO).await;
    let old_state = support::TempDir::new("fencing-old");
    let old = Sidecar::start_listening(
        &proxy.url,
        &format!("127.0.0.1:{}", free_port()),
        &old_state.path().to_string_lossy(),
        &support::replica_member_args("fencing", "a", LEASE, &[]),
    );
    wait_for_role(&old.url, "leader", Duration::from_secs(20)).await;
    let new = member(&osmem, "fencing", "b");
    wait_for_role(&new.url, "standby", Duration::from_secs(20)).await;
    for bulk in bulks.by_ref().take(3) {
        assert!(send(&old.url, &bulk).await.is_some());
    }
    let old_node = replica(&old.url).await["node"]
        .as_str()
        .expect("node")
        .to_string();

    // A bulk in flight when the leader is paused: the cluster stored it
    // and answers two seconds later, by then the leader is paused.
    proxy.set_write_delay(Duration::from_secs(2));
    let in_flight: Vec<Article> = bulks.by_ref().take(2).flatten().collect();
    let in_flight = {
        let url = old.url.clone();
        tokio::spawn(async move { post(&url, &in_flight).await })
    };
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    signal(&old, "-STOP");
    wait_for_role(&new.url, "leader", Duration::from_secs(15)).await;
    let new_node = replica(&new.url).await["node"]
        .as_str()
        .expect("node")
        .to_string();
    // The new leader's first record: the epoch record of epoch 2.
    let epoch_record = records(&osmem.url, "fencing", 1, 200)
        .await
        .iter()
        .find(|record| record["epoch"] == 2)
        .and_then(|record| record["record"].as_u64())
        .expect("the new leader's epoch record");
    // The new leader takes writes while the old one sleeps.
    assert!(send(&new.url, &bulks.next().expect("bulk")).await.is_some());
    signal(&old, "-CONT");

    // The bulk that was in flight across the pause: the old leader never
    // acknowledges it itself (the fence before answering); it is served
    // again by the new leader (routed there once the old one lost its
    // lease), or refused.
    let (status, headers, body) = in_flight.await.expect("client").expect("an answer");
    if (200..300).contains(&status) {
        assert_eq!(
            headers
                .get("x-neardup-served-by")
                .and_then(|value| value.to_str().ok()),
            Some(new_node.as_str()),
            "acknowledged by the paused leader itself: {headers:?} {body}"
        );
        assert_eq!(headers["x-neardup-epoch"], "2", "{body}");
    } else {
        assert_eq!(status, 503, "{body}");
    }
    // The old leader, deposed, finishes what it had and restarts itself to
    // rejoin (same address, a new node id): it follows the new leader, and
    // the writes it gets go there.
    let rejoined = support::wait_for_rejoin(&old.url, &old_node, Duration::from_secs(30)).await;
    assert_eq!(rejoined["epoch"], 2, "{rejoined}");
    for bulk in bulks.by_ref().take(3) {
        let (status, headers, body) = post(&old.url, &bulk).await.expect("an answer");
        assert_eq!(status, 200, "{body}");
        assert_eq!(headers["x-neardup-served-by"], new_node.as_str(), "{body}");
        assert_eq!(headers["x-neardup-epoch"], "2");
    }

    // The chain: no record from the new epoch record on is the old
    // leader's, and the numbering has no gap.
    let chain = records(&osmem.url, "fencing", 1, 200).await;
    for (position, record) in chain.iter().enumerate() {
        assert_eq!(record["record"], position as u64 + 1, "gap in the chain");
        if record["record"].as_u64().expect("number") >= epoch_record {
            assert_ne!(record["writer"], old_node.as_str(), "{record}");
        }
    }
    assert_eq!(chain[epoch_record as usize - 1]["kind"], "epoch");
    assert_eq!(chain[epoch_record as usize - 1]["epoch"], 2);
}

/// The control and log indices of `group` in `osmem`, made, with the
/// tests' group key.
async fn group_cluster(
    osmem: &Osmem,
    group: &str,
) -> (
    neardup::replica::cluster::GroupCluster,
    neardup::replica::auth::GroupKey,
) {
    use neardup::config::GroupSecret;
    let upstream = neardup::upstream::Upstream::new(
        &osmem.url,
        Duration::from_secs(10),
        &neardup::upstream::UpstreamTls::default(),
    )
    .expect("client");
    let key =
        neardup::replica::auth::GroupKey::new(&GroupSecret::new(TEST_SECRET.as_bytes().to_vec()));
    let cluster = neardup::replica::cluster::GroupCluster::new(
        upstream,
        group,
        Duration::from_secs(10),
        key.clone(),
    );
    cluster.ensure_indices().await.expect("indices");
    (cluster, key)
}

/// The fence itself, without clocks: a member that believes it leads (its
/// lease still good by its own clock) tries to create a record number a
/// newer leader already wrote: the create is answered 409, the record read
/// back is another writer's, and the member steps down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_create_that_collides_with_a_newer_leader_deposes_the_writer() {
    use neardup::config::{GroupSecret, ReplicaOptions};
    use neardup::replica::appender;
    use neardup::replica::cluster::Write;
    use neardup::replica::record::{Kind, Record};
    use neardup::replica::state::{Replica, Role};

    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    let (cluster, key) = group_cluster(&osmem, "fence").await;
    cluster.ensure_indices().await.expect("indices exist: fine");
    let options = |name: &str| ReplicaOptions {
        group: "fence".into(),
        name: name.into(),
        lease: Duration::from_secs(30),
        advertise: None,
        secret: GroupSecret::new(TEST_SECRET.as_bytes().to_vec()),
        write_wait: Duration::from_secs(60),
    };
    let old = Replica::new(options("old"), "http://127.0.0.1:1".into());
    old.set_role(Role::Leader, 1, None);
    old.lease_held_from(neardup::replica::clock::boottime());
    assert!(old.may_act());
    // The newer leader's epoch record takes number 1.
    let epoch = Record::new(&key, 1, 2, "new-1", Kind::Epoch, 1, 0, "uuid", Vec::new());
    assert!(matches!(
        cluster
            .create_record(1, &epoch.to_document("uuid", 0))
            .await
            .expect("create"),
        Write::Done(_)
    ));
    // The old leader's record 1.
    let mine = Record::new(
        &key,
        1,
        1,
        &old.node,
        Kind::Effects,
        1,
        0,
        "uuid",
        Vec::new(),
    );
    let refused = appender::create(&old, &cluster, &mine, &mine.to_document("uuid", 0)).await;
    let reason = refused.expect_err("the fence");
    assert!(reason.contains("new-1"), "{reason}");
    old.step_down(&reason);
    assert!(!old.may_act());
    assert!(old.gate().is_err());
    // Its own earlier attempt that landed is not a collision.
    let new = Replica::new(options("new"), "http://127.0.0.1:2".into());
    let new_second = Record::new(
        &key,
        2,
        2,
        &new.node,
        Kind::Effects,
        1,
        0,
        &epoch.digest,
        Vec::new(),
    );
    new.set_role(Role::Leader, 2, None);
    new.lease_held_from(neardup::replica::clock::boottime());
    let document = new_second.to_document("uuid", 0);
    appender::create(&new, &cluster, &new_second, &document)
        .await
        .expect("created");
    appender::create(&new, &cluster, &new_second, &document)
        .await
        .expect("a retry of its own record is not a collision");
}

/// A shutdown that raced its own renewal (aborted in flight, but landed)
/// holds a stale version of the control document: letting the lease go
/// must read it again and still name no holder, or the group waits a whole
/// lease for its next leader (the rolling restart behind haproxy once held
/// a write 5.8 s so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn letting_the_lease_go_survives_a_renewal_that_landed_unseen() {
    use neardup::replica::cluster::Write;
    use neardup::replica::member::let_go;

    let _one = ONE_AT_A_TIME.lock().await;
    let osmem = Osmem::start();
    let (cluster, _) = group_cluster(&osmem, "letgo").await;
    let document = json!({
        "type": "control", "format": 1, "group": "letgo", "group_uuid": "u",
        "epoch": 1, "holder": "a-1", "holder_url": "http://127.0.0.1:1",
        "lease_ms": 30000, "renewals": 0, "renewed_at_ms": 0,
    });
    let Write::Done(stale) = cluster.create_control(&document).await.expect("create") else {
        panic!("the control document exists already");
    };
    // A renewal that landed after the leader last looked.
    let mut renewed = document.clone();
    renewed["renewals"] = json!(1);
    assert!(matches!(
        cluster
            .replace_control(&renewed, stale)
            .await
            .expect("renew"),
        Write::Done(_)
    ));
    let_go(&cluster, (document.clone(), stale))
        .await
        .expect("let go on the version read again");
    let (found, version) = cluster.control().await.expect("read").expect("present");
    assert!(found["holder"].is_null(), "{found}");
    // A lease someone else took is not let go.
    let mut taken = found.clone();
    taken["holder"] = json!("b-1");
    taken["epoch"] = json!(2);
    assert!(matches!(
        cluster
            .replace_control(&taken, version)
            .await
            .expect("take"),
        Write::Done(_)
    ));
    let refused = let_go(&cluster, (document, stale)).await;
    assert!(refused.expect_err("not ours").contains("b-1"));
    let (found, _) = cluster.control().await.expect("read").expect("present");
    assert_eq!(found["holder"], "b-1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_sent_to_a_standby_is_served_by_the_leader() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let osmem = Osmem::start();
    let leader = member(&osmem, "route", "a");
    let leader_node = wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await["node"]
        .as_str()
        .expect("node")
        .to_string();
    let standby = member(&osmem, "route", "b");
    wait_for_role(&standby.url, "standby", Duration::from_secs(20)).await;

    // The query goes with it: refresh (searchable at once) and filter_path.
    let bulk: Vec<Article> = stories[..5].iter().map(|story| story[0].clone()).collect();
    let response = client()
        .post(format!(
            "{}/_bulk?refresh=true&filter_path=items.*._id,errors",
            standby.url
        ))
        .header("content-type", "application/x-ndjson")
        .body(bulk_body(&bulk))
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.headers()["x-neardup-served-by"],
        leader_node.as_str()
    );
    assert_eq!(response.headers()["x-neardup-epoch"], "1");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["errors"], false, "{body}");
    assert!(
        body["items"][0]["index"].get("status").is_none(),
        "filter_path applied: {body}"
    );
    let (_, found) = support::send_json(
        reqwest::Method::POST,
        &format!("{}/{INDEX}/_search", osmem.url),
        &json!({"query": {"match_all": {}}, "size": 0, "track_total_hits": true}),
    )
    .await;
    assert_eq!(found["hits"]["total"]["value"], 5, "refreshed: {found}");
    // A single-document write too: the leader's stamp header comes back.
    let response = client()
        .put(format!("{}/{INDEX}/_doc/one", standby.url))
        .json(&json!({"title": bulk[0].title, "content": bulk[0].content}))
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status().as_u16(), 201);
    assert!(response.headers().contains_key("x-neardup-cluster-root"));
    assert_eq!(
        response.headers()["x-neardup-served-by"],
        leader_node.as_str()
    );

    // Role endpoints, as a load balancer reads them.
    let status_of = |url: String| async move {
        client()
            .get(url)
            .send()
            .await
            .expect("answer")
            .status()
            .as_u16()
    };
    wait_until_caught_up(&standby.url, &leader.url).await;
    assert_eq!(
        status_of(format!("{}/_neardup/replica/leader", leader.url)).await,
        200
    );
    assert_eq!(
        status_of(format!("{}/_neardup/replica/leader", standby.url)).await,
        503
    );
    assert_eq!(
        status_of(format!("{}/_neardup/replica/standby", standby.url)).await,
        200
    );
    assert_eq!(
        status_of(format!("{}/_neardup/replica/standby", leader.url)).await,
        503
    );
    let metrics = support::metrics_text(&standby.url).await;
    assert!(
        metrics.contains("neardup_replica_forwarded_writes_total 2"),
        "{metrics}"
    );
    assert!(metrics.contains("neardup_replica_role 1"), "{metrics}");
    assert!(
        support::metrics_text(&leader.url)
            .await
            .contains("neardup_replica_role 3")
    );
    // Reads and pass-through work on the standby, from its own forest.
    assert_eq!(
        stats(&standby.url).await["forest"],
        stats(&leader.url).await["forest"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_joins_a_running_group_from_the_chain_and_can_take_over() {
    let _one = ONE_AT_A_TIME.lock().await;
    let stories = corpus();
    let first: Vec<Article> = stories.iter().map(|story| story[0].clone()).collect();
    let osmem = Osmem::start();
    let mut leader = member(&osmem, "join", "a");
    wait_for_role(&leader.url, "leader", Duration::from_secs(20)).await;
    let bulks: Vec<Vec<Article>> = first
        .chunks(DOCUMENTS_PER_BULK / 2)
        .map(<[Article]>::to_vec)
        .collect();
    let (early, late) = bulks.split_at(bulks.len() / 2);
    for bulk in early {
        assert!(send(&leader.url, bulk).await.is_some());
    }
    // The new member starts while writes go on.
    let writer = {
        let (url, late) = (leader.url.clone(), late.to_vec());
        tokio::spawn(async move {
            for bulk in late {
                assert!(send(&url, &bulk).await.is_some());
            }
        })
    };
    let joined = member(&osmem, "join", "c");
    writer.await.expect("writer");
    wait_for_role(&joined.url, "standby", Duration::from_secs(20)).await;
    wait_until_caught_up(&joined.url, &leader.url).await;
    assert_eq!(
        stats(&joined.url).await["forest"],
        stats(&leader.url).await["forest"]
    );

    // The joined member is a full standby: it takes over, and a reprint of
    // a story written before it joined meets its original.
    leader.kill();
    wait_for_role(&joined.url, "leader", Duration::from_secs(10)).await;
    let reprint = stories[2][1].clone();
    assert!(
        send(&joined.url, std::slice::from_ref(&reprint))
            .await
            .is_some()
    );
    let stored = stamps_in(&osmem.url, INDEX).await;
    assert_eq!(
        stored[&reprint.id]["cluster_root"],
        stored[&stories[2][0].id]["cluster_root"]
    );
}

/// Sends `articles` to `url` in bulks of `per_bulk`, each acknowledged.
pub(crate) async fn load(url: &str, articles: &[Article], per_bulk: usize) {
    for bulk in articles.chunks(per_bulk) {
        assert!(send(url, bulk).await.is_some(), "bulk not acknowledged");
    }
}

/// Sends `signal` (`-STOP`, `-CONT`) to a member's process.
pub(crate) fn signal(member: &Sidecar, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &member.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}
