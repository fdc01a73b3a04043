//! Reading and validating test files into a [`Suite`]: each file read
//! through the capped reader and parsed (a YAML syntax error shown first),
//! its policies loaded (built-in, upgrade targets, `policies:` or the
//! default ones, each confined to the test file's directory tree), each
//! case's parameters, snapshot (or inline files, see `inline`), waivers,
//! date and expectations checked; every problem of every file collected
//! at once. Must not run a case (that is `suite`), and must never quote
//! the content of a file that is not a policy.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::host::Host;
use crate::policy::{snippet, yaml_error_parts, ParamValue, PolicyError, PolicySet};
use crate::upgrade;
use crate::waiver::WaiverSet;

use super::discover::{default_policies, discover};
use super::errors::{TestError, TestProblem};
use super::expect::LoadedExpect;
use super::results::Verdict;
use super::spec::{CaseSpec, ExpectSpec, TestFileSpec};
use super::suite::{LoadedCase, LoadedFile, Suite};
use super::MAX_TEST_BYTES;

/// Find, load and validate the test files `paths` name.
pub fn load(paths: &[PathBuf]) -> Result<Suite, TestError> {
    let files = discover(paths)?;
    let mut problems = Vec::new();
    let mut loaded = Vec::new();
    for f in &files {
        let shown = f.display().to_string();
        let bytes = crate::reader::read_file(f, MAX_TEST_BYTES).map_err(|e| TestError::Io {
            path: shown.clone(),
            reason: match e {
                crate::reader::Failure::TooLarge(_) => {
                    format!("larger than the {MAX_TEST_BYTES}-byte test file cap")
                }
                e => e.to_string(),
            },
        })?;
        let text = String::from_utf8(bytes).map_err(|e| TestError::Io {
            path: shown.clone(),
            reason: format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        })?;
        let mut l = Loader {
            path: &shown,
            dir: f.parent().unwrap_or(Path::new(".")),
            text: &text,
            problems: Vec::new(),
        };
        let file = l.file(f);
        problems.extend(l.problems);
        if let Some(file) = file {
            loaded.push(file);
        }
    }
    if problems.is_empty() {
        Ok(Suite { files: loaded })
    } else {
        Err(TestError::Invalid(problems))
    }
}

pub(super) fn line_col(at: &serde_saphyr::Location) -> (usize, usize) {
    ((at.line() as usize).max(1), (at.column() as usize).max(1))
}

pub(super) struct Loader<'a> {
    path: &'a str,
    dir: &'a Path,
    text: &'a str,
    problems: Vec<TestProblem>,
}

