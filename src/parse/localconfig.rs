//! Zimbra localconfig formats: `/opt/zimbra/conf/localconfig.xml`, the plain
//! `zmlocalconfig [-s] [-x]` output, and `${key}` expansion exactly as
//! `LocalConfig.expandDeep` does it (recursive, cycles and null keys are
//! errors), with depth, work and length caps. Pure: no filesystem, no policy
//! knowledge, and no secret values in any issue message (messages name keys
//! and positions, never quote values; which keys are secret is
//! [`crate::unstable::secret`]'s decision). Linear in the input: repeated keys are
//! found through an index, not by scanning.

use roxmltree::{Document, Node, ParsingOptions};

use std::collections::HashMap;

use super::{numbered_lines, truncate, Issue};
use crate::secret;

/// One key read from localconfig.xml or from `zmlocalconfig` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LcKey {
    /// Key name as written (case-sensitive, as Zimbra treats it).
    pub name: String,
    /// Raw (unexpanded) value text; may be empty.
    pub value: String,
    /// 1-based line of the `<key>` element or of the output line.
    pub line: usize,
}

/// Most XML nodes read from one localconfig.xml (a real file has a few hundred).
pub const MAX_XML_NODES: u32 = 200_000;

/// Parse localconfig.xml the way `LocalConfig`'s constructor reads it: the root
/// must be `<localconfig>`; each direct child `<key name="...">` takes the text
/// of its first `<value>` child (empty allowed); everything else is ignored. A
/// repeated key keeps the last value (Zimbra stores keys in a map), with an
/// issue. DTDs are refused, as Zimbra's secure-processing parser refuses them.
/// Malformed XML or a wrong root gives one issue (with roxmltree's line and
/// column) and `None`: Zimbra cannot load such a file at all.
pub fn parse_xml(text: &str) -> (Option<Vec<LcKey>>, Vec<Issue>) {
    let mut issues = Vec::new();
    let opts = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_XML_NODES,
        ..ParsingOptions::default()
    };
    let doc = match Document::parse_with_options(text, opts) {
        Ok(d) => d,
        Err(e) => {
            let pos = e.pos();
            issues.push(Issue::at_col(
                pos.row as usize,
                pos.col as usize,
                format!(
                    "localconfig.xml is not well-formed XML ({}); Zimbra cannot load it",
                    xml_error_text(&e)
                ),
            ));
            return (None, issues);
        }
    };
    let lines = LineIndex::new(text);
    let root = doc.root_element();
    if root.tag_name().name() != "localconfig" || root.tag_name().namespace().is_some() {
        issues.push(Issue::at(
            lines.line_of(root.range().start),
            format!(
                "root element is <{}>, not <localconfig>; Zimbra refuses to load such a file",
                truncate(root.tag_name().name(), 40)
            ),
        ));
        return (None, issues);
    }
    let mut keys = KeyList::default();
    let mut key_issues = super::Issues::new();
    for el in root
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == "key")
    {
        let line = lines.line_of(el.range().start);
        let Some(name) = el.attribute("name") else {
            key_issues.push(Issue::at(line, "<key> without a name attribute; ignored"));
            continue;
        };
        let Some(value_el) = el
            .children()
            .find(|n| n.is_element() && n.tag_name().name() == "value")
        else {
            key_issues.push(Issue::at(
                line,
                format!(
                    "key `{}` has no <value> child: Zimbra treats it as null (unset)",
                    truncate(name, 80)
                ),
            ));
            continue;
        };
        let value = element_text(value_el);
        keys.push(LcKey {
            name: name.to_string(),
            value,
            line,
        });
    }
    issues.extend(key_issues.into_vec());
    keys.repeat_issues(&mut issues, |name, times, first, last| {
        format!(
            "key `{}` is set {times} times (first at line {first}); Zimbra keeps the last value, at line {last}",
            truncate(name, 80),
        )
    });
    (Some(keys.into_vec()), issues)
}

/// Most keys named in "set N times" issues for one file; the rest are
/// counted in one more issue.
pub const MAX_REPEAT_ISSUES: usize = 20;

/// Keys in file order where a repeated key moves to its last position and
/// keeps its last value, in O(1) per key (a map from name to slot). Repeats
/// are counted per key and reported once per key, not once per line.
#[derive(Default)]
struct KeyList {
    slots: Vec<Option<LcKey>>,
    /// name -> (current slot, first line, times seen)
    index: HashMap<String, (usize, usize, usize)>,
    /// Slots emptied by a later value of their key.
    holes: usize,
}

