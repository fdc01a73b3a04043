//! Differential test of the TuneD model (src/parse/tuned.rs,
//! src/facts/tuned/mod.rs) against TuneD's own code: for each layout,
//! systemd-sysctl and then tuned's profile loader and sysctl plugin
//! (`tests/sysctl/tuned_reference/driver.py`, run by the system python with the
//! installed `tuned` package) apply the layout in a private mount namespace
//! (`unshare -m`, `mount --make-rprivate /`): the layout's trees are bound
//! over /etc/tuned, /usr/lib/tuned, /etc/sysctl.d, /run/sysctl.d,
//! /usr/lib/sysctl.d and /etc/sysctl.conf, and a tmpfs over /proc/sys holds
//! one empty file per key. The driver refuses to run unless /proc/sys is that
//! tmpfs (from /proc/self/mountinfo). What was written, and by which file, is
//! compared with the `sysctl_boot` namespace for the same layout read as a
//! snapshot: value and provenance per key. A key tuned computes on the
//! running host (`${f:...}`, a `>`/`<` against a value the files do not say,
//! a profile tuned picks by itself) must be `unknown` on our side, never a
//! guessed value.
//!
//! Off CI a missing tool (or not being root) skips with one line on stderr;
//! under `CI=true` it fails.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{Entry, Facts, IssueLevel};
use driftaudit::unstable::parse::sysctl::swap_dot_slash;

use crate::common;
use crate::common::mountns::{self, Sh};

const DRIVER: &str = include_str!("tuned_reference/driver.py");
const SYSTEMD_SYSCTL: &str = "/lib/systemd/systemd-sysctl";
/// The system python, which has the `tuned` package (not a pyenv on PATH).
const PYTHON: &str = "/usr/bin/python3";
const TUNED_MODULE: &str = "/usr/lib/python3/dist-packages/tuned/plugins/plugin_sysctl.py";
const VERSION_PY: &str = "/usr/lib/python3/dist-packages/tuned/version.py";
const ENABLED: &str = "/etc/systemd/system/multi-user.target.wants/tuned.service";
/// tuned-main.conf as tuned ships it, as far as the sysctl plugin cares.
const MAIN: &str = "# Global tuned configuration file.\ndaemon = 1\ndynamic_tuning = 0\nsleep_interval = 1\nupdate_interval = 10\nrecommend_command = 1\nreapply_sysctl = 1\n";

