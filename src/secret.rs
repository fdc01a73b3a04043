//! What is secret, per format, by meaning: the one list of secret-bearing
//! option-file options, server variables, Zimbra localconfig keys, sysctl keys
//! and mount options, the placeholder shown instead of a secret value, and the
//! helpers every reader, the snapshot writer, diff and the renderers use to
//! keep secret values out of output, files and messages. A leaf module: it
//! imports nothing of the crate (no facts, engine, policy, render or parse),
//! does no I/O, and no parser decides on its own what is secret.
//!
//! A name is secret because of what the program that reads it does with its
//! value (mysqld takes `wsrep_sst_auth` as `user:password`), never because a
//! word appears in it: `innodb_force_primary_key`,
//! `disconnect_on_expired_password` and `caching_sha2_password_digest_rounds`
//! are ordinary settings and stay visible.

use std::borrow::Cow;

/// The text shown (and stored) instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// [`REDACTED`] written with XML's own escaping, for a `<value>` text node:
/// an XML reader gives back exactly [`REDACTED`].
pub const REDACTED_XML: &str = "&lt;redacted&gt;";

/// The formats whose names [`is_secret`] classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// MySQL/MariaDB option files (my.cnf) and the `--name=value` arguments
    /// they become; names as written (dashes or underscores, `loose-`,
    /// unique prefixes as mysqld and the clients accept them).
    OptionFile,
    /// `SHOW GLOBAL VARIABLES` names (captures in TSV, table or vertical form).
    ServerVariable,
    /// Zimbra localconfig keys (localconfig.xml and `zmlocalconfig` output).
    Localconfig,
    /// sysctl keys, dotted or slashed, configured (sysctl.d) or running
    /// (`/proc/sys`, `sysctl -a`).
    Sysctl,
    /// Options of an fstab or mount options field (`password=`, ...).
    MountOption,
}

impl Format {
    /// Every format, in a fixed order.
    pub const ALL: [Format; 5] = [
        Format::OptionFile,
        Format::ServerVariable,
        Format::Localconfig,
        Format::Sysctl,
        Format::MountOption,
    ];

    /// Short lowercase name (`option-file`, `server-variable`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::OptionFile => "option-file",
            Format::ServerVariable => "server-variable",
            Format::Localconfig => "localconfig",
            Format::Sysctl => "sysctl",
            Format::MountOption => "mount-option",
        }
    }
}

/// Server variables that hold a credential or key material, as the server
/// names them in `SHOW GLOBAL VARIABLES` (and as options in `[mysqld]`).
const SERVER_SECRETS: &[(&str, &str)] = &[
    (
        "authentication_ldap_sasl_bind_root_pwd",
        "MySQL LDAP SASL plugin: password of the bind root DN",
    ),
    (
        "authentication_ldap_simple_bind_root_pwd",
        "MySQL LDAP simple plugin: password of the bind root DN",
    ),
    (
        "file_key_management_filekey",
        "MariaDB file_key_management: the key that decrypts the key file",
    ),
    (
        "hashicorp_key_management_token",
        "MariaDB hashicorp_key_management: the Vault token",
    ),
    (
        "keyring_encrypted_file_password",
        "MySQL keyring_encrypted_file: the keyring password",
    ),
    (
        "keyring_hashicorp_secret_id",
        "MySQL keyring_hashicorp: the AppRole secret id",
    ),
    (
        "report_password",
        "password a replica reports to its source (SHOW REPLICAS)",
    ),
    ("s3_access_key", "MariaDB S3 engine: AWS access key id"),
    ("s3_secret_key", "MariaDB S3 engine: AWS secret access key"),
    (
        "ssl_passphrase",
        "MariaDB: passphrase of the server's TLS private key (`pass:...`)",
    ),
    (
        "wsrep_sst_auth",
        "Galera: `user:password` of the state snapshot transfer",
    ),
];

/// Options only option files (client and tool groups) take, beyond the
/// server variables above.
const OPTION_ONLY_SECRETS: &[(&str, &str)] = &[
    (
        "encrypt_key",
        "mariabackup/xtrabackup: the backup encryption key",
    ),
    (
        "master_password",
        "MySQL < 5.5 `[mysqld]`: replication password",
    ),
    ("passwd", "old client spelling of `password`"),
    ("password", "client password ([client], [mysqldump], ...)"),
    (
        "password1",
        "MySQL 8.0.27+ client: first authentication factor",
    ),
    (
        "password2",
        "MySQL 8.0.27+ client: second authentication factor",
    ),
    (
        "password3",
        "MySQL 8.0.27+ client: third authentication factor",
    ),
    (
        "transition_key",
        "xtrabackup: key that protects keyring data in a backup",
    ),
];

/// Shortest abbreviation of a secret option treated as that option: mysqld
/// and the clients accept any unambiguous prefix (`passwo=`); a shorter one
/// (`pa`, `p`) is ambiguous for every program.
const MIN_OPTION_PREFIX: usize = 3;

