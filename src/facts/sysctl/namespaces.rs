//! The namespace assembly: [`gather`] takes the live values (`live`), the
//! persisted files (`files`) and tuned's writes, runs both tools' models
//! (`precedence`), takes as the boot the model of what this host's init
//! applies ([`crate::facts::init`]: systemd-sysctl, procps `sysctl
//! --system` under sysvinit or OpenRC, nothing in a container without an
//! init), lays what ufw (`appliers`) and TuneD write after boot over it,
//! notes where procps would differ, and fills the `sysctl`, `sysctl_boot`
//! and `sysctl_procps` namespaces.

use std::collections::BTreeMap;

use crate::facts::init::{self, BootSysctl};
use crate::facts::tuned::{self, Write};
use crate::facts::{Entry, Facts, FileIssue, IssueLevel, Namespace, Needs, Setting};
use crate::host::{EntryKind, Host, SourceKind};
use crate::parse::sysctl::parse_conf;
use crate::value::Value;

use super::appliers::{self, Ufw};
use super::files::{persisted_files, script_files};
use super::live::{live_namespace, live_source, read_listing, wanted_keys};
use super::precedence::{procps_model, systemd_model};
use super::{canonical_key, MAX_EVIDENCE};

/// Gather the three sysctl namespaces.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let proc_dir = matches!(host.kind_of("/proc/sys"), Ok(EntryKind::Dir));
    // The listing's text outlives `live`, whose values borrow from it.
    let listing = (host.kind() != SourceKind::Live).then(|| read_listing(host, facts));
    let live = live_source(host, facts, &listing, proc_dir);

    // Persisted configuration: the files each tool reads.
    let (parsed, procps_files) = persisted_files(host, facts);

    // What the init applies at the next start (systemd-sysctl, procps
    // `sysctl --system`, or nothing).
    let init = init::detect(host);
    let systemd = matches!(
        init.sysctl,
        BootSysctl::SystemdSysctl | BootSysctl::Unknown(_)
    );
    // TuneD, where it is enabled (a systemd unit): what it writes after boot, in order.
    let tuned = if systemd {
        tuned::sysctl_writes(host, facts)
    } else {
        Vec::new()
    };

    // ufw, when it starts: its file read once, its keys wanted too
    let ufw = if matches!(init.sysctl, BootSysctl::Nothing(_)) {
        None
    } else {
        ufw_file(host, facts)
    };
    // Keys we need live values for: rule keys + explicit persisted keys + glob expansions.
    let with_ufw: Vec<(String, super::files::Lines)> = parsed
        .iter()
        .cloned()
        .chain(ufw.iter().map(|(p, l, _, _)| (p.clone(), l.clone())))
        .collect();
    let (wanted, glob_matches) = wanted_keys(host, needs, &tuned, &with_ufw, &procps_files, &live);

    let live_ns = live_namespace(host, &live, &wanted, proc_dir);

    // procps `sysctl --system` model: its own file list, /etc/sysctl.conf last.
    let procps = procps_model(&procps_files, &glob_matches);
    let inputs = Inputs {
        host,
        parsed: &parsed,
        glob_matches: &glob_matches,
        procps: &procps,
        tuned: std::cell::RefCell::new(tuned),
        ufw: &ufw,
        live_ns: &live_ns,
        profile: if systemd {
            tuned::uncaptured_profile(host)
        } else {
            None
        },
    };
    // The boot: what this host's init applies; with the init unknown,
    // what every init driftaudit knows would give alike, else unknown.
    let mut boot_ranges = BTreeMap::new();
    let (boot, boot_unknown) = match &init.sysctl {
        BootSysctl::Unknown(why) => unknown_init(&inputs, why, &mut boot_ranges, facts),
        BootSysctl::Nothing(why) => {
            note_not_applied(&parsed, why, facts);
            (BTreeMap::new(), BTreeMap::new())
        }
        kind => boot_model(kind, &inputs, facts),
    };
    let mut live_ns = live_ns;
    cite_configuration(&mut live_ns, &boot);

    let mut boot_ns = Namespace::of("sysctl_boot");
    boot_ns.canonicalize = Some(canonical_key);
    boot_ns.bounds = ranges(&boot_unknown, &boot_ranges);
    boot_ns.entries = boot.into_iter().map(|(k, s)| (k, Entry::Set(s))).collect();
    boot_ns.entries.extend(boot_unknown);
    let mut procps_ns = Namespace::of("sysctl_procps");
    procps_ns.canonicalize = Some(canonical_key);
    procps_ns.entries = procps
        .into_iter()
        .map(|(k, s)| (k, Entry::Set(s)))
        .collect();

    let sides = super::sides::sides(&init.sysctl, &live_ns, &boot_ns);
    facts.namespaces.insert(super::sides::SIDES.into(), sides);
    facts.namespaces.insert("sysctl".into(), live_ns);
    facts.namespaces.insert("sysctl_boot".into(), boot_ns);
    facts.namespaces.insert("sysctl_procps".into(), procps_ns);
}

