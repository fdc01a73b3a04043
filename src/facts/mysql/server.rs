//! Which server and version the host has when no runtime capture says:
//! dpkg status, rpm lists, sos's installed-rpms, upgrade-info. Must not
//! read option files.

use crate::host::Host;

/// A server version from the runtime `version` variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    /// major, minor, patch.
    pub parts: [u64; 3],
    /// MariaDB rather than MySQL/Percona.
    pub mariadb: bool,
}

impl ServerVersion {
    /// Parse `10.11.19-MariaDB-0+deb12u1` or `8.0.36-28`.
    pub fn parse(s: &str) -> Option<ServerVersion> {
        let head: String = s
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let nums: Vec<u64> = head.split('.').map_while(|p| p.parse().ok()).collect();
        if nums.len() < 2 {
            return None;
        }
        let parts = [nums[0], nums[1], nums.get(2).copied().unwrap_or(0)];
        Some(ServerVersion {
            parts,
            mariadb: s.to_ascii_lowercase().contains("mariadb"),
        })
    }

    pub(super) fn at_least(&self, v: [u64; 3]) -> bool {
        self.parts >= v
    }

    /// The server as people name it: `MariaDB 10.11.19`, `MySQL 8.0.36`.
    pub(super) fn label(&self) -> String {
        format!(
            "{} {}.{}.{}",
            if self.mariadb { "MariaDB" } else { "MySQL" },
            self.parts[0],
            self.parts[1],
            self.parts[2]
        )
    }
}

/// dpkg packages that carry the server binary, most specific first.
pub(super) const SERVER_PACKAGES: [&str; 8] = [
    "mariadb-server-core",
    "mariadb-server",
    "mysql-server-core",
    "mysql-community-server-core",
    "mysql-server",
    "percona-server-server",
    "mysql-community-server",
    "mariadb-server-10",
];

/// The installed server's version from what is on disk, first found wins:
/// the dpkg database (`/var/lib/dpkg/status`: an installed
/// `mariadb-server-core`, `mariadb-server-core-10.5`, `mysql-server-core-8.0`,
/// ...); a package listing (an sosreport's `installed-rpms`, `package-data`
/// or `installed-debs`, `rpm -qa` output in a snapshot's
/// `captures/installed-rpms`, the daily `/var/log/rpmpkgs`: see
/// [`server_package`]); else the `mariadb_upgrade_info`/`mysql_upgrade_info`
/// file `mariadb-upgrade` (and MySQL 8.0's own upgrade) leaves in the data
/// directory (`datadir` is asked for only then: finding it reads the option
/// files). Returns the version and where it was read.
///
/// The RPM database itself (`/var/lib/rpm`: Berkeley DB or SQLite holding
/// binary package headers) is not read, and a live `check` runs no command
/// (`rpm -q`) on the audited host: `driftaudit snapshot` captures the server
/// packages of `rpm -qa` instead (docs/snapshot-format.md).
pub fn installed_version(
    host: &Host,
    datadir: impl FnOnce() -> String,
) -> Option<(ServerVersion, String)> {
    if let Some(found) = dpkg_status_version(host) {
        return Some(found);
    }
    if let Some(found) = listed_package_version(host) {
        return Some(found);
    }
    let datadir = datadir();
    for f in ["mariadb_upgrade_info", "mysql_upgrade_info"] {
        let path = format!("{}/{f}", datadir.trim_end_matches('/'));
        if let Ok(t) = host.read_to_string(&path) {
            let t = t.trim_matches(|c: char| c.is_whitespace() || c == '\0');
            if let Some(v) = ServerVersion::parse(t) {
                return Some((v, format!("`{}` in {path}", crate::parse::truncate(t, 80))));
            }
        }
    }
    None
}

pub(super) fn dpkg_status_version(host: &Host) -> Option<(ServerVersion, String)> {
    let mut best = None;
    host.read_in_pieces(
        "/var/lib/dpkg/status",
        crate::host::MAX_FILE_BYTES,
        64 * 1024,
        |bytes, at_end| dpkg_status_piece(bytes, at_end, &mut best),
    )
    .ok()?;
    best.map(|(_, v, why)| (v, why))
}

