//! TLS to Redis (`rediss://`, the `tls` feature): the client with the CA and client
//! certificate given, the process's rustls crypto provider, and what a failure of TLS means,
//! in words a user can act on.

use crate::Error;

/// The TLS settings of a [`StoreBuilder`](super::StoreBuilder).
#[derive(Clone, Default)]
pub(super) struct Settings {
    /// PEM: the only CAs trusted, in place of the system's.
    #[cfg(feature = "tls")]
    pub(super) ca: Option<Vec<u8>>,
    /// PEM: a client certificate and its key, for mutual TLS.
    #[cfg(feature = "tls")]
    pub(super) client: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Settings");
        // Never the key.
        #[cfg(feature = "tls")]
        d.field("ca", &self.ca.as_ref().map(|_| "<PEM>"))
            .field("client", &self.client.as_ref().map(|_| "<PEM>"));
        d.finish()
    }
}

/// Whether `url` asks for TLS, by its scheme.
#[cfg_attr(feature = "tls", allow(dead_code))]
fn asks_tls(url: &str) -> bool {
    let scheme = url.split_once("://").map_or("", |(s, _)| s);
    scheme.eq_ignore_ascii_case("rediss") || scheme.eq_ignore_ascii_case("valkeys")
}

/// What a store's connections trust, for what its failures say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Trust {
    /// A plain `redis://` connection.
    Plain,
    /// TLS, checked against the system's CAs.
    SystemCas,
    /// TLS, checked against the CAs given (`tls_ca`) only.
    GivenCas,
}

impl Trust {
    /// What a client made from `info` with `settings` trusts.
    pub(super) fn of(info: &redis::ConnectionInfo, settings: &Settings) -> Trust {
        #[cfg(feature = "tls")]
        let given = settings.ca.is_some();
        #[cfg(not(feature = "tls"))]
        let given = {
            let _ = settings;
            false
        };
        match (is_tls(info), given) {
            (false, _) => Trust::Plain,
            (true, false) => Trust::SystemCas,
            (true, true) => Trust::GivenCas,
        }
    }

    fn is_tls(self) -> bool {
        self != Trust::Plain
    }
}

/// Whether a client made from `info` speaks TLS.
fn is_tls(info: &redis::ConnectionInfo) -> bool {
    #[cfg(feature = "tls")]
    {
        matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. })
    }
    #[cfg(not(feature = "tls"))]
    {
        let _ = info;
        false
    }
}

/// The client for `url` with `settings`.
#[cfg(not(feature = "tls"))]
pub(super) fn client(url: &str, _settings: &Settings) -> Result<redis::Client, Error> {
    if asks_tls(url) {
        return Err(Error::Tls(
            "a `rediss://` URL needs sluicegate-redis's `tls` feature (on by default: this build turned it off with `default-features = false`)".into(),
        ));
    }
    Ok(redis::Client::open(url)?)
}

/// The client for `url` with `settings`.
#[cfg(feature = "tls")]
pub(super) fn client(url: &str, settings: &Settings) -> Result<redis::Client, Error> {
    use redis::IntoConnectionInfo;

    let info = url.into_connection_info()?;
    let tls = is_tls(&info);
    if !tls {
        if settings.ca.is_some() || settings.client.is_some() {
            return Err(Error::Tls(
                "a CA or client certificate is for a `rediss://` URL (TLS), and this one is plain: write `rediss://HOST:PORT` with the port where Redis serves TLS (its `tls-port`)".into(),
            ));
        }
        return Ok(redis::Client::open(info)?);
    }
    install_provider();
    if let redis::ConnectionAddr::TcpTls {
        host,
        insecure: true,
        ..
    } = info.addr()
    {
        tracing::warn!(
            host = %host,
            "`#insecure` in the redis URL: the certificate redis presents is not checked, so anyone on the way can read and change what goes to redis; give the CA that signed it instead"
        );
    }
    if settings.ca.is_none() && settings.client.is_none() {
        return Ok(redis::Client::open(info)?);
    }
    let root_cert = match &settings.ca {
        Some(pem) => {
            use rustls::pki_types::{CertificateDer, pem::PemObject};
            let certs = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| Error::Tls(format!("the CA certificate is not valid PEM: {e}")))?;
            if certs.is_empty() {
                return Err(Error::Tls(
                    "no certificate in the CA PEM (it holds no `-----BEGIN CERTIFICATE-----`)"
                        .into(),
                ));
            }
            Some(pem.clone())
        }
        None => None,
    };
    let client_tls = settings
        .client
        .as_ref()
        .map(|(cert, key)| redis::ClientTlsConfig {
            client_cert: cert.clone(),
            client_key: key.clone(),
        });
    redis::Client::build_with_tls(
        info,
        redis::TlsCertificates {
            client_tls,
            root_cert,
        },
    )
    .map_err(|e| Error::Tls(e.to_string()))
}

