//! What the whole-index jobs (`rebuild`, the offline `backfill`) share with
//! the sidecar's settings: the cluster, its authorization, the state
//! directory. Each comes from the job's flag (or `NEARDUP_*` variable),
//! else the `[serve]` table of the config file, else the default.

use anyhow::Context;
use axum::http::{HeaderMap, HeaderValue, header};

use super::defaults::{DEFAULT_STATE_DIR, DEFAULT_UPSTREAM};
use super::serve::ServeSettings;
use super::tls::UpstreamTlsSettings;
use crate::upstream::UpstreamTls;

/// A job's settings as its flags give them.
#[derive(Debug, Clone, Default)]
pub struct JobSettings {
    pub upstream: Option<String>,
    pub state_dir: Option<String>,
    pub authorization: Option<String>,
    pub tls: UpstreamTlsSettings,
}

/// A job's settings, validated.
#[derive(Debug, Clone)]
pub struct JobOptions {
    /// URL of the cluster.
    pub upstream: String,
    /// Headers every request to the cluster carries (its authorization).
    pub headers: HeaderMap,
    /// TLS towards the cluster.
    pub tls: UpstreamTls,
    /// The state directory as given: `rebuild` writes there whatever it
    /// says; `backfill` reads `none` as memory only.
    pub state_dir: String,
}

impl JobSettings {
    /// The settings, unset ones from the file's `[serve]` table, validated.
    ///
    /// # Errors
    ///
    /// An authorization value that cannot be a header value.
    pub fn validate(self, file: &ServeSettings) -> anyhow::Result<JobOptions> {
        let mut headers = HeaderMap::new();
        if let Some(value) = &self.authorization {
            headers.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(value).context("invalid authorization value")?,
            );
        }
        let upstream = self
            .upstream
            .or_else(|| file.upstream.clone())
            .unwrap_or_else(|| DEFAULT_UPSTREAM.to_string());
        super::serve::check_upstream_url(&upstream)?;
        Ok(JobOptions {
            upstream,
            headers,
            tls: self.tls.or(file.upstream_tls.clone()).load()?,
            state_dir: self
                .state_dir
                .or_else(|| file.state_dir.clone())
                .unwrap_or_else(|| DEFAULT_STATE_DIR.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_the_file_over_the_defaults() {
        let file = ServeSettings {
            upstream: Some("http://search:9200".into()),
            ..ServeSettings::default()
        };
        let options = JobSettings {
            state_dir: Some("/tmp/state".into()),
            authorization: Some("Basic abc".into()),
            ..JobSettings::default()
        }
        .validate(&file)
        .expect("valid");
        assert_eq!(options.upstream, "http://search:9200");
        assert_eq!(options.state_dir, "/tmp/state");
        assert_eq!(options.headers[header::AUTHORIZATION], "Basic abc");
        let defaults = JobSettings::default()
            .validate(&ServeSettings::default())
            .expect("valid");
        assert_eq!(defaults.upstream, DEFAULT_UPSTREAM);
        assert_eq!(defaults.state_dir, DEFAULT_STATE_DIR);
        assert!(defaults.headers.is_empty());
        let invalid = JobSettings {
            authorization: Some("line\nbreak".into()),
            ..JobSettings::default()
        };
        assert!(invalid.validate(&ServeSettings::default()).is_err());
    }
}
