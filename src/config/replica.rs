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
//! Every member needs the group's secret (`--replica-secret-file`, at least
//! 16 bytes): records, the lease and the snapshot manifest are
//! authenticated with it, so whoever can write the group's indices without
//! it can neither forge a record that members apply nor name a leader they
//! forward clients' credentials to. A write held while no member may act
//! waits up to the request's `timeout` or `--replica-write-wait` (1 minute,
//! the cluster's own default for a write waiting on a primary).
//!
//! Consequences: without `--replica-group` nothing of this exists and the
//! sidecar runs alone, exactly as before.

use std::time::Duration;

use crate::units::parse_duration;

/// Default lease (`--replica-lease`).
pub const DEFAULT_REPLICA_LEASE: &str = "5s";

/// Default bound on a write held while no member may act
/// (`--replica-write-wait`).
pub const DEFAULT_REPLICA_WRITE_WAIT: &str = "1m";

/// Fewest bytes a group secret may have.
pub const MIN_SECRET_BYTES: usize = 16;

/// The group's shared secret: the key of every record's digest, of the
/// lease and of the manifest. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct GroupSecret(Vec<u8>);

impl GroupSecret {
    /// A secret from its bytes (tests and benches; the sidecar reads a file).
    pub fn new(bytes: impl Into<Vec<u8>>) -> GroupSecret {
        GroupSecret(bytes.into())
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for GroupSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GroupSecret(<redacted>)")
    }
}

/// The group's settings as given (flags, environment, file), unchecked.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplicaSettings<'a> {
    pub group: Option<&'a str>,
    pub name: Option<&'a str>,
    pub lease: Option<&'a str>,
    pub advertise: Option<&'a str>,
    pub secret_file: Option<&'a str>,
    pub write_wait: Option<&'a str>,
}

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
    /// The group's secret (`--replica-secret-file`).
    pub secret: GroupSecret,
    /// How long a write may be held while no member may act, when the
    /// request names no `timeout` of its own (`--replica-write-wait`).
    pub write_wait: Duration,
}

/// Validates the group's settings; `None` when no group is asked for.
///
/// # Errors
///
/// A group name outside `[a-z0-9][a-z0-9_]{0,47}`, a lease that is not a
/// duration from 2 s to 60 s, an advertised URL that is not `http(s)://`,
/// no secret file or one that cannot be read or holds under 16 bytes.
pub fn replica_options(settings: ReplicaSettings<'_>) -> anyhow::Result<Option<ReplicaOptions>> {
    let Some(group) = settings.group else {
        if settings.name.is_some()
            || settings.lease.is_some()
            || settings.advertise.is_some()
            || settings.secret_file.is_some()
            || settings.write_wait.is_some()
        {
            anyhow::bail!(
                "--replica-name, --replica-lease, --replica-advertise, --replica-secret-file and --replica-write-wait need --replica-group"
            );
        }
        return Ok(None);
    };
    if !valid_group(group) {
        anyhow::bail!(
            "replica group `{group}`: expected 1 to 48 characters of a-z, 0-9 and _, starting with a letter or digit (it names the group's indices)"
        );
    }
    let lease_text = settings.lease.unwrap_or(DEFAULT_REPLICA_LEASE);
    let lease = match parse_duration(lease_text, "replica_lease")? {
        Some(millis) if (2_000..=60_000).contains(&millis) => {
            Duration::from_millis(millis.unsigned_abs())
        }
        _ => anyhow::bail!("replica_lease `{lease_text}` must be a duration from 2s to 60s"),
    };
    let wait_text = settings.write_wait.unwrap_or(DEFAULT_REPLICA_WRITE_WAIT);
    let write_wait = match parse_duration(wait_text, "replica_write_wait")? {
        Some(millis) if (1_000..=600_000).contains(&millis) => {
            Duration::from_millis(millis.unsigned_abs())
        }
        _ => anyhow::bail!("replica_write_wait `{wait_text}` must be a duration from 1s to 10m"),
    };
    let name = match settings.name {
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
    if let Some(url) = settings.advertise
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        anyhow::bail!("replica_advertise `{url}` must be an http:// or https:// URL");
    }
    let secret = read_secret(settings.secret_file)?;
    Ok(Some(ReplicaOptions {
        group: group.to_string(),
        name,
        lease,
        advertise: settings
            .advertise
            .map(|url| url.trim_end_matches('/').to_string()),
        secret,
        write_wait,
    }))
}

