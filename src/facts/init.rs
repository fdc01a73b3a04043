//! The init system, learned from evidence ([`detect`]): which program is
//! PID 1 (`/proc/1/comm`) and what it leaves behind (`/run/systemd/system`,
//! which systemd creates at boot and sd_booted(3) tests; `/run/openrc`,
//! OpenRC's service directory), and from that what applies the persisted
//! sysctl files at the next start ([`BootSysctl`]) and who mounts /dev/shm.
//! Fills the facts `init_system`, `sysctl_at_boot`, `sysctl_applied_at_boot`,
//! `dev_shm_at_boot`, `dev_shm_mounted_at_boot` and
//! `dev_shm_boot_options` ([`gather`]). Reads only
//! through [`Host`] (each path it looks at is what a snapshot records);
//! must not judge a value or build a namespace (that is `sysctl`).

use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::value::Value;

use super::Facts;

/// PID 1's name, as a snapshot keeps it.
pub const PID1_COMM: &str = "/proc/1/comm";
/// Created by systemd early at boot; sd_booted(3) tests it.
pub const SYSTEMD_RUN: &str = "/run/systemd/system";
/// OpenRC's service directory (`RC_SVCDIR`), made when OpenRC boots.
pub const OPENRC_RUN: &str = "/run/openrc";
/// Debian's procps init script (sysvinit, upstart): `sysctl --system`.
pub const PROCPS_SCRIPT: &str = "/etc/init.d/procps";
/// Signs of a container without an init of its own.
const CONTAINER_SIGNS: [&str; 2] = ["/.dockerenv", "/run/.containerenv"];
/// The options every init that mounts /dev/shm itself gives it (systemd's
/// mount-setup.c, OpenRC's devfs.in, sysvinit's mount-functions.sh).
const DEV_SHM_EVERY_INIT: [&str; 2] = ["nosuid", "nodev"];
/// OpenRC's sysctl service script (upstream init.d/sysctl.in).
pub const OPENRC_SYSCTL: &str = "/etc/init.d/sysctl";
/// The order in which Alpine's OpenRC `sysctl` service applies files
/// (aports main/openrc 0003-sysctl-add-compatibility-for-busybox-sysctl.patch,
/// its `Linux_sysctl` loop): a candidate where the init is not recorded.
pub const ALPINE_SYSCTL_ORDER: [&str; 6] = [
    "/run/sysctl.d/*.conf",
    "/etc/sysctl.d/*.conf",
    "/usr/local/lib/sysctl.d/*.conf",
    "/usr/lib/sysctl.d/*.conf",
    "/lib/sysctl.d/*.conf",
    "/etc/sysctl.conf",
];
/// The runlevels an OpenRC `sysctl` service may be added to.
const OPENRC_RUNLEVELS: [&str; 3] = [
    "/etc/runlevels/sysinit/sysctl",
    "/etc/runlevels/boot/sysctl",
    "/etc/runlevels/default/sysctl",
];

/// What applies the persisted sysctl files when the host next starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootSysctl {
    /// systemd-sysctl.service, with systemd's precedence (src/sysctl/sysctl.c).
    SystemdSysctl,
    /// procps `sysctl --system` run by the init's script: Debian's
    /// /etc/init.d/procps (`do_start_cmd`), OpenRC's `sysctl` service
    /// (`Linux_sysctl`, when sysctl is procps-ng). The words say which.
    SysctlSystem(String),
    /// A sysctl service whose script applies each file with `sysctl -p` in
    /// its own order (OpenRC's `sysctl` as Alpine patches it for busybox's
    /// sysctl, which has no `--system`): the words, and the file patterns
    /// in the script's order ([`openrc_sysctl_order`]).
    ScriptFiles(String, Vec<String>),
    /// Nothing applies them; why, in words.
    Nothing(String),
    /// Not known; what would decide it.
    Unknown(String),
}

/// The init system and what it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Init {
    /// `systemd`, `sysvinit`, `openrc`, `none`; `Err` (what would decide it) when not known.
    pub name: Result<String, String>,
    /// PID 1's name and the evidence, in words (`PID 1 is systemd and /run/systemd/system exists`).
    pub evidence: String,
    /// What applies the persisted sysctl files at the next start.
    pub sysctl: BootSysctl,
}

/// Whether `path` is an entry of this kind on the host.
fn is(host: &Host, path: &str, kind: EntryKind) -> bool {
    matches!(host.kind_of(path), Ok(k) if k == kind)
}

