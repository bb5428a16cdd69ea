//! `neardup serve` against the real OpenSearch-compatible server
//! (osmem-server): every write API, the counts, the pass-through, the own
//! endpoints, and two real clients (raw NDJSON and the `opensearch` crate).

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use serde_json::{Value, json};
use support::{Osmem, Sidecar, client, get_json, json_of, post_bulk, send_json, stamps_in, stats};

fn is_stamp(value: &Value) -> bool {
    value
        .as_str()
        .is_some_and(|text| text.len() == 16 && text.bytes().all(|byte| byte.is_ascii_hexdigit()))
}

async fn documents_counted(sidecar: &str) -> u64 {
    stats(sidecar).await["forest"]["documents"]
        .as_u64()
        .expect("documents")
}

async fn nodes(sidecar: &str) -> u64 {
    stats(sidecar).await["forest"]["nodes"]
        .as_u64()
        .expect("nodes")
}

#[tokio::test]
async fn bulk_stamps_every_source_and_groups_reprints_only() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(
        &osmem.url,
        &["--install-template", "--template-patterns", "news*"],
    );
    let (body, documents) = support::demo_bulk("news-demo");
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false);
    assert_eq!(
        answer["items"].as_array().expect("items").len(),
        documents.len()
    );

    let stored = stamps_in(&osmem.url, "news-demo").await;
    assert_eq!(stored.len(), documents.len());
    let story_of: BTreeMap<&str, &str> = documents
        .iter()
        .map(|document| {
            (
                document["id"].as_str().expect("id"),
                document["story"].as_str().expect("story"),
            )
        })
        .collect();
    let mut roots_of_story: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut stories_of_root: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (id, source) in &stored {
        assert!(is_stamp(&source["cluster_root"]), "{id}: {source}");
        assert!(is_stamp(&source["simhash"]), "{id}: {source}");
        let root = source["cluster_root"].as_str().expect("root").to_string();
        let story = story_of[id.as_str()];
        roots_of_story
            .entry(story)
            .or_default()
            .insert(root.clone());
        stories_of_root.entry(root).or_default().insert(story);
    }
    // No class mixes two stories (hard negatives and templates included)...
    for (root, stories) in &stories_of_root {
        assert_eq!(stories.len(), 1, "class {root} mixes {stories:?}");
    }
    // ...and reprints are grouped: most stories end in one class.
    let whole_stories = roots_of_story
        .values()
        .filter(|roots| roots.len() == 1)
        .count();
    assert!(
        whole_stories * 4 >= roots_of_story.len() * 3,
        "{roots_of_story:?}"
    );

    // The counts are the index's.
    let stats = stats(&sidecar.url).await;
    assert_eq!(stats["forest"]["documents"], documents.len() as u64);
    assert_eq!(stats["cluster_outcomes"]["stored"], documents.len() as u64);
    // The articles' sentences are in the learned-boilerplate table.
    assert!(
        stats["engine"]["common_sentence_entries"]
            .as_u64()
            .is_some_and(|entries| entries > 0),
        "{stats}"
    );

    // The list page: one hit per class, the inner total is the class size.
    let list_page: Value =
        serde_json::from_str(include_str!("../../mappings/list-page.json")).expect("list page");
    let (status, page) = send_json(
        reqwest::Method::POST,
        &format!("{}/news-demo/_search", sidecar.url),
        &list_page,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let mut class_sizes: BTreeMap<String, u64> = BTreeMap::new();
    for source in stored.values() {
        *class_sizes
            .entry(source["cluster_root"].as_str().expect("root").to_string())
            .or_default() += 1;
    }
    for hit in page["hits"]["hits"].as_array().expect("hits") {
        let root = hit["fields"]["cluster_root"][0]
            .as_str()
            .unwrap_or_default();
        let total = hit["inner_hits"]["similar"]["hits"]["total"]["value"].as_u64();
        assert_eq!(total, class_sizes.get(root).copied(), "{hit}");
    }
}

