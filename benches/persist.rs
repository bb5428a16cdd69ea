//! `cargo bench --bench persist -- N`: durable state at N nodes.
//!
//! Builds a ledger of N nodes by replaying synthetic placements (60% short
//! texts with 30 bigram hashes and 40 letters, 40% long texts with a
//! 64-value sketch, a 48-letter lead, a headline and 6 numbers; one node in
//! five a leaf; one key per node), journaled to a real state directory, and
//! reports:
//!
//! - the log: bytes per effect, and how fast effects are appended and
//!   written (fsync at the end only: the per-request fsync cost is the
//!   disk's, not ours);
//! - a snapshot: bytes, time to write, and how long writes pause (the
//!   state is taken under the lock, side data shared, then written outside);
//! - recovery from the snapshot alone, and from the log alone.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use neardup::config::EngineSettings;
use neardup::ledger::{Effect, Ledger};
use neardup::persist::store::snapshots::CAPTURE_SLICE_BYTES;
use neardup::persist::{FsyncPolicy, Store, StoreOptions};

fn directory_bytes(dir: &std::path::Path, prefix: &str) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
                .filter_map(|entry| entry.metadata().ok())
                .map(|metadata| metadata.len())
                .sum()
        })
        .unwrap_or(0)
}

fn open(dir: &std::path::Path) -> (Store, Ledger, neardup::persist::RecoveryReport) {
    let settings = EngineSettings {
        retention: Some("never".to_string()),
        ..EngineSettings::default()
    };
    let parts = settings.parts().expect("settings");
    Store::open(
        StoreOptions {
            dir: dir.to_path_buf(),
            fsync: FsyncPolicy::Never,
            snapshot_after_log_bytes: u64::MAX,
            settings_digest: "bench".to_string(),
        },
        |snapshot| neardup::persist::ledger_from_snapshot(parts.clone(), snapshot),
    )
    .expect("open")
}

fn resident_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / (1 << 20) as f64)
}

fn main() {
    let nodes: usize = std::env::args()
        .skip(1)
        .find_map(|argument| argument.parse().ok())
        .unwrap_or(1_000_000);
    if std::env::args().any(|argument| argument == "--list") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("neardup-bench-persist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let effect_count = nodes * 3;

    // The log: journaled effects appended and written in batches of 1000.
    let (store, mut ledger, _) = open(&dir);
    let started = Instant::now();
    let mut generated = support::synthetic_placements(nodes);
    loop {
        let batch: Vec<Effect> = generated.by_ref().take(1000).collect();
        if batch.is_empty() {
            break;
        }
        for effect in &batch {
            ledger.replay(effect.clone());
        }
        let seq = store.append(batch);
        store.sync(seq).expect("write");
    }
    store.flush().expect("fsync");
    let log_seconds = started.elapsed().as_secs_f64();
    let log_bytes = directory_bytes(&dir, "log-");
    println!(
        "{nodes} nodes, {effect_count} effects: log {:.0} MiB ({:.0} B/effect), appended and written in {log_seconds:.1} s ({:.0} k effects/s, replay into the ledger included); RSS {:.0} MiB",
        log_bytes as f64 / (1 << 20) as f64,
        log_bytes as f64 / effect_count as f64,
        effect_count as f64 / log_seconds / 1e3,
        resident_mib()
    );
    drop(store);
    drop(ledger);

    // Recovery from the log alone.
    let started = Instant::now();
    let (store, ledger, report) = open(&dir);
    println!(
        "recovery from the log alone: {:.1} s ({} effects)",
        started.elapsed().as_secs_f64(),
        report.replayed_effects
    );

    // A snapshot: the part under the ledger lock, the capture's copy (a
    // slice per hold of the lock), then the writing.
    let started = Instant::now();
    let capture = store.begin_snapshot(&ledger);
    let paused = started.elapsed().as_secs_f64();
    store.start_segment().expect("new log segment");
    let mut longest = 0f64;
    let pending = loop {
        let slice = Instant::now();
        let done = capture.copy_some(&ledger, CAPTURE_SLICE_BYTES);
        longest = longest.max(slice.elapsed().as_secs_f64());
        if done {
            break capture.take(&ledger).expect("capture copied");
        }
        capture.flush();
    };
    let paused = paused.max(longest);
    let written = store
        .finish_snapshot(pending, 1_800_000_000_000)
        .expect("snapshot");
    println!(
        "snapshot: {:.0} MiB ({:.0} B/node), written in {:.1} s, writes paused at most {:.4} s (the capture's start, or its longest slice)",
        written.bytes as f64 / (1 << 20) as f64,
        written.bytes as f64 / nodes as f64,
        started.elapsed().as_secs_f64(),
        paused
    );
    drop(store);
    drop(ledger);
    // Only the snapshot: drop the log it covers.
    for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("log-") && name != format!("log-{:020}", written.last_seq + 1) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let started = Instant::now();
    let (_store, ledger, report) = open(&dir);
    println!(
        "recovery from the snapshot: {:.1} s ({} nodes, {} effects replayed); RSS {:.0} MiB",
        started.elapsed().as_secs_f64(),
        ledger.engine().forest().stats().nodes,
        report.replayed_effects,
        resident_mib()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
