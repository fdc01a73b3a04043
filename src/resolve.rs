//! The resolver: the effective value of one sysctl key, MySQL/MariaDB option
//! or mount point on a host, and every place that set it, as plain data
//! (path, line, symlink read through, overridden lines). Reads only the
//! gathered [`Facts`] (no parser of its own: the precedence rules are the
//! readers' in `facts/`); gathers them through [`facts::gather`] and prints
//! nothing.
//!
//! ```
//! use driftaudit::{Host, Lookup, Resolver};
//!
//! let host = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/nat-story"))?;
//! let r = Resolver::new(&host);
//! let s = r.sysctl("net.ipv4.tcp_tw_recycle");
//! let Lookup::Set(boot) = &s.boot else { panic!("{:?}", s.boot) };
//! // The value the boot applies, and the file and line that decide it.
//! assert_eq!(boot.raw, "1");
//! assert_eq!(boot.at.location(), "/etc/sysctl.d/60-perf.conf:3");
//! println!("{} = {} at {}", s.key, boot.raw, boot.at);
//! for earlier in &boot.overridden {
//!     println!("  overrides {earlier}");
//! }
//! // And what the running kernel has.
//! assert!(matches!(&s.running, Lookup::Set(v) if v.raw == "1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::Serialize;

use crate::facts::{self, Entry, Evidence, Facts, Namespace, Needs, Setting};
use crate::host::Host;
use crate::value::Value;

/// What one source says about a setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Lookup<T> {
    /// The source sets it.
    Set(T),
    /// The source does not set it, and what that means ("the compiled-in
    /// default applies", "the running kernel has no such key").
    Absent {
        /// What a missing value means for this source.
        means: String,
    },
    /// Whether or how the source sets it cannot be told from the host data.
    Unknown {
        /// Why, and what would decide it.
        reason: String,
        /// Where it was looked for (may be empty).
        evidence: Vec<Evidence>,
    },
}

impl<T> Lookup<T> {
    /// The value, when the source sets it.
    pub fn set(&self) -> Option<&T> {
        match self {
            Lookup::Set(t) => Some(t),
            _ => None,
        }
    }
}

/// A value and the lines that set it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assignment {
    /// The typed value the source ends with (after the tool's own
    /// conversions: a rounded buffer pool, a clamped limit).
    pub value: Value,
    /// The value as written on the host (redacted for secrets).
    pub raw: String,
    /// The file and line that decide the value (the real file; `via` names
    /// the symlink it was read through, e.g. `/etc/sysctl.d/99-sysctl.conf`
    /// for `/etc/sysctl.conf`).
    pub at: Evidence,
    /// Earlier lines this one overrides, in the order the tool read them
    /// (first read first). Bounded for hostile input: at most 33 for sysctl
    /// keys and option files.
    pub overridden: Vec<Evidence>,
    /// How the value was derived or why it may differ from `raw`, when the
    /// reader says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A sysctl key: what the boot applies, what procps would, what runs now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SysctlResolution {
    /// Canonical dotted key (`net.ipv4.tcp_tw_recycle`).
    pub key: String,
    /// What the next boot applies: systemd-sysctl's files in its order and
    /// de-duplication (`/etc`, `/run`, `/usr/local/lib`, `/usr/lib`, `/lib`
    /// `sysctl.d`, basename order, masks), then what an enabled TuneD profile
    /// and ufw write after it.
    pub boot: Lookup<Assignment>,
    /// What procps `sysctl --system` would apply (it reads
    /// `/etc/sysctl.conf` last), for hosts where that differs.
    pub procps: Lookup<Assignment>,
    /// The running value: `/proc/sys` on a live host, a snapshot's `proc/sys`
    /// or `sysctl -a` capture (`at` is that file and line).
    pub running: Lookup<Assignment>,
}

/// One option line the server reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OptionLine {
    /// File and line (the real file, `via` the link read through).
    pub at: Evidence,
    /// Group the line is in, as written (`mysqld`, `mariadb-10.11`).
    pub group: String,
    /// Option name as written (`loose-innodb-buffer-pool-size`, a unique
    /// prefix, `skip-name-resolve`): the spelling an edit should keep.
    pub name: String,
    /// Value as written (`None` for a bare option; redacted for secrets).
    pub value: Option<String>,
}