#[tokio::test]
async fn malformed_bodies_get_the_clusters_own_answer_and_count_nothing() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    for body in [
        "{\"index\":{\"_index\":\"news-x\"}}\n{\"title\":\"a\",\"content\":\"b\"}",
        "",
        "{\"frob\":{\"_index\":\"news-x\"}}\n{\"title\":\"a\"}\n",
        "\n\n",
    ] {
        let direct = post_bulk(&format!("{}/_bulk", osmem.url), body).await;
        let through = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
        assert_eq!(through, direct, "body {body:?}");
        assert_eq!(through.0, 400, "body {body:?}: {:?}", through.1);
    }
    assert_eq!(nodes(&sidecar.url).await, 0);
    assert_eq!(documents_counted(&sidecar.url).await, 0);
}

#[tokio::test]
async fn rejected_items_are_not_counted_and_leave_no_class() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let body = concat!(
        "{\"create\":{\"_index\":\"news-r\",\"_id\":\"1\"}}\n",
        "{\"title\":\"港口新航线开通\",\"content\":\"今年第三条国际集装箱航线于周一开通，每周两班，连接本港与东南亚四个港口。\"}\n",
        "{\"create\":{\"_index\":\"news-r\",\"_id\":\"1\"}}\n",
        "{\"title\":\"山区学校用上新图书馆\",\"content\":\"一所山区小学的新图书馆周末启用，藏书三千册，由校友捐建，每天放学后开放两小时。\"}\n",
    );
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200);
    assert_eq!(answer["items"][0]["create"]["status"], 201);
    assert_eq!(answer["items"][1]["create"]["status"], 409, "{answer}");
    let stats = stats(&sidecar.url).await;
    assert_eq!(stats["forest"]["documents"], 1);
    // The rejected text had a node of its own: it is gone.
    assert_eq!(stats["forest"]["nodes"], 1);
    assert_eq!(stats["cluster_outcomes"]["not_stored"], 1);
}

#[tokio::test]
async fn retries_count_once_and_deletes_take_the_count_back() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let index_one = concat!(
        "{\"index\":{\"_index\":\"news-d\",\"_id\":\"7\"}}\n",
        "{\"title\":\"城市马拉松周日开跑\",\"content\":\"两万名跑者将参加周日的城市马拉松，沿线十二条道路临时交通管制，地铁提前一小时运营。\"}\n",
    );
    for _ in 0..3 {
        let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), index_one).await;
        assert_eq!(status, 200, "{answer}");
    }
    assert_eq!(documents_counted(&sidecar.url).await, 1);
    assert_eq!(stats(&sidecar.url).await["cluster_outcomes"]["restored"], 2);

    let (status, answer) = post_bulk(
        &format!("{}/_bulk", sidecar.url),
        "{\"delete\":{\"_index\":\"news-d\",\"_id\":\"7\"}}\n",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(answer["items"][0]["delete"]["result"], "deleted");
    assert_eq!(documents_counted(&sidecar.url).await, 0);
    assert_eq!(nodes(&sidecar.url).await, 0);

    // The single-document delete API too.
    let (status, _) = post_bulk(&format!("{}/_bulk", sidecar.url), index_one).await;
    assert_eq!(status, 200);
    assert_eq!(documents_counted(&sidecar.url).await, 1);
    let (status, answer) = json_of(
        client()
            .delete(format!("{}/news-d/_doc/7", sidecar.url))
            .send()
            .await
            .expect("DELETE"),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(documents_counted(&sidecar.url).await, 0);
}

#[tokio::test]
async fn filter_path_is_applied_after_the_sidecar_read_every_item() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let body = concat!(
        "{\"create\":{\"_index\":\"news-f\",\"_id\":\"1\"}}\n",
        "{\"title\":\"新桥合龙\",\"content\":\"跨江大桥主桥今天合龙，预计明年五月通车，全长一千六百米。\"}\n",
        "{\"create\":{\"_index\":\"news-f\",\"_id\":\"1\"}}\n",
        "{\"title\":\"新桥合龙\",\"content\":\"跨江大桥主桥今天合龙，预计明年五月通车，全长一千六百米。\"}\n",
    );
    let (status, answer) = post_bulk(
        &format!("{}/_bulk?filter_path=items.*.error.type", sidecar.url),
        body,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        answer,
        json!({"items": [{"create": {"error": {"type": "version_conflict_engine_exception"}}}]})
    );
    assert_eq!(documents_counted(&sidecar.url).await, 1);
}

