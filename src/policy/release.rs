//! What an upgrade rule judges a host against, as plain data: a product
//! ([`Product`]), a dotted release number ([`Version`]) and a target
//! release ([`Target`], what `--target mariadb=10.11` names). The rules of
//! the set carry their targets ([`super::UpgradeCheck`]); parsing a
//! `--target` against the shipped upgrade data, the data and the judging
//! are `upgrade`'s. Must not read the host or the upgrade data.

use std::fmt;

/// A product the upgrade data covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Product {
    /// MariaDB server (`mariadbd`).
    Mariadb,
    /// MySQL server (`mysqld`).
    Mysql,
    /// The Linux kernel's sysctl keys.
    Kernel,
}

impl Product {
    /// Every product, in report order.
    pub const ALL: [Product; 3] = [Product::Mariadb, Product::Mysql, Product::Kernel];

    /// The name in `--target NAME=VERSION` and in rule ids.
    pub fn as_str(self) -> &'static str {
        match self {
            Product::Mariadb => "mariadb",
            Product::Mysql => "mysql",
            Product::Kernel => "kernel",
        }
    }

    /// The name people use.
    pub fn label(self) -> &'static str {
        match self {
            Product::Mariadb => "MariaDB",
            Product::Mysql => "MySQL",
            Product::Kernel => "Linux",
        }
    }

    /// Parse `mariadb`, `mysql` or `kernel` (any case).
    pub fn parse(s: &str) -> Option<Product> {
        Product::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// A dotted release number (`10.11.0`, `4.12`); missing parts compare as 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version(pub Vec<u64>);

impl Version {
    /// Parse `10.11`, `8.0.3`, `4.12`: two to four numeric parts.
    pub fn parse(s: &str) -> Option<Version> {
        let parts: Vec<u64> = s
            .trim()
            .split('.')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        (2..=4).contains(&parts.len()).then_some(Version(parts))
    }

    /// Compare, missing parts being 0.
    pub fn cmp_to(&self, other: &[u64]) -> std::cmp::Ordering {
        let n = self.0.len().max(other.len());
        for i in 0..n {
            let a = self.0.get(i).copied().unwrap_or(0);
            let b = other.get(i).copied().unwrap_or(0);
            if a != b {
                return a.cmp(&b);
            }
        }
        std::cmp::Ordering::Equal
    }

    /// `major.minor` of the version.
    pub fn series(&self) -> (u64, u64) {
        (self.0[0], self.0.get(1).copied().unwrap_or(0))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s: Vec<String> = self.0.iter().map(u64::to_string).collect();
        f.write_str(&s.join("."))
    }
}

/// A release to check the host against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The product.
    pub product: Product,
    /// The version as given (`10.11`: the whole series).
    pub version: Version,
}

impl Target {
    /// `MariaDB 10.11`.
    pub fn label(&self) -> String {
        format!("{} {}", self.product.label(), self.version)
    }

    /// The newest release the target stands for: `10.11` is every 10.11.x,
    /// so a change made in 10.11.3 is in it; `10.11.2` is exactly that.
    pub fn upper(&self) -> Vec<u64> {
        let mut v = self.version.0.clone();
        if v.len() < 3 {
            v.resize(2, 0);
            v.push(u64::MAX);
        }
        v
    }

    /// Whether a change made in `version` is in the target.
    pub fn includes(&self, version: &Version) -> bool {
        version.cmp_to(&self.upper()) != std::cmp::Ordering::Greater
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.product.as_str(), self.version)
    }
}