/// Localconfig keys Zimbra (LC.java) and Carbonio installs carry that hold a
/// secret. Zimbra's own
/// rule (`zmlocalconfig` prints `*` for a key whose name contains
/// `password`) covers them; they are listed to pin the rule in a test.
const LOCALCONFIG_KNOWN: &[&str] = &[
    "antispam_mysql_password",
    "antispam_mysql_root_password",
    "cbpolicyd_mysql_password",
    "cbpolicyd_mysql_root_password",
    "client_ssl_truststore_password",
    "imapd_keystore_password",
    "ldap_amavis_password",
    "ldap_bes_searcher_password",
    "ldap_nginx_password",
    "ldap_postfix_password",
    "ldap_replication_password",
    "ldap_root_password",
    "mailboxd_keystore_base_password",
    "mailboxd_keystore_password",
    "mailboxd_truststore_password",
    "mysql_root_password",
    "smime_truststore_password",
    "zimbra_ldap_password",
    "zimbra_mysql_password",
    "zimbra_vami_password",
];

/// Last words of a localconfig key that hold a secret besides `password`
/// (site-added keys such as `av_notify_domain_secret`, `*_api_token`).
const LOCALCONFIG_SECRET_SUFFIXES: &[&str] = &[
    "_secret",
    "_passwd",
    "_passphrase",
    "_token",
    "_private_key",
    // `zimbra_api_key`, `*_access_key`, `*_secret_key`: a key by meaning
    // (issue 29); `*_keystore`, `*_key_size` do not end in it
    "_key",
];

/// sysctl keys whose value is key material: the ones the kernel itself
/// makes readable by root only (mode 0600). `net.core.netdev_rss_key` is
/// world-readable by the kernel's choice and stays visible.
const SYSCTL_SECRETS: &[(&str, &str)] = &[
    (
        "net.ipv4.tcp_fastopen_key",
        "TCP Fast Open cookie key(s) of the running kernel",
    ),
    (
        "net.ipv6.conf.*.stable_secret",
        "RFC 7217 secret for stable IPv6 addresses (every interface, all, default)",
    ),
];

/// Mount options whose value is a password (mount.cifs(8): `password=`,
/// `pass=`, `password2=`; ecryptfs: `passphrase_passwd=`). `credentials=`
/// names a file: the path is shown, its contents are never read.
const MOUNT_SECRETS: &[(&str, &str)] = &[
    ("pass", "mount.cifs(8): alias of password="),
    ("passphrase_passwd", "ecryptfs: the mount passphrase"),
    ("passwd", "common alias of password= (sshfs, davfs helpers)"),
    ("password", "mount.cifs(8)/smbfs: the share password"),
    (
        "password2",
        "mount.cifs(8): alternate password for key rotation",
    ),
];

/// Mount options whose value may carry a password after `%`
/// (mount.cifs(8): `username=user%password`, `user=dom/user%password`).
const MOUNT_USER_OPTIONS: &[&str] = &["user", "username"];

/// Whether `name` names a secret in `format`.
pub fn is_secret(format: Format, name: &str) -> bool {
    match format {
        Format::OptionFile => option_is_secret(name),
        Format::ServerVariable => server_variable_is_secret(name),
        Format::Localconfig => localconfig_key_is_secret(name),
        Format::Sysctl => sysctl_key_is_secret(name),
        Format::MountOption => mount_option_is_secret(name, None),
    }
}

/// Whether `name` is secret in any format: for text whose format is unknown
/// (a copied file no reader claims).
pub fn is_secret_anywhere(name: &str) -> bool {
    Format::ALL.iter().any(|f| is_secret(*f, name))
}

/// An option-file option name in mysqld's canonical form: lowercase,
/// underscores, without `loose-` and `maximum-`.
fn canonical_option(name: &str) -> String {
    let mut n = name.trim().to_ascii_lowercase().replace('-', "_");
    loop {
        if let Some(r) = n.strip_prefix("loose_") {
            n = r.to_string();
        } else if let Some(r) = n.strip_prefix("maximum_") {
            n = r.to_string();
        } else {
            return n;
        }
    }
}

/// Whether an option-file option (as written: `password`, `loose-password`,
/// `wsrep-sst-auth`, an abbreviation such as `passwo`) takes a secret value.
pub fn option_is_secret(name: &str) -> bool {
    // `password hunter2` (no `=`) is one option name to mysys: its first
    // word says what it would have set.
    let first = name.split_whitespace().next().unwrap_or_default();
    let n = canonical_option(first);
    if n.is_empty() {
        return false;
    }
    let all = || {
        SERVER_SECRETS
            .iter()
            .chain(OPTION_ONLY_SECRETS)
            .map(|(s, _)| *s)
    };
    if all().any(|s| s == n) {
        return true;
    }
    // A unique prefix is that option (mysqld and the clients resolve it;
    // an ambiguous one makes them refuse to start). An abbreviation counts
    // when it reaches into the option's last word (`passwo`, `wsrep_sst_a`,
    // `ssl_pass`): `ssl`, `encrypt` and `file_key_management` are options
    // of their own, and `key` is no one's abbreviation of a keyring secret.
    n.len() >= MIN_OPTION_PREFIX
        && all().any(|s| {
            let last_word = s.rfind('_').map(|i| i + 1).unwrap_or(0);
            s.starts_with(n.as_str()) && n.len() > last_word
        })
}

