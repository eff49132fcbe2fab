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
//!
//! Two ways in: [`read`] checks an artifact and holds its packages in
//! memory (what [`Catalogue::load`] does with a path ending in `.mcat`,
//! and so every embedder: nothing is written to disk), and [`load`]
//! unpacks it into a cache directory first (the DataFusion executors: the
//! positions in their messages are then relative to the unpacked
//! packages, the same on every machine).
//!
//! ```
//! use muranopl::{artifact, Catalogue};
//! # let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
//! let out = std::env::temp_dir().join(format!("doc-{}.mcat", std::process::id()));
//! let packed = artifact::pack(&[examples.join("validate")], &[], &out).unwrap();
//! // A .mcat goes where a package directory would.
//! let cat = Catalogue::load(&[out.clone()], &[], true).unwrap();
//! assert_eq!(cat.names(), ["com.example.validate/1.0.0"]);
//! assert_eq!(artifact::contents(&out).unwrap(), packed);
//! # std::fs::remove_file(&out).unwrap();
//! ```

use std::path::{Path, PathBuf};

pub(crate) mod format;

pub use format::{contents, is_artifact, read, Artifact, Contents, MAX_UNPACKED};

use crate::session::{load_formats_roots, Catalogue};
use format::{digest, dir_name, manifest, unpack, write_zip, PACKAGES};

