//! Murano packages: sources (a directory or a .zip), `manifest.yaml`,
//! package-format plugins and their registry, and the package loader that
//! resolves `Require` specs over a search path.
//!
//! * [`Source`] gives read access to a package's files, wherever they live.
//! * [`Manifest::parse`] reads `manifest.yaml` (`Format` as `Name/Version`,
//!   `MuranoPL` by default, missing SemVer parts zero; `Type`, `FullName`,
//!   `Name`, `Description`, `Author`, `Supplier`, `Tags`, `Classes`,
//!   `Require`, `Version`, `Meta`, `UI`, `Logo`). Every malformed part is an
//!   error whose message starts with `file:line:col:`.
//! * [`PackageFormat`] is the plugin interface of the package-format plugin
//!   spec (full name, version, classes, requirements, type, display name,
//!   ...; `get_class`, `get_resource`); [`FormatRegistry`] maps a format name
//!   and a version range to a plugin. Built in: `MuranoPL` 1.0–1.4 and
//!   `Heat.HOT` 1.0 (the HOT template becomes a generated MuranoPL class).
//! * [`PackageLoader`] scans `-L` directories (subfolders and .zip files are
//!   packages), resolves requirements with murano's version-spec rules and
//!   prefers the fewest versions per package. `io.murano` (our own core
//!   library) is always available.
//! * [`to_package`] compiles a plugin's classes into an executor
//!   [`Package`], collecting one error per bad class file.

use runtime::ErrorKind;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use compiler::murano::{load_documents, Node, NodeKind};
use runtime::{Dict, Error, Result, Value};
use semver::Version;

pub use engine::node_value;
pub use engine::version::{
    parse_type_string, parse_version, type_spec, valid_full_name, Bound, VersionSpec,
};
use engine::Package;

mod compile;
mod hot;
pub mod libraries;
mod manifest;
mod pack;

pub use compile::{to_package_checked, CheckedPackage, ClassLoadError};
pub use hot::*;
pub use manifest::*;
pub use pack::{pack_package, package_files};

/// The core library's package name (always available).
pub const CORE_PACKAGE: &str = "io.murano";
/// Largest logo accepted (murano: 500 KiB).
pub const MAX_IMAGE_SIZE: usize = 500 * 1024;
/// Largest file read from a .zip package.
const MAX_ZIP_ENTRY: u64 = 64 << 20;
/// Largest total uncompressed size a .zip package may declare.
const MAX_ZIP_TOTAL: u64 = 1 << 30;
/// Most entries a .zip package may have.
const MAX_ZIP_ENTRIES: usize = 10_000;

fn format_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::PackageFormatError, msg)
}

fn load_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::PackageLoadError, msg)
}

fn class_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::PackageClassLoadError, msg)
}

// ---- sources ----------------------------------------------------------

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
            Source::Dir(p) | Source::Zip { path: p, .. } | Source::Archive { path: p, .. } => p,
        }
    }

    /// How to name a file of the package in messages.
    pub fn display(&self, rel: &str) -> String {
        match self {
            Source::Dir(p) => p.join(rel).display().to_string(),
            Source::Zip { path, .. } | Source::Archive { path, .. } => {
                format!("{}!/{rel}", path.display())
            }
        }
    }

    fn check_rel(rel: &str) -> Result<()> {
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

/// A package format: `Name/Version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatId {
    /// Format name (`MuranoPL`, `Heat.HOT`).
    pub name: String,
    /// Format (runtime) version.
    pub version: Version,
}

impl fmt::Display for FormatId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.name, self.version)
    }
}

impl FormatId {
    /// Parses `Name/Version`; a bare version is `MuranoPL/Version`.
    pub fn parse(text: &str) -> std::result::Result<FormatId, String> {
        let t = text.trim();
        let (name, ver) = match t.rsplit_once('/') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => ("MuranoPL", t),
        };
        if name.is_empty() {
            return Err(format!("invalid Format \"{text}\": empty format name"));
        }
        let version = parse_version(ver).map_err(|e| format!("invalid Format \"{text}\": {e}"))?;
        Ok(FormatId {
            name: name.to_string(),
            version,
        })
    }
}

// ---- plugins ----------------------------------------------------------

/// What every plugin has: where the package is and its manifest (murano's
/// `PackageBase`).
pub struct PackageBase {
    /// The package's files.
    pub source: Source,
    /// Its manifest.
    pub manifest: Manifest,
}

