//! The packages of the search path that may use a library: what a
//! references request searches besides the packages the server has
//! checked. Each is checked once, from its saved files, when a request
//! first needs it, and kept until a file is saved.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::Executor;

/// The core library: every package uses it without requiring it.
const CORE: &str = "io.murano";

/// Packages of the search path checked for references, by folder.
#[derive(Default)]
pub struct Users {
    checked: RefCell<HashMap<PathBuf, Option<Arc<Executor>>>>,
    /// Each package's full name and the packages it requires, read once.
    manifests: RefCell<HashMap<PathBuf, Option<(String, Vec<String>)>>>,
}

impl Users {
    /// Forgets the packages checked (their saved files may have changed).
    pub fn clear(&self) {
        self.checked.borrow_mut().clear();
        self.manifests.borrow_mut().clear();
    }

    /// The full name and requirements of the package in `dir`, when its
    /// manifest reads.
    fn manifest(&self, dir: &Path) -> Option<(String, Vec<String>)> {
        let mut known = self.manifests.borrow_mut();
        let read = || {
            let file = dir.join("manifest.yaml");
            let text = std::fs::read_to_string(&file).ok()?;
            let m = package::Manifest::parse(&text, &file.display().to_string()).ok()?;
            Some((m.full_name, m.require.into_iter().map(|(r, _)| r).collect()))
        };
        known.entry(dir.to_path_buf()).or_insert_with(read).clone()
    }

    /// The executors of the packages under `search` that require the
    /// package in folder `lib` (any, for the core library), `lib` itself
    /// included, but those `skip` says the caller has; `check` checks a
    /// package folder.
    pub fn of(
        &self,
        lib: &Path,
        search: &[PathBuf],
        skip: &dyn Fn(&Path) -> bool,
        check: &dyn Fn(&Path) -> Option<Arc<Executor>>,
    ) -> Vec<Arc<Executor>> {
        let Some((name, _)) = self.manifest(lib) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for dir in packages(search) {
            if skip(&dir) {
                continue;
            }
            let uses = dir == lib
                || name == CORE
                || (self.manifest(&dir)).is_some_and(|(_, req)| req.contains(&name));
            if !uses {
                continue;
            }
            let mut checked = self.checked.borrow_mut();
            let ex = checked.entry(dir.clone()).or_insert_with(|| check(&dir));
            out.extend(ex.clone());
        }
        out
    }
}

/// The package folders of a search path: each entry that is a package,
/// and the folders in it that are.
fn packages(search: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in search {
        if entry.join("manifest.yaml").is_file() {
            out.push(entry.clone());
            continue;
        }
        let Ok(dir) = std::fs::read_dir(entry) else {
            continue;
        };
        let mut found: Vec<PathBuf> = (dir.flatten())
            .map(|e| e.path())
            .filter(|p| p.join("manifest.yaml").is_file())
            .collect();
        found.sort();
        out.extend(found);
    }
    out.dedup();
    out
}
