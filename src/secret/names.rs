//! Which names are secret, by meaning, in each format: the lists of
//! secret-bearing option-file options, server variables, localconfig keys,
//! sysctl keys and mount options (each with what its value is), the rules
//! that read a name as its program does (option prefixes and `loose-`,
//! dotted or slashed sysctl keys, localconfig suffixes, names inside a
//! value), and the [`catalogue`] of all of them. Decides only: must not
//! change any text (that is `values`, `files` and `localconfig_xml`), and
//! must never call a name secret because a word merely appears in it.

/// The formats whose names [`is_secret`] classifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// MySQL/MariaDB option files (my.cnf) and the `--name=value` arguments
    /// they become; names as written (dashes or underscores, `loose-`,
    /// unique prefixes as mysqld and the clients accept them).
    OptionFile,
    /// `SHOW GLOBAL VARIABLES` names (captures in TSV, table or vertical form).
    ServerVariable,
    /// Zimbra localconfig keys (localconfig.xml and `zmlocalconfig` output).
    Localconfig,
    /// sysctl keys, dotted or slashed, configured (sysctl.d) or running
    /// (`/proc/sys`, `sysctl -a`).
    Sysctl,
    /// Options of an fstab or mount options field (`password=`, ...).
    MountOption,
}

impl Format {
    /// Every format, in a fixed order.
    pub const ALL: [Format; 5] = [
        Format::OptionFile,
        Format::ServerVariable,
        Format::Localconfig,
        Format::Sysctl,
        Format::MountOption,
    ];

    /// Short lowercase name (`option-file`, `server-variable`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Format::OptionFile => "option-file",
            Format::ServerVariable => "server-variable",
            Format::Localconfig => "localconfig",
            Format::Sysctl => "sysctl",
            Format::MountOption => "mount-option",
        }
    }
}

/// Server variables that hold a credential or key material, as the server
/// names them in `SHOW GLOBAL VARIABLES` (and as options in `[mysqld]`).
const SERVER_SECRETS: &[(&str, &str)] = &[
    (
        "authentication_ldap_sasl_bind_root_pwd",
        "MySQL LDAP SASL plugin: password of the bind root DN",
    ),
    (
        "authentication_ldap_simple_bind_root_pwd",
        "MySQL LDAP simple plugin: password of the bind root DN",
    ),
    (
        "file_key_management_filekey",
        "MariaDB file_key_management: the key that decrypts the key file",
    ),
    (
        "hashicorp_key_management_token",
        "MariaDB hashicorp_key_management: the Vault token",
    ),
    (
        "keyring_encrypted_file_password",
        "MySQL keyring_encrypted_file: the keyring password",
    ),
    (
        "keyring_hashicorp_secret_id",
        "MySQL keyring_hashicorp: the AppRole secret id",
    ),
    (
        "report_password",
        "password a replica reports to its source (SHOW REPLICAS)",
    ),
    ("s3_access_key", "MariaDB S3 engine: AWS access key id"),
    ("s3_secret_key", "MariaDB S3 engine: AWS secret access key"),
    (
        "ssl_passphrase",
        "MariaDB: passphrase of the server's TLS private key (`pass:...`)",
    ),
    (
        "wsrep_sst_auth",
        "Galera: `user:password` of the state snapshot transfer",
    ),
];

/// Options only option files (client and tool groups) take, beyond the
/// server variables above.
const OPTION_ONLY_SECRETS: &[(&str, &str)] = &[
    (
        "encrypt_key",
        "mariabackup/xtrabackup: the backup encryption key",
    ),
    (
        "master_password",
        "MySQL < 5.5 `[mysqld]`: replication password",
    ),
    ("passwd", "old client spelling of `password`"),
    ("password", "client password ([client], [mysqldump], ...)"),
    (
        "password1",
        "MySQL 8.0.27+ client: first authentication factor",
    ),
    (
        "password2",
        "MySQL 8.0.27+ client: second authentication factor",
    ),
    (
        "password3",
        "MySQL 8.0.27+ client: third authentication factor",
    ),
    (
        "transition_key",
        "xtrabackup: key that protects keyring data in a backup",
    ),
];

