//! Option-file edits: the line that sets the winning value (in whatever file
//! or versioned group the server read it from), with the file's spelling of
//! the name and of sizes and booleans kept; a missing option added to the
//! last server group of the file the server reads last; `SET PERSIST` /
//! `SET PERSIST_ONLY` where MySQL 8's mysqld-auto.cnf holds the winning
//! value (that JSON file is the server's, never patched); `SET GLOBAL` for
//! dynamic variables and a commented restart otherwise; the proof's
//! simulation on the `SHOW GLOBAL VARIABLES` capture. Every value goes
//! into the file through [`option_value`], which escapes backslashes and
//! quotes a value the server would otherwise cut or trim (`#`, quotes,
//! outer blanks), and refuses one no option-file line can hold (a newline
//! or another control character): the server reads back exactly the value.

use super::changes::{plain, round_to, same_value, Change, Op};
use super::context::{check_value, comment, Ctx};
use super::shell;
use super::tree::EditKind;
use crate::facts::mysql::documented;
use crate::facts::mysql::ServerVersion;
use crate::policy::Bound;
use crate::resolve::{Lookup, Resolver};
use crate::value::Value;

/// Whether `SET GLOBAL` changes `name` without a restart on the host's
/// server: the documented tables of its version (`mysql_version`, from
/// the runtime capture, else the installed package) say, the nearest
/// table where its own has no row
/// ([`crate::facts::mysql::documented::is_dynamic`]).
fn is_dynamic(cx: &Ctx, name: &str) -> bool {
    let running = cx
        .facts
        .facts
        .get("mysql_version")
        .and_then(|v| v.as_ref().ok())
        .and_then(|v| ServerVersion::parse(&v.to_plain()));
    let version = running.or_else(|| {
        cx.facts.installed_server.as_ref().map(|i| ServerVersion {
            parts: i.parts,
            mariadb: i.mariadb,
        })
    });
    documented::is_dynamic(version.as_ref(), name)
}

/// MySQL 8's persisted-variables file (`SET PERSIST`), never edited here.
const PERSISTED_FILE: &str = crate::facts::mysql::persisted::FILE;

/// Groups a server option may be added to, in order of preference.
const SERVER_GROUPS: &[&str] = &["mysqld", "mariadb", "server"];

fn unit_of(c: char) -> Option<f64> {
    match c.to_ascii_uppercase() {
        'K' => Some(1024.0),
        'M' => Some(1048576.0),
        'G' => Some(1073741824.0),
        'T' => Some(1099511627776.0),
        _ => None,
    }
}

/// A size written in the style of `existing` (`25G` -> whole G when exact
/// or allowed by the bound, else a smaller unit; plain bytes stay bytes).
pub(super) fn size_text(bytes: f64, bound: Bound, existing: Option<&str>) -> String {
    let style = match existing {
        Some(e) => e.trim().chars().last().filter(|c| unit_of(*c).is_some()),
        None if bytes >= 1073741824.0 => Some('G'),
        None => Some('M'),
    };
    let Some(s) = style else {
        let b = if bound == Bound::Exact {
            bytes.round()
        } else {
            round_to(bytes, 1048576.0, bound)
        };
        return crate::value::format_number(b);
    };
    let upper = s.is_ascii_uppercase();
    let mut units = vec!['T', 'G', 'M', 'K'];
    units.retain(|u| unit_of(*u) <= unit_of(s));
    for (i, u) in units.iter().enumerate() {
        let size = unit_of(*u).unwrap_or(1.0);
        let r = round_to(bytes, size, bound);
        let exact = (r - bytes).abs() < 0.5;
        // the file's own unit is kept when the bound lets us round to it
        let own_unit = *u == s.to_ascii_uppercase() || i == 0;
        if (exact || (own_unit && bound != Bound::Exact)) && r / size >= 1.0 {
            let c = if upper { *u } else { u.to_ascii_lowercase() };
            return format!("{}{c}", crate::value::format_number(r / size));
        }
    }
    crate::value::format_number(bytes.round())
}

