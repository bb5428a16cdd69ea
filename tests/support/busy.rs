//! A large bulk held at the cluster while the sidecar is probed: shared by
//! `tests/busy_runtime.rs` (bounds) and `benches/busy.rs` (the numbers).

use std::time::{Duration, Instant};

use super::{Sidecar, client, demo_sentences, read_request, stats};

/// About `target_bytes` of bulk body: articles of about 3 KB built from
/// the demo corpus's sentences, each one different.
pub fn large_bulk(target_bytes: usize) -> (String, usize) {
    let sentences = demo_sentences(20);
    let mut body = String::with_capacity(target_bytes + 4096);
    let mut count = 0;
    while body.len() < target_bytes {
        let content: String = (0..30)
            .map(|step| sentences[(count * 7 + step * 13) % sentences.len()].as_str())
            .collect();
        body += &format!(
            "{}\n",
            serde_json::json!({"index": {"_id": format!("big-{count}")}})
        );
        body += &format!(
            "{}\n",
            serde_json::json!({"title": format!("第{count}篇"), "content": format!("{content}（编号{count}）")})
        );
        count += 1;
    }
    (body, count)
}

/// Latencies of GET `url`, one after another, until `stop` says so.
pub async fn probe(url: String, stop: tokio::sync::watch::Receiver<bool>) -> Vec<Duration> {
    let http = client();
    let mut latencies = Vec::new();
    while !*stop.borrow() {
        let started = Instant::now();
        let answered = http.get(&url).send().await;
        if let Ok(answer) = answered {
            let _ = answer.bytes().await;
            latencies.push(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    latencies
}

pub fn percentile(latencies: &mut [Duration], share: f64) -> Duration {
    latencies.sort_unstable();
    let at = ((latencies.len() as f64 * share).ceil() as usize).clamp(1, latencies.len()) - 1;
    latencies[at]
}

/// A proxy to the cluster that holds each `_bulk` until released, and says
/// when one arrived.
pub struct HoldingProxy {
    pub url: String,
    pub arrived: tokio::sync::watch::Receiver<bool>,
    pub release: std::sync::Arc<tokio::sync::Semaphore>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl HoldingProxy {
    pub async fn start(cluster: &str) -> Self {
        let (arrived_sender, arrived) = tokio::sync::watch::channel(false);
        let arrived_sender = std::sync::Arc::new(arrived_sender);
        let release = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
        let cluster = cluster.trim_end_matches('/').to_string();
        let http = client();
        let gate = release.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (cluster, http, gate, arrived_sender) = (
                cluster.clone(),
                http.clone(),
                gate.clone(),
                arrived_sender.clone(),
            );
            async move {
                let (parts, body, path) = read_request(request).await;
                if parts.uri.path().contains("_bulk") {
                    let _ = arrived_sender.send(true);
                    let _ = gate.acquire().await.map(tokio::sync::SemaphorePermit::forget);
                    // Refused as a cluster under load refuses it: the
                    // test is about the placement, not osmem's indexing.
                    let mut refused = axum::response::Response::new(axum::body::Body::from(
                        r#"{"error":{"type":"es_rejected_execution_exception","reason":"held by the test"},"status":429}"#,
                    ));
                    *refused.status_mut() = axum::http::StatusCode::TOO_MANY_REQUESTS;
                    return refused;
                }
                let mut outgoing = http.request(parts.method.clone(), format!("{cluster}{path}"));
                if let Some(content_type) = parts.headers.get("content-type") {
                    outgoing = outgoing.header("content-type", content_type.clone());
                }
                let answer = outgoing.body(body).send().await.expect("cluster answers");
                let status = answer.status();
                let bytes = answer.bytes().await.unwrap_or_default();
                let mut response = axum::response::Response::new(axum::body::Body::from(bytes));
                *response.status_mut() = status;
                response.headers_mut().insert(
                    "content-type",
                    axum::http::HeaderValue::from_static("application/json"),
                );
                response
            }
        });
        let (url, shutdown) = super::serve_locally(app).await;
        HoldingProxy {
            url,
            arrived,
            release,
            _shutdown: shutdown,
        }
    }
}

/// One probe's latencies while the bulk was placed.
pub struct ProbeLatencies {
    pub name: &'static str,
    pub latencies: Vec<Duration>,
}

/// What one round measured.
pub struct BusyRound {
    pub documents: usize,
    /// From the bulk sent to its stamped copy arriving at the cluster.
    pub took: Duration,
    pub probes: Vec<ProbeLatencies>,
    /// The sidecar's answer to the bulk (the cluster refused it: 429).
    pub bulk_status: u16,
    /// The forest's documents after the refusal (every placement taken back).
    pub forest_documents_after: serde_json::Value,
}

impl BusyRound {
    /// `name: N answers while D documents were read and placed (T): p50, p99, max`.
    pub fn describe(&self, probe: &ProbeLatencies) -> String {
        let mut latencies = probe.latencies.clone();
        format!(
            "{}: {} answers while {} documents were read and placed ({:?}): p50 {:?}, p99 {:?}, max {:?}",
            probe.name,
            latencies.len(),
            self.documents,
            self.took,
            percentile(&mut latencies, 0.5),
            percentile(&mut latencies, 0.99),
            percentile(&mut latencies, 1.0),
        )
    }
}

/// Starts a sidecar in front of `cluster` (through a [`HoldingProxy`]),
/// sends a bulk of about `bulk_bytes` and probes liveness, readiness, a
/// pass-through `_cluster/health` and a pass-through `_search` every 10 ms
/// until the bulk, placed and
/// stamped, reaches the proxy; then the proxy refuses it.
pub async fn busy_round(cluster: &str, bulk_bytes: usize) -> BusyRound {
    let mut proxy = HoldingProxy::start(cluster).await;
    let sidecar = Sidecar::start(&proxy.url, &["--upstream-timeout", "300s"]);
    let (body, documents) = large_bulk(bulk_bytes);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let names = [
        "liveness",
        "readiness",
        "pass-through health",
        "pass-through search",
    ];
    let probes = [
        format!("{}/_neardup/health/live", sidecar.url),
        format!("{}/_neardup/health", sidecar.url),
        format!("{}/_cluster/health", sidecar.url),
        format!("{}/_search?size=1", sidecar.url),
    ]
    .map(|url| tokio::spawn(probe(url, stopped.clone())));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let bulk_url = format!("{}/big/_bulk", sidecar.url);
    let bulk = tokio::spawn(async move {
        let answer = client()
            .post(bulk_url)
            .header("content-type", "application/x-ndjson")
            .timeout(Duration::from_secs(600))
            .body(body)
            .send()
            .await
            .expect("bulk answered");
        let status = answer.status();
        let _ = answer.bytes().await;
        status
    });
    // Placed and stamped: the sidecar forwards it.
    tokio::time::timeout(
        Duration::from_secs(300),
        proxy.arrived.wait_for(|arrived| *arrived),
    )
    .await
    .expect("the bulk placed within 300 s")
    .expect("proxy running");
    let took = started.elapsed();
    let _ = stop.send(true);
    let mut measured = Vec::new();
    for (name, probe) in names.into_iter().zip(probes) {
        measured.push(ProbeLatencies {
            name,
            latencies: probe.await.expect("probe"),
        });
    }
    proxy.release.add_permits(1);
    let bulk_status = bulk.await.expect("bulk task").as_u16();
    let forest_documents_after = stats(&sidecar.url).await["forest"]["documents"].clone();
    BusyRound {
        documents,
        took,
        probes: measured,
        bulk_status,
        forest_documents_after,
    }
}
