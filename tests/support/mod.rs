//! Processes for integration tests: the real OpenSearch-compatible server
//! (osmem-server from the pinned PyPI wheel, installed by `scripts/venv.sh`),
//! the `neardup serve` binary, and a small recording upstream for faults the
//! real server cannot produce (never a stand-in for the cluster's behaviour).
#![allow(dead_code)]

pub mod busy;
pub mod state;
pub mod stories;
mod synthetic;

// Not every crate that includes the support uses them (as `dead_code`).
#[allow(unused_imports)]
pub use synthetic::{StreamTexts, synthetic_placements};

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
