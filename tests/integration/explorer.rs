//! The Explorer (`/_neardup/ui/`) in a real browser: the demo corpus goes
//! through the sidecar into osmem-server, headless Chromium renders the
//! pages, and the rendered DOM must list the largest class with its size,
//! and the class page its documents with their differing text marked.
//!
//! The browser tests need Chromium (Debian's `chromium` package; `.ci/run`
//! installs it): where it is absent they fail under `CI=true` and skip,
//! saying so, elsewhere. `NEARDUP_CHROMIUM` names another
//! binary; `NEARDUP_SCREENSHOTS=<dir>` also saves `explorer-list.png` and
//! `explorer-class.png` there (1280×900), the pictures of the README.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use serde_json::{Value, json};
use support::{Osmem, RecordingUpstream, Sidecar, TempDir, client, json_of, post_bulk, send_json};

const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// Chromium: `NEARDUP_CHROMIUM`, or Debian's. Missing, the test fails
/// under CI and skips elsewhere ([`support::needed`]).
fn chromium() -> Option<PathBuf> {
    let found = match std::env::var("NEARDUP_CHROMIUM") {
        Ok(path) => Some(PathBuf::from(path)),
        Err(_) => ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
            .iter()
            .map(PathBuf::from)
            .find(|path| path.exists()),
    };
    support::needed(
        found,
        "chromium (apt-get install chromium, or set NEARDUP_CHROMIUM; .ci/run installs it)",
    )
}