impl PackageBase {
    fn load_image(
        &self,
        file: Option<&str>,
        what: &str,
        required: bool,
    ) -> Result<Option<Vec<u8>>> {
        let Some(file) = file else {
            return Ok(None);
        };
        match self.source.read(file)? {
            None if required => Err(load_error(format!(
                "Unable to load {what}: {}: file not found",
                self.source.display(file)
            ))),
            None => Ok(None),
            Some(b) => {
                check_image(&b)
                    .map_err(|e| load_error(format!("Unable to load {what}: {file}: {e}")))?;
                Ok(Some(b))
            }
        }
    }
}

/// A class's source as a plugin serves it.
#[derive(Clone, Debug)]
pub struct ClassSource {
    /// The file name used in positions.
    pub file: String,
    /// The MuranoPL YAML text.
    pub text: String,
}

/// The package-format plugin interface (murano.packages.package.Package).
/// Static facts come from the manifest by default ([`PackageBase`]); a
/// plugin supplies `classes`, `get_class` and `ui`.
pub trait PackageFormat: Send + Sync {
    /// The manifest and files.
    fn base(&self) -> &PackageBase;
    /// MuranoPL class names (FQNs) the package contains.
    fn classes(&self) -> Vec<String>;
    /// The MuranoPL YAML of a class.
    fn get_class(&self, name: &str) -> Result<ClassSource>;
    /// The file name [`PackageFormat::get_class`] would give class `name`,
    /// when known without reading it (a file holding many classes is then
    /// read once).
    fn class_file(&self, _name: &str) -> Option<String> {
        None
    }
    /// The UI definition (YAML text), if any.
    fn ui(&self) -> Result<Option<String>>;

    /// Canonical format name.
    fn format_name(&self) -> &str {
        &self.base().manifest.format.name
    }
    /// Format version.
    fn runtime_version(&self) -> &Version {
        &self.base().manifest.format.version
    }
    /// Fully qualified package name.
    fn full_name(&self) -> &str {
        &self.base().manifest.full_name
    }
    /// Package version.
    fn version(&self) -> &Version {
        &self.base().manifest.version
    }
    /// Required packages and version specs.
    fn requirements(&self) -> &[(String, VersionSpec)] {
        &self.base().manifest.require
    }
    /// `Application` or `Library`.
    fn package_type(&self) -> &str {
        &self.base().manifest.package_type
    }
    /// Human-readable name.
    fn display_name(&self) -> &str {
        &self.base().manifest.display_name
    }
    /// Description.
    fn description(&self) -> Option<&str> {
        self.base().manifest.description.as_deref()
    }
    /// Author.
    fn author(&self) -> Option<&str> {
        self.base().manifest.author.as_deref()
    }
    /// Supplier section.
    fn supplier(&self) -> Option<&Value> {
        self.base().manifest.supplier.as_ref()
    }
    /// Tags.
    fn tags(&self) -> &[String] {
        &self.base().manifest.tags
    }
    /// `Meta`.
    fn meta(&self) -> Option<&Value> {
        self.base().manifest.meta.as_ref()
    }
    /// Logo bytes (png, jpeg or gif, at most 500 KiB).
    fn logo(&self) -> Result<Option<Vec<u8>>> {
        let b = self.base();
        b.load_image(b.manifest.logo.as_deref(), "logo", b.manifest.logo_explicit)
    }
    /// Supplier logo bytes.
    fn supplier_logo(&self) -> Result<Option<Vec<u8>>> {
        let b = self.base();
        let file = b
            .manifest
            .supplier
            .as_ref()
            .and_then(|s| match s {
                Value::Dict(d) => d.get(&Value::str("Logo")).and_then(|l| l.as_str()),
                _ => None,
            })
            .map(str::to_string);
        b.load_image(file.as_deref(), "supplier logo", true)
    }
    /// A resource file (`Resources/NAME`).
    fn get_resource(&self, name: &str) -> Result<Vec<u8>> {
        let rel = format!("Resources/{name}");
        self.base().source.read(&rel)?.ok_or_else(|| {
            load_error(format!(
                "resource {name} not found ({})",
                self.base().source.display(&rel)
            ))
        })
    }
    /// `images.lst`.
    fn images(&self) -> Result<Vec<ImageSpec>> {
        let src = &self.base().source;
        match src.read_text("images.lst")? {
            None => Ok(Vec::new()),
            Some(t) => parse_images(&t, &src.display("images.lst")),
        }
    }
    /// yaql 0.2 mode (formats before 1.2).
    fn legacy(&self) -> bool {
        let v = self.runtime_version();
        v.major == 1 && v.minor < 2
    }
}

