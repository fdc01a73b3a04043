//! Parser throughput (MB/s) on the real-world corpus: each parser gets every
//! corpus file of its format concatenated (../shared/corpus, read at run
//! time), so the figure is for realistic lines, comments and oddities.
//! Run: `cargo bench --bench parsers`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use driftaudit::unstable::parse::{
    ext4, fstab, localconfig, meminfo, mountinfo, mycnf, mysqlvars, sysctl,
};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

/// All files of a corpus dir whose name passes `keep`, concatenated.
fn corpus(sub: &str, keep: impl Fn(&str) -> bool) -> String {
    let mut paths: Vec<_> = std::fs::read_dir(format!("{CORPUS}/{sub}"))
        .unwrap_or_else(|e| panic!("{CORPUS}/{sub}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| keep(&p.file_name().unwrap().to_string_lossy()))
        .collect();
    paths.sort();
    let mut out = String::new();
    for p in paths {
        out.push_str(&String::from_utf8_lossy(&std::fs::read(p).unwrap()));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    assert!(!out.is_empty(), "no corpus files in {sub}");
    out
}

/// Every file of a corpus dir, one string each (formats parsed per document).
fn files(sub: &str) -> Vec<String> {
    let mut v: Vec<_> = std::fs::read_dir(format!("{CORPUS}/{sub}"))
        .unwrap_or_else(|e| panic!("{CORPUS}/{sub}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    v.into_iter()
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
        .collect()
}

fn is_capture(n: &str) -> bool {
    (n.contains("sysctl-a") || n.contains("sysctl_-a") || n.contains("Linux_00"))
        && !n.contains("osx")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse");
    let sysctl_conf = corpus("sysctl", |n| !is_capture(n) && !n.contains("BSD"));
    let sysctl_cap = corpus("sysctl", is_capture);
    let mem = corpus("meminfo", |_| true);
    let cnf = corpus("mycnf", |_| true);
    let vars = corpus("mysql-variables", |_| true);
    let lc = corpus("zimbra", |n| n.contains("localconfig"));
    let lc_files = files("zimbra");

    g.throughput(Throughput::Bytes(sysctl_conf.len() as u64));
    g.bench_function("sysctl_conf", |b| {
        b.iter(|| sysctl::parse_conf(black_box(&sysctl_conf)))
    });
    g.throughput(Throughput::Bytes(sysctl_cap.len() as u64));
    g.bench_function("sysctl_capture", |b| {
        b.iter(|| sysctl::parse_capture(black_box(&sysctl_cap)))
    });
    g.throughput(Throughput::Bytes(mem.len() as u64));
    g.bench_function("meminfo", |b| b.iter(|| meminfo::parse(black_box(&mem))));
    g.throughput(Throughput::Bytes(cnf.len() as u64));
    g.bench_function("mycnf", |b| b.iter(|| mycnf::parse(black_box(&cnf))));
    g.throughput(Throughput::Bytes(vars.len() as u64));
    g.bench_function("mysql_variables", |b| {
        b.iter(|| mysqlvars::parse(black_box(&vars)))
    });
    // XML documents are parsed one by one (a concatenation is not one document)
    let lc_bytes: usize = lc_files.iter().map(String::len).sum();
    g.throughput(Throughput::Bytes(lc_bytes as u64));
    g.bench_function("localconfig_xml", |b| {
        b.iter(|| {
            for f in &lc_files {
                black_box(localconfig::parse_xml(black_box(f)));
            }
        })
    });
    drop(lc);
    let fst = corpus("fstab", |_| true);
    g.throughput(Throughput::Bytes(fst.len() as u64));
    g.bench_function("fstab", |b| b.iter(|| fstab::parse(black_box(&fst))));
    let mi = corpus("mounts", |n| n.contains("mountinfo"));
    g.throughput(Throughput::Bytes(mi.len() as u64));
    g.bench_function("mountinfo", |b| {
        b.iter(|| mountinfo::parse_mountinfo(black_box(&mi)))
    });
    let ext: Vec<String> = files("ext4");
    let ext_bytes: usize = ext.iter().map(String::len).sum();
    g.throughput(Throughput::Bytes(ext_bytes as u64));
    g.bench_function("ext4_text", |b| {
        b.iter(|| {
            for f in &ext {
                black_box(ext4::parse_text(black_box(f)));
            }
        })
    });
    g.finish();
}

/// sysctl readers at 1k, 10k and 100k lines (issue 13: one key repeated
/// 40,000 times took 4.6 s, 100,000 files in sysctl.d 30 s): the parser alone,
/// the whole persisted-config resolution on one file of N lines with one key
/// repeated, and the resolution of a sysctl.d holding N files. Lines per
/// second must stay flat as N grows.
fn bench_sysctl_scaling(c: &mut Criterion) {
    use driftaudit::unstable::facts::{Facts, Needs};
    use driftaudit::unstable::host::Host;
    let mut g = c.benchmark_group("sysctl_lines");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        let text: String = (0..n)
            .map(|i| format!("net.core.somaxconn = {}\n", 1000 + i))
            .collect();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("parse_repeated_key/{n}"), |b| {
            b.iter(|| sysctl::parse_conf(black_box(&text)))
        });
        let one = tempfile::tempdir().unwrap();
        let d = one.path().join("etc/sysctl.d");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("50-repeat.conf"), &text).unwrap();
        let host = Host::snapshot(one.path()).unwrap();
        g.bench_function(format!("resolve_repeated_key/{n}"), |b| {
            b.iter(|| {
                let mut f = Facts::new(&host);
                driftaudit::unstable::facts::sysctl::gather(&host, &Needs::default(), &mut f);
                black_box(f)
            })
        });
        let many = tempfile::tempdir().unwrap();
        let d = many.path().join("etc/sysctl.d");
        std::fs::create_dir_all(&d).unwrap();
        for i in 0..n {
            std::fs::write(
                d.join(format!("{i:06}.conf")),
                format!("net.ipv4.conf.if{i}.rp_filter = 1\n"),
            )
            .unwrap();
        }
        let host = Host::snapshot(many.path()).unwrap();
        g.bench_function(format!("resolve_files/{n}"), |b| {
            b.iter(|| {
                let mut f = Facts::new(&host);
                driftaudit::unstable::facts::sysctl::gather(&host, &Needs::default(), &mut f);
                black_box(f)
            })
        });
    }
    g.finish();
}

/// Option files at 1k, 10k and 100k lines (issue 13: one option repeated
/// 40,000 times took 16 s): the parser alone, and the whole resolution
/// (files, groups, names as MariaDB 10.11 resolves them, both namespaces,
/// limits) for one option repeated and for distinct options. Lines per
/// second must stay flat as N grows.
fn bench_mycnf_scaling(c: &mut Criterion) {
    use driftaudit::unstable::facts::{Facts, Needs};
    use driftaudit::unstable::host::Host;
    let mut g = c.benchmark_group("mycnf_lines");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        for (case, line) in [
            (
                "repeated",
                (|i: usize| format!("max_connections = {}\n", 100 + i)) as fn(usize) -> String,
            ),
            ("distinct", |i: usize| {
                format!("loose-plugin_opt_{i} = {i}\n")
            }),
        ] {
            let text: String = std::iter::once("[mysqld]\n".to_string())
                .chain((0..n).map(line))
                .collect();
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(format!("parse_{case}/{n}"), |b| {
                b.iter(|| mycnf::parse(black_box(&text)))
            });
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("etc")).unwrap();
            std::fs::write(dir.path().join("etc/my.cnf"), &text).unwrap();
            std::fs::create_dir_all(dir.path().join("captures")).unwrap();
            std::fs::write(
                dir.path().join("captures/mysql-variables.tsv"),
                "version\t10.11.19-MariaDB-0+deb12u1\n",
            )
            .unwrap();
            let host = Host::snapshot(dir.path()).unwrap();
            g.bench_function(format!("resolve_{case}/{n}"), |b| {
                b.iter(|| {
                    let mut f = Facts::new(&host);
                    driftaudit::unstable::facts::mysql::gather(&host, &Needs::default(), &mut f);
                    black_box(f)
                })
            });
        }
    }
    g.finish();
}