/// Runs headless Chromium on `url` with a fresh profile; `action` is
/// `--dump-dom` or `--screenshot=…`. Returns standard output.
fn browse(chromium: &Path, url: &str, action: &[&str]) -> String {
    let profile = TempDir::new("chromium");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(action)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait chromium").is_some() {
            break;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish {url} within {BROWSER_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().expect("chromium output")
}

fn dump_dom(chromium: &Path, url: &str) -> String {
    let dom = browse(chromium, url, &["--dump-dom"]);
    assert!(dom.contains("</html>"), "no DOM for {url}: {dom}");
    dom
}

fn screenshot(chromium: &Path, url: &str, file: &Path) {
    browse(
        chromium,
        url,
        &[
            &format!("--screenshot={}", file.display()),
            "--window-size=1280,900",
        ],
    );
    assert!(file.exists(), "no screenshot {}", file.display());
}

/// The value of `attribute` in each element that has `marker` in its tag, in
/// document order (the DOM as Chromium serialises it: double quotes).
fn attribute_values(dom: &str, marker: &str, attribute: &str) -> Vec<String> {
    dom.match_indices(marker)
        .filter_map(|(at, _)| {
            let tag_end = at + dom[at..].find('>')?;
            let tag = &dom[at..tag_end];
            let start = tag.find(&format!("{attribute}=\""))? + attribute.len() + 2;
            let length = tag[start..].find('"')?;
            Some(tag[start..start + length].to_string())
        })
        .collect()
}

async fn load_demo(sidecar: &Sidecar, index: &str) -> Vec<Value> {
    let mapping = json!({"mappings": {"properties": {
        "source": {"type": "keyword"}, "url": {"type": "keyword"},
        "story": {"type": "keyword"}, "published_at": {"type": "date"},
        "title": {"type": "text"}, "content": {"type": "text"}}}});
    let (status, created) = send_json(
        reqwest::Method::PUT,
        &format!("{}/{index}", sidecar.url),
        &mapping,
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let (body, documents) = support::demo_bulk(index);
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    documents
}

#[tokio::test]
async fn the_list_shows_the_largest_class_and_the_class_page_marks_what_differs() {
    let Some(chromium) = chromium() else {
        return;
    };
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(
        &osmem.url,
        &["--install-template", "--template-patterns", "news*"],
    );
    let documents = load_demo(&sidecar, "news-demo").await;

    // What the cluster holds: documents per class, and the largest classes.
    let stamps = support::stamps_in(&osmem.url, "news-demo").await;
    let mut members: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, source) in &stamps {
        let root = source["cluster_root"]
            .as_str()
            .expect("stamped")
            .to_string();
        members.entry(root).or_default().insert(id.clone());
    }
    let largest_size = members.values().map(BTreeSet::len).max().expect("classes");
    assert!(largest_size >= 3, "the demo has stories of several copies");
    let stats = support::stats(&sidecar.url).await;

    let list = dump_dom(&chromium, &format!("{}/_neardup/ui/", sidecar.url));
    // The page's counters are /_neardup/stats'.
    for (attribute, stat) in [
        ("data-documents", "documents"),
        ("data-roots", "roots"),
        ("data-nodes", "nodes"),
    ] {
        assert_eq!(
            attribute_values(&list, "<dl class=\"stats\"", attribute),
            [stats["forest"][stat].to_string()],
            "{attribute}"
        );
    }
    assert_eq!(stats["forest"]["documents"], documents.len());
    let roots = attribute_values(&list, "<tr class=\"class\"", "data-root");
    let sizes = attribute_values(&list, "<tr class=\"class\"", "data-documents");
    assert_eq!(
        roots.len(),
        members.len(),
        "every class is listed: {roots:?}"
    );
    let largest = roots[0].clone();
    assert_eq!(sizes[0], largest_size.to_string(), "largest first");
    assert_eq!(members[&largest].len(), largest_size, "{largest}");
    for (root, size) in roots.iter().zip(&sizes) {
        assert_eq!(size, &members[root].len().to_string(), "class {root}");
    }
    // The largest class is named by its root document's title.
    let root_title = stamps
        .values()
        .find(|source| source["simhash"] == largest.as_str())
        .and_then(|source| source["title"].as_str())
        .expect("the root document is in the index");
    assert!(list.contains(root_title), "{root_title} not on the list");

    let class_url = format!("{}/_neardup/ui/classes/{largest}", sidecar.url);
    let class = dump_dom(&chromium, &class_url);
    let listed: BTreeSet<String> = attribute_values(&class, "<tr class=\"member\"", "data-id")
        .into_iter()
        .collect();
    assert_eq!(
        listed, members[&largest],
        "the class page lists its members"
    );
    assert_eq!(class.matches("class=\"rule root\"").count(), 1);
    assert!(
        class.contains("<mark class=\"differs\">"),
        "differing text is marked"
    );
    assert!(class.contains("<details class=\"pair\" id=\"pair-"));
    assert!(class.contains("data-figure=\"hamming_distance\""));
    // Times read alike on both pages: the same element, the same fields.
    let member_row = class
        .split("<tr class=\"member\"")
        .nth(1)
        .expect("a member row");
    assert!(member_row.contains("<time datetime=\""), "{member_row}");
    assert!(list.contains("<time datetime=\""));

    // The same page in Chinese.
    let chinese = dump_dom(&chromium, &format!("{class_url}?lang=zh"));
    assert!(chinese.contains("<html lang=\"zh-CN\">"));
    assert!(chinese.contains("逐篇与根文档对比"));
    assert!(
        chinese.contains("simhash 近邻") && !chinese.contains("for simhash neighbours"),
        "the requirement column is in Chinese too"
    );

    if let Ok(directory) = std::env::var("NEARDUP_SCREENSHOTS") {
        let directory = PathBuf::from(directory);
        std::fs::create_dir_all(&directory).expect("screenshot directory");
        screenshot(
            &chromium,
            &format!("{}/_neardup/ui/", sidecar.url),
            &directory.join("explorer-list.png"),
        );
        screenshot(&chromium, &class_url, &directory.join("explorer-class.png"));
    }
}

#[tokio::test]
async fn document_text_never_becomes_markup() {
    let Some(chromium) = chromium() else {
        return;
    };
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(
        &osmem.url,
        &["--install-template", "--template-patterns", "news*"],
    );
    let hostile =
        "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>";
    let content = "市气象台今天发布暴雨蓝色预警，预计未来十二小时内本市大部分地区将出现暴雨，局地大暴雨，请市民注意防范城市内涝和山洪灾害，减少不必要的外出活动。";
    let mut body = String::new();
    for (id, title, source) in [
        ("a", format!("{hostile}暴雨预警"), "<b>outlet</b>"),
        ("b", format!("{hostile}暴雨预警"), "javascript:alert(1)"),
    ] {
        body.push_str(&json!({"index": {"_index": "news-hostile", "_id": id}}).to_string());
        body.push('\n');
        let url = "javascript:alert(1)";
        body.push_str(
            &json!({"title": title, "content": content, "source": source, "url": url}).to_string(),
        );
        body.push('\n');
    }
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), body).await;
    assert_eq!(status, 200, "{answer}");
    let stamps = support::stamps_in(&osmem.url, "news-hostile").await;
    let root = stamps["a"]["cluster_root"].as_str().expect("stamped");
    assert_eq!(stamps["b"]["cluster_root"], root, "a verbatim copy");

    for url in [
        format!("{}/_neardup/ui/", sidecar.url),
        format!("{}/_neardup/ui/classes/{root}", sidecar.url),
    ] {
        let dom = dump_dom(&chromium, &url);
        assert!(!dom.contains("<img"), "{url}: {dom}");
        assert!(!dom.contains("<b>outlet"), "{url}");
        assert!(!dom.contains("pwned</title>"), "{url}");
        assert!(!dom.contains("href=\"javascript:"), "{url}");
    }
}

