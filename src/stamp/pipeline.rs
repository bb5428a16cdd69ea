//! `neardup stamp` on several threads: a pipeline whose stamps are those of
//! placing the documents one by one.
//!
//! Motivation: fingerprinting and deciding a document is most of its cost
//! and parallel; reading, parsing, placing in order and writing are not.
//! Run in turns (read a batch, decide it on every thread, place it, write
//! it), the in-order part left the other cores idle: 2 threads gave 1.4×
//! one. Overlapped, every stage runs at once.
//!
//! Design: the calling thread reads and parses lines and writes what comes
//! back (input and output need not be `Send`). Chunk `i` of
//! [`LINES_PER_CHUNK`] lines goes to decider `i mod threads` on that
//! decider's own queue (a document is fingerprinted without the lock, then
//! decided under the engine's shared lock, [`Engine::plan_batch`] of one;
//! any other line passes through), and each decider hands what it did, in
//! the order it got it, to its own queue towards the one placer. The placer
//! reads the deciders' queues in turn, which is input order, and applies
//! every decision that is ready (up to [`APPLIED_PER_HOLD`]) under one hold
//! of the exclusive lock ([`Engine::place_next`]: checked against what was
//! placed since it was decided, decided again if any of it could change the
//! answer), then stamps the lines and hands them back. The first pipeline
//! shared one queue between the deciders, gave each document a channel of
//! its own and took the lock per document: the wake-ups and the turns the
//! two cores took around the lock left 2 threads at 1.14× one; this one
//! measures 1.48–1.52× (docs/performance.md). At most
//! [`IN_FLIGHT_PER_THREAD`] lines wait in each queue, which bounds memory
//! and how stale a decision can be.
//!
//! Consequences: the answers and the output bytes are those of one thread
//! (tested in the parent module). A decider that panics ends its queues:
//! the placer stops there (what came before is written) and the panic is
//! raised when the threads are joined.

use std::io::{BufRead, Write};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use parking_lot::RwLock;

use super::options::StampError;
use super::placer::Placer;
use super::read::{LineReader, PROGRESS_EVERY_LINES, Pending, PendingDocument};
use crate::engine::batch::PlannedBatch;
use crate::engine::{EXPIRY_BUDGET_PER_DOCUMENT, Engine};

/// Lines waiting in each queue. Enough to keep every stage busy while a
/// long text is decided; few enough that most decisions are still valid
/// when placed (each later document placed before one is a change it is
/// checked against).
const IN_FLIGHT_PER_THREAD: usize = 32;

/// Lines handed from one thread to the next at a time: each hand-over
/// wakes a thread, and one per line cost a tenth of the run in the kernel.
const LINES_PER_CHUNK: usize = 8;

/// Consecutive lines for one decider.
type Chunk = Vec<Pending>;

/// A line as a decider hands it to the placer.
enum Decided<'analyzer> {
    Line(Vec<u8>),
    /// A document, its decision and the configured fields it held no text
    /// in.
    Document(Box<PendingDocument>, PlannedBatch, Vec<&'analyzer str>),
}

/// Runs the pipeline until the input ends or a line is invalid. Everything
/// read before the end is placed and handed to `output`.
pub(super) fn stamp_on_threads<R: BufRead>(
    engine: &mut Engine,
    reader: &mut LineReader<'_, R>,
    output: &mut impl Write,
    placer: &mut Placer<'_>,
    threads: usize,
    on_progress: &mut impl FnMut(u64),
) -> Result<(), StampError> {
    let threads = threads.max(1);
    let analyzer = engine.analyzer().clone();
    let engine = RwLock::new(engine);
    let queued = IN_FLIGHT_PER_THREAD / LINES_PER_CHUNK;
    let (to_deciders, from_reader): (Vec<SyncSender<Chunk>>, Vec<Receiver<Chunk>>) =
        (0..threads).map(|_| sync_channel(queued)).unzip();
    let (to_placer, from_deciders): (Vec<SyncSender<Vec<Decided<'_>>>>, Vec<_>) =
        (0..threads).map(|_| sync_channel(queued)).unzip();
    let (written_sender, written) = channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        for (chunks, decided) in from_reader.into_iter().zip(to_placer) {
            let (engine, analyzer) = (&engine, &analyzer);
            scope.spawn(move || {
                for chunk in chunks {
                    let mut done = Vec::with_capacity(chunk.len());
                    for pending in chunk {
                        done.push(match pending {
                            Pending::Line(line) => Decided::Line(line),
                            Pending::Document(document) => {
                                let (analysis, gaps) = match document.document() {
                                    Some(source) => analyzer.analyze_document_noting_gaps(source),
                                    None => (None, Vec::new()),
                                };
                                let batch =
                                    engine
                                        .read()
                                        .plan_batch(vec![analysis], 1, |analysis| analysis);
                                Decided::Document(document, batch, gaps)
                            }
                        });
                    }
                    // The placer gone (it stopped on an error): nothing to do.
                    if decided.send(done).is_err() {
                        return;
                    }
                }
            });
        }
        let engine = &engine;
        let placing =
            scope.spawn(move || place_in_order(engine, placer, &from_deciders, &written_sender));
        let read = feed(reader, &to_deciders, &written, output, on_progress);
        drop(to_deciders);
        // The placer ends once it has placed what was fed: write the rest.
        let mut write_result = Ok(());
        for bytes in &written {
            if write_result.is_ok() {
                write_result = output.write_all(&bytes);
            }
        }
        let placed = match placing.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        read?;
        write_result?;
        placed
    })
}

