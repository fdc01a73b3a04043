//! Issue 48, role evidence: an interface configured by SLAAC needs
//! `accept_ra`, so `hardening.ipv6-accept-ra` does not judge it and says
//! from what file and line it knows. One fixture per configurator
//! (systemd-networkd, NetworkManager, netplan, ifupdown's sources), netplan
//! itself as the reference for what its YAML becomes (`netplan generate`
//! on a private root), and a snapshot of planted keyfiles and netplan
//! files that must hold no secret (run as root in a private mount
//! namespace).

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::audit;
use crate::common::cli::says;
use crate::common::mountns::{self, Sh};
use driftaudit::unstable::report::Status;

const RULE: &str = "hardening.ipv6-accept-ra";

/// The snapshot files of a kernel with these interfaces, each with
/// accept_ra = 1.
fn kernel(ifaces: &[&str]) -> Vec<(String, String)> {
    let mut v = vec![(
        "/proc/sys/kernel/osrelease".to_string(),
        "6.1.0-28-amd64\n".to_string(),
    )];
    for i in ifaces {
        v.push((
            format!("/proc/sys/net/ipv6/conf/{i}/accept_ra"),
            "1\n".to_string(),
        ));
    }
    v
}

/// Each interface's status under the rule (`None`: not judged), and the
/// words of the audit's notes.
fn judge(dir: &Path) -> (BTreeMap<String, Option<Status>>, String) {
    let set = audit::only(&[RULE, "driftaudit.input"]);
    let report = audit::report(&set, dir);
    let mut out = BTreeMap::new();
    let mut notes = String::new();
    for f in &report.findings {
        if f.rule == RULE {
            out.insert(f.subject[0].clone(), Some(f.status));
        } else {
            notes.push_str(&f.explanation);
            notes.push('\n');
        }
    }
    (out, notes)
}

fn audit_of(files: &[(&str, &str)], ifaces: &[&str]) -> (BTreeMap<String, Option<Status>>, String) {
    let k = kernel(ifaces);
    let mut all: Vec<(&str, &str)> = k.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    all.extend_from_slice(files);
    let d = audit::stamped("slaac", &all);
    judge(d.path())
}

fn status(m: &BTreeMap<String, Option<Status>>, i: &str) -> Option<Status> {
    m.get(i).copied().flatten()
}

#[test]
fn networkd_accepts_advertisements_by_default_and_etc_masks_the_same_name_in_usr_lib() {
    let (m, notes) = audit_of(
        &[
            (
                "/etc/systemd/system/multi-user.target.wants/systemd-networkd.service",
                "",
            ),
            // same name in /usr/lib says no: /etc masks it
            (
                "/usr/lib/systemd/network/20-wired.network",
                "[Match]\nName=en*\n\n[Network]\nIPv6AcceptRA=no\n",
            ),
            (
                "/etc/systemd/network/20-wired.network",
                "[Match]\nName=en*\n\n[Network]\nDHCP=yes\n",
            ),
            // sorts first: eth1 takes this file and no other
            (
                "/etc/systemd/network/10-eth1.network",
                "[Match]\nName=eth1\n\n[Network]\nIPv6AcceptRA=no\n",
            ),
            (
                "/run/systemd/network/30-eth.network",
                "[Match]\nName=eth*\n\n[Network]\nIPv6AcceptRA=yes\n",
            ),
            (
                "/etc/systemd/network/40-mac.network",
                "[Match]\nMACAddress=52:54:00:00:00:09\n\n[Network]\nIPv6AcceptRA=yes\n",
            ),
        ],
        &["enp1s0", "eth0", "eth1", "wlan0"],
    );
    assert_eq!(status(&m, "enp1s0"), None, "{m:?}");
    assert_eq!(status(&m, "eth0"), None, "{m:?}");
    assert_eq!(status(&m, "eth1"), Some(Status::Fail), "{m:?}");
    assert_eq!(status(&m, "wlan0"), Some(Status::Fail), "{m:?}");
    says(
        &notes,
        "enp1s0: matched by /etc/systemd/network/20-wired.network:2",
    );
    says(
        &notes,
        "eth0: `IPv6AcceptRA=yes` at /run/systemd/network/30-eth.network:5",
    );
    // a MAC match is not decided from a file, and said
    says(&notes, "wlan0: /etc/systemd/network/40-mac.network:2 matches it only if its `MACAddress=` does too");
}

#[test]
fn networkd_files_of_a_networkd_that_is_not_enabled_are_no_evidence() {
    let (m, _) = audit_of(
        &[(
            "/etc/systemd/network/20-wired.network",
            "[Match]\nName=en*\n",
        )],
        &["enp1s0"],
    );
    assert_eq!(status(&m, "enp1s0"), Some(Status::Fail), "{m:?}");
}

