//! Package sources: a directory, files in memory or a .zip archive.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use runtime::Result;

use crate::error::load_error;

/// Largest file read from a .zip package.
pub(crate) const MAX_ZIP_ENTRY: u64 = 64 << 20;
/// Largest total uncompressed size a .zip package may declare.
const MAX_ZIP_TOTAL: u64 = 1 << 30;
/// Most entries a .zip package may have.
const MAX_ZIP_ENTRIES: usize = 10_000;

/// Where a package's files are: a directory or the entries of a .zip.
pub enum Source {
    /// A package folder.
    Dir(PathBuf),
    /// Files held in memory (the embedded libraries), as if from a .zip.
    Zip {
        /// Where they are said to be.
        path: PathBuf,
        /// The files by relative path (`/`-separated).
        files: BTreeMap<String, Vec<u8>>,
    },
    /// A .zip archive: its directory is read when it opens, each file when
    /// it is asked for (a zip bomb among the packages of `-L` costs
    /// nothing until something reads its bombed file, and then no more
    /// than [`MAX_ZIP_ENTRY`]).
    Archive {
        /// The archive.
        path: PathBuf,
        /// Entry index by relative path (`/`-separated, from the package
        /// root).
        entries: BTreeMap<String, usize>,
        /// The open archive.
        zip: std::sync::Mutex<zip::ZipArchive<std::fs::File>>,
    },
    /// A package folder some of whose files an editor holds changed and
    /// unsaved: those are read from memory, the rest from the folder.
    /// Named in messages as [`Source::Dir`] names them.
    Edited {
        /// The package folder.
        dir: PathBuf,
        /// The edited files' texts by relative path (`/`-separated).
        files: BTreeMap<String, Vec<u8>>,
    },
}

impl Source {
    /// Opens a package directory or a .zip file.
    pub fn open(path: &Path) -> Result<Source> {
        if path.is_dir() {
            return Ok(Source::Dir(path.to_path_buf()));
        }
        if !path.exists() {
            return Err(load_error(format!(
                "{}: no such package directory or file",
                path.display()
            )));
        }
        let file = std::fs::File::open(path)
            .map_err(|e| load_error(format!("{}: {e}", path.display())))?;
        let mut zip = zip::ZipArchive::new(file).map_err(|e| {
            load_error(format!(
                "{}: not a package directory or .zip: {e}",
                path.display()
            ))
        })?;
        if zip.len() > MAX_ZIP_ENTRIES {
            return Err(load_error(format!(
                "{}: more than {MAX_ZIP_ENTRIES} entries",
                path.display()
            )));
        }
        let mut entries = BTreeMap::new();
        let mut total = 0u64;
        for i in 0..zip.len() {
            let entry = zip
                .by_index_raw(i)
                .map_err(|e| load_error(format!("{}: {e}", path.display())))?;
            if entry.is_dir() {
                continue;
            }
            let Some(name) = entry.enclosed_name() else {
                return Err(load_error(format!(
                    "{}: unsafe path in archive: {}",
                    path.display(),
                    entry.name()
                )));
            };
            let name = name.to_string_lossy().replace('\\', "/");
            total = total.saturating_add(entry.size());
            if total > MAX_ZIP_TOTAL {
                return Err(load_error(format!(
                    "{}: the archive declares more than {MAX_ZIP_TOTAL} bytes",
                    path.display()
                )));
            }
            entries.insert(name, i);
        }
        // A single top folder holding manifest.yaml is the package root.
        if !entries.contains_key("manifest.yaml") {
            let tops: std::collections::BTreeSet<&str> = entries
                .keys()
                .filter_map(|k| k.split_once('/'))
                .map(|(t, _)| t)
                .collect();
            if tops.len() == 1 {
                let top = format!("{}/", tops.iter().next().expect("one"));
                if entries.contains_key(&format!("{top}manifest.yaml")) {
                    entries = entries
                        .into_iter()
                        .filter_map(|(k, v)| k.strip_prefix(&top).map(|k| (k.to_string(), v)))
                        .collect();
                }
            }
        }
        Ok(Source::Archive {
            path: path.to_path_buf(),
            entries,
            zip: std::sync::Mutex::new(zip),
        })
    }

    /// Reads entry `index` (`rel` in messages) of an archive, at most
    /// [`MAX_ZIP_ENTRY`] bytes whatever size it declares.
    fn read_entry(
        path: &Path,
        zip: &std::sync::Mutex<zip::ZipArchive<std::fs::File>>,
        index: usize,
        rel: &str,
    ) -> Result<Vec<u8>> {
        let mut zip = zip.lock().unwrap_or_else(|e| e.into_inner());
        let entry = zip
            .by_index(index)
            .map_err(|e| load_error(format!("{}!/{rel}: {e}", path.display())))?;
        let mut buf = Vec::with_capacity(entry.size().min(MAX_ZIP_ENTRY) as usize);
        entry
            .take(MAX_ZIP_ENTRY + 1)
            .read_to_end(&mut buf)
            .map_err(|e| load_error(format!("{}!/{rel}: {e}", path.display())))?;
        if buf.len() as u64 > MAX_ZIP_ENTRY {
            return Err(load_error(format!(
                "{}!/{rel}: the file is larger than {MAX_ZIP_ENTRY} bytes",
                path.display()
            )));
        }
        Ok(buf)
    }

