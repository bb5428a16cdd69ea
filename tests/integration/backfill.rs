//! Backfill against the real server (osmem-server): an index filled
//! straight into the cluster is stamped in place by the running sidecar
//! while clients write through it, across a `kill -9`; a document a client
//! rewrites meanwhile is left alone; the admin endpoints refuse remote peers
//! without the token; the offline command resumes and counts nothing twice.
//! Against a recording upstream, for what osmem-server cannot show: a lost
//! answer followed by a conflicting retry, Elasticsearch's `_pit`, and the
//! scroll fallback.

use crate::support;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Osmem, Sidecar, TempDir, client, get_json, send_json, stats};

const INDEX: &str = "news-adopted";
const HISTORY_DOCUMENTS: usize = 3_000;
const LIVE_DOCUMENTS: usize = 1_000;
const HOUR: i64 = 3_600_000;
/// Pairwise F1 of the backfilled grouping against `neardup stamp
/// --time-field` over the same documents in time order. Below 1 because the
/// sidecar sees the live copies of a story before the backfill reaches its
/// older copies (arrival order differs), and the forest's choices depend
/// on order; measured about 0.99 on this corpus.
const MIN_PAIRWISE_F1: f64 = 0.97;

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}

#[derive(Debug, Clone)]
struct Article {
    id: String,
    story: usize,
    title: String,
    content: String,
    time: i64,
}

impl Article {
    fn source(&self) -> Value {
        json!({
            "title": self.title,
            "content": self.content,
            "story": self.story,
            "published_at": self.time,
        })
    }
}

/// Texts of one story: an original made of demo sentences with half their
/// Han characters swapped (so originals differ), and a way to make reprints
/// (a credit line, one character changed, sometimes the last sentence cut).
struct Writer {
    sentences: Vec<String>,
    alphabet: Vec<char>,
    random: support::Xorshift,
}

impl Writer {
    fn new(seed: u64) -> Self {
        let sentences = support::demo_sentences(12);
        let mut alphabet: Vec<char> = sentences
            .iter()
            .flat_map(|sentence| sentence.chars())
            .filter(|character| ('\u{4e00}'..='\u{9fff}').contains(character))
            .filter(|character| !"一二三四五六七八九十百千万亿零〇两第".contains(*character))
            .collect();
        alphabet.sort_unstable();
        alphabet.dedup();
        Writer {
            sentences,
            alphabet,
            random: support::Xorshift(seed),
        }
    }

    fn swap(&mut self, text: &str) -> String {
        text.chars()
            .map(|character| {
                if ('\u{4e00}'..='\u{9fff}').contains(&character) && self.random.below(2) == 0 {
                    self.alphabet[self.random.below(self.alphabet.len())]
                } else {
                    character
                }
            })
            .collect()
    }

    /// `(title, parts)` of a new story.
    fn story(&mut self) -> (String, Vec<String>) {
        let parts: Vec<String> = (0..6)
            .map(|_| {
                let sentence = self.sentences[self.random.below(self.sentences.len())].clone();
                self.swap(&sentence)
            })
            .collect();
        let headline = self.sentences[self.random.below(self.sentences.len())].clone();
        let title = self.swap(&headline).chars().take(22).collect();
        (title, parts)
    }

    fn reprint(&mut self, parts: &[String], credit: usize) -> String {
        let mut copied = parts.to_vec();
        if self.random.below(2) == 0 {
            copied.pop();
        }
        let target = self.random.below(copied.len());
        let mut characters: Vec<char> = copied[target].chars().collect();
        let position = self.random.below(characters.len());
        if self.alphabet.contains(&characters[position]) {
            characters[position] = self.alphabet[self.random.below(self.alphabet.len())];
        }
        copied[target] = characters.into_iter().collect();
        format!(
            "（来源：{}）{}",
            ["晨报", "晚报", "商报", "日报", "快报", "周刊"][credit % 6],
            copied.concat()
        )
    }
}

/// The history (indexed straight into the cluster, times over the last six
/// days) and the live documents (written through the sidecar later: new
/// copies of recent stories and new stories; their times are set when
/// sent). No story spans the two hours around the retention line, so no
/// live-window document expires while the test runs.
struct Corpus {
    history: Vec<Article>,
    live: Vec<Article>,
}

