//! The catalogue artifact (`.mcat`): the packages a catalogue is made of,
//! with what they require, in one file that a client hands to every
//! executor, named by the digest of its contents.
//!
//! It is a zip: `catalog.json` (`{"format": 1, "digest": ..., "roots":
//! [...], "packages": [...]}`) and `packages/NAME-VERSION/...`, the files
//! `muranopl package pack` would put in each package's zip. The digest is
//! SHA-256 over the package files' names and contents, so two artifacts of
//! the same packages have the same digest whoever built them, and an
//! executor keeps each digest it has seen unpacked in its own directory:
//! catalogues of different versions live side by side.
//!
//! Compiled classes hold shared code, not bytes, so the artifact carries
//! the packages' sources and each executor compiles them on load (tens of
//! milliseconds for real packages; `muranopl package check` does the same
//! work). What is checked at pack time: that the packages load.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use muranopl::{session::load_formats, Catalogue};
use sha2::{Digest, Sha256};

/// The most bytes an artifact may unpack to (a zip bomb is an error).
pub const MAX_UNPACKED: u64 = 1 << 30;

const MANIFEST: &str = "catalog.json";
const PACKAGES: &str = "packages";

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

fn dir_name(p: &dyn package::PackageFormat) -> String {
    format!("{}-{}", p.full_name(), p.version())
}

/// Packs the packages at `paths` (directories or .zip files) and what they
/// require from `libs` into an artifact at `out`; returns its contents.
pub fn pack(paths: &[PathBuf], libs: &[PathBuf], out: &Path) -> Result<Contents, String> {
    let formats = load_formats(paths, libs)?;
    // The packages must compile before they are shipped.
    Catalogue::from_formats(formats.clone(), true, Vec::new(), None)?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for p in &formats {
        let dir = dir_name(&**p);
        for rel in package::package_files(&**p) {
            let bytes = p
                .base()
                .source
                .read(&rel)
                .map_err(|e| e.message().to_string())?
                .unwrap_or_default();
            files.push((format!("{PACKAGES}/{dir}/{rel}"), bytes));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let contents = Contents {
        digest: digest(files.iter().map(|(n, b)| (n.as_str(), b.as_slice()))),
        roots: formats[..paths.len().min(formats.len())]
            .iter()
            .map(|p| dir_name(&**p))
            .collect(),
        packages: formats.iter().map(|p| dir_name(&**p)).collect(),
    };
    write_zip(out, &contents, &files).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(contents)
}

fn digest<'a>(files: impl Iterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut h = Sha256::new();
    for (name, bytes) in files {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn write_zip(out: &Path, c: &Contents, files: &[(String, Vec<u8>)]) -> std::io::Result<()> {
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

fn manifest<R: Read + std::io::Seek>(z: &mut zip::ZipArchive<R>) -> Result<Contents, String> {
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

/// Unpacks the artifact at `path` under `cache` (once per digest: an
/// unpacked digest is reused) after checking its digest, and loads its
/// catalogue; also returns the directory the packages are in.
pub fn load(path: &Path, cache: &Path) -> Result<(Contents, Catalogue, PathBuf), String> {
    let at = |e: String| format!("{}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(|e| at(e.to_string()))?;
    let mut z = zip::ZipArchive::new(file).map_err(|e| at(e.to_string()))?;
    let c = manifest(&mut z).map_err(at)?;
    let dir = cache.join(&c.digest);
    if !dir.join(".complete").exists() {
        unpack(&mut z, &c, &dir).map_err(at)?;
    }
    let pkgs = dir.join(PACKAGES);
    let roots: Vec<PathBuf> = c.roots.iter().map(|r| pkgs.join(r)).collect();
    let cat = Catalogue::load(&roots, std::slice::from_ref(&pkgs), true).map_err(at)?;
    Ok((c, cat, pkgs))
}

fn unpack<R: Read + std::io::Seek>(
    z: &mut zip::ZipArchive<R>,
    c: &Contents,
    dir: &Path,
) -> Result<(), String> {
    // Into a fresh directory, renamed into place when complete: two
    // processes unpacking one digest do not see each other's halves.
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
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

/// A relative path of normal components under `packages/`.
fn safe(name: &str) -> bool {
    let p = Path::new(name);
    p.starts_with(PACKAGES) && p.components().all(|c| matches!(c, Component::Normal(_)))
}
