//! The library stands alone: without default features it pulls none of the
//! command-line crates (checked with `cargo tree`, fast; CI also runs
//! `cargo check --no-default-features --lib`), and the crate-root names an
//! embedder uses work together.

use std::process::Command;

use crate::common;

const CLI_ONLY: &[&str] = &[
    "clap",
    "clap_complete",
    "clap_mangen",
    "rayon",
    "indicatif",
    "anstream",
    "mimalloc",
];

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Crate names in `cargo tree --prefix none` output (`name vX.Y.Z ...`).
fn tree(args: &[&str]) -> Vec<String> {
    let out = common::cli::ok(
        cargo()
            .args(["tree", "-e", "normal", "--prefix", "none"])
            .args(args),
        "cargo tree",
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn library_alone_pulls_no_cli_crates() {
    let lib = tree(&["--no-default-features"]);
    assert!(
        lib.iter().any(|c| c == "serde"),
        "cargo tree output parsed: {lib:?}"
    );
    for c in CLI_ONLY {
        assert!(
            !lib.iter().any(|x| x == c),
            "`{c}` is in the library's dependency tree without default features"
        );
    }
    // And the check can fail: with the default features they are there.
    let cli = tree(&[]);
    for c in CLI_ONLY {
        assert!(
            cli.iter().any(|x| x == c),
            "`{c}` missing from the CLI tree"
        );
    }
}

#[test]
fn crate_root_names_read_like_the_domain() {
    use driftaudit::{audit, render, Format, Host, PolicySet, RenderOptions, Severity, Status};
    let mut set = PolicySet::new();
    set.add_str(
        "inline.yaml",
        "policy: inline\ntitle: Inline\nrules:\n  - id: inline.recycle\n    title: t\n    severity: critical\n    setting: sysctl.net.ipv4.tcp_tw_recycle\n    expect: { equals: 0 }\n    why: it is {actual}\n    fix: set it to 0\n",
    )
    .unwrap();
    let host = Host::snapshot(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/hosts/nat-story"
    ))
    .unwrap();
    let report = audit(&set, &[host]);
    let f: Vec<&driftaudit::Finding> = report.hosts[0]
        .findings
        .iter()
        .filter(|f| f.rule == "inline.recycle")
        .collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].status, Status::Fail);
    assert_eq!(f[0].severity, Severity::Critical);
    assert_eq!(f[0].explanation, "it is 1");
    assert!(report.fails_at(Severity::Critical));
    for format in [
        Format::Text,
        Format::Json,
        Format::Sarif,
        Format::Junit,
        Format::Markdown,
    ] {
        let out = render(&report, format, RenderOptions::default());
        assert!(out.contains("inline.recycle"), "{format:?}");
    }
}

/// The stable public surface: every `pub use` of the crate root, as
/// `module::Item` (or `module::item as name`), sorted. Parsed from
/// src/lib.rs, where every module is internal (`pub(crate)`) and only these
/// re-exports and the hidden `unstable` module are public.
fn root_reexports(lib: &str) -> Vec<String> {
    let code: String = lib
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    // only the crate root: stop at the unstable module's body
    let root = code.split("pub mod unstable").next().unwrap();
    for stmt in root.split(';') {
        let Some(at) = stmt.find("pub use ") else {
            continue;
        };
        let path = stmt[at + "pub use ".len()..].trim();
        let (base, items) = match path.split_once('{') {
            Some((base, rest)) => (base.trim_end_matches("::"), rest.trim_end_matches('}')),
            None => match path.rsplit_once("::") {
                Some((base, item)) => (base, item),
                None => ("", path),
            },
        };
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let item = item.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push(format!("{base}::{item}"));
        }
    }
    out.sort();
    out
}