/// Whether a snapshot says it looked for `path` and did not find it.
fn declared_absent(host: &Host, path: &str) -> bool {
    super::system::declared_absent(host).contains(path)
}

/// A sosreport's process list (`ps auxwww`).
const SOS_PS: &str = "/sos_commands/process/ps_auxwww";
/// `systemctl list-units` as sos's systemd plugin captures it: systemd
/// answers it only when it is PID 1 ("System has not been booted with
/// systemd as init system" otherwise).
const SOS_SYSTEMD: &str = "/sos_commands/systemd/systemctl_list-units";

/// PID 1 in a sosreport: its program's name from `ps auxwww`, and whether
/// systemd answered as the init; `None` without the process list.
fn sos_pid1(host: &Host) -> Option<(String, bool)> {
    let t = host.read_to_string(SOS_PS).ok()?;
    // USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND
    let prog = t.lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        (w.get(1) == Some(&"1")).then(|| {
            w.get(10)
                .map(|c| c.rsplit('/').next().unwrap_or(c).to_string())
        })?
    })?;
    let systemd = host
        .read_to_string(SOS_SYSTEMD)
        .is_ok_and(|t| !t.trim().is_empty() && !t.contains("has not been booted with systemd"));
    Some((prog, systemd))
}

/// Learn the init system from the evidence the host (or snapshot) holds.
pub fn detect(host: &Host) -> Init {
    if host.layout() == Some(crate::host::layout::Layout::Sosreport) {
        if let Some((prog, systemd)) = sos_pid1(host) {
            if systemd {
                return Init {
                    name: Ok("systemd".into()),
                    evidence: format!(
                        "PID 1 is `{prog}` ({SOS_PS}) and sos's systemd plugin ran ({SOS_SYSTEMD})"
                    ),
                    sysctl: BootSysctl::SystemdSysctl,
                };
            }
            if prog != "init" {
                let evidence = format!("PID 1 is `{prog}` ({SOS_PS}), not an init system");
                return Init {
                    name: Ok("none".into()),
                    sysctl: BootSysctl::Nothing(format!(
                        "{evidence}: nothing on this host applies /etc/sysctl.d, /usr/lib/sysctl.d or /etc/sysctl.conf when it starts"
                    )),
                    evidence,
                };
            }
        }
    }
    let comm = match host.read_to_string(PID1_COMM) {
        Ok(t) => t.trim().to_string(),
        Err(ReadError::NotFound) if host.kind() == SourceKind::Snapshot => {
            if declared_absent(host, PID1_COMM) {
                String::new()
            } else if is(host, SYSTEMD_RUN, EntryKind::Dir) {
                // sd_booted(3)'s own test: systemd creates it when it boots
                return Init {
                    name: Ok("systemd".into()),
                    evidence: format!("the snapshot does not record PID 1, but {SYSTEMD_RUN} exists, which systemd creates when it boots the host (sd_booted(3))"),
                    sysctl: BootSysctl::SystemdSysctl,
                };
            } else if is(host, OPENRC_RUN, EntryKind::Dir) {
                return openrc(host, "not recorded");
            } else if !host.exists("/snapshot.json") {
                // A bare tree (no snapshot.json: a test tree, a mounted root)
                // is not a driftaudit snapshot from before issue 48; it is
                // still judged as systemd, and the words say so (issue 48
                // leaves this assumption open).
                return Init {
                    name: Ok("systemd".into()),
                    evidence: "this tree records no PID 1 and has no snapshot.json; it is judged as a systemd host (proc/1/comm and run/systemd/system decide it)".into(),
                    sysctl: BootSysctl::SystemdSysctl,
                };
            } else {
                let why = "the snapshot does not record PID 1 (no proc/1/comm, no run/systemd/system or run/openrc; `driftaudit snapshot` records them since issue 48), so which init applies the persisted sysctl files at the next boot is not known".to_string();
                return Init {
                    name: Err(why.clone()),
                    evidence: why.clone(),
                    sysctl: BootSysctl::Unknown(why),
                };
            }
        }
        Err(e) => {
            let why = format!("{PID1_COMM} cannot be read ({e}), so the init system is not known");
            return Init {
                name: Err(why.clone()),
                evidence: why.clone(),
                sysctl: BootSysctl::Unknown(why),
            };
        }
    };
    // A snapshot kept in git loses an empty /run/systemd/system (git
    // stores no empty directory): there only a recorded absence
    // (`snapshot.json` `absent`) says systemd did not boot the host.
    let systemd_run = is(host, SYSTEMD_RUN, EntryKind::Dir);
    let kept_by_git =
        !systemd_run && host.kind() == SourceKind::Snapshot && !declared_absent(host, SYSTEMD_RUN);
    if comm == "systemd" && (systemd_run || kept_by_git) {
        let evidence = if systemd_run {
            format!("PID 1 is `systemd` and {SYSTEMD_RUN} exists")
        } else {
            format!("PID 1 is `systemd`, and the snapshot does not record {SYSTEMD_RUN} as absent (git keeps no empty directory)")
        };
        return Init {
            name: Ok("systemd".into()),
            evidence,
            sysctl: BootSysctl::SystemdSysctl,
        };
    }
    if is(host, OPENRC_RUN, EntryKind::Dir) && (comm == "init" || comm == "openrc-init") {
        return openrc(host, &comm);
    }
    if comm == "init" {
        let evidence = format!(
            "PID 1 is `init` (sysvinit or upstart) and {SYSTEMD_RUN} and {OPENRC_RUN} do not exist"
        );
        let sysctl = if is(host, PROCPS_SCRIPT, EntryKind::File) {
            BootSysctl::SysctlSystem(format!(
                "{PROCPS_SCRIPT} runs procps `sysctl --system` at boot (its do_start_cmd)"
            ))
        } else {
            BootSysctl::Nothing(format!(
                "{evidence}, and there is no {PROCPS_SCRIPT}, the script that applies them under sysvinit"
            ))
        };
        return Init {
            name: Ok("sysvinit".into()),
            evidence,
            sysctl,
        };
    }
    let shown = if comm.is_empty() {
        "not recorded".to_string()
    } else {
        format!("`{comm}`")
    };
    let signs: Vec<&str> = CONTAINER_SIGNS
        .iter()
        .copied()
        .filter(|p| host.exists(p))
        .collect();
    let mut evidence = format!("PID 1 is {shown}, not an init system");
    if comm == "systemd" {
        evidence = format!(
            "PID 1 is named `systemd` but {SYSTEMD_RUN} does not exist (systemd creates it at boot; sd_booted(3)), so systemd did not boot this host"
        );
    }
    if !signs.is_empty() {
        evidence.push_str(&format!(
            " (a container without an init: {})",
            signs.join(", ")
        ));
    }
    Init {
        name: Ok("none".into()),
        sysctl: BootSysctl::Nothing(format!(
            "{evidence}: nothing on this host applies /etc/sysctl.d, /usr/lib/sysctl.d or /etc/sysctl.conf when it starts (a container's kernel parameters come from the host and the container runtime)"
        )),
        evidence,
    }
}

