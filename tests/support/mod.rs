//! Processes for integration tests: the real OpenSearch-compatible server
//! (osmem-server from the pinned PyPI wheel, installed by `scripts/venv.sh`),
//! the `neardup serve` binary, and a small recording upstream for faults the
//! real server cannot produce (never a stand-in for the cluster's behaviour).
#![allow(dead_code)]

pub mod busy;
pub mod state;
pub mod stories;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use serde_json::Value;

const START_TIMEOUT: Duration = Duration::from_secs(60);

pub fn project_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether this run is CI (`CI=true`): there a check that cannot run
/// fails instead of skipping.
pub fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `found`, where what a test needs is there. Where it is missing (`None`),
/// the test fails under CI, naming `what` is missing; elsewhere it says so
/// on the terminal (past the test harness's capture, so that a passing run
/// shows it) and the caller skips.
pub fn needed<T>(found: Option<T>, what: &str) -> Option<T> {
    if found.is_none() {
        assert!(!under_ci(), "missing under CI=true: {what}");
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {}: missing {what} (under CI=true this fails)",
            std::thread::current().name().unwrap_or("a test")
        );
    }
    found
}

/// The osmem-server binary: `$NEARDUP_OSMEM`, or `.venv/bin/osmem-server`
/// after running `scripts/venv.sh` once per test process.
pub fn osmem_binary() -> &'static PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Ok(path) = std::env::var("NEARDUP_OSMEM") {
            return PathBuf::from(path);
        }
        let status = Command::new("bash")
            .arg(project_root().join("scripts/venv.sh"))
            .stdin(Stdio::null())
            .status()
            .expect("run scripts/venv.sh");
        assert!(status.success(), "scripts/venv.sh failed");
        project_root().join(".venv/bin/osmem-server")
    })
}

/// Reads the first stdout line of `child` (JSON), within the start timeout.
fn first_json_line(child: &mut Child, what: &str) -> Value {
    let stdout = child.stdout.take().expect("piped stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = sender.send(line);
        // Keep draining so the child never blocks on a full pipe.
        let mut sink = String::new();
        while reader
            .read_line(&mut sink)
            .map(|read| read > 0)
            .unwrap_or(false)
        {
            sink.clear();
        }
    });
    let line = receiver
        .recv_timeout(START_TIMEOUT)
        .unwrap_or_else(|_| panic!("{what} did not start within {START_TIMEOUT:?}"));
    serde_json::from_str(&line).unwrap_or_else(|error| panic!("{what} printed {line:?}: {error}"))
}

/// A running noida-db serving an Elasticsearch 8.15 compatible API (the
/// binary bundled in the pinned `noida-db` wheel, run directly so that
/// killing it stops the server), on a free port, with a data directory of
/// its own.
pub struct Noida {
    child: Child,
    pub url: String,
    _data: TempDir,
}

impl Noida {
    pub fn start() -> Self {
        osmem_binary(); // the venv, with the wheel in it
        let binary = std::fs::read_dir(project_root().join(".venv/lib"))
            .expect(".venv/lib")
            .flatten()
            .map(|python| python.path().join("site-packages/noida_db/noida-db"))
            .find(|path| path.exists())
            .expect("noida-db in the venv (scripts/requirements.txt)");
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755));
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("free port")
            .port();
        let data = TempDir::new("noida");
        let child = Command::new(binary)
            .args(["start", "--only", "elasticsearch", "--elasticsearch-port"])
            .arg(port.to_string())
            .arg("--data-dir")
            .arg(data.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start noida-db");
        let url = format!("http://127.0.0.1:{port}");
        let deadline = std::time::Instant::now() + START_TIMEOUT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "noida-db did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Noida {
            child,
            url,
            _data: data,
        }
    }
}