/// Lay tuned's writes over the boot model, in order; returns the keys
/// whose value tuned makes unknown.
fn apply_tuned(boot: &mut BTreeMap<String, Setting>, tuned: Vec<Write>) -> BTreeMap<String, Entry> {
    let mut boot_unknown: BTreeMap<String, Entry> = BTreeMap::new();
    for w in tuned {
        let k = w.key.clone();

        if let (Some(v), Some(cur)) = (&w.keep_if, boot.get(&k)) {
            if cur.raw == *v {
                continue;
            }
        }
        // a `>`/`<` value is judged against the value at that time
        let Some(e) = tuned::resolve(w, boot.get(&k)) else {
            continue;
        };
        match e {
            Entry::Set(mut s) => {
                if let Some(prev) = boot.get(&k) {
                    if prev.raw == s.raw && prev.evidence.first() == s.evidence.first() {
                        continue; // re-applied unchanged
                    }
                }
                boot_unknown.remove(&k);
                if let Some(prev) = boot.remove(&k) {
                    s.evidence.extend(prev.evidence);
                    s.evidence.truncate(MAX_EVIDENCE);
                }
                boot.insert(k, s);
            }
            other => {
                boot.remove(&k);
                boot_unknown.insert(k, other);
            }
        }
    }
    boot_unknown
}

/// ufw's sysctl file when ufw applies it at start ([`appliers::ufw`]):
/// path, parsed lines, why, and whether that is known (`false`: the
/// snapshot cannot tell whether ufw is enabled); `None` when ufw applies
/// nothing.
type UfwFile = (String, super::files::Lines, String, bool);

fn ufw_file(host: &Host, facts: &mut Facts) -> Option<UfwFile> {
    let (path, why, known) = match appliers::ufw(host) {
        Ufw::Nothing(_) => return None,
        Ufw::Applies { file, why } => (file, why, true),
        Ufw::Unknown { file, why } => (file, why, false),
    };
    let text = host.read_to_string(&path).ok()?;
    let (lines, issues) = parse_conf(&text);
    for i in &issues {
        facts.issues.push(FileIssue::from_parse("sysctl", &path, i));
    }
    Some((path, std::rc::Rc::new(lines), why, known))
}

/// Lay what ufw applies when it starts over the boot model: its file's
/// values when it is enabled, unknown keys when the snapshot cannot tell.
fn apply_ufw(
    (path, lines, why, known): UfwFile,
    boot: &mut BTreeMap<String, Setting>,
    boot_unknown: &mut BTreeMap<String, Entry>,
    glob_matches: &BTreeMap<String, Vec<String>>,
) {
    // `sysctl -p FILE`: procps, every line in order, last write wins
    let extra = procps_model(&[(path.clone(), lines)], glob_matches);
    for (k, mut s) in extra {
        if !known {
            boot.remove(&k);
            boot_unknown.insert(
                k,
                Entry::Unreadable {
                    reason: why.clone(),
                    evidence: s.evidence,
                },
            );
            continue;
        }
        s.note = Some(format!("set by {path} ({why}), after the boot's own files"));
        boot_unknown.remove(&k);
        if let Some(prev) = boot.remove(&k) {
            s.evidence.extend(prev.evidence);
            s.evidence.truncate(MAX_EVIDENCE);
        }
        boot.insert(k, s);
    }
}

/// Nothing applies the persisted files at the next start: say so once,
/// naming the files that set values no one applies.
fn note_not_applied(files: &[(String, super::files::Lines)], why: &str, facts: &mut Facts) {
    let setting: Vec<&str> = files
        .iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(p, _)| p.as_str())
        .collect();
    let Some(first) = setting.first() else {
        return;
    };
    let more = if setting.len() > 1 {
        format!(" (and {} other file(s))", setting.len() - 1)
    } else {
        String::new()
    };
    facts.issues.push(
        FileIssue::problem(
            "sysctl",
            first,
            None,
            format!(
                "{why}; the values this file{more} sets are not applied at boot, so a running value that differs from them is not drift that a restart reverts"
            ),
        )
        .with_level(IssueLevel::Note),
    );
}

