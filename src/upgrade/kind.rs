//! The kinds of upgrade finding: each one's rule id, severity, title and
//! why, and how a finding of one starts. Must not read the host or the
//! option files.

use crate::facts::presence::Domain;
use crate::policy::{RuleSource, Severity};
use crate::report::{Finding, Status};

use super::data::{Knowledge, Product};

/// The kinds of upgrade finding, one rule id each per product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The target refuses the option: the server does not start.
    Removed,
    /// The target accepts the option and ignores it.
    Ignored,
    /// A `loose-` option the target no longer knows: the line does nothing.
    LooseRemoved,
    /// Deprecated in the target (still works).
    Deprecated,
    /// A value the target refuses.
    RemovedValue,
    /// The host runs with a default the target changes.
    DefaultChanged,
    /// (kernel) a persisted key the target kernel lacks.
    RemovedKey,
    /// (kernel) a persisted key the target kernel ignores.
    IgnoredKey,
    /// (kernel) a persisted key whose meaning changes.
    MeaningChanged,
}

impl Kind {
    pub(super) const SERVER: [Kind; 6] = [
        Kind::Removed,
        Kind::Ignored,
        Kind::LooseRemoved,
        Kind::Deprecated,
        Kind::RemovedValue,
        Kind::DefaultChanged,
    ];
    pub(super) const KERNEL: [Kind; 3] = [Kind::RemovedKey, Kind::IgnoredKey, Kind::MeaningChanged];

    pub(super) fn slug(self) -> &'static str {
        match self {
            Kind::Removed => "removed-option",
            Kind::Ignored => "ignored-option",
            Kind::LooseRemoved => "loose-removed-option",
            Kind::Deprecated => "deprecated-option",
            Kind::RemovedValue => "removed-value",
            Kind::DefaultChanged => "default-changed",
            Kind::RemovedKey => "removed-key",
            Kind::IgnoredKey => "ignored-key",
            Kind::MeaningChanged => "meaning-changed",
        }
    }

    pub(super) fn severity(self) -> Severity {
        match self {
            Kind::Removed | Kind::RemovedValue => Severity::High,
            Kind::DefaultChanged | Kind::MeaningChanged => Severity::Medium,
            Kind::Ignored | Kind::RemovedKey | Kind::IgnoredKey => Severity::Low,
            Kind::LooseRemoved | Kind::Deprecated => Severity::Info,
        }
    }

    pub(super) fn title(self, p: Product) -> String {
        let l = p.label();
        match self {
            Kind::Removed => format!("{l}: the target release refuses an option in the option files (the server will not start)"),
            Kind::Ignored => format!("{l}: the target release ignores an option in the option files"),
            Kind::LooseRemoved => format!("{l}: a loose- option the target release no longer has does nothing"),
            Kind::Deprecated => format!("{l}: an option in the option files is deprecated in the target release"),
            Kind::RemovedValue => format!("{l}: the target release refuses a value in the option files (the server will not start)"),
            Kind::DefaultChanged => format!("{l}: a setting left at its default changes with the target release"),
            Kind::RemovedKey => "Linux: a persisted sysctl key does not exist in the target kernel".into(),
            Kind::IgnoredKey => "Linux: a persisted sysctl key has no effect in the target kernel".into(),
            Kind::MeaningChanged => "Linux: a persisted sysctl key means something else in the target kernel".into(),
        }
    }

    pub(super) fn why(self) -> &'static str {
        match self {
            Kind::Removed | Kind::RemovedValue => "mysqld/mariadbd stop at start-up with \"unknown variable\" (or a refused value) when an option file sets something the release no longer has, unless the option carries the loose- prefix: the upgrade ends with a server that does not start.",
            Kind::Ignored => "The release accepts the line with a warning and does nothing with it: whatever the line was meant to tune is no longer tuned.",
            Kind::LooseRemoved => "With loose- the server only warns about an option it does not know; the line is dead configuration after the upgrade.",
            Kind::Deprecated => "Deprecated options are removed in a later release; replacing them now avoids a start-up failure then.",
            Kind::DefaultChanged => "A setting nobody wrote down runs with the compiled-in default; when the release changes that default the same host behaves differently after the upgrade (character sets, SQL modes, InnoDB flushing, authentication).",
            Kind::RemovedKey => "systemd-sysctl and sysctl --system report a key the kernel does not have and skip it: the tuning the line was meant to apply is gone, and boot logs an error.",
            Kind::IgnoredKey => "The kernel keeps the file but the value has no effect: the tuning the line was meant to apply is gone.",
            Kind::MeaningChanged => "The same persisted value does something else on the target kernel.",
        }
    }

    pub(super) fn domain(p: Product) -> Domain {
        match p {
            Product::Kernel => Domain::Sysctl,
            _ => Domain::Mysql,
        }
    }
}

/// Rule id of a kind for a product (`upgrade.mariadb.removed-option`).
pub(crate) fn rule_id(p: Product, kind: Kind) -> String {
    format!("upgrade.{}.{}", p.as_str(), kind.slug())
}

/// Id of the policy the upgrade rules belong to.
pub const POLICY: &str = "upgrade";

/// Start a finding of `kind` for an entry (or the data file, line 1).
pub(crate) fn finding(
    k: &Knowledge,
    kind: Kind,
    status: Status,
    severity: Severity,
    line: usize,
) -> Finding {
    Finding::new(
        rule_id(k.product, kind),
        POLICY,
        kind.title(k.product),
        severity,
        status,
        RuleSource {
            path: k.path.clone(),
            line,
        },
    )
    .with_domain(Some(Kind::domain(k.product)))
}
