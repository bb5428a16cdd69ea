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
//! Documents are placed in batches (`threads` × 64): fingerprinted and
//! decided on several threads, placed in arrival order, with the answers of
//! placing them one at a time ([`crate::engine::batch::PlannedBatch`]); lines are
//! written when their batch is placed.
//!
//! Consequences: arrival time is the wall clock, or a field of the document
//! (`time_field`) to replay history, in which case expiry behaves as it would
//! have at that time.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::Value;

use crate::bulk::stamping::StampTarget;
use crate::bulk::{self, ActionKind};
use crate::config::defaults::{DEFAULT_ROOT_FIELD, DEFAULT_SIMHASH_FIELD};
use crate::engine::{EXPIRY_BUDGET_PER_DOCUMENT, Engine};
use crate::fingerprint::values_at;
use crate::units::{Fingerprint, Millis, format_fingerprint, now_millis, parse_time};

const UTF8_BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

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

/// Documents per thread in one batch: large enough that starting the
/// threads is noise beside the work, small enough that few documents of a
/// batch are copies of each other (those are decided again, one by one).
const DOCUMENTS_PER_THREAD: usize = 64;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BulkExpectation {
    Action,
    /// Next line is the source of an action of this kind (stamped or passed
    /// through by [`StampTarget::of`], as the sidecar does).
    Source(ActionKind),
}

struct Stamper<'run> {
    engine: &'run mut Engine,
    options: &'run StampOptions,
    summary: StampSummary,
    class_documents: HashMap<Fingerprint, u64>,
    last_time: Option<Millis>,
    /// Lines read and not yet written: a batch placed at once.
    pending: Vec<Pending>,
    /// Documents among them.
    pending_documents: usize,
}

/// A line read, waiting for its batch to be placed.
enum Pending {
    /// Written as it came.
    Line(Vec<u8>),
    /// A document to stamp, with the line it came in.
    Document(Box<PendingDocument>),
}

struct PendingDocument {
    line: Vec<u8>,
    /// Where the JSON is in `line` (after a byte-order mark, before the
    /// terminator).
    content: std::ops::Range<usize>,
    source: Value,
    target: StampTarget,
    now: Millis,
}

