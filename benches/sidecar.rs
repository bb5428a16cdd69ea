//! `cargo bench --bench sidecar [-- ROUNDS]`: what the sidecar costs.
//!
//! 1. Proxy overhead: the same bulk load of ~3 KB Chinese articles (a third
//!    of them reprints with small edits) straight into osmem-server and
//!    through `neardup serve` in front of it, rounds alternating, each round
//!    into a fresh index. Reports the median docs/s of each and their ratio.
//! 2. The sidecar alone: the same load through `neardup serve` in front of
//!    a fast in-process upstream that only answers (so the sidecar is the
//!    bottleneck), from 4 concurrent clients. Reports the median docs/s.
//!    With `NEARDUP_OVERLAP_STREAM=FILE`, the load is that file's documents
//!    instead (each round to a new sidecar); `NEARDUP_BENCH_PART=alone`
//!    runs only this part.
//!
//! 3. With `--standby`, only this (and the same load sent to the standby,
//!    which forwards it to the leader): the same load into osmem-server through
//!    a lone sidecar and through the leader of a replica group with one
//!    standby attached (docs/standby.md), rounds alternating. Reports the
//!    median docs/s of each, their ratio, and the records the group wrote.
//!
//! The articles are generated from the repo's own demo corpus: its
//! sentences, half their characters swapped, so every original differs.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::{Osmem, RecordingUpstream, Sidecar, client};

const DOCS_PER_BULK: usize = 500;
const TARGET_ARTICLE_BYTES: usize = 3_000;

fn sentences() -> Vec<String> {
    support::demo_sentences(8)
}

/// `count` articles of about 3 KB; every third is a reprint of an earlier
/// one with a sentence dropped and a credit line added.
fn articles(count: usize, seed: u64) -> Vec<Value> {
    let pool = sentences();
    let mut alphabet: Vec<char> = pool.iter().flat_map(|sentence| sentence.chars()).collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    let mut random = support::Xorshift(seed | 1);
    let mut articles: Vec<Value> = Vec::with_capacity(count);
    for number in 0..count {
        if number % 3 == 2 && number > 3 {
            let original = &articles[random.below(number)];
            let content = original["content"].as_str().unwrap_or_default();
            let mut parts: Vec<&str> = content.split_inclusive('。').collect();
            if parts.len() > 4 {
                parts.remove(random.below(parts.len()));
            }
            articles.push(json!({
                "title": original["title"],
                "content": format!("来源：转载{}网。{}", number % 17, parts.concat()),
                "source": format!("outlet-{}", number % 23),
            }));
            continue;
        }
        // Sentences of the pool with half their characters replaced by
        // others of the pool's alphabet: the character statistics of real
        // text, but (like real originals) hardly a 5-gram in common.
        let mut content = String::new();
        while content.len() < TARGET_ARTICLE_BYTES {
            for character in pool[random.below(pool.len())].chars() {
                if random.below(2) == 0 && !matches!(character, '。' | '，' | '！' | '？') {
                    content.push(alphabet[random.below(alphabet.len())]);
                } else {
                    content.push(character);
                }
            }
        }
        articles.push(json!({
            "title": format!("{}（{}）", pool[random.below(pool.len())].chars().take(20).collect::<String>(), number),
            "content": content,
            "source": format!("outlet-{}", number % 23),
        }));
    }
    articles
}

fn bulk_bodies(articles: &[Value], index: &str) -> Vec<String> {
    articles
        .chunks(DOCS_PER_BULK)
        .map(|chunk| {
            let mut body = String::new();
            for article in chunk {
                body.push_str(&json!({"index": {"_index": index}}).to_string());
                body.push('\n');
                body.push_str(&article.to_string());
                body.push('\n');
            }
            body
        })
        .collect()
}