fn corpus(now: i64) -> Corpus {
    let mut writer = Writer::new(0x0bac_f111_5eed);
    let mut history = Vec::new();
    let mut recent: Vec<(usize, String, Vec<String>)> = Vec::new();
    let line = now - 48 * HOUR;
    let mut story = 0;
    while history.len() < HISTORY_DOCUMENTS {
        let start = now - 144 * HOUR + (writer.random.below(143 * 60) as i64) * 60_000;
        let span_end = start + 6 * HOUR;
        if span_end > line - 2 * HOUR && start < line + 2 * HOUR {
            continue;
        }
        let (title, parts) = writer.story();
        history.push(Article {
            id: format!("h{story}-0"),
            story,
            title: title.clone(),
            content: parts.concat(),
            time: start,
        });
        for copy in 1..=(1 + writer.random.below(4)) {
            let time = (start + writer.random.below(6 * 60) as i64 * 60_000).min(now - 10 * 60_000);
            history.push(Article {
                id: format!("h{story}-{copy}"),
                story,
                title: title.clone(),
                content: writer.reprint(&parts, copy),
                time,
            });
        }
        if start > line {
            recent.push((story, title, parts));
        }
        story += 1;
    }
    history.truncate(HISTORY_DOCUMENTS);
    let mut live = Vec::new();
    let mut number = 0;
    while live.len() < LIVE_DOCUMENTS {
        if writer.random.below(10) < 7 && !recent.is_empty() {
            let (story, title, parts) = recent[writer.random.below(recent.len())].clone();
            let content = writer.reprint(&parts, number);
            live.push(Article {
                id: format!("l{number}"),
                story,
                title,
                content,
                time: 0,
            });
        } else {
            let (title, parts) = writer.story();
            live.push(Article {
                id: format!("l{number}"),
                story,
                title: title.clone(),
                content: parts.concat(),
                time: 0,
            });
            recent.push((story, title, parts));
            story += 1;
        }
        number += 1;
    }
    Corpus { history, live }
}

fn bulk_body(articles: &[Article]) -> String {
    let mut body = String::new();
    for article in articles {
        body.push_str(&json!({"index": {"_index": INDEX, "_id": article.id}}).to_string());
        body.push('\n');
        body.push_str(&article.source().to_string());
        body.push('\n');
    }
    body
}

async fn index_directly(server: &str, articles: &[Article]) {
    for chunk in articles.chunks(1_000) {
        let (status, answer) =
            support::post_bulk(&format!("{server}/_bulk"), bulk_body(chunk)).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["errors"], false, "{answer}");
    }
    let _ = client()
        .post(format!("{server}/{INDEX}/_refresh"))
        .send()
        .await;
}

/// Every document of the index, read from the server itself: id → source.
async fn all_documents(server: &str) -> BTreeMap<String, Value> {
    let _ = client()
        .post(format!("{server}/{INDEX}/_refresh"))
        .send()
        .await;
    let mut documents = BTreeMap::new();
    let mut after: Option<Value> = None;
    loop {
        let mut body = json!({"size": 2_000, "sort": [{"_id": "asc"}]});
        if let Some(after) = &after {
            body["search_after"] = after.clone();
        }
        let (status, found) = send_json(
            reqwest::Method::POST,
            &format!("{server}/{INDEX}/_search"),
            &body,
        )
        .await;
        assert_eq!(status, 200, "{found}");
        let hits = found["hits"]["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if hits.is_empty() {
            return documents;
        }
        for hit in &hits {
            documents.insert(
                hit["_id"].as_str().expect("id").to_string(),
                hit["_source"].clone(),
            );
        }
        after = hits.last().map(|hit| hit["sort"].clone());
    }
}

/// The `count` oldest-first articles of the history corpus.
fn oldest_articles(count: usize) -> Vec<Article> {
    let mut few: Vec<Article> = corpus(now_millis())
        .history
        .into_iter()
        .take(count)
        .collect();
    few.sort_by_key(|article| article.time);
    few
}

/// `POST /_neardup/backfill` with `request`; the job's first answer.
async fn start_backfill(sidecar: &str, request: &Value) -> Value {
    let (status, started) = send_json(
        reqwest::Method::POST,
        &format!("{sidecar}/_neardup/backfill"),
        request,
    )
    .await;
    assert_eq!(status, 200, "{started}");
    started
}

async fn backfill_status(sidecar: &str) -> Value {
    get_json(&format!("{sidecar}/_neardup/backfill")).await.1
}

