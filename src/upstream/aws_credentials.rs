//! Where the credentials that sign requests come from: the standard AWS
//! chain, in its order.
//!
//! Motivation: `--upstream-auth aws-sigv4` must work where the sidecar
//! runs — a laptop with a profile, a container with a task role, an
//! instance with an instance role — with no secret on its command line.
//!
//! Design: the first source that answers wins, as AWS's SDKs do:
//!
//! 1. the environment: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//!    `AWS_SESSION_TOKEN`;
//! 2. the shared files: profile `AWS_PROFILE` (else `default`) in
//!    `AWS_SHARED_CREDENTIALS_FILE` (else `~/.aws/credentials`), then in
//!    `AWS_CONFIG_FILE` (else `~/.aws/config`, section `[profile NAME]`);
//!    static keys only;
//! 3. a container's role: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on
//!    `169.254.170.2`) or `AWS_CONTAINER_CREDENTIALS_FULL_URI` (with
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN`);
//! 4. an instance's role: IMDSv2 (a session token first) at
//!    `AWS_EC2_METADATA_SERVICE_ENDPOINT`, else `http://169.254.169.254`,
//!    unless `AWS_EC2_METADATA_DISABLED=true`.
//!
//! Temporary credentials (3, 4) are kept until five minutes before they
//! expire, then fetched again; static ones (1, 2) are read once.
//! Consequences: role assumption from a profile (`role_arn`,
//! `credential_process`, SSO) and web identity tokens are not read: give
//! their result through the environment.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::sigv4::Credentials;

/// Fetch credentials again this long before they expire.
const REFRESH_BEFORE_EXPIRY: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// The metadata endpoints answer within this, or are not there.
const METADATA_TIMEOUT: Duration = Duration::from_secs(2);

/// Credentials and when they expire (never, for static ones).
#[derive(Debug, Clone)]
struct Held {
    credentials: Credentials,
    expires: Option<DateTime<Utc>>,
}

/// The chain, with what it last found.
#[derive(Debug)]
pub struct CredentialChain {
    held: tokio::sync::Mutex<Option<Held>>,
    /// The metadata endpoints' client; `Err` only if none could be built.
    http: Result<reqwest::Client, String>,
}

impl Default for CredentialChain {
    fn default() -> Self {
        CredentialChain::new()
    }
}

impl CredentialChain {
    pub fn new() -> Self {
        let builder = || {
            reqwest::Client::builder()
                .no_proxy()
                .timeout(METADATA_TIMEOUT)
        };
        // The metadata endpoints speak plain HTTP: on a machine without CA
        // roots (a `FROM scratch` image) the client trusts none rather than
        // failing (`super::roots`).
        let http = builder()
            .build()
            .or_else(|_| super::roots::for_scheme(builder(), "http").build())
            .map_err(|error| format!("no HTTP client: {error}"));
        CredentialChain {
            held: tokio::sync::Mutex::new(None),
            http,
        }
    }

    /// Credentials to sign with now.
    ///
    /// # Errors
    ///
    /// No source of the chain has any (each one's reason named).
    pub async fn credentials(&self) -> Result<Credentials, String> {
        let mut held = self.held.lock().await;
        if let Some(current) = held.as_ref()
            && current
                .expires
                .is_none_or(|expires| Utc::now() + REFRESH_BEFORE_EXPIRY < expires)
        {
            return Ok(current.credentials.clone());
        }
        let found = self.resolve().await?;
        let credentials = found.credentials.clone();
        *held = Some(found);
        Ok(credentials)
    }

    async fn resolve(&self) -> Result<Held, String> {
        let mut reasons = Vec::new();
        match from_environment(&|name| std::env::var(name).ok()) {
            Some(credentials) => return Ok(never_expiring(credentials)),
            None => reasons.push("no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY".to_string()),
        }
        match from_shared_files() {
            Ok(credentials) => return Ok(never_expiring(credentials)),
            Err(reason) => reasons.push(reason),
        }
        match self.container_role().await {
            Some(Ok(held)) => return Ok(held),
            Some(Err(reason)) => reasons.push(reason),
            None => reasons.push("not in a container with a role".to_string()),
        }
        match self.instance_role_of_this_machine().await {
            Ok(held) => return Ok(held),
            Err(reason) => reasons.push(reason),
        }
        Err(format!(
            "no AWS credentials to sign with ({})",
            reasons.join("; ")
        ))
    }

