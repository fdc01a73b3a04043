//! Differential tests of the storage readers against the real tools:
//! util-linux `findmnt` (fstab, mountinfo, /proc/mounts) and e2fsprogs
//! (`mkfs.ext4` images read back with `dumpe2fs -h`), plus one snapshot of the
//! parse result per corpus file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use driftaudit::unstable::parse::ext4::{parse_device_head, parse_text, Ext4Layout};
use driftaudit::unstable::parse::fstab;
use driftaudit::unstable::parse::mountinfo;

use crate::common;
use crate::common::audit;
use crate::common::mountns;

/// The files of one corpus directory, or `None` (skipped) without the corpus.
fn corpus_files(kind: &str) -> Option<Vec<PathBuf>> {
    let dir = common::corpus_dir(kind)?;
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} unreadable: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "empty corpus dir {kind}");
    Some(v)
}

fn read_lossy(p: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned()
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .unwrap()
        .to_string_lossy()
        .replace(['#', ' '], "_")
}

/// Run findmnt and return (rows, lines it reported as parse errors).
fn findmnt(
    tool: &Path,
    args: &[&str],
    file: &Path,
    cols: &str,
) -> (
    Vec<serde_json::Map<String, serde_json::Value>>,
    BTreeSet<usize>,
) {
    let out = Command::new(tool)
        .args(args)
        .arg("--tab-file")
        .arg(file)
        .args(["-J", "-o", cols])
        .output()
        .expect("run findmnt");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: BTreeSet<usize> = stderr
        .lines()
        .filter_map(|l| l.split("parse error at line ").nth(1))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.trim().is_empty() {
        return (Vec::new(), errors);
    }
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("findmnt JSON");
    let rows = v["filesystems"]
        .as_array()
        .expect("filesystems array")
        .iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect();
    (rows, errors)
}

fn s(v: &serde_json::Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// mkfs.ext4 and dumpe2fs, and a temporary directory for the images; or
/// `None` after a skip line (e2fsprogs).
pub(crate) fn ext4_workspace() -> Option<([std::path::PathBuf; 2], tempfile::TempDir)> {
    let tools = common::tools([("mkfs.ext4", "e2fsprogs"), ("dumpe2fs", "e2fsprogs")])?;
    Some((tools, tempfile::tempdir().unwrap()))
}

#[test]
fn fstab_agrees_with_findmnt() {
    let Some(tool) = common::tool("findmnt", "util-linux") else {
        return;
    };
    let Some(files) = corpus_files("fstab") else {
        return;
    };
    let mut compared = 0;
    for f in files {
        let text = read_lossy(&f);
        let (entries, issues) = fstab::parse(&text);
        let (rows, errors) = findmnt(
            &tool,
            &["--fstab"],
            &f,
            "SOURCE,TARGET,FSTYPE,OPTIONS,FREQ,PASSNO",
        );
        let issue_lines: BTreeSet<usize> = issues.iter().map(|i| i.line).collect();
        assert_eq!(
            issue_lines,
            errors,
            "{}: lines with issues vs lines findmnt rejects",
            f.display()
        );
        assert_eq!(entries.len(), rows.len(), "{}: entry count", f.display());
        for (e, r) in entries.iter().zip(&rows) {
            let ctx = format!("{}:{}", f.display(), e.line);
            assert_eq!(Some(e.spec.clone()), s(&r["source"]), "{ctx} source");
            assert_eq!(Some(e.file.clone()), s(&r["target"]), "{ctx} target");
            assert_eq!(Some(e.vfstype.clone()), s(&r["fstype"]), "{ctx} fstype");
            assert_eq!(e.options, s(&r["options"]), "{ctx} options");
            assert_eq!(Some(i64::from(e.freq)), r["freq"].as_i64(), "{ctx} freq");
            assert_eq!(
                Some(i64::from(e.passno)),
                r["passno"].as_i64(),
                "{ctx} passno"
            );
            compared += 1;
        }
    }
    assert!(compared > 50, "only {compared} entries compared");
}

#[test]
fn fstab_broken_lines_are_reported_where_findmnt_rejects_them() {
    let Some(dir) = common::corpus_dir("fstab") else {
        return;
    };
    let f = dir.join("util-linux__tests_ts_libmount_files_fstab.broken");
    let (entries, issues) = fstab::parse(&read_lossy(&f));
    assert_eq!(issues.iter().map(|i| i.line).collect::<Vec<_>>(), [1, 8]);
    assert_eq!(entries.len(), 10);
    assert!(issues.iter().all(|i| i.column.is_some()));
}

#[test]
fn mounts_agree_with_findmnt() {
    let Some(tool) = common::tool("findmnt", "util-linux") else {
        return;
    };
    let Some(files) = corpus_files("mounts") else {
        return;
    };
    let mut compared = 0;
    for f in files {
        let text = read_lossy(&f);
        let (mounts, issues) = mountinfo::parse_any(&text);
        let (rows, errors) = findmnt(
            &tool,
            &["-l", "--nofsroot"],
            &f,
            "TARGET,SOURCE,FSTYPE,OPTIONS",
        );
        let issue_lines: BTreeSet<usize> = issues.iter().map(|i| i.line).collect();
        assert_eq!(
            issue_lines,
            errors,
            "{}: lines with issues vs lines findmnt rejects",
            f.display()
        );
        assert_eq!(mounts.len(), rows.len(), "{}: mount count", f.display());
        for (m, r) in mounts.iter().zip(&rows) {
            let ctx = format!("{}:{}", f.display(), m.line);
            assert_eq!(Some(m.target.clone()), s(&r["target"]), "{ctx} target");
            // libmount turns /dev/root into the real root device of the machine running the test
            if m.source != "/dev/root" {
                assert_eq!(
                    Some(m.source.clone()),
                    s(&r["source"]).or(Some(String::new())),
                    "{ctx} source"
                );
            }
            assert_eq!(Some(m.fstype.clone()), s(&r["fstype"]), "{ctx} fstype");
            let theirs = s(&r["options"])
                .map(|o| fstab::split_options(&o))
                .unwrap_or_default();
            assert_eq!(m.options, theirs, "{ctx} options");
            compared += 1;
        }
    }
    assert!(compared > 400, "only {compared} mounts compared");
}

/// The fields of a `dumpe2fs -h` listing, read independently of driftaudit's parser.
fn dumpe2fs_field(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.trim() == label)
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("dumpe2fs output lacks {label}"))
}