/// Whether a `SHOW GLOBAL VARIABLES` name holds a secret.
pub fn server_variable_is_secret(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    SERVER_SECRETS.iter().any(|(s, _)| *s == n)
}

/// Whether a Zimbra localconfig key holds a secret: every key whose name
/// contains `password` (the rule `zmlocalconfig` masks by), and keys ending
/// in `_secret`, `_passwd`, `_passphrase`, `_token`, `_private_key`.
pub fn localconfig_key_is_secret(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    n.contains("password")
        || LOCALCONFIG_SECRET_SUFFIXES
            .iter()
            .any(|s| n.ends_with(s) && n.len() > s.len())
}

/// Whether a name inside a value (a Java `-Dname=value` property such as
/// `javax.net.ssl.trustStorePassword`, a `--name=value` option, a bare
/// `name=value`) names a secret, by meaning: it mentions a password,
/// passphrase, secret or credential, or its last word is a key or token
/// (`...apiKey`, `...secret_key`, `...auth.token`).
pub fn embedded_name_is_secret(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    if n.is_empty() {
        return false;
    }
    if ["password", "passwd", "passphrase", "secret", "credential"]
        .iter()
        .any(|w| n.contains(w))
    {
        return true;
    }
    let last = n.rsplit(['.', '_', '-', ':', '/']).next().unwrap_or("");
    matches!(last, "key" | "token" | "pwd" | "pass" | "pw")
        || [
            "apikey",
            "privatekey",
            "accesskey",
            "secretkey",
            "authtoken",
        ]
        .iter()
        .any(|w| last.ends_with(w))
}

/// `value` with the value of every secret assignment inside it (see
/// [`embedded_name_is_secret`]: `-Djavax.net.ssl.trustStorePassword=x` in
/// `mailboxd_java_options`) replaced by [`REDACTED`], the rest kept, so a
/// heap size beside a password stays checkable. A quoted value (`-Dp="a
/// b"`) is redacted to its closing quote.
pub fn redact_embedded(value: &str) -> Cow<'_, str> {
    if !value.contains('=') {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut changed = false;
    let mut rest = value;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..end];
        if let Some((name, v)) = tok.split_once('=') {
            let bare = match name.strip_prefix("-D") {
                Some(p) if !name.starts_with("--") => p,
                _ => name.trim_start_matches('-'),
            };
            if embedded_name_is_secret(bare) {
                changed = true;
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
                let value_at = name.len() + 1;
                let mut upto = end;
                if let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') {
                    let closed_in_token = v.len() > 1 && v[1..].contains(q);
                    if !closed_in_token {
                        upto = match rest[value_at + 1..].find(q) {
                            Some(i) => {
                                let e = value_at + 1 + i + 1;
                                e + rest[e..]
                                    .find(char::is_whitespace)
                                    .unwrap_or(rest.len() - e)
                            }
                            None => rest.len(),
                        };
                    }
                }
                rest = &rest[upto..];
                continue;
            }
        }
        out.push_str(tok);
        rest = &rest[end..];
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(value)
    }
}

/// Whether a sysctl key (dotted or slashed, a glob such as
/// `net.ipv6.conf.*.stable_secret` included) holds key material.
pub fn sysctl_key_is_secret(key: &str) -> bool {
    let k = key.trim().trim_start_matches('-').trim();
    let k = k.trim_start_matches('/');
    let k = k.strip_prefix("proc/sys/").unwrap_or(k);
    // The separator is whichever of `.` and `/` comes first (procps rule).
    let sep = match (k.find('.'), k.find('/')) {
        (Some(d), Some(s)) if s < d => '/',
        (None, Some(_)) => '/',
        _ => '.',
    };
    let parts: Vec<&str> = k.split(sep).collect();
    match parts.as_slice() {
        ["net", "ipv4", "tcp_fastopen_key"] => true,
        ["net", "ipv6", "conf", rest @ ..] => {
            rest.len() >= 2 && rest.last().is_some_and(|l| *l == "stable_secret")
        }
        _ => false,
    }
}

/// Whether a mount option (`name` or `name=value`, `value` given separately
/// when known) carries a secret: `password=`/`pass=`/`password2=`, or a
/// `username=user%password`.
pub fn mount_option_is_secret(name: &str, value: Option<&str>) -> bool {
    let n = name.trim().to_ascii_lowercase();
    if MOUNT_SECRETS.iter().any(|(s, _)| *s == n) {
        return true;
    }
    MOUNT_USER_OPTIONS.contains(&n.as_str()) && value.is_some_and(|v| v.contains('%'))
}

/// The value to show for `name` in `format`: [`REDACTED`] for a secret.
pub fn shown<'a>(format: Format, name: &str, value: &'a str) -> Cow<'a, str> {
    if is_secret(format, name) {
        Cow::Borrowed(REDACTED)
    } else {
        Cow::Borrowed(value)
    }
}

