//! Zimbra facts: the `localconfig` namespace (localconfig.xml, else a
//! `zmlocalconfig -s` capture, over the compiled defaults the policies use,
//! `${key}` expanded, secrets redacted), the `zimbra_mycnf` namespace (Zimbra's
//! own generated my.cnf, read with the MySQL option-file reader); the
//! `zimbra_installed` fact is decided in `facts::presence`. Reads through [`Host`] only; never copies the text
//! of localconfig.xml or of the capture anywhere (both hold passwords).
//!
//! Sources, in rising precedence: compiled defaults (the small table below,
//! from ZCS 8.8-10 `LC.java`), then `captures/zmlocalconfig.txt` when a
//! snapshot has one (it lists every known key of the installed version with
//! its effective default: better than our table), then localconfig.xml (what
//! the administrator edits, and what Zimbra loads). Evidence points at the
//! XML line for keys set in the file, at the capture line for keys only the
//! capture knows, and at localconfig.xml without a line, noted "compiled
//! default", for keys set nowhere.

use std::cell::Cell;
use std::collections::BTreeMap;

use crate::host::{Host, ReadError, Trust};
use crate::parse::localconfig::{expand, parse_xml, parse_zmlocalconfig, LcKey};
use crate::value::Value;

use super::{Entry, Evidence, Facts, FileIssue, Namespace, Needs, Setting};
use crate::secret::{localconfig_key_is_secret, REDACTED};

/// Where Zimbra keeps its local configuration.
pub const LOCALCONFIG_XML: &str = "/opt/zimbra/conf/localconfig.xml";
/// Snapshot capture of `zmlocalconfig -s` (plain `key = value` output).
pub const ZMLOCALCONFIG_CAPTURE: &str = crate::catalogue::ZMLOCALCONFIG.name;
/// Host path of the capture, for evidence.
const CAPTURE_PATH: &str = crate::catalogue::ZMLOCALCONFIG.path;

/// Compiled defaults (`LC.java`, ZCS 8.8-10) of the keys the shipped policies
/// read. `mailboxd_java_heap_size` has none there (`KnownKey.newKey(null)`):
/// the installer writes it, and where it is missing the control script's
/// default applies ([`SCRIPT_HEAP_MB`]).
pub const COMPILED_DEFAULTS: &[(&str, &str)] = &[
    ("zimbra_home", "/opt/zimbra"),
    ("zimbra_db_directory", "${zimbra_home}/db"),
    ("mysql_data_directory", "${zimbra_db_directory}/data"),
    ("mysql_mycnf", "${zimbra_home}/conf/my.cnf"),
    ("mysql_socket", "/opt/zimbra/data/tmp/mysql/mysql.sock"),
    ("mysql_port", "7306"),
    ("mysql_bind_address", "127.0.0.1"),
    ("mysql_memory_percent", "30"),
    ("mailboxd_java_heap_new_size_percent", "25"),
    ("zimbra_mysql_user", "zimbra"),
];

/// The heap (MB) mailboxd runs with when localconfig has no
/// `mailboxd_java_heap_size` (or an empty one): Zimbra's control script
/// zm-core-utils `src/bin/zmmailboxdctl` line 39,
/// `javaXmx=${mailboxd_java_heap_size:=512}`, passed as `-Xmx${javaXmx}m`
/// (line 96) after `mailboxd_java_options`, so it wins over an `-Xmx` there.
/// A fixed default since ZCS 7.0 (commit 47a0b88e, 2010-10-16, bug 48936);
/// before that the script computed system memory x
/// `mailboxd_java_heap_memory_percent`.
pub const SCRIPT_HEAP_MB: &str = "512";

/// The key ZCS 6 sized the heap from; since ZCS 7.0 zmmailboxdctl never
/// reads it (zmupgrade.pm's bug-43140 step turned it into
/// `mailboxd_java_heap_size` once, on the upgrade to 7.0).
pub const OBSOLETE_HEAP_PERCENT: &str = "mailboxd_java_heap_memory_percent";

/// Where a raw value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Default,
    /// Not in localconfig: the control script's own default.
    Script,
    Capture(usize),
    Xml(usize),
}

