//! Where tuned keeps its own files: the paths every other room of
//! `facts/tuned/` reads. Constants only; must not read anything.

/// The unit symlink `systemctl enable tuned` creates (`WantedBy=multi-user.target`).
pub const ENABLED_LINK: &str = "/etc/systemd/system/multi-user.target.wants/tuned.service";
/// The profile(s) tuned loads at start (`tuned-adm profile NAME` writes it).
pub const ACTIVE_PROFILE: &str = "/etc/tuned/active_profile";
/// A profile tuned loads after the active ones.
pub const POST_LOADED_PROFILE: &str = "/etc/tuned/post_loaded_profile";
/// `manual` or `auto` (tuned-adm writes it): in `auto` tuned applies the
/// profile its recommender picks, whatever active_profile says.
pub const PROFILE_MODE: &str = "/etc/tuned/profile_mode";
/// tuned's daemon configuration (`reapply_sysctl`, `profile_dirs`).
pub const MAIN_CONF: &str = "/etc/tuned/tuned-main.conf";
