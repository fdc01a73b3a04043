//! sysctl edits: where a kernel parameter is persisted (the winning line in
//! /etc, edited in place; every other /etc line for the key set to the same
//! value or, for `remove`, deleted; a drop-in in /etc/sysctl.d that sorts
//! after the vendor file when the value comes from /usr/lib or /lib, which
//! are never edited), `sysctl -w` for the running kernel, and the proof's
//! simulation of it on `proc/sys` or the `sysctl -a` capture. A key or
//! value that the file or the command cannot hold exactly (a newline or
//! another control character, blanks the reader would trim, a key with a
//! blank or `=`, a key with a glob character, which the readers take for
//! a pattern) is refused with the reason; comments quote host data
//! escaped. A key the running kernel does not have (absent from a complete
//! `/proc/sys` or `sysctl -a`) is refused too, saying why and what to do
//! instead ([`missing_in_kernel`]).

use super::changes::{plain, Change, Op};
use super::context::{check_value, comment, Ctx};
use super::shell;
use super::tree::EditKind;
use crate::facts::Evidence;
use crate::resolve::{Lookup, Resolver};

/// Drop-in written when the value must come from a file of our own.
const DROP_IN: &str = "99-driftaudit.conf";

/// Whether a host path is a file an admin may edit (not a vendor file).
fn editable(path: &str) -> bool {
    path.starts_with("/etc/")
}

/// The basename systemd-sysctl sorted a file by (the name it was read
/// through, for a link such as 99-sysctl.conf).
fn sort_name(e: &Evidence) -> String {
    let p = e.via.as_deref().unwrap_or(&e.path);
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// A drop-in name that sorts after every one of `names` (systemd-sysctl
/// orders all sysctl.d files by basename; the same basename in /etc would
/// mask a vendor file instead, so it must differ).
pub(super) fn drop_in_name(names: &[String]) -> String {
    let mut name = DROP_IN.to_string();
    while names.iter().any(|n| *n >= name) {
        name.insert(0, 'z');
    }
    name
}

/// `line` with its value replaced by `value`, keeping the key as written,
/// a leading `-` and the blanks around `=`.
pub(super) fn with_value(line: &str, value: &str) -> Option<String> {
    let eq = line.find('=')?;
    let (head, rest) = line.split_at(eq + 1);
    let lead: String = rest
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    Some(format!("{head}{lead}{value}"))
}

/// Whether `key = value` (a sysctl.d line, and `sysctl -w key=value`) reads
/// back as exactly this key and value: the reader trims blanks around
/// both, and a key ends at the first `=`.
pub(super) fn writable(key: &str, value: &str) -> Result<(), String> {
    check_value("key", key)?;
    check_value("value", value)?;
    if key.is_empty() || key.contains(|c: char| c.is_whitespace() || c == '=') {
        return Err(format!(
            "the key `{}` holds a blank or `=`, which a sysctl.d line cannot hold",
            comment(key)
        ));
    }
    if value.is_empty() || value.trim() != value {
        return Err(
            "the value is empty or starts or ends with a blank, which a sysctl.d file trims; \
             set it by hand"
                .into(),
        );
    }
    Ok(())
}

/// Whether `key` names only itself in a sysctl.d file: systemd-sysctl and
/// `sysctl --system` read a key holding `*`, `?` or `[` (an interface may
/// be named `v*`) as a pattern, so its line would set every key the
/// pattern matches (`vx`, `veth0`) and, the literal key being listed,
/// skip this one. Such a key gets no edit and no runtime step: a value
/// set only for now would pass the re-audit with nothing to keep it at the
/// next boot, so the finding is left unfixable, with the reason, rather
/// than reported fixed.
fn names_one_key(key: &str) -> Result<(), String> {
    match key.chars().find(|c| matches!(c, '*' | '?' | '[')) {
        None => Ok(()),
        Some(g) => Err(format!(
            "the key `{}` holds `{g}`, a glob character: systemd-sysctl and `sysctl --system` \
             read such a sysctl.d key as a pattern, which sets every other key it matches and \
             not this one, so `fix` writes no line and no runtime step for it; `sysctl -w` \
             with the key quoted sets this one key now (procps does not expand a key on its \
             command line)",
            comment(key)
        )),
    }
}

/// Why `fix` plans no line and no `sysctl -w` for `key`, which the running
/// kernel does not have, and what to do instead. `sysctl -w` fails on it
/// (no such file under /proc/sys), and a sysctl.d line changes nothing:
/// systemd-sysctl logs "Couldn't write '…' to '…', ignoring: No such file or
/// directory" at every boot (and fails with `--strict`; `apply_setting` in
/// systemd's src/sysctl/sysctl.c), procps' `sysctl --system` prints
/// "cannot stat /proc/sys/…". The key appears only when the kernel (or a
/// module) provides it.
fn missing_in_kernel(key: &str, means: &str) -> String {
    let proc = format!("/proc/sys/{}", key.replace('.', "/"));
    let instead = if key.starts_with("kernel.yama.") {
        "this kernel has no Yama (it was built without CONFIG_SECURITY_YAMA, or Yama is left out \
         of the `lsm=` list on its command line; Documentation/admin-guide/LSM/Yama.rst): boot a \
         kernel with Yama enabled and run `fix` again, or restrict ptrace another way (SELinux's \
         `deny_ptrace` boolean, an AppArmor profile's ptrace rules); until then only the classic \
         ptrace checks apply"
            .to_string()
    } else if let Some(module) = module_of(key) {
        format!(
            "the key comes with the `{module}` module, which is not loaded: load it and have it \
             loaded at boot (a line in /etc/modules-load.d/), then run `fix` again"
        )
    } else {
        "boot a kernel that has the key (or load the module that adds it), then run `fix` again; \
         where the interface or feature is gone on purpose, the finding is moot"
            .to_string()
    };
    format!(
        "the running kernel has no `{}` (no {}: {means}), so `sysctl -w` fails on it and a \
         sysctl.d line changes nothing but a \"Couldn't write\" message from systemd-sysctl at \
         every boot; `fix` plans neither: {instead}",
        comment(key),
        comment(&proc)
    )
}

/// The module that adds the keys under a prefix, where it is well known.
fn module_of(key: &str) -> Option<&'static str> {
    [
        ("net.netfilter.", "nf_conntrack"),
        ("net.nf_conntrack_max", "nf_conntrack"),
        ("net.bridge.", "br_netfilter"),
        ("net.ipv4.vs.", "ip_vs"),
        ("fs.nfs.", "nfs"),
        ("sunrpc.", "sunrpc"),
    ]
    .into_iter()
    .find(|(p, _)| key.starts_with(p))
    .map(|(_, m)| m)
}