impl KeyList {
    /// Add a key; an earlier value of the same key is dropped. When more
    /// than half the slots are holes left by repeats they are squeezed out,
    /// so memory stays proportional to the distinct keys (amortised O(1)).
    fn push(&mut self, key: LcKey) {
        let slot = self.slots.len();
        match self.index.get_mut(&key.name) {
            Some((at, _, times)) => {
                self.slots[*at] = None;
                *at = slot;
                *times += 1;
                self.holes += 1;
            }
            None => {
                self.index.insert(key.name.clone(), (slot, key.line, 1));
            }
        }
        self.slots.push(Some(key));
        if self.holes > 64 && self.holes * 2 > self.slots.len() {
            self.squeeze();
        }
    }

    /// Drop the holes, keeping order, and point the index at the new slots.
    fn squeeze(&mut self) {
        self.slots.retain(Option::is_some);
        for (i, k) in self.slots.iter().enumerate() {
            if let Some(k) = k {
                if let Some(e) = self.index.get_mut(&k.name) {
                    e.0 = i;
                }
            }
        }
        self.holes = 0;
    }

    /// One issue per repeated key (at its last line, in line order), at most
    /// [`MAX_REPEAT_ISSUES`], then one issue counting the rest.
    fn repeat_issues(
        &self,
        issues: &mut Vec<Issue>,
        message: impl Fn(&str, usize, usize, usize) -> String,
    ) {
        let mut repeated: Vec<(usize, &str, usize, usize)> = self
            .index
            .iter()
            .filter(|(_, (_, _, times))| *times > 1)
            .filter_map(|(name, (slot, first, times))| {
                let last = self.slots[*slot].as_ref()?.line;
                Some((last, name.as_str(), *first, *times))
            })
            .collect();
        repeated.sort_unstable();
        for (last, name, first, times) in repeated.iter().take(MAX_REPEAT_ISSUES) {
            issues.push(Issue::at(*last, message(name, *times, *first, *last)));
        }
        if repeated.len() > MAX_REPEAT_ISSUES {
            let (last, ..) = repeated[MAX_REPEAT_ISSUES];
            issues.push(Issue::at(
                last,
                format!(
                    "{} more keys are set more than once (not listed one by one); the last value of each is used",
                    repeated.len() - MAX_REPEAT_ISSUES
                ),
            ));
        }
    }

    fn into_vec(self) -> Vec<LcKey> {
        self.slots.into_iter().flatten().collect()
    }
}

