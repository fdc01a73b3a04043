//! Services that apply sysctl values after the init's own applier, each by
//! its own start logic: ufw ([`ufw`]: ufw-init and ufw-init-functions
//! `ufw_start`, which run `sysctl -e -q -p $IPT_SYSCTL` only when
//! /etc/ufw/ufw.conf says `ENABLED=yes`). Decides which file a service
//! applies and whether, never which line wins (`precedence`) nor a verdict.
//! Reads only through [`Host`].

use crate::host::{Host, ReadError, SourceKind};

/// ufw's settings file, sourced by ufw-init (Debian/Ubuntu: `. /etc/ufw/ufw.conf`).
pub const UFW_CONF: &str = "/etc/ufw/ufw.conf";
/// Sourced by ufw-init-functions before ufw.conf: where `IPT_SYSCTL` is set.
pub const UFW_DEFAULT: &str = "/etc/default/ufw";
/// The file the ufw package names in `IPT_SYSCTL`.
pub const UFW_SYSCTL: &str = "/etc/ufw/sysctl.conf";

/// What ufw applies when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ufw {
    /// Nothing (not installed, disabled, no IPT_SYSCTL): why, for notes.
    Nothing(String),
    /// `sysctl -p FILE` after the boot's applier; how it was decided.
    Applies { file: String, why: String },
    /// Not known (a snapshot without ufw.conf): the file, and why.
    Unknown { file: String, why: String },
}

/// The last `NAME=value` of a shell file that only assigns (ufw.conf,
/// /etc/default/ufw), quotes removed.
fn shell_var(text: &str, name: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (k.trim() == name).then(|| {
                let v = v.trim();
                v.trim_matches('"').trim_matches('\'').to_string()
            })
        })
        .next_back()
}

/// What ufw applies at start, as ufw-init decides it: it sources
/// /etc/ufw/ufw.conf (a missing file ends the script: `set -e`) and exits
/// before anything when `start quiet` meets `ENABLED=no`;
/// ufw-init-functions sources /etc/default/ufw then ufw.conf, and
/// `ufw_start` does nothing unless `ENABLED` is `yes` or `YES`, and runs
/// `sysctl -e -q -p $IPT_SYSCTL` only when that file is not empty.
pub fn ufw(host: &Host) -> Ufw {
    let conf = match host.read_to_string(UFW_CONF) {
        Ok(t) => t,
        Err(ReadError::NotFound) => {
            // a snapshot taken before ufw.conf was read may still hold the sysctl file
            if host.kind() == SourceKind::Snapshot && host.exists(UFW_SYSCTL) {
                return Ufw::Unknown {
                    file: UFW_SYSCTL.into(),
                    why: format!(
                        "ufw applies {UFW_SYSCTL} only when {UFW_CONF} says ENABLED=yes, and the snapshot does not hold {UFW_CONF}: take it again with this driftaudit"
                    ),
                };
            }
            return Ufw::Nothing(format!("{UFW_CONF} does not exist: ufw is not installed"));
        }
        Err(e) => {
            return Ufw::Unknown {
                file: UFW_SYSCTL.into(),
                why: format!("{UFW_CONF} cannot be read ({e}), so whether ufw starts is not known"),
            }
        }
    };
    let default = host.read_to_string(UFW_DEFAULT).ok();
    let get = |name: &str| {
        shell_var(&conf, name).or_else(|| default.as_deref().and_then(|d| shell_var(d, name)))
    };
    let enabled = get("ENABLED").unwrap_or_default();
    if enabled != "yes" && enabled != "YES" {
        let shown = if enabled.is_empty() {
            "does not set ENABLED".to_string()
        } else {
            format!("says ENABLED={enabled}")
        };
        return Ufw::Nothing(format!(
            "{UFW_CONF} {shown}: ufw-init exits before applying anything (ufw_start applies its sysctl file only when ENABLED is yes)"
        ));
    }
    let file = match (get("IPT_SYSCTL"), &default) {
        (Some(f), _) => f,
        // the package's /etc/default/ufw names it; a snapshot may lack the file
        (None, None) if host.kind() == SourceKind::Snapshot => UFW_SYSCTL.to_string(),
        (None, _) => {
            return Ufw::Nothing(format!(
            "ufw is enabled but {UFW_DEFAULT} sets no IPT_SYSCTL: ufw_start applies no sysctl file"
        ))
        }
    };
    if file.is_empty() {
        return Ufw::Nothing("IPT_SYSCTL is empty: ufw_start applies no sysctl file".into());
    }
    Ufw::Applies {
        why: format!(
            "{UFW_CONF} says ENABLED={enabled}: ufw-init runs `sysctl -e -q -p {file}` when the firewall starts"
        ),
        file,
    }
}

#[cfg(test)]
mod tests {
    use super::shell_var;

    #[test]
    fn the_last_assignment_wins_and_quotes_go() {
        let t = "# ENABLED=yes\nENABLED=yes\nENABLED=\"no\"\n";
        assert_eq!(shell_var(t, "ENABLED").as_deref(), Some("no"));
        assert_eq!(shell_var(t, "IPT_SYSCTL"), None);
    }
}
