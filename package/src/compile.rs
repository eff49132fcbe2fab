//! Compiling a plugin package's classes into an executor [`Package`], each
//! problem paired with the classes it keeps from loading.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use compiler::murano::decl::load_classes_for;
use compiler::murano::{ClassDecl, LoadOptions};
use engine::Package;
use runtime::{Error, ErrorKind};

use crate::format::{ClassSource, PackageFormat};

/// How many of a file's class names the "the file defines ..." warning
/// lists (a file may define thousands).
const NAMES_SHOWN: usize = 5;

/// An error loading a package's classes and what it keeps from loading.
#[derive(Debug)]
pub struct ClassLoadError {
    /// The error.
    pub error: Error,
    /// The manifest's classes it keeps from loading: the class whose file
    /// could not be read, or every class listed in a file that does not
    /// parse. Empty for a problem of the package (its manifest's `Meta`).
    pub classes: Vec<String>,
    /// The class file (as positions name it), when the error is its.
    pub file: Option<String>,
}

/// What [`to_package_checked`] made of a package.
pub struct CheckedPackage {
    /// The executor package: every class that loaded.
    pub package: Package,
    /// Class files that could not be read or parsed, the manifest `Meta`.
    pub errors: Vec<ClassLoadError>,
    /// What murano accepts but ignores or cannot use: keys a class
    /// declaration ignores, and a listed class its file does not define.
    pub warnings: Vec<Error>,
    /// Listed classes their file does not define (murano finds no such
    /// class; each has a warning in `warnings`).
    pub undefined: Vec<String>,
    /// The class files read, by the name positions give them, with their
    /// text (read once: a lint need not read them again).
    pub texts: HashMap<String, String>,
}

/// The state of a class file already read.
enum FileState {
    /// Parsed: the classes it defines.
    Parsed(HashSet<String>, Vec<String>),
    /// Failed: the index of its error.
    Failed(usize),
}

/// A package's classes being loaded, file by file.
struct Loading<'p> {
    p: &'p dyn PackageFormat,
    legacy: bool,
    decls: HashMap<String, Arc<ClassDecl>>,
    errors: Vec<ClassLoadError>,
    warnings: Vec<Error>,
    undefined: Vec<String>,
    files: HashMap<String, FileState>,
    texts: HashMap<String, String>,
}

impl Loading<'_> {
    /// Loads listed class `name`: reads and parses its file unless that
    /// was done for another class.
    fn class(&mut self, name: String) {
        let Some(file) = self.file_of(&name) else {
            return;
        };
        let defined = match &self.files[&file] {
            FileState::Failed(i) => {
                self.errors[*i].classes.push(name);
                return;
            }
            FileState::Parsed(set, names) => {
                if set.contains(&name) || names.is_empty() {
                    return;
                }
                names
            }
        };
        let w = not_defined_warning(&file, &name, defined);
        self.warnings.push(w);
        self.undefined.push(name);
    }

    /// The file of class `name` (read and parsed, once), or None when the
    /// package cannot serve it (an error then says why).
    fn file_of(&mut self, name: &str) -> Option<String> {
        let known = self.p.class_file(name);
        if let Some(f) = known.filter(|f| self.files.contains_key(f)) {
            return Some(f);
        }
        let src = match self.p.get_class(name) {
            Ok(s) => s,
            Err(error) => {
                self.errors.push(ClassLoadError {
                    error,
                    classes: vec![name.to_string()],
                    file: None,
                });
                return None;
            }
        };
        if !self.files.contains_key(&src.file) {
            let state = self.parse(name, &src);
            self.files.insert(src.file.clone(), state);
            self.texts.insert(src.file.clone(), src.text);
        }
        Some(src.file)
    }

    /// Parses a class file, read for listed class `name`.
    fn parse(&mut self, name: &str, src: &ClassSource) -> FileState {
        let opts = LoadOptions {
            legacy: self.legacy,
        };
        match load_classes_for(&src.text, &src.file, opts, Some(name)) {
            Ok(ds) => {
                let names: Vec<String> = ds.iter().map(|d| d.name.clone()).collect();
                for d in ds {
                    self.warnings.extend(
                        (d.warnings.iter())
                            .map(|w| Error::new(ErrorKind::PackageClassLoadError, w.clone())),
                    );
                    self.decls
                        .entry(d.name.clone())
                        .or_insert_with(|| Arc::new(d));
                }
                FileState::Parsed(names.iter().cloned().collect(), names)
            }
            Err(error) => {
                self.errors.push(ClassLoadError {
                    error,
                    classes: Vec::new(),
                    file: Some(src.file.clone()),
                });
                FileState::Failed(self.errors.len() - 1)
            }
        }
    }
}

