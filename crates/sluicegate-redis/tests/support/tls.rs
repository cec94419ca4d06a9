//! Certificates for a TLS `redis-server`, made in the test (rcgen, no `openssl` CLI): a CA,
//! and a certificate it signed for `localhost`, in PEM files of a directory of their own,
//! removed when dropped. Shared by the test support of `sluicegate-redis` and
//! `sluicegate-gate` (which includes this file by path).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// A CA and what it signed, as files.
pub struct TestCerts {
    dir: PathBuf,
    /// The CA's certificate (PEM).
    pub ca_pem: String,
}

impl TestCerts {
    /// A CA (named apart from the CAs of other `TestCerts`), a server certificate for
    /// `localhost` (no IP address: `127.0.0.1` is another name) and a client certificate,
    /// all signed by the CA.
    pub fn new() -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("sluicegate-tls-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // A name of its own: two CAs of one name are told apart by signature only.
        ca.distinguished_name
            .push(DnType::CommonName, format!("sluicegate test CA {n}"));
        let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
        let signed = |name: &str| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(vec![name.to_owned()]).unwrap();
            params.distinguished_name.push(DnType::CommonName, name);
            let cert = params.signed_by(&key, &ca).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server, server_key) = signed("localhost");
        let (client, client_key) = signed("client");
        for (file, pem) in [
            ("ca.crt", ca.pem()),
            ("redis.crt", server),
            ("redis.key", server_key),
            ("client.crt", client),
            ("client.key", client_key),
        ] {
            std::fs::write(dir.join(file), pem).unwrap();
        }
        TestCerts {
            dir,
            ca_pem: ca.pem(),
        }
    }

    /// The file `name` (`ca.crt`, `redis.crt`, `redis.key`, `client.crt`, `client.key`).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The directory of the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for TestCerts {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