/// Storage readers at 1k, 10k and 100k lines (issue 13): fstab and mountinfo
/// parsers alone, and the whole storage gather (fstab model, mount table,
/// ext4 lookups) on a snapshot with that many mounts. Lines per second must
/// stay flat as N grows.
fn bench_storage_scaling(c: &mut Criterion) {
    use driftaudit::unstable::facts::{Facts, Needs};
    use driftaudit::unstable::host::Host;
    let mut g = c.benchmark_group("storage_lines");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        let fst: String = (0..n)
            .map(|i| {
                format!(
                    "tmpfs /srv/t{i} tmpfs defaults,size=2G,mode=1777,nr_inodes=10k,noatime 0 0\n"
                )
            })
            .collect();
        let mi: String = (0..n)
            .map(|i| {
                format!(
                    "{} 20 0:{} / /srv/t{i} rw,noatime shared:{i} - tmpfs tmpfs rw,size=2097152k,nr_inodes=10240\n",
                    i + 100,
                    i + 40
                )
            })
            .collect();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("fstab_parse/{n}"), |b| {
            b.iter(|| fstab::parse(black_box(&fst)))
        });
        g.bench_function(format!("mountinfo_parse/{n}"), |b| {
            b.iter(|| mountinfo::parse_mountinfo(black_box(&mi)))
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::create_dir_all(dir.path().join("proc/self")).unwrap();
        std::fs::write(dir.path().join("etc/fstab"), &fst).unwrap();
        std::fs::write(dir.path().join("proc/self/mountinfo"), &mi).unwrap();
        std::fs::write(dir.path().join("proc/meminfo"), "MemTotal: 24684084 kB\n").unwrap();
        let host = Host::snapshot(dir.path()).unwrap();
        g.bench_function(format!("storage_gather/{n}"), |b| {
            b.iter(|| {
                let mut f = Facts::new(&host);
                driftaudit::unstable::facts::storage::gather(&host, &Needs::default(), &mut f);
                black_box(f)
            })
        });
    }
    g.finish();
}

