//! `neardup serve` started: the steps between a validated configuration and
//! a listening sidecar.
//!
//! Design: logging first (everything after it may log); then the state: when
//! `--rebuild-index` names an index and the state directory holds no state,
//! the forest is rebuilt from that index into it first; then the directory
//! is opened as every command opens it (`persist::open_state`) and what
//! recovery did is logged; then the sidecar is made around that state, its
//! backfill controller installed, and it serves until shutdown on the
//! runtime it was given.
//!
//! In a replica group the state is opened as `super::join` decides (its
//! own, or set aside for the group's published snapshot), and the member's
//! tasks start beside the server (`crate::replica::member`).
//!
//! Consequences: a sidecar with no state directory starts empty and says so
//! (a warning), since everything it learns is lost when it stops.

use std::io::{self, IsTerminal};
use std::sync::Arc;

use tokio::runtime::Runtime;

use super::join::open_state_logged;
use super::run;
use super::sidecar::Sidecar;
use crate::backfill::BackfillSettings;
use crate::config::{ServeOptions, SidecarConfig, job_store};
use crate::ledger::EngineParts;
use crate::persist::{StateOrigin, StoreOptions, holds_state};
use crate::rebuild::{RebuildFields, RebuildOptions, rebuild_into};
use crate::replica::auth::GroupKey;
use crate::replica::cluster::GroupCluster;
use crate::replica::state::Replica;
use crate::serve::standby::Host;
use crate::upstream::Upstream;

/// Starts the sidecar of `config` on `runtime` and serves until SIGTERM or
/// ctrl-c; `rebuild_index` fills an empty state directory from that index
/// first.
///
/// # Errors
///
/// The rebuild failing, the state directory locked or unusable, or the
/// listener not binding.
pub fn start(
    runtime: &Runtime,
    config: SidecarConfig,
    rebuild_index: Option<&str>,
) -> anyhow::Result<()> {
    init_logging();
    let SidecarConfig {
        options,
        engine,
        parts,
        analyzers,
    } = config;
    if options.upstream_tls.insecure {
        tracing::warn!(
            upstream = crate::upstream::userinfo::redact(&options.upstream),
            "--upstream-insecure: the cluster's certificate is NOT verified; anyone on the path can read and change every request, credentials included. For a laboratory only: give the cluster's CA with --upstream-ca instead"
        );
    }
    if let Some(signing) = &options.upstream_tls.aws_signing {
        tracing::info!(
            region = signing.region,
            service = signing.service,
            "every request to the cluster is signed (SigV4); clients' own Authorization headers are replaced"
        );
    }
    // Bound before the state directory is touched: a port in use stops here.
    let listener = std::net::TcpListener::bind(&options.listen)
        .map_err(|error| anyhow::anyhow!("cannot listen on {}: {error}", options.listen))?;
    // Read before the state directory is touched: a bad pair stops here.
    let certificate = match &options.listener_tls {
        Some((cert, key)) => Some(Arc::new(crate::serve::https::ReloadingCertificate::load(
            cert, key,
        )?)),
        None => None,
    };
    if options.replica.is_some() {
        check_group_start(rebuild_index)?;
    }
    if let (Some(index), Some(store)) = (rebuild_index, &options.state)
        && !holds_state(&store.dir)
    {
        rebuild_first(runtime, index, &options, &parts, store)?;
    }
    let member = match &options.replica {
        Some(group) => {
            let scheme = if certificate.is_some() {
                "https"
            } else {
                "http"
            };
            let url = match &group.advertise {
                Some(url) => url.clone(),
                None => format!("{scheme}://{}", listener.local_addr()?),
            };
            let replica = Arc::new(
                Replica::new(group.clone(), url)
                    .with_state_dir(options.state.as_ref().map(|store| store.dir.clone())),
            );
            let cluster = GroupCluster::new(
                Upstream::new(
                    &options.upstream,
                    options.upstream_timeout,
                    &options.upstream_tls,
                )?,
                &group.group,
                group.lease,
                GroupKey::new(&group.secret),
            );
            Some((replica, cluster))
        }
        None => None,
    };
    let replica = member.as_ref().map(|(replica, _)| replica.clone());
    let (state, start) = match &member {
        Some((replica, cluster)) => {
            super::join::open_member_state(runtime, &options, parts, replica, cluster)?
        }
        None => (
            open_state_logged(&options, parts, StateOrigin::Recovered)?,
            None,
        ),
    };
    let in_doubt_at_the_crash = state
        .recovery
        .as_ref()
        .map(|report| report.in_doubt_placements.clone())
        .unwrap_or_default();
    let sidecar = Arc::new(Sidecar::new(
        state.ledger,
        state.store,
        analyzers,
        &options,
        replica.clone(),
    )?);
    sidecar.install_backfill(BackfillSettings {
        root_field: options.root_field.clone(),
        simhash_field: options.simhash_field.clone(),
        state_dir: options.state.as_ref().map(|store| store.dir.clone()),
        history_engine: Arc::new(move || engine.build()),
        max_docs_per_second: options.backfill_max_docs_per_second,
        option_names: crate::backfill::OptionNames::RequestBody,
    });
    let rejoining = replica.clone();
    let stopped = sidecar.clone();
    runtime.block_on(async {
        if let Some((replica, cluster)) = member {
            tracing::info!(
                group = replica.options.group,
                node = replica.node,
                url = replica.url,
                "member of a replica group: following until it leads"
            );
            tokio::spawn(crate::replica::member::run(
                replica,
                cluster,
                Arc::new(Host(sidecar.clone())),
                start,
            ));
        }
        tokio::spawn(crate::serve::write::read_back_recovered(
            sidecar.clone(),
            in_doubt_at_the_crash,
        ));
        run(sidecar, &options, certificate, listener).await
    })?;
    if stopped.ledger.side_records_damage().is_some() {
        return Err(set_aside_and_restart(&stopped));
    }
    if rejoining.is_some_and(|replica| replica.wants_rejoin()) {
        return Err(restart_to_rejoin());
    }
    Ok(())
}

