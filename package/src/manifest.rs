//! The manifest (`manifest.yaml`): its fields as murano reads them.

use std::collections::HashMap;
use std::fmt;

use compiler::murano::{load_documents, Node, NodeKind};
use engine::node_value;
use engine::version::{parse_version, valid_full_name, VersionSpec};
use runtime::{Dict, ErrorKind, Result, Value};
use semver::Version;

use crate::error::format_error;
use crate::source::Source;

/// Largest logo accepted (murano: 500 KiB).
pub const MAX_IMAGE_SIZE: usize = 500 * 1024;

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

pub(crate) fn expect_scalar<'a>(n: &'a Node, key: &str) -> Result<&'a str> {
    match &n.kind {
        NodeKind::Scalar { value, .. } => Ok(value),
        _ => Err(n.pos.error(
            ErrorKind::PackageFormatError,
            format!("manifest {key} must be a scalar, not a {}", n.kind_name()),
        )),
    }
}

pub(crate) fn opt_string(n: Option<&Node>, key: &str) -> Result<Option<String>> {
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
        let (seen, raw) = manifest_entries(doc)?;
        let get = |k: &str| seen.get(k).copied();

        let format = match get("Format") {
            None => FormatId::parse("MuranoPL/1.0").expect("valid"),
            Some(n) if n.is_null() => FormatId::parse("MuranoPL/1.0").expect("valid"),
            Some(n) => FormatId::parse(expect_scalar(n, "Format")?)
                .map_err(|e| n.pos.error(ErrorKind::PackageFormatError, e))?,
        };
        let full_name = parse_full_name(doc, get("FullName"))?;
        let package_type = parse_package_type(doc, get("Type"))?;
        let display_name = opt_string(get("Name"), "Name")?.unwrap_or_else(|| full_name.clone());
        let description = opt_string(get("Description"), "Description")?;
        let author = opt_string(get("Author"), "Author")?;
        let supplier = parse_supplier(get("Supplier"))?;
        let tags = parse_tags(get("Tags"))?;
        let classes = parse_classes(get("Classes"))?;
        let require = parse_require(get("Require"))?;

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

/// The keys of the manifest mapping (scalars, each once) to their nodes,
/// and the whole manifest as data.
fn manifest_entries(doc: &Node) -> Result<(HashMap<&str, &Node>, Dict)> {
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
    Ok((seen, raw))
}

/// `FullName`: required, a valid dotted name.
fn parse_full_name(doc: &Node, n: Option<&Node>) -> Result<String> {
    let Some(n) = n else {
        return Err(doc.pos.error(
            ErrorKind::PackageFormatError,
            "the manifest has no FullName",
        ));
    };
    let s = expect_scalar(n, "FullName")?;
    if !valid_full_name(s) {
        return Err(n.pos.error(
            ErrorKind::PackageFormatError,
            format!("Invalid FullName {s}"),
        ));
    }
    Ok(s.to_string())
}

/// `Type`: required, `Application` or `Library`.
fn parse_package_type(doc: &Node, n: Option<&Node>) -> Result<String> {
    let Some(n) = n else {
        return Err(doc.pos.error(
            ErrorKind::PackageFormatError,
            "the manifest has no Type (Application or Library)",
        ));
    };
    let s = expect_scalar(n, "Type")?;
    if s != "Application" && s != "Library" {
        return Err(n.pos.error(
            ErrorKind::PackageFormatError,
            format!("Invalid package Type {s} (Application or Library)"),
        ));
    }
    Ok(s.to_string())
}

/// `Supplier`: a mapping (its `Logo` a scalar), as data.
fn parse_supplier(n: Option<&Node>) -> Result<Option<Value>> {
    let Some(n) = n.filter(|n| !n.is_null()) else {
        return Ok(None);
    };
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
    Ok(Some(node_value(n)))
}

/// `Tags`: a list of scalars.
fn parse_tags(n: Option<&Node>) -> Result<Vec<String>> {
    let Some(n) = n.filter(|n| !n.is_null()) else {
        return Ok(Vec::new());
    };
    match &n.kind {
        NodeKind::Seq(items) => items
            .iter()
            .map(|t| expect_scalar(t, "Tags item").map(str::to_string))
            .collect::<Result<_>>(),
        _ => Err(n.pos.error(
            ErrorKind::PackageFormatError,
            format!("manifest Tags must be a list, not a {}", n.kind_name()),
        )),
    }
}

/// `Classes`: class names (each once) to their files in `Classes/`.
fn parse_classes(n: Option<&Node>) -> Result<Vec<(String, String)>> {
    let mut classes = Vec::new();
    let mut class_names = std::collections::HashSet::new();
    let Some(n) = n.filter(|n| !n.is_null()) else {
        return Ok(classes);
    };
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
    Ok(classes)
}

/// `Require`: package names to version specs.
fn parse_require(n: Option<&Node>) -> Result<Vec<(String, VersionSpec)>> {
    let mut require = Vec::new();
    let Some(n) = n.filter(|n| !n.is_null()) else {
        return Ok(require);
    };
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
        let spec =
            VersionSpec::parse(spec).map_err(|e| v.pos.error(ErrorKind::PackageFormatError, e))?;
        require.push((name.to_string(), spec));
    }
    Ok(require)
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
