//! The man pages: `driftaudit(1)` and one `driftaudit-COMMAND(1)` per
//! subcommand. NAME, SYNOPSIS, DESCRIPTION and OPTIONS come from the one
//! clap definition (clap_mangen); EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES
//! and SEE ALSO from the table below, written through the `roff` crate so
//! no text becomes a request. Every example runs in a docs test
//! (tests/docs_commands.rs) and exits as its `# exits N` says; this file
//! must not run anything itself.

use std::io::Write;
use std::path::Path;

use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

/// What a page adds to the clap definition.
struct Page {
    /// The subcommand, or "" for `driftaudit(1)`.
    command: &'static str,
    exit: &'static [(&'static str, &'static str)],
    environment: &'static [(&'static str, &'static str)],
    files: &'static [(&'static str, &'static str)],
    /// A sentence each, then the shell lines; a line that does not exit 0
    /// ends in `# exits N`.
    examples: &'static [(&'static str, &'static [&'static str])],
    see_also: &'static [&'static str],
}

const ERR: (&str, &str) = (
    "2",
    "Usage, policy or input error: a flag that does not parse, a policy that does not load (file, line and column are given), a snapshot that cannot be read. Nothing is judged.",
);

const COLOUR: [(&str, &str); 3] = [
    (
        "NO_COLOR",
        "When set and not empty, the text output has no colour (with --color auto).",
    ),
    ("CLICOLOR", "0: no colour (with --color auto), as NO_COLOR."),
    (
        "CLICOLOR_FORCE",
        "When set and not 0, colour even when the output is not a terminal.",
    ),
];

const TODAY: (&str, &str) = (
    "DRIFTAUDIT_TODAY",
    "The date (YYYY-MM-DD) waivers are judged against (their expires: field), instead of today in UTC: for reproducible CI runs.",
);

const PATH_LIVE: (&str, &str) = (
    "PATH",
    "Where the read-only capture commands of a live host are found: tune2fs -l (ext4 devices), rpm -qa, my_print_defaults and the mysql or mariadb client.",
);

const READS: (&str, &str) = (
    "/etc/sysctl.conf, /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d, /usr/lib/sysctl.d, /proc/sys",
    "Kernel parameters: the files systemd-sysctl and sysctl --system apply, in their order, and the running values. A live host is read, never changed.",
);
const READS_MY: (&str, &str) = (
    "/etc/my.cnf, /etc/mysql/my.cnf, their !include and !includedir files",
    "MySQL and MariaDB option files, in the server's order.",
);
const READS_REST: (&str, &str) = (
    "/opt/zimbra/conf/localconfig.xml, /etc/fstab, /proc/self/mountinfo, /sys/block, /proc/meminfo",
    "Zimbra's localconfig, the mount table and devices, and the memory the sizing rules compare with.",
);
const SNAPSHOT_DIR: (&str, &str) = (
    "DIR/manifest.json, DIR/etc, DIR/proc, DIR/sys, DIR/captures",
    "A snapshot directory: the host's files under their own paths, command output under captures/ (docs/snapshot-format.md). An sosreport directory is read as one too.",
);
const POLICIES: (&str, &str) = (
    "/usr/share/driftaudit/policies",
    "The built-in policies as YAML, to read and copy (the package's copy; the binary has them compiled in, and --no-builtin leaves them out).",
);
const EXAMPLE_HOST: (&str, &str) = (
    "/usr/share/doc/driftaudit/examples/nat-story",
    "The example snapshot the package ships: a NAT gateway with tcp_tw_recycle set, which check reports.",
);

