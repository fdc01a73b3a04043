//! The read memo: what one gather already learnt about paths (stats,
//! resolutions, small files, folder listings), bounded in entries and bytes,
//! so a path many readers ask about is looked up once. Must not decide
//! what is read.

use std::fs;
use std::sync::Arc;

use super::confine::*;
use super::model::*;
use super::names::*;

impl Host {
    /// Whether this gather remembers answers (inside
    /// [`Host::remember_stats`], not recording a read log).
    pub(super) fn memo_on(&self) -> bool {
        self.log.is_none() && self.memo(|m| m.on)
    }

    pub(super) fn memo<R>(&self, f: impl FnOnce(&mut StatMemo) -> R) -> R {
        let mut g = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// Remember what each path is until the guard is dropped (one gather:
    /// see [`StatMemo`]).
    pub(crate) fn remember_stats(&self) -> StatsRemembered<'_> {
        let mut g = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        g.on = true;
        drop(g);
        StatsRemembered(self)
    }

    /// Remember [`Host::resolve`]'s answer for a lexical path.
    pub(super) fn note_resolved(&self, key: String, got: Result<String, ReadError>) {
        self.memo(|m| {
            if m.resolved.len() >= MAX_STAT_MEMO {
                m.resolved.clear();
            }
            m.resolved.insert(key, got);
        });
    }

    pub(super) fn stat_of(&self, host_path: &str) -> Result<Meta, ReadError> {
        let key = self.memo_on().then(|| lexical(host_path));
        if let Some(k) = &key {
            if let Some(known) = self.memo(|m| m.known.get(k).cloned()) {
                return known;
            }
        }
        let got = match self.kind {
            // On the live root confinement is the identity: let the kernel
            // follow links in one stat instead of one lstat per component.
            SourceKind::Live => {
                live_path(host_path).and_then(|p| Ok(Meta::from_std(&fs::metadata(p)?)))
            }
            SourceKind::Snapshot => self.stat_in_root(host_path).map(|st| Meta::from_stat(&st)),
        };
        if let Some(k) = key {
            self.memo(|m| {
                if m.known.len() >= MAX_STAT_MEMO {
                    m.known.clear();
                }
                m.known.insert(k, got.clone());
            });
        }
        got
    }

    /// Keep a small file's bytes for the rest of the gather (see
    /// [`FileMemo`]), when the memo is on.
    pub(super) fn remember_file(&self, host_path: &str, bytes: &[u8]) {
        if !self.memo_on() {
            return;
        }
        self.memo(|m| {
            let f = &mut m.files;
            if bytes.len() <= MAX_MEMO_FILE && f.bytes + bytes.len() <= MAX_MEMO_BYTES {
                f.bytes += bytes.len();
                f.by_path
                    .insert(lexical(host_path), Arc::new(bytes.to_vec()));
            }
        });
    }

    /// The whole listing of a folder made earlier in this gather.
    pub(super) fn listed(&self, host_path: &str) -> Option<Arc<Vec<DirEntry>>> {
        if !self.memo_on() {
            return None;
        }
        let key = lexical(host_path);
        self.memo(|m| m.dirs.get(&key).cloned())
    }

    /// Keep a folder's whole listing for the rest of the gather, within
    /// [`MAX_MEMO_DIR_ENTRIES`] entries in all.
    pub(super) fn remember_listing(&self, host_path: &str, listed: &[DirEntry]) {
        if !self.memo_on() {
            return;
        }
        self.memo(|m| {
            if m.dir_entries + listed.len() <= MAX_MEMO_DIR_ENTRIES {
                m.dir_entries += listed.len();
                m.dirs.insert(lexical(host_path), Arc::new(listed.to_vec()));
            }
        });
    }
}
