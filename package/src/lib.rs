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
pub mod libraries;
mod pack;

pub use compile::{to_package_checked, CheckedPackage, ClassLoadError};
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

// ---- manifest ---------------------------------------------------------

/// The parsed `manifest.yaml`.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// The manifest file as named in messages.
    pub file: String,
    /// `Format` (default `MuranoPL/1.0`).
    pub format: FormatId,
    /// `Type`: `Application` or `Library`.
    pub package_type: String,
    /// `FullName`.
    pub full_name: String,
    /// `Name` (default: the full name).
    pub display_name: String,
    /// `Description`.
    pub description: Option<String>,
    /// `Author`.
    pub author: Option<String>,
    /// `Supplier` (a mapping: Name, CompanyUrl, Logo, Summary, Description).
    pub supplier: Option<Value>,
    /// `Tags`.
    pub tags: Vec<String>,
    /// `Classes`: class name -> file under `Classes/`, in manifest order.
    pub classes: Vec<(String, String)>,
    /// `Require`: package -> version spec, in manifest order.
    pub require: Vec<(String, VersionSpec)>,
    /// `Version` (default 0.0.0).
    pub version: Version,
    /// `Meta`.
    pub meta: Option<Value>,
    /// `UI`: the file under `UI/` (default `ui.yaml`).
    pub ui: String,
    /// `Logo` (default `logo.png`; a missing default logo is no logo).
    pub logo: Option<String>,
    /// True when `Logo` was given explicitly.
    pub logo_explicit: bool,
    /// Every manifest key, as data.
    pub raw: Dict,
}

fn expect_scalar<'a>(n: &'a Node, key: &str) -> Result<&'a str> {
    match &n.kind {
        NodeKind::Scalar { value, .. } => Ok(value),
        _ => Err(n.pos.error(
            ErrorKind::PackageFormatError,
            format!("manifest {key} must be a scalar, not a {}", n.kind_name()),
        )),
    }
}

fn opt_string(n: Option<&Node>, key: &str) -> Result<Option<String>> {
    match n {
        None => Ok(None),
        Some(n) if n.is_null() => Ok(None),
        Some(n) => Ok(Some(expect_scalar(n, key)?.to_string())),
    }
}

impl Manifest {
    /// Parses manifest text; `file` names it in messages.
    pub fn parse(text: &str, file: &str) -> Result<Manifest> {
        let docs = load_documents(text, file)?;
        let doc = match docs.as_slice() {
            [] => return Err(format_error(format!("{file}: the manifest is empty"))),
            [d] => d,
            [_, d, ..] => {
                return Err(d.pos.error(
                    ErrorKind::PackageFormatError,
                    "the manifest must be a single YAML document",
                ))
            }
        };
        let Some(entries) = doc.as_map() else {
            return Err(doc.pos.error(
                ErrorKind::PackageFormatError,
                format!("the manifest must be a mapping, not a {}", doc.kind_name()),
            ));
        };
        let mut seen: HashMap<&str, &Node> = HashMap::new();
        let mut raw = Dict::default();
        for (k, v) in entries {
            let Some(key) = k.as_scalar() else {
                return Err(k.pos.error(
                    ErrorKind::PackageFormatError,
                    format!("manifest keys must be scalars, not a {}", k.kind_name()),
                ));
            };
            if seen.insert(key, v).is_some() {
                return Err(k.pos.error(
                    ErrorKind::PackageFormatError,
                    format!("duplicate manifest key {key}"),
                ));
            }
            raw.insert(Value::str(key), node_value(v));
        }
        let get = |k: &str| seen.get(k).copied();

        let format = match get("Format") {
            None => FormatId::parse("MuranoPL/1.0").expect("valid"),
            Some(n) if n.is_null() => FormatId::parse("MuranoPL/1.0").expect("valid"),
            Some(n) => FormatId::parse(expect_scalar(n, "Format")?)
                .map_err(|e| n.pos.error(ErrorKind::PackageFormatError, e))?,
        };

        let full_name = match get("FullName") {
            None => {
                return Err(doc.pos.error(
                    ErrorKind::PackageFormatError,
                    "the manifest has no FullName",
                ))
            }
            Some(n) => {
                let s = expect_scalar(n, "FullName")?;
                if !valid_full_name(s) {
                    return Err(n.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("Invalid FullName {s}"),
                    ));
                }
                s.to_string()
            }
        };

        let package_type = match get("Type") {
            None => {
                return Err(doc.pos.error(
                    ErrorKind::PackageFormatError,
                    "the manifest has no Type (Application or Library)",
                ))
            }
            Some(n) => {
                let s = expect_scalar(n, "Type")?;
                if s != "Application" && s != "Library" {
                    return Err(n.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("Invalid package Type {s} (Application or Library)"),
                    ));
                }
                s.to_string()
            }
        };

        let display_name = opt_string(get("Name"), "Name")?.unwrap_or_else(|| full_name.clone());
        let description = opt_string(get("Description"), "Description")?;
        let author = opt_string(get("Author"), "Author")?;

        let supplier = match get("Supplier") {
            None => None,
            Some(n) if n.is_null() => None,
            Some(n) => {
                if n.as_map().is_none() {
                    return Err(n.pos.error(
                        ErrorKind::PackageFormatError,
                        format!(
                            "manifest Supplier must be a mapping, not a {}",
                            n.kind_name()
                        ),
                    ));
                }
                if let Some(l) = n.get("Logo") {
                    if !l.is_null() {
                        expect_scalar(l, "Supplier.Logo")?;
                    }
                }
                Some(node_value(n))
            }
        };

        let tags = match get("Tags") {
            None => Vec::new(),
            Some(n) if n.is_null() => Vec::new(),
            Some(n) => match &n.kind {
                NodeKind::Seq(items) => items
                    .iter()
                    .map(|t| expect_scalar(t, "Tags item").map(str::to_string))
                    .collect::<Result<_>>()?,
                _ => {
                    return Err(n.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("manifest Tags must be a list, not a {}", n.kind_name()),
                    ))
                }
            },
        };

        let mut classes = Vec::new();
        let mut class_names = std::collections::HashSet::new();
        if let Some(n) = get("Classes").filter(|n| !n.is_null()) {
            let Some(m) = n.as_map() else {
                return Err(n.pos.error(
                    ErrorKind::PackageFormatError,
                    format!(
                        "manifest Classes must be a mapping of class name to file, not a {}",
                        n.kind_name()
                    ),
                ));
            };
            for (k, v) in m {
                let name = expect_scalar(k, "Classes key")?;
                if !valid_full_name(name) {
                    return Err(k.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("invalid class name {name}"),
                    ));
                }
                if v.is_null() {
                    return Err(v.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("class {name} has no file"),
                    ));
                }
                let f = expect_scalar(v, "Classes value")?;
                Source::check_rel(f)
                    .map_err(|e| v.pos.error(ErrorKind::PackageFormatError, e.message()))?;
                if !class_names.insert(name) {
                    return Err(k.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("class {name} is listed twice"),
                    ));
                }
                classes.push((name.to_string(), f.to_string()));
            }
        }

        let mut require = Vec::new();
        if let Some(n) = get("Require").filter(|n| !n.is_null()) {
            let Some(m) = n.as_map() else {
                return Err(n.pos.error(
                    ErrorKind::PackageFormatError,
                    format!(
                        "manifest Require must be a mapping of package name to version spec, not a {}",
                        n.kind_name()
                    ),
                ));
            };
            for (k, v) in m {
                let name = expect_scalar(k, "Require key")?;
                if !valid_full_name(name) {
                    return Err(k.pos.error(
                        ErrorKind::PackageFormatError,
                        format!("invalid required package name {name}"),
                    ));
                }
                let spec = if v.is_null() {
                    None
                } else {
                    Some(expect_scalar(v, "Require value")?)
                };
                let spec = VersionSpec::parse(spec)
                    .map_err(|e| v.pos.error(ErrorKind::PackageFormatError, e))?;
                require.push((name.to_string(), spec));
            }
        }

        let version = match get("Version").filter(|n| !n.is_null()) {
            None => Version::new(0, 0, 0),
            Some(n) => parse_version(expect_scalar(n, "Version")?)
                .map_err(|e| n.pos.error(ErrorKind::PackageFormatError, e))?,
        };
        let meta = get("Meta").map(node_value);
        let ui = opt_string(get("UI"), "UI")?.unwrap_or_else(|| "ui.yaml".into());
        if let Some(n) = get("UI") {
            Source::check_rel(&ui)
                .map_err(|e| n.pos.error(ErrorKind::PackageFormatError, e.message()))?;
        }
        let logo_given = opt_string(get("Logo"), "Logo")?;
        if let (Some(n), Some(l)) = (get("Logo"), &logo_given) {
            Source::check_rel(l)
                .map_err(|e| n.pos.error(ErrorKind::PackageFormatError, e.message()))?;
        }
        let logo_explicit = logo_given.is_some();
        let logo = logo_given.or_else(|| Some("logo.png".into()));

        Ok(Manifest {
            file: file.to_string(),
            format,
            package_type,
            full_name,
            display_name,
            description,
            author,
            supplier,
            tags,
            classes,
            require,
            version,
            meta,
            ui,
            logo,
            logo_explicit,
            raw,
        })
    }
}