/// A boolean in the file's style (`1`/`0`, `on`/`off`, `ON`/`OFF`).
fn bool_text(on: bool, existing: Option<&str>) -> String {
    match existing.map(str::trim) {
        Some("1") | Some("0") => (if on { "1" } else { "0" }).into(),
        Some(e) if e.chars().all(|c| c.is_ascii_lowercase()) && !e.is_empty() => {
            (if on { "on" } else { "off" }).into()
        }
        _ => (if on { "ON" } else { "OFF" }).into(),
    }
}

fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Str(s) => crate::parse::mycnf::parse_bool(s).ok(),
        _ => None,
    }
}

/// A text value (not a size) that the policy spells otherwise than the
/// number it parses as (`"1 "`, `"1."`, `"01"`): those characters, since
/// the number would be written, and read back by the server, as other ones
/// (`init_connect = 1` is not `init_connect = "1 "`).
fn text_not_its_number(name: &str, v: &Value) -> Option<String> {
    match (v, v.as_f64()) {
        (Value::Str(s), Some(n))
            if !crate::facts::mysql::is_size_option(name)
                && crate::value::format_number(n) != *s =>
        {
            Some(s.clone())
        }
        _ => None,
    }
}

/// The value as the file should spell it.
pub(super) fn file_text(name: &str, v: &Value, bound: Bound, existing: Option<&str>) -> String {
    if let Some(b) = as_bool(v).filter(|_| matches!(v, Value::Bool(_)) || v.as_f64().is_none()) {
        return bool_text(b, existing);
    }
    if let Some(text) = text_not_its_number(name, v) {
        return text;
    }
    match v.as_f64() {
        Some(n) if matches!(v, Value::Size(_)) || crate::facts::mysql::is_size_option(name) => {
            size_text(n, bound, existing)
        }
        Some(n) => crate::value::format_number(round_to(n, 1.0, bound)),
        None => v.to_plain(),
    }
}

/// The value as the server reports it (`SHOW GLOBAL VARIABLES`; `SET GLOBAL`):
/// a size is the bytes of what the option file gets ([`size_text`]), so the
/// file and the running server agree (a pinned size of 1 byte is 1, not
/// rounded to 0 MiB).
fn server_text(name: &str, v: &Value, bound: Bound) -> String {
    if let Some(b) = as_bool(v).filter(|_| matches!(v, Value::Bool(_)) || v.as_f64().is_none()) {
        return (if b { "ON" } else { "OFF" }).into();
    }
    if let Some(text) = text_not_its_number(name, v) {
        return text;
    }
    match v.as_f64() {
        Some(n) if matches!(v, Value::Size(_)) || crate::facts::mysql::is_size_option(name) => {
            let text = size_text(n, bound, None);
            let (num, unit) = match text.chars().last().and_then(unit_of) {
                Some(u) => (&text[..text.len() - 1], u),
                None => (text.as_str(), 1.0),
            };
            let bytes = num.parse::<f64>().map_or(n, |x| x * unit);
            crate::value::format_number(bytes)
        }
        Some(n) => crate::value::format_number(round_to(n, 1.0, bound)),
        None => plain(v),
    }
}

/// The text after `=` that MariaDB and MySQL read back as exactly `v`
/// (my_print_defaults prints it): backslashes escaped (`\\`, the option
/// file escape), and the whole in double quotes (`\"` inside) when it is
/// empty, starts or ends with a blank, or holds `#` or a quote; a value
/// holding a newline or another control character is refused.
pub(super) fn option_value(v: &str) -> Result<String, String> {
    check_value("value", v)?;
    let escaped = v.replace('\\', "\\\\");
    let quote = v.is_empty() || v.trim() != v || v.contains(['#', '\'', '"']);
    if quote {
        Ok(format!("\"{}\"", escaped.replace('"', "\\\"")))
    } else {
        Ok(escaped)
    }
}

