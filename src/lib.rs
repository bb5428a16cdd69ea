//! neardup: near-duplicate grouping at ingest for OpenSearch / Elasticsearch.
//!
//! The pure core (no HTTP, no async) is three modules, used in this order for
//! every document:
//!
//! - [`fingerprint`]: text → normalised features → 64-bit simhash.
//! - [`index`]: all stored fingerprints within Hamming distance `k`
//!   (pigeonhole multi-index with `k + 1` blocks).
//! - [`forest`]: the parent forest of the design (seed 002): every distinct
//!   fingerprint is one node of a tree of height ≤ 2 whose root names the
//!   equivalence class (`cluster_root`).
//!
//! [`engine`] ties them together (fingerprint, confirm short-text candidates,
//! assign) and [`stamp`] is the offline command built on it.

pub mod backfill;
pub mod buckets;
pub mod bulk;
pub mod cli;
pub mod config;
pub mod edits;
pub mod engine;
pub mod filter_path;
pub mod fingerprint;
pub mod forest;
pub mod index;
pub mod ledger;
pub mod persist;
pub mod rebuild;
pub mod serve;
pub mod shingle_index;
pub mod sketch;
pub mod stamp;
pub mod synonyms;
