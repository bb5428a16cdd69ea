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
//! once, at start, so a bad path fails before anything else happens.
//!
//! Signing: `--upstream-auth aws-sigv4` signs every request the sidecar
//! sends (after stamping) for Amazon OpenSearch Service (`--aws-service
//! es`, the default) or OpenSearch Serverless (`aoss`), in `--aws-region`
//! (else `AWS_REGION`, `AWS_DEFAULT_REGION`), with credentials from the
//! standard AWS chain ([`crate::upstream::aws_credentials`]). They are
//! settings of how the sidecar reaches the cluster, so they live beside
//! TLS: in the config file the `[serve.upstream_tls]` table holds `ca`,
//! `cert`, `key`, `insecure`, `auth`, `aws_region` and `aws_service`.

use std::path::PathBuf;

use anyhow::Context;
use serde::Deserialize;

use crate::upstream::UpstreamTls;
use crate::upstream::client::AwsSigning;

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

    /// How the sidecar authenticates to the cluster: `none` (clients' own Authorization passes through) or `aws-sigv4` (every request signed, for Amazon OpenSearch Service) [default: none]
    #[arg(long = "upstream-auth", env = "NEARDUP_UPSTREAM_AUTH", value_enum)]
    pub auth: Option<UpstreamAuth>,

    /// AWS region of the domain, with --upstream-auth aws-sigv4 [default: $AWS_REGION, else $AWS_DEFAULT_REGION]
    #[arg(long = "aws-region", env = "NEARDUP_AWS_REGION")]
    pub aws_region: Option<String>,

    /// AWS service to sign for, with --upstream-auth aws-sigv4: `es` (Amazon OpenSearch Service) or `aoss` (OpenSearch Serverless) [default: es]
    #[arg(long = "aws-service", env = "NEARDUP_AWS_SERVICE", value_enum)]
    pub aws_service: Option<AwsService>,
}

/// How the sidecar authenticates its own requests to the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum UpstreamAuth {
    /// Nothing of its own: clients' credentials pass through.
    None,
    /// AWS Signature Version 4 on every request.
    #[value(name = "aws-sigv4")]
    #[serde(rename = "aws-sigv4")]
    AwsSigv4,
}

/// The AWS service a signature is scoped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AwsService {
    /// Amazon OpenSearch Service (managed domains).
    Es,
    /// Amazon OpenSearch Serverless.
    Aoss,
}

impl AwsService {
    fn name(self) -> &'static str {
        match self {
            AwsService::Es => "es",
            AwsService::Aoss => "aoss",
        }
    }
}

impl UpstreamTlsSettings {
    /// Each setting from `self`, else from `fallback` (the config file).
    pub fn or(self, fallback: UpstreamTlsSettings) -> UpstreamTlsSettings {
        UpstreamTlsSettings {
            ca: self.ca.or(fallback.ca),
            cert: self.cert.or(fallback.cert),
            key: self.key.or(fallback.key),
            insecure: self.insecure || fallback.insecure,
            auth: self.auth.or(fallback.auth),
            aws_region: self.aws_region.or(fallback.aws_region),
            aws_service: self.aws_service.or(fallback.aws_service),
        }
    }

    /// The signing scope, when requests are signed.
    fn aws_signing(
        &self,
        variable: &dyn Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Option<AwsSigning>> {
        if self.auth != Some(UpstreamAuth::AwsSigv4) {
            if self.aws_region.is_some() || self.aws_service.is_some() {
                anyhow::bail!(
                    "--aws-region and --aws-service are used only with --upstream-auth aws-sigv4"
                );
            }
            return Ok(None);
        }
        let region = self
            .aws_region
            .clone()
            .or_else(|| variable("AWS_REGION"))
            .or_else(|| variable("AWS_DEFAULT_REGION"))
            .filter(|region| !region.trim().is_empty())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--upstream-auth aws-sigv4 needs the domain's region: --aws-region (or AWS_REGION)"
                )
            })?;
        Ok(Some(AwsSigning {
            region: region.trim().to_string(),
            service: self
                .aws_service
                .unwrap_or(AwsService::Es)
                .name()
                .to_string(),
        }))
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
            aws_signing: self.aws_signing(&|name| std::env::var(name).ok())?,
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

    #[test]
    fn signing_needs_a_region_and_its_flags_need_signing() {
        let no_variables = |_: &str| None;
        let signing = UpstreamTlsSettings {
            auth: Some(UpstreamAuth::AwsSigv4),
            ..UpstreamTlsSettings::default()
        };
        let error = signing
            .aws_signing(&no_variables)
            .expect_err("no region")
            .to_string();
        assert!(error.contains("--aws-region"), "{error}");
        let from_environment = signing
            .aws_signing(&|name: &str| {
                (name == "AWS_DEFAULT_REGION").then(|| "eu-west-1".to_string())
            })
            .expect("region from the environment")
            .expect("signing");
        assert_eq!(
            (
                from_environment.region.as_str(),
                from_environment.service.as_str()
            ),
            ("eu-west-1", "es")
        );
        let serverless = UpstreamTlsSettings {
            aws_region: Some("us-east-1".into()),
            aws_service: Some(AwsService::Aoss),
            ..signing.clone()
        };
        let scope = serverless
            .aws_signing(&no_variables)
            .expect("valid")
            .expect("signing");
        assert_eq!(scope.service, "aoss");
        let stray = UpstreamTlsSettings {
            aws_region: Some("us-east-1".into()),
            ..UpstreamTlsSettings::default()
        };
        assert!(stray.aws_signing(&no_variables).is_err());
        assert_eq!(
            UpstreamTlsSettings::default()
                .aws_signing(&no_variables)
                .expect("none"),
            None
        );
        let file: UpstreamTlsSettings = toml::from_str(
            "auth = \"aws-sigv4\"\naws_region = \"ap-east-1\"\naws_service = \"aoss\"",
        )
        .expect("config table");
        assert_eq!(file.auth, Some(UpstreamAuth::AwsSigv4));
        assert_eq!(file.aws_service, Some(AwsService::Aoss));
    }
}
