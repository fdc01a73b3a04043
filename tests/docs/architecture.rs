//! The import graph of `src/` keeps the one-way flow of the developers' guide:
//! expression language -> policy model and loader -> host -> parse -> facts ->
//! (report model) -> engine -> waivers -> render ->
//! cli, with `secret`, `value`, `catalogue` and `reader` as leaves every
//! layer may use. Reads every `src/**/*.rs`, collects the `crate::X`
//! (and, in the binary, `driftaudit::X`) references of each top-level module
//! outside its test module, and fails on an import from a lower layer to a
//! higher one or a cycle between top-level modules. Today's back-arrows are
//! listed one by one in [`ALLOWED`]; a new one fails, and so does a listed
//! one that is gone (delete its row). The same reading, file by file,
//! fails on two files of `src/` that import each other in a circle; and no
//! hand-written file may hold more than 800 lines before its tests (a
//! generated one says `// @generated` in its first line). The one module
//! layout (a module with children is `name/mod.rs`) is clippy's
//! `self_named_module_files`, set in Cargo.toml's `[lints]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layers, lowest first: a module may import its own layer and lower ones.
const LAYERS: &[(&str, &[&str])] = &[
    // The policy language (AST, parser, canonical text, what each operator
    // does to values, and the one evaluator): the loader parses and folds
    // constants with it over the parameters alone, so it sits below the
    // loader; the engine answers its host data over gathered facts.
    ("expression language", &["expr"]),
    ("policy model and loader", &["policy"]),
    ("host sources", &["host"]),
    ("parsers", &["parse"]),
    ("facts and namespaces", &["facts"]),
    // "the effective value of X and every place that set it", read from facts.
    ("resolver", &["resolve"]),
    // The report model is data (findings, statuses) like the policy model:
    // the engine builds it, so it sits below the engine that imports it,
    // although it comes after the engine in the flow of data.
    ("report model", &["report"]),
    // the upgrade rules: registered in a policy set, planned and judged by
    // the engine over the facts it gathered, their findings report model.
    ("upgrade checks", &["upgrade"]),
    // snapshot asks the engine which files the policies' readers read.
    ("engine", &["engine", "snapshot"]),
    ("waivers", &["waiver"]),
    // `driftaudit fix`: plans on the resolver's answers and re-audits a
    // patched copy through the engine (and the snapshot writer for a live host).
    ("fix planner", &["fix"]),
    // `driftaudit test`: runs test cases through the engine and waivers;
    // its result is data the renderers print.
    ("policy tests", &["policytest"]),
    // `driftaudit baseline`: gathers a golden host's facts, writes a policy
    // and proves it by auditing that host through the engine.
    ("baselines", &["baseline"]),
    ("renderers", &["render"]),
    // Commands built on reports that still print for themselves (issue 14
    // item 5 moves their printers into render/).
    ("report tools", &["diff", "fleet"]),
    ("cli", &["cli"]),
];

/// Usable by every layer; import nothing of the crate. `reader` is the one
/// capped, FIFO-safe file read that `host` and the policy loader share;
/// `shell` the one sh quoting of `fix`'s steps and the readers' messages.
const LEAVES: &[&str] = &[
    "secret",
    "value",
    "catalogue",
    "reader",
    "printable",
    "shell",
];

/// The crate root only re-exports.
const ROOT: &str = "lib";

/// Layers that must not be imported by `parse` and `host`, whatever their rank.
const NEVER_BELOW: &[&str] = &["facts", "engine", "policy", "render"];

/// Back-arrows in today's code, each with why it is there and what removes
/// it (none left: the loader's `expr` and `host` arrows went with the
/// syntax/evaluation split and the `reader` leaf of issue 14 item 3).
const ALLOWED: &[(&str, &str, &str)] = &[];

type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The top-level module a file under `src/` belongs to.
fn top_module(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    if name == "main" {
        "cli".into()
    } else {
        name
    }
}

/// The code of a file without comments and without its `#[cfg(test)]`
/// modules (test code may reach across layers to build fixtures).
fn production_code(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.trim() == "#[cfg(test)]"
            && lines
                .get(i + 1)
                .is_some_and(|n| n.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        };
        out.push(code.to_string());
    }
    out
}

