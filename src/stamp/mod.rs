//! `neardup stamp`: stamp documents offline, without a cluster.
//!
//! Motivation: teams want to try the grouping on their own data (and we want
//! to score it on a benchmark) before putting a sidecar in front of a cluster.
//! The input is what they already have: JSON lines (one document per line) or
//! a `_bulk` NDJSON body.
//!
//! Design: lines are read as bytes and written back in order. A document
//! that gets stamped has `cluster_root` and `simhash` (names configurable)
//! inserted before its closing brace, so every other byte of the line stays as
//! it was; only when one of the stamped fields already exists is the object
//! re-serialised (key order kept). In bulk NDJSON, what gets stamped is the
//! sidecar's rule ([`crate::bulk::stamping`]): `index` / `create` sources,
//! update upserts and `doc_as_upsert` docs; partial updates, scripts,
//! `delete` actions and all action lines pass through unchanged, and a last
//! action without its source is ignored, as the cluster ignores it. A line
//! that cannot be parsed stops the run with its line number, or, with
//! `skip_invalid`, is passed through unchanged and counted.
//!
//! With one thread each document is placed as it is read. With more, the
//! run is `threads` workers ([`pipeline`]), each of which takes a chunk of
//! lines, fingerprints and decides it, and places in arrival order what is
//! ready when no other worker is placing, with the answers of placing them
//! one at a time ([`crate::engine::batch::PlannedBatch`]).
//!
//! Consequences: arrival time is the wall clock, or a field of the document
//! (`time_field`) to replay history, in which case expiry behaves as it would
//! have at that time.

mod files;
mod options;
mod pipeline;
mod placer;
mod read;
mod run;

pub use files::{StampFiles, stamp_files};
pub use options::{InputFormat, StampError, StampOptions, StampSummary};
pub use run::stamp;