/// Zimbra localconfig at 1k, 10k and 100k lines (issue 13: 20,000 distinct
/// keys took 2.3 s, a scan of every earlier key per key): `zmlocalconfig -s`
/// output and localconfig.xml (one key per line, 4 XML nodes a key, so 100k
/// lines stay under the 200,000-node cap), one key repeated and distinct keys,
/// the parsers alone and the whole `localconfig` namespace (defaults,
/// layering, `${...}` expansion, redaction). Lines per second must stay flat
/// as N grows.
fn bench_localconfig_scaling(c: &mut Criterion) {
    use driftaudit::unstable::facts::{Facts, Needs};
    use driftaudit::unstable::host::Host;
    let mut g = c.benchmark_group("localconfig_lines");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        for case in ["repeated", "distinct"] {
            let kv = |i: usize| match case {
                "repeated" => (
                    "mailboxd_java_heap_size".to_string(),
                    (2000 + i % 7).to_string(),
                ),
                _ => (
                    format!("zimbra_test_key_{i:06}"),
                    format!("${{zimbra_home}}/v{i}"),
                ),
            };
            let zm: String = (0..n)
                .map(|i| {
                    let (k, v) = kv(i);
                    format!("{k} = {v}\n")
                })
                .collect();
            let xml_lines = n.min(45_000);
            let xml: String = std::iter::once("<localconfig>\n".to_string())
                .chain((0..xml_lines).map(|i| {
                    let (k, v) = kv(i);
                    format!("<key name=\"{k}\"><value>{v}</value></key>\n")
                }))
                .chain(std::iter::once("</localconfig>\n".to_string()))
                .collect();
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(format!("zmlocalconfig_parse_{case}/{n}"), |b| {
                b.iter(|| localconfig::parse_zmlocalconfig(black_box(&zm)))
            });
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("captures")).unwrap();
            std::fs::create_dir_all(dir.path().join("etc")).unwrap();
            std::fs::write(dir.path().join("captures/zmlocalconfig.txt"), &zm).unwrap();
            // A fresh host per iteration: one host's 256 MiB read budget
            // would be spent after a few hundred reads of the capture, and
            // the gather would then measure a read error.
            g.bench_function(format!("zmlocalconfig_gather_{case}/{n}"), |b| {
                b.iter(|| {
                    let host = Host::snapshot(dir.path()).unwrap();
                    let mut f = Facts::new(&host);
                    driftaudit::unstable::facts::zimbra::gather(&host, &Needs::default(), &mut f);
                    black_box(f)
                })
            });
            g.throughput(Throughput::Elements(xml_lines as u64));
            g.bench_function(format!("xml_parse_{case}/{xml_lines}"), |b| {
                b.iter(|| localconfig::parse_xml(black_box(&xml)))
            });
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    bench,
    bench_sysctl_scaling,
    bench_mycnf_scaling,
    bench_storage_scaling,
    bench_localconfig_scaling
);
criterion_main!(benches);
