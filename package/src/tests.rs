//! The package crate's unit tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use compiler::murano::load_documents;
use runtime::{Result, Value};
use semver::Version;

use super::*;
use crate::error::class_error;
use crate::hot::{as_int, dget};
use crate::source::MAX_ZIP_ENTRY;

fn v(s: &str) -> Version {
    Version::parse(s).unwrap()
}

fn manifest(text: &str) -> Result<Manifest> {
    Manifest::parse(text, "manifest.yaml")
}

#[test]
fn formats() {
    let f = FormatId::parse("1.3").unwrap();
    assert_eq!(f.to_string(), "MuranoPL/1.3.0");
    let f = FormatId::parse("Heat.HOT/1.0").unwrap();
    assert_eq!(
        (f.name.as_str(), f.version.clone()),
        ("Heat.HOT", v("1.0.0"))
    );
    assert_eq!(FormatId::parse("2").unwrap().version, v("2.0.0"));
    assert!(FormatId::parse("MuranoPL/x.y").is_err());
    assert!(FormatId::parse("/1.0").is_err());
    let r = FormatRegistry::builtin();
    for ok in [
        "1.0",
        "1.1",
        "1.2",
        "1.3",
        "1.4",
        "MuranoPL/1.4.2",
        "Heat.HOT/1.0",
    ] {
        assert!(r.find(&FormatId::parse(ok).unwrap()).is_some(), "{ok}");
    }
    for bad in ["1.5", "2.0", "0.9", "Heat.HOT/2.0", "Cloudify.TOSCA/1.0"] {
        assert!(r.find(&FormatId::parse(bad).unwrap()).is_none(), "{bad}");
    }
}

#[test]
fn manifest_fields() {
    let m = manifest(
        "Format: 1.3\nType: Application\nFullName: com.example.App\nName: My App\n\
         Description: d\nAuthor: 'A, Inc'\nTags: [a, b]\nClasses:\n  com.example.App: App.yaml\n\
         Require:\n  com.example.Lib:\n  io.murano: '>=0'\nVersion: 1.2\nMeta: {x: 1}\n\
         Supplier:\n  Name: S\n  Logo: s.png\n",
    )
    .unwrap();
    assert_eq!(m.format.to_string(), "MuranoPL/1.3.0");
    assert_eq!(m.full_name, "com.example.App");
    assert_eq!(m.display_name, "My App");
    assert_eq!(m.author.as_deref(), Some("A, Inc"));
    assert_eq!(m.tags, ["a", "b"]);
    assert_eq!(
        m.classes,
        [("com.example.App".to_string(), "App.yaml".to_string())]
    );
    assert_eq!(m.require.len(), 2);
    assert_eq!(m.version, v("1.2.0"));
    assert_eq!(m.ui, "ui.yaml");
    assert!(!m.logo_explicit);
    let d = manifest("FullName: a.b\nType: Library\n").unwrap();
    assert_eq!(d.format.to_string(), "MuranoPL/1.0.0");
    assert_eq!(d.display_name, "a.b");
    assert_eq!(d.version, v("0.0.0"));
}

#[test]
fn manifest_errors() {
    let cases: &[(&str, &str)] = &[
        ("", "the manifest is empty"),
        ("- a\n", "manifest.yaml:1:1: the manifest must be a mapping"),
        ("Type: Application\n", "has no FullName"),
        (
            "FullName: .a\nType: Library\n",
            "manifest.yaml:1:11: Invalid FullName .a",
        ),
        ("FullName: a b\nType: Library\n", "Invalid FullName a b"),
        ("FullName: a\n", "has no Type"),
        (
            "FullName: a\nType: App\n",
            "manifest.yaml:2:7: Invalid package Type App",
        ),
        (
            "FullName: a\nType: Library\nFormat: 1.x\n",
            "manifest.yaml:3:9: invalid Format",
        ),
        (
            "FullName: a\nType: Library\nTags: x\n",
            "manifest.yaml:3:7: manifest Tags must be a list",
        ),
        (
            "FullName: a\nType: Library\nClasses: [a]\n",
            "manifest.yaml:3:10: manifest Classes must be a mapping",
        ),
        (
            "FullName: a\nType: Library\nClasses:\n  a.B:\n",
            "class a.B has no file",
        ),
        (
            "FullName: a\nType: Library\nClasses:\n  a.B: ../x.yaml\n",
            "manifest.yaml:4:8: invalid path",
        ),
        (
            "FullName: a\nType: Library\nRequire: [x]\n",
            "manifest Require must be a mapping",
        ),
        (
            "FullName: a\nType: Library\nRequire:\n  b: '~~1'\n",
            "manifest.yaml:4:6: invalid version spec",
        ),
        (
            "FullName: a\nType: Library\nVersion: abc\n",
            "manifest.yaml:3:10: invalid version \"abc\"",
        ),
        (
            "FullName: a\nType: Library\nFullName: b\n",
            "manifest.yaml:3:1: duplicate manifest key FullName",
        ),
        (
            "FullName: a\nType: Library\nSupplier: x\n",
            "manifest Supplier must be a mapping",
        ),
        (
            "FullName: [a]\nType: Library\n",
            "manifest.yaml:1:11: manifest FullName must be a scalar",
        ),
        (
            "FullName: a\nType: Library\n---\nx: 1\n",
            "single YAML document",
        ),
        ("FullName: a\n  Type: : x\n", "manifest.yaml:"),
    ];
    for (text, want) in cases {
        let e = manifest(text)
            .err()
            .unwrap_or_else(|| panic!("{text:?} should fail"));
        assert!(
            e.message().contains(want),
            "{text:?}: {} (want {want})",
            e.message()
        );
    }
}

