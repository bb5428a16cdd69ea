//! One backfill job: read a page, decide, log, stamp, settle, checkpoint.
//! See the module documentation of [`crate::backfill`] for the why.

use std::cmp::Ordering as CmpOrdering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use parking_lot::Mutex;
use serde_json::{Map, Value, json};

use super::checkpoint::{self, Checkpoint, Counts};
use super::reader::{Reader, request_json};
use super::{EngineFactory, JobState, LiveForest, Progress};
use crate::engine::{Analysis, EXPIRY_BUDGET_PER_DOCUMENT, Engine};
use crate::fingerprint::values_at;
use crate::forest::Placement;
use crate::ledger::DocumentKey;
use crate::units::{
    Fingerprint, Millis, format_fingerprint, now_millis, parse_fingerprint, parse_time,
};
use crate::upstream::Upstream;

/// Sends of one page's updates before the items still refused with 429 or
/// 5xx count as errors.
const MAX_SEND_ATTEMPTS: u32 = 5;

/// A job as the controller configured it.
#[derive(Debug, Clone)]
pub struct JobConfig {
    pub index: String,
    pub time_field: Option<String>,
    pub tiebreak_field: String,
    pub root_field: String,
    pub simhash_field: String,
    pub max_docs_per_second: Option<f64>,
    pub page_size: usize,
    /// Sent with every request to the cluster (the caller's credentials).
    pub headers: HeaderMap,
    pub state_dir: Option<PathBuf>,
    /// Ignore an existing checkpoint.
    pub restart: bool,
}

