//! The catalogue `murano_validate` checks against.

use std::sync::Arc;

use muranopl::Catalogue;

use crate::artifact;

/// What `murano_validate` checks against: a catalogue, and where its
/// packages were unpacked when it came from an artifact (contract
/// positions in messages are then relative to the artifact's packages,
/// `NAME-VERSION/Classes/X.yaml:8:15`, the same on every executor).
#[derive(Clone)]
pub struct Catalog {
    catalogue: Arc<Catalogue>,
    unpacked: Option<String>,
}

impl Catalog {
    /// The catalog of loaded packages.
    pub fn new(catalogue: Catalogue) -> Catalog {
        Catalog {
            catalogue: Arc::new(catalogue),
            unpacked: None,
        }
    }

    /// The catalog of an artifact ([`artifact::load`]), unpacked under
    /// `cache`.
    pub fn from_artifact(
        path: &std::path::Path,
        cache: &std::path::Path,
    ) -> Result<Catalog, String> {
        let (_, catalogue, dir) = artifact::load(path, cache)?;
        Ok(Catalog {
            catalogue: Arc::new(catalogue),
            unpacked: Some(format!("{}/", dir.display())),
        })
    }

    /// The catalogue.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// `message` with the unpacked directory left out of file names.
    pub(crate) fn relative(&self, message: String) -> String {
        match &self.unpacked {
            Some(dir) if message.contains(dir.as_str()) => message.replace(dir.as_str(), ""),
            _ => message,
        }
    }
}
