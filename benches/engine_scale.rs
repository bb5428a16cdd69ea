//! Scale benchmark of the whole engine: documents in, classes out, with the
//! side data of every node (exact hashes, short-text shingles and LSH,
//! long-text sketches). Prints fill throughput, per-document latency
//! percentiles and bytes per node.
//!
//! `cargo bench --bench engine_scale -- [N]` (or `NEARDUP_ENGINE_SCALE_N=N`;
//! default 1 000 000 documents). Documents are synthetic (random Han
//! characters from a pool, cut into sentences): 60% short (15–60
//! characters), 40% long (300–900 characters); every fifth document is a
//! near-duplicate (one character changed, a prefix added, or the tail cut)
//! of an earlier one. Without `--bench` (as under `cargo test --benches`) it
//! does a 2 000-document smoke run.

use std::hint::black_box;
use std::time::Instant;

use neardup::config::EngineSettings;

const DEFAULT_SCALE: usize = 1_000_000;
const START_TIME: i64 = 1_700_000_000_000;

/// A small deterministic generator (SplitMix64).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut mixed = self.0;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^ (mixed >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// Characters from the 3 000 most-used block of CJK ideographs.
fn han(random: &mut Random) -> char {
    char::from_u32(0x4E00 + random.below(3000) as u32).unwrap_or('中')
}

fn text(random: &mut Random, chars: usize) -> String {
    let mut out = String::with_capacity(chars * 3);
    for position in 0..chars {
        out.push(han(random));
        if position % 37 == 36 {
            out.push('。');
        } else if position % 11 == 10 {
            out.push('，');
        }
    }
    out
}

fn near_duplicate(random: &mut Random, original: &str) -> String {
    let chars: Vec<char> = original.chars().collect();
    match random.below(3) {
        0 => {
            let mut edited = chars.clone();
            let position = random.below(edited.len() as u64) as usize;
            edited[position] = han(random);
            edited.into_iter().collect()
        }
        1 => format!("转发：{original}"),
        _ => chars[..chars.len() * 9 / 10].iter().collect(),
    }
}

fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn percentile(sorted: &[u64], share: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let index = ((sorted.len() - 1) as f64 * share).round() as usize;
    sorted[index]
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.iter().any(|argument| argument == "--list") {
        println!("engine_scale: benchmark");
        return;
    }
    let is_bench_run = arguments.iter().any(|argument| argument == "--bench");
    let scale = arguments
        .iter()
        .find_map(|argument| argument.parse::<usize>().ok())
        .or_else(|| std::env::var("NEARDUP_ENGINE_SCALE_N").ok()?.parse().ok())
        .unwrap_or(if is_bench_run { DEFAULT_SCALE } else { 2_000 });

    let mut engine = match EngineSettings::default().build() {
        Ok(engine) => engine,
        Err(error) => {
            eprintln!("engine_scale: {error}");
            std::process::exit(1);
        }
    };
    let mut random = Random(42);
    // Originals kept for near-duplicates: a bounded reservoir.
    let mut recent: Vec<String> = Vec::with_capacity(4096);
    let resident_before = resident_bytes();
    let mut latencies = Vec::with_capacity(scale);
    let started = Instant::now();
    for position in 0..scale {
        let content = if position % 5 == 4 && !recent.is_empty() {
            let original = &recent[random.below(recent.len() as u64) as usize];
            near_duplicate(&mut random, original)
        } else {
            let chars = if random.below(10) < 6 {
                15 + random.below(46) as usize
            } else {
                300 + random.below(601) as usize
            };
            let fresh = text(&mut random, chars);
            if recent.len() < 4096 {
                recent.push(fresh.clone());
            } else {
                let slot = random.below(4096) as usize;
                recent[slot] = fresh.clone();
            }
            fresh
        };
        let document = serde_json::json!({"title": "", "content": content});
        let now = START_TIME + position as i64;
        let timer = Instant::now();
        black_box(engine.add_document(&document, now));
        latencies.push(timer.elapsed().as_nanos() as u64);
    }
    let elapsed = started.elapsed();
    let resident_after = resident_bytes();
    latencies.sort_unstable();

    let forest = engine.forest().stats();
    let stats = engine.stats();
    let nodes = forest.nodes.max(1) as f64;
    println!(
        "engine_scale: {scale} documents in {:.1} s ({:.0} documents/s)",
        elapsed.as_secs_f64(),
        scale as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  latency ns: p50 {} p90 {} p99 {} p99.9 {} max {}",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.9),
        percentile(&latencies, 0.99),
        percentile(&latencies, 0.999),
        latencies.last().copied().unwrap_or(0)
    );
    println!(
        "  nodes {} roots {} exact hits {}; approx heap per node: forest {:.0} B, engine side data {:.0} B",
        forest.nodes,
        forest.roots,
        stats.exact_hits,
        forest.approx_heap_bytes as f64 / nodes,
        stats.approx_heap_bytes as f64 / nodes
    );
    if let (Some(before), Some(after)) = (resident_before, resident_after) {
        println!(
            "  VmRSS growth per node: {:.0} B",
            after.saturating_sub(before) as f64 / nodes
        );
    }
}