#[test]
fn version_specs() {
    let m = |spec: Option<&str>, ver: &str| VersionSpec::parse(spec).unwrap().matches(&v(ver));
    // Empty = 0 = any 0.x.
    assert!(m(None, "0.0.0") && m(None, "0.9.1") && !m(None, "1.0.0"));
    // A partial version is a range.
    assert!(m(Some("1.2"), "1.2.0") && m(Some("1.2"), "1.2.9") && !m(Some("1.2"), "1.3.0"));
    assert!(m(Some("==1"), "1.7.0") && !m(Some("==1"), "2.0.0"));
    assert!(m(Some("1.2.3"), "1.2.3") && !m(Some("1.2.3"), "1.2.4"));
    assert!(m(Some(">=1.0"), "3.0.0") && !m(Some(">=1.0"), "0.9.0"));
    assert!(m(Some(">1"), "2.0.0") && !m(Some(">1"), "1.9.0"));
    assert!(m(Some("<2"), "1.9.9") && !m(Some("<2"), "2.0.0"));
    assert!(m(Some("<=1.1"), "1.1.5") && !m(Some("<=1.1"), "1.2.0"));
    assert!(m(Some("!=1.1"), "1.0.0") && m(Some("!=1.1"), "1.2.0") && !m(Some("!=1.1"), "1.1.3"));
    assert!(m(Some(">=1.0, <2.0"), "1.5.0") && !m(Some(">=1.0,<2.0"), "2.0.0"));
    assert!(m(Some("*"), "7.0.0"));
    assert!(VersionSpec::parse(Some("abc")).is_err());
}

struct Fake {
    base: PackageBase,
}
impl PackageFormat for Fake {
    fn base(&self) -> &PackageBase {
        &self.base
    }
    fn classes(&self) -> Vec<String> {
        Vec::new()
    }
    fn get_class(&self, name: &str) -> Result<ClassSource> {
        Err(class_error(name.to_string()))
    }
    fn ui(&self) -> Result<Option<String>> {
        Ok(None)
    }
}

fn fake(name: &str, version: &str, require: &[(&str, &str)]) -> Arc<dyn PackageFormat> {
    let mut text = format!("FullName: {name}\nType: Library\nVersion: {version}\n");
    if !require.is_empty() {
        text.push_str("Require:\n");
        for (n, s) in require {
            text.push_str(&format!("  {n}: '{s}'\n"));
        }
    }
    Arc::new(Fake {
        base: PackageBase {
            source: Source::Dir(PathBuf::from("/nonexistent")),
            manifest: manifest(&text).unwrap(),
        },
    })
}

fn loader(pkgs: &[Arc<dyn PackageFormat>]) -> PackageLoader {
    let mut l = PackageLoader {
        registry: FormatRegistry::builtin(),
        found: BTreeMap::new(),
        broken: Vec::new(),
        repositories: Vec::new(),
    };
    for p in pkgs {
        l.add(PathBuf::from(p.full_name()), p.clone());
    }
    l
}

fn names(ps: &[Arc<dyn PackageFormat>]) -> Vec<String> {
    let mut v: Vec<String> = ps
        .iter()
        .map(|p| format!("{}/{}", p.full_name(), p.version()))
        .collect();
    v.sort();
    v
}

#[test]
fn resolution() {
    let l = loader(&[
        fake("lib", "1.0.0", &[]),
        fake("lib", "1.5.0", &[]),
        fake("lib", "2.0.0", &[]),
        fake("mid", "1.0.0", &[("lib", ">=1.2")]),
        fake("old", "1.0.0", &[("lib", "1")]),
        fake("new", "1.0.0", &[("lib", "2")]),
    ]);
    // Highest matching version.
    let root = fake("app", "1.0.0", &[("lib", ">=1.0")]);
    assert_eq!(names(&l.resolve(&root).unwrap()), ["lib/2.0.0"]);
    // One version satisfies both: fewest versions.
    let root = fake("app", "1.0.0", &[("old", "1"), ("mid", "1")]);
    assert_eq!(
        names(&l.resolve(&root).unwrap()),
        ["lib/1.5.0", "mid/1.0.0", "old/1.0.0"]
    );
    // A version chosen first and dropped as redundant leaves nothing
    // behind: `lib 2.1.0` would need `extra`, but `exact` pins 2.0.0,
    // which satisfies `>=2` too.
    let l2 = loader(&[
        fake("lib", "2.0.0", &[]),
        fake("lib", "2.1.0", &[("extra", "1")]),
        fake("extra", "1.0.0", &[]),
        fake("exact", "1.0.0", &[("lib", "==2.0.0")]),
    ]);
    let root = fake("app", "1.0.0", &[("lib", ">=2"), ("exact", "1")]);
    assert_eq!(
        names(&l2.resolve(&root).unwrap()),
        ["exact/1.0.0", "lib/2.0.0"]
    );
    // Incompatible specs: side by side.
    let root = fake("app", "1.0.0", &[("old", "1"), ("new", "1")]);
    assert_eq!(
        names(&l.resolve(&root).unwrap()),
        ["lib/1.5.0", "lib/2.0.0", "new/1.0.0", "old/1.0.0"]
    );
    // Missing and unsatisfiable requirements, core always there.
    let root = fake(
        "app",
        "1.0.0",
        &[("nope", ""), ("lib", "3"), ("io.murano", "")],
    );
    let e = l.resolve(&root).err().unwrap();
    assert!(
        e.message()
            .contains("required package nope (>=0.0.0,<1.0.0-0) of app is not found"),
        "{}",
        e.message()
    );
    assert!(
        e.message().contains(
            "lib (>=3.0.0,<4.0.0-0) of app: no matching version (found 2.0.0, 1.5.0, 1.0.0)"
        ),
        "{}",
        e.message()
    );
}

