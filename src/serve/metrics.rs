//! Counters of the sidecar's work, rendered in the Prometheus text format.
//!
//! Design: lock-free atomics bumped on the request path; gauges (nodes,
//! documents, memory, state, the backfill job) are read when `/metrics` is
//! scraped and handed in as [`Gauges`]. Every family goes through one
//! writer, [`Exposition`], from tables of name, help and value: two dozen
//! series do not need a metrics framework.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::backfill::Counts;
use crate::ledger::LedgerStats;

/// Upper bounds of the write-latency histogram, in seconds.
const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Debug, Default)]
pub struct Metrics {
    pub bulk_requests: AtomicU64,
    pub document_requests: AtomicU64,
    pub passthrough_requests: AtomicU64,
    pub rejected_requests: AtomicU64,
    pub malformed_bulk_requests: AtomicU64,
    pub upstream_errors: AtomicU64,
    pub unreadable_upstream_answers: AtomicU64,
    pub stamped_documents: AtomicU64,
    pub unstamped_documents: AtomicU64,
    /// Stamped sources without text in a fingerprinted field.
    pub documents_missing_fields: AtomicU64,
    /// Stamped sources without text in any fingerprinted field, sent with
    /// a class of their own.
    pub not_fingerprinted_documents: AtomicU64,
    /// Stamped or keyed items whose answer never came, read back.
    pub in_doubt_documents: AtomicU64,
    /// Partial updates whose stored document was read to place the result.
    pub edited_documents_read: AtomicU64,
    /// Updated documents read back and stamped by a follow-up update.
    pub edited_documents_restamped: AtomicU64,
    pub expired_nodes: AtomicU64,
    /// Writes forwarded unstamped (`--on-state-failure pass`).
    pub unstamped_forwarded: AtomicU64,
    /// Writes a member of a group sent on to its leader and answered.
    pub forwarded_writes: AtomicU64,
    /// Writes held while no member could serve them, and for how long.
    held_writes: AtomicU64,
    held_micros_total: AtomicU64,
    held_micros_max: AtomicU64,
    latency_buckets: [AtomicU64; LATENCY_BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_micros: AtomicU64,
}

/// Gauges read at scrape time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gauges {
    pub nodes: usize,
    pub roots: usize,
    pub documents: u64,
    pub heap_bytes: usize,
    pub resident_bytes: Option<u64>,
    pub in_flight_bytes: usize,
    pub ledger: LedgerStats,
    /// The state directory can be written (or there is none).
    pub state_writable: bool,
    /// The backfill job's series, when backfill is installed.
    pub backfill: Option<BackfillGauges>,
    /// The replica group's series, in a group.
    pub replica: Option<ReplicaGauges>,
}