/// A comma-separated mount options field with every secret value replaced
/// by [`REDACTED`]. A CIFS password may hold a comma written `,,`; the text
/// after such a pair belongs to the password and is dropped with it.
pub fn redact_mount_options(opts: &str) -> Cow<'_, str> {
    let parts: Vec<&str> = opts.split(',').collect();
    if !parts.iter().any(|p| {
        let (n, v) = split_opt(p);
        mount_option_is_secret(n, v)
    }) {
        return Cow::Borrowed(opts);
    }
    let mut out: Vec<String> = Vec::with_capacity(parts.len());
    let mut i = 0;
    while i < parts.len() {
        let p = parts[i];
        let (n, v) = split_opt(p);
        if mount_option_is_secret(n, v) && v.is_some() {
            let is_user = MOUNT_USER_OPTIONS.contains(&n.to_ascii_lowercase().as_str());
            let shown = if is_user {
                let v = v.unwrap_or_default();
                let user = &v[..v.find('%').unwrap_or(v.len())];
                format!("{n}={user}%{REDACTED}")
            } else {
                format!("{n}={REDACTED}")
            };
            out.push(shown);
            i += 1;
            // `,,` inside the password: skip the empty piece and the piece after it.
            while i + 1 < parts.len() && parts[i].is_empty() {
                i += 2;
            }
            continue;
        }
        out.push(p.to_string());
        i += 1;
    }
    Cow::Owned(out.join(","))
}

fn split_opt(p: &str) -> (&str, Option<&str>) {
    match p.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (p, None),
    }
}

/// The first word of a line (before whitespace, `=`, `:` or a tab), after
/// leading blanks and a sysctl `-` prefix: the key a malformed line would
/// have set.
pub fn leading_key(line: &str) -> &str {
    let t = line.trim_start();
    let t = t.strip_prefix('-').unwrap_or(t).trim_start();
    let end = t
        .find(|c: char| c.is_whitespace() || c == '=' || c == ':')
        .unwrap_or(t.len());
    &t[..end]
}

/// Text of a line safe to quote in a message: the line itself, or, when its
/// first word is a secret name in `format` (`password hunter2`,
/// `zimbra_mysql_password: X`, `report_password<TAB>X`), only that name
/// followed by [`REDACTED`]. Messages quote lines only through this.
pub fn quotable(format: Format, line: &str) -> Cow<'_, str> {
    let key = leading_key(line);
    if !key.is_empty() && is_secret(format, key) {
        Cow::Owned(format!("{key} {REDACTED}"))
    } else {
        Cow::Borrowed(line)
    }
}

/// How a copied file is redacted, decided from its host path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// my.cnf and the files it includes (`*.cnf`, `*.ini`, `/etc/mysql/`).
    OptionFile,
    /// sysctl.conf, sysctl.d and `sysctl -a` captures.
    Sysctl,
    /// fstab, mtab, /proc/mounts, mountinfo: mount options fields.
    MountTable,
    /// `SHOW GLOBAL VARIABLES` captures (TSV, table or vertical).
    ServerVariables,
    /// localconfig.xml (any `*.xml` with `<key name="..."><value>`).
    LocalconfigXml,
    /// `zmlocalconfig` output captures.
    Zmlocalconfig,
    /// MySQL 8's `mysqld-auto.cnf` (JSON written by `SET PERSIST`).
    PersistedJson,
    /// A `/proc/sys` file: its whole content is the value of one key.
    ProcSys,
    /// Other `/proc` and `/sys` files: kernel output, copied as it is.
    Verbatim,
    /// Anything else: `key = value` lines whose key is secret in any format,
    /// and mount option lists.
    Other,
}

/// The redaction a host path gets.
pub fn file_kind(path: &str) -> FileKind {
    let name = path.rsplit('/').next().unwrap_or(path);
    if let Some(key) = path.strip_prefix("/proc/sys/") {
        return if sysctl_key_is_secret(key) {
            FileKind::ProcSys
        } else {
            FileKind::Verbatim
        };
    }
    if path == "/proc/mounts"
        || path.ends_with("/mountinfo") && path.starts_with("/proc/")
        || path.starts_with("/proc/") && name == "mounts"
    {
        return FileKind::MountTable;
    }
    if path.starts_with("/proc/") || path.starts_with("/sys/") {
        return FileKind::Verbatim;
    }
    if path == "/etc/fstab" || path == "/etc/mtab" || path.starts_with("/etc/fstab.d/") {
        return FileKind::MountTable;
    }
    if path.starts_with("/captures/") {
        if name.starts_with("sysctl") {
            return FileKind::Sysctl;
        }
        if name.starts_with("mysql") {
            return FileKind::ServerVariables;
        }
        if name.starts_with("zmlocalconfig") {
            return FileKind::Zmlocalconfig;
        }
    }
    if name.ends_with(".xml") {
        return FileKind::LocalconfigXml;
    }
    if name == "mysqld-auto.cnf" {
        return FileKind::PersistedJson;
    }
    if path.contains("/sysctl.d/") || name == "sysctl.conf" {
        return FileKind::Sysctl;
    }
    if name.ends_with(".cnf")
        || name.ends_with(".ini")
        || path.starts_with("/etc/mysql/")
        || path.starts_with("/etc/my.cnf.d/")
    {
        return FileKind::OptionFile;
    }
    FileKind::Other
}

