//! The catalogue artifact: packed, named by digest, checked and loaded.

use crate::common;

use std::io::{Read, Write};
use std::path::Path;

use muranopl::artifact;

/// Rewrites the artifact `from` into `to`, passing each entry through `f`
/// (name, bytes) -> Some((name, bytes)) to keep.
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
fn an_artifact_loads_as_the_catalogue_it_was_packed_from() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mcat");
    let b = dir.path().join("b.mcat");
    let c = artifact::pack(&[common::example()], &[], &a).unwrap();
    let c2 = artifact::pack(&[common::example()], &[], &b).unwrap();
    assert_eq!(c, c2, "the digest is a function of the packages");
    assert_eq!(c.roots, ["com.example.validate-1.0.0"]);
    assert_eq!(artifact::contents(&a).unwrap(), c);

    let cache = dir.path().join("cache");
    let (got, cat, dir) = artifact::load(&a, &cache).unwrap();
    assert_eq!(dir, cache.join(&c.digest).join("packages"));
    assert_eq!(got, c);
    assert!(cache.join(&c.digest).join(".complete").is_file());
    let model = muranopl::json::from_tagged_str(
        r#"{"?": {"id": "s", "type": "com.example.Server"}, "name": "a", "port": 70000,
            "tags": [], "enabled": true, "settings": {"timeout": 1, "label": "x"}}"#,
    )
    .unwrap();
    let v = cat.validate(&model);
    assert_eq!(v.violations.len(), 1);
    assert_eq!(v.violations[0].1, "port");
    // Loaded again from the unpacked copy.
    assert!(artifact::load(&a, &cache).is_ok());
}

#[test]
fn a_tampered_artifact_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mcat");
    artifact::pack(&[common::example()], &[], &a).unwrap();

    let changed = dir.path().join("changed.mcat");
    rewrite(&a, &changed, |name, mut bytes| {
        if name.ends_with("Server.yaml") {
            bytes.extend_from_slice(b"\n# changed\n");
        }
        Some((name, bytes))
    });
    let e = artifact::load(&changed, &dir.path().join("c1"))
        .err()
        .unwrap();
    assert!(e.contains("digest mismatch: the manifest says "), "{e}");

    let escaping = dir.path().join("escaping.mcat");
    rewrite(&a, &escaping, |name, bytes| {
        Some((name.replace("packages/", "packages/../../"), bytes))
    });
    let e = artifact::load(&escaping, &dir.path().join("c2"))
        .err()
        .unwrap();
    assert!(e.contains("an entry outside the artifact"), "{e}");
    assert!(!dir.path().join("com.example.validate-1.0.0").exists());

    let no_manifest = dir.path().join("none.mcat");
    rewrite(&a, &no_manifest, |name, bytes| {
        (name != "catalog.json").then_some((name, bytes))
    });
    let e = artifact::contents(&no_manifest).err().unwrap();
    assert!(
        e.ends_with("no catalog.json: not a catalogue artifact"),
        "{e}"
    );
}