/// An accidental `pub` at the crate root shows up here, and in review as a
/// change to tests/public-api.txt.
#[test]
fn stable_public_surface_is_the_checked_in_list() {
    let root = env!("CARGO_MANIFEST_DIR");
    let lib = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap();
    let listed: Vec<String> = std::fs::read_to_string(format!("{root}/tests/public-api.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "tests/public-api.txt is kept sorted");
    let actual = root_reexports(&lib);
    assert!(actual.len() >= 40, "parsed only {actual:?}");
    let added: Vec<&String> = actual.iter().filter(|a| !listed.contains(a)).collect();
    let removed: Vec<&String> = listed.iter().filter(|l| !actual.contains(l)).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "the stable API changed: new {added:?}, gone {removed:?}; if intended, update tests/public-api.txt (and docs/library.md)"
    );
    // Every module is internal except the one unstable door, which is hidden.
    let mut doors = Vec::new();
    let lines: Vec<&str> = lib.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        if t.starts_with("pub mod ") && !l.starts_with(' ') {
            doors.push(t.to_string());
            assert!(
                lines[..i]
                    .iter()
                    .rev()
                    .take(3)
                    .any(|p| p.trim() == "#[doc(hidden)]"),
                "`{t}` is public without #[doc(hidden)]"
            );
        }
        assert!(
            !(t.starts_with("pub mod ") && t.ends_with(';')),
            "`{t}`: modules are `pub(crate)`; reach internals through `unstable`"
        );
    }
    assert_eq!(doors, ["pub mod unstable {"], "one unstable module");
}

/// The stable names, used the way an embedder does: removing or renaming one
/// fails to compile.
#[test]
fn stable_names_compile_from_the_crate_root() {
    #[allow(unused_imports)]
    use driftaudit::{
        audit, diff, render, render_diff, snapshot, Assignment, BreakdownData, Change, ChangeKind,
        CoverageReason, Detection, Diff, DiffOptions, Domain, DomainCoverage, Evidence, FileChange,
        FileNotCompared, Finding, Format, FstabLine, Host, HostReport, Lookup, MountResolution,
        MountedFs, OptionLine, OptionResolution, PolicyCode, PolicyError, PolicyProblem, PolicySet,
        ReadError, RenderOptions, Report, Resolver, RuleMeta, RuleSource, Severity, Side, SideMeta,
        SnapshotMeta, SnapshotOptions, SourceKind, Status, Summary, SysctlResolution, Unreadable,
        Value, VerdictChange, Waiver, WaiverError, WaiverNote, WaiverSet,
    };
    #[allow(unused_imports)]
    use driftaudit::{
        audit_fleet, audit_upgrade, explain_rule, Brief, DiscoverError, UpgradeTarget,
        UpgradeTargetError,
    };
    let host = Host::snapshot(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/hosts/mysql-includedir-override"
    ))
    .unwrap();
    let r = Resolver::new(&host);
    let o: OptionResolution = r.option("max_connections");
    let a: &Assignment = o.effective.set().expect("set in the option files");
    let e: &Evidence = &a.at;
    assert!(e.path.starts_with("/etc/mysql/"), "{e}");
    assert!(matches!(a.value, Value::Number(_)), "{:?}", a.value);
    let _: fn(&PolicySet, &[Host]) -> Report = audit;
    let _: fn(&PolicySet, &std::path::Path) -> Result<Report, DiscoverError> = audit_fleet;
    type UpgradeAudit = fn(&PolicySet, &[Host], &[UpgradeTarget]) -> Result<Report, PolicyError>;
    let _: UpgradeAudit = audit_upgrade;
    type AddTargets = fn(&mut PolicySet, &[UpgradeTarget]) -> Result<(), PolicyError>;
    let _: AddTargets = PolicySet::add_upgrade_targets;
    let _: fn(&PolicySet, &str) -> Option<String> = explain_rule;
    let _: fn(&str) -> Result<UpgradeTarget, UpgradeTargetError> = UpgradeTarget::parse;
}