/// Scan the whole stanzas of one piece of a dpkg status file read in
/// pieces: up to and including its last blank line (`\n\n`), or all of it
/// at the end of the file. Returns how many bytes it took. A stanza never
/// spans two scans, and each stanza is judged as the whole file's scan
/// would judge it (the blank line that ends one piece is the one that ends
/// its last stanza; a piece that starts after it starts a stanza), so
/// `best` ends as [`dpkg_status_scan`] of the whole file.
pub(super) fn dpkg_status_piece(
    bytes: &[u8],
    at_end: bool,
    best: &mut Option<(usize, ServerVersion, String)>,
) -> usize {
    let take = if at_end {
        bytes.len()
    } else {
        match memchr::memmem::rfind(bytes, b"\n\n") {
            Some(i) => i + 2,
            None => return 0,
        }
    };
    dpkg_status_scan_into(&bytes[..take], best);
    take
}

/// The best installed server package of a dpkg status file. A host lists
/// hundreds of packages (650 KB here) and at most a few are servers, so the
/// file is neither decoded nor split into stanzas: a SIMD search finds each
/// line that starts with `Package:`, the name alone decides whether to look
/// further, and only for a server package that would beat the best so far
/// is its stanza (the text between the blank lines around it) decoded and
/// judged, exactly as the whole file read as text (invalid UTF-8 replaced,
/// as [`Host::read_to_string`] does) and split on `\n\n` would be: first
/// `Package:`, `Status:` and `Version:` line of the stanza; installed,
/// including `deinstall ok installed`, which is still on disk. Newlines are
/// ASCII, so decoding a stanza alone gives the same text as decoding the
/// file. Nothing is copied but the winner's description.
#[cfg(test)]
pub(super) fn dpkg_status_scan(status: &[u8]) -> Option<(ServerVersion, String)> {
    let mut best = None;
    dpkg_status_scan_into(status, &mut best);
    best.map(|(_, v, why)| (v, why))
}

/// [`dpkg_status_scan`] onto the best found so far (rank, version, why).
pub(super) fn dpkg_status_scan_into(
    status: &[u8],
    best: &mut Option<(usize, ServerVersion, String)>,
) {
    // Stanzas already judged end here: a later hit inside one is its
    // second `Package:` line, which the first one's verdict already covers.
    let mut judged_to = 0usize;
    let starts = status
        .starts_with(b"Package:")
        .then_some(0)
        .into_iter()
        .chain(memchr::memmem::find_iter(status, b"\nPackage:").map(|i| i + 1));
    for at in starts {
        if at < judged_to {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &status[at..]).map_or(status.len(), |n| at + n);
        let name = String::from_utf8_lossy(&status[at + 8..line_end]);
        let Some(rank) = dpkg_server_rank(name.trim()) else {
            continue;
        };
        if best.as_ref().is_some_and(|b| rank >= b.0) {
            continue;
        }
        let start = memchr::memmem::rfind(&status[..at], b"\n\n").map_or(0, |i| i + 2);
        let end = memchr::memmem::find(&status[at..], b"\n\n").map_or(status.len(), |i| at + i);
        judged_to = end;
        let para = String::from_utf8_lossy(&status[start..end]);
        if let Some(b) = dpkg_stanza(&para, best.as_ref().map(|b| b.0)) {
            *best = Some(b);
        }
    }
}

/// One dpkg status stanza's verdict: an installed server package (first
/// `Package:`, `Status:` and `Version:` line; installed includes
/// `deinstall ok installed`, still on disk) ranked better than `beat`, with
/// its rank, version and description. The scan and its test reference both
/// judge stanzas with this.
pub(super) fn dpkg_stanza(
    para: &str,
    beat: Option<usize>,
) -> Option<(usize, ServerVersion, String)> {
    let field = |f: &str| para.lines().find_map(|l| l.strip_prefix(f).map(str::trim));
    let pkg = field("Package:")?;
    let rank = dpkg_server_rank(pkg)?;
    if beat.is_some_and(|b| rank >= b) {
        return None;
    }
    let (st, ver) = (field("Status:")?, field("Version:")?);
    if !st.ends_with(" installed") {
        return None;
    }
    let v = deb_version(pkg, ver)?;
    Some((
        rank,
        v,
        format!("installed package {pkg} {ver} (/var/lib/dpkg/status)"),
    ))
}