/// Compiles a plugin's classes into an executor package, with one error per
/// bad class file (naming the classes it keeps from loading) and the
/// warnings (a manifest class served from a file that names its only class
/// differently, keys a declaration ignores).
pub fn to_package_checked(p: &dyn PackageFormat) -> CheckedPackage {
    let legacy = p.legacy();
    let mut l = Loading {
        p,
        legacy,
        decls: HashMap::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
        undefined: Vec::new(),
        files: HashMap::new(),
        texts: HashMap::new(),
    };
    for name in p.classes() {
        l.class(name);
    }
    let mut package = Package {
        name: p.full_name().into(),
        version: p.version().to_string().into(),
        legacy,
        runtime_le_13: {
            let v = p.runtime_version();
            legacy || (v.major == 1 && v.minor <= 3)
        },
        decls: l.decls,
        configs: HashMap::new(),
        requires: p.requirements().to_vec(),
        meta: Vec::new(),
    };
    // The manifest's `Meta`, read from its text so that YAQL in it stays
    // YAQL (murano loads manifests with its YAQL-aware YAML loader).
    if p.meta().is_some() {
        let meta = p.base().source.read_text("manifest.yaml").and_then(|t| {
            let t = t.unwrap_or_default();
            let file = p.base().source.display("manifest.yaml");
            compiler::murano::decl::load_manifest_meta(&t, &file, LoadOptions { legacy })
        });
        match meta {
            Ok(m) => package.meta = m,
            Err(error) => l.errors.push(ClassLoadError {
                error,
                classes: Vec::new(),
                file: Some(p.base().source.display("manifest.yaml")),
            }),
        }
    }
    CheckedPackage {
        package,
        errors: l.errors,
        warnings: l.warnings,
        undefined: l.undefined,
        texts: l.texts,
    }
}

/// The warning for class `name`, listed in `file`, which defines only
/// `defined`.
///
/// murano's `MuranoPackage._register_mpl_classes`
/// (murano/dsl/murano_package.py) looks for the document named as the
/// manifest lists the class (or the one without a `Name`); finding none,
/// the class is not found, and the file's classes are known only once
/// something has asked for the listed name. The package still loads
/// (murano loads classes when they are first needed).
fn not_defined_warning(file: &str, name: &str, defined: &[String]) -> Error {
    let mut shown = defined[..defined.len().min(NAMES_SHOWN)].join(", ");
    if defined.len() > NAMES_SHOWN {
        shown.push_str(&format!(" and {} more", defined.len() - NAMES_SHOWN));
    }
    Error::new(
        ErrorKind::NoClassFound,
        format!(
            "{file}: the manifest lists class {name}, but the file defines {shown} and no class \
             without a Name: murano finds no class {name} (NoClassFound); rename the class or \
             fix the manifest"
        ),
    )
}

/// Compiles a plugin's classes into an executor package, one error per bad
/// class file.
pub fn to_package(p: &dyn PackageFormat) -> (Package, Vec<Error>) {
    let c = to_package_checked(p);
    (c.package, c.errors.into_iter().map(|e| e.error).collect())
}