/// The first path segments named after `crate::` or `driftaudit::`, with
/// groups (`crate::{facts::{A, B}, host}`) expanded to each member.
fn references(line: &str) -> Vec<String> {
    // the binary reaches the library's internals through `unstable`
    let line = line.replace("driftaudit::unstable::", "driftaudit::");
    let line = line.as_str();
    let mut out = Vec::new();
    for prefix in ["crate::", "driftaudit::"] {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            let before_ok = rest[..at]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let after = &rest[at + prefix.len()..];
            if before_ok {
                if let Some(group) = after.strip_prefix('{') {
                    out.extend(group_heads(group));
                } else {
                    let ident: String = after
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !ident.is_empty() {
                        out.push(ident);
                    }
                }
            }
            rest = after;
        }
    }
    out
}

/// The first segment of each member of a `{...}` group (text after the `{`).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut member_start = true;
    let mut ident = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => member_start = true,
            c if member_start && (c.is_alphanumeric() || c == '_') => ident.push(c),
            _ if member_start && !ident.is_empty() => {
                heads.push(std::mem::take(&mut ident));
                member_start = false;
            }
            _ => {}
        }
    }
    if !ident.is_empty() {
        heads.push(ident);
    }
    heads
}

/// Every top-level module's references to other top-level modules, with the
/// file and line of each.
fn graph_of(src: &Path) -> (Graph, BTreeSet<String>) {
    let files = crate::common::tree::rust_files(src);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| top_module(f.strip_prefix(src).unwrap()))
        .collect();
    let mut g = Graph::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let from = top_module(rel);
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in production_code(&text).iter().enumerate() {
            for to in references(line) {
                if to != from && modules.contains(&to) {
                    g.entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .push(format!("src/{}:{}", rel.display(), n + 1));
                }
            }
        }
    }
    (g, modules)
}

fn rank(m: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&m))
}

/// Every violation of the layer rules in `g` (over `modules`), given the
/// allowed back-arrows.
fn violations(
    g: &Graph,
    modules: &BTreeSet<String>,
    allowed: &[(&str, &str, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    let is_allowed = |a: &str, b: &str| allowed.iter().any(|(x, y, _)| *x == a && *y == b);
    for m in modules {
        if m != ROOT && rank(m).is_none() && !LEAVES.contains(&m.as_str()) {
            out.push(format!(
                "module `{m}` has no layer: add it to LAYERS (or LEAVES) in tests/docs/architecture.rs"
            ));
        }
    }
    for (from, tos) in g {
        if from == ROOT {
            continue;
        }
        for (to, at) in tos {
            let at = at.join(", ");
            if LEAVES.contains(&from.as_str()) {
                out.push(format!("leaf `{from}` imports `{to}` at {at}"));
                continue;
            }
            if LEAVES.contains(&to.as_str()) || is_allowed(from, to) {
                continue;
            }
            if ["parse", "host"].contains(&from.as_str()) && NEVER_BELOW.contains(&to.as_str()) {
                out.push(format!("`{from}` must import nothing of `{to}` (at {at})"));
                continue;
            }
            if let (Some(a), Some(b)) = (rank(from), rank(to)) {
                if b > a {
                    out.push(format!(
                        "back-arrow `{from}` ({}) -> `{to}` ({}) at {at}",
                        LAYERS[a].0, LAYERS[b].0
                    ));
                }
            }
        }
    }
    for (a, b, _) in allowed {
        if !g.get(*a).is_some_and(|t| t.contains_key(*b)) {
            out.push(format!(
                "allowed back-arrow `{a}` -> `{b}` is gone: delete its row from ALLOWED"
            ));
        }
    }
    // Cycles between top-level modules, over the edges not allowed above.
    let edges: BTreeMap<&str, Vec<&str>> = g
        .iter()
        .map(|(a, tos)| {
            (
                a.as_str(),
                tos.keys()
                    .map(String::as_str)
                    .filter(|b| !is_allowed(a, b))
                    .collect(),
            )
        })
        .collect();
    if let Some(cycle) = find_cycle(&edges) {
        out.push(format!("import cycle: {}", cycle.join(" -> ")));
    }
    out
}

/// One cycle of the directed graph, if there is one.
fn find_cycle<'a>(edges: &BTreeMap<&'a str, Vec<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        n: &'a str,
        edges: &BTreeMap<&'a str, Vec<&'a str>>,
        done: &mut BTreeSet<&'a str>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|p| *p == n) {
            let mut c = path[i..].to_vec();
            c.push(n);
            return Some(c);
        }
        if !done.insert(n) {
            return None;
        }
        path.push(n);
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, done, path) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, edges, &mut done, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn imports_follow_the_layers_and_have_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (g, modules) = graph_of(&src);
    // The reader works: the graph has the edges everyone knows are there.
    assert!(g["engine"].contains_key("facts"), "{g:?}");
    assert!(g["facts"].contains_key("parse"), "{g:?}");
    assert!(g["cli"].contains_key("render"), "{g:?}");
    let v = violations(&g, &modules, ALLOWED);
    assert!(v.is_empty(), "import graph of src/:\n{}", v.join("\n"));
}

