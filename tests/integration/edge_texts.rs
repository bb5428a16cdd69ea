//! Texts at the edges: each gets a defined fingerprint, or the documented
//! "not stamped" (no letters or digits in the fingerprinted fields), and
//! never a crash; through the sidecar too, a 10 MB article included, and
//! copies sent at the same moment by many clients end in one class.

use crate::support;

use std::collections::BTreeSet;

use neardup::config::EngineSettings;
use serde_json::{Value, json};
use support::{RecordingUpstream, Sidecar, first_bulk, post_bulk};

fn engine() -> neardup::engine::Engine {
    EngineSettings::default().build().expect("engine")
}

#[test]
fn every_edge_text_is_stamped_or_documented_as_not_stamped() {
    let mut engine = engine();
    let stamped = [
        "😀🎉👍🏽 表情也算文字吗",
        "a\u{200b}b\u{200d}c\u{feff}d 零宽字符",
        "港口新航線週一開通，每週兩班，連接本港與東南亞四個港口",
        "Mixed 中文 and English 123 ١٢٣ русский ελληνικά",
        "1",
        "x",
    ];
    for text in stamped {
        let document = json!({"title": text, "content": text});
        assert!(
            engine.add_document(&document, 0).is_some(),
            "{text:?} should be stamped"
        );
    }
    let not_stamped = [
        "",
        "   ",
        "。，！？……",
        "!!!???",
        "\u{200b}\u{200d}\u{feff}",
    ];
    for text in not_stamped {
        let document = json!({"title": text, "content": text});
        assert!(
            engine.add_document(&document, 0).is_none(),
            "{text:?} has no text to stamp"
        );
    }
    // A number in a field reads as its digits.
    assert!(engine.add_document(&json!({"content": 12}), 0).is_some());
    // Missing fields, null, objects and non-object documents are not text.
    for document in [
        json!({}),
        json!({"content": null}),
        json!({"content": {"nested": true}}),
        json!([1, 2]),
    ] {
        assert!(engine.add_document(&document, 0).is_none(), "{document}");
    }
    // Emoji-only and zero-width variants of one text meet in one class.
    let plain = engine
        .add_document(
            &json!({"content": "周末去哪儿玩？这五个公园的秋景美到不想走"}),
            1,
        )
        .expect("text");
    let decorated = engine
        .add_document(
            &json!({"content": "周末去哪儿玩？\u{200b}这五个公园的秋景美到不想走"}),
            2,
        )
        .expect("text");
    assert_eq!(plain.root, decorated.root);
}

#[test]
fn a_ten_megabyte_article_gets_a_fingerprint() {
    let mut engine = engine();
    let paragraph =
        "港口新航线周一开通，每周两班，连接本港与东南亚四个港口，首航装载集装箱八百余个。";
    let content: String = paragraph.repeat(10_000_000 / paragraph.len() + 1);
    assert!(content.len() >= 10_000_000);
    let placed = engine.add_document(&json!({"title": "长文", "content": content}), 0);
    assert!(placed.is_some());
}

fn answer_all_created(
    request: &support::Recorded,
) -> (axum::http::StatusCode, Vec<(String, String)>, Vec<u8>) {
    let text = String::from_utf8_lossy(&request.body).to_string();
    let items: Vec<Value> = text
        .lines()
        .filter(|line| line.starts_with("{\"index\""))
        .map(|line| {
            let action: Value = serde_json::from_str(line).unwrap_or(Value::Null);
            json!({"index": {"_index": "news", "_id": action["index"]["_id"], "status": 201, "result": "created"}})
        })
        .collect();
    (
        axum::http::StatusCode::OK,
        vec![("content-type".into(), "application/json".into())],
        json!({"took": 1, "errors": false, "items": items})
            .to_string()
            .into_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edge_texts_through_the_sidecar_and_a_ten_megabyte_body() {
    let upstream = RecordingUpstream::start(answer_all_created).await;
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let paragraph =
        "港口新航线周一开通，每周两班，连接本港与东南亚四个港口，首航装载集装箱八百余个。";
    let big = paragraph.repeat(10_000_000 / paragraph.len() + 1);
    let mut body = String::new();
    for (id, content) in [
        ("e", ""),
        ("p", "。，！？"),
        ("z", "\u{200b}"),
        ("m", "😀 mixed 中文"),
        ("big", big.as_str()),
    ] {
        body.push_str(&json!({"index": {"_index": "news", "_id": id}}).to_string());
        body.push('\n');
        body.push_str(&json!({"content": content}).to_string());
        body.push('\n');
    }
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let forwarded = String::from_utf8_lossy(&first_bulk(&upstream).body).to_string();
    let ids_whose_source_holds = |mark: &str| -> Vec<String> {
        forwarded
            .lines()
            .collect::<Vec<_>>()
            .chunks(2)
            .filter(|pair| pair.get(1).is_some_and(|source| source.contains(mark)))
            .filter_map(|pair| serde_json::from_str::<Value>(pair[0]).ok())
            .filter_map(|action| action["index"]["_id"].as_str().map(str::to_string))
            .collect()
    };
    // Fingerprinted: a simhash. The others: a class of their own each.
    assert_eq!(ids_whose_source_holds("\"simhash\""), ["m", "big"]);
    assert_eq!(
        ids_whose_source_holds("\"cluster_root\":\"nofingerprint-"),
        ["e", "p", "z"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn copies_sent_at_once_by_many_clients_end_in_one_class() {
    let upstream = RecordingUpstream::start(answer_all_created).await;
    let sidecar = Sidecar::start(&upstream.url, &[]);
    let article = "为方便读者，市图书馆自下月起延长开放时间，周一至周五开放至晚上九点，周末开放至晚上八点，新增自习座位两百个。";
    let mut clients = Vec::new();
    for client in 0..32 {
        let url = format!("{}/_bulk", sidecar.url);
        // Every client sends the article, half of them with a credit line.
        let content = if client % 2 == 0 {
            article.to_string()
        } else {
            format!(
                "（来源：第{}报）{article}",
                ["晨", "晚", "商", "日"][client % 4]
            )
        };
        let body = format!(
            "{}\n{}\n",
            json!({"index": {"_index": "news", "_id": format!("c{client}")}}),
            json!({"title": "图书馆延长开放时间", "content": content})
        );
        clients.push(tokio::spawn(async move { post_bulk(&url, body).await }));
    }
    for client in clients {
        let (status, _) = client.await.expect("client");
        assert_eq!(status, 200);
    }
    let roots: BTreeSet<String> = upstream
        .recorded()
        .iter()
        .flat_map(|request| {
            String::from_utf8_lossy(&request.body)
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter_map(|value| value["cluster_root"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(roots.len(), 1, "{roots:?}");
}