fn check_layout(what: &str, l: &Ext4Layout, dump: &str, ratio: u64, pct: f64) {
    let num = |label: &str| dumpe2fs_field(dump, label).parse::<u64>().unwrap();
    let features: Vec<String> = dumpe2fs_field(dump, "Filesystem features")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(l.features, features, "{what}: features");
    assert_eq!(l.inode_count, num("Inode count"), "{what}: inode count");
    assert_eq!(l.block_count, num("Block count"), "{what}: block count");
    assert_eq!(
        l.reserved_block_count,
        num("Reserved block count"),
        "{what}: reserved"
    );
    assert_eq!(l.block_size, num("Block size"), "{what}: block size");
    assert_eq!(l.inode_size, Some(num("Inode size")), "{what}: inode size");
    assert_eq!(
        l.inodes_per_group,
        Some(num("Inodes per group")),
        "{what}: inodes per group"
    );
    let theirs_pct =
        (10000.0 * num("Reserved block count") as f64 / num("Block count") as f64).round() / 100.0;
    assert_eq!(l.reserved_pct(), Some(theirs_pct), "{what}: reserved pct");
    assert!(
        (theirs_pct - pct).abs() < 0.01,
        "{what}: -m {pct} gives {theirs_pct}"
    );
    assert_eq!(
        l.bytes_per_inode(),
        Some(ratio),
        "{what}: bytes per inode (raw {:?})",
        l.bytes_per_inode_raw()
    );
    let uuid = dumpe2fs_field(dump, "Filesystem UUID");
    assert_eq!(l.uuid.as_deref(), Some(uuid.as_str()), "{what}: uuid");
    let label = dumpe2fs_field(dump, "Filesystem volume name");
    assert_eq!(
        l.label.as_deref().unwrap_or("<none>"),
        label,
        "{what}: label"
    );
    let opts: Vec<String> = match dumpe2fs_field(dump, "Default mount options").as_str() {
        "(none)" => vec![],
        o => o.split_whitespace().map(str::to_string).collect(),
    };
    assert_eq!(
        l.default_mount_options, opts,
        "{what}: default mount options"
    );
    assert_eq!(
        l.state.as_deref(),
        Some(dumpe2fs_field(dump, "Filesystem state").as_str()),
        "{what}: state"
    );
    assert_eq!(
        l.errors_behavior.as_deref(),
        Some(dumpe2fs_field(dump, "Errors behavior").as_str()),
        "{what}: errors"
    );
}

#[test]
fn ext4_images_agree_with_dumpe2fs() {
    let Some(([mkfs, dumpe2fs], dir)) = ext4_workspace() else {
        return;
    };
    // (size MiB, -i, -m, extra args)
    let cases: &[(u64, u64, f64, &[&str])] = &[
        (300, 4096, 0.0, &[]),
        (300, 10240, 2.0, &["-L", "zimbra-db"]),
        (300, 16384, 5.0, &["-O", "^dir_index"]),
        (300, 65536, 5.0, &["-O", "^has_journal"]),
        (600, 65536, 1.0, &["-b", "4096"]),
        (300, 8192, 3.0, &["-b", "1024", "-I", "128"]),
        (
            300,
            12288,
            2.0,
            &["-b", "2048", "-O", "metadata_csum,^64bit"],
        ),
        (
            300,
            32768,
            5.0,
            &["-O", "quota,project", "-E", "root_owner=0:0"],
        ),
        (
            1200,
            16384,
            2.5,
            &[
                "-b",
                "4096",
                "-O",
                "^metadata_csum,uninit_bg",
                "-L",
                "0123456789abcdef",
            ],
        ),
        (64, 4096, 10.0, &["-T", "small", "-o", "hurd"]),
    ];
    for (n, (size, ratio, pct, extra)) in cases.iter().enumerate() {
        let img = dir.path().join(format!("img{n}"));
        let (ratio_s, pct_s) = (ratio.to_string(), pct.to_string());
        let mut args = vec!["-q", "-F", "-i", &ratio_s, "-m", &pct_s];
        args.extend_from_slice(extra);
        ok(
            &format!("mkfs.ext4 {extra:?}"),
            mkfs_image(&mkfs, &img, *size, &args),
        );
        let dump = ok("dumpe2fs", listing(&dumpe2fs, "-h", &img));
        let what = format!("mkfs.ext4 -i {ratio} -m {pct} {extra:?}");

        let (text_layout, issues) = parse_text(&dump);
        assert!(issues.is_empty(), "{what}: {issues:?}");
        check_layout(
            &format!("{what} (text)"),
            text_layout.as_ref().unwrap(),
            &dump,
            *ratio,
            *pct,
        );

        let head = &std::fs::read(&img).unwrap()[..2048];
        let bin = parse_device_head(head).unwrap();
        check_layout(&format!("{what} (superblock)"), &bin, &dump, *ratio, *pct);
    }
}

/// `-i` values that are not multiples of 1024 (10000 was read back as 9998)
/// and values that are: the ratio is derived the way mke2fs computes the
/// inode count, so the `-i` given is inside the range the layout allows, and
/// where it is the only plausible value there, it is the answer.
#[test]
fn bytes_per_inode_reproduces_mke2fs_for_any_ratio() {
    let Some(([mkfs, dumpe2fs], dir)) = ext4_workspace() else {
        return;
    };
    let img = dir.path().join("img");
    // (size MiB, block size, -i, the value is unambiguous on this geometry)
    let cases: &[(u64, u64, u64, bool)] = &[
        (300, 1024, 10000, true),
        (1024, 4096, 10000, true),
        (1024, 4096, 12000, true),
        (1024, 4096, 20000, true),
        (2048, 4096, 50000, true), // so does 49 * 1024, a less likely -i
        (2048, 4096, 100000, true),
        (1024, 4096, 10240, true),
        (1024, 4096, 16384, true),
        (300, 1024, 3000, true),
        (1024, 4096, 12345, false),
    ];
    let mut exact = 0;
    for &(size, bs, ratio, unambiguous) in cases {
        let args = ["-q", "-F", "-b", &bs.to_string(), "-i", &ratio.to_string()];
        ok("mkfs.ext4", mkfs_image(&mkfs, &img, size, &args));
        let dump = listing(&dumpe2fs, "-h", &img).stdout;
        let dump = String::from_utf8_lossy(&dump).into_owned();
        let what = format!("{size} MiB, -b {bs} -i {ratio}");
        let text = parse_text(&dump).0.unwrap();
        let bin = parse_device_head(&std::fs::read(&img).unwrap()[..2048]).unwrap();
        for l in [&text, &bin] {
            let (lo, hi) = l
                .inode_ratio_range()
                .unwrap_or_else(|| panic!("{what}: no ratio reproduces the layout"));
            assert!(
                lo <= ratio && ratio <= hi,
                "{what}: {ratio} outside {lo}..={hi}"
            );
            if unambiguous {
                assert_eq!(
                    l.bytes_per_inode(),
                    Some(ratio),
                    "{what}: range {lo}..={hi}"
                );
                assert!(l.bytes_per_inode_is_exact(), "{what}");
                exact += 1;
            } else {
                assert!(
                    !l.bytes_per_inode_is_exact(),
                    "{what}: {lo}..={hi} called exact"
                );
                let b = l.bytes_per_inode().unwrap();
                assert!(lo <= b && b <= hi, "{what}: {b} outside {lo}..={hi}");
            }
        }
    }
    assert_eq!(exact, 18);
}