/// Shortest abbreviation of a secret option treated as that option: mysqld
/// and the clients accept any unambiguous prefix (`passwo=`); a shorter one
/// (`pa`, `p`) is ambiguous for every program.
const MIN_OPTION_PREFIX: usize = 3;

/// Localconfig keys Zimbra (LC.java) and Carbonio installs carry that hold a
/// secret. Zimbra's own
/// rule (`zmlocalconfig` prints `*` for a key whose name contains
/// `password`) covers them; they are listed to pin the rule in a test.
const LOCALCONFIG_KNOWN: &[&str] = &[
    "antispam_mysql_password",
    "antispam_mysql_root_password",
    "cbpolicyd_mysql_password",
    "cbpolicyd_mysql_root_password",
    "client_ssl_truststore_password",
    "imapd_keystore_password",
    "ldap_amavis_password",
    "ldap_bes_searcher_password",
    "ldap_nginx_password",
    "ldap_postfix_password",
    "ldap_replication_password",
    "ldap_root_password",
    "mailboxd_keystore_base_password",
    "mailboxd_keystore_password",
    "mailboxd_truststore_password",
    "mysql_root_password",
    "smime_truststore_password",
    "zimbra_ldap_password",
    "zimbra_mysql_password",
    "zimbra_vami_password",
];

/// Last words of a localconfig key that hold a secret besides `password`
/// (site-added keys such as `av_notify_domain_secret`, `*_api_token`).
const LOCALCONFIG_SECRET_SUFFIXES: &[&str] = &[
    "_secret",
    "_passwd",
    "_passphrase",
    "_token",
    "_private_key",
    // `zimbra_api_key`, `*_access_key`, `*_secret_key`: a key by meaning
    // (issue 29); `*_keystore`, `*_key_size` do not end in it
    "_key",
];

/// sysctl keys whose value is key material: the ones the kernel itself
/// makes readable by root only (mode 0600). `net.core.netdev_rss_key` is
/// world-readable by the kernel's choice and stays visible.
const SYSCTL_SECRETS: &[(&str, &str)] = &[
    (
        "net.ipv4.tcp_fastopen_key",
        "TCP Fast Open cookie key(s) of the running kernel",
    ),
    (
        "net.ipv6.conf.*.stable_secret",
        "RFC 7217 secret for stable IPv6 addresses (every interface, all, default)",
    ),
];

/// Mount options whose value is a password (mount.cifs(8): `password=`,
/// `pass=`, `password2=`; ecryptfs: `passphrase_passwd=`). `credentials=`
/// names a file: the path is shown, its contents are never read.
const MOUNT_SECRETS: &[(&str, &str)] = &[
    ("pass", "mount.cifs(8): alias of password="),
    ("passphrase_passwd", "ecryptfs: the mount passphrase"),
    ("passwd", "common alias of password= (sshfs, davfs helpers)"),
    ("password", "mount.cifs(8)/smbfs: the share password"),
    (
        "password2",
        "mount.cifs(8): alternate password for key rotation",
    ),
];

/// Mount options whose value may carry a password after `%`
/// (mount.cifs(8): `username=user%password`, `user=dom/user%password`).
pub(super) const MOUNT_USER_OPTIONS: &[&str] = &["user", "username"];

/// Whether `name` names a secret in `format`.
pub fn is_secret(format: Format, name: &str) -> bool {
    match format {
        Format::OptionFile => option_is_secret(name),
        Format::ServerVariable => server_variable_is_secret(name),
        Format::Localconfig => localconfig_key_is_secret(name),
        Format::Sysctl => sysctl_key_is_secret(name),
        Format::MountOption => mount_option_is_secret(name, None),
    }
}

/// Whether `name` is secret in any format: for text whose format is unknown
/// (a copied file no reader claims).
pub fn is_secret_anywhere(name: &str) -> bool {
    Format::ALL.iter().any(|f| is_secret(*f, name))
}

