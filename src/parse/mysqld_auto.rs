//! MySQL 8's `mysqld-auto.cnf` (the JSON file `SET PERSIST` and `SET
//! PERSIST_ONLY` write in the data directory): version 1 (`mysql_server`,
//! with read-only variables in `mysql_server_static_options`) and version 2
//! (MySQL 8.0.29+: `mysql_dynamic_variables`, `mysql_static_variables`,
//! the `*_parse_early_variables` sections, and `mysql_sensitive_variables`
//! whose values are encrypted and only noted). Text in, persisted variables with their
//! section and line out; a file that is not such JSON is one issue. Must not
//! touch the filesystem or decide what is secret.

use super::Issue;

/// One persisted variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persisted {
    /// Variable name as persisted (lowercase; `component.var` for
    /// component variables).
    pub name: String,
    /// The value as text (`"500"`, `"ON"`).
    pub value: String,
    /// The JSON section it is in (`mysql_server`, `mysql_static_variables`, ...).
    pub section: String,
    /// A read-only variable persisted with `SET PERSIST_ONLY`: it takes
    /// effect at the next start (the static sections).
    pub at_restart: bool,
    /// 1-based line of the variable's name in the file.
    pub line: usize,
}

/// The file, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AutoCnf {
    /// The `Version` member.
    pub version: Option<u64>,
    /// Variables in file order within each section.
    pub variables: Vec<Persisted>,
    /// The file has a sensitive (encrypted) section: values only the
    /// server's keyring can read.
    pub encrypted: bool,
    /// What could not be read.
    pub issues: Vec<Issue>,
}

/// Sections of version 1 and 2 and whether their variables wait for a
/// restart (read-only ones, persisted with `PERSIST_ONLY`).
const SECTIONS: [(&str, bool); 6] = [
    ("mysql_server", false),
    ("mysql_server_static_options", true),
    ("mysql_dynamic_parse_early_variables", false),
    ("mysql_static_parse_early_variables", true),
    ("mysql_dynamic_variables", false),
    ("mysql_static_variables", true),
];

/// The section of version 2 that holds sensitive variables, encrypted with
/// a key from the server's keyring: not readable here.
const SENSITIVE: &str = "mysql_sensitive_variables";

/// Where each quoted string of the file starts, and where its lines start:
/// built in one pass, so finding every variable's line is linear in the
/// file (a search per variable from its section was quadratic on a hostile
/// file of many variables).
struct Places<'a> {
    strings: std::collections::HashMap<&'a str, Vec<usize>>,
    newlines: Vec<usize>,
}