/// Bulk bodies of a JSON-lines file's documents (`NEARDUP_OVERLAP_STREAM`:
/// `python3 ../shared/bench/overlap.py N > FILE`), in its order.
fn stream_bodies(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("readable stream");
    let lines: Vec<&str> = text.lines().filter(|line| !line.is_empty()).collect();
    lines
        .chunks(DOCS_PER_BULK)
        .map(|chunk| {
            let mut body = String::new();
            for line in chunk {
                body.push_str("{\"index\":{\"_index\":\"stream\"}}\n");
                body.push_str(line);
                body.push('\n');
            }
            body
        })
        .collect()
}

/// Sends `bodies` from `clients` concurrent clients; docs/s.
async fn load(url: &str, bodies: Vec<String>, clients: usize) -> f64 {
    // An action line and a source line per document.
    let documents = bodies
        .iter()
        .map(|body| body.bytes().filter(|&byte| byte == b'\n').count() / 2)
        .sum::<usize>();
    // Taken from the end: the first body first.
    let mut bodies = bodies;
    bodies.reverse();
    let queue = std::sync::Arc::new(std::sync::Mutex::new(bodies));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients {
        let queue = queue.clone();
        let url = format!("{url}/_bulk");
        workers.push(tokio::spawn(async move {
            let http = client();
            loop {
                let Some(body) = queue.lock().expect("queue").pop() else {
                    break;
                };
                let response = http
                    .post(&url)
                    .header("content-type", "application/x-ndjson")
                    .body(body)
                    .send()
                    .await
                    .expect("bulk");
                let status = response.status();
                if status != 200 {
                    panic!("{status}: {}", response.text().await.unwrap_or_default());
                }
                let answer: Value = response.json().await.expect("JSON");
                assert_eq!(answer["errors"], false, "bulk errors");
            }
        }));
    }
    for worker in workers {
        worker.await.expect("worker");
    }
    documents as f64 / started.elapsed().as_secs_f64()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Ids the fast upstream gives, unique as a cluster's own: with the same
/// ids in every answer, each bulk replaced the documents of the one before
/// and the engine never held more than one bulk (the bench measured an
/// engine of 500 nodes until session 9).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Answers a bulk request with one created item per action, cheaply.
fn fast_answer(request: &support::Recorded) -> (StatusCode, Vec<(String, String)>, Vec<u8>) {
    let actions = request
        .body
        .split(|&byte| byte == b'\n')
        .filter(|line| line.starts_with(b"{\"index\""))
        .count();
    let mut body = String::with_capacity(actions * 80 + 40);
    body.push_str("{\"took\":1,\"errors\":false,\"items\":[");
    let first = NEXT_ID.fetch_add(actions as u64, std::sync::atomic::Ordering::Relaxed);
    for position in 0..actions {
        if position > 0 {
            body.push(',');
        }
        let id = first + position as u64;
        body.push_str(&format!(
            "{{\"index\":{{\"_index\":\"bench\",\"_id\":\"{id}\",\"status\":201,\"result\":\"created\"}}}}"
        ));
    }
    body.push_str("]}");
    (
        StatusCode::OK,
        vec![("content-type".into(), "application/json".into())],
        body.into_bytes(),
    )
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|argument| argument.parse().ok())
        .unwrap_or(5);
    if std::env::args().any(|argument| argument == "--list" || argument == "--no-run") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let data = articles(6_000, 42);
        let average_bytes =
            data.iter().map(|article| article.to_string().len()).sum::<usize>() / data.len();
        println!(
            "articles: {} of {average_bytes} bytes on average, bulks of {DOCS_PER_BULK}",
            data.len()
        );

        if std::env::args().any(|argument| argument == "--standby") {
            standby_cost(&data[..3_000], rounds).await;
            return;
        }

        // 1. Overhead in front of the real server.
        let only_alone = std::env::var("NEARDUP_BENCH_PART").is_ok_and(|part| part == "alone");
        if !only_alone {
        let osmem = Osmem::start();
        let sidecar = Sidecar::start(&osmem.url, &[]);
        let slice = &data[..3_000];
        let (mut direct, mut through) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            direct.push(load(&osmem.url, bulk_bodies(slice, &format!("direct-{round}")), 2).await);
            through.push(
                load(&sidecar.url, bulk_bodies(slice, &format!("through-{round}")), 2).await,
            );
        }
        let (direct, through) = (median(&mut direct), median(&mut through));
        println!(
            "osmem-server: direct {direct:.0} docs/s, through the sidecar {through:.0} docs/s, ratio {:.2} (median of {rounds} rounds, 2 clients)",
            through / direct
        );
        drop(sidecar);
        drop(osmem);
        }

        // 2. The sidecar alone.
        let stream = std::env::var_os("NEARDUP_OVERLAP_STREAM");
        let upstream = RecordingUpstream::start(fast_answer).await;
        let mut sidecar = Sidecar::start(&upstream.url, &[]);
        let mut alone = Vec::new();
        for round in 0..rounds {
            let bodies = match &stream {
                Some(path) => {
                    // Sent whole to a new sidecar each round: the second
                    // time its documents would all be exact repeats.
                    if round > 0 {
                        sidecar = Sidecar::start(&upstream.url, &[]);
                    }
                    stream_bodies(path.as_ref())
                }
                None => bulk_bodies(&data, &format!("alone-{round}")),
            };
            alone.push(load(&sidecar.url, bodies, 4).await);
            if stream.is_some() {
                let stats = support::stats(&sidecar.url).await;
                println!("round {round}: forest {}", stats["forest"]);
            }
            upstream.requests.lock().expect("lock").clear();
        }
        println!(
            "sidecar alone (fast upstream): {:.0} docs/s (median of {rounds} rounds, 4 clients, {} cores)",
            median(&mut alone),
            std::thread::available_parallelism().map_or(0, std::num::NonZeroUsize::get)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    });
}