    async fn container_role(&self) -> Option<Result<Held, String>> {
        let url = match (
            std::env::var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
            std::env::var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
        ) {
            (Ok(relative), _) => format!("http://169.254.170.2{relative}"),
            (_, Ok(full)) => full,
            _ => return None,
        };
        let http = match &self.http {
            Ok(http) => http,
            Err(reason) => return Some(Err(format!("container credentials at {url}: {reason}"))),
        };
        let mut request = http.get(&url);
        if let Ok(token) = std::env::var("AWS_CONTAINER_AUTHORIZATION_TOKEN") {
            request = request.header("authorization", token);
        }
        let answer = async {
            let response = request.send().await.map_err(|error| error.to_string())?;
            if !response.status().is_success() {
                return Err(format!("status {}", response.status()));
            }
            let body = response.bytes().await.map_err(|error| error.to_string())?;
            serde_json::from_slice::<Value>(&body).map_err(|error| error.to_string())
        };
        Some(
            answer
                .await
                .and_then(|value| temporary(&value))
                .map_err(|reason| format!("container credentials at {url}: {reason}")),
        )
    }

    async fn instance_role_of_this_machine(&self) -> Result<Held, String> {
        if std::env::var("AWS_EC2_METADATA_DISABLED")
            .is_ok_and(|value| value.eq_ignore_ascii_case("true"))
        {
            return Err("the instance metadata service is disabled".to_string());
        }
        let base = std::env::var("AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .unwrap_or_else(|_| "http://169.254.169.254".to_string());
        self.instance_role(base.trim_end_matches('/')).await
    }

    /// The role's credentials from the instance metadata service at `base`.
    async fn instance_role(&self, base: &str) -> Result<Held, String> {
        let failed = |reason: String| format!("instance role at {base}: {reason}");
        let http = self
            .http
            .as_ref()
            .map_err(|reason| failed(reason.clone()))?;
        let token = http
            .put(format!("{base}/latest/api/token"))
            .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|error| failed(error.to_string()))?
            .text()
            .await
            .map_err(|error| failed(error.to_string()))?;
        let get = |path: String| {
            let request = http
                .get(format!("{base}{path}"))
                .header("x-aws-ec2-metadata-token", token.trim());
            async move {
                request
                    .send()
                    .await
                    .and_then(reqwest::Response::error_for_status)
                    .map_err(|error| error.to_string())?
                    .text()
                    .await
                    .map_err(|error| error.to_string())
            }
        };
        let roles = get("/latest/meta-data/iam/security-credentials/".to_string())
            .await
            .map_err(failed)?;
        let role = roles
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .ok_or_else(|| failed("no role attached".to_string()))?;
        let document = get(format!("/latest/meta-data/iam/security-credentials/{role}"))
            .await
            .map_err(failed)?;
        let value: Value =
            serde_json::from_str(&document).map_err(|error| failed(error.to_string()))?;
        temporary(&value).map_err(failed)
    }
}

fn never_expiring(credentials: Credentials) -> Held {
    Held {
        credentials,
        expires: None,
    }
}

/// Temporary credentials as the container and instance endpoints give
/// them (`AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`).
fn temporary(value: &Value) -> Result<Held, String> {
    let text = |name: &str| value[name].as_str().map(str::to_string);
    let (Some(access_key_id), Some(secret_access_key)) =
        (text("AccessKeyId"), text("SecretAccessKey"))
    else {
        return Err("the answer holds no AccessKeyId and SecretAccessKey".to_string());
    };
    let expires = text("Expiration")
        .and_then(|expiration| DateTime::parse_from_rfc3339(&expiration).ok())
        .map(|expiration| expiration.with_timezone(&Utc));
    Ok(Held {
        credentials: Credentials {
            access_key_id,
            secret_access_key,
            session_token: text("Token"),
        },
        expires,
    })
}

/// Credentials from environment variables (`variable` reads one).
fn from_environment(variable: &dyn Fn(&str) -> Option<String>) -> Option<Credentials> {
    let access_key_id = variable("AWS_ACCESS_KEY_ID").filter(|value| !value.is_empty())?;
    let secret_access_key = variable("AWS_SECRET_ACCESS_KEY").filter(|value| !value.is_empty())?;
    Some(Credentials {
        access_key_id,
        secret_access_key,
        session_token: variable("AWS_SESSION_TOKEN").filter(|value| !value.is_empty()),
    })
}

