//! The replica group's settings (`--replica-group` and its companions, or
//! `replica_*` in the config file's `[serve]`), validated into
//! [`ReplicaOptions`].
//!
//! Motivation: a group is an all-or-nothing choice made at start; a name
//! that could collide with another group's indices, or a lease too short for
//! the cluster's latency, must stop the process before it touches anything.
//!
//! Design: read from [`super::ServeSettings`] (flags, environment, file, in
//! that order); checked here once. The group name is the suffix of the
//! group's index names, so it is restricted to `[a-z0-9][a-z0-9_]{0,47}`
//! (no `-`: one group's index pattern never matches another's). The lease is
//! 2 s to 60 s (docs/standby.md: at least three single-write latencies).
//!
//! Consequences: without `--replica-group` nothing of this exists and the
//! sidecar runs alone, exactly as before.

use std::time::Duration;

use crate::units::parse_duration;

/// Default lease (`--replica-lease`).
pub const DEFAULT_REPLICA_LEASE: &str = "5s";

/// A replica group's validated settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaOptions {
    /// The group's name (`--replica-group`).
    pub group: String,
    /// The first part of this member's node id (`--replica-name`).
    pub name: String,
    /// The lease `L`: renewed every `L/3`, acted on until `0.9·L`, taken
    /// over after `1.1·L` unchanged.
    pub lease: Duration,
    /// How peers reach this member (`--replica-advertise`); `None`: the
    /// address the listener bound.
    pub advertise: Option<String>,
}

/// Validates the group's settings; `None` when no group is asked for.
///
/// # Errors
///
/// A group name outside `[a-z0-9][a-z0-9_]{0,47}`, a lease that is not a
/// duration from 2 s to 60 s, an advertised URL that is not `http(s)://`.
pub fn replica_options(
    group: Option<&str>,
    name: Option<&str>,
    lease: Option<&str>,
    advertise: Option<&str>,
) -> anyhow::Result<Option<ReplicaOptions>> {
    let Some(group) = group else {
        if name.is_some() || lease.is_some() || advertise.is_some() {
            anyhow::bail!(
                "--replica-name, --replica-lease and --replica-advertise need --replica-group"
            );
        }
        return Ok(None);
    };
    if !valid_group(group) {
        anyhow::bail!(
            "replica group `{group}`: expected 1 to 48 characters of a-z, 0-9 and _, starting with a letter or digit (it names the group's indices)"
        );
    }
    let lease_text = lease.unwrap_or(DEFAULT_REPLICA_LEASE);
    let lease = match parse_duration(lease_text, "replica_lease")? {
        Some(millis) if (2_000..=60_000).contains(&millis) => {
            Duration::from_millis(millis.unsigned_abs())
        }
        _ => anyhow::bail!("replica_lease `{lease_text}` must be a duration from 2s to 60s"),
    };
    let name = match name {
        Some(name) => name.to_string(),
        None => host_name(),
    };
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        anyhow::bail!(
            "replica name `{name}`: expected 1 to 64 characters of letters, digits, `-`, `_` and `.`"
        );
    }
    if let Some(url) = advertise
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        anyhow::bail!("replica_advertise `{url}` must be an http:// or https:// URL");
    }
    Ok(Some(ReplicaOptions {
        group: group.to_string(),
        name,
        lease,
        advertise: advertise.map(|url| url.trim_end_matches('/').to_string()),
    }))
}

fn valid_group(group: &str) -> bool {
    let bytes = group.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 48
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The host's name, or `member` when it cannot be read.
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at
    // most that many bytes.
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
    let name: String = String::from_utf8_lossy(&buffer[..end])
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if result != 0 || name.is_empty() {
        "member".to_string()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_group_no_replica_and_companions_need_one() {
        assert_eq!(replica_options(None, None, None, None).unwrap(), None);
        assert!(replica_options(None, Some("a"), None, None).is_err());
        assert!(replica_options(None, None, Some("5s"), None).is_err());
    }

    #[test]
    fn group_names_are_checked() {
        for good in ["news", "a", "news_2", "0abc"] {
            assert!(
                replica_options(Some(good), Some("m"), None, None).is_ok(),
                "{good}"
            );
        }
        for bad in ["", "News", "news-2", "_news", "ä", &"a".repeat(49)] {
            assert!(
                replica_options(Some(bad), Some("m"), None, None).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_lease_defaults_to_five_seconds_within_two_to_sixty() {
        let options = replica_options(Some("news"), Some("m"), None, None)
            .unwrap()
            .unwrap();
        assert_eq!(options.lease, Duration::from_secs(5));
        assert!(replica_options(Some("news"), Some("m"), Some("2s"), None).is_ok());
        assert!(replica_options(Some("news"), Some("m"), Some("1s"), None).is_err());
        assert!(replica_options(Some("news"), Some("m"), Some("61s"), None).is_err());
        assert!(replica_options(Some("news"), Some("m"), Some("soon"), None).is_err());
    }

    #[test]
    fn names_and_advertised_urls_are_checked() {
        assert!(replica_options(Some("news"), Some("a b"), None, None).is_err());
        assert!(replica_options(Some("news"), Some("m"), None, Some("10.0.0.1:9201")).is_err());
        let options = replica_options(Some("news"), Some("m"), None, Some("http://h:1/"))
            .unwrap()
            .unwrap();
        assert_eq!(options.advertise.as_deref(), Some("http://h:1"));
        let default_name = replica_options(Some("news"), None, None, None)
            .unwrap()
            .unwrap();
        assert!(!default_name.name.is_empty());
    }

    #[test]
    fn the_group_is_configured_in_the_files_serve_table_and_flags_win() {
        use crate::config::{ConfigFile, ServeOptions, ServeSettings, StampedFields};
        let file: ConfigFile = toml::from_str(
            "[serve]\nstate_dir = \"none\"\nreplica_group = \"news\"\nreplica_name = \"search-1\"\nreplica_lease = \"3s\"\n",
        )
        .expect("valid config");
        assert!(toml::from_str::<ConfigFile>("[serve]\nreplica_gruop = \"news\"").is_err());
        let flags = ServeSettings {
            replica_lease: Some("4s".into()),
            ..ServeSettings::default()
        };
        let fields = StampedFields {
            root_field: "cluster_root".into(),
            simhash_field: "simhash".into(),
        };
        let options = ServeOptions::from_settings(&flags.or(file.serve), fields, "d".into())
            .expect("valid settings");
        let replica = options.replica.expect("a group");
        assert_eq!(replica.group, "news");
        assert_eq!(replica.name, "search-1");
        assert_eq!(replica.lease, Duration::from_secs(4));
    }
}