/// Text of an element's direct text children (dom4j `getText`): comments and
/// nested elements are skipped, CDATA is included.
fn element_text(el: Node<'_, '_>) -> String {
    el.children()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

/// roxmltree's message without any name or character quoted from the input,
/// since the input may hold passwords (an `&` in a password is an "unknown
/// entity" whose name is part of the secret).
fn xml_error_text(e: &roxmltree::Error) -> String {
    use roxmltree::Error as E;
    match e {
        E::UnknownEntityReference(..) => "unknown entity reference".into(),
        E::MalformedEntityReference(..) => "malformed entity reference".into(),
        E::UnexpectedCloseTag(..) => "closing tag does not match the open element".into(),
        E::UnknownNamespace(..) => "unknown namespace prefix".into(),
        E::DuplicatedNamespace(..) => "duplicated namespace".into(),
        E::DuplicatedAttribute(..) => "duplicated attribute".into(),
        E::EntityResolver(..) => "entity could not be resolved".into(),
        E::NonXmlChar(..) => "character not allowed in XML".into(),
        E::InvalidChar(..) | E::InvalidChar2(..) => "unexpected character".into(),
        E::DtdDetected => {
            "a DTD (<!DOCTYPE>) is present; refused as Zimbra's secure parser refuses it".into()
        }
        E::NodesLimitReached => format!("more than {MAX_XML_NODES} XML nodes"),
        other => {
            // Remaining variants carry only a position; drop roxmltree's " at R:C".
            let s = other.to_string();
            match s.rfind(" at ") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}

/// Byte offset -> 1-based line, in O(log n) per lookup.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }
    fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

/// Parse plain `zmlocalconfig` / `zmlocalconfig -s` / `-x` output: one
/// `key = value` per line, split on the first ` = ` (the value may be empty or
/// hold `=`, spaces and `${...}`). Other lines (warnings, continuation lines of
/// multi-line values) are issues and are not quoted when they follow a secret
/// key. A repeated key keeps the last value, with an issue.
pub fn parse_zmlocalconfig(text: &str) -> (Vec<LcKey>, Vec<Issue>) {
    let mut keys = KeyList::default();
    let mut lines_issues = super::Issues::new();
    let mut after_secret = false;
    for (n, raw) in numbered_lines(text) {
        if raw.trim().is_empty() {
            continue;
        }
        let split = raw
            .split_once(" = ")
            .or_else(|| raw.strip_suffix(" =").map(|k| (k, "")));
        let Some((k, v)) = split else {
            let msg = if after_secret {
                "line is not `key = value` (it follows a password key and is not shown); ignored"
                    .to_string()
            } else {
                format!(
                    "`{}` is not `key = value` as zmlocalconfig prints it; ignored",
                    truncate(
                        &secret::quotable(secret::Format::Localconfig, raw.trim()),
                        60
                    )
                )
            };
            lines_issues.push(Issue::at(n, msg));
            continue;
        };
        let name = k.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            lines_issues.push(Issue::at(
                n,
                "line has ` = ` but no single-word key before it; ignored",
            ));
            after_secret = false;
            continue;
        }
        after_secret = secret::localconfig_key_is_secret(name);
        keys.push(LcKey {
            name: name.to_string(),
            value: v.to_string(),
            line: n,
        });
    }
    // The repeated keys are bounded on their own ([`MAX_REPEAT_ISSUES`]).
    let mut issues = lines_issues.into_vec();
    keys.repeat_issues(&mut issues, |name, times, first, last| {
        format!(
            "key `{}` appears {times} times (first at line {first}); the last value, at line {last}, is used",
            truncate(name, 80),
        )
    });
    (keys.into_vec(), issues)
}

/// Deepest chain of `${...}` references followed.
pub const MAX_EXPANSION_DEPTH: usize = 32;
/// Most references substituted while expanding one value.
pub const MAX_EXPANSION_STEPS: usize = 4096;
/// Longest expanded value (guards against `${a}${a}` doubling chains).
pub const MAX_EXPANDED_LEN: usize = 64 * 1024;

/// Expand `${key}` references in `raw` (the value of `key`) as Zimbra's
/// `LocalConfig.expandDeep` does: repeatedly take the first `${` and the next
/// `}`, expand that key recursively, replace every occurrence of that
/// reference. A key referring back to a key being expanded is a "recursive
/// expansion" error; a key with no value is a "null valued key" error; an
/// unterminated `${` is left as it is. `lookup` gives the raw value of a key
/// (configured, else compiled default). An error met inside the value of a
/// secret key never names what was found there (a `${` in a password makes
/// the text after it look like a key name): it names the secret key only.
pub fn expand(
    key: &str,
    raw: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut seen = vec![key.to_string()];
    let mut steps = 0usize;
    let out = expand_in(raw.to_string(), lookup, &mut seen, &mut steps);
    mask_inside_secret(key, out)
}

/// The error of expanding the value of `key`, without any text taken from
/// that value when `key` is secret.
fn mask_inside_secret(key: &str, r: Result<String, String>) -> Result<String, String> {
    match r {
        Err(e) if secret::localconfig_key_is_secret(key) && !e.starts_with(SECRET_ERROR) => {
            Err(format!(
                "{SECRET_ERROR} `{}` holds a `${{...}}` reference that cannot be expanded (the value is not shown)",
                truncate(key, 80)
            ))
        }
        other => other,
    }
}

const SECRET_ERROR: &str = "the value of secret key";

fn expand_in(
    mut value: String,
    lookup: &dyn Fn(&str) -> Option<String>,
    seen: &mut Vec<String>,
    steps: &mut usize,
) -> Result<String, String> {
    while let Some(nested) = find_key(&value) {
        *steps += 1;
        if *steps > MAX_EXPANSION_STEPS {
            return Err(format!(
                "more than {MAX_EXPANSION_STEPS} `${{...}}` substitutions; expansion abandoned"
            ));
        }
        let expanded = expand_key(&nested, lookup, seen, steps)?;
        value = value.replace(&format!("${{{nested}}}"), &expanded);
        if value.len() > MAX_EXPANDED_LEN {
            return Err(format!(
                "expanded value is longer than {MAX_EXPANDED_LEN} bytes; expansion abandoned"
            ));
        }
    }
    Ok(value)
}

fn expand_key(
    key: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    seen: &mut Vec<String>,
    steps: &mut usize,
) -> Result<String, String> {
    if seen.iter().any(|s| s == key) {
        return Err(format!(
            "recursive expansion of key '{}': {}",
            truncate(key, 80),
            seen.iter()
                .map(|s| truncate(s, 80))
                .collect::<Vec<_>>()
                .join(" -> ")
        ));
    }
    if seen.len() >= MAX_EXPANSION_DEPTH {
        return Err(format!(
            "`${{...}}` references nested deeper than {MAX_EXPANSION_DEPTH}; expansion abandoned"
        ));
    }
    let raw =
        lookup(key).ok_or_else(|| format!("null valued key '{}' referenced", truncate(key, 80)))?;
    seen.push(key.to_string());
    let out = expand_in(raw, lookup, seen, steps);
    seen.pop();
    mask_inside_secret(key, out)
}

/// The key named by the first `${` and the next `}` after it (Zimbra's `findKey`).
pub fn find_key(value: &str) -> Option<String> {
    let begin = value.find("${")?;
    let rest = &value[begin + 2..];
    let end = rest.find('}')?;
    Some(rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const GOOD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>

<localconfig>
  <key name="mailboxd_java_heap_size">
    <value>2458</value>
  </key>
  <!-- <key name="commented"><value>x</value></key> -->
  <key name="mysql_data_directory">
    <value>${zimbra_db_directory}/data</value>
  </key>
  <key name="empty">
    <value></value>
  </key>
  <key name="selfclosing"><value/></key>
  <other name="ignored"><value>1</value></other>
  <key name="cdata"><value><![CDATA[a<b]]> &amp; c<!-- skipped --></value></key>
  <key name="novalue"/>
  <key><value>nameless</value></key>
  <key name="mailboxd_java_heap_size">
    <value>7168</value>
  </key>
</localconfig>
"#;

    #[test]
    fn xml_keys_values_and_lines() {
        let (keys, issues) = parse_xml(GOOD);
        let keys = keys.unwrap();
        let got: Vec<(&str, &str, usize)> = keys
            .iter()
            .map(|k| (k.name.as_str(), k.value.as_str(), k.line))
            .collect();
        assert_eq!(
            got,
            [
                ("mysql_data_directory", "${zimbra_db_directory}/data", 8),
                ("empty", "", 11),
                ("selfclosing", "", 14),
                ("cdata", "a<b & c", 16),
                ("mailboxd_java_heap_size", "7168", 19),
            ]
        );
        let lines: Vec<usize> = issues.iter().map(|i| i.line).collect();
        assert_eq!(lines, [17, 18, 19], "{issues:?}");
        assert!(issues[2].message.contains("first at line 4"));
    }

    #[test]
    fn xml_wrong_root_gives_nothing() {
        let (keys, issues) = parse_xml("<config>\n<key name=\"a\"><value>1</value></key></config>");
        assert!(keys.is_none());
        assert_eq!(issues.len(), 1);
        assert!(issues[0].message.contains("<config>"));
    }

    #[test]
    fn xml_malformed_has_position_and_no_secret() {
        let text = "<localconfig>\n  <key name=\"ldap_root_password\">\n    <value>hunter2&secretpart;</value>\n  </key>\n</localconfig>\n";
        let (keys, issues) = parse_xml(text);
        assert!(keys.is_none());
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].line, 3);
        assert!(issues[0].column.is_some());
        assert!(
            !issues[0].message.contains("secretpart"),
            "{}",
            issues[0].message
        );
        assert!(!issues[0].message.contains("hunter2"));

        let (_, issues) =
            parse_xml("<localconfig>\n<key name=\"a\"><value>1</valu></key>\n</localconfig>");
        assert_eq!((issues.len(), issues[0].line), (1, 2));
        let (_, issues) = parse_xml("");
        assert_eq!(issues.len(), 1);
    }

    #[test]
    fn xml_dtd_and_entity_bombs_are_refused() {
        let bomb = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">]>\n<localconfig><key name=\"a\"><value>&lol2;</value></key></localconfig>";
        let (keys, issues) = parse_xml(bomb);
        assert!(keys.is_none());
        assert!(issues[0].message.contains("DTD"), "{}", issues[0].message);
    }

    #[test]
    fn zmlocalconfig_output() {
        let text = "Warning: null valued key 'x'\nmailboxd_java_heap_size = 2458\nmysql_data_directory = ${zimbra_db_directory}/data\nempty = \nempty2 =\nurl = ldap://h:389 a=b = c\n\nldap_root_password = line1\ncontinuation of the password\n = nokey\nmysql_port = 7306\r\nmysql_port = 7307\n";
        let (keys, issues) = parse_zmlocalconfig(text);
        let got: Vec<(&str, &str, usize)> = keys
            .iter()
            .map(|k| (k.name.as_str(), k.value.as_str(), k.line))
            .collect();
        assert_eq!(
            got,
            [
                ("mailboxd_java_heap_size", "2458", 2),
                ("mysql_data_directory", "${zimbra_db_directory}/data", 3),
                ("empty", "", 4),
                ("empty2", "", 5),
                ("url", "ldap://h:389 a=b = c", 6),
                ("ldap_root_password", "line1", 8),
                ("mysql_port", "7307", 12),
            ]
        );
        let lines: Vec<usize> = issues.iter().map(|i| i.line).collect();
        assert_eq!(lines, [1, 9, 10, 12]);
        assert!(issues[0].message.contains("Warning"));
        assert!(
            !issues[1].message.contains("continuation"),
            "secret continuation must not be quoted"
        );
    }

    fn table(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn expansion_nested_and_repeated() {
        let t = table(&[
            ("zimbra_home", "/opt/zimbra"),
            ("zimbra_db_directory", "${zimbra_home}/db"),
            ("mysql_data_directory", "${zimbra_db_directory}/data"),
            ("b", "${c} ${d}"),
            ("c", "${d} ${d}"),
            ("d", "123"),
        ]);
        let look = |k: &str| t.get(k).cloned();
        assert_eq!(
            expand("mysql_data_directory", "${zimbra_db_directory}/data", &look).unwrap(),
            "/opt/zimbra/db/data"
        );
        assert_eq!(
            expand("a", "${b} ${b}", &look).unwrap(),
            "123 123 123 123 123 123"
        );
        assert_eq!(
            expand("a", "no refs ${unterminated", &look).unwrap(),
            "no refs ${unterminated"
        );
        assert_eq!(expand("a", "", &look).unwrap(), "");
    }

    #[test]
    fn expansion_errors() {
        let t = table(&[
            ("a", "${b}"),
            ("b", "${c}"),
            ("c", "${a}"),
            ("self", "${self}"),
            ("m", "${missing}x"),
        ]);
        let look = |k: &str| t.get(k).cloned();
        let e = expand("a", "${b}", &look).unwrap_err();
        assert!(e.starts_with("recursive expansion of key 'a'"), "{e}");
        let e = expand("self", "${self}", &look).unwrap_err();
        assert!(e.contains("recursive expansion of key 'self'"), "{e}");
        let e = expand("m", "${missing}x", &look).unwrap_err();
        assert_eq!(e, "null valued key 'missing' referenced");
    }

    #[test]
    fn expansion_errors_never_quote_a_secret_value() {
        let t = table(&[
            ("ldap_url", "ldap://${zimbra_ldap_password}@h"),
            ("zimbra_ldap_password", "ab${cd}ef"),
            ("mysql_root_password", "x${mysql_root_password}"),
        ]);
        let look = |k: &str| t.get(k).cloned();
        let e = expand("ldap_url", &t["ldap_url"], &look).unwrap_err();
        assert!(!e.contains("cd"), "{e}");
        assert!(e.contains("`zimbra_ldap_password`"), "{e}");
        let e = expand("zimbra_ldap_password", "ab${cd}ef", &look).unwrap_err();
        assert!(!e.contains("cd"), "{e}");
        let e = expand("mysql_root_password", "x${mysql_root_password}", &look).unwrap_err();
        assert!(e.starts_with(SECRET_ERROR), "{e}");
    }

    #[test]
    fn expansion_is_bounded() {
        // Doubling chain: k0 = ${k1}${k1}, ..., k30 = "xxxxxxxx": 2^30 * 8 bytes if unbounded.
        let mut t = HashMap::new();
        for i in 0..30 {
            t.insert(format!("k{i}"), format!("${{k{}}}${{k{}}}", i + 1, i + 1));
        }
        t.insert("k30".into(), "xxxxxxxx".into());
        let look = |k: &str| t.get(k).cloned();
        let e = expand("top", "${k0}", &look).unwrap_err();
        assert!(e.contains("longer than"), "{e}");
        // Deep chain: d0 -> d1 -> ... -> d99.
        let mut t = HashMap::new();
        for i in 0..100 {
            t.insert(format!("d{i}"), format!("${{d{}}}", i + 1));
        }
        let look = |k: &str| t.get(k).cloned();
        let e = expand("top", "${d0}", &look).unwrap_err();
        assert!(e.contains("deeper than"), "{e}");
    }
}
