//! `cargo bench --bench capacity -- N [--no-recovery | --no-snapshot]
//! [--retention R] [--keep-state]`: the engine filled to N nodes with the engine's typical
//! side data, then what it costs there (`--no-snapshot` stops after the
//! probes: for fills whose snapshot would not fit the disk beside the side
//! file). Retention is `never` unless given (`--retention 48h`,
//! the default of the sidecar, adds the expiry queue; nothing expires: the
//! probes come right after the fill).
//!
//! Fills a ledger by replaying synthetic placements (those of the `persist`
//! bench: 60% short texts, 40% long, one node in five a leaf, one document
//! key per node, each placement settled by the cluster's answer), then
//! reports (texts: uniformly drawn letters, which no letter code shortens;
//! with `NEARDUP_CAPACITY_STREAM=FILE`, an `overlap.py` stream, each node
//! takes a stream document's texts with its letters drawn again from the
//! stream's, so the side records have real text's statistics; see
//! `support::StreamTexts`):
//!
//! - memory: `RssAnon` (heap and stacks) per node, every 10 M nodes of the
//!   fill too (with its growth per node since the last: the slope, without
//!   the fixed and bounded parts, and the fill's longest placement since
//!   the last: the pauses of tables that grow), and the side records
//!   off the heap (memory-mapped file: disk, not `RssAnon`) per node;
//! - `place` of real documents (demo sentences, one to four per document,
//!   analysed outside the timing) into the filled engine: p50 / p99 / max;
//! - a snapshot of the whole state: bytes per node, time to write, and
//!   how long writes wait: the instant the capture starts (writes locked
//!   out), the longest slice of its copy (each one a hold of the lock,
//!   writes waiting); between slices, probe documents are placed (writes
//!   while the capture runs: their p50, and what the log's new segment
//!   took, outside the lock);
//! - recovery from that snapshot (skipped with `--no-recovery`): time, and
//!   whether every node came back.
//!
//! The state directory and the side file go to the system's temporary
//! directory (`TMPDIR`). `--keep-state` leaves the state directory there
//! (its path is printed); `cargo bench --bench capacity -- --recover DIR
//! [--retention R]` then recovers it alone (time, phases, peak memory),
//! as often as wanted: how recovery was profiled (issue 49, twelfth part).

#[path = "../tests/support/mod.rs"]
mod support;

/// The largest `RssAnon` seen, read every 5 ms on a thread of its own:
/// what a snapshot holds beside the engine while it is taken and written.
struct PeakAnon {
    /// `RssAnon` (KiB) when sampling started.
    before: u64,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: std::thread::JoinHandle<u64>,
}

impl PeakAnon {
    fn start() -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = std::sync::Arc::clone(&stop);
        let sampler = std::thread::spawn(move || {
            let mut peak = 0;
            while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(support::status_kib("RssAnon:").unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            peak
        });
        PeakAnon {
            before: support::status_kib("RssAnon:").unwrap_or(0),
            stop,
            sampler,
        }
    }

    /// Stops sampling; the peak above the start, in all and per node.
    fn stop(self, nodes: usize) -> String {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let last = support::status_kib("RssAnon:").unwrap_or(0);
        let above = self
            .sampler
            .join()
            .unwrap_or(0)
            .max(last)
            .saturating_sub(self.before);
        format!(
            "at most {:.0} MiB above its {:.0} MiB before ({:.1} B/node)",
            above as f64 / 1024.0,
            self.before as f64 / 1024.0,
            above as f64 * 1024.0 / nodes.max(1) as f64
        )
    }
}

/// The longest placements of the fill since the last report, and how many
/// took 10 ms or more: a table that grows places its entries again, and
/// the block tables are laid out again every few percent of growth.
#[derive(Default)]
struct FillPauses {
    longest_ms: f64,
    over_10_ms: usize,
}

impl FillPauses {
    fn record(&mut self, milliseconds: f64) {
        self.longest_ms = self.longest_ms.max(milliseconds);
        self.over_10_ms += usize::from(milliseconds >= 10.0);
    }

    /// The report since the last one; starts counting anew.
    fn take(&mut self) -> String {
        let report = format!(
            "longest placement {:.1} ms, {} of 10 ms or more",
            self.longest_ms, self.over_10_ms
        );
        *self = FillPauses::default();
        report
    }
}

use std::time::Instant;

use neardup::config::EngineSettings;
use neardup::engine::{Analysis, SideRecordsState};
use neardup::ledger::Ledger;
use neardup::persist::store::snapshots::CAPTURE_SLICE_BYTES;
use neardup::persist::{FsyncPolicy, Store, StoreOptions};

const PROBES: usize = 20_000;

