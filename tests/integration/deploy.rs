//! What a deployment relies on, through the real binary: a plain-HTTP
//! cluster reached from a machine without CA roots (a `FROM scratch`
//! image), an HTTPS one refused there with the remedy named, `neardup
//! health` as a container's health check, and the version naming the
//! commit and the build profile (on `--version` and the startup line).
//!
//! "No CA roots" is made on any machine by pointing `SSL_CERT_FILE` at an
//! empty file and `SSL_CERT_DIR` at an empty directory: set, they replace
//! the system's locations.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{Osmem, Sidecar, TempDir, get_json};

const BOUND: Duration = Duration::from_secs(60);

/// `neardup serve` on a free loopback port with no state, no CA roots, its
/// log into `log`.
fn serve_without_roots(upstream: &str, dir: &Path, log: &Path) -> Child {
    let empty_file = dir.join("empty.pem");
    let empty_dir = dir.join("no-certs");
    std::fs::write(&empty_file, "").expect("empty file");
    std::fs::create_dir_all(&empty_dir).expect("empty dir");
    Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--upstream", upstream, "--listen", "127.0.0.1:0"])
        .args(["--state-dir", "none"])
        .env_remove("NEARDUP_CONFIG")
        .env("SSL_CERT_FILE", &empty_file)
        .env("SSL_CERT_DIR", &empty_dir)
        .env("NEARDUP_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("log file"))
        .spawn()
        .expect("start neardup serve")
}

/// The first stdout line of `child`, or `None` when it exits (or says
/// nothing) within the bound.
fn first_line(child: &mut Child) -> Option<String> {
    let stdout = child.stdout.take()?;
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    receiver
        .recv_timeout(BOUND)
        .ok()
        .filter(|line| !line.is_empty())
}

/// Waits for `child` within the bound; kills it and fails past it.
fn wait_bounded(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + BOUND;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn neardup(args: &[&str], variables: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
    command
        .args(args)
        .env_remove("NEARDUP_CONFIG")
        .env_remove("NEARDUP_LISTEN")
        .env_remove("NEARDUP_TLS_CERT")
        .stdin(Stdio::null());
    for (name, value) in variables {
        command.env(name, value);
    }
    command.output().expect("run neardup")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_http_cluster_needs_no_ca_roots_and_the_startup_line_names_the_build() {
    let osmem = Osmem::start();
    let dir = TempDir::new("no-roots");
    let log = dir.path().join("serve.log");
    let mut child = serve_without_roots(&osmem.url, dir.path(), &log);
    let line = first_line(&mut child);
    // The startup line follows the stdout line: wait for it, bounded.
    let deadline = Instant::now() + BOUND;
    let mut text = std::fs::read_to_string(&log).unwrap_or_default();
    while line.is_some() && !text.contains("neardup serve listening") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        text = std::fs::read_to_string(&log).unwrap_or_default();
    }
    let _ = child.kill();
    let _ = child.wait();
    let line = line.unwrap_or_else(|| panic!("serve did not start without CA roots: {text}"));
    let listening: serde_json::Value = serde_json::from_str(&line).expect("JSON line");
    assert!(listening["listen"].is_string(), "{line}");
    let startup = text
        .lines()
        .find(|line| line.contains("neardup serve listening"))
        .unwrap_or_else(|| panic!("no startup line: {text}"));
    assert!(
        startup.contains(&format!("commit=\"{}\"", expected_commit()))
            && startup.contains(&format!("profile=\"{}\"", expected_profile())),
        "{startup}"
    );
}

#[test]
fn an_https_cluster_without_any_ca_roots_is_refused_at_start_naming_the_remedy() {
    let dir = TempDir::new("no-roots-https");
    let log = dir.path().join("serve.log");
    let mut child = serve_without_roots("https://127.0.0.1:1", dir.path(), &log);
    let status = wait_bounded(&mut child);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!status.success(), "{text}");
    assert!(
        text.contains("no CA certificates")
            && text.contains("--upstream-ca")
            && text.contains("SSL_CERT_FILE"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn health_exits_zero_when_ready_and_one_when_not() {
    let mut osmem = Osmem::start();
    let mut sidecar = Sidecar::start(&osmem.url, &[]);
    let port = sidecar.url.rsplit(':').next().expect("port").to_string();
    let (status, _) = get_json(&format!("{}/_neardup/health", sidecar.url)).await;
    assert_eq!(status, 200);
    // As in the image: the sidecar's own variable, an unspecified host.
    let any = format!("0.0.0.0:{port}");
    let ready = neardup(&["health"], &[("NEARDUP_LISTEN", &any)]);
    assert!(ready.status.success(), "{ready:?}");
    let live = neardup(&["health", "--live", "--url", &sidecar.url], &[]);
    assert!(live.status.success(), "{live:?}");
    // The cluster gone: alive, not ready (the sidecar's reason quoted).
    osmem.stop();
    let not_ready = neardup(&["health", "--listen", &format!("127.0.0.1:{port}")], &[]);
    assert_eq!(not_ready.status.code(), Some(1), "{not_ready:?}");
    assert!(
        String::from_utf8_lossy(&not_ready.stderr).contains("503"),
        "{not_ready:?}"
    );
    let live = neardup(&["health", "--live", "--url", &sidecar.url], &[]);
    assert!(live.status.success(), "{live:?}");
    // Nothing listening: not alive either.
    sidecar.terminate();
    let gone = neardup(&["health", "--live", "--url", &sidecar.url], &[]);
    assert_eq!(gone.status.code(), Some(1), "{gone:?}");
}

/// The commit `build.rs` should have named: git's, where git works here.
fn expected_commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map_or_else(
            || "unknown".to_string(),
            |output| String::from_utf8_lossy(&output.stdout).trim().to_string(),
        )
}

fn expected_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

#[test]
fn version_names_the_commit_and_the_build_profile() {
    let output = neardup(&["--version"], &[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        text.trim(),
        format!(
            "neardup {} (commit {}, {} build)",
            env!("CARGO_PKG_VERSION"),
            expected_commit(),
            expected_profile()
        )
    );
}

/// The unit file in `packaging/` as `systemd-analyze verify` reads it (the
/// binary's path replaced by this build's); it must keep the hardening and
/// the reload on SIGHUP (the HTTPS listener's certificate, tests/integration/tls.rs).
#[test]
fn the_systemd_unit_verifies_and_keeps_its_hardening() {
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/packaging/neardup.service"
    ))
    .expect("packaging/neardup.service");
    for line in [
        "ExecStart=/usr/local/bin/neardup serve",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "StateDirectory=neardup",
        "DynamicUser=yes",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "Restart=on-failure",
    ] {
        assert!(unit.lines().any(|kept| kept == line), "no `{line}`");
    }
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "systemd-analyze is missing (Debian: apt-get install systemd)"
        );
        eprintln!("SKIPPED: systemd-analyze verify (no systemd-analyze here)");
        return;
    }
    let dir = TempDir::new("unit");
    let path = dir.path().join("neardup.service");
    std::fs::write(
        &path,
        unit.replace("/usr/local/bin/neardup", env!("CARGO_BIN_EXE_neardup")),
    )
    .expect("unit copy");
    let output = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .stdin(Stdio::null())
        .output()
        .expect("systemd-analyze verify");
    let said = String::from_utf8_lossy(&output.stderr).to_string()
        + &String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(!said.contains("neardup.service"), "{said}");
}
