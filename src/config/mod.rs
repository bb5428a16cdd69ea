//! One validated configuration from flags, environment and a config file.
//!
//! Motivation: the same settings (which fields, which feature mode, k,
//! retention…) are given on the command line for a quick try, in the
//! environment for a service, or in a file checked into a deployment repo.
//!
//! Design: every setting is optional in each source; the first source that
//! sets it wins, in the order flag → environment variable (clap reads both)
//! → config file (`--config`, TOML, unknown keys rejected so a typo fails
//! loudly) → built-in default ([`defaults`], each named once). This module
//! only validates: settings become option values ([`EngineParts`],
//! [`ServeOptions`], the store's options, [`JobOptions`]); the state put in
//! an engine (a snapshot, the log, document keys) is assembled where it is
//! read, by `persist::open_state`.
//!
//! [`EngineSettings::build`] stays in `config` although it returns an [`Engine`]:
//! it is a pure function of the settings (an empty engine, nothing read from
//! disk or the cluster, the same settings always give the same engine), the
//! one `stamp` runs and a backfill's history frame starts from. A ledger,
//! whose content depends on what a directory holds, is never built here.
//!
//! Files: `engine.rs` (the `[engine]` settings and what they build),
//! `serve.rs` (`[serve]`), `analyzers.rs` (per-index fields), `fields.rs`
//! (the stamped fields' names), `job.rs` (offline jobs), `state.rs` (the
//! state directory), `file.rs` (the config file that holds them all),
//! `defaults.rs` (every default, named once), `tls.rs` (TLS towards the
//! cluster), `replica.rs` (the replica group's settings). This file only re-exports.

mod analyzers;
pub mod defaults;
mod engine;
mod fields;
mod file;
mod job;
mod replica;
mod serve;
mod state;
mod tls;

pub use analyzers::{Analyzers, IndexFields};
pub use engine::EngineSettings;
pub use fields::{StampedFieldNames, StampedFields};
pub use file::ConfigFile;
pub use job::{JobOptions, JobSettings};
pub use replica::{
    DEFAULT_REPLICA_LEASE, DEFAULT_REPLICA_WRITE_WAIT, GroupSecret, ReplicaOptions, ReplicaSettings,
};
pub use serve::{Limits, OnStateFailure, ServeOptions, ServeSettings, SidecarConfig};
pub use state::{job_store, state_directory};
pub use tls::UpstreamTlsSettings;

pub use crate::ledger::EngineParts;
