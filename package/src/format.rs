//! The package-format plugin interface ([`PackageFormat`]), what every
//! plugin has ([`PackageBase`]) and the native MuranoPL plugin.

use std::collections::HashMap;

use runtime::{Error, Result, Value};
use semver::Version;

use engine::version::VersionSpec;

use crate::error::{class_error, load_error};
use crate::manifest::{check_image, parse_images, ImageSpec, Manifest};
use crate::source::Source;

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
    pub(crate) fn new(base: PackageBase) -> MuranoPlPackage {
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
