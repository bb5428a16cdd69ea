//! Placing a batch of documents on several threads with the answers of
//! placing them one by one, in arrival order.
//!
//! Motivation: a placement is mostly reading (candidate searches and
//! confirmations) and a little writing (a node, its index entries). Done
//! one after the other under one lock, placement uses one core however many
//! the machine has; but the arrival order decides (SPEC §3: serialized
//! arrival), so documents cannot simply be placed at once.
//!
//! Design: optimistic, in two phases.
//!
//! 1. [`Engine::plan_batch`] decides every document of the batch against
//!    the engine as it is (`&self`, on `threads` threads; the sidecar holds
//!    a shared lock): a [`Plan`] per document, with its *footprint*, the
//!    parts of the state its decision read: the nodes within `k + 1` bits
//!    of its simhash (its own node is at most one bit away, its neighbours
//!    `k` from that), the keys it looked up in the short-text and long-text
//!    indices, its exact hash.
//! 2. [`Engine::place_next`] applies the plans in arrival order (`&mut
//!    self`). Before applying one it asks the engine what changed since the
//!    batch was decided ([`super::recent`]): the earlier documents of the
//!    batch, and whatever else was placed meanwhile. A new node within
//!    `k + 1` bits, a new index entry under one of its keys, a text with its
//!    exact hash: any of these could change the decision, so the document
//!    is decided again, on the state as it now is: exactly what placing it
//!    alone would have done. If none did, the plan stands: nothing it read
//!    has changed. The choice among several roots (rule 4, by leaf count)
//!    is taken at this step, on the counts as they are, so it needs no
//!    check. Anything else that changed the engine (expiry that removed a
//!    node, a take-back, an adoption, a replayed effect) is a barrier: every
//!    plan left is decided again: rare, and always correct.
//!
//! Consequences: the answers are those of serial placement, byte for byte
//! (a property test compares them on random batches, `tests/integration/engine_props.rs`),
//! whatever the number of threads. The second phase costs a scan of the
//! batch's new nodes per document plus the re-decisions; a batch whose
//! documents are copies of each other (a story arriving from many outlets
//! at once) is decided again almost whole, and costs what serial
//! placement costs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::plan::Plan;
use super::{Analysis, Engine, Placed};
use crate::units::Millis;

/// The plans of a batch, waiting to be applied in order
/// ([`Engine::place_next`]).
#[derive(Debug)]
pub struct PlannedBatch {
    /// `None`: an item without text.
    plans: VecDeque<Option<Plan>>,
    /// The engine's epoch when the plans were decided.
    decided_at: u64,
    /// Distance within which a new node may change a decision (`k + 1`).
    reach: u32,
    /// Plans applied as decided / decided again (for benches and stats).
    pub kept: usize,
    pub redecided: usize,
}

impl PlannedBatch {
    /// Items left to place.
    pub fn len(&self) -> usize {
        self.plans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }
}

impl Engine {
    /// Records the engine's changes from now on, so that decisions taken
    /// on an earlier state ([`Engine::plan_batch`]) can be checked rather
    /// than taken again. Call once, before planning; without it a batch's
    /// plans are all decided again but the first (correct, and slow).
    pub fn track_changes(&mut self) {
        self.recent.track();
    }

    /// Decides every item of `items` (in arrival order) against the engine
    /// as it is, on up to `threads` threads: `analyse` (run on those threads
    /// too) turns an item into its analysis, `None` for one without text.
    /// Apply the plans with [`Engine::place_next`], once per item, in order.
    pub fn plan_batch<T: Send>(
        &self,
        items: Vec<T>,
        threads: usize,
        analyse: impl Fn(T) -> Option<Analysis> + Sync,
    ) -> PlannedBatch {
        let plan_one = |item: T| analyse(item).map(|analysis| self.plan(analysis));
        let threads = threads.clamp(1, items.len().max(1));
        let planned: Vec<Option<Plan>> = if threads == 1 {
            items.into_iter().map(plan_one).collect()
        } else {
            // Items are taken one at a time by whichever thread is free: a
            // long text costs many times a short one, and fixed slices would
            // leave one thread waiting for the other.
            let slots: Vec<Mutex<Option<T>>> = items
                .into_iter()
                .map(|item| Mutex::new(Some(item)))
                .collect();
            let next = AtomicUsize::new(0);
            let (slots, next, plan_one) = (&slots, &next, &plan_one);
            let mut planned: Vec<(usize, Option<Plan>)> = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(move || {
                            let mut done = Vec::new();
                            loop {
                                let index = next.fetch_add(1, Ordering::Relaxed);
                                let Some(slot) = slots.get(index) else {
                                    return done;
                                };
                                let item = slot.lock().take();
                                done.push((index, item.and_then(plan_one)));
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|worker| match worker.join() {
                        Ok(done) => done,
                        Err(panic) => std::panic::resume_unwind(panic),
                    })
                    .collect()
            });
            planned.sort_unstable_by_key(|&(index, _)| index);
            planned.into_iter().map(|(_, plan)| plan).collect()
        };
        PlannedBatch {
            plans: planned.into(),
            decided_at: self.recent.epoch(),
            reach: self.forest.max_distance() + 1,
            kept: 0,
            redecided: 0,
        }
    }

    /// [`Engine::plan_batch`] of JSON documents: each fingerprinted by the
    /// engine's own analyzer.
    pub fn plan_documents(
        &self,
        documents: Vec<&serde_json::Value>,
        threads: usize,
    ) -> PlannedBatch {
        let analyzer = &self.analyzer;
        self.plan_batch(documents, threads, |document| {
            analyzer.analyze_document(document)
        })
    }

    /// Places the next item of `batch` at `now`, with the answer placing
    /// it alone would give; `None` for an item without text (or when the
    /// batch is done: [`PlannedBatch::is_empty`]).
    pub fn place_next(&mut self, batch: &mut PlannedBatch, now: Millis) -> Option<Placed> {
        let plan = batch.plans.pop_front()??;
        if self
            .recent
            .unchanged_since(batch.decided_at, &plan.footprint, batch.reach)
        {
            batch.kept += 1;
            Some(self.apply(plan, now))
        } else {
            batch.redecided += 1;
            // Plans of a batch always keep their analysis.
            let analysis = plan.into_analysis()?;
            Some(self.place(analysis, now))
        }
    }
}
