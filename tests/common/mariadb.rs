//! A real MariaDB server for the tests that hold driftaudit to one: the
//! tools looked up once (one skip line, or a failure under `CI=true`, at the
//! first one missing), a fresh data directory, the server started from an
//! option tree on a unix socket in the test's temp dir, SQL run as root, and
//! the server shut down (killed if need be) when dropped, also on panic.
//! One copy for tests/mysql/ and tests/coverage/. Decides no verdict.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long mariadbd may take to open its socket, and to shut down.
const START: Duration = Duration::from_secs(60);
const STOP: Duration = Duration::from_secs(30);

/// The server and its clients (Debian's mariadb-server, mariadb-client).
pub struct Tools {
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
    pub client: PathBuf,
    pub admin: PathBuf,
}

/// The four tools, or `None` after one [`super::skip`] line for the first
/// one missing.
pub fn tools() -> Option<Tools> {
    Some(Tools {
        mariadbd: super::tool("mariadbd", "mariadb-server")?,
        install_db: super::tool("mariadb-install-db", "mariadb-server")?,
        client: super::tool("mariadb", "mariadb-client")?,
        admin: super::tool("mariadb-admin", "mariadb-client")?,
    })
}

/// The tools and a fresh data directory in a new temp dir (see
/// [`Tools::install_db`]), or `None` after [`super::skip`].
pub fn installed() -> Option<(Tools, tempfile::TempDir)> {
    let t = tools()?;
    let tmp = tempfile::tempdir().unwrap();
    t.install_db(tmp.path());
    Some((t, tmp))
}

/// [`installed`] with a server started on it ([`Tools::start_plain`], in
/// the temp dir), or `None` after [`super::skip`].
pub fn running() -> Option<(Tools, tempfile::TempDir, Server)> {
    let (t, tmp) = installed()?;
    let server = t.start_plain(tmp.path());
    Some((t, tmp, server))
}

impl Tools {
    /// A server on an option file of `[mysqld]` alone (`work/server.cnf`),
    /// everything else compiled-in ([`Args::Isolated`]).
    pub fn start_plain(&self, work: &Path) -> Server {
        let cnf = work.join("server.cnf");
        std::fs::write(&cnf, "[mysqld]\n").unwrap();
        Server::start(self, &cnf, work, Args::Isolated)
    }