/// Stamp `input` into `output`. `on_progress` is called now and then with the
/// number of input bytes consumed so far.
pub fn stamp(
    engine: &mut Engine,
    mut input: impl BufRead,
    mut output: impl Write,
    options: &StampOptions,
    mut on_progress: impl FnMut(u64),
) -> Result<StampSummary, StampError> {
    let started = Instant::now();
    let mut stamper = Stamper {
        engine,
        options,
        summary: StampSummary::default(),
        class_documents: HashMap::new(),
        last_time: None,
        pending: Vec::new(),
        pending_documents: 0,
    };
    let batch_documents = options.threads.max(1) * DOCUMENTS_PER_THREAD;
    if options.threads > 1 {
        stamper.engine.track_changes();
    }
    let mut format = options.format;
    let mut expectation = BulkExpectation::Action;
    let mut bytes_read = 0u64;
    loop {
        let mut line = Vec::new();
        let read = input.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        bytes_read += read as u64;
        stamper.summary.lines += 1;
        let line_number = stamper.summary.lines;
        let (content, terminator) = split_terminator(&line);
        // A byte-order mark before the first line (editors on Windows write
        // one) is kept in the output but is not part of the JSON.
        let (byte_order_mark, content) = match content.strip_prefix(UTF8_BYTE_ORDER_MARK) {
            Some(rest) if line_number == 1 => (UTF8_BYTE_ORDER_MARK, rest),
            _ => (&b""[..], content),
        };
        if content.iter().all(u8::is_ascii_whitespace) {
            stamper.pending.push(Pending::Line(line));
            continue;
        }
        if format == InputFormat::Auto {
            format = if looks_like_bulk_action(content) {
                InputFormat::Bulk
            } else {
                InputFormat::Jsonl
            };
        }
        let content_range = byte_order_mark.len()..line.len() - terminator.len();
        let result = match format {
            InputFormat::Bulk => stamper.bulk_line(content, &mut expectation),
            _ => stamper.document_line(content),
        };
        match result {
            Ok(Some((source, target, now))) => {
                stamper.pending_documents += 1;
                stamper
                    .pending
                    .push(Pending::Document(Box::new(PendingDocument {
                        line,
                        content: content_range,
                        source,
                        target,
                        now,
                    })));
            }
            Ok(None) => stamper.pending.push(Pending::Line(line)),
            Err(message) if options.skip_invalid => {
                stamper.summary.invalid_lines += 1;
                eprintln!("neardup stamp: line {line_number}: {message} (passed through)");
                stamper.pending.push(Pending::Line(line));
            }
            Err(message) => {
                // Everything before the bad line is written, as it would be
                // one line at a time.
                stamper.place_pending(&mut output)?;
                output.flush()?;
                return Err(StampError::InvalidLine {
                    line: line_number,
                    message,
                });
            }
        }
        if stamper.pending_documents >= batch_documents {
            stamper.place_pending(&mut output)?;
        }
        if line_number.is_multiple_of(1024) {
            on_progress(bytes_read);
        }
    }
    stamper.place_pending(&mut output)?;
    // A last action without its source line is ignored, as the cluster
    // (and the sidecar) ignore it.
    on_progress(bytes_read);
    output.flush()?;
    let mut summary = stamper.summary;
    summary.classes = stamper.class_documents.len() as u64;
    if let Some((&root, &documents)) = stamper
        .class_documents
        .iter()
        .max_by_key(|&(&root, &documents)| (documents, std::cmp::Reverse(root)))
    {
        summary.largest_class_root = Some(root);
        summary.largest_class_documents = documents;
    }
    let forest_stats = stamper.engine.forest().stats();
    summary.nodes = forest_stats.nodes as u64;
    summary.approx_heap_bytes =
        (forest_stats.approx_heap_bytes + stamper.engine.stats().approx_heap_bytes) as u64;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

impl Stamper<'_> {
    /// A line of bulk NDJSON. `Ok(None)`: pass the line through unchanged.
    fn bulk_line(
        &mut self,
        content: &[u8],
        expectation: &mut BulkExpectation,
    ) -> Result<Option<(Value, StampTarget, Millis)>, String> {
        match *expectation {
            BulkExpectation::Source(kind) => {
                *expectation = BulkExpectation::Action;
                self.source_line(content, kind)
            }
            BulkExpectation::Action => {
                let line_number = usize::try_from(self.summary.lines).unwrap_or(usize::MAX);
                let (kind, _, _) =
                    bulk::parse_action(content, line_number).map_err(|error| error.reason)?;
                if kind.has_source() {
                    *expectation = BulkExpectation::Source(kind);
                }
                Ok(None)
            }
        }
    }

    /// A line of JSON lines: a whole document.
    fn document_line(
        &mut self,
        content: &[u8],
    ) -> Result<Option<(Value, StampTarget, Millis)>, String> {
        self.source_line(content, ActionKind::Index)
    }

    /// The source line of an action of `kind` (a document, for JSON
    /// lines): the parsed source, where its stamps go and its arrival time.
    /// `Ok(None)`: not stamped by the rule, pass unchanged.
    fn source_line(
        &mut self,
        content: &[u8],
        kind: ActionKind,
    ) -> Result<Option<(Value, StampTarget, Millis)>, String> {
        let source = parse_object(content)?;
        let Value::Object(object) = &source else {
            return Ok(None);
        };
        let Some(target) = StampTarget::of(kind, object) else {
            return Ok(None);
        };
        let Some(document) = target.document(&source) else {
            return Ok(None);
        };
        self.summary.documents += 1;
        for field in self.engine.fingerprinter().fields_without_text(document) {
            *self
                .summary
                .fields_without_text
                .entry(field.to_string())
                .or_default() += 1;
        }
        let now = self.arrival_time(document);
        Ok(Some((source, target, now)))
    }

    /// Places the documents read so far (decided together on the
    /// configured threads, placed in arrival order: the answers of placing
    /// them one by one) and writes every pending line in order.
    fn place_pending(&mut self, output: &mut impl Write) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_documents = 0;
        let documents: Vec<&Value> = pending
            .iter()
            .filter_map(|item| match item {
                Pending::Document(document) => document.target.document(&document.source),
                Pending::Line(_) => None,
            })
            .collect();
        // One thread: placed one by one, as they come (no batch to check).
        let mut batch = (self.options.threads > 1)
            .then(|| self.engine.plan_documents(documents, self.options.threads));
        for item in pending {
            let document = match item {
                Pending::Line(line) => {
                    output.write_all(&line)?;
                    continue;
                }
                Pending::Document(document) => *document,
            };
            let (removed, _) = self.engine.expire(document.now, EXPIRY_BUDGET_PER_DOCUMENT);
            self.summary.expired_nodes += removed as u64;
            let placed = match &mut batch {
                Some(batch) => self.engine.place_next(batch, document.now),
                None => document
                    .target
                    .document(&document.source)
                    .and_then(|source| self.engine.add_document(source, document.now)),
            };
            let Some(placed) = placed else {
                self.summary.without_text += 1;
                output.write_all(&document.line)?;
                continue;
            };
            self.summary.stamped += 1;
            if placed.exact_hit {
                self.summary.exact_hits += 1;
            }
            *self.class_documents.entry(placed.root).or_default() += 1;
            let root = format_fingerprint(placed.root);
            let own = format_fingerprint(placed.fingerprint);
            let stamps = [
                (self.options.root_field.as_str(), root.as_str()),
                (self.options.simhash_field.as_str(), own.as_str()),
            ];
            let Value::Object(object) = document.source else {
                output.write_all(&document.line)?;
                continue;
            };
            let content = &document.line[document.content.clone()];
            let stamped = document.target.stamp(object, content, &stamps);
            output.write_all(&document.line[..document.content.start])?;
            output.write_all(&stamped)?;
            output.write_all(&document.line[document.content.end..])?;
        }
        Ok(())
    }

    fn arrival_time(&mut self, document: &Value) -> Millis {
        let Some(field) = &self.options.time_field else {
            return now_millis();
        };
        // The first value at the path that reads as a time.
        match values_at(document, field).into_iter().find_map(parse_time) {
            Some(time) => {
                self.last_time = Some(time);
                time
            }
            None => {
                self.summary.without_time += 1;
                *self.last_time.get_or_insert_with(now_millis)
            }
        }
    }
}