/// The snapshot recovered from holds damaged side records (found after
/// recovery, `crate::engine::SideRecordsCheck`): it is set aside, and the
/// sidecar starts again in this process, as a member that rejoins does,
/// recovering from the snapshot before and the log after it. Returns only
/// if that cannot be done.
fn set_aside_and_restart(sidecar: &Sidecar) -> anyhow::Error {
    if let Some(store) = sidecar.ledger.store() {
        match store.set_aside_recovered_snapshot() {
            Ok(aside) => tracing::error!(
                aside = ?aside,
                "the damaged snapshot is set aside: restarting to recover from the one before"
            ),
            Err(error) => {
                return anyhow::anyhow!(
                    "the snapshot recovered from is damaged and cannot be set aside ({error}): move it out of the state directory and restart"
                );
            }
        }
    }
    restart_in_place(
        "the snapshot recovered from is damaged",
        "to recover from the one before",
    )
}

/// A member that stepped down starts again, in this process (same id,
/// arguments and environment), after a pause: a start decides what of its
/// state the group's log still continues, and sets the rest aside
/// (`super::join`). Nobody has to restart it; a service manager sees one
/// process throughout. Returns only if the new image cannot be run.
fn restart_to_rejoin() -> anyhow::Error {
    restart_in_place("this member stepped down", "to rejoin its replica group")
}

/// Runs this program again in this process (same id, arguments and
/// environment) after a pause, for `why`, `to` do what a start does.
/// Returns only if the new image cannot be run.
fn restart_in_place(why: &str, to: &str) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    std::thread::sleep(std::time::Duration::from_secs(1));
    tracing::warn!("{why}: restarting {to}");
    let mut arguments = std::env::args_os();
    let program = arguments.next().unwrap_or_else(|| "neardup".into());
    let error = std::process::Command::new("/proc/self/exe")
        .arg0(program)
        .args(arguments)
        .exec();
    anyhow::anyhow!("{why} and cannot restart itself {to} ({error}): restart it")
}

/// A member of a replica group is not rebuilt from an index: its forest
/// comes from the group (its own state, a published snapshot, the chain;
/// `super::join`).
fn check_group_start(rebuild_index: Option<&str>) -> anyhow::Result<()> {
    if rebuild_index.is_some() {
        anyhow::bail!(
            "--rebuild-index with --replica-group: a member's forest comes from the group's log; start the group from a rebuilt sidecar is not supported yet"
        );
    }
    Ok(())
}

/// Log lines on standard error, filtered by `NEARDUP_LOG` (default `info`).
fn init_logging() {
    tracing_subscriber::fmt()
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        // A log line that cannot be written (stderr a file on a full disk,
        // or past a file-size limit) is lost, never a panic in the request
        // that logged it.
        .log_internal_errors(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("NEARDUP_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
}

/// Rebuilds the forest of `index` into the directory of `store`, which
/// holds no state (written as a job writes, then opened as the sidecar's).
fn rebuild_first(
    runtime: &Runtime,
    index: &str,
    options: &ServeOptions,
    parts: &EngineParts,
    store: &StoreOptions,
) -> anyhow::Result<()> {
    let summary = rebuild_into(
        runtime,
        RebuildOptions {
            upstream: options.upstream.clone(),
            index: index.to_string(),
            headers: axum::http::HeaderMap::new(),
            tls: options.upstream_tls.clone(),
            fields: RebuildFields {
                root_field: options.root_field.clone(),
                simhash_field: options.simhash_field.clone(),
                time_field: None,
            },
            parts: parts.clone(),
            store: job_store(store.dir.clone(), store.settings_digest.clone()),
            show_progress: false,
        },
    )?;
    tracing::info!(
        index,
        documents = summary.documents,
        classes = summary.roots,
        unstamped = summary.unstamped,
        "no state: rebuilt from the index"
    );
    Ok(())
}
