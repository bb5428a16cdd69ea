//! Backfill: stamp the documents an index already holds.
//!
//! Motivation: nobody starts with an empty index. Documents indexed before
//! the sidecar was installed, or sent straight to the cluster during an
//! outage or a deploy, carry no stamps: the list page cannot collapse them,
//! `rebuild` skips them, and their reprints arriving later start new classes.
//!
//! Design:
//!
//! - One job at a time reads the index oldest first: a point-in-time
//!   (OpenSearch `_search/point_in_time`, Elasticsearch `_pit`) paged with
//!   `search_after`, or a scroll when neither exists, sorted by the time
//!   field and then a tiebreak (`_id` unless told otherwise; on an
//!   Elasticsearch point in time its own `_shard_doc`), a page at a
//!   time, so memory stays bounded by one page.
//! - A document older than the retention (as of the job's start) is grouped
//!   in a history frame of its own: a separate forest replayed with the
//!   documents' times, expiry included, as `neardup stamp --time-field`
//!   groups a file. The live forest never sees it: those classes expired
//!   long ago. A document inside the window joins the live forest (placed at
//!   its own time), where live copies of the same story meet it.
//! - A document that already carries stamps is read into the forest at its
//!   stamped place ([`crate::ledger::Ledger::adopt`]), never rewritten; the
//!   ledger keys documents by index and id, so one read again counts once.
//! - Stamps are written with bulk `update` (a partial `doc` with the two
//!   fields) and `if_seq_no` / `if_primary_term` from the read: a document a
//!   client rewrote meanwhile went through the sidecar and has its stamp; the
//!   409 leaves it alone and is counted.
//! - The live placements are logged before the stamps are sent
//!   (write-ahead, as for client writes), and settled from the cluster's
//!   answer. Then the checkpoint ([`checkpoint`]) moves past the page.
//! - Throttled (`max_docs_per_second`), cancellable between pages.
//!
//! Consequences:
//!
//! - After a crash the job resumes after the last checkpointed page. The
//!   page in flight may already be stamped: those documents come back as
//!   already stamped, the ledger counts each once. A resume inside the
//!   history frame first reads the preceding retention's worth of documents
//!   again (uncounted) to warm the history frame up.
//! - A story that straddles the history/window line stays one class: the
//!   history frame follows the window's documents too, and when one of them
//!   continues a history class that the live forest has expired (as of now),
//!   that class is carried over into the live forest, uncounted, before the
//!   document is placed there. The live forest still decides.
//! - The history frame lives in memory only; the index is its record.
//! - Without a state directory (`--state-dir none`) there is no checkpoint:
//!   a job started again reads from the beginning, and everything it
//!   stamped before comes back as already stamped.
//! - Reading needs sorting on the tiebreak. Elasticsearch 8 refuses sorting
//!   on `_id` by default, so there the default becomes the point in time's
//!   own `_shard_doc` ([`crate::upstream::scan`]); a resume then starts at
//!   the checkpoint's time and reads that instant again (already stamped
//!   documents are known by their stamps).
//!
//! Files, each importing only the ones after it:
//!
//! - `controller.rs`: the one job of a process: start, report, cancel.
//! - `job.rs`: the loop: read a page, prepare it, write the previous page's
//!   stamps meanwhile, checkpoint; where a resumed job starts reading.
//! - `stamps.rs`: the bulk-update writer: guarded updates, retries, 409s
//!   read back.
//! - `decide.rs`: the decisions: hits read into entries, placed in the
//!   history frame or the live forest, logged, settled.
//! - `preflight.rs`: what is checked before a job is accepted: the time
//!   field, and the stamp fields mapped as `keyword` (added where absent,
//!   refused where of another type).
//! - `checkpoint.rs`: the position, on disk.
//! - `settings.rs`: what a job is given: the request, the process's
//!   settings, the live forest it works on.
//! - `progress.rs`: where a job is, as `GET /_neardup/backfill` shows it.
//! - `offline.rs`: `neardup backfill` without a sidecar.
//!
//! The index itself is read by [`crate::upstream::scan`] (point in time,
//! scroll fallback), which `neardup rebuild` shares.

pub mod checkpoint;
mod controller;
mod decide;
pub mod job;
pub mod offline;
pub mod preflight;
pub mod progress;
pub mod settings;
mod stamps;

pub use checkpoint::{Checkpoint, Counts};
pub use controller::Controller;
pub use progress::{JobState, Progress};
pub use settings::{
    BackfillRequest, BackfillSettings, DEFAULT_PAGE_SIZE, EngineFactory, JobConfig, LiveForest,
    OptionNames, StartError, sync_store,
};