/// `mysqld-auto.cnf` with the `Value` of every secret server variable
/// replaced (any section: `SET PERSIST` of a secret variable before MySQL
/// 8.0.29 stores it in clear). A file with a secret is written back as one
/// JSON line (its path stays the provenance), one without is copied as it
/// is; one that is not JSON is replaced by the placeholder: nothing in it
/// can be told safe.
fn redact_persisted_json(text: &str) -> String {
    fn walk(v: &mut serde_json::Value) -> bool {
        let mut changed = false;
        if let serde_json::Value::Object(map) = v {
            for (k, child) in map.iter_mut() {
                if server_variable_is_secret(k) || option_is_secret(k) {
                    if let Some(val) = child.get_mut("Value") {
                        *val = serde_json::Value::String(REDACTED.into());
                        changed = true;
                    }
                }
                changed |= walk(child);
            }
        }
        changed
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        // nothing secret: the file as it is, so its lines stay true
        Ok(mut v) => match walk(&mut v) {
            false => text.to_string(),
            true => format!("{v}\n"),
        },
        Err(_) => format!("{REDACTED}\n"),
    }
}

/// A copied file with every secret value replaced by the placeholder in
/// the file's own syntax, keeping every line where it was so provenance
/// stays true: read back with the same reader, the file gives the same
/// settings with [`REDACTED`] as the value of each secret. CRLF line endings
/// become LF (except in verbatim kernel files).
pub fn redact_file(path: &str, bytes: &[u8]) -> Vec<u8> {
    let kind = file_kind(path);
    match kind {
        FileKind::Verbatim => return bytes.to_vec(),
        FileKind::ProcSys => return format!("{REDACTED}\n").into_bytes(),
        _ => {}
    }
    let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
    redact_text(kind, &text).into_bytes()
}

/// [`redact_file`] on text of a known kind.
pub fn redact_text(kind: FileKind, text: &str) -> String {
    match kind {
        FileKind::Verbatim => text.to_string(),
        FileKind::ProcSys => format!("{REDACTED}\n"),
        FileKind::OptionFile => map_lines(text, |l| redact_assignment(l, &option_is_secret)),
        FileKind::Sysctl => map_lines(text, |l| redact_assignment(l, &sysctl_key_is_secret)),
        FileKind::MountTable => map_lines(text, redact_mount_line),
        FileKind::ServerVariables => redact_server_variables(text),
        FileKind::LocalconfigXml => redact_localconfig_xml(text),
        FileKind::Zmlocalconfig => redact_zmlocalconfig(text),
        FileKind::PersistedJson => redact_persisted_json(text),
        FileKind::Other => map_lines(text, |l| {
            let l2 = redact_mount_line(l);
            match redact_assignment(&l2, &is_secret_anywhere) {
                Cow::Borrowed(_) => l2,
                Cow::Owned(o) => Cow::Owned(o),
            }
        }),
    }
}

fn map_lines<'a>(text: &'a str, mut f: impl FnMut(&'a str) -> Cow<'a, str>) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&f(line));
    }
    out
}

/// `key = value`, `key=value`, `key: value`, `key value` (and the same
/// commented out with `#` or `;`, and sysctl's `-key = value`) with a
/// secret key: the value becomes [`REDACTED`].
fn redact_assignment<'a>(line: &'a str, secret: &dyn Fn(&str) -> bool) -> Cow<'a, str> {
    let b = line.as_bytes();
    let mut i = 0;
    let skip_ws = |mut i: usize| {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        i
    };
    i = skip_ws(i);
    if i < b.len() && (b[i] == b'#' || b[i] == b';') {
        i = skip_ws(i + 1);
    }
    if i < b.len() && b[i] == b'-' {
        i = skip_ws(i + 1);
    }
    let start = i;
    while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'=' | b':') {
        i += 1;
    }
    let key = &line[start..i];
    if key.is_empty() || !secret(key) {
        return Cow::Borrowed(line);
    }
    let mut j = skip_ws(i);
    if j < b.len() && (b[j] == b'=' || b[j] == b':') {
        j = skip_ws(j + 1);
    }
    if line[j..].trim().is_empty() {
        return Cow::Borrowed(line);
    }
    let head = &line[..j];
    let sep = if head.ends_with([' ', '\t', '=', ':']) {
        ""
    } else {
        " "
    };
    Cow::Owned(format!("{head}{sep}{REDACTED}"))
}

