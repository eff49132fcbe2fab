//! Our own `io.murano.applications` library (base classes for scalable
//! applications: events, replication groups, server groups, software
//! components, single/multi-server applications), embedded. The package
//! loader offers it on every search path (a copy found on the path wins),
//! so packages that `Require` it load with no extra `-L`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use runtime::{Error, Result};

use super::packages::{FormatRegistry, Manifest, PackageBase, PackageFormat, Source};

/// The library's package name.
pub const NAME: &str = "io.murano.applications";

/// Where the embedded package claims to live (in messages).
pub const PATH: &str = "<embedded>/io.murano.applications";

const MANIFEST: &str = "\
Format: 1.4
Type: Library
FullName: io.murano.applications
Name: Application Development Library
Description: Base classes to develop scalable applications with MuranoPL (muranopl's own)
Author: muranopl
Classes:
  io.murano.applications.ReplicaProvider: replication.yaml
  io.murano.applications.ReplicationGroup: replication.yaml
  io.murano.applications.CloneReplicaProvider: replication.yaml
  io.murano.applications.CompositeReplicaProvider: replication.yaml
  io.murano.applications.PoolReplicaProvider: replication.yaml
  io.murano.applications.RoundrobinReplicaProvider: replication.yaml
  io.murano.applications.Event: events.yaml
  io.murano.applications.ServerGroup: servers.yaml
  io.murano.applications.ServerList: servers.yaml
  io.murano.applications.CompositeServerGroup: servers.yaml
  io.murano.applications.SingleServerGroup: servers.yaml
  io.murano.applications.ServerReplicationGroup: servers.yaml
  io.murano.applications.TemplateServerProvider: servers.yaml
  io.murano.applications.Installable: component.yaml
  io.murano.applications.Configurable: component.yaml
  io.murano.applications.OpenStackSecurityConfigurable: component.yaml
  io.murano.applications.SoftwareComponent: component.yaml
  io.murano.applications.SingleServerApplication: baseapps.yaml
  io.murano.applications.MultiServerApplication: baseapps.yaml
  io.murano.applications.MultiServerApplicationWithScaling: baseapps.yaml
";

const FILES: &[(&str, &str)] = &[
    ("replication.yaml", include_str!("replication.yaml")),
    ("events.yaml", include_str!("events.yaml")),
    ("servers.yaml", include_str!("servers.yaml")),
    ("component.yaml", include_str!("component.yaml")),
    ("baseapps.yaml", include_str!("baseapps.yaml")),
];

/// The embedded package, made by the registry's MuranoPL plugin.
pub fn package(registry: &FormatRegistry) -> Result<Arc<dyn PackageFormat>> {
    let mut files = BTreeMap::new();
    files.insert("manifest.yaml".to_string(), MANIFEST.as_bytes().to_vec());
    for (f, text) in FILES {
        files.insert(format!("Classes/{f}"), text.as_bytes().to_vec());
    }
    let manifest = Manifest::parse(MANIFEST, &format!("{PATH}/manifest.yaml"))?;
    let Some(entry) = registry.find(&manifest.format) else {
        return Err(Error::new(
            "PackageFormatError",
            format!("{PATH}: no plugin for {}", manifest.format),
        ));
    };
    let source = Source::Zip {
        path: PathBuf::from(PATH),
        files,
    };
    Ok(Arc::from((entry.factory)(PackageBase {
        source,
        manifest,
    })?))
}