/// A MySQL/MariaDB server option from the option files, and at run time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptionResolution {
    /// Canonical name (`innodb_buffer_pool_size`: lowercase, `_`, `loose-`
    /// stripped, prefixes and `skip-`/`enable-` resolved).
    pub name: String,
    /// The value the server starts with from its option files: only lines it
    /// accepts, with its limits, rounding and start-up adjustments applied.
    /// `Unknown` when a value makes the server refuse to start.
    pub effective: Lookup<Assignment>,
    /// The last value the files hand over, as `my_print_defaults` prints
    /// it, before the server judges it.
    pub configured: Lookup<Assignment>,
    /// The running value from a runtime capture (`SHOW GLOBAL VARIABLES`).
    pub running: Lookup<Assignment>,
    /// Every line of a group the server reads that sets this option, in the
    /// order the server reads them (the last one it accepts wins).
    pub lines: Vec<OptionLine>,
    /// Groups the server reads, in its order.
    pub groups: Vec<String>,
    /// Option files the server read, in order (as opened; a file included
    /// twice appears twice).
    pub files_read: Vec<String>,
    /// The file the server reads last (the real file, `via` the link it was
    /// opened through): a line added to a server group there wins over
    /// every other file.
    pub last_file: Option<Evidence>,
}

/// An `/etc/fstab` entry for a mount point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FstabLine {
    /// `/etc/fstab` and the line (the first one for this mount point: the
    /// one systemd-fstab-generator and mount(8) use).
    pub at: Evidence,
    /// Later lines naming the same mount point, which are ignored.
    pub ignored: Vec<Evidence>,
    /// Device field as written (`UUID=...`, `/dev/sdb1`).
    pub spec: String,
    /// Filesystem type field.
    pub fstype: String,
    /// The options field exactly as written (empty when the line has none).
    pub options: String,
    /// The options the kernel would show for this line (defaults expanded,
    /// filesystem defaults and superblock defaults applied, canonical order).
    pub effective_options: Vec<String>,
    /// What the model could not judge, when anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A mounted filesystem, from the live mount table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MountedFs {
    /// The mount table (`/proc/self/mountinfo`, a capture) and its line.
    pub at: Evidence,
    /// Mounts stacked below the visible one, in mount order.
    pub hidden: Vec<Evidence>,
    /// Mount source (`/dev/sdb1`).
    pub source: String,
    /// Filesystem type.
    pub fstype: String,
    /// The options as the mount table shows them.
    pub raw: String,
    /// The same options in canonical form, comparable with
    /// [`FstabLine::effective_options`].
    pub options: Vec<String>,
}

/// A mount point: its `/etc/fstab` entry and what is mounted there now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MountResolution {
    /// Canonical mount point (`/var/lib/mysql`; `swap:SPEC` for swap lines).
    pub point: String,
    /// The `/etc/fstab` entry.
    pub fstab: Lookup<FstabLine>,
    /// The mounted filesystem.
    pub mounted: Lookup<MountedFs>,
}

/// The lines of `read` that set option `name` (canonical), in the order
/// the server reads them.
fn option_lines(read: &facts::OptionFilesRead, name: &str) -> Vec<OptionLine> {
    read.options
        .iter()
        .filter(|o| o.key == name)
        .map(|o| OptionLine {
            at: o.evidence.clone(),
            group: o.group.clone(),
            name: o.name.clone(),
            value: o.value.clone(),
        })
        .collect()
}

/// Answers "what is the effective value of X on this host, and every place
/// that set it" for sysctl keys, option files and mount points. Gathers the
/// host's facts once ([`Resolver::new`]); each question then reads them.
#[derive(Debug)]
pub struct Resolver<'h> {
    host: &'h Host,
    facts: Cow<'h, Facts>,
    /// sysctl keys whose running value was asked for when gathering: a key
    /// outside this set (and not in the configuration) is read on demand.
    asked: Option<BTreeSet<String>>,
}

impl<'h> Resolver<'h> {
    /// Gather everything the resolver reads from `host` (every namespace;
    /// running sysctl values for the keys the configuration sets).
    pub fn new(host: &'h Host) -> Resolver<'h> {
        Resolver::with_sysctl_keys(host, std::iter::empty::<&str>())
    }

    /// As [`Resolver::new`], also reading the running values of `keys`, so
    /// that asking about a key no file sets costs no second pass.
    pub fn with_sysctl_keys<K: AsRef<str>>(
        host: &'h Host,
        keys: impl IntoIterator<Item = K>,
    ) -> Resolver<'h> {
        let needs = Needs {
            sysctl_keys: keys
                .into_iter()
                .map(|k| facts::sysctl::canonical_key(k.as_ref()))
                .collect(),
            ..Needs::default()
        };
        let asked = Some(needs.sysctl_keys.clone());
        Resolver {
            host,
            facts: Cow::Owned(facts::gather(host, &needs)),
            asked,
        }
    }