/// An option-file option name in mysqld's canonical form: lowercase,
/// underscores, without `loose-` and `maximum-`.
fn canonical_option(name: &str) -> String {
    let mut n = name.trim().to_ascii_lowercase().replace('-', "_");
    loop {
        if let Some(r) = n.strip_prefix("loose_") {
            n = r.to_string();
        } else if let Some(r) = n.strip_prefix("maximum_") {
            n = r.to_string();
        } else {
            return n;
        }
    }
}

/// Whether an option-file option (as written: `password`, `loose-password`,
/// `wsrep-sst-auth`, an abbreviation such as `passwo`) takes a secret value.
pub fn option_is_secret(name: &str) -> bool {
    // `password hunter2` (no `=`) is one option name to mysys: its first
    // word says what it would have set.
    let first = name.split_whitespace().next().unwrap_or_default();
    let n = canonical_option(first);
    if n.is_empty() {
        return false;
    }
    let all = || {
        SERVER_SECRETS
            .iter()
            .chain(OPTION_ONLY_SECRETS)
            .map(|(s, _)| *s)
    };
    if all().any(|s| s == n) {
        return true;
    }
    // A unique prefix is that option (mysqld and the clients resolve it;
    // an ambiguous one makes them refuse to start). An abbreviation counts
    // when it reaches into the option's last word (`passwo`, `wsrep_sst_a`,
    // `ssl_pass`): `ssl`, `encrypt` and `file_key_management` are options
    // of their own, and `key` is no one's abbreviation of a keyring secret.
    n.len() >= MIN_OPTION_PREFIX
        && all().any(|s| {
            let last_word = s.rfind('_').map(|i| i + 1).unwrap_or(0);
            s.starts_with(n.as_str()) && n.len() > last_word
        })
}

/// Whether a `SHOW GLOBAL VARIABLES` name holds a secret.
pub fn server_variable_is_secret(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    SERVER_SECRETS.iter().any(|(s, _)| *s == n)
}

/// Whether a Zimbra localconfig key holds a secret: every key whose name
/// contains `password` (the rule `zmlocalconfig` masks by), and keys ending
/// in `_secret`, `_passwd`, `_passphrase`, `_token`, `_private_key`.
pub fn localconfig_key_is_secret(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    n.contains("password")
        || LOCALCONFIG_SECRET_SUFFIXES
            .iter()
            .any(|s| n.ends_with(s) && n.len() > s.len())
}

/// Whether a name inside a value (a Java `-Dname=value` property such as
/// `javax.net.ssl.trustStorePassword`, a `--name=value` option, a bare
/// `name=value`) names a secret, by meaning: it mentions a password,
/// passphrase, secret or credential, or its last word is a key or token
/// (`...apiKey`, `...secret_key`, `...auth.token`).
pub fn embedded_name_is_secret(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase();
    if n.is_empty() {
        return false;
    }
    if ["password", "passwd", "passphrase", "secret", "credential"]
        .iter()
        .any(|w| n.contains(w))
    {
        return true;
    }
    let last = n.rsplit(['.', '_', '-', ':', '/']).next().unwrap_or("");
    matches!(last, "key" | "token" | "pwd" | "pass" | "pw")
        || [
            "apikey",
            "privatekey",
            "accesskey",
            "secretkey",
            "authtoken",
        ]
        .iter()
        .any(|w| last.ends_with(w))
}

/// Whether a sysctl key (dotted or slashed, a glob such as
/// `net.ipv6.conf.*.stable_secret` included) holds key material.
pub fn sysctl_key_is_secret(key: &str) -> bool {
    // a secret key's last component is one of these two, and it ends the
    // key: most keys are told apart here, without splitting them
    let end = key.trim_end();
    if !(end.ends_with("stable_secret") || end.ends_with("tcp_fastopen_key")) {
        return false;
    }
    let k = key.trim().trim_start_matches('-').trim();
    let k = k.trim_start_matches('/');
    let k = k.strip_prefix("proc/sys/").unwrap_or(k);
    // The separator is whichever of `.` and `/` comes first (procps rule).
    let sep = match (k.find('.'), k.find('/')) {
        (Some(d), Some(s)) if s < d => '/',
        (None, Some(_)) => '/',
        _ => '.',
    };
    let parts: Vec<&str> = k.split(sep).collect();
    match parts.as_slice() {
        ["net", "ipv4", "tcp_fastopen_key"] => true,
        ["net", "ipv6", "conf", rest @ ..] => {
            rest.len() >= 2 && rest.last().is_some_and(|l| *l == "stable_secret")
        }
        _ => false,
    }
}

