//! The registry of package-format plugins, keyed by format name and
//! version range, and loading a package through it.

use std::path::Path;
use std::sync::Arc;

use engine::version::VersionSpec;
use engine::Package;
use runtime::Result;

use crate::compile::to_package;
use crate::error::{format_error, load_error};
use crate::format::{MuranoPlPackage, PackageBase, PackageFormat};
use crate::hot::HotPackage;
use crate::manifest::{FormatId, Manifest};
use crate::source::Source;

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
            Ok(Box::new(HotPackage::new(base)?))
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
        self.load_source(Source::open(path)?)
    }

    /// Loads a package from its files (see [`Source`]): a package folder
    /// with an editor's unsaved files ([`Source::Edited`]), for example.
    pub fn load_source(&self, source: Source) -> Result<Arc<dyn PackageFormat>> {
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
