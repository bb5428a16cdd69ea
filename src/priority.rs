//! What a thread that works beside a more urgent one asks of the kernel:
//! to go after it for the disk, or for the cores.
//!
//! Motivation: two kinds of work run beside work they must not slow. The
//! check of the side records after recovery reads tens of gigabytes while
//! placements wait on single pages; and recovery's helper threads (the
//! document keys, the walk over the side records' indexes, the candidate
//! indexes) run beside the forest's chain of builds (slots, numbers,
//! trees), which nothing can split and which ends recovery. The kernel
//! shares the disk and the cores evenly between threads, so the urgent
//! work got a fraction of each.
//!
//! Design: the helper asks for itself, on its own thread: the idle I/O
//! class for the disk, a nice value above the process's for the cores.
//! The urgent threads keep theirs; nothing needs a privilege, and a
//! refusal (another platform, a sandbox) only leaves the sharing even.
//!
//! Consequences: threads a helper starts inherit its priority; the
//! helpers here are scoped to their task and start none that outlive it.

/// `ioprio_set`'s constants (linux/ioprio.h): the idle class, where a
/// priority's class sits, and "one thread (or process)".
const IOPRIO_CLASS_IDLE: libc::c_long = 3;
const IOPRIO_CLASS_SHIFT: libc::c_long = 13;
const IOPRIO_WHO_PROCESS: libc::c_long = 1;

/// Puts this thread's reads in the idle I/O class: the device serves them
/// when placements' own reads (a candidate's record, a page fault) do not
/// wait. The check reads tens of gigabytes in megabytes at a time, and
/// a placement's one page queued behind them waited 11–13 ms at p99
/// (`docs/performance.md`, twenty-seventh part); in the idle class, 6 ms.
/// Schedulers that keep no classes (`none`) ignore it; an error changes
/// only the order of reads.
pub fn yield_the_disk() {
    // SAFETY: `ioprio_set` on the calling thread (who 0) changes only the
    // class its reads are queued in.
    unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT,
        );
    }
}

/// How far below the process's own priority a helper of recovery runs: at
/// +10 the kernel gives a thread of the process's priority about nine
/// tenths of a core it shares with one such helper.
const HELPER_NICENESS: libc::c_int = 10;

/// Lowers this thread's priority for the cores ([`HELPER_NICENESS`]
/// above the process's): a thread that works beside a chain that ends
/// recovery takes the cores it leaves. At 100 M nodes the forest's chain
/// had about 60 % of a core while four helpers shared the two
/// (`docs/performance.md`, twenty-ninth part).
pub fn yield_the_cores() {
    #[cfg(target_os = "linux")]
    // SAFETY: `getpriority` and `setpriority` on the calling thread (who
    // 0: Linux keeps a nice value per thread) change only its share of
    // the cores; raising one's own nice value needs no privilege.
    unsafe {
        let own = libc::getpriority(libc::PRIO_PROCESS, 0);
        libc::setpriority(libc::PRIO_PROCESS, 0, (own + HELPER_NICENESS).min(19));
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{IOPRIO_CLASS_IDLE, IOPRIO_CLASS_SHIFT, IOPRIO_WHO_PROCESS};

    #[test]
    fn a_thread_that_yields_the_disk_reads_in_the_idle_io_class() {
        let class = std::thread::spawn(|| {
            super::yield_the_disk();
            // SAFETY: `ioprio_get` of the calling thread reads its class.
            let value = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) };
            value >> IOPRIO_CLASS_SHIFT
        })
        .join()
        .expect("thread");
        assert_eq!(class, IOPRIO_CLASS_IDLE, "the idle class");
    }

    fn own_niceness() -> libc::c_int {
        // SAFETY: reads the calling thread's nice value.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[test]
    fn a_helper_yields_the_cores_and_the_thread_that_started_it_does_not() {
        let before = own_niceness();
        let helper = std::thread::spawn(|| {
            let inherited = own_niceness();
            super::yield_the_cores();
            (inherited, own_niceness())
        })
        .join()
        .expect("the helper ran");
        assert_eq!(helper, (before, (before + super::HELPER_NICENESS).min(19)));
        assert_eq!(own_niceness(), before);
    }
}
