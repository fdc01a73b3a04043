//! The raw test-file spec: serde types for a `*.test.yaml` file as written,
//! every value a problem can point at wrapped in `Spanned` (line and
//! column). Must not validate, read a snapshot or run anything: that is
//! `policytest`'s job.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::policy::ParamValue;

/// A policy test file as written (docs/policy-language.md, "Policy tests").
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFileSpec {
    /// Policy files or directories under test, relative to the test file.
    /// Without it: `X.yaml` next to `X.test.yaml`, else every policy file in
    /// the test file's directory.
    #[serde(default)]
    pub policies: Option<Vec<Spanned<String>>>,
    /// Load the built-in policies too (before `policies`), as `check` does
    /// without `--no-builtin`: for tests of site overlays and of the
    /// built-in rules themselves.
    #[serde(default)]
    pub builtin: Option<Spanned<bool>>,
    /// Upgrade targets (`mariadb=10.11`), as `check --target`: their
    /// `upgrade.*` rules join the rules under test (registered after the
    /// built-in policies and before `policies`, whose overlays reach them).
    #[serde(default)]
    pub targets: Vec<Spanned<String>>,
    /// The cases, each one snapshot and its expected verdicts.
    pub cases: Vec<CaseSpec>,
}

/// One case: a snapshot (a directory or inline files) and what the rules
/// must say about it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSpec {
    /// What the case shows, one line.
    pub name: Spanned<String>,
    /// A snapshot directory, relative to the test file.
    #[serde(default)]
    pub snapshot: Option<Spanned<String>>,
    /// Inline files forming a tiny snapshot: host path -> content.
    #[serde(default)]
    pub files: Option<BTreeMap<Key, Spanned<String>>>,
    /// Parameter overrides, as `--set NAME=VALUE` (`NAME` or `POLICY.NAME`).
    #[serde(default)]
    pub params: BTreeMap<Key, Spanned<ParamValue>>,
    /// A waiver file applied to the report, relative to the test file.
    #[serde(default)]
    pub waivers: Option<Spanned<String>>,
    /// The date waivers are judged on (`YYYY-MM-DD`; default today).
    #[serde(default)]
    pub today: Option<Spanned<String>>,
    /// The expected verdicts.
    pub expect: Spanned<Vec<ExpectSpec>>,
}

/// One expected verdict: a rule (and optionally one subject) and a status.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectSpec {
    /// Rule id (`linux.tcp-tw-recycle`).
    pub rule: Spanned<String>,
    /// One subject of the rule's findings (`net.ipv4.tcp_tw_recycle`,
    /// `/opt/zimbra/db`); without it the verdict is the rule's over all
    /// its findings.
    #[serde(default)]
    pub subject: Option<Spanned<String>>,
    /// `pass`, `fail`, `skip`, `unknown`, `error`, `waived` (the report's
    /// statuses) or `none` (the rule reports nothing about the subject).
    pub status: Spanned<String>,
}

/// A mapping key with its place in the file, ordered by its text.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct Key(pub Spanned<String>);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.value == other.0.value
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.0.value.cmp(&other.0.value)
    }
}