/// The stanzas of a dpkg status file that name a server package, whole
/// and in file order, each ended by a blank line: all [`installed_version`]
/// reads of it, so a snapshot keeps them alone (the whole database changes
/// with every package update on the host; these only when a server
/// package does). The same scan as the reader's: a `Package:` line at a
/// line start, stanzas split on blank lines.
pub fn dpkg_server_stanzas(status: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut taken_to = 0usize;
    let starts = status
        .starts_with(b"Package:")
        .then_some(0)
        .into_iter()
        .chain(memchr::memmem::find_iter(status, b"\nPackage:").map(|i| i + 1));
    for at in starts {
        if at < taken_to {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &status[at..]).map_or(status.len(), |n| at + n);
        let name = String::from_utf8_lossy(&status[at + 8..line_end]);
        if dpkg_server_rank(name.trim()).is_none() {
            continue;
        }
        let start = memchr::memmem::rfind(&status[..at], b"\n\n").map_or(0, |i| i + 2);
        let end = memchr::memmem::find(&status[at..], b"\n\n").map_or(status.len(), |i| at + i);
        taken_to = end;
        out.extend_from_slice(
            status[start..end]
                .strip_suffix(b"\n")
                .unwrap_or(&status[start..end]),
        );
        out.extend_from_slice(b"\n\n");
    }
    out
}

