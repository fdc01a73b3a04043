//! Shell scripts in a private mount namespace (`unshare -m`, propagation
//! private: mounts made there never touch the real host), for the tests
//! that plant files at real paths or mount filesystems. One copy for
//! tests/storage/, tests/sysctl/ and tests/coverage/. Decides no verdict.

use std::ffi::OsStr;
use std::process::Command;

/// Whether this process runs as root (the `Uid:` line of /proc/self/status).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// How `sh` runs the script.
#[derive(Clone, Copy)]
pub enum Sh {
    /// `sh -c`: a failing command does not stop it.
    Plain,
    /// `sh -e -c`: the first failing command ends it.
    Errexit,
}

/// Run `script` with `sh` in a private mount namespace, `env` added to the
/// environment: exit code, stdout and stderr (see [`super::cli::parts`]).
pub fn run(script: &str, sh: Sh, env: &[(&str, &OsStr)]) -> (i32, String, String) {
    let mut c = Command::new("unshare");
    c.args(["-m", "--propagation", "private", "sh"]);
    if let Sh::Errexit = sh {
        c.arg("-e");
    }
    c.arg("-c").arg(script);
    c.envs(env.iter().map(|(k, v)| (k, v)));
    super::cli::parts(c.output().expect("run unshare"))
}

/// [`run`] without extra environment, failing the test with its stderr and
/// the script when it exits non-zero; its stdout.
pub fn run_ok(script: &str, sh: Sh) -> String {
    let (code, stdout, stderr) = run(script, sh, &[]);
    assert!(
        code == 0,
        "namespace script failed ({code}): {stderr}\n{script}"
    );
    stdout
}

/// The name libtest knows the test `test` of module `module` by (the
/// module path below the crate): what a child started as this test again
/// passes to `--exact`.
pub fn libtest_name(module: &str, test: &str) -> String {
    let below = module.split_once("::").map_or("", |(_, rest)| rest);
    if below.is_empty() {
        test.to_string()
    } else {
        format!("{below}::{test}")
    }
}