/// OpenRC: its `sysctl` service (init.d/sysctl.in) when added to a
/// runlevel: procps-ng's `sysctl --system`, or with busybox's sysctl the
/// /etc files only.
fn openrc(host: &Host, comm: &str) -> Init {
    let evidence = if comm == "not recorded" {
        format!("the snapshot does not record PID 1, but {OPENRC_RUN} exists, which OpenRC creates when it boots the host")
    } else {
        format!("PID 1 is `{comm}` and {OPENRC_RUN} exists (OpenRC)")
    };
    let enabled = OPENRC_RUNLEVELS.iter().find(|p| host.exists(p));
    let sysctl = match enabled {
        None => BootSysctl::Nothing(format!(
            "{evidence}, and its `sysctl` service is in no runlevel ({}): nothing applies them at boot",
            OPENRC_RUNLEVELS.join(", ")
        )),
        Some(link) => {
            let busybox = ["/sbin/sysctl", "/bin/sysctl", "/usr/sbin/sysctl"]
                .iter()
                .find_map(|p| host.read_link(p))
                .is_some_and(|t| t.ends_with("busybox"));
            openrc_sysctl(host, &evidence, link, busybox)
        }
    };
    Init {
        name: Ok("openrc".into()),
        evidence,
        sysctl,
    }
}

