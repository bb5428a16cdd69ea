//! `neardup stamp` on several threads: workers that each do every step,
//! with the stamps of placing the documents one by one.
//!
//! Motivation: fingerprinting and deciding a document is most of its cost
//! and parallel; reading, placing in order and writing are not. Run in
//! turns (read a batch, decide it on every thread, place it, write it),
//! the in-order part left the other cores idle: 1.4× one thread on two.
//! A pipeline with a thread per step (a reader and writer, N deciders, one
//! placer) overlapped them, but put four busy threads on two cores: every
//! hand-over woke a thread that took a core from a decider, and while the
//! placer held the engine's exclusive lock both deciders waited (1.5×,
//! docs/performance.md).
//!
//! Design: `threads` workers, each in a loop: take the next chunk of
//! [`LINES_PER_CHUNK`] lines from the input (under its lock, numbered in
//! input order); fingerprint its documents (no lock) and decide them under
//! the engine's shared lock ([`Engine::plan_batch`] of one), fingerprinting
//! the next one instead of waiting while the lock is held for writing; put
//! the chunk among those decided; then, if no other worker is placing,
//! place every chunk whose turn has come. Placing applies the decisions
//! in input order under one hold of the exclusive lock
//! ([`Engine::place_next`]: checked against what was placed since each
//! was decided, decided again if any of it could change the answer), then
//! stamps the lines and writes them. A worker that finds another placing
//! leaves the chunk to it: the placer looks again after letting go, so no
//! chunk is left behind. No thread waits for a hand-over: the serial steps
//! are done by whichever worker is free, and there are as many threads as
//! `threads`. A worker more than [`CHUNKS_AHEAD_PER_THREAD`] chunks per
//! thread ahead of the next to place waits, which bounds memory and how
//! stale a decision can be.
//!
//! Consequences: the answers and the output bytes are those of one thread
//! (tested in the parent module). Input, output and the progress callback
//! move between threads (`Send`). A bad line ends the input: what came
//! before it is placed and written, then its error is returned. A worker
//! that panics stops the others; the panic is raised when they are joined.

use std::collections::VecDeque;
use std::io::{BufRead, Write};

use parking_lot::{Condvar, Mutex, RwLock};

use super::options::StampError;
use super::placer::Placer;
use super::read::{LineReader, PROGRESS_EVERY_LINES, Pending, PendingDocument};
use crate::engine::batch::PlannedBatch;
use crate::engine::{Analysis, Analyzer, EXPIRY_BUDGET_PER_DOCUMENT, Engine};

/// Lines taken from the input at a time: each take locks the input, and a
/// placer finds whole chunks ready.
const LINES_PER_CHUNK: usize = 16;

/// How many chunks (per thread) a worker may be ahead of the next chunk
/// to place before it waits. Enough that a long text being decided does
/// not stop the others; few enough that most decisions are still valid
/// when placed (each document placed after one was decided is a change it
/// is checked against).
const CHUNKS_AHEAD_PER_THREAD: usize = 2;

/// Decisions applied under one hold of the exclusive lock at most: a hold
/// makes the workers' decisions wait.
const APPLIED_PER_HOLD: usize = 64;

/// Consecutive lines of the input.
type Chunk = Vec<Pending>;

/// A line once decided.
enum Decided<'analyzer> {
    Line(Vec<u8>),
    /// A document, its decision and the configured fields it held no text
    /// in.
    Document(Box<PendingDocument>, PlannedBatch, Vec<&'analyzer str>),
}

/// The input and where it stands.
struct Input<'run, 'options, R, P> {
    reader: &'run mut LineReader<'options, R>,
    on_progress: &'run mut P,
    /// The number of the next chunk taken.
    next_chunk: usize,
    /// Nothing more to take: the input ended, a line was invalid, or the
    /// run stopped.
    ended: bool,
    error: Option<StampError>,
}

/// Chunks decided, waiting for their turn.
struct Order<'analyzer> {
    /// The number of the next chunk to place; `waiting[i]` is chunk
    /// `next + i`, `None` while it is being decided.
    next: usize,
    waiting: VecDeque<Option<Vec<Decided<'analyzer>>>>,
    /// A worker failed (a write error, a panic): everyone stops.
    stopped: bool,
}

impl<'analyzer> Order<'analyzer> {
    fn put(&mut self, number: usize, chunk: Vec<Decided<'analyzer>>) {
        // Not placed yet, so not behind the next to place.
        let index = number - self.next;
        if self.waiting.len() <= index {
            self.waiting.resize_with(index + 1, || None);
        }
        self.waiting[index] = Some(chunk);
    }

    fn next_is_ready(&self) -> bool {
        matches!(self.waiting.front(), Some(Some(_)))
    }

    /// The chunks whose turn has come, up to about `lines` lines.
    fn take_ready(&mut self, lines: usize, into: &mut Vec<Decided<'analyzer>>) {
        while into.len() < lines && self.next_is_ready() {
            if let Some(Some(chunk)) = self.waiting.pop_front() {
                into.extend(chunk);
            }
            self.next += 1;
        }
    }
}

