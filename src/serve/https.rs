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
//! change of either file's content (hashed every 2 s: a rotation that keeps
//! the modification time is seen too), reads both files again; a pair that
//! does not load is logged once, and the previous one kept until the files
//! change again. Connections already open keep their session. Shutdown
//! stops accepting, then lets open connections finish (bounded).
//!
//! At most [`MAX_HANDSHAKES`] handshakes run at once ([`Handshakes`]).
//! Waiting at the cap would let a thousand idle sockets stop everyone else,
//! so a socket accepted at the cap ends the oldest handshake instead: a
//! client that completes its handshake within the time the others take to
//! fill the cap is served, and idle sockets hold at most the cap's file
//! descriptors.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use parking_lot::{Mutex, RwLock};
use rustls::crypto::aws_lc_rs;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How often the certificate files' contents are compared.
const FILE_CHECK_INTERVAL: Duration = Duration::from_secs(2);
/// Most TLS handshakes running at once.
pub const MAX_HANDSHAKES: usize = 256;
/// Longest a handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open connections may take to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// The listener's certificate and key, read again when they change.
#[derive(Debug)]
pub struct ReloadingCertificate {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
    /// The hash of both files when they were last read (loaded or not).
    last_read: Mutex<u64>,
}

impl ReloadingCertificate {
    /// Reads the pair once.
    ///
    /// # Errors
    ///
    /// A file that cannot be read, holds no certificate or no private key,
    /// or a key rustls cannot use.
    pub fn load(cert_path: &Path, key_path: &Path) -> anyhow::Result<Self> {
        let contents = contents_hash(cert_path, key_path);
        let loaded = read_pair(cert_path, key_path)?;
        Ok(ReloadingCertificate {
            cert_path: cert_path.to_path_buf(),
            key_path: key_path.to_path_buf(),
            current: RwLock::new(loaded),
            last_read: Mutex::new(contents),
        })
    }

    /// Reads the files again; on failure keeps the pair in use. Whether the
    /// new pair is in use.
    pub fn reload(&self) -> bool {
        *self.last_read.lock() = contents_hash(&self.cert_path, &self.key_path);
        match read_pair(&self.cert_path, &self.key_path) {
            Ok(loaded) => {
                *self.current.write() = loaded;
                tracing::info!(cert = %self.cert_path.display(), "TLS certificate reloaded");
                true
            }
            Err(error) => {
                tracing::error!(%error, "TLS certificate not reloaded: the previous one stays in use until the files change again (or SIGHUP)");
                false
            }
        }
    }

    /// Reloads when either file's content changed since it was last read
    /// (a pair that failed is not read again, nor logged, until then).
    fn reload_if_changed(&self) {
        let now = contents_hash(&self.cert_path, &self.key_path);
        if now != *self.last_read.lock() {
            self.reload();
        }
    }
}

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().clone())
    }
}

/// One hash of both files' contents (a file that cannot be read hashes
/// as such).
fn contents_hash(cert: &Path, key: &Path) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for path in [cert, key] {
        match std::fs::read(path) {
            Ok(bytes) => {
                hasher.update(&(bytes.len() as u64).to_le_bytes());
                hasher.update(&bytes);
            }
            Err(_) => hasher.update(b"unreadable"),
        }
    }
    hasher.digest()
}

fn read_pair(cert_path: &Path, key_path: &Path) -> anyhow::Result<Arc<CertifiedKey>> {
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
    Ok(Arc::new(certified))
}

/// The handshakes running, oldest first; at the cap, a new one ends the
/// oldest.
#[derive(Debug, Default)]
struct Handshakes {
    running: Mutex<BTreeMap<u64, tokio::sync::oneshot::Sender<()>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Handshakes {
    /// Registers a handshake (ending the oldest at the cap): its number and
    /// what resolves when it must end.
    fn start(&self) -> (u64, tokio::sync::oneshot::Receiver<()>) {
        let number = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (end, ended) = tokio::sync::oneshot::channel();
        let mut running = self.running.lock();
        while running.len() >= MAX_HANDSHAKES {
            // Dropping the sender ends that handshake.
            running.pop_first();
        }
        running.insert(number, end);
        (number, ended)
    }

    fn finished(&self, number: u64) {
        self.running.lock().remove(&number);
    }
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
    let handshakes = Arc::new(Handshakes::default());
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
        let handshakes = handshakes.clone();
        let (number, ended) = handshakes.start();
        tokio::spawn(async move {
            let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
            let outcome = tokio::select! {
                outcome = handshake => Some(outcome),
                _ = ended => None,
            };
            handshakes.finished(number);
            let tls = match outcome {
                Some(Ok(Ok(tls))) => tls,
                Some(Ok(Err(error))) => {
                    tracing::debug!(%error, %peer, "TLS handshake failed");
                    return;
                }
                Some(Err(_)) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
                None => {
                    tracing::debug!(%peer, "TLS handshake ended: newer ones came at the cap");
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
