//! A backfill page's decisions: its hits read into entries, placed (the
//! history frame for documents older than the window, the live forest for
//! the others, stamped documents where their stamps say), the live
//! placements logged before any stamp is sent, and settled from what the
//! cluster did with the stamps.

use std::cmp::Ordering as CmpOrdering;
use std::sync::Arc;

use anyhow::Context;
use serde_json::Value;

use super::checkpoint::{Checkpoint, Counts};
use super::settings::{JobConfig, LiveForest};
use crate::bulk::stamping::{class_of_its_own, is_class_of_its_own};
use crate::engine::{Analysis, EXPIRY_BUDGET_PER_DOCUMENT, Engine};
use crate::fingerprint::values_at;
use crate::forest::Placement;
use crate::ledger::DocumentKey;
use crate::units::parse_fingerprint;
use crate::units::{Fingerprint, Millis, parse_time};
use crate::upstream::scan::compare_keys;

/// One hit, read.
pub(super) struct Entry {
    pub(super) key: Vec<Value>,
    pub(super) index: String,
    pub(super) id: String,
    pub(super) seq_no: Option<u64>,
    pub(super) primary_term: Option<u64>,
    pub(super) routing: Option<String>,
    pub(super) time: Millis,
    pub(super) in_history: bool,
    /// `(own fingerprint, root)` when the document already carries both.
    pub(super) stamps: Option<(Fingerprint, Fingerprint)>,
    /// It already carries a class of its own (no text to fingerprint).
    pub(super) alone: bool,
    /// At or before the resume point: only warms the history frame up.
    pub(super) warm: bool,
    pub(super) source: Value,
}

pub(super) fn read_entries(
    hits: &[Value],
    config: &JobConfig,
    checkpoint: &Checkpoint,
    resume_key: Option<&[Value]>,
    started: Millis,
) -> Vec<Entry> {
    let mut entries = Vec::with_capacity(hits.len());
    for hit in hits {
        let (Some(index), Some(id)) = (
            hit.get("_index").and_then(Value::as_str),
            hit.get("_id").and_then(Value::as_str),
        ) else {
            continue;
        };
        let key = hit
            .get("sort")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let source = hit.get("_source").cloned().unwrap_or(Value::Null);
        let stamps =
            stamp_of(&source, &config.simhash_field).zip(stamp_of(&source, &config.root_field));
        let alone = values_at(&source, &config.root_field)
            .into_iter()
            .any(|value| value.as_str().is_some_and(is_class_of_its_own));
        let time = config
            .time_field
            .as_deref()
            .and_then(|field| values_at(&source, field).into_iter().find_map(parse_time))
            .unwrap_or(started);
        let warm =
            resume_key.is_some_and(|resume| compare_keys(&key, resume) != CmpOrdering::Greater);
        entries.push(Entry {
            index: index.to_string(),
            id: id.to_string(),
            seq_no: hit.get("_seq_no").and_then(Value::as_u64),
            primary_term: hit.get("_primary_term").and_then(Value::as_u64),
            routing: hit
                .get("_routing")
                .and_then(Value::as_str)
                .map(str::to_string),
            in_history: checkpoint
                .history_before
                .is_some_and(|before| time < before),
            time,
            stamps,
            alone,
            warm,
            key,
            source,
        });
    }
    entries
}

/// A stamp to write.
pub(super) struct Planned {
    pub(super) entry: usize,
    pub(super) fingerprint: Fingerprint,
    pub(super) root: Fingerprint,
    /// Placed in the live forest (settled from the answer), else history.
    pub(super) live: bool,
    /// No text to fingerprint: this class of its own is stamped instead
    /// (no `simhash`), placed nowhere.
    pub(super) own_class: Option<String>,
}

/// What the cluster did with one stamp.
pub(super) enum Outcome {
    Stamped,
    Conflict,
    Error,
}

/// A page placed and logged, its stamps not yet written.
pub(super) struct Prepared {
    pub(super) entries: Vec<Entry>,
    pub(super) planned: Vec<Planned>,
    /// What the page counted so far (seen, already stamped, no text).
    pub(super) counts: Counts,
}