/// What the one worker placing at a time holds.
struct Output<'run, 'options, W> {
    placer: &'run mut Placer<'options>,
    output: &'run mut W,
    error: Option<StampError>,
}

/// What the workers share.
struct Shared<'run, 'options, 'analyzer, R, W, P> {
    engine: RwLock<&'run mut Engine>,
    analyzer: &'analyzer Analyzer,
    input: Mutex<Input<'run, 'options, R, P>>,
    order: Mutex<Order<'analyzer>>,
    /// Signalled when the next chunk to place moves on, or on a stop.
    turn: Condvar,
    output: Mutex<Output<'run, 'options, W>>,
    chunks_ahead: usize,
}

/// Runs the workers until the input ends or a line is invalid. Everything
/// read before the end is placed and written to `output`.
pub(super) fn stamp_on_threads<'run, 'options, R, W, P>(
    engine: &'run mut Engine,
    reader: &'run mut LineReader<'options, R>,
    output: &'run mut W,
    placer: &'run mut Placer<'options>,
    threads: usize,
    on_progress: &'run mut P,
) -> Result<(), StampError>
where
    R: BufRead + Send,
    W: Write + Send,
    P: FnMut(u64) + Send,
{
    let threads = threads.max(1);
    let analyzer = engine.analyzer().clone();
    let shared = Shared {
        engine: RwLock::new(engine),
        analyzer: &analyzer,
        input: Mutex::new(Input {
            reader,
            on_progress,
            next_chunk: 0,
            ended: false,
            error: None,
        }),
        order: Mutex::new(Order {
            next: 0,
            waiting: VecDeque::new(),
            stopped: false,
        }),
        turn: Condvar::new(),
        output: Mutex::new(Output {
            placer,
            output,
            error: None,
        }),
        chunks_ahead: CHUNKS_AHEAD_PER_THREAD * threads,
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| work(&shared)))
            .collect();
        for worker in workers {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    if let Some(error) = shared.input.into_inner().error {
        return Err(error);
    }
    match shared.output.into_inner().error {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

impl<R, W, P> Shared<'_, '_, '_, R, W, P> {
    /// Stops every worker: nothing more is read, decided or placed.
    fn stop(&self) {
        self.order.lock().stopped = true;
        self.input.lock().ended = true;
        self.turn.notify_all();
    }
}

/// Stops the other workers if this one panics.
struct StopOnPanic<'shared, 'run, 'options, 'analyzer, R, W, P>(
    &'shared Shared<'run, 'options, 'analyzer, R, W, P>,
);

impl<R, W, P> Drop for StopOnPanic<'_, '_, '_, '_, R, W, P> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// One worker: take a chunk, decide it, place what is ready; until the
/// input ends or the run stops.
fn work<R, W, P>(shared: &Shared<'_, '_, '_, R, W, P>)
where
    R: BufRead,
    W: Write,
    P: FnMut(u64),
{
    let _stop_on_panic = StopOnPanic(shared);
    while let Some((number, chunk)) = take_chunk(shared) {
        if !wait_for_turn(shared, number) {
            return;
        }
        let decided = decide_chunk(&shared.engine, shared.analyzer, chunk);
        shared.order.lock().put(number, decided);
        place_ready(shared);
    }
}

/// The next chunk of the input and its number; `None` once the input has
/// ended (or was stopped). A bad line ends the input after the lines
/// before it, which are returned.
fn take_chunk<R: BufRead, W, P: FnMut(u64)>(
    shared: &Shared<'_, '_, '_, R, W, P>,
) -> Option<(usize, Chunk)> {
    let mut input = shared.input.lock();
    if input.ended {
        return None;
    }
    let mut chunk = Vec::with_capacity(LINES_PER_CHUNK);
    while chunk.len() < LINES_PER_CHUNK {
        match input.reader.next_line() {
            Ok(Some(pending)) => chunk.push(pending),
            Ok(None) => {
                input.ended = true;
                break;
            }
            Err(error) => {
                input.ended = true;
                input.error = Some(error);
                break;
            }
        }
        if input
            .reader
            .summary
            .lines
            .is_multiple_of(PROGRESS_EVERY_LINES)
        {
            let bytes_read = input.reader.bytes_read;
            (input.on_progress)(bytes_read);
        }
    }
    if chunk.is_empty() {
        return None;
    }
    let number = input.next_chunk;
    input.next_chunk += 1;
    Some((number, chunk))
}

/// Waits while chunk `number` is too far ahead of the next to place;
/// `false` if the run stopped meanwhile.
fn wait_for_turn<R, W, P>(shared: &Shared<'_, '_, '_, R, W, P>, number: usize) -> bool {
    let mut order = shared.order.lock();
    while !order.stopped && number >= order.next + shared.chunks_ahead {
        shared.turn.wait(&mut order);
    }
    !order.stopped
}

/// A line of a chunk on its way: a document fingerprinted but not yet
/// decided, or a line that needs nothing.
// Nearly every line is a document: boxing its analysis would cost an
// allocation each, to save space on the few lines that are not.
#[allow(clippy::large_enum_variant)]
enum Undecided<'analyzer> {
    Line(Vec<u8>),
    Document(Box<PendingDocument>, Option<Analysis>, Vec<&'analyzer str>),
}

impl<'analyzer> Undecided<'analyzer> {
    fn decide(self, engine: &Engine) -> Decided<'analyzer> {
        match self {
            Undecided::Line(line) => Decided::Line(line),
            Undecided::Document(document, analysis, gaps) => {
                let batch = engine.plan_batch(vec![analysis], 1, |analysis| analysis);
                Decided::Document(document, batch, gaps)
            }
        }
    }
}

/// Decides the documents of `chunk`: each is fingerprinted without the
/// lock and decided under the shared one. What is fingerprinted is
/// decided whenever the lock is free; while a placer holds it, the worker
/// fingerprints the next document instead of waiting.
fn decide_chunk<'analyzer>(
    engine: &RwLock<&mut Engine>,
    analyzer: &'analyzer Analyzer,
    chunk: Chunk,
) -> Vec<Decided<'analyzer>> {
    let mut decided = Vec::with_capacity(chunk.len());
    let mut waiting = Vec::new();
    for pending in chunk {
        waiting.push(match pending {
            Pending::Line(line) => Undecided::Line(line),
            Pending::Document(document) => {
                #[cfg(test)]
                tests::panic_if_marked(&document.line);
                let (analysis, gaps) = match document.document() {
                    Some(source) => analyzer.analyze_document_noting_gaps(source),
                    None => (None, Vec::new()),
                };
                Undecided::Document(document, analysis, gaps)
            }
        });
        if let Some(engine) = engine.try_read() {
            decided.extend(waiting.drain(..).map(|undecided| undecided.decide(&engine)));
        }
    }
    if !waiting.is_empty() {
        let engine = engine.read();
        decided.extend(
            waiting
                .into_iter()
                .map(|undecided| undecided.decide(&engine)),
        );
    }
    decided
}

