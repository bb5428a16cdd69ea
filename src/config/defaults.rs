//! The built-in defaults of the command line's settings, each named once.
//!
//! The engine's defaults (k, retention, thresholds…) live with the types
//! they configure (`ForestConfig`, `ConfirmationConfig`,
//! `FingerprintConfig`); these are the ones of the shell around it: the
//! cluster, the listener, the state directory, the stamped fields. The
//! `[default: …]` of each flag's help repeats them (clap takes its help
//! from doc comments, which cannot name a constant); a test holds the two
//! together.

use std::time::Duration;

/// URL of the cluster.
pub const DEFAULT_UPSTREAM: &str = "http://127.0.0.1:9200";

/// Address the sidecar listens on.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9201";

/// State directory of the sidecar and of the whole-index jobs.
pub const DEFAULT_STATE_DIR: &str = "neardup-state";

/// The `state_dir` value that keeps the state in memory only (as does an
/// empty one).
pub const NO_STATE_DIR: &str = "none";

/// Largest request body the sidecar accepts.
pub const DEFAULT_MAX_CONTENT_LENGTH: &str = "100mb";

/// How long the cluster may stay silent before a proxied request fails.
pub const DEFAULT_UPSTREAM_TIMEOUT: &str = "60s";

/// Most request-body bytes being stamped at once.
pub const DEFAULT_MAX_IN_FLIGHT_BYTES: &str = "256mb";

/// Log size since the last snapshot at which the sidecar writes another.
pub const DEFAULT_SNAPSHOT_AFTER: &str = "256mb";

/// Name of the stamped class field.
pub const DEFAULT_ROOT_FIELD: &str = "cluster_root";

/// Name of the stamped own-fingerprint field.
pub const DEFAULT_SIMHASH_FIELD: &str = "simhash";

/// Whether the built-in Chinese thesaurus lets a word swapped for one of
/// the same sense pass the content-word check.
pub const DEFAULT_BUILTIN_THESAURUS: bool = true;

/// How long the cluster may stay silent during a whole-index job (rebuild,
/// offline backfill): longer than a proxied request's, since a scroll page
/// or a page of updates is a larger request than most writes.
pub const JOB_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(120);
