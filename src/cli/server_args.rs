//! The one convention every command follows to read a running database
//! server of the live host (`check`, `diff … live`, `fix`, `snapshot`): it
//! is read only when asked (`--mysql`), read-only, through the client with
//! the user's own connection settings or the file or socket named here.
//! Must not read anything itself (the library's `read_running_mysql` and
//! snapshot capture do).

use std::path::PathBuf;

use clap::Args;
use driftaudit::MysqlConnection;

/// How to reach the live host's running MySQL/MariaDB server.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct MysqlArgs {
    /// Read the live host's running MySQL/MariaDB server, read-only:
    /// `SHOW GLOBAL VARIABLES` through the `mysql` (or `mariadb`) client,
    /// given only the connection options of your client option files (or
    /// of --mysql-defaults-file), as the user running driftaudit. Without
    /// it no server is contacted and the rules that need the running
    /// values are unknown on a live host.
    #[arg(long)]
    pub(crate) mysql: bool,
    /// Read the server's connection options from this option file only
    /// (its [client] groups, as the client's --defaults-file does); implies
    /// --mysql.
    #[arg(long, value_name = "FILE")]
    pub(crate) mysql_defaults_file: Option<PathBuf>,
    /// Connect through this unix socket (the client's --socket); implies
    /// --mysql. MYSQL_UNIX_PORT, MYSQL_HOST and MYSQL_TCP_PORT work as for
    /// the client itself.
    #[arg(long, value_name = "PATH")]
    pub(crate) mysql_socket: Option<PathBuf>,
}

impl MysqlArgs {
    /// The connection to read through, when a read was asked for.
    pub(crate) fn connection(&self) -> Option<MysqlConnection> {
        if !self.mysql && self.mysql_defaults_file.is_none() && self.mysql_socket.is_none() {
            return None;
        }
        let mut c = MysqlConnection::new();
        if let Some(f) = &self.mysql_defaults_file {
            c = c.defaults_file(f);
        }
        if let Some(s) = &self.mysql_socket {
            c = c.socket(s);
        }
        Some(c)
    }
}

/// Read the running server into a live `host` when `args` ask for it,
/// saying on stderr what could not be read (the runtime rules then say it
/// too, as `unknown`).
pub(crate) fn read_server(host: &mut driftaudit::Host, args: &MysqlArgs) {
    if let Some(conn) = args.connection() {
        if let Err(e) = driftaudit::read_running_mysql(host, &conn) {
            eprintln!(
                "driftaudit: --mysql: the running server was not read ({}); the rules that need its values are unknown",
                driftaudit::unstable::render::printable(&e.to_string(), false)
            );
        }
    }
}
