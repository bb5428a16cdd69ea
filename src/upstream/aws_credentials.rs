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
//! 3. web identity (IRSA on EKS): `AWS_WEB_IDENTITY_TOKEN_FILE` and
//!    `AWS_ROLE_ARN` (`AWS_ROLE_SESSION_NAME`), exchanged with STS
//!    `AssumeRoleWithWebIdentity` (an unsigned call; the regional endpoint
//!    of `AWS_REGION`, else of the signing region, or
//!    `AWS_ENDPOINT_URL_STS`); the token file is read at every exchange,
//!    since the kubelet rotates it;
//! 4. a container's role: `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (on
//!    `169.254.170.2`) or `AWS_CONTAINER_CREDENTIALS_FULL_URI`, with
//!    `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (EKS pod identity, read at
//!    every call) or `AWS_CONTAINER_AUTHORIZATION_TOKEN`. A full URI must
//!    be `https`, or `http` to a loopback address or to the addresses AWS
//!    documents for ECS and EKS pod identity (`169.254.170.2`,
//!    `169.254.170.23`, `fd00:ec2::23`): the token would be sent to it,
//!    and whoever can set the variable must not be able to point the
//!    sidecar at their own server;
//! 5. an instance's role: IMDSv2 (a session token first) at
//!    `AWS_EC2_METADATA_SERVICE_ENDPOINT`, else `http://169.254.169.254`,
//!    unless `AWS_EC2_METADATA_DISABLED=true`.
//!
//! Temporary credentials (3 to 5) are fetched again five minutes before
//! they expire; shared-file keys with a session token are read again every
//! five minutes; other static ones once. A failed refresh keeps the held
//! credentials until they expire (logged). No lock is held across a network
//! call: one refresh runs at a time, and requests go on with the held
//! credentials while they hold (only a sidecar with none valid waits).
//!
//! Consequences: role assumption from a profile (`role_arn`,
//! `credential_process`, SSO) is not read: give its result through the
//! environment or the files.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::sigv4::Credentials;

/// Fetch credentials again this long before they expire.
const REFRESH_BEFORE_EXPIRY: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// The metadata endpoints answer within this, or are not there.
const METADATA_TIMEOUT: Duration = Duration::from_secs(2);
/// STS is a regional endpoint across the network.
const STS_TIMEOUT: Duration = Duration::from_secs(10);

/// Re-read keys of the shared files with a session token this often.
const REREAD_SESSION_KEYS: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// Credentials, when they expire (never, or not known, for static ones)
/// and when to look for new ones.
#[derive(Debug, Clone)]
struct Held {
    credentials: Credentials,
    expires: Option<DateTime<Utc>>,
    refresh_at: Option<DateTime<Utc>>,
}

impl Held {
    fn usable(&self, now: DateTime<Utc>) -> bool {
        self.expires.is_none_or(|expires| now < expires)
    }

    fn fresh(&self, now: DateTime<Utc>) -> bool {
        self.refresh_at.is_none_or(|refresh_at| now < refresh_at)
    }
}

/// The chain, with what it last found.
#[derive(Debug)]
pub struct CredentialChain {
    held: parking_lot::Mutex<Option<Held>>,
    /// One refresh at a time (held across its calls; requests that have
    /// usable credentials never wait for it).
    refreshing: tokio::sync::Mutex<()>,
    /// The metadata endpoints' (and STS's) client; `Err` only if none
    /// could be built.
    http: Result<reqwest::Client, String>,
    /// The signing region (STS's regional endpoint when `AWS_REGION` is
    /// not set).
    region: Option<String>,
}

impl Default for CredentialChain {
    fn default() -> Self {
        CredentialChain::new(None)
    }
}

impl CredentialChain {
    /// The chain; `region` is the signing region.
    pub fn new(region: Option<String>) -> Self {
        let builder = || {
            reqwest::Client::builder()
                .no_proxy()
                .timeout(METADATA_TIMEOUT)
        };
        // The metadata endpoints speak plain HTTP: on a machine without CA
        // roots (a `FROM scratch` image) the client trusts none rather than
        // failing (`super::roots`); STS over HTTPS then fails, saying so.
        let http = builder()
            .build()
            .or_else(|_| super::roots::for_scheme(builder(), "http").build())
            .map_err(|error| format!("no HTTP client: {error}"));
        CredentialChain {
            held: parking_lot::Mutex::new(None),
            refreshing: tokio::sync::Mutex::new(()),
            http,
            region,
        }
    }

