//! The one backfill job of a process: started, reported, cancelled. The
//! sidecar (`/_neardup/backfill`) and `neardup backfill` both drive a job
//! through it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::http::HeaderMap;
use parking_lot::Mutex;

use super::checkpoint;
use super::job;
use super::preflight;
use super::progress::{JobState, Progress};
use super::settings::{
    BackfillRequest, BackfillSettings, DEFAULT_PAGE_SIZE, JobConfig, LiveForest, StartError,
};

struct Running {
    cancel: Arc<AtomicBool>,
    handle: tokio::task::JoinHandle<()>,
}

/// The one backfill job of a process: starts, reports, cancels.
pub struct Controller {
    settings: BackfillSettings,
    progress: Arc<Mutex<Progress>>,
    running: Mutex<Option<Running>>,
}

impl Controller {
    /// A controller; an unfinished checkpoint in the state directory shows
    /// as `interrupted`.
    pub fn new(settings: BackfillSettings) -> Self {
        let mut progress = Progress::default();
        if let Some(checkpoint) = settings.state_dir.as_deref().and_then(checkpoint::load) {
            progress.state = if checkpoint.finished {
                JobState::Done
            } else {
                JobState::Interrupted
            };
            progress.index = Some(checkpoint.index.clone());
            progress.time_field = checkpoint.time_field.clone();
            progress.counts = checkpoint.counts;
        }
        Controller {
            settings,
            progress: Arc::new(Mutex::new(progress)),
            running: Mutex::new(None),
        }
    }

    pub fn progress(&self) -> Progress {
        self.progress.lock().clone()
    }

    /// Starts (or resumes) a job on `live`, with `headers` (the caller's
    /// credentials for the cluster) on every request it makes, once the
    /// index's mapping is ready for it ([`preflight`]): the answer says
    /// whether the job runs.
    ///
    /// # Errors
    ///
    /// A job already running, an invalid request, or an index the job
    /// cannot stamp (or the cluster unable to say).
    pub async fn start(
        &self,
        live: Arc<dyn LiveForest>,
        request: BackfillRequest,
        headers: HeaderMap,
    ) -> Result<Progress, StartError> {
        validate(&request)?;
        self.not_running()?;
        preflight::check_and_map(
            live.upstream(),
            &headers,
            &request.index,
            request.time_field.as_deref(),
            [&self.settings.root_field, &self.settings.simhash_field].map(String::as_str),
            self.settings.option_names,
        )
        .await?;
        let mut running = self.running.lock();
        if let Some(job) = running.as_ref()
            && !job.handle.is_finished()
        {
            let index = self.progress.lock().index.clone().unwrap_or_default();
            return Err(StartError::AlreadyRunning(index));
        }
        let cancel = Arc::new(AtomicBool::new(false));
        let config = JobConfig {
            index: request.index.clone(),
            time_field: request.time_field.clone(),
            tiebreak_field: request
                .tiebreak_field
                .clone()
                .unwrap_or_else(|| crate::upstream::scan::DEFAULT_TIEBREAK.to_string()),
            root_field: self.settings.root_field.clone(),
            simhash_field: self.settings.simhash_field.clone(),
            max_docs_per_second: request
                .max_docs_per_second
                .or(self.settings.max_docs_per_second),
            page_size: request.page_size.unwrap_or(DEFAULT_PAGE_SIZE),
            headers,
            state_dir: self.settings.state_dir.clone(),
            restart: request.restart,
        };
        {
            let mut progress = self.progress.lock();
            *progress = Progress {
                state: JobState::Running,
                index: Some(config.index.clone()),
                time_field: config.time_field.clone(),
                run_started: Some(Instant::now()),
                max_docs_per_second: config.max_docs_per_second,
                ..Progress::default()
            };
        }
        tracing::info!(
            index = %config.index,
            time_field = config.time_field.as_deref().unwrap_or("(none)"),
            max_docs_per_second = config.max_docs_per_second,
            "backfill started"
        );
        let progress = self.progress.clone();
        let history_engine = self.settings.history_engine.clone();
        let job_cancel = cancel.clone();
        let handle = tokio::spawn(async move {
            let outcome = job::run(
                live,
                history_engine,
                config,
                progress.clone(),
                job_cancel.clone(),
            )
            .await;
            let mut progress = progress.lock();
            progress.run_finished = Some(Instant::now());
            match outcome {
                Ok(state) => {
                    progress.state = state;
                    let counts = progress.counts;
                    tracing::info!(
                        state = state.name(),
                        seen = counts.seen,
                        stamped = counts.stamped,
                        stamped_history = counts.stamped_history,
                        already_stamped = counts.already_stamped,
                        skipped = counts.skipped(),
                        "backfill ended"
                    );
                }
                Err(error) => {
                    tracing::error!(error = format!("{error:#}"), "backfill failed");
                    progress.state = JobState::Failed;
                    progress.error = Some(format!("{error:#}"));
                }
            }
        });
        *running = Some(Running { cancel, handle });
        Ok(self.progress())
    }

