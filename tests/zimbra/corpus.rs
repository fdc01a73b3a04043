//! Every localconfig.xml in the shared corpus parses without panicking, and
//! the keys it yields (secret values redacted) are pinned by an insta snapshot
//! per file. The corpus is read in place (tests/common, never copied here).

use driftaudit::unstable::parse::localconfig::parse_xml;
use driftaudit::unstable::secret::{localconfig_key_is_secret, REDACTED};

use crate::common;

#[test]
fn corpus_localconfig_files_parse_and_match_snapshots() {
    let Some(dir) = common::corpus_dir("zimbra") else {
        return;
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} unreadable: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.len() >= 10,
        "expected the 10 zimbra corpus files, found {names:?}"
    );
    for name in names {
        let text = String::from_utf8_lossy(&std::fs::read(dir.join(&name)).unwrap()).into_owned();
        let (keys, issues) = parse_xml(&text);
        let mut out = String::new();
        match keys {
            None => out.push_str("NOT LOADABLE\n"),
            Some(keys) => {
                for k in keys {
                    let v = if localconfig_key_is_secret(&k.name) {
                        REDACTED.to_string()
                    } else {
                        k.value.clone()
                    };
                    out.push_str(&format!("{:>4}  {} = {:?}\n", k.line, k.name, v));
                }
            }
        }
        for i in &issues {
            out.push_str(&format!("issue {}:{:?}: {}\n", i.line, i.column, i.message));
        }
        for secret in [
            "zimbra_ldap_password",
            "mysql_root_password",
            "ldap_root_password",
        ] {
            assert!(
                !out.contains(&format!("{secret} = \"password\"")),
                "{name}: secret not redacted"
            );
        }
        let snap = format!("zimbra_corpus__{}", name.replace('.', "_"));
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false, description => name.clone()}, {
            insta::assert_snapshot!(snap, out);
        });
    }
}
