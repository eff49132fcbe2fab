//! Packages: a name, a version, a format and the class declarations of
//! their files; the embedded core library (`io.murano`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use compiler::murano::{load_classes, ClassDecl, LoadOptions};
use runtime::{Dict, Result};

use crate::version;

/// Our own core library (`io.murano`), embedded.
const CORE: &[(&str, &str)] = &[
    ("Object.yaml", include_str!("core/Object.yaml")),
    ("Exception.yaml", include_str!("core/Exception.yaml")),
    ("StackTrace.yaml", include_str!("core/StackTrace.yaml")),
    ("Metadata.yaml", include_str!("core/Metadata.yaml")),
    ("GC.yaml", include_str!("core/GC.yaml")),
    ("TestFixture.yaml", include_str!("core/TestFixture.yaml")),
    ("Logger.yaml", include_str!("core/Logger.yaml")),
    ("Application.yaml", include_str!("core/Application.yaml")),
    (
        "CloudResource.yaml",
        include_str!("core/CloudResource.yaml"),
    ),
    ("Instance.yaml", include_str!("core/Instance.yaml")),
    ("Environment.yaml", include_str!("core/Environment.yaml")),
    ("System.yaml", include_str!("core/System.yaml")),
    ("Network.yaml", include_str!("core/Network.yaml")),
    ("Linux.yaml", include_str!("core/Linux.yaml")),
];

/// A package: name, version, format and its parsed class declarations.
#[derive(Clone)]
pub struct Package {
    /// Package name (`tests`, `io.murano`).
    pub name: Arc<str>,
    /// Version text.
    pub version: Arc<str>,
    /// yaql 0.2 mode (Format 1.0 and 1.1).
    pub legacy: bool,
    /// Runtime version 1.3 or older: the engine functions `super`,
    /// `psuper`, `cast`, `id` and `type` also have method forms.
    pub runtime_le_13: bool,
    /// Class declarations by full name.
    pub decls: HashMap<String, Arc<ClassDecl>>,
    /// Class configuration: class name -> property -> value.
    pub configs: HashMap<String, Dict>,
    /// The manifest's `Require`: package name and version spec. When
    /// several loaded versions of a package provide a class, code of this
    /// package sees the version its requirement names.
    pub requires: Vec<(String, version::VersionSpec)>,
    /// The manifest's `Meta` (`typeinfo(...).package.meta`).
    pub meta: Vec<compiler::murano::MetaDecl>,
}

impl Package {
    /// Parses a package from class files.
    pub fn new(
        name: &str,
        version: &str,
        format: &str,
        files: &[(String, String)],
    ) -> Result<Package> {
        let legacy = is_legacy_format(format);
        let mut decls = HashMap::new();
        for (file, text) in files {
            for d in load_classes(text, file, LoadOptions { legacy })? {
                decls.insert(d.name.clone(), Arc::new(d));
            }
        }
        Ok(Package {
            name: name.into(),
            version: version.into(),
            legacy,
            runtime_le_13: legacy || format_le_13(format),
            decls,
            configs: HashMap::new(),
            requires: Vec::new(),
            meta: Vec::new(),
        })
    }

    /// The core library package.
    pub fn core() -> Package {
        // Parsed once per process; every executor gets a copy (the class
        // declarations are shared). Immutable once initialised.
        static CORE_PACKAGE: OnceLock<Package> = OnceLock::new();
        CORE_PACKAGE
            .get_or_init(|| {
                let files: Vec<(String, String)> = CORE
                    .iter()
                    .map(|(f, t)| (format!("io.murano/{f}"), t.to_string()))
                    .collect();
                Package::new("io.murano", "0.0.0", "1.4", &files).expect("core library parses")
            })
            .clone()
    }
}

impl Package {
    /// A class declaration of this package.
    pub fn decl(&self, name: &str) -> Option<&Arc<compiler::murano::ClassDecl>> {
        self.decls.get(name)
    }

    /// The names of the classes declared in this package (sorted).
    pub fn class_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.decls.keys().cloned().collect();
        v.sort();
        v
    }
}

/// True for package formats that use yaql 0.2.
pub fn is_legacy_format(format: &str) -> bool {
    let f = format.rsplit('/').next().unwrap_or(format);
    f.starts_with("1.0") || f.starts_with("1.1")
}

/// True for package formats of runtime version 1.3 or older.
pub fn format_le_13(format: &str) -> bool {
    let f = format.rsplit('/').next().unwrap_or(format);
    let mut it = f.split('.').map(|x| x.trim().parse::<u64>().unwrap_or(0));
    let (major, minor) = (it.next().unwrap_or(1), it.next().unwrap_or(0));
    major < 1 || (major == 1 && minor <= 3)
}
