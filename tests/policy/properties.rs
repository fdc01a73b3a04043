//! Property tests for every parser on main: arbitrary strings and bytes never
//! panic and finish in bounded time; round trips where the format has one
//! (octal escapes, sysctl key normalisation, line numbers within the input).
//! This suite is the CI gate for hostile input; fuzz/ runs the same entry
//! points longer where cargo-fuzz is available.

use std::time::{Duration, Instant};

use proptest::prelude::*;

use driftaudit::unstable::parse::{
    self, ext4, fstab, localconfig, meminfo, mountinfo, mycnf, mysqlvars, sysctl,
};

/// Any single parse of inputs this small must finish well inside this.
const BOUND: Duration = Duration::from_secs(2);

fn bounded<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    let took = t.elapsed();
    assert!(took < BOUND, "{what} took {took:?}");
    v
}

/// Text shaped like config files: keys, separators, comments, quotes,
/// escapes, brackets, includes, XML, CR and NUL, so the parsers' branches are hit.
fn configish() -> impl Strategy<Value = String> {
    let atoms = prop::collection::vec(
        prop_oneof![
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just(" = ".to_string()),
            Just("=".to_string()),
            Just("#".to_string()),
            Just(";".to_string()),
            Just("[mysqld]\n".to_string()),
            Just("[".to_string()),
            Just("!include ".to_string()),
            Just("!includedir /etc/mysql/conf.d/\n".to_string()),
            Just("\\".to_string()),
            Just("\\040".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just("\t".to_string()),
            Just("\0".to_string()),
            Just("-".to_string()),
            Just("*".to_string()),
            Just("/".to_string()),
            Just(".".to_string()),
            Just("${".to_string()),
            Just("}".to_string()),
            Just("<key name=\"a\"><value>".to_string()),
            Just("</value></key>".to_string()),
            Just("<localconfig>".to_string()),
            Just("</localconfig>".to_string()),
            Just("MemTotal:".to_string()),
            Just(" kB".to_string()),
            Just("net.ipv4.tcp_tw_recycle".to_string()),
            Just("innodb_buffer_pool_size".to_string()),
            "[a-z_.]{1,12}",
            "[0-9]{1,25}",
            "\\PC{0,8}",
        ],
        0..200,
    );
    atoms.prop_map(|v| v.concat())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        configish(),
        any::<String>(),
        prop::collection::vec(any::<u8>(), 0..2048)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

fn line_count(s: &str) -> usize {
    s.split('\n').count()
}

/// Escape as the kernel does for mount fields: space, tab, newline, backslash.
fn escape_octal(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            ' ' => out.push_str("\\040"),
            '\t' => out.push_str("\\011"),
            '\n' => out.push_str("\\012"),
            '\\' => out.push_str("\\134"),
            c => out.push(c),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn sysctl_conf_never_panics_and_lines_are_in_range(s in any_text()) {
        let (lines, issues) = bounded("sysctl conf", || sysctl::parse_conf(&s));
        let n = line_count(&s);
        for l in &lines {
            let ln = match l {
                sysctl::ConfLine::Assign { line, .. } | sysctl::ConfLine::Exclude { line, .. } => *line,
            };
            prop_assert!(ln >= 1 && ln <= n);
        }
        for i in &issues {
            prop_assert!(i.line >= 1 && i.line <= n);
        }
    }

    #[test]
    fn sysctl_capture_and_meminfo_never_panic_and_name_lines_of_the_text(s in any_text()) {
        let n = line_count(&s);
        let (vals, issues) = bounded("sysctl capture", || sysctl::parse_capture(&s));
        prop_assert!(vals.iter().all(|v| v.line >= 1 && v.line <= n));
        prop_assert!(issues.iter().all(|i| i.line >= 1 && i.line <= n));
        let (fields, issues) = bounded("meminfo", || meminfo::parse(&s));
        prop_assert!(fields.iter().all(|f| f.line >= 1 && f.line <= n));
        prop_assert!(issues.iter().all(|i| i.line >= 1 && i.line <= n));
    }

    #[test]
    fn sysctl_normalize_key_is_idempotent(k in "[a-z0-9_-]{1,8}([./][a-z0-9_*-]{1,8}){0,5}") {
        // keys as written in files: components joined by `.` or `/`, no empty
        // component (a leading `/` followed by dots is not idempotent: "/a.b"
        // -> "a/b" -> "a.b"; such keys do not occur in real files)
        let once = sysctl::normalize_key(&k);
        prop_assert_eq!(sysctl::normalize_key(&once), once.clone());
        // the /proc/sys path of a normalised key normalises back to it
        let path = sysctl::key_to_proc_path(&once);
        prop_assert_eq!(sysctl::normalize_key(&path), once);
    }

    #[test]
    fn swap_dot_slash_is_an_involution(k in "[a-z0-9_./-]{0,40}") {
        prop_assert_eq!(sysctl::swap_dot_slash(&sysctl::swap_dot_slash(&k)), k);
    }

    #[test]
    fn meminfo_kb_round_trip(name in "[A-Za-z_()]{1,20}", kb in 0u64..(u64::MAX / 1024)) {
        let (f, i) = meminfo::parse(&format!("{name}: {kb} kB\n"));
        prop_assert!(i.is_empty());
        prop_assert_eq!(f[0].value, kb * 1024);
    }

    #[test]
    fn mycnf_never_panics(s in any_text()) {
        let _ = bounded("mycnf", || mycnf::parse(&s));
    }

    #[test]
    fn mycnf_value_helpers_never_panic(s in any_text()) {
        bounded("mycnf helpers", || {
            let _ = mycnf::unquote_unescape(s.as_bytes());
            let _ = mycnf::normalize_name(&s);
            let _ = mycnf::canonical_option(&s);
            let _ = mycnf::parse_bool(&s);
            let _ = mycnf::parse_int(&s);
        });
    }

    #[test]
    fn mysql_variables_and_zimbra_localconfig_never_panic(s in any_text()) {
        let _ = bounded("mysql variables", || mysqlvars::parse(&s));
        let _ = mysqlvars::unescape_batch(&s);
        let _ = bounded("localconfig xml", || localconfig::parse_xml(&s));
        let _ = bounded("zmlocalconfig", || localconfig::parse_zmlocalconfig(&s));
    }

    #[test]
    fn localconfig_expansion_is_bounded(raw in any_text(), table in prop::collection::btree_map("[a-c]{1,2}", any_text(), 0..6)) {
        // self- and mutually-referencing tables must terminate with an error, never loop
        let lookup = |k: &str| table.get(k).cloned();
        let r = bounded("localconfig expand", || localconfig::expand("k", &raw, &lookup));
        if let Ok(v) = r {
            prop_assert!(v.len() <= localconfig::MAX_EXPANDED_LEN.max(raw.len()));
        }
    }

    #[test]
    fn octal_escape_round_trips(s in "\\PC{0,60}") {
        prop_assert_eq!(parse::unescape_octal(&escape_octal(&s)), s);
    }

    #[test]
    fn unescape_octal_never_panics(s in any_text()) {
        let _ = bounded("unescape_octal", || parse::unescape_octal(&s));
    }

    #[test]
    fn expressions_never_panic(s in prop_oneof![any_text(), "[a-z_.()0-9 +*/<>=!&|\"',\\[\\]-]{0,80}"]) {
        let _ = bounded("expr", || driftaudit::unstable::expr::parse(&s));
    }

    #[test]
    fn policy_yaml_never_panics(s in prop_oneof![
        any_text(),
        "(policy: [a-z]{1,5}\n)?(rules:\n)?(  - id: [a-z.]{1,8}\n    (setting|expect|assert|applies|severity|title): [a-z0-9 ._<>=]{0,20}\n){0,4}",
    ]) {
        let mut set = driftaudit::unstable::policy::PolicySet::new();
        let _ = bounded("policy yaml", || set.add_str("p.yaml", &s));
    }

    #[test]
    fn fstab_never_panics(s in any_text()) {
        let (entries, issues) = bounded("fstab", || fstab::parse(&s));
        let n = line_count(&s);
        prop_assert!(issues.iter().all(|i| i.line >= 1 && i.line <= n));
        for e in &entries {
            let opts = e.option_list();
            let _ = fstab::expand_defaults(&opts);
            let _ = fstab::kernel_options(&opts);
        }
        let _ = fstab::split_options(&s);
        let _ = fstab::spec_tag(&s);
    }

    #[test]
    fn fstab_unmangle_round_trips(s in "\\PC{0,60}") {
        prop_assert_eq!(fstab::unmangle(&escape_octal(&s)), s);
    }

    #[test]
    fn mountinfo_and_mounts_never_panic(s in any_text()) {
        let (_, issues) = bounded("mountinfo", || mountinfo::parse_mountinfo(&s));
        let n = line_count(&s);
        prop_assert!(issues.iter().all(|i| i.line >= 1 && i.line <= n));
        let _ = bounded("mounts", || mountinfo::parse_mounts(&s));
        let _ = mountinfo::parse_any(&s);
    }

    #[test]
    fn ext4_text_never_panics(s in any_text()) {
        let _ = bounded("tune2fs/dumpe2fs text", || ext4::parse_text(&s));
    }

    #[test]
    fn ext4_superblock_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..4096)) {
        let _ = bounded("ext4 superblock", || ext4::parse_superblock(&b));
        let _ = ext4::parse_device_head(&b);
    }

    #[test]
    fn sizes_never_panic(s in any_text()) {
        let _ = driftaudit::unstable::value::parse_size(&s);
    }
}

