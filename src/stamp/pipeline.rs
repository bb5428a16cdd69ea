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
//! back (input and output need not be `Send`). Each document goes to the
//! `threads` deciders (fingerprint without the lock, then a decision under
//! the engine's shared lock, [`Engine::plan_batch`] of one) and, in input
//! order, to the one placer, which waits for that document's decision and
//! applies it under the exclusive lock ([`Engine::place_next`]: checked
//! against what was placed since it was decided, decided again if any of it
//! could change the answer), then stamps the line and hands it back. At
//! most [`IN_FLIGHT_PER_THREAD`] × `threads` lines are between reading and
//! writing, which bounds memory and how stale a decision can be.
//!
//! Consequences: the answers and the output bytes are those of one thread
//! (tested in the parent module). A decider that panics leaves its
//! document without a decision: the placer stops with an error and the
//! panic is raised when the threads are joined.

use std::io::{self, BufRead, Write};
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};

use parking_lot::{Mutex, RwLock};

use super::options::StampError;
use super::placer::Placer;
use super::read::{LineReader, PROGRESS_EVERY_LINES, Pending, PendingDocument};
use crate::engine::batch::PlannedBatch;
use crate::engine::{EXPIRY_BUDGET_PER_DOCUMENT, Engine};

/// Lines in flight per deciding thread. Enough to keep every stage busy
/// while a long text is decided; few enough that most decisions are still
/// valid when placed (each later document placed before one is a change it
/// is checked against).
const IN_FLIGHT_PER_THREAD: usize = 32;

/// A document, its decision and the configured fields it held no text in,
/// from a decider to the placer.
type Decided<'analyzer> = (Box<PendingDocument>, PlannedBatch, Vec<&'analyzer str>);

/// What the placer receives, in input order.
enum Unit<'analyzer> {
    Line(Vec<u8>),
    /// A document; its decision arrives on this receiver.
    Document(Receiver<Decided<'analyzer>>),
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
    let in_flight = threads * IN_FLIGHT_PER_THREAD;
    let (unit_sender, units) = sync_channel::<Unit>(in_flight);
    let (job_sender, jobs) = sync_channel::<(Box<PendingDocument>, SyncSender<Decided>)>(in_flight);
    let (written_sender, written) = channel::<Vec<u8>>();
    let jobs = Mutex::new(jobs);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (jobs, engine, analyzer) = (&jobs, &engine, &analyzer);
            scope.spawn(move || {
                loop {
                    let job = jobs.lock().recv();
                    let Ok((document, reply)) = job else {
                        return;
                    };
                    let (analysis, gaps) = match document.document() {
                        Some(source) => analyzer.analyze_document_noting_gaps(source),
                        None => (None, Vec::new()),
                    };
                    let batch = engine
                        .read()
                        .plan_batch(vec![analysis], 1, |analysis| analysis);
                    // The placer gone (it stopped on an error): nothing to do.
                    let _ = reply.send((document, batch, gaps));
                }
            });
        }
        let engine = &engine;
        let placing = scope.spawn(move || place_in_order(engine, placer, &units, &written_sender));
        let read = feed(
            reader,
            &unit_sender,
            &job_sender,
            &written,
            output,
            on_progress,
        );
        drop((unit_sender, job_sender));
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

/// Reads every line and sends it on: to the placer in order and, for a
/// document, to the deciders. Writes what the placer has handed back
/// meanwhile. Stops at the end of the input, on an invalid line, or when
/// the placer has stopped.
fn feed<'analyzer, R: BufRead>(
    reader: &mut LineReader<'_, R>,
    units: &SyncSender<Unit<'analyzer>>,
    jobs: &SyncSender<(Box<PendingDocument>, SyncSender<Decided<'analyzer>>)>,
    written: &Receiver<Vec<u8>>,
    output: &mut impl Write,
    on_progress: &mut impl FnMut(u64),
) -> Result<(), StampError> {
    loop {
        while let Ok(bytes) = written.try_recv() {
            output.write_all(&bytes)?;
        }
        let Some(pending) = reader.next_line()? else {
            return Ok(());
        };
        let sent = match pending {
            Pending::Line(line) => units.send(Unit::Line(line)).is_ok(),
            Pending::Document(document) => {
                let (reply, decided) = sync_channel(1);
                units.send(Unit::Document(decided)).is_ok() && jobs.send((document, reply)).is_ok()
            }
        };
        if !sent {
            // The placer stopped; its error is the one to report.
            return Ok(());
        }
        if reader.summary.lines.is_multiple_of(PROGRESS_EVERY_LINES) {
            on_progress(reader.bytes_read);
        }
    }
}

/// The placer: each document's decision applied in input order, its line
/// stamped and handed back to be written.
fn place_in_order(
    engine: &RwLock<&mut Engine>,
    placer: &mut Placer<'_>,
    units: &Receiver<Unit<'_>>,
    written: &std::sync::mpsc::Sender<Vec<u8>>,
) -> Result<(), StampError> {
    for unit in units {
        let bytes = match unit {
            Unit::Line(line) => line,
            Unit::Document(decided) => {
                let (document, mut batch, gaps) = decided.recv().map_err(|_| {
                    io::Error::other("a deciding thread stopped before its document was decided")
                })?;
                placer.count_gaps(gaps);
                let placed = {
                    let mut engine = engine.write();
                    let (removed, _) = engine.expire(document.now, EXPIRY_BUDGET_PER_DOCUMENT);
                    placer.summary.expired_nodes += removed as u64;
                    engine.place_next(&mut batch, document.now)
                };
                let mut bytes = Vec::with_capacity(document.line.len() + 64);
                placer.write(*document, placed, &mut bytes)?;
                bytes
            }
        };
        if written.send(bytes).is_err() {
            // The reader stopped on a write error; it reports it.
            return Ok(());
        }
    }
    Ok(())
}
