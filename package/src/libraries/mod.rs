//! Library packages of our own that ship inside the engine, beside the
//! core library (`io.murano`, see `core/`). The package loader offers each
//! of them on every search path; a package of the same name found on the
//! path wins, so a deployment can bring its own copy.
//!
//! - `io.murano.applications`: base classes for scalable applications
//!   (events, replication groups, server groups, software components,
//!   single/multi-server applications), API-compatible with the library
//!   Murano ships.
//! - `org.openstack.networkingSfc`: Neutron service function chaining
//!   (ports, port pairs and groups, flow classifiers, port chains) over the
//!   simulated cloud's Neutron API, API-compatible with the Murano
//!   networking-sfc plugin's library package.
//!
//! Every class here was written from the API reference and the packages in
//! the catalogue that use it, not copied.

use runtime::ErrorKind;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use runtime::{Error, Result};

use crate::format::{PackageBase, PackageFormat};
use crate::manifest::Manifest;
use crate::registry::FormatRegistry;
use crate::source::Source;

/// One embedded library package: its manifest and class files.
pub struct Library {
    /// The package's full name.
    pub name: &'static str,
    manifest: &'static str,
    classes: &'static [(&'static str, &'static str)],
}

/// Every embedded library, in the order the loader adds them.
pub const LIBRARIES: &[Library] = &[
    Library {
        name: "io.murano.applications",
        manifest: include_str!("applications/manifest.yaml"),
        classes: &[
            (
                "replication.yaml",
                include_str!("applications/replication.yaml"),
            ),
            ("events.yaml", include_str!("applications/events.yaml")),
            ("servers.yaml", include_str!("applications/servers.yaml")),
            (
                "component.yaml",
                include_str!("applications/component.yaml"),
            ),
            ("baseapps.yaml", include_str!("applications/baseapps.yaml")),
        ],
    },
    Library {
        name: "org.openstack.networkingSfc",
        manifest: include_str!("networking_sfc/manifest.yaml"),
        classes: &[
            ("ports.yaml", include_str!("networking_sfc/ports.yaml")),
            ("chains.yaml", include_str!("networking_sfc/chains.yaml")),
        ],
    },
];

impl Library {
    /// Where the embedded package claims to live (in messages).
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("<embedded>/{}", self.name))
    }

    /// The package, made by the registry's plugin for its format.
    pub fn package(&self, registry: &FormatRegistry) -> Result<Arc<dyn PackageFormat>> {
        let path = self.path();
        let mut files = BTreeMap::new();
        files.insert(
            "manifest.yaml".to_string(),
            self.manifest.as_bytes().to_vec(),
        );
        for (f, text) in self.classes {
            files.insert(format!("Classes/{f}"), text.as_bytes().to_vec());
        }
        let manifest =
            Manifest::parse(self.manifest, &format!("{}/manifest.yaml", path.display()))?;
        let Some(entry) = registry.find(&manifest.format) else {
            return Err(Error::new(
                ErrorKind::PackageFormatError,
                format!("{}: no plugin for {}", path.display(), manifest.format),
            ));
        };
        let source = Source::Zip { path, files };
        Ok(Arc::from((entry.factory)(PackageBase {
            source,
            manifest,
        })?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_library_loads_and_compiles() {
        let registry = FormatRegistry::builtin();
        for lib in LIBRARIES {
            let p = lib.package(&registry).unwrap();
            assert_eq!(p.full_name(), lib.name);
            let (_, errors) = crate::to_package(&*p);
            assert!(errors.is_empty(), "{}: {:?}", lib.name, errors);
            assert!(!p.classes().is_empty(), "{} has no classes", lib.name);
        }
    }
}
