//! Which test files a run takes: a file as given, a directory's
//! `*.test.yaml`/`*.test.yml` files (sorted, to [`MAX_DEPTH`], hidden
//! directories and symbolic links not followed); and the policies a test
//! file tests when it names none (`X.yaml` beside `X.test.yaml`, else its
//! directory's policy files). Must not read a test file's content (that is
//! `loader`).

use std::path::{Path, PathBuf};

use super::errors::TestError;
use super::MAX_DEPTH;

/// Whether a file name is a policy test's (`*.test.yaml`, `*.test.yml`).
pub fn is_test_file(name: &str) -> bool {
    name.ends_with(".test.yaml") || name.ends_with(".test.yml")
}

/// The test files `paths` name: a file as given, a directory's
/// `*.test.yaml`/`*.test.yml` files at any depth up to [`MAX_DEPTH`]
/// (sorted; symbolic links and hidden directories not followed).
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TestError> {
    let mut out = Vec::new();
    for p in paths {
        let shown = p.display().to_string();
        let meta = std::fs::metadata(p).map_err(|e| TestError::Io {
            path: shown.clone(),
            reason: crate::reader::io_message(&e),
        })?;
        if !meta.is_dir() {
            out.push(p.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(p)
            .max_depth(MAX_DEPTH)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                e.depth() == 0
                    || !(e.file_type().is_dir() && e.file_name().to_string_lossy().starts_with('.'))
            })
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && is_test_file(&e.file_name().to_string_lossy()))
            .map(|e| e.into_path())
            .collect();
        if found.is_empty() {
            return Err(TestError::NoTests { path: shown });
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// `X.yaml` (or `X.yml`) beside `X.test.yaml`, else every policy file of the
/// test file's directory; `None` when there is none.
pub(super) fn default_policies(test: &Path) -> Option<Vec<PathBuf>> {
    let dir = test.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let name = test.file_name()?.to_string_lossy().into_owned();
    let stem = name
        .strip_suffix(".test.yaml")
        .or_else(|| name.strip_suffix(".test.yml"));
    if let Some(stem) = stem {
        for ext in ["yaml", "yml"] {
            let p = dir.join(format!("{stem}.{ext}"));
            if p.is_file() {
                return Some(vec![p]);
            }
        }
    }
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
            matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
                && p.is_file()
                && !n.as_deref().is_some_and(is_test_file)
        })
        .collect();
    all.sort();
    (!all.is_empty()).then_some(all)
}
