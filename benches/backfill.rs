//! `cargo bench --bench backfill [-- ROUNDS]` (default 1): the backfill's rate against
//! the cluster's own `_bulk` update rate, same server, same session.
//!
//! Per round, on a fresh osmem index of N generated articles (~3 KB, a third
//! of them reprints; `published_at` over the last four days):
//!
//! 1. the cluster alone: the stamps' bulk `update`s (`doc` with the two
//!    fields, `if_seq_no`), pre-built, 500 per request, one client: the
//!    ceiling of any backfill that writes through `_bulk`;
//! 2. the read the backfill makes, alone: point-in-time pages of 500 sorted
//!    by time, `seq_no_primary_term`;
//! 3. `POST /_neardup/backfill` in a running sidecar over the same index:
//!    read, analyse, place, log, update, checkpoint.
//!
//! Reports documents per second of each (median over rounds) and the ratio.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Osmem, Sidecar, client, get_json, send_json};

const ARTICLES: usize = 4_000;
const PER_REQUEST: usize = 500;
const TARGET_ARTICLE_BYTES: usize = 3_000;
const HOUR: i64 = 3_600_000;

fn articles(count: usize, seed: u64) -> Vec<Value> {
    let pool = support::demo_sentences(8);
    let mut alphabet: Vec<char> = pool.iter().flat_map(|sentence| sentence.chars()).collect();
    alphabet.sort_unstable();
    alphabet.dedup();
    let mut random = support::Xorshift(seed | 1);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64);
    let mut articles: Vec<Value> = Vec::with_capacity(count);
    for number in 0..count {
        let time = now - 96 * HOUR + (number as i64 * 96 * HOUR) / count as i64;
        if number % 3 == 2 {
            let original = articles[number - 1 - random.below(number.min(50))].clone();
            let content = original["content"].as_str().unwrap_or_default();
            let mut parts: Vec<&str> = content.split_inclusive('。').collect();
            if parts.len() > 4 {
                parts.remove(random.below(parts.len()));
            }
            articles.push(json!({
                "title": original["title"],
                "content": format!("来源：转载{}网。{}", number % 17, parts.concat()),
                "published_at": time,
            }));
            continue;
        }
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
            "published_at": time,
        }));
    }
    articles
}

async fn fill(server: &str, index: &str, data: &[Value]) {
    for (start, chunk) in data.chunks(2_000).enumerate() {
        let mut body = String::new();
        for (offset, article) in chunk.iter().enumerate() {
            let id = format!("a{:06}", start * 2_000 + offset);
            body.push_str(&json!({"index": {"_index": index, "_id": id}}).to_string());
            body.push('\n');
            body.push_str(&article.to_string());
            body.push('\n');
        }
        let (status, answer) = support::post_bulk(&format!("{server}/_bulk"), body).await;
        assert_eq!(
            (status, &answer["errors"]),
            (200, &json!(false)),
            "{answer}"
        );
    }
    let _ = client()
        .post(format!("{server}/{index}/_refresh"))
        .send()
        .await;
}

/// Reads the whole index as the backfill does; returns (docs/s, every
/// hit's index, id, seq_no, primary_term).
async fn read_all(server: &str, index: &str) -> (f64, Vec<(String, String, u64, u64)>) {
    let started = Instant::now();
    let (_, opened) = send_json(
        reqwest::Method::POST,
        &format!("{server}/{index}/_search/point_in_time?keep_alive=5m"),
        &json!({}),
    )
    .await;
    let pit = opened["pit_id"].as_str().expect("pit").to_string();
    let mut after: Option<Value> = None;
    let mut hits_read = Vec::new();
    loop {
        let mut body = json!({
            "size": PER_REQUEST,
            "pit": {"id": pit, "keep_alive": "5m"},
            "sort": [{"published_at": "asc"}, {"_id": "asc"}],
            "seq_no_primary_term": true,
        });
        if let Some(after) = &after {
            body["search_after"] = after.clone();
        }
        let (status, page) =
            send_json(reqwest::Method::POST, &format!("{server}/_search"), &body).await;
        assert_eq!(status, 200, "{page}");
        let hits = page["hits"]["hits"].as_array().cloned().unwrap_or_default();
        if hits.is_empty() {
            break;
        }
        for hit in &hits {
            hits_read.push((
                hit["_index"].as_str().unwrap_or_default().to_string(),
                hit["_id"].as_str().unwrap_or_default().to_string(),
                hit["_seq_no"].as_u64().unwrap_or(0),
                hit["_primary_term"].as_u64().unwrap_or(1),
            ));
        }
        after = hits.last().map(|hit| hit["sort"].clone());
    }
    let rate = hits_read.len() as f64 / started.elapsed().as_secs_f64();
    let _ = send_json(
        reqwest::Method::DELETE,
        &format!("{server}/_search/point_in_time"),
        &json!({"pit_id": [pit]}),
    )
    .await;
    (rate, hits_read)
}

