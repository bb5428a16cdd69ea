//! Scale benchmark of the parent forest: fill, memory and latency percentiles.
//!
//! `cargo bench --bench forest_scale -- [N]` (or `NEARDUP_SCALE_N=N`; default
//! 50 000 000) fills a forest with N assignments (random fingerprints, every
//! tenth a near-duplicate of an earlier one, one per simulated millisecond),
//! then times 1 000 000 single operations of each kind and prints p50, p90,
//! p99, p99.9 and max in nanoseconds, fill throughput and bytes per node (from
//! `approx_heap_bytes` and from VmRSS). The fingerprint of the i-th assignment
//! is a pure function of i, so nothing but the forest grows with N.
//!
//! Without the `--bench` flag (as under `cargo test --benches`) it does a
//! 20 000-node smoke run; `--list` prints the benchmark name and exits.

use std::error::Error;
use std::hint::black_box;
use std::time::Instant;

use neardup::forest::{DEFAULT_RETENTION, Forest, ForestConfig};
use neardup::units::{Fingerprint, Millis};

const DEFAULT_SCALE: usize = 50_000_000;
const MEASURED_OPERATIONS: usize = 1_000_000;
const START_TIME: Millis = 1_700_000_000_000;

fn split_mix(seed: u64) -> u64 {
    let mut mixed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^ (mixed >> 31)
}

/// One to three bits chosen by `random`.
fn flip_mask(random: u64) -> u64 {
    let flips = 1 + random % 3;
    (0..flips).fold(0, |mask, flip| {
        mask ^ (1 << ((random >> (8 + 6 * flip)) & 63))
    })
}

/// The fingerprint of the `position`-th fill assignment: random, except every
/// tenth, which is a near-duplicate of an earlier one (maybe itself planted).
fn fill_fingerprint(mut position: u64) -> Fingerprint {
    let mut flips = 0;
    loop {
        let random = split_mix(position);
        if position % 10 != 9 {
            return random ^ flips;
        }
        flips ^= flip_mask(random);
        position = (random >> 8) % position;
    }
}

/// A random fingerprint outside the fill sequence (whose seeds are below N).
fn fresh_fingerprint(step: usize, stream: u64) -> Fingerprint {
    split_mix((stream << 60) | (1 << 59) | step as u64)
}

fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kibibytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kibibytes * 1024)
}

struct Latencies {
    name: &'static str,
    nanoseconds: Vec<u64>,
}

