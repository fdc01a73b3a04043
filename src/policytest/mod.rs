//! Policy tests (`driftaudit test`, docs/policy-language.md "Policy
//! tests"): finds `*.test.yaml` files, loads and validates them (every
//! problem of every file at once, each at file:line:column with the source
//! line and a caret, like policy errors), writes inline snapshots into a
//! private temporary directory that is then read through the confined
//! snapshot reader like any other snapshot, runs each case through the
//! engine (waivers applied when the case names them) and compares every
//! expected verdict with the report's. The result is data
//! ([`TestRun`]); its printers are in `render::policytest`. Must not print,
//! and never writes outside its own temporary directories.
//!
//! A rule's verdict on a host folds its findings (on one subject, when the
//! expectation names one), the first match winning: any `fail`, any
//! `error`, any `unknown`, any `waived`, any `pass`, any `skip`; `none`
//! when the rule reported nothing there (a drift rule reports only the keys
//! that differ).

pub mod spec;

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::engine::audit;
use crate::host::Host;
use crate::policy::{snippet, yaml_error_parts, ParamValue, PolicyError, PolicySet};
use crate::report::{Finding, Status};
use crate::upgrade;
use crate::waiver::WaiverSet;
use spec::{CaseSpec, ExpectSpec, TestFileSpec};

/// Largest test file read (inline snapshots are small files).
pub const MAX_TEST_BYTES: u64 = 4 * 1024 * 1024;

/// How deep below a directory argument test files are looked for.
pub const MAX_DEPTH: usize = 8;

/// Most inline files one case may write.
pub const MAX_INLINE_FILES: usize = 1000;

/// What a rule says about a subject: one of the report's statuses, or
/// nothing at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The folded status of the rule's findings.
    Status(Status),
    /// The rule reported no finding (on that subject).
    None,
}

impl Verdict {
    /// The name written in test files and printed (`fail`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Status(s) => s.as_str(),
            Verdict::None => "none",
        }
    }

    /// Every name a test file may write, in the order messages list them.
    pub const NAMES: &'static [&'static str] =
        &["pass", "fail", "skip", "unknown", "error", "waived", "none"];

    fn parse(s: &str) -> Option<Verdict> {
        Some(match s {
            "pass" => Verdict::Status(Status::Pass),
            "fail" => Verdict::Status(Status::Fail),
            "skip" => Verdict::Status(Status::Skip),
            "unknown" => Verdict::Status(Status::Unknown),
            "error" => Verdict::Status(Status::Error),
            "waived" => Verdict::Status(Status::Waived),
            "none" => Verdict::None,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fold findings into one verdict (see the module docs for the order).
pub fn fold<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Verdict {
    const ORDER: [Status; 6] = [
        Status::Fail,
        Status::Error,
        Status::Unknown,
        Status::Waived,
        Status::Pass,
        Status::Skip,
    ];
    let seen: BTreeSet<Status> = findings.into_iter().map(|f| f.status).collect();
    ORDER
        .iter()
        .find(|s| seen.contains(s))
        .map_or(Verdict::None, |s| Verdict::Status(*s))
}

/// One problem in a test file, placed at file, line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}:{column}: {message}{}",
    if .snippet.is_empty() { String::new() } else { format!("\n{}", .snippet) })]
pub struct TestProblem {
    /// Test file (or policy file, for a policy under test that does not load).
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// One line, lowercase, user input in backticks.
    pub message: String,
    /// The offending source line with a caret, ready to print.
    pub snippet: String,
}

/// Why the tests could not run (exit code 2): malformed test files, or
/// nothing to run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TestError {
    /// Every problem of every test file given.
    #[error("{}", .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<TestProblem>),
    /// A path given holds no test file.
    #[error("no policy test files (`*.test.yaml`) in `{path}`")]
    NoTests {
        /// The path as given.
        path: String,
    },
    /// A path given or a test file could not be read.
    #[error("cannot read `{path}`: {reason}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
}

