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
//! `NEARDUP_OVERLAP_STREAM=FILE` reads an existing stream instead (it must
//! hold the last checkpoint's documents and 20 000 more).
//!
//! Rates: "window" is the rate over the last 20 000 documents before a
//! checkpoint, "overall" the rate from the start. Only engine work is timed
//! (JSON parsing and reading are not). On a shared machine whose speed
//! drifts by a third within a minute, two windows timed a minute apart do
//! not compare, so the rates the goals name are measured interleaved: the
//! 20 000 documents after the last checkpoint are placed, in blocks of 500
//! taken in turn, into the engine filled to the last checkpoint, a second
//! full engine filled to the first checkpoint, and an engine with the two
//! extra candidate searches off (pure simhash, SPEC §3 alone) filled to the
//! first checkpoint. The bench prints each engine's median block rate and
//! the medians over the rounds of the ratios within a round.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use neardup::config::EngineSettings;
use neardup::ledger::{DocumentKey, Ledger};

const WINDOW: usize = 20_000;
/// Documents placed interleaved into the engines compared (after the
/// stream's last checkpoint), in blocks of [`BLOCK`].
const PROBE_DOCUMENTS: usize = 20_000;
const BLOCK: usize = 500;
const START_TIME: i64 = 1_700_000_000_000;

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

/// The stream's documents, parsed one line at a time.
struct Stream {
    lines: std::io::Lines<BufReader<std::fs::File>>,
    read: usize,
}

impl Stream {
    fn open(path: &PathBuf) -> Result<Stream, String> {
        let file = std::fs::File::open(path).map_err(|error| error.to_string())?;
        Ok(Stream {
            lines: BufReader::new(file).lines(),
            read: 0,
        })
    }

    fn next_document(&mut self) -> Result<serde_json::Value, String> {
        let Some(Ok(line)) = self.lines.next() else {
            return Err(format!("the stream ended after {} documents", self.read));
        };
        self.read += 1;
        serde_json::from_str(&line).map_err(|error| error.to_string())
    }
}

fn new_ledger(pure: bool) -> Result<Ledger, String> {
    // NEARDUP_LEAN_SIDE_RECORDS=true measures lean side records.
    let mut settings = EngineSettings {
        side_data_dir: std::env::var("NEARDUP_SIDE_DATA_DIR").ok(),
        lean_side_records: std::env::var("NEARDUP_LEAN_SIDE_RECORDS")
            .ok()
            .map(|value| value == "true"),
        ..EngineSettings::default()
    };
    if pure {
        settings.short_text_search = Some(false);
        settings.long_text_search = Some(false);
    }
    let engine = settings.build().map_err(|error| error.to_string())?;
    Ok(Ledger::new(engine))
}

/// One document through the engine and the ledger, as the sidecar takes
/// it; returns the time it took.
fn place(ledger: &mut Ledger, document: &serde_json::Value, position: usize) -> Duration {
    let id = document["id"].as_str().unwrap_or_default().to_owned();
    let now = START_TIME + position as i64;
    let timer = Instant::now();
    if let Some(analysis) = ledger.engine().analyzer().analyze_document(document) {
        let placed = ledger.place(analysis, now);
        ledger.stored(DocumentKey::new("overlap", &id), placed.fingerprint);
    }
    timer.elapsed()
}

/// The full engine through the stream to the last checkpoint, measured at
/// each; returns the filled ledger too.
fn run(checkpoints: &[usize], stream: &mut Stream) -> Result<(Vec<Checkpoint>, Ledger), String> {
    let mut ledger = new_ledger(false)?;
    let last = checkpoints.iter().copied().max().unwrap_or(0);
    let mut engine_time = Duration::ZERO;
    let mut window_times = std::collections::VecDeque::with_capacity(WINDOW);
    let mut window_total = Duration::ZERO;
    let mut results = Vec::new();
    for position in 0..last {
        let document = stream.next_document()?;
        let spent = place(&mut ledger, &document, position);
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
    Ok((results, ledger))
}

/// A ledger filled with the stream's first `documents` (untimed).
fn filled(pure: bool, documents: usize, path: &PathBuf) -> Result<Ledger, String> {
    let mut ledger = new_ledger(pure)?;
    let mut stream = Stream::open(path)?;
    for position in 0..documents {
        let document = stream.next_document()?;
        place(&mut ledger, &document, position);
    }
    Ok(ledger)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        length if length % 2 == 1 => values[length / 2],
        length => (values[length / 2 - 1] + values[length / 2]) / 2.0,
    }
}