#[test]
fn a_networkmanager_profile_with_auto_or_no_ipv6_method_is_slaac_and_its_psk_stays_out() {
    let (m, notes) = audit_of(
        &[
            ("/run/NetworkManager/NetworkManager.state", "[main]\n"),
            // no [ipv6] group: NetworkManager's default method is auto
            ("/etc/NetworkManager/system-connections/wired.nmconnection", "[connection]\nid=wired\ntype=ethernet\ninterface-name=eth0\n\n[ipv4]\nmethod=auto\n"),
            ("/etc/NetworkManager/system-connections/home.nmconnection", "[connection]\nid=home\ntype=wifi\ninterface-name=wlan0\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk=hunter2secret\n\n[ipv6]\nmethod=ignore\n"),
            ("/etc/NetworkManager/system-connections/lab.nmconnection", "[connection]\nid=lab\ntype=ethernet\n\n[match]\ninterface-name=enp*;!enp9s0\n\n[ipv6]\nmethod=auto\n"),
        ],
        &["eth0", "wlan0", "enp1s0", "enp9s0"],
    );
    assert_eq!(status(&m, "eth0"), None, "{m:?}");
    assert_eq!(status(&m, "enp1s0"), None, "{m:?}");
    assert_eq!(status(&m, "wlan0"), Some(Status::Fail), "{m:?}");
    assert_eq!(status(&m, "enp9s0"), Some(Status::Fail), "{m:?}");
    says(
        &notes,
        "eth0: no `[ipv6] method` in /etc/NetworkManager/system-connections/wired.nmconnection",
    );
    says(
        &notes,
        "enp1s0: `method=auto` at /etc/NetworkManager/system-connections/lab.nmconnection:9",
    );
    assert!(!notes.contains("hunter2"), "{notes}");
}

#[test]
fn netplan_devices_follow_their_renderer_and_a_later_file_wins() {
    let (m, notes) = audit_of(
        &[
            ("/etc/netplan/50-cloud-init.yaml", "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n    eth1:\n      accept-ra: true\n    lan:\n      match:\n        name: \"enp*\"\n      set-name: lan0\n      dhcp6: true\n    nm0:\n      renderer: NetworkManager\n      dhcp4: true\n"),
            ("/etc/netplan/90-local.yaml", "network:\n  ethernets:\n    eth1:\n      accept-ra: false\n"),
        ],
        &["eth0", "eth1", "lan0", "nm0"],
    );
    assert_eq!(status(&m, "eth0"), None, "{m:?}");
    assert_eq!(status(&m, "lan0"), None, "{m:?}");
    assert_eq!(status(&m, "eth1"), Some(Status::Fail), "{m:?}");
    assert_eq!(status(&m, "nm0"), Some(Status::Fail), "{m:?}");
    says(
        &notes,
        "eth0: `eth0` at /etc/netplan/50-cloud-init.yaml:4 has no `accept-ra`",
    );
}

#[test]
fn ifupdown_stanzas_in_sourced_files_with_accept_ra_are_slaac() {
    let (m, notes) = audit_of(
        &[
            ("/etc/network/interfaces", "auto lo\niface lo inet loopback\nsource ifaces/*.cfg\nsource-directory /etc/network/more\n"),
            ("/etc/network/ifaces/eth0.cfg", "iface eth0 inet6 static\n    address 2001:db8::1/64\n    accept_ra 2\n"),
            ("/etc/network/more/eth1", "iface eth1 inet6 auto\n"),
            ("/etc/network/ifaces/eth2.cfg", "iface eth2 inet6 static\n    address 2001:db8::2/64\n"),
        ],
        &["eth0", "eth1", "eth2"],
    );
    assert_eq!(status(&m, "eth0"), None, "{m:?}");
    assert_eq!(status(&m, "eth1"), None, "{m:?}");
    assert_eq!(status(&m, "eth2"), Some(Status::Fail), "{m:?}");
    says(&notes, "with `accept_ra` at /etc/network/ifaces/eth0.cfg:3");
    says(
        &notes,
        "`iface eth1 inet6 auto` at /etc/network/more/eth1:1",
    );
}

