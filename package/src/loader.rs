//! The package loader: packages found over a search path, requirements
//! resolved with murano's version-spec rules, and bundles resolved to
//! packages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::version::VersionSpec;
use runtime::{Error, ErrorKind, Result};
use semver::Version;

use crate::bundle::Bundle;
use crate::error::load_error;
use crate::format::PackageFormat;
use crate::libraries::LIBRARIES;
use crate::registry::FormatRegistry;

/// The core library's package name (always available).
pub const CORE_PACKAGE: &str = "io.murano";

/// A package found on the search path.
#[derive(Clone)]
pub struct Found {
    /// Full name.
    pub name: String,
    /// Version.
    pub version: Version,
    /// Where it is.
    pub path: PathBuf,
    /// The loaded package.
    pub package: Arc<dyn PackageFormat>,
}

/// A package that could not be loaded from the search path.
pub struct Broken {
    /// Where it is.
    pub path: PathBuf,
    /// Why.
    pub error: Error,
}

/// Finds packages over a search path and resolves requirements.
pub struct PackageLoader {
    /// The format plugins.
    pub registry: FormatRegistry,
    /// Packages found, by full name, each name's versions highest first.
    pub found: BTreeMap<String, Vec<Found>>,
    /// Packages that failed to load.
    pub broken: Vec<Broken>,
    /// Search-path entries that are repository roots (`apps/`, `bundles/`,
    /// `images/`).
    pub repositories: Vec<PathBuf>,
}

/// True when `dir` is a murano package repository root: it has an `apps/`
/// folder and at least one of `bundles/` and `images/` (or only `apps/`
/// with no packages directly in `dir`).
pub fn is_repository(dir: &Path) -> bool {
    if !dir.join("apps").is_dir() || dir.join("manifest.yaml").is_file() {
        return false;
    }
    if dir.join("bundles").is_dir() || dir.join("images").is_dir() {
        return true;
    }
    // `apps/` alone: a repository unless `apps` is itself a package.
    !dir.join("apps/manifest.yaml").is_file()
}

