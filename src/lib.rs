//! neardup: near-duplicate grouping at ingest for OpenSearch / Elasticsearch.
//!
//! The path a document takes, top to bottom (docs/ARCHITECTURE.md tells it
//! at length):
//!
//! 1. [`bulk`]: the request body read as the cluster reads it; which
//!    sources get stamped ([`bulk::stamping`], one rule for the sidecar and
//!    the offline `stamp`).
//! 2. [`fingerprint`]: text → normalised features → 64-bit simhash, the
//!    exact-text hash, shingles and sketches; [`engine::Analyzer`] bundles
//!    them, outside any lock.
//! 3. [`candidates`]: known nodes that could be copies: simhash neighbours
//!    within k (the pigeonhole multi-index), short texts by MinHash LSH,
//!    long texts by sketch.
//! 4. [`confirm`]: each candidate checked against what its node keeps of its
//!    text (figures, places, headlines, the in-order comparison).
//! 5. [`forest`]: the parent forest of the design (seed 002): every distinct
//!    fingerprint is one node of a tree of height ≤ 2 whose root names the
//!    class (`cluster_root`). [`engine`] runs stages 2–5 for one document.
//! 6. [`ledger`]: counts follow the cluster's answer (placed before
//!    forwarding, taken back when the cluster refuses).
//! 7. [`persist`]: every effect logged before the stamp leaves; snapshots;
//!    recovery.
//! 8. [`upstream`]: the one HTTP client of the cluster.
//! 9. [`replica`]: in a replica group, the same effects in the cluster's
//!    log (a lease, records created by id as the fence, standbys following).
//!
//! Around the path: [`serve`] (the sidecar: routing, the write pipeline, own
//! endpoints), [`stamp`] (the same path offline, without a cluster),
//! [`rebuild`] (the forest from stamped documents of an index), [`config`]
//! (settings from flags, environment and file), [`explain`] (why two texts are one class or two: the Explorer pages), [`cli`], and [`units`]
//! (fingerprints, times, sizes). The core (stages 2–5) is pure: no HTTP, no
//! async.

pub mod units;

/// What the process asks of glibc's allocator (large blocks mapped apart,
/// on huge pages).
pub mod allocator;

/// Every program built on the library (the sidecar, its benches and
/// tests) allocates through it, so the benches measure what runs.
#[global_allocator]
static ALLOCATOR: allocator::LargeBlocksOnHugePages = allocator::LargeBlocksOnHugePages;

pub mod encoding;

// Hashing and tables the core shares: the seeded hasher, numbered slots
// (forest nodes, side records), a compact hash table (document keys,
// candidate keys' lists), (key, node) pairs in 5 bytes (candidate keys of
// one node, exact hashes), a radix sort (recovery's bulk builds), and the
// capture of a table as of one moment while it changes (snapshots).
pub mod capture;
pub mod compact_text;
pub mod hashing;
pub mod key_node_table;
pub mod radix;
pub mod record_text;
pub mod slots;
pub mod table_capture;
pub mod text_code;

// The data path, stage by stage.
pub mod bulk;

pub mod fingerprint;

pub mod candidates;

pub mod confirm;

pub mod forest;

pub mod engine;

pub mod ledger;

pub mod persist;

pub mod upstream;

// Warm standbys: a replica group kept and fenced through the cluster.
pub mod replica;

// Around it.
pub mod backfill;
pub mod cli;
pub mod config;
pub mod explain;
pub mod rebuild;
pub mod serve;
pub mod stamp;
