//! Why the tests could not run (exit code 2): every problem of every test
//! file, each placed at file, line and column with its source line and a
//! caret, or nothing to run, or a path that cannot be read. Data only:
//! must not find, load or print anything.

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
