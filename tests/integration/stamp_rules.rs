//! One rule decides what gets stamped: the same bulk body through
//! `neardup stamp --format bulk` and through the sidecar (into the real
//! OpenSearch-compatible server) leaves the same documents stamped, with
//! the same `cluster_root`.

use crate::support;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;
use support::{Osmem, Sidecar, post_bulk, stamps_in};

const REPORT: &str = "本市今天召开城市更新工作推进会，会议总结了过去一年老旧小区改造、背街小巷整治和公共空间提升等方面取得的进展，并对下一阶段的重点任务作出具体部署。会议指出，要坚持以居民需求为导向，统筹推进基础设施补短板和社区服务完善。";
const NOTICE: &str = "The city council approved a new plan on Tuesday to expand the public library network across the northern districts, adding four branches and extending opening hours on weekends for families and students. Officials said construction would begin next spring.";

/// Every kind of bulk item, and a last action without its source line.
fn body() -> String {
    let line = |value: Value| format!("{value}\n");
    let mut body = String::new();
    body += &line(serde_json::json!({"index": {"_id": "indexed"}}));
    body += &line(serde_json::json!({"title": "城市更新工作推进会召开", "content": REPORT}));
    body += &line(serde_json::json!({"create": {"_id": "created"}}));
    body += &line(
        serde_json::json!({"title": "城市更新工作推进会召开", "content": format!("{REPORT}\n责任编辑：王明")}),
    );
    body += &line(serde_json::json!({"update": {"_id": "upserted"}}));
    body += &line(serde_json::json!({
        "doc": {"views": 1},
        "upsert": {"title": "Library network to grow", "content": NOTICE}
    }));
    body += &line(serde_json::json!({"update": {"_id": "doc-as-upsert"}}));
    body += &line(serde_json::json!({
        "doc": {"title": "Library network to grow", "content": format!("{NOTICE} (Reporting by A. Writer)")},
        "doc_as_upsert": true
    }));
    body += &line(serde_json::json!({"update": {"_id": "indexed"}}));
    body += &line(serde_json::json!({"doc": {"views": 3}}));
    body += &line(serde_json::json!({"delete": {"_id": "never-indexed"}}));
    body += &line(serde_json::json!({"index": {"_id": "no-source"}}));
    body
}

/// id → `cluster_root` of the sources `neardup stamp` stamped.
fn stamped_offline(body: &str) -> BTreeMap<String, Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["stamp", "-q", "--format", "bulk"])
        .env_remove("NEARDUP_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("neardup starts");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(body.as_bytes())
        .expect("input written");
    let output = child.wait_with_output().expect("neardup finishes");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect();
    let mut stamped = BTreeMap::new();
    let mut current_id = None;
    for line in &lines {
        let action = ["index", "create", "update", "delete"]
            .iter()
            .find_map(|kind| line.get(*kind));
        if let Some(action) = action {
            current_id = action["_id"].as_str().map(str::to_string);
            continue;
        }
        let root = line
            .get("cluster_root")
            .or_else(|| line.pointer("/upsert/cluster_root"))
            .or_else(|| line.pointer("/doc/cluster_root"))
            .cloned();
        if let (Some(id), Some(root)) = (current_id.take(), root) {
            stamped.insert(id, root);
        }
    }
    stamped
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stamp_and_the_sidecar_stamp_the_same_documents_with_the_same_roots() {
    let body = body();
    let offline = stamped_offline(&body);
    assert_eq!(
        offline.keys().map(String::as_str).collect::<Vec<_>>(),
        ["created", "doc-as-upsert", "indexed", "upserted"],
        "{offline:?}"
    );
    assert_eq!(offline["indexed"], offline["created"]);
    assert_eq!(offline["upserted"], offline["doc-as-upsert"]);
    assert_ne!(offline["indexed"], offline["upserted"]);

    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (status, answer) =
        post_bulk(&format!("{}/news/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let in_cluster: BTreeMap<String, Value> = stamps_in(&osmem.url, "news")
        .await
        .into_iter()
        .filter_map(|(id, source)| Some((id, source.get("cluster_root")?.clone())))
        .collect();
    assert_eq!(in_cluster, offline);
}
