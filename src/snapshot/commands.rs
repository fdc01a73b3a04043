//! The external commands a snapshot runs, read-only: the `mysql` (else
//! `mariadb`) client for `SHOW GLOBAL VARIABLES`, fed only the connection
//! options of the user's own option files (through `my_print_defaults`,
//! on stdin, never on a command line), `rpm -qa` and `tune2fs -l` (through
//! [`run_capped`]); every one with a timeout and an output cap, and why one
//! gave no capture ([`CommandError`]). Must not decide what is captured or
//! where it goes (that is `captures`), nor run anything that changes the
//! host.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::host::io_message;

/// `mysql` client arguments for `captures/mysql-variables.tsv`, after
/// `--defaults-file=/dev/stdin` (see [`mysql_client_defaults`]): batch TSV,
/// escaped (`\t`, `\n`, `\\`), without column names.
pub const MYSQL_CAPTURE_ARGS: [&str; 10] = [
    "--batch",
    "--skip-column-names",
    "--skip-table",
    "--skip-vertical",
    "--skip-html",
    "--skip-xml",
    "--skip-raw",
    "--skip-auto-vertical-output",
    "-e",
    "SHOW GLOBAL VARIABLES",
];

/// Option groups the `mysql`/`mariadb` client reads (MariaDB 10.11's
/// `load_default_groups`; MySQL's client reads `mysql` and `client`).
pub const MYSQL_CLIENT_GROUPS: [&str; 5] = [
    "mysql",
    "mariadb-client",
    "client",
    "client-server",
    "client-mariadb",
];

/// Client options that say how to connect and authenticate: the only ones
/// taken from the user's option files for the capture. Display and
/// behaviour options (`table`, `vertical`, `pager`, `tee`, which opens its
/// file as soon as it is read, `verbose`, which cannot be switched off
/// again, `init-command`, which would run SQL, `safe-updates`, ...) are not.
const MYSQL_CONNECTION_OPTIONS: [&str; 33] = [
    "user",
    "password",
    "host",
    "port",
    "socket",
    "protocol",
    "ssl",
    "ssl_ca",
    "ssl_capath",
    "ssl_cert",
    "ssl_cipher",
    "ssl_key",
    "ssl_crl",
    "ssl_crlpath",
    "ssl_verify_server_cert",
    "ssl_mode",
    "ssl_fips_mode",
    "tls_version",
    "tls_ciphersuites",
    "default_auth",
    "plugin_dir",
    "enable_cleartext_plugin",
    "connect_timeout",
    "compress",
    "compression_algorithms",
    "zstd_compression_level",
    "secure_auth",
    "server_public_key_path",
    "get_server_public_key",
    "character_sets_dir",
    "default_character_set",
    "bind_address",
    "connect_expired_password",
];

/// The connection options of the user's client option files (as
/// `my_print_defaults` resolves them: the same files, includes and groups
/// as the client), written as an option file of one `[client]` group for
/// the client to read from stdin. `None` when `my_print_defaults` cannot
/// run (the client then runs with `--no-defaults`).
pub fn mysql_client_defaults() -> Option<String> {
    print_client_defaults(None).ok()
}

/// Which running MySQL/MariaDB server a live read connects to, and as whom.
/// The default is what the `mysql` client itself would use: the user's
/// client option files (`[client]`, `[mysql]`, ... as `my_print_defaults`
/// resolves them) and the client's standard environment (`MYSQL_HOST`,
/// `MYSQL_TCP_PORT`, `MYSQL_UNIX_PORT`, `MYSQL_HOME`, which the client and
/// `my_print_defaults` read themselves).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MysqlConnection {
    /// Read the connection options from this option file only, as the
    /// client's own `--defaults-file` does (its client groups; still only
    /// the connection options are passed on).
    pub defaults_file: Option<std::path::PathBuf>,
    /// Connect through this unix socket (the client's `--socket`), over any
    /// socket the option files name.
    pub socket: Option<std::path::PathBuf>,
}

impl MysqlConnection {
    /// The client's defaults: the user's option files and environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read the connection options from `file` only.
    pub fn defaults_file(mut self, file: impl Into<std::path::PathBuf>) -> Self {
        self.defaults_file = Some(file.into());
        self
    }

    /// Connect through the unix socket `path`.
    pub fn socket(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.socket = Some(path.into());
        self
    }
}