/// The `-i` the layout came from reaches the user as mkfs gave it or marked
/// approximate: `mkfs.ext4 -i 10000` and `-i 16384` (exact: the only round
/// value in the range) and `-i 12345` (several values give the layout), each
/// read back with `dumpe2fs -h` into a snapshot's capture. The ext4 record
/// carries the raw ratio and, where not exact, `bytes_per_inode_approximate`;
/// a failing rule's explanation says "approximate (mke2fs rounds the inode
/// count; the range X..Y gives this layout)" with the range from the layout.
#[test]
fn approximate_bytes_per_inode_is_said_in_the_record_and_the_finding() {
    use driftaudit::unstable::{engine, policy::PolicySet, report::Status, value::Value};
    let Some(([mkfs, dumpe2fs], dir)) = ext4_workspace() else {
        return;
    };
    let img = dir.path().join("img");
    let mut policy = PolicySet::new();
    policy
        .add_str(
            "density.yaml",
            "policy: density\ntitle: t\nrules:\n  - id: density.index\n    title: t\n    severity: low\n    let:\n      fs: ext4[\"/srv/index\"]\n    assert: fs.bytes_per_inode <= 4096\n    why: made with one inode per {fs.bytes_per_inode} bytes\n    fix: f\n",
        )
        .unwrap();
    // (-i, exact)
    for (ratio, exact) in [(10000u64, true), (16384, true), (12345, false)] {
        let args = ["-q", "-F", "-b", "4096", "-i", &ratio.to_string()];
        ok("mkfs.ext4", mkfs_image(&mkfs, &img, 1024, &args));
        let dump = listing(&dumpe2fs, "-h", &img).stdout;
        let dump = String::from_utf8_lossy(&dump).into_owned();
        let inodes: f64 = dumpe2fs_field(&dump, "Inode count").parse().unwrap();
        let blocks: f64 = dumpe2fs_field(&dump, "Block count").parse().unwrap();
        let raw = blocks * 4096.0 / inodes;
        let layout = parse_text(&dump).0.unwrap();
        let (lo, hi) = layout.inode_ratio_range().unwrap();
        assert!(lo <= ratio && ratio <= hi, "-i {ratio}: {lo}..={hi}");

        let snap = dir.path().join(format!("snap-{ratio}"));
        for (p, c) in [
            (
                "proc/self/mountinfo",
                "30 1 7:7 / /srv/index rw,relatime shared:1 - ext4 /dev/loop7 rw\n".to_string(),
            ),
            ("captures/dumpe2fs/loop7.txt", dump.clone()),
        ] {
            let path = snap.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        let host = audit::host(&snap);
        let facts = driftaudit::unstable::facts::gather(&host, &Default::default());
        let Some(driftaudit::unstable::facts::Entry::Set(s)) =
            facts.namespaces["ext4"].get("/srv/index")
        else {
            panic!("-i {ratio}: no ext4 record: {:?}", facts.namespaces["ext4"]);
        };
        let Value::Record(r) = &s.value else { panic!() };
        let num = |k: &str| r[k].as_f64().unwrap();
        // the raw ratio as laid out, to 0.1, beside the mkfs value
        assert!(
            (num("bytes_per_inode_raw") - raw).abs() < 0.06,
            "-i {ratio}: {r:?}"
        );
        let phrase = format!(
            "approximate (mke2fs rounds the inode count; the range {lo}..{hi} gives this layout)"
        );
        let report = engine::audit_host(&policy, &host);
        let f = &report.findings[0];
        assert_eq!(f.status, Status::Fail, "{f:?}");
        if exact {
            assert_eq!(num("bytes_per_inode") as u64, ratio);
            assert!(
                !r.contains_key("bytes_per_inode_approximate"),
                "-i {ratio}: {r:?}"
            );
            assert!(s.note.is_none(), "-i {ratio}: {:?}", s.note);
            assert!(!f.explanation.contains("approximate"), "{}", f.explanation);
        } else {
            let b = num("bytes_per_inode") as u64;
            assert!(lo <= b && b <= hi);
            assert_eq!(
                r["bytes_per_inode_approximate"].to_plain(),
                phrase,
                "-i {ratio}"
            );
            assert!(
                f.explanation
                    .contains(&format!("bytes_per_inode {b} is {phrase}")),
                "-i {ratio}: {}",
                f.explanation
            );
            says(&f.explanation, &format!("one inode per {raw:.1} bytes"));
        }
    }
}

#[derive(serde::Serialize)]
struct LayoutSnapshot {
    layout: Option<Ext4Layout>,
    bytes_per_inode: Option<u64>,
    bytes_per_inode_raw: Option<String>,
    reserved_pct: Option<f64>,
    issues: Vec<driftaudit::unstable::parse::Issue>,
}

#[test]
fn corpus_snapshots() {
    // one skip line at most: stop at the first missing directory
    let Some(fstabs) = corpus_files("fstab") else {
        return;
    };
    let Some(mounts) = corpus_files("mounts") else {
        return;
    };
    let Some(ext4s) = corpus_files("ext4") else {
        return;
    };
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        for f in fstabs {
            let (entries, issues) = fstab::parse(&read_lossy(&f));
            let kernel: Vec<Vec<String>> = entries
                .iter()
                .map(|e| fstab::kernel_options(&fstab::expand_defaults(&e.option_list())))
                .collect();
            insta::assert_json_snapshot!(format!("fstab__{}", name_of(&f)), (entries, kernel, issues));
        }
        for f in mounts {
            let parsed = mountinfo::parse_any(&read_lossy(&f));
            insta::assert_json_snapshot!(format!("mounts__{}", name_of(&f)), parsed);
        }
        for f in ext4s {
            let (layout, issues) = parse_text(&read_lossy(&f));
            let snap = LayoutSnapshot {
                bytes_per_inode: layout.as_ref().and_then(Ext4Layout::bytes_per_inode),
                bytes_per_inode_raw: layout.as_ref().and_then(Ext4Layout::bytes_per_inode_raw).map(|r| format!("{r:.1}")),
                reserved_pct: layout.as_ref().and_then(Ext4Layout::reserved_pct),
                layout,
                issues,
            };
            insta::assert_json_snapshot!(format!("ext4__{}", name_of(&f)), snap);
        }
    });
}