/// Runs the job to its end, its cancellation, or an error. The checkpoint
/// is saved after every page, so an error or a crash loses at most the page
/// in flight (whose documents come back as already stamped).
///
/// # Errors
///
/// The cluster refusing the read, unreachable, or the state unwritable.
pub async fn run(
    live: Arc<dyn LiveForest>,
    history_engine: EngineFactory,
    config: JobConfig,
    progress: Arc<Mutex<Progress>>,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<JobState> {
    let started = now_millis();
    let retention = live.retention();
    let previous = if config.restart {
        None
    } else {
        config.state_dir.as_deref().and_then(checkpoint::load)
    };
    let mut checkpoint = match previous {
        Some(previous)
            if !previous.finished
                && previous.same_job(
                    &config.index,
                    config.time_field.as_deref(),
                    &config.tiebreak_field,
                ) =>
        {
            tracing::info!(index = %config.index, seen = previous.counts.seen, "backfill resumes from its checkpoint");
            previous
        }
        _ => Checkpoint {
            index: config.index.clone(),
            time_field: config.time_field.clone(),
            tiebreak_field: config.tiebreak_field.clone(),
            history_before: config
                .time_field
                .as_ref()
                .and(retention)
                .map(|retention| started.saturating_sub(retention)),
            after: None,
            after_time: None,
            counts: Counts::default(),
            finished: false,
            started,
        },
    };
    progress.lock().counts = checkpoint.counts;
    let mut history = Some(history_engine().context("cannot build the history forest")?);
    let resume_key = checkpoint.after.clone();
    let start = start_position(&checkpoint, retention);
    let page_size = match config.max_docs_per_second {
        Some(rate) => config.page_size.min(rate.ceil().max(1.0) as usize),
        None => config.page_size,
    };
    let mut reader = Reader::open(live.upstream(), &config, start, page_size).await?;
    progress.lock().reader = Some(reader.name());
    let run_started = Instant::now();
    let mut run_seen = 0u64;
    // One page's stamps go out while the next page is read and placed.
    let mut in_flight: Option<InFlight> = None;
    // Settles and checkpoints the page in flight: before every exit and
    // before the next page's stamps go out.
    macro_rules! complete_in_flight {
        () => {
            complete(
                &mut in_flight,
                &mut checkpoint,
                &config,
                &progress,
                &mut run_seen,
            )
            .await
        };
    }
    let outcome = loop {
        if cancel.load(Ordering::Acquire) {
            let completed = complete_in_flight!();
            break completed.map(|()| JobState::Cancelled);
        }
        let page = match reader.next_page(live.upstream(), &config.headers).await {
            Ok(page) => page,
            Err(error) => {
                let _ = complete_in_flight!();
                break Err(error);
            }
        };
        if let Some(total) = page.total {
            progress.lock().total = Some(total);
        }
        if page.hits.is_empty() {
            if let Err(error) = complete_in_flight!() {
                break Err(error);
            }
            checkpoint.finished = true;
            if let Err(error) = save_checkpoint(config.state_dir.as_deref(), &checkpoint).await {
                break Err(error);
            }
            break Ok(JobState::Done);
        }
        let entries = read_entries(
            &page.hits,
            &config,
            &checkpoint,
            resume_key.as_deref(),
            started,
        );
        let prepared =
            match prepare_page(&live, &mut history, entries, checkpoint.history_before).await {
                Ok(prepared) => prepared,
                Err(error) => {
                    let _ = complete_in_flight!();
                    break Err(error);
                }
            };
        // The previous page is settled and checkpointed before this one's
        // stamps go out: the checkpoint moves in order.
        if let Err(error) = complete_in_flight!() {
            settle(&live, &prepared.entries, &prepared.planned, None).await;
            break Err(error);
        }
        in_flight = Some(tokio::spawn(stamp_page(
            live.clone(),
            config.clone(),
            prepared,
        )));
        if let Some(rate) = config.max_docs_per_second {
            let due = Duration::from_secs_f64(run_seen as f64 / rate);
            if let Some(wait) = due.checked_sub(run_started.elapsed()) {
                sleep_unless_cancelled(wait, &cancel).await;
            }
        }
    };
    reader.close(live.upstream(), &config.headers).await;
    progress.lock().counts = checkpoint.counts;
    outcome
}

/// A page whose stamps are being written.
type InFlight = tokio::task::JoinHandle<anyhow::Result<PageDone>>;

/// Waits for the page in flight, if any; moves the checkpoint (counts and
/// key) past it, saves it, and shows it.
async fn complete(
    in_flight: &mut Option<InFlight>,
    checkpoint: &mut Checkpoint,
    config: &JobConfig,
    progress: &Mutex<Progress>,
    run_seen: &mut u64,
) -> anyhow::Result<()> {
    let Some(handle) = in_flight.take() else {
        return Ok(());
    };
    let done = handle.await.context("backfill stamp writer")??;
    checkpoint.counts.add(&done.counts);
    if let Some((key, time)) = done.last
        && checkpoint
            .after
            .as_deref()
            .is_none_or(|after| compare_keys(&key, after) == CmpOrdering::Greater)
    {
        checkpoint.after = Some(key);
        checkpoint.after_time = Some(time);
    }
    save_checkpoint(config.state_dir.as_deref(), checkpoint).await?;
    *run_seen += done.counts.seen;
    let mut progress = progress.lock();
    progress.counts = checkpoint.counts;
    progress.run_seen = *run_seen;
    Ok(())
}

async fn sleep_unless_cancelled(wait: Duration, cancel: &AtomicBool) {
    let until = Instant::now() + wait;
    while !cancel.load(Ordering::Acquire) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        tokio::time::sleep(left.min(Duration::from_millis(100))).await;
    }
}

async fn save_checkpoint(dir: Option<&Path>, checkpoint: &Checkpoint) -> anyhow::Result<()> {
    let Some(dir) = dir else {
        return Ok(());
    };
    let dir = dir.to_path_buf();
    let checkpoint = checkpoint.clone();
    tokio::task::spawn_blocking(move || checkpoint::save(&dir, &checkpoint))
        .await
        .context("checkpoint writer")?
        .context("cannot write the backfill checkpoint")?;
    Ok(())
}

/// Where reading starts.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Start {
    Beginning,
    /// Right after this sort key.
    After(Vec<Value>),
    /// At documents whose time field is at least this (raw, as sorted): a
    /// resume warms the history frame up from one retention before the
    /// checkpoint (the live window needs it too, to carry classes over).
    From(Value),
}

fn start_position(checkpoint: &Checkpoint, retention: Option<Millis>) -> Start {
    let Some(after) = &checkpoint.after else {
        return Start::Beginning;
    };
    if checkpoint.history_before.is_none() {
        // No history frame to warm up; the live forest is durable.
        return Start::After(after.clone());
    }
    let (Some(retention), Some(raw)) = (retention, after.first().and_then(Value::as_f64)) else {
        return Start::Beginning;
    };
    // Numbers below 10^11 are epoch seconds (see `parse_time`).
    let back = if raw.abs() < 1e11 {
        retention as f64 / 1000.0
    } else {
        retention as f64
    };
    Start::From(json!((raw - back).floor() as i64))
}