/// A native MuranoPL package (Format MuranoPL/1.0–1.4).
pub struct MuranoPlPackage {
    base: PackageBase,
    /// Class name to its index in the manifest's `Classes`.
    index: HashMap<String, usize>,
}

impl MuranoPlPackage {
    fn new(base: PackageBase) -> MuranoPlPackage {
        let index = (base.manifest.classes.iter().enumerate())
            .map(|(i, (c, _))| (c.clone(), i))
            .collect();
        MuranoPlPackage { base, index }
    }
}

impl PackageFormat for MuranoPlPackage {
    fn base(&self) -> &PackageBase {
        &self.base
    }
    fn classes(&self) -> Vec<String> {
        self.base
            .manifest
            .classes
            .iter()
            .map(|(c, _)| c.clone())
            .collect()
    }
    fn get_class(&self, name: &str) -> Result<ClassSource> {
        let Some((_, file)) = self
            .index
            .get(name)
            .map(|&i| &self.base.manifest.classes[i])
        else {
            return Err(class_error(format!(
                "Class {name} not defined in package {}",
                self.full_name()
            )));
        };
        let rel = format!("Classes/{file}");
        match self.base.source.read_text(&rel)? {
            Some(text) => Ok(ClassSource {
                file: self.base.source.display(&rel),
                text,
            }),
            None => Err(class_error(format!(
                "{}: File with class definition not found (class {name})",
                self.base.source.display(&rel)
            ))),
        }
    }
    fn ui(&self) -> Result<Option<String>> {
        self.base
            .source
            .read_text(&format!("UI/{}", self.base.manifest.ui))
    }
    fn class_file(&self, name: &str) -> Option<String> {
        let (_, file) = &self.base.manifest.classes[*self.index.get(name)?];
        Some(self.base.source.display(&format!("Classes/{file}")))
    }
}

/// Makes a plugin package.
pub type Factory = fn(PackageBase) -> Result<Box<dyn PackageFormat>>;

/// A registry entry: a format name, the runtime versions it covers and its
/// plugin.
pub struct FormatEntry {
    /// Format name.
    pub name: String,
    /// Versions covered.
    pub versions: VersionSpec,
    /// The plugin.
    pub factory: Factory,
}

/// Package-format plugins keyed by format name and version range.
pub struct FormatRegistry {
    entries: Vec<FormatEntry>,
}

impl Default for FormatRegistry {
    fn default() -> Self {
        FormatRegistry::builtin()
    }
}

impl FormatRegistry {
    /// An empty registry.
    pub fn empty() -> FormatRegistry {
        FormatRegistry {
            entries: Vec::new(),
        }
    }

    /// MuranoPL 1.0–1.4 and Heat.HOT 1.0.
    pub fn builtin() -> FormatRegistry {
        let mut r = FormatRegistry::empty();
        r.register("MuranoPL", ">=1.0.0,<1.5.0", |base| {
            Ok(Box::new(MuranoPlPackage::new(base)))
        })
        .expect("valid range");
        r.register("Heat.HOT", ">=1.0.0,<1.1.0", |base| {
            Ok(Box::new(crate::HotPackage::new(base)?))
        })
        .expect("valid range");
        r
    }

    /// Registers a plugin for `name` and a version range (a version spec).
    /// Later registrations win over earlier ones.
    pub fn register(&mut self, name: &str, versions: &str, factory: Factory) -> Result<()> {
        let versions = VersionSpec::parse(Some(versions)).map_err(format_error)?;
        self.entries.insert(
            0,
            FormatEntry {
                name: name.to_string(),
                versions,
                factory,
            },
        );
        Ok(())
    }

    /// The plugin for a format.
    pub fn find(&self, f: &FormatId) -> Option<&FormatEntry> {
        self.entries
            .iter()
            .find(|e| e.name == f.name && e.versions.matches(&f.version))
    }

