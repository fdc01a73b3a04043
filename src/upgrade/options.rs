//! MySQL/MariaDB upgrade findings: the option files as the *target* server
//! reads them (its groups: `[mariadb-10.11]`, `[mysqld-8.0]`, ..., read by
//! facts for [`groups`]), each option line compared with the knowledge
//! (removed, ignored, `loose-`, deprecated, refused values), and the
//! defaults the host relies on compared between the running version and the
//! target. No reads and no policy rules here.

use crate::facts::mysql::{self, ServerVersion, DEFAULT_FILES};
use crate::facts::Facts;
use crate::parse::mycnf::canonical_option;
use crate::policy::{Severity, Target};
use crate::report::{Finding, Status};
use crate::value::Value;

use super::data::{default_at, Effect, Entry, Knowledge, Product};
use super::kind::{finding, rule_id, Kind};

/// The running (or installed) server version and where it was read.
struct Source {
    version: ServerVersion,
    from: String,
}

impl Source {
    fn label(&self) -> String {
        let p = &self.version.parts;
        format!(
            "{} {}.{}.{}",
            if self.version.mariadb {
                "MariaDB"
            } else {
                "MySQL"
            },
            p[0],
            p[1],
            p[2]
        )
    }

    fn product(&self) -> Product {
        if self.version.mariadb {
            Product::Mariadb
        } else {
            Product::Mysql
        }
    }
}

fn source_version(facts: &Facts) -> Option<Source> {
    if let Some(Ok(Value::Str(s))) = facts.facts.get("mysql_version") {
        if let Some(v) = ServerVersion::parse(s) {
            return Some(Source {
                version: v,
                from: format!("runtime capture `version` = {s}"),
            });
        }
    }
    facts.installed_server.as_ref().map(|i| Source {
        version: ServerVersion {
            parts: i.parts,
            mariadb: i.mariadb,
        },
        from: i.from.clone(),
    })
}

/// The groups the target server reads.
pub(super) fn groups(t: &Target) -> Vec<String> {
    let (maj, min) = t.version.series();
    let v = match t.product {
        Product::Mariadb => format!("{maj}.{min}.0-MariaDB"),
        _ => format!("{maj}.{min}.0"),
    };
    mysql::server_groups(Some(&v))
}

