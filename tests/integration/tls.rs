//! A cluster behind real TLS: Debian's stunnel in front of the real server,
//! with a CA and certificates made by `openssl` here. The sidecar trusts the
//! cluster's own CA (`--upstream-ca`, added to the system roots), presents
//! a client certificate where the cluster requires one, and reports a
//! certificate it does not trust as a TLS failure (health and the error),
//! not as an unreachable cluster. `rebuild` takes the same options.
//!
//! Needs `stunnel4` and `openssl` (`.ci/run` installs stunnel4); without
//! stunnel the tests say so and pass, except under `CI=true`, where they
//! fail.

use crate::support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{Osmem, Sidecar, TempDir, get_json, post_bulk, stamps_in};

/// Runs `openssl` with `args` in `dir`; panics with its output on failure.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("openssl");
    assert!(output.status.success(), "openssl {args:?}: {output:?}");
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate,
/// all signed by the CA: `ca.pem`, `server.pem`/`server.key`,
/// `client.pem`/`client.key`.
fn make_certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=neardup test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    for (name, usage) in [("server", "serverAuth"), ("client", "clientAuth")] {
        let key = format!("{name}.key");
        let csr = format!("{name}.csr");
        let pem = format!("{name}.pem");
        let ext = format!("{name}.ext");
        std::fs::write(
            dir.join(&ext),
            format!(
                "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage={usage}\n"
            ),
        )
        .expect("ext");
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &csr,
                "-subj",
                &format!("/CN=neardup test {name}"),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                &pem,
                "-days",
                "2",
                "-extfile",
                &ext,
            ],
        );
    }
}

fn stunnel_binary() -> Option<PathBuf> {
    [
        "/usr/bin/stunnel4",
        "/usr/bin/stunnel",
        "/usr/local/bin/stunnel",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|path| path.exists())
}

/// stunnel terminating TLS on a free port in front of `cluster`; with
/// `client_ca`, it requires a client certificate signed by it.
struct Stunnel {
    child: Child,
    url: String,
}

impl Stunnel {
    fn start(binary: &Path, dir: &Path, cluster: &str, require_client_cert: bool) -> Stunnel {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("free port")
            .port();
        let connect = cluster.trim_start_matches("http://");
        let mut config = format!(
            "foreground = yes\npid =\ndebug = 3\n[cluster]\naccept = 127.0.0.1:{port}\nconnect = {connect}\ncert = {}\nkey = {}\n",
            dir.join("server.pem").display(),
            dir.join("server.key").display()
        );
        if require_client_cert {
            config.push_str(&format!(
                "verify = 2\nCAfile = {}\n",
                dir.join("ca.pem").display()
            ));
        }
        let config_path = dir.join(format!("stunnel-{port}.conf"));
        std::fs::write(&config_path, config).expect("stunnel config");
        let child = Command::new(binary)
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start stunnel");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "stunnel did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Stunnel {
            child,
            url: format!("https://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Stunnel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// stunnel, or `None` where it is not installed and this is not CI
/// ([`support::needed`]).
fn stunnel_or_skip() -> Option<PathBuf> {
    support::needed(
        stunnel_binary(),
        "stunnel4 (apt-get install stunnel4; .ci/run installs it)",
    )
}

const ARTICLES: &str = "{\"index\":{\"_index\":\"news-tls\",\"_id\":\"1\"}}\n{\"title\":\"港口新航线周一开通\",\"content\":\"港口新航线周一开通，每周两班，连接本港与东南亚四个港口。\"}\n{\"index\":{\"_index\":\"news-tls\",\"_id\":\"2\"}}\n{\"title\":\"港口新航线周一开通\",\"content\":\"转载：港口新航线周一开通，每周两班，连接本港与东南亚四个港口。\"}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clusters_own_ca_is_trusted_and_an_untrusted_certificate_is_named() {
    let Some(stunnel) = stunnel_or_skip() else {
        return;
    };
    let dir = TempDir::new("tls");
    make_certificates(dir.path());
    let osmem = Osmem::start();
    let tls = Stunnel::start(&stunnel, dir.path(), &osmem.url, false);

    // Without the CA: a TLS failure, said as one.
    let untrusting = Sidecar::start(&tls.url, &[]);
    let (status, health) = get_json(&format!("{}/_neardup/health", untrusting.url)).await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["status"], "upstream_tls_failure", "{health}");
    assert!(
        health["reasons"][0]
            .as_str()
            .is_some_and(|reason| reason.contains("--upstream-ca")),
        "{health}"
    );
    let (status, answer) = post_bulk(&format!("{}/_bulk", untrusting.url), ARTICLES).await;
    assert_eq!(status, 502, "{answer}");
    assert_eq!(
        answer["error"]["type"], "ssl_handshake_exception",
        "{answer}"
    );

    // With it: stamped through TLS.
    let ca = dir.path().join("ca.pem");
    let ca = ca.to_string_lossy();
    let sidecar = Sidecar::start(&tls.url, &["--upstream-ca", &ca]);
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(status, 200, "{health}");
    let (status, answer) =
        post_bulk(&format!("{}/_bulk?refresh=true", sidecar.url), ARTICLES).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["errors"], false, "{answer}");
    let stored = stamps_in(&osmem.url, "news-tls").await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored["1"]["cluster_root"], stored["2"]["cluster_root"]);

