//! The artifact's format: its manifest, its digest and its checked
//! entries, read into memory or unpacked (below the catalogue: loading a
//! catalogue reads artifacts; [`super`] packs and loads them).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Component, Path};
use std::sync::Arc;

use package::{FormatRegistry, Manifest, PackageBase, PackageFormat, Source};
use sha2::{Digest, Sha256};

/// The most bytes an artifact may unpack to (a zip bomb is an error).
pub const MAX_UNPACKED: u64 = 1 << 30;

pub(crate) const MANIFEST: &str = "catalog.json";
pub(crate) const PACKAGES: &str = "packages";

/// What `catalog.json` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    /// The SHA-256 of the package files, hex.
    pub digest: String,
    /// The packages asked for (`NAME-VERSION` directories).
    pub roots: Vec<String>,
    /// Every package, roots first.
    pub packages: Vec<String>,
}

/// A package's directory in the artifact: `NAME-VERSION`.
pub(crate) fn dir_name(p: &dyn package::PackageFormat) -> String {
    format!("{}-{}", p.full_name(), p.version())
}

/// SHA-256 over the files' names and contents, hex.
pub(crate) fn digest<'a>(files: impl Iterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut h = Sha256::new();
    for (name, bytes) in files {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn write_zip(
    out: &Path,
    c: &Contents,
    files: &[(String, Vec<u8>)],
) -> std::io::Result<()> {
    let tmp = out.with_extension("mcat.tmp");
    let mut z = zip::ZipWriter::new(std::fs::File::create(&tmp)?);
    let o = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    let manifest = serde_json::json!({
        "format": 1, "digest": c.digest, "roots": c.roots, "packages": c.packages,
    });
    z.start_file(MANIFEST, o)?;
    z.write_all(serde_json::to_string_pretty(&manifest)?.as_bytes())?;
    for (name, bytes) in files {
        z.start_file(name.as_str(), o)?;
        z.write_all(bytes)?;
    }
    z.finish()?;
    std::fs::rename(&tmp, out)
}

/// Reads the contents of the artifact at `path` (its manifest).
pub fn contents(path: &Path) -> Result<Contents, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut z = zip::ZipArchive::new(file).map_err(|e| format!("{}: {e}", path.display()))?;
    manifest(&mut z).map_err(|e| format!("{}: {e}", path.display()))
}

/// What the artifact's `catalog.json` says, checked.
pub(crate) fn manifest<R: Read + std::io::Seek>(
    z: &mut zip::ZipArchive<R>,
) -> Result<Contents, String> {
    let mut text = String::new();
    z.by_name(MANIFEST)
        .map_err(|_| format!("no {MANIFEST}: not a catalogue artifact"))?
        .take(1 << 20)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    let m: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{MANIFEST}: {e}"))?;
    if m["format"] != 1 {
        return Err(format!("{MANIFEST}: unknown format {}", m["format"]));
    }
    let list = |key: &str| -> Result<Vec<String>, String> {
        m[key]
            .as_array()
            .and_then(|a| a.iter().map(|s| s.as_str().map(String::from)).collect())
            .ok_or_else(|| format!("{MANIFEST}: `{key}` is not a list of strings"))
    };
    let digest = m["digest"].as_str().unwrap_or_default().to_string();
    if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{MANIFEST}: `digest` is not a SHA-256"));
    }
    Ok(Contents {
        digest,
        roots: list("roots")?,
        packages: list("packages")?,
    })
}