/// An option line with its value replaced, keeping the name as written,
/// the blanks around `=`, quotes and a trailing comment; a bare option
/// (`innodb_file_per_table`) gains ` = VALUE`. `value` is option-file
/// text ([`option_value`]): already quoted, it replaces the old quotes.
pub(super) fn with_value(line: &str, value: &str) -> String {
    let Some(eq) = line.find('=') else {
        let end = line.find('#').unwrap_or(line.len());
        let (name, rest) = line.split_at(end);
        let name = name.trim_end();
        return if rest.is_empty() {
            format!("{name} = {value}")
        } else {
            format!("{name} = {value} {rest}")
        };
    };
    let (head, rest) = line.split_at(eq + 1);
    let lead_len = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let (lead, body) = rest.split_at(lead_len);
    let quote = body.chars().next().filter(|c| *c == '"' || *c == '\'');
    let (end, q) = match quote {
        Some(q) => (
            body[1..].find(q).map(|i| i + 2).unwrap_or(body.len()),
            Some(q),
        ),
        None => {
            // an unquoted value ends at ` #` (a comment) or the line's end
            let e = body
                .char_indices()
                .find(|&(i, c)| c == '#' && (i == 0 || body[..i].ends_with([' ', '\t'])))
                .map(|(i, _)| i)
                .unwrap_or(body.len());
            let v = body[..e].trim_end();
            (v.len(), None)
        }
    };
    let tail = &body[end..];
    match q {
        Some(q) if !value.starts_with('"') => format!("{head}{lead}{q}{value}{q}{tail}"),
        _ => format!("{head}{lead}{value}{tail}"),
    }
}

/// mysqld-auto.cnf (one JSON line, as MySQL writes it) with `name`'s
/// `Value` set to `value` in whichever section holds it.
fn persisted_with(text: &str, name: &str, value: &str) -> Option<String> {
    fn set(v: &mut serde_json::Value, name: &str, value: &str) -> bool {
        let Some(map) = v.as_object_mut() else {
            return false;
        };
        let mut done = false;
        for (k, child) in map.iter_mut() {
            if k.eq_ignore_ascii_case(name) {
                if let Some(slot) = child.get_mut("Value") {
                    *slot = serde_json::Value::String(value.to_string());
                    done = true;
                    continue;
                }
            }
            done |= set(child, name, value);
        }
        done
    }
    let mut v: serde_json::Value = serde_json::from_str(text).ok()?;
    set(&mut v, name, value).then(|| v.to_string())
}

/// The current value text of an option line (`None`: bare).
fn value_of_line(line: &str) -> Option<String> {
    let eq = line.find('=')?;
    let body = line[eq + 1..].trim();
    let body = body.split(" #").next().unwrap_or(body).trim();
    Some(body.trim_matches(['"', '\'']).to_string())
}

