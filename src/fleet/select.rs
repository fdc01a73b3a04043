//! Which of a fleet's snapshot folders one run audits: `--shard K/N` (the
//! partition is `report/shard.rs`, re-exported here) and `--changed-since
//! REV` (folders with changes in git since a commit). Runs `git` read-only
//! for the latter; reads no host data, prints nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use crate::report::shard::{bucket, Shard, ShardError, MAX_SHARDS};

/// Files that changed in git since a commit, relative to the fleet
/// directory: what `--changed-since` audits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedSince {
    /// The revision as given.
    pub rev: String,
    /// Changed paths (tracked files that differ from `rev` in the working
    /// tree, staged or not, including deletions and both sides of a
    /// rename, plus untracked files not ignored), relative to the fleet directory.
    pub paths: BTreeSet<PathBuf>,
}

/// Why `--changed-since` could not tell what changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChangedSinceError {
    /// `git` could not be started.
    #[error("--changed-since needs git: cannot run `git`: {0}")]
    NoGit(String),
    /// The fleet directory is not inside a git work tree.
    #[error("--changed-since: `{dir}` is not in a git repository ({message})")]
    NotARepository {
        /// The fleet directory.
        dir: String,
        /// What git said.
        message: String,
    },
    /// The revision names no commit.
    #[error("--changed-since: `{rev}` is not a commit of the repository of `{dir}`; give a commit, branch or tag (in CI, fetch enough history, e.g. `fetch-depth: 0`)")]
    BadRevision {
        /// As given.
        rev: String,
        /// The fleet directory.
        dir: String,
    },
    /// git failed otherwise.
    #[error("--changed-since: `git {args}` in `{dir}` failed: {message}")]
    Git {
        /// The git arguments.
        args: String,
        /// The fleet directory.
        dir: String,
        /// What git said.
        message: String,
    },
}

impl ChangedSince {
    /// Ask git, in the repository holding `dir`, which files under `dir`
    /// differ from `rev`: `git diff --name-only -z --no-renames --relative
    /// REV -- .` and `git ls-files -z --others --exclude-standard -- .`,
    /// both run in `dir`. Nothing is written; `rev` must not start with `-`.
    pub fn query(dir: &Path, rev: &str) -> Result<ChangedSince, ChangedSinceError> {
        let shown = dir.display().to_string();
        if rev.is_empty() || rev.starts_with('-') {
            return Err(ChangedSinceError::BadRevision {
                rev: rev.to_string(),
                dir: shown,
            });
        }
        let inside = git(dir, &["rev-parse", "--is-inside-work-tree"])?;
        if !inside.status.success() || inside.stdout.trim_ascii() != b"true" {
            return Err(ChangedSinceError::NotARepository {
                dir: shown,
                message: first_line(&inside.stderr)
                    .unwrap_or_else(|| "not inside a work tree".into()),
            });
        }
        let commit = format!("{rev}^{{commit}}");
        let verify = git(dir, &["rev-parse", "--verify", "--quiet", &commit])?;
        if !verify.status.success() {
            return Err(ChangedSinceError::BadRevision {
                rev: rev.to_string(),
                dir: shown,
            });
        }
        let mut paths = BTreeSet::new();
        let diff_args = [
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--relative",
            rev,
            "--",
            ".",
        ];
        let untracked_args = [
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--",
            ".",
        ];
        for args in [&diff_args[..], &untracked_args[..]] {
            let out = git(dir, args)?;
            if !out.status.success() {
                return Err(ChangedSinceError::Git {
                    args: args.join(" "),
                    dir: shown,
                    message: first_line(&out.stderr).unwrap_or_else(|| out.status.to_string()),
                });
            }
            for p in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
                paths.insert(path_of(p));
            }
        }
        Ok(ChangedSince {
            rev: rev.to_string(),
            paths,
        })
    }

    /// Whether anything at or under the snapshot folder `rel` (relative to
    /// the fleet directory; `.` or empty for the fleet directory itself) changed.
    pub fn touches(&self, rel: &Path) -> bool {
        let rel: PathBuf = rel
            .components()
            .filter(|c| matches!(c, std::path::Component::Normal(_)))
            .collect();
        if rel.as_os_str().is_empty() {
            return !self.paths.is_empty();
        }
        // Path order is by component, so everything under `rel` follows it.
        self.paths
            .range(rel.clone()..)
            .next()
            .is_some_and(|p| p.starts_with(&rel))
    }
}

fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.trim_start_matches("fatal: ").to_string())
}

fn git(dir: &Path, args: &[&str]) -> Result<std::process::Output, ChangedSinceError> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| ChangedSinceError::NoGit(e.to_string()))
}

/// What a fleet run audits of the folders discovery finds.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Only this shard's folders.
    pub shard: Option<Shard>,
    /// Only folders with changes since a commit.
    pub changed: Option<ChangedSince>,
}

impl Selection {
    /// Whether the folder at `rel` (relative to the fleet directory) is audited.
    pub fn selects(&self, rel: &Path) -> bool {
        self.shard.is_none_or(|s| s.contains(rel))
            && self.changed.as_ref().is_none_or(|c| c.touches(rel))
    }

    /// Whether every discovered folder is audited.
    pub fn is_all(&self) -> bool {
        self.shard.is_none() && self.changed.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_paths_select_the_snapshot_folders_that_hold_them() {
        let c = ChangedSince {
            rev: "HEAD".into(),
            paths: ["dc1/db1/etc/my.cnf", "dc1/db10/x", "README.md"]
                .iter()
                .map(PathBuf::from)
                .collect(),
        };
        assert!(c.touches(Path::new("dc1/db1")));
        assert!(c.touches(Path::new("dc1/db10")));
        assert!(!c.touches(Path::new("dc1/db")));
        assert!(!c.touches(Path::new("dc1/db2")));
        assert!(!c.touches(Path::new("dc2/db1")));
        assert!(c.touches(Path::new(".")));
        let none = ChangedSince::default();
        assert!(!none.touches(Path::new(".")) && !none.touches(Path::new("a")));
    }
}