#[tokio::test]
async fn single_document_apis_are_stamped_and_settled() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let article = json!({"title": "旧城改造启动", "content": "老城区八个片区的改造今年启动，涉及居民四千户，首批工程包括管网更新和加装电梯。"});
    let (status, answer) = send_json(
        reqwest::Method::PUT,
        &format!("{}/news-s/_doc/1?refresh=true", sidecar.url),
        &article,
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/news-s/_doc", sidecar.url),
        &article,
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    let generated_id = answer["_id"].as_str().expect("generated id").to_string();
    let (status, _) = send_json(
        reqwest::Method::PUT,
        &format!("{}/news-s/_create/2", sidecar.url),
        &article,
    )
    .await;
    assert_eq!(status, 201);
    let (status, conflict) = send_json(
        reqwest::Method::PUT,
        &format!("{}/news-s/_create/2", sidecar.url),
        &article,
    )
    .await;
    assert_eq!(status, 409);
    assert_eq!(
        conflict["error"]["type"],
        "version_conflict_engine_exception"
    );
    let upsert = json!({"doc": {"views": 1}, "upsert": article});
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/news-s/_update/3", sidecar.url),
        &upsert,
    )
    .await;
    assert_eq!(
        (status, answer["result"].clone()),
        (201, json!("created")),
        "{answer}"
    );
    // The update of an existing document does not count again.
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/news-s/_update/3", sidecar.url),
        &upsert,
    )
    .await;
    assert_eq!(status, 200, "{answer}");

    let stored = stamps_in(&osmem.url, "news-s").await;
    assert_eq!(stored.len(), 4);
    let roots: BTreeSet<String> = stored
        .values()
        .map(|source| source["cluster_root"].to_string())
        .collect();
    assert_eq!(roots.len(), 1, "one text, one class: {stored:?}");
    assert!(stored.contains_key(&generated_id));
    assert!(stored.values().all(|source| is_stamp(&source["simhash"])));
    assert_eq!(documents_counted(&sidecar.url).await, 4);
}

#[tokio::test]
async fn gzip_bodies_are_stamped() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (body, documents) = support::demo_bulk("news-gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body.as_bytes()).expect("gzip");
    let compressed = encoder.finish().expect("gzip");
    let (status, answer) = json_of(
        client()
            .post(format!("{}/_bulk", sidecar.url))
            .header("content-type", "application/x-ndjson")
            .header("content-encoding", "gzip")
            .body(compressed)
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let stored = stamps_in(&osmem.url, "news-gz").await;
    assert_eq!(stored.len(), documents.len());
    assert!(
        stored
            .values()
            .all(|source| is_stamp(&source["cluster_root"]))
    );
}

#[tokio::test]
async fn bodies_over_the_limit_get_413_and_reach_nothing() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &["--max-content-length", "1kb"]);
    let (body, _) = support::demo_bulk("news-big");
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 413);
    assert_eq!(answer["status"], 413);
    assert!(answer["error"]["type"].is_string(), "{answer}");
    assert_eq!(nodes(&sidecar.url).await, 0);
}

#[tokio::test]
async fn other_requests_pass_through_unchanged() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let direct = client().get(&osmem.url).send().await.expect("GET /");
    let through = client().get(&sidecar.url).send().await.expect("GET /");
    assert_eq!(through.status(), direct.status());
    assert_eq!(
        through.headers().get("x-elastic-product"),
        direct.headers().get("x-elastic-product")
    );
    assert_eq!(through.text().await.ok(), direct.text().await.ok());
    // A search on a missing index: the cluster's 404, as it came.
    let direct = get_json(&format!("{}/missing/_search", osmem.url)).await;
    let through = get_json(&format!("{}/missing/_search", sidecar.url)).await;
    assert_eq!(through, direct);
    assert_eq!(through.0, 404);
    let head = client()
        .head(format!("{}/missing", sidecar.url))
        .send()
        .await
        .expect("HEAD");
    assert_eq!(head.status(), 404);
}

