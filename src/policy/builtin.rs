//! The list of built-in policies (compiled into the binary from
//! policies/*.yaml, in load order) and the selector prefixes that name a tag or a policy.
//! Data only: loading is `set.rs`'s, the frozen form `frozen.rs`'s.

/// What starts a rule selector that names a tag (`--only tag:stig`).
pub const TAG_PREFIX: &str = "tag:";

/// What starts a rule selector that names a policy (`--only policy:storage`).
pub const POLICY_PREFIX: &str = "policy:";

/// The built-in policies, compiled into the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "policies/linux-network.yaml",
        include_str!("../../policies/linux-network.yaml"),
    ),
    (
        "policies/linux-sysctl.yaml",
        include_str!("../../policies/linux-sysctl.yaml"),
    ),
    (
        "policies/linux-hardening.yaml",
        include_str!("../../policies/linux-hardening.yaml"),
    ),
    (
        "policies/zimbra-memory.yaml",
        include_str!("../../policies/zimbra-memory.yaml"),
    ),
    (
        "policies/mysql-innodb.yaml",
        include_str!("../../policies/mysql-innodb.yaml"),
    ),
    (
        "policies/mysql-hardening.yaml",
        include_str!("../../policies/mysql-hardening.yaml"),
    ),
    (
        "policies/mysql-sizing.yaml",
        include_str!("../../policies/mysql-sizing.yaml"),
    ),
    (
        "policies/storage.yaml",
        include_str!("../../policies/storage.yaml"),
    ),
    (
        "policies/linux-mounts.yaml",
        include_str!("../../policies/linux-mounts.yaml"),
    ),
];
