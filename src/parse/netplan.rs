//! netplan YAML (`/etc/netplan/*.yaml`, netplan.io's "YAML configuration"
//! reference, version 2), reduced to what decides IPv6 from router
//! advertisements: the global and per-device `renderer` (networkd when
//! unset), each device's id, `match` (`name` glob, `macaddress`, `driver`)
//! and `set-name`, `dhcp6`, `accept-ra`, `link-local` and whether it has an
//! IPv6 address, each with its line. Every device section (ethernets,
//! wifis, bonds, bridges, vlans, tunnels…) is read; wifi access points,
//! passwords and keys are never deserialised, so no secret leaves this
//! parser. Several files merge by device id, a later file's keys replacing
//! an earlier one's ([`merge`]), as `netplan generate` merges them. Pure.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;
use serde_saphyr::Spanned;

use super::Issue;

/// A value and the 1-based line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set<T> {
    /// The value.
    pub value: T,
    /// The line.
    pub line: usize,
}

/// One device definition (after merging).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Device {
    /// The id under its section (`eth0`, or a name of the admin's when it
    /// has a `match`).
    pub id: String,
    /// The section (`ethernets`, `wifis`, `bonds`…).
    pub section: String,
    /// The file the device was (last) defined in.
    pub file: String,
    /// The line of its id.
    pub line: usize,
    /// Its own `renderer`.
    pub renderer: Option<Set<String>>,
    /// `match: name:` (a glob).
    pub match_name: Option<Set<String>>,
    /// Whether `match` also names a MAC address or driver, which a file
    /// cannot decide.
    pub match_other: Option<Set<String>>,
    /// Whether it has a `match` at all (otherwise the id is the name).
    pub has_match: bool,
    /// `set-name`.
    pub set_name: Option<Set<String>>,
    /// `dhcp6`.
    pub dhcp6: Option<Set<bool>>,
    /// `accept-ra`.
    pub accept_ra: Option<Set<bool>>,
    /// `link-local` (the families listed).
    pub link_local: Option<Set<Vec<String>>>,
    /// An IPv6 address in `addresses`.
    pub ipv6_address: bool,
    /// A bridge's or bond's `interfaces` (its ports, which netplan gives
    /// no link-local address: `LinkLocalAddressing=no`).
    pub members: Vec<String>,
}

/// A file (or several merged): the global renderer and the devices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Netplan {
    /// `network: renderer:`, with the file it is in.
    pub renderer: Option<(String, Set<String>)>,
    /// The devices, in the order first defined.
    pub devices: Vec<Device>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Doc {
    network: Option<Net>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "kebab-case")]
struct Net {
    renderer: Option<Spanned<Json>>,
    ethernets: BTreeMap<String, Spanned<Dev>>,
    wifis: BTreeMap<String, Spanned<Dev>>,
    bonds: BTreeMap<String, Spanned<Dev>>,
    bridges: BTreeMap<String, Spanned<Dev>>,
    vlans: BTreeMap<String, Spanned<Dev>>,
    tunnels: BTreeMap<String, Spanned<Dev>>,
    vrfs: BTreeMap<String, Spanned<Dev>>,
    modems: BTreeMap<String, Spanned<Dev>>,
    dummy_devices: BTreeMap<String, Spanned<Dev>>,
    virtual_ethernets: BTreeMap<String, Spanned<Dev>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "kebab-case")]
struct Dev {
    renderer: Option<Spanned<Json>>,
    #[serde(rename = "match")]
    matching: Option<Spanned<Match>>,
    set_name: Option<Spanned<Json>>,
    dhcp6: Option<Spanned<Json>>,
    accept_ra: Option<Spanned<Json>>,
    link_local: Option<Spanned<Json>>,
    addresses: Option<Json>,
    interfaces: Option<Json>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Match {
    name: Option<Spanned<Json>>,
    macaddress: Option<Spanned<Json>>,
    driver: Option<Spanned<Json>>,
}

fn line<T>(s: &Spanned<T>) -> usize {
    (s.referenced.line() as usize).max(1)
}

fn text(s: &Spanned<Json>) -> Set<String> {
    let value = match &s.value {
        Json::String(t) => t.clone(),
        other => other.to_string(),
    };
    Set {
        value,
        line: line(s),
    }
}

/// netplan's booleans (`true`/`false`, `yes`/`no`, `on`/`off`, `y`/`n`).
fn flag(s: &Spanned<Json>) -> Option<Set<bool>> {
    let v = match &s.value {
        Json::Bool(b) => *b,
        Json::String(t) => match t.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "y" => true,
            "false" | "no" | "off" | "n" => false,
            _ => return None,
        },
        _ => return None,
    };
    Some(Set {
        value: v,
        line: line(s),
    })
}