/// Part 3: a lone sidecar against the leader of a group with a standby.
async fn standby_cost(slice: &[Value], rounds: usize) {
    let osmem = Osmem::start();
    let lone = Sidecar::start(&osmem.url, &[]);
    let group = ["--replica-group", "bench", "--replica-lease", "5s"];
    let leader = Sidecar::start(&osmem.url, &group);
    wait_for_role(&leader.url, "leader").await;
    let standby = Sidecar::start(&osmem.url, &group);
    wait_for_role(&standby.url, "standby").await;
    let (mut alone, mut grouped, mut forwarded) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        alone.push(load(&lone.url, bulk_bodies(slice, &format!("lone-{round}")), 2).await);
        grouped.push(
            load(
                &leader.url,
                bulk_bodies(slice, &format!("group-{round}")),
                2,
            )
            .await,
        );
        // The same load sent to the standby, which forwards it.
        forwarded.push(
            load(
                &standby.url,
                bulk_bodies(slice, &format!("forwarded-{round}")),
                2,
            )
            .await,
        );
    }
    let (alone, grouped, forwarded) = (
        median(&mut alone),
        median(&mut grouped),
        median(&mut forwarded),
    );
    println!(
        "osmem-server: to the leader {grouped:.0} docs/s, through the standby (forwarded) {forwarded:.0} docs/s, ratio {:.2} (median of {rounds} rounds, alternated)",
        forwarded / grouped
    );
    let leader_status = support::stats(&leader.url).await["replica"].clone();
    let documents = rounds * slice.len();
    let records = leader_status["applied"]["record"].as_u64().unwrap_or(0);
    println!(
        "osmem-server: lone sidecar {alone:.0} docs/s, leader with a standby {grouped:.0} docs/s, ratio {:.2} (median of {rounds} rounds, 2 clients, bulks of {DOCS_PER_BULK}); {records} records for {documents} documents",
        grouped / alone
    );
    // The standby followed everything.
    let deadline = Instant::now() + Duration::from_secs(30);
    while support::stats(&standby.url).await["replica"]["applied"] != leader_status["applied"] {
        assert!(Instant::now() < deadline, "the standby did not catch up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_for_role(url: &str, role: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while support::stats(url).await["replica"]["role"] != role {
        assert!(Instant::now() < deadline, "{url} not {role}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