impl Loader<'_> {
    pub(super) fn problem(&mut self, at: (usize, usize), message: String) {
        self.problems.push(TestProblem {
            path: self.path.to_string(),
            line: at.0,
            column: at.1,
            snippet: snippet(self.text, at.0, at.1),
            message,
        });
    }

    fn file(&mut self, file: &Path) -> Option<LoadedFile> {
        let raw: TestFileSpec = match serde_saphyr::from_str(self.text) {
            Ok(r) => r,
            Err(e) => {
                // a syntax error is the one to show (see policy::compile)
                let e = match serde_saphyr::from_str::<serde::de::IgnoredAny>(self.text) {
                    Err(syntax) => syntax,
                    Ok(_) => e,
                };
                let (line, column, message) = yaml_error_parts(&e);
                self.problem((line, column), message);
                return None;
            }
        };
        let policies = self.policies(file, &raw)?;
        if raw.cases.is_empty() {
            self.problem(
                (1, 1),
                "a test file needs at least one case under `cases:`".into(),
            );
        }
        let mut names = BTreeSet::new();
        let mut cases = Vec::new();
        for c in &raw.cases {
            let at = line_col(&c.name.referenced);
            if c.name.value.trim().is_empty() {
                self.problem(at, "a case needs a `name` saying what it shows".into());
            } else if !names.insert(c.name.value.trim().to_string()) {
                self.problem(
                    at,
                    format!("duplicate case name `{}` in this file", c.name.value.trim()),
                );
            }
            if let Some(case) = self.case(&policies, c) {
                cases.push(case);
            }
        }
        Some(LoadedFile {
            path: self.path.to_string(),
            cases,
        })
    }

    /// The policies under test: `builtin`, the upgrade rules of
    /// `targets:`, then `policies:` (or the default: `X.yaml` beside
    /// `X.test.yaml`, else the directory's policy files); a policy that
    /// does not load is every one of its problems.
    fn policies(&mut self, file: &Path, raw: &TestFileSpec) -> Option<PolicySet> {
        let mut set = PolicySet::new();
        if raw.builtin.as_ref().is_some_and(|b| b.value) {
            set = match PolicySet::builtin() {
                Ok(s) => s,
                Err(e) => {
                    self.policy_error((1, 1), e);
                    return None;
                }
            };
        }
        let mut targets = Vec::new();
        for t in &raw.targets {
            match upgrade::Target::parse(t.value.trim()) {
                Ok(x) => targets.push(x),
                Err(e) => {
                    self.problem(line_col(&t.referenced), format!("`targets`: {e}"));
                    return None;
                }
            }
        }
        if let Err(e) = set.add_upgrade_targets(&targets) {
            self.policy_error((1, 1), e);
            return None;
        }
        let paths: Vec<((usize, usize), PathBuf)> = match &raw.policies {
            Some(list) => list
                .iter()
                .map(|p| (line_col(&p.referenced), self.dir.join(&p.value)))
                .collect(),
            None if raw.builtin.as_ref().is_some_and(|b| b.value) => Vec::new(),
            None => match default_policies(file) {
                Some(v) => v.into_iter().map(|p| ((1, 1), p)).collect(),
                None => {
                    self.problem(
                        (1, 1),
                        format!(
                            "no policy file next to the test file in `{}`: name them with `policies: [FILE, ...]` or set `builtin: true`",
                            self.dir.display()
                        ),
                    );
                    return None;
                }
            },
        };
        let mut ok = true;
        for (at, p) in paths {
            if !self.confined(at, "policies", &p) {
                ok = false;
                continue;
            }
            if let Err(e) = set.add_path(&p) {
                if looks_like_policy(&p) {
                    self.policy_error(at, e);
                } else {
                    // Not a policy (a key file, /etc/shadow): the loader's
                    // message would quote its text (issue 29, item 8).
                    self.problem(
                        at,
                        format!(
                            "`policies`: `{}` is not a policy file (no top-level `rules:` or `schema:`); its content is not shown",
                            p.display()
                        ),
                    );
                }
                ok = false;
            }
        }
        if ok && set.rules().is_empty() {
            self.problem((1, 1), "the policies under test hold no rules".into());
            return None;
        }
        ok.then_some(set)
    }

    /// Whether `p`, named by the test file's `field`, is inside the test
    /// file's directory tree (symbolic links resolved); if not, a problem
    /// that names it and quotes nothing of it (issue 29, item 8: a test
    /// naming `/etc/shadow` printed its first line).
    fn confined(&mut self, at: (usize, usize), field: &str, p: &Path) -> bool {
        if inside(self.dir, p) {
            return true;
        }
        self.problem(
            at,
            format!(
                "`{field}`: `{}` is outside the test file's directory `{}`; a test names files in its own directory tree only, symbolic links resolved (copy the file there)",
                p.display(),
                self.dir.display()
            ),
        );
        false
    }

    fn policy_error(&mut self, at: (usize, usize), e: PolicyError) {
        match e {
            PolicyError::Invalid(problems) => {
                for p in problems {
                    self.problems.push(TestProblem {
                        message: match &p.rule {
                            Some(r) => format!("rule `{r}`: {}", p.message),
                            None => p.message.clone(),
                        },
                        path: p.path,
                        line: p.line,
                        column: p.column,
                        snippet: p.snippet,
                    });
                }
            }
            other => self.problem(at, other.to_string()),
        }
    }

    fn case(&mut self, policies: &PolicySet, c: &CaseSpec) -> Option<LoadedCase> {
        let at = line_col(&c.name.referenced);
        let mut policies = policies.clone();
        let mut ok = true;
        for (k, v) in &c.params {
            let value = match &v.value {
                ParamValue::Bool(b) => b.to_string(),
                ParamValue::Number(n) => n.to_string(),
                ParamValue::Text(t) => t.clone(),
                other => crate::policy::param_text(other),
            };
            if let Err(e) = policies.set_param(&format!("{}={value}", k.0.value)) {
                self.problem(line_col(&k.0.referenced), format!("params: {e}"));
                ok = false;
            }
        }
        let (host, inline) = match (&c.snapshot, &c.files) {
            (Some(s), None) => {
                let dir = self.dir.join(&s.value);
                match Host::snapshot(&dir) {
                    Ok(h) => {
                        let name = h.name().to_string();
                        (Some((h, name)), None)
                    }
                    Err(e) => {
                        self.problem(
                            line_col(&s.referenced),
                            format!("snapshot `{}`: {e}", s.value),
                        );
                        (None, None)
                    }
                }
            }
            (None, Some(files)) => match self.inline(at, files) {
                Some((h, name, d)) => (Some((h, name)), Some(d)),
                None => (None, None),
            },
            (Some(s), Some(_)) => {
                self.problem(
                    line_col(&s.referenced),
                    "a case takes `snapshot` or `files`, not both".into(),
                );
                (None, None)
            }
            (None, None) => {
                self.problem(
                    at,
                    "a case needs `snapshot: DIR` or `files:` (an inline snapshot)".into(),
                );
                (None, None)
            }
        };
        let waivers = match &c.waivers {
            Some(w)
                if !self.confined(line_col(&w.referenced), "waivers", &self.dir.join(&w.value)) =>
            {
                ok = false;
                None
            }
            Some(w) => match WaiverSet::load(self.dir.join(&w.value)) {
                Ok(set) => Some(set),
                Err(e) => {
                    self.problem(line_col(&w.referenced), format!("waivers: {e}"));
                    ok = false;
                    None
                }
            },
            None => None,
        };
        let today = match &c.today {
            Some(t) if crate::waiver::valid_date(t.value.trim()) => t.value.trim().to_string(),
            Some(t) => {
                self.problem(
                    line_col(&t.referenced),
                    format!("today `{}`: expected a date YYYY-MM-DD", t.value),
                );
                ok = false;
                String::new()
            }
            None => crate::waiver::today(),
        };
        if c.expect.value.is_empty() {
            self.problem(
                line_col(&c.expect.referenced),
                "`expect` needs at least one `{ rule: ID, status: STATUS }`".into(),
            );
            ok = false;
        }
        let mut expect = Vec::new();
        for e in &c.expect.value {
            match self.expectation(&policies, e) {
                Some(x) => expect.push(x),
                None => ok = false,
            }
        }
        let (host, host_name) = host?;
        ok.then(|| LoadedCase {
            name: c.name.value.trim().to_string(),
            line: at.0,
            policies,
            host,
            host_name,
            _inline: inline,
            waivers,
            today,
            expect,
        })
    }

    fn expectation(&mut self, policies: &PolicySet, e: &ExpectSpec) -> Option<LoadedExpect> {
        let at = line_col(&e.rule.referenced);
        let rule = e.rule.value.trim();
        let mut ok = true;
        if policies.rule_or_alias(rule).is_none() {
            let ids: Vec<&str> = policies.rules().iter().map(|r| r.id.as_str()).collect();
            let s = crate::expr::suggest(rule, &ids);
            self.problem(
                at,
                format!("unknown rule `{rule}`: no policy under test defines it{s}"),
            );
            ok = false;
        }
        let verdict = Verdict::parse(e.status.value.trim());
        if verdict.is_none() {
            let hint = match e.status.value.trim() {
                "not-applicable" | "not_applicable" | "n/a" | "skipped" => {
                    " (a rule that does not apply is `skip`, as in the report)"
                }
                "passed" | "ok" => " (write `pass`)",
                "failed" | "failure" => " (write `fail`)",
                _ => "",
            };
            self.problem(
                line_col(&e.status.referenced),
                format!(
                    "unknown status `{}`: expected {}{hint}",
                    e.status.value,
                    Verdict::NAMES.join(", ")
                ),
            );
            ok = false;
        }
        let subject = e.subject.as_ref().map(|s| s.value.trim().to_string());
        if subject.as_deref() == Some("") {
            self.problem(
                line_col(&e.subject.as_ref()?.referenced),
                "`subject` is empty: name one setting or path, or leave it out".into(),
            );
            ok = false;
        }
        let verdict = verdict?;
        ok.then(|| LoadedExpect {
            rule: rule.to_string(),
            subject,
            verdict,
            line: at.0,
            column: at.1,
        })
    }
}

/// Whether `p` is inside `dir`: both resolved when `p` exists, else `p`
/// below `dir` with no `..` in what follows.
fn inside(dir: &Path, p: &Path) -> bool {
    use std::path::Component;
    match (dir.canonicalize(), p.canonicalize()) {
        (Ok(d), Ok(f)) => f.starts_with(d),
        _ => p.strip_prefix(dir).is_ok_and(|r| {
            r.components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        }),
    }
}

/// Whether the file at `p` reads as a policy: a line of its first 64 KiB
/// starts `rules:` or `schema:`. Only then do load errors quote it.
fn looks_like_policy(p: &Path) -> bool {
    use std::io::Read;
    let Ok(o) = crate::reader::open_regular(p) else {
        return false;
    };
    let mut head = Vec::new();
    if o.file.take(64 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    String::from_utf8_lossy(&head)
        .lines()
        .any(|l| l.starts_with("rules:") || l.starts_with("schema:"))
}