    // `rebuild` reads the index through the same TLS options.
    let state = TempDir::new("tls-rebuild");
    let output = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["rebuild", "--index", "news-tls", "--upstream", &tls.url])
        .args(["--upstream-ca", &ca, "--quiet", "--state-dir"])
        .arg(state.path())
        .stdin(Stdio::null())
        .output()
        .expect("rebuild");
    assert!(output.status.success(), "{output:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_requires_a_client_certificate_gets_one() {
    let Some(stunnel) = stunnel_or_skip() else {
        return;
    };
    let dir = TempDir::new("mtls");
    make_certificates(dir.path());
    let osmem = Osmem::start();
    let tls = Stunnel::start(&stunnel, dir.path(), &osmem.url, true);
    let file = |name: &str| dir.path().join(name).to_string_lossy().to_string();
    let (ca, cert, key) = (file("ca.pem"), file("client.pem"), file("client.key"));

    let without = Sidecar::start(&tls.url, &["--upstream-ca", &ca]);
    let (status, answer) = post_bulk(&format!("{}/_bulk", without.url), ARTICLES).await;
    assert_eq!(status, 502, "{answer}");
    // The CA was given: the hint is the client certificate (issue 44).
    let (status, health) = get_json(&format!("{}/_neardup/health", without.url)).await;
    assert_eq!(status, 503, "{health}");
    let reason = health["reasons"][0].as_str().unwrap_or_default();
    assert!(
        reason.contains("--upstream-cert") && !reason.contains("give the cluster's CA"),
        "{health}"
    );

    let with = Sidecar::start(
        &tls.url,
        &[
            "--upstream-ca",
            &ca,
            "--upstream-cert",
            &cert,
            "--upstream-key",
            &key,
        ],
    );
    let (status, answer) = post_bulk(&format!("{}/_bulk?refresh=true", with.url), ARTICLES).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(stamps_in(&osmem.url, "news-tls").await.len(), 2);
}

/// `https://` to a cluster that speaks plain HTTP is a TLS failure that
/// says to use `http://` (issue 44), not an unreachable cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_to_a_plain_http_cluster_suggests_http() {
    let osmem = Osmem::start();
    let https = osmem.url.replacen("http://", "https://", 1);
    let sidecar = Sidecar::start(&https, &[]);
    let (status, health) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(status, 503, "{health}");
    let reason = health["reasons"][0].as_str().unwrap_or_default();
    assert!(reason.contains(&format!("use {}", osmem.url)), "{health}");
    let (status, answer) = post_bulk(&format!("{}/_bulk", sidecar.url), ARTICLES).await;
    assert_eq!(status, 502, "{answer}");
    let error = answer["error"]["reason"].as_str().unwrap_or_default();
    assert!(error.contains(&format!("use {}", osmem.url)), "{answer}");
}

#[test]
fn the_listener_refuses_a_key_of_another_certificate_and_plain_http_beyond_loopback() {
    let dir = TempDir::new("listener-tls");
    make_certificates(dir.path());
    let file = |name: &str| dir.path().join(name).to_string_lossy().to_string();
    let state = dir.path().join("state");
    let serve = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["serve", "--upstream", "http://127.0.0.1:9", "--state-dir"])
            .arg(&state)
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .expect("serve")
    };
    let mismatched = serve(&[
        "--tls-cert",
        &file("server.pem"),
        "--tls-key",
        &file("client.key"),
    ]);
    let stderr = String::from_utf8_lossy(&mismatched.stderr);
    assert!(!mismatched.status.success());
    assert!(stderr.contains("do not belong together"), "{stderr}");
    let plain = serve(&["--listen", "0.0.0.0:0"]);
    let stderr = String::from_utf8_lossy(&plain.stderr);
    assert!(!plain.status.success());
    assert!(stderr.contains("--allow-plain-http"), "{stderr}");
    assert!(
        !state.exists(),
        "refused before the state directory was touched"
    );
}