pub(super) fn dpkg_server_rank(pkg: &str) -> Option<usize> {
    SERVER_PACKAGES.iter().position(|p| {
        pkg == *p
            || pkg
                .strip_prefix(p)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// `1:10.11.19-0+deb12u1`: the epoch goes, the upstream version stays.
pub(super) fn deb_version(pkg: &str, ver: &str) -> Option<ServerVersion> {
    let upstream = ver.split_once(':').map_or(ver, |(_, v)| v);
    let mut v = ServerVersion::parse(upstream)?;
    v.mariadb = pkg.starts_with("mariadb");
    Some(v)
}

/// Most lines read from one package listing (a host has a few thousand packages).
pub(super) const MAX_LISTING_LINES: usize = 200_000;

pub(super) fn listed_package_version(host: &Host) -> Option<(ServerVersion, String)> {
    let mut files: Vec<String> = host
        .layout()
        .map(|l| l.package_listings())
        .unwrap_or(&[])
        .iter()
        .map(|s| s.to_string())
        .collect();
    if host.layout() == Some(crate::host::layout::Layout::Sosreport) {
        if let Ok(entries) = host.read_dir(crate::host::layout::SOS_RPM_DIR) {
            for e in entries {
                if crate::host::layout::is_sos_rpm_query(&e.name) {
                    files.push(format!("{}/{}", crate::host::layout::SOS_RPM_DIR, e.name));
                }
            }
        }
    }
    files.push("/var/log/rpmpkgs".into());
    for path in files {
        let Ok(text) = host.read_to_string(&path) else {
            continue;
        };
        let mut best: Option<(usize, ServerVersion, String)> = None;
        for (i, line) in text.lines().take(MAX_LISTING_LINES).enumerate() {
            let Some((rank, v, what)) = server_package(line) else {
                continue;
            };
            if best.as_ref().is_none_or(|b| rank < b.0) {
                let daily = if path == "/var/log/rpmpkgs" {
                    ", the daily package list"
                } else {
                    ""
                };
                best = Some((
                    rank,
                    v,
                    format!("installed package {what} ({path}:{}{daily})", i + 1),
                ));
            }
        }
        if let Some((_, v, why)) = best {
            return Some((v, why));
        }
    }
    None
}

/// The server package a line of a package listing names, with its rank
/// (lower: more specific), version and the package as written. Lines are
/// `NAME-VERSION-RELEASE.ARCH` first (sos's `installed-rpms`, padded and
/// followed by the install date; `package-data`, tab-separated;
/// `/var/log/rpmpkgs` with `.rpm`), or `dpkg -l` rows (`ii  NAME  VERSION
/// ARCH  DESCRIPTION`). RPM server packages: `MariaDB-server` (MariaDB's
/// repository), `mariadb-server`/`mysql-server` and their versioned
/// variants (`mariadb105-server` on Amazon Linux, `mariadb10.11-server`,
/// `mysql8.0-server` on Fedora), `mysql-community-server` (Oracle's
/// repository), `percona-server-server` and `Percona-Server-server-57`,
/// `MariaDB-Galera-server`/`mariadb-galera-server`. Software Collections
/// (`rh-mariadb105-mariadb-server`) read other option files and are not
/// taken.
pub fn server_package(line: &str) -> Option<(usize, ServerVersion, String)> {
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if first == "ii" || first == "hi" {
        // dpkg -l: installed (or held) packages only.
        let pkg = words.next()?;
        let ver = words.next()?;
        let name = pkg.split_once(':').map_or(pkg, |(n, _)| n);
        let rank = dpkg_server_rank(name)?;
        return Some((
            rank,
            deb_version(name, ver)?,
            format!(
                "{} {}",
                crate::parse::truncate(name, 80),
                crate::parse::truncate(ver, 80)
            ),
        ));
    }
    let nvra = first.strip_suffix(".rpm").unwrap_or(first);
    // `.ARCH` has no `-`; the release and version are the last two `-` fields.
    let nvr = match nvra.rsplit_once('.') {
        Some((nvr, arch)) if !arch.contains('-') && !arch.is_empty() => nvr,
        _ => nvra,
    };
    let (nv, _release) = nvr.rsplit_once('-')?;
    let (name, version) = nv.rsplit_once('-')?;
    let lower = name.to_ascii_lowercase();
    let versioned = |base: &str| {
        lower
            .strip_prefix(base)
            .and_then(|r| r.strip_suffix("-server"))
            .is_some_and(|mid| mid.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    };
    let rank = if name == "MariaDB-server" || name == "mariadb-server" || name == "mysql-server" {
        0
    } else if lower == "mysql-community-server" || lower == "percona-server-server" {
        1
    } else if lower
        .strip_prefix("percona-server-server-")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        || versioned("mariadb")
        || versioned("mysql")
    {
        2
    } else if lower == "mariadb-galera-server" {
        3
    } else {
        return None;
    };
    let mut v = ServerVersion::parse(version)?;
    v.mariadb = lower.contains("mariadb");
    Some((rank, v, crate::parse::truncate(nvra, 120)))
}

/// What was looked for when the server version stays unknown.
pub(super) const UNKNOWN_VERSION_WHY: &str = "no runtime capture, no server package in a package list (dpkg status, installed-rpms, /var/log/rpmpkgs), no upgrade-info file in the data directory";

/// What would decide the server version.
pub(super) const UNKNOWN_VERSION_FIX: &str = "capture `SHOW GLOBAL VARIABLES` (driftaudit snapshot --mysql) or the installed server package (`rpm -qa`: driftaudit snapshot, sos's installed-rpms)";

/// The sosreport's own signs of a server: sos's `du -s /var/lib/mysql/*`
/// (the mysql plugin runs it only where a server package is installed) and
/// a `mysqld`/`mariadbd` in its `ps auxwww`. Empty for other layouts.
pub(super) fn sos_server_signs(host: &Host) -> Vec<String> {
    use crate::host::layout::{sos_mangle, Layout};
    if host.layout() != Some(Layout::Sosreport) {
        return Vec::new();
    }
    let mut signs = Vec::new();
    let du = format!(
        "/sos_commands/mysql/{}",
        sos_mangle("du -s /var/lib/mysql/*")
    );
    if let Ok(t) = host.read_to_string(&du) {
        if t.lines().any(|l| l.contains("/var/lib/mysql")) {
            signs.push(format!("{du} (the data directory's size)"));
        }
    }
    let ps = "/sos_commands/process/ps_auxwww";
    if let Ok(t) = host.read_to_string(ps) {
        // USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND
        if let Some((n, _)) = t.lines().enumerate().find(|(_, l)| {
            l.split_whitespace().nth(10).is_some_and(|c| {
                let prog = c.rsplit('/').next().unwrap_or(c);
                matches!(prog, "mysqld" | "mariadbd")
            })
        }) {
            signs.push(format!("{ps}:{} (a running server)", n + 1));
        }
    }
    signs
}