#[test]
fn parsers_and_host_import_no_facts_engine_policy_or_render() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (g, _) = graph_of(&src);
    for low in ["parse", "host"] {
        for high in NEVER_BELOW {
            assert!(
                !g.get(low).is_some_and(|t| t.contains_key(*high)),
                "`{low}` imports `{high}` at {:?}",
                g[low][*high]
            );
        }
    }
}

fn synthetic(edges: &[(&str, &str)]) -> (Graph, BTreeSet<String>) {
    let mut g = Graph::new();
    let mut modules: BTreeSet<String> = LAYERS
        .iter()
        .flat_map(|(_, ms)| ms.iter())
        .chain(LEAVES)
        .map(|m| m.to_string())
        .collect();
    for (a, b) in edges {
        modules.insert(a.to_string());
        modules.insert(b.to_string());
        g.entry(a.to_string())
            .or_default()
            .entry(b.to_string())
            .or_default()
            .push("src/x.rs:1".into());
    }
    (g, modules)
}

#[test]
fn a_parser_importing_facts_is_a_back_arrow() {
    let (g, m) = synthetic(&[("facts", "parse"), ("parse", "secret")]);
    assert!(violations(&g, &m, &[]).is_empty());
    let (g, m) = synthetic(&[("facts", "parse"), ("parse", "facts")]);
    let v = violations(&g, &m, &[]);
    assert!(
        v.iter()
            .any(|x| x.contains("`parse` must import nothing of `facts`")),
        "{v:?}"
    );
    assert!(v.iter().any(|x| x.contains("import cycle")), "{v:?}");
}

#[test]
fn an_evaluator_importing_the_engine_is_a_back_arrow() {
    let (g, m) = synthetic(&[("engine", "expr"), ("expr", "engine")]);
    let v = violations(&g, &m, &[]);
    assert!(
        v.iter().any(|x| x.starts_with("back-arrow `expr`")),
        "{v:?}"
    );
}

#[test]
fn the_policy_loader_may_use_the_expression_language_but_not_facts_or_the_host() {
    let (g, m) = synthetic(&[("policy", "expr"), ("policy", "reader")]);
    assert!(violations(&g, &m, &[]).is_empty());
    for high in ["facts", "host"] {
        let (g, m) = synthetic(&[("policy", high)]);
        let v = violations(&g, &m, &[]);
        assert!(
            v.iter().any(|x| x.starts_with(&format!(
                "back-arrow `policy` (policy model and loader) -> `{high}`"
            ))),
            "{v:?}"
        );
    }
}

#[test]
fn a_cycle_within_one_layer_is_caught() {
    let (g, m) = synthetic(&[("engine", "snapshot"), ("snapshot", "engine")]);
    let v = violations(&g, &m, &[]);
    assert!(v.iter().any(|x| x.starts_with("import cycle")), "{v:?}");
}