/// One image of `images.lst`.
#[derive(Clone, Debug)]
pub struct ImageSpec {
    /// `Name`.
    pub name: String,
    /// The whole entry as data (`Hash`, `Meta`, `DiskFormat`, ...).
    pub data: Value,
}

/// Parses `images.lst` (`Images:` a list of mappings with `Name`).
pub fn parse_images(text: &str, file: &str) -> Result<Vec<ImageSpec>> {
    let docs = load_documents(text, file)?;
    let Some(doc) = docs.first() else {
        return Ok(Vec::new());
    };
    if doc.is_null() {
        return Ok(Vec::new());
    }
    let Some(list) = doc.get("Images") else {
        return Err(doc.pos.error(
            ErrorKind::PackageFormatError,
            "images.lst must be a mapping with an Images list",
        ));
    };
    if list.is_null() {
        return Ok(Vec::new());
    }
    let NodeKind::Seq(items) = &list.kind else {
        return Err(list.pos.error(
            ErrorKind::PackageFormatError,
            format!("Images must be a list, not a {}", list.kind_name()),
        ));
    };
    let mut out = Vec::new();
    for it in items {
        let name = match it.get("Name") {
            Some(n) if !n.is_null() => expect_scalar(n, "Images Name")?.to_string(),
            _ => {
                return Err(it.pos.error(
                    ErrorKind::PackageFormatError,
                    "an image must be a mapping with a Name",
                ))
            }
        };
        out.push(ImageSpec {
            name,
            data: node_value(it),
        });
    }
    Ok(out)
}

/// Checks that image bytes are png, jpeg or gif and at most 500 KiB.
pub fn check_image(bytes: &[u8]) -> std::result::Result<(), &'static str> {
    let png = bytes.starts_with(b"\x89PNG\r\n\x1a\n");
    let jpeg = bytes.starts_with(b"\xff\xd8\xff");
    let gif = bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a");
    if !(png || jpeg || gif) || bytes.len() > MAX_IMAGE_SIZE {
        return Err("Unsupported Format");
    }
    Ok(())
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

// ---- HOT packages -----------------------------------------------------

/// A Heat template package (Format Heat.HOT/1.0): `template.yaml` becomes
/// one generated MuranoPL class named after the package, extending
/// `io.murano.Application`, as murano's `hot_package` translates it.
pub struct HotPackage {
    base: PackageBase,
}

fn yq(s: &str) -> String {
    // A double-quoted YAML string, read back as a string.
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn yaql_tag(expr: &str) -> String {
    format!("!yaql {}", yq(expr))
}

fn hot_value_text(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("'{s}'"),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => runtime::json::to_tagged_string(other),
    }
}

fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Float(f) => Some(*f as i64),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn dget<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    match v {
        Value::Dict(d) => d.get(&Value::str(k)),
        _ => None,
    }
}

/// The contract of a HOT parameter (murano's `_translate_param_to_contract`).
pub fn hot_param_contract(param: &Value) -> std::result::Result<String, String> {
    let ty = dget(param, "type").and_then(|t| t.as_str()).unwrap_or("");
    let mut c = String::from("$");
    match ty {
        "string" | "comma_delimited_list" | "json" => c.push_str(".string()"),
        "number" => c.push_str(".int()"),
        "boolean" => c.push_str(".bool()"),
        other => return Err(format!("Unsupported parameter type {other}")),
    }
    let constraints = match dget(param, "constraints") {
        Some(Value::List(l)) => l.as_slice().to_vec(),
        _ => Vec::new(),
    };
    let min_max = |v: &Value| {
        (
            dget(v, "min").and_then(as_int),
            dget(v, "max").and_then(as_int),
        )
    };
    for k in &constraints {
        if let Some(Value::List(vals)) = dget(k, "allowed_values") {
            let items: Vec<String> = vals.iter().map(hot_value_text).collect();
            c.push_str(&format!(".check($ in list({}))", items.join(", ")));
        } else if let Some(l) = dget(k, "length") {
            match min_max(l) {
                (Some(a), Some(b)) => {
                    c.push_str(&format!(".check(len($) >= {a} and len($) <= {b})"))
                }
                (Some(a), None) => c.push_str(&format!(".check(len($) >= {a})")),
                (None, Some(b)) => c.push_str(&format!(".check(len($) <= {b})")),
                _ => {}
            }
        } else if let Some(r) = dget(k, "range") {
            match min_max(r) {
                (Some(a), Some(b)) => c.push_str(&format!(".check($ >= {a} and $ <= {b})")),
                (Some(a), None) => c.push_str(&format!(".check($ >= {a})")),
                (None, Some(b)) => c.push_str(&format!(".check($ <= {b})")),
                _ => {}
            }
        } else if let Some(p) = dget(k, "allowed_pattern") {
            let p = p
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| hot_value_text(p));
            c.push_str(&format!(".check(matches($, '{p}'))"));
        }
    }
    Ok(c)
}

impl HotPackage {
    fn new(base: PackageBase) -> Result<HotPackage> {
        Ok(HotPackage { base })
    }

    fn template(&self) -> Result<(String, Value)> {
        let src = &self.base.source;
        let file = src.display("template.yaml");
        let Some(text) = src.read_text("template.yaml")? else {
            return Err(class_error(format!(
                "{file}: File with class definition not found"
            )));
        };
        let docs = load_documents(&text, &file)?;
        let hot = docs.first().map(node_value).unwrap_or(Value::Null);
        if dget(&hot, "resources").is_none() {
            return Err(format_error(format!("{file}: Not a HOT template")));
        }
        Ok((text, hot))
    }

    /// True when `Resources/HotEnvironments` holds files (then parameters
    /// are not validated by contracts).
    fn has_environments(&self) -> bool {
        !self
            .base
            .source
            .list("Resources/HotEnvironments")
            .is_empty()
    }

    /// The `Resources/HotFiles` tree, relative paths.
    pub fn hot_files(&self) -> Vec<String> {
        self.base.source.list("Resources/HotFiles")
    }

