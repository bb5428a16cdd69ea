//! Criterion benchmarks of the parent forest and its multi-index.
//!
//! Forests are pre-filled once per size (1 M and 10 M nodes by default; set
//! `NEARDUP_BENCH_SIZES=1000000,5000000` to choose) with random fingerprints
//! and 10 % planted near-duplicates, outside the timed loops. Assignments grow
//! the forest, so the assign benchmarks work on a copy that is reset from the
//! pre-filled forest (untimed) whenever it has grown by more than 5 %.
//!
//! Run with `cargo bench --bench forest`. Under `cargo test --benches` (no
//! `--bench` flag) a 10 000-node forest is used so the smoke run is quick.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use neardup::forest::{Forest, ForestConfig};
use neardup::units::{Fingerprint, Millis};

/// Operations per timed iteration.
const BATCH: u64 = 1024;
/// Existing fingerprints kept aside for lookups and near-duplicates.
const SAMPLE_COUNT: usize = 1 << 16;
const START_TIME: Millis = 1_700_000_000_000;

/// SplitMix64: a fast, well-mixed sequence of random-looking `u64`s.
fn split_mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut mixed = *state;
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^ (mixed >> 31)
}

/// `fingerprint` with one to three bits flipped.
fn near_duplicate(fingerprint: Fingerprint, random: u64) -> Fingerprint {
    let flips = 1 + (random % 3);
    (0..flips).fold(fingerprint, |flipped, flip| {
        flipped ^ (1 << ((random >> (8 + 6 * flip)) & 63))
    })
}

struct Prefilled {
    forest: Forest,
    samples: Vec<Fingerprint>,
    next_time: Millis,
}

fn prefill(size: usize) -> Prefilled {
    let started = Instant::now();
    let mut forest = Forest::new(ForestConfig::default()).expect("default config is valid");
    let mut random_state = size as u64;
    let mut samples = Vec::with_capacity(SAMPLE_COUNT);
    let mut now = START_TIME;
    for position in 0..size {
        let random = split_mix(&mut random_state);
        let fingerprint = if position % 10 == 9 && !samples.is_empty() {
            near_duplicate(samples[random as usize % samples.len()], random)
        } else {
            random
        };
        forest.assign(fingerprint, now);
        now += 1;
        if samples.len() < SAMPLE_COUNT {
            samples.push(fingerprint);
        } else if position % 7 == 0 {
            samples[(random >> 20) as usize % SAMPLE_COUNT] = fingerprint;
        }
    }
    eprintln!(
        "prefilled {size} assignments ({} nodes, {} roots) in {:.1?}, ~{} heap bytes/node",
        forest.len(),
        forest.stats().roots,
        started.elapsed(),
        forest.approx_heap_bytes() / forest.len().max(1)
    );
    Prefilled {
        forest,
        samples,
        next_time: now,
    }
}

/// Times `iterations × BATCH` assignments produced by `next_fingerprint` on a
/// working copy that is reset when it has grown by more than 5 %.
fn bench_assign(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    prefilled: &Prefilled,
    mut next_fingerprint: impl FnMut(&mut u64, &[Fingerprint]) -> Fingerprint,
) {
    let mut working = prefilled.forest.clone();
    let growth_limit = prefilled.forest.len() + prefilled.forest.len() / 20;
    let mut random_state = 0x5eed_u64;
    let mut now = prefilled.next_time;
    group.bench_function(name, |bencher| {
        bencher.iter_custom(|iterations| {
            if working.len() > growth_limit {
                working = prefilled.forest.clone();
            }
            let started = Instant::now();
            for _ in 0..iterations * BATCH {
                let fingerprint = next_fingerprint(&mut random_state, &prefilled.samples);
                black_box(working.assign(fingerprint, now));
                now += 1;
            }
            started.elapsed()
        });
    });
}

fn bench_size(criterion: &mut Criterion, size: usize) {
    let prefilled = prefill(size);
    let mut group = criterion.benchmark_group(format!("forest_{size}"));
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(BATCH));

    bench_assign(&mut group, "assign_new", &prefilled, |random_state, _| {
        split_mix(random_state)
    });
    bench_assign(
        &mut group,
        "assign_near_duplicate",
        &prefilled,
        |random_state, samples| {
            let random = split_mix(random_state);
            near_duplicate(samples[random as usize % samples.len()], random)
        },
    );
    bench_assign(
        &mut group,
        "assign_mixed",
        &prefilled,
        |random_state, samples| {
            let random = split_mix(random_state);
            if random & 1 == 0 {
                near_duplicate(samples[(random >> 1) as usize % samples.len()], random)
            } else {
                random
            }
        },
    );
    bench_assign(
        &mut group,
        "assign_existing",
        &prefilled,
        |random_state, samples| samples[split_mix(random_state) as usize % samples.len()],
    );

    let mut random_state = 0xabcd_u64;
    group.bench_function("root_of", |bencher| {
        bencher.iter(|| {
            for _ in 0..BATCH {
                let random = split_mix(&mut random_state);
                let fingerprint = prefilled.samples[random as usize % prefilled.samples.len()];
                black_box(prefilled.forest.root_of(fingerprint));
            }
        });
    });
    group.bench_function("index_within", |bencher| {
        bencher.iter(|| {
            for _ in 0..BATCH {
                let random = split_mix(&mut random_state);
                let query = near_duplicate(
                    prefilled.samples[random as usize % prefilled.samples.len()],
                    random,
                );
                black_box(prefilled.forest.index().within(query));
            }
        });
    });
    group.finish();
}

fn sizes() -> Vec<usize> {
    let benchmarking = std::env::args().any(|argument| argument == "--bench");
    if !benchmarking {
        return vec![10_000];
    }
    std::env::var("NEARDUP_BENCH_SIZES")
        .ok()
        .map(|sizes| {
            sizes
                .split(',')
                .filter_map(|size| size.trim().replace('_', "").parse().ok())
                .collect::<Vec<usize>>()
        })
        .filter(|sizes| !sizes.is_empty())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000])
}

fn forest_benchmarks(criterion: &mut Criterion) {
    for size in sizes() {
        bench_size(criterion, size);
    }
}

criterion_group!(benches, forest_benchmarks);
criterion_main!(benches);
