//! What every room of the folder shares: the option files mysqld reads by
//! default, the bounds of one resolution, and the option records
//! ([`OptionSet`]; its [`RawOption`]s are the facts model's, which keeps
//! them for the upgrade rules too). Data only: must not read the host.

use std::collections::BTreeSet;

pub use crate::facts::RawOption;
use crate::facts::{Facts, Namespace};

/// Option files mysqld reads on Linux, in order (Debian/MariaDB and MySQL
/// packages built without `DEFAULT_SYSCONFDIR`).
pub const DEFAULT_FILES: [&str; 2] = ["/etc/my.cnf", "/etc/mysql/my.cnf"];

/// Deepest `!include` nesting mysys follows (directives at this depth are skipped).
pub const MAX_INCLUDE_DEPTH: usize = 10;

/// Most option files read for one resolution (includes count every time);
/// keeps `!includedir` fan-out with cycles bounded.
pub const MAX_FILES_READ: usize = 2000;

/// Most bytes of option files processed for one resolution, counting a file
/// each time an include reaches it (it is read from the host only once).
pub const MAX_BYTES_PROCESSED: u64 = 64 * 1024 * 1024;

/// Most options taken from the files for one resolution (a real server's
/// files hold hundreds).
pub const MAX_OPTIONS: usize = 200_000;

/// Parse problems listed per file; the rest are counted.
pub(super) const MAX_ISSUES_PER_FILE: usize = 100;

/// Most earlier (overridden) assignments kept as evidence for one option.
pub(super) const MAX_OVERRIDDEN_EVIDENCE: usize = 16;

/// The server's data directory when no option file sets `datadir`.
pub const DEFAULT_DATADIR: &str = "/var/lib/mysql";

/// Capture holding `mysql -NB -e 'SHOW GLOBAL VARIABLES'`.
pub const VARIABLES_CAPTURE: &str = crate::catalogue::MYSQL_VARIABLES.name;

/// What every namespace derived from the gathered ones starts from:
/// the option files' values as the server runs them (`mycnf_effective`),
/// the running server's variables where they were captured (`mysql`;
/// `None` without a capture) and the first option file read (where a
/// compiled default's evidence points and a fix adds a line).
pub(super) struct Gathered<'a> {
    pub effective: Option<&'a Namespace>,
    pub runtime: Option<&'a Namespace>,
    pub first_file: String,
}

impl<'a> Gathered<'a> {
    /// The three from `facts`, once `mycnf_effective` and `mysql` are in.
    pub fn of(facts: &'a Facts) -> Gathered<'a> {
        Gathered {
            effective: facts.namespaces.get("mycnf_effective"),
            runtime: facts
                .namespaces
                .get("mysql")
                .filter(|n| n.unavailable.is_none()),
            first_file: facts
                .option_files
                .as_ref()
                .and_then(|o| o.files_read.first().cloned())
                .unwrap_or_else(|| DEFAULT_FILES[0].to_string()),
        }
    }
}

/// The source every mycnf fact and issue names.
pub(super) const SOURCE: &str = "mycnf";

/// Options resolved from a set of option files.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OptionSet {
    /// Every option of the requested groups in the order the server receives
    /// them (before name normalisation): `my_print_defaults` output.
    pub argv: Vec<RawOption>,
    /// Effective options keyed by normalised name (lowercase, `_`, `loose_`
    /// stripped, `skip_`/`disable_`/`enable_` folded into a boolean); last
    /// value wins; evidence lists the winner first, then earlier assignments.
    pub namespace: Namespace,
    /// The options the server accepts, keyed like `namespace`: a line the
    /// server ignores (a `loose-` option with a value it refuses) does not
    /// override, and an option whose value makes the server refuse to start
    /// is unreadable with that reason. Numeric limits are not applied yet
    /// (see `gather`).
    pub effective: Namespace,
    /// Host paths read, in order (a file included twice appears twice).
    pub files_read: Vec<String>,
    /// Groups seen in the files but not read (lowercase), e.g. `client`, `mysqld-8.0`.
    pub skipped_groups: BTreeSet<String>,
    /// Options (names and lines; no values) in versioned server groups
    /// (`[mysqld-8.0]`, `[mariadb-10.11]`) that were not read, each with the
    /// number of `argv` options read before it.
    pub versioned: Vec<(usize, RawOption)>,
    /// Bytes read from the host (each file once per resolution).
    pub bytes_read: u64,
    /// Bytes of option files processed, counting a file each time it is
    /// included (bounded by [`MAX_BYTES_PROCESSED`]).
    pub bytes_processed: u64,
    /// When mysqld would refuse to start because of the option files: why,
    /// with file and line. Options after that point are not in `argv`.
    pub fatal: Option<String>,
}

impl OptionSet {
    /// The argv strings alone (`--name=value`).
    pub fn args(&self) -> Vec<String> {
        self.argv.iter().map(|o| o.arg.clone()).collect()
    }
}