    /// The generated MuranoPL class text.
    pub fn translate_class(&self) -> Result<String> {
        let (_, hot) = self.template()?;
        let name = self.full_name();
        let mut y = String::new();
        y.push_str(&format!(
            "Name: {}\nExtends: io.murano.Application\n",
            yq(name)
        ));
        y.push_str("Properties:\n");
        y.push_str(&format!(
            "  generatedHeatStackName:\n    Contract: {}\n    Usage: Out\n",
            yaql_tag("$.string()")
        ));
        y.push_str(&format!(
            "  hotEnvironment:\n    Contract: {}\n    Usage: In\n",
            yaql_tag("$.string()")
        ));
        y.push_str(&format!(
            "  name:\n    Contract: {}\n    Usage: In\n",
            yaql_tag("$.string().notNull()")
        ));
        y.push_str("  templateParameters:\n    Contract:");
        let params = match dget(&hot, "parameters") {
            Some(Value::Dict(d)) if !self.has_environments() => d.as_ref().clone(),
            _ => Dict::default(),
        };
        if params.is_empty() {
            y.push_str(" {}\n");
        } else {
            y.push('\n');
            for (k, v) in &params {
                let key = k
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| hot_value_text(k));
                let c = hot_param_contract(v).map_err(format_error)?;
                y.push_str(&format!("      {}: {}\n", yq(&key), yaql_tag(&c)));
            }
        }
        y.push_str("    Default: {}\n    Usage: In\n");
        let outputs: Vec<String> = match dget(&hot, "outputs") {
            Some(Value::Dict(d)) => d
                .keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        y.push_str("  templateOutputs:\n    Contract:");
        if outputs.is_empty() {
            y.push_str(" {}\n");
        } else {
            y.push('\n');
            for k in &outputs {
                y.push_str(&format!("      {}: {}\n", yq(k), yaql_tag("$.string()")));
            }
        }
        y.push_str("    Default: {}\n    Usage: Out\n");
        // Methods (murano's _generate_workflow).
        let e = |s: &str| yaql_tag(s);
        y.push_str("Methods:\n");
        y.push_str("  .init:\n    Body:\n");
        y.push_str(&format!(
            "      - {}: {}\n",
            e("$environment"),
            e("$.find('io.murano.Environment').require()")
        ));
        y.push_str(&format!(
            "      - {}: {}\n",
            e("$generatedHeatStackName"),
            e("$.getAttr(generatedHeatStackName, null)")
        ));
        y.push_str(&format!(
            "      - If: {}\n        Then:\n          - {}: {}\n          - {}\n",
            e("$generatedHeatStackName = null"),
            e("$generatedHeatStackName"),
            e("randomName()"),
            e("$.setAttr(generatedHeatStackName, $generatedHeatStackName)")
        ));
        y.push_str(&format!(
            "      - {}: {}\n",
            e("$.generatedHeatStackName"),
            e("$generatedHeatStackName")
        ));
        y.push_str("  deploy:\n    Body:\n");
        let files = self.hot_files();
        let mut files_map = String::from("{");
        for (i, f) in files.iter().enumerate() {
            if i > 0 {
                files_map.push_str(", ");
            }
            files_map.push_str(&format!(
                "{}: {}",
                yq(&format!("../{f}")),
                e(&format!("$resources.string('HotFiles/{f}')"))
            ));
        }
        files_map.push('}');
        let steps: Vec<String> = vec![
            format!("{}: {}", e("$environment"), e("$.find('io.murano.Environment').require()")),
            format!("{}: {}", e("$reporter"), e("$environment.reporter")),
            format!(
                "{}: {}",
                e("$stack"),
                e("new('io.murano.system.HeatStack', $environment, name => $.generatedHeatStackName)")
            ),
            e("$reporter.report($this, 'Application deployment has started')"),
            format!("{}: {}", e("$resources"), e("new('io.murano.system.Resources')")),
            format!("{}: {}", e("$template"), e("$resources.yaml(type($this))")),
            format!("{}: {}", e("$parameters"), e("$.templateParameters")),
            format!("{}: {}", e("$files"), files_map),
            format!("{}: {}", e("$hotEnv"), e("$.hotEnvironment")),
            e("$stack.setTemplate($template)"),
            e("$stack.setParameters($parameters)"),
            e("$stack.setFiles($files)"),
            e("$stack.setHotEnvironment($hotEnv)"),
            e("$reporter.report($this, 'Stack creation has started')"),
        ];
        for s in steps {
            y.push_str(&format!("      - {s}\n"));
        }
        y.push_str("      - Try:\n          - ");
        y.push_str(&e("$stack.push()"));
        y.push_str("\n        Catch:\n          - As: e\n            Do:\n              - ");
        y.push_str(&e("$reporter.report_error($this, $e.message)"));
        y.push_str("\n              - Rethrow:\n        Else:\n          - ");
        y.push_str(&format!("{}: {}\n", e("$outputs"), e("$stack.output()")));
        for k in &outputs {
            y.push_str(&format!(
                "          - {}: {}\n",
                e(&format!("$.templateOutputs.{k}")),
                e(&format!("$outputs.{k}"))
            ));
        }
        y.push_str(&format!(
            "          - {}\n          - {}\n",
            e("$reporter.report($this, 'Stack was successfully created')"),
            e("$reporter.report($this, 'Application deployment has finished')")
        ));
        y.push_str("  .destroy:\n    Body:\n");
        y.push_str(&format!(
            "      - {}: {}\n      - {}\n",
            e("$stack"),
            e("new('io.murano.system.HeatStack', $this, name => $.generatedHeatStackName)"),
            e("$stack.delete()")
        ));
        Ok(y)
    }

    /// The generated UI definition, as murano's `_translate_ui`
    /// (murano/packages/hot_package.py) writes it: `group0` holds the
    /// hidden `title` and the application name; each `parameter_groups`
    /// entry becomes a form of the parameters it names that exist; the
    /// parameters no group names make one last form.
    pub fn translate_ui(&self) -> Result<String> {
        let (_, hot) = self.template()?;
        let name = self.full_name();
        let version = self.version().to_string();
        let params = match dget(&hot, "parameters") {
            Some(Value::Dict(d)) => d.as_ref().clone(),
            _ => Dict::default(),
        };
        let mut groups: Vec<Vec<String>> = Vec::new();
        if let Some(Value::List(gs)) = dget(&hot, "parameter_groups") {
            for g in gs.iter() {
                // Iterating a dict of parameters gives its names.
                let listed: Vec<Value> = match dget(g, "parameters") {
                    Some(Value::List(ps)) => ps.to_vec(),
                    Some(Value::Dict(ps)) => ps.keys().cloned().collect(),
                    _ => Vec::new(),
                };
                let names: Vec<String> = listed
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .filter(|p| {
                        params
                            .get(&Value::str(p.as_str()))
                            .is_some_and(Value::truthy)
                    })
                    .collect();
                groups.push(names);
            }
        }
        let rest: Vec<String> = params
            .keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .filter(|k| !groups.iter().flatten().any(|g| g == k))
            .collect();
        if !rest.is_empty() {
            groups.push(rest);
        }
        let mut y = String::from("Version: 2\nApplication:\n  \"?\":\n");
        y.push_str(&format!(
            "    \"classVersion\": {}\n    \"package\": {}\n    \"type\": {}\n",
            yq(&version),
            yq(name),
            yq(name)
        ));
        y.push_str(&format!("  \"name\": {}\n", yaql_tag("$.group0.name")));
        y.push_str("  \"templateParameters\":\n");
        if groups.iter().all(Vec::is_empty) {
            y.push_str("    {}\n");
        }
        for (i, g) in groups.iter().enumerate() {
            for p in g {
                let expr = format!("$.group{}.{p}", i + 1);
                y.push_str(&format!("    {}: {}\n", yq(p), yaql_tag(&expr)));
            }
        }
        let title = self.description().unwrap_or_default();
        y.push_str(&format!(
            "Forms:\n  - group0:\n      fields:\n\
             \x20       - name: title\n          type: string\n          required: false\n          hidden: true\n          description: {}\n\
             \x20       - name: name\n          type: string\n          label: Application Name\n          required: true\n\
             \x20         description: Enter a desired name for the application. Just A-Z, a-z, 0-9, and dash are allowed\n",
            yq(title)
        ));
        for (i, g) in groups.iter().enumerate() {
            y.push_str(&format!("  - group{}:\n      fields:\n", i + 1));
            if g.is_empty() {
                y.push_str("        []\n");
            }
            for p in g {
                let def = params
                    .get(&Value::str(p.as_str()))
                    .cloned()
                    .unwrap_or(Value::Null);
                y.push_str(&hot_ui_field(p, &def));
            }
        }
        Ok(y)
    }
}

