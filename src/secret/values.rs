//! One value or one line made safe to show, on the decision of `names`:
//! the value shown for a name, secret assignments inside a value (a Java
//! `-D...Password=` option beside a heap size), a mount options field
//! (CIFS `,,` and `user%password` included), and the text of a line a
//! message may quote. Must not decide what is secret itself, nor know
//! whole file formats (that is `files`).

use std::borrow::Cow;

use super::names::{
    embedded_name_is_secret, is_secret, mount_option_is_secret, Format, MOUNT_USER_OPTIONS,
};
use super::REDACTED;

/// `value` with the value of every secret assignment inside it (see
/// [`embedded_name_is_secret`]: `-Djavax.net.ssl.trustStorePassword=x` in
/// `mailboxd_java_options`) replaced by [`REDACTED`], the rest kept, so a
/// heap size beside a password stays checkable. A quoted value (`-Dp="a
/// b"`) is redacted to its closing quote.
pub fn redact_embedded(value: &str) -> Cow<'_, str> {
    if !value.contains('=') {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut changed = false;
    let mut rest = value;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..end];
        if let Some((name, v)) = tok.split_once('=') {
            let bare = match name.strip_prefix("-D") {
                Some(p) if !name.starts_with("--") => p,
                _ => name.trim_start_matches('-'),
            };
            if embedded_name_is_secret(bare) {
                changed = true;
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
                let value_at = name.len() + 1;
                let mut upto = end;
                if let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') {
                    let closed_in_token = v.len() > 1 && v[1..].contains(q);
                    if !closed_in_token {
                        upto = match rest[value_at + 1..].find(q) {
                            Some(i) => {
                                let e = value_at + 1 + i + 1;
                                e + rest[e..]
                                    .find(char::is_whitespace)
                                    .unwrap_or(rest.len() - e)
                            }
                            None => rest.len(),
                        };
                    }
                }
                rest = &rest[upto..];
                continue;
            }
        }
        out.push_str(tok);
        rest = &rest[end..];
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(value)
    }
}

/// The value to show for `name` in `format`: [`REDACTED`] for a secret.
pub fn shown<'a>(format: Format, name: &str, value: &'a str) -> Cow<'a, str> {
    if is_secret(format, name) {
        Cow::Borrowed(REDACTED)
    } else {
        Cow::Borrowed(value)
    }
}

/// A comma-separated mount options field with every secret value replaced
/// by [`REDACTED`]. A CIFS password may hold a comma written `,,`; the text
/// after such a pair belongs to the password and is dropped with it.
pub fn redact_mount_options(opts: &str) -> Cow<'_, str> {
    let parts: Vec<&str> = opts.split(',').collect();
    if !parts.iter().any(|p| {
        let (n, v) = split_opt(p);
        mount_option_is_secret(n, v)
    }) {
        return Cow::Borrowed(opts);
    }
    let mut out: Vec<String> = Vec::with_capacity(parts.len());
    let mut i = 0;
    while i < parts.len() {
        let p = parts[i];
        let (n, v) = split_opt(p);
        if mount_option_is_secret(n, v) && v.is_some() {
            let is_user = MOUNT_USER_OPTIONS.contains(&n.to_ascii_lowercase().as_str());
            let shown = if is_user {
                let v = v.unwrap_or_default();
                let user = &v[..v.find('%').unwrap_or(v.len())];
                format!("{n}={user}%{REDACTED}")
            } else {
                format!("{n}={REDACTED}")
            };
            out.push(shown);
            i += 1;
            // `,,` inside the password: skip the empty piece and the piece after it.
            while i + 1 < parts.len() && parts[i].is_empty() {
                i += 2;
            }
            continue;
        }
        out.push(p.to_string());
        i += 1;
    }
    Cow::Owned(out.join(","))
}

fn split_opt(p: &str) -> (&str, Option<&str>) {
    match p.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (p, None),
    }
}

/// The first word of a line (before whitespace, `=`, `:` or a tab), after
/// leading blanks and a sysctl `-` prefix: the key a malformed line would
/// have set.
pub fn leading_key(line: &str) -> &str {
    let t = line.trim_start();
    let t = t.strip_prefix('-').unwrap_or(t).trim_start();
    let end = t
        .find(|c: char| c.is_whitespace() || c == '=' || c == ':')
        .unwrap_or(t.len());
    &t[..end]
}

/// Text of a line safe to quote in a message: the line itself, or, when its
/// first word is a secret name in `format` (`password hunter2`,
/// `zimbra_mysql_password: X`, `report_password<TAB>X`), only that name
/// followed by [`REDACTED`]. Messages quote lines only through this.
pub fn quotable(format: Format, line: &str) -> Cow<'_, str> {
    let key = leading_key(line);
    if !key.is_empty() && is_secret(format, key) {
        Cow::Owned(format!("{key} {REDACTED}"))
    } else {
        Cow::Borrowed(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::localconfig_key_is_secret;

    #[test]
    fn secrets_inside_java_option_strings_are_redacted_by_meaning() {
        let v = "-server -Xmx2g -Djavax.net.ssl.trustStorePassword=P1 -Dzimbra.apiKey=P2 \
                 -Dx.keystore=/k -Dauth.token='a b P3' --db-secret=\"P4 P5\" -Dk=v";
        let r = redact_embedded(v);
        for p in ["P1", "P2", "P3", "P4", "P5"] {
            assert!(!r.contains(p), "{p} in {r}");
        }
        for kept in ["-server", "-Xmx2g", "-Dx.keystore=/k", "-Dk=v"] {
            assert!(r.contains(kept), "{kept} lost from {r}");
        }
        assert!(r.contains(&format!("trustStorePassword={REDACTED}")), "{r}");
        assert!(matches!(
            redact_embedded("-Xmx2g -Dfoo=bar"),
            Cow::Borrowed(_)
        ));
        assert!(localconfig_key_is_secret("zimbra_api_key"));
        assert!(!localconfig_key_is_secret("mailboxd_keystore"));
    }

    #[test]
    fn mount_options_redacted_keep_the_rest() {
        assert_eq!(
            redact_mount_options("rw,username=bob,password=hunter2,vers=3.0"),
            "rw,username=bob,password=<redacted>,vers=3.0"
        );
        assert_eq!(
            redact_mount_options("pass=a,,b,,c,uid=0"),
            "pass=<redacted>,uid=0"
        );
        assert_eq!(
            redact_mount_options("username=dom/bob%hunter2,credentials=/root/.smb"),
            "username=dom/bob%<redacted>,credentials=/root/.smb"
        );
        assert_eq!(redact_mount_options("defaults,noatime"), "defaults,noatime");
    }

    #[test]
    fn quotable_lines_never_carry_a_secret_value() {
        assert_eq!(
            quotable(Format::OptionFile, "password hunter2"),
            "password <redacted>"
        );
        assert_eq!(
            quotable(Format::Localconfig, "zimbra_mysql_password: X"),
            "zimbra_mysql_password <redacted>"
        );
        assert_eq!(
            quotable(Format::ServerVariable, "report_password\tX"),
            "report_password <redacted>"
        );
        assert_eq!(
            quotable(Format::Sysctl, "net.ipv6.conf.all.stable_secret abc"),
            "net.ipv6.conf.all.stable_secret <redacted>"
        );
        assert_eq!(quotable(Format::Sysctl, "kernel.x y"), "kernel.x y");
    }
}