/// Static keys of the profile in the shared credentials file, else in the
/// config file.
fn from_shared_files() -> Result<Credentials, String> {
    let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".to_string());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = |variable: &str, default: &str| {
        std::env::var_os(variable)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(".aws").join(default)))
    };
    let sources = [
        (
            file("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
            profile.clone(),
        ),
        (
            file("AWS_CONFIG_FILE", "config"),
            if profile == "default" {
                profile.clone()
            } else {
                format!("profile {profile}")
            },
        ),
    ];
    for (path, section) in sources {
        let Some(path) = path else { continue };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Some(credentials) = profile_keys(&text, &section) {
            return Ok(credentials);
        }
    }
    Err(format!(
        "no static keys for profile `{profile}` in the shared files"
    ))
}

/// `aws_access_key_id` / `aws_secret_access_key` / `aws_session_token` of
/// section `[name]` of an INI text.
fn profile_keys(text: &str, name: &str) -> Option<Credentials> {
    let mut in_section = false;
    let mut keys = std::collections::HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            in_section = header.trim() == name;
            continue;
        }
        if in_section && let Some((key, value)) = line.split_once('=') {
            keys.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    from_environment(&|variable| {
        let key = match variable {
            "AWS_ACCESS_KEY_ID" => "aws_access_key_id",
            "AWS_SECRET_ACCESS_KEY" => "aws_secret_access_key",
            "AWS_SESSION_TOKEN" => "aws_session_token",
            _ => return None,
        };
        keys.get(key).cloned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_needs_both_keys() {
        let variables = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| (*value).to_string())
            }
        };
        let both = variables(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
        ]);
        let found = from_environment(&both).expect("credentials");
        assert_eq!(found.access_key_id, "AKID");
        assert_eq!(found.session_token, None);
        assert!(from_environment(&variables(&[("AWS_ACCESS_KEY_ID", "AKID")])).is_none());
    }

    #[test]
    fn a_profile_is_read_from_its_section() {
        let text = "[default]\naws_access_key_id = A1\naws_secret_access_key = S1\n\n# comment\n[profile news]\naws_access_key_id=A2\naws_secret_access_key=S2\naws_session_token=T2\n";
        let default = profile_keys(text, "default").expect("default");
        assert_eq!(
            (default.access_key_id.as_str(), default.session_token),
            ("A1", None)
        );
        let news = profile_keys(text, "profile news").expect("news");
        assert_eq!(news.secret_access_key, "S2");
        assert_eq!(news.session_token.as_deref(), Some("T2"));
        assert!(profile_keys(text, "other").is_none());
    }

    #[test]
    fn temporary_credentials_carry_their_expiry() {
        let value = serde_json::json!({
            "AccessKeyId": "ASIA", "SecretAccessKey": "s", "Token": "t",
            "Expiration": "2026-11-25T12:00:00Z"
        });
        let held = temporary(&value).expect("held");
        assert_eq!(held.credentials.session_token.as_deref(), Some("t"));
        assert!(held.expires.is_some());
        assert!(temporary(&serde_json::json!({"Code": "Failure"})).is_err());
    }

    #[tokio::test]
    async fn an_instance_role_is_read_with_a_session_token() {
        use axum::routing::{get, put};
        let app = axum::Router::new()
            .route("/latest/api/token", put(|| async { "session" }))
            .route(
                "/latest/meta-data/iam/security-credentials/",
                get(|headers: axum::http::HeaderMap| async move {
                    match headers.get("x-aws-ec2-metadata-token") {
                        Some(token) if token == "session" => Ok("news-role\n"),
                        _ => Err(axum::http::StatusCode::UNAUTHORIZED),
                    }
                }),
            )
            .route(
                "/latest/meta-data/iam/security-credentials/news-role",
                get(|| async {
                    r#"{"Code":"Success","AccessKeyId":"ASIAROLE","SecretAccessKey":"s","Token":"t","Expiration":"2099-01-01T00:00:00Z"}"#
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let held = CredentialChain::new()
            .instance_role(&format!("http://{address}"))
            .await
            .expect("instance role");
        assert_eq!(held.credentials.access_key_id, "ASIAROLE");
        assert_eq!(held.credentials.session_token.as_deref(), Some("t"));
    }
}
