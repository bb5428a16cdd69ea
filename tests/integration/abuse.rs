//! Whoever reaches the sidecar gets no more than they should (issue 48):
//! real `neardup serve` processes in front of the real server
//! (osmem-server), on loopback, each case bounded in time.
//!
//! - a client cannot delete, write or read the replica group's indices
//!   through a member, by name, pattern, alias or hidden expansion, in the
//!   path or in `_bulk`, `_mget`, `_msearch`, `_aliases`, `_reindex`
//!   bodies (403); the group goes on, its indices untouched;
//! - a rebound `Host` (DNS rebinding) gets no loopback trust at the admin
//!   endpoints, and nothing from a sidecar that adds its own identity;
//! - a marker password in `--upstream` appears in no output: HTTP bodies
//!   and headers (health, stats, metrics, pass-through, the 502 of a
//!   cluster that is gone), stdout, stderr;
//! - a thousand idle TLS connections do not stop others from being
//!   served; a bad certificate pair is logged once; a rotation that keeps
//!   the files' modification times is picked up.
//!
//! SigV4 cases are checked by botocore in `tests/python/test_sigv4.py`.

use crate::support;

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use support::{Osmem, Sidecar, TempDir, client, json_of};

/// `neardup serve` with stdout and stderr kept, for the tests that read
/// them; `NEARDUP_LOG` as given.
struct Watched {
    child: Child,
    url: String,
    stdout: std::sync::Arc<std::sync::Mutex<String>>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    _state: TempDir,
}

impl Watched {
    fn start(args: &[&str], log: &str, wrapper: Option<&str>) -> Watched {
        let state = TempDir::new("abuse-state");
        let binary = env!("CARGO_BIN_EXE_neardup");
        let mut all: Vec<String> = vec![
            "serve".into(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--state-dir".into(),
            state.path().to_string_lossy().into_owned(),
        ];
        all.extend(args.iter().map(|arg| (*arg).to_string()));
        let mut command = match wrapper {
            // A shell line run before the sidecar (`ulimit -n 512`).
            Some(prefix) => {
                let mut command = Command::new("bash");
                command
                    .arg("-c")
                    .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                    .arg(binary)
                    .args(&all);
                command
            }
            None => {
                let mut command = Command::new(binary);
                command.args(&all);
                command
            }
        };
        let mut child = command
            .env("NEARDUP_LOG", log)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start neardup serve");
        let stdout = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        for (mut pipe, sink) in [
            (
                Box::new(child.stdout.take().expect("stdout")) as Box<dyn Read + Send>,
                stdout.clone(),
            ),
            (
                Box::new(child.stderr.take().expect("stderr")) as Box<dyn Read + Send>,
                stderr.clone(),
            ),
        ] {
            std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(read) = pipe.read(&mut buffer) {
                    if read == 0 {
                        break;
                    }
                    sink.lock()
                        .expect("lock")
                        .push_str(&String::from_utf8_lossy(&buffer[..read]));
                }
            });
        }
        let started = Instant::now();
        let url = loop {
            let line = stdout
                .lock()
                .expect("lock")
                .lines()
                .next()
                .map(str::to_string);
            if let Some(line) = line
                && let Ok(value) = serde_json::from_str::<Value>(&line)
                && let Some(url) = value["listen"].as_str()
            {
                break url.to_string();
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "neardup serve did not start: {}",
                stderr.lock().expect("lock")
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Watched {
            child,
            url,
            stdout,
            stderr,
            _state: state,
        }
    }

    /// SIGTERM and wait: everything it wrote is then in the buffers.
    fn stop(&mut self) -> (String, String) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(200));
        (
            self.stdout.lock().expect("lock").clone(),
            self.stderr.lock().expect("lock").clone(),
        )
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A body and its content type.
type Body<'a> = Option<(&'a str, String)>;

/// Status and JSON (or text) body of one request.
async fn send(method: Method, url: &str, body: Body<'_>) -> (u16, Value) {
    let mut request = client().request(method, url);
    if let Some((content_type, body)) = body {
        request = request.header("content-type", content_type).body(body);
    }
    json_of(request.send().await.expect("an answer")).await
}

fn is_security_refusal(answer: &(u16, Value)) -> bool {
    answer.0 == 403 && answer.1["error"]["type"] == "security_exception"
}

