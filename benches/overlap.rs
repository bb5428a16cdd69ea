//! Capacity benchmark: the whole sidecar state (engine, forest, indexes,
//! side data and the ledger's document keys) filled by a stream whose
//! documents overlap the way real feeds do (`../shared/bench/overlap.py`:
//! distinct documents put together from a shared pool of sentences, 60 %
//! short). At each checkpoint it prints documents per second, anonymous
//! resident memory (`RssAnon`: heap and stacks, not file pages) and its
//! growth per node since the previous checkpoint, and the allocator's own
//! count of bytes in use and freed but held (fragmentation).
//!
//! ```text
//! cargo bench --bench overlap -- 100000 500000
//! ```
//!
//! The stream is made by `overlap.py` (Python 3) into a temporary file and
//! read back one line at a time, so the stream itself costs no memory.
//! `NEARDUP_OVERLAP_STREAM=FILE` reads an existing stream instead. After
//! the full run, the same process starts itself again with the two extra
//! candidate searches off (pure simhash, SPEC §3 alone) up to the first
//! checkpoint, so both rates come from one session.
//!
//! Rates: "window" is the rate over the last 20 000 documents before a
//! checkpoint (what a document costs at that fill), "overall" the rate from
//! the start. Only engine work is timed (JSON parsing and reading are not).

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use neardup::config::EngineSettings;
use neardup::ledger::{DocumentKey, Ledger};

const WINDOW: usize = 20_000;
const START_TIME: i64 = 1_700_000_000_000;
const PURE_ENV: &str = "NEARDUP_OVERLAP_PURE";