/// What OpenRC's enabled `sysctl` service applies, read from its own
/// script ([`OPENRC_SYSCTL`]; only its `Linux_sysctl` runs on Linux).
/// Upstream (init.d/sysctl.in) runs `sysctl --system`: procps-ng applies
/// its files; busybox's sysctl has no such option (procps/sysctl.c), so the
/// service fails and applies nothing (OpenRC issue #947). Alpine's patch
/// applies each file with `sysctl -p` in the loop's order.
fn openrc_sysctl(host: &Host, evidence: &str, link: &str, busybox: bool) -> BootSysctl {
    let text = match host.read_to_string(OPENRC_SYSCTL) {
        Ok(t) => t,
        Err(e) => {
            return BootSysctl::Unknown(format!(
                "{evidence}, and its `sysctl` service ({link}) is enabled, but {OPENRC_SYSCTL} cannot be read ({e}): upstream's runs `sysctl --system`, Alpine's applies each file with `sysctl -p` in its own order"
            ))
        }
    };
    if let Some(order) = openrc_sysctl_order(&text) {
        return BootSysctl::ScriptFiles(
            format!(
                "OpenRC's `sysctl` service ({link}) applies each file with `sysctl -p` in its script's order ({OPENRC_SYSCTL}, Linux_sysctl: {}): a later file wins, even one of the same name in a later directory",
                order.join(" ")
            ),
            order,
        );
    }
    let body = linux_sysctl_body(&text).unwrap_or_default();
    match (body.contains("--system"), busybox) {
        (true, false) => BootSysctl::SysctlSystem(format!(
            "OpenRC's `sysctl` service ({link}) runs procps `sysctl --system` at boot ({OPENRC_SYSCTL}, Linux_sysctl)"
        )),
        (true, true) => BootSysctl::Nothing(format!(
            "{evidence}: its `sysctl` service ({link}) runs `sysctl --system` ({OPENRC_SYSCTL}, Linux_sysctl), an option busybox's sysctl does not have, so the service fails and applies nothing at boot (OpenRC issue #947)"
        )),
        (false, _) => BootSysctl::Unknown(format!(
            "{evidence}, and its `sysctl` service ({link}) is enabled, but its Linux_sysctl ({OPENRC_SYSCTL}) neither runs `sysctl --system` nor loops over files with `sysctl -p`"
        )),
    }
}

/// The `Linux_sysctl` function's body of an OpenRC sysctl script, its
/// continued lines joined.
fn linux_sysctl_body(text: &str) -> Option<String> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Linux_sysctl()"));
    lines.next()?;
    let body: Vec<&str> = lines.take_while(|l| l.trim_end() != "}").collect();
    Some(body.join("\n").replace("\\\n", " "))
}

/// The file patterns a `Linux_sysctl` loop applies with `sysctl -p`, in
/// order (`for i in /run/sysctl.d/*.conf ... /etc/sysctl.conf; do`), or
/// `None` when the function has no such loop (upstream's `sysctl --system`).
pub fn openrc_sysctl_order(text: &str) -> Option<Vec<String>> {
    let body = linux_sysctl_body(text)?;
    if !body.contains("sysctl") || !body.contains("-p") {
        return None;
    }
    let start = body.find("for ")?;
    let rest = &body[start + 4..];
    let list = rest.split_once(" in ")?.1;
    let end = list.find(';').or_else(|| list.find("\n"))?;
    let order: Vec<String> = list[..end]
        .split_whitespace()
        .map(|w| w.trim_matches('"').to_string())
        .filter(|w| w.starts_with('/'))
        .collect();
    (!order.is_empty()).then_some(order)
}

impl Init {
    /// The sentence saying what applies the persisted sysctl files at the next start.
    pub fn sysctl_words(&self) -> String {
        match &self.sysctl {
            BootSysctl::SystemdSysctl => format!(
                "{}: systemd-sysctl applies the sysctl.d files at the next boot",
                self.evidence
            ),
            BootSysctl::SysctlSystem(w) | BootSysctl::ScriptFiles(w, _) => {
                format!("{}: {w}", self.evidence)
            }
            BootSysctl::Nothing(w) => w.clone(),
            BootSysctl::Unknown(w) => format!(
                "{w} (systemd-sysctl, procps `sysctl --system` under sysvinit or OpenRC, or nothing in a container without an init); only a value every one of them gives is judged"
            ),
        }
    }