// ---------------------------------------------------------------------------
// fstab against the kernel: real mounts in a private mount namespace

/// A sparse image file of `mib` MiB at `img`, then `mkfs ARGS img`: its run.
pub(crate) fn mkfs_image(
    mkfs: impl AsRef<std::ffi::OsStr>,
    img: &Path,
    mib: u64,
    args: &[&str],
) -> std::process::Output {
    let f = std::fs::File::create(img).unwrap();
    f.set_len(mib * 1024 * 1024).unwrap();
    drop(f);
    Command::new(mkfs).args(args).arg(img).output().unwrap()
}

/// `TOOL FLAG img` (`dumpe2fs -h`, `tune2fs -l`): its run.
pub(crate) fn listing(
    tool: impl AsRef<std::ffi::OsStr>,
    flag: &str,
    img: &Path,
) -> std::process::Output {
    Command::new(tool).arg(flag).arg(img).output().unwrap()
}

/// Fail the test with `what` and the run's stderr unless it succeeded;
/// its stdout.
#[track_caller]
pub(crate) fn ok(what: &str, out: std::process::Output) -> String {
    let (code, stdout, stderr) = common::cli::parts(out);
    assert!(code == 0, "{what}: {stderr}");
    stdout
}

pub(crate) use crate::common::cli::says;

/// The findings of `storage.fstab-live-drift`, that rule alone, on `host`.
pub(crate) fn fstab_drift(
    host: &driftaudit::unstable::host::Host,
) -> Vec<driftaudit::unstable::report::Finding> {
    use driftaudit::unstable::engine;
    let p = audit::only(&["storage.fstab-live-drift"]);
    let report = engine::audit_host(&p, host);
    report
        .findings
        .into_iter()
        .filter(|f| f.rule == "storage.fstab-live-drift")
        .collect()
}

/// Whether real mounts can be made here (root, unshare, mount, losetup,
/// mkfs.ext4, tune2fs); off CI a missing piece skips with one line, in CI it fails.
fn can_mount() -> bool {
    let is_root = mountns::is_root();
    let tools = ["unshare", "mount", "losetup", "mkfs.ext4", "tune2fs"];
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| Command::new(t).arg("--version").output().is_err())
        .collect();
    let why = if !is_root {
        Some("not root".to_string())
    } else if !missing.is_empty() {
        Some(format!("{} not installed", missing.join(", ")))
    } else {
        None
    };
    match why {
        None => true,
        Some(w) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("real mounts are required in CI: {w}");
            }
            eprintln!("skipped: real mounts in a private mount namespace need root and util-linux/e2fsprogs ({w})");
            false
        }
    }
}

/// A 64 MiB ext4 image (mke2fs defaults) attached to no loop device yet,
/// with its `tune2fs -l` listing.
fn ext4_image(dir: &Path) -> (PathBuf, String) {
    let img = dir.join("ext4.img");
    let args = ["-q", "-F", "-L", "refdata"];
    ok("mkfs.ext4", mkfs_image("mkfs.ext4", &img, 64, &args));
    let listed = ok("tune2fs -l", listing("tune2fs", "-l", &img));
    (img, listed)
}