/// [`client_defaults_file`] of what `my_print_defaults` prints for the
/// client groups, from `defaults_file` only when given (the option must
/// come first, as for every MySQL program).
fn print_client_defaults(defaults_file: Option<&Path>) -> Result<String, CommandError> {
    let tool = find_program("my_print_defaults").ok_or(CommandError::NoPrintDefaults)?;
    let run = |show: bool| {
        let mut cmd = Command::new(&tool);
        if let Some(f) = defaults_file {
            let mut arg = std::ffi::OsString::from("--defaults-file=");
            arg.push(f);
            cmd.arg(arg);
        }
        if show {
            cmd.arg("--show");
        }
        run_capped(cmd.args(MYSQL_CLIENT_GROUPS))
    };
    let mut out = run(false)?;
    // MySQL's my_print_defaults masks passwords unless `--show` (MariaDB's
    // has no such option and never masks).
    if out.lines().any(|l| {
        l.split_once('=').is_some_and(|(n, v)| {
            n.contains("pass") && !v.is_empty() && v.bytes().all(|b| b == b'*')
        })
    }) {
        out = run(true)?;
    }
    Ok(client_defaults_file(&out))
}

/// The `[client]` option file for [`mysql_client_defaults`] from
/// `my_print_defaults` output (`--name=value` per line, values as the
/// client receives them): connection options only, in order (the last
/// one wins, as in the user's files), each value double-quoted with the
/// escapes mysys reads back (`\\`, `\"`, `\n`, `\t`, `\r`, `\b`), so a
/// password with `#`, quotes, spaces or backslashes arrives unchanged.
pub fn client_defaults_file(print_defaults: &str) -> String {
    let mut out = String::from("[client]\n");
    for line in print_defaults.lines() {
        let Some(arg) = line.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (arg, None),
        };
        let norm = name.to_ascii_lowercase().replace('-', "_");
        let norm = norm.strip_prefix("loose_").unwrap_or(&norm);
        let base = ["skip_", "disable_", "enable_"]
            .iter()
            .find_map(|p| norm.strip_prefix(p))
            .filter(|b| !MYSQL_CONNECTION_OPTIONS.contains(&norm) && !b.is_empty())
            .unwrap_or(norm);
        // A unique prefix the client accepts (`pass` for `password`).
        let known = MYSQL_CONNECTION_OPTIONS.contains(&base)
            || (base.len() >= 4
                && MYSQL_CONNECTION_OPTIONS
                    .iter()
                    .filter(|o| o.starts_with(base))
                    .count()
                    == 1
                && ![
                    "pager",
                    "prompt",
                    "print_query_on_error",
                    "progress_reports",
                ]
                .iter()
                .any(|o| o.starts_with(base)));
        if !known {
            continue;
        }
        match value {
            // A bare `password` asks on the terminal: never here.
            None if base.starts_with("pass") => {}
            None => {
                out.push_str(name);
                out.push('\n');
            }
            Some(v) => {
                out.push_str(name);
                out.push_str(" = \"");
                for c in v.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '"' => out.push_str("\\\""),
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        '\r' => out.push_str("\\r"),
                        '\u{8}' => out.push_str("\\b"),
                        c => out.push(c),
                    }
                }
                out.push_str("\"\n");
            }
        }
    }
    out
}

/// `SHOW GLOBAL VARIABLES` through the `mysql` (else `mariadb`) client on
/// the user's connection settings: `--defaults-file=/dev/stdin` reads only
/// the connection options of [`mysql_client_defaults`] from a pipe (so no
/// password is on a command line or in the environment, and nothing of the
/// user's `[mysql]` display settings applies), then the capture format is
/// fixed by [`MYSQL_CAPTURE_ARGS`].
pub fn mysql_capture() -> Result<String, CommandError> {
    mysql_capture_from(&MysqlConnection::default())
}

