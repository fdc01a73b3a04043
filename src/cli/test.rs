//! `driftaudit test [PATH...]`: run the policy test files (`*.test.yaml`)
//! the paths name and write the result: text (one line per case, each
//! mismatch at its file:line:column, a summary) or JUnit XML. Exit 0 when
//! every case passed, 1 on any mismatch, 2 on a malformed test file (every
//! problem, with file, line, column and caret, like policy errors).

use clap::{Args, ValueEnum};

use super::common::{write_out, Exit};

/// `test --format`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestFormat {
    /// One line per case, mismatches under it, a summary.
    Text,
    /// JUnit XML for CI test reports: a suite per test file, a test case per case.
    Junit,
}

#[derive(Args, Debug)]
pub(crate) struct TestArgs {
    /// Test files, or directories searched for `*.test.yaml` / `*.test.yml`
    /// (default: the working directory).
    #[arg(value_name = "PATH")]
    pub(crate) paths: Vec<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    pub(crate) format: TestFormat,
    /// Also list every expectation that held (text format).
    #[arg(long, short)]
    pub(crate) verbose: bool,
}

pub(crate) fn run(a: TestArgs) -> Exit {
    let paths = if a.paths.is_empty() {
        vec![std::path::PathBuf::from(".")]
    } else {
        a.paths
    };
    let result = match driftaudit::unstable::policytest::run(&paths) {
        Ok(r) => r,
        Err(e) => return e.into(),
    };
    let text = match a.format {
        TestFormat::Text => driftaudit::unstable::render::policytest::text(&result, a.verbose),
        TestFormat::Junit => driftaudit::unstable::render::policytest::junit(&result),
    };
    if let Err(e) = write_out(&text) {
        return e.into();
    }
    if result.passed() {
        Exit::Clean
    } else {
        Exit::Findings
    }
}