    /// A job already running is refused before the cluster is asked
    /// anything.
    fn not_running(&self) -> Result<(), StartError> {
        let running = self.running.lock();
        match running.as_ref() {
            Some(job) if !job.handle.is_finished() => Err(StartError::AlreadyRunning(
                self.progress.lock().index.clone().unwrap_or_default(),
            )),
            _ => Ok(()),
        }
    }

    /// Asks the running job to stop after its current page; `false` when
    /// none runs.
    pub fn cancel(&self) -> bool {
        match self.running.lock().as_ref() {
            Some(job) if !job.handle.is_finished() => {
                job.cancel.store(true, Ordering::Release);
                true
            }
            _ => false,
        }
    }

    /// Waits for the running job, if any, to end.
    pub async fn wait(&self) {
        let handle = self.running.lock().take().map(|job| job.handle);
        if let Some(handle) = handle {
            let _ = handle.await;
        }
    }
}

fn validate(request: &BackfillRequest) -> Result<(), StartError> {
    if request.index.trim().is_empty() {
        return Err(StartError::Invalid("[index] must not be empty".into()));
    }
    if request.index.contains(['/', '?', '#', ' ']) {
        return Err(StartError::Invalid(format!(
            "invalid index name [{}]: must not contain '/', '?', '#' or spaces",
            request.index
        )));
    }
    if let Some(rate) = request.max_docs_per_second
        && !(rate.is_finite() && rate > 0.0)
    {
        return Err(StartError::Invalid(
            "[max_docs_per_second] must be a positive number".into(),
        ));
    }
    if let Some(size) = request.page_size
        && !(1..=10_000).contains(&size)
    {
        return Err(StartError::Invalid(
            "[page_size] must be between 1 and 10000".into(),
        ));
    }
    for field in [&request.time_field, &request.tiebreak_field]
        .into_iter()
        .flatten()
    {
        if field.trim().is_empty() {
            return Err(StartError::Invalid("field names must not be empty".into()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(index: &str) -> BackfillRequest {
        BackfillRequest {
            index: index.into(),
            time_field: Some("published_at".into()),
            tiebreak_field: None,
            max_docs_per_second: None,
            page_size: None,
            restart: false,
        }
    }

    #[test]
    fn requests_the_cluster_would_refuse_are_refused_first() {
        assert!(validate(&request("news*")).is_ok());
        assert!(validate(&request("")).is_err());
        assert!(validate(&request("a/b")).is_err());
        let mut zero_rate = request("news");
        zero_rate.max_docs_per_second = Some(0.0);
        assert!(validate(&zero_rate).is_err());
        let mut huge_page = request("news");
        huge_page.page_size = Some(100_000);
        assert!(validate(&huge_page).is_err());
    }

    #[test]
    fn unknown_request_fields_are_refused() {
        let parsed: Result<BackfillRequest, _> =
            serde_json::from_str(r#"{"index":"news","time_feild":"t"}"#);
        assert!(parsed.is_err());
    }
}