impl PackageLoader {
    /// Scans the search path: each directory's subfolders holding a
    /// `manifest.yaml` and its `.zip` files are packages. A repository
    /// root (see [`is_repository`]) contributes the packages under its
    /// `apps/` folder.
    pub fn new(search: &[PathBuf]) -> Result<PackageLoader> {
        let mut l = PackageLoader {
            registry: FormatRegistry::builtin(),
            found: BTreeMap::new(),
            broken: Vec::new(),
            repositories: Vec::new(),
        };
        for dir in search {
            let scan = if is_repository(dir) {
                l.repositories.push(dir.clone());
                dir.join("apps")
            } else {
                dir.clone()
            };
            let dir = &scan;
            let rd = std::fs::read_dir(dir)
                .map_err(|e| load_error(format!("{}: {e}", dir.display())))?;
            let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                let is_pkg = (p.is_dir() && p.join("manifest.yaml").is_file())
                    || (p.is_file()
                        && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("zip")));
                if !is_pkg {
                    continue;
                }
                match l.registry.load(&p) {
                    Ok(pkg) => l.add(p, pkg),
                    Err(error) => l.broken.push(Broken { path: p, error }),
                }
            }
        }
        // Our own libraries are always available (a copy on the search
        // path wins).
        for lib in LIBRARIES {
            if !l.found.contains_key(lib.name) {
                let pkg = lib.package(&l.registry)?;
                l.add(lib.path(), pkg);
            }
        }
        Ok(l)
    }

    /// Adds a loaded package (a second copy of the same name and version is
    /// ignored: the first on the search path wins).
    pub fn add(&mut self, path: PathBuf, package: Arc<dyn PackageFormat>) {
        let name = package.full_name().to_string();
        let version = package.version().clone();
        let list = self.found.entry(name.clone()).or_default();
        if list.iter().any(|f| f.version == version) {
            return;
        }
        list.push(Found {
            name,
            version,
            path,
            package,
        });
        list.sort_by(|a, b| b.version.cmp(&a.version));
    }

    /// Puts `package` (an editor's unsaved copy, say) in place of the
    /// copies of the same name and version the search path holds; it
    /// keeps their path.
    pub fn replace(&mut self, package: Arc<dyn PackageFormat>) {
        let name = package.full_name().to_string();
        let version = package.version().clone();
        let list = self.found.entry(name.clone()).or_default();
        let path = match list.iter().position(|f| f.version == version) {
            Some(i) => list.remove(i).path,
            None => PathBuf::new(),
        };
        list.push(Found {
            name,
            version,
            path,
            package,
        });
        list.sort_by(|a, b| b.version.cmp(&a.version));
    }

    /// Resolves the requirements of `root` (transitively). Returns the
    /// packages to load (not `root`, not the core library), in dependency
    /// discovery order. For each package it picks the fewest versions that
    /// satisfy every spec on it (highest versions preferred); a requirement
    /// nothing satisfies is an error naming the chain that needs it.
    ///
    /// A version dropped as redundant may have pulled in packages of its
    /// own; the resolution is then run again without it, until every
    /// version chosen is kept.
    pub fn resolve(&self, root: &Arc<dyn PackageFormat>) -> Result<Vec<Arc<dyn PackageFormat>>> {
        let mut banned: Vec<(String, Version)> = Vec::new();
        loop {
            let (keep, dropped) = self.resolve_without(root, &banned)?;
            if dropped.is_empty() {
                return Ok(keep.into_iter().map(|f| f.package).collect());
            }
            banned.extend(dropped.into_iter().map(|f| (f.name, f.version)));
        }
    }

    /// One resolution that does not choose the `banned` versions: the
    /// versions kept, and those chosen on the way but made redundant.
    fn resolve_without(
        &self,
        root: &Arc<dyn PackageFormat>,
        banned: &[(String, Version)],
    ) -> Result<(Vec<Found>, Vec<Found>)> {
        // (package name) -> specs and who asked.
        let mut chosen: Vec<Found> = Vec::new();
        let mut queue: Vec<(String, Arc<dyn PackageFormat>)> =
            vec![(root.full_name().to_string(), root.clone())];
        let mut specs: BTreeMap<String, Vec<(VersionSpec, String)>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut errors = Vec::new();
        // Requirements are gathered to a fixed point: choosing a version
        // adds its requirements.
        while let Some((who, p)) = queue.pop() {
            for (name, spec) in p.requirements() {
                if name == CORE_PACKAGE || name == root.full_name() {
                    continue;
                }
                let list = specs.entry(name.clone()).or_default();
                if list.iter().any(|(s, _)| s == spec) {
                    continue;
                }
                list.push((spec.clone(), who.clone()));
                if !order.contains(name) {
                    order.push(name.clone());
                }
                let satisfied = chosen
                    .iter()
                    .any(|f| &f.name == name && spec.matches(&f.version));
                if satisfied {
                    continue;
                }
                let Some(cands) = self.found.get(name) else {
                    errors.push(format!(
                        "required package {name} ({spec}) of {who} is not found on the search path"
                    ));
                    continue;
                };
                // Prefer a version that also satisfies the other specs on
                // this package, then the highest.
                let all = &specs[name];
                let best = cands
                    .iter()
                    .filter(|f| spec.matches(&f.version))
                    .filter(|f| !banned.iter().any(|(n, v)| *n == f.name && *v == f.version))
                    .max_by_key(|f| {
                        (
                            all.iter().filter(|(s, _)| s.matches(&f.version)).count(),
                            f.version.clone(),
                        )
                    });
                match best {
                    Some(f) => {
                        chosen.push(f.clone());
                        queue.push((format!("{name}/{}", f.version), f.package.clone()));
                    }
                    None => {
                        let have: Vec<String> =
                            cands.iter().map(|f| f.version.to_string()).collect();
                        errors.push(format!(
                            "required package {name} ({spec}) of {who}: no matching version (found {})",
                            have.join(", ")
                        ));
                    }
                }
            }
        }
        if !errors.is_empty() {
            return Err(Error::new(ErrorKind::PackageLoadError, errors.join("\n")));
        }
        // Drop versions made redundant by a later choice.
        let mut keep: Vec<Found> = Vec::new();
        for name in &order {
            let mine: Vec<&Found> = chosen.iter().filter(|f| &f.name == name).collect();
            let all = &specs[name];
            let mut left: Vec<&VersionSpec> = all.iter().map(|(s, _)| s).collect();
            let mut picked: Vec<&Found> = Vec::new();
            while !left.is_empty() {
                let Some(best) = mine.iter().max_by_key(|f| {
                    (
                        left.iter().filter(|s| s.matches(&f.version)).count(),
                        f.version.clone(),
                    )
                }) else {
                    break;
                };
                let before = left.len();
                left.retain(|s| !s.matches(&best.version));
                if left.len() == before {
                    break;
                }
                picked.push(best);
            }
            keep.extend(picked.into_iter().cloned());
        }
        let dropped = chosen
            .into_iter()
            .filter(|c| {
                !keep
                    .iter()
                    .any(|k| k.name == c.name && k.version == c.version)
            })
            .collect();
        Ok((keep, dropped))
    }
}

