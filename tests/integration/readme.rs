//! The README's cluster commands, run as written (only the sidecar's
//! address changed) against the real server through `neardup serve`: the
//! index mapping, the list page and the detail page must answer without an
//! error, with and without `--install-template` (a newcomer may read it as
//! optional), and the detail page must find the story's other outlets on
//! the demo's data, so the README cannot drift from `mappings/` again.

use crate::support;

use serde_json::Value;
use support::{Osmem, Sidecar, demo_bulk, post_bulk};

/// The README's shell block that follows `marker`.
fn readme_block_after(marker: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let after = &readme[readme.find(marker).expect("marker in README")..];
    let start = after.find("```sh\n").expect("a sh block") + "```sh\n".len();
    let end = after[start..].find("```").expect("block end");
    after[start..start + end].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_cluster_commands_answer_without_errors() {
    the_readme_cluster_commands_find_the_demos_stories(&["--install-template"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_cluster_commands_work_without_the_template_too() {
    the_readme_cluster_commands_find_the_demos_stories(&[]).await;
}

async fn the_readme_cluster_commands_find_the_demos_stories(sidecar_args: &[&str]) {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, sidecar_args);
    let address = sidecar.url.trim_start_matches("http://");
    let block = readme_block_after("Then, in the cluster").replace("localhost:9201", address);
    let (create, queries) = block
        .split_once("# the list page")
        .expect("the index step comes first");
    let run = |script: &str| {
        let output = std::process::Command::new("bash")
            .args(["-euo", "pipefail", "-c", script])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(std::process::Stdio::null())
            .output()
            .expect("bash");
        assert!(output.status.success(), "{script}: {output:?}");
        let answers: Vec<Value> = serde_json::Deserializer::from_slice(&output.stdout)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|error| panic!("{script}: not JSON ({error}): {output:?}"));
        for answer in &answers {
            assert!(answer.get("error").is_none(), "{script}: {answer}");
        }
        answers
    };
    run(create);
    let (body, documents) = demo_bulk("news");
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let answers = run(&format!("# the list page{queries}"));
    assert_eq!(answers.len(), 2, "list and detail page");
    let listed = answers[0]["hits"]["hits"].as_array().expect("hits").len();
    assert!(
        listed > 0 && listed < documents.len(),
        "collapsed: {listed}"
    );
    assert!(answers[1]["aggregations"]["outlets"]["buckets"].is_array());
    let other_outlets = answers[1]["hits"]["total"]["value"].as_u64();
    assert!(
        other_outlets.is_some_and(|found| found > 0),
        "the detail page of demo-001 finds its story's other outlets: {}",
        answers[1]
    );
}