    /// The directory or archive.
    pub fn location(&self) -> &Path {
        match self {
            Source::Dir(p)
            | Source::Edited { dir: p, .. }
            | Source::Zip { path: p, .. }
            | Source::Archive { path: p, .. } => p,
        }
    }

    /// How to name a file of the package in messages.
    pub fn display(&self, rel: &str) -> String {
        match self {
            Source::Dir(p) | Source::Edited { dir: p, .. } => p.join(rel).display().to_string(),
            Source::Zip { path, .. } | Source::Archive { path, .. } => {
                format!("{}!/{rel}", path.display())
            }
        }
    }

    pub(crate) fn check_rel(rel: &str) -> Result<()> {
        if rel.starts_with('/') || rel.split(['/', '\\']).any(|c| c == "..") || rel.contains(':') {
            return Err(load_error(format!("invalid path inside a package: {rel}")));
        }
        Ok(())
    }

    /// `path` (under the package directory `root`) with its symlinks
    /// resolved, refused when it leads outside the package.
    fn inside(root: &Path, path: &Path) -> Result<PathBuf> {
        let outside = || {
            load_error(format!(
                "{}: a symbolic link leads outside the package",
                path.display()
            ))
        };
        let root = root
            .canonicalize()
            .map_err(|e| load_error(format!("{}: {e}", root.display())))?;
        let real = path.canonicalize().map_err(|_| outside())?;
        if real.starts_with(&root) {
            Ok(real)
        } else {
            Err(outside())
        }
    }

    /// Reads a file (None when it does not exist).
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>> {
        Self::check_rel(rel)?;
        match self {
            Source::Dir(p) => {
                let f = p.join(rel);
                if !f.is_file() {
                    return Ok(None);
                }
                let f = Self::inside(p, &f)?;
                std::fs::read(&f)
                    .map(Some)
                    .map_err(|e| load_error(format!("{}: {e}", f.display())))
            }
            Source::Zip { files, .. } => Ok(files.get(rel).cloned()),
            Source::Edited { dir, files } => match files.get(rel) {
                Some(b) => Ok(Some(b.clone())),
                None => Source::Dir(dir.clone()).read(rel),
            },
            Source::Archive { path, entries, zip } => match entries.get(rel) {
                Some(&i) => Self::read_entry(path, zip, i, rel).map(Some),
                None => Ok(None),
            },
        }
    }

    /// Reads a UTF-8 text file (None when it does not exist).
    pub fn read_text(&self, rel: &str) -> Result<Option<String>> {
        match self.read(rel)? {
            None => Ok(None),
            Some(b) => String::from_utf8(b)
                .map(Some)
                .map_err(|_| load_error(format!("{}: not UTF-8 text", self.display(rel)))),
        }
    }

    /// True when the file exists.
    pub fn exists(&self, rel: &str) -> bool {
        match self {
            Source::Dir(p) => {
                let f = p.join(rel);
                f.is_file() && Self::inside(p, &f).is_ok()
            }
            Source::Zip { files, .. } => files.contains_key(rel),
            Source::Edited { dir, files } => {
                files.contains_key(rel) || Source::Dir(dir.clone()).exists(rel)
            }
            Source::Archive { entries, .. } => entries.contains_key(rel),
        }
    }

    /// The files under a folder (recursively), relative to it, sorted.
    pub fn list(&self, dir: &str) -> Vec<String> {
        let dir = dir.trim_end_matches('/');
        match self {
            Source::Dir(pkg) => {
                // Symbolic links are followed only within the package, and
                // a directory is listed once (links to `..` make no cycle).
                let root = pkg.join(dir);
                let mut out = Vec::new();
                let mut seen = std::collections::HashSet::new();
                let mut stack = vec![root.clone()];
                while let Some(d) = stack.pop() {
                    let Ok(real) = Self::inside(pkg, &d) else {
                        continue;
                    };
                    if !seen.insert(real) {
                        continue;
                    }
                    let Ok(rd) = std::fs::read_dir(&d) else {
                        continue;
                    };
                    for e in rd.flatten() {
                        let p = e.path();
                        // What is not a link is inside the package as its
                        // directory is: only links need resolving.
                        let link = e.file_type().map_or(true, |t| t.is_symlink());
                        let dir = match e.file_type() {
                            Ok(t) if !link => t.is_dir(),
                            _ => p.is_dir(),
                        };
                        if dir {
                            stack.push(p);
                        } else if link && Self::inside(pkg, &p).is_err() {
                            continue;
                        } else if let Ok(r) = p.strip_prefix(&root) {
                            out.push(r.to_string_lossy().replace('\\', "/"));
                        }
                    }
                }
                out.sort();
                out
            }
            Source::Zip { files, .. } => under(files.keys(), dir),
            Source::Edited { dir: pkg, files } => {
                let mut out = Source::Dir(pkg.clone()).list(dir);
                out.extend(under(files.keys(), dir));
                out.sort();
                out.dedup();
                out
            }
            Source::Archive { entries, .. } => under(entries.keys(), dir),
        }
    }
}

/// The paths under folder `dir`, relative to it.
fn under<'a>(paths: impl Iterator<Item = &'a String>, dir: &str) -> Vec<String> {
    let prefix = format!("{dir}/");
    paths
        .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
        .collect()
}