#[test]
fn leaves_import_nothing_and_new_modules_need_a_layer() {
    let (g, m) = synthetic(&[("secret", "facts"), ("newthing", "value")]);
    let v = violations(&g, &m, &[]);
    assert!(v.iter().any(|x| x.starts_with("leaf `secret`")), "{v:?}");
    assert!(
        v.iter()
            .any(|x| x.contains("module `newthing` has no layer")),
        "{v:?}"
    );
}

#[test]
fn an_allowed_back_arrow_that_is_gone_must_be_deleted() {
    let (g, m) = synthetic(&[("engine", "facts")]);
    let v = violations(&g, &m, &[("parse", "facts", "why")]);
    assert!(v.iter().any(|x| x.contains("is gone")), "{v:?}");
}

#[test]
fn grouped_and_nested_imports_are_read() {
    assert_eq!(
        references("use crate::{facts::{Entry, Facts}, host::Host, value};"),
        ["facts", "host", "value"]
    );
    assert_eq!(references("let x = crate::expr::eval(e);"), ["expr"]);
    assert_eq!(
        references("use driftaudit::unstable::render::Format;"),
        ["render"]
    );
    assert_eq!(
        references("use driftaudit::unstable::render::Format;"),
        ["render"]
    );
    assert!(references("let s = \"notcrate::x\";").is_empty());
    let code = production_code(
        "use crate::host;\n// crate::engine in a comment\n#[cfg(test)]\nmod tests {\n    use crate::engine;\n}\n",
    );
    let refs: Vec<String> = code.iter().flat_map(|l| references(l)).collect();
    assert_eq!(refs, ["host"]);
}

// ------------------------------------------------------------ file level

/// A file's crate (`lib` or `bin`: `main.rs` and `cli/`) and module path
/// (`src/policy/compile.rs` -> `policy::compile`, `src/policy/mod.rs` ->
/// `policy`, `src/lib.rs` -> ``).
fn file_module(rel: &Path) -> (&'static str, Vec<String>) {
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap();
    let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
    let krate = if segs.first().is_some_and(|s| s == "cli") || stem == "main" {
        "bin"
    } else {
        "lib"
    };
    if !matches!(stem.as_str(), "mod" | "lib" | "main") {
        segs.push(stem);
    }
    (krate, segs)
}

/// The paths a line names through `crate::`, `super::` and `self::`, each
/// as written after the prefix, groups expanded to the first segment of
/// each member (`super::{overlay::{self, Layer}, values}` -> `super::overlay`,
/// `super::values`). `pub use child::...` and `mod child;` are structure,
/// not imports, and are left out by the caller.
fn relative_paths(line: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for prefix in ["crate::", "super::", "self::"] {
        let mut rest = line;
        while let Some(at) = rest.find(prefix) {
            let before_ok = rest[..at]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'));
            let after = &rest[at + prefix.len()..];
            rest = after;
            if !before_ok {
                continue;
            }
            let kind = prefix.trim_end_matches(':').to_string();
            // `super::super::x`: each `super` is one segment of the path
            let mut segs: Vec<String> = Vec::new();
            let mut tail = after;
            loop {
                let ident: String = tail
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if ident.is_empty() {
                    break;
                }
                tail = &tail[ident.len()..];
                segs.push(ident);
                match tail.strip_prefix("::") {
                    Some(t) => tail = t,
                    None => break,
                }
            }
            if tail.starts_with('*') {
                // a glob: everything of that module, so an import of its file
                out.push((kind, segs));
                continue;
            }
            if let Some(group) = tail.strip_prefix('{') {
                for h in group_heads(group) {
                    let mut p = segs.clone();
                    p.push(h);
                    out.push((kind.clone(), p));
                }
            } else if !segs.is_empty() {
                out.push((kind, segs));
            }
        }
    }
    out
}

/// The children a folder's `mod.rs` re-exports whole (`pub use model::*;`).
fn glob_reexports(text: &str) -> Vec<String> {
    production_code(text)
        .iter()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t
                .strip_prefix("pub use ")
                .or_else(|| t.strip_prefix("pub(crate) use "))?;
            let child = t.strip_suffix("::*;")?;
            (!child.contains("::") && !child.contains(' ')).then(|| child.to_string())
        })
        .collect()
}

