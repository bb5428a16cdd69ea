//! The loop of one backfill job: read a page, decide it, write the
//! previous page's stamps meanwhile, checkpoint. See the module
//! documentation of [`crate::backfill`] for the why.

use std::cmp::Ordering as CmpOrdering;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::checkpoint::{self, Checkpoint, Counts};
use super::decide::{prepare_page, read_entries, settle};
use super::progress::{JobState, Progress};
use super::settings::{EngineFactory, JobConfig, LiveForest};
use super::stamps::{PageDone, stamp_page};
use crate::units::{Millis, now_millis};
use crate::upstream::scan::{Scan, ScanOrder, ScanRequest, ScanStart, compare_keys};

/// How long the cluster keeps the job's point in time or scroll between
/// pages.
const KEEP_ALIVE: &str = "5m";

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
    // The whole index's count, against which `seen` (of every run) is shown.
    let count_path = format!(
        "/{}/_count",
        crate::upstream::encode_component(&config.index)
    );
    if let Ok(answer) = live
        .upstream()
        .call_json(
            axum::http::Method::GET,
            &count_path,
            &config.headers,
            crate::upstream::Payload::Empty,
        )
        .await
        && let Some(count) = answer["count"].as_u64()
    {
        progress.lock().total = Some(count);
    }
    let mut history = Some(history_engine().context("cannot build the history forest")?);

    let start = start_position(&checkpoint, retention);
    let page_size = match config.max_docs_per_second {
        Some(rate) => config.page_size.min(rate.ceil().max(1.0) as usize),
        None => config.page_size,
    };
    let mut scan = Scan::open(
        live.upstream(),
        ScanRequest {
            index: config.index.clone(),
            order: ScanOrder::Oldest {
                time_field: config.time_field.clone(),
                tiebreak_field: config.tiebreak_field.clone(),
                start,
            },
            page_size,
            keep_alive: KEEP_ALIVE,
            versions: true,
            headers: config.headers.clone(),
        },
    )
    .await?;
    progress.lock().reader = Some(scan.kind());
    // Documents up to the checkpoint's key are only warmed into the history
    // frame. Where keys end in a tiebreak of the previous read only
    // (Elasticsearch's `_shard_doc`), only their time part still orders:
    // the documents of that instant are processed again.
    let resume_key = checkpoint.after.clone().map(|key| {
        if scan.keys_survive_reopening() {
            key
        } else {
            key.into_iter()
                .take(usize::from(config.time_field.is_some()))
                .collect()
        }
    });
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
        let page = match scan.next_page(live.upstream()).await {
            Ok(page) => page,
            Err(error) => {
                let _ = complete_in_flight!();
                break Err(error.into());
            }
        };
        if let Some(total) = page.total {
            // The index's own count when it could be read (a resumed read
            // counts only what is left of it).
            progress.lock().total.get_or_insert(total);
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
    scan.close(live.upstream()).await;
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

/// Where a job reads from: the beginning; right after its checkpoint; or,
/// with a history frame to warm up again, one retention before the
/// checkpoint's time (the live window needs it too, to carry classes over).
fn start_position(checkpoint: &Checkpoint, retention: Option<Millis>) -> ScanStart {
    let Some(after) = &checkpoint.after else {
        return ScanStart::Beginning;
    };
    if checkpoint.history_before.is_none() {
        // No history frame to warm up; the live forest is durable.
        return ScanStart::After(after.clone());
    }
    let (Some(retention), Some(raw)) = (retention, after.first().and_then(Value::as_f64)) else {
        return ScanStart::Beginning;
    };
    // Numbers below 10^11 are epoch seconds (see `parse_time`).
    let back = if raw.abs() < 1e11 {
        retention as f64 / 1000.0
    } else {
        retention as f64
    };
    ScanStart::From(json!((raw - back).floor() as i64))
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
    fn a_fresh_job_starts_at_the_beginning() {
        assert_eq!(
            start_position(&checkpoint(None, None), Some(10)),
            ScanStart::Beginning
        );
    }

    #[test]
    fn a_resume_without_a_history_frame_continues_right_after_its_key() {
        let key = vec![json!(1_000_000_000_500i64), json!("x")];
        let mut without_time = checkpoint(Some(key.clone()), Some(1_000_000_000_500));
        without_time.history_before = None;
        assert_eq!(
            start_position(&without_time, Some(100)),
            ScanStart::After(key)
        );
    }

    #[test]
    fn a_resume_warms_the_history_frame_up_from_one_retention_before() {
        let millis = vec![json!(900_000_000_000i64), json!("x")];
        let start = start_position(
            &checkpoint(Some(millis), Some(900_000_000_000)),
            Some(1_000),
        );
        assert_eq!(start, ScanStart::From(json!(899_999_999_000i64)));
        // A field in epoch seconds goes back in seconds.
        let seconds = vec![json!(900_000_000i64), json!("x")];
        let start = start_position(
            &checkpoint(Some(seconds), Some(900_000_000_000)),
            Some(5_000),
        );
        assert_eq!(start, ScanStart::From(json!(899_999_995i64)));
        // A time the sidecar cannot do arithmetic on: from the beginning.
        let text = vec![json!("2020-01-01"), json!("x")];
        let start = start_position(&checkpoint(Some(text), Some(900_000_000_000)), Some(5_000));
        assert_eq!(start, ScanStart::Beginning);
    }
}