/// The reference: `netplan generate --root-dir` turns the YAML into the
/// networkd and NetworkManager files it really writes; a snapshot of the
/// YAML alone and one of the generated files alone must exempt the same
/// interfaces. netplan.io is installed by .ci/run; under CI a missing
/// netplan fails.
#[test]
fn netplan_yaml_and_the_files_netplan_generates_give_the_same_slaac_interfaces() {
    let netplan = ["/usr/sbin/netplan", "/usr/bin/netplan"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(netplan) = netplan else {
        assert!(
            std::env::var("CI").is_err(),
            "netplan is missing (apt-get install netplan.io)"
        );
        eprintln!("skipped: netplan is not installed");
        return;
    };
    let yaml = "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n    eth1:\n      accept-ra: false\n    eth2:\n      link-local: [ipv4]\n    eth3:\n      accept-ra: true\n      dhcp6: true\n    lan:\n      match:\n        name: \"enp*\"\n      set-name: lan0\n    nm0:\n      renderer: NetworkManager\n      dhcp6: true\n    nm1:\n      renderer: NetworkManager\n      accept-ra: true\n    nm2:\n      renderer: NetworkManager\n      addresses: [\"2001:db8::7/64\"]\n    eth9: {}\n  bridges:\n    br0:\n      interfaces: [eth9]\n";
    let ifaces = [
        "eth0", "eth1", "eth2", "eth3", "lan0", "nm0", "nm1", "nm2", "br0", "eth9",
    ];
    let root = tempfile::tempdir().unwrap();
    let etc = root.path().join("etc/netplan");
    std::fs::create_dir_all(&etc).unwrap();
    let f = etc.join("50-test.yaml");
    std::fs::write(&f, yaml).unwrap();
    // netplan warns about a world-readable file
    std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = std::process::Command::new(netplan)
        .args(["generate", "--root-dir"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the generated files, as a snapshot of the running host holds them
    let mut generated: Vec<(String, String)> = Vec::new();
    for dir in [
        "run/systemd/network",
        "run/NetworkManager/system-connections",
    ] {
        for e in std::fs::read_dir(root.path().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension()
                .is_some_and(|x| x == "network" || x == "netdev" || x == "nmconnection")
            {
                let rel = p.strip_prefix(root.path()).unwrap();
                generated.push((
                    format!("/{}", rel.display()),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    assert!(generated.len() >= 8, "{generated:?}");
    let gen: Vec<(&str, &str)> = generated
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let (from_generated, _) = audit_of(&gen, &ifaces);
    let (from_yaml, notes) = audit_of(&[("/etc/netplan/50-test.yaml", yaml)], &ifaces);
    assert_eq!(from_yaml, from_generated, "{notes}\n{generated:?}");
    // and the set is the one netplan's documentation and networkd's give
    let exempt: Vec<&str> = ifaces
        .iter()
        .copied()
        .filter(|i| status(&from_yaml, i).is_none())
        .collect();
    assert_eq!(exempt, ["eth0", "eth3", "lan0", "nm0"], "{notes}");
}

/// A snapshot copies the NetworkManager and netplan files the evidence
/// reads, with every secret replaced (tmpfs over /run in a private mount
/// namespace: nothing on the host changes).
#[test]
fn a_snapshot_copies_networkmanager_and_netplan_files_without_their_secrets() {
    if !mountns::is_root() {
        assert!(
            std::env::var("CI").is_err(),
            "needs root for a private mount namespace"
        );
        eprintln!("skipped: not root");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_driftaudit");
    let out = tempfile::tempdir().unwrap();
    let snap = out.path().join("s");
    let script = format!(
        "mount -t tmpfs tmpfs /run\n\
         mkdir -p /run/NetworkManager/system-connections /run/netplan\n\
         printf '[connection]\\nid=home\\ntype=wifi\\ninterface-name=wlan0\\n\\n[wifi-security]\\nkey-mgmt=wpa-psk\\npsk=hunter2secret\\n\\n[802-1x]\\npassword=s3cretpass\\n\\n[ipv6]\\nmethod=auto\\n' > /run/NetworkManager/system-connections/home.nmconnection\n\
         printf 'network:\\n  wifis:\\n    wlan1:\\n      dhcp6: true\\n      access-points:\\n        home:\\n          password: wifipass99\\n' > /run/netplan/60-wifi.yaml\n\
         {bin} snapshot --out {}\n",
        snap.display()
    );
    let (code, stdout, stderr) = mountns::run(&script, Sh::Errexit, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let keyfile = std::fs::read_to_string(
        snap.join("run/NetworkManager/system-connections/home.nmconnection"),
    )
    .unwrap();
    says(&keyfile, "psk=<redacted>");
    says(&keyfile, "method=auto");
    let yaml = std::fs::read_to_string(snap.join("run/netplan/60-wifi.yaml")).unwrap();
    says(&yaml, "dhcp6: true");
    let grep = std::process::Command::new("grep")
        .args(["-r", "-l", "-E", "hunter2secret|s3cretpass|wifipass99"])
        .arg(&snap)
        .output()
        .unwrap();
    assert!(
        grep.stdout.is_empty(),
        "a secret in {}",
        String::from_utf8_lossy(&grep.stdout)
    );
}