#[test]
fn an_edited_copy_replaces_the_same_version_and_keeps_its_path() {
    let mut l = loader(&[fake("lib", "1.0.0", &[]), fake("lib", "2.0.0", &[])]);
    // The edited 2.0.0 now requires `extra`: resolution sees the edit.
    l.add(PathBuf::from("extra"), fake("extra", "1.0.0", &[]));
    let edited = fake("lib", "2.0.0", &[("extra", "1")]);
    l.replace(edited.clone());
    let found = &l.found["lib"];
    let versions: Vec<String> = found.iter().map(|f| f.version.to_string()).collect();
    assert_eq!(versions, ["2.0.0", "1.0.0"]);
    assert!(Arc::ptr_eq(&found[0].package, &edited));
    assert_eq!(found[0].path, PathBuf::from("lib"));
    let root = fake("app", "1.0.0", &[("lib", "2")]);
    assert_eq!(
        names(&l.resolve(&root).unwrap()),
        ["extra/1.0.0", "lib/2.0.0"]
    );
    // A version the search path lacks is added beside the others.
    l.replace(fake("lib", "3.0.0", &[]));
    let versions: Vec<String> = (l.found["lib"].iter())
        .map(|f| f.version.to_string())
        .collect();
    assert_eq!(versions, ["3.0.0", "2.0.0", "1.0.0"]);
}

#[test]
fn images() {
    assert!(check_image(b"\x89PNG\r\n\x1a\nxxxx").is_ok());
    assert!(check_image(b"GIF89a..").is_ok());
    assert!(check_image(b"not an image").is_err());
    let imgs = parse_images("Images:\n- Name: a\n  Hash: x\n", "images.lst").unwrap();
    assert_eq!(imgs[0].name, "a");
    let e = parse_images("Images:\n- Hash: x\n", "images.lst").unwrap_err();
    assert!(
        e.message().starts_with("images.lst:2:3:"),
        "{}",
        e.message()
    );
}

#[test]
fn hot_contracts() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/packages");
    let f = fixtures.join("hot_package/test.hot.1/properties_manifest.yaml");
    let Ok(text) = std::fs::read_to_string(&f) else {
        eprintln!("skipped: no fixtures at {}", f.display());
        return;
    };
    let hot = node_value(&load_documents(&text, "t").unwrap()[0]);
    let params = dget(&hot, "parameters").unwrap();
    let p = |k: &str| hot_param_contract(dget(params, k).unwrap()).unwrap();
    assert_eq!(p("param1"), "$.bool().check($ in list(True, False))");
    assert_eq!(
        p("param2"),
        "$.string().check($ in list('bar')).check(len($) <= 50).check(len($) >= 0).check(matches($, '[A-Za-z0-9]'))"
    );
    assert_eq!(
        p("param3"),
        "$.int().check($ in list(0, 1, 2, 3, 4)).check(len($) >= 0 and len($) <= 5).check($ >= 0 and $ <= 4)"
    );
    assert_eq!(p("param4"), "$.int().check($ >= -1000).check($ <= 1000)");
    assert_eq!(p("param5"), "$.string()");
    assert_eq!(p("param6"), "$.string()");
    let bad = node_value(&load_documents("type: float\n", "t").unwrap()[0]);
    assert!(hot_param_contract(&bad)
        .unwrap_err()
        .contains("Unsupported parameter type"));
}

fn hot(dir: &str) -> Option<HotPackage> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/packages/hot_package")
        .join(dir);
    if !d.is_dir() {
        eprintln!("skipped: no fixtures at {}", d.display());
        return None;
    }
    let m = manifest(
        "Format: Heat.HOT/1.0\nFullName: FullTestName\nVersion: 1.0.0\nType: Application\n",
    )
    .unwrap();
    Some(HotPackage {
        base: PackageBase {
            source: Source::Dir(d),
            manifest: m,
        },
    })
}