impl<'a> Places<'a> {
    fn new(text: &'a str) -> Places<'a> {
        let b = text.as_bytes();
        let mut strings: std::collections::HashMap<&'a str, Vec<usize>> = Default::default();
        let mut newlines = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\n' => newlines.push(i),
                b'"' => {
                    let open = i;
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        if b[i] == b'\n' {
                            newlines.push(i);
                        }
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    if let Some(t) = text.get(open + 1..i.min(b.len())) {
                        strings.entry(t).or_default().push(open);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Places { strings, newlines }
    }

    /// The 1-based line where `"name"` first appears at or after byte
    /// `from`, and its byte offset (line 1 and `from` when it does not).
    fn line_of(&self, name: &str, from: usize) -> (usize, usize) {
        let at = self
            .strings
            .get(name)
            .and_then(|v| v.get(v.partition_point(|p| *p < from)).copied());
        match at {
            Some(at) => (self.newlines.partition_point(|p| *p < at) + 1, at + 1),
            None => (1, from),
        }
    }
}

/// Read the file. Unknown sections and members are ignored (a newer server
/// may add some); a variable without a `Value` is an issue.
pub fn parse(text: &str) -> AutoCnf {
    let mut out = AutoCnf::default();
    let root: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.issues.push(Issue {
                line: e.line().max(1),
                column: Some(e.column().max(1)),
                message: format!(
                    "not valid JSON ({e}): MySQL refuses to start with a corrupt mysqld-auto.cnf (\"Persisted config file is corrupt\"); fix or remove it (RESET PERSIST on a running server)"
                ),
            });
            return out;
        }
    };
    let Some(obj) = root.as_object() else {
        out.issues.push(Issue {
            line: 1,
            column: Some(1),
            message: "not a JSON object: expected `{\"Version\": ..., \"mysql_server\": {...}}`"
                .into(),
        });
        return out;
    };
    out.version = obj.get("Version").and_then(serde_json::Value::as_u64);
    if !matches!(out.version, Some(1 | 2)) {
        out.issues.push(Issue {
            line: 1,
            column: None,
            message: format!(
                "`Version` is {}: driftaudit reads versions 1 and 2 of mysqld-auto.cnf; the variables are read as version 2 lays them out",
                obj.get("Version").map_or("missing".to_string(), |v| v.to_string())
            ),
        });
    }
    let places = Places::new(text);
    let take = |out: &mut AutoCnf,
                section: &str,
                map: &serde_json::Map<String, serde_json::Value>,
                at_restart: bool| {
        // names are found after their section's own name (the JSON map
        // does not keep the file's order)
        let (_, from) = places.line_of(section, 0);
        for (name, entry) in map {
            // version 1 nests the static section inside mysql_server
            if SECTIONS.iter().any(|(s, _)| s == name) {
                continue;
            }
            let (line, _) = places.line_of(name, from);
            let value = match entry.get("Value") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => {
                    v.to_string()
                }
                _ => {
                    out.issues.push(Issue {
                        line,
                        column: None,
                        message: format!(
                            "`{name}` in {section} has no `Value` string; the server would refuse the file"
                        ),
                    });
                    continue;
                }
            };
            out.variables.push(Persisted {
                name: name.to_ascii_lowercase(),
                value,
                section: section.to_string(),
                at_restart,
                line,
            });
        }
    };
    for (section, at_restart) in SECTIONS {
        let map = match section {
            // version 1: inside mysql_server
            "mysql_server_static_options" => obj
                .get("mysql_server")
                .and_then(|s| s.get(section))
                .or_else(|| obj.get(section)),
            _ => obj.get(section),
        };
        if let Some(map) = map.and_then(serde_json::Value::as_object) {
            take(&mut out, section, map, at_restart);
        }
    }
    out.encrypted = obj.contains_key(SENSITIVE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manual's example (Performance Schema persisted_variables table),
    /// version 1, with a PERSIST_ONLY read-only variable added.
    #[test]
    fn version_1_reads_dynamic_and_static_variables() {
        let text = r#"{ "Version" : 1 , "mysql_server" : { "max_connections" : { "Value" : "1000" , "Metadata" : { "Timestamp" : 1519921706000000 , "User" : "root" , "Host" : "localhost" } } , "autocommit" : { "Value" : "ON" , "Metadata" : { "Timestamp" : 1519921707000000 , "User" : "root" , "Host" : "localhost" } } , "mysql_server_static_options" : { "innodb_log_file_size" : { "Value" : "1073741824" , "Metadata" : { "Timestamp" : 1519921708000000 , "User" : "root" , "Host" : "localhost" } } } } }"#;
        let a = parse(text);
        assert_eq!(a.version, Some(1));
        assert!(a.issues.is_empty(), "{:?}", a.issues);
        let got: Vec<(&str, &str, bool)> = a
            .variables
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_str(), v.at_restart))
            .collect();
        assert_eq!(
            got,
            [
                ("autocommit", "ON", false),
                ("max_connections", "1000", false),
                ("innodb_log_file_size", "1073741824", true),
            ]
        );
    }

    #[test]
    fn version_2_sections_lines_and_encrypted_values() {
        let text = "{\n  \"Version\": 2,\n  \"mysql_dynamic_variables\": {\n    \"max_connections\": {\"Value\": \"500\", \"Metadata\": {\"Timestamp\": 1, \"User\": \"root\", \"Host\": \"localhost\"}}\n  },\n  \"mysql_static_variables\": {\n    \"innodb_buffer_pool_instances\": {\"Value\": \"4\", \"Metadata\": {\"Timestamp\": 1, \"User\": \"root\", \"Host\": \"localhost\"}}\n  },\n  \"mysql_sensitive_variables\": {\"master_key_id\": \"k\"}\n}\n";
        let a = parse(text);
        assert_eq!(a.version, Some(2));
        assert!(a.encrypted && a.issues.is_empty(), "{a:?}");
        assert_eq!(a.variables.len(), 2);
        let mc = &a.variables[0];
        assert_eq!(
            (mc.name.as_str(), mc.line, mc.at_restart),
            ("max_connections", 4, false)
        );
        let inst = &a.variables[1];
        assert_eq!(
            (
                inst.name.as_str(),
                inst.line,
                inst.at_restart,
                inst.section.as_str()
            ),
            (
                "innodb_buffer_pool_instances",
                7,
                true,
                "mysql_static_variables"
            )
        );
    }

    #[test]
    fn a_corrupt_file_is_one_issue_with_its_place() {
        let a = parse("{ \"Version\": 1, \"mysql_server\": { \"x\": ");
        assert_eq!(a.variables, []);
        assert_eq!(a.issues.len(), 1);
        assert!(
            a.issues[0].message.contains("refuses to start"),
            "{:?}",
            a.issues
        );
        // hostile nesting stops at serde_json's recursion limit, no overflow
        let deep = "[".repeat(100_000);
        assert_eq!(parse(&deep).issues.len(), 1);
        // many variables: each found once, lines right (linear, not a
        // search per variable)
        let n = 20_000;
        let body: Vec<String> = (0..n)
            .map(|i| format!("\"v{i:05}\": {{\"Value\": \"{i}\"}}"))
            .collect();
        let text = format!(
            "{{\"Version\": 1, \"mysql_server\": {{\n{}\n}}}}",
            body.join(",\n")
        );
        let a = parse(&text);
        assert_eq!(a.variables.len(), n);
        assert_eq!(a.variables[n - 1].line, n + 1);
    }
}
