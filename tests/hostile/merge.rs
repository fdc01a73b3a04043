//! `driftaudit merge` holds one host of each report at a time, not the
//! fleet (issue 35: it held every shard's hosts, 2.28 GB for 10,000 hosts,
//! and refused a report over 256 MiB): the first pass and the second over
//! a report ten times as large peak at the same bytes, measured by the
//! counting allocator on the thread that runs them (the library's passes
//! start no thread). Bounded by bytes, not time.

use std::fs;
use std::path::Path;

use driftaudit::unstable::fleet::merge as streamed;
use driftaudit::unstable::fleet::{self, FleetSummary};
use driftaudit::unstable::policy::{PolicySet, Severity};
use driftaudit::unstable::render::stream::FleetWriter;
use driftaudit::unstable::render::{Format, RenderOptions};
use driftaudit::unstable::report::merge::RunMeta;
use driftaudit::unstable::report::{HostReport, Report};

use crate::alloc::measure;

/// A fleet report of `copies` copies of `hosts`, each copy under a folder
/// of its own, in path order, as `check --fleet --format json` writes it.
fn report(set: &PolicySet, hosts: &[HostReport], copies: usize) -> Vec<u8> {
    let rules = Report::new(vec![], set).rules;
    let mut w = FleetWriter::new(Vec::new(), Format::Json, RenderOptions::default())
        .unwrap()
        .with_run(&rules, &RunMeta::new(set, "low"))
        .unwrap();
    let mut summary = FleetSummary::new(set);
    for c in 0..copies {
        for h in hosts {
            let mut h = h.clone();
            let path = format!("c{c:04}/{}", h.host);
            h.path = Some(path.clone());
            summary.add(&h, &path, Severity::Low);
            w.host(h).unwrap();
        }
    }
    w.finish(&summary).unwrap()
}

/// Both passes over one report: every host's bytes, counted.
fn merge_all(path: &Path) -> (usize, usize) {
    let input = streamed::scan("report.json", path).unwrap();
    let plan = streamed::plan(vec![input]).unwrap();
    let mut hosts = plan.stream().unwrap();
    let (mut n, mut bytes) = (0, 0);
    while let Some(h) = hosts.next_host().unwrap() {
        assert!(h.pretty);
        n += 1;
        bytes += h.text.len();
    }
    (n, bytes)
}

#[test]
fn merging_a_report_ten_times_as_large_holds_no_more() {
    let set = PolicySet::builtin().unwrap();
    let testdata = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts"));
    let mut dirs: Vec<_> = fs::read_dir(testdata)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut hosts: Vec<HostReport> = dirs.iter().map(|d| fleet::audit_dir(&set, d)).collect();
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    hosts.dedup_by(|a, b| a.host == b.host);
    assert!(hosts.len() >= 10, "{} hosts", hosts.len());
    let d = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for copies in [2, 20] {
        let p = d.path().join(format!("{copies}.json"));
        let text = report(&set, &hosts, copies);
        fs::write(&p, &text).unwrap();
        let (cost, (n, bytes)) = measure(|| merge_all(&p));
        assert_eq!(n, hosts.len() * copies);
        assert!(
            bytes * 10 > text.len() * 9,
            "the hosts are most of the report"
        );
        peaks.push((text.len(), cost.peak));
    }
    let ((small, small_peak), (large, large_peak)) = (peaks[0], peaks[1]);
    assert!(large >= 9 * small, "{large} against {small} bytes");
    // a window of the report (a 1 MiB read, the host being read) and the
    // summary: the same whatever the report's size
    assert!(
        large_peak <= small_peak + small_peak / 4,
        "{large_peak} bytes held for a report of {large} bytes, {small_peak} for one of {small}"
    );
    assert!(large_peak < 8 << 20, "{large_peak} bytes held");
}