pub(super) fn apply(cx: &mut Ctx, key: &str, c: &Change) -> Result<(), String> {
    names_one_key(key)?;
    let r = Resolver::from_facts(cx.host, cx.facts);
    let res = r.sysctl(key);
    if let (Op::Set(..), Lookup::Absent { means }) = (&c.op, &res.running) {
        return Err(missing_in_kernel(key, means));
    }
    let mut lines: Vec<Evidence> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut boot_winner: Option<Evidence> = None;
    for (i, l) in [&res.boot, &res.procps].into_iter().enumerate() {
        if let Lookup::Set(a) = l {
            // the boot's winner; where the boot is not known (the init is
            // not recorded) procps's, which reads the same /etc files
            if i == 0 || boot_winner.is_none() {
                boot_winner = Some(a.at.clone());
            }
            for e in std::iter::once(&a.at).chain(a.overridden.iter()) {
                if e.line.is_some() && !lines.iter().any(|x| x.path == e.path && x.line == e.line) {
                    lines.push(e.clone());
                    names.push(sort_name(e));
                }
            }
        }
    }
    match &c.op {
        Op::Remove => {
            let mut vendor = Vec::new();
            for e in &lines {
                if editable(&e.path) {
                    cx.delete(&e.path, e.line.unwrap_or(0), EditKind::Config)?;
                } else {
                    vendor.push(e.location());
                }
            }
            if !vendor.is_empty() {
                return Err(format!(
                    "also set in vendor file(s) {}, which `fix` never edits: mask it with an empty \
                     file of the same name in /etc/sysctl.d",
                    vendor.join(", ")
                ));
            }
            Ok(())
        }
        Op::Set(v, _) => {
            let value = plain(v);
            writable(key, &value)?;
            if c.persist {
                for e in lines.iter().filter(|e| editable(&e.path)) {
                    let n = e.line.unwrap_or(0);
                    let text = cx.line(&e.path, n, EditKind::Config)?;
                    let new = with_value(&text, &value)
                        .ok_or_else(|| format!("{} is not `key = value`", e.location()))?;
                    cx.replace(&e.path, n, new, EditKind::Config)?;
                }
                let wins_in_etc = boot_winner.as_ref().is_some_and(|w| editable(&w.path));
                if !wins_in_etc {
                    let name = drop_in_name(&names);
                    let path = format!("/etc/sysctl.d/{name}");
                    let exists = cx.current(&path).ok().flatten().is_some();
                    let mut text = String::new();
                    if !exists {
                        text.push_str("# Written by `driftaudit fix`.\n");
                    }
                    if let Some(w) = &boot_winner {
                        for why in &c.why {
                            text.push_str(&format!("# fixes {}\n", comment(why)));
                        }
                        text.push_str(&format!(
                            "# {key} was set in a vendor file ({}); this file sorts after it\n",
                            comment(&w.location())
                        ));
                    } else {
                        for why in &c.why {
                            text.push_str(&format!("# fixes {}\n", comment(why)));
                        }
                    }
                    text.push_str(&format!("{key} = {value}\n"));
                    cx.append(&path, &text, EditKind::Config)?;
                }
            }
            if c.apply_now {
                let differs = match &res.running {
                    Lookup::Set(a) => {
                        a.raw.split_whitespace().collect::<Vec<_>>()
                            != value.split_whitespace().collect::<Vec<_>>()
                    }
                    _ => true,
                };
                if differs {
                    let cmd = shell::command(&["sysctl", "-w", &format!("{key}={value}")]);
                    cx.step(cmd, &c.why, false, "")?;
                    simulate(cx, &res.running, key, &value)?;
                }
            }
            Ok(())
        }
        Op::Mount { .. } => Err("a mount change on a sysctl key".into()),
    }
}

