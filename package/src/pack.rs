//! Packing a package directory into a .zip.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use runtime::{Result, Value};

use crate::error::load_error;
use crate::format::{validate_images, PackageFormat};
use crate::registry::FormatRegistry;

/// The files of a package directory that go into its .zip: the manifest,
/// `template.yaml` (HOT), `Classes/`, `Resources/`, `UI/`, `images.lst`,
/// the logo and supplier logo.
pub fn package_files(p: &dyn PackageFormat) -> Vec<String> {
    let src = &p.base().source;
    let mut files: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut add = |f: String, files: &mut Vec<String>| {
        if !seen.contains(&f) && src.exists(&f) {
            seen.insert(f.clone());
            files.push(f);
        }
    };
    add("manifest.yaml".into(), &mut files);
    add("template.yaml".into(), &mut files);
    for dir in ["Classes", "Resources", "UI"] {
        for f in src.list(dir) {
            add(format!("{dir}/{f}"), &mut files);
        }
    }
    add("images.lst".into(), &mut files);
    let m = &p.base().manifest;
    if let Some(l) = &m.logo {
        add(l.clone(), &mut files);
    }
    if let Some(Value::Dict(s)) = &m.supplier {
        if let Some(l) = s.get(&Value::str("Logo")).and_then(|l| l.as_str()) {
            add(l.to_string(), &mut files);
        }
    }
    files
}

/// Packs a package directory into a .zip (entries sorted within each part,
/// fixed timestamps) after checking that it loads and its logos are valid;
/// then loads the archive back and checks it is the same package. Returns
/// the entries written.
pub fn pack_package(dir: &Path, out: &Path) -> Result<Vec<String>> {
    use std::io::Write;
    if !dir.is_dir() {
        return Err(load_error(format!(
            "{}: not a package directory",
            dir.display()
        )));
    }
    if let Some(bad) = name_not_utf8(dir) {
        return Err(load_error(format!(
            "{}: the name of {} is not UTF-8, and the entries of a package's .zip are \
             named in UTF-8 (murano reads them so): rename it",
            escape_path(dir),
            escape_path(&bad)
        )));
    }
    let reg = FormatRegistry::builtin();
    let p = reg.load(dir)?;
    if let Some(e) = validate_images(&*p).into_iter().next() {
        return Err(e);
    }
    let out_abs = out.canonicalize().ok();
    let mut files = package_files(&*p);
    files.retain(|f| {
        let full = dir.join(f);
        out_abs.is_none() || full.canonicalize().ok() != out_abs
    });
    let io = |e: std::io::Error| load_error(format!("{}: {e}", out.display()));
    let tmp = out.with_extension("zip.tmp");
    {
        let f = std::fs::File::create(&tmp).map_err(io)?;
        let mut z = zip::ZipWriter::new(f);
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(0o644);
        for rel in &files {
            let bytes = p.base().source.read(rel)?.unwrap_or_default();
            z.start_file(rel.as_str(), o)
                .map_err(|e| load_error(format!("{}: {rel}: {e}", out.display())))?;
            z.write_all(&bytes).map_err(io)?;
        }
        z.finish()
            .map_err(|e| load_error(format!("{}: {e}", out.display())))?;
    }
    std::fs::rename(&tmp, out).map_err(io)?;
    // Round trip: the archive must load as the same package.
    let back = reg.load(out)?;
    if back.full_name() != p.full_name()
        || back.version() != p.version()
        || back.classes() != p.classes()
    {
        return Err(load_error(format!(
            "{}: the archive does not load back as {}/{}",
            out.display(),
            p.full_name(),
            p.version()
        )));
    }
    Ok(files)
}

/// The folders whose files [`package_files`] lists.
const LISTED_DIRS: [&str; 3] = ["Classes", "Resources", "UI"];

/// The first file or folder under the listed folders of package `dir`
/// whose name is not UTF-8 (relative to `dir`): [`crate::Source::list`] cannot
/// name it, and a .zip entry is named in UTF-8, so it would be left out.
fn name_not_utf8(dir: &Path) -> Option<PathBuf> {
    let root = dir.canonicalize().ok()?;
    let mut seen = HashSet::new();
    let mut stack: Vec<PathBuf> = LISTED_DIRS.iter().map(|d| dir.join(d)).collect();
    while let Some(d) = stack.pop() {
        // Folders are read once, and only inside the package (as
        // `Source::list` reads them).
        match d.canonicalize() {
            Ok(real) if real.starts_with(&root) && seen.insert(real.clone()) => {}
            _ => continue,
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_name().to_str().is_none() {
                return Some(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    None
}

/// A path for a message: controls escaped as Python's `repr` writes them,
/// and each byte that is not UTF-8 as `\xNN`.
pub(crate) fn escape_path(p: &Path) -> String {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = p.to_string_lossy().into_owned().into_bytes();
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(&runtime::pyrepr::escape_controls(chunk.valid(), false));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}
