//! Test helpers shared by the integration tests: where the shared corpus is
//! and whether a reference tool can run. Off CI a missing input skips the
//! test with one visible line saying what and why; with `CI=true` it fails
//! the test. Nothing here decides a test's verdict.
#![allow(dead_code)] // each test crate uses a different part

pub mod audit;
pub mod browser;
pub mod cli;
pub mod doc_examples;
pub mod fleet;
pub mod git;
pub mod mariadb;
pub mod mountns;
pub mod patch;
pub mod timeout;
pub mod tree;

use std::io::Write;
use std::path::{Path, PathBuf};

/// `CI=true`: a missing corpus or reference tool is a failure, not a skip.
pub fn ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

/// Skip the running test with one line on stderr, or fail it under `CI=true`.
/// The line goes to the real stderr, past libtest's output capture, so it is
/// visible in a plain `cargo test`.
pub fn skip(what: &str, why: &str) {
    let test = test_name();
    if ci() {
        panic!("{test}: {what} ({why}); CI=true requires it");
    }
    let _ = writeln!(std::io::stderr(), "skipped {test}: {what} ({why})");
}

/// The shared corpus: `$DRIFTAUDIT_CORPUS`, else `../shared/corpus` beside
/// the checkout (where CI puts it; a user's clone has none).
pub fn corpus_root() -> PathBuf {
    match std::env::var_os("DRIFTAUDIT_CORPUS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// One directory of the shared corpus (`sub` such as `mycnf`), or `None`
/// after [`skip`] when it is not there.
pub fn corpus_dir(sub: &str) -> Option<PathBuf> {
    let d = corpus_root().join(sub);
    if d.is_dir() {
        return Some(d);
    }
    skip(
        &format!("needs the shared corpus `{}`", d.display()),
        "not found; set DRIFTAUDIT_CORPUS to the corpus directory",
    );
    None
}

/// An executable on `PATH` or in the sbin directories (where Debian keeps
/// mkfs.ext4, dumpe2fs and mariadbd, often off a user's `PATH`).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .filter(|d| !d.is_empty())
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| is_executable(p));
    found
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `DRIFTAUDIT_HIDE_REFERENCE_TOOLS=1`: tests behave as on a machine
/// without any reference tool (CI's fresh-clone run).
pub fn tools_hidden() -> bool {
    std::env::var("DRIFTAUDIT_HIDE_REFERENCE_TOOLS").as_deref() == Ok("1")
}

/// A reference tool the test compares with, or `None` after [`skip`].
/// `package` says where it comes from (`apt-get install PACKAGE`).
/// `DRIFTAUDIT_HIDE_REFERENCE_TOOLS=1` makes every tool count as missing:
/// CI sets it on its fresh-clone run to prove the suite passes without them.
pub fn tool(name: &str, package: &str) -> Option<PathBuf> {
    match find_tool(name) {
        Some(p) if !tools_hidden() => Some(p),
        _ => {
            skip(
                &format!("needs the reference tool `{name}`"),
                &format!("not installed; apt-get install {package}"),
            );
            None
        }
    }
}

/// A program a test runs as a means, not as a reference (git, python3):
/// found as [`tool`] finds one but never hidden, or `None` after [`skip`].
pub fn program(name: &str, package: &str) -> Option<PathBuf> {
    let found = find_tool(name);
    if found.is_none() {
        skip(
            &format!("needs `{name}`"),
            &format!("not installed; apt-get install {package}"),
        );
    }
    found
}

/// Whether `unshare -m` works here (root): off CI a missing one skips with
/// one line ([`skip`]); under `CI=true` it fails the test.
pub fn can_unshare(what: &str) -> bool {
    let ok = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip(what, "needs `unshare -m` (run as root)");
    }
    ok
}

/// Run `script` with `sh -ec` in a private mount namespace (mounts made
/// there never touch the real host), `$DRIFTAUDIT` set to `bin`.
pub fn in_private_mounts(bin: &Path, script: &str) -> std::process::Output {
    std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("DRIFTAUDIT", bin)
        .output()
        .expect("run unshare")
}