pub(super) fn apply(cx: &mut Ctx, name: &str, c: &Change) -> Result<(), String> {
    let v = match &c.op {
        Op::Set(v, bound) => (v, bound),
        Op::Remove => return remove(cx, name, c),
        Op::Mount { .. } => return Err("not an option".into()),
    };
    let (v, bound) = v;
    check_value("option name", name)?;
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(format!(
            "`{}` is not an option name `fix` can write",
            comment(name)
        ));
    }
    check_value("value", &plain(v))?;
    let r = Resolver::from_facts(cx.host, cx.facts);
    let res = r.option(name);
    let mut written = None;
    // MySQL 8: a value persisted with SET PERSIST wins over every option
    // file and lives in JSON the server rewrites (mysqld-auto.cnf): never
    // edited as an option file. The server persists the change itself.
    let persisted = match &res.effective {
        Lookup::Set(a) if a.at.path.ends_with(&format!("/{}", PERSISTED_FILE)) => Some(a),
        _ => None,
    };
    if let (Some(p), true) = (persisted, c.persist) {
        let sv = server_text(name, v, *bound);
        let dynamic = is_dynamic(cx, name);
        let verb = if dynamic {
            "SET PERSIST"
        } else {
            "SET PERSIST_ONLY"
        };
        let sql = format!("{verb} {name} = {}", sql_value(&sv));
        cx.step(
            shell::command(&["mysql", "-e", &sql]),
            &c.why,
            false,
            &format!(
                "{name} is persisted in {} (SET PERSIST wins over the option files); the server rewrites that file itself",
                p.at
            ),
        )?;
        if !dynamic {
            let svc = service(cx);
            cx.step(
                shell::command(&["systemctl", "restart", svc]),
                &c.why,
                true,
                &format!("{name} is read only at start (not dynamic): PERSIST_ONLY takes effect at the restart"),
            )?;
        }
        if let (true, Lookup::Set(a)) = (dynamic, &res.running) {
            if let Some(n) = a.at.line {
                cx.replace(&a.at.path, n, format!("{name}\t{sv}"), EditKind::Simulated)?;
            }
        }
        // the proof's copy gets the file as the server writes it back (one
        // JSON line with the new Value)
        if let Some(json) = cx
            .host
            .read_to_string(&p.at.path)
            .ok()
            .filter(|t| t.trim_end().lines().count() == 1)
            .and_then(|t| persisted_with(&t, name, &sv))
        {
            cx.replace(&p.at.path, 1, json, EditKind::Simulated)?;
        }
        return Ok(());
    }
    if c.persist {
        let winner = match (&res.effective, &res.configured) {
            (Lookup::Set(a), _) | (_, Lookup::Set(a)) if a.at.line.is_some() => Some(a.at.clone()),
            _ => None,
        };
        if let Some(at) = winner {
            let n = at.line.unwrap_or(0);
            let line = cx.line(&at.path, n, EditKind::Config)?;
            let existing = value_of_line(&line);
            let text = file_text(name, v, *bound, existing.as_deref());
            let text = option_value(&text)?;
            cx.replace(&at.path, n, with_value(&line, &text), EditKind::Config)?;
            written = Some(text);
        } else {
            let last = res
                .last_file
                .clone()
                .ok_or("the server reads no option file to add the option to")?;
            let text = option_value(&file_text(name, v, *bound, None))?;
            add_option(cx, &last.path, name, &text, &c.why)?;
            written = Some(text);
        }
    }
    if c.persist && matches!(res.running, Lookup::Absent { .. }) {
        shown_as(cx, name, v, &c.why)?;
    }
    if c.apply_now || c.persist {
        let running_differs = match &res.running {
            Lookup::Set(a) => !same_value(&a.value, v) && a.raw != server_text(name, v, *bound),
            _ => false,
        };
        if !running_differs && !c.apply_now {
            return Ok(());
        }
        if let Lookup::Set(a) = &res.running {
            if !running_differs {
                return Ok(());
            }
            let sv = server_text(name, v, *bound);
            let dynamic = is_dynamic(cx, name);
            if dynamic {
                let sql = format!("SET GLOBAL {name} = {}", sql_value(&sv));
                cx.step(shell::command(&["mysql", "-e", &sql]), &c.why, false, "")?;
            } else {
                let svc = service(cx);
                cx.step(
                    shell::command(&["systemctl", "restart", svc]),
                    &c.why,
                    true,
                    &format!("{name} is read only at start (not dynamic)"),
                )?;
            }
            if let Some(n) = a.at.line {
                cx.replace(&a.at.path, n, format!("{name}\t{sv}"), EditKind::Simulated)?;
            }
        } else if c.apply_now && written.is_none() {
            return Err(
                "no running value captured (captures/mysql-variables.tsv) to change".into(),
            );
        }
    }
    Ok(())
}

/// Options the running server shows under another variable, with what it
/// shows for ON and for OFF: `symbolic_links` is `have_symlink`, YES or
/// DISABLED (NO where the platform has no symbolic links: left alone).
const SHOWN_AS: [(&str, &str, &str, &str); 1] =
    [("symbolic_links", "have_symlink", "YES", "DISABLED")];

/// For an option the running server reports under another name: a
/// commented restart (such options are read only at start) and, in the
/// proof's copy, the capture's line as the restarted server shows it.
fn shown_as(cx: &mut Ctx, name: &str, v: &Value, why: &[String]) -> Result<(), String> {
    let Some((_, shown, on, off)) = SHOWN_AS.iter().find(|(o, ..)| *o == name) else {
        return Ok(());
    };
    let Some(want) = v.as_bool() else {
        return Ok(());
    };
    let target = if want { *on } else { *off };
    let at = match cx.facts.namespaces.get("mysql").and_then(|n| n.get(shown)) {
        Some(crate::facts::Entry::Set(s)) if s.raw != target && s.raw != "NO" => {
            s.evidence.first().cloned()
        }
        _ => None,
    };
    let Some(at) = at else { return Ok(()) };
    let svc = service(cx);
    cx.step(
        shell::command(&["systemctl", "restart", svc]),
        why,
        true,
        &format!("{name} is read only at start (the running server shows it as {shown})"),
    )?;
    if let Some(n) = at.line {
        cx.replace(
            &at.path,
            n,
            format!("{shown}\t{target}"),
            EditKind::Simulated,
        )?;
    }
    Ok(())
}