/// What `/metrics` shows of the backfill job.
#[derive(Debug, Clone, Copy, Default)]
pub struct BackfillGauges {
    pub counts: Counts,
    pub running: bool,
    /// Documents read per second by the running job (0 when none runs).
    pub docs_per_second: f64,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, amount: u64) {
        counter.fetch_add(amount, Ordering::Relaxed);
    }

    /// Records the time one write request (bulk or document) took.
    pub fn observe_write(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bucket, bound) in self.latency_buckets.iter().zip(LATENCY_BUCKETS) {
            if seconds <= bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_micros.fetch_add(
            u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
    }

    /// Records a write that was held (routed again) for `held`.
    pub fn observe_held(&self, held: Duration) {
        let micros = u64::try_from(held.as_micros()).unwrap_or(u64::MAX);
        self.held_writes.fetch_add(1, Ordering::Relaxed);
        self.held_micros_total.fetch_add(micros, Ordering::Relaxed);
        self.held_micros_max.fetch_max(micros, Ordering::Relaxed);
    }

    /// Writes held, their total and longest hold (the shutdown log line).
    pub fn held(&self) -> (u64, Duration, Duration) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        (
            load(&self.held_writes),
            Duration::from_micros(load(&self.held_micros_total)),
            Duration::from_micros(load(&self.held_micros_max)),
        )
    }

    /// Every series, in the Prometheus text format (0.0.4).
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = Exposition::with_capacity(4096);
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let counters: [(&str, &str, u64); 15] = [
            (
                "neardup_malformed_bulk_requests_total",
                "bulk bodies the sidecar could not read, forwarded unstamped for the cluster to reject",
                load(&self.malformed_bulk_requests),
            ),
            (
                "neardup_bulk_requests_total",
                "_bulk requests handled",
                load(&self.bulk_requests),
            ),
            (
                "neardup_document_requests_total",
                "single-document writes handled",
                load(&self.document_requests),
            ),
            (
                "neardup_passthrough_requests_total",
                "requests proxied unchanged",
                load(&self.passthrough_requests),
            ),
            (
                "neardup_rejected_requests_total",
                "requests the sidecar answered with an error itself",
                load(&self.rejected_requests),
            ),
            (
                "neardup_upstream_errors_total",
                "requests that could not reach the cluster or timed out",
                load(&self.upstream_errors),
            ),
            (
                "neardup_unreadable_upstream_answers_total",
                "write answers whose items could not be read (nothing counted)",
                load(&self.unreadable_upstream_answers),
            ),
            (
                "neardup_stamped_documents_total",
                "documents the cluster stored with a stamp",
                load(&self.stamped_documents),
            ),
            (
                "neardup_unstamped_documents_total",
                "documents the cluster stored without a fingerprint stamp (partial updates, no text to fingerprint)",
                load(&self.unstamped_documents),
            ),
            (
                "neardup_documents_missing_fields_total",
                "stamped sources without text in a fingerprinted field",
                load(&self.documents_missing_fields),
            ),
            (
                "neardup_not_fingerprinted_documents_total",
                "stamped sources without text in any fingerprinted field, sent with a class of their own",
                load(&self.not_fingerprinted_documents),
            ),
            (
                "neardup_in_doubt_documents_total",
                "written items whose answer never came, read back from the cluster",
                load(&self.in_doubt_documents),
            ),
            (
                "neardup_edited_documents_read_total",
                "partial updates rewriting a fingerprinted field whose stored document was read, merged and placed again",
                load(&self.edited_documents_read),
            ),
            (
                "neardup_edited_documents_restamped_total",
                "updated documents (scripts, or edits raced by another write) read back and stamped by a follow-up update",
                load(&self.edited_documents_restamped),
            ),
            (
                "neardup_expired_nodes_total",
                "forest nodes removed by expiry",
                load(&self.expired_nodes),
            ),
        ];
        for (name, help, value) in counters {
            out.single(Kind::Counter, name, help, value);
        }
        let ledger = gauges.ledger;
        out.labelled(
            Kind::Counter,
            "neardup_cluster_outcomes_total",
            "what the cluster did with stamped documents and deletes",
            "outcome",
            &[
                ("stored", ledger.stored),
                ("not_stored", ledger.not_stored),
                ("restored", ledger.restored),
                ("replaced", ledger.replaced),
                ("deleted", ledger.deleted),
            ],
        );
        let mut gauge_lines: Vec<(&str, &str, u64)> = vec![
            (
                "neardup_forest_nodes",
                "distinct fingerprints in the forest",
                gauges.nodes as u64,
            ),
            ("neardup_forest_roots", "classes", gauges.roots as u64),
            (
                "neardup_forest_documents",
                "documents counted in the forest",
                gauges.documents,
            ),
            (
                "neardup_tracked_keys",
                "index/id keys whose fingerprint is known",
                ledger.keys as u64,
            ),
            (
                "neardup_heap_bytes",
                "approximate heap bytes of forest, engine and ledger",
                gauges.heap_bytes as u64,
            ),
            (
                "neardup_in_flight_bytes",
                "request bytes being stamped now",
                gauges.in_flight_bytes as u64,
            ),
        ];
        if let Some(resident) = gauges.resident_bytes {
            gauge_lines.push((
                "neardup_resident_bytes",
                "resident set size of the process",
                resident,
            ));
        }
        for (name, help, value) in gauge_lines {
            out.single(Kind::Gauge, name, help, value);
        }
        let buckets: Vec<(f64, u64)> = LATENCY_BUCKETS
            .iter()
            .zip(&self.latency_buckets)
            .map(|(&bound, bucket)| (bound, load(bucket)))
            .collect();
        out.histogram(
            "neardup_write_duration_seconds",
            "time to handle a bulk or document write, cluster included",
            &buckets,
            load(&self.latency_count),
            load(&self.latency_sum_micros) as f64 / 1e6,
        );
        out.single(
            Kind::Counter,
            "neardup_unstamped_forwarded_total",
            "writes forwarded without stamps because the state could not be written (--on-state-failure pass)",
            load(&self.unstamped_forwarded),
        );
        out.single(
            Kind::Gauge,
            "neardup_state_writable",
            "1 while the state directory can be written",
            u8::from(gauges.state_writable),
        );
        if let Some(replica) = &gauges.replica {
            self.render_replica(&mut out, replica);
        }
        if let Some(backfill) = &gauges.backfill {
            let counts = &backfill.counts;
            out.labelled(
                Kind::Counter,
                "neardup_backfill_documents_total",
                "documents of the current or last backfill job, by outcome",
                "outcome",
                &[
                    ("stamped", counts.stamped),
                    ("already_stamped", counts.already_stamped),
                    ("skipped_conflict", counts.skipped_conflict),
                    ("skipped_no_text", counts.skipped_no_text),
                    ("skipped_error", counts.skipped_error),
                ],
            );
            out.single(
                Kind::Gauge,
                "neardup_backfill_running",
                "1 while a backfill job runs",
                u8::from(backfill.running),
            );
            out.single(
                Kind::Gauge,
                "neardup_backfill_docs_per_second",
                "documents read per second by the running job",
                backfill.docs_per_second,
            );
        }
        out.into_text()
    }
}