/// The names of the items a file defines at its top level (`pub struct X`,
/// `pub(crate) fn f`, `const N`, ...), any visibility.
fn defined_items(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for l in production_code(text) {
        let mut t = l.trim_start();
        for v in ["pub(crate) ", "pub(super) ", "pub "] {
            if let Some(r) = t.strip_prefix(v) {
                t = r;
                break;
            }
        }
        for kw in [
            "struct ", "enum ", "fn ", "const ", "static ", "type ", "trait ", "union ",
        ] {
            if let Some(r) = t.strip_prefix(kw) {
                let n: String = r
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !n.is_empty() {
                    out.insert(n);
                }
            }
        }
    }
    out
}

/// The modules a file declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`).
fn children_of(text: &str) -> Vec<String> {
    production_code(text)
        .iter()
        .filter_map(|l| {
            let t = l.trim_start();
            let t = t
                .strip_prefix("pub(crate) ")
                .or_else(|| t.strip_prefix("pub(super) "))
                .or_else(|| t.strip_prefix("pub "))
                .unwrap_or(t);
            let name = t.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// Per folder module, the names its `mod.rs` re-exports from each child
/// (`pub use overlay::{Overridden, OverrideSource};`).
fn reexports(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let joined = production_code(text).join(" ");
    let mut rest = joined.as_str();
    while let Some(at) = rest.find("pub use ") {
        let after = &rest[at + 8..];
        rest = after;
        let child: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let Some(tail) = after[child.len()..].strip_prefix("::") else {
            continue;
        };
        let end = tail.find(';').unwrap_or(tail.len());
        let names = &tail[..end];
        for name in names.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !name.is_empty() && name != "self" {
                out.entry(name.to_string()).or_insert_with(|| child.clone());
            }
        }
    }
    out
}

/// Lines with a `use` whose `{...}` group spans several lines joined into
/// one, each with the 0-based number of its first line.
fn statements(lines: &[String]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = 0i64;
    for (n, l) in lines.iter().enumerate() {
        let depth: i64 = l.matches('{').count() as i64 - l.matches('}').count() as i64;
        if open > 0 {
            let last = out.last_mut().unwrap();
            last.1.push(' ');
            last.1.push_str(l.trim());
            open += depth;
        } else {
            out.push((n, l.clone()));
            let t = l.trim_start();
            if (t.starts_with("use ")
                || t.starts_with("pub use ")
                || t.starts_with("pub(crate) use "))
                && depth > 0
            {
                open = depth;
            }
        }
    }
    out
}

/// Every file's imports of other files of its crate, with the file and line
/// of each: `crate::`/`super::`/`self::` paths resolved to the longest
/// prefix that is a file module, a folder module's re-exported name to the
/// child that defines it.
fn file_graph(src: &Path) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let files = crate::common::tree::rust_files(src);
    let name = |k: &str, m: &[String]| format!("{k}:{}", m.join("::"));
    let mut modules: BTreeSet<String> = BTreeSet::new();
    let mut exports: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut globs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut defines: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut texts = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        let (k, m) = file_module(rel);
        let text = std::fs::read_to_string(f).unwrap();
        modules.insert(name(k, &m));
        exports.insert(name(k, &m), reexports(&text));
        globs.insert(name(k, &m), glob_reexports(&text));
        defines.insert(name(k, &m), defined_items(&text));
        texts.push((rel.to_path_buf(), k, m, text));
    }
    let mut g: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (rel, k, m, text) in &texts {
        let from = name(k, m);
        for (n, line) in statements(&production_code(text)) {
            let line = line.as_str();
            let t = line.trim_start();
            if t.starts_with("mod ")
                || t.starts_with("pub mod ")
                || t.starts_with("pub(crate) mod ")
                || (t.starts_with("pub use ")
                    && !t.starts_with("pub use crate::")
                    && !t.starts_with("pub use super::"))
                || t.starts_with("pub(crate) use ")
                    && !t.contains("crate::")
                    && !t.contains("super::")
            {
                continue;
            }
            let mut paths = relative_paths(line);
            // a child module named bare (`adjust::judge(..)`, `use names::*`)
            // is `self::child`
            for child in children_of(text) {
                for (kind, segs) in relative_paths(
                    &line.replace(&format!("{child}::"), &format!("self::{child}::")),
                ) {
                    if kind == "self"
                        && segs.first() == Some(&child)
                        && !paths.contains(&(kind.clone(), segs.clone()))
                    {
                        paths.push((kind, segs));
                    }
                }
            }
            for (kind, segs) in paths {
                let mut abs: Vec<String> = match kind.as_str() {
                    "crate" => Vec::new(),
                    "self" => m.clone(),
                    _ => m[..m.len().saturating_sub(1)].to_vec(),
                };
                let mut segs = segs.into_iter().peekable();
                // further `super`s go up
                while segs.peek().is_some_and(|s| s == "super") {
                    segs.next();
                    abs.pop();
                }
                abs.extend(segs);
                // the longest prefix that is a file module
                let mut len = abs.len();
                while len > 0 && !modules.contains(&name(k, &abs[..len])) {
                    len -= 1;
                }
                let mut to = abs[..len].to_vec();
                if let Some(next) = abs.get(len) {
                    if let Some(child) = exports.get(&name(k, &to)).and_then(|e| e.get(next)) {
                        to.push(child.clone());
                    } else if let Some(child) = globs.get(&name(k, &to)).and_then(|cs| {
                        cs.iter().find(|c| {
                            let mut p = to.clone();
                            p.push((*c).clone());
                            defines.get(&name(k, &p)).is_some_and(|d| d.contains(next))
                        })
                    }) {
                        // `pub use child::*` re-exports what the child defines
                        to.push(child.clone());
                    }
                }
                let to = name(k, &to);
                if to != from && modules.contains(&to) {
                    g.entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_default()
                        .push(format!("src/{}:{}", rel.display(), n + 1));
                }
            }
        }
    }
    g
}

