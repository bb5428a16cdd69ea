//! The `neardup` command line: flags → validated settings → one command run.
//!
//! `main.rs` only parses and maps the result to an exit code; each command is
//! a function here that returns an error chain for `main` to print.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::config::{ConfigFile, EngineSettings, ServeOptions, ServeSettings};
use crate::ledger::Ledger;
use crate::serve::{Analyzers, Sidecar};
use crate::stamp::{InputFormat, StampOptions, stamp};
use crate::units::format_fingerprint;

/// neardup groups near-duplicate articles as they are indexed.
///
/// Every document is simhashed, assigned to an equivalence class of near
/// duplicates (a tree of the parent forest) and stamped with the class id
/// (`cluster_root`) and its own fingerprint (`simhash`), 16 hex digits each.
/// Settings come from flags, then NEARDUP_* environment variables, then the
/// --config file, then defaults.
#[derive(Debug, Parser)]
#[command(name = "neardup", version, about, long_about)]
pub struct Cli {
    /// TOML config file: `root_field`, `simhash_field` at the top and engine settings (fields, mode, max_distance, retention, …) in an [engine] table
    #[arg(long, global = true, env = "NEARDUP_CONFIG")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Stamp documents offline (no cluster): JSON lines or bulk NDJSON in, the same lines with cluster_root and simhash out
    Stamp(StampArgs),
    /// Print the fingerprint of texts given as arguments (or of standard input)
    Fingerprint(FingerprintArgs),
    /// Run the sidecar: a drop-in proxy in front of the cluster that stamps every indexed document
    Serve(ServeArgs),
    /// Rebuild the sidecar's state (the forest) from the stamped documents of an index
    Rebuild(RebuildArgs),
    /// Stamp the documents an index already holds, oldest first, into the state directory's forest (no sidecar may be running on it; in a running sidecar use POST /_neardup/backfill)
    Backfill(BackfillArgs),
}

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
    #[arg(long)]
    pub tiebreak_field: Option<String>,

    /// Throttle, in documents per second [default: unlimited]
    #[arg(long)]
    pub max_docs_per_second: Option<f64>,

    /// Documents per page [default: 500]
    #[arg(long)]
    pub page_size: Option<usize>,

    /// Start over instead of resuming from the checkpoint of this job
    #[arg(long)]
    pub restart: bool,

    /// Value of an `Authorization` header for the cluster
    #[arg(long, env = "NEARDUP_UPSTREAM_AUTHORIZATION", hide_env_values = true)]
    pub authorization: Option<String>,

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

    /// At start, install the component template `neardup-stamps` (stamped fields as keywords) and the index template `neardup` that applies it (see mappings/)
    #[arg(long)]
    pub install_template: bool,

    /// When the state directory holds no state, rebuild it first from the stamped documents of this index or pattern (see `neardup rebuild`)
    #[arg(long, env = "NEARDUP_REBUILD_INDEX")]
    pub rebuild_index: Option<String>,

    /// Index patterns of the `neardup` index template [default: articles*,news*]
    #[arg(long, value_delimiter = ',')]
    pub template_patterns: Vec<String>,

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

impl StampedFieldNames {
    /// The names from the flags, else the config file, else the defaults:
    /// `(class field, own-fingerprint field)`.
    fn resolve(self, file: &ConfigFile) -> (String, String) {
        (
            self.root_field
                .or_else(|| file.root_field.clone())
                .unwrap_or_else(|| "cluster_root".to_string()),
            self.simhash_field
                .or_else(|| file.simhash_field.clone())
                .unwrap_or_else(|| "simhash".to_string()),
        )
    }
}

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let file = match &cli.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    match cli.command {
        Command::Stamp(args) => run_stamp(args, file),
        Command::Fingerprint(args) => run_fingerprint(args, file),
        Command::Serve(args) => run_serve(args, file),
        Command::Rebuild(args) => run_rebuild(args, file),
        Command::Backfill(args) => run_backfill(args, file),
    }
}

