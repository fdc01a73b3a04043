//! The redaction of a copied file: which kind a host path is
//! ([`FileKind`]) and, for each line-based format (option files, sysctl,
//! mount tables, `SHOW GLOBAL VARIABLES` captures, `zmlocalconfig` output,
//! `mysqld-auto.cnf`, NetworkManager keyfiles and netplan YAML (in
//! `network`), anything else), every secret value replaced in the
//! file's own syntax with every line kept where it was, so provenance
//! stays true. Must not decide what is secret (that is `names`) nor read
//! or write any file: bytes in, bytes out.

use std::borrow::Cow;

use super::localconfig_xml::redact_localconfig_xml;
use super::names::{
    is_secret_anywhere, localconfig_key_is_secret, option_is_secret, server_variable_is_secret,
    sysctl_key_is_secret,
};
use super::network::{redact_netplan, redact_nm_keyfile};
use super::values::{redact_embedded, redact_mount_options};
use super::REDACTED;

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
    /// A NetworkManager keyfile profile (`…/NetworkManager/system-connections/`).
    NmKeyfile,
    /// netplan YAML (`…/netplan/*.yaml`).
    Netplan,
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
    if path.contains("/NetworkManager/system-connections/") {
        return FileKind::NmKeyfile;
    }
    if path.contains("/netplan/") && (name.ends_with(".yaml") || name.ends_with(".yml")) {
        return FileKind::Netplan;
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
        FileKind::NmKeyfile => redact_nm_keyfile(text),
        FileKind::Netplan => redact_netplan(text),
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
