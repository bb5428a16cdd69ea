//! Which CA roots a client to the cluster trusts, and what happens on a
//! machine that has none.
//!
//! Motivation: reqwest's rustls verifier (rustls-platform-verifier) reads
//! the system's roots when the client is built, and refuses to build one
//! when it finds none ("No CA certificates were loaded from the system"),
//! even for a client that only ever speaks plain HTTP. A container image
//! made `FROM scratch` has no `/etc/ssl/certs`, so the sidecar did not start
//! there at all.
//!
//! Design: a client for an `http://` upstream trusts no roots (it never
//! makes a TLS handshake, so it needs none). A client for `https://` trusts
//! the system's roots (`SSL_CERT_FILE` / `SSL_CERT_DIR` replace them, as for
//! OpenSSL) plus `--upstream-ca`; when there are none at all, the error
//! names the ways to give some. No roots are compiled into the binary: a
//! compiled-in list goes stale with the binary, the system's is updated by
//! its package manager (the image ships Debian's bundle, `scripts/image.sh`).
//!
//! Consequences: the image's `http://` setups need no CA file; an
//! `https://` cluster reached from a machine without roots fails at start,
//! with the remedy in the message, not at the first request.

/// `builder` set up to trust what an upstream of `scheme` needs: nothing
/// for plain HTTP, the system's roots for HTTPS.
pub fn for_scheme(builder: reqwest::ClientBuilder, scheme: &str) -> reqwest::ClientBuilder {
    if scheme == "https" {
        builder
    } else {
        builder.tls_certs_only(Vec::new())
    }
}

/// A client build error, explained when it is the missing system roots.
pub fn explain(error: reqwest::Error, upstream: &str) -> anyhow::Error {
    let mut chain = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        chain.push_str(": ");
        chain.push_str(&cause.to_string());
        source = cause.source();
    }
    if chain.contains("No CA certificates") {
        anyhow::anyhow!(
            "no CA certificates on this machine to verify {upstream}: give the cluster's CA with --upstream-ca (NEARDUP_UPSTREAM_CA), point SSL_CERT_FILE at a PEM bundle, or install the system's CA bundle (Debian: ca-certificates)"
        )
    } else {
        anyhow::anyhow!("cannot set up the client for {upstream}: {chain}")
    }
}