/// Every whitespace-separated field of a mount table line through
/// [`redact_mount_options`], whitespace kept as it was.
fn redact_mount_line(line: &str) -> Cow<'_, str> {
    let lower = line.to_ascii_lowercase();
    if !lower.contains("pass") && !lower.contains('%') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        let end = rest.find([' ', '\t']).unwrap_or(rest.len());
        out.push_str(&redact_mount_options(&rest[..end]));
        rest = &rest[end..];
    }
    Cow::Owned(out)
}

/// A `SHOW GLOBAL VARIABLES` capture in any of the client's shapes (TSV,
/// `| name | value |` table, `\G` vertical): secret values become
/// [`REDACTED`]; lines continuing a secret value become empty lines.
fn redact_server_variables(text: &str) -> String {
    let mut in_secret = false;
    map_lines(text, |line| {
        let t = line.trim();
        if let Some((name, _)) = line.split_once('\t') {
            in_secret = false;
            if server_variable_is_secret(name) {
                return Cow::Owned(format!("{name}\t{REDACTED}"));
            }
            return Cow::Borrowed(line);
        }
        if let Some(row) = t.strip_prefix("| ").and_then(|r| r.strip_suffix('|')) {
            if let Some((name, _)) = row.split_once(" | ") {
                in_secret = server_variable_is_secret(name.trim());
                if in_secret {
                    return Cow::Owned(format!("| {} | {REDACTED} |", name.trim()));
                }
                return Cow::Borrowed(line);
            }
        }
        if t.starts_with("+-") || t.starts_with("***") {
            in_secret = false;
            return Cow::Borrowed(line);
        }
        if let Some(name) = t.strip_prefix("Variable_name:") {
            in_secret = server_variable_is_secret(name.trim());
            return Cow::Borrowed(line);
        }
        if t.starts_with("Value:") {
            if in_secret {
                let indent = &line[..line.len() - line.trim_start().len()];
                return Cow::Owned(format!("{indent}Value: {REDACTED}"));
            }
            return Cow::Borrowed(line);
        }
        if in_secret && !t.is_empty() {
            return Cow::Borrowed("");
        }
        Cow::Borrowed(line)
    })
}

/// `zmlocalconfig` output: `key = value` lines of secret keys get
/// [`REDACTED`]; lines after a secret key that are not `key = value`
/// (the rest of a multi-line value) become empty lines.
fn redact_zmlocalconfig(text: &str) -> String {
    let mut in_secret = false;
    map_lines(text, |line| {
        let split = line
            .split_once(" = ")
            .or_else(|| line.strip_suffix(" =").map(|k| (k, "")));
        match split {
            Some((k, v)) if !k.trim().is_empty() && !k.trim().contains(char::is_whitespace) => {
                in_secret = localconfig_key_is_secret(k.trim());
                if in_secret && !v.is_empty() {
                    Cow::Owned(format!("{k} = {REDACTED}"))
                } else if let Cow::Owned(r) = redact_embedded(v) {
                    Cow::Owned(format!("{k} = {r}"))
                } else {
                    Cow::Borrowed(line)
                }
            }
            _ if in_secret && !line.trim().is_empty() => Cow::Borrowed(""),
            _ => redact_assignment(line, &localconfig_key_is_secret),
        }
    })
}

