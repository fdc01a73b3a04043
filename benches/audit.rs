//! One whole snapshot audit with every built-in policy (gather: all reads and
//! parses; evaluate: the rules), on the shipped test hosts.
//! Run: `cargo bench --bench audit`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};

use driftaudit::unstable::engine;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::policy::PolicySet;

fn bench(c: &mut Criterion) {
    let set = PolicySet::builtin().expect("built-in policies");
    let hosts = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");
    for name in ["nat-story", "zimbra-khimki-asfound"] {
        let host = Host::snapshot(format!("{hosts}/{name}")).expect("test host");
        c.bench_function(&format!("audit/{name}"), |b| {
            b.iter(|| engine::audit_host(black_box(&set), black_box(&host)))
        });
        let facts = engine::gather(&set, &host);
        c.bench_function(&format!("evaluate/{name}"), |b| {
            b.iter(|| engine::evaluate(black_box(&set), black_box(&facts)))
        });
    }
    c.bench_function("policies/load_builtin", |b| b.iter(PolicySet::builtin));
}

criterion_group!(benches, bench);
criterion_main!(benches);