#[tokio::test]
async fn the_compare_box_draws_the_fingerprint_endpoints_decision() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &[]);
    let (status, answer) = send_json(
        reqwest::Method::POST,
        &format!("{}/_neardup/fingerprint", sidecar.url),
        &json!({"texts": [
            "全市第3季度新增就业岗位一万个，创历史新高",
            "全市第4季度新增就业岗位一万个，创历史新高"
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let decision = &answer["comparison"]["decision"];
    assert_eq!(decision["joins"], false, "{decision}");
    assert_eq!(decision["rule"], "kept_apart");
    let repost = decision["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .find(|figure| figure["name"] == "repost")
        .expect("repost figure");
    assert_eq!(repost["passes"], false);
    assert!(
        repost["value"]
            .as_str()
            .is_some_and(|value| value.contains("1 figure(s) changed")),
        "{repost}"
    );
    // The page carries the box, its script and its style, all from the binary.
    let page = client()
        .get(format!("{}/_neardup/ui/", sidecar.url))
        .send()
        .await
        .expect("GET");
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .expect("ascii")
            .contains("script-src 'self'")
    );
    let page = page.text().await.expect("body");
    assert!(page.contains("id=\"compare-form\" data-endpoint=\"/_neardup/fingerprint\""));
    for asset in ["explorer.js", "explorer.css"] {
        let answer = client()
            .get(format!("{}/_neardup/ui/{asset}", sidecar.url))
            .send()
            .await
            .expect("GET asset");
        assert_eq!(answer.status(), 200, "{asset}");
    }

    // In the browser: a link with both texts fills the box and draws the
    // endpoint's answer.
    let Some(chromium) = chromium() else {
        return;
    };
    let left = "全市第3季度新增就业岗位一万个，创历史新高";
    let right = "全市第4季度新增就业岗位一万个，创历史新高";
    let url = reqwest::Url::parse_with_params(
        &format!("{}/_neardup/ui/", sidecar.url),
        [("left", left), ("right", right)],
    )
    .expect("URL");
    let dom = dump_dom(&chromium, url.as_str());
    let result = &dom[dom.find("id=\"compare-result\"").expect("result box")..];
    assert!(result.contains("<p class=\"apart\">"), "{result}");
    assert!(result.contains("data-figure=\"repost\""), "{result}");
}

#[tokio::test]
async fn class_pages_search_with_the_viewers_credentials_and_pass_refusals_back() {
    let cluster = RecordingUpstream::start(|request| {
        if request.headers.get("authorization").is_none() {
            let body = json!({"error": {"type": "security_exception", "reason": "missing authentication credentials"}, "status": 401});
            return (
                StatusCode::UNAUTHORIZED,
                vec![
                    ("content-type".into(), "application/json".into()),
                    ("www-authenticate".into(), "Basic realm=\"security\"".into()),
                ],
                body.to_string().into_bytes(),
            );
        }
        let body = json!({"hits": {"total": {"value": 0, "relation": "eq"}, "hits": []}});
        (
            StatusCode::OK,
            vec![("content-type".into(), "application/json".into())],
            body.to_string().into_bytes(),
        )
    })
    .await;
    let sidecar = Sidecar::start(&cluster.url, &[]);
    let url = format!("{}/_neardup/ui/classes/00000000000000ab", sidecar.url);

    let refused = client().get(&url).send().await.expect("GET");
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.headers()["www-authenticate"],
        "Basic realm=\"security\""
    );
    let (_, error) = json_of(refused).await;
    assert_eq!(error["error"]["type"], "security_exception");

    // A class neither the forest nor the index knows: a page, not JSON.
    let missing = client()
        .get(&url)
        .header("authorization", "Basic dmlld2VyOnNlY3JldA==")
        .send()
        .await
        .expect("GET");
    assert_eq!(missing.status(), 404);
    assert!(
        missing.headers()["content-type"]
            .to_str()
            .is_ok_and(|value| value.starts_with("text/html")),
        "{:?}",
        missing.headers()
    );
    let page = missing.text().await.expect("page");
    assert!(
        page.contains("No such class") && page.contains("00000000000000ab"),
        "{page}"
    );
    let searches: Vec<_> = cluster
        .recorded()
        .into_iter()
        .filter(|request| request.path_and_query == "/_search")
        .collect();
    assert_eq!(searches.len(), 2);
    assert_eq!(
        searches[1].headers["authorization"],
        "Basic dmlld2VyOnNlY3JldA=="
    );
    let query: Value = serde_json::from_slice(&searches[1].body).expect("JSON query");
    assert_eq!(query["query"]["term"]["cluster_root"], "00000000000000ab");

    let (status, bad) = json_of(
        client()
            .get(format!("{}/_neardup/ui/classes/nothex", sidecar.url))
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(bad["error"]["type"], "illegal_argument_exception");
}