/// What `sysctl -w` leaves in the captured live value.
fn simulate(
    cx: &mut Ctx,
    running: &Lookup<crate::resolve::Assignment>,
    key: &str,
    value: &str,
) -> Result<(), String> {
    let Lookup::Set(a) = running else {
        // no captured running value: write the proc file the kernel would show
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        return cx.write_sim(&path, &format!("{value}\n"));
    };
    match a.at.line {
        Some(n) => {
            let text = cx.line(&a.at.path, n, EditKind::Simulated)?;
            let new = with_value(&text, value).unwrap_or_else(|| format!("{key} = {value}"));
            cx.replace(&a.at.path, n, new, EditKind::Simulated)
        }
        None => cx.write_sim(&a.at.path, &format!("{value}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drop_in_sorts_after_every_file_that_sets_the_key() {
        assert_eq!(
            drop_in_name(&["50-default.conf".into()]),
            "99-driftaudit.conf"
        );
        let n = drop_in_name(&["99-zz-vendor.conf".into()]);
        assert!(
            n.as_str() > "99-zz-vendor.conf" && n.ends_with(".conf"),
            "{n}"
        );
        // never the vendor's own name, which would mask the whole file
        assert_ne!(
            drop_in_name(&["99-driftaudit.conf".into()]),
            "99-driftaudit.conf"
        );
    }

    #[test]
    fn a_value_edit_keeps_the_key_dash_and_blanks() {
        assert_eq!(
            with_value("net.ipv4.tcp_tw_recycle = 1", "0").unwrap(),
            "net.ipv4.tcp_tw_recycle = 0"
        );
        assert_eq!(with_value("-net/ipv4/x=1", "0").unwrap(), "-net/ipv4/x=0");
        assert_eq!(with_value("k =\t1 2", "3").unwrap(), "k =\t3");
        assert!(with_value("-k", "0").is_none());
    }
}