/// The same documents placed, a block at a time and in turn, into each
/// engine; per engine the rate of each block (documents/s), in rounds.
fn interleaved(
    engines: &mut [(String, &mut Ledger)],
    documents: &[serde_json::Value],
    first_position: usize,
) -> Vec<Vec<f64>> {
    let mut rates = vec![Vec::new(); engines.len()];
    for (round, block) in documents.chunks(BLOCK).enumerate() {
        // The order turns each round, so no engine always goes first.
        for turn in 0..engines.len() {
            let which = (round + turn) % engines.len();
            let ledger = &mut *engines[which].1;
            let mut spent = Duration::ZERO;
            for (offset, document) in block.iter().enumerate() {
                spent += place(ledger, document, first_position + round * BLOCK + offset);
            }
            rates[which].push(block.len() as f64 / spent.as_secs_f64());
        }
    }
    rates
}

fn print_checkpoints(results: &[Checkpoint]) {
    let mut previous: Option<&Checkpoint> = None;
    for checkpoint in results {
        let growth = previous.map(|before| {
            let bytes = (checkpoint.rss_anon_kib as f64 - before.rss_anon_kib as f64) * 1024.0;
            bytes / (checkpoint.nodes - before.nodes).max(1) as f64
        });
        println!(
            "overlap: {} documents, {} nodes, {:.1} confirmations/document: {:.0} documents/s in the last {WINDOW} ({:.0} overall), RssAnon {:.1} MiB{}",
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
}

fn bench(checkpoints: &[usize], path: &PathBuf) -> Result<(), String> {
    let (first, last) = match checkpoints {
        [first, .., last] => (*first, *last),
        [only] => (*only, *only),
        [] => return Err("no checkpoint".to_owned()),
    };
    let mut stream = Stream::open(path)?;
    let (results, mut at_last) = run(checkpoints, &mut stream)?;
    print_checkpoints(&results);
    let probe = (0..PROBE_DOCUMENTS)
        .map(|_| stream.next_document())
        .collect::<Result<Vec<_>, _>>()?;
    let mut pure_at_first = filled(true, first, path)?;
    let mut at_first = if first == last {
        None
    } else {
        Some(filled(false, first, path)?)
    };
    let mut engines: Vec<(String, &mut Ledger)> =
        vec![(format!("full engine at {last}"), &mut at_last)];
    if let Some(at_first) = at_first.as_mut() {
        engines.push((format!("full engine at {first}"), at_first));
    }
    engines.push((format!("pure simhash at {first}"), &mut pure_at_first));
    let rates = interleaved(&mut engines, &probe, last);
    println!(
        "overlap: the {PROBE_DOCUMENTS} documents after {last}, in blocks of {BLOCK} placed in turn into each engine ({} rounds):",
        rates[0].len()
    );
    for ((label, _), engine_rates) in engines.iter().zip(&rates) {
        println!(
            "  {label}: median {:.0} documents/s",
            median(&mut engine_rates.clone())
        );
    }
    // The median over the rounds of one engine's block rate over another's
    // in the same round, with the quartiles.
    let ratio = |over: usize, under: usize| {
        let mut each: Vec<f64> = rates[over]
            .iter()
            .zip(&rates[under])
            .map(|(a, b)| a / b)
            .collect();
        let middle = median(&mut each);
        (middle, each[each.len() / 4], each[each.len() * 3 / 4])
    };
    let pure = rates.len() - 1;
    if pure == 2 {
        let (middle, low, high) = ratio(0, 1);
        println!(
            "overlap: rate at {last} / rate at {first} = {middle:.2} (median of rounds; quartiles {low:.2}–{high:.2})"
        );
    }
    let (middle, low, high) = ratio(pure - 1, pure);
    println!(
        "overlap: full engine / pure simhash at {first} = {middle:.2} (median of rounds; quartiles {low:.2}–{high:.2})"
    );
    Ok(())
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
    checkpoints.dedup();
    let last = checkpoints.last().copied().unwrap_or(0);
    let (stream, made_here) = match stream_path(last + PROBE_DOCUMENTS) {
        Ok(found) => found,
        Err(error) => {
            eprintln!("overlap: {error}");
            std::process::exit(1);
        }
    };
    let outcome = bench(&checkpoints, &stream);
    if made_here {
        let _ = std::fs::remove_file(&stream);
    }
    if let Err(error) = outcome {
        eprintln!("overlap: {error}");
        std::process::exit(1);
    }
}