impl Drop for Noida {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running osmem-server; it exits when its stdin closes (on drop, or when
/// the test process dies).
pub struct Osmem {
    child: Child,
    _stdin: ChildStdin,
    pub url: String,
}

impl Osmem {
    pub fn start() -> Self {
        let mut child = Command::new(osmem_binary())
            .args(["-addr", "127.0.0.1:0", "-no-ja"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start osmem-server");
        let stdin = child.stdin.take().expect("piped stdin");
        let first = first_json_line(&mut child, "osmem-server");
        let url = first["url"].as_str().expect("url").to_string();
        Osmem {
            child,
            _stdin: stdin,
            url,
        }
    }

    /// Stops the server now (the sidecar's upstream goes away).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Osmem {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A proxied request read whole: its head, its body and its path with the
/// query.
pub async fn read_request(
    request: axum::extract::Request,
) -> (axum::http::request::Parts, axum::body::Bytes, String) {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/".to_string(), ToString::to_string);
    (parts, body, path)
}

/// A member's replica status (`/_neardup/stats`' `replica`).
pub async fn replica(url: &str) -> Value {
    stats(url).await["replica"].clone()
}

/// Waits until the member at `url` has `role`; its replica status.
pub async fn wait_for_role(url: &str, role: &str, within: Duration) -> Value {
    let started = std::time::Instant::now();
    loop {
        let status = replica(url).await;
        if status["role"] == role {
            return status;
        }
        assert!(
            started.elapsed() < within,
            "{url} not {role} within {within:?}: {status}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the member at `url` answers as a standby under a node id
/// other than `old_node`: it stepped down and restarted itself to rejoin
/// (same address). Its status.
pub async fn wait_for_rejoin(url: &str, old_node: &str, within: Duration) -> Value {
    let started = std::time::Instant::now();
    loop {
        if let Ok(response) = client().get(format!("{url}/_neardup/replica")).send().await
            && let Ok(status) = response.json::<Value>().await
            && status["node"] != old_node
            && status["role"] == "standby"
        {
            return status;
        }
        assert!(
            started.elapsed() < within,
            "{url} did not rejoin by itself within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The replica group secret the tests' members share.
pub const TEST_SECRET: &str = "neardup-tests-group-secret-0123456789";

/// A file holding [`TEST_SECRET`], in the build's own temporary directory
/// (one file for every test process: each writes it whole and renames it
/// into place, so none reads it half written, and none leaves a file
/// behind in the system's temporary directory).
pub fn group_secret_file() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let directory = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let path = directory.join("neardup-group-secret");
        let written = directory.join(format!("neardup-group-secret-{}", std::process::id()));
        std::fs::write(&written, format!("{TEST_SECRET}\n")).expect("secret file");
        std::fs::rename(&written, &path).expect("secret file in place");
        path.to_string_lossy().into_owned()
    })
    .clone()
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(label: &str) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "neardup-{label}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `neardup serve`.
pub struct Sidecar {
    child: Child,
    pub url: String,
    /// The state directory made for this sidecar, if it made one.
    _state: Option<TempDir>,
}

impl Sidecar {
    /// A sidecar with a state directory of its own (removed on drop).
    pub fn start(upstream: &str, extra_args: &[&str]) -> Self {
        let state = TempDir::new("state");
        let state_dir = state.path().to_string_lossy().to_string();
        let mut sidecar = Self::start_with_state(upstream, &state_dir, extra_args);
        sidecar._state = Some(state);
        sidecar
    }

    /// A sidecar on a given state directory (to restart on the same state).
    /// A member of a replica group gets the tests' group secret unless the
    /// arguments name one.
    pub fn start_with_state(upstream: &str, state_dir: &str, extra_args: &[&str]) -> Self {
        Self::start_with_env(upstream, state_dir, extra_args, &[])
    }

    /// As [`Sidecar::start_with_state`], with environment variables set.
    pub fn start_with_env(
        upstream: &str,
        state_dir: &str,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        Self::spawn(upstream, "127.0.0.1:0", state_dir, extra_args, env)
    }

    /// A sidecar listening on a given address (one that survives the
    /// process restarting itself).
    pub fn start_listening(
        upstream: &str,
        listen: &str,
        state_dir: &str,
        extra_args: &[&str],
    ) -> Self {
        Self::spawn(upstream, listen, state_dir, extra_args, &[])
    }

    fn spawn(
        upstream: &str,
        listen: &str,
        state_dir: &str,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let needs_secret = extra_args.contains(&"--replica-group")
            && !extra_args.contains(&"--replica-secret-file");
        let secret: Vec<String> = if needs_secret {
            vec!["--replica-secret-file".into(), group_secret_file()]
        } else {
            Vec::new()
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["serve", "--upstream", upstream, "--listen", listen])
            .args(["--state-dir", state_dir])
            .args(extra_args)
            .args(&secret)
            .env("NEARDUP_LOG", "error")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start neardup serve");
        let first = first_json_line(&mut child, "neardup serve");
        let url = first["listen"].as_str().expect("listen").to_string();
        Sidecar {
            child,
            url,
            _state: None,
        }
    }

    /// SIGTERM, and wait for the process to finish (graceful shutdown).
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        self.child.wait().expect("wait")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, as a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.kill();
    }
}

/// An HTTP client with a bound on every request.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

/// Status and JSON body of a response.
pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, value)
}

pub async fn get_json(url: &str) -> (u16, Value) {
    json_of(client().get(url).send().await.expect("GET")).await
}

pub async fn post_bulk(url: &str, body: impl Into<String>) -> (u16, Value) {
    json_of(
        client()
            .post(url)
            .header("content-type", "application/x-ndjson")
            .body(body.into())
            .send()
            .await
            .expect("POST bulk"),
    )
    .await
}

pub async fn send_json(method: reqwest::Method, url: &str, body: &Value) -> (u16, Value) {
    json_of(
        client()
            .request(method, url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request"),
    )
    .await
}

/// The sidecar's `/metrics`, as text.
pub async fn metrics_text(sidecar: &str) -> String {
    client()
        .get(format!("{sidecar}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text")
}

/// The sidecar's `/_neardup/stats`.
pub async fn stats(sidecar: &str) -> Value {
    get_json(&format!("{sidecar}/_neardup/stats")).await.1
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path_and_query: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

type Responder = dyn Fn(&Recorded) -> (StatusCode, Vec<(String, String)>, Vec<u8>) + Send + Sync;

/// Serves `app` on a free loopback port until the sender is used or
/// dropped; its URL.
pub async fn serve_locally(app: axum::Router) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    (url, shutdown)
}

/// A tiny upstream that records requests and answers with `responder`.
pub struct RecordingUpstream {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Whether a recording upstream keeps what it received.
static FORGETFUL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, recording upstreams of this process answer without
/// keeping requests (long load runs).
pub fn forget_requests() {
    FORGETFUL.store(true, std::sync::atomic::Ordering::Relaxed);
}

impl RecordingUpstream {
    pub async fn start(
        responder: impl Fn(&Recorded) -> (StatusCode, Vec<(String, String)>, Vec<u8>)
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::start_delayed(Duration::ZERO, responder).await
    }

    /// Like `start`, but every answer waits `delay` first (without blocking
    /// the runtime).
    pub async fn start_delayed(
        delay: Duration,
        responder: impl Fn(&Recorded) -> (StatusCode, Vec<(String, String)>, Vec<u8>)
        + Send
        + Sync
        + 'static,
    ) -> Self {
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let responder: Arc<Responder> = Arc::new(responder);
        let recorded = requests.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let recorded = recorded.clone();
            let responder = responder.clone();
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_default();
                let entry = Recorded {
                    method: parts.method,
                    path_and_query: parts
                        .uri
                        .path_and_query()
                        .map_or("/".to_string(), ToString::to_string),
                    headers: parts.headers,
                    body,
                };
                tokio::time::sleep(delay).await;
                let (status, headers, body) = responder(&entry);
                if !FORGETFUL.load(std::sync::atomic::Ordering::Relaxed) {
                    recorded.lock().expect("lock").push(entry);
                }
                let mut response = axum::response::Response::new(axum::body::Body::from(body));
                *response.status_mut() = status;
                for (name, value) in headers {
                    response.headers_mut().insert(
                        axum::http::HeaderName::try_from(name).expect("header name"),
                        axum::http::HeaderValue::try_from(value).expect("header value"),
                    );
                }
                response
            }
        });
        let (url, shutdown) = serve_locally(app).await;
        RecordingUpstream {
            url,
            requests,
            shutdown: Some(shutdown),
        }
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }
}

/// The first `_bulk` request `upstream` received (the sidecar's own
/// requests, such as its look at the cluster at start, come before it).
pub fn first_bulk(upstream: &RecordingUpstream) -> Recorded {
    upstream
        .recorded()
        .into_iter()
        .find(|request| request.path_and_query.contains("_bulk"))
        .expect("a bulk request")
}

impl Drop for RecordingUpstream {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// The demo corpus as bulk NDJSON into `index`, ids from the `id` field.
pub fn demo_bulk(index: &str) -> (String, Vec<Value>) {
    let text = std::fs::read_to_string(project_root().join("tests/fixtures/demo/articles.jsonl"))
        .expect("demo corpus");
    let mut body = String::new();
    let mut documents = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let document: Value = serde_json::from_str(line).expect("JSON line");
        let id = document["id"].as_str().expect("id");
        body.push_str(&serde_json::json!({"index": {"_index": index, "_id": id}}).to_string());
        body.push('\n');
        body.push_str(line);
        body.push('\n');
        documents.push(document);
    }
    (body, documents)
}

/// `cluster_root` of every document of `index`, read from the server
/// itself (not through the sidecar): id → stamp.
pub async fn stamps_in(server: &str, index: &str) -> std::collections::BTreeMap<String, Value> {
    let _ = client()
        .post(format!("{server}/{index}/_refresh"))
        .send()
        .await;
    let (status, found) = send_json(
        reqwest::Method::POST,
        &format!("{server}/{index}/_search"),
        &serde_json::json!({"size": 1000, "query": {"match_all": {}}}),
    )
    .await;
    assert_eq!(status, 200, "{found}");
    found["hits"]["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|hit| {
            (
                hit["_id"].as_str().expect("id").to_string(),
                hit["_source"].clone(),
            )
        })
        .collect()
}

/// A replica group member's arguments: `group`, `name`, a lease of
/// `lease`, the stamps' template installed for `news*`, then `extra`.
pub fn replica_member_args<'a>(
    group: &'a str,
    name: &'a str,
    lease: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "--replica-group",
        group,
        "--replica-name",
        name,
        "--replica-lease",
        lease,
        "--install-template",
        "--template-patterns",
        "news*",
    ];
    args.extend(extra);
    args
}

/// A small deterministic generator for test and bench data (xorshift64).
pub struct Xorshift(pub u64);

impl Xorshift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// The sentences (ended by 。！？) of the demo corpus's contents that have
/// more than `min_chars` characters and some non-ASCII text, sorted and
/// unique: material for generated test and bench articles.
pub fn demo_sentences(min_chars: usize) -> Vec<String> {
    let text = std::fs::read_to_string(project_root().join("tests/fixtures/demo/articles.jsonl"))
        .expect("demo corpus");
    let mut sentences = Vec::new();
    for line in text.lines() {
        let document: Value = serde_json::from_str(line).expect("JSON line");
        let content = document["content"].as_str().unwrap_or_default();
        for sentence in content.split_inclusive(['。', '！', '？']) {
            if sentence.chars().count() > min_chars && !sentence.is_ascii() {
                sentences.push(sentence.trim().to_string());
            }
        }
    }
    sentences.sort();
    sentences.dedup();
    sentences
}

/// Effects of `count` placements with the engine's typical side data,
/// generated as they are consumed (benches): 60% short texts of 40 Han
/// letters drawn at random and their bigram hashes (as the fingerprinter
/// takes them), 40% long texts with a 64-value sketch, a
/// 48-letter lead, a headline and 6 numbers; one node in five a leaf; one
/// document key per node. With `NEARDUP_LEAN_SIDE_RECORDS=true`, the short
/// texts are checked for shingles their letters give back, as the analyser
/// does with `--lean-side-records`. With `NEARDUP_CAPACITY_STREAM=FILE`,
/// the texts are a stream's, their letters drawn again ([`StreamTexts`]).
///
/// A node's fingerprint is a function of its position, so a leaf names a
/// root at a random earlier position without a list of the roots (which,
/// at 8 bytes for four nodes in five, was counted in the capacity bench's
/// memory as if it were the engine's).
pub fn synthetic_placements(count: usize) -> impl Iterator<Item = neardup::ledger::Effect> {
    use neardup::engine::EngineEffect;
    use neardup::ledger::{DocumentKey, Effect};
    let mut random = Xorshift(0x9e37_79b9_7f4a_7c15);
    let fingerprint_at = |position: usize| {
        // splitmix64's finaliser: a bijection, so positions never collide.
        let mut bits = (position as u64).wrapping_add(0x2545_f491_4f6c_dd1d);
        bits = (bits ^ (bits >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        bits = (bits ^ (bits >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        bits ^ (bits >> 31)
    };
    let fingerprinter =
        neardup::fingerprint::Fingerprinter::new(Default::default()).expect("default settings");
    let lean = std::env::var("NEARDUP_LEAN_SIDE_RECORDS").is_ok_and(|value| value == "true");
    let stream_texts = std::env::var_os("NEARDUP_CAPACITY_STREAM")
        .map(|path| StreamTexts::read(std::path::Path::new(&path), STREAM_TEXTS_POOL, lean));
    (0..count).flat_map(move |position| {
        let fingerprint = fingerprint_at(position);
        // Positions 4, 9, 14, … are leaves; the others roots.
        let root = if position % 5 == 4 {
            // One of the position / 5 * 4 + 4 roots so far, uniformly.
            let root_number = random.below(position / 5 * 4 + 4);
            fingerprint_at(root_number / 4 * 5 + root_number % 4)
        } else {
            fingerprint
        };
        let short = position % 5 < 3;
        let (short_text, long_text) = match &stream_texts {
            Some(texts) => texts.draw(short, &mut random),
            None => uniform_texts(short, &fingerprinter, lean, &mut random),
        };
        let exact_hash = Some(random.next());
        let key = DocumentKey(random.next());
        [
            Effect::Engine(EngineEffect::Placed {
                now: 1_700_000_000_000 + position as i64,
                fingerprint,
                root,
                exact_hash,
                short_text,
                long_text,
                sentences: Vec::new(),
            }),
            // The cluster's answer, as the sidecar logs it: the placement
            // is settled and the key holds the fingerprint (without the
            // first, every placement would stay "in doubt" and recovery
            // would take each back).
            Effect::Settled { fingerprint },
            Effect::KeyStored { key, fingerprint },
        ]
    })
}

/// The synthetic placements' texts without a stream: a short text of 40
/// Han letters drawn uniformly from 3 000 (which no letter code shortens),
/// a long text of 64 sketch values drawn uniformly and one fixed headline
/// and lead.
fn uniform_texts(
    short: bool,
    fingerprinter: &neardup::fingerprint::Fingerprinter,
    lean: bool,
    random: &mut Xorshift,
) -> (
    Option<neardup::confirm::ShortText>,
    Option<neardup::confirm::LongText>,
) {
    use neardup::confirm::{LongText, ShortText};
    let short_text = short.then(|| {
        let letters: String = (0..40)
            .filter_map(|_| char::from_u32(0x4e00 + random.below(3000) as u32))
            .collect();
        let text = ShortText::new(
            fingerprinter.shingle_set_of(&letters).into_boxed_slice(),
            letters.into(),
            random.next(),
            0,
        );
        if lean {
            text.checking_shingles_against_letters(fingerprinter.shingle_width())
        } else {
            text
        }
    });
    let long_text = (!short).then(|| {
        let mut sketch: Vec<u32> = (0..64).map(|_| random.next() as u32).collect();
        sketch.sort_unstable();
        LongText {
            sketch: sketch.into_boxed_slice(),
            headline: Some("港口新航线周一开通每周两班".into()),
            lead:
                "港口新航线周一开通每周两班连接本港与东南亚四个港口首航装载集装箱八百余个港务局表示"
                    .into(),
            numbers: vec![1, 2, 3, 4, 5, 6].into_boxed_slice(),
            name_slots: Box::default(),
            identifying_weight: 300,
        }
    });
    (short_text, long_text)
}

/// How many documents of `NEARDUP_CAPACITY_STREAM` the synthetic texts
/// are drawn from.
const STREAM_TEXTS_POOL: usize = 20_000;

/// Texts with a stream's statistics for the synthetic placements
/// (`NEARDUP_CAPACITY_STREAM=FILE`, a stream of `overlap.py`): each node
/// takes a pool document's texts (a short one for a short node, one with a
/// long text, of middle length or long, for a long node) with every letter
/// replaced by one drawn from the pool's letters of its kind (Han, ASCII
/// letter, digit), the same replacement throughout the record, and its
/// sketch drawn again below its largest value. So the letters have the
/// stream's frequencies, lengths and fields (what a letter code and the
/// record's layout see) while no two nodes share texts (which would pile
/// them into the candidate indexes' buckets), and a lean record's lead
/// and shingles are taken from its letters where the pool document's were.
pub struct StreamTexts {
    short: Vec<neardup::confirm::ShortText>,
    long: Vec<(
        Option<neardup::confirm::ShortText>,
        neardup::confirm::LongText,
    )>,
    /// Every Han letter, lowercase ASCII letter and digit of the pool's
    /// texts, as often as it occurs.
    han: Vec<char>,
    latin: Vec<char>,
    digits: Vec<char>,
    width: usize,
    lean: bool,
}

impl StreamTexts {
    /// The texts of the first `pool` documents of the stream at `path`.
    pub fn read(path: &std::path::Path, pool: usize, lean: bool) -> StreamTexts {
        use std::io::BufRead;
        let fingerprinter =
            neardup::fingerprint::Fingerprinter::new(Default::default()).expect("default settings");
        let width = fingerprinter.shingle_width();
        let analyzer = neardup::engine::Analyzer::new(fingerprinter, &Default::default());
        let file = std::fs::File::open(path).expect("NEARDUP_CAPACITY_STREAM opens");
        let mut texts = StreamTexts {
            short: Vec::new(),
            long: Vec::new(),
            han: Vec::new(),
            latin: Vec::new(),
            digits: Vec::new(),
            width,
            lean,
        };
        for line in std::io::BufReader::new(file).lines().take(pool) {
            let line = line.expect("the stream reads");
            let Ok(document) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let Some(analysis) = analyzer.analyze_document(&document) else {
                continue;
            };
            let record = analysis.side_record(0, 0);
            for text in [
                record.short_text.as_ref().map(|short| &*short.letters),
                record.long_text.as_ref().map(|long| &*long.lead),
                record
                    .long_text
                    .as_ref()
                    .and_then(|long| long.headline.as_deref()),
            ]
            .into_iter()
            .flatten()
            {
                for c in text.chars() {
                    match c {
                        '\u{4e00}'..='\u{9fff}' => texts.han.push(c),
                        'a'..='z' => texts.latin.push(c),
                        'A'..='Z' => texts.latin.push(c.to_ascii_lowercase()),
                        '0'..='9' => texts.digits.push(c),
                        _ => {}
                    }
                }
            }
            match (record.short_text, record.long_text) {
                (Some(short), None) => texts.short.push(short),
                (short, Some(long)) => texts.long.push((short, long)),
                (None, None) => {}
            }
        }
        assert!(
            !texts.short.is_empty() && !texts.long.is_empty() && !texts.han.is_empty(),
            "NEARDUP_CAPACITY_STREAM holds short and long texts"
        );
        texts
    }

    /// A short node's texts, or a long node's.
    pub fn draw(
        &self,
        short: bool,
        random: &mut Xorshift,
    ) -> (
        Option<neardup::confirm::ShortText>,
        Option<neardup::confirm::LongText>,
    ) {
        let mut replacements = std::collections::HashMap::new();
        if short {
            let source = &self.short[random.below(self.short.len())];
            return (
                Some(self.redrawn_short(source, &mut replacements, random)),
                None,
            );
        }
        let (short, long) = &self.long[random.below(self.long.len())];
        let short = short
            .as_ref()
            .map(|short| self.redrawn_short(short, &mut replacements, random));
        let mut sketch: Vec<u32> = match long.sketch.last() {
            Some(&largest) if long.sketch.len() == 64 => (0..64)
                .map(|_| random.below(largest as usize + 1) as u32)
                .collect(),
            _ => long.sketch.iter().map(|_| random.next() as u32).collect(),
        };
        sketch.sort_unstable();
        sketch.dedup();
        let long = neardup::confirm::LongText {
            sketch: sketch.into_boxed_slice(),
            headline: long
                .headline
                .as_ref()
                .map(|headline| self.redrawn(headline, &mut replacements, random).into()),
            lead: self.redrawn(&long.lead, &mut replacements, random).into(),
            ..long.clone()
        };
        (short, Some(long))
    }

    fn redrawn_short(
        &self,
        source: &neardup::confirm::ShortText,
        replacements: &mut std::collections::HashMap<char, char>,
        random: &mut Xorshift,
    ) -> neardup::confirm::ShortText {
        let letters = self.redrawn(&source.letters, replacements, random);
        let shingles = neardup::fingerprint::shingle_set_of_letters(&letters, self.width);
        // Where the pool's shingles were not its letters' (3 % of the
        // stream), a lean record keeps them too.
        let from_letters =
            neardup::fingerprint::shingle_set_of_letters(&source.letters, self.width)[..]
                == *source.shingles();
        let mut text = neardup::confirm::ShortText::new(
            shingles.into_boxed_slice(),
            letters.into(),
            source.number_signature,
            source.place_signature,
        );
        text.headline_field = source.headline_field;
        text.body_weight = source.body_weight;
        if self.lean && from_letters {
            text.checking_shingles_against_letters(self.width)
        } else {
            text
        }
    }

    /// `text` with each Han letter, ASCII letter and digit replaced by one
    /// drawn from the pool's of its kind, the same throughout a record
    /// (`replacements`; an ASCII capital as its small letter's, capital).
    fn redrawn(
        &self,
        text: &str,
        replacements: &mut std::collections::HashMap<char, char>,
        random: &mut Xorshift,
    ) -> String {
        text.chars()
            .map(|c| {
                let lower = c.to_ascii_lowercase();
                let pool = match lower {
                    '\u{4e00}'..='\u{9fff}' => &self.han,
                    'a'..='z' => &self.latin,
                    '0'..='9' => &self.digits,
                    _ => return c,
                };
                if pool.is_empty() {
                    return c;
                }
                let drawn = *replacements
                    .entry(lower)
                    .or_insert_with(|| pool[random.below(pool.len())]);
                if c.is_ascii_uppercase() {
                    drawn.to_ascii_uppercase()
                } else {
                    drawn
                }
            })
            .collect()
    }
}

/// A field of `/proc/self/status` in KiB (`RssAnon:`, `RssFile:`, ...).
pub fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A proxy between the sidecar and the real cluster that answers writes
/// late: the cluster has carried a write out (the proxy waits for its
/// answer) and the answer is held back for `write_delay` more. Reads pass
/// at once. The delay can be changed while it runs.
pub struct LateProxy {
    pub url: String,
    write_delay_ms: Arc<std::sync::atomic::AtomicU64>,
    /// The `Authorization` every request must carry, when set (a secured
    /// cluster: 401 otherwise).
    required_authorization: Arc<std::sync::Mutex<Option<String>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl LateProxy {
    pub async fn start(cluster: &str, write_delay: Duration) -> Self {
        Self::start_delaying(cluster, write_delay, false).await
    }

    /// Delays only the answers of `_bulk` requests (a replica group's own
    /// requests, never bulks, go through at once).
    pub async fn start_bulks_late(cluster: &str, write_delay: Duration) -> Self {
        Self::start_delaying(cluster, write_delay, true).await
    }

    async fn start_delaying(cluster: &str, write_delay: Duration, bulks_only: bool) -> Self {
        let write_delay_ms = Arc::new(std::sync::atomic::AtomicU64::new(
            u64::try_from(write_delay.as_millis()).expect("delay"),
        ));
        let delay = write_delay_ms.clone();
        let required_authorization: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let required = required_authorization.clone();
        let cluster = cluster.trim_end_matches('/').to_string();
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let delay = delay.clone();
            let cluster = cluster.clone();
            let http = http.clone();
            let required = required.lock().expect("lock").clone();
            async move {
                let (parts, body, path) = read_request(request).await;
                let given = parts
                    .headers
                    .get("authorization")
                    .and_then(|value| value.to_str().ok());
                if let Some(required) = required
                    && given != Some(required.as_str())
                {
                    let refusal = serde_json::json!({"error": {"type": "security_exception", "reason": "missing authentication credentials"}, "status": 401});
                    let mut response =
                        axum::response::Response::new(axum::body::Body::from(refusal.to_string()));
                    *response.status_mut() = axum::http::StatusCode::UNAUTHORIZED;
                    response
                        .headers_mut()
                        .insert("content-type", "application/json".parse().expect("header"));
                    return response;
                }
                let is_write = parts.uri.path().contains("_bulk")
                    || (!bulks_only
                        && (parts.uri.path().contains("/_doc")
                            || parts.uri.path().contains("/_create")));
                let mut outgoing = http.request(parts.method.clone(), format!("{cluster}{path}"));
                if let Some(content_type) = parts.headers.get("content-type") {
                    outgoing = outgoing.header("content-type", content_type.clone());
                }
                let answer = outgoing.body(body).send().await.expect("cluster answers");
                let status = answer.status();
                let content_type = answer.headers().get("content-type").cloned();
                let bytes = answer.bytes().await.unwrap_or_default();
                if is_write {
                    let wait = delay.load(std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
                let mut response = axum::response::Response::new(axum::body::Body::from(bytes));
                *response.status_mut() = status;
                if let Some(content_type) = content_type {
                    response.headers_mut().insert("content-type", content_type);
                }
                response
            }
        });
        let (url, shutdown) = serve_locally(app).await;
        LateProxy {
            url,
            write_delay_ms,
            required_authorization,
            shutdown: Some(shutdown),
        }
    }

    /// From now on, every request must carry this `Authorization`.
    pub fn require_authorization(&self, value: &str) {
        *self.required_authorization.lock().expect("lock") = Some(value.to_string());
    }

    pub fn set_write_delay(&self, delay: Duration) {
        self.write_delay_ms.store(
            u64::try_from(delay.as_millis()).expect("delay"),
            std::sync::atomic::Ordering::Relaxed,
        );
    }
}

impl Drop for LateProxy {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// How many documents `index` holds (refreshed first), and how many of
/// them carry a `simhash` stamp.
pub async fn documents_in(cluster: &str, index: &str) -> (u64, u64) {
    let _ = client()
        .post(format!("{cluster}/{index}/_refresh"))
        .send()
        .await
        .expect("refresh");
    let count = |query: Value| async move {
        let (_, answer) = send_json(
            reqwest::Method::POST,
            &format!("{cluster}/{index}/_count"),
            &serde_json::json!({ "query": query }),
        )
        .await;
        answer["count"].as_u64().unwrap_or(0)
    };
    let all = count(serde_json::json!({"match_all": {}})).await;
    let stamped = count(serde_json::json!({"exists": {"field": "simhash"}})).await;
    (all, stamped)
}

/// A free loopback port (bound and let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}