    /// A resolver over facts already gathered from `host` (an audit's:
    /// `engine::gather`), so the answers are the ones the findings used.
    #[doc(hidden)]
    pub fn from_facts(host: &'h Host, facts: &'h Facts) -> Resolver<'h> {
        Resolver {
            host,
            facts: Cow::Borrowed(facts),
            asked: None,
        }
    }

    /// A sysctl key (dotted or slashed, `net/ipv4/ip_forward`).
    pub fn sysctl(&self, key: &str) -> SysctlResolution {
        let key = facts::sysctl::canonical_key(key);
        let running = match self.facts.namespaces.get("sysctl") {
            Some(ns) if ns.unavailable.is_none() && ns.get(&key).is_none() => {
                if self.asked.as_ref().is_some_and(|a| a.contains(&key)) {
                    lookup(Some(ns), &key, running_assignment)
                } else {
                    // Not read when gathering: read it now.
                    let needs = Needs {
                        sysctl_keys: BTreeSet::from([key.clone()]),
                        namespaces: BTreeSet::from(["sysctl".to_string()]),
                        ..Needs::default()
                    };
                    let f = facts::gather(self.host, &needs);
                    lookup(f.namespaces.get("sysctl"), &key, running_assignment)
                }
            }
            ns => lookup(ns, &key, running_assignment),
        };
        SysctlResolution {
            boot: lookup(self.ns("sysctl_boot"), &key, assignment),
            procps: lookup(self.ns("sysctl_procps"), &key, assignment),
            running,
            key,
        }
    }

    /// A MySQL/MariaDB server option (`innodb_buffer_pool_size`,
    /// `innodb-buffer-pool-size`), from the option files the server reads.
    pub fn option(&self, name: &str) -> OptionResolution {
        let name = facts::mysql::canonical_name(name);
        let read = self.facts.option_files.clone().unwrap_or_default();
        let lines = option_lines(&read, &name);
        let last_file = read.files_read.last().map(|p| self.real_file(p));
        OptionResolution {
            effective: lookup(self.ns("mycnf_effective"), &name, assignment),
            configured: lookup(self.ns("mycnf"), &name, assignment),
            running: lookup(self.ns("mysql"), &name, assignment),
            lines,
            groups: read.groups,
            files_read: read.files_read,
            last_file,
            name,
        }
    }

    /// An option of Zimbra's own MariaDB, from the option file it starts
    /// with (`mysql_mycnf` in localconfig.xml, else
    /// /opt/zimbra/conf/my.cnf, group `[mysqld]`, read on the `zimbra`
    /// user's behalf): what [`Resolver::option`] answers for the system's
    /// server. `configured` is what the file hands over (the `zimbra_mycnf`
    /// namespace the Zimbra rules read) and `lines` every line that set it;
    /// `effective` is `Unknown` where the file sets it (the start-up limits
    /// of Zimbra's bundled server are not modelled) and `running` is
    /// `Unknown` (its server is not queried). A host without Zimbra's
    /// option file answers with the reason in every field.
    pub fn zimbra_option(&self, name: &str) -> OptionResolution {
        let name = facts::mysql::canonical_name(name);
        let read = self.facts.zimbra_option_files.clone().unwrap_or_default();
        let lines = option_lines(&read, &name);
        let last_file = read.files_read.last().map(|p| self.real_file(p));
        let configured = lookup(self.ns("zimbra_mycnf"), &name, assignment);
        let effective = match &configured {
            Lookup::Set(a) => Lookup::Unknown {
                reason: "the start-up limits and adjustments of Zimbra's bundled MariaDB are not modelled: `configured` is what its option file hands over".into(),
                evidence: vec![a.at.clone()],
            },
            other => other.clone(),
        };
        OptionResolution {
            effective,
            configured,
            running: Lookup::Unknown {
                reason: "Zimbra's MariaDB is not queried: no runtime capture of it is read".into(),
                evidence: Vec::new(),
            },
            lines,
            groups: read.groups,
            files_read: read.files_read,
            last_file,
            name,
        }
    }

    /// A mount point (`/var/lib/mysql`, `/srv//data/`), or `swap:SPEC` for a
    /// swap line.
    pub fn mount(&self, point: &str) -> MountResolution {
        let point = facts::storage::normalize_point(point);
        MountResolution {
            fstab: lookup(self.ns("fstab"), &point, fstab_line),
            mounted: lookup(self.ns("mount"), &point, mounted_fs),
            point,
        }
    }

    fn ns(&self, name: &str) -> Option<&Namespace> {
        self.facts.namespaces.get(name)
    }

    /// `path` as the file an admin edits: the real file, with the link in `via`.
    fn real_file(&self, path: &str) -> Evidence {
        let mut e = Evidence::file(path);
        if let Ok(real) = self.host.resolve(path) {
            if real != crate::host::lexical(path) {
                e.via = Some(std::mem::replace(&mut e.path, real));
            }
        }
        e
    }
}