/// Reads every line and sends chunk `i` of [`LINES_PER_CHUNK`] lines to
/// decider `i mod n`. Writes what the placer has handed back meanwhile.
/// Stops at the end of the input, on an invalid line, or when the placer
/// has stopped; what was read before is sent either way.
fn feed<R: BufRead>(
    reader: &mut LineReader<'_, R>,
    deciders: &[SyncSender<Chunk>],
    written: &Receiver<Vec<u8>>,
    output: &mut impl Write,
    on_progress: &mut impl FnMut(u64),
) -> Result<(), StampError> {
    for decider in deciders.iter().cycle() {
        while let Ok(bytes) = written.try_recv() {
            output.write_all(&bytes)?;
        }
        let mut chunk = Vec::with_capacity(LINES_PER_CHUNK);
        // A bad line ends the input too, after the lines before it.
        let read = fill(reader, &mut chunk, on_progress);
        let more = matches!(read, Ok(true));
        // The placer stopped when this fails; its error is the one to report.
        if !chunk.is_empty() && decider.send(chunk).is_err() {
            return Ok(());
        }
        read?;
        if !more {
            return Ok(());
        }
    }
    Ok(())
}

/// Reads up to [`LINES_PER_CHUNK`] lines into `chunk`; `false` at the end
/// of the input.
fn fill<R: BufRead>(
    reader: &mut LineReader<'_, R>,
    chunk: &mut Chunk,
    on_progress: &mut impl FnMut(u64),
) -> Result<bool, StampError> {
    while chunk.len() < LINES_PER_CHUNK {
        let Some(pending) = reader.next_line()? else {
            return Ok(false);
        };
        chunk.push(pending);
        if reader.summary.lines.is_multiple_of(PROGRESS_EVERY_LINES) {
            on_progress(reader.bytes_read);
        }
    }
    Ok(true)
}

/// Decisions applied under one hold of the exclusive lock, when that many
/// are ready: each hold makes the deciders wait for it and the placer wait
/// for the decisions under way, so one hold per document kept the two
/// cores taking turns.
const APPLIED_PER_HOLD: usize = 64;

/// The placer: the deciders' queues read in turn (input order), the
/// decisions ready applied under one hold of the lock, their lines stamped
/// and handed back to be written. A queue that ends means the input did:
/// line `i` would have been on it. A decider that panicked ends its queue
/// early; the panic is raised when the threads are joined.
fn place_in_order(
    engine: &RwLock<&mut Engine>,
    placer: &mut Placer<'_>,
    deciders: &[Receiver<Vec<Decided<'_>>>],
    written: &Sender<Vec<u8>>,
) -> Result<(), StampError> {
    let mut next = 0;
    let mut ready: Vec<Decided<'_>> = Vec::with_capacity(APPLIED_PER_HOLD);
    let mut placed = Vec::with_capacity(APPLIED_PER_HOLD);
    loop {
        // Wait for the next chunk, then take what else is ready.
        let Ok(first) = deciders[next].recv() else {
            return Ok(());
        };
        ready.extend(first);
        next = (next + 1) % deciders.len();
        while ready.len() < APPLIED_PER_HOLD {
            let Ok(chunk) = deciders[next].try_recv() else {
                break;
            };
            ready.extend(chunk);
            next = (next + 1) % deciders.len();
        }
        if ready
            .iter()
            .any(|done| matches!(done, Decided::Document(..)))
        {
            let mut engine = engine.write();
            for done in &mut ready {
                if let Decided::Document(document, batch, _) = done {
                    let (removed, _) = engine.expire(document.now, EXPIRY_BUDGET_PER_DOCUMENT);
                    placer.summary.expired_nodes += removed as u64;
                    placed.push(engine.place_next(batch, document.now));
                }
            }
        }
        let mut placed_in_order = placed.drain(..);
        for done in ready.drain(..) {
            let bytes = match done {
                Decided::Line(line) => line,
                Decided::Document(document, _, gaps) => {
                    placer.count_gaps(gaps);
                    let mut bytes = Vec::with_capacity(document.line.len() + 64);
                    placer.write(*document, placed_in_order.next().flatten(), &mut bytes)?;
                    bytes
                }
            };
            if written.send(bytes).is_err() {
                // The reader stopped on a write error; it reports it.
                return Ok(());
            }
        }
    }
}