/// Analyses the page (in parallel slices), places it, and logs the live
/// placements (write-ahead: every stamp sent names a class the durable
/// state knows).
pub(super) async fn prepare_page(
    live: &Arc<dyn LiveForest>,
    history: &mut Option<Engine>,
    entries: Vec<Entry>,
    history_before: Option<Millis>,
) -> anyhow::Result<Prepared> {
    let Some(engine) = history.take() else {
        anyhow::bail!("the history forest was lost after an earlier failure");
    };
    let entries = Arc::new(entries);
    let workers = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    let slice_len = entries.len().div_ceil(workers).max(16);
    let mut handles = Vec::new();
    for first in (0..entries.len()).step_by(slice_len) {
        let last = (first + slice_len).min(entries.len());
        let (live, entries) = (live.clone(), entries.clone());
        handles.push(tokio::task::spawn_blocking(move || {
            entries[first..last]
                .iter()
                .map(|entry| {
                    // Warm-up documents without stamps are not used.
                    (!(entry.warm && entry.stamps.is_none()))
                        .then(|| live.analyzer(&entry.index).analyze_document(&entry.source))
                        .flatten()
                })
                .collect::<Vec<_>>()
        }));
    }
    let mut analyses = Vec::with_capacity(entries.len());
    for handle in handles {
        analyses.extend(handle.await.context("backfill analysis")?);
    }
    let decider = live.clone();
    let decided = tokio::task::spawn_blocking(move || {
        let mut engine = engine;
        let mut counts = Counts::default();
        let (planned, seq) = decide(
            decider.as_ref(),
            &mut engine,
            history_before,
            &entries,
            analyses,
            &mut counts,
        );
        (engine, entries, planned, seq, counts)
    })
    .await
    .context("backfill worker")?;
    let (engine, entries, planned, seq, counts) = decided;
    *history = Some(engine);
    let entries = Arc::try_unwrap(entries).map_err(|_| anyhow::anyhow!("page still shared"))?;
    if let Err(error) = persist(live, seq).await {
        settle(live, &entries, &planned, None).await;
        anyhow::bail!("the sidecar cannot write its state, the page was not stamped: {error}");
    }
    Ok(Prepared {
        entries,
        planned,
        counts,
    })
}

async fn persist(live: &Arc<dyn LiveForest>, seq: u64) -> anyhow::Result<()> {
    let live = live.clone();
    tokio::task::spawn_blocking(move || live.persist(seq)).await??;
    Ok(())
}

