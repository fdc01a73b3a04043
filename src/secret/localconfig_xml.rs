//! The redaction of Zimbra's `localconfig.xml`: the `<value>` of every
//! secret key (or of a key whose value holds a secret assignment) and
//! comments that name a secret key, in a document that parses, else by a
//! tolerant scan; the newlines a cut held move after it so every later
//! line keeps its number. Must not decide what is secret (that is
//! `names`), nor change anything but those values and comments.

use std::borrow::Cow;

use super::names::localconfig_key_is_secret;
use super::values::redact_embedded;
use super::REDACTED_XML;

/// localconfig.xml: the text of every `<value>` of a `<key>` whose name is
/// secret becomes [`REDACTED_XML`] (an XML reader reads [`REDACTED`](super::REDACTED)), and
/// the newlines it held follow its `</value>` so later lines keep their numbers. Comments
/// that mention a secret key (a commented-out old password) lose their
/// text the same way. A document that does not parse is redacted by a
/// tolerant scan instead (Zimbra cannot load it either way).
pub fn redact_localconfig_xml(text: &str) -> String {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: 1_000_000,
        ..roxmltree::ParsingOptions::default()
    };
    let Ok(doc) = roxmltree::Document::parse_with_options(text, opts) else {
        return redact_xml_scan(text);
    };
    // Byte ranges to replace, in document order.
    let mut cuts: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    for node in doc.descendants() {
        if node.is_comment() {
            let c = node.text().unwrap_or_default();
            if localconfig_comment_has_secret(c) {
                let r = node.range();
                // keep `<!--` and `-->`
                cuts.push((r.start + 4..r.end - 3, " redacted "));
            }
            continue;
        }
        if !(node.is_element() && node.tag_name().name() == "key") {
            continue;
        }
        let Some(name) = node.attribute("name") else {
            continue;
        };
        // A secret key, or one whose value holds a secret assignment
        // (`-D...Password=` in `mailboxd_java_options`): the whole value.
        let embeds = || {
            node.children()
                .filter(|n| n.is_element() && n.tag_name().name() == "value")
                .any(|v| {
                    v.text()
                        .is_some_and(|t| matches!(redact_embedded(t), Cow::Owned(_)))
                })
        };
        if !localconfig_key_is_secret(name) && !embeds() {
            continue;
        }
        for v in node
            .children()
            .filter(|n| n.is_element() && n.tag_name().name() == "value")
        {
            let (Some(first), Some(last)) = (v.first_child(), v.last_child()) else {
                continue;
            };
            if text[first.range().start..last.range().end]
                .trim()
                .is_empty()
            {
                continue;
            }
            // The placeholder is the whole value; the value's newlines move
            // after `</value>` (whitespace Zimbra ignores) so lines keep their numbers.
            cuts.push((first.range().start..v.range().end, VALUE_REPLACEMENT));
        }
    }
    cuts.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (r, with) in cuts {
        if r.start < at {
            continue;
        }
        out.push_str(&text[at..r.start]);
        out.push_str(with);
        for _ in 0..text[r.clone()].matches('\n').count() {
            out.push('\n');
        }
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

fn localconfig_comment_has_secret(c: &str) -> bool {
    let mut rest = c;
    while let Some(i) = rest.find("name") {
        rest = &rest[i + 4..];
        let t = rest.trim_start();
        let Some(t) = t.strip_prefix('=') else {
            continue;
        };
        let t = t.trim_start();
        let Some(q) = t.chars().next().filter(|q| *q == '"' || *q == '\'') else {
            continue;
        };
        if let Some(end) = t[1..].find(q) {
            if localconfig_key_is_secret(&t[1..=end]) {
                return true;
            }
        }
    }
    false
}

const VALUE_REPLACEMENT: &str = "&lt;redacted&gt;</value>";

/// Tolerant scan for a localconfig.xml that does not parse: after a
/// `<key ... name = "SECRET" ...>` tag, the text of each `<value ...>`
/// up to `</value>` (or the next tag) becomes [`REDACTED_XML`].
fn redact_xml_scan(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut secret_key = false;
    while let Some(lt) = rest.find('<') {
        let (head, tail) = rest.split_at(lt);
        out.push_str(head);
        if tail.starts_with("<!--") {
            let end = tail.find("-->").map(|e| e + 3).unwrap_or(tail.len());
            let comment = &tail[..end];
            if localconfig_comment_has_secret(comment) {
                out.push_str("<!-- redacted ");
                for _ in 0..comment.matches('\n').count() {
                    out.push('\n');
                }
                out.push_str("-->");
            } else {
                out.push_str(comment);
            }
            rest = &tail[end..];
            continue;
        }
        let end = tail.find('>').map(|e| e + 1).unwrap_or(tail.len());
        let tag = &tail[..end];
        out.push_str(tag);
        rest = &tail[end..];
        let tname: String = tag[1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
            .collect();
        match tname.as_str() {
            "key" => secret_key = localconfig_comment_has_secret(tag),
            "/key" => secret_key = false,
            "value" if secret_key && !tag.ends_with("/>") => {
                let stop = rest.find('<').unwrap_or(rest.len());
                let inner = &rest[..stop];
                if !inner.trim().is_empty() {
                    out.push_str(REDACTED_XML);
                    for _ in 0..inner.matches('\n').count() {
                        out.push('\n');
                    }
                    rest = &rest[stop..];
                }
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
}