    /// The options /dev/shm gets at the next start without an fstab line,
    /// and who mounts it; `None` when nothing on the host mounts it.
    fn dev_shm(&self) -> Option<(Vec<&'static str>, String)> {
        match self.name.as_deref() {
            // src/shared/mount-setup.c: MS_NOSUID|MS_NODEV|MS_STRICTATIME
            Ok("systemd") => Some((
                vec!["nosuid", "nodev"],
                "no /etc/fstab line: systemd mounts /dev/shm itself, with nosuid and nodev and without noexec (mount-setup.c)".into(),
            )),
            // OpenRC init.d/devfs.in `seed_dev`: `mount -t tmpfs -o noexec,nosuid,nodev,mode=1777 shm /dev/shm`
            Ok("openrc") => Some((
                vec!["nosuid", "nodev", "noexec"],
                "no /etc/fstab line: OpenRC's devfs service mounts /dev/shm with nodev, nosuid and noexec (init.d/devfs.in, seed_dev)".into(),
            )),
            // Debian initscripts mount-functions.sh `mount_shm` (run by
            // mountdevsubfs.sh): `-onosuid,nodev`
            Ok("sysvinit") => Some((
                vec!["nosuid", "nodev"],
                "no /etc/fstab line: sysvinit's mountdevsubfs.sh mounts /dev/shm with nosuid and nodev and without noexec".into(),
            )),
            Ok(_) | Err(_) => None,
        }
    }
}

/// Fill the init facts.
pub fn gather(host: &Host, facts: &mut Facts) -> Init {
    let init = detect(host);
    facts
        .facts
        .insert("init_system".into(), init.name.clone().map(Value::Str));
    facts
        .facts
        .insert("sysctl_at_boot".into(), Ok(Value::Str(init.sysctl_words())));
    // An unrecorded init (a snapshot older than this reader): whether
    // anything applies the files is unknown; `sysctl_boot` then holds what
    // every init would give alike, and `sysctl_may_apply_at_boot` lets the
    // rules judge those values.
    let applied = match &init.sysctl {
        BootSysctl::Unknown(why) => Err(why.clone()),
        other => Ok(Value::Bool(!matches!(other, BootSysctl::Nothing(_)))),
    };
    facts.facts.insert("sysctl_applied_at_boot".into(), applied);
    let note = match &init.sysctl {
        BootSysctl::Nothing(_) => " Nothing on this host applies a sysctl file when it starts (no init): set it where the container's kernel parameters come from, the host or the container runtime (`docker run --sysctl`, a Kubernetes pod's securityContext.sysctls).",
        _ => "",
    };
    facts
        .facts
        .insert("sysctl_persist_note".into(), Ok(Value::Str(note.into())));
    facts.facts.insert(
        "sysctl_may_apply_at_boot".into(),
        Ok(Value::Bool(!matches!(init.sysctl, BootSysctl::Nothing(_)))),
    );
    // The options every init driftaudit knows mounts /dev/shm with
    // (systemd, OpenRC, sysvinit): an option among them that the running
    // mount has is there after the next start whatever the init (a
    // container keeps its running mount).
    facts.facts.insert(
        "dev_shm_boot_options_every_init".into(),
        Ok(Value::List(
            DEV_SHM_EVERY_INIT
                .iter()
                .map(|o| Value::Str((*o).into()))
                .collect(),
        )),
    );
    if let Err(why) = &init.name {
        let why = format!("no /etc/fstab line, and {why}: systemd and sysvinit mount /dev/shm with nosuid and nodev, OpenRC adds noexec, a container keeps its running mount");
        facts
            .facts
            .insert("dev_shm_at_boot".into(), Ok(Value::Str(why.clone())));
        facts
            .facts
            .insert("dev_shm_mounted_at_boot".into(), Err(why.clone()));
        facts.facts.insert("dev_shm_boot_options".into(), Err(why));
        return init;
    }
    let (words, options) = match init.dev_shm() {
        Some((opts, words)) => (
            Ok(Value::Str(words)),
            Ok(Value::List(
                opts.into_iter().map(|o| Value::Str(o.into())).collect(),
            )),
        ),
        None => (
            Ok(Value::Str(format!(
                "no /etc/fstab line, and {}: nothing on this host mounts /dev/shm at start (a container runtime does, with its own options), so the next start is judged by the running mount",
                init.evidence
            ))),
            Err(format!("{}: nothing on this host mounts /dev/shm", init.evidence)),
        ),
    };
    let mounted = Ok(Value::Bool(options.is_ok()));
    facts.facts.insert("dev_shm_at_boot".into(), words);
    facts
        .facts
        .insert("dev_shm_mounted_at_boot".into(), mounted);
    facts.facts.insert("dev_shm_boot_options".into(), options);
    init
}