/// Places every chunk whose turn has come, unless another worker is
/// placing: that one looks again after letting go, so what this worker
/// added is placed either way.
fn place_ready<R, W: Write, P>(shared: &Shared<'_, '_, '_, R, W, P>) {
    let mut ready = Vec::with_capacity(APPLIED_PER_HOLD + LINES_PER_CHUNK);
    loop {
        let Some(mut output) = shared.output.try_lock() else {
            return;
        };
        loop {
            {
                let mut order = shared.order.lock();
                if order.stopped {
                    return;
                }
                order.take_ready(APPLIED_PER_HOLD, &mut ready);
            }
            if ready.is_empty() {
                break;
            }
            shared.turn.notify_all();
            if let Err(error) = place(&shared.engine, &mut output, &mut ready) {
                output.error = Some(error);
                shared.stop();
                return;
            }
        }
        drop(output);
        if !shared.order.lock().next_is_ready() {
            return;
        }
    }
}

/// Applies the decisions of `ready` in order under one hold of the
/// exclusive lock, then stamps and writes its lines.
fn place<W: Write>(
    engine: &RwLock<&mut Engine>,
    output: &mut Output<'_, '_, W>,
    ready: &mut Vec<Decided<'_>>,
) -> Result<(), StampError> {
    let mut placed = Vec::with_capacity(ready.len());
    if ready
        .iter()
        .any(|done| matches!(done, Decided::Document(..)))
    {
        let mut engine = engine.write();
        for done in ready.iter_mut() {
            if let Decided::Document(document, batch, _) = done {
                let (removed, _) = engine.expire(document.now, EXPIRY_BUDGET_PER_DOCUMENT);
                output.placer.summary.expired_nodes += removed as u64;
                placed.push(engine.place_next(batch, document.now));
                output.placer.summary.decisions_kept += batch.kept as u64;
                output.placer.summary.decisions_taken_again += batch.redecided as u64;
            }
        }
    }
    let mut placed_in_order = placed.into_iter();
    for done in ready.drain(..) {
        match done {
            Decided::Line(line) => output.output.write_all(&line)?,
            Decided::Document(document, _, gaps) => {
                output.placer.count_gaps(gaps);
                output
                    .placer
                    .write(*document, placed_in_order.next().flatten(), output.output)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    /// A document line holding this makes the worker deciding it panic
    /// (tests only): the one way to test what a panicking worker does,
    /// since no input may make one panic.
    pub(in super::super) const PANIC_MARKER: &str = "panic in a worker (test)";

    pub(super) fn panic_if_marked(line: &[u8]) {
        let marker = PANIC_MARKER.as_bytes();
        if line.windows(marker.len()).any(|window| window == marker) {
            panic!("{PANIC_MARKER}");
        }
    }
}
