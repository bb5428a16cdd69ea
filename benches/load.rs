//! `cargo bench --bench load -- [SECONDS] [CLIENTS]`: the sidecar under
//! load (default 40 s, 64 clients) in front of a fast in-process upstream.
//!
//! Every client sends bulks of 50 short news items, a quarter of them
//! copies of items other clients send at the same time, with a retention
//! of 5 s, so expiry runs all along. The in-flight limit is 256 KiB, so some
//! requests get 429 and are retried after a pause, as clients do. Reports
//! requests, documents/s, latency p50/p99/max of answered requests, 429s,
//! and the sidecar's resident memory and forest size at each quarter of the
//! run (flat once the retention is reached). That concurrent copies end in
//! one class is checked by `tests/integration/edge_texts.rs`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::{RecordingUpstream, Sidecar, client, stats};

const DOCUMENTS_PER_BULK: usize = 50;

fn answer(request: &support::Recorded) -> (StatusCode, Vec<(String, String)>, Vec<u8>) {
    let mut items = String::from("{\"took\":1,\"errors\":false,\"items\":[");
    let mut first = true;
    for line in request.body.split(|&byte| byte == b'\n') {
        if !line.starts_with(b"{\"index\"") {
            continue;
        }
        let action: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
        if !first {
            items.push(',');
        }
        first = false;
        items.push_str(
            &json!({"index": {"_index": "news", "_id": action["index"]["_id"], "status": 201, "result": "created"}})
                .to_string(),
        );
    }
    items.push_str("]}");
    (
        StatusCode::OK,
        vec![("content-type".into(), "application/json".into())],
        items.into_bytes(),
    )
}

fn percentile(sorted: &[f64], share: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * share).round() as usize]
}

fn main() {
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|argument| argument.parse().ok())
        .collect();
    if std::env::args().any(|argument| argument == "--list") {
        return;
    }
    let seconds = numbers.first().copied().unwrap_or(40);
    let clients = numbers.get(1).copied().unwrap_or(64) as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        support::forget_requests();
        let upstream = RecordingUpstream::start(answer).await;
        let sidecar = Sidecar::start(
            &upstream.url,
            &["--retention", "5s", "--max-in-flight-bytes", "256kb", "--fsync", "1s"],
        );
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let latencies = Arc::new(Mutex::new(Vec::<f64>::new()));
        let rejected = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let start = Instant::now();
        let mut workers = Vec::new();
        for worker in 0..clients {
            let url = format!("{}/_bulk", sidecar.url);
            let latencies = latencies.clone();
            let rejected = rejected.clone();
            workers.push(tokio::spawn(async move {
                let http = client();
                let mut round = 0u64;
                while Instant::now() < deadline {
                    round += 1;
                    let mut body = String::new();
                    for item in 0..DOCUMENTS_PER_BULK {
                        let id = format!("w{worker}-r{round}-{item}");
                        let shared = item % 4 == 0;
                        let content = if shared {
                            // The same item from every client in this second.
                            let second = start.elapsed().as_secs();
                            format!("快讯：第{second}号通知，市区公交线路今晚调整，夜班车加开两个班次，方便晚归市民出行。{item}")
                        } else {
                            format!("第{worker}位记者第{round}次报道：社区活动中心新开设书法、象棋和合唱三个兴趣班，每周各两次，编号{item}。")
                        };
                        body.push_str(&json!({"index": {"_index": "news", "_id": id}}).to_string());
                        body.push('\n');
                        body.push_str(&json!({"content": content}).to_string());
                        body.push('\n');
                    }
                    let started = Instant::now();
                    let Ok(response) = http
                        .post(&url)
                        .header("content-type", "application/x-ndjson")
                        .body(body)
                        .send()
                        .await
                    else {
                        continue;
                    };
                    let status = response.status();
                    let _ = response.bytes().await;
                    if status == 429 {
                        rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                    assert_eq!(status, 200);
                    latencies.lock().expect("latencies").push(started.elapsed().as_secs_f64() * 1e3);
                }
            }));
        }
        let mut samples = Vec::new();
        let quarter = Duration::from_secs(seconds) / 4;
        for _ in 0..4 {
            tokio::time::sleep(quarter).await;
            let stats = stats(&sidecar.url).await;
            samples.push((
                stats["memory"]["resident_bytes"].as_u64().unwrap_or(0) / (1 << 20),
                stats["forest"]["nodes"].as_u64().unwrap_or(0),
            ));
        }
        for worker in workers {
            worker.await.expect("worker");
        }
        let mut latencies = latencies.lock().expect("latencies").clone();
        latencies.sort_by(f64::total_cmp);
        let requests = latencies.len();
        println!(
            "{clients} clients for {seconds} s: {requests} bulks answered ({:.0} docs/s), {} answered 429; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            (requests * DOCUMENTS_PER_BULK) as f64 / seconds as f64,
            rejected.load(std::sync::atomic::Ordering::Relaxed),
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.99),
            latencies.last().copied().unwrap_or(0.0)
        );
        println!(
            "sidecar RSS / forest nodes at each quarter (retention 5 s): {}",
            samples
                .iter()
                .map(|(rss, nodes)| format!("{rss} MiB / {nodes}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let stats = stats(&sidecar.url).await;
        println!(
            "expired nodes: {}, cluster outcomes: {}",
            stats["forest"]["expired_nodes"], stats["cluster_outcomes"]
        );
    });
}