impl Metrics {
    /// The `neardup_replica_*` families of a member of a group.
    fn render_replica(&self, out: &mut Exposition, replica: &ReplicaGauges) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let gauges: [(&str, &str, f64); 6] = [
            (
                "neardup_replica_role",
                "this member's role: 0 joining, 1 standby, 2 taking over, 3 leader, 4 deposed, 5 released",
                replica.role as f64,
            ),
            (
                "neardup_replica_acting",
                "1 while this member leads within its lease",
                f64::from(u8::from(replica.acting)),
            ),
            (
                "neardup_replica_epoch",
                "the group's epoch as this member knows it",
                replica.epoch as f64,
            ),
            (
                "neardup_replica_applied_record",
                "the last record of the group's log this member applied (or, leading, confirmed)",
                replica.record as f64,
            ),
            (
                "neardup_replica_lag_records",
                "records a standby applied at its latest look at the log: how far behind it was",
                replica.lag_records as f64,
            ),
            (
                "neardup_replica_lag_seconds",
                "seconds since this member last read the group's log to its end (-1: never)",
                replica.lag_seconds.unwrap_or(-1.0),
            ),
        ];
        for (name, help, value) in gauges {
            out.single(Kind::Gauge, name, help, value);
        }
        out.single(
            Kind::Counter,
            "neardup_replica_applied_seq",
            "the last effect of the group's log in this member's state",
            replica.seq,
        );
        out.single(
            Kind::Counter,
            "neardup_replica_takeovers_total",
            "leases this process took over (or started the group with)",
            replica.takeovers,
        );
        out.single(
            Kind::Counter,
            "neardup_replica_forwarded_writes_total",
            "writes this member sent on to the group's leader",
            load(&self.forwarded_writes),
        );
        out.single(
            Kind::Counter,
            "neardup_replica_held_writes_total",
            "writes held while no member could serve them (a takeover, a release, a leader that moved)",
            load(&self.held_writes),
        );
        out.single(
            Kind::Counter,
            "neardup_replica_held_seconds_total",
            "time writes spent held",
            load(&self.held_micros_total) as f64 / 1e6,
        );
        out.single(
            Kind::Gauge,
            "neardup_replica_held_seconds_max",
            "the longest a write was held since this process started",
            load(&self.held_micros_max) as f64 / 1e6,
        );
    }
}

/// What `/metrics` shows of this member of a replica group.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplicaGauges {
    pub role: u64,
    pub acting: bool,
    pub epoch: u64,
    pub record: u64,
    pub seq: u64,
    pub lag_records: u64,
    pub lag_seconds: Option<f64>,
    pub takeovers: u64,
}

/// The type of a series family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// Text in the Prometheus exposition format, a family at a time: its
/// `# HELP` and `# TYPE` lines, then its samples. Every series of the
/// sidecar is written through it.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    pub fn with_capacity(bytes: usize) -> Self {
        Exposition {
            text: String::with_capacity(bytes),
        }
    }

    fn header(&mut self, name: &str, help: &str, kind: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// A family of one sample without labels.
    pub fn single(&mut self, kind: Kind, name: &str, help: &str, value: impl std::fmt::Display) {
        self.header(name, help, kind.name());
        let _ = writeln!(self.text, "{name} {value}");
    }

    /// A family with one label, a sample per value of it.
    pub fn labelled(
        &mut self,
        kind: Kind,
        name: &str,
        help: &str,
        label: &str,
        samples: &[(&str, u64)],
    ) {
        self.header(name, help, kind.name());
        for (value_of_label, value) in samples {
            let _ = writeln!(self.text, "{name}{{{label}=\"{value_of_label}\"}} {value}");
        }
    }

    /// A histogram: cumulative `(upper bound, count)` buckets, then the
    /// `+Inf` bucket (`count`), the sum and the count.
    pub fn histogram(
        &mut self,
        name: &str,
        help: &str,
        buckets: &[(f64, u64)],
        count: u64,
        sum: f64,
    ) {
        self.header(name, help, "histogram");
        for (bound, cumulative) in buckets {
            let _ = writeln!(self.text, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(self.text, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(self.text, "{name}_sum {sum}\n{name}_count {count}");
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

/// Resident set size from `/proc/self/statm` (Linux), in bytes.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let metrics = Metrics::default();
        metrics.observe_write(Duration::from_millis(3));
        metrics.observe_write(Duration::from_millis(300));
        let text = metrics.render(&Gauges::default());
        assert!(text.contains("neardup_write_duration_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("neardup_write_duration_seconds_bucket{le=\"0.5\"} 2"));
        assert!(text.contains("neardup_write_duration_seconds_count 2"));
        assert!(text.contains("neardup_forest_nodes 0"));
    }
}
