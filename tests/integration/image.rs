//! The container image end to end: `scripts/image.sh` builds it from this
//! binary with buildah, and the sidecar inside it runs in front of the real
//! server (osmem on loopback, host network), configured by `NEARDUP_*`
//! variables only, as the state volume's owner (uid 10001). A bulk load
//! through it is stamped; its own health check passes; the image's default
//! listen address (all interfaces) without TLS or the plain-HTTP opt-in is
//! refused with the reason; an `https://` cluster finds the image's CA
//! bundle; SIGTERM to the process finishes and writes the snapshot into the
//! volume.
//!
//! Needs buildah and root (`.ci/run` installs buildah): buildah uses the vfs
//! storage driver and chroot isolation, so it needs no daemon and no
//! registry (`FROM scratch`). `buildah run` does not pass signals on, so
//! SIGTERM goes to the sidecar's own process. Without buildah or root the
//! test says so and passes, except under `CI=true`, where it fails.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use support::{Osmem, TempDir, demo_bulk, get_json, post_bulk, stamps_in};

const BOUND: Duration = Duration::from_secs(120);
const BUILD_BOUND: Duration = Duration::from_secs(600);
const STATE_OWNER: u32 = 10001;

fn buildah(args: &[&str]) -> Command {
    let mut command = Command::new("buildah");
    command.args(["--storage-driver", "vfs"]).args(args);
    command.stdin(Stdio::null());
    command
}

/// Runs `command` to its end within `bound`; panics past it.
fn output_within(command: &mut Command, bound: Duration) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let id = child.id();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    match receiver.recv_timeout(bound) {
        Ok(output) => output.expect("output"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &id.to_string()])
                .status();
            panic!("{command:?} still running after {bound:?}");
        }
    }
}

fn succeeded(command: &mut Command, bound: Duration) -> String {
    let output = output_within(command, bound);
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).to_string()
}

/// Whether this machine can build and run the image; under CI it must.
fn can_run_images() -> bool {
    let missing = if Command::new("buildah").arg("--version").output().is_err() {
        Some("buildah (Debian: apt-get install buildah)")
    } else if !is_root() {
        Some("root (buildah's vfs storage and chroot isolation run as root here)")
    } else {
        None
    };
    match missing {
        None => true,
        Some(what) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("the image test needs {what}")
        }
        Some(what) => {
            eprintln!("SKIPPED: the image test needs {what}");
            false
        }
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(1) == Some("0"))
    })
}

/// A working container of `image`, removed (with the image) on drop.
struct Container {
    name: String,
    image: String,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = output_within(&mut buildah(&["rm", &self.name]), BOUND);
        let _ = output_within(&mut buildah(&["rmi", "-f", &self.image]), BOUND);
    }
}

/// The process named `neardup` among the descendants of `parent`.
fn neardup_below(parent: u32) -> Option<u32> {
    let mut queue = vec![parent];
    while let Some(pid) = queue.pop() {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                let comm =
                    std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
                if comm.trim() == "neardup" {
                    return Some(child);
                }
                queue.push(child);
            }
        }
    }
    None
}

fn free_loopback_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address").port()
}

fn snapshots_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("snapshot-"))
            .count()
    })
}

/// Waits for `child` to exit within the bound (killed past it), with what
/// it wrote on stderr if that was piped.
fn exit_within(child: &mut Child) -> (std::process::ExitStatus, String) {
    let deadline = Instant::now() + BOUND;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("no exit within {BOUND:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut said = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
    }
    (status, said)
}