    /// A fresh data directory in `work/data` (root without a password).
    /// mariadb-install-db occasionally fails on a loaded machine (bootstrap
    /// timeout): one retry with a fresh directory, and its output on failure.
    pub fn install_db(&self, work: &Path) {
        let mut last = String::new();
        for attempt in 0..2 {
            let data = work.join("data");
            let _ = std::fs::remove_dir_all(&data);
            let out = Command::new(&self.install_db)
                .args([
                    "--no-defaults",
                    "--auth-root-authentication-method=normal",
                    "--user=root",
                ])
                .arg(format!("--datadir={}", data.display()))
                .stdin(Stdio::null())
                .output()
                .expect("mariadb-install-db");
            if out.status.success() {
                return;
            }
            last = format!(
                "attempt {attempt}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        panic!("mariadb-install-db failed: {last}");
    }
}

/// What the command line adds to the option file (`--defaults-file`).
#[derive(Clone, Copy)]
pub enum Args {
    /// Nothing: the file names the data directory, socket (`work/s.sock`),
    /// pid file and error log itself.
    None,
    /// `work/data`, the socket `work/s.sock`, the pid file and `--user=root`:
    /// networking, the error log and every judged option stay the file's or
    /// the compiled-in default.
    Paths,
    /// [`Args::Paths`], `--skip-networking` and the error log `work/err.log`.
    Isolated,
}

/// How a start ended.
pub enum Started {
    /// The socket is there.
    Up,
    /// mariadbd exited first.
    Exited(ExitStatus),
    /// Neither within the start time (the server is still running).
    TimedOut,
}

/// A running server; shut down (and killed if need be) when dropped.
pub struct Server {
    child: Child,
    pub sock: PathBuf,
    log: PathBuf,
    client: PathBuf,
    admin: PathBuf,
}

impl Server {
    /// Start mariadbd from `cnf` (see [`Args`]) with its files in `work`,
    /// and wait for its socket; panics, with its error log, when it exits
    /// or does not open the socket in time.
    pub fn start(t: &Tools, cnf: &Path, work: &Path, args: Args) -> Server {
        let (server, started) = Server::try_start(t, cnf, work, args);
        match started {
            Started::Up => server,
            Started::Exited(st) => panic!(
                "mariadbd exited ({st}) with {}: {}",
                cnf.display(),
                server.log()
            ),
            Started::TimedOut => panic!(
                "mariadbd did not open its socket in {START:?}: {}",
                server.log()
            ),
        }
    }

    /// Start mariadbd as [`Server::start`] does, and say how that ended
    /// instead of panicking.
    pub fn try_start(t: &Tools, cnf: &Path, work: &Path, args: Args) -> (Server, Started) {
        let sock = work.join("s.sock");
        let log = work.join("err.log");
        let _ = std::fs::remove_file(&sock);
        let _ = std::fs::remove_file(&log);
        let mut cmd = Command::new(&t.mariadbd);
        cmd.arg(format!("--defaults-file={}", cnf.display()));
        if !matches!(args, Args::None) {
            cmd.arg(format!("--datadir={}", work.join("data").display()))
                .arg(format!("--socket={}", sock.display()))
                .arg(format!("--pid-file={}", work.join("p.pid").display()))
                .arg("--user=root");
        }
        if matches!(args, Args::Isolated) {
            cmd.arg("--skip-networking")
                .arg(format!("--log-error={}", log.display()));
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mariadbd");
        let mut server = Server {
            child,
            sock,
            log,
            client: t.client.clone(),
            admin: t.admin.clone(),
        };
        let deadline = Instant::now() + START;
        let started = loop {
            if let Ok(Some(st)) = server.child.try_wait() {
                break Started::Exited(st);
            }
            if server.sock.exists() {
                break Started::Up;
            }
            if Instant::now() > deadline {
                break Started::TimedOut;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        (server, started)
    }

    /// The error log in `work/err.log` so far (empty when there is none).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The running server as `driftaudit snapshot --mysql` captures it:
    /// the snapshot's `captures/mysql-variables.tsv`, read with a client
    /// option file in `work/client-home` that names root and this socket
    /// (the host's own files are not part of it: tests put the option
    /// tree they judge beside the capture). Panics when the capture fails.
    pub fn capture_with_snapshot(&self, work: &Path) -> String {
        let home = work.join("client-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".my.cnf"),
            format!("[client]\nuser = root\nsocket = {}\n", self.sock.display()),
        )
        .unwrap();
        let out = work.join("live-snapshot");
        let _ = std::fs::remove_dir_all(&out);
        let o = Command::new(super::cli::BIN)
            .args(["snapshot", "--mysql", "--out"])
            .arg(&out)
            .env("HOME", &home)
            .output()
            .expect("run driftaudit snapshot --mysql");
        assert!(
            o.status.success(),
            "snapshot --mysql: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read_to_string(out.join("captures/mysql-variables.tsv"))
            .expect("snapshot --mysql wrote no captures/mysql-variables.tsv")
    }

    /// Run `query` as root over the socket (no option files, `-NB`); its
    /// stdout. Panics with the client's stderr when it fails.
    pub fn sql(&self, query: &str) -> String {
        let mut client = Command::new(&self.client);
        client.arg("--no-defaults").arg("-S").arg(&self.sock);
        let out = client.args(["--user=root", "-NB", "-e", query]).output();
        let (code, stdout, stderr) = super::cli::parts(out.expect("run mariadb client"));
        assert!(code == 0, "{query}: {stderr}");
        stdout
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(&self.admin)
            .arg("--no-defaults")
            .arg("-S")
            .arg(&self.sock)
            .args(["--user=root", "shutdown"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + STOP;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mariadbd --version`'s text and its version word (after `Ver`), as in
/// "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu".
pub fn version(mariadbd: &Path) -> (String, String) {
    let out = Command::new(mariadbd)
        .arg("--version")
        .output()
        .expect("run mariadbd --version");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let word = text
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .unwrap_or_default()
        .to_string();
    (text, word)
}
