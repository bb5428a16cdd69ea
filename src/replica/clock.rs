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
//! candidate's takeover cannot overlap (at the bound, a holder's clock 10 %
//! slow and a candidate's 10 % fast, each measures exactly `L` of real
//! time; the test checks the methods themselves over that range).

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

    /// The shortest wait, on the candidate's clock, after which
    /// [`Lease::may_take_over`] holds (found through the method itself).
    fn takeover_wait(lease: Lease) -> Duration {
        let first_seen = Duration::from_secs(1_000);
        let (mut low, mut high) = (Duration::ZERO, lease.0 * 10);
        while high - low > Duration::from_micros(1) {
            let middle = low + (high - low) / 2;
            if lease.may_take_over(first_seen, first_seen + middle) {
                high = middle;
            } else {
                low = middle;
            }
        }
        high
    }

    #[test]
    fn the_holder_stops_before_a_candidate_may_start_with_clocks_ten_percent_off() {
        for lease in [2, 5, 60].map(|seconds| Lease(Duration::from_secs(seconds))) {
            let sent = Duration::from_secs(100);
            let acting = lease.acting_until(sent) - sent;
            let waiting = takeover_wait(lease);
            // A clock running at `rate` times real speed measures `d` after
            // `d / rate` of real time. The candidate first saw the renewal
            // no earlier than it was sent (same real instant at worst).
            for holder_rate in [0.9, 0.95, 1.0, 1.05, 1.1] {
                for candidate_rate in [0.9, 0.95, 1.0, 1.05, 1.1] {
                    let holder_stops = acting.as_secs_f64() / holder_rate;
                    let candidate_starts = waiting.as_secs_f64() / candidate_rate;
                    assert!(
                        holder_stops <= candidate_starts + 1e-6,
                        "lease {:?}: the holder (clock at {holder_rate}) acts for {holder_stops:.4} s of real time, a candidate (clock at {candidate_rate}) takes over after {candidate_starts:.4} s",
                        lease.0
                    );
                }
            }
        }
        let lease = Lease(Duration::from_secs(5));
        assert_eq!(lease.renew_every(), Duration::from_secs(5) / 3);
        // Three renewals fit in the acting window.
        assert!(lease.renew_every() * 2 < lease.acting_until(Duration::ZERO));
    }

    #[test]
    fn boottime_goes_forward() {
        let first = boottime();
        std::thread::sleep(Duration::from_millis(2));
        assert!(boottime() > first);
    }
}
