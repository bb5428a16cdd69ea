//! The lease's arithmetic, on a clock that keeps running while the process
//! or the machine is stopped.
//!
//! Motivation: a leader that was paused (SIGSTOP, a suspended VM) must find
//! its lease gone when it wakes, and no two members may compare clock
//! *values*: only the rate of their clocks may matter.
//!
//! Design: `CLOCK_BOOTTIME` (it counts suspended time, which
//! `CLOCK_MONOTONIC` does not). The holder acts until `h0 + 0.9·L`, `h0`
//! being when it *sent* the write that gave or renewed its lease; a
//! candidate takes over only after it saw the control document unchanged
//! for more than `1.1·L` on its own clock (docs/standby.md, *The lease*).
//! The renewal runs every `L/3`.
//!
//! Consequences: the renewal lands at the cluster after `h0` and is read by
//! a candidate after that, so the candidate's `s0` is later than `h0`; with
//! each clock within ±10 % of real time the holder's window and the
//! candidate's takeover cannot overlap.

use std::time::Duration;

/// Time since boot, suspended time included.
pub fn boottime() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write into.
    let result = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &raw mut now) };
    if result != 0 {
        // Never on Linux; fall back to a clock that still only goes forward.
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        return START.get_or_init(std::time::Instant::now).elapsed();
    }
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// The lease `L` and the instants derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease(pub Duration);

impl Lease {
    /// Until when a holder whose lease write was sent at `sent` may act.
    pub fn acting_until(self, sent: Duration) -> Duration {
        sent + self.0.mul_f64(0.9)
    }

    /// Whether a candidate that first saw the control document's version
    /// at `first_seen` may take it over at `now`.
    pub fn may_take_over(self, first_seen: Duration, now: Duration) -> bool {
        now > first_seen + self.0.mul_f64(1.1)
    }

    /// How often the holder renews.
    pub fn renew_every(self) -> Duration {
        self.0 / 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_stops_before_a_candidate_may_start() {
        let lease = Lease(Duration::from_secs(5));
        let sent = Duration::from_secs(100);
        assert_eq!(lease.acting_until(sent), Duration::from_millis(104_500));
        // The candidate first saw the renewal no earlier than it was sent.
        assert!(!lease.may_take_over(sent, Duration::from_millis(105_500)));
        assert!(lease.may_take_over(sent, Duration::from_millis(105_501)));
        // Clocks within ±10 %: the holder's 0.9·L at 1.1× speed ends before
        // the candidate's 1.1·L at 0.9× speed begins (real time).
        let holder_real = 0.9 * 5.0 * 1.1;
        let candidate_real = 1.1 * 5.0 * 0.9;
        assert!(holder_real <= candidate_real);
        assert_eq!(lease.renew_every(), Duration::from_secs(5) / 3);
    }

    #[test]
    fn boottime_goes_forward() {
        let first = boottime();
        std::thread::sleep(Duration::from_millis(2));
        assert!(boottime() > first);
    }
}
