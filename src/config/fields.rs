//! The names of the two stamped fields: flags, `NEARDUP_*` variables, the
//! top of the config file, then the defaults (resolved in `file.rs`).

/// Names of the two stamped fields.
#[derive(Debug, Clone, clap::Args)]
pub struct StampedFieldNames {
    /// Name of the stamped class field [default: cluster_root]
    #[arg(long, env = "NEARDUP_ROOT_FIELD")]
    pub root_field: Option<String>,

    /// Name of the stamped own-fingerprint field [default: simhash]
    #[arg(long, env = "NEARDUP_SIMHASH_FIELD")]
    pub simhash_field: Option<String>,
}

/// The names of the two stamped fields, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampedFields {
    /// The class field (`cluster_root`).
    pub root_field: String,
    /// The own-fingerprint field (`simhash`).
    pub simhash_field: String,
}
