//! Placement across cores: documents per second placed one batch at a time
//! (`Engine::plan_documents` then `Engine::place_next`) on 1 thread and on
//! N threads, side by side, into engines filled by the same overlapping
//! stream (`../shared/bench/overlap.py`), and how much of a document's time
//! is left in the serial part (the apply step, which the sidecar runs under
//! its exclusive lock).
//!
//! ```text
//! cargo bench --bench placement -- [FILL] [THREADS] [BLOCK]   (default 100000 2 128)
//! taskset -c 0,1 cargo bench --bench placement -- 100000 2
//! ```
//!
//! Two engines are filled with the same FILL documents, then the next
//! 20 000 are placed into both in blocks of 128 taken in turn (1 thread,
//! then THREADS), so both see the same machine over the same minutes; the
//! bench prints each side's median block rate, the median of the per-round
//! ratios, the share of the serial step, and how many plans were decided
//! again. It asserts that both engines gave the same answers.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use neardup::config::EngineSettings;
use neardup::engine::{Engine, Placed};
use serde_json::Value;

const PROBE_DOCUMENTS: usize = 20_000;
/// Documents per batch ([`neardup::stamp`] uses 64 per thread).
const DEFAULT_BLOCK: usize = 128;
const START_TIME: i64 = 1_700_000_000_000;

fn stream(documents: usize) -> Result<Vec<Value>, String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/overlap.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(documents.to_string())
        .output()
        .map_err(|error| format!("cannot run {}: {error}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "overlap.py failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    BufReader::new(output.stdout.as_slice())
        .lines()
        .map(|line| {
            let line = line.map_err(|error| error.to_string())?;
            serde_json::from_str(&line).map_err(|error| error.to_string())
        })
        .collect()
}

fn engine() -> Engine {
    EngineSettings {
        retention: Some("never".to_string()),
        ..EngineSettings::default()
    }
    .build()
    .expect("default settings are valid")
}

/// Time of one block: the whole of it, and the serial step alone.
struct Timed {
    total: Duration,
    serial: Duration,
    redecided: usize,
    placed: Vec<Placed>,
}

fn place_block(engine: &mut Engine, documents: &[Value], threads: usize, now: i64) -> Timed {
    let started = Instant::now();
    let mut batch = engine.plan_documents(documents.iter().collect(), threads);
    let serial_started = Instant::now();
    let mut placed = Vec::with_capacity(documents.len());
    while !batch.is_empty() {
        if let Some(one) = engine.place_next(&mut batch, now) {
            placed.push(one);
        }
    }
    Timed {
        total: started.elapsed(),
        serial: serial_started.elapsed(),
        redecided: batch.redecided,
        placed,
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with('-'))
        .collect();
    let fill: usize = arguments
        .first()
        .and_then(|text| text.parse().ok())
        .unwrap_or(100_000);
    let threads: usize = arguments
        .get(1)
        .and_then(|text| text.parse().ok())
        .unwrap_or(2);
    let probe = PROBE_DOCUMENTS;
    let block_size: usize = arguments
        .get(2)
        .and_then(|text| text.parse().ok())
        .unwrap_or(DEFAULT_BLOCK);
    let documents = match stream(fill + probe) {
        Ok(documents) => documents,
        Err(error) => {
            eprintln!("placement bench: {error}");
            std::process::exit(1);
        }
    };
    let (filling, probing) = documents.split_at(fill);
    let mut one = engine();
    let mut many = engine();
    one.track_changes();
    many.track_changes();
    let started = Instant::now();
    for chunk in filling.chunks(block_size) {
        place_block(&mut one, chunk, threads, START_TIME);
        place_block(&mut many, chunk, threads, START_TIME);
    }
    println!(
        "filled two engines with {fill} documents each in {:.1}s ({} nodes)",
        started.elapsed().as_secs_f64(),
        one.forest().stats().nodes
    );
    let (mut rates_one, mut rates_many, mut ratios, mut serial_shares) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut redecided, mut planned) = (0, 0);
    for block in probing.chunks(block_size) {
        let single = place_block(&mut one, block, 1, START_TIME);
        let parallel = place_block(&mut many, block, threads, START_TIME);
        assert_eq!(
            single.placed, parallel.placed,
            "the same answers on 1 and {threads} threads"
        );
        let rate = |timed: &Timed| block.len() as f64 / timed.total.as_secs_f64();
        rates_one.push(rate(&single));
        rates_many.push(rate(&parallel));
        ratios.push(rate(&parallel) / rate(&single));
        serial_shares.push(parallel.serial.as_secs_f64() / single.total.as_secs_f64());
        redecided += parallel.redecided;
        planned += block.len();
    }
    println!(
        "placement of {} documents into {} nodes, blocks of {block_size}, medians:",
        probing.len(),
        fill
    );
    println!("  1 thread:   {:>9.0} docs/s", median(&mut rates_one));
    println!(
        "  {threads} threads:  {:>9.0} docs/s",
        median(&mut rates_many)
    );
    println!(
        "  ratio:      {:>9.2}x (median of per-round ratios)",
        median(&mut ratios)
    );
    println!(
        "  serial step: {:.1} % of a document's time on 1 thread (the part under the exclusive lock)",
        100.0 * median(&mut serial_shares)
    );
    println!(
        "  decided again: {redecided} of {planned} ({:.1} %)",
        100.0 * redecided as f64 / planned.max(1) as f64
    );
}