async fn wait_for_state(sidecar: &str, state: &str, limit: Duration) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let status = backfill_status(sidecar).await;
        if status["state"] == state {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "backfill not {state} in time: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Pairwise precision and recall of grouping `left` against `right` (both
/// id → class), and their F1.
fn pairwise_f1(left: &HashMap<String, String>, right: &HashMap<String, String>) -> (f64, f64, f64) {
    let mut cells: HashMap<(&str, &str), u64> = HashMap::new();
    let mut left_sizes: HashMap<&str, u64> = HashMap::new();
    let mut right_sizes: HashMap<&str, u64> = HashMap::new();
    for (id, left_class) in left {
        let right_class = right.get(id).expect("same documents");
        *cells.entry((left_class, right_class)).or_default() += 1;
        *left_sizes.entry(left_class).or_default() += 1;
        *right_sizes.entry(right_class).or_default() += 1;
    }
    let pairs = |count: &u64| count * count.saturating_sub(1) / 2;
    let agreeing: u64 = cells.values().map(pairs).sum();
    let left_pairs: u64 = left_sizes.values().map(pairs).sum();
    let right_pairs: u64 = right_sizes.values().map(pairs).sum();
    let precision = agreeing as f64 / left_pairs.max(1) as f64;
    let recall = agreeing as f64 / right_pairs.max(1) as f64;
    (
        precision,
        recall,
        2.0 * precision * recall / (precision + recall).max(f64::MIN_POSITIVE),
    )
}

/// `neardup stamp --time-field published_at` over `documents` in time
/// order: id → cluster_root.
fn stamp_offline(documents: &BTreeMap<String, Value>) -> HashMap<String, String> {
    let mut ordered: Vec<(&String, &Value)> = documents.iter().collect();
    ordered
        .sort_by_key(|(id, source)| (source["published_at"].as_i64().unwrap_or(0), (*id).clone()));
    let mut input = String::new();
    for (id, source) in &ordered {
        let line = json!({
            "id": id,
            "title": source["title"],
            "content": source["content"],
            "published_at": source["published_at"],
        });
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["stamp", "--time-field", "published_at", "--format", "jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("neardup stamp");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("stamp output");
    feeder.join().expect("feeder").expect("write");
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|line| {
            let stamped: Value = serde_json::from_str(line).expect("JSON line");
            (
                stamped["id"].as_str().expect("id").to_string(),
                stamped["cluster_root"].as_str().expect("root").to_string(),
            )
        })
        .collect()
}

/// Writes the live documents through the sidecar in bulks of 50, each
/// document timed when first sent; a bulk that gets no answer (the sidecar
/// was killed) is sent again, to whatever address the sidecar has then.
/// Returns the documents as sent and the stamps each had right after its
/// write was acknowledged (read from the server itself).
async fn write_live(
    url: Arc<Mutex<String>>,
    server: String,
    articles: Vec<Article>,
) -> (Vec<Article>, HashMap<String, Value>) {
    let mut sent = Vec::new();
    let mut stamps = HashMap::new();
    for chunk in articles.chunks(50) {
        let mut chunk = chunk.to_vec();
        let time = now_millis();
        for article in &mut chunk {
            article.time = time;
        }
        let body = bulk_body(&chunk);
        loop {
            let target = url.lock().expect("url").clone();
            let answer = client()
                .post(format!("{target}/_bulk"))
                .header("content-type", "application/x-ndjson")
                .body(body.clone())
                .send()
                .await;
            let answered = match answer {
                Ok(response) if response.status().is_success() => {
                    response.json::<Value>().await.ok()
                }
                _ => None,
            };
            if let Some(answered) = answered {
                assert_eq!(answered["errors"], false, "{answered}");
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let ids: Vec<&str> = chunk.iter().map(|article| article.id.as_str()).collect();
        let (status, got) = send_json(
            reqwest::Method::POST,
            &format!("{server}/{INDEX}/_mget"),
            &json!({ "ids": ids }),
        )
        .await;
        assert_eq!(status, 200, "{got}");
        for document in got["docs"].as_array().expect("docs") {
            let source = &document["_source"];
            assert!(
                source["cluster_root"].is_string(),
                "live write unstamped: {document}"
            );
            stamps.insert(
                document["_id"].as_str().expect("id").to_string(),
                json!([source["cluster_root"], source["simhash"]]),
            );
        }
        sent.extend(chunk);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (sent, stamps)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_adopted_index_is_stamped_oldest_first_across_a_kill_and_groups_like_offline_stamping() {
    let now = now_millis();
    let Corpus { history, live } = corpus(now);
    let osmem = Osmem::start();
    index_directly(&osmem.url, &history).await;

    let state = TempDir::new("backfill-state");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let url = Arc::new(Mutex::new(sidecar.url.clone()));
    let request = json!({
        "index": INDEX,
        "time_field": "published_at",
        "max_docs_per_second": 1_500,
        "page_size": 250,
    });
    let (status, started) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["state"], "running");

    let writer = tokio::spawn(write_live(url.clone(), osmem.url.clone(), live));

    // Kill -9 in the middle of the job.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let status = backfill_status(&sidecar.url).await;
        assert_ne!(status["state"], "failed", "{status}");
        if status["documents"]["seen"].as_u64().unwrap_or(0) >= 1_250 {
            break;
        }
        assert!(Instant::now() < deadline, "backfill too slow: {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sidecar.kill();

    // Restart on the same state: the job shows as interrupted, then resumes.
    let sidecar = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    *url.lock().expect("url") = sidecar.url.clone();
    let interrupted = backfill_status(&sidecar.url).await;
    assert_eq!(interrupted["state"], "interrupted", "{interrupted}");
    let seen_before_kill = interrupted["documents"]["seen"].as_u64().expect("seen");
    assert!(seen_before_kill >= 1_000, "{interrupted}");
    let (status, resumed) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 200, "{resumed}");
    let done = wait_for_state(&sidecar.url, "done", Duration::from_secs(300)).await;
    let (live, live_stamps) = writer.await.expect("live writer");

    // Counted nothing twice: every outcome once per document seen, nothing
    // stamped twice, nothing rewritten by a client.
    let counts = &done["documents"];
    let seen = counts["seen"].as_u64().expect("seen");
    let stamped = counts["stamped"].as_u64().expect("stamped");
    assert!(seen >= HISTORY_DOCUMENTS as u64, "{done}");
    assert!(
        seen <= (HISTORY_DOCUMENTS + LIVE_DOCUMENTS) as u64,
        "{done}"
    );
    assert!(stamped <= HISTORY_DOCUMENTS as u64, "{done}");
    assert!(stamped + 250 >= HISTORY_DOCUMENTS as u64, "{done}");
    assert_eq!(
        stamped
            + counts["already_stamped"].as_u64().expect("already")
            + counts["skipped"].as_u64().expect("skipped"),
        seen,
        "{done}"
    );
    assert_eq!(counts["skipped_conflict"], 0, "{done}");
    assert!(
        counts["stamped_history"].as_u64().expect("history") > 0,
        "{done}"
    );
    // The answer says why the history does not show in stats.
    assert!(
        done["note"]
            .as_str()
            .is_some_and(|note| note.contains("history frame")),
        "{done}"
    );

    // Every document stamped; the live ones kept their stamps.
    let documents = all_documents(&osmem.url).await;
    assert_eq!(documents.len(), HISTORY_DOCUMENTS + LIVE_DOCUMENTS);
    for (id, source) in &documents {
        assert!(
            source["cluster_root"].is_string() && source["simhash"].is_string(),
            "{id} unstamped: {source}"
        );
    }
    for (id, stamps) in &live_stamps {
        let source = &documents[id];
        assert_eq!(
            &json!([source["cluster_root"], source["simhash"]]),
            stamps,
            "live document {id} was restamped"
        );
    }

    // The live forest counts each document of the window once: the history
    // documents inside the retention, and the live ones.
    let checkpoint: Value = serde_json::from_slice(
        &std::fs::read(state.path().join("backfill.checkpoint")).expect("checkpoint"),
    )
    .expect("checkpoint JSON");
    let line = checkpoint["history_before"].as_i64().expect("history line");
    let in_window = history
        .iter()
        .filter(|article| article.time >= line)
        .count();
    let forest = stats(&sidecar.url).await;
    assert_eq!(
        forest["forest"]["documents"],
        (in_window + live.len()) as u64,
        "{forest}"
    );

    // The grouping equals offline stamping in time order, within noise.
    let backfilled: HashMap<String, String> = documents
        .iter()
        .map(|(id, source)| {
            (
                id.clone(),
                source["cluster_root"].as_str().expect("root").to_string(),
            )
        })
        .collect();
    let offline = stamp_offline(&documents);
    let (precision, recall, f1) = pairwise_f1(&backfilled, &offline);
    eprintln!(
        "backfill vs stamp --time-field: pairwise precision {precision:.4}, recall {recall:.4}, F1 {f1:.4}"
    );
    assert!(
        f1 >= MIN_PAIRWISE_F1,
        "grouping differs from offline stamping: precision {precision}, recall {recall}"
    );
}

/// An address of this machine other than loopback, if it has one.
fn non_loopback_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // Connecting a UDP socket sends nothing; it only picks the route.
    socket.connect("192.0.2.1:9").ok()?;
    let address = socket.local_addr().ok()?.ip();
    (!address.is_loopback() && !address.is_unspecified()).then_some(address)
}

/// Set in the network namespace a test runs itself in: the address (not
/// loopback) its loopback device holds there.
const NAMESPACE_ADDRESS: &str = "NEARDUP_TEST_NAMESPACE_ADDRESS";

/// TEST-NET-2 (RFC 5737): never routed, so it stands for no real peer.
const REMOTE_ADDRESS: &str = "198.51.100.7";

/// Runs test `name` of this binary again in a network namespace of its
/// own (`unshare` of util-linux with a user namespace, so no privilege is
/// needed where user namespaces are allowed; `ip` of iproute2), whose
/// loopback device also holds [`REMOTE_ADDRESS`]: a connection to that
/// address comes from a peer that is not loopback, on any machine. The
/// run is also the first process of a process namespace, so whatever it
/// started ends with it (a process left behind would hold the output open).
/// `false` when no namespace can be made here; panics with the run's
/// output when the test fails there.
fn run_in_a_network_namespace(name: &str) -> bool {
    let setup = format!("ip link set lo up && ip addr add {REMOTE_ADDRESS}/32 dev lo");
    let namespace = |script: &str| {
        let mut command = Command::new("unshare");
        command
            .args(["--net", "--map-root-user", "--pid", "--kill-child"])
            .args(["sh", "-c", script])
            .stdin(Stdio::null());
        command
    };
    let possible = namespace(&setup)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !possible {
        return false;
    }
    let test_binary = std::env::current_exe().expect("the test binary");
    let output = namespace(&format!("{setup} && exec \"$0\" \"$@\""))
        .arg(test_binary)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(NAMESPACE_ADDRESS, REMOTE_ADDRESS)
        // The venv is made out here, where the network is.
        .env("NEARDUP_OSMEM", support::osmem_binary())
        .output()
        .expect("unshare");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "in a network namespace: {said}");
    assert!(said.contains("1 passed"), "the test ran there: {said}");
    true
}

/// Peers that are not loopback, on any machine: in a network namespace of
/// its own where one can be made, else from this machine's own address
/// that is not loopback. With neither, it fails under CI and skips
/// elsewhere, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_changing_endpoints_answer_remote_peers_only_with_the_admin_token() {
    let address = match std::env::var(NAMESPACE_ADDRESS) {
        Ok(address) => address.parse().expect("an IP address"),
        Err(_) => {
            let name =
                "backfill::state_changing_endpoints_answer_remote_peers_only_with_the_admin_token";
            if tokio::task::block_in_place(|| run_in_a_network_namespace(name)) {
                return;
            }
            let Some(address) = support::needed(
                non_loopback_address(),
                "a network namespace (unshare, ip, user namespaces) or an address other than loopback",
            ) else {
                return;
            };
            address
        }
    };
    assert!(!address.is_loopback(), "{address}");
    let osmem = Osmem::start();
    let now = now_millis();
    let few: Vec<Article> = corpus(now).history.into_iter().take(20).collect();
    index_directly(&osmem.url, &few).await;
    let mut child = KilledOnDrop(
        Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["serve", "--upstream", &osmem.url, "--listen", "0.0.0.0:0"])
            .args([
                "--state-dir",
                "none",
                "--admin-token",
                "s3cret",
                "--allow-plain-http",
            ])
            .env("NEARDUP_LOG", "error")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("neardup serve"),
    );
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.0.stdout.take().expect("stdout")),
        &mut first,
    )
    .expect("first line");
    let listening: Value = serde_json::from_str(&first).expect("JSON");
    let port = listening["listen"]
        .as_str()
        .and_then(|url| url.rsplit(':').next())
        .expect("port")
        .to_string();
    let remote = format!("http://{address}:{port}");
    let local = format!("http://127.0.0.1:{port}");
    let start = json!({"index": INDEX, "time_field": "published_at"});
    let post = |base: &str, token: Option<&str>| {
        let mut request = client()
            .post(format!("{base}/_neardup/backfill"))
            .header("content-type", "application/json")
            .body(start.to_string());
        if let Some(token) = token {
            request = request.header("x-neardup-admin-token", token);
        }
        request.send()
    };

    for token in [None, Some("wrong"), Some("s3cre")] {
        let (status, refused) = support::json_of(post(&remote, token).await.expect("POST")).await;
        assert_eq!(status, 403, "{refused}");
        assert_eq!(refused["error"]["type"], "security_exception", "{refused}");
        assert_eq!(refused["status"], 403);
    }
    let (status, refused) = support::json_of(
        client()
            .delete(format!("{remote}/_neardup/backfill"))
            .send()
            .await
            .expect("DELETE"),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    // Reading stays open; the cluster's own Authorization is no admin token.
    let (status, progress) = get_json(&format!("{remote}/_neardup/backfill")).await;
    assert_eq!((status, &progress["state"]), (200, &json!("idle")));
    let (status, _) = support::json_of(
        client()
            .post(format!("{remote}/_neardup/backfill"))
            .header("authorization", "Bearer s3cret")
            .body(start.to_string())
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(status, 403);

    let (status, started) =
        support::json_of(post(&remote, Some("s3cret")).await.expect("POST")).await;
    assert_eq!(status, 200, "{started}");
    wait_for_state(&local, "done", Duration::from_secs(60)).await;
    let (status, again) = support::json_of(post(&local, None).await.expect("POST")).await;
    assert_eq!(status, 200, "loopback needs no token: {again}");
    wait_for_state(&local, "done", Duration::from_secs(60)).await;
}

/// A child process killed when dropped, also when an assertion fails.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_rewritten_by_a_client_during_the_backfill_keeps_its_own_stamp() {
    let osmem = Osmem::start();
    let few = oldest_articles(60);
    index_directly(&osmem.url, &few).await;
    let sidecar = Sidecar::start(&osmem.url, &[]);
    // Slow, so the rewrite lands after the read's point in time opened and
    // before the job reaches the newest document.
    start_backfill(
        &sidecar.url,
        &json!({"index": INDEX, "time_field": "published_at", "max_docs_per_second": 20, "page_size": 5}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while backfill_status(&sidecar.url).await["documents"]["seen"] == 0 {
        assert!(Instant::now() < deadline, "the job did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let newest = few.last().expect("documents").clone();
    let mut rewritten = newest.clone();
    rewritten.content = format!("{}（更正）", newest.content);
    let (status, answer) =
        support::post_bulk(&format!("{}/_bulk", sidecar.url), bulk_body(&[rewritten])).await;
    assert_eq!(status, 200, "{answer}");
    let (_, got) = get_json(&format!("{}/{INDEX}/_doc/{}", osmem.url, newest.id)).await;
    let client_stamp = got["_source"]["cluster_root"].clone();
    assert!(client_stamp.is_string(), "{got}");

    let done = wait_for_state(&sidecar.url, "done", Duration::from_secs(60)).await;
    assert_eq!(done["documents"]["skipped_conflict"], 1, "{done}");
    assert_eq!(done["documents"]["stamped"], 59, "{done}");
    let (_, after) = get_json(&format!("{}/{INDEX}/_doc/{}", osmem.url, newest.id)).await;
    assert_eq!(after["_source"]["cluster_root"], client_stamp, "{after}");
    assert!(
        after["_source"]["content"]
            .as_str()
            .is_some_and(|text| text.ends_with("（更正）"))
    );
}

#[test]
fn the_offline_command_resumes_after_a_kill_and_counts_nothing_twice() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let osmem = Osmem::start();
    let now = now_millis();
    // Recent documents only: all of them belong to the live window.
    let mut recent: Vec<Article> = corpus(now)
        .history
        .into_iter()
        .filter(|article| article.time > now - 40 * HOUR)
        .take(800)
        .collect();
    recent.sort_by_key(|article| article.time);
    runtime.block_on(index_directly(&osmem.url, &recent));
    let state = TempDir::new("offline-state");
    let backfill = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
        command
            .args(["backfill", "--upstream", &osmem.url, "--index", INDEX])
            .args(["--time-field", "published_at", "--page-size", "50"])
            .arg("--state-dir")
            .arg(state.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    };
    let mut first = backfill()
        .args(["--max-docs-per-second", "300"])
        .spawn()
        .expect("neardup backfill");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = std::fs::read(state.path().join("backfill.checkpoint"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
            .and_then(|checkpoint| checkpoint["counts"]["seen"].as_u64())
            .unwrap_or(0);
        if seen >= 200 {
            break;
        }
        assert!(Instant::now() < deadline, "the first run made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.kill().expect("kill");
    let _ = first.wait();

    let second = backfill().output().expect("second run");
    let summary = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{summary}");
    assert!(summary.contains("neardup backfill: done"), "{summary}");
    let documents = runtime.block_on(all_documents(&osmem.url));
    assert!(
        documents
            .values()
            .all(|source| source["cluster_root"].is_string())
    );

    // The sidecar starts from that state, each document counted once.
    let sidecar = Sidecar::start_with_state(&osmem.url, &state.path().to_string_lossy(), &[]);
    let forest = runtime.block_on(stats(&sidecar.url));
    assert_eq!(
        forest["forest"]["documents"],
        recent.len() as u64,
        "{forest}"
    );
    assert_eq!(
        forest["cluster_outcomes"]["tracked_keys"],
        recent.len() as u64,
        "{forest}"
    );
}

/// A fault the real server cannot produce on demand: the answer to the
/// stamps' bulk is lost (502) although the updates went through, so the
/// retry meets 409s on documents that carry exactly the planned stamps.
/// Those count as stamped, not as rewritten by a client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_on_a_document_this_job_already_stamped_counts_as_stamped() {
    use axum::http::StatusCode;
    let sent_doc: Arc<Mutex<Option<Value>>> = Arc::default();
    let searches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let bulks = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (sent, searched, bulked) = (sent_doc.clone(), searches.clone(), bulks.clone());
    let upstream = support::RecordingUpstream::start(move |request| {
        let json = |status: StatusCode, body: Value| {
            (
                status,
                vec![("content-type".to_string(), "application/json".to_string())],
                body.to_string().into_bytes(),
            )
        };
        let path = request.path_and_query.as_str();
        if path.starts_with("/news/_search/point_in_time") {
            return json(StatusCode::OK, json!({"pit_id": "pit-1"}));
        }
        if path == "/_search" {
            let hits = if searched.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                json!([{
                    "_index": "news", "_id": "1", "_seq_no": 0, "_primary_term": 1,
                    "_source": {"title": "标题", "content": "北京市今日发布新的交通管理规定，要求所有车辆在高峰时段限行，违者将被处以罚款。"},
                    "sort": ["1"]
                }])
            } else {
                json!([])
            };
            return json(StatusCode::OK, json!({"hits": {"total": {"value": 1}, "hits": hits}}));
        }
        if path == "/_bulk" {
            let text = String::from_utf8_lossy(&request.body).to_string();
            if let Some(doc) = text.lines().nth(1).and_then(|line| serde_json::from_str::<Value>(line).ok()) {
                *sent.lock().expect("sent") = Some(doc["doc"].clone());
            }
            if bulked.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return json(StatusCode::BAD_GATEWAY, json!({"error": "lost"}));
            }
            return json(
                StatusCode::OK,
                json!({"errors": true, "items": [{"update": {"_index": "news", "_id": "1", "status": 409,
                    "error": {"type": "version_conflict_engine_exception", "reason": "[1]: version conflict"}}}]}),
            );
        }
        if path == "/_mget" {
            let mut source = json!({"title": "标题", "content": "北京市今日发布新的交通管理规定，要求所有车辆在高峰时段限行，违者将被处以罚款。"});
            if let Some(Value::Object(doc)) = sent.lock().expect("sent").clone() {
                for (field, value) in doc {
                    source[field] = value;
                }
            }
            return json(
                StatusCode::OK,
                json!({"docs": [{"_index": "news", "_id": "1", "found": true, "_source": source}]}),
            );
        }
        json(StatusCode::OK, json!({}))
    })
    .await;
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let (status, started) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &json!({"index": "news"}),
    )
    .await;
    assert_eq!(status, 200, "{started}");
    let done = wait_for_state(&sidecar.url, "done", Duration::from_secs(30)).await;
    assert_eq!(
        bulks.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one retry"
    );
    assert_eq!(done["documents"]["stamped"], 1, "{done}");
    assert_eq!(done["documents"]["skipped_conflict"], 0, "{done}");
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 1);
}

/// A recording upstream shaped like a cluster without OpenSearch's
/// point-in-time API: `es` answers Elasticsearch's `_pit`, otherwise only
/// scrolls work. Two documents; every stamp accepted.
async fn cluster_without_opensearch_pit(es: bool) -> support::RecordingUpstream {
    use axum::http::StatusCode;
    let pages = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    support::RecordingUpstream::start(move |request| {
        let json = |status: StatusCode, body: Value| {
            (
                status,
                vec![("content-type".to_string(), "application/json".to_string())],
                body.to_string().into_bytes(),
            )
        };
        let path = request.path_and_query.as_str();
        let no_handler = |path: &str| {
            json(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("no handler found for uri [{path}] and method [POST]")}),
            )
        };
        let hits = || {
            json!([
                {"_index": "news", "_id": "1", "_seq_no": 3, "_primary_term": 1,
                 "_source": {"title": "标题一", "content": "北京市今日发布新的交通管理规定，要求所有车辆在高峰时段限行。", "published_at": 1},
                 "sort": [1, "1"]},
                {"_index": "news", "_id": "2", "_seq_no": 4, "_primary_term": 1,
                 "_source": {"title": "标题二", "content": "上海证券交易所今天宣布推出新的科技板块，吸引了大量投资者关注。", "published_at": 2},
                 "sort": [2, "2"]}
            ])
        };
        if path.starts_with("/news/_search/point_in_time") {
            return no_handler(path);
        }
        if path.starts_with("/news/_pit") {
            return if es {
                json(StatusCode::OK, json!({"id": "es-pit"}))
            } else {
                no_handler(path)
            };
        }
        let first = || pages.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
        if (es && path == "/_search") || (!es && path.starts_with("/news/_search?scroll=")) {
            let page = if first() { hits() } else { json!([]) };
            return json(
                StatusCode::OK,
                json!({"_scroll_id": "scroll-1", "pit_id": "es-pit", "hits": {"total": {"value": 2}, "hits": page}}),
            );
        }
        if path == "/_search/scroll" && request.method == axum::http::Method::POST {
            return json(StatusCode::OK, json!({"_scroll_id": "scroll-1", "hits": {"hits": []}}));
        }
        if path == "/_bulk" {
            let items: Vec<Value> = String::from_utf8_lossy(&request.body)
                .lines()
                .step_by(2)
                .map(|_| json!({"update": {"status": 200, "result": "updated"}}))
                .collect();
            return json(StatusCode::OK, json!({"errors": false, "items": items}));
        }
        json(StatusCode::OK, json!({}))
    })
    .await
}

