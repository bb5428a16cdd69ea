//! Counts stay equal to what the index holds when the cluster answers late
//! and clients give up: a client that times out and retries, the sidecar's
//! own timeout (the write read back), a client that closes its connection
//! mid-body. The cluster is the real server; the lateness is a proxy
//! between the sidecar and it ([`support::LateProxy`]), never the sidecar.

use crate::support;

use std::time::{Duration, Instant};

use support::{LateProxy, Osmem, Sidecar, demo_bulk, documents_in, post_bulk, stats};

async fn counts_of(sidecar: &str) -> (u64, u64) {
    let stats = stats(sidecar).await;
    (
        stats["forest"]["documents"].as_u64().expect("documents"),
        stats["cluster_outcomes"]["tracked_keys"]
            .as_u64()
            .expect("tracked keys"),
    )
}

/// Waits until the sidecar's count equals what the index holds stamped,
/// with nothing awaiting an answer (within `limit`); returns both.
async fn counts_agree(sidecar: &str, cluster: &str, index: &str, limit: Duration) -> (u64, u64) {
    let started = Instant::now();
    loop {
        let (documents, _) = counts_of(sidecar).await;
        let awaiting = stats(sidecar).await["cluster_outcomes"]["awaiting_answer"]
            .as_u64()
            .expect("awaiting_answer");
        let (_, stamped) = documents_in(cluster, index).await;
        if (documents == stamped && awaiting == 0) || started.elapsed() > limit {
            return (documents, stamped);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_gives_up_and_retries_counts_once() {
    let osmem = Osmem::start();
    let proxy = LateProxy::start(&osmem.url, Duration::from_millis(1500)).await;
    let sidecar = Sidecar::start(&proxy.url, &["--upstream-timeout", "30s"]);
    let (body, documents) = demo_bulk("late");
    let impatient = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(300))
        .build()
        .expect("client");
    for _ in 0..3 {
        let gave_up = impatient
            .post(format!("{}/_bulk", sidecar.url))
            .header("content-type", "application/x-ndjson")
            .body(body.clone())
            .send()
            .await;
        assert!(gave_up.is_err(), "the client gives up before the answer");
    }
    // The retry that waits long enough.
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    let (counted, held) =
        counts_agree(&sidecar.url, &osmem.url, "late", Duration::from_secs(10)).await;
    assert_eq!(held, documents.len() as u64);
    assert_eq!(counted, held, "the sidecar counts what the index holds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_the_sidecar_timed_out_on_is_read_back() {
    let osmem = Osmem::start();
    let proxy = LateProxy::start(&osmem.url, Duration::from_secs(3)).await;
    let sidecar = Sidecar::start(&proxy.url, &["--upstream-timeout", "1s"]);
    let (body, documents) = demo_bulk("timedout");
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body.clone()).await;
    assert_eq!(status, 504, "{answer}");
    // The cluster stored them (the proxy only held the answer back): the
    // read-back counts them, and keeps their classes.
    let (counted, held) = counts_agree(
        &sidecar.url,
        &osmem.url,
        "timedout",
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(held, documents.len() as u64);
    assert_eq!(counted, held);
    // Stamped documents are counted when the cluster is known to hold
    // them: after the read-back.
    let stamped_line = format!("neardup_stamped_documents_total {}", documents.len());
    let started = Instant::now();
    let metrics = loop {
        let metrics = support::metrics_text(&sidecar.url).await;
        if metrics.contains(&stamped_line) || started.elapsed() > Duration::from_secs(15) {
            break metrics;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(metrics.contains(&stamped_line), "{metrics}");
    assert!(
        metrics.contains(&format!(
            "neardup_in_doubt_documents_total {}",
            documents.len()
        )),
        "{metrics}"
    );
    assert_eq!(
        counts_of(&sidecar.url).await.1,
        documents.len() as u64,
        "keys tracked"
    );
    // A retry once the cluster answers in time counts nothing more.
    proxy.set_write_delay(Duration::ZERO);
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let (counted, held) =
        counts_agree(&sidecar.url, &osmem.url, "timedout", Duration::from_secs(5)).await;
    assert_eq!(
        (counted, held),
        (documents.len() as u64, documents.len() as u64)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_closes_mid_body_leaves_nothing_counted() {
    use tokio::io::AsyncWriteExt;
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (body, _) = demo_bulk("halfsent");
    let address = sidecar.url.trim_start_matches("http://").to_string();
    for _ in 0..5 {
        let mut stream = tokio::net::TcpStream::connect(&address)
            .await
            .expect("connect");
        let head = format!(
            "POST /_bulk HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("head");
        stream
            .write_all(&body.as_bytes()[..body.len() / 2])
            .await
            .expect("half");
        drop(stream);
    }
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let (counted, held) =
        counts_agree(&sidecar.url, &osmem.url, "halfsent", Duration::from_secs(5)).await;
    assert_eq!(counted, held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_without_ids_the_sidecar_timed_out_on_is_found_by_its_stamps() {
    let osmem = Osmem::start();
    let proxy = LateProxy::start(&osmem.url, Duration::from_secs(3)).await;
    let sidecar = Sidecar::start(&proxy.url, &["--upstream-timeout", "1s"]);
    let (with_ids, documents) = demo_bulk("noids");
    // The same articles, the cluster picking the ids.
    let body: String = with_ids
        .lines()
        .map(|line| {
            if line.starts_with("{\"index\"") {
                "{\"index\":{\"_index\":\"noids\"}}".to_string()
            } else {
                line.to_string()
            }
        })
        .map(|line| line + "\n")
        .collect();
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 504, "{answer}");
    let (counted, held) =
        counts_agree(&sidecar.url, &osmem.url, "noids", Duration::from_secs(15)).await;
    assert_eq!(held, documents.len() as u64);
    assert_eq!(counted, held);
    assert_eq!(
        counts_of(&sidecar.url).await.1,
        documents.len() as u64,
        "keys tracked"
    );
}

/// Sends `body` as a bulk to `sidecar` (with `authorization`, if any) and
/// kills the sidecar once the cluster holds `stored` stamped documents of
/// `index`: the answer, held back by the proxy, never comes.
async fn kill_with_the_answer_held(
    sidecar: &mut Sidecar,
    cluster: &str,
    index: &str,
    body: String,
    authorization: Option<&'static str>,
    stored: u64,
) {
    let url = format!("{}/_bulk", sidecar.url);
    let write = tokio::spawn(async move {
        // Its connection breaks with the kill below.
        let mut request = support::client()
            .post(url)
            .header("content-type", "application/x-ndjson");
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let _ = request.body(body).send().await;
    });
    let started = Instant::now();
    while documents_in(cluster, index).await.1 < stored {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "documents stored"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    sidecar.kill();
    write.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_in_doubt_at_a_crash_are_read_back_after_the_restart() {
    let osmem = Osmem::start();
    let proxy = LateProxy::start(&osmem.url, Duration::from_secs(60)).await;
    let state = support::TempDir::new("crash-in-doubt");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&proxy.url, &state_dir, &[]);
    let (body, documents) = demo_bulk("crashed");
    // The cluster stored them; the answer is held back by the proxy.
    let stored = documents.len() as u64;
    kill_with_the_answer_held(&mut sidecar, &osmem.url, "crashed", body, None, stored).await;
    // Restarted on the same state: recovery uncounts the placements in
    // doubt, then the cluster is asked, and the ones it holds count again.
    let restarted = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let (counted, held) = counts_agree(
        &restarted.url,
        &osmem.url,
        "crashed",
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(held, documents.len() as u64);
    assert_eq!(counted, held, "the sidecar counts what the index holds");
    assert_eq!(counts_of(&restarted.url).await.1, held, "keys tracked");
}

/// A bulk of `copies` documents of one text (`with_ids`: under ids
/// `{prefix}{n}`, else ids the cluster picks).
fn copies_bulk(index: &str, text: &str, prefix: &str, copies: usize, with_ids: bool) -> String {
    let mut body = String::new();
    for n in 0..copies {
        let action = if with_ids {
            serde_json::json!({"index": {"_index": index, "_id": format!("{prefix}{n}")}})
        } else {
            serde_json::json!({"index": {"_index": index}})
        };
        body.push_str(&action.to_string());
        body.push('\n');
        body.push_str(&serde_json::json!({"title": "转载", "content": text}).to_string());
        body.push('\n');
    }
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_in_doubt_at_a_crash_are_read_back_where_they_went_however_many_copies() {
    // A text with more copies in the index than one search returns (10 000
    // hits): a crashed write of it, under an id or without one, is still
    // found, by key or by a search that reads every copy.
    const TEXT: &str = "本报讯 市气象台今日发布寒潮蓝色预警，预计未来三天全市气温将下降八到十摄氏度，请市民注意防寒保暖。";
    let osmem = Osmem::start();
    let proxy = LateProxy::start(&osmem.url, Duration::ZERO).await;
    let state = support::TempDir::new("crash-in-doubt-copies");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&proxy.url, &state_dir, &[]);
    let earlier = copies_bulk("copies", TEXT, "earlier-", 10_050, true);
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), earlier).await;
    assert_eq!(status, 200);
    assert_eq!(answer["errors"], false, "{answer}");
    proxy.set_write_delay(Duration::from_secs(60));
    let mut in_doubt = copies_bulk("copies", TEXT, "doubt-", 6, true);
    in_doubt.push_str(&copies_bulk("copies", TEXT, "", 4, false));
    kill_with_the_answer_held(&mut sidecar, &osmem.url, "copies", in_doubt, None, 10_060).await;
    let restarted = Sidecar::start_with_state(&osmem.url, &state_dir, &[]);
    let (counted, held) = counts_agree(
        &restarted.url,
        &osmem.url,
        "copies",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(held, 10_060);
    assert_eq!(counted, held, "the sidecar counts what the index holds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_a_secured_cluster_a_clients_write_lends_its_credentials_to_the_read_back() {
    // The sidecar has no identity of its own: after the crash, the cluster
    // refuses its reads, and the writes in doubt wait (pending, counted)
    // until a client's write lends credentials, then are read back.
    const CREDENTIALS: &str = "Basic bmV3c3Jvb206czNjcmV0";
    let osmem = Osmem::start();
    let proxy = LateProxy::start(&osmem.url, Duration::ZERO).await;
    proxy.require_authorization(CREDENTIALS);
    let state = support::TempDir::new("crash-in-doubt-secured");
    let state_dir = state.path().to_string_lossy().to_string();
    let mut sidecar = Sidecar::start_with_state(&proxy.url, &state_dir, &[]);
    let (body, documents) = demo_bulk("secured");
    proxy.set_write_delay(Duration::from_secs(60));
    let stored = documents.len() as u64;
    let secured = Some(CREDENTIALS);
    kill_with_the_answer_held(&mut sidecar, &osmem.url, "secured", body, secured, stored).await;
    proxy.set_write_delay(Duration::ZERO);
    let restarted = Sidecar::start_with_state(&proxy.url, &state_dir, &[]);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let waiting = stats(&restarted.url).await["cluster_outcomes"]["awaiting_answer"].clone();
    assert_eq!(
        waiting,
        documents.len(),
        "refused, the read-back waits with the placements pending"
    );
    // A client's write (a document of its own) lends its credentials.
    let response = support::client()
        .put(format!("{}/secured/_doc/lender", restarted.url))
        .header("content-type", "application/json")
        .header("authorization", CREDENTIALS)
        .body(r#"{"title": "另一条消息", "content": "今天下午市区部分路段因道路施工实行临时交通管制，请过往车辆提前绕行。"}"#)
        .send()
        .await
        .expect("write");
    assert!(response.status().is_success(), "{}", response.status());
    let (counted, held) = counts_agree(
        &restarted.url,
        &osmem.url,
        "secured",
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(held, documents.len() as u64 + 1);
    assert_eq!(counted, held, "the sidecar counts what the index holds");
}