/// No two files of src/ import each other, directly or round a longer
/// circle: globs (`use super::*`), bare child paths (`adjust::judge(..)`)
/// and a folder's `pub use model::*` re-exports count as imports, so a room
/// that uses what its folder's `mod.rs` defines while `mod.rs` calls it is
/// a circle too; what they share belongs in a file both import (as
/// `facts/model.rs` is for `facts/`). Issue 34 moved the last 32 such rooms.
#[test]
fn no_two_files_import_each_other_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = file_graph(&src);
    // The reader works: edges everyone knows are there, through a
    // `super::` group, a `crate::` path and a folder's re-export.
    assert!(
        g["lib:facts::tuned"].contains_key("lib:parse::tuned"),
        "{:?}",
        g["lib:facts::tuned"]
    );
    assert!(
        g["lib:policy::overlay"].contains_key("lib:policy::compile"),
        "{:?}",
        g["lib:policy::overlay"]
    );
    assert!(
        g["bin:cli::check"].contains_key("bin:cli::fleet"),
        "{:?}",
        g["bin:cli::check"]
    );
    assert!(
        g["lib:policy::set"].contains_key("lib:policy::model"),
        "{:?}",
        g["lib:policy::set"]
    );
    // No exception: a room that needs what its folder's mod.rs defines
    // gets it from a file of its own that both import (`host/model.rs`,
    // `fix/model.rs`, ...), as issue 34 moved the last 32 such edges.
    let edges: BTreeMap<&str, Vec<&str>> = g
        .iter()
        .map(|(k, v)| (k.as_str(), v.keys().map(String::as_str).collect()))
        .collect();
    if let Some(c) = find_cycle(&edges) {
        let mut why = Vec::new();
        for w in c.windows(2) {
            let at = &g[w[0]][w[1]];
            why.push(format!("{} -> {} ({})", w[0], w[1], at.join(", ")));
        }
        panic!(
            "files of src/ import each other in a circle; move what they share into a file both import:\n{}",
            why.join("\n")
        );
    }
}