pub(super) fn findings(facts: &Facts, t: &Target, k: &Knowledge) -> Vec<Finding> {
    let target = t.label();
    let groups = groups(t);
    let Some(set) = facts.option_files_as.get(&groups) else {
        // facts gathered without the plan of the rule (`Needs::option_groups`)
        let mut f = finding(k, Kind::Removed, Status::Unknown, Severity::High, 1);
        f.explanation = format!(
            "the option files were not read as {target} reads them: the facts were gathered without this rule's plan"
        );
        return vec![f];
    };
    let mut out: Vec<Finding> = Vec::new();
    if set.files_read.is_empty() {
        let mut f = finding(k, Kind::Removed, Status::Skip, Severity::High, 1);
        f.explanation = format!(
            "no option file ({}) on the host: nothing for {target} to read",
            DEFAULT_FILES.join(", ")
        );
        return vec![f];
    }
    let source = source_version(facts);
    if let Some(fatal) = &set.fatal {
        // The files stop the server before their end: what follows that
        // point was not checked, so nothing here may read as a pass.
        let mut f = finding(k, Kind::Removed, Status::Unknown, Severity::High, 1);
        f.explanation =
            format!("{fatal}; options after that point were not checked against {target}");
        f.fix =
            "correct the line named (see the driftaudit.input finding), then check again".into();
        out.push(f);
    }
    let running = match &source {
        Some(s) => format!("the host runs {} ({})", s.label(), s.from),
        None => "the running version is unknown".to_string(),
    };
    let group_list = format!("[{}]", groups.join("], ["));

    for o in &set.argv {
        let name = canonical_option(&o.name);
        let Some(e) = k.entry(&name.name) else {
            continue;
        };
        let at = o.evidence.clone();
        let written = match &o.value {
            Some(v) => format!("{} = {v}", o.name),
            None => o.name.clone(),
        };
        let replacement = e
            .replacement
            .as_ref()
            .map(|r| format!(" (replacement: `{r}`)"))
            .unwrap_or_default();
        if let Some(r) = e.removed.as_ref().filter(|r| t.includes(&r.version)) {
            let when = if r.at_latest {
                format!("gone by {}", r.version)
            } else {
                format!("removed in {}", r.version)
            };
            let (kind, status_text, fix) = match (r.effect, name.loose) {
                (Effect::Refused, false) => (
                    Kind::Removed,
                    format!("{target} refuses it (\"unknown variable '{}'\") and does not start", o.arg.trim_start_matches("--")),
                    format!("{}{replacement}; or write it as `loose-{}` while older servers still read the file", e.action, name.name),
                ),
                (Effect::Refused, true) => (
                    Kind::LooseRemoved,
                    format!("{target} no longer knows it; thanks to `loose-` it starts with a warning, and the line does nothing"),
                    format!("{}{replacement}", e.action),
                ),
                (_, _) => (
                    Kind::Ignored,
                    format!("{target} accepts the line with a warning (\"was removed. It does nothing now\") and ignores it"),
                    format!("{}{replacement}", e.action),
                ),
            };
            let sev = e.severity.unwrap_or(kind.severity());
            out.push(
                finding(k, kind, Status::Fail, sev, e.line)
                    .with_subject(vec![e.name.clone()])
                    .with_expected(format!("no `{}` in the groups {target} reads", e.name))
                    .with_actual(format!("`{written}` in [{}] at {at}", o.group))
                    .with_evidence(vec![at.clone()])
                    .with_explanation(format!(
                        "`{written}` at {at} ([{}]): {} {when}; {status_text}; {running}",
                        o.group, e.name
                    ))
                    .with_fix(fix),
            );
            continue;
        }
        // values the target refuses (`sql_mode = ...,NO_AUTO_CREATE_USER`)
        if let Some(value) = &o.value {
            let refused: Vec<&super::data::ValueRemoval> = e
                .removed_values
                .iter()
                .filter(|rv| t.includes(&rv.version))
                .filter(|rv| {
                    value
                        .split(',')
                        .any(|p| p.trim().eq_ignore_ascii_case(&rv.value))
                })
                .collect();
            if !refused.is_empty() {
                let names: Vec<String> = refused
                    .iter()
                    .map(|rv| format!("{} (refused from {})", rv.value, rv.version))
                    .collect();
                let kind = if name.loose {
                    Kind::LooseRemoved
                } else {
                    Kind::RemovedValue
                };
                let effect = if name.loose {
                    format!("{target} refuses the value; thanks to `loose-` it starts with a warning, and the line does nothing")
                } else {
                    format!("{target} refuses the value and does not start")
                };
                let kept: Vec<&str> = value
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !refused.iter().any(|rv| rv.value.eq_ignore_ascii_case(p)))
                    .collect();
                out.push(
                    finding(k, kind, Status::Fail, kind.severity(), e.line)
                        .with_subject(vec![e.name.clone()])
                        .with_expected(format!(
                            "`{}` without {}",
                            e.name,
                            refused
                                .iter()
                                .map(|rv| rv.value.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                        .with_actual(format!("`{written}` in [{}] at {at}", o.group))
                        .with_evidence(vec![at.clone()])
                        .with_explanation(format!(
                            "`{}` at {at} ([{}]) names {}: {effect}; {running}",
                            e.name,
                            o.group,
                            names.join(", ")
                        ))
                        .with_fix(format!("{}: `{} = {}`", e.action, o.name, kept.join(","))),
                );
                continue;
            }
        }
        if let Some(d) = e.deprecated.as_ref().filter(|d| t.includes(d)) {
            out.push(
                finding(k, Kind::Deprecated, Status::Fail, Severity::Info, e.line)
                    .with_subject(vec![e.name.clone()])
                    .with_actual(format!("`{written}` in [{}] at {at}", o.group))
                    .with_evidence(vec![at.clone()])
                    .with_explanation(format!(
                        "`{written}` at {at} ([{}]): {} is deprecated since {d}; {target} still accepts it, a later release removes it",
                        o.group, e.name
                    ))
                    .with_fix(format!("{}{replacement}", e.action)),
            );
        }
    }

    // Defaults the host relies on.
    let changes: Vec<_> = k
        .entries
        .iter()
        .filter(|e| !e.defaults.is_empty())
        .filter(|e| !set.set.contains(&e.name))
        .collect();
    match &source {
        Some(s) if s.product() == t.product => {
            for e in changes {
                out.extend(default_change(e, s, t, k, facts, set));
            }
        }
        _ => {
            let names: Vec<&str> = changes
                .iter()
                .filter(|e| e.defaults.iter().any(|d| t.includes(&d.version)))
                .map(|e| e.name.as_str())
                .collect();
            if !names.is_empty() {
                let why = match &source {
                    Some(s) => format!(
                        "the host runs {} ({}), not {}: the data compares defaults within one product",
                        s.label(),
                        s.from,
                        t.product.label()
                    ),
                    None => "the running server version is unknown (no runtime capture with a `version` row, no dpkg or RPM package list naming a server package, no mysql_upgrade_info in the data directory)".to_string(),
                };
                let mut f = finding(k, Kind::DefaultChanged, Status::Unknown, Severity::Medium, 1)
                    .with_subject(names.iter().map(|n| n.to_string()).collect())
                    .with_explanation(format!(
                        "{why}, so which of these defaults change on the way to {target} cannot be told: {}",
                        names.join(", ")
                    ))
                    .with_fix("capture the running server's variables with `driftaudit snapshot --mysql` (or check a snapshot taken with it)");
                f.evidence = set
                    .files_read
                    .first()
                    .map(|p| vec![crate::facts::Evidence::file(p.clone())])
                    .unwrap_or_default();
                out.push(f);
            }
        }
    }

    // Never a silent all-clear: one passing finding per kind that found nothing.
    let checked = set.argv.len();
    for kind in [
        Kind::Removed,
        Kind::Ignored,
        Kind::RemovedValue,
        Kind::DefaultChanged,
    ] {
        let id = rule_id(k.product, kind);
        if out.iter().any(|f| f.rule == id) {
            continue;
        }
        let mut f = finding(k, kind, Status::Pass, kind.severity(), 1);
        f.explanation = format!(
            "{checked} options in {group_list} of {} checked against {target}: none affected; {running}",
            set.files_read.join(", ")
        );
        out.push(f);
    }
    out
}

/// Two spellings of one default (`127` and `127`, `ON` and `on`, `1` and
/// `1.000000`).
fn same_default(a: &str, b: &str) -> bool {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// One default the host relies on (no option file sets it), between the
/// running server and the target: what the host runs with now is the
/// captured running value where the capture holds it (the data's default
/// for that release otherwise; a disagreement is a data note, not a
/// verdict), the target's default is the data's. A change that reaches
/// only a new data directory is information.
fn default_change(
    e: &Entry,
    s: &Source,
    t: &Target,
    k: &Knowledge,
    facts: &Facts,
    set: &crate::facts::OptionFilesAs,
) -> Option<Finding> {
    let target = t.label();
    let table_now = default_at(&e.defaults, &s.version.parts)?;
    let upper = t.upper();
    let then = default_at(&e.defaults, &upper)?;
    let changed_in = e
        .defaults
        .iter()
        .rev()
        .find(|d| d.in_effect(&upper) && !d.in_effect(&s.version.parts))
        // the release of the target's own line that made it
        .map(|d| {
            d.lines
                .iter()
                .find(|l| l.0.get(..2) == upper.get(..2))
                .unwrap_or(&d.version)
                .clone()
        });
    let running = match facts.namespaces.get("mysql").and_then(|n| n.get(&e.name)) {
        Some(crate::facts::Entry::Set(r)) => Some(r),
        _ => None,
    };
    let data_note = running.filter(|r| !same_default(&r.raw, table_now)).map(|r| {
        format!(
            " Data note: driftaudit's data ({}) gives {} the default {table_now}, but the running server reports {} ({}): the running value is used, and the data is wrong for that release (a bug to report, not a verdict on the host).",
            k.path,
            s.label(),
            r.raw,
            r.evidence.first().map(|e| e.to_string()).unwrap_or_default()
        )
    });
    let (now, now_from, said_from) = match running {
        Some(r) => (
            r.raw.as_str(),
            "the running server's value, captures/mysql-variables.tsv".to_string(),
            "the running server's value, captures/mysql-variables.tsv; ",
        ),
        None => (
            table_now,
            format!("the default {} runs with", s.label()),
            "",
        ),
    };
    let files = set.files_read.first().cloned().unwrap_or_default();
    let evidence: Vec<crate::facts::Evidence> =
        std::iter::once(crate::facts::Evidence::file(files))
            .chain(running.and_then(|r| r.evidence.first().cloned()))
            .collect();
    if same_default(now, then) {
        // Nothing changes for this host; a data disagreement is still said.
        let note = data_note?;
        let mut f = finding(k, Kind::DefaultChanged, Status::Pass, Severity::Info, e.line)
            .with_subject(vec![e.name.clone()])
            .with_evidence(evidence)
            .with_explanation(format!(
                "`{}` runs as {now} ({now_from}) and {target} keeps {then}: no change for this host.{note}",
                e.name
            ));
        f.fix = String::new();
        return Some(f);
    }
    let since = changed_in
        .as_ref()
        .map(|v| format!(" (default from {v})"))
        .unwrap_or_default();
    let from_on = changed_in
        .as_ref()
        .map(|v| format!(" from {v} on"))
        .unwrap_or_default();
    let base = finding(
        k,
        Kind::DefaultChanged,
        Status::Fail,
        e.severity.unwrap_or(Severity::Medium),
        e.line,
    )
    .with_subject(vec![e.name.clone()])
    .with_expected(format!("{} = {now} ({now_from})", e.name))
    .with_actual(format!("{} = {then} on {target}{since}", e.name))
    .with_evidence(evidence);
    let note = data_note.unwrap_or_default();
    if e.new_datadir_only {
        let mut f = base.with_explanation(format!(
            "`{}` is set in no option group {target} reads; its compiled-in default is {then} on {target}{since}, against {now} now ({now_from}), but the new default reaches only a data directory {target} creates: this host's existing data directory keeps what it has. Information, nothing to change for the upgrade ({}).{note}",
            e.name, e.action
        ));
        f.status = Status::Pass;
        f.severity = Severity::Info;
        return Some(f);
    }
    Some(
        base.with_explanation(format!(
            "`{}` is set in no option group {target} reads, so the server runs with its compiled-in default: {now} on {} ({said_from}{}), {then}{from_on} ({target}): the host behaves differently after the upgrade.{note}",
            e.name,
            s.label(),
            s.from
        ))
        .with_fix(e.action.clone()),
    )
}