fn run_stamp(args: StampArgs, file: ConfigFile) -> anyhow::Result<()> {
    let (root_field, simhash_field) = args.stamped.resolve(&file);
    let settings = args.engine.or(file.engine);
    let mut engine = settings.build()?;
    let options = StampOptions {
        format: args.format,
        root_field,
        simhash_field,
        time_field: args.time_field,
        skip_invalid: args.skip_invalid,
    };
    if options.root_field == options.simhash_field {
        anyhow::bail!(
            "the root field and the simhash field must differ (both are `{}`)",
            options.root_field
        );
    }
    let (input, input_len): (Box<dyn BufRead>, Option<u64>) = match &args.input {
        Some(path) => {
            let opened = File::open(path)
                .with_context(|| format!("cannot open input {}", path.display()))?;
            let len = opened.metadata().ok().map(|metadata| metadata.len());
            (Box::new(BufReader::with_capacity(1 << 20, opened)), len)
        }
        None => (
            Box::new(BufReader::with_capacity(1 << 20, io::stdin().lock())),
            None,
        ),
    };
    let output: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            File::create(path)
                .with_context(|| format!("cannot create output {}", path.display()))?,
        ),
        None => Box::new(io::stdout().lock()),
    };
    let output = BufWriter::with_capacity(1 << 20, output);
    let on_terminal = io::stderr().is_terminal();
    let show_progress = !args.quiet && on_terminal;
    let progress = show_progress.then(|| new_progress_bar(input_len));
    let summary = stamp(&mut engine, input, output, &options, |bytes| {
        if let Some(bar) = &progress {
            bar.set_position(bytes);
        }
    });
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    let summary = summary?;
    if !args.quiet && (on_terminal || args.summary) {
        eprintln!("neardup stamp: {summary}");
    }
    Ok(())
}

fn new_progress_bar(input_len: Option<u64>) -> indicatif::ProgressBar {
    let bar = match input_len {
        Some(len) => indicatif::ProgressBar::new(len),
        None => indicatif::ProgressBar::new_spinner(),
    };
    let template = match input_len {
        Some(_) => {
            "{spinner} stamping {bytes}/{total_bytes} [{wide_bar}] {bytes_per_sec}, {eta} left"
        }
        None => "{spinner} stamping {bytes} read, {bytes_per_sec}",
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr_with_hz(4));
    bar
}

fn run_fingerprint(args: FingerprintArgs, file: ConfigFile) -> anyhow::Result<()> {
    let settings = args.engine.or(file.engine);
    let fingerprinter = crate::fingerprint::Fingerprinter::new(settings.fingerprint_config())?;
    let texts = if args.texts.is_empty() {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .context("cannot read standard input as UTF-8 text")?;
        vec![text]
    } else {
        args.texts
    };
    let mut out = io::stdout().lock();
    for text in &texts {
        let prepared = fingerprinter.prepare(text);
        let simhash = fingerprinter.simhash(&prepared);
        if args.json {
            let details = serde_json::json!({
                "simhash": format_fingerprint(simhash),
                "exact_hash": format_fingerprint(prepared.exact_hash),
                "chars": prepared.char_count,
                "short": fingerprinter.is_short(&prepared),
            });
            writeln!(out, "{details}")?;
        } else {
            writeln!(out, "{}", format_fingerprint(simhash))?;
        }
    }
    Ok(())
}

fn run_serve(args: ServeArgs, file: ConfigFile) -> anyhow::Result<()> {
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
    let (root_field, simhash_field) = args.stamped.resolve(&file);
    let engine_settings = args.engine.or(file.engine);
    let serve_settings = args.serve.or(file.serve);
    let parts = engine_settings.parts()?;
    let default_analyzer =
        crate::engine::Analyzer::new(parts.fingerprinter.clone(), &parts.confirmation);
    let analyzers = Analyzers::new(default_analyzer, &engine_settings, &serve_settings.index)?;
    let mut options = ServeOptions::from_settings(&serve_settings, root_field, simhash_field)?;
    options.install_template = args.install_template;
    options.template_patterns = args.template_patterns;
    let state_dir = serve_settings
        .state_dir
        .clone()
        .unwrap_or_else(|| "neardup-state".to_string());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    if let Some(index) = &args.rebuild_index
        && !(state_dir.is_empty() || state_dir == "none")
        && !has_state(std::path::Path::new(&state_dir))
    {
        let fields = crate::rebuild::RebuildFields {
            root_field: options.root_field.clone(),
            simhash_field: options.simhash_field.clone(),
            time_field: None,
        };
        let summary = rebuild_into(
            &runtime,
            &options.upstream,
            index,
            None,
            &fields,
            &engine_settings,
            std::path::Path::new(&state_dir),
            false,
        )?;
        tracing::info!(
            index,
            documents = summary.documents,
            classes = summary.roots,
            unstamped = summary.unstamped,
            "no state: rebuilt from the index"
        );
    }
    let (store, ledger) = if state_dir.is_empty() || state_dir == "none" {
        tracing::warn!("no state directory: the forest lives in memory only");
        (None, parts.ledger(None)?)
    } else {
        let store_options = crate::persist::StoreOptions {
            dir: PathBuf::from(&state_dir),
            fsync: options.fsync,
            snapshot_after_log_bytes: crate::units::parse_size(
                serve_settings.snapshot_after.as_deref().unwrap_or("256mb"),
            )? as u64,
            settings_digest: engine_settings.fingerprint_digest(),
        };
        let started = std::time::Instant::now();
        let (store, ledger, report) =
            crate::persist::Store::open(store_options, |snapshot| parts.ledger(snapshot))?;
        log_recovery(&state_dir, &report, &ledger, started.elapsed());
        (Some(store), ledger)
    };
    let sidecar = std::sync::Arc::new(Sidecar::new(ledger, store, analyzers, &options)?);
    let history_settings = engine_settings.clone();
    sidecar.install_backfill(crate::backfill::BackfillSettings {
        root_field: options.root_field.clone(),
        simhash_field: options.simhash_field.clone(),
        state_dir: crate::backfill::offline::state_dir(&state_dir),
        history_engine: std::sync::Arc::new(move || history_settings.build()),
        max_docs_per_second: options.backfill_max_docs_per_second,
    });
    runtime.block_on(crate::serve::run(sidecar, &options))
}