#[test]
fn a_circle_through_a_folders_reexport_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("policy")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod policy;\n").unwrap();
    std::fs::write(
        src.join("policy/mod.rs"),
        "mod a;\nmod b;\npub use a::Thing;\npub use b::{Other, More};\n",
    )
    .unwrap();
    std::fs::write(
        src.join("policy/a.rs"),
        "use super::Other;\npub struct Thing;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("policy/b.rs"),
        "pub struct Other;\nfn f() { crate::policy::a::Thing; }\n",
    )
    .unwrap();
    let g = file_graph(src);
    assert!(g["lib:policy::a"].contains_key("lib:policy::b"), "{g:?}");
    assert!(g["lib:policy::b"].contains_key("lib:policy::a"), "{g:?}");
    assert!(
        !g.contains_key("lib:policy"),
        "structure lines are not imports: {g:?}"
    );
}

/// Most lines a hand-written source file may hold before its `#[cfg(test)]`
/// block (issue 34): a room a newcomer reads in one sitting.
const MAX_FILE_LINES: usize = 800;

/// A generated file says so in its first line (`// @generated ...`, as
/// rustfmt and code review tools read it); it is exempt from the size limit.
fn is_generated(text: &str) -> bool {
    text.lines()
        .next()
        .is_some_and(|l| l.trim_start().starts_with("// @generated"))
}

/// Lines before the first `#[cfg(test)]` at the start of a line (the unit
/// tests of a file are its own business, not the reader's first page).
fn lines_before_tests(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

/// Every `.rs` file below `dir` with the lines it holds before its tests,
/// generated files left out.
fn oversized_files(dir: &Path) -> Vec<String> {
    let mut over = Vec::new();
    for p in crate::common::tree::rust_files(dir) {
        let text = std::fs::read_to_string(&p).unwrap();
        let n = lines_before_tests(&text);
        if !is_generated(&text) && n > MAX_FILE_LINES {
            over.push(format!(
                "{}: {n} lines",
                p.strip_prefix(dir).unwrap().display()
            ));
        }
    }
    over
}

#[test]
fn no_hand_written_source_file_is_over_800_lines_before_its_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let over = oversized_files(&src);
    assert!(
        over.is_empty(),
        "source files over {MAX_FILE_LINES} lines before their #[cfg(test)] block; \
         split each by what changes together (a folder with mod.rs as its map), \
         or mark a generated one `// @generated` in its first line:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_size_check_counts_until_the_tests_and_exempts_only_generated_files() {
    let dir = tempfile::tempdir().unwrap();
    let long = "fn f() {}\n".repeat(MAX_FILE_LINES + 1);
    let short_with_long_tests = format!(
        "fn f() {{}}\n#[cfg(test)]\nmod tests {{\n{}}}\n",
        "    fn g() {}\n".repeat(2 * MAX_FILE_LINES)
    );
    std::fs::create_dir_all(dir.path().join("room")).unwrap();
    std::fs::write(dir.path().join("room/big.rs"), &long).unwrap();
    std::fs::write(
        dir.path().join("frozen.rs"),
        format!("// @generated by a script\n{long}"),
    )
    .unwrap();
    // the marker counts only on the first line
    std::fs::write(
        dir.path().join("late_marker.rs"),
        format!("//! a room\n// @generated\n{long}"),
    )
    .unwrap();
    std::fs::write(dir.path().join("tested.rs"), short_with_long_tests).unwrap();
    let over = oversized_files(dir.path());
    assert_eq!(
        over,
        [
            format!("late_marker.rs: {} lines", MAX_FILE_LINES + 3),
            format!("room/big.rs: {} lines", MAX_FILE_LINES + 1),
        ]
    );
}

#[test]
fn globs_bare_child_paths_and_glob_reexports_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("x")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod x;\nmod y;\n").unwrap();
    std::fs::write(
        src.join("x/mod.rs"),
        "mod a;\nmod b;\npub use a::*;\nfn f() { b::g(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("x/a.rs"), "pub struct T;\n").unwrap();
    std::fs::write(src.join("x/b.rs"), "use super::*;\npub fn g() {}\n").unwrap();
    std::fs::write(src.join("y.rs"), "use crate::x::T;\n").unwrap();
    let g = file_graph(src);
    // `b::g()` in mod.rs is the child b; `use super::*` in b is mod.rs
    assert!(g["lib:x"].contains_key("lib:x::b"), "{g:?}");
    assert!(g["lib:x::b"].contains_key("lib:x"), "{g:?}");
    // `crate::x::T` is defined in a, re-exported by `pub use a::*`
    assert!(g["lib:y"].contains_key("lib:x::a"), "{g:?}");
    assert!(!g["lib:y"].contains_key("lib:x"), "{g:?}");
}

/// Every file docs/architecture.md names in backticks (`src/...`,
/// `policies/...`, `tests/...`, ...) exists, so the walk through one
/// finding stays true as files move; a file the text proposes to add is
/// written `path` (new) and left out.
#[test]
fn docs_architecture_names_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let tops = [
        "src/",
        "tests/",
        "policies/",
        "docs/",
        "scripts/",
        "testdata/",
        "benches/",
        "fuzz/",
        "examples/",
        "templates/",
    ];
    let mut named = 0;
    let mut missing = Vec::new();
    let mut rest = doc.as_str();
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else { break };
        let token = &after[..close];
        rest = &after[close + 1..];
        let is_path = tops.iter().any(|t| token.starts_with(t))
            && token
                .chars()
                .all(|c| c.is_alphanumeric() || "/._-".contains(c));
        if !is_path || rest.starts_with(" (new)") {
            continue;
        }
        named += 1;
        if !root.join(token).exists() {
            missing.push(token.to_string());
        }
    }
    assert!(
        named >= 40,
        "the walk names only {named} files: is the reader right?"
    );
    assert!(
        missing.is_empty(),
        "docs/architecture.md names files that do not exist (moved? write the new path, or `path` (new) for one to add): {missing:?}"
    );
}