/// The `{ ... }` bodies of `head` (a line such as `pub struct Waiver {` or
/// `impl Host {`, at the start of a line) in `text`, each as its lines.
fn blocks<'a>(text: &'a str, head: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l == head {
            out.push(lines.by_ref().take_while(|l| *l != "}").collect());
        }
    }
    out
}

/// Stable types show methods, not their insides: `Waiver` and `PolicySet`
/// keep their fields private (a `Waiver`'s were `glob::Pattern`s, and
/// pushing to `PolicySet::rules` skipped the duplicate-id and overlay
/// checks), and `Host` offers only how to open, name and budget a host:
/// its confined read primitives are `pub(crate)`, reached by driftaudit's
/// own tools through `unstable::host::Reads` (issue 34).
#[test]
fn stable_types_keep_their_insides_private() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
    for (file, head) in [
        ("src/waiver.rs", "pub struct Waiver {"),
        ("src/waiver.rs", "pub struct WaiverSet {"),
        ("src/policy/set.rs", "pub struct PolicySet {"),
    ] {
        let text = read(file);
        let bodies = blocks(&text, head);
        assert_eq!(bodies.len(), 1, "`{head}` in {file}");
        assert!(bodies[0].len() > 3, "parsed {:?}", bodies[0]);
        let public: Vec<&&str> = bodies[0]
            .iter()
            .filter(|l| l.trim_start().starts_with("pub"))
            .collect();
        assert!(
            public.is_empty(),
            "{file}: `{head}` has public fields {public:?}"
        );
    }
    // What a Waiver answers with names no other crate's type.
    let waiver = read("src/waiver.rs");
    for body in blocks(&waiver, "impl Waiver {") {
        for l in body.iter().filter(|l| l.trim_start().starts_with("pub fn")) {
            assert!(!l.contains("glob"), "src/waiver.rs: {l}");
        }
    }
    // Every `pub fn` of the stable Host, wherever its impl blocks are.
    let mut host_fns = Vec::new();
    for p in crate::common::tree::rust_files(std::path::Path::new(&format!("{root}/src"))) {
        let text = std::fs::read_to_string(&p).unwrap();
        for body in blocks(&text, "impl Host {") {
            for l in body {
                if let Some(rest) = l.strip_prefix("    pub fn ") {
                    host_fns.push(crate::common::tree::leading_name(rest).to_string());
                }
            }
        }
    }
    host_fns.sort();
    assert_eq!(
        host_fns,
        [
            "bytes_read",
            "kind",
            "live",
            "name",
            "recording",
            "root",
            "snapshot",
            "with_read_budget",
            "without_openat2",
        ],
        "the stable Host's methods changed: a reader belongs in `pub(crate)` and unstable::host::Reads"
    );
}

/// The read side of the methods that replaced the fields, used as an
/// embedder does.
#[test]
fn waivers_and_policy_sets_answer_through_methods() {
    use driftaudit::{PolicySet, WaiverSet};
    let set = WaiverSet::parse(
        "waivers.yaml",
        "- rule: linux.tcp-*\n  host: web-*\n  reason: NAT is gone\n  expires: 2099-01-01\n- rule: mysql.x\n  subject: ' /etc/my.cnf '\n  reason: r\n  expires: 2099-01-02\n",
    )
    .unwrap();
    let w = set.waivers();
    type Read<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
        &'a str,
        usize,
    );
    let got: Vec<Read> = w
        .iter()
        .map(|w| {
            (
                w.rule(),
                w.subject(),
                w.host(),
                w.reason(),
                w.expires(),
                w.line(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "linux.tcp-*",
                None,
                Some("web-*"),
                "NAT is gone",
                "2099-01-01",
                1
            ),
            ("mysql.x", Some("/etc/my.cnf"), None, "r", "2099-01-02", 5),
        ]
    );
    let policies = PolicySet::builtin().unwrap();
    assert!(!policies.policies().is_empty());
    assert!(policies.rules().len() > 20);
    let first = &policies.rules()[0];
    assert!(std::ptr::eq(policies.rule(&first.id).unwrap(), first));
}
