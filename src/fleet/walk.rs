//! The fleet walk: snapshot folders below a fleet directory in file-name
//! order, holding only the sorted names of the folders on the current path
//! (a name each, not a path and metadata each), so memory follows the
//! largest folder's name list, not the fleet. Decides nothing about what a
//! snapshot is (`is_snapshot_dir`, passed in) and reads no file; a folder
//! it cannot list is a [`DiscoverError`] in its place.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A folder under the fleet directory that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot search `{}`: {message}", .path.display())]
pub struct DiscoverError {
    /// The folder.
    pub path: PathBuf,
    /// Why.
    pub message: String,
}

/// A folder being walked: its path, its subfolders' names sorted, the next
/// one to visit and its depth below the root.
struct Frame {
    dir: PathBuf,
    names: Vec<OsString>,
    next: usize,
    depth: usize,
}

/// The walk of [`super::discover`]: `root` when it is a snapshot, else every
/// snapshot folder below it up to `max_depth` levels, each folder's
/// subfolders in byte order of their names, hidden folders and symbolic
/// links skipped, a snapshot not descended into. A folder that cannot be
/// listed is an `Err` in its place and the walk goes on.
pub(super) fn walk(
    root: PathBuf,
    max_depth: usize,
    is_snapshot: fn(&Path) -> bool,
) -> impl Iterator<Item = Result<PathBuf, DiscoverError>> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut start = Some(root);
    std::iter::from_fn(move || {
        if let Some(root) = start.take() {
            // the root is followed when it is a link (as `check --fleet
            // LINK` means the folder it names); one that cannot be looked
            // at is an error, anything but a folder holds no snapshot
            match std::fs::metadata(&root) {
                Err(e) => return Some(Err(error(&root, &e))),
                Ok(m) if !m.is_dir() => return None,
                Ok(_) => {}
            }
            if is_snapshot(&root) {
                return Some(Ok(root));
            }
            if max_depth > 0 {
                match subfolders(&root) {
                    Ok(names) => stack.push(Frame {
                        dir: root,
                        names,
                        next: 0,
                        depth: 0,
                    }),
                    Err(e) => return Some(Err(e)),
                }
            }
        }
        loop {
            let frame = stack.last_mut()?;
            let Some(name) = frame.names.get(frame.next) else {
                stack.pop();
                continue;
            };
            frame.next += 1;
            let path = frame.dir.join(name);
            let depth = frame.depth + 1;
            if is_snapshot(&path) {
                return Some(Ok(path));
            }
            if depth < max_depth {
                match subfolders(&path) {
                    Ok(names) => stack.push(Frame {
                        dir: path,
                        names,
                        next: 0,
                        depth,
                    }),
                    Err(e) => return Some(Err(e)),
                }
            }
        }
    })
}

/// The names of `dir`'s subfolders, sorted bytewise: not its files, not its
/// symbolic links (to folders or not), not its hidden (`.`) entries.
fn subfolders(dir: &Path) -> Result<Vec<OsString>, DiscoverError> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| error(dir, &e))? {
        let entry = entry.map_err(|e| error(dir, &e))?;
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        // the listing's type (no stat where the file system gives it);
        // a link is never followed. An entry whose type cannot be read (it
        // went away between the listing and the stat) is visited anyway:
        // its own listing then fails, an error in its place, and the rest of
        // this folder is still walked.
        if entry.file_type().map_or(true, |k| k.is_dir()) {
            names.push(name);
        }
    }
    names.sort_unstable();
    Ok(names)
}

/// `path` could not be looked at or listed, and why.
fn error(path: &Path, e: &std::io::Error) -> DiscoverError {
    DiscoverError {
        path: path.to_path_buf(),
        message: crate::reader::io_message(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_finds_each_snapshot_within_the_depth_in_file_name_order() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let mk = |p: &str| std::fs::create_dir_all(r.join(p)).unwrap();
        let file = |p: &str| std::fs::write(r.join(p), "{}").unwrap();
        for p in [
            "dc1/b/etc",
            "dc1/a/proc",
            "dc1/A/etc",
            "dc1/a b/etc",
            "dc1/é/etc",
            "dc1/10/etc",
            "dc1/9/etc",
            "dc2/rack/x/y/z/w/etc",
            "dc2/rack/x/y/etc",
            ".hidden/h/etc",
            "dc1/.git/objects/etc",
            "empty/dir",
            "s/inner/etc",
            "deep/1/2/3/4/5/6/7/etc",
        ] {
            mk(p);
        }
        file("s/snapshot.json");
        file("dc1/notes.txt");
        std::os::unix::fs::symlink(r.join("dc1/b"), r.join("dc1/link")).unwrap();
        std::os::unix::fs::symlink(r.join("dc2"), r.join("dc3")).unwrap();
        // folders sorted by file name (bytes); hidden folders, a snapshot's
        // insides and links are not entered; a snapshot counts within the
        // depth of its own folder
        let all = [
            "dc1/10",
            "dc1/9",
            "dc1/A",
            "dc1/a",
            "dc1/a b",
            "dc1/b",
            "dc1/\u{e9}",
            "dc2/rack/x/y",
            "deep/1/2/3/4/5/6/7",
            "s",
        ];
        for depth in 0..10 {
            let got: Vec<String> = walk(r.to_path_buf(), depth, crate::fleet::is_snapshot_dir)
                .map(|x| x.unwrap().strip_prefix(r).unwrap().display().to_string())
                .collect();
            let want: Vec<&str> = all
                .iter()
                .filter(|p| p.split('/').count() <= depth)
                .copied()
                .collect();
            assert_eq!(got, want, "max depth {depth}");
        }
        // a root that is itself a snapshot, or a link to the fleet
        let one: Vec<_> = walk(r.join("s"), 6, crate::fleet::is_snapshot_dir)
            .map(Result::unwrap)
            .collect();
        assert_eq!(one, [r.join("s")]);
        let via_link: Vec<_> = walk(r.join("dc3"), 6, crate::fleet::is_snapshot_dir)
            .map(Result::unwrap)
            .collect();
        assert_eq!(via_link, [r.join("dc3/rack/x/y")]);
    }

    #[test]
    fn a_folder_that_cannot_be_listed_is_an_error_in_its_place() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("gone");
        let got: Vec<_> = walk(missing.clone(), 6, crate::fleet::is_snapshot_dir)
            .map(|x| x.map_err(|e| e.path.display().to_string()))
            .collect();
        assert_eq!(got, [Err(missing.display().to_string())]);
        // a root that is a folder but vanishes between the check and the
        // listing cannot be staged here; a file root is no folder
        let f = t.path().join("file");
        std::fs::write(&f, "x").unwrap();
        assert_eq!(walk(f, 6, crate::fleet::is_snapshot_dir).count(), 0);
    }
}