    /// The supported formats, as text.
    pub fn describe(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| format!("{} {}", e.name, e.versions))
            .collect()
    }

    /// Loads a package from a directory or .zip.
    pub fn load(&self, path: &Path) -> Result<Arc<dyn PackageFormat>> {
        let source = Source::open(path)?;
        let mfile = source.display("manifest.yaml");
        let Some(text) = source.read_text("manifest.yaml")? else {
            return Err(load_error(format!(
                "{mfile}: no manifest.yaml in the package"
            )));
        };
        let manifest = Manifest::parse(&text, &mfile)?;
        let Some(entry) = self.find(&manifest.format) else {
            return Err(format_error(format!(
                "{mfile}: Unsupported format {} (supported: {})",
                manifest.format,
                self.describe().join("; ")
            )));
        };
        let pkg = (entry.factory)(PackageBase { source, manifest })?;
        Ok(Arc::from(pkg))
    }
}

// ---- compiling into executor packages ---------------------------------

/// Loads every class of a plugin package into an executor [`Package`].
/// Class-file errors are collected (one per class), not fatal.
/// Loads a package from a directory or a .zip through the package format
/// plugins; the first class that fails to parse is the error.
pub fn load_dir(dir: &Path) -> Result<Package> {
    let p = FormatRegistry::builtin().load(dir)?;
    let (pkg, errors) = to_package(&*p);
    match errors.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(pkg),
    }
}

/// Compiles a plugin's classes into an executor package, one error per bad
/// class file.
pub fn to_package(p: &dyn PackageFormat) -> (Package, Vec<Error>) {
    let c = to_package_checked(p);
    (c.package, c.errors.into_iter().map(|e| e.error).collect())
}

// ---- the loader -------------------------------------------------------

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
        for lib in crate::libraries::LIBRARIES {
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

// ---- repositories and bundles -----------------------------------------

/// One entry of a bundle: a package name and an optional version.
#[derive(Clone, Debug)]
pub struct BundleEntry {
    /// The package full name (`Name`).
    pub name: String,
    /// `Version` (absent or empty: the latest).
    pub version: Option<String>,
    /// Where the entry is, for messages (`file:line:col`).
    pub pos: String,
}

/// A bundle file (JSON or YAML): `{Packages: [{Name, Version?}, ...]}`.
#[derive(Clone, Debug)]
pub struct Bundle {
    /// The file as named in messages.
    pub file: String,
    /// The packages, in file order.
    pub entries: Vec<BundleEntry>,
}

fn scalar_text(n: &Node) -> Option<&str> {
    match &n.kind {
        NodeKind::Scalar { value, .. } => Some(value),
        _ => None,
    }
}

/// Parses a bundle (JSON is YAML, so one parser reads both).
pub fn parse_bundle(text: &str, file: &str) -> Result<Bundle> {
    let docs = load_documents(text, file)?;
    let doc = match docs.as_slice() {
        [] => return Err(format_error(format!("{file}: the bundle is empty"))),
        [d] if d.is_null() => return Err(format_error(format!("{file}: the bundle is empty"))),
        [d] => d,
        [_, d, ..] => {
            return Err(d.pos.error(
                ErrorKind::PackageFormatError,
                "a bundle must be a single document",
            ))
        }
    };
    if !matches!(doc.kind, NodeKind::Map(_)) {
        return Err(doc.pos.error(
            ErrorKind::PackageFormatError,
            format!(
                "a bundle must be a mapping with a Packages list, not a {}",
                doc.kind_name()
            ),
        ));
    }
    let Some(list) = doc.get("Packages") else {
        return Err(doc.pos.error(
            ErrorKind::PackageFormatError,
            "the bundle has no Packages list",
        ));
    };
    let items: &[Node] = match &list.kind {
        NodeKind::Seq(items) => items,
        _ if list.is_null() => &[],
        _ => {
            return Err(list.pos.error(
                ErrorKind::PackageFormatError,
                format!("bundle Packages must be a list, not a {}", list.kind_name()),
            ))
        }
    };
    let mut entries = Vec::new();
    for it in items {
        if !matches!(it.kind, NodeKind::Map(_)) {
            return Err(it.pos.error(
                ErrorKind::PackageFormatError,
                format!(
                    "a bundle entry must be a mapping with a Name, not a {}",
                    it.kind_name()
                ),
            ));
        }
        let name = match it.get("Name") {
            Some(n) if !n.is_null() => scalar_text(n)
                .ok_or_else(|| {
                    n.pos.error(
                        ErrorKind::PackageFormatError,
                        "bundle Name must be a scalar",
                    )
                })?
                .trim()
                .to_string(),
            _ => {
                return Err(it
                    .pos
                    .error(ErrorKind::PackageFormatError, "a bundle entry has no Name"))
            }
        };
        if !valid_full_name(&name) {
            return Err(it.get("Name").expect("checked").pos.error(
                ErrorKind::PackageFormatError,
                format!("Invalid package name {name} in the bundle"),
            ));
        }
        let version = match it.get("Version") {
            None => None,
            Some(n) if n.is_null() => None,
            Some(n) => {
                let t = scalar_text(n).ok_or_else(|| {
                    n.pos.error(
                        ErrorKind::PackageFormatError,
                        "bundle Version must be a scalar",
                    )
                })?;
                let t = t.trim();
                if t.is_empty() {
                    None
                } else {
                    VersionSpec::parse(Some(t))
                        .map_err(|e| n.pos.error(ErrorKind::PackageFormatError, e))?;
                    Some(t.to_string())
                }
            }
        };
        entries.push(BundleEntry {
            name,
            version,
            pos: it.pos.to_string(),
        });
    }
    Ok(Bundle {
        file: file.to_string(),
        entries,
    })
}

/// Reads and parses a bundle file.
pub fn load_bundle(path: &Path) -> Result<Bundle> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| load_error(format!("{}: {e}", path.display())))?;
    parse_bundle(&text, &path.display().to_string())
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