/// The keys an uncaptured TuneD profile may set: tuned applied it after
/// the files at the last boot, so a key the kernel runs with another value
/// than the files give may be the profile's; a key running as the files
/// say was left alone (or set to the same value).
fn profile_unknown(
    boot: &mut BTreeMap<String, Setting>,
    boot_unknown: &mut BTreeMap<String, Entry>,
    live_ns: &Namespace,
    why: &str,
) {
    let differing: Vec<String> = boot
        .iter()
        .filter(|(k, s)| {
            matches!(live_ns.entries.get(*k), Some(Entry::Set(l)) if !l.value.loosely_equals(&s.value))
        })
        .map(|(k, _)| k.clone())
        .collect();
    for k in differing {
        if let Some(s) = boot.remove(&k) {
            boot_unknown.insert(
                k,
                Entry::Unreadable {
                    reason: why.to_string(),
                    evidence: s.evidence,
                },
            );
        }
    }
}

/// Note where procps would end with another value.
fn note_procps_differences(
    boot: &mut BTreeMap<String, Setting>,
    procps: &BTreeMap<String, Setting>,
) {
    for (k, s) in boot.iter_mut() {
        if let Some(p) = procps.get(k) {
            if !p.value.loosely_equals(&s.value) && s.note.is_none() {
                s.note = Some(format!(
                    "procps `sysctl --system` would apply `{}` from {} instead (it applies /etc/sysctl.conf last)",
                    p.raw, p.evidence[0]
                ));
            }
        }
    }
}

/// A live value that the configuration also sets to the same value was set
/// by that file: cite the file and line first, then the live path.
fn cite_configuration(live_ns: &mut Namespace, boot: &BTreeMap<String, Setting>) {
    for (k, e) in live_ns.entries.iter_mut() {
        if let (Entry::Set(live), Some(conf)) = (e, boot.get(k)) {
            if live.value.loosely_equals(&conf.value) {
                let mut ev = vec![conf.evidence[0].clone()];
                ev.append(&mut live.evidence);
                live.evidence = ev;
            }
        }
    }
}

/// What the boot models read: the persisted files, each tool's model, the
/// services that write after boot, and the running values.
struct Inputs<'a> {
    host: &'a Host,
    parsed: &'a [(String, super::files::Lines)],
    glob_matches: &'a BTreeMap<String, Vec<String>>,
    procps: &'a BTreeMap<String, Setting>,
    /// TuneD's writes, taken by the one model that applies them (systemd's).
    tuned: std::cell::RefCell<Vec<Write>>,
    ufw: &'a Option<UfwFile>,
    live_ns: &'a Namespace,
    /// An enabled TuneD whose profile the snapshot lacks: why.
    profile: Option<String>,
}

/// A boot model: the values one init applies at the next start (its own
/// files, then what TuneD and ufw write after it), and the keys whose
/// value it leaves unknown.
type Boot = (BTreeMap<String, Setting>, BTreeMap<String, Entry>);

/// What `kind` applies at the next start.
fn boot_model(kind: &BootSysctl, i: &Inputs, facts: &mut Facts) -> Boot {
    let systemd = matches!(kind, BootSysctl::SystemdSysctl);
    let mut boot = match kind {
        BootSysctl::SystemdSysctl => systemd_model(i.parsed, i.glob_matches, facts),
        BootSysctl::SysctlSystem(_) => i.procps.clone(),
        BootSysctl::ScriptFiles(_, order) => {
            procps_model(&script_files(i.host, order), i.glob_matches)
        }
        BootSysctl::Nothing(_) | BootSysctl::Unknown(_) => return Boot::default(),
    };
    // TuneD is a systemd unit: it writes after boot only under systemd
    let tuned = if systemd {
        std::mem::take(&mut *i.tuned.borrow_mut())
    } else {
        Vec::new()
    };
    let mut boot_unknown = apply_tuned(&mut boot, tuned);
    if let Some(ufw) = i.ufw.clone() {
        apply_ufw(ufw, &mut boot, &mut boot_unknown, i.glob_matches);
    }
    if systemd {
        note_procps_differences(&mut boot, i.procps);
        // an enabled TuneD whose profile the snapshot lacks: the keys it may
        // have set (those running otherwise than the files say) are unknown
        if let Some(why) = &i.profile {
            profile_unknown(&mut boot, &mut boot_unknown, i.live_ns, why);
        }
    }
    (boot, boot_unknown)
}