/// Read one netplan file (`file` is its path, kept on each device).
pub fn parse(file: &str, yaml: &str) -> (Netplan, Vec<Issue>) {
    let doc: Doc = match serde_saphyr::from_str(yaml) {
        Ok(d) => d,
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("").to_string();
            return (
                Netplan::default(),
                vec![Issue::at(
                    1,
                    format!(
                        "not netplan YAML netplan could read: {}",
                        super::truncate(&first, 200)
                    ),
                )],
            );
        }
    };
    let mut out = Netplan::default();
    let mut issues = Vec::new();
    let Some(net) = doc.network else {
        return (out, issues);
    };
    if let Some(r) = &net.renderer {
        out.renderer = Some((file.to_string(), text_of(r)));
    }
    let sections = [
        ("ethernets", net.ethernets),
        ("wifis", net.wifis),
        ("bonds", net.bonds),
        ("bridges", net.bridges),
        ("vlans", net.vlans),
        ("tunnels", net.tunnels),
        ("vrfs", net.vrfs),
        ("modems", net.modems),
        ("dummy-devices", net.dummy_devices),
        ("virtual-ethernets", net.virtual_ethernets),
    ];
    for (section, devs) in sections {
        for (id, d) in devs {
            let at = key_line(yaml, &id, line(&d));
            let d = d.value;
            let mut dev = Device {
                id,
                section: section.to_string(),
                file: file.to_string(),
                line: at,
                renderer: d.renderer.as_ref().map(text_of),
                set_name: d.set_name.as_ref().map(text),
                ..Device::default()
            };
            if let Some(m) = &d.matching {
                dev.has_match = true;
                dev.match_name = m.value.name.as_ref().map(text);
                dev.match_other = m
                    .value
                    .macaddress
                    .as_ref()
                    .or(m.value.driver.as_ref())
                    .map(text);
            }
            for (raw, slot) in [
                (&d.dhcp6, &mut dev.dhcp6),
                (&d.accept_ra, &mut dev.accept_ra),
            ] {
                if let Some(s) = raw {
                    *slot = flag(s);
                    if slot.is_none() {
                        issues.push(Issue::at(line(s), "not a boolean netplan reads: ignored"));
                    }
                }
            }
            if let Some(s) = &d.link_local {
                let list = match &s.value {
                    Json::Array(a) => a
                        .iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect(),
                    _ => Vec::new(),
                };
                dev.link_local = Some(Set {
                    value: list,
                    line: line(s),
                });
            }
            dev.ipv6_address = d.addresses.as_ref().is_some_and(|a| match a {
                Json::Array(list) => list.iter().any(|x| match x {
                    Json::String(s) => s.contains(':'),
                    Json::Object(o) => o.keys().any(|k| k.contains(':')),
                    _ => false,
                }),
                _ => false,
            });
            if let Some(Json::Array(list)) = &d.interfaces {
                dev.members = list
                    .iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect();
            }
            out.devices.push(dev);
        }
    }
    (out, issues)
}

/// The line of the key `id` whose value starts at `value_line`: that line
/// or the nearest one above it that starts with `id:` (a block mapping's
/// value starts on the line after its key).
fn key_line(yaml: &str, id: &str, value_line: usize) -> usize {
    let lines: Vec<&str> = yaml.lines().take(value_line).collect();
    for (i, l) in lines.iter().enumerate().rev() {
        let t = l.trim_start().trim_start_matches(['"', '\'']);
        if t.starts_with(id)
            && t[id.len()..]
                .trim_start_matches(['"', '\''])
                .starts_with(':')
        {
            return i + 1;
        }
    }
    value_line
}

fn text_of(s: &Spanned<Json>) -> Set<String> {
    text(s)
}

/// `later` merged over `into`: a device defined again takes the later
/// file's keys where it sets them (netplan merges the YAML trees of all
/// files in the order of their names).
pub fn merge(into: &mut Netplan, later: Netplan) {
    if later.renderer.is_some() {
        into.renderer = later.renderer;
    }
    for d in later.devices {
        match into
            .devices
            .iter_mut()
            .find(|x| x.id == d.id && x.section == d.section)
        {
            None => into.devices.push(d),
            Some(x) => {
                x.file = d.file;
                x.line = d.line;
                x.renderer = d.renderer.or(x.renderer.take());
                if d.has_match {
                    x.has_match = true;
                    x.match_name = d.match_name;
                    x.match_other = d.match_other;
                }
                x.set_name = d.set_name.or(x.set_name.take());
                x.dhcp6 = d.dhcp6.or(x.dhcp6.take());
                x.accept_ra = d.accept_ra.or(x.accept_ra.take());
                x.link_local = d.link_local.or(x.link_local.take());
                x.ipv6_address |= d.ipv6_address;
                if !d.members.is_empty() {
                    x.members = d.members;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_keep_their_lines_and_wifi_secrets_are_never_read() {
        let (n, issues) = parse(
            "/etc/netplan/50.yaml",
            "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n    eth0:\n      dhcp6: yes\n      accept-ra: false\n    lan:\n      match:\n        name: \"en*\"\n      set-name: lan0\n  wifis:\n    wl0:\n      access-points:\n        home:\n          password: hunter2secret\n",
        );
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(n.renderer.as_ref().unwrap().1.value, "networkd");
        let eth0 = &n.devices[0];
        assert_eq!(
            eth0.dhcp6,
            Some(Set {
                value: true,
                line: 6
            })
        );
        assert_eq!(
            eth0.accept_ra,
            Some(Set {
                value: false,
                line: 7
            })
        );
        let lan = &n.devices[1];
        assert_eq!(lan.match_name.as_ref().unwrap().value, "en*");
        assert_eq!(lan.set_name.as_ref().unwrap().value, "lan0");
        assert!(!format!("{n:?}").contains("hunter2"));
    }

    #[test]
    fn a_later_file_replaces_the_keys_it_sets() {
        let (mut a, _) = parse(
            "/etc/netplan/a.yaml",
            "network:\n  ethernets:\n    eth0:\n      dhcp6: true\n      accept-ra: true\n",
        );
        let (b, _) = parse(
            "/etc/netplan/b.yaml",
            "network:\n  ethernets:\n    eth0:\n      accept-ra: false\n",
        );
        merge(&mut a, b);
        let d = &a.devices[0];
        assert!(d.dhcp6.as_ref().unwrap().value);
        assert!(!d.accept_ra.as_ref().unwrap().value);
        assert_eq!(d.file, "/etc/netplan/b.yaml");
    }
}
