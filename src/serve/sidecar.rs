//! The sidecar's shared state: what every handler reads, built once at
//! start.
//!
//! Design: a plain struct of its parts, each owned by the file that uses
//! it: the durable ledger ([`DurableLedger`]) and the in-flight budget
//! ([`Admission`]) of the write path, the cluster's client, the engine's
//! analyzers, the limits, the metrics, the admin guard, the choice on state
//! failure, the backfill job and, in a replica group, the member's state.
//! The handlers read the parts they need;
//! this file imports none of them, so it can be read (and changed) alone.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::admin::AdminGuard;
use super::metrics::Metrics;
use super::write::admission::Admission;
use super::write::lent_credentials::LentCredentials;
use super::write::missing_fields::MissingFieldWarnings;
use super::write::stamp_mapping::StampMappingChecks;
use super::write::state::DurableLedger;
use crate::backfill::{BackfillSettings, Controller};
use crate::config::{Analyzers, Limits, OnStateFailure, ServeOptions};
use crate::ledger::Ledger;
use crate::persist::Store;
use crate::replica::state::Replica;
use crate::units::Millis;
use crate::upstream::Upstream;

/// The sidecar's shared state.
pub struct Sidecar {
    /// The ledger behind its one lock, and its log.
    pub(super) ledger: DurableLedger,
    /// Bytes of writes being stamped, against `max_in_flight_bytes`.
    pub(super) admission: Admission,
    pub(super) analyzers: Analyzers,
    pub(super) upstream: Upstream,
    pub(super) root_field: String,
    pub(super) simhash_field: String,
    pub(super) limits: Limits,
    pub(super) metrics: Metrics,
    pub(super) started: Instant,
    /// Who may call the state-changing endpoints.
    pub(super) admin: AdminGuard,
    pub(super) on_state_failure: OnStateFailure,
    /// The backfill job, once [`Sidecar::install_backfill`] set it up.
    pub(super) backfill: OnceLock<Controller>,
    /// Indices and fields already warned about (documents without text in
    /// a fingerprinted field).
    pub(super) missing_fields: MissingFieldWarnings,
    /// Indices whose stamp mapping was checked (and those not keyword).
    pub(super) stamp_mapping: StampMappingChecks,
    /// This member's place in its replica group, when it is in one.
    pub(super) replica: Option<Arc<Replica>>,
    /// The other members of the group, for writes forwarded to the leader.
    pub(super) peers: reqwest::Client,
    /// Credentials writes lend to a read-back of writes in doubt at a
    /// crash or takeover, while one waits for them.
    pub(super) lent_credentials: LentCredentials,
}

/// The client for the group's other members: no proxy, a short connect
/// timeout (a dead leader is found out quickly), and the cluster's CA
/// (`--upstream-ca`) trusted besides the system's roots, for members that
/// listen with certificates of the same authority. Each request sets its
/// own total timeout (the write's bound).
/// On a machine without system roots (`upstream::roots`) it trusts only
/// `--upstream-ca`: members over plain HTTP stay reachable.
fn peer_client(options: &ServeOptions) -> anyhow::Result<reqwest::Client> {
    let builder = || {
        reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(std::time::Duration::from_secs(2))
            .pool_idle_timeout(std::time::Duration::from_secs(30))
    };
    let roots = match &options.upstream_tls.ca_pem {
        Some(pem) => reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|error| anyhow::anyhow!("--upstream-ca: not a PEM bundle: {error}"))?,
        None => Vec::new(),
    };
    match builder().tls_certs_merge(roots.clone()).build() {
        Ok(client) => Ok(client),
        Err(_) => Ok(builder().tls_certs_only(roots).build()?),
    }
}

impl Sidecar {
    pub fn new(
        ledger: Ledger,
        store: Option<Store>,
        analyzers: Analyzers,
        options: &ServeOptions,
        replica: Option<Arc<Replica>>,
    ) -> anyhow::Result<Self> {
        Ok(Sidecar {
            ledger: DurableLedger::new(ledger, store, replica.clone()),
            admission: Admission::new(&options.limits),
            analyzers,
            upstream: Upstream::new(
                &options.upstream,
                options.upstream_timeout,
                &options.upstream_tls,
            )?,
            root_field: options.root_field.clone(),
            simhash_field: options.simhash_field.clone(),
            limits: options.limits,
            metrics: Metrics::default(),
            started: Instant::now(),
            admin: AdminGuard::new(options.admin_token.clone(), allowed_hosts(options)),
            on_state_failure: options.on_state_failure,
            backfill: OnceLock::new(),
            missing_fields: MissingFieldWarnings::default(),
            stamp_mapping: StampMappingChecks::default(),
            replica,
            peers: peer_client(options)?,
            lent_credentials: LentCredentials::default(),
        })
    }

    /// Enables `/_neardup/backfill` (checkpoints in the state directory).
    pub fn install_backfill(&self, settings: BackfillSettings) {
        let _ = self.backfill.set(Controller::new(settings));
    }

    /// Expires a bounded number of old nodes; whether more are due. In a
    /// replica group only the acting leader expires (standbys apply its
    /// expiries).
    pub(super) fn expire(&self, now: Millis, budget: usize) -> bool {
        // Not while taking over (before the epoch record: an expiry there
        // would be in no record), releasing, or following.
        if self
            .replica
            .as_ref()
            .is_some_and(|replica| !replica.may_make_effects())
        {
            return false;
        }
        let ((removed, more_pending), _) = self.ledger.write(|ledger| ledger.expire(now, budget));
        Metrics::add(&self.metrics.expired_nodes, removed as u64);
        more_pending
    }
}

/// `--allowed-host`, and the host of `--replica-advertise` (peers and
/// clients call a member by it).
fn allowed_hosts(options: &ServeOptions) -> super::hosts::AllowedHosts {
    let advertised = options
        .replica
        .as_ref()
        .and_then(|replica| replica.advertise.as_deref())
        .and_then(|url| reqwest::Url::parse(url).ok())
        .and_then(|url| url.host_str().map(str::to_string));
    super::hosts::AllowedHosts::new(options.allowed_hosts.iter().cloned().chain(advertised))
}