/// Write `script` to `dir/steps.sh`, check it with `sh -n`, and run it with
/// `stubs` first on PATH: each records the words it was given into
/// `dir/NAME.args` (NUL-separated); `su` runs `su - USER -c CMD`'s CMD with
/// `sh -c`. Returns each recording stub's words, in `stubs` order. A stub
/// run is how a test sees exactly what a generated script hands a program
/// that cannot run here (zmlocalconfig, mount on a real device).
pub fn run_with_stubs(dir: &Path, script: &str, stubs: &[&str]) -> Vec<(String, Vec<String>)> {
    let bin = dir.join("stubs");
    std::fs::create_dir_all(&bin).unwrap();
    for s in stubs {
        let body = if *s == "su" {
            // su - USER -c CMD: run CMD as a shell would (the stubs stay on PATH)
            "#!/bin/sh\n[ \"$1\" = - ] && [ \"$3\" = -c ] || exit 97\nexec sh -c \"$4\"\n"
                .to_string()
        } else {
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >> '{}/{s}.args'\n",
                dir.display()
            )
        };
        let p = bin.join(s);
        std::fs::write(&p, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = dir.join("steps.sh");
    std::fs::write(&path, script).unwrap();
    let sh = |c: &mut std::process::Command, what: &str| {
        cli::ok(c.arg(&path), &format!("{what}\n{script}\n"));
    };
    sh(std::process::Command::new("sh").arg("-n"), "sh -n");
    let path_var = format!("{}:/usr/bin:/bin", bin.display());
    sh(
        std::process::Command::new("sh").env("PATH", path_var),
        "the script",
    );
    stubs
        .iter()
        .filter(|s| **s != "su")
        .map(|s| {
            let words = std::fs::read(dir.join(format!("{s}.args"))).unwrap_or_default();
            let words = String::from_utf8(words).unwrap();
            let mut w: Vec<String> = words.split('\0').map(str::to_string).collect();
            w.pop();
            (s.to_string(), w)
        })
        .collect()
}

/// Build a Debian package from `tree` (files laid out as installed) into
/// `out` with `dpkg-deb --build`, after writing `tree/DEBIAN/control` for
/// package `driftaudit` at this crate's version and this machine's
/// architecture (`dpkg --print-architecture`). Panics when dpkg-deb fails.
pub fn build_deb(tree: &Path, out: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let arch = std::process::Command::new("dpkg")
        .arg("--print-architecture")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "amd64".into());
    let debian = tree.join("DEBIAN");
    std::fs::create_dir_all(&debian).unwrap();
    std::fs::set_permissions(&debian, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        debian.join("control"),
        format!(
            "Package: driftaudit\nVersion: {}-0test\nArchitecture: {arch}\nMaintainer: driftaudit tests <tests@example.invalid>\nSection: admin\nPriority: optional\nDescription: driftaudit built by the integration tests\n the test binary alone, as usr/bin/driftaudit\n",
            env!("CARGO_PKG_VERSION")
        ),
    )
    .unwrap();
    cli::ok(
        std::process::Command::new("dpkg-deb")
            .args(["--root-owner-group", "--build"])
            .arg(tree)
            .arg(out),
        &format!("dpkg-deb --build {}", tree.display()),
    );
}

/// The driftaudit .deb the integration tests install: `$DRIFTAUDIT_DEB`
/// (`.ci/run` sets it to scripts/package's package), else one built into
/// `dir` with [`build_deb`] holding this test build's binary as
/// usr/bin/driftaudit, so the package path is tested without cargo-deb.
/// `None` after [`skip`] when dpkg-deb is missing.
pub fn driftaudit_deb(dir: &Path) -> Option<PathBuf> {
    if let Some(deb) = std::env::var_os("DRIFTAUDIT_DEB").filter(|d| !d.is_empty()) {
        let deb = PathBuf::from(deb);
        assert!(
            deb.is_file(),
            "DRIFTAUDIT_DEB={}: no such file",
            deb.display()
        );
        return Some(deb);
    }
    program("dpkg-deb", "dpkg")?;
    let tree = dir.join("deb-tree");
    std::fs::create_dir_all(tree.join("usr/bin")).unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_driftaudit"),
        tree.join("usr/bin/driftaudit"),
    )
    .unwrap();
    let deb = dir.join("driftaudit_test.deb");
    build_deb(&tree, &deb);
    Some(deb)
}