/// The fill reports `RssAnon` every this many nodes.
const CHECKPOINT_NODES: usize = 10_000_000;

fn open(
    dir: &std::path::Path,
    retention: &str,
) -> (Store, Ledger, neardup::persist::RecoveryReport) {
    let settings = EngineSettings {
        retention: Some(retention.to_string()),
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

fn memory_line(ledger: &Ledger, nodes: usize, baseline_anon_kib: u64) -> String {
    let anon = support::status_kib("RssAnon:").unwrap_or(0);
    let file = support::status_kib("RssFile:").unwrap_or(0);
    let side = ledger.engine().stats().side_file;
    let per_node = |bytes: f64| bytes / nodes.max(1) as f64;
    format!(
        "RssAnon {:.0} MiB ({:.0} B/node above the empty process), RssFile {:.0} MiB; side records on disk {:.0} B/node mapped, {:.0} B/node live, {} MiB in anonymous memory",
        anon as f64 / 1024.0,
        per_node(anon.saturating_sub(baseline_anon_kib) as f64 * 1024.0),
        file as f64 / 1024.0,
        per_node(side.mapped_bytes as f64),
        per_node(side.live_bytes as f64),
        side.anonymous_bytes >> 20
    )
}

/// The heap by structure, bytes per node, largest first; and their sum
/// against what `RssAnon` grew by.
fn heap_table(ledger: &Ledger, nodes: usize, baseline_anon_kib: u64) -> String {
    let mut parts = ledger.heap_by_structure();
    parts.sort_by_key(|part| std::cmp::Reverse(part.1));
    let per_node = |bytes: usize| bytes as f64 / nodes.max(1) as f64;
    let mut table = String::from("  heap by structure (B/node):\n");
    for (name, bytes) in &parts {
        table.push_str(&format!("    {:>7.1}  {name}\n", per_node(*bytes)));
    }
    let counted: usize = parts.iter().map(|(_, bytes)| bytes).sum();
    let anon = support::status_kib("RssAnon:").unwrap_or(0);
    let grown = anon.saturating_sub(baseline_anon_kib) as usize * 1024;
    table.push_str(&format!(
        "    {:>7.1}  counted; RssAnon grew {:.1} B/node ({:.1} not in the table: allocator slack, freed pages kept)",
        per_node(counted),
        per_node(grown),
        per_node(grown.saturating_sub(counted))
    ));
    table
}

fn percentile(sorted: &[f64], share: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * share).round() as usize]
}

/// Documents of one to four demo sentences, some repeated with a change.
fn probe_documents(seed: u64) -> Vec<serde_json::Value> {
    let sentences = support::demo_sentences(8);
    let mut random = support::Xorshift(seed);
    (0..PROBES)
        .map(|number| {
            let count = 1 + random.below(4);
            let content: String = (0..count)
                .map(|_| sentences[random.below(sentences.len())].as_str())
                .collect();
            serde_json::json!({"title": format!("第{number}条"), "content": content})
        })
        .collect()
}

