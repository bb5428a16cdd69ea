//! `neardup stamp`'s files: the input and output opened (standard input
//! and output when not named), buffered, and a progress bar.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;

use super::options::{StampOptions, StampSummary};
use super::run::stamp;
use crate::engine::Engine;

/// Where `neardup stamp` reads and writes, and whether it shows progress.
#[derive(Debug, Clone, Default)]
pub struct StampFiles {
    /// `None`: standard input.
    pub input: Option<PathBuf>,
    /// `None`: standard output.
    pub output: Option<PathBuf>,
    /// A progress bar on standard error (bytes read of the input's length).
    pub show_progress: bool,
}

/// Bytes buffered on each side of a file run.
const FILE_BUFFER_BYTES: usize = 1 << 20;

/// [`stamp`] from `files.input` to `files.output` (`neardup stamp`).
///
/// # Errors
///
/// Both stamped fields of one name, a file that cannot be opened or
/// created, or what [`stamp`] stops on.
pub fn stamp_files(
    engine: &mut Engine,
    files: &StampFiles,
    options: &StampOptions,
) -> anyhow::Result<StampSummary> {
    if options.root_field == options.simhash_field {
        anyhow::bail!(
            "the root field and the simhash field must differ (both are `{}`)",
            options.root_field
        );
    }
    let (input, input_len): (Box<dyn BufRead + Send>, Option<u64>) = match &files.input {
        Some(path) => {
            let opened = File::open(path)
                .with_context(|| format!("cannot open input {}", path.display()))?;
            let len = opened.metadata().ok().map(|metadata| metadata.len());
            (
                Box::new(BufReader::with_capacity(FILE_BUFFER_BYTES, opened)),
                len,
            )
        }
        None => (
            Box::new(BufReader::with_capacity(FILE_BUFFER_BYTES, io::stdin())),
            None,
        ),
    };
    let output: Box<dyn Write + Send> = match &files.output {
        Some(path) => Box::new(
            File::create(path)
                .with_context(|| format!("cannot create output {}", path.display()))?,
        ),
        None => Box::new(io::stdout()),
    };
    let output = BufWriter::with_capacity(FILE_BUFFER_BYTES, output);
    let progress = files.show_progress.then(|| new_progress_bar(input_len));
    let summary = stamp(engine, input, output, options, |bytes| {
        if let Some(bar) = &progress {
            bar.set_position(bytes);
        }
    });
    if let Some(bar) = &progress {
        bar.finish_and_clear();
    }
    Ok(summary?)
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
