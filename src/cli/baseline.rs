//! `driftaudit baseline`: read a golden host (a snapshot, or the live host
//! as `check` does without `--snapshot`), have the library pin its
//! effective values as a policy, and write it to stdout or, with `-o FILE`,
//! atomically (a temporary file beside FILE renamed over it, never through
//! a symbolic link). What was left out goes to stderr as one summary line;
//! no value is ever printed there.

use std::path::PathBuf;

use clap::Args;

use driftaudit::unstable::baseline::{self, BaselineOptions};
use driftaudit::Host;

use super::common::{write_atomic, write_out, Exit};

#[derive(Args, Debug)]
pub(crate) struct BaselineArgs {
    /// The golden snapshot directory; without it the live host is read.
    #[arg(long = "snapshot", value_name = "DIR")]
    pub(crate) snapshot: Option<PathBuf>,
    /// Namespace to pin (repeatable; default: sysctl_boot, mycnf_effective,
    /// zimbra_mycnf, localconfig, fstab). Also sysctl, sysctl_procps, mycnf,
    /// mysql, mount.
    #[arg(long = "namespace", value_name = "NS")]
    pub(crate) namespace: Vec<String>,
    /// Pin only keys matching this glob, over KEY or NS.KEY (repeatable).
    #[arg(long = "keys", value_name = "GLOB")]
    pub(crate) keys: Vec<String>,
    /// Leave out keys matching this glob, over KEY or NS.KEY (repeatable).
    #[arg(long = "ignore", value_name = "GLOB")]
    pub(crate) ignore: Vec<String>,
    /// Also pin the volatile and host-specific keys the default ignore list
    /// leaves out (counters, random values, host names).
    #[arg(long)]
    pub(crate) no_default_ignore: bool,
    /// Leave namespace NS out of the closed world (repeatable): by default a
    /// setting a checked host has in a configuration namespace (sysctl_boot,
    /// sysctl_procps, mycnf_effective, mycnf, zimbra_mycnf, localconfig,
    /// fstab) and the golden host lacks fails as "not on the golden host";
    /// with --open NS such settings are not judged.
    #[arg(long = "open", value_name = "NS")]
    pub(crate) open: Vec<String>,
    /// Write the policy to FILE (replaced atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

pub(crate) fn run(a: BaselineArgs) -> Exit {
    let host = match &a.snapshot {
        None => Host::live(),
        Some(d) => match Host::snapshot(d) {
            Ok(h) => h,
            Err(e) => return Exit::Error(format!("snapshot `{}`: {e}", d.display())),
        },
    };
    let opts = BaselineOptions {
        namespaces: a.namespace,
        keys: a.keys,
        ignore: a.ignore,
        no_default_ignore: a.no_default_ignore,
        open: a.open,
    };
    let b = match baseline::generate(&host, &opts) {
        Ok(b) => b,
        Err(e) => return e.into(),
    };
    let pinned: usize = b.pins.iter().map(|(_, p)| p.len()).sum();
    if pinned == 0 {
        // a policy with no rule is no policy the loader (or `check`) takes
        let why: Vec<String> = b
            .empty
            .iter()
            .map(|(ns, r)| {
                format!(
                    "{ns}: {}",
                    driftaudit::unstable::render::printable(r, false)
                )
            })
            .chain(b.left_out.iter().take(3).map(|l| {
                format!(
                    "{}.{} left out: {}",
                    l.namespace,
                    driftaudit::unstable::render::printable(&l.key, false),
                    l.reason
                )
            }))
            .collect();
        return Exit::Error(format!(
            "baseline of {}: nothing to pin ({}); nothing was written. Pin other namespaces \
             with --namespace, or take the baseline from a golden host whose snapshot holds them",
            driftaudit::unstable::render::printable(&b.host, false),
            if why.is_empty() {
                "no value in the namespaces asked for".to_string()
            } else {
                why.join("; ")
            }
        ));
    }
    eprintln!(
        "driftaudit: baseline of {}: {pinned} value(s) pinned in {} namespace(s); left out: {} volatile, {} other (listed in the file's header)",
        b.host,
        b.pins.len(),
        b.volatile,
        b.left_out.len()
    );
    match &a.output {
        None => match write_out(&b.yaml) {
            Ok(()) => Exit::Clean,
            Err(e) => e.into(),
        },
        Some(path) => match write_atomic(path, &b.yaml) {
            Ok(()) => Exit::Clean,
            Err(e) => Exit::Error(format!(
                "cannot write `{}`: {}",
                path.display(),
                driftaudit::unstable::host::io_message(&e)
            )),
        },
    }
}
