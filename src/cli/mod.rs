//! The `neardup` command line: flags → validated settings → one command run.
//!
//! `main.rs` only parses and maps the result to an exit code. Here each
//! command's flags are merged with the config file (flags first), validated
//! by `config`, and handed to the module that runs the command: `stamp`,
//! `serve::startup::start`, `rebuild::rebuild_into`, `backfill::offline`. The async
//! runtime is built in one place, `async_runtime`, for every command that
//! talks to the cluster.

mod args;
mod health;

use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

pub use crate::config::StampedFieldNames;
use crate::config::{ConfigFile, JobSettings, SidecarConfig, job_store, state_directory};
use crate::stamp::{StampFiles, StampOptions, stamp_files};
use crate::units::format_fingerprint;
pub use args::{BackfillArgs, FingerprintArgs, RebuildArgs, ServeArgs, StampArgs};
pub use health::HealthArgs;

/// The version `--version` prints and the sidecar logs at start: the
/// crate's, the commit and the build profile (`build.rs`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("NEARDUP_COMMIT"),
    ", ",
    env!("NEARDUP_PROFILE"),
    " build)"
);

/// neardup groups near-duplicate articles as they are indexed.
///
/// Every document is simhashed, assigned to an equivalence class of near
/// duplicates (a tree of the parent forest) and stamped with the class id
/// (`cluster_root`) and its own fingerprint (`simhash`), 16 hex digits each.
/// Settings come from flags, then NEARDUP_* environment variables, then the
/// --config file, then defaults.
#[derive(Debug, Parser)]
#[command(name = "neardup", version = VERSION, about, long_about)]
pub struct Cli {
    /// TOML config file: `root_field`, `simhash_field` at the top, engine settings (fields, mode, max_distance, retention, …) in an [engine] table, the sidecar's (upstream, state_dir, template_patterns, …) in [serve], with [serve.upstream_tls] and [[serve.index]]; flags and NEARDUP_* variables win over it
    #[arg(long, global = true, env = "NEARDUP_CONFIG")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// Parses the process's command line like [`Parser::parse`] (printing
/// clap's message and exiting on an error), and when a rejected value came
/// from a `NEARDUP_*` variable rather than the command line, says which:
/// clap names only the flag, which the user may never have typed.
pub fn parse_command_line() -> Cli {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => {
            if let Some(variable) = variable_behind(&error, &args) {
                let _ = error.print();
                eprintln!(
                    "note: the value came from the environment variable {variable}; fix or unset it"
                );
                std::process::exit(error.exit_code());
            }
            if let Some(file) = input_file_without_flag(&error, &args) {
                let _ = error.print();
                eprintln!(
                    "note: the input file goes after --input: `neardup stamp --input {file}`"
                );
                std::process::exit(error.exit_code());
            }
            error.exit()
        }
    }
}