/// Places the page: history documents in the history frame, the others in
/// the live forest (one lock for the page), stamped ones where their stamps
/// say. Blocking (analysis and placement are CPU work).
fn decide(
    live: &dyn LiveForest,
    history: &mut Engine,
    history_before: Option<Millis>,
    entries: &[Entry],
    analyses: Vec<Option<Analysis>>,
    counts: &mut Counts,
) -> (Vec<Planned>, u64) {
    enum LiveOp {
        Adopt(usize, Option<Analysis>, Fingerprint, Fingerprint),
        /// Place; first carry the history class the document continues.
        Place(usize, Analysis, Option<Fingerprint>),
    }
    let mut planned = Vec::new();
    let mut live_ops = Vec::new();
    for ((position, entry), analysis) in entries.iter().enumerate().zip(analyses) {
        if entry.warm && entry.stamps.is_none() {
            continue;
        }
        if entry.warm {
            if let Some((fingerprint, root)) = entry.stamps {
                history.expire(entry.time, EXPIRY_BUDGET_PER_DOCUMENT);
                history.adopt(analysis, fingerprint, root, entry.time);
            }
            continue;
        }
        counts.seen += 1;
        if entry.alone && entry.stamps.is_none() {
            counts.already_stamped += 1;
            continue;
        }
        match (entry.stamps, analysis) {
            (Some((fingerprint, root)), analysis) => {
                counts.already_stamped += 1;
                // The history frame follows every backfilled document, as
                // `stamp --time-field` would; the live forest only the window.
                history.expire(entry.time, EXPIRY_BUDGET_PER_DOCUMENT);
                history.adopt(analysis.clone(), fingerprint, root, entry.time);
                if !entry.in_history {
                    live_ops.push(LiveOp::Adopt(position, analysis, fingerprint, root));
                }
            }
            (None, None) => planned.push(Planned {
                entry: position,
                fingerprint: 0,
                root: 0,
                live: false,
                own_class: Some(class_of_its_own()),
            }),
            (None, Some(analysis)) if entry.in_history => {
                history.expire(entry.time, EXPIRY_BUDGET_PER_DOCUMENT);
                let placed = history.place(analysis, entry.time);
                planned.push(Planned {
                    entry: position,
                    fingerprint: placed.fingerprint,
                    root: placed.root,
                    live: false,
                    own_class: None,
                });
            }
            (None, Some(analysis)) => {
                history.expire(entry.time, EXPIRY_BUDGET_PER_DOCUMENT);
                let continued = history.place(analysis.clone(), entry.time);
                // A story that began before the window: its class is expired
                // in the live forest (as of now) but alive at this time.
                let carry = (continued.placement != Placement::NewRoot
                    && history
                        .forest()
                        .node(continued.root)
                        .zip(history_before)
                        .is_some_and(|(root, before)| root.born < before))
                .then_some(continued.root);
                live_ops.push(LiveOp::Place(position, analysis, carry));
            }
        }
    }
    let history: &Engine = history;
    let mut live_ops = Some(live_ops);
    let seq = live.change(&mut |ledger| {
        for op in live_ops.take().unwrap_or_default() {
            match op {
                LiveOp::Adopt(position, analysis, fingerprint, root) => {
                    let entry = &entries[position];
                    let key = DocumentKey::new(&entry.index, &entry.id);
                    ledger.adopt(key, analysis, fingerprint, root, entry.time);
                }
                LiveOp::Place(position, analysis, carry) => {
                    if let Some(root) = carry
                        && ledger.engine().forest().within(root).is_empty()
                    {
                        ledger.carry_class(history, root);
                    }
                    let placed = ledger.place(analysis, entries[position].time);
                    planned.push(Planned {
                        entry: position,
                        fingerprint: placed.fingerprint,
                        root: placed.root,
                        live: true,
                        own_class: None,
                    });
                }
            }
        }
    });
    planned.sort_by_key(|planned| planned.entry);
    (planned, seq)
}

/// Settles the live placements: stored where the update was accepted,
/// taken back otherwise (`outcomes` `None`: nothing was sent).
pub(super) async fn settle(
    live: &Arc<dyn LiveForest>,
    entries: &[Entry],
    planned: &[Planned],
    outcomes: Option<&[Outcome]>,
) {
    let mut stored = Vec::new();
    let mut not_stored = Vec::new();
    for (position, planned) in planned.iter().enumerate().filter(|(_, p)| p.live) {
        let entry = &entries[planned.entry];
        match outcomes.and_then(|outcomes| outcomes.get(position)) {
            Some(Outcome::Stamped) => stored.push((
                DocumentKey::new(&entry.index, &entry.id),
                planned.fingerprint,
            )),
            _ => not_stored.push(planned.fingerprint),
        }
    }
    if stored.is_empty() && not_stored.is_empty() {
        return;
    }
    let settler = live.clone();
    let seq = tokio::task::spawn_blocking(move || {
        settler.change(&mut |ledger| {
            for (key, fingerprint) in stored.drain(..) {
                ledger.stored(key, fingerprint);
            }
            for fingerprint in not_stored.drain(..) {
                ledger.not_stored(fingerprint);
            }
        })
    })
    .await;
    if let Ok(seq) = seq
        && let Err(error) = persist(live, seq).await
    {
        tracing::error!(%error, "backfill outcome not logged; counts may drift after a restart");
    }
}

/// The fingerprint stamped in `field` of `source`, if any.
pub(super) fn stamp_of(source: &Value, field: &str) -> Option<Fingerprint> {
    values_at(source, field)
        .into_iter()
        .find_map(|value| value.as_str().and_then(parse_fingerprint))
}
