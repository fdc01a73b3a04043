//! The `driftaudit` command line: argument parsing, exit codes and output
//! plumbing only; all logic lives in the library.
fn main() {}
