//! The sidecar keeps answering while it places a large bulk (issue 29):
//! analysis and placement run on the blocking pool, and the CPU work that
//! borrows the request (gzip, the stamped body, the answer's parse, the
//! settlement) runs off the async workers, so liveness, readiness and a
//! pass-through search are not queued behind a large request. Bounds here
//! are generous (a test, not a timing claim); the latencies are printed.
//!
//! The window measured is the placement: a proxy between the sidecar and
//! the real cluster holds the bulk when it arrives (placement is over),
//! then refuses it with a 429 once the probes stopped, so the cluster's own
//! time to index it (osmem answers nothing else meanwhile) is not counted
//! as the sidecar's; the refusal takes every placement back.

mod support;

use std::time::Duration;

use support::Osmem;
use support::busy::{busy_round, percentile};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn health_and_searches_answer_while_a_100_mb_bulk_is_placed() {
    let osmem = Osmem::start();
    let round = busy_round(&osmem.url, 95 << 20).await;
    for probe in &round.probes {
        let mut latencies = probe.latencies.clone();
        assert!(
            latencies.len() >= 5,
            "{}: {} answers",
            probe.name,
            latencies.len()
        );
        let max = percentile(&mut latencies, 1.0);
        println!("{}", round.describe(probe));
        assert!(
            max < Duration::from_secs(3),
            "{} waited {max:?} while the bulk was placed",
            probe.name
        );
    }
    assert_eq!(round.bulk_status, 429);
    // Refused as a whole: every placement taken back.
    assert_eq!(round.forest_documents_after, 0);
}