/// The init is not known (a snapshot older than issue 48 records no PID
/// 1): each key gets the value every init driftaudit knows would give it
/// at the next start (systemd-sysctl, procps `sysctl --system` run by
/// sysvinit's or OpenRC's script, OpenRC's script as Alpine patches it, and a
/// container without an init, which keeps the running value); where they
/// differ it is unknown, naming what each would give and what decides it,
/// and a numeric key records the range of those values in `ranges`.
fn unknown_init(
    i: &Inputs,
    why: &str,
    ranges: &mut BTreeMap<String, (Value, Value)>,
    facts: &mut Facts,
) -> Boot {
    let models = [
        (
            "systemd-sysctl",
            boot_model(&BootSysctl::SystemdSysctl, i, facts),
        ),
        (
            "procps `sysctl --system` (sysvinit's or OpenRC's script)",
            boot_model(&BootSysctl::SysctlSystem(String::new()), i, facts),
        ),
        (
            "OpenRC's sysctl service as Alpine patches it (`sysctl -p` on each file)",
            boot_model(
                &BootSysctl::ScriptFiles(
                    String::new(),
                    init::ALPINE_SYSCTL_ORDER.map(String::from).to_vec(),
                ),
                i,
                facts,
            ),
        ),
    ];
    let keys: std::collections::BTreeSet<&String> = models
        .iter()
        .flat_map(|(_, (b, u))| b.keys().chain(u.keys()))
        .collect();
    let mut boot = BTreeMap::new();
    let mut unknown = BTreeMap::new();
    for key in keys {
        let running = i.live_ns.entries.get(key);
        // each init's answer: its value, or (setting nothing) the running one
        let mut said: Vec<(String, String, String)> = Vec::new();
        let mut values: Vec<(Value, Option<&Setting>)> = Vec::new();
        let mut evidence = Vec::new();
        let mut undecided: Option<String> = None;
        for (name, (b, u)) in &models {
            match (b.get(key), u.get(key), running) {
                (Some(s), _, _) => {
                    said.push((
                        name.to_string(),
                        format!("`{}`", s.raw),
                        format!(" ({})", s.evidence[0]),
                    ));
                    evidence.extend(s.evidence.iter().take(1).cloned());
                    values.push((s.value.clone(), Some(s)));
                }
                (None, Some(Entry::Unreadable { reason, .. }), _) => {
                    undecided.get_or_insert_with(|| format!("under {name}: {reason}"));
                }
                (None, _, Some(Entry::Set(l))) => {
                    said.push((
                        name.to_string(),
                        format!("nothing, keeping `{}`", l.raw),
                        String::new(),
                    ));
                    values.push((l.value.clone(), None));
                }
                _ => {}
            }
        }
        let container = "a container without an init";
        match running {
            Some(Entry::Set(l)) => {
                said.push((
                    container.into(),
                    format!("nothing, keeping the running `{}`", l.raw),
                    String::new(),
                ));
                values.push((l.value.clone(), None));
            }
            Some(Entry::Unreadable { reason, .. }) => {
                undecided.get_or_insert_with(|| {
                    format!(
                        "{container} would keep the running value, which is not known: {reason}"
                    )
                });
            }
            None => {} // the kernel has no such key: no init gives it a value
        }
        let alike = values.windows(2).all(|w| w[0].0.loosely_equals(&w[1].0));
        let first_set = values.iter().find_map(|(_, s)| *s);
        if undecided.is_none() && alike {
            if let Some(s) = first_set {
                boot.insert(key.clone(), s.clone());
            }
            continue;
        }
        let numbers: Vec<f64> = values.iter().filter_map(|(v, _)| v.as_f64()).collect();
        if undecided.is_none() && numbers.len() == values.len() && !numbers.is_empty() {
            let lo = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            ranges.insert(key.clone(), (Value::Number(lo), Value::Number(hi)));
        }
        let reason = match undecided {
            Some(u) => format!("{why}, and {u}"),
            None => format!(
                "{why}, and the inits disagree at the next start: {}",
                group(&said)
            ),
        };
        unknown.insert(key.clone(), Entry::Unreadable { reason, evidence });
    }
    (boot, unknown)
}

/// The ranges of the keys left unknown.
fn ranges(
    unknown: &BTreeMap<String, Entry>,
    all: &BTreeMap<String, (Value, Value)>,
) -> BTreeMap<String, (Value, Value)> {
    all.iter()
        .filter(|(k, _)| unknown.contains_key(*k))
        .map(|(k, r)| (k.clone(), r.clone()))
        .collect()
}

/// What each init gives, one clause per distinct answer (who, the value
/// in words, where the first of them found it): "systemd-sysctl and procps
/// `sysctl --system` apply `1` (FILE:LINE); a container without an init
/// applies nothing, keeping the running `0`".
fn group(said: &[(String, String, String)]) -> String {
    let mut answers: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for (who, what, at) in said {
        match answers.iter_mut().find(|(w, _, _)| *w == what.as_str()) {
            Some((_, _, names)) => names.push(who),
            None => answers.push((what, at, vec![who])),
        }
    }
    answers
        .iter()
        .map(|(what, at, names)| {
            let who = match names.split_last() {
                Some((last, [])) => last.to_string(),
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            let verb = if names.len() > 1 { "apply" } else { "applies" };
            format!("{who} {verb} {what}{at}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}