/// Gather the Zimbra namespaces. Whether Zimbra is installed
/// (`zimbra_installed`) is decided later from every source, localconfig, the
/// capture, my.cnf, mounts and du entries (`facts::presence`); without
/// localconfig its namespace is unavailable, so a rule that reads it on a
/// host where Zimbra is present is `unknown`, naming what would decide it.
pub fn gather(host: &Host, _needs: &Needs, facts: &mut Facts) {
    // On a live host /opt/zimbra/conf belongs to the zimbra user: the paths
    // localconfig.xml names (mysql_mycnf) are that user's choice, and read on
    // its behalf (host::Trust), never as root.
    let (xml, trust) = match host.read_to_string_for(LOCALCONFIG_XML, Trust::root()) {
        Ok((text, trust)) => (Ok(text), trust),
        Err(e) => (Err(e), Trust::root()),
    };
    let capture = host.capture(ZMLOCALCONFIG_CAPTURE);
    let have_localconfig = !matches!(xml, Err(ReadError::NotFound)) || capture.is_ok();
    let lc = if have_localconfig {
        localconfig_namespace(xml, capture, &mut facts.issues)
    } else {
        Namespace::unavailable(match host.kind() {
            crate::host::SourceKind::Live => format!("{LOCALCONFIG_XML} does not exist"),
            crate::host::SourceKind::Snapshot => format!(
                "neither {LOCALCONFIG_XML} nor captures/{ZMLOCALCONFIG_CAPTURE} is in the snapshot: copy the file, or capture `zmlocalconfig -s` as captures/{ZMLOCALCONFIG_CAPTURE}"
            ),
        })
    };
    let mycnf_path = match lc.get("mysql_mycnf") {
        Some(Entry::Set(Setting {
            value: Value::Str(p),
            ..
        })) if p.starts_with('/') => p.clone(),
        _ => "/opt/zimbra/conf/my.cnf".to_string(),
    };
    let (mycnf, lines) = read_mycnf(host, &mycnf_path, trust, &mut facts.issues);
    facts.zimbra_option_files = lines;
    facts.namespaces.insert("localconfig".into(), lc);
    facts.namespaces.insert("zimbra_mycnf".into(), mycnf);
}