/// One hit, read.
struct Entry {
    key: Vec<Value>,
    index: String,
    id: String,
    seq_no: Option<u64>,
    primary_term: Option<u64>,
    routing: Option<String>,
    time: Millis,
    in_history: bool,
    /// `(own fingerprint, root)` when the document already carries both.
    stamps: Option<(Fingerprint, Fingerprint)>,
    /// At or before the resume point: only warms the history frame up.
    warm: bool,
    source: Value,
}

fn read_entries(
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
            warm,
            key,
            source,
        });
    }
    entries
}

/// Sort keys compared as the cluster sorts them: numbers by value, strings
/// by their bytes, element by element.
pub(super) fn compare_keys(left: &[Value], right: &[Value]) -> CmpOrdering {
    for (a, b) in left.iter().zip(right) {
        let order = match (a, b) {
            (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => a
                    .as_f64()
                    .partial_cmp(&b.as_f64())
                    .unwrap_or(CmpOrdering::Equal),
            },
            (Value::String(a), Value::String(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Value::Null, Value::Null) => CmpOrdering::Equal,
            (Value::Null, _) => CmpOrdering::Greater,
            (_, Value::Null) => CmpOrdering::Less,
            _ => a.to_string().cmp(&b.to_string()),
        };
        if order != CmpOrdering::Equal {
            return order;
        }
    }
    left.len().cmp(&right.len())
}

/// A stamp to write.
struct Planned {
    entry: usize,
    fingerprint: Fingerprint,
    root: Fingerprint,
    /// Placed in the live forest (settled from the answer), else history.
    live: bool,
}

enum Outcome {
    Stamped,
    Conflict,
    Error,
}

/// A page placed and logged, its stamps not yet written.
struct Prepared {
    entries: Vec<Entry>,
    planned: Vec<Planned>,
    /// What the page counted so far (seen, already stamped, no text).
    counts: Counts,
}

/// A page whose stamps were written and settled.
struct PageDone {
    counts: Counts,
    /// Sort key and time of its last document.
    last: Option<(Vec<Value>, Millis)>,
}

/// Analyses the page (in parallel slices), places it, and logs the live
/// placements (write-ahead: every stamp sent names a class the durable
/// state knows).
async fn prepare_page(
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

/// Writes a prepared page's stamps and settles its live placements.
async fn stamp_page(
    live: Arc<dyn LiveForest>,
    config: JobConfig,
    prepared: Prepared,
) -> anyhow::Result<PageDone> {
    let Prepared {
        entries,
        planned,
        mut counts,
    } = prepared;
    let outcomes = match send_stamps(live.upstream(), &config, &entries, &planned).await {
        Ok(outcomes) => outcomes,
        Err(error) => {
            settle(&live, &entries, &planned, None).await;
            return Err(error);
        }
    };
    for (planned, outcome) in planned.iter().zip(&outcomes) {
        match outcome {
            Outcome::Stamped => {
                counts.stamped += 1;
                if !planned.live {
                    counts.stamped_history += 1;
                }
            }
            Outcome::Conflict => counts.skipped_conflict += 1,
            Outcome::Error => counts.skipped_error += 1,
        }
    }
    settle(&live, &entries, &planned, Some(&outcomes)).await;
    Ok(PageDone {
        counts,
        last: entries.last().map(|entry| (entry.key.clone(), entry.time)),
    })
}

async fn persist(live: &Arc<dyn LiveForest>, seq: u64) -> Result<(), String> {
    let live = live.clone();
    tokio::task::spawn_blocking(move || live.persist(seq))
        .await
        .map_err(|error| error.to_string())?
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
            (None, None) => counts.skipped_no_text += 1,
            (None, Some(analysis)) if entry.in_history => {
                history.expire(entry.time, EXPIRY_BUDGET_PER_DOCUMENT);
                let placed = history.place(analysis, entry.time);
                planned.push(Planned {
                    entry: position,
                    fingerprint: placed.fingerprint,
                    root: placed.root,
                    live: false,
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
async fn settle(
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

/// Writes the stamps with bulk `update` guarded by `if_seq_no`, retrying
/// items the cluster pushed back (429, 5xx). One outcome per planned stamp.
async fn send_stamps(
    upstream: &Upstream,
    config: &JobConfig,
    entries: &[Entry],
    planned: &[Planned],
) -> anyhow::Result<Vec<Outcome>> {
    let mut outcomes: Vec<Option<Outcome>> = planned.iter().map(|_| None).collect();
    let mut waiting: Vec<usize> = (0..planned.len()).collect();
    let mut headers = config.headers.clone();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    for attempt in 1..=MAX_SEND_ATTEMPTS {
        if waiting.is_empty() {
            break;
        }
        let mut body = String::new();
        for &position in &waiting {
            let stamp = &planned[position];
            let entry = &entries[stamp.entry];
            body.push_str(&update_action(entry).to_string());
            body.push('\n');
            let mut doc = Map::new();
            doc.insert(
                config.root_field.clone(),
                Value::from(format_fingerprint(stamp.root)),
            );
            doc.insert(
                config.simhash_field.clone(),
                Value::from(format_fingerprint(stamp.fingerprint)),
            );
            body.push_str(&json!({ "doc": doc }).to_string());
            body.push('\n');
        }
        let answer = request_json(upstream, Method::POST, "/_bulk", &headers, body).await;
        let items = match &answer {
            Ok((status, value)) if *status == StatusCode::OK => value
                .get("items")
                .and_then(Value::as_array)
                .filter(|items| items.len() == waiting.len())
                .cloned(),
            _ => None,
        };
        let Some(items) = items else {
            if attempt == MAX_SEND_ATTEMPTS {
                let reason = match answer {
                    Ok((status, value)) => format!("status {status}: {value}"),
                    Err(error) => format!("{error:#}"),
                };
                anyhow::bail!("the cluster did not take the stamps: {reason}");
            }
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
            continue;
        };
        let mut retry = Vec::new();
        for (&position, item) in waiting.iter().zip(&items) {
            let status = item
                .get("update")
                .and_then(|inner| inner.get("status"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            outcomes[position] = match status {
                200..=299 => Some(Outcome::Stamped),
                409 => Some(Outcome::Conflict),
                429 | 500.. if attempt < MAX_SEND_ATTEMPTS => {
                    retry.push(position);
                    None
                }
                _ => {
                    tracing::warn!(%item, "the cluster refused a backfill stamp");
                    Some(Outcome::Error)
                }
            };
        }
        waiting = retry;
        if !waiting.is_empty() {
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
        }
    }
    let mut outcomes: Vec<Outcome> = outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap_or(Outcome::Error))
        .collect();
    confirm_conflicts(upstream, config, entries, planned, &mut outcomes).await;
    Ok(outcomes)
}

/// A 409 means the document changed since it was read: a client rewrote
/// it, or an earlier attempt of this very update went through although its
/// answer was lost (a timeout, then the retry). Reads the conflicting
/// documents back: one that is the source read plus exactly the planned
/// stamps was stamped by this job.
async fn confirm_conflicts(
    upstream: &Upstream,
    config: &JobConfig,
    entries: &[Entry],
    planned: &[Planned],
    outcomes: &mut [Outcome],
) {
    let conflicted: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, outcome)| matches!(outcome, Outcome::Conflict))
        .map(|(position, _)| position)
        .collect();
    if conflicted.is_empty() {
        return;
    }
    let documents: Vec<Value> = conflicted
        .iter()
        .map(|&position| {
            let entry = &entries[planned[position].entry];
            let mut document = json!({"_index": entry.index, "_id": entry.id});
            if let Some(routing) = &entry.routing {
                document["routing"] = Value::from(routing.as_str());
            }
            document
        })
        .collect();
    let mut headers = config.headers.clone();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = json!({ "docs": documents }).to_string();
    let Ok((status, answer)) = request_json(upstream, Method::POST, "/_mget", &headers, body).await
    else {
        return;
    };
    let Some(found) = answer
        .get("docs")
        .and_then(Value::as_array)
        .filter(|found| status.is_success() && found.len() == conflicted.len())
    else {
        return;
    };
    for (&position, document) in conflicted.iter().zip(found) {
        let source = &document["_source"];
        let stamp = &planned[position];
        let read = &entries[stamp.entry].source;
        let ours = stamp_of(source, &config.simhash_field) == Some(stamp.fingerprint)
            && stamp_of(source, &config.root_field) == Some(stamp.root)
            && without_stamps(source, config) == without_stamps(read, config);
        if ours {
            outcomes[position] = Outcome::Stamped;
        }
    }
}

/// A source without the two stamped (top-level) fields.
fn without_stamps(source: &Value, config: &JobConfig) -> Value {
    let mut source = source.clone();
    if let Value::Object(object) = &mut source {
        object.remove(&config.root_field);
        object.remove(&config.simhash_field);
    }
    source
}

/// The fingerprint stamped in `field` of `source`, if any.
fn stamp_of(source: &Value, field: &str) -> Option<Fingerprint> {
    values_at(source, field)
        .into_iter()
        .find_map(|value| value.as_str().and_then(parse_fingerprint))
}

fn update_action(entry: &Entry) -> Value {
    let mut meta = Map::new();
    meta.insert("_index".into(), Value::from(entry.index.as_str()));
    meta.insert("_id".into(), Value::from(entry.id.as_str()));
    if let (Some(seq_no), Some(primary_term)) = (entry.seq_no, entry.primary_term) {
        meta.insert("if_seq_no".into(), Value::from(seq_no));
        meta.insert("if_primary_term".into(), Value::from(primary_term));
    }
    if let Some(routing) = &entry.routing {
        meta.insert("routing".into(), Value::from(routing.as_str()));
    }
    json!({ "update": meta })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(after: Option<Vec<Value>>, after_time: Option<Millis>) -> Checkpoint {
        Checkpoint {
            index: "news".into(),
            time_field: Some("t".into()),
            tiebreak_field: "_id".into(),
            history_before: Some(1_000_000_000_000),
            after,
            after_time,
            counts: Counts::default(),
            finished: false,
            started: 0,
        }
    }

    #[test]
    fn keys_compare_as_the_cluster_sorts() {
        let key = |time: i64, id: &str| vec![json!(time), json!(id)];
        assert_eq!(compare_keys(&key(1, "b"), &key(2, "a")), CmpOrdering::Less);
        assert_eq!(compare_keys(&key(2, "a"), &key(2, "b")), CmpOrdering::Less);
        assert_eq!(compare_keys(&key(2, "b"), &key(2, "b")), CmpOrdering::Equal);
        assert_eq!(
            compare_keys(&key(i64::MAX, "a"), &key(5, "z")),
            CmpOrdering::Greater
        );
        // Ids compare by bytes: "10" sorts before "9".
        assert_eq!(compare_keys(&key(1, "10"), &key(1, "9")), CmpOrdering::Less);
    }

    #[test]
    fn a_fresh_job_starts_at_the_beginning() {
        assert_eq!(
            start_position(&checkpoint(None, None), Some(10)),
            Start::Beginning
        );
    }

    #[test]
    fn a_resume_without_a_history_frame_continues_right_after_its_key() {
        let key = vec![json!(1_000_000_000_500i64), json!("x")];
        let mut without_time = checkpoint(Some(key.clone()), Some(1_000_000_000_500));
        without_time.history_before = None;
        assert_eq!(start_position(&without_time, Some(100)), Start::After(key));
    }

    #[test]
    fn a_resume_warms_the_history_frame_up_from_one_retention_before() {
        let millis = vec![json!(900_000_000_000i64), json!("x")];
        let start = start_position(
            &checkpoint(Some(millis), Some(900_000_000_000)),
            Some(1_000),
        );
        assert_eq!(start, Start::From(json!(899_999_999_000i64)));
        // A field in epoch seconds goes back in seconds.
        let seconds = vec![json!(900_000_000i64), json!("x")];
        let start = start_position(
            &checkpoint(Some(seconds), Some(900_000_000_000)),
            Some(5_000),
        );
        assert_eq!(start, Start::From(json!(899_999_995i64)));
        // A time the sidecar cannot do arithmetic on: from the beginning.
        let text = vec![json!("2020-01-01"), json!("x")];
        let start = start_position(&checkpoint(Some(text), Some(900_000_000_000)), Some(5_000));
        assert_eq!(start, Start::Beginning);
    }

    #[test]
    fn updates_are_guarded_by_the_sequence_number_read() {
        let entry = Entry {
            key: vec![],
            index: "news".into(),
            id: "7".into(),
            seq_no: Some(12),
            primary_term: Some(3),
            routing: Some("r".into()),
            time: 0,
            in_history: false,
            stamps: None,
            warm: false,
            source: Value::Null,
        };
        assert_eq!(
            update_action(&entry),
            json!({"update": {"_index": "news", "_id": "7", "if_seq_no": 12, "if_primary_term": 3, "routing": "r"}})
        );
    }
}