fn stream_path(documents: usize) -> Result<(PathBuf, bool), String> {
    if let Ok(path) = std::env::var("NEARDUP_OVERLAP_STREAM") {
        return Ok((PathBuf::from(path), false));
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/overlap.py");
    let path = std::env::temp_dir().join(format!("neardup-overlap-{}.jsonl", std::process::id()));
    let file = std::fs::File::create(&path).map_err(|error| error.to_string())?;
    let status = Command::new("python3")
        .arg(&script)
        .arg(documents.to_string())
        .stdout(file)
        .status()
        .map_err(|error| format!("python3 {}: {error}", script.display()))?;
    if !status.success() {
        return Err(format!("{} failed: {status}", script.display()));
    }
    Ok((path, true))
}

struct Checkpoint {
    documents: usize,
    nodes: usize,
    rss_anon_kib: u64,
    overall_rate: f64,
    window_rate: f64,
    confirmations: u64,
    /// Estimated heap bytes per node: forest and multi-index, side data,
    /// candidate indexes, ledger keys.
    parts: [f64; 4],
    /// Side records off the heap, bytes per node: mapped (disk) and live.
    side_file: [f64; 2],
    /// The allocator's own count: bytes handed out (in use) and bytes freed
    /// but still held, so `RssAnon` splits into data and fragmentation.
    allocator: [u64; 2],
}

/// glibc's count of bytes in use (arena and mapped chunks) and of free
/// bytes it keeps in its arenas.
fn allocator_bytes() -> [u64; 2] {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let info = unsafe { libc::mallinfo2() };
    [(info.uordblks + info.hblkhd) as u64, info.fordblks as u64]
}

fn run(checkpoints: &[usize], pure: bool, stream: &PathBuf) -> Result<Vec<Checkpoint>, String> {
    let mut settings = EngineSettings {
        side_data_dir: std::env::var("NEARDUP_SIDE_DATA_DIR").ok(),
        ..EngineSettings::default()
    };
    if pure {
        settings.short_text_search = Some(false);
        settings.long_text_search = Some(false);
    }
    let engine = settings.build().map_err(|error| error.to_string())?;
    let mut ledger = Ledger::new(engine);
    let file = std::fs::File::open(stream).map_err(|error| error.to_string())?;
    let mut lines = BufReader::new(file).lines();
    let last = checkpoints.iter().copied().max().unwrap_or(0);
    let mut engine_time = Duration::ZERO;
    let mut window_times = std::collections::VecDeque::with_capacity(WINDOW);
    let mut window_total = Duration::ZERO;
    let mut results = Vec::new();
    for position in 0..last {
        let Some(Ok(line)) = lines.next() else {
            return Err(format!("the stream ended after {position} documents"));
        };
        let document: serde_json::Value =
            serde_json::from_str(&line).map_err(|error| error.to_string())?;
        let id = document["id"].as_str().unwrap_or_default().to_owned();
        let now = START_TIME + position as i64;
        let timer = Instant::now();
        if let Some(analysis) = ledger.engine().analyzer().analyze_document(&document) {
            let placed = ledger.place(analysis, now);
            ledger.stored(DocumentKey::new("overlap", &id), placed.fingerprint);
        }
        let spent = timer.elapsed();
        engine_time += spent;
        window_total += spent;
        window_times.push_back(spent);
        if window_times.len() > WINDOW {
            window_total -= window_times.pop_front().unwrap_or_default();
        }
        let done = position + 1;
        if checkpoints.contains(&done) {
            results.push(Checkpoint {
                documents: done,
                nodes: ledger.engine().forest().stats().nodes,
                rss_anon_kib: support::status_kib("RssAnon:").unwrap_or(0),
                allocator: allocator_bytes(),
                overall_rate: done as f64 / engine_time.as_secs_f64(),
                window_rate: window_times.len() as f64 / window_total.as_secs_f64(),
                confirmations: ledger.engine().stats().confirmations,
                parts: {
                    let engine = ledger.engine().stats();
                    let nodes = ledger.engine().forest().stats().nodes.max(1) as f64;
                    [
                        ledger.engine().forest().approx_heap_bytes() as f64 / nodes,
                        engine.side_data_heap_bytes as f64 / nodes,
                        engine.candidate_index_heap_bytes as f64 / nodes,
                        ledger.approx_heap_bytes() as f64 / nodes,
                    ]
                },
                side_file: {
                    let side_file = ledger.engine().stats().side_file;
                    let nodes = ledger.engine().forest().stats().nodes.max(1) as f64;
                    [
                        side_file.mapped_bytes as f64 / nodes,
                        side_file.live_bytes as f64 / nodes,
                    ]
                },
            });
        }
    }
    Ok(results)
}

fn main() {
    // As the binary does, so the bench measures what the sidecar runs.
    neardup::allocator::keep_large_blocks_mapped();
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.iter().any(|argument| argument == "--list") {
        println!("overlap: benchmark");
        return;
    }
    let mut checkpoints: Vec<usize> = arguments
        .iter()
        .filter_map(|argument| argument.parse().ok())
        .collect();
    if checkpoints.is_empty() {
        checkpoints = vec![100_000, 500_000];
    }
    checkpoints.sort_unstable();
    let pure = std::env::var(PURE_ENV).is_ok();
    let last = checkpoints.last().copied().unwrap_or(0);
    let (stream, made_here) = match stream_path(last) {
        Ok(found) => found,
        Err(error) => {
            eprintln!("overlap: {error}");
            std::process::exit(1);
        }
    };
    let results = run(&checkpoints, pure, &stream);
    let results = match results {
        Ok(results) => results,
        Err(error) => {
            eprintln!("overlap: {error}");
            std::process::exit(1);
        }
    };
    let label = if pure { "pure simhash" } else { "full engine" };
    let mut previous: Option<&Checkpoint> = None;
    for checkpoint in &results {
        let growth = previous.map(|before| {
            let bytes = (checkpoint.rss_anon_kib as f64 - before.rss_anon_kib as f64) * 1024.0;
            bytes / (checkpoint.nodes - before.nodes).max(1) as f64
        });
        println!(
            "overlap {label}: {} documents, {} nodes, {:.1} confirmations/document: {:.0} documents/s in the last {WINDOW} ({:.0} overall), RssAnon {:.1} MiB{}",
            checkpoint.documents,
            checkpoint.nodes,
            checkpoint.confirmations as f64 / checkpoint.documents as f64,
            checkpoint.window_rate,
            checkpoint.overall_rate,
            checkpoint.rss_anon_kib as f64 / 1024.0,
            growth.map_or(String::new(), |bytes| format!(
                ", growth {bytes:.0} B/node since the previous checkpoint"
            )),
        );
        let [forest, side, indexes, keys] = checkpoint.parts;
        println!(
            "  estimated heap per node: forest {forest:.0} B, side data {side:.0} B, candidate indexes {indexes:.0} B, ledger {keys:.0} B"
        );
        let [in_use, free_held] = checkpoint.allocator;
        let heap_growth = previous.map(|before| {
            let bytes = in_use as f64 - before.allocator[0] as f64;
            bytes / (checkpoint.nodes - before.nodes).max(1) as f64
        });
        println!(
            "  allocator: {:.1} MiB in use{}, {:.1} MiB freed but held",
            in_use as f64 / 1048576.0,
            heap_growth.map_or(String::new(), |bytes| format!(
                " (growth {bytes:.0} B/node)"
            )),
            free_held as f64 / 1048576.0,
        );
        let [mapped, live] = checkpoint.side_file;
        println!(
            "  side records on disk (memory-mapped, not in RssAnon): {mapped:.0} B/node mapped, {live:.0} B/node live"
        );
        previous = Some(checkpoint);
    }
    if let [first, .., last] = results.as_slice() {
        println!(
            "overlap {label}: window rate at {} / at {} = {:.2}",
            last.documents,
            first.documents,
            last.window_rate / first.window_rate
        );
    }
    if let (false, Some(first), Ok(me)) = (pure, results.first(), std::env::current_exe()) {
        let status = Command::new(me)
            .arg(first.documents.to_string())
            .env(PURE_ENV, "1")
            .env("NEARDUP_OVERLAP_STREAM", &stream)
            .status();
        if let Err(error) = status {
            eprintln!("overlap: the pure-simhash run did not start: {error}");
        }
    }
    if made_here {
        let _ = std::fs::remove_file(&stream);
    }
}