/// The group's secret from its file: its bytes, surrounding whitespace
/// (a final newline) removed.
fn read_secret(path: Option<&str>) -> anyhow::Result<GroupSecret> {
    let Some(path) = path else {
        anyhow::bail!(
            "--replica-group needs --replica-secret-file: a file holding the group's secret (at least {MIN_SECRET_BYTES} bytes, the same on every member; e.g. `head -c 32 /dev/urandom | base64 > group.secret`). Records, the lease and the published snapshot are authenticated with it"
        );
    };
    let bytes = std::fs::read(path)
        .map_err(|error| anyhow::anyhow!("replica_secret_file `{path}`: {error}"))?;
    let trimmed = bytes.trim_ascii();
    if trimmed.len() < MIN_SECRET_BYTES {
        anyhow::bail!(
            "replica_secret_file `{path}` holds {} bytes; a group secret needs at least {MIN_SECRET_BYTES}",
            trimmed.len()
        );
    }
    Ok(GroupSecret(trimmed.to_vec()))
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

    /// A secret file for the tests (one per process, written once: the
    /// tests run in parallel).
    fn secret_file() -> String {
        static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        PATH.get_or_init(|| {
            let path =
                std::env::temp_dir().join(format!("neardup-secret-test-{}", std::process::id()));
            std::fs::write(&path, "0123456789abcdef-test-secret\n").expect("temp file");
            path.to_string_lossy().into_owned()
        })
        .clone()
    }

    fn options(
        group: Option<&str>,
        name: Option<&str>,
        lease: Option<&str>,
        advertise: Option<&str>,
    ) -> anyhow::Result<Option<ReplicaOptions>> {
        let secret = secret_file();
        replica_options(ReplicaSettings {
            group,
            name,
            lease,
            advertise,
            secret_file: group.map(|_| secret.as_str()),
            write_wait: None,
        })
    }

    #[test]
    fn no_group_no_replica_and_companions_need_one() {
        assert_eq!(options(None, None, None, None).unwrap(), None);
        assert!(options(None, Some("a"), None, None).is_err());
        assert!(options(None, None, Some("5s"), None).is_err());
        let secret = secret_file();
        assert!(
            replica_options(ReplicaSettings {
                secret_file: Some(&secret),
                ..ReplicaSettings::default()
            })
            .is_err()
        );
    }

    #[test]
    fn a_group_needs_a_secret_of_sixteen_bytes_or_more() {
        let missing = replica_options(ReplicaSettings {
            group: Some("news"),
            name: Some("m"),
            ..ReplicaSettings::default()
        })
        .unwrap_err();
        assert!(
            missing.to_string().contains("--replica-secret-file"),
            "{missing}"
        );
        let short =
            std::env::temp_dir().join(format!("neardup-short-secret-{}", std::process::id()));
        std::fs::write(&short, "too short\n").unwrap();
        let short = short.to_string_lossy().into_owned();
        let error = replica_options(ReplicaSettings {
            group: Some("news"),
            name: Some("m"),
            secret_file: Some(&short),
            ..ReplicaSettings::default()
        })
        .unwrap_err();
        assert!(error.to_string().contains("at least 16"), "{error}");
        let options = options(Some("news"), Some("m"), None, None)
            .unwrap()
            .unwrap();
        assert_eq!(options.secret.bytes(), b"0123456789abcdef-test-secret");
        assert!(!format!("{options:?}").contains("0123456789abcdef"));
        assert_eq!(options.write_wait, Duration::from_secs(60));
    }

    #[test]
    fn group_names_are_checked() {
        for good in ["news", "a", "news_2", "0abc"] {
            assert!(options(Some(good), Some("m"), None, None).is_ok(), "{good}");
        }
        for bad in ["", "News", "news-2", "_news", "ä", &"a".repeat(49)] {
            assert!(options(Some(bad), Some("m"), None, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_lease_defaults_to_five_seconds_within_two_to_sixty() {
        let options_default = options(Some("news"), Some("m"), None, None)
            .unwrap()
            .unwrap();
        assert_eq!(options_default.lease, Duration::from_secs(5));
        assert!(options(Some("news"), Some("m"), Some("2s"), None).is_ok());
        assert!(options(Some("news"), Some("m"), Some("1s"), None).is_err());
        assert!(options(Some("news"), Some("m"), Some("61s"), None).is_err());
        assert!(options(Some("news"), Some("m"), Some("soon"), None).is_err());
    }

    #[test]
    fn names_and_advertised_urls_are_checked() {
        assert!(options(Some("news"), Some("a b"), None, None).is_err());
        assert!(options(Some("news"), Some("m"), None, Some("10.0.0.1:9201")).is_err());
        let advertised = options(Some("news"), Some("m"), None, Some("http://h:1/"))
            .unwrap()
            .unwrap();
        assert_eq!(advertised.advertise.as_deref(), Some("http://h:1"));
        let default_name = options(Some("news"), None, None, None).unwrap().unwrap();
        assert!(!default_name.name.is_empty());
    }

    #[test]
    fn the_group_is_configured_in_the_files_serve_table_and_flags_win() {
        use crate::config::{ConfigFile, ServeOptions, ServeSettings, StampedFields};
        let secret = secret_file();
        let file: ConfigFile = toml::from_str(&format!(
            "[serve]\nstate_dir = \"none\"\nreplica_group = \"news\"\nreplica_name = \"search-1\"\nreplica_lease = \"3s\"\nreplica_secret_file = \"{secret}\"\nreplica_write_wait = \"20s\"\n"
        ))
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
        assert_eq!(replica.write_wait, Duration::from_secs(20));
    }
}