/// Waits for the first line of `child`'s stdout within the bound.
fn first_line(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("piped stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = sender.send(line);
        let mut sink = String::new();
        while reader.read_line(&mut sink).is_ok_and(|read| read > 0) {
            sink.clear();
        }
    });
    receiver
        .recv_timeout(BOUND)
        .unwrap_or_else(|_| panic!("the sidecar in the image did not start within {BOUND:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_image_runs_the_sidecar_in_front_of_the_cluster_and_keeps_its_state() {
    if !can_run_images() {
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let tag = format!("test-{}", std::process::id());
    let built = succeeded(
        Command::new("bash")
            .arg(Path::new(root).join("scripts/image.sh"))
            .arg(&tag)
            .env("NEARDUP_BIN", env!("CARGO_BIN_EXE_neardup"))
            .env("NEARDUP_IMAGE_TOOL", "buildah")
            .env("STORAGE_DRIVER", "vfs")
            .stdin(Stdio::null()),
        BUILD_BOUND,
    );
    let image = built.lines().last().unwrap_or_default().trim().to_string();
    assert_eq!(image, format!("localhost/neardup:{tag}"));
    let size = succeeded(
        &mut buildah(&["images", "--format", "{{.Size}}", &image]),
        BOUND,
    );
    eprintln!("image {image}: {}", size.trim());
    let config = succeeded(
        &mut buildah(&[
            "inspect",
            "--type",
            "image",
            "--format",
            "{{.Docker.Config.Healthcheck.Test}} {{.Docker.Config.User}}",
            &image,
        ]),
        BOUND,
    );
    assert_eq!(config.trim(), "[CMD /neardup health] 10001:10001");

    let name = succeeded(&mut buildah(&["from", "--pull-never", &image]), BOUND)
        .trim()
        .to_string();
    let container = Container {
        name,
        image: image.clone(),
    };
    let state = TempDir::new("image-state");
    std::os::unix::fs::chown(state.path(), Some(STATE_OWNER), Some(STATE_OWNER))
        .expect("chown the state volume");
    let volume = format!("{}:/var/lib/neardup", state.path().display());
    let run = |command: &[&str]| {
        let mut run = buildah(&["run", "--isolation", "chroot", "--network", "host"]);
        run.args(["-v", &volume, &container.name, "--"])
            .args(command);
        run
    };

    // The image's own settings: all interfaces, and no TLS nor opt-in.
    let refused = output_within(&mut run(&["/neardup", "serve"]), BOUND);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("NEARDUP_ALLOW_PLAIN_HTTP=true"), "{said}");

    // An https:// cluster: the image's CA bundle is found (without roots
    // the sidecar would not start, `upstream::roots`).
    let mut https = run(&["/neardup", "serve", "--upstream", "https://127.0.0.1:1"]);
    let mut https = https
        .args(["--listen", "127.0.0.1:0", "--state-dir", "none"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("buildah run");
    let line = first_line(&mut https);
    if let Some(pid) = neardup_below(https.id()) {
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
    }
    let stopped = exit_within(&mut https);
    assert!(
        line.contains("https://127.0.0.1:1"),
        "an https upstream in the image: {stopped:?} {line}"
    );

    let osmem = Osmem::start();
    let port = free_loopback_port();
    let listen = format!("127.0.0.1:{port}");
    succeeded(
        &mut buildah(&[
            "config",
            "--env",
            &format!("NEARDUP_UPSTREAM={}", osmem.url),
            "--env",
            &format!("NEARDUP_LISTEN={listen}"),
            "--env",
            "NEARDUP_LOG=warn",
            &container.name,
        ]),
        BOUND,
    );
    let mut sidecar = run(&["/neardup", "serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("buildah run");
    let line = first_line(&mut sidecar);
    let url = format!("http://{listen}");
    assert!(line.contains(&url), "{line}");

    let (body, documents) = demo_bulk("articles-image");
    let (status, answer) = post_bulk(&format!("{url}/_bulk?refresh=true"), body).await;
    assert_eq!(
        (status, answer["errors"].as_bool()),
        (200, Some(false)),
        "{answer}"
    );
    let stamps = stamps_in(&osmem.url, "articles-image").await;
    assert_eq!(stamps.len(), documents.len());
    assert!(
        stamps
            .values()
            .all(|source| source["cluster_root"].is_string()),
        "{stamps:?}"
    );
    // Written by the container's user, into the volume.
    let owners: Vec<u32> = std::fs::read_dir(state.path())
        .expect("state volume")
        .flatten()
        .filter_map(|entry| entry.metadata().ok())
        .map(|metadata| std::os::unix::fs::MetadataExt::uid(&metadata))
        .collect();
    assert!(
        !owners.is_empty() && owners.iter().all(|uid| *uid == STATE_OWNER),
        "{owners:?}"
    );

    // The image's health check, as the image runs it.
    let health = output_within(&mut run(&["/neardup", "health"]), BOUND);
    assert!(health.status.success(), "{health:?}");
    let (status, _) = get_json(&format!("{url}/_neardup/health")).await;
    assert_eq!(status, 200);

    assert_eq!(snapshots_in(state.path()), 0, "a snapshot before the stop");
    let pid = neardup_below(sidecar.id()).expect("the sidecar's process under buildah run");
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let (status, _) = exit_within(&mut sidecar);
    assert!(status.success(), "{status:?}");
    assert_eq!(
        snapshots_in(state.path()),
        1,
        "no snapshot written at SIGTERM"
    );
}