    /// Credentials to sign with now.
    ///
    /// # Errors
    ///
    /// No source of the chain has any (each one's reason named), and none
    /// held still hold.
    pub async fn credentials(&self) -> Result<Credentials, String> {
        let held = self.held.lock().clone();
        let now = Utc::now();
        let _refreshing = match held {
            Some(held) if held.fresh(now) => return Ok(held.credentials),
            // Due for a refresh but still valid: refresh unless another
            // request already does, and sign with these meanwhile.
            Some(held) if held.usable(now) => match self.refreshing.try_lock() {
                Ok(guard) => guard,
                Err(_) => return Ok(held.credentials),
            },
            _ => self.refreshing.lock().await,
        };
        // Another request may have refreshed while this one waited.
        if let Some(held) = self.held.lock().clone()
            && held.fresh(Utc::now())
        {
            return Ok(held.credentials);
        }
        match self.resolve().await {
            Ok(found) => {
                let credentials = found.credentials.clone();
                *self.held.lock() = Some(found);
                Ok(credentials)
            }
            Err(reason) => {
                let held = self.held.lock().clone();
                match held {
                    Some(held) if held.usable(Utc::now()) => {
                        tracing::warn!(%reason, expires = ?held.expires, "AWS credentials not refreshed: the ones held are used until they expire");
                        Ok(held.credentials)
                    }
                    _ => Err(reason),
                }
            }
        }
    }

    async fn resolve(&self) -> Result<Held, String> {
        let mut reasons = Vec::new();
        match from_environment(&|name| std::env::var(name).ok()) {
            Some(credentials) => return Ok(never_expiring(credentials)),
            None => reasons.push("no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY".to_string()),
        }
        match from_shared_files() {
            Ok(credentials) if credentials.session_token.is_some() => {
                return Ok(Held {
                    credentials,
                    expires: None,
                    refresh_at: Some(Utc::now() + REREAD_SESSION_KEYS),
                });
            }
            Ok(credentials) => return Ok(never_expiring(credentials)),
            Err(reason) => reasons.push(reason),
        }
        match self.web_identity().await {
            Some(Ok(held)) => return Ok(held),
            Some(Err(reason)) => reasons.push(reason),
            None => reasons.push("no AWS_WEB_IDENTITY_TOKEN_FILE/AWS_ROLE_ARN".to_string()),
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

    /// IRSA: the web identity token exchanged for the role's credentials;
    /// `None` when the variables are not set.
    async fn web_identity(&self) -> Option<Result<Held, String>> {
        let token_file = std::env::var_os("AWS_WEB_IDENTITY_TOKEN_FILE")?;
        let role_arn = std::env::var("AWS_ROLE_ARN").ok()?;
        let session = std::env::var("AWS_ROLE_SESSION_NAME")
            .unwrap_or_else(|_| format!("neardup-{}", Utc::now().timestamp_millis()));
        let region = std::env::var("AWS_REGION")
            .or_else(|_| std::env::var("AWS_DEFAULT_REGION"))
            .ok()
            .or_else(|| self.region.clone());
        let endpoint = std::env::var("AWS_ENDPOINT_URL_STS")
            .unwrap_or_else(|_| sts_endpoint(region.as_deref()));
        Some(
            self.assume_role_with_web_identity(
                std::path::Path::new(&token_file),
                &role_arn,
                &session,
                endpoint.trim_end_matches('/'),
            )
            .await,
        )
    }

    /// `AssumeRoleWithWebIdentity` at `endpoint` (unsigned: the token is
    /// the proof), with the token read from `token_file` now.
    async fn assume_role_with_web_identity(
        &self,
        token_file: &std::path::Path,
        role_arn: &str,
        session: &str,
        endpoint: &str,
    ) -> Result<Held, String> {
        let failed =
            |reason: String| format!("web identity for {role_arn} at {endpoint}: {reason}");
        let token = std::fs::read_to_string(token_file)
            .map_err(|error| failed(format!("{}: {error}", token_file.display())))?;
        let form = [
            ("Action", "AssumeRoleWithWebIdentity"),
            ("Version", "2011-06-15"),
            ("RoleArn", role_arn),
            ("RoleSessionName", session),
            ("WebIdentityToken", token.trim()),
        ]
        .iter()
        .map(|(name, value)| format!("{name}={}", form_encode(value)))
        .collect::<Vec<_>>()
        .join("&");
        let response = self
            .http
            .as_ref()
            .map_err(|reason| failed(reason.clone()))?
            .post(format!("{endpoint}/"))
            .timeout(STS_TIMEOUT)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|error| failed(error.to_string()))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|error| failed(error.to_string()))?;
        if !status.is_success() {
            let code = xml_text(&body, "Code").unwrap_or_default();
            let message = xml_text(&body, "Message").unwrap_or_default();
            return Err(failed(format!("status {status} {code} {message}")));
        }
        let text = |name: &str| xml_text(&body, name);
        let (Some(access_key_id), Some(secret_access_key)) =
            (text("AccessKeyId"), text("SecretAccessKey"))
        else {
            return Err(failed("the answer holds no credentials".to_string()));
        };
        let expires = text("Expiration")
            .and_then(|expiration| DateTime::parse_from_rfc3339(&expiration).ok())
            .map(|expiration| expiration.with_timezone(&Utc));
        Ok(Held {
            credentials: Credentials {
                access_key_id,
                secret_access_key,
                session_token: text("SessionToken"),
            },
            expires,
            refresh_at: expires.map(|expires| expires - REFRESH_BEFORE_EXPIRY),
        })
    }