/// A package a bundle resolves to.
#[derive(Clone)]
pub struct BundleItem {
    /// The package.
    pub found: Found,
    /// The version spec the bundle asked for (`None`: the latest); for a
    /// requirement, the spec of the requirement is not kept.
    pub requested: Option<String>,
    /// `None` for a bundle entry; `name/version` of the package that
    /// requires it otherwise.
    pub required_by: Option<String>,
}

impl PackageLoader {
    /// The file of a bundle named `name` in the repositories on the search
    /// path (`bundles/NAME.bundle`, `bundles/NAME`, `.json`, `.yaml`).
    pub fn find_bundle(&self, name: &str) -> Option<PathBuf> {
        for repo in &self.repositories {
            for f in [
                format!("{name}.bundle"),
                name.to_string(),
                format!("{name}.json"),
                format!("{name}.yaml"),
            ] {
                let p = repo.join("bundles").join(f);
                if p.is_file() {
                    return Some(p);
                }
            }
        }
        None
    }

    /// The file of an image named `name` in the repositories' `images/`.
    pub fn find_image(&self, name: &str) -> Option<PathBuf> {
        if name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return None;
        }
        self.repositories
            .iter()
            .map(|r| r.join("images").join(name))
            .find(|p| p.is_file())
    }

    /// Resolves a bundle: every entry to the highest version matching its
    /// `Version` (any version when empty), then the requirements of each.
    /// Every unresolvable entry or requirement is reported in one error.
    pub fn resolve_bundle(&self, b: &Bundle) -> Result<Vec<BundleItem>> {
        let mut out: Vec<BundleItem> = Vec::new();
        let mut errors = Vec::new();
        let push = |out: &mut Vec<BundleItem>, item: BundleItem| {
            if !out
                .iter()
                .any(|i| i.found.name == item.found.name && i.found.version == item.found.version)
            {
                out.push(item);
            }
        };
        let mut roots = Vec::new();
        for e in &b.entries {
            let spec = match VersionSpec::parse(Some(e.version.as_deref().unwrap_or("*"))) {
                Ok(s) => s,
                Err(msg) => {
                    errors.push(format!("{}: {msg}", e.pos));
                    continue;
                }
            };
            let want = e.version.as_deref().unwrap_or("latest");
            let Some(cands) = self.found.get(&e.name) else {
                let mut msg = format!(
                    "{}: bundle package {} ({want}) is not found on the search path",
                    e.pos, e.name
                );
                if !self.broken.is_empty() {
                    msg.push_str(&format!(
                        " ({} package(s) there failed to load)",
                        self.broken.len()
                    ));
                }
                errors.push(msg);
                continue;
            };
            match cands.iter().find(|f| spec.matches(&f.version)) {
                Some(f) => {
                    roots.push(f.clone());
                    push(
                        &mut out,
                        BundleItem {
                            found: f.clone(),
                            requested: e.version.clone(),
                            required_by: None,
                        },
                    );
                }
                None => {
                    let have: Vec<String> = cands.iter().map(|f| f.version.to_string()).collect();
                    errors.push(format!(
                        "{}: bundle package {} ({want}): no matching version (found {})",
                        e.pos,
                        e.name,
                        have.join(", ")
                    ));
                }
            }
        }
        for r in &roots {
            match self.resolve(&r.package) {
                Ok(deps) => {
                    for d in deps {
                        let Some(f) = self
                            .found
                            .get(d.full_name())
                            .and_then(|l| l.iter().find(|f| &f.version == d.version()).cloned())
                        else {
                            continue;
                        };
                        push(
                            &mut out,
                            BundleItem {
                                found: f,
                                requested: None,
                                required_by: Some(format!("{}/{}", r.name, r.version)),
                            },
                        );
                    }
                }
                Err(e) => errors.extend(e.message().lines().map(str::to_string)),
            }
        }
        if !errors.is_empty() {
            return Err(load_error(format!(
                "{}: unresolvable bundle entries:\n{}",
                b.file,
                errors.join("\n")
            )));
        }
        Ok(out)
    }
}
