//! The flags of each command (`neardup <command> --help`). The settings
//! they share with the config file (engine, sidecar, stamped field names)
//! are flattened in from `config`.

use std::path::PathBuf;

use crate::config::{EngineSettings, ServeSettings, StampedFieldNames, UpstreamTlsSettings};
use crate::stamp::InputFormat;

#[derive(Debug, clap::Args)]
pub struct BackfillArgs {
    /// Index, alias or pattern to stamp (e.g. `news*`)
    #[arg(long)]
    pub index: String,

    /// URL of the cluster [default: http://127.0.0.1:9200]
    #[arg(long, env = "NEARDUP_UPSTREAM")]
    pub upstream: Option<String>,

    /// State directory (the sidecar's; locked while this runs); `none` keeps the forest in memory [default: neardup-state]
    #[arg(long, env = "NEARDUP_STATE_DIR")]
    pub state_dir: Option<String>,

    /// Field of each document holding its time: documents are read oldest first, and those older than the retention are grouped in a history frame of their own [default: none, every document placed now, in id order]
    #[arg(long, env = "NEARDUP_TIME_FIELD")]
    pub time_field: Option<String>,

    /// Second sort key, unique per document [default: _id]
    #[arg(long, env = "NEARDUP_TIEBREAK_FIELD")]
    pub tiebreak_field: Option<String>,

    /// Throttle, in documents per second (the variable is the sidecar's default throttle too) [default: unlimited]
    #[arg(long, env = "NEARDUP_BACKFILL_MAX_DOCS_PER_SECOND")]
    pub max_docs_per_second: Option<f64>,

    /// Documents per page [default: 500]
    #[arg(long, env = "NEARDUP_PAGE_SIZE")]
    pub page_size: Option<usize>,

    /// Start over instead of resuming from the checkpoint of this job
    #[arg(long)]
    pub restart: bool,

    /// Value of an `Authorization` header for the cluster
    #[arg(long, env = "NEARDUP_UPSTREAM_AUTHORIZATION", hide_env_values = true)]
    pub authorization: Option<String>,

    #[command(flatten)]
    pub upstream_tls: UpstreamTlsSettings,

    #[command(flatten)]
    pub stamped: StampedFieldNames,

    /// No progress bar and no summary line
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub engine: EngineSettings,
}

#[derive(Debug, clap::Args)]
pub struct RebuildArgs {
    /// Index, alias or pattern to read (e.g. `news*`)
    #[arg(long)]
    pub index: String,

    /// URL of the cluster [default: http://127.0.0.1:9200]
    #[arg(long, env = "NEARDUP_UPSTREAM")]
    pub upstream: Option<String>,

    /// State directory to write [default: neardup-state]
    #[arg(long, env = "NEARDUP_STATE_DIR")]
    pub state_dir: Option<String>,

    /// Replace the state that is there
    #[arg(long)]
    pub force: bool,

    /// Field of each document holding its time (born/touched of its node) [default: the rebuild time]
    #[arg(long, env = "NEARDUP_TIME_FIELD")]
    pub time_field: Option<String>,

    /// Value of an `Authorization` header for the cluster
    #[arg(long, env = "NEARDUP_UPSTREAM_AUTHORIZATION", hide_env_values = true)]
    pub authorization: Option<String>,

    #[command(flatten)]
    pub upstream_tls: UpstreamTlsSettings,

    #[command(flatten)]
    pub stamped: StampedFieldNames,

    /// No progress bar and no summary line
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub engine: EngineSettings,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub serve: ServeSettings,

    /// When the state directory holds no state, rebuild it first from the stamped documents of this index or pattern (see `neardup rebuild`)
    #[arg(long, env = "NEARDUP_REBUILD_INDEX")]
    pub rebuild_index: Option<String>,

    #[command(flatten)]
    pub stamped: StampedFieldNames,

    #[command(flatten)]
    pub engine: EngineSettings,
}

#[derive(Debug, clap::Args)]
pub struct StampArgs {
    /// Input file [default: standard input]
    #[arg(long, short)]
    pub input: Option<PathBuf>,

    /// Output file [default: standard output]
    #[arg(long, short)]
    pub output: Option<PathBuf>,

    /// Input shape
    #[arg(long, value_enum, default_value_t = InputFormat::Auto)]
    pub format: InputFormat,

    /// Field of each document holding its arrival time (epoch s/ms or an RFC 3339 date), to replay history with expiry as it would have happened [default: the wall clock]
    #[arg(long, env = "NEARDUP_TIME_FIELD")]
    pub time_field: Option<String>,

    /// Pass lines that are not valid JSON through unchanged (and count them) instead of stopping
    #[arg(long)]
    pub skip_invalid: bool,

    /// Worker threads (each reads, fingerprints, decides and places in input order); the stamps are the same whatever the number [default: the machine's cores]
    #[arg(long, env = "NEARDUP_STAMP_THREADS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,

    #[command(flatten)]
    pub stamped: StampedFieldNames,

    /// No progress bar and no summary line
    #[arg(long, short)]
    pub quiet: bool,

    /// Print the summary line even when standard error is not a terminal (by default it is printed on a terminal only)
    #[arg(long)]
    pub summary: bool,

    #[command(flatten)]
    pub engine: EngineSettings,
}

#[derive(Debug, clap::Args)]
pub struct FingerprintArgs {
    /// Texts to fingerprint, one fingerprint per text [default: all of standard input as one text]
    pub texts: Vec<String>,

    /// Print JSON objects with details instead of bare fingerprints
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub engine: EngineSettings,
}