/// Where `neardup stamp` reads and writes, and whether it shows progress.
#[derive(Debug, Clone, Default)]
pub struct StampFiles {
    /// `None`: standard input.
    pub input: Option<PathBuf>,
    /// `None`: standard output.
    pub output: Option<PathBuf>,
    /// A progress bar on standard error (bytes read of the input's length).
    pub show_progress: bool,
}

/// Bytes buffered on each side of a file run.
const FILE_BUFFER_BYTES: usize = 1 << 20;

/// [`stamp`] from `files.input` to `files.output` (`neardup stamp`).
///
/// # Errors
///
/// Both stamped fields of one name, a file that cannot be opened or
/// created, or what [`stamp`] stops on.
pub fn stamp_files(
    engine: &mut Engine,
    files: &StampFiles,
    options: &StampOptions,
) -> anyhow::Result<StampSummary> {
    if options.root_field == options.simhash_field {
        anyhow::bail!(
            "the root field and the simhash field must differ (both are `{}`)",
            options.root_field
        );
    }
    let (input, input_len): (Box<dyn BufRead>, Option<u64>) = match &files.input {
        Some(path) => {
            let opened = File::open(path)
                .with_context(|| format!("cannot open input {}", path.display()))?;
            let len = opened.metadata().ok().map(|metadata| metadata.len());
            (
                Box::new(BufReader::with_capacity(FILE_BUFFER_BYTES, opened)),
                len,
            )
        }
        None => (
            Box::new(BufReader::with_capacity(
                FILE_BUFFER_BYTES,
                io::stdin().lock(),
            )),
            None,
        ),
    };
    let output: Box<dyn Write> = match &files.output {
        Some(path) => Box::new(
            File::create(path)
                .with_context(|| format!("cannot create output {}", path.display()))?,
        ),
        None => Box::new(io::stdout().lock()),
    };
    let output = BufWriter::with_capacity(FILE_BUFFER_BYTES, output);
    let progress = files.show_progress.then(|| new_progress_bar(input_len));
    let summary = stamp(engine, input, output, options, |bytes| {
        if let Some(bar) = &progress {
            bar.set_position(bytes);
        }
    });
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    Ok(summary?)
}

fn new_progress_bar(input_len: Option<u64>) -> indicatif::ProgressBar {
    let bar = match input_len {
        Some(len) => indicatif::ProgressBar::new(len),
        None => indicatif::ProgressBar::new_spinner(),
    };
    let template = match input_len {
        Some(_) => {
            "{spinner} stamping {bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec}, {eta} left"
        }
        None => "{spinner} stamping {bytes} read, {bytes_per_sec}",
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    bar
}

fn looks_like_bulk_action(content: &[u8]) -> bool {
    bulk::parse_action(content, 1).is_ok()
}

fn parse_object(content: &[u8]) -> Result<Value, String> {
    let value: Value =
        serde_json::from_slice(content).map_err(|error| format!("invalid JSON: {error}"))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err("expected a JSON object".to_string())
    }
}