/// Whether a mount option (`name` or `name=value`, `value` given separately
/// when known) carries a secret: `password=`/`pass=`/`password2=`, or a
/// `username=user%password`.
pub fn mount_option_is_secret(name: &str, value: Option<&str>) -> bool {
    let n = name.trim().to_ascii_lowercase();
    if MOUNT_SECRETS.iter().any(|(s, _)| *s == n) {
        return true;
    }
    MOUNT_USER_OPTIONS.contains(&n.as_str()) && value.is_some_and(|v| v.contains('%'))
}

/// One entry of [`catalogue`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CatalogueEntry {
    /// The format the name belongs to.
    pub format: &'static str,
    /// The name (or pattern: `net.ipv6.conf.*.stable_secret`, `*password*`).
    pub name: &'static str,
    /// What the value is.
    pub what: &'static str,
}

/// Every name or pattern this module treats as secret, per format (the list
/// a test pins, and docs cite).
pub fn catalogue() -> Vec<CatalogueEntry> {
    let mut out = Vec::new();
    let mut push = |format: Format, name: &'static str, what: &'static str| {
        out.push(CatalogueEntry {
            format: format.as_str(),
            name,
            what,
        })
    };
    for (n, w) in SERVER_SECRETS.iter().chain(OPTION_ONLY_SECRETS) {
        push(Format::OptionFile, n, w);
    }
    push(
        Format::OptionFile,
        "(an abbreviation of the above that reaches its last word: `passwo`, `wsrep_sst_a`, `ssl_pass`)",
        "mysqld and the clients accept unique option prefixes",
    );
    for (n, w) in SERVER_SECRETS {
        push(Format::ServerVariable, n, w);
    }
    push(
        Format::Localconfig,
        "*password*",
        "zmlocalconfig masks every key whose name contains `password`",
    );
    for s in [
        "*_secret",
        "*_passwd",
        "*_passphrase",
        "*_token",
        "*_private_key",
    ] {
        push(Format::Localconfig, s, "site-added credential keys");
    }
    for n in LOCALCONFIG_KNOWN {
        push(
            Format::Localconfig,
            n,
            "key of Zimbra (LC.java) or Carbonio installs; masked by *password*",
        );
    }
    for (n, w) in SYSCTL_SECRETS {
        push(Format::Sysctl, n, w);
    }
    for (n, w) in MOUNT_SECRETS {
        push(Format::MountOption, n, w);
    }
    push(
        Format::MountOption,
        "username=USER%PASSWORD, user=USER%PASSWORD",
        "mount.cifs(8): the part after `%` is the password",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_options_by_meaning_including_prefixes() {
        for n in [
            "password",
            "loose-password",
            "passwo",
            "pass",
            "passwd",
            "wsrep_sst_auth",
            "wsrep-sst-auth",
            "file_key_management_filekey",
            "loose_file_key_management_filekey",
            "ssl_passphrase",
            "ssl-pass",
            "report-password",
            "s3_secret_key",
        ] {
            assert!(option_is_secret(n), "{n}");
        }
        for n in [
            "ssl",
            "ssl_key",
            "ssl-cert",
            "encrypt",
            "pa",
            "port",
            "user",
            "innodb_force_primary_key",
            "disconnect_on_expired_password",
            "strict_password_validation",
            "password_require_current",
            "validate_password_check_user_name",
            "caching_sha2_password_digest_rounds",
            "caching_sha2_password_auto_generate_rsa_keys",
            "sha256_password_auto_generate_rsa_keys",
            "key_buffer_size",
            "file_key_management_filename",
            "file_key_management",
            "key",
            "key with spaces",
            "wsrep_sst",
            "wsrep_sst_method",
        ] {
            assert!(!option_is_secret(n), "{n}");
        }
    }

    #[test]
    fn sysctl_secret_keys_in_every_spelling() {
        for k in [
            "net.ipv4.tcp_fastopen_key",
            "net/ipv4/tcp_fastopen_key",
            "net.ipv6.conf.all.stable_secret",
            "net.ipv6.conf.eth0/100.stable_secret",
            "net/ipv6/conf/eth0.100/stable_secret",
            "net.ipv6.conf.*.stable_secret",
            "-net.ipv6.conf.default.stable_secret",
        ] {
            assert!(sysctl_key_is_secret(k), "{k}");
        }
        for k in [
            "net.ipv4.ipfrag_secret_interval",
            "net.ipv4.tcp_fastopen",
            "net.ipv6.conf.all.forwarding",
            "kernel.random.boot_id",
        ] {
            assert!(!sysctl_key_is_secret(k), "{k}");
        }
    }

    /// The reading without the suffix check in front of
    /// `sysctl_key_is_secret`: the simple reference.
    fn sysctl_key_is_secret_by_parts(key: &str) -> bool {
        let k = key.trim().trim_start_matches('-').trim();
        let k = k.trim_start_matches('/');
        let k = k.strip_prefix("proc/sys/").unwrap_or(k);
        let sep = match (k.find('.'), k.find('/')) {
            (Some(d), Some(s)) if s < d => '/',
            (None, Some(_)) => '/',
            _ => '.',
        };
        let parts: Vec<&str> = k.split(sep).collect();
        match parts.as_slice() {
            ["net", "ipv4", "tcp_fastopen_key"] => true,
            ["net", "ipv6", "conf", rest @ ..] => {
                rest.len() >= 2 && rest.last().is_some_and(|l| *l == "stable_secret")
            }
            _ => false,
        }
    }

    proptest::proptest! {
        /// The suffix check only answers sooner: a secret key or a near
        /// miss in any spelling (blanks, `-`, `/proc/sys/`, slashes, a
        /// trailing character) gets what the full reading gives.
        #[test]
        fn sysctl_secret_suffix_check_answers_as_the_full_reading(
            pre in "( |\t|-|/|/proc/sys/|x)*",
            base in proptest::sample::select(vec![
                "net.ipv4.tcp_fastopen_key",
                "net.ipv6.conf.all.stable_secret",
                "net/ipv6/conf/eth0.100/stable_secret",
                "stable_secret",
                "tcp_fastopen_key",
                "net.ipv6.conf.stable_secret",
            ]),
            post in "( |\t|\n|/|\\.|x|\u{a0})*",
        ) {
            let k = format!("{pre}{base}{post}");
            proptest::prop_assert_eq!(sysctl_key_is_secret(&k), sysctl_key_is_secret_by_parts(&k));
        }
    }

    /// Every key of a real capture gets what the full reading gives, and
    /// the secret ones are secret in their spellings.
    #[test]
    fn sysctl_secret_keys_of_a_capture_are_read_as_the_full_reading_reads_them() {
        let capture = include_str!("../../scripts/gen-fleet-sysctl.txt");
        for k in capture
            .lines()
            .filter_map(|l| l.split_once(" = ").map(|(k, _)| k))
        {
            assert_eq!(
                sysctl_key_is_secret(k),
                sysctl_key_is_secret_by_parts(k),
                "{k:?}"
            );
        }
        for k in [
            "net.ipv4.tcp_fastopen_key",
            " net.ipv6.conf.all.stable_secret \t",
            "- /proc/sys/net/ipv6/conf/eth0.100/stable_secret\n",
        ] {
            assert!(sysctl_key_is_secret(k), "{k:?}");
        }
    }

    #[test]
    fn localconfig_keys() {
        for k in LOCALCONFIG_KNOWN {
            assert!(localconfig_key_is_secret(k), "{k}");
        }
        assert!(localconfig_key_is_secret("av_notify_domain_secret"));
        for k in [
            "mailboxd_java_heap_size",
            "mysql_memory_percent",
            "zimbra_authtoken_cache_size",
            "zimbra_two_factor_apppasswd_update_authtime",
            "mailboxd_keystore",
            "ldap_url",
            "_secret",
        ] {
            assert!(!localconfig_key_is_secret(k), "{k}");
        }
    }
}
