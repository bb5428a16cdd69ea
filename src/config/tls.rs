//! TLS towards the cluster: its CA, a client certificate, or (in a
//! laboratory) no verification. Shared by `serve` and the whole-index jobs.
//!
//! Motivation: a default Elasticsearch 8 install, and OpenSearch's demo
//! configuration, answer HTTPS with a certificate from their own generated
//! CA; some clusters require client certificates. `SSL_CERT_FILE` happened
//! to work but replaces the whole trust store and is no documented option.
//!
//! Design: `--upstream-ca` adds a PEM bundle to the system's roots (never
//! replaces them); `--upstream-cert` and `--upstream-key` (PEM, both or
//! neither) present a client certificate; `--upstream-insecure` turns
//! verification off and is warned about loudly at start. The files are read
//! once, at start, so a bad path fails before anything else happens. In the
//! config file they are the `[serve.upstream_tls]` table (`ca`, `cert`,
//! `key`, `insecure`).

use std::path::PathBuf;

use anyhow::Context;
use serde::Deserialize;

use crate::upstream::UpstreamTls;

/// TLS settings for the cluster, as flags or `[serve.upstream_tls]` give them.
#[derive(Debug, Clone, Default, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct UpstreamTlsSettings {
    /// PEM file of the CA certificate(s) that signed the cluster's certificate (e.g. Elasticsearch's http_ca.crt), added to the system's roots
    #[arg(long = "upstream-ca", env = "NEARDUP_UPSTREAM_CA")]
    pub ca: Option<PathBuf>,

    /// PEM file of a client certificate to present to the cluster (with --upstream-key)
    #[arg(
        long = "upstream-cert",
        env = "NEARDUP_UPSTREAM_CERT",
        requires = "key"
    )]
    pub cert: Option<PathBuf>,

    /// PEM file of the client certificate's private key (with --upstream-cert)
    #[arg(long = "upstream-key", env = "NEARDUP_UPSTREAM_KEY", requires = "cert")]
    pub key: Option<PathBuf>,

    /// Do not verify the cluster's certificate (a laboratory only: anyone on the path can read and change the traffic)
    #[arg(long = "upstream-insecure", env = "NEARDUP_UPSTREAM_INSECURE")]
    #[serde(default)]
    pub insecure: bool,
}

impl UpstreamTlsSettings {
    /// Each setting from `self`, else from `fallback` (the config file).
    pub fn or(self, fallback: UpstreamTlsSettings) -> UpstreamTlsSettings {
        UpstreamTlsSettings {
            ca: self.ca.or(fallback.ca),
            cert: self.cert.or(fallback.cert),
            key: self.key.or(fallback.key),
            insecure: self.insecure || fallback.insecure,
        }
    }

    /// The files read and checked.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or holds no PEM of the expected kind; a
    /// certificate without its key or a key without its certificate.
    pub fn load(&self) -> anyhow::Result<UpstreamTls> {
        let ca = match &self.ca {
            Some(path) => {
                let pem = read_pem(path, "upstream CA (--upstream-ca)")?;
                if !contains(&pem, "CERTIFICATE") {
                    anyhow::bail!("--upstream-ca {}: no PEM certificate in it", path.display());
                }
                Some(pem)
            }
            None => None,
        };
        let identity = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let mut pem = read_pem(cert, "client certificate (--upstream-cert)")?;
                if !contains(&pem, "CERTIFICATE") {
                    anyhow::bail!(
                        "--upstream-cert {}: no PEM certificate in it",
                        cert.display()
                    );
                }
                let key_pem = read_pem(key, "client key (--upstream-key)")?;
                if !contains(&key_pem, "PRIVATE KEY") {
                    anyhow::bail!("--upstream-key {}: no PEM private key in it", key.display());
                }
                pem.push(b'\n');
                pem.extend_from_slice(&key_pem);
                Some(pem)
            }
            (None, None) => None,
            (Some(_), None) => anyhow::bail!("--upstream-cert needs --upstream-key"),
            (None, Some(_)) => anyhow::bail!("--upstream-key needs --upstream-cert"),
        };
        Ok(UpstreamTls {
            ca_pem: ca,
            identity_pem: identity,
            insecure: self.insecure,
        })
    }
}

fn read_pem(path: &PathBuf, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read the {what} {}", path.display()))
}

/// Whether `pem` has a block whose label mentions `label` (`PRIVATE KEY`
/// matches `RSA PRIVATE KEY` and `EC PRIVATE KEY` too).
fn contains(pem: &[u8], label: &str) -> bool {
    String::from_utf8_lossy(pem)
        .lines()
        .any(|line| line.starts_with("-----BEGIN ") && line.contains(label))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_and_wrong_contents_are_named() {
        let dir = std::env::temp_dir().join(format!("neardup-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let not_pem = dir.join("not.pem");
        std::fs::write(&not_pem, "hello").expect("write");
        let missing = UpstreamTlsSettings {
            ca: Some(dir.join("absent.crt")),
            ..UpstreamTlsSettings::default()
        };
        let error = missing.load().expect_err("absent").to_string();
        assert!(
            error.contains("--upstream-ca") && error.contains("absent.crt"),
            "{error}"
        );
        let wrong = UpstreamTlsSettings {
            ca: Some(not_pem.clone()),
            ..UpstreamTlsSettings::default()
        };
        let error = wrong.load().expect_err("not PEM").to_string();
        assert!(error.contains("no PEM certificate"), "{error}");
        let half = UpstreamTlsSettings {
            cert: Some(not_pem),
            ..UpstreamTlsSettings::default()
        };
        assert!(half.load().is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn flags_win_and_insecure_from_either_source() {
        let file = UpstreamTlsSettings {
            ca: Some("/file/ca.crt".into()),
            insecure: true,
            ..UpstreamTlsSettings::default()
        };
        let merged = UpstreamTlsSettings {
            ca: Some("/flag/ca.crt".into()),
            ..UpstreamTlsSettings::default()
        }
        .or(file);
        assert_eq!(merged.ca, Some("/flag/ca.crt".into()));
        assert!(merged.insecure);
    }
}
