//! Every integration test of the crate, one module per concern, in one
//! test binary.
//!
//! Why one binary: each file of `tests/` is a crate of its own, compiled
//! and linked against the library and the test support separately; thirty
//! of them took most of the release test build (about 600 of 830 CPU
//! seconds, `cargo test --release --no-run --timings`). As modules of one
//! crate, the support code and the generic code it instantiates are
//! compiled once and linked once.
//!
//! `scripts/test` still runs one module at a time (`cargo test --test
//! integration -- MODULE::`), so tests that measure timing or share the
//! cluster's port range never run beside another module's, and each
//! module's wall time shows in the table. `tests/allocator.rs` and
//! `tests/busy_runtime.rs` stay binaries of their own: one reads the
//! process's allocator counters, the other its latencies.

#[path = "../support/mod.rs"]
mod support;

mod abuse;
mod adoption;
mod backfill;
mod batch_props;
mod bench_texts;
mod capture_props;
mod cli;
mod client_gives_up;
mod crash;
mod deploy;
mod disk_full;
mod edge_texts;
mod edits;
mod edits_props;
mod engine_props;
mod explorer;
mod forest_model;
mod forest_props;
mod fuzz_bulk;
mod group_writes;
mod identity;
mod image;
mod index_exact;
mod persist_props;
mod readme;
mod side_file_growth;
mod sidecar;
mod sidecar_faults;
mod stamp_rules;
mod standby;
mod standby_rejoin;
mod state_format;
mod tls;
