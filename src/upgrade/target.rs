//! What `--target` names: how a product and release ([`Target`], the
//! policy model's) is parsed against the shipped data, and why one is
//! refused. Must not read the host or make findings.

use super::data::{self, Product, Version};
use crate::policy::Target;

/// Why a `--target` was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not `NAME=VERSION` with a known name.
    #[error("unknown target `{given}`: expected {accepted}")]
    Unknown {
        /// What was given.
        given: String,
        /// The accepted forms.
        accepted: String,
    },
    /// A known product with a version the data does not cover.
    #[error("no upgrade data for `{given}`: expected {accepted}")]
    Version {
        /// What was given.
        given: String,
        /// The accepted forms.
        accepted: String,
    },
    /// The shipped data is broken (a build defect).
    #[error("the shipped upgrade data is invalid: {0}")]
    Data(String),
}

impl Target {
    /// Parse `mariadb=10.11`, `mysql=8.0`, `kernel=6.1`.
    pub fn parse(s: &str) -> Result<Target, TargetError> {
        let accepted = accepted_forms();
        let unknown = || TargetError::Unknown {
            given: s.to_string(),
            accepted: accepted.clone(),
        };
        let (name, version) = s.split_once('=').ok_or_else(unknown)?;
        let product = Product::parse(name).ok_or_else(unknown)?;
        let bad_version = || TargetError::Version {
            given: s.to_string(),
            accepted: accepted.clone(),
        };
        let version = Version::parse(version).ok_or_else(bad_version)?;
        let k = data::builtin_for(product).map_err(|e| TargetError::Data(e.to_string()))?;
        if !k.targets.is_empty() && !k.targets.iter().any(|t| t.series() == version.series()) {
            return Err(bad_version());
        }
        Ok(Target { product, version })
    }
}

/// The `--target` forms the shipped data accepts, for messages and help.
pub fn accepted_forms() -> String {
    let Ok(all) = data::builtin() else {
        return "mariadb=X.Y, mysql=X.Y or kernel=X.Y".into();
    };
    let mut parts = Vec::new();
    for k in all {
        if k.targets.is_empty() {
            parts.push(format!(
                "{}=X.Y (e.g. {}=6.1)",
                k.product.as_str(),
                k.product.as_str()
            ));
        } else {
            let v: Vec<String> = k.targets.iter().map(ToString::to_string).collect();
            parts.push(format!("{}={}", k.product.as_str(), v.join("|")));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_name_equals_a_series_the_data_covers() {
        let t = Target::parse("mariadb=10.11").unwrap();
        assert_eq!(
            (t.product, t.version.to_string()),
            (Product::Mariadb, "10.11".into())
        );
        assert!(t.includes(&Version::parse("10.11.3").unwrap()));
        assert!(!t.includes(&Version::parse("11.0.0").unwrap()));
        assert!(Target::parse("mysql=8.4").is_ok());
        assert!(Target::parse("kernel=6.1").is_ok());
        let e = Target::parse("postgres=16").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown target `postgres=16`: expected mariadb="),
            "{e}"
        );
        assert!(
            e.contains("mysql=5.7|8.0|8.4") && e.contains("kernel=X.Y"),
            "{e}"
        );
        let e = Target::parse("mariadb=10.9").unwrap_err().to_string();
        assert!(e.starts_with("no upgrade data for `mariadb=10.9`"), "{e}");
        assert!(Target::parse("mariadb").is_err());
        assert!(Target::parse("kernel=six").is_err());
    }
}
