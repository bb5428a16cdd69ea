//! An article edited in place is placed again: after a partial update that
//! rewrites its text, or a script that does, its stamps name the class of
//! its new text and the counts follow it (OpenSearch-compatible osmem for
//! partial updates, Elasticsearch 8-compatible noida-db for scripts, which
//! osmem does not run).

use crate::support;

use serde_json::{Value, json};
use support::{
    Noida, Osmem, Sidecar, get_json, metrics_text, post_bulk, send_json, stamps_in, stats,
};

const REPORT: &str = "本市今天召开城市更新工作推进会，会议总结了过去一年老旧小区改造、背街小巷整治和公共空间提升等方面取得的进展，并对下一阶段的重点任务作出具体部署。会议指出，要坚持以居民需求为导向，统筹推进基础设施补短板和社区服务完善。";
const NOTICE: &str = "The city council approved a new plan on Tuesday to expand the public library network across the northern districts, adding four branches and extending opening hours on weekends for families and students. Officials said construction would begin next spring.";
const OTHER: &str = "A regional court on Monday heard the first arguments in a dispute between two shipping firms over a delayed container delivery, with a ruling expected later this month after both sides submit written statements to the judges.";

fn line(value: Value) -> String {
    format!("{value}\n")
}

/// Three unrelated articles, indexed through the sidecar.
async fn index_three(sidecar: &str, index: &str) {
    let mut body = String::new();
    for (id, title, content) in [
        ("report", "城市更新工作推进会召开", REPORT),
        ("notice", "Library network to grow", NOTICE),
        ("court", "Shipping firms in court", OTHER),
    ] {
        body += &line(json!({"index": {"_id": id}}));
        body += &line(json!({"title": title, "content": content, "views": 0}));
    }
    let (status, answer) = post_bulk(&format!("{sidecar}/{index}/_bulk?refresh=true"), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
}

fn root_of(stamps: &std::collections::BTreeMap<String, Value>, id: &str) -> String {
    stamps[id]["cluster_root"]
        .as_str()
        .unwrap_or_else(|| panic!("{id} stamped: {stamps:?}"))
        .to_string()
}

async fn class_documents(sidecar: &str, root: &str) -> u64 {
    let (_, class) = get_json(&format!("{sidecar}/_neardup/classes/{root}")).await;
    class["documents"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_update_that_rewrites_the_text_moves_the_document_to_its_new_class() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    index_three(&sidecar.url, "news").await;
    let before = stamps_in(&osmem.url, "news").await;
    let court_root = root_of(&before, "court");
    assert_ne!(root_of(&before, "notice"), court_root);

    // The notice is rewritten (bulk) into the court story; a view counter
    // update beside it touches no fingerprinted field.
    let mut body = String::new();
    body += &line(json!({"update": {"_id": "notice"}}));
    body += &line(json!({"doc": {"title": "Shipping firms in court", "content": OTHER}}));
    body += &line(json!({"update": {"_id": "report"}}));
    body += &line(json!({"doc": {"views": 5}}));
    let (status, answer) =
        post_bulk(&format!("{}/news/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    let after = stamps_in(&osmem.url, "news").await;
    assert_eq!(root_of(&after, "notice"), court_root, "{after:?}");
    assert_eq!(root_of(&after, "report"), root_of(&before, "report"));
    assert_eq!(after["report"]["views"], 5);
    assert_eq!(after["notice"]["content"], OTHER);
    assert_eq!(class_documents(&sidecar.url, &court_root).await, 2);
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 3);
    let metrics = metrics_text(&sidecar.url).await;
    assert!(
        metrics.contains("neardup_edited_documents_read_total 1\n"),
        "only the rewrite is read: {metrics}"
    );

    // The single-document API: the report's body becomes the notice's
    // original text, under its own headline kept.
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/news/_update/report?refresh=true", sidecar.url),
        &json!({"doc": {"title": "Library network to grow", "content": NOTICE}}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let last = stamps_in(&osmem.url, "news").await;
    let report_root = root_of(&last, "report");
    assert_ne!(report_root, root_of(&before, "report"));
    assert_ne!(report_root, court_root);
    assert_eq!(class_documents(&sidecar.url, &report_root).await, 1);
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 3);

    // An update of a document that does not exist is the cluster's 404,
    // and counts nothing.
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/news/_update/nowhere", sidecar.url),
        &json!({"doc": {"title": "x", "content": OTHER}}),
    )
    .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_update_is_read_back_and_stamped_after_it_ran() {
    let noida = Noida::start();
    let sidecar = Sidecar::start(&noida.url, &[]);
    index_three(&sidecar.url, "scripted").await;
    let before = stamps_in(&noida.url, "scripted").await;
    let court_root = root_of(&before, "court");

    let mut body = String::new();
    body += &line(json!({"update": {"_id": "notice"}}));
    body += &line(json!({"script": {
        "source": "ctx._source.title = params.title; ctx._source.content = params.content",
        "params": {"title": "Shipping firms in court", "content": OTHER}
    }}));
    let (status, answer) = post_bulk(
        &format!("{}/scripted/_bulk?refresh=true", sidecar.url),
        body,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    let after = stamps_in(&noida.url, "scripted").await;
    assert_eq!(after["notice"]["content"], OTHER);
    assert_eq!(root_of(&after, "notice"), court_root, "{after:?}");
    assert_eq!(class_documents(&sidecar.url, &court_root).await, 2);
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 3);
    let metrics = metrics_text(&sidecar.url).await;
    assert!(
        metrics.contains("neardup_edited_documents_restamped_total 1\n"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_raced_by_another_write_is_stamped_from_the_text_the_cluster_holds() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    index_three(&sidecar.url, "raced").await;

    // Two edits of one document in one request: both merge into the text
    // read before the request, but the second is applied on top of the
    // first. Its answer's version tells, and a follow-up stamps the text
    // the cluster holds: the first edit's headline, the second's body.
    let mut body = String::new();
    body += &line(json!({"update": {"_id": "notice"}}));
    body += &line(json!({"doc": {"title": "城市更新工作推进会召开"}}));
    body += &line(json!({"update": {"_id": "notice"}}));
    body += &line(json!({"doc": {"content": REPORT}}));
    let (status, answer) =
        post_bulk(&format!("{}/raced/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    let stamps = stamps_in(&osmem.url, "raced").await;
    assert_eq!(stamps["notice"]["title"], "城市更新工作推进会召开");
    assert_eq!(stamps["notice"]["content"], REPORT);
    assert_eq!(root_of(&stamps, "notice"), root_of(&stamps, "report"));
    assert_eq!(
        stamps["notice"]["simhash"], stamps["report"]["simhash"],
        "the stamp describes the exact text held: {stamps:?}"
    );
    assert_eq!(stats(&sidecar.url).await["forest"]["documents"], 3);
    let metrics = metrics_text(&sidecar.url).await;
    assert!(
        metrics.contains("neardup_edited_documents_restamped_total 1\n"),
        "{metrics}"
    );
}