fn log_recovery(
    state_dir: &str,
    report: &crate::persist::RecoveryReport,
    ledger: &Ledger,
    elapsed: std::time::Duration,
) {
    let stats = ledger.engine().forest().stats();
    for unreadable in &report.unreadable_snapshots {
        tracing::error!(snapshot = %unreadable, "snapshot unreadable, an older state is used");
    }
    if let Some(cut) = &report.cut {
        tracing::error!(
            %cut,
            dropped_bytes = report.dropped_bytes,
            "state log damaged (a torn write?): cut there, nothing after it replayed"
        );
    }
    if report.settings_changed {
        tracing::warn!(
            "the state was written under other fingerprint settings: new documents will not match old stamps; consider `neardup rebuild`"
        );
    }
    tracing::info!(
        state_dir,
        snapshot_seq = report.snapshot_seq,
        replayed_effects = report.replayed_effects,
        nodes = stats.nodes,
        documents = stats.documents,
        elapsed_ms = elapsed.as_millis() as u64,
        snapshot_read_ms = report.snapshot_read.as_millis() as u64,
        state_build_ms = report.state_build.as_millis() as u64,
        log_replay_ms = report.log_replay.as_millis() as u64,
        "state recovered"
    );
}

/// Whether `dir` holds state files (a snapshot or a log).
fn has_state(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with("snapshot-") || name.starts_with("log-")
        })
    })
}

/// Reads `index` and writes its forest as a snapshot into `state_dir`.
#[allow(clippy::too_many_arguments)]
fn rebuild_into(
    runtime: &tokio::runtime::Runtime,
    upstream_url: &str,
    index: &str,
    authorization: Option<&str>,
    fields: &crate::rebuild::RebuildFields,
    engine_settings: &EngineSettings,
    state_dir: &std::path::Path,
    show_progress: bool,
) -> anyhow::Result<crate::rebuild::RebuildSummary> {
    let parts = engine_settings.parts()?;
    let analyzer = crate::engine::Analyzer::new(parts.fingerprinter.clone(), &parts.confirmation);
    let upstream =
        crate::upstream::Upstream::new(upstream_url, std::time::Duration::from_secs(120))?;
    let mut headers = axum::http::HeaderMap::new();
    if let Some(value) = authorization {
        headers.insert(
            axum::http::header::AUTHORIZATION,
            axum::http::HeaderValue::from_str(value).context("invalid authorization value")?,
        );
    }
    let now = crate::units::now_millis();
    let bar = show_progress.then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} documents {wide_bar} {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let (documents, unstamped) = runtime.block_on(crate::rebuild::read_index(
        &upstream,
        index,
        &headers,
        fields,
        &analyzer,
        now,
        |read, total| {
            if let Some(bar) = &bar {
                bar.set_length(total);
                bar.set_position(read);
            }
        },
    ))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let (mut state, mut summary) = crate::rebuild::assemble(documents, now);
    summary.unstamped = unstamped;
    state.settings_digest = engine_settings.fingerprint_digest();
    let options = crate::persist::StoreOptions {
        dir: state_dir.to_path_buf(),
        fsync: crate::persist::FsyncPolicy::EveryRequest,
        snapshot_after_log_bytes: u64::MAX,
        settings_digest: engine_settings.fingerprint_digest(),
    };
    let (store, ledger, _) = crate::persist::Store::open(options, |_| parts.ledger(Some(state)))?;
    store.snapshot(&ledger, now)?;
    Ok(summary)
}