/// What the cluster itself says about an index: its document count, or
/// `None` when it does not exist.
async fn documents(cluster: &str, index: &str) -> Option<u64> {
    let (status, body) = send(
        Method::GET,
        &format!("{cluster}/{index}/_count?expand_wildcards=all"),
        None,
    )
    .await;
    (status == 200).then(|| body["count"].as_u64().unwrap_or(0))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cannot_reach_the_groups_indices_through_a_member() {
    let osmem = Osmem::start();
    let member = Sidecar::start(
        &osmem.url,
        &[
            "--replica-group",
            "news",
            "--replica-name",
            "abuse",
            "--replica-lease",
            "3s",
        ],
    );
    let url = member.url.as_str();
    let control = "neardup-replica-news-control";
    let log = "neardup-replica-news-log";
    // The member creates its indices and leads.
    let started = Instant::now();
    while documents(&osmem.url, control).await != Some(1) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the group's control document never appeared"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let log_before = documents(&osmem.url, log).await;
    let ndjson = "application/x-ndjson";
    let json_type = "application/json";
    let attacks: Vec<(Method, String, Body)> = vec![
        (Method::DELETE, format!("/{control}"), None),
        (Method::DELETE, format!("/{control}/_doc/control"), None),
        (Method::DELETE, "/neardup-*".into(), None),
        (Method::DELETE, "/_all?expand_wildcards=all".into(), None),
        (Method::DELETE, format!("/news,{control}"), None),
        (Method::DELETE, format!("/news%2C{control}"), None),
        (
            Method::PUT,
            format!("/{log}-append/_create/99999"),
            Some((json_type, json!({"record": 99999}).to_string())),
        ),
        (
            Method::PUT,
            format!("/{control}-write/_doc/control"),
            Some((json_type, json!({"holder": "me"}).to_string())),
        ),
        (
            Method::POST,
            "/_bulk".into(),
            Some((
                ndjson,
                format!(
                    "{{\"index\":{{\"_index\":\"news\",\"_id\":\"1\"}}}}\n{{\"title\":\"a\"}}\n{{\"create\":{{\"_index\":\"{log}\",\"_id\":\"99999\"}}}}\n{{\"record\":99999}}\n"
                ),
            )),
        ),
        (
            Method::POST,
            "/_bulk".into(),
            Some((
                ndjson,
                "{\"delete\":{\"_index\":\"\\u006eeardup-replica-news-control\",\"_id\":\"control\"}}\n".to_string(),
            )),
        ),
        (
            Method::POST,
            "/neardup-*/_delete_by_query".into(),
            Some((json_type, json!({"query": {"match_all": {}}}).to_string())),
        ),
        (
            Method::POST,
            "/*-control/_update_by_query".into(),
            Some((json_type, json!({"query": {"match_all": {}}}).to_string())),
        ),
        (Method::GET, "/_search?expand_wildcards=all".into(), None),
        (Method::GET, format!("/{log}/_search"), None),
        (
            Method::POST,
            "/_mget".into(),
            Some((
                json_type,
                json!({"docs": [{"_index": control, "_id": "control"}]}).to_string(),
            )),
        ),
        (
            Method::POST,
            "/_msearch".into(),
            Some((ndjson, format!("{{\"index\":\"{log}\"}}\n{{}}\n"))),
        ),
        (
            Method::POST,
            "/_aliases".into(),
            Some((
                json_type,
                json!({"actions": [{"add": {"index": log, "alias": "mine"}}]}).to_string(),
            )),
        ),
        (
            Method::POST,
            "/_reindex".into(),
            Some((
                json_type,
                json!({"source": {"index": "news"}, "dest": {"index": format!("{log}-append")}})
                    .to_string(),
            )),
        ),
        (
            Method::PUT,
            format!("/news/_alias/{control}-write"),
            None,
        ),
        (
            Method::POST,
            "/_neardup/backfill".into(),
            Some((json_type, json!({"index": log}).to_string())),
        ),
    ];
    for (method, path, body) in attacks {
        let answer = send(method.clone(), &format!("{url}{path}"), body).await;
        assert!(
            is_security_refusal(&answer),
            "{method} {path} was not refused: {answer:?}"
        );
    }
    // Ordinary requests go on, hidden indices left out as the cluster does.
    let ordinary: Vec<(Method, &str, Body)> = vec![
        (
            Method::PUT,
            "/news/_doc/1?refresh=true",
            Some((json_type, json!({"title": "ordinary"}).to_string())),
        ),
        (Method::GET, "/_search", None),
        (
            Method::GET,
            "/news,other*/_search?ignore_unavailable=true",
            None,
        ),
        (Method::GET, "/_cat/indices?expand_wildcards=all", None),
        (
            Method::POST,
            "/_mget",
            Some((
                json_type,
                json!({"docs": [{"_index": "news", "_id": "1"}]}).to_string(),
            )),
        ),
    ];
    for (method, path, body) in ordinary {
        let (status, answer) = send(method.clone(), &format!("{url}{path}"), body).await;
        assert!(status < 300, "{method} {path}: {status} {answer}");
    }
    // The group's indices are as the group left them, and it goes on.
    assert_eq!(documents(&osmem.url, control).await, Some(1));
    let log_after = documents(&osmem.url, log).await;
    assert!(
        log_after >= log_before,
        "log {log_before:?} -> {log_after:?}"
    );
    let (_, stats) = send(Method::GET, &format!("{url}/_neardup/stats"), None).await;
    assert_eq!(stats["replica"]["role"], "leader", "{stats}");
}

/// A request to `url` with `Host: host`.
async fn with_host(
    method: Method,
    url: &str,
    host: &str,
    json_body: Option<Value>,
) -> (u16, Value) {
    let mut request = client().request(method, url).header("host", host);
    if let Some(body) = json_body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    json_of(request.send().await.expect("an answer")).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_host_gets_no_loopback_trust_at_the_admin_endpoints() {
    let osmem = Osmem::start();
    let sidecar = Sidecar::start(&osmem.url, &["--allowed-host", "sidecar.internal"]);
    let port = sidecar.url.rsplit(':').next().expect("a port").to_string();
    let rebound = format!("rebound.example:{port}");
    let backfill = format!("{}/_neardup/backfill", sidecar.url);
    let cancel = format!("{backfill}/_cancel");
    let start = json!({"index": "news*"});
    for (method, url, body) in [
        (Method::POST, backfill.as_str(), Some(start.clone())),
        (Method::DELETE, backfill.as_str(), None),
        (Method::POST, cancel.as_str(), Some(json!({}))),
    ] {
        let answer = with_host(method.clone(), url, &rebound, body.clone()).await;
        assert!(
            is_security_refusal(&answer),
            "{method} {url} with Host {rebound}: {answer:?}"
        );
        for trusted in [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("sidecar.internal:{port}"),
        ] {
            let (status, answer) = with_host(method.clone(), url, &trusted, body.clone()).await;
            assert_ne!(status, 403, "{method} {url} with Host {trusted}: {answer}");
        }
    }
    // Cancel the job the trusted calls may have started.
    let _ = with_host(Method::DELETE, &backfill, "127.0.0.1", None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_host_cannot_borrow_the_sidecars_identity() {
    let osmem = Osmem::start();
    // Credentials in the URL: the sidecar adds them to what it forwards.
    let upstream = osmem.url.replace("http://", "http://neardup:pw@");
    let sidecar = Sidecar::start(&upstream, &["--allowed-host", "sidecar.internal"]);
    let port = sidecar.url.rsplit(':').next().expect("a port").to_string();
    let search = format!("{}/_search", sidecar.url);
    let answer = with_host(
        Method::GET,
        &search,
        &format!("rebound.example:{port}"),
        None,
    )
    .await;
    assert!(is_security_refusal(&answer), "{answer:?}");
    for trusted in [
        format!("127.0.0.1:{port}"),
        "localhost".to_string(),
        format!("sidecar.internal:{port}"),
    ] {
        let (status, answer) = with_host(Method::GET, &search, &trusted, None).await;
        assert_eq!(status, 200, "Host {trusted}: {answer}");
    }
    // Without an identity of its own, names are the clients' business.
    let plain = Sidecar::start(&osmem.url, &[]);
    let (status, answer) = with_host(
        Method::GET,
        &format!("{}/_search", plain.url),
        "anything.example",
        None,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_the_upstream_url_appears_in_no_output() {
    const MARKER: &str = "Mark3rSecretPw";
    // base64("neardup:Mark3rSecretPw"), the form an Authorization header takes.
    const MARKER_BASIC: &str = "bmVhcmR1cDpNYXJrM3JTZWNyZXRQdw";
    let mut osmem = Osmem::start();
    let upstream = osmem
        .url
        .replace("http://", &format!("http://neardup:{MARKER}@"));
    let mut sidecar = Watched::start(&["--upstream", &upstream], "debug", None);
    let url = sidecar.url.clone();
    let mut seen = String::new();
    let mut record = |what: &str, response: &reqwest::Response| {
        seen.push_str(&format!(
            "{what} {} {:?}\n",
            response.status(),
            response.headers()
        ));
    };
    let mut exchanges: Vec<(Method, String, Option<&str>)> = vec![
        (Method::GET, "/_neardup/health".into(), None),
        (Method::GET, "/_neardup/stats".into(), None),
        (Method::GET, "/_neardup/metrics".into(), None),
        (Method::GET, "/metrics".into(), None),
        (Method::GET, "/".into(), None),
        (
            Method::POST,
            "/_bulk".into(),
            Some("{\"index\":{\"_index\":\"news\",\"_id\":\"1\"}}\n{\"title\":\"a story\"}\n"),
        ),
        (Method::GET, "/news/_search".into(), None),
    ];
    let mut bodies = String::new();
    for round in 0..2 {
        if round == 1 {
            // The cluster goes away: errors name it.
            osmem.stop();
            exchanges.push((Method::GET, "/news/_doc/1".into(), None));
        }
        for (method, path, body) in &exchanges {
            let mut request = client().request(method.clone(), format!("{url}{path}"));
            if let Some(body) = body {
                request = request
                    .header("content-type", "application/x-ndjson")
                    .body((*body).to_string());
            }
            let response = request.send().await.expect("an answer");
            record(&format!("{method} {path}"), &response);
            let status = response.status().as_u16();
            let text = response.text().await.unwrap_or_default();
            if round == 1 && path == "/news/_search" {
                assert_eq!(status, 502, "the cluster is gone: {text}");
                assert!(
                    text.contains("127.0.0.1"),
                    "the error names the cluster: {text}"
                );
            }
            bodies.push_str(&text);
            bodies.push('\n');
        }
    }
    let (stdout, stderr) = sidecar.stop();
    assert!(stdout.contains("\"upstream\""), "{stdout}");
    for (what, text) in [
        ("bodies", &bodies),
        ("headers", &seen),
        ("stdout", &stdout),
        ("stderr", &stderr),
    ] {
        assert!(
            !text.contains(MARKER) && !text.contains(MARKER_BASIC),
            "the password reached the {what}:\n{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_the_upstream_url_still_reach_the_cluster() {
    let upstream = support::RecordingUpstream::start(|_| {
        (
            reqwest::StatusCode::OK,
            vec![("content-type".into(), "application/json".into())],
            b"{}".to_vec(),
        )
    })
    .await;
    let with_credentials = upstream.url.replace("http://", "http://neardup:p%40ss@");
    let sidecar = Sidecar::start(&with_credentials, &[]);
    let (status, _) = send(Method::GET, &format!("{}/news/_search", sidecar.url), None).await;
    assert_eq!(status, 200);
    // A client's own Authorization wins.
    let response = client()
        .get(format!("{}/other/_search", sidecar.url))
        .header("authorization", "Bearer theirs")
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 200);
    let recorded = upstream.recorded();
    let authorization = |path: &str| {
        recorded
            .iter()
            .find(|request| request.path_and_query.starts_with(path))
            .and_then(|request| request.headers.get("authorization").cloned())
    };
    // base64("neardup:p@ss")
    assert_eq!(
        authorization("/news/_search")
            .as_ref()
            .map(|value| value.as_bytes()),
        Some(&b"Basic bmVhcmR1cDpwQHNz"[..])
    );
    assert_eq!(
        authorization("/other/_search")
            .as_ref()
            .map(|value| value.as_bytes()),
        Some(&b"Bearer theirs"[..])
    );
}

/// Runs `openssl` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("openssl (Debian package openssl)");
    assert!(output.status.success(), "openssl {args:?}: {output:?}");
}

/// A self-signed certificate for 127.0.0.1: `{name}.pem`, `{name}.key`.
fn self_signed(dir: &Path, name: &str) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-subj",
            &format!("/CN={name}"),
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-addext",
            "extendedKeyUsage=serverAuth",
        ],
    );
}

/// A client that trusts only the certificate in `pem`.
fn trusting(pem: &Path) -> reqwest::Client {
    let certificate =
        reqwest::Certificate::from_pem(&std::fs::read(pem).expect("pem")).expect("a certificate");
    reqwest::Client::builder()
        .no_proxy()
        .tls_certs_only([certificate])
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_tls_connections_do_not_stop_others() {
    let dir = TempDir::new("abuse-tls");
    self_signed(dir.path(), "server");
    let cert = dir.path().join("server.pem");
    let key = dir.path().join("server.key");
    let osmem = Osmem::start();
    // A sidecar with the file descriptors of a common default (512).
    let sidecar = Watched::start(
        &[
            "--upstream",
            &osmem.url,
            "--tls-cert",
            &cert.to_string_lossy(),
            "--tls-key",
            &key.to_string_lossy(),
        ],
        "error",
        Some("ulimit -n 512"),
    );
    let address = sidecar.url.trim_start_matches("https://").to_string();
    // All at once: they hold the sidecar's handshakes (10 s each) while
    // the client below asks.
    let connecting: Vec<_> = (0..1000)
        .map(|_| {
            let address = address.clone();
            tokio::spawn(async move {
                tokio::time::timeout(
                    Duration::from_secs(2),
                    tokio::net::TcpStream::connect(address),
                )
                .await
                .ok()
                .and_then(Result::ok)
            })
        })
        .collect();
    let mut idle = Vec::new();
    for connection in connecting {
        if let Ok(Some(stream)) = connection.await {
            idle.push(stream);
        }
    }
    assert!(
        idle.len() >= 500,
        "only {} idle connections opened",
        idle.len()
    );
    let started = Instant::now();
    let answer = trusting(&cert)
        .get(format!("{}/_neardup/health/live", sidecar.url))
        .send()
        .await;
    let took = started.elapsed();
    assert!(
        answer
            .as_ref()
            .is_ok_and(|response| response.status() == 200),
        "a client among {} idle connections got {answer:?} after {took:?}",
        idle.len()
    );
    drop(idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_certificate_pair_is_logged_once_and_a_rotation_keeping_mtimes_is_seen() {
    let dir = TempDir::new("abuse-rotation");
    self_signed(dir.path(), "first");
    self_signed(dir.path(), "second");
    let cert = dir.path().join("listener.pem");
    let key = dir.path().join("listener.key");
    std::fs::copy(dir.path().join("first.pem"), &cert).expect("copy");
    std::fs::copy(dir.path().join("first.key"), &key).expect("copy");
    let modified = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|metadata| metadata.modified())
            .expect("mtime")
    };
    let (cert_time, key_time) = (modified(&cert), modified(&key));
    let osmem = Osmem::start();
    let sidecar = Watched::start(
        &[
            "--upstream",
            &osmem.url,
            "--tls-cert",
            &cert.to_string_lossy(),
            "--tls-key",
            &key.to_string_lossy(),
        ],
        "error",
        None,
    );
    let health = format!("{}/_neardup/health/live", sidecar.url);
    assert!(
        trusting(&dir.path().join("first.pem"))
            .get(&health)
            .send()
            .await
            .is_ok()
    );
    // A key of another certificate: the pair does not load.
    std::fs::copy(dir.path().join("second.key"), &key).expect("copy");
    tokio::time::sleep(Duration::from_secs(7)).await;
    let failures = sidecar
        .stderr()
        .matches("TLS certificate not reloaded")
        .count();
    assert_eq!(failures, 1, "{}", sidecar.stderr());
    // The second pair, written with the first pair's modification times.
    std::fs::copy(dir.path().join("second.pem"), &cert).expect("copy");
    for (path, time) in [(&cert, cert_time), (&key, key_time)] {
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|file| file.set_modified(time))
            .expect("set mtime");
    }
    let second = trusting(&dir.path().join("second.pem"));
    let started = Instant::now();
    while second.get(&health).send().await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the rotated certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