#[test]
fn hot_package() {
    let Some(p) = hot("test.hot.1") else { return };
    assert_eq!(p.classes(), ["FullTestName"]);
    assert!(p
        .get_class("Other")
        .unwrap_err()
        .message()
        .contains("not defined"));
    let (pkg, errors) = to_package(&p);
    assert!(errors.is_empty(), "{errors:?}");
    let d = pkg.decl("FullTestName").unwrap();
    assert_eq!(d.extends, ["io.murano.Application"]);
    let props: Vec<&str> = d.properties.iter().map(|p| p.name.as_str()).collect();
    for want in [
        "generatedHeatStackName",
        "hotEnvironment",
        "name",
        "templateParameters",
        "templateOutputs",
    ] {
        assert!(props.contains(&want), "{props:?}");
    }
    let ex = engine::Executor::new(vec![pkg]);
    ex.class("FullTestName").unwrap();
    let ui = p.ui().unwrap().unwrap();
    let flat: String = ui.chars().filter(|c| !c.is_whitespace()).collect();
    for want in [
        "\"classVersion\":\"1.0.0\"",
        "\"package\":\"FullTestName\"",
        "\"name\":!yaql\"$.group0.name\"",
        "\"bar\":!yaql\"$.group1.bar\"",
        "\"foo\":!yaql\"$.group1.foo\"",
    ] {
        assert!(flat.contains(want), "{want} not in {ui}");
    }
    let Some(p2) = hot("test.hot.2") else { return };
    assert!(p2
        .translate_class()
        .unwrap_err()
        .message()
        .contains("Not a HOT template"));
}