/// Makes ring rustls's provider for the process, unless the program chose one already.
///
/// redis-rs builds its TLS settings with `rustls::ClientConfig::builder()`, which takes the
/// process's provider, or the one the crate features name, and panics when they name two:
/// a program whose other dependencies turn on rustls's `aws-lc-rs` (its default) next to our
/// `ring` would panic at its first `rediss://` connection. A provider the program installed
/// is kept.
#[cfg(feature = "tls")]
fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // ring, for its build (aws-lc-rs needs cmake and minutes more); deprecated in rustls
        // 0.23.48 for its lack of post-quantum key exchange (docs/global-limits.md, "TLS").
        // Another thread may install one in between: then that one stays, as wanted.
        #[allow(deprecated)]
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// `e` (an error of a call to Redis, over TLS when `tls`) on one line, with what to do when
/// it says little by itself.
pub(super) fn describe(e: &redis::RedisError, trust: Trust) -> String {
    let text = super::health::one_line(e);
    match hint(&text, e, trust) {
        Some(hint) => format!("{hint} ({text})"),
        None => text,
    }
}

/// Whether `e` is a TLS failure that stays until the settings or the certificates change:
/// a certificate redis presented that is not trusted (another CA, another name, expired,
/// not signed by the CA that has its issuer's name), a client certificate redis asks for
/// and did not get, or refused, and a client key that is not its certificate's. (A plain
/// port spoken to over TLS, or the reverse, may be Redis on its way: not one of these.)
pub(super) fn is_refused_tls(e: &redis::RedisError) -> bool {
    let text = e.to_string();
    text.contains("invalid peer certificate")
        || text.contains("KeyMismatch")
        || refused_client_cert(&text)
}

/// Whether Redis sent an alert about the gate's client certificate: it asks for one and got
/// none, or refuses the one it got.
fn refused_client_cert(text: &str) -> bool {
    const ALERTS: [&str; 6] = [
        "CertificateRequired",
        "UnknownCA",
        "BadCertificate",
        "CertificateUnknown",
        "CertificateExpired",
        "AccessDenied",
    ];
    text.contains("received fatal alert")
        && ALERTS
            .iter()
            .any(|a| text.contains(&format!("received fatal alert: {a}")))
}