/// The word `stamp` was given as a bare argument (`neardup stamp FILE`),
/// which clap calls only "unexpected": the file, to name `--input`.
fn input_file_without_flag(error: &clap::Error, args: &[std::ffi::OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument || !args.iter().any(|arg| arg == "stamp") {
        return None;
    }
    let Some(ContextValue::String(argument)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    (!argument.starts_with('-')).then(|| argument.clone())
}

/// The environment variable a rejected value came from: the error names a
/// flag that has one, the variable is set, and the flag is not on the
/// command line.
fn variable_behind(error: &clap::Error, args: &[std::ffi::OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(
        error.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return None;
    }
    let Some(ContextValue::String(named)) = error.get(ContextKind::InvalidArg) else {
        return None;
    };
    let flag = named.split_whitespace().next()?.trim_start_matches('-');
    fn find(command: &clap::Command, long: &str) -> Option<(Option<char>, String)> {
        command
            .get_arguments()
            .find(|arg| arg.get_long() == Some(long))
            .and_then(|arg| {
                let variable = arg.get_env()?.to_str()?.to_string();
                Some((arg.get_short(), variable))
            })
            .or_else(|| command.get_subcommands().find_map(|sub| find(sub, long)))
    }
    let (short, variable) = find(&<Cli as clap::CommandFactory>::command(), flag)?;
    std::env::var_os(&variable)?;
    let on_command_line = args.iter().skip(1).any(|arg| {
        let arg = arg.to_string_lossy();
        let long = format!("--{flag}");
        arg == long
            || arg.starts_with(&format!("{long}="))
            || short.is_some_and(|short| {
                arg.starts_with('-') && !arg.starts_with("--") && arg.contains(short)
            })
    });
    (!on_command_line).then_some(variable)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Stamp documents offline (no cluster): JSON lines or bulk NDJSON in, the same lines with cluster_root and simhash out
    Stamp(StampArgs),
    /// Print the fingerprint of texts given as arguments (or of standard input)
    Fingerprint(FingerprintArgs),
    /// Run the sidecar: a drop-in proxy in front of the cluster that stamps every indexed document
    Serve(Box<ServeArgs>),
    /// Rebuild the sidecar's state (the forest) from the stamped documents of an index
    Rebuild(RebuildArgs),
    /// Stamp the documents an index already holds, oldest first, into the state directory's forest (no sidecar may be running on it; in a running sidecar use POST /_neardup/backfill)
    Backfill(BackfillArgs),
    /// Ask a running sidecar whether it is ready (--live: alive): exit 0 if so, 1 if not; for a container's health check (the image has no shell or curl)
    Health(HealthArgs),
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
        Command::Serve(args) => run_serve(*args, file),
        Command::Rebuild(args) => run_rebuild(args, file),
        Command::Backfill(args) => run_backfill(args, file),
        Command::Health(args) => health::run_health(args, file),
    }
}

/// The one async runtime of a command: the sidecar's, or the one a
/// whole-index job reads the cluster on.
fn async_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn run_stamp(args: StampArgs, file: ConfigFile) -> anyhow::Result<()> {
    let fields = args.stamped.resolve(&file);
    let mut engine = args.engine.or(file.engine).build()?;
    let options = StampOptions {
        format: args.format,
        root_field: fields.root_field,
        simhash_field: fields.simhash_field,
        time_field: args.time_field,
        skip_invalid: args.skip_invalid,
        threads: args.threads.map_or_else(
            || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
            usize::from,
        ),
    };
    let on_terminal = io::stderr().is_terminal();
    let files = StampFiles {
        input: args.input,
        output: args.output,
        show_progress: !args.quiet && on_terminal,
    };
    let summary = stamp_files(&mut engine, &files, &options)?;
    if !args.quiet && (on_terminal || args.summary) {
        eprintln!("neardup stamp: {summary}");
    }
    Ok(())
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
    // A text without letters or digits has no fingerprint: the engine
    // never stamps one (all such texts would share a class).
    for (position, text) in texts.iter().enumerate() {
        if fingerprinter.prepare(text).char_count == 0 {
            anyhow::bail!(
                "text {} has no letters or digits to fingerprint",
                position + 1
            );
        }
    }
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
    let fields = args.stamped.resolve(&file);
    let serve_settings = args.serve.or(file.serve);
    let config = SidecarConfig::validate(args.engine.or(file.engine), &serve_settings, fields)?;
    crate::serve::startup::start(&async_runtime()?, config, args.rebuild_index.as_deref())
}

fn run_rebuild(args: RebuildArgs, file: ConfigFile) -> anyhow::Result<()> {
    let fields = args.stamped.resolve(&file);
    let engine_settings = args.engine.or(file.engine);
    let job = JobSettings {
        upstream: args.upstream,
        state_dir: args.state_dir,
        authorization: args.authorization,
        tls: args.upstream_tls,
    }
    .validate(&file.serve)?;
    let state_dir = PathBuf::from(job.state_dir);
    if crate::persist::holds_state(&state_dir) {
        if !args.force {
            anyhow::bail!(
                "{} already holds a state; --force replaces it",
                state_dir.display()
            );
        }
        crate::persist::remove_state(&state_dir)?;
    }
    let runtime = async_runtime()?;
    let started = std::time::Instant::now();
    let options = crate::rebuild::RebuildOptions {
        upstream: job.upstream,
        index: args.index.clone(),
        headers: job.headers,
        tls: job.tls,
        fields: crate::rebuild::RebuildFields {
            root_field: fields.root_field,
            simhash_field: fields.simhash_field,
            time_field: args.time_field,
        },
        parts: engine_settings.parts()?,
        store: job_store(state_dir, engine_settings.fingerprint_digest()),
        show_progress: io::stderr().is_terminal() && !args.quiet,
    };
    let summary = crate::rebuild::rebuild_into(&runtime, options)?;
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
    let fields = args.stamped.resolve(&file);
    let engine = args.engine.or(file.engine);
    let job = JobSettings {
        upstream: args.upstream,
        state_dir: args.state_dir,
        authorization: args.authorization,
        tls: args.upstream_tls,
    }
    .validate(&file.serve)?;
    let parts = engine.parts()?;
    let analyzers = crate::config::Analyzers::of_engine(&parts, &engine, &file.serve.index)?;
    let store = state_directory(Some(&job.state_dir))
        .map(|dir| job_store(dir, engine.fingerprint_digest()));
    let options = crate::backfill::offline::OfflineOptions {
        engine,
        parts,
        analyzers,
        store,
        upstream: job.upstream,
        headers: job.headers,
        tls: job.tls,
        fields,
        request: crate::backfill::BackfillRequest {
            index: args.index,
            time_field: args.time_field,
            tiebreak_field: args.tiebreak_field,
            max_docs_per_second: args.max_docs_per_second,
            page_size: args.page_size,
            restart: args.restart,
        },
        show_progress: io::stderr().is_terminal() && !args.quiet,
    };
    let summary = crate::backfill::offline::backfill(&async_runtime()?, options)?;
    if !args.quiet {
        eprintln!("neardup backfill: {summary}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;
    use crate::config::defaults::{
        DEFAULT_LISTEN, DEFAULT_MAX_CONTENT_LENGTH, DEFAULT_MAX_IN_FLIGHT_BYTES,
        DEFAULT_ROOT_FIELD, DEFAULT_SIMHASH_FIELD, DEFAULT_SNAPSHOT_AFTER, DEFAULT_STATE_DIR,
        DEFAULT_UPSTREAM, DEFAULT_UPSTREAM_TIMEOUT,
    };

    /// Flags that say what one run does (its input and output, the index
    /// it reads, how much it prints), not how neardup is set up: they have
    /// no variable.
    const PER_RUN_FLAGS: &[&str] = &[
        "input",
        "output",
        "format",
        "skip-invalid",
        "quiet",
        "summary",
        "json",
        "restart",
        "force",
        "index",
        "help",
        "version",
    ];

    /// A container is configured by its environment: every setting of every
    /// command has a `NEARDUP_*` variable, no two flags of a command share
    /// one, and the sidecar's are named after the flag, so that they can be
    /// guessed (`health` reads the sidecar's `NEARDUP_LISTEN` and
    /// `NEARDUP_TLS_CERT`).
    #[test]
    fn every_setting_has_a_neardup_variable() {
        let mut checked = 0;
        for command in Cli::command().get_subcommands() {
            let mut seen = std::collections::HashSet::new();
            for argument in command.get_arguments() {
                let Some(long) = argument.get_long() else {
                    continue;
                };
                if PER_RUN_FLAGS.contains(&long) {
                    continue;
                }
                let name = command.get_name();
                let variable = argument
                    .get_env()
                    .and_then(|variable| variable.to_str())
                    .unwrap_or_default();
                assert!(
                    variable.starts_with("NEARDUP_"),
                    "neardup {name} --{long} has no NEARDUP_* variable"
                );
                assert!(seen.insert(variable), "neardup {name}: {variable} twice");
                if name == "serve" || (name == "health" && ["listen", "tls-cert"].contains(&long)) {
                    let expected = format!("NEARDUP_{}", long.to_uppercase().replace('-', "_"));
                    assert_eq!(variable, expected, "neardup {name} --{long}");
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} flags checked");
    }

    /// The `[default: …]` of a flag's help is written in its doc comment;
    /// it must name the constant the code falls back to.
    #[test]
    fn help_texts_name_the_defaults_the_code_uses() {
        let defaults = [
            ("upstream", DEFAULT_UPSTREAM),
            ("listen", DEFAULT_LISTEN),
            ("state-dir", DEFAULT_STATE_DIR),
            ("max-content-length", DEFAULT_MAX_CONTENT_LENGTH),
            ("upstream-timeout", DEFAULT_UPSTREAM_TIMEOUT),
            ("max-in-flight-bytes", DEFAULT_MAX_IN_FLIGHT_BYTES),
            ("snapshot-after", DEFAULT_SNAPSHOT_AFTER),
            ("root-field", DEFAULT_ROOT_FIELD),
            ("simhash-field", DEFAULT_SIMHASH_FIELD),
        ];
        let mut checked = 0;
        for command in Cli::command().get_subcommands() {
            for argument in command.get_arguments() {
                let Some((_, default)) = defaults
                    .iter()
                    .find(|(name, _)| argument.get_long() == Some(*name))
                else {
                    continue;
                };
                let help = argument.get_help().map(ToString::to_string);
                let help = help.unwrap_or_default();
                assert!(
                    help.contains(&format!("[default: {default}]")),
                    "neardup {} --{}: {help}",
                    command.get_name(),
                    argument.get_long().unwrap_or_default()
                );
                checked += 1;
            }
        }
        // serve has all nine; stamp, rebuild and backfill share some.
        assert!(checked >= 9 + 2 + 4 + 4, "only {checked} flags checked");
    }
}