/// The package files of an artifact (`packages/...`, sorted), each entry
/// checked: a path inside `packages/`, at most [`MAX_UNPACKED`] bytes in
/// all, and the digest the manifest says.
fn checked_files<R: Read + std::io::Seek>(
    z: &mut zip::ZipArchive<R>,
    c: &Contents,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut total = 0u64;
    for i in 0..z.len() {
        let mut f = z.by_index(i).map_err(|e| e.to_string())?;
        let name = f.name().to_string();
        if name == MANIFEST || f.is_dir() {
            continue;
        }
        if !safe(&name) {
            return Err(format!("{name}: an entry outside the artifact"));
        }
        let mut bytes = Vec::new();
        (&mut f)
            .take(MAX_UNPACKED - total + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{name}: {e}"))?;
        total += bytes.len() as u64;
        if total > MAX_UNPACKED {
            return Err(format!("unpacks to more than {MAX_UNPACKED} bytes"));
        }
        files.push((name, bytes));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let got = digest(files.iter().map(|(n, b)| (n.as_str(), b.as_slice())));
    if got != c.digest {
        return Err(format!(
            "digest mismatch: the manifest says {}, the files are {got}",
            c.digest
        ));
    }
    Ok(files)
}

/// Unpacks the checked files of an artifact into `dir`.
pub(crate) fn unpack<R: Read + std::io::Seek>(
    z: &mut zip::ZipArchive<R>,
    c: &Contents,
    dir: &Path,
) -> Result<(), String> {
    // Into a fresh directory, renamed into place when complete: two
    // processes unpacking one digest do not see each other's halves.
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let files = checked_files(z, c)?;
    let io = |e: std::io::Error| format!("{}: {e}", tmp.display());
    for (name, bytes) in &files {
        let to = tmp.join(name);
        std::fs::create_dir_all(to.parent().unwrap_or(&tmp)).map_err(io)?;
        std::fs::write(&to, bytes).map_err(io)?;
    }
    std::fs::write(tmp.join(".complete"), &c.digest).map_err(io)?;
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process got there first: its copy is the same digest.
        Err(_) if dir.join(".complete").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

/// An artifact read into memory ([`read`]): what its manifest says and
/// its packages, loaded.
pub struct Artifact {
    /// What `catalog.json` says.
    pub contents: Contents,
    /// Every package, in the manifest's order (roots first).
    pub packages: Vec<Arc<dyn PackageFormat>>,
}

impl Artifact {
    /// The packages asked for (the first of [`Artifact::packages`]).
    pub fn roots(&self) -> &[Arc<dyn PackageFormat>] {
        &self.packages[..self.contents.roots.len()]
    }
}

/// True for a path named like an artifact (`*.mcat`, any case).
pub fn is_artifact(path: &Path) -> bool {
    path.extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("mcat"))
}

/// Reads the artifact at `path` into memory: checks it as [`load`](super::load) does
/// (the manifest, the digest, entries inside `packages/`, the size limit)
/// and loads each package from its files, unpacking nothing to disk.
/// Messages name a package's files `PATH/packages/NAME-VERSION!/FILE`.
pub fn read(path: &Path) -> Result<Artifact, String> {
    let at = |e: String| format!("{}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(|e| at(e.to_string()))?;
    let mut z = zip::ZipArchive::new(file).map_err(|e| at(e.to_string()))?;
    let c = manifest(&mut z).map_err(at)?;
    if c.packages[..c.roots.len().min(c.packages.len())] != c.roots[..] {
        return Err(at(format!(
            "{MANIFEST}: `packages` must start with the `roots`"
        )));
    }
    let mut by_dir: BTreeMap<String, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (name, bytes) in checked_files(&mut z, &c).map_err(at)? {
        let rest = name.strip_prefix(&format!("{PACKAGES}/")).unwrap_or(&name);
        match rest.split_once('/') {
            Some((dir, rel)) => {
                by_dir
                    .entry(dir.to_string())
                    .or_default()
                    .insert(rel.to_string(), bytes);
            }
            None => return Err(at(format!("{name}: a file outside every package"))),
        }
    }
    let registry = FormatRegistry::builtin();
    let mut packages = Vec::with_capacity(c.packages.len());
    for dir in &c.packages {
        let files = by_dir
            .remove(dir)
            .ok_or_else(|| at(format!("{MANIFEST} names {dir}, which has no files")))?;
        let source = Source::Zip {
            path: path.join(PACKAGES).join(dir),
            files,
        };
        packages.push(package_from(&registry, source)?);
    }
    if let Some(dir) = by_dir.keys().next() {
        return Err(at(format!(
            "{PACKAGES}/{dir}: a package {MANIFEST} does not name"
        )));
    }
    Ok(Artifact {
        contents: c,
        packages,
    })
}

/// A package from its files, made by the format plugin its manifest names
/// (as [`FormatRegistry::load`] does for a directory).
fn package_from(
    registry: &FormatRegistry,
    source: Source,
) -> Result<Arc<dyn PackageFormat>, String> {
    let mfile = source.display("manifest.yaml");
    let text = (source.read_text("manifest.yaml"))
        .map_err(|e| e.message().to_string())?
        .ok_or_else(|| format!("{mfile}: no manifest.yaml in the package"))?;
    let manifest = Manifest::parse(&text, &mfile).map_err(|e| e.message().to_string())?;
    let Some(entry) = registry.find(&manifest.format) else {
        return Err(format!(
            "{mfile}: Unsupported format {} (supported: {})",
            manifest.format,
            registry.describe().join("; ")
        ));
    };
    let p =
        (entry.factory)(PackageBase { source, manifest }).map_err(|e| e.message().to_string())?;
    Ok(Arc::from(p))
}

/// A relative path of normal components under `packages/`.
fn safe(name: &str) -> bool {
    let p = Path::new(name);
    p.starts_with(PACKAGES) && p.components().all(|c| matches!(c, Component::Normal(_)))
}
