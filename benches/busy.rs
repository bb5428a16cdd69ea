//! The runtime while a large bulk is placed (issue 29): liveness,
//! readiness, a pass-through `_cluster/health` and `_search` probed every 10 ms while
//! the sidecar reads, analyses, places and stamps a bulk of about 95 MB
//! (the scenario of `tests/busy_runtime.rs`, which only bounds it).
//!
//! ```text
//! cargo bench --bench busy -- [ROUNDS] [MEGABYTES]   (default 3 95)
//! ```
//!
//! Each round starts a sidecar in front of osmem-server through a proxy
//! that holds the bulk when it arrives (the cluster's own indexing time is
//! not the sidecar's), prints each probe's p50 / p99 / max, and at the end
//! the median over the rounds of each probe's p99.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Duration;

use support::Osmem;
use support::busy::{busy_round, percentile};

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|argument| argument.parse().ok())
        .collect();
    let rounds = numbers.first().copied().unwrap_or(3).max(1);
    let megabytes = numbers.get(1).copied().unwrap_or(95).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a runtime");
    let osmem = Osmem::start();
    let mut p99s: Vec<(&'static str, Vec<Duration>)> = Vec::new();
    for round in 1..=rounds {
        let measured = runtime.block_on(busy_round(&osmem.url, megabytes << 20));
        for probe in &measured.probes {
            println!("round {round}: {}", measured.describe(probe));
            let mut latencies = probe.latencies.clone();
            let p99 = percentile(&mut latencies, 0.99);
            match p99s.iter_mut().find(|(name, _)| *name == probe.name) {
                Some((_, values)) => values.push(p99),
                None => p99s.push((probe.name, vec![p99])),
            }
        }
    }
    for (name, mut values) in p99s {
        let median = percentile(&mut values, 0.5);
        println!("{name}: median p99 over {rounds} rounds {median:?}");
    }
}