/// Packs the packages at `paths` (directories, .zip files or artifacts)
/// and what they require from `libs` into an artifact at `out`; returns
/// its contents.
pub fn pack(paths: &[PathBuf], libs: &[PathBuf], out: &Path) -> Result<Contents, String> {
    let (formats, roots) = load_formats_roots(paths, libs, None)?;
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
        roots: formats[..roots.min(formats.len())]
            .iter()
            .map(|p| dir_name(&**p))
            .collect(),
        packages: formats.iter().map(|p| dir_name(&**p)).collect(),
    };
    write_zip(out, &contents, &files).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(contents)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn examples() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("muranopl-mcat-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    use std::io::{Read, Write};

    use super::format::MANIFEST;

    /// Rewrites the artifact `from` into `to`, each entry through `f`.
    fn rewrite(from: &Path, to: &Path, f: impl Fn(String, Vec<u8>) -> Option<(String, Vec<u8>)>) {
        let mut z = zip::ZipArchive::new(std::fs::File::open(from).unwrap()).unwrap();
        let mut w = zip::ZipWriter::new(std::fs::File::create(to).unwrap());
        for i in 0..z.len() {
            let mut e = z.by_index(i).unwrap();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            if let Some((name, bytes)) = f(e.name().to_string(), bytes) {
                w.start_file(name, zip::write::SimpleFileOptions::default())
                    .unwrap();
                w.write_all(&bytes).unwrap();
            }
        }
        w.finish().unwrap();
    }

    #[test]
    fn an_artifact_reads_into_memory_as_it_was_packed() {
        let dir = scratch("read");
        let a = dir.join("a.mcat");
        let packed = pack(&[examples().join("hello-app")], &[], &a).unwrap();
        let got = read(&a).unwrap();
        assert_eq!(got.contents, packed);
        let names: Vec<String> = (got.packages.iter())
            .map(|p| format!("{}-{}", p.full_name(), p.version()))
            .collect();
        assert_eq!(names, packed.packages);
        assert_eq!(got.roots().len(), 1);
        assert_eq!(got.roots()[0].full_name(), "com.example.Hello");
        let at = got.roots()[0].base().source.display("Classes/Hello.yaml");
        assert_eq!(
            at,
            format!(
                "{}/packages/{}!/Classes/Hello.yaml",
                a.display(),
                packed.roots[0]
            )
        );
        // Among other paths, and before the search path's copy of the same
        // package: the artifact's roots first, its packages its own.
        let libs = [examples()];
        let paths = [a.clone(), examples().join("validate")];
        let (formats, roots) = load_formats_roots(&paths, &libs, None).unwrap();
        assert_eq!(roots, 2);
        assert_eq!(formats[0].full_name(), "com.example.Hello");
        assert!(formats[0].base().source.location().starts_with(&a));
        assert_eq!(formats[1].full_name(), "com.example.validate");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_tampered_artifact_does_not_read() {
        let dir = scratch("tampered");
        let a = dir.join("a.mcat");
        pack(&[examples().join("validate")], &[], &a).unwrap();
        let err = |f: &dyn Fn(String, Vec<u8>) -> Option<(String, Vec<u8>)>| {
            let b = dir.join("b.mcat");
            rewrite(&a, &b, f);
            read(&b).err().unwrap()
        };
        let e = err(&|n, mut b| {
            if n.ends_with(".yaml") && n.contains("Classes") {
                b.extend_from_slice(b"\n# changed\n");
            }
            Some((n, b))
        });
        assert!(e.contains("digest mismatch"), "{e}");
        let e = err(&|n, b| Some((n.replace("packages/", "packages/../../"), b)));
        assert!(e.contains("an entry outside the artifact"), "{e}");
        let e = err(&|n, b| (n != MANIFEST).then_some((n, b)));
        assert!(
            e.ends_with("no catalog.json: not a catalogue artifact"),
            "{e}"
        );
        // The manifest names a package the files do not hold.
        let e = err(&|n, b| {
            if n != MANIFEST {
                return Some((n, b));
            }
            let mut m: serde_json::Value = serde_json::from_slice(&b).unwrap();
            m["packages"]
                .as_array_mut()
                .unwrap()
                .push("ex.Gone-1.0.0".into());
            Some((n, m.to_string().into_bytes()))
        });
        assert!(e.contains("names ex.Gone-1.0.0, which has no files"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `load` unpacks an artifact into a cache directory named by its
    /// digest (what an executor of a cluster does) and loads the
    /// catalogue from there; packing the same packages twice gives the
    /// same digest.
    #[test]
    fn an_artifact_loads_as_the_catalogue_it_was_packed_from() {
        let dir = scratch("load");
        let (a, b) = (dir.join("a.mcat"), dir.join("b.mcat"));
        let c = pack(&[examples().join("validate")], &[], &a).unwrap();
        let c2 = pack(&[examples().join("validate")], &[], &b).unwrap();
        assert_eq!(c, c2, "the digest is a function of the packages");
        assert_eq!(c.roots, ["com.example.validate-1.0.0"]);
        assert_eq!(contents(&a).unwrap(), c);
        let cache = dir.join("cache");
        let (got, cat, unpacked) = load(&a, &cache).unwrap();
        assert_eq!(unpacked, cache.join(&c.digest).join("packages"));
        assert_eq!(got, c);
        assert!(cache.join(&c.digest).join(".complete").is_file());
        let model = crate::json::from_tagged_str(
            r#"{"?": {"id": "s", "type": "com.example.Server"}, "name": "a", "port": 70000,
                "tags": [], "enabled": true, "settings": {"timeout": 1, "label": "x"}}"#,
        )
        .unwrap();
        let v = cat.validate(&model);
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].1, "port");
        // Loaded again from the unpacked copy.
        assert!(load(&a, &cache).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `load` refuses what `read` refuses, before anything is unpacked
    /// outside its cache.
    #[test]
    fn a_tampered_artifact_does_not_load() {
        let dir = scratch("tampered-load");
        let a = dir.join("a.mcat");
        pack(&[examples().join("validate")], &[], &a).unwrap();
        let changed = dir.join("changed.mcat");
        rewrite(&a, &changed, |name, mut bytes| {
            if name.ends_with("Server.yaml") {
                bytes.extend_from_slice(b"\n# changed\n");
            }
            Some((name, bytes))
        });
        let e = load(&changed, &dir.join("c1")).err().unwrap();
        assert!(e.contains("digest mismatch: the manifest says "), "{e}");
        let escaping = dir.join("escaping.mcat");
        rewrite(&a, &escaping, |name, bytes| {
            Some((name.replace("packages/", "packages/../../"), bytes))
        });
        let e = load(&escaping, &dir.join("c2")).err().unwrap();
        assert!(e.contains("an entry outside the artifact"), "{e}");
        assert!(!dir.join("com.example.validate-1.0.0").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