/// `remedy: { remove: }`: delete every line of a group the server reads
/// that sets the option, whatever its spelling (`loose-`, dashes, a unique
/// prefix, `skip-`), so that no other line wins instead and the server
/// really starts with its default; the running server gets
/// `SET GLOBAL name = DEFAULT` (the compiled-in default) when the variable
/// is dynamic, else a commented restart.
fn remove(cx: &mut Ctx, name: &str, c: &Change) -> Result<(), String> {
    let r = Resolver::from_facts(cx.host, cx.facts);
    let res = r.option(name);
    let lines: Vec<_> = res
        .lines
        .iter()
        .filter(|l| l.at.line.is_some())
        .map(|l| l.at.clone())
        .collect();
    if lines.is_empty() {
        return Err(format!(
            "no option file line the server reads sets `{name}`"
        ));
    }
    for e in &lines {
        if e.path.starts_with("/usr/") {
            return Err(format!(
                "{} is a vendor file, which `fix` never edits",
                e.location()
            ));
        }
    }
    for e in &lines {
        cx.delete(&e.path, e.line.unwrap_or(0), EditKind::Config)?;
    }
    if let Lookup::Set(_) = &res.running {
        if is_dynamic(cx, name) {
            let sql = format!("SET GLOBAL {name} = DEFAULT");
            cx.step(
                shell::command(&["mysql", "-e", &sql]),
                &c.why,
                false,
                "DEFAULT is the server's compiled-in default, what it starts with once the lines are gone",
            )?;
        } else {
            cx.step(
                shell::command(&["systemctl", "restart", service(cx)]),
                &c.why,
                true,
                &format!("{name} is read only at start (not dynamic)"),
            )?;
        }
    }
    Ok(())
}

/// The server's systemd unit name.
fn service(cx: &Ctx) -> &'static str {
    let mariadb = cx
        .facts
        .facts
        .get("mysql_version")
        .and_then(|v| v.as_ref().ok())
        .is_some_and(|v| v.to_plain().contains("MariaDB"));
    if mariadb {
        "mariadb"
    } else {
        "mysql"
    }
}

/// `v` as one SQL literal that the server reads back as exactly `v`
/// whatever its sql_mode (tests/mariadb_server.rs holds it to a real one).
fn sql_value(v: &str) -> String {
    // bare: a name (`ROW`, `ON`), or a decimal number; never what SQL reads
    // otherwise (`0x1a` is a hex string, `1e5` a float, `a.b` a column)
    let name = v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let number = {
        let (int, frac) = v.split_once('.').unwrap_or((v, "0"));
        !int.is_empty()
            && !frac.is_empty()
            && int.chars().all(|c| c.is_ascii_digit())
            && frac.chars().all(|c| c.is_ascii_digit())
    };
    if name || number {
        v.to_string()
    } else if v.contains('\\') {
        // a backslash is an escape in a quoted string unless the server runs
        // with sql_mode NO_BACKSLASH_ESCAPES, which the plan cannot know: a
        // hex literal reads the same under both
        let hex: String = v.bytes().map(|b| format!("{b:02X}")).collect();
        format!("X'{hex}'")
    } else {
        // `''` is a quote in every sql_mode
        format!("'{}'", v.replace('\'', "''"))
    }
}

