//! `driftaudit check`: audit the live host, snapshots or (with `--fleet`,
//! in `fleet.rs`) a tree of snapshot folders, and render the report. Also
//! the `--only`/`--skip` check that every glob matches a rule.

use driftaudit::{audit, render, Brief, Format, Host, RenderOptions};

use super::check_args::{repo_root, targets, CheckArgs};
use super::common::{color, load_policies_with, write_out, Exit};
use super::fleet;
use super::server_args::read_server;

pub(crate) fn run(a: CheckArgs) -> Exit {
    let targets = match targets(&a) {
        Ok(t) => t,
        Err(e) => return Exit::Error(e),
    };
    // the upgrade rules of the targets are rules of the one set: listed,
    // filtered, changed by overlays, judged by the engine and waived like
    // the others
    let mut set = match load_policies_with(&a.policies, |s| s.add_upgrade_targets(&targets)) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    // the profiles, then `--only`/`--skip` (`tag:` and `policy:` become
    // the ids of their rules)
    if let Err(e) = a.select.apply(&mut set) {
        return e;
    }
    if (a.quiet || a.summary) && a.format.0 != Format::Text {
        return Exit::Error(format!(
            "--{} shapes the text report: drop it or use --format text",
            if a.quiet { "quiet" } else { "summary" }
        ));
    }
    if a.server.connection().is_some() && (a.fleet.is_some() || !a.snapshot.is_empty()) {
        return Exit::Error(
            "--mysql reads the live host's running server: drop it with --snapshot or --fleet (each snapshot holds its own capture, taken with `snapshot --mysql`)".into(),
        );
    }
    if let Some(dir) = &a.fleet {
        return fleet::check_fleet(&a, &set, dir);
    }
    let hosts: Vec<Host> = if a.snapshot.is_empty() {
        let mut live = Host::live();
        read_server(&mut live, &a.server);
        vec![live]
    } else {
        let mut hs = Vec::new();
        for d in &a.snapshot {
            match Host::snapshot(d) {
                Ok(h) => hs.push(h),
                Err(source) => {
                    return OpenError {
                        dir: d.clone(),
                        source,
                    }
                    .into()
                }
            }
        }
        hs
    };
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return e.into(),
        },
        None => None,
    };
    let mut report = audit(&set, &hosts);
    // a snapshot in which no domain is found is a wrong input, not a host
    // with nothing to report (`--snapshot /etc` for `/`)
    for (h, dir) in report.hosts.iter().zip(&a.snapshot) {
        if let Some(e) = NothingDetected::of(h, dir) {
            return e.into();
        }
    }
    if let Some(w) = &waivers {
        w.apply(&mut report, &driftaudit::unstable::waiver::today());
    }
    let format = a.format.0;
    // SARIF and JUnit locations are relative to the repository root
    let root = match format {
        Format::Sarif | Format::Junit => match repo_root(a.sarif_root.as_deref()) {
            Ok(r) => Some(r),
            Err(e) => return Exit::Error(e),
        },
        _ => None,
    };
    let brief = if a.quiet {
        Some(Brief::Quiet)
    } else if a.summary {
        Some(Brief::Summary {
            policies: &set,
            fail_on: a.fail_on.into(),
            folders: &a.snapshot,
        })
    } else {
        None
    };
    let text = render(
        &report,
        format,
        RenderOptions {
            color: color(),
            verbose: a.verbose,
            repo_root: root.as_deref(),
            brief,
        },
    );
    if let Err(e) = write_out(&text) {
        return e.into();
    }
    if report.fails_at(a.fail_on.into()) || (a.fail_on.unknown() && report.has_unknown()) {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

/// A `--snapshot` directory that cannot be opened as a snapshot.
#[derive(Debug, thiserror::Error)]
#[error("snapshot `{}`: {source}", .dir.display())]
struct OpenError {
    dir: std::path::PathBuf,
    source: driftaudit::ReadError,
}

/// A `--snapshot` in which no domain was detected, no rule reached a
/// verdict and none of the folders the readers read from exists.
#[derive(Debug, thiserror::Error)]
#[error("snapshot `{}`: no domain detected in it: {looked}; give the snapshot's root, the folder that holds etc/, proc/, sys/ or captures/{hint}", .dir.display())]
struct NothingDetected {
    dir: std::path::PathBuf,
    /// What each domain looked for.
    looked: String,
    /// Empty, or where the root probably is.
    hint: String,
}

impl NothingDetected {
    fn of(h: &driftaudit::HostReport, dir: &std::path::Path) -> Option<NothingDetected> {
        // a tree of configuration alone (an etc/sysctl.conf) is a snapshot
        // with unknowns: only a folder where no domain was found, no rule
        // reached a verdict and none of the places the readers read from
        // exists (it was detected by `opt/`, `usr/`, ...: `/etc` has `opt/`)
        let judged = h.findings.iter().any(|f| {
            matches!(
                f.status,
                driftaudit::Status::Pass | driftaudit::Status::Fail | driftaudit::Status::Waived
            )
        });
        let read_from = ["etc", "proc", "sys", "captures", "sos_commands"]
            .iter()
            .any(|d| dir.join(d).is_dir())
            || dir.join("snapshot.json").is_file();
        if judged || read_from || h.coverage.is_empty() || h.coverage.iter().any(|c| c.detected) {
            return None;
        }
        let looked: Vec<String> = h
            .coverage
            .iter()
            .map(|c| format!("{} ({})", c.domain.label(), c.looked_for))
            .collect();
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let hint = match (name, dir.parent()) {
            ("etc" | "proc" | "sys" | "opt" | "var" | "captures", Some(p)) => format!(
                " (`{}` looks like the snapshot's {name}/: its root is `{}`)",
                dir.display(),
                if p.as_os_str().is_empty() {
                    ".".into()
                } else {
                    p.display().to_string()
                }
            ),
            _ => String::new(),
        };
        Some(NothingDetected {
            dir: dir.to_path_buf(),
            looked: looked.join("; "),
            hint,
        })
    }
}