/// Runs a backfill with the cluster credentials `Basic bmVhcmR1cDp4`.
async fn backfill_against(upstream: &support::RecordingUpstream) -> Value {
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let (status, started) = support::json_of(
        client()
            .post(format!("{}/_neardup/backfill", sidecar.url))
            .header("content-type", "application/json")
            .header("authorization", "Basic bmVhcmR1cDp4")
            .body(json!({"index": "news", "time_field": "published_at"}).to_string())
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(status, 200, "{started}");
    wait_for_state(&sidecar.url, "done", Duration::from_secs(30)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_point_in_time_api_the_backfill_reads_by_scroll() {
    let upstream = cluster_without_opensearch_pit(false).await;
    let done = backfill_against(&upstream).await;
    assert_eq!(done["reader"], "scroll", "{done}");
    assert_eq!(done["documents"]["stamped"], 2, "{done}");
    let recorded = upstream.recorded();
    let opened = recorded
        .iter()
        .find(|request| request.path_and_query.starts_with("/news/_search?scroll="))
        .expect("a scroll");
    let body: Value = serde_json::from_slice(&opened.body).expect("JSON");
    assert_eq!(body["sort"][0]["published_at"]["order"], "asc", "{body}");
    assert_eq!(body["sort"][1]["_id"]["order"], "asc", "{body}");
    assert_eq!(body["seq_no_primary_term"], true);
    let bulk = recorded
        .iter()
        .find(|request| request.path_and_query == "/_bulk")
        .expect("stamps");
    let action: Value = serde_json::from_str(
        String::from_utf8_lossy(&bulk.body)
            .lines()
            .next()
            .expect("line"),
    )
    .expect("JSON");
    assert_eq!(
        action,
        json!({"update": {"_index": "news", "_id": "1", "if_seq_no": 3, "if_primary_term": 1}})
    );
    assert!(recorded.iter().any(|request| {
        request.method == axum::http::Method::DELETE && request.path_and_query == "/_search/scroll"
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_elasticsearch_the_backfill_reads_through_its_pit_api() {
    let upstream = cluster_without_opensearch_pit(true).await;
    let done = backfill_against(&upstream).await;
    assert_eq!(done["reader"], "pit", "{done}");
    assert_eq!(done["documents"]["stamped"], 2, "{done}");
    let recorded = upstream.recorded();
    let search = recorded
        .iter()
        .find(|request| request.path_and_query == "/_search")
        .expect("a search");
    let body: Value = serde_json::from_slice(&search.body).expect("JSON");
    assert_eq!(body["pit"]["id"], "es-pit", "{body}");
    // The job's requests carry the credentials of the call that started it.
    for request in recorded
        .iter()
        .filter(|request| request.path_and_query != "/")
    {
        assert_eq!(
            request
                .headers
                .get("authorization")
                .and_then(|value| value.to_str().ok()),
            Some("Basic bmVhcmR1cDp4"),
            "{}",
            request.path_and_query
        );
    }
    assert!(recorded.iter().any(|request| {
        request.method == axum::http::Method::DELETE && request.path_and_query == "/_pit"
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_backfill_stops_after_its_page_and_a_new_post_resumes_where_it_stopped() {
    let osmem = Osmem::start();
    let now = now_millis();
    let few: Vec<Article> = corpus(now).history.into_iter().take(200).collect();
    index_directly(&osmem.url, &few).await;
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let request = json!({"index": INDEX, "time_field": "published_at", "max_docs_per_second": 100, "page_size": 10});
    let started = Instant::now();
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let (status, busy) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 409, "one job at a time: {busy}");
    assert_eq!(busy["error"]["type"], "resource_already_exists_exception");
    let deadline = Instant::now() + Duration::from_secs(30);
    while backfill_status(&sidecar.url).await["documents"]["seen"] == 0 {
        assert!(Instant::now() < deadline, "the job did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, cancelling) = json_of_delete(&format!("{}/_neardup/backfill", sidecar.url)).await;
    assert_eq!(status, 200, "{cancelling}");
    assert_eq!(cancelling["cancel_requested"], true);
    let cancelled = wait_for_state(&sidecar.url, "cancelled", Duration::from_secs(30)).await;
    let seen = cancelled["documents"]["seen"].as_u64().expect("seen");
    assert!((1..200).contains(&seen), "{cancelled}");
    let in_stats = stats(&sidecar.url).await;
    assert_eq!(in_stats["backfill"]["state"], "cancelled", "{in_stats}");

    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/backfill", sidecar.url),
        &request,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let done = wait_for_state(&sidecar.url, "done", Duration::from_secs(60)).await;
    assert_eq!(done["documents"]["seen"], 200, "{done}");
    // The total is the index's, not what the resumed read had left.
    assert_eq!(done["documents"]["total"], 200, "{done}");
    assert!(done["eta_seconds"].is_null(), "{done}");
    assert_eq!(done["documents"]["stamped"], 200, "{done}");
    assert_eq!(done["documents"]["already_stamped"], 0, "{done}");
    // 200 documents at 100 per second: at least about two seconds.
    assert!(started.elapsed() >= Duration::from_millis(1_500));
    let metrics = support::metrics_text(&sidecar.url).await;
    assert!(
        metrics.contains("neardup_backfill_documents_total{outcome=\"stamped\"} 200"),
        "{metrics}"
    );
    assert!(metrics.contains("neardup_backfill_running 0"), "{metrics}");
}

async fn json_of_delete(url: &str) -> (u16, Value) {
    support::json_of(client().delete(url).send().await.expect("DELETE")).await
}

#[test]
fn a_time_field_the_index_lacks_or_that_holds_no_time_is_named_before_reading() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let osmem = Osmem::start();
    runtime.block_on(index_directly(&osmem.url, &oldest_articles(20)));
    let state = TempDir::new("time-field-state");
    for (field, expected) in [("pubdate", "has no such field"), ("title", "text")] {
        let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["backfill", "--upstream", &osmem.url, "--index", INDEX, "-q"])
            .args(["--time-field", field, "--state-dir"])
            .arg(state.path())
            .stdin(Stdio::null())
            .output()
            .expect("neardup backfill");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "--time-field {field} was accepted: {stderr}"
        );
        assert!(stderr.contains(expected), "--time-field {field}: {stderr}");
    }
}

/// Against a server that speaks Elasticsearch 8's API (noida-db): sorting
/// on `_id` is refused there, so the default tiebreak becomes the point in
/// time's own `_shard_doc`, and the job stamps every document, across a
/// cancel and a resume.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_an_elasticsearch_8_api_the_default_tiebreak_is_its_shard_doc() {
    let noida = support::Noida::start();
    let few = oldest_articles(120);
    index_directly(&noida.url, &few).await;
    let sidecar = Sidecar::start(&noida.url, &[]);
    start_backfill(
        &sidecar.url,
        &json!({"index": INDEX, "time_field": "published_at", "page_size": 10, "max_docs_per_second": 200}),
    )
    .await;
    // Cancel after some pages; the resume starts a new point in time.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _ = client()
        .delete(format!("{}/_neardup/backfill", sidecar.url))
        .send()
        .await;
    let stopped = wait_for_state(&sidecar.url, "cancelled", Duration::from_secs(30)).await;
    assert_eq!(stopped["reader"], "pit", "{stopped}");
    start_backfill(
        &sidecar.url,
        &json!({"index": INDEX, "time_field": "published_at", "page_size": 10}),
    )
    .await;
    let done = wait_for_state(&sidecar.url, "done", Duration::from_secs(60)).await;
    assert_eq!(done["reader"], "pit", "{done}");
    let _ = client()
        .post(format!("{}/{INDEX}/_refresh", noida.url))
        .send()
        .await;
    let (status, found) = send_json(
        reqwest::Method::POST,
        &format!("{}/{INDEX}/_search", noida.url),
        &json!({"size": 1000, "query": {"match_all": {}}}),
    )
    .await;
    assert_eq!(status, 200, "{found}");
    let hits = found["hits"]["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(hits.len(), few.len());
    let unstamped: Vec<&Value> = hits
        .iter()
        .filter(|hit| !hit["_source"]["cluster_root"].is_string())
        .collect();
    assert!(
        unstamped.is_empty(),
        "{} unstamped: {:?}",
        unstamped.len(),
        unstamped.first()
    );
    // The instant at the resume point is read again (its documents are
    // known by their stamps), so at least every document was seen.
    assert!(
        done["documents"]["seen"].as_u64() >= Some(few.len() as u64),
        "{done}"
    );
}