/// localconfig.xml: the text of every `<value>` of a `<key>` whose name is
/// secret becomes [`REDACTED_XML`] (an XML reader reads [`REDACTED`]), and
/// the newlines it held follow its `</value>` so later lines keep their numbers. Comments
/// that mention a secret key (a commented-out old password) lose their
/// text the same way. A document that does not parse is redacted by a
/// tolerant scan instead (Zimbra cannot load it either way).
pub fn redact_localconfig_xml(text: &str) -> String {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: 1_000_000,
        ..roxmltree::ParsingOptions::default()
    };
    let Ok(doc) = roxmltree::Document::parse_with_options(text, opts) else {
        return redact_xml_scan(text);
    };
    // Byte ranges to replace, in document order.
    let mut cuts: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    for node in doc.descendants() {
        if node.is_comment() {
            let c = node.text().unwrap_or_default();
            if localconfig_comment_has_secret(c) {
                let r = node.range();
                // keep `<!--` and `-->`
                cuts.push((r.start + 4..r.end - 3, " redacted "));
            }
            continue;
        }
        if !(node.is_element() && node.tag_name().name() == "key") {
            continue;
        }
        let Some(name) = node.attribute("name") else {
            continue;
        };
        // A secret key, or one whose value holds a secret assignment
        // (`-D...Password=` in `mailboxd_java_options`): the whole value.
        let embeds = || {
            node.children()
                .filter(|n| n.is_element() && n.tag_name().name() == "value")
                .any(|v| {
                    v.text()
                        .is_some_and(|t| matches!(redact_embedded(t), Cow::Owned(_)))
                })
        };
        if !localconfig_key_is_secret(name) && !embeds() {
            continue;
        }
        for v in node
            .children()
            .filter(|n| n.is_element() && n.tag_name().name() == "value")
        {
            let (Some(first), Some(last)) = (v.first_child(), v.last_child()) else {
                continue;
            };
            if text[first.range().start..last.range().end]
                .trim()
                .is_empty()
            {
                continue;
            }
            // The placeholder is the whole value; the value's newlines move
            // after `</value>` (whitespace Zimbra ignores) so lines keep their numbers.
            cuts.push((first.range().start..v.range().end, VALUE_REPLACEMENT));
        }
    }
    cuts.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (r, with) in cuts {
        if r.start < at {
            continue;
        }
        out.push_str(&text[at..r.start]);
        out.push_str(with);
        for _ in 0..text[r.clone()].matches('\n').count() {
            out.push('\n');
        }
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

fn localconfig_comment_has_secret(c: &str) -> bool {
    let mut rest = c;
    while let Some(i) = rest.find("name") {
        rest = &rest[i + 4..];
        let t = rest.trim_start();
        let Some(t) = t.strip_prefix('=') else {
            continue;
        };
        let t = t.trim_start();
        let Some(q) = t.chars().next().filter(|q| *q == '"' || *q == '\'') else {
            continue;
        };
        if let Some(end) = t[1..].find(q) {
            if localconfig_key_is_secret(&t[1..=end]) {
                return true;
            }
        }
    }
    false
}

const VALUE_REPLACEMENT: &str = "&lt;redacted&gt;</value>";

/// Tolerant scan for a localconfig.xml that does not parse: after a
/// `<key ... name = "SECRET" ...>` tag, the text of each `<value ...>`
/// up to `</value>` (or the next tag) becomes [`REDACTED_XML`].
fn redact_xml_scan(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut secret_key = false;
    while let Some(lt) = rest.find('<') {
        let (head, tail) = rest.split_at(lt);
        out.push_str(head);
        if tail.starts_with("<!--") {
            let end = tail.find("-->").map(|e| e + 3).unwrap_or(tail.len());
            let comment = &tail[..end];
            if localconfig_comment_has_secret(comment) {
                out.push_str("<!-- redacted ");
                for _ in 0..comment.matches('\n').count() {
                    out.push('\n');
                }
                out.push_str("-->");
            } else {
                out.push_str(comment);
            }
            rest = &tail[end..];
            continue;
        }
        let end = tail.find('>').map(|e| e + 1).unwrap_or(tail.len());
        let tag = &tail[..end];
        out.push_str(tag);
        rest = &tail[end..];
        let tname: String = tag[1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
            .collect();
        match tname.as_str() {
            "key" => secret_key = localconfig_comment_has_secret(tag),
            "/key" => secret_key = false,
            "value" if secret_key && !tag.ends_with("/>") => {
                let stop = rest.find('<').unwrap_or(rest.len());
                let inner = &rest[..stop];
                if !inner.trim().is_empty() {
                    out.push_str(REDACTED_XML);
                    for _ in 0..inner.matches('\n').count() {
                        out.push('\n');
                    }
                    rest = &rest[stop..];
                }
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
}

/// One entry of [`catalogue`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CatalogueEntry {
    /// The format the name belongs to.
    pub format: &'static str,
    /// The name (or pattern: `net.ipv6.conf.*.stable_secret`, `*password*`).
    pub name: &'static str,
    /// What the value is.
    pub what: &'static str,
}

/// Every name or pattern this module treats as secret, per format (the list
/// a test pins, and docs cite).
pub fn catalogue() -> Vec<CatalogueEntry> {
    let mut out = Vec::new();
    let mut push = |format: Format, name: &'static str, what: &'static str| {
        out.push(CatalogueEntry {
            format: format.as_str(),
            name,
            what,
        })
    };
    for (n, w) in SERVER_SECRETS.iter().chain(OPTION_ONLY_SECRETS) {
        push(Format::OptionFile, n, w);
    }
    push(
        Format::OptionFile,
        "(an abbreviation of the above that reaches its last word: `passwo`, `wsrep_sst_a`, `ssl_pass`)",
        "mysqld and the clients accept unique option prefixes",
    );
    for (n, w) in SERVER_SECRETS {
        push(Format::ServerVariable, n, w);
    }
    push(
        Format::Localconfig,
        "*password*",
        "zmlocalconfig masks every key whose name contains `password`",
    );
    for s in [
        "*_secret",
        "*_passwd",
        "*_passphrase",
        "*_token",
        "*_private_key",
    ] {
        push(Format::Localconfig, s, "site-added credential keys");
    }
    for n in LOCALCONFIG_KNOWN {
        push(
            Format::Localconfig,
            n,
            "key of Zimbra (LC.java) or Carbonio installs; masked by *password*",
        );
    }
    for (n, w) in SYSCTL_SECRETS {
        push(Format::Sysctl, n, w);
    }
    for (n, w) in MOUNT_SECRETS {
        push(Format::MountOption, n, w);
    }
    push(
        Format::MountOption,
        "username=USER%PASSWORD, user=USER%PASSWORD",
        "mount.cifs(8): the part after `%` is the password",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_inside_java_option_strings_are_redacted_by_meaning() {
        let v = "-server -Xmx2g -Djavax.net.ssl.trustStorePassword=P1 -Dzimbra.apiKey=P2 \
                 -Dx.keystore=/k -Dauth.token='a b P3' --db-secret=\"P4 P5\" -Dk=v";
        let r = redact_embedded(v);
        for p in ["P1", "P2", "P3", "P4", "P5"] {
            assert!(!r.contains(p), "{p} in {r}");
        }
        for kept in ["-server", "-Xmx2g", "-Dx.keystore=/k", "-Dk=v"] {
            assert!(r.contains(kept), "{kept} lost from {r}");
        }
        assert!(r.contains(&format!("trustStorePassword={REDACTED}")), "{r}");
        assert!(matches!(
            redact_embedded("-Xmx2g -Dfoo=bar"),
            Cow::Borrowed(_)
        ));
        assert!(localconfig_key_is_secret("zimbra_api_key"));
        assert!(!localconfig_key_is_secret("mailboxd_keystore"));
    }

    #[test]
    fn secret_options_by_meaning_including_prefixes() {
        for n in [
            "password",
            "loose-password",
            "passwo",
            "pass",
            "passwd",
            "wsrep_sst_auth",
            "wsrep-sst-auth",
            "file_key_management_filekey",
            "loose_file_key_management_filekey",
            "ssl_passphrase",
            "ssl-pass",
            "report-password",
            "s3_secret_key",
        ] {
            assert!(option_is_secret(n), "{n}");
        }
        for n in [
            "ssl",
            "ssl_key",
            "ssl-cert",
            "encrypt",
            "pa",
            "port",
            "user",
            "innodb_force_primary_key",
            "disconnect_on_expired_password",
            "strict_password_validation",
            "password_require_current",
            "validate_password_check_user_name",
            "caching_sha2_password_digest_rounds",
            "caching_sha2_password_auto_generate_rsa_keys",
            "sha256_password_auto_generate_rsa_keys",
            "key_buffer_size",
            "file_key_management_filename",
            "file_key_management",
            "key",
            "key with spaces",
            "wsrep_sst",
            "wsrep_sst_method",
        ] {
            assert!(!option_is_secret(n), "{n}");
        }
    }

    #[test]
    fn sysctl_secret_keys_in_every_spelling() {
        for k in [
            "net.ipv4.tcp_fastopen_key",
            "net/ipv4/tcp_fastopen_key",
            "net.ipv6.conf.all.stable_secret",
            "net.ipv6.conf.eth0/100.stable_secret",
            "net/ipv6/conf/eth0.100/stable_secret",
            "net.ipv6.conf.*.stable_secret",
            "-net.ipv6.conf.default.stable_secret",
        ] {
            assert!(sysctl_key_is_secret(k), "{k}");
        }
        for k in [
            "net.ipv4.ipfrag_secret_interval",
            "net.ipv4.tcp_fastopen",
            "net.ipv6.conf.all.forwarding",
            "kernel.random.boot_id",
        ] {
            assert!(!sysctl_key_is_secret(k), "{k}");
        }
    }

    #[test]
    fn mount_options_redacted_keep_the_rest() {
        assert_eq!(
            redact_mount_options("rw,username=bob,password=hunter2,vers=3.0"),
            "rw,username=bob,password=<redacted>,vers=3.0"
        );
        assert_eq!(
            redact_mount_options("pass=a,,b,,c,uid=0"),
            "pass=<redacted>,uid=0"
        );
        assert_eq!(
            redact_mount_options("username=dom/bob%hunter2,credentials=/root/.smb"),
            "username=dom/bob%<redacted>,credentials=/root/.smb"
        );
        assert_eq!(redact_mount_options("defaults,noatime"), "defaults,noatime");
    }

    #[test]
    fn quotable_lines_never_carry_a_secret_value() {
        assert_eq!(
            quotable(Format::OptionFile, "password hunter2"),
            "password <redacted>"
        );
        assert_eq!(
            quotable(Format::Localconfig, "zimbra_mysql_password: X"),
            "zimbra_mysql_password <redacted>"
        );
        assert_eq!(
            quotable(Format::ServerVariable, "report_password\tX"),
            "report_password <redacted>"
        );
        assert_eq!(
            quotable(Format::Sysctl, "net.ipv6.conf.all.stable_secret abc"),
            "net.ipv6.conf.all.stable_secret <redacted>"
        );
        assert_eq!(quotable(Format::Sysctl, "kernel.x y"), "kernel.x y");
    }

    #[test]
    fn localconfig_keys() {
        for k in LOCALCONFIG_KNOWN {
            assert!(localconfig_key_is_secret(k), "{k}");
        }
        assert!(localconfig_key_is_secret("av_notify_domain_secret"));
        for k in [
            "mailboxd_java_heap_size",
            "mysql_memory_percent",
            "zimbra_authtoken_cache_size",
            "zimbra_two_factor_apppasswd_update_authtime",
            "mailboxd_keystore",
            "ldap_url",
            "_secret",
        ] {
            assert!(!localconfig_key_is_secret(k), "{k}");
        }
    }
}