/// The generated UI as murano's `_translate_ui_parameters` and
/// `_translate_ui_parameter` (murano/packages/hot_package.py) make it:
/// a hidden `title` and the name first; grouped parameters, then the
/// rest; labels in title case; a default makes a field optional;
/// constraints become length limits and validators; `hidden:`
/// parameters are shown like any other.
#[test]
fn hot_ui_follows_murano() {
    let dir = std::env::temp_dir().join(format!("muranopl-hot-ui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("template.yaml"),
        "heat_template_version: 2013-05-23\nresources: {}\nparameters:\n  \
         key_name: {type: string, hidden: true}\n  \
         flavor: {type: string, default: m1.small, constraints: [{allowed_values: [m1.small, m1.big], description: pick one}]}\n  \
         count: {type: number, constraints: [{range: {min: 1, max: 3}}, {length: {min: 2}}]}\n  \
         tag: {type: string, constraints: [{allowed_pattern: '[a-z]+'}]}\n\
         parameter_groups:\n  - parameters: [flavor, missing]\n",
    )
    .unwrap();
    let p = HotPackage {
        base: PackageBase {
            source: Source::Dir(dir.clone()),
            manifest: manifest(
                "Format: Heat.HOT/1.0\nFullName: ex.Hot\nType: Application\nDescription: A stack\n",
            )
            .unwrap(),
        },
    };
    let ui = p.translate_ui().unwrap();
    let doc = node_value(&load_documents(&ui, "ui").unwrap()[0]);
    let forms = dget(&doc, "Forms").unwrap().clone();
    let fields = |i: usize| -> Vec<Value> {
        let Value::List(f) = &forms else {
            panic!("{ui}")
        };
        let g = dget(&f[i], &format!("group{i}")).unwrap();
        match dget(g, "fields") {
            Some(Value::List(l)) => l.to_vec(),
            _ => Vec::new(),
        }
    };
    let names = |i: usize| -> Vec<String> {
        fields(i)
            .iter()
            .map(|f| runtime::pyrepr::to_str(dget(f, "name").unwrap()))
            .collect()
    };
    assert_eq!(names(0), ["title", "name"]);
    assert_eq!(names(1), ["flavor"]);
    assert_eq!(names(2), ["key_name", "count", "tag"]);
    let field = |i: usize, n: &str| {
        fields(i)
            .into_iter()
            .find(|f| dget(f, "name").and_then(|v| v.as_str()) == Some(n))
            .unwrap()
    };
    let title = field(0, "title");
    assert_eq!(dget(&title, "hidden"), Some(&Value::Bool(true)));
    assert_eq!(
        dget(&title, "description").and_then(|v| v.as_str()),
        Some("A stack")
    );
    let key = field(2, "key_name");
    assert_eq!(
        dget(&key, "label").and_then(|v| v.as_str()),
        Some("Key Name")
    );
    assert_eq!(dget(&key, "hidden"), None);
    assert_eq!(dget(&key, "required"), Some(&Value::Bool(true)));
    let flavor = field(1, "flavor");
    assert_eq!(dget(&flavor, "required"), Some(&Value::Bool(false)));
    let count = field(2, "count");
    assert_eq!(dget(&count, "minLength").and_then(as_int), Some(2));
    assert!(
        ui.contains(
            "expr: !yaql \"$ in list('m1.small', 'm1.big')\"\n              message: \"pick one\""
        ),
        "{ui}"
    );
    assert!(ui.contains("expr: !yaql \"$ >= 1 and $ <= 3\""), "{ui}");
    assert!(ui.contains("regexpValidator: \"[a-z]+\""), "{ui}");
    assert!(ui.contains("\"count\": !yaql \"$.group2.count\""), "{ui}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn zip_package() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("muranopl-zip-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.zip");
    {
        let f = std::fs::File::create(&path).unwrap();
        let mut z = zip::ZipWriter::new(f);
        let o = zip::write::SimpleFileOptions::default();
        z.start_file("manifest.yaml", o).unwrap();
        z.write_all(b"Format: 1.3\nType: Library\nFullName: z.p\nClasses:\n  z.p.A: A.yaml\n")
            .unwrap();
        z.start_file("Classes/A.yaml", o).unwrap();
        z.write_all(b"Namespaces: {=: z.p}\nName: A\n").unwrap();
        z.start_file("Resources/r.txt", o).unwrap();
        z.write_all(b"hello").unwrap();
        z.finish().unwrap();
    }
    let p = FormatRegistry::builtin().load(&path).unwrap();
    assert_eq!(p.full_name(), "z.p");
    assert!(p
        .get_class("z.p.A")
        .unwrap()
        .file
        .ends_with("p.zip!/Classes/A.yaml"));
    assert_eq!(p.get_resource("r.txt").unwrap(), b"hello");
    let (pkg, errors) = to_package(&*p);
    assert!(errors.is_empty());
    assert_eq!(pkg.class_names(), ["z.p.A"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn fixtures() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/packages");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipped: no fixtures at {}", d.display());
        None
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "muranopl-pkg-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn fixture_test_packages() {
    let Some(f) = fixtures() else { return };
    let r = FormatRegistry::builtin();
    let hot = r.load(&f.join("test_packages/test.hot.v1.app")).unwrap();
    assert_eq!(hot.format_name(), "Heat.HOT");
    assert_eq!(hot.classes(), ["test.hot.v1.app"]);
    let (pkg, errors) = to_package(&*hot);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        pkg.decl("test.hot.v1.app").unwrap().extends,
        ["io.murano.Application"]
    );
    let mpl = r.load(&f.join("test_packages/test.mpl.v1.app")).unwrap();
    assert_eq!(mpl.runtime_version(), &v("1.0.0"));
    for p in [&hot, &mpl] {
        let s = p.supplier().unwrap();
        let g = |k: &str| dget(s, k).cloned().unwrap_or(Value::Null);
        assert_eq!(g("Name").as_str(), Some("Supplier Name"));
        assert_eq!(g("Logo").as_str(), Some("test_supplier_logo.png"));
        assert_eq!(
            dget(&g("CompanyUrl"), "Link").and_then(|l| l.as_str()),
            Some("http://example.com")
        );
        assert_eq!(
            g("Summary").as_str().map(str::trim),
            Some("Company summary goes here")
        );
        let logo = p.supplier_logo().unwrap().unwrap();
        assert!(logo.starts_with(b"\x89PNG"));
        assert!(validate_images(&**p).is_empty());
    }
    // Resources/HotFiles.
    let files = r
        .load(&f.join("test_packages/test.hot.v1.app_with_files"))
        .unwrap();
    let mut got = files.base().source.list("Resources/HotFiles");
    got.sort();
    assert_eq!(
        got,
        [
            "middle_file/inner_file/testHeatFile",
            "middle_file/inner_file2/testHeatFile",
            "middle_file/testHeatFile",
            "testHeatFile"
        ]
    );
    assert!(hot.base().source.list("Resources/HotFiles").is_empty());
}

#[test]
fn fixture_broken_logo() {
    let Some(f) = fixtures() else { return };
    let d = temp_dir("logo");
    copy_dir(&f.join("test_packages/test.mpl.v1.app"), &d);
    std::fs::copy(
        d.join("manifest_with_broken_logo.yaml"),
        d.join("manifest.yaml"),
    )
    .unwrap();
    let p = FormatRegistry::builtin().load(&d).unwrap();
    let e = p.logo().unwrap_err();
    assert_eq!(e.kind(), "PackageLoadError");
    assert!(
        e.message().contains("Unable to load logo")
            && e.message().contains("test_logo.png.not_valid")
            && e.message().contains("Unsupported Format"),
        "{}",
        e.message()
    );
    assert_eq!(validate_images(&*p).len(), 1);
    let e = pack_package(&d, &d.join("out.zip")).unwrap_err();
    assert!(e.message().contains("Unsupported Format"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn fixture_unsupported_formats() {
    let Some(f) = fixtures() else { return };
    for (dir, fmt) in [
        ("cloudify-nodecellar", "Cloudify.TOSCA/1.0.0"),
        ("csar-hello_world", "TOSCA.CSAR/1.1.0"),
        ("csar-wordpress", "TOSCA.CSAR/1.1.0"),
    ] {
        let e = FormatRegistry::builtin()
            .load(&f.join(dir))
            .err()
            .unwrap_or_else(|| panic!("{dir} should not load"));
        assert_eq!(e.kind(), "PackageFormatError");
        assert!(
            e.message().contains(&format!("Unsupported format {fmt}")),
            "{dir}: {}",
            e.message()
        );
    }
}

#[test]
fn fixture_mpl_package() {
    let Some(f) = fixtures() else { return };
    let p = FormatRegistry::builtin()
        .load(&f.join("mpl_package"))
        .unwrap();
    assert_eq!(p.classes(), ["Class1", "Class2"]);
    let c1 = p.get_class("Class1").unwrap();
    assert_eq!(
        c1.text,
        std::fs::read_to_string(f.join("mpl_package/Classes/test.class1")).unwrap()
    );
    for bad in ["Class2", "Invalid name"] {
        assert_eq!(
            p.get_class(bad).unwrap_err().kind(),
            "PackageClassLoadError"
        );
    }
    let ui = p.ui().unwrap().unwrap();
    for want in [
        "name: license",
        "type: string",
        "description: Apache License, Version 2.0",
        "hidden: false",
        "required: false",
    ] {
        assert!(ui.contains(want), "{want}");
    }
    assert!(p.requirements().is_empty());
    assert_eq!(p.meta().and_then(|m| m.as_str()), Some("test.meta"));
}

#[test]
fn fixture_hot_without_template() {
    let d = temp_dir("notemplate");
    write(
        &d.join("manifest.yaml"),
        "Format: Heat.HOT/1.0\nFullName: x.Hot\nType: Application\n",
    );
    let p = FormatRegistry::builtin().load(&d).unwrap();
    for e in [p.get_class("x.Hot").unwrap_err(), p.ui().unwrap_err()] {
        assert!(
            e.message().contains("File with class definition not found"),
            "{}",
            e.message()
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn repository_and_bundles() {
    let d = temp_dir("repo");
    let pkg = |dir: &str, name: &str, ver: &str, req: &str| {
        write(
            &d.join("apps").join(dir).join("manifest.yaml"),
            &format!("FullName: {name}\nType: Library\nVersion: {ver}\n{req}"),
        );
    };
    pkg("lib1", "ex.Lib", "1.0.0", "");
    pkg("lib2", "ex.Lib", "2.1.0", "");
    pkg("app", "ex.App", "0.3.0", "Require:\n  ex.Lib: '1'\n");
    std::fs::create_dir_all(d.join("images")).unwrap();
    write(&d.join("images/img1"), "x");
    write(
        &d.join("bundles/b.bundle"),
        r#"{"Packages": [{"Name": "ex.App"}, {"Version": "", "Name": "ex.Lib"}], "Version": 1}"#,
    );
    write(
        &d.join("bundles/y.yaml"),
        "Packages:\n- Name: ex.Lib\n  Version: 1.0\n",
    );
    assert!(is_repository(&d));
    let l = PackageLoader::new(std::slice::from_ref(&d)).unwrap();
    assert_eq!(l.repositories, std::slice::from_ref(&d));
    assert_eq!(l.found["ex.Lib"].len(), 2);
    assert!(l.find_image("img1").is_some() && l.find_image("../x").is_none());
    let b = load_bundle(&l.find_bundle("b").unwrap()).unwrap();
    let items = l.resolve_bundle(&b).unwrap();
    let got: Vec<(String, String, Option<String>)> = items
        .iter()
        .map(|i| {
            (
                i.found.name.clone(),
                i.found.version.to_string(),
                i.required_by.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("ex.App".into(), "0.3.0".into(), None),
            ("ex.Lib".into(), "2.1.0".into(), None),
            ("ex.Lib".into(), "1.0.0".into(), Some("ex.App/0.3.0".into())),
        ]
    );
    // YAML, a version (YAML float text kept as written).
    let b = load_bundle(&l.find_bundle("y").unwrap()).unwrap();
    assert_eq!(b.entries[0].version.as_deref(), Some("1.0"));
    assert_eq!(l.resolve_bundle(&b).unwrap()[0].found.version, v("1.0.0"));
    // Unresolvable entries, all reported.
    let b = parse_bundle(
        "Packages:\n- Name: ex.Nope\n- {Name: ex.Lib, Version: '3'}\n",
        "bad.bundle",
    )
    .unwrap();
    let e = l.resolve_bundle(&b).err().unwrap();
    let m = e.message();
    assert!(
        m.contains("bad.bundle:2:3: bundle package ex.Nope (latest) is not found"),
        "{m}"
    );
    assert!(
        m.contains(
            "bad.bundle:3:3: bundle package ex.Lib (3): no matching version (found 2.1.0, 1.0.0)"
        ),
        "{m}"
    );
    // Malformed bundles.
    for (text, want) in [
        ("", "the bundle is empty"),
        ("[1]", "bundle must be a mapping"),
        ("{}", "no Packages list"),
        ("Packages: 3", "bundle Packages must be a list"),
        ("Packages: [x]", "bundle entry must be a mapping"),
        ("Packages: [{Version: 1}]", "has no Name"),
        ("Packages: [{Name: 'a b'}]", "Invalid package name"),
        (
            "Packages: [{Name: a, Version: '~~1'}]",
            "invalid version spec",
        ),
    ] {
        let e = parse_bundle(text, "t")
            .err()
            .unwrap_or_else(|| panic!("{text}"));
        assert!(e.message().contains(want), "{text}: {}", e.message());
    }
    // A plain directory is not a repository.
    assert!(!is_repository(&d.join("apps")));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bundle_fixture() {
    let Some(f) = fixtures() else { return };
    let b = load_bundle(&f.join("bundles/example.bundle")).unwrap();
    let names: Vec<&str> = b.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "com.example.apache.ApacheHttpServer",
            "com.example.apache.Tomcat"
        ]
    );
    assert!(b.entries.iter().all(|e| e.version.is_none()));
}

#[test]
fn class_versions() {
    assert_eq!(
        parse_type_string("a.B/1.2.3@a"),
        ("a.B".into(), Some("1.2.3".into()), Some("a".into()))
    );
    assert_eq!(parse_type_string("a.B"), ("a.B".into(), None, None));
    assert_eq!(
        parse_type_string("a.B@p"),
        ("a.B".into(), None, Some("p".into()))
    );
    let d = temp_dir("cv");
    write(
        &d.join("manifest.yaml"),
        "FullName: ex.P\nType: Library\nVersion: 1.2.3\nClasses:\n  ex.P.C: C.yaml\n",
    );
    write(&d.join("Classes/C.yaml"), "Name: ex.P.C\n");
    let p = FormatRegistry::builtin().load(&d).unwrap();
    let pkgs = [p];
    let model = |hdr: &str| {
        runtime::json::from_tagged_str(&format!(
            r#"{{"Objects": {{"?": {{"type": "io.murano.Environment", "id": "e"}},
               "applications": [{{"?": {{"id": "x", {hdr}}}}}]}}}}"#
        ))
        .unwrap()
    };
    for ok in [
        r#""type": "ex.P.C""#,
        r#""type": "ex.P.C", "classVersion": "1.2""#,
        r#""type": "ex.P.C", "classVersion": "1.2.3", "package": "ex.P""#,
        r#""type": "ex.P.C/1.2.3@ex.P""#,
        r#""type": "ex.P.C", "classVersion": ">=1.0,<2""#,
        r#""type": "ex.P.C", "classVersion": """#,
        r#""type": "other.Class/9.0""#,
    ] {
        check_model_versions(&model(ok), &pkgs).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
    }
    for (bad, want) in [
        (
            r#""type": "ex.P.C", "classVersion": "2.0""#,
            "object x (ex.P.C): classVersion asks for class ex.P.C version 2.0",
        ),
        (
            r#""type": "ex.P.C/1.3@ex.P""#,
            "type asks for class ex.P.C version 1.3 (>=1.3.0,<1.4.0-0), but the loaded package provides ex.P/1.2.3",
        ),
        (
            r#""type": "ex.P.C", "package": "ex.Q""#,
            "from package ex.Q, which is not loaded",
        ),
        (r#""type": "ex.P.C", "classVersion": "x.y""#, "invalid classVersion"),
    ] {
        let e = check_model_versions(&model(bad), &pkgs)
            .err()
            .unwrap_or_else(|| panic!("{bad} should fail"));
        assert!(e.message().contains(want), "{bad}: {}", e.message());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn pack_round_trip() {
    let d = temp_dir("pack");
    let src = d.join("pkg");
    write(
        &src.join("manifest.yaml"),
        "Format: 1.3\nFullName: ex.Packed\nType: Application\nVersion: 1.0.1\n\
         Classes:\n  ex.Packed: App.yaml\n  ex.Packed.Sub: sub/Sub.yaml\n",
    );
    write(
        &src.join("Classes/App.yaml"),
        "Namespaces: {=: ex}\nName: Packed\n",
    );
    write(
        &src.join("Classes/sub/Sub.yaml"),
        "Namespaces: {=: ex.Packed}\nName: Sub\n",
    );
    write(&src.join("Resources/scripts/run.sh"), "echo hi\n");
    write(&src.join("UI/ui.yaml"), "Version: 2\nForms: []\n");
    write(&src.join("images.lst"), "Images:\n- Name: img\n");
    std::fs::write(src.join("logo.png"), b"\x89PNG\r\n\x1a\nxxxx").unwrap();
    write(&src.join("notes.txt"), "not packed");
    let out = d.join("ex.Packed.zip");
    let files = pack_package(&src, &out).unwrap();
    assert_eq!(
        files,
        [
            "manifest.yaml",
            "Classes/App.yaml",
            "Classes/sub/Sub.yaml",
            "Resources/scripts/run.sh",
            "UI/ui.yaml",
            "images.lst",
            "logo.png"
        ]
    );
    let a = FormatRegistry::builtin().load(&src).unwrap();
    let b = FormatRegistry::builtin().load(&out).unwrap();
    assert_eq!(a.full_name(), b.full_name());
    assert_eq!(a.version(), b.version());
    for c in a.classes() {
        assert_eq!(a.get_class(&c).unwrap().text, b.get_class(&c).unwrap().text);
    }
    assert_eq!(b.get_resource("scripts/run.sh").unwrap(), b"echo hi\n");
    assert_eq!(a.ui().unwrap(), b.ui().unwrap());
    assert_eq!(b.images().unwrap()[0].name, "img");
    assert_eq!(a.logo().unwrap(), b.logo().unwrap());
    assert!(validate_images(&*b).is_empty());
    let (pkg, errors) = to_package(&*b);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(pkg.class_names(), ["ex.Packed", "ex.Packed.Sub"]);
    // Deterministic.
    let first = std::fs::read(&out).unwrap();
    pack_package(&src, &out).unwrap();
    assert_eq!(first, std::fs::read(&out).unwrap());
    // HOT packages keep their template.
    if let Some(f) = fixtures() {
        let out = d.join("hot.zip");
        let files = pack_package(&f.join("test_packages/test.hot.v1.app"), &out).unwrap();
        assert!(files.contains(&"template.yaml".to_string()), "{files:?}");
        let p = FormatRegistry::builtin().load(&out).unwrap();
        assert!(to_package(&*p).1.is_empty());
    }
    assert!(pack_package(&d.join("missing"), &d.join("m.zip")).is_err());
    let _ = std::fs::remove_dir_all(&d);
}

/// Symbolic links never lead outside a directory package: a link to a
/// file outside is not read, listed or packed, and links to `..` make
/// no endless walk (issue 13).
#[cfg(unix)]
#[test]
fn symlinks_stay_inside_the_package() {
    use std::os::unix::fs::symlink;
    let d = temp_dir("links");
    let src = d.join("pkg");
    write(
        &src.join("manifest.yaml"),
        "Format: 1.3\nFullName: ex.Links\nType: Application\nClasses:\n  ex.Links: App.yaml\n",
    );
    write(
        &src.join("Classes/App.yaml"),
        "Namespaces: {=: ex}\nName: Links\n",
    );
    write(&src.join("Resources/inside.txt"), "in\n");
    write(&d.join("secret.txt"), "outside\n");
    symlink(d.join("secret.txt"), src.join("Resources/secret.txt")).unwrap();
    symlink(
        src.join("Resources/inside.txt"),
        src.join("Resources/alias.txt"),
    )
    .unwrap();
    symlink("..", src.join("Resources/up")).unwrap();
    symlink("../..", src.join("Resources/up2")).unwrap();
    let p = FormatRegistry::builtin().load(&src).unwrap();
    let e = p.get_resource("secret.txt").unwrap_err();
    assert!(
        e.message().contains("leads outside the package"),
        "{}",
        e.message()
    );
    assert_eq!(p.get_resource("alias.txt").unwrap(), b"in\n");
    let listed = p.base().source.list("Resources");
    assert!(listed.contains(&"inside.txt".to_string()), "{listed:?}");
    assert!(!listed.iter().any(|f| f.contains("secret")), "{listed:?}");
    let files = pack_package(&src, &d.join("out.zip")).unwrap();
    assert!(!files.iter().any(|f| f.contains("secret")), "{files:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A .zip package is read entry by entry: a bombed file costs nothing
/// until it is read, and then fails past the entry limit (issue 13).
#[test]
fn zip_entries_are_read_on_demand_within_limits() {
    use std::io::Write;
    let d = temp_dir("bomb");
    let path = d.join("bomb.zip");
    {
        let mut z = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        z.start_file("manifest.yaml", o).unwrap();
        z.write_all(
            b"Format: 1.3\nFullName: ex.Bomb\nType: Application\nClasses:\n  ex.Bomb: B.yaml\n",
        )
        .unwrap();
        z.start_file("Classes/B.yaml", o).unwrap();
        z.write_all(b"Namespaces: {=: ex}\nName: Bomb\n").unwrap();
        z.start_file("Resources/zeros.bin", o).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..(MAX_ZIP_ENTRY >> 20) + 8 {
            z.write_all(&chunk).unwrap();
        }
        z.finish().unwrap();
    }
    assert!(
        std::fs::metadata(&path).unwrap().len() < 1 << 20,
        "a small archive"
    );
    let p = FormatRegistry::builtin().load(&path).unwrap();
    let (pkg, errors) = to_package(&*p);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(pkg.class_names(), ["ex.Bomb"]);
    let e = p.get_resource("zeros.bin").unwrap_err();
    assert!(e.message().contains("larger than"), "{}", e.message());
    let _ = std::fs::remove_dir_all(&d);
}

/// An editor's unsaved files stand in for the saved ones, and the
/// package's files keep the names a folder gives them.
#[test]
fn an_edited_source_reads_unsaved_files_first() {
    let dir = std::env::temp_dir().join(format!("muranopl-edited-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("Classes")).unwrap();
    std::fs::write(
        dir.join("manifest.yaml"),
        "Format: 1.4\nType: Library\nFullName: ex.Edited\nClasses:\n  ex.A: A.yaml\n",
    )
    .unwrap();
    std::fs::write(dir.join("Classes/A.yaml"), "Name: ex.A\n").unwrap();
    let mut files = BTreeMap::new();
    files.insert(
        "Classes/A.yaml".to_string(),
        b"Name: ex.A\n# edited\n".to_vec(),
    );
    files.insert("Classes/New.yaml".to_string(), b"Name: ex.New\n".to_vec());
    let s = Source::Edited {
        dir: dir.clone(),
        files,
    };
    let text = s.read_text("Classes/A.yaml").unwrap().unwrap();
    assert!(text.ends_with("# edited\n"));
    assert!(s
        .read_text("manifest.yaml")
        .unwrap()
        .unwrap()
        .contains("ex.Edited"));
    assert_eq!(s.list("Classes"), ["A.yaml", "New.yaml"]);
    assert!(s.exists("Classes/New.yaml") && !s.exists("Classes/Gone.yaml"));
    assert_eq!(
        s.display("Classes/A.yaml"),
        dir.join("Classes/A.yaml").display().to_string()
    );
    let p = FormatRegistry::builtin().load_source(s).unwrap();
    assert_eq!(p.full_name(), "ex.Edited");
    assert!(p.get_class("ex.A").unwrap().text.contains("# edited"));
    let _ = std::fs::remove_dir_all(&dir);
}