fn split_terminator(line: &[u8]) -> (&[u8], &[u8]) {
    let without_newline = line.strip_suffix(b"\n").unwrap_or(line);
    let content = without_newline
        .strip_suffix(b"\r")
        .unwrap_or(without_newline);
    line.split_at(content.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_actions_are_recognised() {
        assert!(looks_like_bulk_action(br#"{"index":{"_index":"a"}}"#));
        assert!(looks_like_bulk_action(br#"{"delete":{}}"#));
        assert!(!looks_like_bulk_action(br#"{"title":"x","content":"y"}"#));
        assert!(!looks_like_bulk_action(br#"{"index":"x"}"#));
        let error = bulk::parse_action(br#"{"upsert":{}}"#, 1)
            .err()
            .map(|error| error.reason)
            .unwrap_or_default();
        assert!(error.contains("but found [upsert]"), "{error}");
    }

    #[test]
    fn terminators_are_kept_apart() {
        assert_eq!(split_terminator(b"ab\r\n"), (&b"ab"[..], &b"\r\n"[..]));
        assert_eq!(split_terminator(b"ab"), (&b"ab"[..], &b""[..]));
    }

    /// A stream with reposts inside and across batches, in both input
    /// shapes, a line without text, a byte-order mark and CRLF ends.
    fn overlapping_input(bulk: bool) -> Vec<u8> {
        let pieces = [
            "市政府召开新闻发布会介绍城市更新工作进展",
            "会议指出要坚持以居民需求为导向统筹推进基础设施建设",
            "The council approved a plan to expand the library network",
            "Officials said construction would begin next spring",
            "气象部门提醒未来三天大部分地区将出现明显降温",
        ];
        let mut input = b"\xEF\xBB\xBF".to_vec();
        for i in 0..700usize {
            let title = format!("{} {}", pieces[i % 5], i % 37);
            let content = match i % 4 {
                0 => pieces.join("。"),
                1 => format!("转发：{}", pieces[(i / 4) % 5]),
                2 => format!("{}。{}", pieces[i % 5], i % 11),
                _ => format!("{} {}", pieces[(i + 2) % 5], i),
            };
            if bulk {
                input.extend_from_slice(b"{\"index\":{\"_index\":\"news\"}}\r\n");
            }
            let line = if i == 300 {
                serde_json::json!({ "id": i, "other": "no text here" })
            } else {
                serde_json::json!({ "id": i, "title": title, "content": content })
            };
            input.extend_from_slice(line.to_string().as_bytes());
            input.extend_from_slice(b"\r\n");
        }
        input
    }

    fn run(input: &[u8], threads: usize) -> (Vec<u8>, StampSummary) {
        let mut engine = crate::config::EngineSettings::default()
            .build()
            .expect("default settings");
        let options = StampOptions {
            threads,
            ..StampOptions::default()
        };
        let mut output = Vec::new();
        let summary =
            stamp(&mut engine, input, &mut output, &options, |_| {}).expect("valid input");
        (output, summary)
    }

    #[test]
    fn the_stamps_do_not_depend_on_the_threads() {
        for bulk in [false, true] {
            let input = overlapping_input(bulk);
            let (one, one_summary) = run(&input, 1);
            for threads in [2, 3, 8] {
                let (many, many_summary) = run(&input, threads);
                assert!(one == many, "{threads} threads, bulk {bulk}");
                assert_eq!(one_summary.classes, many_summary.classes);
                assert_eq!(one_summary.stamped, many_summary.stamped);
            }
            assert_eq!(one_summary.without_text, 1);
            assert!(one_summary.largest_class_documents > 50, "{one_summary}");
            assert!(one.starts_with(b"\xEF\xBB\xBF"));
        }
    }

    #[test]
    fn lines_before_a_bad_line_are_written() {
        let mut input = overlapping_input(false);
        input.extend_from_slice(b"{not json\n");
        let mut engine = crate::config::EngineSettings::default()
            .build()
            .expect("default settings");
        let options = StampOptions {
            threads: 2,
            ..StampOptions::default()
        };
        let mut output = Vec::new();
        let error = stamp(&mut engine, input.as_slice(), &mut output, &options, |_| {});
        assert!(matches!(
            error,
            Err(StampError::InvalidLine { line: 701, .. })
        ));
        let written = output.split(|&byte| byte == b'\n').count() - 1;
        assert_eq!(written, 700);
    }
}
