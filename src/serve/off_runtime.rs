//! CPU work of a request kept off the async runtime.
//!
//! Motivation: an async worker that parses a 100 MB bulk answer, copies a
//! stamped body or settles thirty thousand items under the ledger lock
//! stalls every other task it carries: health probes, pass-through
//! searches, the Explorer (issue 29). Work that owns its inputs goes to the
//! blocking pool (`spawn_blocking`: analysis, placement); work that borrows
//! the request's data runs here.
//!
//! Design: [`off_the_runtime`] is tokio's `block_in_place`: the worker hands
//! its other tasks to the rest of the runtime, runs the closure, and takes
//! tasks again. On a current-thread runtime (unit tests) there is no one to
//! hand them to, so the closure runs in place.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work` without holding up the other tasks of this async worker.
pub fn off_the_runtime<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn other_tasks_run_while_a_worker_is_busy() {
        let (sender, receiver) = std::sync::mpsc::channel();
        // A task on the runtime that must make progress while the work
        // below holds this worker.
        let ticker = tokio::spawn(async move {
            for tick in 0..5 {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                let _ = sender.send(tick);
            }
        });
        let ticks = off_the_runtime(|| {
            let mut seen = 0;
            while seen < 5 {
                if receiver
                    .recv_timeout(std::time::Duration::from_secs(5))
                    .is_ok()
                {
                    seen += 1;
                } else {
                    break;
                }
            }
            seen
        });
        assert_eq!(ticks, 5);
        let _ = ticker.await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn on_a_current_thread_runtime_it_runs_in_place() {
        assert_eq!(off_the_runtime(|| 7), 7);
    }
}