/// Run a shell script in a private mount namespace with the image on a loop
/// device (`$LOOP`); returns its stdout. The loop device is detached after.
fn in_namespace(img: &Path, script: &str) -> String {
    let full = format!(
        "set -e\nLOOP=$(losetup --find --show {img})\ntrap 'losetup -d $LOOP' EXIT\n\
         unshare -m sh -e -c 'mount --make-rprivate / && LOOP='\"$LOOP\"' && {body}'\n",
        img = img.display(),
        body = script.replace('\'', "'\\''"),
    );
    let out = common::cli::ok(
        Command::new("sh").arg("-c").arg(&full),
        &format!("the namespace script\n{full}\n"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn mem_total() -> u64 {
    let m = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = m
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

fn ext4_defaults(tune2fs: &str) -> driftaudit::unstable::parse::mountopts::Ext4Defaults {
    let l = parse_text(tune2fs).0.unwrap();
    driftaudit::unstable::parse::mountopts::Ext4Defaults {
        default_mount_options: l.default_mount_options,
        errors_behavior: l.errors_behavior,
        features: l.features,
    }
}

/// Each option on its own, mounted for real: the kernel's mountinfo line
/// (per-mount and superblock options merged) equals driftaudit's canonical
/// form of the option, as a set.
#[test]
fn canonical_mount_options_equal_the_kernels_for_each_option() {
    use driftaudit::unstable::parse::mountopts::{configured_str, running, FsContext};
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (img, tune2fs) = ext4_image(dir.path());
    let tmpfs: &[&str] = &[
        "defaults",
        "size=2G",
        "size=2g",
        "size=512m",
        "size=50%",
        "size=10%",
        "size=100000",
        "size=1048576k",
        "nr_inodes=10k",
        "nr_inodes=5000",
        "nr_blocks=1000",
        "mode=0755",
        "mode=755",
        "mode=1777",
        "mode=01777",
        "mode=0700",
        "uid=0",
        "gid=0",
        "uid=1000,gid=5",
        "huge=never",
        "size=1g,size=2g",
        "noatime,nosuid,nodev,noexec",
        "strictatime",
        "ro,relatime,nodiratime",
        "defaults,size=2G,mode=1777,nr_inodes=10k",
    ];
    let ext4: &[&str] = &[
        "defaults",
        "barrier=0",
        "nobarrier",
        "barrier=1",
        "barrier",
        "acl",
        "user_xattr",
        "acl,user_xattr",
        "errors=remount-ro",
        "errors=continue",
        "errors=panic",
        "data=ordered",
        "data=writeback",
        "data=journal",
        "commit=5",
        "commit=0",
        "commit=30",
        "nodelalloc",
        "delalloc",
        "discard",
        "nodiscard",
        "journal_checksum",
        "nojournal_checksum",
        "noauto_da_alloc",
        "auto_da_alloc=0",
        "auto_da_alloc",
        "grpid",
        "bsdgroups",
        "nogrpid",
        "noblock_validity",
        "dioread_lock",
        "dioread_nolock",
        "init_itable=20",
        "noinit_itable",
        "stripe=16",
        "max_batch_time=1000",
        "min_batch_time=10",
        "inode_readahead_blks=64",
        "resuid=1000,resgid=1000",
        "nombcache",
        "data_err=abort",
        "data_err=ignore",
        "quota",
        "usrquota,grpquota",
        "noquota",
        "ro,norecovery",
        "ro,noload",
        "journal_ioprio=5",
        "lazytime,sync,dirsync",
        "noatime,nodiratime",
        "defaults,barrier=0,acl,user_xattr,errors=remount-ro,data=ordered,commit=5,noatime",
    ];
    let proc_: &[&str] = &[
        "defaults",
        "hidepid=2",
        "hidepid=invisible",
        "hidepid=1",
        "hidepid=0",
        "gid=0",
        "gid=10,hidepid=4",
        "subset=pid",
    ];
    let mut cases: Vec<(&str, &str)> = Vec::new();
    cases.extend(tmpfs.iter().map(|o| ("tmpfs", *o)));
    cases.extend(ext4.iter().map(|o| ("ext4", *o)));
    cases.extend(proc_.iter().map(|o| ("proc", *o)));
    let mnt = dir.path().join("m");
    std::fs::create_dir(&mnt).unwrap();
    let mut script = String::new();
    for (i, (t, o)) in cases.iter().enumerate() {
        let src = match *t {
            "ext4" => "$LOOP",
            other => other,
        };
        script.push_str(&format!(
            "if mount -t {t} -o '{o}' {src} {m} 2>/dev/null; then awk -v p={m} '$5==p {{print \"{i} \" $0}}' /proc/self/mountinfo; umount {m}; else echo \"{i} FAILED\"; fi\n",
            m = mnt.display()
        ));
    }
    let out = in_namespace(&img, &script);
    let mem = mem_total();
    let defaults = ext4_defaults(&tune2fs);
    let mut compared = 0;
    let mut refused = Vec::new();
    for line in out.lines() {
        let (i, rest) = line.split_once(' ').unwrap();
        let (fstype, opts) = cases[i.parse::<usize>().unwrap()];
        if rest == "FAILED" {
            refused.push(format!("{fstype} {opts}"));
            continue;
        }
        let (m, issues) = mountinfo::parse_mountinfo(rest);
        assert!(issues.is_empty(), "{rest}: {issues:?}");
        let kernel: BTreeSet<String> = running(&m[0].options, fstype).into_iter().collect();
        let cx = FsContext {
            fstype: fstype.into(),
            mem_total: Some(mem),
            ext4: Some(defaults.clone()),
        };
        let c = configured_str(opts, &cx);
        assert!(
            c.unknown.is_empty() && c.unchecked.is_empty(),
            "{fstype} {opts}: {c:?}"
        );
        let ours: BTreeSet<String> = c.options.into_iter().collect();
        assert_eq!(
            ours, kernel,
            "{fstype} -o {opts}: ours vs the kernel's ({rest})"
        );
        compared += 1;
    }
    if !refused.is_empty() {
        eprintln!("this kernel refused: {}", refused.join("; "));
    }
    assert!(
        compared + 3 >= cases.len(),
        "only {compared} of {} cases mounted: refused {refused:?}",
        cases.len()
    );
}

/// `storage.fstab-live-drift` is silent on a real tmpfs, ext4 (loop image,
/// named by `UUID=`), bind and proc mounted from an fstab with options the
/// kernel spells its own way; the snapshot holds the real mountinfo, the
/// fstab, /proc/meminfo and the tune2fs listing (found by UUID, not by name).
#[test]
fn fstab_live_drift_is_silent_on_real_mounts_made_from_that_fstab() {
    use driftaudit::unstable::report::Status;
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (img, tune2fs) = ext4_image(dir.path());
    let uuid = parse_text(&tune2fs).0.unwrap().uuid.unwrap();
    let t = dir.path().join("mnt");
    for d in ["t1", "t2", "t3", "e", "b", "p"] {
        std::fs::create_dir_all(t.join(d)).unwrap();
    }
    let t = t.display().to_string();
    let fstab = format!(
        "# mounted below, line by line, as mount(8) does from this file\n\
         tmpfs {t}/t1 tmpfs defaults,size=2G,mode=1777,nr_inodes=10k 0 0\n\
         tmpfs {t}/t2 tmpfs size=512m,mode=0755,uid=0,gid=5,nosuid,nodev 0 0\n\
         tmpfs {t}/t3 tmpfs size=50%,huge=never 0 0\n\
         UUID={uuid} {t}/e ext4 defaults,barrier=0,acl,user_xattr,errors=remount-ro,data=ordered,commit=5,noatime 0 2\n\
         {t}/e/sub {t}/b none bind 0 0\n\
         proc {t}/p proc hidepid=2,gid=0 0 0\n\
         # a second line for t1: systemd-fstab-generator and mount use the first\n\
         tmpfs {t}/t1 tmpfs size=1G,mode=0700 0 0\n"
    );
    let fstab_path = dir.path().join("fstab");
    std::fs::write(&fstab_path, &fstab).unwrap();
    let f = fstab_path.display();
    let script = format!(
        "mount -T {f} {t}/t1 && mount -T {f} {t}/t2 && mount -T {f} {t}/t3 && \
         mount -T {f} {t}/e && mkdir -p {t}/e/sub && mount -T {f} {t}/b && mount -T {f} {t}/p && \
         cat /proc/self/mountinfo"
    );
    let mountinfo = in_namespace(&img, &script);
    assert!(mountinfo.contains(&format!(" {t}/b ")), "{mountinfo}");

    let snap = dir.path().join("snap");
    for (p, c) in [
        ("etc/fstab", fstab.clone()),
        ("proc/self/mountinfo", mountinfo.clone()),
        (
            "proc/meminfo",
            std::fs::read_to_string("/proc/meminfo").unwrap(),
        ),
        // named so that only the UUID inside can match it
        ("captures/tune2fs/refdata-volume.txt", tune2fs.clone()),
    ] {
        let path = snap.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    let host = audit::host(&snap);
    let drift = fstab_drift(&host);
    crate::common::all_are(&drift, Status::Pass);
    assert!(
        drift[0].explanation.starts_with("6 configured value(s)"),
        "every line compared: {}",
        drift[0].explanation
    );

    // the same facts, option by option: the model's form is the kernel's
    let facts = driftaudit::unstable::facts::gather(&host, &Default::default());
    let rec = |ns: &str, k: &str| match facts.namespaces[ns].get(k) {
        Some(driftaudit::unstable::facts::Entry::Set(s)) => (s.value.clone(), s.note.clone()),
        e => panic!("{ns} {k}: {e:?}"),
    };
    for point in ["t1", "t2", "t3", "e", "b", "p"] {
        let key = format!("{t}/{point}");
        let (want, note) = rec("fstab", &key);
        let (have, _) = rec("mount", &key);
        let set = |v: &driftaudit::unstable::value::Value, f: &str| -> BTreeSet<String> {
            match v {
                driftaudit::unstable::value::Value::Record(r) => match &r[f] {
                    driftaudit::unstable::value::Value::List(l) => {
                        l.iter().map(|x| x.to_plain()).collect()
                    }
                    x => panic!("{x:?}"),
                },
                x => panic!("{x:?}"),
            }
        };
        assert_eq!(
            set(&want, "kernel_options"),
            set(&have, "options"),
            "{key} (note: {note:?})"
        );
        if point == "t1" {
            assert!(
                note.unwrap().contains("use the first"),
                "duplicate line noted"
            );
        }
    }
    let (e4, _) = rec("ext4", &format!("{t}/e"));
    let driftaudit::unstable::value::Value::Record(e4) = e4 else {
        panic!()
    };
    assert_eq!(e4["uuid"].to_plain(), uuid);
}

// ---------------------------------------------------------------------------
// xfs: real mounts of a sparse loop image in a private mount namespace

/// Whether xfs images can be made and mounted here (the mount tools, root,
/// mkfs.xfs); off CI one line and `false`, in CI a failure.
fn can_mount_xfs() -> bool {
    if !can_mount() {
        return false;
    }
    common::tool("mkfs.xfs", "xfsprogs").is_some()
}

/// A sparse 320 MiB xfs image (mkfs.xfs wants at least 300 MB).
fn xfs_image(dir: &Path, name: &str) -> PathBuf {
    let img = dir.join(name);
    let mkfs = common::find_tool("mkfs.xfs").unwrap();
    ok("mkfs.xfs", mkfs_image(mkfs, &img, 320, &["-q", "-f"]));
    img
}

/// Run `script` in a private mount namespace with each image on a loop
/// device (`$L0`, `$L1`, ...), detached after; returns stdout.
fn with_loops(imgs: &[&Path], script: &str) -> String {
    let mut full =
        String::from("set -e\nLOOPS=\ntrap 'for l in $LOOPS; do losetup -d $l; done' EXIT\n");
    let mut env = String::new();
    for (i, img) in imgs.iter().enumerate() {
        full += &format!(
            "L{i}=$(losetup --find --show '{}')\nLOOPS=\"$LOOPS $L{i}\"\n",
            img.display()
        );
        env += &format!("L{i}=\"$L{i}\" ");
    }
    full += &format!(
        "env {env} unshare -m sh -e -c 'mount --make-rprivate / && {}'\n",
        script.replace('\'', "'\\''")
    );
    let out = common::cli::ok(
        Command::new("sh").arg("-c").arg(&full),
        &format!("the namespace script\n{full}\n"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether this kernel was built without xfs quota support (then every
/// quota option makes the mount fail: "quota support not available").
fn kernel_lacks_xfs_quota() -> Option<bool> {
    let out = Command::new("sh")
        .args([
            "-c",
            "zcat /proc/config.gz 2>/dev/null || cat /boot/config-$(uname -r) 2>/dev/null",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if text.is_empty() {
        return None;
    }
    Some(text.contains("# CONFIG_XFS_QUOTA is not set"))
}

/// Each option string mounted for real on an xfs image: the model's options
/// plus what the kernel adds on its own (`kernel_defaults`) are exactly the
/// mountinfo options; what the model calls refused makes the mount fail; a
/// quota option fails only where the kernel has no xfs quota support.
#[test]
fn xfs_canonical_mount_options_equal_the_kernels_for_each_option() {
    use driftaudit::unstable::parse::mountopts::{configured_str, running, FsContext};
    if !can_mount_xfs() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = xfs_image(dir.path(), "xfs.img");
    let cases: &[&str] = &[
        "defaults",
        "noatime",
        "nodiratime",
        "noatime,nodiratime",
        "relatime",
        "strictatime",
        "lazytime",
        "ro",
        "inode64",
        "inode32",
        "inode32,inode64",
        "noquota",
        "attr2",
        "noattr2",
        "ikeep",
        "noikeep",
        "logbufs=8",
        "logbufs=2",
        "logbufs=010",
        "logbufs=0x4",
        "logbsize=256k",
        "logbsize=32k",
        "logbsize=262144",
        "allocsize=64k",
        "allocsize=1m",
        "allocsize=65536",
        "largeio",
        "largeio,nolargeio",
        "swalloc",
        "discard",
        "discard,nodiscard",
        "nouuid",
        "wsync",
        "noalign",
        "grpid",
        "bsdgroups",
        "grpid,nogrpid",
        "sysvgroups",
        "filestreams",
        "dax=never",
        "ro,norecovery",
        "nosuid,nodev,noexec",
        "defaults,noatime,nodiratime,inode64,noquota,attr2,logbufs=8,logbsize=256k,allocsize=64k,largeio,swalloc,discard,nouuid",
        // refused by the kernel: the mount fails
        "nobarrier",
        "barrier",
        "defaults,nobarrier,noatime",
        "norecovery",
        "logbufs=08",
        "logbufs=9",
        "logbufs=1",
        "logbsize=100k",
        "logbsize=512k",
        // quota: refused only by a kernel without CONFIG_XFS_QUOTA
        "uquota",
        "usrquota",
        "quota",
        "prjquota",
        "pquota",
        "grpquota",
        "gqnoenforce",
        "usrquota,prjquota",
        "uquota,noquota",
    ];
    let mnt = dir.path().join("m");
    std::fs::create_dir(&mnt).unwrap();
    let mut script = String::new();
    for (i, o) in cases.iter().enumerate() {
        script.push_str(&format!(
            "if mount -t xfs -o '{o}' $L0 {m} 2>/dev/null; then awk -v p={m} '$5==p {{print \"{i} \" $0}}' /proc/self/mountinfo; umount {m}; else echo \"{i} FAILED\"; fi\n",
            m = mnt.display()
        ));
    }
    let out = with_loops(&[&img], &script);
    let no_quota = kernel_lacks_xfs_quota();
    let cx = FsContext {
        fstype: "xfs".into(),
        ..FsContext::default()
    };
    let (mut compared, mut refused, mut quota_refused) = (0, 0, Vec::new());
    let mut mismatches = Vec::new();
    for line in out.lines() {
        let (i, rest) = line.split_once(' ').unwrap();
        let opts = cases[i.parse::<usize>().unwrap()];
        let c = configured_str(opts, &cx);
        let is_quota = opts
            .split(',')
            .any(|o| o.contains("quota") && o != "noquota" || o.ends_with("qnoenforce"));
        if rest == "FAILED" {
            if !c.refused.is_empty() {
                refused += 1;
            } else if is_quota && no_quota != Some(false) {
                quota_refused.push(opts);
            } else {
                mismatches.push(format!(
                    "{opts}: the kernel refused it, the model did not say so"
                ));
            }
            continue;
        }
        if !c.refused.is_empty() {
            mismatches.push(format!(
                "{opts}: mounted, but the model says refused: {:?}",
                c.refused
            ));
            continue;
        }
        let (m, issues) = mountinfo::parse_mountinfo(rest);
        assert!(issues.is_empty(), "{rest}: {issues:?}");
        let kernel: BTreeSet<String> = running(&m[0].options, "xfs").into_iter().collect();
        assert!(c.unknown.is_empty(), "{opts}: {c:?}");
        let ours: BTreeSet<String> = c
            .options
            .iter()
            .chain(c.kernel_defaults.iter())
            .cloned()
            .collect();
        if ours != kernel {
            mismatches.push(format!(
                "-o {opts}: ours {ours:?}, the kernel's {kernel:?} ({rest})"
            ));
        }
        compared += 1;
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert_eq!(
        refused, 9,
        "nobarrier, barrier, ...,nobarrier,..., norecovery without ro, logbufs=08, 9 and 1, logbsize=100k and 512k"
    );
    if !quota_refused.is_empty() {
        eprintln!(
            "this kernel has no xfs quota support (CONFIG_XFS_QUOTA): the quota cases {} could not be compared",
            quota_refused.join("; ")
        );
    }
    assert!(
        compared >= 42,
        "only {compared} of {} cases compared",
        cases.len()
    );
}

/// `storage.fstab-live-drift` on real xfs mounts made from an fstab with the
/// common options: silent where the mounts are the fstab's; a real
/// difference (one volume remounted by hand with other options) fires; a
/// line the kernel refuses (`nobarrier`) fails to mount, and we say so as an
/// fstab finding instead of calling it drift.
#[test]
fn xfs_fstab_live_drift_is_silent_on_real_mounts_and_names_refused_lines() {
    use driftaudit::unstable::{engine, report::Status};
    if !can_mount_xfs() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = xfs_image(dir.path(), "a.img");
    let b = xfs_image(dir.path(), "b.img");
    let c = xfs_image(dir.path(), "c.img");
    let t = dir.path().join("mnt");
    for d in ["a", "b", "c"] {
        std::fs::create_dir_all(t.join(d)).unwrap();
    }
    let t = t.display().to_string();
    // the devices are named by the loop devices the script gets
    let fstab_for = |l0: &str, l1: &str, l2: &str| {
        format!(
            "# xfs volumes\n\
             {l0} {t}/a xfs defaults,noatime,nodiratime,inode64,noquota,attr2,logbufs=8,logbsize=256k,allocsize=64k,largeio,swalloc 0 2\n\
             {l1} {t}/b xfs rw,relatime,discard,nouuid,logbsize=262144,ikeep 0 2\n\
             {l2} {t}/c xfs defaults,nobarrier,noatime 0 2\n"
        )
    };
    let template = fstab_for("$L0", "$L1", "$L2");
    let fstab_path = dir.path().join("fstab");
    let f = fstab_path.display();
    let script = format!(
        "cat > {f} <<EOF\n{template}EOF\n\
         mount -T {f} {t}/a && mount -T {f} {t}/b && \
         if mount -T {f} {t}/c 2>/dev/null; then echo C-MOUNTED; fi && \
         echo DEVICES $L0 $L1 $L2 && cat /proc/self/mountinfo && \
         mount -o remount,logbsize=32k,atime {t}/a 2>/dev/null || mount -o remount,atime,relatime {t}/a; \
         echo AFTER && cat /proc/self/mountinfo"
    );
    let out = with_loops(&[&a, &b, &c], &script);
    assert!(
        !out.contains("C-MOUNTED"),
        "the kernel mounted xfs with nobarrier:\n{out}"
    );
    let devices: Vec<&str> = out
        .lines()
        .find_map(|l| l.strip_prefix("DEVICES "))
        .unwrap()
        .split(' ')
        .collect();
    let fstab = fstab_for(devices[0], devices[1], devices[2]);
    let (before, after) = out.split_once("\nAFTER\n").unwrap();
    let before = before.split_once('\n').map(|(_, r)| r).unwrap_or(before);
    let before: String = before
        .lines()
        .filter(|l| !l.starts_with("DEVICES"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(before.contains(&format!(" {t}/a ")), "{before}");

    let audit = |mountinfo: &str, name: &str| {
        let snap = dir.path().join(name);
        for (p, c) in [
            ("etc/fstab", fstab.clone()),
            ("proc/self/mountinfo", mountinfo.to_string()),
        ] {
            let path = snap.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        let host = audit::host(&snap);
        let p = audit::only(&["storage.fstab-live-drift"]);
        engine::audit_host(&p, &host).findings
    };
    let findings = audit(&before, "snap-before");
    let drift = crate::common::of_rule(&findings, "storage.fstab-live-drift");
    crate::common::all_are(&drift, Status::Pass);
    let all = format!("{findings:#?}");
    // the refused line: an fstab finding that says the mount fails
    let refused: Vec<_> = findings
        .iter()
        .filter(|f| f.explanation.contains("`nobarrier`") && f.explanation.contains("mount fails"))
        .collect();
    assert!(
        !refused.is_empty(),
        "no finding says the nobarrier line cannot mount: {all}"
    );
    assert!(
        refused
            .iter()
            .all(|f| f.status == Status::Fail && f.rule != "storage.fstab-live-drift"),
        "{refused:#?}"
    );

    // a real difference: /a remounted by hand without noatime and logbsize=256k
    let findings = audit(after, "snap-after");
    let fails: Vec<_> = findings
        .iter()
        .filter(|f| f.rule == "storage.fstab-live-drift" && f.status == Status::Fail)
        .collect();
    assert_eq!(fails.len(), 1, "{findings:#?}");
    says(&fails[0].explanation, &format!("{t}/a"));
    says(&fails[0].explanation, "noatime");
}

// ---------------------------------------------------------------------------
// btrfs: real mounts of a sparse loop image in a private mount namespace

/// A sparse 320 MiB btrfs image, or `None` after a skip line (btrfs-progs).
fn btrfs_image(dir: &Path, name: &str) -> Option<PathBuf> {
    let mkfs = common::tool("mkfs.btrfs", "btrfs-progs")?;
    let img = dir.join(name);
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(320 * 1024 * 1024).unwrap();
    drop(f);
    common::cli::ok(
        Command::new(mkfs).args(["-q", "-f"]).arg(&img),
        "mkfs.btrfs",
    );
    Some(img)
}

/// Each option string mounted for real on a btrfs image: the model's
/// options plus what btrfs shows unasked on a fresh mkfs.btrfs loop image
/// are exactly the mountinfo options, and what the model calls refused
/// makes the mount fail.
#[test]
fn btrfs_canonical_mount_options_equal_the_kernels_for_each_option() {
    use driftaudit::unstable::parse::mountopts::{configured_str, running, FsContext};
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(img) = btrfs_image(dir.path(), "btrfs.img") else {
        return;
    };
    let cases: &[&str] = &[
        "defaults",
        "noatime",
        "ro",
        "compress=zstd",
        "compress=zstd:1",
        "compress=lzo",
        "compress=zlib",
        "compress",
        "compress-force=zstd",
        "compress=no",
        "compress=zstd,compress=lzo",
        "ssd",
        "nossd",
        "ssd_spread",
        "discard",
        "discard=async",
        "discard=sync",
        "nodiscard",
        "autodefrag",
        "noautodefrag",
        "space_cache=v2",
        "clear_cache",
        "commit=30",
        "commit=60",
        "commit=0",
        "subvol=/",
        "subvolid=5",
        "nodatacow",
        "nodatasum",
        "nodatacow,datacow",
        "flushoncommit",
        "max_inline=2048",
        "max_inline=0",
        "max_inline=4k",
        "user_subvol_rm_allowed",
        "usebackuproot",
        "rescue=usebackuproot",
        "skip_balance",
        "fatal_errors=bug",
        "fatal_errors=panic",
        "barrier",
        "nobarrier",
        "notreelog",
        "acl",
        "noacl",
        "enospc_debug",
        "ro,norecovery",
        "compress=zstd:3,noatime,space_cache=v2,autodefrag,ssd,discard=async,commit=120",
        // refused: the mount fails
        "space_cache",
        "nospace_cache",
        "norecovery",
        "check_int",
        "inode_cache",
    ];
    let mnt = dir.path().join("m");
    std::fs::create_dir(&mnt).unwrap();
    let mut script = String::new();
    for (i, o) in cases.iter().enumerate() {
        script.push_str(&format!(
            "if mount -t btrfs -o '{o}' $L0 {m} 2>/dev/null; then awk -v p={m} '$5==p {{print \"{i} \" $0}}' /proc/self/mountinfo; umount {m}; else echo \"{i} FAILED\"; fi\n",
            m = mnt.display()
        ));
    }
    let out = with_loops(&[&img], &script);
    let cx = FsContext {
        fstype: "btrfs".into(),
        ..FsContext::default()
    };
    let (mut compared, mut refused) = (0, 0);
    let mut mismatches = Vec::new();
    for line in out.lines() {
        let (i, rest) = line.split_once(' ').unwrap();
        let opts = cases[i.parse::<usize>().unwrap()];
        let c = configured_str(opts, &cx);
        if rest == "FAILED" {
            if c.refused.is_empty() {
                mismatches.push(format!(
                    "{opts}: the kernel refused it, the model did not say so"
                ));
            } else {
                refused += 1;
            }
            continue;
        }
        if !c.refused.is_empty() {
            mismatches.push(format!(
                "{opts}: mounted, but the model says refused: {:?}",
                c.refused
            ));
            continue;
        }
        let (m, issues) = mountinfo::parse_mountinfo(rest);
        assert!(issues.is_empty(), "{rest}: {issues:?}");
        assert!(c.unknown.is_empty(), "{opts}: {c:?}");
        let kernel: BTreeSet<String> = running(&m[0].options, "btrfs").into_iter().collect();
        let ours: BTreeSet<String> = c
            .options
            .iter()
            .chain(c.kernel_defaults.iter())
            .cloned()
            .collect();
        if ours != kernel {
            mismatches.push(format!("-o {opts}: ours {ours:?}, the kernel's {kernel:?}"));
        }
        compared += 1;
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert_eq!(refused, 5);
    assert_eq!(compared, cases.len() - 5);
}

/// `storage.fstab-live-drift` is silent on a real btrfs mounted from an
/// fstab with common options, and fires when it is remounted by hand with
/// another compression.
#[test]
fn btrfs_fstab_live_drift_is_silent_on_a_real_mount_and_fires_on_a_difference() {
    use driftaudit::unstable::report::Status;
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(img) = btrfs_image(dir.path(), "b.img") else {
        return;
    };
    let t = dir.path().join("mnt");
    std::fs::create_dir_all(&t).unwrap();
    let t = t.display().to_string();
    let fstab_path = dir.path().join("fstab");
    let f = fstab_path.display();
    let line = "defaults,noatime,compress=zstd,space_cache=v2,autodefrag,commit=120,subvol=/";
    let script = format!(
        "echo \"$L0 {t} btrfs {line} 0 0\" > {f} && echo DEVICE $L0 && mount -T {f} {t} && cat /proc/self/mountinfo && \
         mount -o remount,compress=lzo,commit=30 {t} && echo AFTER && cat /proc/self/mountinfo"
    );
    let out = with_loops(&[&img], &script);
    let dev = out.lines().find_map(|l| l.strip_prefix("DEVICE ")).unwrap();
    let fstab = format!("{dev} {t} btrfs {line} 0 0\n");
    let (before, after) = out.split_once("\nAFTER\n").unwrap();
    let before: String = before.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let audit = |mountinfo: &str, name: &str| {
        let snap = dir.path().join(name);
        for (p, c) in [
            ("etc/fstab", fstab.clone()),
            ("proc/self/mountinfo", mountinfo.to_string()),
        ] {
            let path = snap.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        fstab_drift(&audit::host(&snap))
    };
    let drift = audit(&before, "snap-before");
    assert!(
        !drift.is_empty() && drift.iter().all(|f| f.status == Status::Pass),
        "{drift:#?}"
    );
    crate::common::cli::starts(&drift[0].explanation, "1 configured value(s)");
    let drift = audit(after, "snap-after");
    let fails: Vec<_> = drift.iter().filter(|f| f.status == Status::Fail).collect();
    assert_eq!(fails.len(), 1, "{drift:#?}");
    says(&fails[0].explanation, "compress=zstd:3");
}