/// One generated form field of a HOT parameter (murano's
/// `_translate_ui_parameter`): its type, label (the name in title case
/// unless given), description, default (`initial`, then not required) and
/// constraints (`length` as `minLength`/`maxLength`; `range`,
/// `allowed_values` and `allowed_pattern` as validators with the
/// constraint's description as message).
fn hot_ui_field(name: &str, def: &Value) -> String {
    let ty = match dget(def, "type").and_then(|t| t.as_str()) {
        Some("number") => "integer",
        Some("boolean") => "boolean",
        _ => "string",
    };
    let label = dget(def, "label")
        .and_then(|v| v.as_str())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| title_case(name).replace('_', " "));
    let mut y = format!(
        "        - name: {}\n          type: {ty}\n          label: {}\n",
        yq(name),
        yq(&label)
    );
    if let Some(d) = dget(def, "description") {
        y.push_str(&format!(
            "          description: {}\n",
            yq(&runtime::pyrepr::to_str(d))
        ));
    }
    match dget(def, "default") {
        Some(d) => y.push_str(&format!(
            "          initial: {}\n          required: false\n",
            runtime::json::to_tagged_string(d)
        )),
        None => y.push_str("          required: true\n"),
    }
    let mut validators = Vec::new();
    let (mut min_len, mut max_len): (Option<i64>, Option<i64>) = (None, None);
    if let Some(Value::List(cs)) = dget(def, "constraints") {
        for c in cs.iter() {
            let message = dget(c, "description").map(|m| yq(&runtime::pyrepr::to_str(m)));
            let check = if let Some(spec) = dget(c, "length") {
                if let Some(m) = dget(spec, "min").and_then(as_int) {
                    min_len = Some(min_len.map_or(m, |x| x.max(m)));
                }
                if let Some(m) = dget(spec, "max").and_then(as_int) {
                    max_len = Some(max_len.map_or(m, |x| x.min(m)));
                }
                continue;
            } else if let Some(spec) = dget(c, "range") {
                let (lo, hi) = (dget(spec, "min"), dget(spec, "max"));
                let bound = |v: &Value| runtime::pyrepr::to_str(v);
                let expr = match (lo, hi) {
                    (Some(l), Some(h)) => format!("$ >= {} and $ <= {}", bound(l), bound(h)),
                    (Some(l), None) => format!("$ >= {}", bound(l)),
                    (None, Some(h)) => format!("$ <= {}", bound(h)),
                    (None, None) => continue,
                };
                yaql_tag(&expr)
            } else if let Some(Value::List(vals)) = dget(c, "allowed_values") {
                let list: Vec<String> = vals.iter().map(hot_value_text).collect();
                yaql_tag(&format!("$ in list({})", list.join(", ")))
            } else if let Some(p) = dget(c, "allowed_pattern") {
                format!(
                    "\n              regexpValidator: {}",
                    yq(&runtime::pyrepr::to_str(p))
                )
            } else {
                continue;
            };
            validators.push((check, message));
        }
    }
    if let Some(m) = min_len {
        y.push_str(&format!("          minLength: {m}\n"));
    }
    if let Some(m) = max_len {
        y.push_str(&format!("          maxLength: {m}\n"));
    }
    if !validators.is_empty() {
        y.push_str("          validators:\n");
        for (check, message) in validators {
            y.push_str(&format!("            - expr: {check}\n"));
            if let Some(m) = message {
                y.push_str(&format!("              message: {m}\n"));
            }
        }
    }
    y
}

/// Python's `str.title()`: each run of letters starts upper case, the rest
/// lower case.
fn title_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_letter {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_letter = true;
        } else {
            out.push(c);
            prev_letter = false;
        }
    }
    out
}