impl Latencies {
    fn measure(name: &'static str, count: usize, mut operation: impl FnMut(usize)) -> Self {
        let mut nanoseconds = Vec::with_capacity(count);
        for step in 0..count {
            let started = Instant::now();
            operation(step);
            nanoseconds.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
        nanoseconds.sort_unstable();
        Self { name, nanoseconds }
    }

    fn percentile(&self, quantile: f64) -> u64 {
        let last = self.nanoseconds.len().saturating_sub(1);
        let rank = ((last as f64) * quantile).round() as usize;
        self.nanoseconds.get(rank).copied().unwrap_or(0)
    }

    fn print(&self) {
        let mean =
            self.nanoseconds.iter().sum::<u64>() as f64 / self.nanoseconds.len().max(1) as f64;
        println!(
            "{:<24} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>10.0}",
            self.name,
            self.nanoseconds.len(),
            self.percentile(0.5),
            self.percentile(0.9),
            self.percentile(0.99),
            self.percentile(0.999),
            self.nanoseconds.last().copied().unwrap_or(0),
            mean,
        );
    }
}

struct Settings {
    scale: usize,
    measured_operations: usize,
}

fn settings() -> Option<Settings> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.iter().any(|argument| argument == "--list") {
        println!("forest_scale: bench");
        return None;
    }
    if !arguments.iter().any(|argument| argument == "--bench") {
        return Some(Settings {
            scale: 20_000,
            measured_operations: 10_000,
        });
    }
    // Unknown flags (cargo and criterion pass some) are ignored.
    let scale = arguments
        .iter()
        .filter(|argument| !argument.starts_with('-'))
        .find_map(|argument| argument.replace('_', "").parse().ok())
        .or_else(|| {
            std::env::var("NEARDUP_SCALE_N")
                .ok()
                .and_then(|scale| scale.replace('_', "").parse().ok())
        })
        .unwrap_or(DEFAULT_SCALE);
    Some(Settings {
        scale,
        measured_operations: MEASURED_OPERATIONS,
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let Some(Settings {
        scale,
        measured_operations,
    }) = settings()
    else {
        return Ok(());
    };
    println!("forest_scale: N = {scale}, {measured_operations} measured operations per kind");

    let resident_before = resident_bytes();
    let mut forest = Forest::new(ForestConfig::default())?;
    let fill_started = Instant::now();
    let mut now = START_TIME;
    for position in 0..scale as u64 {
        forest.assign(fill_fingerprint(position), now);
        now += 1;
    }
    let fill_seconds = fill_started.elapsed().as_secs_f64();
    let resident_after = resident_bytes();
    let stats = forest.stats();
    let nodes = stats.nodes.max(1) as f64;
    println!(
        "fill: {scale} assignments in {fill_seconds:.1} s = {:.0} assignments/s; {} nodes, {} roots, {} documents",
        scale as f64 / fill_seconds,
        stats.nodes,
        stats.roots,
        stats.documents,
    );
    println!(
        "memory: approx_heap_bytes {:.2} GiB = {:.1} bytes/node (index {:.1} bytes/node)",
        stats.approx_heap_bytes as f64 / f64::from(1 << 30),
        stats.approx_heap_bytes as f64 / nodes,
        forest.index().approx_heap_bytes() as f64 / nodes,
    );
    if let (Some(before), Some(after)) = (resident_before, resident_after) {
        let grown = after.saturating_sub(before) as f64;
        println!(
            "memory: VmRSS {:.2} GiB -> {:.2} GiB, +{:.1} bytes/node",
            before as f64 / f64::from(1 << 30),
            after as f64 / f64::from(1 << 30),
            grown / nodes,
        );
    }

    // Lookups and touches pick among the last 90 % of the fill, so the first
    // 5 % stay untouched for the expiry measurement at the end.
    let untouched_prefix = scale as u64 / 10;
    let existing = |step: usize| {
        let span = (scale as u64 - untouched_prefix).max(1);
        fill_fingerprint(untouched_prefix + split_mix(step as u64 ^ 0xe715) % span)
    };
    let mut measured = Vec::new();
    measured.push(Latencies::measure("root_of", measured_operations, |step| {
        black_box(forest.root_of(existing(step)));
    }));
    measured.push(Latencies::measure(
        "within (near dup)",
        measured_operations,
        |step| {
            let query = existing(step) ^ flip_mask(split_mix(step as u64));
            black_box(forest.within(query));
        },
    ));
    measured.push(Latencies::measure(
        "within (random)",
        measured_operations,
        |step| {
            black_box(forest.within(fresh_fingerprint(step, 1)));
        },
    ));
    measured.push(Latencies::measure(
        "assign existing",
        measured_operations,
        |step| {
            black_box(forest.assign(existing(step), now));
            now += 1;
        },
    ));
    measured.push(Latencies::measure(
        "assign near dup",
        measured_operations / 2,
        |step| {
            let fingerprint = existing(step) ^ flip_mask(split_mix(step as u64 ^ 0xd0b));
            black_box(forest.assign(fingerprint, now));
            now += 1;
        },
    ));
    measured.push(Latencies::measure(
        "assign new",
        measured_operations / 2,
        |step| {
            black_box(forest.assign(fresh_fingerprint(step, 2), now));
            now += 1;
        },
    ));
    measured.push(Latencies::measure(
        "reach_root",
        measured_operations,
        |step| {
            black_box(forest.reach_root(existing(step), now));
        },
    ));

    // Expiry: move the clock so that the first 5 % of the fill falls out of
    // the retention window, then expire in calls of at most 1 000 removals.
    let expire_now = START_TIME + (scale as Millis) / 20 + DEFAULT_RETENTION;
    let mut removed = 0usize;
    let mut calls = Vec::new();
    let expiry_started = Instant::now();
    loop {
        let started = Instant::now();
        let progress = forest.expire(expire_now, 1_000);
        calls.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        removed += progress.removed.len();
        if !progress.more_pending {
            break;
        }
    }
    let expiry_seconds = expiry_started.elapsed().as_secs_f64();
    calls.sort_unstable();
    measured.push(Latencies {
        name: "expire (budget 1000)",
        nanoseconds: calls,
    });

    println!(
        "{:<24} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11} {:>10}",
        "operation (ns)", "count", "p50", "p90", "p99", "p99.9", "max", "mean"
    );
    for latencies in &measured {
        latencies.print();
    }
    println!(
        "expiry: removed {removed} nodes in {expiry_seconds:.2} s ({:.0} nodes/s); {} nodes left, ~{:.1} heap bytes/node",
        removed as f64 / expiry_seconds.max(f64::MIN_POSITIVE),
        forest.len(),
        forest.approx_heap_bytes() as f64 / forest.len().max(1) as f64,
    );
    Ok(())
}