/// "Adding a rule kind" in docs/architecture.md names every file a new
/// kind of check touches: each source file that names a `Check::` variant
/// is named there in backticks, or stands below with the reason it is not
/// (and still names one, so the reason stays true); a file's test module
/// does not count. That the files it
/// names exist is `docs_architecture_names_only_files_that_exist`'s.
#[test]
fn docs_architecture_names_every_file_a_rule_kind_touches() {
    const NOT_NAMED: &[(&str, &str)] = &[
        (
            "src/engine/assert.rs",
            "the `assert:` kind's own judge: it names only its own variant",
        ),
        (
            "src/engine/foreach.rs",
            "`for_each` builds a `setting:` check's key per item; another kind is left as it is",
        ),
        (
            "src/policy/set.rs",
            "a doc link to `Check::Upgrade` where `--target` adds the upgrade rules",
        ),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let start = doc
        .find("\n## Adding a rule kind\n")
        .expect("docs/architecture.md has a section \"Adding a rule kind\"");
    let section = &doc[start + 1..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let names_a_variant = |text: &str| {
        text.match_indices("Check::").any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + "Check::".len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && after.is_some_and(|c| c.is_ascii_uppercase())
        })
    };
    let mut unnamed = Vec::new();
    let mut matched = 0;
    for p in crate::common::tree::rust_files(&root.join("src")) {
        let text = std::fs::read_to_string(&p).unwrap();
        // a file's tests may build any kind to test with: the code is what counts
        let text = &text[..text.find("\n#[cfg(test)]").unwrap_or(text.len())];
        if !names_a_variant(text) {
            continue;
        }
        matched += 1;
        let rel = p.strip_prefix(root).unwrap().display().to_string();
        let named = section.contains(&format!("`{rel}`"));
        let excused = NOT_NAMED.iter().any(|(f, _)| *f == rel);
        if !named && !excused {
            unnamed.push(rel);
        }
    }
    assert!(
        matched >= 5,
        "only {matched} files name a `Check::` variant: is the reader right?"
    );
    assert!(
        unnamed.is_empty(),
        "these files name a `Check::` variant but \"Adding a rule kind\" in docs/architecture.md does not name them (name them there, or add them to NOT_NAMED with the reason): {unnamed:?}"
    );
    for (f, why) in NOT_NAMED {
        let text = std::fs::read_to_string(root.join(f)).unwrap_or_default();
        assert!(
            names_a_variant(&text),
            "{f} names no `Check::` variant any more: take it out of NOT_NAMED ({why})"
        );
    }
}
