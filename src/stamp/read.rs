//! `neardup stamp`'s input, one line at a time: passed through, or a
//! document to stamp with where its stamps go and its arrival time.
//!
//! Why apart: reading holds the state that depends on the order of the
//! lines (the bulk action a source line belongs to, the last readable
//! time), and it is the same whether documents are then placed one by one
//! or on several threads ([`super::pipeline`]), where one worker at a time
//! reads a chunk.

use std::io::BufRead;
use std::ops::Range;

use serde_json::Value;

use super::options::{InputFormat, StampError, StampOptions, StampSummary};
use crate::bulk::stamping::StampTarget;
use crate::bulk::{self, ActionKind};
use crate::fingerprint::values_at;
use crate::units::{Millis, now_millis, parse_time};

const UTF8_BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// Lines between two calls of the progress callback.
pub(super) const PROGRESS_EVERY_LINES: u64 = 1024;

/// A line read.
pub(super) enum Pending {
    /// Written as it came.
    Line(Vec<u8>),
    /// A document to stamp, with the line it came in.
    Document(Box<PendingDocument>),
}

pub(super) struct PendingDocument {
    pub(super) line: Vec<u8>,
    /// Where the JSON is in `line` (after a byte-order mark, before the
    /// terminator).
    pub(super) content: Range<usize>,
    pub(super) source: Value,
    pub(super) target: StampTarget,
    /// Arrival time.
    pub(super) now: Millis,
}

impl PendingDocument {
    /// The part of the source that is fingerprinted (an upsert's document,
    /// for instance).
    pub(super) fn document(&self) -> Option<&Value> {
        self.target.document(&self.source)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BulkExpectation {
    Action,
    /// Next line is the source of an action of this kind (stamped or passed
    /// through by [`StampTarget::of`], as the sidecar does).
    Source(ActionKind),
}

/// Reads lines and tells documents from lines to pass through; counts what
/// it reads into `summary` (lines, documents, invalid lines, missing
/// times). Fields without text are counted where the text is extracted
/// ([`super::placer::Placer::count_gaps`]), so it is extracted once.
pub(super) struct LineReader<'run, R> {
    input: R,
    options: &'run StampOptions,
    format: InputFormat,
    expectation: BulkExpectation,
    last_time: Option<Millis>,
    pub(super) bytes_read: u64,
    pub(super) summary: StampSummary,
}

impl<'run, R: BufRead> LineReader<'run, R> {
    pub(super) fn new(input: R, options: &'run StampOptions) -> Self {
        LineReader {
            input,
            options,
            format: options.format,
            expectation: BulkExpectation::Action,
            last_time: None,
            bytes_read: 0,
            summary: StampSummary::default(),
        }
    }

    /// The next line, `None` at the end of the input. An invalid line is an
    /// error, or, with `skip_invalid`, passed through and counted.
    pub(super) fn next_line(&mut self) -> Result<Option<Pending>, StampError> {
        let mut line = Vec::new();
        let read = self.input.read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(None);
        }
        self.bytes_read += read as u64;
        self.summary.lines += 1;
        let line_number = self.summary.lines;
        let (content, terminator) = split_terminator(&line);
        // A byte-order mark before the first line (editors on Windows write
        // one) is kept in the output but is not part of the JSON.
        let (byte_order_mark, content) = match content.strip_prefix(UTF8_BYTE_ORDER_MARK) {
            Some(rest) if line_number == 1 => (UTF8_BYTE_ORDER_MARK, rest),
            _ => (&b""[..], content),
        };
        if content.iter().all(u8::is_ascii_whitespace) {
            return Ok(Some(Pending::Line(line)));
        }
        if self.format == InputFormat::Auto {
            self.format = if looks_like_bulk_action(content) {
                InputFormat::Bulk
            } else {
                InputFormat::Jsonl
            };
        }
        let content_range = byte_order_mark.len()..line.len() - terminator.len();
        let result = match self.format {
            InputFormat::Bulk => self.bulk_line(content),
            _ => self.source_line(content, ActionKind::Index),
        };
        match result {
            Ok(Some((source, target, now))) => {
                Ok(Some(Pending::Document(Box::new(PendingDocument {
                    line,
                    content: content_range,
                    source,
                    target,
                    now,
                }))))
            }
            Ok(None) => Ok(Some(Pending::Line(line))),
            Err(message) if self.options.skip_invalid => {
                self.summary.invalid_lines += 1;
                eprintln!("neardup stamp: line {line_number}: {message} (passed through)");
                Ok(Some(Pending::Line(line)))
            }
            Err(message) => Err(StampError::InvalidLine {
                line: line_number,
                message,
            }),
        }
    }

    /// A line of bulk NDJSON. `Ok(None)`: pass the line through unchanged.
    fn bulk_line(
        &mut self,
        content: &[u8],
    ) -> Result<Option<(Value, StampTarget, Millis)>, String> {
        match self.expectation {
            BulkExpectation::Source(kind) => {
                self.expectation = BulkExpectation::Action;
                self.source_line(content, kind)
            }
            BulkExpectation::Action => {
                let line_number = usize::try_from(self.summary.lines).unwrap_or(usize::MAX);
                let (kind, _, _) =
                    bulk::parse_action(content, line_number).map_err(|error| error.reason)?;
                if kind.has_source() {
                    self.expectation = BulkExpectation::Source(kind);
                }
                Ok(None)
            }
        }
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
        let now = self.arrival_time(document);
        Ok(Some((source, target, now)))
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

pub(super) fn looks_like_bulk_action(content: &[u8]) -> bool {
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

pub(super) fn split_terminator(line: &[u8]) -> (&[u8], &[u8]) {
    let without_newline = line.strip_suffix(b"\n").unwrap_or(line);
    let content = without_newline
        .strip_suffix(b"\r")
        .unwrap_or(without_newline);
    line.split_at(content.len())
}