impl TestError {
    /// The problems, if any.
    pub fn problems(&self) -> &[TestProblem] {
        match self {
            TestError::Invalid(p) => p,
            _ => &[],
        }
    }
}

/// The result of running test files.
#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    /// One entry per test file, in the order found.
    pub files: Vec<FileResult>,
}

/// The cases of one test file.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    /// The test file as found (relative to the working directory when given so).
    pub path: String,
    /// Its cases in file order.
    pub cases: Vec<CaseResult>,
}

/// One case: its expectations, each with what the report said.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Line of the case's `name:` in the test file.
    pub line: usize,
    /// The host name of its snapshot.
    pub host: String,
    /// Every expectation, in file order.
    pub checks: Vec<Checked>,
}

/// One expectation and the verdict the report gave.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// Rule id.
    pub rule: String,
    /// The subject, when the expectation names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What the test file expects.
    pub expected: Verdict,
    /// What the report says.
    pub actual: Verdict,
    /// Line of the expectation in the test file.
    pub line: usize,
    /// Column of the expectation's `rule:`.
    pub column: usize,
    /// Why the report says so: the explanation of the first finding with
    /// the actual status (its expected and actual values), or, for `none`,
    /// the subjects the rule did report.
    pub detail: String,
}

impl Checked {
    /// Whether the report agrees with the expectation.
    pub fn ok(&self) -> bool {
        self.expected == self.actual
    }
}

impl CaseResult {
    /// Whether every expectation of the case holds.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Checked::ok)
    }
}

/// Counts over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// Test files.
    pub files: usize,
    /// Cases.
    pub cases: usize,
    /// Cases whose every expectation held.
    pub passed: usize,
    /// Cases with a mismatch.
    pub failed: usize,
    /// Expectations.
    pub expectations: usize,
    /// Expectations the report disagreed with.
    pub mismatches: usize,
}

impl TestRun {
    /// Counts of files, cases and expectations.
    pub fn summary(&self) -> RunSummary {
        let mut s = RunSummary {
            files: self.files.len(),
            ..RunSummary::default()
        };
        for c in self.files.iter().flat_map(|f| &f.cases) {
            s.cases += 1;
            if c.passed() {
                s.passed += 1;
            } else {
                s.failed += 1;
            }
            s.expectations += c.checks.len();
            s.mismatches += c.checks.iter().filter(|k| !k.ok()).count();
        }
        s
    }

    /// Whether every case passed.
    pub fn passed(&self) -> bool {
        self.files
            .iter()
            .flat_map(|f| &f.cases)
            .all(CaseResult::passed)
    }
}

/// Test files loaded and validated, their snapshots opened: ready to run.
pub struct Suite {
    files: Vec<LoadedFile>,
}

struct LoadedFile {
    path: String,
    cases: Vec<LoadedCase>,
}

struct LoadedCase {
    name: String,
    line: usize,
    policies: PolicySet,
    /// `targets:` of the file: the upgrade checks run too.
    targets: Vec<upgrade::Target>,
    host: Host,
    host_name: String,
    // kept until the case has run: the inline snapshot's directory
    _inline: Option<tempfile::TempDir>,
    waivers: Option<WaiverSet>,
    today: String,
    expect: Vec<LoadedExpect>,
}

struct LoadedExpect {
    rule: String,
    subject: Option<String>,
    verdict: Verdict,
    line: usize,
    column: usize,
}

/// Whether a file name is a policy test's (`*.test.yaml`, `*.test.yml`).
pub fn is_test_file(name: &str) -> bool {
    name.ends_with(".test.yaml") || name.ends_with(".test.yml")
}