fn main() {
    // As the binary does, so the bench measures what the sidecar runs.
    neardup::allocator::keep_large_blocks_mapped();
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.iter().any(|argument| argument == "--list") {
        println!("capacity: benchmark");
        return;
    }
    let nodes: usize = arguments
        .iter()
        .find_map(|argument| argument.parse().ok())
        .unwrap_or(1_000_000);
    let recover = !arguments.iter().any(|argument| argument == "--no-recovery");
    let no_snapshot = arguments.iter().any(|argument| argument == "--no-snapshot");
    let retention = arguments
        .iter()
        .position(|argument| argument == "--retention")
        .and_then(|at| arguments.get(at + 1))
        .map_or("never", String::as_str);
    let keep_state = arguments.iter().any(|argument| argument == "--keep-state");
    if let Some(kept) = arguments
        .iter()
        .position(|argument| argument == "--recover")
        .and_then(|at| arguments.get(at + 1))
    {
        let baseline_anon_kib = support::status_kib("RssAnon:").unwrap_or(0);
        println!("capacity: recovery of {kept}");
        recover_from(std::path::Path::new(kept), retention, baseline_anon_kib);
        return;
    }
    let dir = std::env::temp_dir().join(format!("neardup-bench-capacity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let documents = probe_documents(0x2545_f491_4f6c_dd1d);
    let during_capture = probe_documents(0x9e37_79b9_7f4a_7c15);
    let (store, mut ledger, _) = open(&dir, retention);
    let analyses = analyzed(&ledger, &documents);
    let mut analyses_during = analyzed(&ledger, &during_capture);
    let baseline_anon_kib = support::status_kib("RssAnon:").unwrap_or(0);

    let started = Instant::now();
    // Every 10 M nodes: `RssAnon` then, and its growth per node since the
    // last (what grows with the nodes, fixed and bounded parts left out).
    let mut last_checkpoint = (0usize, baseline_anon_kib);
    // The fill's pauses: a placement that grew or laid out a table.
    let mut pauses = FillPauses::default();
    for (number, effect) in support::synthetic_placements(nodes).enumerate() {
        let placement = Instant::now();
        ledger.replay(effect);
        pauses.record(placement.elapsed().as_secs_f64() * 1e3);
        if number % 1_000_000 == 999_999 {
            let filled = ledger.engine().forest().stats().nodes;
            if filled >= last_checkpoint.0 + CHECKPOINT_NODES {
                let anon = support::status_kib("RssAnon:").unwrap_or(0);
                println!(
                    "  at {filled} nodes ({:.0} s): RssAnon {:.0} MiB, grew {:.1} B/node since {} nodes; {}",
                    started.elapsed().as_secs_f64(),
                    anon as f64 / 1024.0,
                    anon.saturating_sub(last_checkpoint.1) as f64 * 1024.0
                        / (filled - last_checkpoint.0) as f64,
                    last_checkpoint.0,
                    pauses.take()
                );
                last_checkpoint = (filled, anon);
            }
        }
    }
    println!(
        "  the fill's placements since the last checkpoint: {}",
        pauses.take()
    );
    let fill_seconds = started.elapsed().as_secs_f64();
    let filled = ledger.engine().forest().stats().nodes;
    println!(
        "capacity: {filled} nodes filled in {fill_seconds:.1} s ({:.0} k nodes/s)",
        filled as f64 / fill_seconds / 1e3
    );
    println!("  {}", memory_line(&ledger, filled, baseline_anon_kib));
    println!("{}", heap_table(&ledger, filled, baseline_anon_kib));
    let trim_started = Instant::now();
    neardup::allocator::give_back_freed_heap();
    let trim_ms = trim_started.elapsed().as_secs_f64() * 1e3;
    let anon = support::status_kib("RssAnon:").unwrap_or(0);
    println!(
        "  freed heap given back in {trim_ms:.1} ms: RssAnon grew {:.1} B/node",
        anon.saturating_sub(baseline_anon_kib) as f64 * 1024.0 / filled.max(1) as f64
    );

    // Right after the fill's last placement (see `synthetic_placements`).
    let now = 1_700_000_000_000 + nodes as i64;
    let faults_before = thread_major_faults();
    let mut times: Vec<f64> = analyses
        .into_iter()
        .map(|analysis| timed_place(&mut ledger, analysis, now))
        .collect();
    println!(
        "  place into the filled engine: {}, {:.2} major faults each",
        latency_summary(&mut times),
        thread_major_faults().saturating_sub(faults_before) as f64 / times.len().max(1) as f64
    );

    if no_snapshot {
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // The snapshot holds the nodes of this moment; the bench logs none of
    // the places made during the capture, so recovery brings back these.
    let snapshot_nodes = ledger.engine().forest().stats().nodes;
    let peak_sampler = PeakAnon::start();
    let started = Instant::now();
    let capture = store.begin_snapshot(&ledger);
    let paused = started.elapsed().as_secs_f64();
    let segment_started = Instant::now();
    store.start_segment().expect("new log segment");
    let segment_seconds = segment_started.elapsed().as_secs_f64();
    let mut slices: Vec<f64> = Vec::new();
    let mut during: Vec<f64> = Vec::new();
    let pending = loop {
        let slice = Instant::now();
        let done = capture.copy_some(&ledger, CAPTURE_SLICE_BYTES);
        slices.push(slice.elapsed().as_secs_f64() * 1e3);
        if done {
            break capture.take(&ledger).expect("capture copied");
        }
        // Outside the lock, as the sidecar does.
        capture.flush();
        // Writes between slices, as the lock lets them through.
        for analysis in analyses_during.drain(..analyses_during.len().min(20)) {
            during.push(timed_place(&mut ledger, analysis, now));
        }
    };
    let copied = started.elapsed().as_secs_f64();
    let written = store.finish_snapshot(pending, now).expect("snapshot");
    let total_nodes = ledger.engine().forest().stats().nodes;
    during.sort_by(f64::total_cmp);
    slices.sort_by(f64::total_cmp);
    println!(
        "  snapshot: {:.0} MiB ({:.0} B/node), written in {:.1} s; writes paused {:.2} ms to start the capture, then at most {:.2} ms (longest of {} slices, median {:.2} ms, copied in {:.2} s); new log segment {:.1} ms outside the lock; {} places during the capture: p50 {:.1} µs, max {:.0} µs",
        written.bytes as f64 / (1 << 20) as f64,
        written.bytes as f64 / total_nodes as f64,
        started.elapsed().as_secs_f64(),
        paused * 1e3,
        slices.last().copied().unwrap_or(0.0),
        slices.len(),
        percentile(&slices, 0.5),
        copied,
        segment_seconds * 1e3,
        during.len(),
        percentile(&during, 0.5),
        during.last().copied().unwrap_or(0.0)
    );
    println!(
        "  RssAnon while the snapshot was taken and written: {}",
        peak_sampler.stop(snapshot_nodes)
    );
    drop(store);
    drop(ledger);

    if recover {
        let recovered = recover_from(&dir, retention, baseline_anon_kib);
        assert_eq!(
            recovered, snapshot_nodes,
            "every node of the snapshot comes back"
        );
    }
    if keep_state {
        println!("  state directory kept: {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Recovers the state in `dir` and reports its time, its phases and the
/// memory it took; the number of nodes recovered.
fn recover_from(dir: &std::path::Path, retention: &str, baseline_anon_kib: u64) -> usize {
    let peak_sampler = PeakAnon::start();
    let started = Instant::now();
    let (_store, mut ledger, report) = open(dir, retention);
    let recovered = ledger.engine().forest().stats().nodes;
    let peak = peak_sampler.stop(recovered);
    println!(
        "  recovery from the snapshot: {:.1} s (read {:.1} s, build {:.1} s, log {:.1} s), {recovered} nodes",
        started.elapsed().as_secs_f64(),
        report.snapshot_read.as_secs_f64(),
        report.state_build.as_secs_f64(),
        report.log_replay.as_secs_f64()
    );
    println!("  {}", memory_line(&ledger, recovered, baseline_anon_kib));
    println!("  RssAnon during recovery: {peak}");
    // Side records adopted unread (format 10) are checked after recovery,
    // while the sidecar serves: what the check costs placements, and how
    // long until a snapshot may start.
    let now = 1_700_000_000_000 + recovered as i64;
    let mut during_check: Vec<f64> = Vec::new();
    let faults_before = thread_major_faults();
    let mut batch_seed = 0x5851_f42d_4c95_7f2du64;
    while ledger.engine().side_records_check().state() == SideRecordsState::Checking {
        batch_seed = batch_seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        let batch = analyzed(&ledger, &probe_documents(batch_seed));
        for analysis in batch {
            if ledger.engine().side_records_check().state() != SideRecordsState::Checking {
                break;
            }
            during_check.push(timed_place(&mut ledger, analysis, now));
        }
    }
    let faults_during = thread_major_faults().saturating_sub(faults_before);
    let checked = ledger.engine().side_records_check().wait();
    println!(
        "  side records checked {:.1} s after the start ({})",
        started.elapsed().as_secs_f64(),
        checked.err().unwrap_or_else(|| "sound".to_string())
    );
    let faults_before = thread_major_faults();
    let mut after_check: Vec<f64> = analyzed(&ledger, &probe_documents(batch_seed ^ 0x9e37))
        .into_iter()
        .map(|analysis| timed_place(&mut ledger, analysis, now))
        .collect();
    let faults_after = thread_major_faults().saturating_sub(faults_before);
    println!(
        "  place while the side records were checked: {}, {:.2} major faults each; after: {}, {:.2} major faults each",
        latency_summary(&mut during_check),
        faults_during as f64 / during_check.len().max(1) as f64,
        latency_summary(&mut after_check),
        faults_after as f64 / after_check.len().max(1) as f64,
    );
    recovered
}

fn analyzed(ledger: &Ledger, documents: &[serde_json::Value]) -> Vec<Analysis> {
    documents
        .iter()
        .filter_map(|document| ledger.engine().analyzer().analyze_document(document))
        .collect()
}

/// Places one analysed document and records the cluster's answer
/// (untimed); the placement's time in µs.
fn timed_place(ledger: &mut Ledger, analysis: Analysis, now: i64) -> f64 {
    let timer = Instant::now();
    let placed = ledger.place(analysis, now);
    let micros = timer.elapsed().as_secs_f64() * 1e6;
    ledger.stored_untracked(placed.fingerprint);
    micros
}

/// Page faults of this thread that waited for the disk, so far.
fn thread_major_faults() -> u64 {
    // SAFETY: `getrusage` fills the struct it is given and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `usage` outlives the call.
    let done = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    if done == 0 { usage.ru_majflt as u64 } else { 0 }
}

fn latency_summary(times: &mut [f64]) -> String {
    times.sort_by(f64::total_cmp);
    format!(
        "{} documents, p50 {:.1} µs, p99 {:.1} µs, max {:.0} µs",
        times.len(),
        percentile(times, 0.5),
        percentile(times, 0.99),
        times.last().copied().unwrap_or(0.0)
    )
}
