//! HTTPS on the sidecar's own port, with certificates reloaded in place.
//!
//! Motivation: clients that talked `https://` to the cluster, with an
//! `Authorization` header, must not send those credentials in the clear to
//! the sidecar. Certificates are rotated (ACME, an internal CA) without a
//! restart and without dropping the connections of a running load.
//!
//! Design: a TCP accept loop; each connection does its TLS handshake in
//! its own task (a slow client never holds up the others) and is served by
//! hyper's HTTP/1.1-or-HTTP/2 connection builder with the same axum router
//! as plain HTTP (ALPN offers `h2` and `http/1.1`). The certificate comes
//! from [`ReloadingCertificate`], asked at every handshake: `SIGHUP`, or a
//! change of either file's modification time (checked every 2 s), reads
//! both files again; a pair that does not load is logged and the previous
//! one kept. Connections already open keep their session. Shutdown stops
//! accepting, then lets open connections finish (bounded).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use parking_lot::RwLock;
use rustls::crypto::aws_lc_rs;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How often the certificate files' modification times are compared.
const FILE_CHECK_INTERVAL: Duration = Duration::from_secs(2);
/// How long open connections may take to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The listener's certificate and key, read again when they change.
#[derive(Debug)]
pub struct ReloadingCertificate {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    key: Arc<CertifiedKey>,
    modified: (Option<SystemTime>, Option<SystemTime>),
}

impl ReloadingCertificate {
    /// Reads the pair once.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, holds no certificate or no private key,
    /// or a key rustls cannot use.
    pub fn load(cert_path: &Path, key_path: &Path) -> anyhow::Result<Self> {
        let loaded = read_pair(cert_path, key_path)?;
        Ok(ReloadingCertificate {
            cert_path: cert_path.to_path_buf(),
            key_path: key_path.to_path_buf(),
            current: RwLock::new(loaded),
        })
    }

    /// Reads the files again; on failure keeps the pair in use. Whether the
    /// new pair is in use.
    pub fn reload(&self) -> bool {
        match read_pair(&self.cert_path, &self.key_path) {
            Ok(loaded) => {
                *self.current.write() = loaded;
                tracing::info!(cert = %self.cert_path.display(), "TLS certificate reloaded");
                true
            }
            Err(error) => {
                tracing::error!(%error, "TLS certificate not reloaded: the previous one stays in use");
                false
            }
        }
    }

    /// Reloads when either file's modification time changed.
    fn reload_if_changed(&self) {
        let now = modified_times(&self.cert_path, &self.key_path);
        if now != self.current.read().modified {
            self.reload();
        }
    }
}

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().key.clone())
    }
}

fn modified_times(cert: &Path, key: &Path) -> (Option<SystemTime>, Option<SystemTime>) {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    (modified(cert), modified(key))
}

fn read_pair(cert_path: &Path, key_path: &Path) -> anyhow::Result<Loaded> {
    let modified = modified_times(cert_path, key_path);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_path)
        .with_context(|| format!("cannot read --tls-cert {}", cert_path.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("--tls-cert {}: not PEM certificates", cert_path.display()))?;
    if chain.is_empty() {
        anyhow::bail!("--tls-cert {}: no certificate in it", cert_path.display());
    }
    let key = PrivateKeyDer::from_pem_file(key_path)
        .with_context(|| format!("--tls-key {}: no PEM private key in it", key_path.display()))?;
    let provider = aws_lc_rs::default_provider();
    let signing_key = provider
        .key_provider
        .load_private_key(key)
        .with_context(|| format!("--tls-key {}: unusable key", key_path.display()))?;
    let certified = CertifiedKey::new(chain, signing_key);
    certified
        .keys_match()
        .with_context(|| "--tls-cert and --tls-key do not belong together".to_string())?;
    Ok(Loaded {
        key: Arc::new(certified),
        modified,
    })
}

/// The TLS settings of the listener: HTTP/2 and HTTP/1.1 offered, the
/// certificate asked of `certificate` at every handshake.
fn server_config(certificate: Arc<ReloadingCertificate>) -> anyhow::Result<rustls::ServerConfig> {
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?
            .with_no_client_auth()
            .with_cert_resolver(certificate);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// Serves `router` over HTTPS on `listener` until `shutdown` completes, then
/// lets open connections finish (at most [`SHUTDOWN_GRACE`]).
///
/// # Errors
///
/// The TLS settings cannot be built.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    certificate: Arc<ReloadingCertificate>,
    shutdown: impl std::future::Future<Output = ()>,
) -> anyhow::Result<()> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(certificate.clone())?));
    let watcher = tokio::spawn(watch_for_new_certificates(certificate));
    let graceful = GracefulShutdown::new();
    let builder = Builder::new(TokioExecutor::new());
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait, go on.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let acceptor = acceptor.clone();
        let router = router.clone();
        let builder = builder.clone();
        let watch = graceful.watcher();
        tokio::spawn(async move {
            let tls = match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream))
                .await
            {
                Ok(Ok(tls)) => tls,
                Ok(Err(error)) => {
                    tracing::debug!(%error, %peer, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let service = router.map_request(move |mut request: axum::extract::Request<_>| {
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(peer));
                request
            });
            let connection = builder.serve_connection_with_upgrades(
                TokioIo::new(tls),
                TowerToHyperService::new(service),
            );
            if let Err(error) = watch.watch(connection.into_owned()).await {
                tracing::debug!(%error, %peer, "connection ended with an error");
            }
        });
    }
    watcher.abort();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period");
    }
    Ok(())
}

/// `SIGHUP`, or a change of the files, reloads the certificate.
async fn watch_for_new_certificates(certificate: Arc<ReloadingCertificate>) {
    #[cfg(unix)]
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let mut ticker = tokio::time::interval(FILE_CHECK_INTERVAL);
    loop {
        #[cfg(unix)]
        let hung_up = async {
            match hangup.as_mut() {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let hung_up = std::future::pending::<()>();
        tokio::select! {
            () = hung_up => {
                certificate.reload();
            }
            _ = ticker.tick() => {
                let certificate = certificate.clone();
                let _ = tokio::task::spawn_blocking(move || certificate.reload_if_changed()).await;
            }
        }
    }
}