/// Build the `localconfig` namespace from the file/capture read results.
/// Pure apart from its arguments, so it is unit-tested without a host.
fn localconfig_namespace(
    xml: Result<String, ReadError>,
    capture: Result<String, ReadError>,
    issues: &mut Vec<FileIssue>,
) -> Namespace {
    let mut raw: BTreeMap<String, (String, Origin)> = COMPILED_DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), (v.to_string(), Origin::Default)))
        .collect();

    if let Ok(text) = &capture {
        let (keys, parse_issues) = parse_zmlocalconfig(text);
        issues.extend(
            parse_issues
                .iter()
                .map(|i| FileIssue::from_parse("localconfig", CAPTURE_PATH, i)),
        );
        layer(&mut raw, keys, Origin::Capture);
    }
    match &xml {
        Ok(text) => {
            let (keys, parse_issues) = parse_xml(text);
            issues.extend(
                parse_issues
                    .iter()
                    .map(|i| FileIssue::from_parse("localconfig", LOCALCONFIG_XML, i)),
            );
            match keys {
                Some(keys) => layer(&mut raw, keys, Origin::Xml),
                None => {
                    return Namespace::unavailable(format!(
                        "{LOCALCONFIG_XML} cannot be loaded (see the input finding for the line); Zimbra itself cannot start with it"
                    ))
                }
            }
        }
        Err(ReadError::NotFound) => {}
        Err(e) => {
            issues.push(FileIssue::unreadable("localconfig", LOCALCONFIG_XML, e));
            if capture.is_err() {
                return Namespace::unavailable(format!("{LOCALCONFIG_XML}: {e}"));
            }
        }
    }

    // zmmailboxdctl's `${mailboxd_java_heap_size:=512}`: unset or empty
    if raw
        .get("mailboxd_java_heap_size")
        .is_none_or(|(v, _)| v.is_empty())
    {
        raw.insert(
            "mailboxd_java_heap_size".into(),
            (SCRIPT_HEAP_MB.into(), Origin::Script),
        );
    }
    if let Some((_, o)) = raw.get(OBSOLETE_HEAP_PERCENT) {
        let (path, line) = match o {
            Origin::Xml(l) => (LOCALCONFIG_XML, Some(*l)),
            Origin::Capture(l) => (CAPTURE_PATH, Some(*l)),
            Origin::Default | Origin::Script => (LOCALCONFIG_XML, None),
        };
        issues.push(
            FileIssue::problem(
                "localconfig",
                path,
                line,
                format!(
                    "`{OBSOLETE_HEAP_PERCENT}` has no effect since ZCS 7.0: zmmailboxdctl sizes the Java heap from `mailboxd_java_heap_size` alone (512 MB when that is not set); remove it with `zmlocalconfig -u {OBSOLETE_HEAP_PERCENT}` and set `mailboxd_java_heap_size`"
                ),
            )
            .with_level(crate::facts::IssueLevel::Note),
        );
    }

    let mut ns = Namespace::of("localconfig");
    for (key, (value, origin)) in &raw {
        let evidence = match origin {
            Origin::Xml(l) => Evidence::line(LOCALCONFIG_XML, *l),
            Origin::Capture(l) => Evidence::line(CAPTURE_PATH, *l),
            Origin::Default | Origin::Script => Evidence::file(LOCALCONFIG_XML),
        };
        let default_note = match origin {
            Origin::Default => Some("not set in the file: compiled default (LC.java)".to_string()),
            Origin::Script => Some(format!(
                "not set in localconfig (or empty): zmmailboxdctl starts mailboxd with -Xmx{SCRIPT_HEAP_MB}m (`javaXmx=${{mailboxd_java_heap_size:=512}}`, Zimbra zm-core-utils src/bin/zmmailboxdctl line 39)"
            )),
            _ => None,
        };
        let touched_secret = Cell::new(false);
        let lookup = |k: &str| {
            if localconfig_key_is_secret(k) {
                touched_secret.set(true);
            }
            raw.get(k).map(|(v, _)| v.clone())
        };
        let expanded = expand(key, value, &lookup);
        match expanded {
            Ok(_) if localconfig_key_is_secret(key) => {
                let mut s = Setting::new(Value::Str(REDACTED.into()), REDACTED, evidence);
                s.note = default_note;
                ns.set(key.clone(), s);
            }
            Ok(_) if touched_secret.get() => {
                let mut s = Setting::new(Value::Str(REDACTED.into()), REDACTED, evidence);
                s.note = Some("redacted: the value refers to a password key".into());
                ns.set(key.clone(), s);
            }
            Ok(expanded) => {
                let mut notes: Vec<String> = default_note.into_iter().collect();
                // A secret inside the value (`-D...Password=x` in a Java
                // option string) is redacted there, the rest kept (issue 29).
                let (expanded, value) = match crate::secret::redact_embedded(&expanded) {
                    std::borrow::Cow::Owned(r) => {
                        notes.push("a secret inside the value is redacted".into());
                        (r, crate::secret::redact_embedded(value).into_owned())
                    }
                    std::borrow::Cow::Borrowed(_) => (expanded, value.clone()),
                };
                if expanded != value {
                    notes.push(format!("`{value}` expanded"));
                }
                let mut s = Setting::new(typed(&expanded), value.clone(), evidence);
                s.note = (!notes.is_empty()).then(|| notes.join("; "));
                ns.set(key.clone(), s);
            }
            Err(msg) => {
                issues.push(FileIssue {
                    path: evidence.path.clone(),
                    line: evidence.line,
                    column: None,
                    message: format!(
                        "key `{key}`: {msg} (Zimbra fails to load localconfig with this error)"
                    ),
                    source: "localconfig".into(),
                    level: crate::facts::IssueLevel::Problem,
                    read_error: None,
                });
                ns.entries.insert(
                    key.clone(),
                    Entry::Unreadable {
                        reason: format!("cannot expand `${{...}}`: {msg}"),
                        evidence: vec![evidence],
                    },
                );
            }
        }
    }
    ns
}