enum Node {
    File(&'static str),
    Link(&'static str),
    /// A copy of this file of the machine running the test (in the
    /// snapshot only; the namespace binds nothing there).
    Copy(&'static str),
}
use crate::common::audit;
use Node::*;

struct Layout {
    name: &'static str,
    /// tuned.service enabled (the `multi-user.target.wants` link).
    enabled: bool,
    nodes: Vec<(&'static str, Node)>,
    /// Keys in the fake /proc/sys (dotted).
    keys: &'static [&'static str],
    /// Keys whose value tuned computes from the running host: ours must be
    /// `unknown` (the reference's value is not compared).
    unknown: &'static [&'static str],
}

const VM: &[&str] = &[
    "vm.swappiness",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.overcommit_memory",
    "kernel.pid_max",
    "kernel.core_pattern",
    "net.core.somaxconn",
    "net.ipv4.conf.all.rp_filter",
    "net.ipv4.conf.eth0.rp_filter",
];

fn layouts() -> Vec<Layout> {
    vec![
        Layout {
            name: "include-chain-etc-overrides-usr-lib",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("custom\n")),
                ("/etc/tuned/profile_mode", File("manual\n")),
                ("/usr/lib/tuned/custom/tuned.conf", File("[sysctl]\nvm.swappiness=99\nkernel.pid_max=99999\n")),
                ("/etc/tuned/custom/tuned.conf", File("[main]\nsummary=site profile\ninclude=throughput-performance\n\n[sysctl]\nvm.swappiness=5\nvm.dirty_ratio = 30 # inline comment\n")),
                ("/usr/lib/tuned/throughput-performance/tuned.conf", File("[main]\ninclude=-not-installed, base ; more\n[cpu]\ngovernor=performance\n[sysctl]\n# comment\nvm.swappiness=10\nvm.dirty_ratio=40\nvm.dirty_background_ratio=10\n")),
                ("/usr/lib/tuned/base/tuned.conf", File("[sysctl]\nvm.dirty_background_ratio=3\nnet.core.somaxconn=1024\nkernel.pid_max = 65536\n")),
                ("/usr/lib/sysctl.d/50-vendor.conf", File("vm.swappiness = 60\nnet.core.somaxconn = 4096\nkernel.core_pattern = core\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "variables-nested-undefined-escaped-and-files",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("vars\n")),
                ("/etc/tuned/vars/tuned.conf", File("[variables]\nbase=5\nten=${base}0\nlater=${defined_after}\ndefined_after=7\ninclude=${i:PROFILE_DIR}/more.conf\nbad-name=1\n\n[sysctl]\nvm.swappiness=${ten}\nvm.dirty_ratio=${later}\nvm.dirty_background_ratio=${nowhere}\nkernel.pid_max=\\${base}\nvm.overcommit_memory=\"${from_file}\"\nkernel.core_pattern=|/usr/bin/x %p ${base}\nnet.core.somaxconn=${bad-name}\n")),
                ("/etc/tuned/vars/more.conf", File("# variables file\nfrom_file = ${base}1\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "profile-dir-of-the-file-each-value-was-read-from-and-repeated-keys",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("child\n")),
                ("/usr/lib/tuned/parent/tuned.conf", File("[variables]\npdir=${i:PROFILE_DIR}\n\n[sysctl]\nvm.swappiness=1\nvm.dirty_ratio=30\nvm.swappiness=2\nnet.core.somaxconn=100\n")),
                ("/etc/tuned/child/tuned.conf", File("[main]\ninclude=parent\n\n[sysctl]\nkernel.core_pattern=${pdir}|${i:PROFILE_DIR}|\\${i:PROFILE_DIR}|\\${pdir}\nvm.dirty_ratio=31\nnet.core.somaxconn=200\nvm.dirty_ratio=32\n[sysctl]\nvm.swappiness=3\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "functions-are-unknown",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("fn\n")),
                ("/etc/tuned/fn/tuned.conf", File("[variables]\ncores=${f:cpulist_online:0}\nplain=3\n\n[sysctl]\nvm.swappiness=${f:s2kb:2048}\nkernel.core_pattern=${cores}\nvm.dirty_ratio=${plain}\nnet.core.somaxconn=\\${f:s2kb:8}\n")),
            ],
            keys: VM,
            unknown: &["vm.swappiness", "kernel.core_pattern"],
        },
        Layout {
            name: "reapply-order-run-before-etc-and-sysctl-conf-last",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("tp\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\nvm.dirty_ratio=40\nvm.dirty_background_ratio=10\nnet.core.somaxconn=2048\nkernel.pid_max=100000\nvm.overcommit_memory=1\nnet.ipv4.conf.all.rp_filter=1\n")),
                ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\nkernel.pid_max = 4194304\n")),
                ("/run/sysctl.d/50-x.conf", File("vm.dirty_ratio = 21\n")),
                ("/etc/sysctl.d/50-x.conf", File("vm.dirty_ratio = 22\nvm.dirty_background_ratio = 22\n")),
                ("/etc/sysctl.d/40-a.conf", File("net.core.somaxconn = 500\n")),
                ("/etc/sysctl.d/.60-hidden.conf", File("vm.overcommit_memory = 2\n")),
                ("/etc/sysctl.d/70-b.conf~", File("net.core.somaxconn = 1\n")),
                ("/etc/sysctl.d/80-globs-and-dash.conf", File("net.ipv4.conf.*.rp_filter = 2\n-kernel.pid_max = 7\n; comment\nnot an assignment\n")),
                ("/etc/sysctl.conf", File("net.core.somaxconn = 600\n")),
                ("/etc/sysctl.d/99-sysctl.conf", Link("../sysctl.conf")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "reapply-sysctl-off",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("tp\n")),
                ("/etc/tuned/tuned-main.conf", File("daemon = 1\nreapply_sysctl = 0\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\nvm.dirty_ratio=40\n")),
                ("/etc/sysctl.d/60-admin.conf", File("vm.dirty_ratio = 30\nkernel.pid_max = 70000\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "tuned-not-enabled",
            enabled: false,
            nodes: vec![
                ("/etc/tuned/active_profile", File("tp\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "manual-mode-without-active-profile-applies-nothing",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("")),
                ("/etc/tuned/profile_mode", File("manual\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                ("/etc/sysctl.d/60-admin.conf", File("vm.dirty_ratio = 30\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "post-loaded-profile-after-active",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("tp\n")),
                ("/etc/tuned/post_loaded_profile", File("site\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\nvm.dirty_ratio=40\n")),
                ("/etc/tuned/site/tuned.conf", File("[sysctl]\nvm.swappiness=1\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "unit-options-enabled-replace-drop-priority",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("top\n")),
                ("/usr/lib/tuned/low/tuned.conf", File("[sysctl]\nenabled=false\nvm.swappiness=11\nvm.dirty_ratio=41\nkernel.pid_max=50000\n[extra]\ntype=sysctl\nvm.overcommit_memory=1\nnet.core.somaxconn=111\n[gone]\ntype=sysctl\nenabled=yes\nkernel.core_pattern=gone\n")),
                ("/usr/lib/tuned/top/tuned.conf", File("[main]\ninclude=low\n[sysctl]\ndrop=vm.dirty_ratio\nvm.swappiness=12\n[extra]\nreplace=true\nvm.overcommit_memory=2\n[late]\ntype=sysctl\npriority=10\nvm.swappiness=13\n[early]\ntype=sysctl\npriority=-5\nvm.swappiness=14\nnet.ipv4.conf.eth0.rp_filter=2\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "assignment-modifiers-against-the-boot-value",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("mod\n")),
                ("/etc/tuned/tuned-main.conf", File("reapply_sysctl = 0\n")),
                ("/etc/tuned/mod/tuned.conf", File("[sysctl]\nnet.core.somaxconn=>2048\nkernel.pid_max=>4096\nvm.swappiness=<5\nvm.dirty_ratio=<50\nvm.dirty_background_ratio=>10\n")),
                ("/usr/lib/sysctl.d/50-v.conf", File("net.core.somaxconn = 1024\nkernel.pid_max = 4194304\nvm.swappiness = 60\nvm.dirty_ratio = 20\n")),
            ],
            keys: VM,
            unknown: &["vm.dirty_background_ratio"],
        },
        Layout {
            name: "quotes-continuations-and-key-spellings",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("spell\n")),
                ("/etc/tuned/spell/tuned.conf", File("[sysctl]\nvm.swappiness = \"10\"\nkernel.core_pattern = |/usr/bin/handler %p\n  %e\nnet.ipv4.conf.*.rp_filter = 2\n-vm.dirty_ratio = 5\nnet.ipv4.neigh.default.base_reachable_time = 1\nvm.overcommit_memory ; = 1\nnet/core/somaxconn = 77\nkernel.pid_max: 1 = 2\n")),
            ],
            keys: VM,
            // the slash form's fate depends on tuned's version, not in this snapshot
            unknown: &["net.core.somaxconn"],
        },
        Layout {
            name: "slash-keys-with-the-installed-version-known",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("spell\n")),
                ("/etc/tuned/spell/tuned.conf", File("[sysctl]\nnet/core/somaxconn = 77\nvm/swappiness=3\nnet.ipv4.conf.eth0.rp_filter=2\n")),
                ("/etc/sysctl.d/50-slash.conf", File("kernel/pid_max = 77777\nvm.dirty_ratio = 9\n")),
                (VERSION_PY, Copy(VERSION_PY)),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "reapplied-odd-separators-and-proc-sys-prefix-as-tuned-2-20-resolves-them",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("tp\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\nnet..core.somaxconn=91\n")),
                ("/etc/sysctl.d/50-odd.conf", File("net..core.somaxconn = 81\nkernel.pid_max. = 82\n/vm/swappiness = 83\n/proc/sys/vm/dirty_ratio = 84\nvm//dirty_background_ratio = 85\n")),
                ("/usr/lib/sysctl.d/40-vendor.conf", File("kernel.pid_max = 4194304\nvm.dirty_ratio = 20\n")),
                (VERSION_PY, Copy(VERSION_PY)),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "reapplied-odd-separators-with-the-tuned-version-unknown",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("tp\n")),
                ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                ("/etc/sysctl.d/50-odd.conf", File("net..core.somaxconn = 81\nkernel.pid_max. = 82\n/vm/swappiness = 83\n/proc/sys/vm/dirty_ratio = 84\n")),
                ("/usr/lib/sysctl.d/40-vendor.conf", File("kernel.pid_max = 4194304\nvm.dirty_ratio = 20\n")),
            ],
            keys: VM,
            // `/vm/swappiness` after the profile's 10: 2.20 writes 83 again,
            // later releases write nothing (the slash form names no file)
            unknown: &["vm.swappiness"],
        },
        Layout {
            name: "profile-that-cannot-be-parsed-applies-nothing",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("broken\n")),
                ("/etc/tuned/broken/tuned.conf", File("[sysctl]\nvm.swappiness = 10\nvm.dirty_ratio: 20\n")),
                ("/etc/sysctl.d/60-admin.conf", File("kernel.pid_max = 70000\n")),
            ],
            keys: VM,
            unknown: &[],
        },
        Layout {
            name: "missing-profile-applies-nothing",
            enabled: true,
            nodes: vec![
                ("/etc/tuned/active_profile", File("nonexistent\n")),
                ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\n")),
            ],
            keys: VM,
            unknown: &[],
        },
    ]
}

/// The fake `virt-what` the namespace binds over /usr/sbin/virt-what: the
/// layout's node at this path is what it prints (bare metal, nothing, when
/// the layout has none). Not a host path: our side never reads it.
const VIRT_WHAT: &str = "/.reference/virt-what";

/// recommend.d/50-tuned.conf's rules as tuned ships them.
const STOCK_RULES: &str = "# as tuned 2.20 ships it, less the comments\n[atomic-host]\nvirt=\nsystem=.*atomic.*\n\n[atomic-guest]\nvirt=.+\nsystem=.*atomic.*\n\n[throughput-performance]\nvirt=\nsystem=.*(computenode|server).*\n\n[virtual-guest]\nvirt=.+\n\n[balanced]\n";

/// How our side must decide a layout where tuned picks the profile itself.
enum Auto {
    /// The files decide the recommendation: we follow it (it must be the
    /// reference's), with a note naming it.
    Decided(&'static str),
    /// They do not (virt-what, processes): we take active_profile, with a
    /// note saying so; the layout's active_profile is what tuned last
    /// applied on such a host, the reference's choice.
    ActiveProfile,
    /// They do not and there is no active_profile: unknown, an input
    /// finding, and every key one of the candidate profiles sets is unknown
    /// unless tuned re-applies it from /etc.
    Unknown,
}

/// Layouts where tuned picks the profile itself (auto mode, or no mode and
/// no active profile): its own ProfileRecommender runs in the namespace.
fn auto_layouts() -> Vec<(Layout, Auto)> {
    vec![
        (
            Layout {
                name: "auto-recommend-conf-file-condition-beats-a-stale-active-profile",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("tp\n")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    // Python's `$` matches before the file's final newline
                    ("/etc/tuned/recommend.conf", File("[site]\n/etc/tuned/marker=^yes$\n")),
                    ("/etc/tuned/marker", File("yes\n")),
                    ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                    ("/etc/tuned/site/tuned.conf", File("[sysctl]\nvm.swappiness=33\nvm.dirty_ratio=44\n")),
                    ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\nkernel.pid_max = 4194304\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::Decided("site"),
        ),
        (
            Layout {
                name: "auto-recommend-d-etc-replaces-usr-lib-by-name-and-name-order-decides",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("balanced\n")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/usr/lib/tuned/recommend.d/50-tuned.conf", File(STOCK_RULES)),
                    // replaced by /etc's file of the same name
                    ("/usr/lib/tuned/recommend.d/40-site.conf", File("[never]\n")),
                    ("/etc/tuned/recommend.d/40-site.conf", File("[site,rhel9]\nsystem=cpe:/o:redhat:enterprise_linux:9\n")),
                    ("/etc/system-release-cpe", File("cpe:/o:redhat:enterprise_linux:9::baseos\n")),
                    ("/usr/lib/tuned/balanced/tuned.conf", File("[sysctl]\nvm.dirty_ratio=20\n")),
                    ("/etc/tuned/site/tuned.conf", File("[sysctl]\nvm.dirty_ratio=25\nnet.core.somaxconn=4096\n")),
                    ("/etc/sysctl.d/60-admin.conf", File("kernel.pid_max = 70000\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::Decided("site"),
        ),
        (
            Layout {
                name: "auto-stock-rules-on-a-rhel7-server-cpe-and-bare-metal-is-throughput-performance-only-when-virt-is-known",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("throughput-performance\n")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/usr/lib/tuned/recommend.d/50-tuned.conf", File(STOCK_RULES)),
                    ("/etc/system-release-cpe", File("cpe:/o:redhat:enterprise_linux:7.9:ga:server\n")),
                    ("/usr/lib/tuned/throughput-performance/tuned.conf", File("[sysctl]\nvm.dirty_ratio=40\nvm.dirty_background_ratio=10\nvm.swappiness=10\n")),
                    ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\nvm.dirty_ratio = 20\n")),
                    (VIRT_WHAT, File("")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::ActiveProfile,
        ),
        (
            Layout {
                name: "auto-stock-rules-on-rhel8-in-kvm-virt-decides-so-active-profile-stands-in",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("virtual-guest\n")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/usr/lib/tuned/recommend.d/50-tuned.conf", File(STOCK_RULES)),
                    ("/etc/system-release-cpe", File("cpe:/o:redhat:enterprise_linux:8::baseos\n")),
                    ("/usr/lib/tuned/virtual-guest/tuned.conf", File("[main]\ninclude=throughput-performance\n[sysctl]\nvm.dirty_ratio=30\nvm.swappiness=30\n")),
                    ("/usr/lib/tuned/throughput-performance/tuned.conf", File("[sysctl]\nvm.dirty_ratio=40\nvm.dirty_background_ratio=10\nvm.swappiness=10\n")),
                    ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\nvm.dirty_ratio = 20\nkernel.pid_max = 4194304\n")),
                    (VIRT_WHAT, File("kvm\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::ActiveProfile,
        ),
        (
            Layout {
                name: "auto-first-section-with-an-empty-value-and-a-comma-suffix",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/etc/tuned/recommend.d/10-x.conf", File("[nomatch]\n/etc/tuned/absent-file=.*\n\n[tp,first]\n/etc/tuned/empty-marker=\n\n[site]\n")),
                    ("/etc/tuned/empty-marker", File("")),
                    ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                    ("/etc/tuned/site/tuned.conf", File("[sysctl]\nvm.swappiness=33\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::Decided("tp"),
        ),
        (
            Layout {
                name: "auto-recommend-command-off-is-balanced",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("tp\n")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/etc/tuned/tuned-main.conf", File("daemon = 1\nrecommend_command = 0\n")),
                    ("/etc/tuned/recommend.conf", File("[tp]\n")),
                    ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                    ("/usr/lib/tuned/balanced/tuned.conf", File("[sysctl]\nvm.swappiness=20\nvm.dirty_ratio=21\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::Decided("balanced"),
        ),
        (
            Layout {
                name: "no-mode-and-no-active-profile-recommends-the-default-which-is-not-installed",
                enabled: true,
                nodes: vec![
                    ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                    ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::Decided("balanced"),
        ),
        (
            Layout {
                name: "auto-mode-ignores-active-profile",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("tp\n")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                    ("/usr/lib/tuned/balanced/tuned.conf", File("[sysctl]\nvm.dirty_ratio=21\n")),
                ],
                keys: VM,
                unknown: &[],
            },
            Auto::Decided("balanced"),
        ),
        (
            Layout {
                name: "auto-undecided-without-active-profile-makes-vendor-values-unknown-not-failures",
                enabled: true,
                nodes: vec![
                    ("/etc/tuned/active_profile", File("")),
                    ("/etc/tuned/profile_mode", File("auto\n")),
                    ("/etc/tuned/recommend.conf", File("[tp]\nprocess=^no-such-daemon-here$\n")),
                    ("/usr/lib/tuned/tp/tuned.conf", File("[sysctl]\nvm.swappiness=10\n")),
                    ("/usr/lib/tuned/balanced/tuned.conf", File("[sysctl]\nvm.overcommit_memory=1\n")),
                    ("/usr/lib/sysctl.d/50-v.conf", File("vm.swappiness = 60\nvm.dirty_ratio = 20\n")),
                    ("/etc/sysctl.d/60-admin.conf", File("kernel.pid_max = 70000\n")),
                ],
                // the candidates are `tp` (its rule depends on the running
                // processes) and the default `balanced`: what either sets is
                // unknown (vm.swappiness over the vendor file, and
                // vm.overcommit_memory, which no file sets); vm.dirty_ratio
                // neither sets, so the vendor value stands
                keys: &[
                    "vm.swappiness",
                    "vm.dirty_ratio",
                    "vm.overcommit_memory",
                    "kernel.pid_max",
                    "net.core.somaxconn",
                ],
                unknown: &["vm.swappiness", "vm.overcommit_memory"],
            },
            Auto::Unknown,
        ),
    ]
}

/// Whether the reference can run here; off CI, one line and `false`.
fn ready() -> bool {
    let mut missing = Vec::new();
    for t in [SYSTEMD_SYSCTL, PYTHON, TUNED_MODULE] {
        if !Path::new(t).exists() {
            missing.push(t.to_string());
        }
    }
    if common::find_tool("unshare").is_none() {
        missing.push("unshare".into());
    }
    if !mountns::is_root() {
        missing.push("root (for unshare -m and the bind mounts)".into());
    }
    if common::tools_hidden() {
        missing.push("reference tools (hidden by DRIFTAUDIT_HIDE_REFERENCE_TOOLS)".into());
    }
    if missing.is_empty() {
        return true;
    }
    common::skip(
        &format!(
            "tuned differential: needs {} (apt-get install tuned systemd util-linux)",
            missing.join(", ")
        ),
        "not available here",
    );
    false
}

/// The layout below `root`: every directory the namespace binds exists, a
/// stock tuned-main.conf unless the layout has its own, and a snapshot
/// proc/sys with one `0` per key.
fn materialise(root: &Path, l: &Layout) {
    for d in [
        "etc/tuned",
        "usr/lib/tuned",
        "etc/sysctl.d",
        "run/sysctl.d",
        "usr/lib/sysctl.d",
    ] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    for (path, node) in &l.nodes {
        let p = root.join(path.trim_start_matches('/'));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        match node {
            File(t) => fs::write(&p, t).unwrap(),
            Link(t) => symlink(t, &p).unwrap(),
            Copy(from) => {
                fs::copy(from, &p).unwrap();
            }
        }
    }
    if !root.join("etc/tuned/tuned-main.conf").exists() {
        fs::write(root.join("etc/tuned/tuned-main.conf"), MAIN).unwrap();
    }
    if l.enabled {
        let p = root.join(ENABLED.trim_start_matches('/'));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink("/usr/lib/systemd/system/tuned.service", p).unwrap();
    }
    for k in l.keys {
        let p = root.join("proc/sys").join(swap_dot_slash(k));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, "0\n").unwrap();
    }
}

/// What the real tools did, per key: the final value (`None`: nobody wrote
/// it) and its source: `systemd` (systemd-sysctl at boot, tuned did not
/// touch it), `profile:PATH` (tuned's static apply, the profile file the
/// value was read from) or `PATH:LINE` (tuned's re-application).
#[derive(Debug, Default)]
struct Reference {
    state: String,
    values: Vec<(String, Option<String>, Option<String>)>,
    log: String,
}

fn reference(root: &Path, l: &Layout, driver: &Path) -> Reference {
    let r = root.display();
    let mut sh = String::from("set -e\nmount --make-rprivate /\nmount -t tmpfs tmpfs /proc/sys\n");
    for k in l.keys {
        let p = format!("/proc/sys/{}", swap_dot_slash(k));
        let dir = Path::new(&p).parent().unwrap().display().to_string();
        sh += &format!("mkdir -p '{dir}'; : > '{p}'\n");
    }
    // /run (for /run/sysctl.d) and /usr/local/lib/sysctl.d are tmpfs, so the
    // host's own files there cannot leak in; the rest is bound from the layout
    sh += "mount -t tmpfs tmpfs /run\nmkdir -p /run/sysctl.d\n";
    sh += "if [ -d /usr/local/lib ]; then mount -t tmpfs tmpfs /usr/local/lib; fi\n";
    sh += "if [ ! -L /lib ] && [ -d /lib/sysctl.d ]; then mount -t tmpfs tmpfs /lib/sysctl.d; fi\n";
    for d in [
        "etc/tuned",
        "usr/lib/tuned",
        "etc/sysctl.d",
        "run/sysctl.d",
        "usr/lib/sysctl.d",
    ] {
        sh += &format!("mount --bind '{r}/{d}' '/{d}'\n");
    }
    sh += &format!(
        "if [ -e '{r}/etc/sysctl.conf' ]; then mount --bind '{r}/etc/sysctl.conf' /etc/sysctl.conf; else mount --bind /dev/null /etc/sysctl.conf; fi\n"
    );
    // the recommender's virt-what prints what the layout says (nothing:
    // bare metal); its /etc/system-release-cpe is the layout's
    let out_file = root.join(VIRT_WHAT.trim_start_matches('/'));
    if !out_file.exists() {
        fs::create_dir_all(out_file.parent().unwrap()).unwrap();
        fs::write(&out_file, "").unwrap();
    }
    let script = root.join(".reference/virt-what.sh");
    fs::write(
        &script,
        format!("#!/bin/sh\ncat '{}'\n", out_file.display()),
    )
    .unwrap();
    fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    sh += &format!(
        "v=$(command -v virt-what || true); if [ -n \"$v\" ]; then mount --bind '{}' \"$v\"; fi\n",
        script.display()
    );
    sh += &format!("export LAYOUT_SYSTEM_RELEASE='{r}/etc/system-release-cpe'\n");
    sh += &format!("{SYSTEMD_SYSCTL} >/dev/null 2>&1 || true\n");
    for k in l.keys {
        sh += &format!(
            "printf 'BOOT\\t%s\\t' '{k}'; head -n1 '/proc/sys/{}' | tr -d '\\n'; echo\n",
            swap_dot_slash(k)
        );
    }
    if l.enabled {
        sh += &format!("cd / && {PYTHON} -I '{}'\n", driver.display());
    }
    let (code, text, stderr) = mountns::run(&sh, Sh::Plain, &[]);
    let log = format!("{text}{stderr}");
    assert!(code == 0, "{}: namespace script failed:\n{log}", l.name);
    let mut res = Reference {
        log,
        values: l.keys.iter().map(|k| (k.to_string(), None, None)).collect(),
        ..Reference::default()
    };
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let entry = |k: &str, res: &mut Reference| res.values.iter().position(|e| e.0 == k);
        match f.as_slice() {
            ["STATE", s] => res.state = s.to_string(),
            ["BOOT", k, v] if !v.is_empty() => {
                if let Some(i) = entry(k, &mut res) {
                    res.values[i].1 = Some(v.to_string());
                    res.values[i].2 = Some("systemd".into());
                }
            }
            ["WRITE", k, _, src] => {
                if let Some(i) = entry(k, &mut res) {
                    res.values[i].2 = Some(src.to_string());
                }
            }
            // what the fake /proc/sys holds at the end is the value
            ["FINAL", k, v] => {
                if let Some(i) = entry(k, &mut res) {
                    let v = unescape(v);
                    res.values[i].1 = (!v.is_empty()).then_some(v);
                }
            }
            _ => {}
        }
    }
    if l.enabled {
        assert!(
            text.lines().filter(|l| l.starts_with("FINAL\t")).count() == l.keys.len(),
            "{}: the driver did not read the fake /proc/sys back:\n{}",
            l.name,
            res.log
        );
    }
    res
}

/// The driver's escaping (`\\`, `\n`, `\t`) undone.
fn unescape(v: &str) -> String {
    let mut out = String::new();
    let mut it = v.chars();
    while let Some(c) = it.next() {
        match (c, c == '\\') {
            (_, true) => match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            },
            (c, false) => out.push(c),
        }
    }
    out
}

fn ours(root: &Path) -> Facts {
    let set = audit::builtin();
    engine::gather(&set, &audit::host(root))
}

/// Whether our provenance for a set key is the reference's: `systemd` (no
/// tuned write: ours must not be tuned's), `profile:PATH` (ours is that
/// tuned.conf) or `PATH:LINE` (tuned re-applied that line: ours is it).
fn source_agrees(reference: &str, s: &driftaudit::unstable::facts::Setting) -> bool {
    let ev = &s.evidence[0];
    let tuned_note = s.note.as_deref().is_some_and(|n| n.contains("tuned"));
    match reference.strip_prefix("profile:") {
        Some(p) => ev.path == p,
        None if reference == "systemd" => !ev.path.ends_with("/tuned.conf") && !tuned_note,
        None => ev.to_string() == reference,
    }
}

fn driver_file() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("driver.py");
    fs::write(&p, DRIVER).unwrap();
    (d, p)
}

/// Counts over a run of [`compare`].
#[derive(Default)]
struct Tally {
    compared: usize,
    tuned_writes: usize,
    unknown: usize,
}

/// Run one layout through the real tools and through ours; a line per
/// disagreement into `mismatches`. Returns the reference and our facts.
fn compare(
    l: &Layout,
    driver: &Path,
    tally: &mut Tally,
    mismatches: &mut Vec<String>,
) -> (Reference, Facts) {
    let d = tempfile::tempdir().unwrap();
    materialise(d.path(), l);
    let theirs = reference(d.path(), l, driver);
    let facts = ours(d.path());
    let boot = &facts.namespaces["sysctl_boot"];
    let before = mismatches.len();
    for (k, value, source) in &theirs.values {
        tally.compared += 1;
        if source.as_deref().is_some_and(|s| s != "systemd") {
            tally.tuned_writes += 1;
        }
        let mine = boot.get(k);
        if l.unknown.contains(&k.as_str()) {
            tally.unknown += 1;
            if !matches!(mine, Some(Entry::Unreadable { .. })) {
                mismatches.push(format!(
                    "{}: {k}: tuned computes it on the running host (it wrote {value:?} here); we must say unknown, we say {mine:?}",
                    l.name
                ));
            }
            continue;
        }
        let agrees = match (mine, value, source) {
            (None, None, _) => true,
            (Some(Entry::Set(s)), Some(v), Some(src)) => s.raw == *v && source_agrees(src, s),
            _ => false,
        };
        if !agrees {
            let ours = match mine {
                Some(Entry::Set(s)) => format!(
                    "{:?} from {} ({})",
                    s.raw,
                    s.evidence[0],
                    s.note.as_deref().unwrap_or("no note")
                ),
                other => format!("{other:?}"),
            };
            mismatches.push(format!(
                "{}: {k}: tuned's result {value:?} from {source:?}, we predict {ours}",
                l.name
            ));
        }
    }
    if mismatches.len() > before && std::env::var_os("TUNED_REFERENCE_LOG").is_some() {
        eprintln!("== {} ({})\n{}", l.name, theirs.state, theirs.log);
    }
    (theirs, facts)
}

#[test]
fn boot_values_and_provenance_match_tuneds_own_loader_and_sysctl_plugin() {
    if !ready() {
        return;
    }
    let (_dd, driver) = driver_file();
    let mut mismatches = Vec::new();
    let mut tally = Tally::default();
    for l in layouts() {
        compare(&l, &driver, &mut tally, &mut mismatches);
    }
    assert!(tally.compared >= 100, "only {} comparisons", tally.compared);
    // tuned really ran and wrote to the fake /proc/sys (a broken namespace
    // would make both sides "not set")
    assert!(
        tally.tuned_writes >= 30,
        "tuned wrote only {} values",
        tally.tuned_writes
    );
    assert!(tally.unknown >= 3);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Auto mode against tuned's own ProfileRecommender: where the files decide
/// the recommendation we follow it (a stale active_profile is not what
/// tuned applies), where they do not we take active_profile and say so, and
/// with no active_profile either the values a profile may override are
/// unknown, never a vendor file's value reported as what the host runs.
#[test]
fn auto_mode_follows_tuneds_own_recommender_or_says_what_it_assumed() {
    if !ready() {
        return;
    }
    if common::find_tool("virt-what").is_none() {
        common::skip(
            "tuned auto-mode differential: needs virt-what (the test binds a fake one over it)",
            "apt-get install virt-what",
        );
        return;
    }
    let (_dd, driver) = driver_file();
    let mut mismatches = Vec::new();
    let mut tally = Tally::default();
    for (l, how) in auto_layouts() {
        let (theirs, facts) = compare(&l, &driver, &mut tally, &mut mismatches);
        let picked = theirs
            .state
            .strip_prefix("recommended ")
            .unwrap_or_else(|| panic!("{}: tuned did not recommend: {}", l.name, theirs.log))
            .to_string();
        let note = facts
            .issues
            .iter()
            .find(|i| i.source == "tuned" && i.path == "/etc/tuned/active_profile")
            .map(|i| (i.message.clone(), i.level));
        match (how, note) {
            (Auto::Decided(name), Some((m, level))) => {
                if picked != name {
                    mismatches.push(format!(
                        "{}: tuned recommends `{picked}`, the layout expects `{name}`",
                        l.name
                    ));
                }
                if !m.contains(&format!("applies `{name}`")) || level != IssueLevel::Note {
                    mismatches.push(format!(
                        "{}: our note should name `{name}` as what tuned applies: {m} ({level:?})",
                        l.name
                    ));
                }
            }
            (Auto::ActiveProfile, Some((m, level))) => {
                let active = fs_active(&l);
                if picked != active {
                    mismatches.push(format!("{}: tuned recommends `{picked}`, the layout's active_profile is `{active}`", l.name));
                }
                if !m.contains("takes") || !m.contains(&active) || level != IssueLevel::Note {
                    mismatches.push(format!("{}: our note should say we took `{active}` from active_profile: {m} ({level:?})", l.name));
                }
            }
            (Auto::Unknown, Some((m, level))) => {
                if !m.contains("recommender") || level != IssueLevel::Unknown {
                    mismatches.push(format!(
                        "{}: we must say the profile is unknown: {m} ({level:?})",
                        l.name
                    ));
                }
            }
            (_, None) => mismatches.push(format!(
                "{}: no tuned input finding at /etc/tuned/active_profile: {:#?}",
                l.name, facts.issues
            )),
        }
    }
    assert!(tally.compared >= 60, "only {} comparisons", tally.compared);
    assert!(
        tally.tuned_writes >= 10,
        "tuned wrote only {} values",
        tally.tuned_writes
    );
    assert!(tally.unknown >= 2);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// The layout's active_profile, as written.
fn fs_active(l: &Layout) -> String {
    l.nodes
        .iter()
        .find_map(|(p, n)| match (p, n) {
            (&"/etc/tuned/active_profile", File(t)) => Some(t.trim().to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The driver's safety check: run outside a namespace it must refuse before
/// importing tuned (the real /proc/sys is procfs, not the test's tmpfs).
#[test]
fn the_driver_refuses_to_run_against_the_real_proc_sys() {
    if !Path::new(PYTHON).exists() {
        common::skip(
            "needs /usr/bin/python3",
            "not installed; apt-get install python3",
        );
        return;
    }
    let (_dd, driver) = driver_file();
    let out = Command::new(PYTHON)
        .arg("-I")
        .arg(&driver)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ABORT"));
    assert!(out.stdout.is_empty());
}
