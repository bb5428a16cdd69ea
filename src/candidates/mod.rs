//! Stage 3 of the data path: which known nodes could be a document's
//! near duplicates.
//!
//! Motivation: the design (seed 002) finds neighbours by simhash distance
//! alone, and that finds a long reprint in microseconds. It misses two
//! kinds of copy: a short text, whose few features move many bits at one
//! changed word, and a long text edited in the sentence that carries its
//! simhash. Each has its own search here.
//!
//! Design: three indexes, all keyed by fingerprint (the node's id) and all
//! pure, with no locking (the engine serialises access):
//!
//! - [`multi_index`]: every fingerprint within Hamming distance `k` (the
//!   pigeonhole multi-index of the design); the forest owns it.
//! - [`shingle_index`]: short texts by MinHash LSH over character shingles.
//! - [`sketch_index`]: long texts by the smallest hashes of their bottom-k
//!   sketch ([`crate::fingerprint::sketch`]).
//!
//! [`buckets`] is the bounded multimap under the last two.
//!
//! Consequences: a candidate is only a candidate. Every one is confirmed
//! ([`crate::confirm`]) before the forest sees it, so a loose search costs
//! time, never precision.

pub mod buckets;
pub mod multi_index;
pub mod shingle_index;
pub mod sketch_index;
