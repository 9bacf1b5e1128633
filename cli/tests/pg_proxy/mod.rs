//! A Unix-socket proxy in front of the tests' PostgreSQL server: it takes the database away
//! (no new connection, the open ones cut) and brings it back while `agentx serve` runs, for
//! the tests of database faults (`pg_serve.rs`, `pg_chaos.rs`).
#![allow(dead_code)]

/// A Unix-socket proxy in front of the test's PostgreSQL server, to take the database away and
/// bring it back while `agentx serve` runs.
pub struct Proxy {
    dir: tempfile::TempDir,
    target: std::path::PathBuf,
    port: String,
    live: std::sync::Arc<std::sync::Mutex<Vec<std::os::unix::net::UnixStream>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    /// Proxies the server of `url` (`…?host=<socket dir>&port=<n>`); returns it and the URL
    /// through it.
    pub fn new(url: &str) -> (Proxy, String) {
        let param = |k: &str| {
            url.split(['?', '&'])
                .find_map(|p| p.strip_prefix(&format!("{k}=")))
                .unwrap()
                .to_owned()
        };
        let (host, port) = (param("host"), param("port"));
        let proxy = Proxy {
            dir: tempfile::tempdir().unwrap(),
            target: std::path::Path::new(&host).join(format!(".s.PGSQL.{port}")),
            port,
            live: Default::default(),
            stop: Default::default(),
        };
        let through = url.replace(
            &format!("host={host}"),
            &format!("host={}", proxy.dir.path().display()),
        );
        proxy.up();
        (proxy, through)
    }

    fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join(format!(".s.PGSQL.{}", self.port))
    }

    pub fn up(&self) {
        use std::sync::atomic::Ordering;
        self.stop.store(false, Ordering::SeqCst);
        let listener = std::os::unix::net::UnixListener::bind(self.socket()).unwrap();
        listener.set_nonblocking(true).unwrap();
        let (target, live, stop) = (self.target.clone(), self.live.clone(), self.stop.clone());
        std::thread::spawn(move || loop {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            match listener.accept() {
                Ok((client, _)) => {
                    client.set_nonblocking(false).unwrap();
                    let Ok(server) = std::os::unix::net::UnixStream::connect(&target) else {
                        continue;
                    };
                    live.lock()
                        .unwrap()
                        .extend([client.try_clone().unwrap(), server.try_clone().unwrap()]);
                    for (mut from, mut to) in [
                        (client.try_clone().unwrap(), server.try_clone().unwrap()),
                        (server, client),
                    ] {
                        std::thread::spawn(move || {
                            let _ = std::io::copy(&mut from, &mut to);
                            let _ = to.shutdown(std::net::Shutdown::Both);
                        });
                    }
                }
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        });
    }

    /// The database goes away: no new connection, and the open ones are cut.
    pub fn down(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let _ = std::fs::remove_file(self.socket());
        for s in self.live.lock().unwrap().drain(..) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}
