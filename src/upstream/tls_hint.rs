//! What to do about a failed TLS handshake with the cluster, said from its
//! cause and from what was given.
//!
//! Motivation: every TLS failure used to end in "give the cluster's CA
//! with --upstream-ca", also when the CA was given and the cluster wanted a
//! client certificate, and `https://` to a cluster that speaks plain HTTP
//! was reported as unreachable with nothing pointing at `http://` (issue
//! 44).
//!
//! Design: the error chain of the handshake (rustls names the alert or the
//! certificate's fault) is read for the cause; the TLS options given decide
//! between "give it" and "the one given was refused". The hint is appended
//! to the error's detail, so the health reasons, the 502 answers and the
//! commands' errors all carry it.

/// Which TLS options were given for the cluster.
#[derive(Debug, Clone, Copy, Default)]
pub struct TlsGiven {
    /// `--upstream-ca`.
    pub ca: bool,
    /// `--upstream-cert` and `--upstream-key`.
    pub client_certificate: bool,
}

/// Whether `chain` (lowercase) says the peer does not speak TLS at all: a
/// plain-HTTP answer read as a TLS record.
pub fn is_plain_http_answer(chain: &str) -> bool {
    [
        "invalidcontenttype",
        "corrupt message",
        "wrong version number",
    ]
    .iter()
    .any(|mark| chain.contains(mark))
}

/// The hint for a handshake with `base` (the cluster's URL) that failed
/// with `chain` (its error chain, lowercase).
pub fn hint(chain: &str, base: &str, given: TlsGiven) -> String {
    if is_plain_http_answer(chain) {
        let plain = base.replacen("https://", "http://", 1);
        return format!("the cluster answers plain HTTP, not TLS: use {plain}");
    }
    let asks_for_certificate = ["certificaterequired", "certificate required"]
        .iter()
        .any(|mark| chain.contains(mark));
    let refused_ours = [
        "badcertificate",
        "unknownca",
        "handshakefailure",
        "handshake failure",
    ]
    .iter()
    .any(|mark| chain.contains(mark));
    if asks_for_certificate || (refused_ours && !given.client_certificate) {
        return if given.client_certificate {
            "the cluster refused the client certificate of --upstream-cert (is it signed by a CA the cluster trusts?)".to_string()
        } else {
            "the cluster asks for a client certificate: give one with --upstream-cert and --upstream-key".to_string()
        };
    }
    if refused_ours {
        return "the cluster refused the client certificate of --upstream-cert (is it signed by a CA the cluster trusts?)".to_string();
    }
    if chain.contains("notvalidforname") {
        return "the cluster's certificate names another host than the URL's: use the host it names".to_string();
    }
    if chain.contains("expired") {
        return "the cluster's certificate has expired".to_string();
    }
    if given.ca {
        "the cluster's certificate is not signed by the CA of --upstream-ca: check that file"
            .to_string()
    } else {
        "give the cluster's CA with --upstream-ca".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://127.0.0.1:9200";

    #[test]
    fn each_cause_gets_its_own_hint() {
        let nothing = TlsGiven::default();
        let ca = TlsGiven {
            ca: true,
            client_certificate: false,
        };
        let both = TlsGiven {
            ca: true,
            client_certificate: true,
        };
        let untrusted = "invalid peer certificate: unknownissuer";
        assert!(hint(untrusted, BASE, nothing).contains("--upstream-ca"));
        assert!(hint(untrusted, BASE, ca).contains("not signed by the CA"));
        let alert = "received fatal alert: certificaterequired";
        assert!(hint(alert, BASE, ca).contains("--upstream-cert and --upstream-key"));
        assert!(hint(alert, BASE, both).contains("refused the client certificate"));
        let plain = "received corrupt message of type invalidcontenttype";
        assert_eq!(
            hint(plain, BASE, nothing),
            "the cluster answers plain HTTP, not TLS: use http://127.0.0.1:9200"
        );
    }
}