#[tokio::test]
async fn an_unreachable_cluster_gives_502_and_counts_nothing() {
    // A port nobody listens on: bind, note, close.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = closed.local_addr().expect("address");
    drop(closed);
    let sidecar = Sidecar::start(&format!("http://{address}"), &[]);
    let (body, _) = support::demo_bulk("news-down");
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body).await;
    assert_eq!(status, 502, "{answer}");
    assert_eq!(answer["status"], 502);
    assert!(
        answer["error"]["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("cannot reach"))
    );
    assert_eq!(nodes(&sidecar.url).await, 0);
    let (status, _) = get_json(&format!("{}/news-down/_search", sidecar.url)).await;
    assert_eq!(status, 502);
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(
        (status, health["upstream"]["reachable"].clone()),
        (503, json!(false))
    );
}

#[tokio::test]
async fn own_endpoints_explain_the_classes() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(
        &osmem.url,
        &["--install-template", "--template-patterns", "news*"],
    );
    let (body, _) = support::demo_bulk("news-own");
    let (status, _) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200);
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!((status, health["status"].clone()), (200, json!("ok")));

    // The largest class, from the index.
    let stored = stamps_in(&osmem.url, "news-own").await;
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, source) in &stored {
        members
            .entry(source["cluster_root"].as_str().expect("root").to_string())
            .or_default()
            .push(id.clone());
    }
    let (root, ids) = members
        .iter()
        .max_by_key(|(_, ids)| ids.len())
        .expect("a class");
    assert!(ids.len() >= 3);
    let (status, class) = get_json(&format!("{}/_neardup/classes/{root}", sidecar.url)).await;
    assert_eq!(status, 200, "{class}");
    assert_eq!(class["documents"], ids.len() as u64);
    assert_eq!(class["cluster_root"], root.as_str());
    let (status, missing) = get_json(&format!(
        "{}/_neardup/classes/0123456789abcdef",
        sidecar.url
    ))
    .await;
    assert_eq!((status, missing["status"].clone()), (404, json!(404)));
    let (status, _) = get_json(&format!("{}/_neardup/classes/nothex", sidecar.url)).await;
    assert_eq!(status, 400);

    let (status, similar) = get_json(&format!(
        "{}/news-own/_neardup/similar/{}",
        sidecar.url, ids[0]
    ))
    .await;
    assert_eq!(status, 200, "{similar}");
    assert_eq!(similar["hits"]["total"]["value"], (ids.len() - 1) as u64);
    let others: BTreeSet<&str> = similar["hits"]["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter_map(|hit| hit["_id"].as_str())
        .collect();
    assert!(!others.contains(ids[0].as_str()));

    let (status, explained) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/fingerprint", sidecar.url),
        &json!({"texts": [stored[&ids[0]]["content"], stored[&ids[1]]["content"]]}),
    )
    .await;
    assert_eq!(status, 200, "{explained}");
    assert!(explained["comparison"]["hamming_distance"].is_u64());
    assert!(is_stamp(&explained["fingerprints"][0]["simhash"]));
    let (status, _) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/fingerprint", sidecar.url),
        &json!({"nothing": 1}),
    )
    .await;
    assert_eq!(status, 400);
    // An endpoint the sidecar does not have is its own 404, never the
    // cluster's.
    let (status, unknown) = get_json(&format!("{}/_neardup/classes", sidecar.url)).await;
    assert_eq!(status, 404, "{unknown}");
    assert_eq!(unknown["error"]["type"], "resource_not_found_exception");

    let metrics = support::metrics_text(&sidecar.url).await;
    assert!(metrics.contains("neardup_forest_documents 48"), "{metrics}");
    assert!(metrics.contains("neardup_bulk_requests_total 1"));
}

#[tokio::test]
async fn the_opensearch_crate_indexes_through_the_sidecar() {
    use opensearch::http::request::JsonBody;
    use opensearch::http::transport::Transport;
    use opensearch::{BulkParts, OpenSearch};

    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let transport = Transport::single_node(&sidecar.url).expect("transport");
    let client = OpenSearch::new(transport);
    let (_, documents) = support::demo_bulk("unused");
    let mut body: Vec<JsonBody<Value>> = Vec::new();
    for document in &documents {
        body.push(json!({"index": {"_id": document["id"]}}).into());
        body.push(document.clone().into());
    }
    let response = client
        .bulk(BulkParts::Index("news-crate"))
        .refresh(opensearch::params::Refresh::True)
        .body(body)
        .send()
        .await
        .expect("bulk");
    assert_eq!(response.status_code().as_u16(), 200);
    let answer: Value = response.json().await.expect("JSON");
    assert_eq!(answer["errors"], false, "{answer}");
    let stored = stamps_in(&osmem.url, "news-crate").await;
    assert_eq!(stored.len(), documents.len());
    assert!(
        stored
            .values()
            .all(|source| is_stamp(&source["cluster_root"]))
    );
    assert_eq!(
        documents_counted(&sidecar.url).await,
        documents.len() as u64
    );
}