/// A snapshot directory built from a literal tree: (host path, content)
/// pairs, parents created. Removed when the returned directory drops.
pub fn snapshot_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (path, text) in files {
        let p = dir.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().expect("a file path has a parent"))
            .expect("create the parents");
        std::fs::write(p, text).expect("write the file");
    }
    dir
}

/// `v` as a YAML double-quoted scalar: JSON's escapes, and every control
/// character (DEL and C1 too) escaped as `\uXXXX`.
pub fn yaml_quoted(v: &str) -> String {
    serde_json::to_string(v)
        .unwrap()
        .chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{:04x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Characters a host may put in a name or value that break naive output:
/// line ends, NUL, escape and bell, DEL and C1 controls, Unicode line
/// separator and bidi override, noncharacters and the replacement
/// character, the last code point, and non-ASCII letters and emoji.
pub const HOSTILE_CHARS: &[char] = &[
    '\n',
    '\r',
    '\t',
    '\0',
    '\x1b',
    '\x07',
    '\x7f',
    '\u{85}',
    '\u{9b}',
    '\u{2028}',
    '\u{202e}',
    '\u{fffd}',
    '\u{fffe}',
    '\u{ffff}',
    '\u{10ffff}',
    'é',
    '😀',
];

/// `systemd-analyze --root=ROOT cat-config sysctl.d` (no pager, no colour)
/// run with `tool`, finished; `root` must be canonical.
pub fn cat_config_sysctl_d(tool: impl AsRef<std::ffi::OsStr>, root: &Path) -> std::process::Output {
    std::process::Command::new(tool)
        .arg(format!("--root={}", root.display()))
        .args(["cat-config", "sysctl.d"])
        .env("SYSTEMD_PAGER", "")
        .env("SYSTEMD_COLORS", "0")
        .output()
        .expect("systemd-analyze runs")
}

/// A program from the CI virtualenv (`$DRIFTAUDIT_CI_VENV/bin/NAME`), else
/// from `PATH`, or `None` after [`skip`] saying `how` to install it.
pub fn venv_program(name: &str, how: &str) -> Option<PathBuf> {
    let venv = std::env::var_os("DRIFTAUDIT_CI_VENV")
        .map(|v| PathBuf::from(v).join("bin").join(name))
        .filter(|p| p.is_file());
    let found = venv.or_else(|| find_tool(name));
    if found.is_none() {
        skip(&format!("needs `{name}`"), &format!("not installed; {how}"));
    }
    found
}

/// Every reference tool of `wanted` (name, package) as [`tool`] finds it,
/// or `None` after [`skip`] for the first one missing.
pub fn tools<const N: usize>(wanted: [(&str, &str); N]) -> Option<[PathBuf; N]> {
    let mut found = Vec::with_capacity(N);
    for (name, package) in wanted {
        found.push(tool(name, package)?);
    }
    found.try_into().ok()
}

/// Fail the test, listing `findings`, unless every one has `status`.
#[track_caller]
pub fn all_are<F>(findings: &[F], status: driftaudit::unstable::report::Status)
where
    F: std::borrow::Borrow<driftaudit::unstable::report::Finding> + std::fmt::Debug,
{
    assert!(
        findings.iter().all(|f| f.borrow().status == status),
        "not all {status:?}: {findings:#?}"
    );
}

/// The findings of `rule` among `findings`, in order.
pub fn of_rule<'a>(
    findings: &'a [driftaudit::unstable::report::Finding],
    rule: &str,
) -> Vec<&'a driftaudit::unstable::report::Finding> {
    findings.iter().filter(|f| f.rule == rule).collect()
}
