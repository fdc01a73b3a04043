//! Embedding driftaudit in another tool: audit a snapshot with one policy
//! given as a string and print failing findings in this tool's own format.
//!
//! ```text
//! cargo run --example embed                        # testdata/hosts/nat-story
//! cargo run --example embed -- path/to/snapshot
//! ```
//!
//! Prints one tab-separated line per failing finding on stdout and a summary
//! on stderr. Exits 0 when the audit ran (whatever it found, so CI can run
//! the example as a smoke test) and 2 on a policy or snapshot error.

use std::process::ExitCode;

use driftaudit::{audit, Host, PolicySet, Status};

/// Our own house policy, written inline (the same language as the shipped
/// policies; see docs/policy-language.md).
const POLICY: &str = r#"
policy: house-rules
title: Our house rules
params:
  min_backlog: {type: number, min: 1, default: 1024}
rules:
  - id: house.no-tw-recycle
    title: Never recycle TIME-WAIT sockets
    severity: high
    setting: sysctl.net.ipv4.tcp_tw_recycle
    expect: { equals: 0 }
    why: net.ipv4.tcp_tw_recycle is {actual} ({source}); clients behind NAT lose connections.
    fix: Set net.ipv4.tcp_tw_recycle = 0 in /etc/sysctl.d/.
  - id: house.listen-backlog
    title: Listen backlog large enough for our proxies
    severity: low
    setting: sysctl.net.core.somaxconn
    expect: { min: "${params.min_backlog}" }
    why: net.core.somaxconn is {actual} ({source}), below our minimum of {params.min_backlog}.
    fix: Set net.core.somaxconn = {params.min_backlog} in /etc/sysctl.d/.
"#;

fn main() -> ExitCode {
    let dir = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/nat-story").to_string()
    });

    let mut policies = PolicySet::new();
    if let Err(e) = policies.add_str("house-rules.yaml", POLICY) {
        eprintln!("embed: {e}");
        return ExitCode::from(2);
    }
    let host = match Host::snapshot(&dir) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("embed: snapshot `{dir}`: {e}");
            return ExitCode::from(2);
        }
    };

    let report = audit(&policies, &[host]);
    for h in &report.hosts {
        for f in h.findings.iter().filter(|f| f.status == Status::Fail) {
            let place = f
                .evidence
                .first()
                .map(|e| match e.line {
                    Some(l) => format!("{}:{l}", e.path),
                    None => e.path.clone(),
                })
                .unwrap_or_else(|| "-".into());
            // One tab-separated line per failure, for our log shipper.
            println!(
                "{}\t{}\t{}\t{}\t{}",
                h.host,
                f.severity,
                f.rule,
                place,
                f.actual.as_deref().unwrap_or("-")
            );
        }
        eprintln!(
            "{}: {} failed, {} passed, {} unknown",
            h.host, h.summary.fail, h.summary.pass, h.summary.unknown
        );
    }
    ExitCode::SUCCESS
}
