//! Bundle files (JSON or YAML): `{Packages: [{Name, Version?}, ...]}`.

use std::path::Path;

use compiler::murano::{load_documents, Node, NodeKind};
use engine::version::{valid_full_name, VersionSpec};
use runtime::{ErrorKind, Result};

use crate::error::{format_error, load_error};

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