/// One key of a namespace as a [`Lookup`], the set value converted by `f`.
fn lookup<T>(ns: Option<&Namespace>, key: &str, f: fn(&Setting) -> T) -> Lookup<T> {
    let Some(ns) = ns else {
        return Lookup::Unknown {
            reason: "not gathered from this host".into(),
            evidence: Vec::new(),
        };
    };
    if let Some(reason) = &ns.unavailable {
        return Lookup::Unknown {
            reason: reason.clone(),
            evidence: Vec::new(),
        };
    }
    match ns.get(key) {
        Some(Entry::Set(s)) => Lookup::Set(f(s)),
        Some(Entry::Unreadable { reason, evidence }) => Lookup::Unknown {
            reason: reason.clone(),
            evidence: evidence.clone(),
        },
        None => Lookup::Absent {
            means: ns.absent_means.clone(),
        },
    }
}

/// A setting whose evidence is the winner, then overridden lines newest first.
fn assignment(s: &Setting) -> Assignment {
    let mut ev = s.evidence.iter().cloned();
    let at = ev.next().unwrap_or_else(|| Evidence::file(""));
    let mut overridden: Vec<Evidence> = ev.collect();
    overridden.reverse();
    Assignment {
        value: s.value.clone(),
        raw: s.raw.clone(),
        at,
        overridden,
        note: s.note.clone(),
    }
}

/// A running sysctl value: its evidence may start with the configuration
/// line that set the same value; the live source is the last one.
fn running_assignment(s: &Setting) -> Assignment {
    Assignment {
        value: s.value.clone(),
        raw: s.raw.clone(),
        at: s
            .evidence
            .last()
            .cloned()
            .unwrap_or_else(|| Evidence::file("")),
        overridden: Vec::new(),
        note: s.note.clone(),
    }
}

fn field(s: &Setting, name: &str) -> Option<Value> {
    match &s.value {
        Value::Record(r) => r.get(name).cloned(),
        _ => None,
    }
}

fn text_field(s: &Setting, name: &str) -> String {
    match field(s, name) {
        Some(Value::Str(t)) => t,
        _ => String::new(),
    }
}

fn list_field(s: &Setting, name: &str) -> Vec<String> {
    match field(s, name) {
        Some(Value::List(items)) => items.iter().map(Value::to_plain).collect(),
        _ => Vec::new(),
    }
}

fn fstab_line(s: &Setting) -> FstabLine {
    FstabLine {
        at: s
            .evidence
            .first()
            .cloned()
            .unwrap_or_else(|| Evidence::file("")),
        // the fstab reader lists later lines in file order
        ignored: s.evidence.iter().skip(1).cloned().collect(),
        spec: text_field(s, "spec"),
        fstype: text_field(s, "fstype"),
        options: s.raw.clone(),
        effective_options: list_field(s, "kernel_options"),
        note: s.note.clone(),
    }
}

fn mounted_fs(s: &Setting) -> MountedFs {
    let mut hidden: Vec<Evidence> = s.evidence.iter().skip(1).cloned().collect();
    hidden.reverse();
    MountedFs {
        at: s
            .evidence
            .first()
            .cloned()
            .unwrap_or_else(|| Evidence::file("")),
        hidden,
        source: text_field(s, "source"),
        fstype: text_field(s, "fstype"),
        raw: s.raw.clone(),
        options: list_field(s, "options"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str) -> Host {
        Host::snapshot(format!(
            "{}/testdata/hosts/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn a_key_no_file_sets_is_read_on_demand() {
        let h = host("nat-story");
        let r = Resolver::new(&h);
        let s = r.sysctl("kernel/ostype");
        assert!(matches!(s.boot, Lookup::Absent { .. }), "{:?}", s.boot);
        assert_eq!(s.key, "kernel.ostype");
        // whatever the snapshot holds, it is not "not gathered"
        if let Lookup::Unknown { reason, .. } = &s.running {
            assert!(!reason.contains("not gathered"), "{reason}");
        }
    }

    #[test]
    fn a_namespace_not_gathered_is_unknown_not_absent() {
        let l = lookup(None, "x", assignment);
        assert!(matches!(l, Lookup::Unknown { .. }));
    }
}
