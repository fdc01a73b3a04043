//! When the text report is coloured, through the binary: `--color
//! auto|always|never` and the environment as no-color.org and
//! bixense.com/clicolors specify them and anstream's `AutoStream::choice`
//! implements them (src/cli/common.rs). On a pipe, CLICOLOR_FORCE forces
//! colour; a terminal is a real pty from util-linux `script`, for what is
//! only visible there (CLICOLOR=0, TERM=dumb, auto). Colour never changes
//! the words: the coloured report with its SGR sequences removed (and the
//! bar's blocks read as ASCII) is the plain one, and only the text format
//! is ever coloured.

use crate::common;
use crate::common::cli;

use std::process::Command;

/// A host with failures of several severities and a memory budget bar.
const HOST: &str = "testdata/hosts/zimbra-khimki-12g";
/// Every variable that decides colour, cleared before each run.
const VARS: [&str; 5] = ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI"];

/// `check` on a pipe with exactly `env` set (of [`VARS`]) and `flags`.
fn piped(env: &[(&str, &str)], flags: &[&str]) -> String {
    let mut c = cli::cmd();
    c.args(["check", "--snapshot", HOST]).args(flags);
    report_with(c, env)
}

/// The report `c` prints from the repository root with every one of
/// [`VARS`] cleared and then exactly `env` set; the run must exit 1 (HOST
/// fails) and print UTF-8.
fn report_with(mut c: Command, env: &[(&str, &str)]) -> String {
    c.current_dir(cli::repo_root());
    for v in VARS {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    cli::exits(&mut c, 1)
}

fn coloured(out: &str) -> bool {
    out.contains("\x1b[")
}

/// The text without SGR sequences (`ESC [ params m`), the only escapes a
/// coloured report may hold.
fn strip_sgr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("\x1b[") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .expect("a complete escape sequence");
        assert_eq!(
            &after[end..end + 1],
            "m",
            "only SGR sequences: {after:.20?}"
        );
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A coloured report as plain text: SGR removed, and the memory bar's
/// Unicode blocks (drawn only with colour) as the ASCII of a plain one.
fn words(s: &str) -> String {
    strip_sgr(s)
        .chars()
        .map(|c| match c {
            '█' => '#',
            '▓' => '=',
            '▒' => '+',
            '▚' => '*',
            '░' => '.',
            c => c,
        })
        .collect()
}

#[test]
fn a_pipe_gets_no_colour_by_default() {
    assert!(!coloured(&piped(&[], &[])));
    // CLICOLOR only says colour is supported "when writing to a terminal"
    assert!(!coloured(&piped(&[("CLICOLOR", "1")], &[])));
}

#[test]
fn clicolor_force_colours_a_pipe_and_colour_keeps_the_words() {
    let plain = piped(&[], &[]);
    let forced = piped(&[("CLICOLOR_FORCE", "1")], &[]);
    assert!(coloured(&forced));
    assert_eq!(words(&forced), plain);
    // severities, the host line and the memory bar are styled
    assert!(forced.contains("\x1b[1m==>\x1b[0m"), "{forced:.200}");
    assert!(
        forced.contains("\x1b[31m█\x1b[0m"),
        "the bar's first part in red"
    );
    assert!(!plain.contains('█'), "a plain bar uses ASCII");
    // "set" means non-empty: an empty CLICOLOR_FORCE forces nothing
    assert!(!coloured(&piped(&[("CLICOLOR_FORCE", "")], &[])));
    // it forces colour "no matter what", CLICOLOR=0 included
    assert!(coloured(&piped(
        &[("CLICOLOR_FORCE", "1"), ("CLICOLOR", "0")],
        &[]
    )));
}

#[test]
fn no_color_wins_over_clicolor_force_unless_empty() {
    assert!(!coloured(&piped(
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")],
        &[]
    )));
    // no-color.org: "when present and not an empty string"
    assert!(coloured(&piped(
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")],
        &[]
    )));
}

#[test]
fn the_color_flag_overrides_the_environment() {
    // no-color.org: per-instance command-line arguments override NO_COLOR
    assert!(coloured(&piped(
        &[("NO_COLOR", "1")],
        &["--color", "always"]
    )));
    assert!(!coloured(&piped(
        &[("CLICOLOR_FORCE", "1")],
        &["--color", "never"]
    )));
    assert!(coloured(&piped(
        &[("CLICOLOR_FORCE", "1")],
        &["--color", "auto"]
    )));
    // global: before the subcommand too, as cargo takes it
    let mut c = cli::cmd();
    c.args(["--color=always", "check", "--snapshot", HOST]);
    for v in VARS {
        c.env_remove(v);
    }
    assert!(coloured(
        &String::from_utf8(c.output().unwrap().stdout).unwrap()
    ));
    assert_eq!(cli::run(&["--color", "sometimes", "list"]).0, 2);
}

#[test]
fn only_the_text_format_is_coloured() {
    for &format in &cli::FORMATS[1..] {
        let out = piped(&[], &["--color", "always", "--format", format]);
        assert!(!out.contains('\x1b'), "{format}");
    }
}

/// `check` on a pty (util-linux `script`): what the terminal received, or
/// `None` after a skip.
fn on_terminal(env: &[(&str, &str)], flags: &str) -> Option<String> {
    let script = common::program("script", "bsdutils")?;
    let cmd = format!("'{}' check --snapshot {HOST} {flags}", cli::BIN);
    let mut c = Command::new(script);
    c.args(["-q", "-e", "-c", &cmd, "/dev/null"]);
    let text = report_with(c, env);
    assert!(
        text.contains("==>"),
        "the report reached the terminal: {text:.200}"
    );
    Some(text)
}

#[test]
fn a_terminal_is_coloured_unless_told_otherwise() {
    let Some(auto) = on_terminal(&[("TERM", "xterm-256color")], "") else {
        return;
    };
    assert!(coloured(&auto), "auto on a terminal");
    assert_eq!(words(&auto.replace("\r\n", "\n")), piped(&[], &[]));
    let term = [("TERM", "xterm-256color")];
    let off = |extra: &[(&str, &str)], flags: &str| {
        let env: Vec<(&str, &str)> = term.iter().chain(extra).copied().collect();
        !coloured(&on_terminal(&env, flags).unwrap())
    };
    assert!(off(&[("NO_COLOR", "1")], ""), "NO_COLOR");
    assert!(
        off(&[("CLICOLOR", "0")], ""),
        "CLICOLOR=0: do not output colour"
    );
    assert!(off(&[], "--color never"));
    assert!(!off(&[("CLICOLOR", "1")], ""));
    // a terminal that says it cannot do colour
    assert!(!coloured(&on_terminal(&[("TERM", "dumb")], "").unwrap()));
    // ... unless CLICOLOR says it can
    assert!(coloured(
        &on_terminal(&[("TERM", "dumb"), ("CLICOLOR", "1")], "").unwrap()
    ));
}
