//! Writes the frozen built-in policies, `src/policy/builtin_frozen.bin`:
//! the compiled model of `policies/*.yaml` as data, which a run reads
//! instead of compiling the YAML (docs/architecture.md). A dev tool, not
//! part of the library; like Ruff's `cargo dev generate-all`, it has a
//! check mode.
//!
//! ```text
//! cargo run --example freeze              # write the file (then rebuild)
//! cargo run --example freeze -- --check   # exit 1 when it is stale
//! ```
//!
//! Stale data never breaks the build: the binary then compiles the YAML
//! (slower, same rules), and the test
//! `policy::frozen::tests::frozen_builtins_are_the_compiled_yaml_and_current`
//! fails until the file is written again.

use std::process::ExitCode;

use driftaudit::unstable::policy::freeze_builtins;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/policy/builtin_frozen.bin");

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("freeze: unknown argument `{other}` (usage: freeze [--check])");
            return ExitCode::from(2);
        }
    };
    let want = match freeze_builtins() {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("freeze: the built-in policies do not compile:\n{e}");
            return ExitCode::from(2);
        }
    };
    let have = std::fs::read(PATH).unwrap_or_default();
    if have == want {
        println!("{PATH} is current ({} bytes)", want.len());
        return ExitCode::SUCCESS;
    }
    if check {
        eprintln!("{PATH} is stale: run `cargo run --example freeze` and commit it");
        return ExitCode::FAILURE;
    }
    if let Err(e) = std::fs::write(PATH, &want) {
        eprintln!("freeze: cannot write {PATH}: {e}");
        return ExitCode::from(2);
    }
    println!("wrote {PATH} ({} bytes): rebuild", want.len());
    ExitCode::SUCCESS
}
