//! When the log's written frames are forced to disk: the `--fsync` policy.
//!
//! Motivation: an fsync per request is the safe default and the slowest;
//! some deployments trade the last second of a machine crash for speed.
//! The policy is parsed once, where the options are validated.
//!
//! Design: three policies (every request, an interval, never), parsed from
//! the flag's text; the store (`super::store`) applies them.
//!
//! Consequences: a killed process loses nothing the client was told under
//! every policy (frames are written at each point); only a machine crash
//! can lose up to the interval.

use std::str::FromStr;
use std::time::Duration;

/// When written frames are forced to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// Before the sidecar forwards a request and before it answers one.
    EveryRequest,
    /// At most this long after a write.
    Interval(Duration),
    /// Never by the sidecar (the OS writes back on its own).
    Never,
}

impl FromStr for FsyncPolicy {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim() {
            "request" | "always" => Ok(FsyncPolicy::EveryRequest),
            "never" => Ok(FsyncPolicy::Never),
            other => match crate::units::parse_duration(other, "fsync interval") {
                Ok(Some(millis)) if millis > 0 => Ok(FsyncPolicy::Interval(Duration::from_millis(
                    millis.unsigned_abs(),
                ))),
                _ => Err(format!(
                    "fsync policy `{other}`: expected `request`, `never` or an interval such as `1s`"
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsync_policies_parse() {
        assert_eq!("request".parse(), Ok(FsyncPolicy::EveryRequest));
        assert_eq!("never".parse(), Ok(FsyncPolicy::Never));
        assert_eq!(
            "250ms".parse(),
            Ok(FsyncPolicy::Interval(Duration::from_millis(250)))
        );
        assert!("sometimes".parse::<FsyncPolicy>().is_err());
        assert!("0s".parse::<FsyncPolicy>().is_err());
    }
}
