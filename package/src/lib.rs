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
//!   [`Package`](engine::Package), collecting one error per bad class file.

// The modules by layer, bottom first: each names only modules above it in
// this list.
mod bundle;
mod compile;
mod error;
mod format;
mod hot;
pub mod libraries;
mod loader;
mod manifest;
mod model_check;
mod pack;
mod registry;
mod source;
#[cfg(test)]
mod tests;

pub use engine::node_value;
pub use engine::version::{
    parse_type_string, parse_version, type_spec, valid_full_name, Bound, VersionSpec,
};

pub use bundle::{load_bundle, parse_bundle, Bundle, BundleEntry};
pub use compile::{to_package, to_package_checked, CheckedPackage, ClassLoadError};
pub use format::{validate_images, ClassSource, MuranoPlPackage, PackageBase, PackageFormat};
pub use hot::{hot_param_contract, HotPackage};
pub use loader::{is_repository, Broken, BundleItem, Found, PackageLoader, CORE_PACKAGE};
pub use manifest::{check_image, parse_images, FormatId, ImageSpec, Manifest, MAX_IMAGE_SIZE};
pub use model_check::check_model_versions;
pub use pack::{pack_package, package_files};
pub use registry::{load_dir, Factory, FormatEntry, FormatRegistry};
pub use source::Source;