/// The stamps' bulk updates alone, pre-built; docs/s.
async fn update_all(server: &str, hits: &[(String, String, u64, u64)]) -> f64 {
    let bodies: Vec<String> = hits
        .chunks(PER_REQUEST)
        .map(|chunk| {
            let mut body = String::new();
            for (position, (index, id, seq_no, primary_term)) in chunk.iter().enumerate() {
                body.push_str(
                    &json!({"update": {"_index": index, "_id": id, "if_seq_no": seq_no, "if_primary_term": primary_term}})
                        .to_string(),
                );
                body.push('\n');
                let fake = format!("{:016x}", position as u64 * 0x9e37_79b9_7f4a_7c15);
                body.push_str(&json!({"doc": {"cluster_root": fake, "simhash": fake}}).to_string());
                body.push('\n');
            }
            body
        })
        .collect();
    let started = Instant::now();
    for body in bodies {
        let (status, answer) = support::post_bulk(&format!("{server}/_bulk"), body).await;
        assert_eq!(
            (status, &answer["errors"]),
            (200, &json!(false)),
            "{answer}"
        );
    }
    hits.len() as f64 / started.elapsed().as_secs_f64()
}

/// `POST /_neardup/backfill` until done; docs/s.
async fn backfill(sidecar: &str, index: &str) -> f64 {
    let started = Instant::now();
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{sidecar}/_neardup/backfill"),
        &json!({"index": index, "time_field": "published_at", "restart": true}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (_, progress) = get_json(&format!("{sidecar}/_neardup/backfill")).await;
        if progress["state"] != "running" {
            assert_eq!(progress["state"], "done", "{progress}");
            let seen = progress["documents"]["seen"].as_u64().unwrap_or(0);
            assert_eq!(progress["documents"]["stamped"], seen, "{progress}");
            return seen as f64 / started.elapsed().as_secs_f64();
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if std::env::args().any(|argument| argument == "--list" || argument == "--no-run") {
        return;
    }
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|argument| argument.parse().ok())
        .unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let data = articles(ARTICLES, 7);
        let osmem = Osmem::start();
        let (mut updates, mut reads, mut backfills) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let direct = format!("direct-{round}");
            fill(&osmem.url, &direct, &data).await;
            let (read_rate, hits) = read_all(&osmem.url, &direct).await;
            reads.push(read_rate);
            updates.push(update_all(&osmem.url, &hits).await);
            let adopted = format!("adopted-{round}");
            fill(&osmem.url, &adopted, &data).await;
            let sidecar = Sidecar::start(&osmem.url, &[]);
            backfills.push(backfill(&sidecar.url, &adopted).await);
            println!(
                "round {round}: cluster bulk update {:.0} docs/s, read {:.0} docs/s, backfill {:.0} docs/s",
                updates[round], reads[round], backfills[round]
            );
        }
        let (update, read, backfill) = (median(&mut updates), median(&mut reads), median(&mut backfills));
        println!(
            "{ARTICLES} articles, {rounds} rounds (medians): cluster _bulk update {update:.0} docs/s, point-in-time read {read:.0} docs/s, backfill {backfill:.0} docs/s = {:.2} of the update rate",
            backfill / update
        );
    });
}