const PAGES: &[Page] = &[
    Page {
        command: "",
        exit: &[
            ("0", "No finding at or above the --fail-on severity failed (check), the plan fixes all it targets (fix), every expectation held (test)."),
            ("1", "Findings: what each command's page says (check: a finding at or above --fail-on; diff: a regression; fix: something is unfixable or the proof failed; test: a mismatch)."),
            ERR,
        ],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2], TODAY, PATH_LIVE],
        files: &[READS, READS_MY, READS_REST, SNAPSHOT_DIR, POLICIES, EXAMPLE_HOST],
        examples: &[
            (
                "Audit the example host the package ships; it has findings, so it exits 1.",
                &["driftaudit check --snapshot /usr/share/doc/driftaudit/examples/nat-story   # exits 1"],
            ),
            (
                "List every rule, then read why one exists and how to fix it.",
                &["driftaudit list", "driftaudit explain linux.tcp-tw-recycle"],
            ),
        ],
        see_also: &["driftaudit-check", "driftaudit-snapshot", "driftaudit-diff", "driftaudit-fix", "driftaudit-baseline", "driftaudit-test", "driftaudit-merge", "driftaudit-list", "driftaudit-explain", "sysctl.d(5)", "systemd-sysctl(8)", "fstab(5)", "my_print_defaults(1)"],
    },
    Page {
        command: "check",
        exit: &[
            ("0", "No finding at or above --fail-on (default low) failed. Waived findings do not count; with --fail-on unknown, unknown and error findings count too."),
            ("1", "A finding at or above --fail-on failed (on any host of --snapshot or --fleet), or a waiver is expired or stale."),
            ERR,
        ],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2], TODAY, PATH_LIVE],
        files: &[READS, READS_MY, READS_REST, SNAPSHOT_DIR, EXAMPLE_HOST],
        examples: &[
            (
                "Audit the example host; its NAT gateway has net.ipv4.tcp_tw_recycle = 1, a high finding, so check exits 1.",
                &["driftaudit check --snapshot /usr/share/doc/driftaudit/examples/nat-story   # exits 1"],
            ),
            (
                "Only the kernel rules, as JSON for a script; the exit status is the same.",
                &["driftaudit check --snapshot /usr/share/doc/driftaudit/examples/nat-story --only 'linux.*' --format json > nat-story.json   # exits 1"],
            ),
            (
                "A git repository of snapshots, one folder a host: one line a host, failing at or above high, every benchmark included (--profile all), with the site's waivers (here the MariaDB host accepts LOAD DATA LOCAL, a high finding of the MySQL benchmark).",
                &["driftaudit check --fleet snapshots --profile all --fail-on high --waivers waivers.yaml --quiet   # exits 1"],
            ),
            (
                "Before an upgrade of a MySQL 5.6 server to 8.0: the options it sets that 8.0 removed or deprecated, and the defaults that change under it.",
                &["driftaudit check --snapshot snapshots/db1-before --only 'upgrade.*' --target mysql=8.0   # exits 1"],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-explain", "driftaudit-list", "driftaudit-fix", "driftaudit-merge"],
    },
    Page {
        command: "snapshot",
        exit: &[
            ("0", "The snapshot was written."),
            ("1", "It was written, but --mysql was asked for and the server's variables could not be captured (the reason is on stderr)."),
            ("2", "Usage error, or --out is not empty and --force was not given, or the snapshot could not be written. Nothing is left half-written."),
        ],
        environment: &[PATH_LIVE, (
            "HOME",
            "--mysql: the mysql client connects with the [client] and [mysql] groups of your own option files (~/.my.cnf), passed on a pipe, never on the command line.",
        )],
        files: &[READS, READS_MY, READS_REST, SNAPSHOT_DIR],
        examples: &[
            (
                "Capture this host into a folder of a git repository of snapshots, then again after a change (--force replaces it) and let git say what changed.",
                &["driftaudit snapshot --out snapshots/web1", "driftaudit snapshot --out snapshots/web1 --force"],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-check", "driftaudit-diff"],
    },
    Page {
        command: "diff",
        exit: &[
            ("0", "No regression at or above --fail-on: no rule that passed before fails after."),
            ("1", "A rule that passed on BEFORE fails on AFTER, at or above --fail-on."),
            ERR,
        ],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2], TODAY, PATH_LIVE],
        files: &[SNAPSHOT_DIR],
        examples: &[
            (
                "Before an upgrade, snapshot the host; after it, compare the snapshot with the live host.",
                &["driftaudit snapshot --out before-upgrade", "driftaudit diff before-upgrade live"],
            ),
            (
                "Two snapshots of a database server, with a unified diff of every captured file that changed; the later one fails rules the first passed, so diff exits 1.",
                &["driftaudit diff db1 snapshots/db2 --files   # exits 1"],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-snapshot", "driftaudit-check"],
    },
    Page {
        command: "fix",
        exit: &[
            ("0", "The plan fixes every finding it targets (or there is nothing to fix), proven by re-auditing a patched copy of the host unless --no-verify was given."),
            ("1", "Some findings are unfixable (a rule without a remedy, a value the file cannot hold safely), or the proof failed: the patch is then not printed."),
            ERR,
        ],
        environment: &[PATH_LIVE, TODAY, (
            "TMPDIR",
            "Without --snapshot: where the private snapshot of the live host and the patched copy are made (removed afterwards).",
        )],
        files: &[READS, READS_MY, READS_REST, SNAPSHOT_DIR],
        examples: &[
            (
                "Plan the fix of the example host as a patch and the runtime steps as a script, both to review before anything is applied; the plan is proven, so fix exits 0. Applied to a copy, the patch fixes the files, but check still exits 1: the copy's running values (proc/sys) stay what they were until the steps run. On the host: patch -p1 -d / < nat-story.patch, then sh nat-story-steps.sh as root.",
                &[
                    "cp -r /usr/share/doc/driftaudit/examples/nat-story nat-story",
                    "driftaudit fix --snapshot nat-story --runtime nat-story-steps.sh > nat-story.patch",
                    "patch -s -p1 -d nat-story < nat-story.patch",
                    "driftaudit check --snapshot nat-story --only 'linux.*'   # exits 1",
                ],
            ),
            (
                "Pin the golden database server's settings, then plan the edits that bring another back to them; one of its settings cannot be written safely, so fix exits 1 and says why on stderr.",
                &[
                    "driftaudit baseline --snapshot db1 -o golden.yaml",
                    "driftaudit fix --snapshot db2 --no-builtin --policy golden.yaml --format json > db2-plan.json   # exits 1",
                ],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-check", "driftaudit-baseline", "patch(1)", "git-apply(1)"],
    },
    Page {
        command: "baseline",
        exit: &[
            ("0", "The policy was written (to stdout, or to --output)."),
            ("2", "Usage or input error, or there is nothing to pin (stderr says why each namespace was empty); nothing is written."),
        ],
        environment: &[PATH_LIVE],
        files: &[READS, READS_MY, READS_REST, SNAPSHOT_DIR],
        examples: &[
            (
                "Pin a golden host and audit another against it alone: every setting that differs, and every setting it has that the golden host lacks, fails.",
                &[
                    "driftaudit baseline --snapshot db1 -o golden.yaml",
                    "driftaudit check --snapshot db2 --no-builtin --policy golden.yaml   # exits 1",
                ],
            ),
            (
                "Only InnoDB's options, as the option files set them; another host's option files then fail on every InnoDB value that differs or that db1 does not set.",
                &[
                    "driftaudit baseline --snapshot db1 --namespace mycnf_effective --keys 'innodb_*' -o innodb.yaml",
                    "driftaudit check --snapshot db2 --no-builtin --policy innodb.yaml --quiet   # exits 1",
                ],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-check", "driftaudit-fix"],
    },
    Page {
        command: "test",
        exit: &[
            ("0", "Every expectation of every case held."),
            ("1", "An expectation did not hold: the case, the rule and the verdict it had are listed."),
            ERR,
        ],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2]],
        files: &[("*.test.yaml, *.test.yml", "Policy tests: cases of a snapshot (a folder, or files given inline) and the verdicts rules must give on it (docs/policy-language.md, Policy tests).")],
        examples: &[
            (
                "Run the tests of a site's policies, then write them as JUnit for the CI's test report.",
                &["driftaudit test my-policies", "driftaudit test my-policies --format junit > policy-tests.xml"],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-check"],
    },
    Page {
        command: "merge",
        exit: &[
            ("0", "No host of the merged report has a finding at or above the severity the shards were audited with."),
            ("1", "A host has such a finding, or --waivers judges a waiver expired or stale over all the shards' hosts."),
            ERR,
        ],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2], TODAY],
        files: &[SNAPSHOT_DIR],
        examples: &[
            (
                "Audit a fleet in two CI jobs, then merge their reports into one Markdown summary; a host has findings, so the shards and the merge exit 1.",
                &[
                    "driftaudit check --fleet snapshots --shard 1/2 --format json > shard1.json   # exits 1",
                    "driftaudit check --fleet snapshots --shard 2/2 --format json > shard2.json   # exits 1",
                    "driftaudit merge shard1.json shard2.json --format markdown > fleet.md   # exits 1",
                ],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-check"],
    },
    Page {
        command: "list",
        exit: &[("0", "The rules were listed."), ERR],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2]],
        files: &[POLICIES],
        examples: &[
            (
                "The rules a site runs, with its overlay's changes (which file and line) under each rule it changes.",
                &["driftaudit list --policy site/"],
            ),
            (
                "Also the upgrade rules of MySQL 8.0, as JSON.",
                &["driftaudit list --target mysql=8.0 --format json > rules.json"],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-explain", "driftaudit-check"],
    },
    Page {
        command: "explain",
        exit: &[("0", "The rule was explained."), ("2", "No rule has that id or alias (the nearest ids are suggested), or a policy does not load.")],
        environment: &[COLOUR[0], COLOUR[1], COLOUR[2]],
        files: &[POLICIES],
        examples: &[
            (
                "Why tcp_tw_recycle is a finding, its fix and references; an alias names the same rule.",
                &["driftaudit explain linux.tcp-tw-recycle", "driftaudit explain storage.mysql-on-rotational"],
            ),
        ],
        see_also: &["driftaudit", "driftaudit-list"],
    },
    Page {
        command: "schema",
        exit: &[("0", "The schema was printed.")],
        environment: &[],
        files: &[],
        examples: &[(
            "Give an editor the schema of policy files.",
            &["driftaudit schema > driftaudit-policy.schema.json"],
        )],
        see_also: &["driftaudit", "driftaudit-test"],
    },
    Page {
        command: "completions",
        exit: &[("0", "The script was printed."), ("2", "An unknown shell.")],
        environment: &[],
        files: &[
            ("/usr/share/bash-completion/completions/driftaudit", "bash: where the package installs the script."),
            ("/usr/share/zsh/vendor-completions/_driftaudit", "zsh."),
            ("/usr/share/fish/vendor_completions.d/driftaudit.fish", "fish."),
        ],
        examples: &[(
            "Completion for bash in your own account (rule ids complete after --only, --skip and explain).",
            &["driftaudit completions bash > driftaudit.bash"],
        )],
        see_also: &["driftaudit"],
    },
    Page {
        command: "man",
        exit: &[("0", "The pages were written."), ERR],
        environment: &[],
        files: &[("/usr/share/man/man1", "Where the package installs the pages.")],
        examples: &[(
            "Write every page, then read one.",
            &["driftaudit man --out man", "driftaudit man fix > driftaudit-fix.1"],
        )],
        see_also: &["driftaudit", "man(1)"],
    },
];

/// The subcommands that have a page, in the top page's order.
pub(crate) fn commands() -> impl Iterator<Item = &'static str> {
    PAGES.iter().map(|p| p.command).filter(|c| !c.is_empty())
}

const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// The roff of one page: `None` for no subcommand, else its name.
pub(crate) fn page(cli: clap::Command, command: Option<&str>) -> Result<String, String> {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let (cmd, page) = match command {
        None => (cli, &PAGES[0]),
        Some(name) => {
            let page = PAGES
                .iter()
                .find(|p| !p.command.is_empty() && p.command == name)
                .ok_or_else(|| {
                    format!(
                        "no man page `{name}`: one of {}",
                        commands().collect::<Vec<_>>().join(", ")
                    )
                })?;
            let sub = cli
                .find_subcommand(name)
                .cloned()
                .ok_or_else(|| format!("no subcommand `{name}`"))?;
            (sub, page)
        }
    };
    render(cmd, page).map_err(|e| format!("cannot render the man page: {e}"))
}

fn render(cmd: clap::Command, page: &Page) -> std::io::Result<String> {
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subs = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let man = Man::new(cmd)
        .source(format!("driftaudit {}", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut part = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut b = Vec::new();
        f(&mut b).map(|()| parts.push(b))
    };
    part(&|w| man.render_title(w))?;
    part(&|w| man.render_name_section(w))?;
    part(&|w| man.render_synopsis_section(w))?;
    part(&|w| man.render_description_section(w))?;
    if has_args {
        part(&|w| man.render_options_section(w))?;
    }
    if has_subs {
        part(&|w| man.render_subcommands_section(w))?;
    }
    part(&|w| w.write_all(sections(page).render().as_bytes()))?;
    part(&|w| man.render_version_section(w))?;
    // each part begins with the apostrophe preamble; the page needs it once
    let mut out = String::from(PREAMBLE);
    for p in parts {
        let s = String::from_utf8_lossy(&p);
        out.push_str(s.strip_prefix(PREAMBLE).unwrap_or(&s));
    }
    Ok(out)
}

/// EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO.
fn sections(page: &Page) -> Roff {
    let mut r = Roff::new();
    let list = |r: &mut Roff, title: &str, items: &[(&str, &str)]| {
        if items.is_empty() {
            return;
        }
        r.control("SH", [title]);
        for (term, text) in items {
            r.control("TP", std::iter::empty());
            r.text([bold(*term)]);
            r.text([roman(*text)]);
        }
    };
    list(&mut r, "EXIT STATUS", page.exit);
    list(&mut r, "ENVIRONMENT", page.environment);
    // paths must not be hyphenated
    r.control("nh", std::iter::empty());
    list(&mut r, "FILES", page.files);
    r.control("hy", std::iter::empty());
    r.control("SH", ["EXAMPLES"]);
    for (what, lines) in page.examples {
        r.control("PP", std::iter::empty());
        r.text([roman(*what)]);
        r.control("PP", std::iter::empty());
        r.control("RS", ["4"]);
        r.control("EX", std::iter::empty());
        for l in *lines {
            r.text([roman(*l)]);
        }
        r.control("EE", std::iter::empty());
        r.control("RE", std::iter::empty());
    }
    r.control("SH", ["SEE ALSO"]);
    let refs: Vec<String> = page
        .see_also
        .iter()
        .map(|s| {
            if s.ends_with(')') {
                (*s).to_string()
            } else {
                format!("{s}(1)")
            }
        })
        .collect();
    r.text([roman(refs.join(", "))]);
    r
}

/// Every page into DIR: `driftaudit.1` and `driftaudit-COMMAND.1`; the
/// files written, in order.
pub(crate) fn write_all(cli: clap::Command, dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let mut written = Vec::new();
    let names = std::iter::once(None).chain(commands().map(Some));
    for name in names {
        let text = page(cli.clone(), name)?;
        let file = match name {
            None => "driftaudit.1".to_string(),
            Some(n) => format!("driftaudit-{n}.1"),
        };
        let path = dir.join(&file);
        // temp file and rename: a link planted at the page's name is
        // replaced, not followed, and no reader sees half a page
        super::common::write_atomic(&path, &text)
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        written.push(file);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand of the clap definition has a page, and every page
    /// a subcommand: a command added without its page fails here.
    #[test]
    fn every_subcommand_has_a_page_and_every_page_a_subcommand() {
        use clap::CommandFactory;
        let cli = super::super::Cli::command();
        // as sets: the pages keep the order of an admin's path (check,
        // snapshot, diff, fix, ...), the clap definition its own
        let subs: std::collections::BTreeSet<_> = cli
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .filter(|s| s != "help")
            .collect();
        let pages: std::collections::BTreeSet<_> = commands().map(str::to_string).collect();
        assert_eq!(subs, pages);
        for p in PAGES {
            assert!(!p.examples.is_empty(), "{}: no example", p.command);
            assert!(!p.exit.is_empty(), "{}: no exit status", p.command);
        }
    }
}