// ---- class versions in object models ----------------------------------

fn version_text(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) if s.trim().is_empty() => None,
        Value::Str(s) => Some(s.trim().to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// Checks the class versions an object model asks for (`?.classVersion`,
/// the version in a `type` string `Name/1.2.3@pkg`, and `?.package` /
/// `@pkg`) against the packages loaded to run it. A spec no loaded
/// version of the providing package satisfies is an error naming the
/// object, the class, the spec and the loaded version(s). Classes no
/// loaded package provides (the core library's, or unknown ones the
/// executor reports) are not checked here.
pub fn check_model_versions(model: &Value, packages: &[Arc<dyn PackageFormat>]) -> Result<()> {
    let mut errors = Vec::new();
    for_each_header(model, &mut |h| check_header(h, packages, &mut errors));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(load_error(errors.join("\n")))
    }
}

/// What an object header (`?`) asks for: the class, the version in its
/// `type` string, its `classVersion`, and the package (`@pkg` or
/// `package`).
struct HeaderType {
    class: String,
    type_ver: Option<String>,
    class_ver: Option<String>,
    pkg: Option<String>,
}

fn header_type(h: &Dict) -> Option<HeaderType> {
    let t = h.get(&Value::str("type")).and_then(|t| t.as_str())?;
    let (class, type_ver, type_pkg) = parse_type_string(t);
    let class_ver = h.get(&Value::str("classVersion")).and_then(version_text);
    let pkg = type_pkg.or_else(|| {
        h.get(&Value::str("package"))
            .and_then(|p| p.as_str())
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
    });
    Some(HeaderType {
        class,
        type_ver,
        class_ver,
        pkg,
    })
}

/// Calls `f` on every object header (`?`) of a model.
fn for_each_header(v: &Value, f: &mut dyn FnMut(&Dict)) {
    match v {
        Value::List(items) => items.iter().for_each(|i| for_each_header(i, f)),
        Value::Dict(d) => {
            if let Some(Value::Dict(h)) = d.get(&Value::str("?")) {
                f(h);
            }
            for (k, x) in d.iter() {
                if k.as_str() != Some("?") {
                    for_each_header(x, f);
                }
            }
        }
        _ => {}
    }
}

impl HeaderType {
    /// True when `p` can provide the object's class.
    fn provided_by(&self, p: &dyn PackageFormat) -> bool {
        let versions = [&self.type_ver, &self.class_ver];
        self.pkg.as_deref().is_none_or(|n| p.full_name() == n)
            && p.classes().contains(&self.class)
            && versions.iter().all(|v| match v {
                None => true,
                Some(v) => VersionSpec::parse(Some(v)).is_ok_and(|s| s.matches(p.version())),
            })
    }
}