fn run_rebuild(args: RebuildArgs, file: ConfigFile) -> anyhow::Result<()> {
    let (root_field, simhash_field) = args.stamped.resolve(&file);
    let engine_settings = args.engine.or(file.engine);
    let upstream = args
        .upstream
        .or(file.serve.upstream.clone())
        .unwrap_or_else(|| "http://127.0.0.1:9200".to_string());
    let state_dir = PathBuf::from(
        args.state_dir
            .or(file.serve.state_dir.clone())
            .unwrap_or_else(|| "neardup-state".to_string()),
    );
    if has_state(&state_dir) {
        if !args.force {
            anyhow::bail!(
                "{} already holds a state; --force replaces it",
                state_dir.display()
            );
        }
        for entry in std::fs::read_dir(&state_dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with("snapshot-") || name.starts_with("log-") {
                std::fs::remove_file(entry.path())?;
            }
        }
    }
    let fields = crate::rebuild::RebuildFields {
        root_field,
        simhash_field,
        time_field: args.time_field,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let started = std::time::Instant::now();
    let on_terminal = io::stderr().is_terminal() && !args.quiet;
    let summary = rebuild_into(
        &runtime,
        &upstream,
        &args.index,
        args.authorization.as_deref(),
        &fields,
        &engine_settings,
        &state_dir,
        on_terminal,
    )?;
    if !args.quiet {
        eprintln!(
            "neardup rebuild: {} documents into {} classes ({} nodes, {} roots without their own document) from {} in {:.1}s; {} unstamped documents skipped",
            summary.documents,
            summary.roots,
            summary.nodes,
            summary.roots_without_document,
            args.index,
            started.elapsed().as_secs_f64(),
            summary.unstamped
        );
    }
    Ok(())
}

fn run_backfill(args: BackfillArgs, file: ConfigFile) -> anyhow::Result<()> {
    let (root_field, simhash_field) = args.stamped.resolve(&file);
    let engine_settings = args.engine.or(file.engine);
    let upstream_url = args
        .upstream
        .or(file.serve.upstream.clone())
        .unwrap_or_else(|| "http://127.0.0.1:9200".to_string());
    let state_dir_text = args
        .state_dir
        .or(file.serve.state_dir.clone())
        .unwrap_or_else(|| "neardup-state".to_string());
    let state_dir = crate::backfill::offline::state_dir(&state_dir_text);
    let parts = engine_settings.parts()?;
    let default_analyzer =
        crate::engine::Analyzer::new(parts.fingerprinter.clone(), &parts.confirmation);
    let analyzers = Analyzers::new(default_analyzer, &engine_settings, &file.serve.index)?;
    let (store, ledger) = match &state_dir {
        None => (None, parts.ledger(None)?),
        Some(dir) => {
            let options = crate::persist::StoreOptions {
                dir: dir.clone(),
                fsync: crate::persist::FsyncPolicy::EveryRequest,
                snapshot_after_log_bytes: u64::MAX,
                settings_digest: engine_settings.fingerprint_digest(),
            };
            let (store, ledger, _) =
                crate::persist::Store::open(options, |snapshot| parts.ledger(snapshot))?;
            (Some(store), ledger)
        }
    };
    let mut headers = axum::http::HeaderMap::new();
    if let Some(value) = &args.authorization {
        headers.insert(
            axum::http::header::AUTHORIZATION,
            axum::http::HeaderValue::from_str(value).context("invalid authorization value")?,
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let forest = std::sync::Arc::new(crate::backfill::offline::OfflineForest {
        ledger: parking_lot::Mutex::new(ledger),
        store,
        upstream: crate::upstream::Upstream::new(
            &upstream_url,
            std::time::Duration::from_secs(120),
        )?,
        analyzers,
    });
    let history_settings = engine_settings.clone();
    let settings = crate::backfill::BackfillSettings {
        root_field,
        simhash_field,
        state_dir,
        history_engine: std::sync::Arc::new(move || history_settings.build()),
        max_docs_per_second: None,
    };
    let request = crate::backfill::BackfillRequest {
        index: args.index,
        time_field: args.time_field,
        tiebreak_field: args.tiebreak_field,
        max_docs_per_second: args.max_docs_per_second,
        page_size: args.page_size,
        restart: args.restart,
    };
    let on_terminal = crate::backfill::offline::on_terminal();
    let summary = crate::backfill::offline::run(
        &runtime,
        forest,
        settings,
        request,
        headers,
        on_terminal && !args.quiet,
    )?;
    if !args.quiet {
        eprintln!("neardup backfill: {summary}");
    }
    Ok(())
}