fn hint(text: &str, e: &redis::RedisError, trust: Trust) -> Option<&'static str> {
    let tls = trust.is_tls();
    // trial117: these three said only rustls's words, as a Redis that "does not answer".
    if text.contains("received fatal alert: CertificateRequired") {
        return Some(
            "redis asks for a client certificate (its `tls-auth-clients`) and got none: give the certificate and its key (the gate's `[store] tls_cert_file` and `tls_key_file`, `StoreBuilder::tls_client_cert`)",
        );
    }
    if refused_client_cert(text) {
        return Some(
            "redis refused the client certificate: it is not signed by a CA redis trusts (its `tls-ca-cert-file`), or has expired; give one that CA signed (the gate's `[store] tls_cert_file` and `tls_key_file`)",
        );
    }
    if text.contains("KeyMismatch") {
        return Some(
            "the client certificate's private key is not the one given (the gate's `[store] tls_key_file`): give the key the certificate was made for",
        );
    }
    if text.contains("BadSignature") {
        return Some(
            "the TLS certificate redis presented names a trusted CA as its issuer, but that CA did not sign it (another CA of the same name, one made again?): give the CA certificate that signed it (the gate's `[store] tls_ca_file`, `StoreBuilder::tls_ca`)",
        );
    }
    // trial117: with the CAs given only those are trusted; sending the operator to the
    // system's CAs sent them elsewhere.
    if text.contains("UnknownIssuer") && trust == Trust::GivenCas {
        return Some(
            "the TLS certificate redis presented is not signed by a CA in `tls_ca_file` (the gate's `[store]` setting, `StoreBuilder::tls_ca`; only the CAs there are trusted, not the system's): give the CA certificate that signed it; while Redis moves to a certificate of a new CA, write both CAs in the file",
        );
    }
    if text.contains("UnknownIssuer") {
        return Some(
            "the TLS certificate redis presented is not signed by a CA this machine trusts: give the CA certificate that signed it (the gate's `[store] tls_ca_file`, `StoreBuilder::tls_ca`), or install it among the system's CAs; for a managed Redis, install the system's CA certificates (the `ca-certificates` package)",
        );
    }
    if text.contains("NotValidForName") || text.contains("not valid for name") {
        return Some(
            "the TLS certificate redis presented is not made out for the host in the URL: connect by a name the certificate lists (its DNS name rather than an IP address, as the provider shows it)",
        );
    }
    if text.contains("Expired") || text.contains("expired") {
        return Some(
            "the TLS certificate redis presented has expired, or is not valid yet (is this machine's clock right?)",
        );
    }
    if tls
        && (text.contains("InvalidContentType")
            || text.contains("corrupt message")
            || text.contains("InvalidMessage"))
    {
        return Some(
            "what answers there does not speak TLS: the port is Redis's plain one; write the port where Redis serves TLS (its `tls-port`; 6380 at Azure), or `redis://` for a Redis without TLS",
        );
    }
    // A plain Redis reads a TLS handshake as the start of a command, and waits for the rest.
    if tls && e.is_timeout() {
        return Some(
            "no answer over TLS: if this is Redis's plain port (a plain Redis waits in silence for the rest of what it takes for a command), write the port where Redis serves TLS (its `tls-port`; 6380 at Azure), or `redis://` for a Redis without TLS",
        );
    }
    if !tls && plain_turned_away(e) {
        return Some(
            "the connection was closed before redis answered: if this port serves TLS only (a managed Redis, Azure's 6380, a `tls-port`), write `rediss://`",
        );
    }
    None
}

/// Whether a plain connection was closed or reset before any answer, as a TLS port does to
/// a client that does not start with a TLS handshake.
fn plain_turned_away(e: &redis::RedisError) -> bool {
    e.is_connection_dropped()
        || e.kind() == redis::ErrorKind::Parse && e.to_string().contains("end of file")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// trial117: what rustls says of a client certificate Redis asks for or refuses, of a
    /// key that is not the certificate's and of a certificate another CA of its issuer's name
    /// signed, gets what to do, and is a failure that stays until the settings change.
    #[test]
    fn client_certificate_failures_say_what_to_do() {
        let io = |text: &str| redis::RedisError::from(std::io::Error::other(text.to_owned()));
        for (text, says) in [
            ("received fatal alert: CertificateRequired", "tls_cert_file"),
            (
                "received fatal alert: UnknownCA",
                "redis refused the client certificate",
            ),
            (
                "received fatal alert: CertificateExpired",
                "redis refused the client certificate",
            ),
            (
                "Unable to build client with TLS parameters provided. - InvalidClientConfig: keys may not be consistent: KeyMismatch",
                "tls_key_file",
            ),
            ("invalid peer certificate: BadSignature", "did not sign it"),
        ] {
            let e = io(text);
            let said = describe(&e, Trust::SystemCas);
            assert!(said.contains(says) && said.contains(text), "{said}");
            assert!(is_refused_tls(&e), "{text}");
        }
        // trial117: with the CAs given, an unknown issuer is not sent to the system's CAs.
        let e = io("invalid peer certificate: UnknownIssuer");
        let system = describe(&e, Trust::SystemCas);
        assert!(
            system.contains("install it among the system's CAs"),
            "{system}"
        );
        let given = describe(&e, Trust::GivenCas);
        assert!(
            given.contains("not signed by a CA in `tls_ca_file`")
                && given.contains("write both CAs")
                && !given.contains("system's CAs:"),
            "{given}"
        );
        for text in [
            "timed out",
            "Connection reset by peer",
            "received fatal alert: DecodeError",
        ] {
            assert!(!is_refused_tls(&io(text)), "{text}");
        }
    }

    #[test]
    fn tls_is_asked_by_the_scheme() {
        assert!(asks_tls("rediss://h:6380"));
        assert!(asks_tls("VALKEYS://h"));
        assert!(!asks_tls("redis://h"));
        assert!(!asks_tls("unix:///tmp/r.sock"));
    }
}