impl PackageFormat for HotPackage {
    fn base(&self) -> &PackageBase {
        &self.base
    }
    fn classes(&self) -> Vec<String> {
        vec![self.full_name().to_string()]
    }
    fn get_class(&self, name: &str) -> Result<ClassSource> {
        if name != self.full_name() {
            return Err(class_error(format!(
                "Class {name} not defined in this package"
            )));
        }
        Ok(ClassSource {
            file: format!("{}(generated)", self.base.source.display("template.yaml")),
            text: self.translate_class()?,
        })
    }
    fn ui(&self) -> Result<Option<String>> {
        self.translate_ui().map(Some)
    }
    fn get_resource(&self, name: &str) -> Result<Vec<u8>> {
        // The template itself is the resource named after the package.
        if name == self.full_name() {
            let (text, _) = self.template()?;
            return Ok(text.into_bytes());
        }
        let rel = format!("Resources/{name}");
        self.base
            .source
            .read(&rel)?
            .ok_or_else(|| load_error(format!("resource {name} not found")))
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
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn manifest(text: &str) -> Result<Manifest> {
        Manifest::parse(text, "manifest.yaml")
    }

    #[test]
    fn formats() {
        let f = FormatId::parse("1.3").unwrap();
        assert_eq!(f.to_string(), "MuranoPL/1.3.0");
        let f = FormatId::parse("Heat.HOT/1.0").unwrap();
        assert_eq!(
            (f.name.as_str(), f.version.clone()),
            ("Heat.HOT", v("1.0.0"))
        );
        assert_eq!(FormatId::parse("2").unwrap().version, v("2.0.0"));
        assert!(FormatId::parse("MuranoPL/x.y").is_err());
        assert!(FormatId::parse("/1.0").is_err());
        let r = FormatRegistry::builtin();
        for ok in [
            "1.0",
            "1.1",
            "1.2",
            "1.3",
            "1.4",
            "MuranoPL/1.4.2",
            "Heat.HOT/1.0",
        ] {
            assert!(r.find(&FormatId::parse(ok).unwrap()).is_some(), "{ok}");
        }
        for bad in ["1.5", "2.0", "0.9", "Heat.HOT/2.0", "Cloudify.TOSCA/1.0"] {
            assert!(r.find(&FormatId::parse(bad).unwrap()).is_none(), "{bad}");
        }
    }

    #[test]
    fn manifest_fields() {
        let m = manifest(
            "Format: 1.3\nType: Application\nFullName: com.example.App\nName: My App\n\
             Description: d\nAuthor: 'A, Inc'\nTags: [a, b]\nClasses:\n  com.example.App: App.yaml\n\
             Require:\n  com.example.Lib:\n  io.murano: '>=0'\nVersion: 1.2\nMeta: {x: 1}\n\
             Supplier:\n  Name: S\n  Logo: s.png\n",
        )
        .unwrap();
        assert_eq!(m.format.to_string(), "MuranoPL/1.3.0");
        assert_eq!(m.full_name, "com.example.App");
        assert_eq!(m.display_name, "My App");
        assert_eq!(m.author.as_deref(), Some("A, Inc"));
        assert_eq!(m.tags, ["a", "b"]);
        assert_eq!(
            m.classes,
            [("com.example.App".to_string(), "App.yaml".to_string())]
        );
        assert_eq!(m.require.len(), 2);
        assert_eq!(m.version, v("1.2.0"));
        assert_eq!(m.ui, "ui.yaml");
        assert!(!m.logo_explicit);
        let d = manifest("FullName: a.b\nType: Library\n").unwrap();
        assert_eq!(d.format.to_string(), "MuranoPL/1.0.0");
        assert_eq!(d.display_name, "a.b");
        assert_eq!(d.version, v("0.0.0"));
    }

    #[test]
    fn manifest_errors() {
        let cases: &[(&str, &str)] = &[
            ("", "the manifest is empty"),
            ("- a\n", "manifest.yaml:1:1: the manifest must be a mapping"),
            ("Type: Application\n", "has no FullName"),
            (
                "FullName: .a\nType: Library\n",
                "manifest.yaml:1:11: Invalid FullName .a",
            ),
            ("FullName: a b\nType: Library\n", "Invalid FullName a b"),
            ("FullName: a\n", "has no Type"),
            (
                "FullName: a\nType: App\n",
                "manifest.yaml:2:7: Invalid package Type App",
            ),
            (
                "FullName: a\nType: Library\nFormat: 1.x\n",
                "manifest.yaml:3:9: invalid Format",
            ),
            (
                "FullName: a\nType: Library\nTags: x\n",
                "manifest.yaml:3:7: manifest Tags must be a list",
            ),
            (
                "FullName: a\nType: Library\nClasses: [a]\n",
                "manifest.yaml:3:10: manifest Classes must be a mapping",
            ),
            (
                "FullName: a\nType: Library\nClasses:\n  a.B:\n",
                "class a.B has no file",
            ),
            (
                "FullName: a\nType: Library\nClasses:\n  a.B: ../x.yaml\n",
                "manifest.yaml:4:8: invalid path",
            ),
            (
                "FullName: a\nType: Library\nRequire: [x]\n",
                "manifest Require must be a mapping",
            ),
            (
                "FullName: a\nType: Library\nRequire:\n  b: '~~1'\n",
                "manifest.yaml:4:6: invalid version spec",
            ),
            (
                "FullName: a\nType: Library\nVersion: abc\n",
                "manifest.yaml:3:10: invalid version \"abc\"",
            ),
            (
                "FullName: a\nType: Library\nFullName: b\n",
                "manifest.yaml:3:1: duplicate manifest key FullName",
            ),
            (
                "FullName: a\nType: Library\nSupplier: x\n",
                "manifest Supplier must be a mapping",
            ),
            (
                "FullName: [a]\nType: Library\n",
                "manifest.yaml:1:11: manifest FullName must be a scalar",
            ),
            (
                "FullName: a\nType: Library\n---\nx: 1\n",
                "single YAML document",
            ),
            ("FullName: a\n  Type: : x\n", "manifest.yaml:"),
        ];
        for (text, want) in cases {
            let e = manifest(text)
                .err()
                .unwrap_or_else(|| panic!("{text:?} should fail"));
            assert!(
                e.message().contains(want),
                "{text:?}: {} (want {want})",
                e.message()
            );
        }
    }

    #[test]
    fn version_specs() {
        let m = |spec: Option<&str>, ver: &str| VersionSpec::parse(spec).unwrap().matches(&v(ver));
        // Empty = 0 = any 0.x.
        assert!(m(None, "0.0.0") && m(None, "0.9.1") && !m(None, "1.0.0"));
        // A partial version is a range.
        assert!(m(Some("1.2"), "1.2.0") && m(Some("1.2"), "1.2.9") && !m(Some("1.2"), "1.3.0"));
        assert!(m(Some("==1"), "1.7.0") && !m(Some("==1"), "2.0.0"));
        assert!(m(Some("1.2.3"), "1.2.3") && !m(Some("1.2.3"), "1.2.4"));
        assert!(m(Some(">=1.0"), "3.0.0") && !m(Some(">=1.0"), "0.9.0"));
        assert!(m(Some(">1"), "2.0.0") && !m(Some(">1"), "1.9.0"));
        assert!(m(Some("<2"), "1.9.9") && !m(Some("<2"), "2.0.0"));
        assert!(m(Some("<=1.1"), "1.1.5") && !m(Some("<=1.1"), "1.2.0"));
        assert!(
            m(Some("!=1.1"), "1.0.0") && m(Some("!=1.1"), "1.2.0") && !m(Some("!=1.1"), "1.1.3")
        );
        assert!(m(Some(">=1.0, <2.0"), "1.5.0") && !m(Some(">=1.0,<2.0"), "2.0.0"));
        assert!(m(Some("*"), "7.0.0"));
        assert!(VersionSpec::parse(Some("abc")).is_err());
    }

    struct Fake {
        base: PackageBase,
    }
    impl PackageFormat for Fake {
        fn base(&self) -> &PackageBase {
            &self.base
        }
        fn classes(&self) -> Vec<String> {
            Vec::new()
        }
        fn get_class(&self, name: &str) -> Result<ClassSource> {
            Err(class_error(name.to_string()))
        }
        fn ui(&self) -> Result<Option<String>> {
            Ok(None)
        }
    }

    fn fake(name: &str, version: &str, require: &[(&str, &str)]) -> Arc<dyn PackageFormat> {
        let mut text = format!("FullName: {name}\nType: Library\nVersion: {version}\n");
        if !require.is_empty() {
            text.push_str("Require:\n");
            for (n, s) in require {
                text.push_str(&format!("  {n}: '{s}'\n"));
            }
        }
        Arc::new(Fake {
            base: PackageBase {
                source: Source::Dir(PathBuf::from("/nonexistent")),
                manifest: manifest(&text).unwrap(),
            },
        })
    }

    fn loader(pkgs: &[Arc<dyn PackageFormat>]) -> PackageLoader {
        let mut l = PackageLoader {
            registry: FormatRegistry::builtin(),
            found: BTreeMap::new(),
            broken: Vec::new(),
            repositories: Vec::new(),
        };
        for p in pkgs {
            l.add(PathBuf::from(p.full_name()), p.clone());
        }
        l
    }

    fn names(ps: &[Arc<dyn PackageFormat>]) -> Vec<String> {
        let mut v: Vec<String> = ps
            .iter()
            .map(|p| format!("{}/{}", p.full_name(), p.version()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn resolution() {
        let l = loader(&[
            fake("lib", "1.0.0", &[]),
            fake("lib", "1.5.0", &[]),
            fake("lib", "2.0.0", &[]),
            fake("mid", "1.0.0", &[("lib", ">=1.2")]),
            fake("old", "1.0.0", &[("lib", "1")]),
            fake("new", "1.0.0", &[("lib", "2")]),
        ]);
        // Highest matching version.
        let root = fake("app", "1.0.0", &[("lib", ">=1.0")]);
        assert_eq!(names(&l.resolve(&root).unwrap()), ["lib/2.0.0"]);
        // One version satisfies both: fewest versions.
        let root = fake("app", "1.0.0", &[("old", "1"), ("mid", "1")]);
        assert_eq!(
            names(&l.resolve(&root).unwrap()),
            ["lib/1.5.0", "mid/1.0.0", "old/1.0.0"]
        );
        // A version chosen first and dropped as redundant leaves nothing
        // behind: `lib 2.1.0` would need `extra`, but `exact` pins 2.0.0,
        // which satisfies `>=2` too.
        let l2 = loader(&[
            fake("lib", "2.0.0", &[]),
            fake("lib", "2.1.0", &[("extra", "1")]),
            fake("extra", "1.0.0", &[]),
            fake("exact", "1.0.0", &[("lib", "==2.0.0")]),
        ]);
        let root = fake("app", "1.0.0", &[("lib", ">=2"), ("exact", "1")]);
        assert_eq!(
            names(&l2.resolve(&root).unwrap()),
            ["exact/1.0.0", "lib/2.0.0"]
        );
        // Incompatible specs: side by side.
        let root = fake("app", "1.0.0", &[("old", "1"), ("new", "1")]);
        assert_eq!(
            names(&l.resolve(&root).unwrap()),
            ["lib/1.5.0", "lib/2.0.0", "new/1.0.0", "old/1.0.0"]
        );
        // Missing and unsatisfiable requirements, core always there.
        let root = fake(
            "app",
            "1.0.0",
            &[("nope", ""), ("lib", "3"), ("io.murano", "")],
        );
        let e = l.resolve(&root).err().unwrap();
        assert!(
            e.message()
                .contains("required package nope (>=0.0.0,<1.0.0-0) of app is not found"),
            "{}",
            e.message()
        );
        assert!(
            e.message().contains(
                "lib (>=3.0.0,<4.0.0-0) of app: no matching version (found 2.0.0, 1.5.0, 1.0.0)"
            ),
            "{}",
            e.message()
        );
    }

    #[test]
    fn images() {
        assert!(check_image(b"\x89PNG\r\n\x1a\nxxxx").is_ok());
        assert!(check_image(b"GIF89a..").is_ok());
        assert!(check_image(b"not an image").is_err());
        let imgs = parse_images("Images:\n- Name: a\n  Hash: x\n", "images.lst").unwrap();
        assert_eq!(imgs[0].name, "a");
        let e = parse_images("Images:\n- Hash: x\n", "images.lst").unwrap_err();
        assert!(
            e.message().starts_with("images.lst:2:3:"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn hot_contracts() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/packages");
        let f = fixtures.join("hot_package/test.hot.1/properties_manifest.yaml");
        let Ok(text) = std::fs::read_to_string(&f) else {
            eprintln!("skipped: no fixtures at {}", f.display());
            return;
        };
        let hot = node_value(&load_documents(&text, "t").unwrap()[0]);
        let params = dget(&hot, "parameters").unwrap();
        let p = |k: &str| hot_param_contract(dget(params, k).unwrap()).unwrap();
        assert_eq!(p("param1"), "$.bool().check($ in list(True, False))");
        assert_eq!(
            p("param2"),
            "$.string().check($ in list('bar')).check(len($) <= 50).check(len($) >= 0).check(matches($, '[A-Za-z0-9]'))"
        );
        assert_eq!(
            p("param3"),
            "$.int().check($ in list(0, 1, 2, 3, 4)).check(len($) >= 0 and len($) <= 5).check($ >= 0 and $ <= 4)"
        );
        assert_eq!(p("param4"), "$.int().check($ >= -1000).check($ <= 1000)");
        assert_eq!(p("param5"), "$.string()");
        assert_eq!(p("param6"), "$.string()");
        let bad = node_value(&load_documents("type: float\n", "t").unwrap()[0]);
        assert!(hot_param_contract(&bad)
            .unwrap_err()
            .contains("Unsupported parameter type"));
    }

    fn hot(dir: &str) -> Option<HotPackage> {
        let d = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/packages/hot_package")
            .join(dir);
        if !d.is_dir() {
            eprintln!("skipped: no fixtures at {}", d.display());
            return None;
        }
        let m = manifest(
            "Format: Heat.HOT/1.0\nFullName: FullTestName\nVersion: 1.0.0\nType: Application\n",
        )
        .unwrap();
        Some(HotPackage {
            base: PackageBase {
                source: Source::Dir(d),
                manifest: m,
            },
        })
    }

    #[test]
    fn hot_package() {
        let Some(p) = hot("test.hot.1") else { return };
        assert_eq!(p.classes(), ["FullTestName"]);
        assert!(p
            .get_class("Other")
            .unwrap_err()
            .message()
            .contains("not defined"));
        let (pkg, errors) = to_package(&p);
        assert!(errors.is_empty(), "{errors:?}");
        let d = pkg.decl("FullTestName").unwrap();
        assert_eq!(d.extends, ["io.murano.Application"]);
        let props: Vec<&str> = d.properties.iter().map(|p| p.name.as_str()).collect();
        for want in [
            "generatedHeatStackName",
            "hotEnvironment",
            "name",
            "templateParameters",
            "templateOutputs",
        ] {
            assert!(props.contains(&want), "{props:?}");
        }
        let ex = engine::Executor::new(vec![pkg]);
        ex.class("FullTestName").unwrap();
        let ui = p.ui().unwrap().unwrap();
        let flat: String = ui.chars().filter(|c| !c.is_whitespace()).collect();
        for want in [
            "\"classVersion\":\"1.0.0\"",
            "\"package\":\"FullTestName\"",
            "\"name\":!yaql\"$.group0.name\"",
            "\"bar\":!yaql\"$.group1.bar\"",
            "\"foo\":!yaql\"$.group1.foo\"",
        ] {
            assert!(flat.contains(want), "{want} not in {ui}");
        }
        let Some(p2) = hot("test.hot.2") else { return };
        assert!(p2
            .translate_class()
            .unwrap_err()
            .message()
            .contains("Not a HOT template"));
    }

    /// The generated UI as murano's `_translate_ui_parameters` and
    /// `_translate_ui_parameter` (murano/packages/hot_package.py) make it:
    /// a hidden `title` and the name first; grouped parameters, then the
    /// rest; labels in title case; a default makes a field optional;
    /// constraints become length limits and validators; `hidden:`
    /// parameters are shown like any other.
    #[test]
    fn hot_ui_follows_murano() {
        let dir = std::env::temp_dir().join(format!("muranopl-hot-ui-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("template.yaml"),
            "heat_template_version: 2013-05-23\nresources: {}\nparameters:\n  \
             key_name: {type: string, hidden: true}\n  \
             flavor: {type: string, default: m1.small, constraints: [{allowed_values: [m1.small, m1.big], description: pick one}]}\n  \
             count: {type: number, constraints: [{range: {min: 1, max: 3}}, {length: {min: 2}}]}\n  \
             tag: {type: string, constraints: [{allowed_pattern: '[a-z]+'}]}\n\
             parameter_groups:\n  - parameters: [flavor, missing]\n",
        )
        .unwrap();
        let p = HotPackage {
            base: PackageBase {
                source: Source::Dir(dir.clone()),
                manifest: manifest(
                    "Format: Heat.HOT/1.0\nFullName: ex.Hot\nType: Application\nDescription: A stack\n",
                )
                .unwrap(),
            },
        };
        let ui = p.translate_ui().unwrap();
        let doc = node_value(&load_documents(&ui, "ui").unwrap()[0]);
        let forms = dget(&doc, "Forms").unwrap().clone();
        let fields = |i: usize| -> Vec<Value> {
            let Value::List(f) = &forms else {
                panic!("{ui}")
            };
            let g = dget(&f[i], &format!("group{i}")).unwrap();
            match dget(g, "fields") {
                Some(Value::List(l)) => l.to_vec(),
                _ => Vec::new(),
            }
        };
        let names = |i: usize| -> Vec<String> {
            fields(i)
                .iter()
                .map(|f| runtime::pyrepr::to_str(dget(f, "name").unwrap()))
                .collect()
        };
        assert_eq!(names(0), ["title", "name"]);
        assert_eq!(names(1), ["flavor"]);
        assert_eq!(names(2), ["key_name", "count", "tag"]);
        let field = |i: usize, n: &str| {
            fields(i)
                .into_iter()
                .find(|f| dget(f, "name").and_then(|v| v.as_str()) == Some(n))
                .unwrap()
        };
        let title = field(0, "title");
        assert_eq!(dget(&title, "hidden"), Some(&Value::Bool(true)));
        assert_eq!(
            dget(&title, "description").and_then(|v| v.as_str()),
            Some("A stack")
        );
        let key = field(2, "key_name");
        assert_eq!(
            dget(&key, "label").and_then(|v| v.as_str()),
            Some("Key Name")
        );
        assert_eq!(dget(&key, "hidden"), None);
        assert_eq!(dget(&key, "required"), Some(&Value::Bool(true)));
        let flavor = field(1, "flavor");
        assert_eq!(dget(&flavor, "required"), Some(&Value::Bool(false)));
        let count = field(2, "count");
        assert_eq!(dget(&count, "minLength").and_then(as_int), Some(2));
        assert!(ui.contains("expr: !yaql \"$ in list('m1.small', 'm1.big')\"\n              message: \"pick one\""), "{ui}");
        assert!(ui.contains("expr: !yaql \"$ >= 1 and $ <= 3\""), "{ui}");
        assert!(ui.contains("regexpValidator: \"[a-z]+\""), "{ui}");
        assert!(ui.contains("\"count\": !yaql \"$.group2.count\""), "{ui}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn zip_package() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("muranopl-zip-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.zip");
        {
            let f = std::fs::File::create(&path).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let o = zip::write::SimpleFileOptions::default();
            z.start_file("manifest.yaml", o).unwrap();
            z.write_all(b"Format: 1.3\nType: Library\nFullName: z.p\nClasses:\n  z.p.A: A.yaml\n")
                .unwrap();
            z.start_file("Classes/A.yaml", o).unwrap();
            z.write_all(b"Namespaces: {=: z.p}\nName: A\n").unwrap();
            z.start_file("Resources/r.txt", o).unwrap();
            z.write_all(b"hello").unwrap();
            z.finish().unwrap();
        }
        let p = FormatRegistry::builtin().load(&path).unwrap();
        assert_eq!(p.full_name(), "z.p");
        assert!(p
            .get_class("z.p.A")
            .unwrap()
            .file
            .ends_with("p.zip!/Classes/A.yaml"));
        assert_eq!(p.get_resource("r.txt").unwrap(), b"hello");
        let (pkg, errors) = to_package(&*p);
        assert!(errors.is_empty());
        assert_eq!(pkg.class_names(), ["z.p.A"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn fixtures() -> Option<PathBuf> {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/packages");
        if d.is_dir() {
            Some(d)
        } else {
            eprintln!("skipped: no fixtures at {}", d.display());
            None
        }
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "muranopl-pkg-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            let p = e.path();
            let t = to.join(e.file_name());
            if p.is_dir() {
                copy_dir(&p, &t);
            } else {
                std::fs::copy(&p, &t).unwrap();
            }
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn fixture_test_packages() {
        let Some(f) = fixtures() else { return };
        let r = FormatRegistry::builtin();
        let hot = r.load(&f.join("test_packages/test.hot.v1.app")).unwrap();
        assert_eq!(hot.format_name(), "Heat.HOT");
        assert_eq!(hot.classes(), ["test.hot.v1.app"]);
        let (pkg, errors) = to_package(&*hot);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            pkg.decl("test.hot.v1.app").unwrap().extends,
            ["io.murano.Application"]
        );
        let mpl = r.load(&f.join("test_packages/test.mpl.v1.app")).unwrap();
        assert_eq!(mpl.runtime_version(), &v("1.0.0"));
        for p in [&hot, &mpl] {
            let s = p.supplier().unwrap();
            let g = |k: &str| dget(s, k).cloned().unwrap_or(Value::Null);
            assert_eq!(g("Name").as_str(), Some("Supplier Name"));
            assert_eq!(g("Logo").as_str(), Some("test_supplier_logo.png"));
            assert_eq!(
                dget(&g("CompanyUrl"), "Link").and_then(|l| l.as_str()),
                Some("http://example.com")
            );
            assert_eq!(
                g("Summary").as_str().map(str::trim),
                Some("Company summary goes here")
            );
            let logo = p.supplier_logo().unwrap().unwrap();
            assert!(logo.starts_with(b"\x89PNG"));
            assert!(validate_images(&**p).is_empty());
        }
        // Resources/HotFiles.
        let files = r
            .load(&f.join("test_packages/test.hot.v1.app_with_files"))
            .unwrap();
        let mut got = files.base().source.list("Resources/HotFiles");
        got.sort();
        assert_eq!(
            got,
            [
                "middle_file/inner_file/testHeatFile",
                "middle_file/inner_file2/testHeatFile",
                "middle_file/testHeatFile",
                "testHeatFile"
            ]
        );
        assert!(hot.base().source.list("Resources/HotFiles").is_empty());
    }

    #[test]
    fn fixture_broken_logo() {
        let Some(f) = fixtures() else { return };
        let d = temp_dir("logo");
        copy_dir(&f.join("test_packages/test.mpl.v1.app"), &d);
        std::fs::copy(
            d.join("manifest_with_broken_logo.yaml"),
            d.join("manifest.yaml"),
        )
        .unwrap();
        let p = FormatRegistry::builtin().load(&d).unwrap();
        let e = p.logo().unwrap_err();
        assert_eq!(e.kind(), "PackageLoadError");
        assert!(
            e.message().contains("Unable to load logo")
                && e.message().contains("test_logo.png.not_valid")
                && e.message().contains("Unsupported Format"),
            "{}",
            e.message()
        );
        assert_eq!(validate_images(&*p).len(), 1);
        let e = pack_package(&d, &d.join("out.zip")).unwrap_err();
        assert!(e.message().contains("Unsupported Format"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn fixture_unsupported_formats() {
        let Some(f) = fixtures() else { return };
        for (dir, fmt) in [
            ("cloudify-nodecellar", "Cloudify.TOSCA/1.0.0"),
            ("csar-hello_world", "TOSCA.CSAR/1.1.0"),
            ("csar-wordpress", "TOSCA.CSAR/1.1.0"),
        ] {
            let e = FormatRegistry::builtin()
                .load(&f.join(dir))
                .err()
                .unwrap_or_else(|| panic!("{dir} should not load"));
            assert_eq!(e.kind(), "PackageFormatError");
            assert!(
                e.message().contains(&format!("Unsupported format {fmt}")),
                "{dir}: {}",
                e.message()
            );
        }
    }

    #[test]
    fn fixture_mpl_package() {
        let Some(f) = fixtures() else { return };
        let p = FormatRegistry::builtin()
            .load(&f.join("mpl_package"))
            .unwrap();
        assert_eq!(p.classes(), ["Class1", "Class2"]);
        let c1 = p.get_class("Class1").unwrap();
        assert_eq!(
            c1.text,
            std::fs::read_to_string(f.join("mpl_package/Classes/test.class1")).unwrap()
        );
        for bad in ["Class2", "Invalid name"] {
            assert_eq!(
                p.get_class(bad).unwrap_err().kind(),
                "PackageClassLoadError"
            );
        }
        let ui = p.ui().unwrap().unwrap();
        for want in [
            "name: license",
            "type: string",
            "description: Apache License, Version 2.0",
            "hidden: false",
            "required: false",
        ] {
            assert!(ui.contains(want), "{want}");
        }
        assert!(p.requirements().is_empty());
        assert_eq!(p.meta().and_then(|m| m.as_str()), Some("test.meta"));
    }

    #[test]
    fn fixture_hot_without_template() {
        let d = temp_dir("notemplate");
        write(
            &d.join("manifest.yaml"),
            "Format: Heat.HOT/1.0\nFullName: x.Hot\nType: Application\n",
        );
        let p = FormatRegistry::builtin().load(&d).unwrap();
        for e in [p.get_class("x.Hot").unwrap_err(), p.ui().unwrap_err()] {
            assert!(
                e.message().contains("File with class definition not found"),
                "{}",
                e.message()
            );
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn repository_and_bundles() {
        let d = temp_dir("repo");
        let pkg = |dir: &str, name: &str, ver: &str, req: &str| {
            write(
                &d.join("apps").join(dir).join("manifest.yaml"),
                &format!("FullName: {name}\nType: Library\nVersion: {ver}\n{req}"),
            );
        };
        pkg("lib1", "ex.Lib", "1.0.0", "");
        pkg("lib2", "ex.Lib", "2.1.0", "");
        pkg("app", "ex.App", "0.3.0", "Require:\n  ex.Lib: '1'\n");
        std::fs::create_dir_all(d.join("images")).unwrap();
        write(&d.join("images/img1"), "x");
        write(
            &d.join("bundles/b.bundle"),
            r#"{"Packages": [{"Name": "ex.App"}, {"Version": "", "Name": "ex.Lib"}], "Version": 1}"#,
        );
        write(
            &d.join("bundles/y.yaml"),
            "Packages:\n- Name: ex.Lib\n  Version: 1.0\n",
        );
        assert!(is_repository(&d));
        let l = PackageLoader::new(std::slice::from_ref(&d)).unwrap();
        assert_eq!(l.repositories, std::slice::from_ref(&d));
        assert_eq!(l.found["ex.Lib"].len(), 2);
        assert!(l.find_image("img1").is_some() && l.find_image("../x").is_none());
        let b = load_bundle(&l.find_bundle("b").unwrap()).unwrap();
        let items = l.resolve_bundle(&b).unwrap();
        let got: Vec<(String, String, Option<String>)> = items
            .iter()
            .map(|i| {
                (
                    i.found.name.clone(),
                    i.found.version.to_string(),
                    i.required_by.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("ex.App".into(), "0.3.0".into(), None),
                ("ex.Lib".into(), "2.1.0".into(), None),
                ("ex.Lib".into(), "1.0.0".into(), Some("ex.App/0.3.0".into())),
            ]
        );
        // YAML, a version (YAML float text kept as written).
        let b = load_bundle(&l.find_bundle("y").unwrap()).unwrap();
        assert_eq!(b.entries[0].version.as_deref(), Some("1.0"));
        assert_eq!(l.resolve_bundle(&b).unwrap()[0].found.version, v("1.0.0"));
        // Unresolvable entries, all reported.
        let b = parse_bundle(
            "Packages:\n- Name: ex.Nope\n- {Name: ex.Lib, Version: '3'}\n",
            "bad.bundle",
        )
        .unwrap();
        let e = l.resolve_bundle(&b).err().unwrap();
        let m = e.message();
        assert!(
            m.contains("bad.bundle:2:3: bundle package ex.Nope (latest) is not found"),
            "{m}"
        );
        assert!(
            m.contains("bad.bundle:3:3: bundle package ex.Lib (3): no matching version (found 2.1.0, 1.0.0)"),
            "{m}"
        );
        // Malformed bundles.
        for (text, want) in [
            ("", "the bundle is empty"),
            ("[1]", "bundle must be a mapping"),
            ("{}", "no Packages list"),
            ("Packages: 3", "bundle Packages must be a list"),
            ("Packages: [x]", "bundle entry must be a mapping"),
            ("Packages: [{Version: 1}]", "has no Name"),
            ("Packages: [{Name: 'a b'}]", "Invalid package name"),
            (
                "Packages: [{Name: a, Version: '~~1'}]",
                "invalid version spec",
            ),
        ] {
            let e = parse_bundle(text, "t")
                .err()
                .unwrap_or_else(|| panic!("{text}"));
            assert!(e.message().contains(want), "{text}: {}", e.message());
        }
        // A plain directory is not a repository.
        assert!(!is_repository(&d.join("apps")));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn bundle_fixture() {
        let Some(f) = fixtures() else { return };
        let b = load_bundle(&f.join("bundles/example.bundle")).unwrap();
        let names: Vec<&str> = b.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "com.example.apache.ApacheHttpServer",
                "com.example.apache.Tomcat"
            ]
        );
        assert!(b.entries.iter().all(|e| e.version.is_none()));
    }

    #[test]
    fn class_versions() {
        assert_eq!(
            parse_type_string("a.B/1.2.3@a"),
            ("a.B".into(), Some("1.2.3".into()), Some("a".into()))
        );
        assert_eq!(parse_type_string("a.B"), ("a.B".into(), None, None));
        assert_eq!(
            parse_type_string("a.B@p"),
            ("a.B".into(), None, Some("p".into()))
        );
        let d = temp_dir("cv");
        write(
            &d.join("manifest.yaml"),
            "FullName: ex.P\nType: Library\nVersion: 1.2.3\nClasses:\n  ex.P.C: C.yaml\n",
        );
        write(&d.join("Classes/C.yaml"), "Name: ex.P.C\n");
        let p = FormatRegistry::builtin().load(&d).unwrap();
        let pkgs = [p];
        let model = |hdr: &str| {
            runtime::json::from_tagged_str(&format!(
                r#"{{"Objects": {{"?": {{"type": "io.murano.Environment", "id": "e"}},
                   "applications": [{{"?": {{"id": "x", {hdr}}}}}]}}}}"#
            ))
            .unwrap()
        };
        for ok in [
            r#""type": "ex.P.C""#,
            r#""type": "ex.P.C", "classVersion": "1.2""#,
            r#""type": "ex.P.C", "classVersion": "1.2.3", "package": "ex.P""#,
            r#""type": "ex.P.C/1.2.3@ex.P""#,
            r#""type": "ex.P.C", "classVersion": ">=1.0,<2""#,
            r#""type": "ex.P.C", "classVersion": """#,
            r#""type": "other.Class/9.0""#,
        ] {
            check_model_versions(&model(ok), &pkgs).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
        }
        for (bad, want) in [
            (
                r#""type": "ex.P.C", "classVersion": "2.0""#,
                "object x (ex.P.C): classVersion asks for class ex.P.C version 2.0",
            ),
            (
                r#""type": "ex.P.C/1.3@ex.P""#,
                "type asks for class ex.P.C version 1.3 (>=1.3.0,<1.4.0-0), but the loaded package provides ex.P/1.2.3",
            ),
            (
                r#""type": "ex.P.C", "package": "ex.Q""#,
                "from package ex.Q, which is not loaded",
            ),
            (r#""type": "ex.P.C", "classVersion": "x.y""#, "invalid classVersion"),
        ] {
            let e = check_model_versions(&model(bad), &pkgs)
                .err()
                .unwrap_or_else(|| panic!("{bad} should fail"));
            assert!(e.message().contains(want), "{bad}: {}", e.message());
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn pack_round_trip() {
        let d = temp_dir("pack");
        let src = d.join("pkg");
        write(
            &src.join("manifest.yaml"),
            "Format: 1.3\nFullName: ex.Packed\nType: Application\nVersion: 1.0.1\n\
             Classes:\n  ex.Packed: App.yaml\n  ex.Packed.Sub: sub/Sub.yaml\n",
        );
        write(
            &src.join("Classes/App.yaml"),
            "Namespaces: {=: ex}\nName: Packed\n",
        );
        write(
            &src.join("Classes/sub/Sub.yaml"),
            "Namespaces: {=: ex.Packed}\nName: Sub\n",
        );
        write(&src.join("Resources/scripts/run.sh"), "echo hi\n");
        write(&src.join("UI/ui.yaml"), "Version: 2\nForms: []\n");
        write(&src.join("images.lst"), "Images:\n- Name: img\n");
        std::fs::write(src.join("logo.png"), b"\x89PNG\r\n\x1a\nxxxx").unwrap();
        write(&src.join("notes.txt"), "not packed");
        let out = d.join("ex.Packed.zip");
        let files = pack_package(&src, &out).unwrap();
        assert_eq!(
            files,
            [
                "manifest.yaml",
                "Classes/App.yaml",
                "Classes/sub/Sub.yaml",
                "Resources/scripts/run.sh",
                "UI/ui.yaml",
                "images.lst",
                "logo.png"
            ]
        );
        let a = FormatRegistry::builtin().load(&src).unwrap();
        let b = FormatRegistry::builtin().load(&out).unwrap();
        assert_eq!(a.full_name(), b.full_name());
        assert_eq!(a.version(), b.version());
        for c in a.classes() {
            assert_eq!(a.get_class(&c).unwrap().text, b.get_class(&c).unwrap().text);
        }
        assert_eq!(b.get_resource("scripts/run.sh").unwrap(), b"echo hi\n");
        assert_eq!(a.ui().unwrap(), b.ui().unwrap());
        assert_eq!(b.images().unwrap()[0].name, "img");
        assert_eq!(a.logo().unwrap(), b.logo().unwrap());
        assert!(validate_images(&*b).is_empty());
        let (pkg, errors) = to_package(&*b);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(pkg.class_names(), ["ex.Packed", "ex.Packed.Sub"]);
        // Deterministic.
        let first = std::fs::read(&out).unwrap();
        pack_package(&src, &out).unwrap();
        assert_eq!(first, std::fs::read(&out).unwrap());
        // HOT packages keep their template.
        if let Some(f) = fixtures() {
            let out = d.join("hot.zip");
            let files = pack_package(&f.join("test_packages/test.hot.v1.app"), &out).unwrap();
            assert!(files.contains(&"template.yaml".to_string()), "{files:?}");
            let p = FormatRegistry::builtin().load(&out).unwrap();
            assert!(to_package(&*p).1.is_empty());
        }
        assert!(pack_package(&d.join("missing"), &d.join("m.zip")).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Symbolic links never lead outside a directory package: a link to a
    /// file outside is not read, listed or packed, and links to `..` make
    /// no endless walk (issue 13).
    #[cfg(unix)]
    #[test]
    fn symlinks_stay_inside_the_package() {
        use std::os::unix::fs::symlink;
        let d = temp_dir("links");
        let src = d.join("pkg");
        write(
            &src.join("manifest.yaml"),
            "Format: 1.3\nFullName: ex.Links\nType: Application\nClasses:\n  ex.Links: App.yaml\n",
        );
        write(
            &src.join("Classes/App.yaml"),
            "Namespaces: {=: ex}\nName: Links\n",
        );
        write(&src.join("Resources/inside.txt"), "in\n");
        write(&d.join("secret.txt"), "outside\n");
        symlink(d.join("secret.txt"), src.join("Resources/secret.txt")).unwrap();
        symlink(
            src.join("Resources/inside.txt"),
            src.join("Resources/alias.txt"),
        )
        .unwrap();
        symlink("..", src.join("Resources/up")).unwrap();
        symlink("../..", src.join("Resources/up2")).unwrap();
        let p = FormatRegistry::builtin().load(&src).unwrap();
        let e = p.get_resource("secret.txt").unwrap_err();
        assert!(
            e.message().contains("leads outside the package"),
            "{}",
            e.message()
        );
        assert_eq!(p.get_resource("alias.txt").unwrap(), b"in\n");
        let listed = p.base().source.list("Resources");
        assert!(listed.contains(&"inside.txt".to_string()), "{listed:?}");
        assert!(!listed.iter().any(|f| f.contains("secret")), "{listed:?}");
        let files = pack_package(&src, &d.join("out.zip")).unwrap();
        assert!(!files.iter().any(|f| f.contains("secret")), "{files:?}");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A .zip package is read entry by entry: a bombed file costs nothing
    /// until it is read, and then fails past the entry limit (issue 13).
    #[test]
    fn zip_entries_are_read_on_demand_within_limits() {
        use std::io::Write;
        let d = temp_dir("bomb");
        let path = d.join("bomb.zip");
        {
            let mut z = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
            let o = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            z.start_file("manifest.yaml", o).unwrap();
            z.write_all(
                b"Format: 1.3\nFullName: ex.Bomb\nType: Application\nClasses:\n  ex.Bomb: B.yaml\n",
            )
            .unwrap();
            z.start_file("Classes/B.yaml", o).unwrap();
            z.write_all(b"Namespaces: {=: ex}\nName: Bomb\n").unwrap();
            z.start_file("Resources/zeros.bin", o).unwrap();
            let chunk = vec![0u8; 1 << 20];
            for _ in 0..(MAX_ZIP_ENTRY >> 20) + 8 {
                z.write_all(&chunk).unwrap();
            }
            z.finish().unwrap();
        }
        assert!(
            std::fs::metadata(&path).unwrap().len() < 1 << 20,
            "a small archive"
        );
        let p = FormatRegistry::builtin().load(&path).unwrap();
        let (pkg, errors) = to_package(&*p);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(pkg.class_names(), ["ex.Bomb"]);
        let e = p.get_resource("zeros.bin").unwrap_err();
        assert!(e.message().contains("larger than"), "{}", e.message());
        let _ = std::fs::remove_dir_all(&d);
    }
}
