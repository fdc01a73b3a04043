//! POSIX sh quoting: a plain token stays as it is, anything else is
//! single-quoted (`'` written as `'\''`). A leaf (imports nothing of the
//! crate), so every writer that names a command holding host text (`fix`'s
//! runtime steps, a reader's input finding) quotes it the same way; it runs
//! nothing and decides nothing about what may be put in a command.

/// `s` as one sh word.
pub fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/:+,@%=^".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A command line of words, each quoted.
pub fn command(words: &[&str]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_values_stay_one_word() {
        assert_eq!(
            quote("net.ipv4.tcp_tw_recycle=0"),
            "net.ipv4.tcp_tw_recycle=0"
        );
        assert_eq!(quote("10240\t65000"), "'10240\t65000'");
        assert_eq!(quote("a'b; rm -rf /"), r"'a'\''b; rm -rf /'");
        assert_eq!(quote(""), "''");
        // what sh reads back is the value, for every hostile one
        for v in ["a'b; rm -rf /", "$(id)", "`x`", "a\\b", "x y", "it's"] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", quote(v)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), v);
            // nested once more, as `su - zimbra -c WORD` passes it to a shell
            let inner = format!("printf %s {}", quote(v));
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("sh -c {}", quote(&inner)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), v);
        }
    }
}