fn layer(
    raw: &mut BTreeMap<String, (String, Origin)>,
    keys: Vec<LcKey>,
    origin: fn(usize) -> Origin,
) {
    for k in keys {
        raw.insert(k.name, (k.value, origin(k.line)));
    }
}

/// Type a localconfig value: an integer is a number (`mailboxd_java_heap_size`
/// stays a number of **MB**), anything else is text.
pub fn typed(value: &str) -> Value {
    match value.trim().parse::<i64>() {
        Ok(n) => Value::Number(n as f64),
        Err(_) => Value::Str(value.to_string()),
    }
}

/// Zimbra's own my.cnf, read as mysqld reads it (Zimbra starts MariaDB with
/// `--defaults-file`, so only this file and what it includes apply; group
/// `[mysqld]`, on the `zimbra` user's behalf): the `zimbra_mycnf`
/// namespace, and every option line with the files read, for the resolver
/// (`None` when not read).
fn read_mycnf(
    host: &Host,
    path: &str,
    trust: Trust,
    issues: &mut Vec<FileIssue>,
) -> (Namespace, Option<crate::facts::OptionFilesRead>) {
    match host.kind_of(path) {
        Ok(_) => {
            let mut mine = Vec::new();
            let groups = ["mysqld".to_string()];
            let set = super::mysql::effective_options_for(host, &[path], &groups, trust, &mut mine);
            // Not read at all (not followed for the zimbra user, a directory,
            // world-writable): unknown, never "nothing set".
            let why = set.files_read.is_empty().then(|| {
                mine.iter()
                    .find(|i| i.path == path)
                    .map(|i| i.read_error.clone().unwrap_or_else(|| i.message.clone()))
            });
            issues.extend(mine);
            match why {
                Some(why) => (
                    Namespace::unavailable(format!(
                        "{path} (`mysql_mycnf` in {LOCALCONFIG_XML}, or its default) was not read: {}",
                        why.unwrap_or_else(|| "see the input finding".into())
                    )),
                    None,
                ),
                None => {
                    let read = super::mysql::lines_read(
                        &set,
                        &groups,
                        &super::mysql::ReadAs::version(None),
                    );
                    (set.namespace, Some(read))
                }
            }
        }
        Err(ReadError::NotFound) => (
            Namespace::unavailable(match host.kind() {
                crate::host::SourceKind::Live => format!("{path} does not exist"),
                crate::host::SourceKind::Snapshot => format!("{path} is not in the snapshot"),
            }),
            None,
        ),
        Err(e) => {
            issues.push(FileIssue::unreadable("mycnf", path, &e));
            (Namespace::unavailable(format!("{path}: {e}")), None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>

<localconfig>
  <key name="mailboxd_java_heap_size">
    <value>2458</value>
  </key>
  <key name="ldap_root_password">
    <value>FAKE-SECRET-DO-NOT-PRINT-1</value>
  </key>
  <key name="mysql_root_password">
    <value>FAKE-SECRET-DO-NOT-PRINT-2</value>
  </key>
  <key name="mailboxd_keystore_password">
    <value>FAKE-SECRET-DO-NOT-PRINT-3</value>
  </key>
  <key name="zimbra_ldap_password">
    <value>FAKE-SECRET-DO-NOT-PRINT-4</value>
  </key>
  <key name="ldap_url">
    <value>ldap://x:389/${zimbra_ldap_password}</value>
  </key>
  <key name="zimbra_db_directory">
    <value>${zimbra_home}/db</value>
  </key>
  <key name="loop_a">
    <value>${loop_b}</value>
  </key>
  <key name="loop_b">
    <value>${loop_a}</value>
  </key>
</localconfig>
"#;

    fn set(ns: &Namespace, k: &str) -> Setting {
        match ns.get(k) {
            Some(Entry::Set(s)) => s.clone(),
            other => panic!("{k}: {other:?}"),
        }
    }

    #[test]
    fn layers_types_and_expansion() {
        let cap = "mysql_memory_percent = 40\nzimbra_home = /opt/zimbra\nldap_root_password = FAKE-SECRET-DO-NOT-PRINT-5\n";
        let mut issues = Vec::new();
        let ns = localconfig_namespace(Ok(XML.into()), Ok(cap.into()), &mut issues);
        let heap = set(&ns, "mailboxd_java_heap_size");
        assert_eq!(heap.value, Value::Number(2458.0));
        assert_eq!(heap.evidence, [Evidence::line(LOCALCONFIG_XML, 4)]);
        let pct = set(&ns, "mysql_memory_percent");
        assert_eq!(pct.value, Value::Number(40.0));
        assert_eq!(pct.evidence, [Evidence::line(CAPTURE_PATH, 1)]);
        let dd = set(&ns, "mysql_data_directory");
        assert_eq!(dd.value, Value::Str("/opt/zimbra/db/data".into()));
        assert_eq!(dd.raw, "${zimbra_db_directory}/data");
        assert_eq!(dd.evidence, [Evidence::file(LOCALCONFIG_XML)]);
        assert!(dd.note.as_deref().unwrap().contains("compiled default"));
        assert_eq!(
            set(&ns, "mysql_mycnf").value,
            Value::Str("/opt/zimbra/conf/my.cnf".into())
        );
        assert_eq!(set(&ns, "mysql_port").value, Value::Number(7306.0));
        assert!(ns.get(OBSOLETE_HEAP_PERCENT).is_none());
        // A non-secret key that embeds a password key is redacted too.
        assert_eq!(set(&ns, "ldap_url").value, Value::Str(REDACTED.into()));
        // The cycle is an issue at the key's line and an unreadable entry.
        assert!(matches!(ns.get("loop_a"), Some(Entry::Unreadable { .. })));
        assert!(
            issues
                .iter()
                .any(|i| i.line == Some(25) && i.message.contains("recursive expansion")),
            "{issues:?}"
        );
    }

    #[test]
    fn missing_or_empty_heap_size_is_zmmailboxdctls_512_mb_not_unset() {
        for xml in [
            "<localconfig>\n  <key name=\"zimbra_home\">\n    <value>/opt/zimbra</value>\n  </key>\n</localconfig>\n",
            "<localconfig>\n  <key name=\"mailboxd_java_heap_size\">\n    <value></value>\n  </key>\n</localconfig>\n",
        ] {
            let mut issues = Vec::new();
            let ns = localconfig_namespace(Ok(xml.into()), Err(ReadError::NotFound), &mut issues);
            let heap = set(&ns, "mailboxd_java_heap_size");
            assert_eq!(heap.value, Value::Number(512.0), "{xml}");
            assert_eq!(heap.evidence, [Evidence::file(LOCALCONFIG_XML)]);
            let note = heap.note.unwrap();
            assert!(note.contains("zmmailboxdctl") && note.contains("-Xmx512m"), "{note}");
            assert!(issues.is_empty(), "{issues:?}");
        }
    }

    #[test]
    fn obsolete_heap_memory_percent_is_reported_as_having_no_effect() {
        let xml = "<localconfig>\n  <key name=\"mailboxd_java_heap_memory_percent\">\n    <value>40</value>\n  </key>\n</localconfig>\n";
        let mut issues = Vec::new();
        let ns = localconfig_namespace(Ok(xml.into()), Err(ReadError::NotFound), &mut issues);
        // the heap is still the script's default, not 40 % of anything
        assert_eq!(
            set(&ns, "mailboxd_java_heap_size").value,
            Value::Number(512.0)
        );
        let i = issues
            .iter()
            .find(|i| i.message.contains(OBSOLETE_HEAP_PERCENT))
            .expect("a note about the obsolete key");
        assert_eq!((i.path.as_str(), i.line), (LOCALCONFIG_XML, Some(2)));
        assert!(i.message.contains("no effect"), "{}", i.message);
        assert_eq!(i.level, crate::facts::IssueLevel::Note);
    }

    #[test]
    fn secrets_never_appear_in_any_serialisation() {
        let cap =
            "ldap_root_password = FAKE-SECRET-DO-NOT-PRINT-5\ngarbage FAKE-SECRET-DO-NOT-PRINT-6\n";
        let mut issues = Vec::new();
        let ns = localconfig_namespace(Ok(XML.into()), Ok(cap.into()), &mut issues);
        let json = serde_json::to_string(&ns).unwrap();
        let debug = format!("{ns:?} {issues:?}");
        let issues_json = serde_json::to_string(&issues).unwrap();
        for out in [&json, &debug, &issues_json] {
            assert!(!out.contains("FAKE-SECRET"), "secret leaked: {out}");
        }
        assert!(json.contains(REDACTED));
        assert_eq!(set(&ns, "mysql_root_password").raw, REDACTED);
        // the garbage line after a secret key is an issue that does not quote it
        assert!(issues
            .iter()
            .any(|i| i.path == CAPTURE_PATH && i.line == Some(2)));
    }

    #[test]
    fn capture_alone_and_broken_xml() {
        let mut issues = Vec::new();
        let ns = localconfig_namespace(
            Err(ReadError::NotFound),
            Ok("mailboxd_java_heap_size = 7168\n".into()),
            &mut issues,
        );
        assert_eq!(
            set(&ns, "mailboxd_java_heap_size").value,
            Value::Number(7168.0)
        );
        assert!(issues.is_empty());

        let ns = localconfig_namespace(
            Ok("<localconfig><key".into()),
            Err(ReadError::NotFound),
            &mut issues,
        );
        assert!(ns.unavailable.is_some());
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path, LOCALCONFIG_XML);
    }

    #[test]
    fn gather_on_snapshot_dirs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("etc")).unwrap();
        let host = Host::snapshot(dir.path()).unwrap();
        let mut facts = Facts::new(&host);
        gather(&host, &Needs::default(), &mut facts);
        crate::facts::presence::detect(&host, &mut facts);
        assert_eq!(facts.facts["zimbra_installed"], Ok(Value::Bool(false)));
        assert!(facts.namespaces["localconfig"].unavailable.is_some());

        std::fs::create_dir_all(dir.path().join("opt/zimbra/conf")).unwrap();
        std::fs::write(dir.path().join("opt/zimbra/conf/localconfig.xml"), XML).unwrap();
        let mut facts = Facts::new(&host);
        gather(&host, &Needs::default(), &mut facts);
        crate::facts::presence::detect(&host, &mut facts);
        assert_eq!(facts.facts["zimbra_installed"], Ok(Value::Bool(true)));
        assert_eq!(
            set(&facts.namespaces["localconfig"], "mailboxd_java_heap_size").value,
            Value::Number(2458.0)
        );
        assert!(facts.namespaces["zimbra_mycnf"].unavailable.is_some());

        let cnf = "[mysqld]\ninnodb_buffer_pool_size        = 2147483648\ninnodb_file_per_table\nbind-address = 127.0.0.1\n[mysqld_safe]\npid-file = x\n[mysqld]\ninnodb_buffer_pool_size = 3G\n";
        std::fs::write(dir.path().join("opt/zimbra/conf/my.cnf"), cnf).unwrap();
        let mut facts = Facts::new(&host);
        gather(&host, &Needs::default(), &mut facts);
        let my = &facts.namespaces["zimbra_mycnf"];
        let pool = set(my, "innodb-buffer-pool-size");
        assert_eq!(pool.value, Value::Size(3.0 * 1073741824.0));
        assert_eq!(
            pool.evidence,
            [
                Evidence::line("/opt/zimbra/conf/my.cnf", 8),
                Evidence::line("/opt/zimbra/conf/my.cnf", 2)
            ]
        );
        assert_eq!(set(my, "innodb_file_per_table").value, Value::Bool(true));
        assert_eq!(
            set(my, "bind_address").value,
            Value::Str("127.0.0.1".into())
        );
        assert!(my.get("pid_file").is_none());
        assert!(!serde_json::to_string(&facts)
            .unwrap()
            .contains("FAKE-SECRET"));
    }
}