impl PackageLoader {
    /// The packages of the search path an object model needs beyond
    /// `loaded`: for each object whose class (at the version and from the
    /// package its header asks for) no loaded package provides, the
    /// highest version on the search path that does, with what it
    /// requires. The reference loads model types from the whole catalogue
    /// (`load_class_package` in murano/engine/package_loader.py), not only
    /// from the application's requirements.
    pub fn model_packages(
        &self,
        model: &Value,
        loaded: &[Arc<dyn PackageFormat>],
    ) -> Result<Vec<Arc<dyn PackageFormat>>> {
        let mut wanted: Vec<HeaderType> = Vec::new();
        for_each_header(model, &mut |h| wanted.extend(header_type(h)));
        let mut out: Vec<Arc<dyn PackageFormat>> = Vec::new();
        for w in wanted {
            if w.pkg.as_deref() == Some(CORE_PACKAGE)
                || loaded.iter().chain(&out).any(|p| w.provided_by(&**p))
            {
                continue;
            }
            // `found` lists each package's versions highest first.
            let Some(f) = self
                .found
                .values()
                .flatten()
                .filter(|f| w.provided_by(&*f.package))
                .max_by(|a, b| a.version.cmp(&b.version))
            else {
                continue;
            };
            out.push(f.package.clone());
            for d in self.resolve(&f.package)? {
                let have = |p: &Arc<dyn PackageFormat>| {
                    p.full_name() == d.full_name() && p.version() == d.version()
                };
                if !loaded.iter().chain(&out).any(have) {
                    out.push(d);
                }
            }
        }
        Ok(out)
    }
}

fn check_header(h: &Dict, packages: &[Arc<dyn PackageFormat>], errors: &mut Vec<String>) {
    let Some(HeaderType {
        class,
        type_ver,
        class_ver,
        pkg,
    }) = header_type(h)
    else {
        return;
    };
    let id = h
        .get(&Value::str("id"))
        .and_then(|i| i.as_str())
        .map(|i| format!("object {i} ({class})"))
        .unwrap_or_else(|| format!("an object of class {class}"));
    if pkg.as_deref() == Some(CORE_PACKAGE) {
        return;
    }
    let providers: Vec<&Arc<dyn PackageFormat>> = packages
        .iter()
        .filter(|p| p.classes().iter().any(|c| c == &class))
        .collect();
    if let Some(pn) = &pkg {
        let named: Vec<&Arc<dyn PackageFormat>> =
            packages.iter().filter(|p| p.full_name() == pn).collect();
        if !named.is_empty() && !providers.iter().any(|p| p.full_name() == pn) {
            errors.push(format!(
                "{id}: package {pn} ({}) does not provide class {class}",
                named
                    .iter()
                    .map(|p| p.version().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return;
        }
        if named.is_empty() && !providers.is_empty() {
            errors.push(format!(
                "{id}: the model asks for class {class} from package {pn}, which is not loaded \
                 (the class is provided by {})",
                providers
                    .iter()
                    .map(|p| format!("{}/{}", p.full_name(), p.version()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return;
        }
    }
    let providers: Vec<&Arc<dyn PackageFormat>> = providers
        .into_iter()
        .filter(|p| pkg.as_deref().is_none_or(|n| p.full_name() == n))
        .collect();
    if providers.is_empty() {
        return;
    }
    for (what, ver) in [("type", type_ver), ("classVersion", class_ver)] {
        let Some(ver) = ver else { continue };
        let spec = match VersionSpec::parse(Some(&ver)) {
            Ok(s) => s,
            Err(e) => {
                errors.push(format!("{id}: invalid {what} version {ver:?}: {e}"));
                continue;
            }
        };
        if !providers.iter().any(|p| spec.matches(p.version())) {
            errors.push(format!(
                "{id}: {what} asks for class {class} version {ver} ({spec}), but the loaded \
                 package provides {}",
                providers
                    .iter()
                    .map(|p| format!("{}/{}", p.full_name(), p.version()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
}

// ---- validation and packing -------------------------------------------

/// The logo and supplier logo problems of a package (png, jpeg or gif, at
/// most 500 KiB).
pub fn validate_images(p: &dyn PackageFormat) -> Vec<Error> {
    let mut out = Vec::new();
    if let Err(e) = p.logo() {
        out.push(e);
    }
    if let Err(e) = p.supplier_logo() {
        out.push(e);
    }
    out
}

#[cfg(test)]
mod tests;
