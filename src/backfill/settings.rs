//! What a backfill job is given: the request that starts it, the settings
//! every job of a process shares, and the live forest it writes into (the
//! sidecar's or the offline command's).

use std::path::PathBuf;
use std::sync::Arc;

use axum::http::HeaderMap;
use serde::Deserialize;

use crate::engine::{Analyzer, Engine};
use crate::ledger::Ledger;
use crate::persist::store::StoreError;
use crate::units::Millis;
use crate::upstream::Upstream;

/// Documents per page unless the request says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 500;

/// What a backfill job works on: the live forest and its durable log. The
/// sidecar and the offline command each provide one.
pub trait LiveForest: Send + Sync + 'static {
    /// Runs `change` on the locked ledger and queues its effects for the
    /// log. Returns the log position to [`LiveForest::persist`].
    fn change(&self, change: &mut dyn FnMut(&mut Ledger)) -> u64;
    /// Makes the effects up to `seq` durable. Blocking.
    ///
    /// # Errors
    ///
    /// The state could not be written.
    fn persist(&self, seq: u64) -> Result<(), StoreError>;
    fn upstream(&self) -> &Upstream;
    /// The analyzer for documents of `index`.
    fn analyzer(&self, index: &str) -> Analyzer;
    /// The live forest's retention (`None`: nothing expires).
    fn retention(&self) -> Option<Millis>;
}

/// [`LiveForest::persist`] for a forest with an optional store (no state
/// directory: nothing to make durable).
pub fn sync_store(store: Option<&crate::persist::Store>, seq: u64) -> Result<(), StoreError> {
    store.map_or(Ok(()), |store| store.sync(seq))
}

/// Builds an empty forest with the engine settings (the history frame).
pub type EngineFactory = Arc<dyn Fn() -> anyhow::Result<Engine> + Send + Sync>;

/// `POST /_neardup/backfill`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackfillRequest {
    /// Index, alias or pattern.
    pub index: String,
    /// Field holding each document's time; without it every document is
    /// placed at the job's start, in tiebreak order.
    pub time_field: Option<String>,
    /// Second sort key, unique per document [default: `_id`].
    pub tiebreak_field: Option<String>,
    pub max_docs_per_second: Option<f64>,
    pub page_size: Option<usize>,
    /// Start over even if a checkpoint of this job exists.
    #[serde(default)]
    pub restart: bool,
}

/// Why a job could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("a backfill of [{0}] is already running; cancel it first")]
    AlreadyRunning(String),
    #[error("{0}")]
    Invalid(String),
    /// The cluster could not be asked about the index, or refused (no such
    /// index, no right to change its mapping).
    #[error("{0}")]
    Cluster(crate::upstream::ClusterError),
}

/// How the caller names the job's options in an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionNames {
    /// A `POST /_neardup/backfill` body: `[time_field]`.
    RequestBody,
    /// `neardup backfill`'s flags: `--time-field`.
    CommandLine,
}

impl OptionNames {
    pub fn time_field(self) -> &'static str {
        match self {
            OptionNames::RequestBody => "[time_field]",
            OptionNames::CommandLine => "--time-field",
        }
    }
}

/// Settings every job of this process shares.
#[derive(Clone)]
pub struct BackfillSettings {
    pub root_field: String,
    pub simhash_field: String,
    /// Where checkpoints live (`None`: in memory only).
    pub state_dir: Option<PathBuf>,
    pub history_engine: EngineFactory,
    /// Default throttle when a request gives none.
    pub max_docs_per_second: Option<f64>,
    /// How errors name the request's options (body fields or flags).
    pub option_names: OptionNames,
}

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
