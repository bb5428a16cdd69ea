//! The `neardup` binary: parse the command line, run it, print the error
//! chain and exit non-zero on failure. Everything else lives in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    ignore_file_size_signal();
    neardup::allocator::keep_large_blocks_mapped();
    let cli = neardup::cli::parse_command_line();
    match neardup::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if is_broken_pipe(&error) {
                // `neardup stamp … | head` is not an error.
                return ExitCode::SUCCESS;
            }
            eprintln!("neardup: error: {error}");
            // A cause the message above already quotes is not repeated.
            let mut said = error.to_string();
            for cause in error.chain().skip(1) {
                let cause = cause.to_string();
                if !said.contains(&cause) {
                    eprintln!("  caused by: {cause}");
                }
                said.push_str(&cause);
            }
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io_error| io_error.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Under a file-size limit (`RLIMIT_FSIZE`) a write past it raises SIGXFSZ,
/// which kills the process by default. Ignored from the first instruction,
/// the write fails with `EFBIG` instead, and the state store retries it
/// like a full disk (as PostgreSQL does).
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: `signal` with `SIG_IGN` installs no handler code; it runs
    // before any other thread exists.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