/// Add `name = value` to the last server group of `path` (a new
/// `[mysqld]` at the end when it has none).
fn add_option(
    cx: &mut Ctx,
    path: &str,
    name: &str,
    value: &str,
    why: &[String],
) -> Result<(), String> {
    let text = cx
        .tree
        .read(path)
        .map_err(|e| format!("cannot read `{path}`: {e}"))?
        .unwrap_or_default();
    // the new line goes after the group's last line, or after an earlier
    // line of the group when the line that would follow it holds a secret
    // (a patch shows the line after a change as context)
    let secret = super::diff::secret_lines(path, &text);
    let n_lines = text.lines().count();
    let fits = |after: usize| after >= n_lines || !secret.get(after).copied().unwrap_or(true);
    let (mut group_end, mut fallback) = (None, None);
    let mut in_server = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(g) = t.strip_prefix('[').and_then(|g| g.split(']').next()) {
            let g = g.trim().to_ascii_lowercase();
            in_server = SERVER_GROUPS.iter().any(|s| g == *s);
            if in_server {
                fallback = Some(i + 1);
                group_end = fits(i + 1).then_some(i + 1).or(group_end);
            }
            continue;
        }
        if in_server && !t.is_empty() {
            fallback = Some(i + 1);
            group_end = fits(i + 1).then_some(i + 1).or(group_end);
        }
    }
    let group_end = group_end.or(fallback);
    let line = format!("{name} = {value}");
    // a comment line per finding the option fixes, host data escaped
    let why: String = why.iter().map(|w| format!("# {}\n", comment(w))).collect();
    match group_end {
        Some(n) => {
            let cur = cx.line(path, n, EditKind::Config)?;
            cx.replace(path, n, format!("{cur}\n{why}{line}"), EditKind::Config)
        }
        None => cx.append(
            path,
            &format!("\n[mysqld]\n{why}{line}\n"),
            EditKind::Config,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_keep_the_files_spelling() {
        assert_eq!(
            size_text(6.0 * 1073741824.0, Bound::Exact, Some("25G")),
            "6G"
        );
        assert_eq!(
            size_text(9.4 * 1073741824.0, Bound::AtLeast, Some("1G")),
            "10G"
        );
        assert_eq!(
            size_text(9.4 * 1073741824.0, Bound::AtMost, Some("1G")),
            "9G"
        );
        assert_eq!(
            size_text(1536.0 * 1048576.0, Bound::Exact, Some("2G")),
            "1536M"
        );
        assert_eq!(
            size_text(6442450944.0, Bound::Exact, Some("2147483648")),
            "6442450944"
        );
        assert_eq!(size_text(3.0 * 1048576.0, Bound::Exact, Some("4m")), "3m");
    }

    #[test]
    fn a_text_value_is_written_as_its_text_not_as_the_number_it_parses_as() {
        for text in ["1 ", " 1", "1.", "01", "1\t"] {
            let v = Value::Str(text.into());
            assert_eq!(file_text("init_connect", &v, Bound::Exact, Some("x")), text);
            assert_eq!(server_text("init_connect", &v, Bound::Exact), text);
        }
        // a number the policy spells as the number stays a number
        let v = Value::Str("200".into());
        assert_eq!(
            file_text("max_connections", &v, Bound::Exact, Some("400")),
            "200"
        );
    }

    #[test]
    fn booleans_keep_the_files_spelling() {
        let on = Value::Str("ON".into());
        assert_eq!(
            file_text(
                "innodb_buffer_pool_dump_at_shutdown",
                &on,
                Bound::Exact,
                Some("OFF")
            ),
            "ON"
        );
        assert_eq!(file_text("x", &on, Bound::Exact, Some("0")), "1");
        assert_eq!(file_text("x", &on, Bound::Exact, Some("off")), "on");
        assert_eq!(
            file_text(
                "max_connections",
                &Value::Number(200.0),
                Bound::Exact,
                Some("400")
            ),
            "200"
        );
    }

    #[test]
    fn an_option_line_keeps_name_blanks_quotes_and_comment() {
        assert_eq!(
            with_value("innodb_buffer_pool_size=1G", "10G"),
            "innodb_buffer_pool_size=10G"
        );
        assert_eq!(
            with_value("innodb_buffer_pool_size        = 2147483648", "6442450944"),
            "innodb_buffer_pool_size        = 6442450944"
        );
        assert_eq!(
            with_value("max-connections = 400  # peak", "200"),
            "max-connections = 200  # peak"
        );
        assert_eq!(with_value("bind = \"a b\" # x", "c"), "bind = \"c\" # x");
        assert_eq!(
            with_value("innodb_file_per_table", "ON"),
            "innodb_file_per_table = ON"
        );
    }
}