/// `/_bulk/` (trailing slash) and the typed `/{index}/{type}/_bulk` of older
/// clients are bulks: stamped and counted like `/_bulk`.
#[tokio::test]
async fn bulk_with_a_trailing_slash_or_a_type_is_stamped() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (body, documents) = support::demo_bulk("news-slash");
    let (status, answer) = post_bulk(&format!("{}/_bulk/?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let stored = stamps_in(&osmem.url, "news-slash").await;
    assert_eq!(stored.len(), documents.len());
    assert!(
        stored
            .values()
            .all(|source| is_stamp(&source["cluster_root"]))
    );
    assert_eq!(
        documents_counted(&sidecar.url).await,
        documents.len() as u64
    );
    let typed = "{\"index\":{\"_id\":\"t1\"}}\n{\"title\":\"港口新航线周一开通\",\"content\":\"港口新航线周一开通，每周两班，连接本港与东南亚四个港口。\"}\n";
    let (status, answer) = post_bulk(
        &format!("{}/news-typed/article/_bulk?refresh=true", sidecar.url),
        typed.to_string(),
    )
    .await;
    if status == 200 && answer["errors"] == false {
        let stored = stamps_in(&osmem.url, "news-typed").await;
        assert!(
            stored
                .values()
                .all(|source| is_stamp(&source["cluster_root"])),
            "{stored:?}"
        );
        assert_eq!(
            documents_counted(&sidecar.url).await,
            documents.len() as u64 + 1
        );
    } else {
        // A cluster without mapping types refuses the typed path; the
        // sidecar must then count nothing for it.
        assert_eq!(
            documents_counted(&sidecar.url).await,
            documents.len() as u64,
            "{answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_without_a_fingerprinted_field_are_counted_in_the_metrics() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    // The body under `body` (not `content`): stamped on the headline alone;
    // one with neither field: stored with a class of its own, unplaced.
    let body = "{\"index\":{\"_index\":\"news-fields\",\"_id\":\"1\"}}\n{\"title\":\"Weather update\",\"body\":\"Rain in the north\"}\n\
                {\"index\":{\"_index\":\"news-fields\",\"_id\":\"2\"}}\n{\"title\":\"Weather update\",\"body\":\"Sun in the south\"}\n\
                {\"index\":{\"_index\":\"news-fields\",\"_id\":\"3\"}}\n{\"headline\":\"x\",\"body\":\"y\"}\n";
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    let metrics = support::metrics_text(&sidecar.url).await;
    for line in [
        "neardup_documents_missing_fields_total 3",
        "neardup_stamped_documents_total 2",
        "neardup_unstamped_documents_total 1",
        "neardup_not_fingerprinted_documents_total 1",
    ] {
        assert!(metrics.contains(line), "{line}: {metrics}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_whose_stamps_are_not_keywords_is_named_after_its_first_write() {
    let osmem = Osmem::start();
    // The template covers news*; blog-1 is outside it and maps dynamically.
    let sidecar = Sidecar::start(
        &osmem.url,
        &["--install-template", "--template-patterns", "news*"],
    );
    let article = |index: &str| {
        format!(
            "{{\"index\":{{\"_index\":\"{index}\",\"_id\":\"1\"}}}}\n{{\"title\":\"港口新航线周一开通\",\"content\":\"港口新航线周一开通，每周两班，连接本港与东南亚四个港口。\"}}\n"
        )
    };
    for index in ["news-covered", "blog-1"] {
        let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), article(index)).await;
        assert_eq!(status, 200, "{answer}");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let listed = loop {
        let listed = stats(&sidecar.url).await["stamp_mapping"]["not_keyword"].clone();
        if listed.get("blog-1").is_some() || std::time::Instant::now() > deadline {
            break listed;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(listed["blog-1"], "text", "{listed}");
    assert!(listed.get("news-covered").is_none(), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compare_tool_reads_texts_and_documents_through_one_path() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let first = "市统计局今天发布数据，上半年全市地区生产总值达到1520亿元，同比增长5.8%，其中第三产业增加值增长7.1%，规模以上工业增加值增长4.6%，社会消费品零售总额增长6.3%，城镇居民人均可支配收入达到38200元。统计局有关负责人表示，下半年将继续跟踪重点行业运行情况，按季度发布分析报告，为企业和社会各界提供参考。";
    let second = "转载：市统计局今天发布数据，上半年全市地区生产总值达到1520亿元，同比增长5.8%，其中第三产业增加值增长7.1%，规模以上工业增加值增长4.6%，社会消费品零售总额增长6.3%，城镇居民人均可支配收入达到38200元。统计局有关负责人表示，下半年将继续跟踪重点行业运行情况，按季度发布分析报告，为企业和社会各界提供参考。";
    let compare = |body: Value| {
        let url = format!("{}/_neardup/fingerprint", sidecar.url);
        async move { send_json(reqwest::Method::POST, &url, &body).await }
    };
    let (status, texts) = compare(json!({"texts": [first, second]})).await;
    assert_eq!(status, 200, "{texts}");
    let (status, documents) =
        compare(json!({"documents": [{"content": first}, {"content": second}]})).await;
    assert_eq!(status, 200, "{documents}");
    assert_eq!(texts, documents, "a text is the body of a document");
    assert!(
        texts["fingerprints"][0]["numbers"].as_u64() > Some(3),
        "{texts}"
    );
    assert!(
        texts["comparison"]["long_text_jaccard_estimate"].is_number(),
        "{texts}"
    );
    // And the decision is the engine's: the repost joins the original.
    let body = format!(
        "{{\"index\":{{\"_index\":\"news-compare\",\"_id\":\"1\"}}}}\n{}\n{{\"index\":{{\"_index\":\"news-compare\",\"_id\":\"2\"}}}}\n{}\n",
        json!({"content": first}),
        json!({"content": second})
    );
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let stored = stamps_in(&osmem.url, "news-compare").await;
    let grouped = stored["1"]["cluster_root"] == stored["2"]["cluster_root"];
    let joins = texts["comparison"]["decision"]["joins"].as_bool();
    assert_eq!(joins, Some(grouped), "{texts}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_document_write_answers_with_its_class_in_a_header() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let response = client()
        .put(format!("{}/news-header/_doc/1?refresh=true", sidecar.url))
        .header("content-type", "application/json")
        .body(json!({"title": "港口新航线周一开通", "content": "港口新航线周一开通，每周两班，连接本港与东南亚四个港口。"}).to_string())
        .send()
        .await
        .expect("PUT");
    assert_eq!(response.status().as_u16(), 201);
    let header = response
        .headers()
        .get("x-neardup-cluster-root")
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .expect("the class header");
    let stored = stamps_in(&osmem.url, "news-header").await;
    assert_eq!(stored["1"]["cluster_root"], header.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stamped_pattern_no_template_covers_is_named_at_start() {
    let osmem = Osmem::start();
    let config = std::env::temp_dir().join(format!("neardup-coverage-{}.toml", std::process::id()));
    std::fs::write(
        &config,
        "[serve]\ntemplate_patterns = [\"news*\"]\ninstall_template = true\n[[serve.index]]\npattern = \"blog-*\"\nfields = [\"headline\", \"body\"]\nheadline_field = \"headline\"\n",
    )
    .expect("config");
    let config_arg = config.to_string_lossy().to_string();
    let sidecar = Sidecar::start(&osmem.url, &["--config", &config_arg]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let listed = loop {
        let listed = stats(&sidecar.url).await["stamp_mapping"]["patterns_not_covered"].clone();
        if listed.get("blog-*").is_some() || std::time::Instant::now() > deadline {
            break listed;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let _ = std::fs::remove_file(&config);
    assert!(listed.get("blog-*").is_some(), "{listed}");
    assert!(listed.get("news*").is_none(), "{listed}");
}