#[test]
fn pathological_inputs_stay_linear() {
    // One huge line, many tiny lines, deep brackets, long escapes: all well
    // under the bound at 4 MiB (a quarter of the read cap).
    let big = 4 << 20;
    let cases = [
        "x".repeat(big),
        "\n".repeat(big),
        "a=b\n".repeat(big / 4),
        "[".repeat(big),
        "\\".repeat(big),
        "${a}".repeat(big / 4),
        "<key name=\"a\"><value>1</value></key>".repeat(big / 40),
        "net.ipv4.conf.all.rp_filter = 1\n".repeat(big / 32),
    ];
    type P = fn(&str);
    let parsers: [(&str, P); 11] = [
        ("sysctl conf", |c| drop(sysctl::parse_conf(c))),
        ("sysctl capture", |c| drop(sysctl::parse_capture(c))),
        ("meminfo", |c| drop(meminfo::parse(c))),
        ("mycnf", |c| drop(mycnf::parse(c))),
        ("mysql variables", |c| drop(mysqlvars::parse(c))),
        ("localconfig xml", |c| drop(localconfig::parse_xml(c))),
        ("zmlocalconfig", |c| {
            drop(localconfig::parse_zmlocalconfig(c))
        }),
        ("octal", |c| drop(parse::unescape_octal(c))),
        ("fstab", |c| drop(fstab::parse(c))),
        ("mountinfo", |c| drop(mountinfo::parse_any(c))),
        ("ext4 text", |c| drop(ext4::parse_text(c))),
    ];
    for c in &cases {
        for (name, p) in &parsers {
            let t = Instant::now();
            p(c);
            let took = t.elapsed();
            // generous: this runs unoptimised in `cargo test`
            assert!(
                took < Duration::from_secs(10),
                "{name}: {took:?} on a 4 MiB input starting {:?}",
                &c[..20]
            );
        }
    }
}