/// The test files `paths` name: a file as given, a directory's
/// `*.test.yaml`/`*.test.yml` files at any depth up to [`MAX_DEPTH`]
/// (sorted; symbolic links and hidden directories not followed).
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TestError> {
    let mut out = Vec::new();
    for p in paths {
        let shown = p.display().to_string();
        let meta = std::fs::metadata(p).map_err(|e| TestError::Io {
            path: shown.clone(),
            reason: crate::reader::io_message(&e),
        })?;
        if !meta.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(p)
            .max_depth(MAX_DEPTH)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                e.depth() == 0
                    || !(e.file_type().is_dir() && e.file_name().to_string_lossy().starts_with('.'))
            })
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && is_test_file(&e.file_name().to_string_lossy()))
            .map(|e| e.into_path())
            .collect();
        if found.is_empty() {
            return Err(TestError::NoTests { path: shown });
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

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

/// Find, load, validate and run the test files `paths` name.
pub fn run(paths: &[PathBuf]) -> Result<TestRun, TestError> {
    Ok(load(paths)?.run())
}

fn line_col(at: &serde_saphyr::Location) -> (usize, usize) {
    ((at.line() as usize).max(1), (at.column() as usize).max(1))
}

struct Loader<'a> {
    path: &'a str,
    dir: &'a Path,
    text: &'a str,
    problems: Vec<TestProblem>,
}