    async fn container_role(&self) -> Option<Result<Held, String>> {
        let url = match (
            std::env::var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
            std::env::var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
        ) {
            (Ok(relative), _) => format!("http://169.254.170.2{relative}"),
            (_, Ok(full)) => {
                if let Err(reason) = allowed_container_uri(&full) {
                    return Some(Err(reason));
                }
                full
            }
            _ => return None,
        };
        let http = match &self.http {
            Ok(http) => http,
            Err(reason) => return Some(Err(format!("container credentials at {url}: {reason}"))),
        };
        let mut request = http.get(&url);
        let token = match std::env::var_os("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
            Some(path) => match std::fs::read_to_string(&path) {
                Ok(token) => Some(token.trim().to_string()),
                Err(error) => {
                    return Some(Err(format!(
                        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {}: {error}",
                        std::path::Path::new(&path).display()
                    )));
                }
            },
            None => std::env::var("AWS_CONTAINER_AUTHORIZATION_TOKEN").ok(),
        };
        if let Some(token) = token {
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
        refresh_at: None,
    }
}

/// STS's regional endpoint (the global one without a region).
fn sts_endpoint(region: Option<&str>) -> String {
    match region {
        Some(region) if region.starts_with("cn-") => {
            format!("https://sts.{region}.amazonaws.com.cn")
        }
        Some(region) if !region.is_empty() => format!("https://sts.{region}.amazonaws.com"),
        _ => "https://sts.amazonaws.com".to_string(),
    }
}

/// The text of the first `<name>…</name>` of an XML answer (STS's values
/// hold no markup), entities decoded.
fn xml_text(xml: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{name}>"))?;
    Some(
        xml[start..end]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// `application/x-www-form-urlencoded` escaping (unreserved kept).
fn form_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A full container credentials URI the token may be sent to: `https`, or
/// `http` to loopback or to the ECS / EKS pod identity addresses.
fn allowed_container_uri(uri: &str) -> Result<(), String> {
    let refused = |why: &str| {
        Err(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI {}: {why} (https, or http to loopback, 169.254.170.2, 169.254.170.23 or fd00:ec2::23)",
            super::userinfo::redact(uri)
        ))
    };
    let Ok(parsed) = reqwest::Url::parse(uri) else {
        return refused("not a URL");
    };
    let host = parsed
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let allowed_address = match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(address)) => {
            address.is_loopback()
                || address == std::net::Ipv4Addr::new(169, 254, 170, 2)
                || address == std::net::Ipv4Addr::new(169, 254, 170, 23)
        }
        Ok(std::net::IpAddr::V6(address)) => {
            address.is_loopback()
                || address == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)
        }
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    };
    match parsed.scheme() {
        "https" if !host.is_empty() => Ok(()),
        "http" if allowed_address => Ok(()),
        _ => refused("not an address credentials may be fetched from"),
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
        refresh_at: expires.map(|expires| expires - REFRESH_BEFORE_EXPIRY),
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

    #[test]
    fn the_container_uri_is_restricted_to_loopback_and_documented_addresses() {
        for allowed in [
            "http://127.0.0.1:8080/creds",
            "http://localhost/creds",
            "http://[::1]/creds",
            "http://169.254.170.2/v2/credentials",
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/v1/credentials",
            "https://creds.example.com/x",
        ] {
            assert!(allowed_container_uri(allowed).is_ok(), "{allowed}");
        }
        for refused in [
            "http://10.0.0.1/creds",
            "http://attacker.example/creds",
            "http://169.254.169.254/latest",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(allowed_container_uri(refused).is_err(), "{refused}");
        }
    }

    fn held(expires_in: Option<i64>, refresh_in: Option<i64>) -> Held {
        let now = Utc::now();
        Held {
            credentials: Credentials {
                access_key_id: "OLD".into(),
                secret_access_key: "s".into(),
                session_token: Some("t".into()),
            },
            expires: expires_in.map(|seconds| now + chrono::TimeDelta::seconds(seconds)),
            refresh_at: refresh_in.map(|seconds| now + chrono::TimeDelta::seconds(seconds)),
        }
    }

    #[tokio::test]
    async fn a_failed_refresh_keeps_credentials_until_they_expire() {
        // Nothing in this test's chain answers (no variables it reads are
        // set to anything that works; the metadata endpoint is closed).
        let chain = CredentialChain::new(None);
        *chain.held.lock() = Some(held(Some(120), Some(-1)));
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none()
            && std::env::var_os("AWS_WEB_IDENTITY_TOKEN_FILE").is_none()
        {
            let credentials = chain.credentials().await;
            assert_eq!(
                credentials.map(|credentials| credentials.access_key_id),
                Ok("OLD".to_string())
            );
        }
        *chain.held.lock() = Some(held(Some(-1), Some(-400)));
        assert!(
            !chain
                .held
                .lock()
                .as_ref()
                .is_some_and(|held| held.usable(Utc::now()))
        );
    }

    #[tokio::test]
    async fn a_refresh_in_progress_does_not_hold_up_requests_with_valid_credentials() {
        let chain = CredentialChain::new(None);
        *chain.held.lock() = Some(held(Some(120), Some(-1)));
        let _refreshing = chain.refreshing.lock().await;
        let credentials = tokio::time::timeout(Duration::from_millis(500), chain.credentials())
            .await
            .expect("answered without waiting for the refresh");
        assert_eq!(credentials.map(|c| c.access_key_id), Ok("OLD".to_string()));
    }

    #[tokio::test]
    async fn a_web_identity_token_is_exchanged_with_sts() {
        use axum::routing::post;
        let app = axum::Router::new().route(
            "/",
            post(|body: String| async move {
                if body.contains("Action=AssumeRoleWithWebIdentity")
                    && body.contains("WebIdentityToken=the-token")
                    && body.contains("RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fnews")
                {
                    Ok("<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEB</AccessKeyId><SecretAccessKey>s&amp;k</SecretAccessKey><SessionToken>tok</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>")
                } else {
                    Err(axum::http::StatusCode::BAD_REQUEST)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let address = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let token =
            std::env::temp_dir().join(format!("neardup-web-identity-{}", std::process::id()));
        std::fs::write(&token, "the-token\n").expect("token file");
        let held = CredentialChain::new(None)
            .assume_role_with_web_identity(
                &token,
                "arn:aws:iam::1:role/news",
                "neardup-test",
                &format!("http://{address}"),
            )
            .await
            .expect("credentials");
        let _ = std::fs::remove_file(&token);
        assert_eq!(held.credentials.access_key_id, "ASIAWEB");
        assert_eq!(held.credentials.secret_access_key, "s&k");
        assert_eq!(held.credentials.session_token.as_deref(), Some("tok"));
        assert!(held.refresh_at.is_some());
        assert_eq!(
            sts_endpoint(Some("eu-west-1")),
            "https://sts.eu-west-1.amazonaws.com"
        );
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
        let held = CredentialChain::new(None)
            .instance_role(&format!("http://{address}"))
            .await
            .expect("instance role");
        assert_eq!(held.credentials.access_key_id, "ASIAROLE");
        assert_eq!(held.credentials.session_token.as_deref(), Some("t"));
    }
}
