//! Error messages follow the house (Cedar) style, whichever operation fails:
//! after `driftaudit: `, lowercase, no trailing period, no Rust or OS error
//! decoration (`(os error 2)`), user input in backticks, one line per
//! problem, exit code 2. Run through the built binary, one case per
//! operation (load, param, filter, snapshot, diff, fleet discovery,
//! waivers, explain).

/// Exit code and stderr of `driftaudit ARGS`.
fn run(args: &[&str]) -> (i32, String) {
    let (code, _, err) = crate::common::cli::run(args);
    (code, err)
}

#[test]
fn every_operation_fails_with_one_lowercase_line_naming_the_input_in_backticks() {
    let (tmp, file) = crate::common::tree::temp_file("a-file", "x");
    let full = tmp.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), "x").unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (file, full, empty) = (
        file.to_str().unwrap(),
        full.to_str().unwrap(),
        empty.to_str().unwrap(),
    );
    let missing = "/nonexistent/driftaudit-test";
    // (arguments, the input the message must quote in backticks)
    let cases: &[(&[&str], &str)] = &[
        (&["check", "--policy", missing], missing),
        (&["check", "--set", "nope"], "`--set nope`"),
        (&["check", "--set", "nope=1"], "`nope`"),
        (&["check", "--only", "["], "`[`"),
        (&["check", "--only", "nope.rule"], "`--only nope.rule`"),
        (&["check", "--snapshot", missing], missing),
        (&["check", "--snapshot", empty], empty),
        (&["check", "--waivers", missing], missing),
        (&["check", "--fleet", missing], missing),
        (&["check", "--fleet", file], file),
        (&["check", "--fleet", empty], empty),
        (&["explain", "nope.rule"], "`nope.rule`"),
        (&["diff", missing, "live"], missing),
        (&["snapshot", "--out", file], file),
        (&["snapshot", "--out", full], full),
        (&["snapshot", "--out", full, "--force"], full),
    ];
    for (args, input) in cases {
        let (code, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line: {err}");
        let msg = lines[0]
            .strip_prefix("driftaudit: ")
            .unwrap_or_else(|| panic!("{args:?}: {err}"));
        assert!(
            msg.chars().next().is_some_and(|c| !c.is_uppercase()),
            "{args:?}: lowercase: {msg}"
        );
        assert!(!msg.ends_with('.'), "{args:?}: no period: {msg}");
        assert!(!msg.contains("os error"), "{args:?}: {msg}");
        let quoted = if input.starts_with('`') {
            input.to_string()
        } else {
            format!("`{input}`")
        };
        assert!(msg.contains(&quoted), "{args:?}: {quoted} in {msg}");
    }
}