/// [`mysql_capture`] of the server `conn` names: the connection options of
/// its `defaults_file` (which must be readable through `my_print_defaults`,
/// else the read fails rather than fall back to other files), then its
/// `socket` on the command line (a path, never a secret).
pub fn mysql_capture_from(conn: &MysqlConnection) -> Result<String, CommandError> {
    let client = find_program("mysql")
        .or_else(|| find_program("mariadb"))
        .ok_or(CommandError::NoClient)?;
    let mut cmd = Command::new(client);
    let defaults = match (
        &conn.defaults_file,
        print_client_defaults(conn.defaults_file.as_deref()),
    ) {
        (_, Ok(d)) => Some(d),
        (Some(_), Err(e)) => return Err(e),
        (None, Err(_)) => None,
    };
    match &defaults {
        Some(_) => cmd.arg("--defaults-file=/dev/stdin"),
        None => cmd.arg("--no-defaults"),
    };
    if let Some(sock) = &conn.socket {
        let mut arg = std::ffi::OsString::from("--socket=");
        arg.push(sock);
        cmd.arg(arg);
    }
    cmd.args(MYSQL_CAPTURE_ARGS);
    run_capped_input(&mut cmd, defaults.as_deref().map(str::as_bytes))
}

/// `rpm` arguments for `captures/installed-rpms` (read-only query of the
/// package database; one `NAME-VERSION-RELEASE.ARCH` a line, as the first
/// column of sos's `installed-rpms`).
pub const RPM_CAPTURE_ARGS: [&str; 5] = ["-qa", "--nodigest", "--nosignature", "--qf", "%{NVRA}\n"];

/// An executable named `name` in a directory of `PATH` (or the usual
/// system directories when `PATH` is unset).
pub(super) fn find_program(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    path.split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Why an external command (`tune2fs -l`, `rpm -qa`, the `mysql` client)
/// gave no capture; the text is the capture's `unreadable` reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// Neither client is installed.
    #[error("no `mysql` or `mariadb` client on PATH")]
    NoClient,
    /// An option file was named but `my_print_defaults`, which reads it as
    /// the client would, is not installed.
    #[error("no `my_print_defaults` on PATH to read the option file with")]
    NoPrintDefaults,
    /// The command could not be started.
    #[error("cannot run: {}", io_message(.0))]
    Spawn(std::io::Error),
    /// It ran longer than the timeout and was killed.
    #[error("timed out after {0}s")]
    Timeout(u64),
    /// Waiting for it failed.
    #[error("{}", io_message(.0))]
    Wait(std::io::Error),
    /// It exited unsuccessfully; the first line it wrote to stderr.
    #[error("{status}: {stderr}")]
    Failed {
        /// Exit status.
        status: std::process::ExitStatus,
        /// First non-empty line of stderr.
        stderr: String,
    },
}

/// Time allowed to each external command (`tune2fs`, `mysql`).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);

/// Largest output kept from an external command.
const COMMAND_OUTPUT_CAP: u64 = 8 * 1024 * 1024;

/// Run a command with no stdin, a timeout and an output cap; stdout on success.
pub(super) fn run_capped(cmd: &mut Command) -> Result<String, CommandError> {
    run_capped_input(cmd, None)
}

/// [`run_capped`] with `input` (if any) on stdin, then end of file.
fn run_capped_input(cmd: &mut Command, input: Option<&[u8]>) -> Result<String, CommandError> {
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(CommandError::Spawn)?;
    if let (Some(mut stdin), Some(bytes)) = (child.stdin.take(), input) {
        let bytes = bytes.to_vec();
        // A thread, so a child that does not read cannot block us; the pipe
        // closes when it is done.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout {
            let _ = s.take(COMMAND_OUTPUT_CAP).read_to_end(&mut buf);
        }
        buf
    });
    let err_t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr {
            let _ = s.take(64 * 1024).read_to_end(&mut buf);
        }
        buf
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CommandError::Timeout(COMMAND_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(CommandError::Wait(e)),
        }
    };
    let out = out_t.join().unwrap_or_default();
    let err = err_t.join().unwrap_or_default();
    if !status.success() {
        let msg = String::from_utf8_lossy(&err);
        let first = msg.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(CommandError::Failed {
            status,
            stderr: first.trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_defaults_keep_only_connection_options() {
        let printed = "--socket=/run/mysqld/mysqld.sock\n--user=backup\n--table\n--tee=/tmp/x\n--pager=less\n--init-command=SET GLOBAL x=1\n--verbose\n--loose-ssl-ca=/etc/ca.pem\n--skip-ssl\n--pass=p a\"s#\\x\n--password\n--prompt=x\n--local-infile=1\n";
        assert_eq!(
            client_defaults_file(printed),
            "[client]\nsocket = \"/run/mysqld/mysqld.sock\"\nuser = \"backup\"\nloose-ssl-ca = \"/etc/ca.pem\"\nskip-ssl\npass = \"p a\\\"s#\\\\x\"\n"
        );
    }
}
