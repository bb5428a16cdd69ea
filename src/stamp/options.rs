//! What `neardup stamp` is asked, what it reports, and why it stops.

use std::io;
use std::time::Duration;

use crate::config::defaults::{DEFAULT_ROOT_FIELD, DEFAULT_SIMHASH_FIELD};
use crate::units::{Fingerprint, format_fingerprint};

/// Shape of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Bulk NDJSON if the first non-empty line is a bulk action, else JSON lines.
    Auto,
    /// One JSON object (a document) per line.
    Jsonl,
    /// `_bulk` NDJSON: action lines, each `index`/`create`/`update` followed by its source line.
    Bulk,
}

/// What to stamp and how.
#[derive(Debug, Clone)]
pub struct StampOptions {
    pub format: InputFormat,
    pub root_field: String,
    pub simhash_field: String,
    /// Field holding each document's arrival time (epoch seconds or
    /// milliseconds, or an RFC 3339 / `YYYY-MM-DD[ HH:MM:SS]` string).
    pub time_field: Option<String>,
    pub skip_invalid: bool,
    /// Threads that decide placements (and fingerprint); the answers do
    /// not depend on it.
    pub threads: usize,
}

impl Default for StampOptions {
    fn default() -> Self {
        StampOptions {
            format: InputFormat::Auto,
            root_field: DEFAULT_ROOT_FIELD.to_string(),
            simhash_field: DEFAULT_SIMHASH_FIELD.to_string(),
            time_field: None,
            skip_invalid: false,
            threads: 1,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StampSummary {
    pub lines: u64,
    pub documents: u64,
    pub stamped: u64,
    /// Documents with no text in the fingerprinted fields: passed unstamped.
    pub without_text: u64,
    pub invalid_lines: u64,
    /// Documents whose time field was missing or unreadable (they took the
    /// previous document's time).
    pub without_time: u64,
    pub exact_hits: u64,
    /// Distinct classes among the stamped documents.
    pub classes: u64,
    pub largest_class_documents: u64,
    pub largest_class_root: Option<Fingerprint>,
    pub expired_nodes: u64,
    /// On more than one thread, what became of the decisions taken ahead of
    /// placing: applied as taken, or taken again because something placed
    /// since could change them ([`crate::engine::Engine::place_next`]).
    /// Zero on one thread, which decides as it places.
    pub decisions_kept: u64,
    pub decisions_taken_again: u64,
    /// Nodes in the forest at the end.
    pub nodes: u64,
    /// Approximate heap bytes of the forest and the engine at the end.
    pub approx_heap_bytes: u64,
    pub elapsed: Duration,
    /// Fingerprinted field → documents that hold no text in it (a body
    /// under another name leaves only the headline to group on).
    pub fields_without_text: std::collections::BTreeMap<String, u64>,
}

/// `1 document`, `2 documents`.
fn counted(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

impl std::fmt::Display for StampSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stamped {} of {} into {} (largest {}{}) in {:.2}s",
            self.stamped,
            counted(self.documents, "document", "documents"),
            counted(self.classes, "class", "classes"),
            counted(self.largest_class_documents, "document", "documents"),
            self.largest_class_root
                .map(|root| format!(", root {}", format_fingerprint(root)))
                .unwrap_or_default(),
            self.elapsed.as_secs_f64(),
        )?;
        if self.exact_hits > 0 {
            write!(
                f,
                "; {}",
                counted(self.exact_hits, "exact reprint", "exact reprints")
            )?;
        }
        if self.without_text > 0 {
            write!(f, "; {} without text (not stamped)", self.without_text)?;
        }
        if self.without_time > 0 {
            write!(f, "; {} without a readable time", self.without_time)?;
        }
        if self.invalid_lines > 0 {
            write!(
                f,
                "; {} passed through",
                counted(self.invalid_lines, "invalid line", "invalid lines")
            )?;
        }
        for (field, documents) in &self.fields_without_text {
            write!(
                f,
                "; no text in `{field}` in {}",
                counted(*documents, "document", "documents")
            )?;
        }
        if self.expired_nodes > 0 {
            write!(f, "; {} nodes expired", self.expired_nodes)?;
        }
        write!(
            f,
            "; {}, about {:.1} MiB",
            counted(self.nodes, "node", "nodes"),
            self.approx_heap_bytes as f64 / (1024.0 * 1024.0)
        )
    }
}

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum StampError {
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {message}")]
    InvalidLine { line: u64, message: String },
}
