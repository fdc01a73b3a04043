//! The read budget: the bytes one host may be read for in all (a hostile
//! snapshot cannot make an audit read without bound), charged per file
//! as it is read. Must not open files.

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::model::*;
use super::names::*;
use super::read::read_capped;

impl Host {
    /// The same host with another total read budget (bytes; see
    /// [`MAX_HOST_READ_BYTES`]), shared by its clones.
    pub fn with_read_budget(mut self, bytes: u64) -> Host {
        self.read_budget = Arc::new(ReadBudget {
            limit: bytes,
            used: AtomicU64::new(0),
        });
        self
    }

    /// Bytes read from this host so far, by all readers and clones.
    pub fn bytes_read(&self) -> u64 {
        self.read_budget.used.load(Ordering::Relaxed)
    }

    /// Before reading an opened file: note a hard link, and what is left of
    /// the host's read budget (none is [`ReadError::Limit`]).
    pub(super) fn start_read(&self, host_path: &str, nlink: u64) -> Result<u64, ReadError> {
        if nlink > 1 {
            let mut g = self.hard_links.lock().unwrap_or_else(|p| p.into_inner());
            g.insert(lexical(host_path));
        }
        let b = &self.read_budget;
        match b.limit.saturating_sub(b.used.load(Ordering::Relaxed)) {
            0 => Err(self.budget_spent()),
            left => Ok(left),
        }
    }

    pub(super) fn budget_spent(&self) -> ReadError {
        ReadError::Limit(format!(
            "the read budget of {} bytes for this host is spent (driftaudit reads at most that much from one host)",
            self.read_budget.limit
        ))
    }

    /// Read an opened file within the caps and the host's budget, and log it.
    pub(super) fn finish_read(
        &self,
        host_path: &str,
        file: File,
        (nlink, mode, size): (u64, u32, u64),
        cap: u64,
    ) -> Result<Vec<u8>, ReadError> {
        let left = self.start_read(host_path, nlink)?;
        let b = &self.read_budget;
        let bytes = match read_capped(file, cap.min(left), size) {
            Err(ReadError::TooLarge(_)) if left < cap => {
                // What was read counts: the budget is spent.
                b.used.fetch_max(b.limit, Ordering::Relaxed);
                return Err(self.budget_spent());
            }
            r => r?,
        };
        b.used.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.record(|l| {
            l.files.insert(lexical(host_path), bytes.clone());
            l.modes.insert(lexical(host_path), mode);
        });
        Ok(bytes)
    }
}