impl Loader<'_> {
    fn problem(&mut self, at: (usize, usize), message: String) {
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
        let (policies, targets) = self.policies(file, &raw)?;
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
            if let Some(case) = self.case(&policies, &targets, c) {
                cases.push(case);
            }
        }
        Some(LoadedFile {
            path: self.path.to_string(),
            cases,
        })
    }

    /// The policies under test: `builtin`, then `policies:` (or the
    /// default: `X.yaml` beside `X.test.yaml`, else the directory's policy
    /// files); a policy that does not load is every one of its problems.
    fn policies(
        &mut self,
        file: &Path,
        raw: &TestFileSpec,
    ) -> Option<(PolicySet, Vec<upgrade::Target>)> {
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
        if let Err(e) = upgrade::register(&mut set, &targets) {
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
        if ok && set.rules.is_empty() {
            self.problem((1, 1), "the policies under test hold no rules".into());
            return None;
        }
        ok.then_some((set, targets))
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

    fn case(
        &mut self,
        policies: &PolicySet,
        targets: &[upgrade::Target],
        c: &CaseSpec,
    ) -> Option<LoadedCase> {
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
            targets: targets.to_vec(),
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
            let ids: Vec<&str> = policies.rules.iter().map(|r| r.id.as_str()).collect();
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

    /// Write inline files into a fresh private directory (mode 0700, made
    /// by this process) and open it as a snapshot. Each path is a host
    /// path, relative or absolute, of plain names: no `..`, no `.`, no
    /// empty component, each written once.
    fn inline(
        &mut self,
        at: (usize, usize),
        files: &std::collections::BTreeMap<spec::Key, serde_saphyr::Spanned<String>>,
    ) -> Option<(Host, String, tempfile::TempDir)> {
        if files.is_empty() {
            self.problem(
                at,
                "`files` is empty: give at least one `PATH: CONTENT`".into(),
            );
            return None;
        }
        if files.len() > MAX_INLINE_FILES {
            self.problem(
                at,
                format!(
                    "`files` holds more than {MAX_INLINE_FILES} files: use a snapshot directory"
                ),
            );
            return None;
        }
        let dir = match tempfile::Builder::new()
            .prefix("driftaudit-test-")
            .tempdir()
        {
            Ok(d) => d,
            Err(e) => {
                self.problem(
                    at,
                    format!(
                        "cannot create a temporary directory for the inline snapshot: {}",
                        crate::reader::io_message(&e)
                    ),
                );
                return None;
            }
        };
        let mut seen = BTreeSet::new();
        let mut ok = true;
        for (k, content) in files {
            let kat = line_col(&k.0.referenced);
            let Some(rel) = inline_path(&k.0.value) else {
                self.problem(
                    kat,
                    format!(
                        "inline file `{}`: a host path of plain names (`/etc/sysctl.d/60-x.conf`), without `..` or `.`",
                        k.0.value
                    ),
                );
                ok = false;
                continue;
            };
            if !seen.insert(rel.clone()) {
                self.problem(kat, format!("inline file `{}` is given twice", k.0.value));
                ok = false;
                continue;
            }
            if let Err(e) = write_inline(dir.path(), &rel, &content.value) {
                self.problem(
                    kat,
                    format!(
                        "inline file `{}`: cannot write it: {}",
                        k.0.value,
                        crate::reader::io_message(&e)
                    ),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        match Host::snapshot(dir.path()) {
            Ok(h) => {
                // named by its files (etc/hostname, snapshot.json), else
                // `inline`, never by the random directory name
                let random = dir
                    .path()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                let name = if random.as_deref() == Some(h.name()) {
                    "inline".to_string()
                } else {
                    h.name().to_string()
                };
                Some((h, name, dir))
            }
            Err(e) => {
                self.problem(at, format!("inline snapshot: {e}"));
                None
            }
        }
    }
}

/// `X.yaml` (or `X.yml`) beside `X.test.yaml`, else every policy file of the
/// test file's directory; `None` when there is none.
fn default_policies(test: &Path) -> Option<Vec<PathBuf>> {
    let dir = test.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let name = test.file_name()?.to_string_lossy().into_owned();
    let stem = name
        .strip_suffix(".test.yaml")
        .or_else(|| name.strip_suffix(".test.yml"));
    if let Some(stem) = stem {
        for ext in ["yaml", "yml"] {
            let p = dir.join(format!("{stem}.{ext}"));
            if p.is_file() {
                return Some(vec![p]);
            }
        }
    }
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
            matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
                && p.is_file()
                && !n.as_deref().is_some_and(is_test_file)
        })
        .collect();
    all.sort();
    (!all.is_empty()).then_some(all)
}

/// The relative path an inline file is written at, or `None` when the
/// name is not a plain host path.
fn inline_path(name: &str) -> Option<PathBuf> {
    let rel = name.trim_start_matches('/');
    if rel.is_empty() || rel.contains('\0') {
        return None;
    }
    let mut out = PathBuf::new();
    for part in rel.split('/') {
        if part.is_empty() {
            return None;
        }
        match Path::new(part).components().next() {
            Some(Component::Normal(_)) if part != "." => out.push(part),
            _ => return None,
        }
    }
    Some(out)
}

/// Write one inline file below `root` (a directory this process made and
/// no one else can write into), creating its parents; never follows or
/// replaces an existing entry.
fn write_inline(root: &Path, rel: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    f.write_all(content.as_bytes())
}

impl Suite {
    /// How many cases the suite holds.
    pub fn cases(&self) -> usize {
        self.files.iter().map(|f| f.cases.len()).sum()
    }

    /// Run every case: audit its snapshot with its policies, apply its
    /// waivers, and compare each expectation with the report.
    pub fn run(&self) -> TestRun {
        TestRun {
            files: self
                .files
                .iter()
                .map(|f| FileResult {
                    path: f.path.clone(),
                    cases: f.cases.iter().map(run_case).collect(),
                })
                .collect(),
        }
    }
}

fn run_case(c: &LoadedCase) -> CaseResult {
    let hosts = std::slice::from_ref(&c.host);
    let mut report = audit(&c.policies, hosts);
    upgrade::extend_report(&mut report, hosts, &c.targets, &c.policies);
    if let Some(w) = &c.waivers {
        w.apply(&mut report, &c.today);
    }
    let findings: &[Finding] = report
        .hosts
        .first()
        .map(|h| h.findings.as_slice())
        .unwrap_or_default();
    let checks = c.expect.iter().map(|e| check(findings, e)).collect();
    CaseResult {
        name: c.name.clone(),
        line: c.line,
        host: c.host_name.clone(),
        checks,
    }
}

/// Whether a finding is about `subject`: one of its subjects, or all of
/// them as the report lists them (`a, b`).
fn about(f: &Finding, subject: &str) -> bool {
    f.subject.iter().any(|s| s == subject) || f.subject.join(", ") == subject
}

fn check(findings: &[Finding], e: &LoadedExpect) -> Checked {
    let of_rule: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.rule == e.rule || f.alias.as_deref() == Some(e.rule.as_str()))
        .collect();
    let chosen: Vec<&Finding> = match &e.subject {
        Some(s) => of_rule.iter().copied().filter(|f| about(f, s)).collect(),
        None => of_rule.clone(),
    };
    let actual = fold(chosen.iter().copied());
    let detail = match actual {
        Verdict::Status(status) => chosen
            .iter()
            .find(|f| f.status == status)
            .map(|f| describe(f))
            .unwrap_or_default(),
        Verdict::None if of_rule.is_empty() => "the rule reported no finding".to_string(),
        Verdict::None => {
            let mut subjects: Vec<String> = of_rule
                .iter()
                .filter(|f| !f.subject.is_empty())
                .map(|f| f.subject.join(", "))
                .collect();
            subjects.dedup();
            let n = subjects.len();
            subjects.truncate(8);
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            if subjects.is_empty() {
                format!(
                    "the rule reported no finding on this subject (it reported {} without a subject: {})",
                    of_rule.len(),
                    describe(of_rule[0])
                )
            } else {
                format!(
                    "the rule reported no finding on this subject; its subjects: {}{more}",
                    subjects.join("; ")
                )
            }
        }
    };
    Checked {
        rule: e.rule.clone(),
        subject: e.subject.clone(),
        expected: e.verdict,
        actual,
        line: e.line,
        column: e.column,
        detail,
    }
}

/// A finding in one line: its subject, its value and what the rule wants,
/// and the first line of its explanation (cut at 240 characters).
fn describe(f: &Finding) -> String {
    let mut head = Vec::new();
    if !f.subject.is_empty() {
        head.push(f.subject.join(", "));
    }
    if let Some(a) = &f.actual {
        head.push(format!("value {a}"));
    }
    if let Some(x) = &f.expected {
        head.push(format!("rule expects {x}"));
    }
    let why = f.explanation.trim().lines().next().unwrap_or("").trim();
    let why: String = if why.chars().count() > 240 {
        format!("{}…", why.chars().take(240).collect::<String>())
    } else {
        why.to_string()
    };
    let head = head.join(", ");
    match (head.is_empty(), why.is_empty()) {
        (true, _) => why,
        (false, true) => head,
        (false, false) => format!("{head}; {why}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_paths_are_plain_host_paths() {
        assert_eq!(
            inline_path("/etc/sysctl.d/60-x.conf"),
            Some(PathBuf::from("etc/sysctl.d/60-x.conf"))
        );
        assert_eq!(
            inline_path("proc/sys/kernel/osrelease"),
            Some(PathBuf::from("proc/sys/kernel/osrelease"))
        );
        for bad in [
            "",
            "/",
            "../etc/x",
            "etc/../../x",
            "etc//x",
            "./etc/x",
            "etc/.",
            "a\0b",
        ] {
            assert_eq!(inline_path(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_fold_takes_the_worst_status_and_none_for_nothing() {
        let f = |s: Status| {
            Finding::new(
                "r",
                "p",
                "t",
                crate::policy::Severity::Low,
                s,
                crate::policy::RuleSource {
                    path: "p.yaml".into(),
                    line: 1,
                },
            )
        };
        assert_eq!(fold(std::iter::empty()), Verdict::None);
        assert_eq!(
            fold(&[f(Status::Pass), f(Status::Skip)]),
            Verdict::Status(Status::Pass)
        );
        assert_eq!(
            fold(&[f(Status::Pass), f(Status::Waived)]),
            Verdict::Status(Status::Waived)
        );
        assert_eq!(
            fold(&[f(Status::Unknown), f(Status::Fail)]),
            Verdict::Status(Status::Fail)
        );
        assert_eq!(fold(&[f(Status::Skip)]), Verdict::Status(Status::Skip));
    }
}
