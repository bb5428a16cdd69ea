//! The one way a command opens its state: `serve`, `rebuild` and the
//! offline `backfill` all come through [`open_state`].
//!
//! Motivation: the three commands used to build the store's options, open
//! the store and assemble the ledger each in its own way, so a change to
//! one (a new option, the in-memory case, how a snapshot becomes a ledger)
//! had to be made three times.
//!
//! Design: the caller gives validated store options (`None`: the state
//! lives in memory only), the engine's validated pieces, and where the
//! state comes from: what the directory holds ([`StateOrigin::Recovered`]:
//! its newest snapshot and the log after it) or a state made elsewhere
//! ([`StateOrigin::Given`]: the forest a rebuild read from the index). The
//! ledger is assembled here, not in `config`: settings only describe an
//! engine, and the state put into it is read from disk.
//!
//! Consequences: the directory is locked for as long as the returned store
//! lives, whichever command opened it.

use std::io;
use std::path::Path;

use super::store::{RecoveryReport, SnapshotState, Store, StoreOptions};
use crate::engine::{Engine, ForestState};
use crate::ledger::{DocumentKeys, EngineParts, Ledger};

/// Where an opened state comes from.
#[derive(Debug)]
pub enum StateOrigin {
    /// What the directory holds: its newest readable snapshot and the log
    /// after it (an empty state when it holds none).
    Recovered,
    /// What the directory holds, for a member of a replica group: as
    /// [`StateOrigin::Recovered`], but placements in doubt stay pending
    /// (the group's chain settles them) and nothing is appended to the log.
    Member,
    /// This state, made elsewhere (`rebuild`); whatever the directory holds
    /// is not read into the ledger.
    Given(Box<SnapshotState>),
}

/// A state opened: its ledger, and the store it is written to.
#[derive(Debug)]
pub struct OpenedState {
    pub ledger: Ledger,
    /// `None` when the state lives in memory only.
    pub store: Option<Store>,
    /// What recovery did; `None` in memory.
    pub recovery: Option<RecoveryReport>,
}

/// Opens the state `store` names (locking its directory), or a state in
/// memory when `store` is `None`, with an engine made of `parts`.
///
/// # Errors
///
/// The directory locked by another process or unusable, a snapshot that
/// does not fit the engine's settings, or settings the engine refuses.
pub fn open_state(
    store: Option<StoreOptions>,
    parts: EngineParts,
    origin: StateOrigin,
) -> anyhow::Result<OpenedState> {
    let Some(store_options) = store else {
        let ledger = match origin {
            StateOrigin::Recovered | StateOrigin::Member => ledger_from_snapshot(parts, None)?,
            StateOrigin::Given(state) => ledger_from_snapshot(parts, Some(*state))?,
        };
        return Ok(OpenedState {
            ledger,
            store: None,
            recovery: None,
        });
    };
    let (store, ledger, report) = match origin {
        StateOrigin::Recovered => Store::open(store_options, |snapshot| {
            ledger_from_snapshot(parts.clone(), snapshot)
        })?,
        StateOrigin::Member => Store::open_with(
            store_options,
            |snapshot| ledger_from_snapshot(parts.clone(), snapshot),
            false,
        )?,
        StateOrigin::Given(state) => {
            let mut given = Some(*state);
            Store::open(store_options, |_| {
                let state = given
                    .take()
                    .ok_or_else(|| anyhow::anyhow!("the given state was used"))?;
                // Damage in the given state is no reason to try the
                // directory's older snapshots: it is what was given.
                ledger_from_snapshot(parts.clone(), Some(state))
                    .map_err(|error| anyhow::anyhow!("{error:#}"))
            })?
        }
    };
    Ok(OpenedState {
        ledger,
        store: Some(store),
        recovery: Some(report),
    })
}

/// A ledger around an engine made of `parts`, holding the state of
/// `snapshot` (empty without one). [`Store::open`] calls it with the
/// snapshot it recovered.
///
/// # Errors
///
/// Settings the engine refuses, or snapshot records that do not fit them.
pub fn ledger_from_snapshot(
    parts: EngineParts,
    snapshot: Option<SnapshotState>,
) -> anyhow::Result<Ledger> {
    let Some(snapshot) = snapshot else {
        return Ok(Ledger::empty(parts)?);
    };
    let SnapshotState {
        counters,
        nodes,
        sides,
        keys,
        numbered_keys,
        pending,
        sent,
        common_sentences,
        candidates,
        ..
    } = snapshot;
    // The document keys' table is built beside the engine (at 10 M keys,
    // a second of one thread): a key names its node by its position among
    // the node records, which is the number the forest gives it.
    let (engine, mut numbered) = std::thread::scope(|scope| {
        let numbered = scope.spawn(move || DocumentKeys::from_numbered(numbered_keys));
        let engine = Engine::restore(
            parts.fingerprinter,
            ForestState {
                config: parts.forest,
                nodes,
                counters,
            },
            parts.confirmation,
            parts.side_storage,
            &sides,
            candidates,
        );
        let numbered = numbered
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (engine, numbered)
    });
    let mut engine = engine?;
    // Keys by fingerprint (a snapshot before version 7, a rebuilt state):
    // each looked up.
    numbered.add_by_fingerprint(keys, engine.forest());
    engine.restore_common_sentences(&common_sentences);
    Ok(Ledger::restore(engine, numbered, pending, sent))
}

/// How the store names its files: snapshots and log segments (see
/// `store.rs`); nothing else in a state directory is state.
const STATE_FILE_PREFIXES: [&str; 2] = ["snapshot-", "log-"];

fn is_state_file(name: &str) -> bool {
    STATE_FILE_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Whether `dir` holds state files (a snapshot or a log segment); a missing
/// or unreadable directory holds none.
pub fn holds_state(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| is_state_file(&entry.file_name().to_string_lossy()))
    })
}

/// Deletes the state files of `dir` (snapshots and log segments), leaving
/// its other files (the lock, backfill checkpoints) where they are.
///
/// # Errors
///
/// The directory or a file that cannot be read or removed.
pub fn remove_state(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        if is_state_file(&entry.file_name().to_string_lossy()) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
