//! Packages that require one library in different versions (issue 35
//! item 1): each package's classes see the version its own `Require`
//! names, and a class whose ancestors need one class in two versions no
//! requirement reconciles fails naming the conflict.

use crate::common::{muranopl, stderr};
use crate::spec_cli::Pkg;

/// `ex.D` of version `v`: a method `ver` answering `v`, and (`prop`) a
/// property `tag`.
fn lib_d(v: &str, prop: bool) -> [(String, String); 2] {
    let props = if prop {
        "Properties:\n  tag:\n    Contract: $.string()\n    Default: d\n"
    } else {
        ""
    };
    [
        (
            format!("lib/d{v}/manifest.yaml"),
            format!("Format: 1.4\nType: Library\nFullName: ex.D\nVersion: {v}\nClasses:\n  ex.D: D.yaml\n"),
        ),
        (
            format!("lib/d{v}/Classes/D.yaml"),
            format!("Namespaces: {{=: ex}}\nName: D\n{props}Methods:\n  ver:\n    Body:\n      - Return: '{v}'\n"),
        ),
    ]
}

/// Library `ex.{name}` requiring `ex.D` with `spec`: class `ex.{name}`
/// extends `ex.D`; `own` answers `$.ver()`, `made` the `ver()` of a new
/// `ex.D` (both as its own code sees them).
fn lib_user(name: &str, spec: &str) -> [(String, String); 2] {
    let low = name.to_lowercase();
    [
        (
            format!("lib/{low}/manifest.yaml"),
            format!("Format: 1.4\nType: Library\nFullName: ex.{name}\nVersion: 1.0.0\nRequire:\n  ex.D: '{spec}'\nClasses:\n  ex.{name}: C.yaml\n"),
        ),
        (
            format!("lib/{low}/Classes/C.yaml"),
            format!("Namespaces: {{=: ex}}\nName: {name}\nExtends: D\nMethods:\n  own:\n    Body:\n      - Return: $.ver()\n  made:\n    Body:\n      - Return: new(D).ver()\n"),
        ),
    ]
}

/// An application package `ex.App` requiring each of `requires` (any
/// 1.x) with class text `class`, over a library of `files`; runs its
/// `deploy` on a model of `objects` (JSON) and returns the exit code and
/// stderr.
fn deploy(
    tag: &str,
    requires: &[&str],
    class: &str,
    files: &[(String, String)],
    objects: &str,
) -> (Option<i32>, String) {
    let mut all: Vec<(&str, &str)> = vec![("Classes/App.yaml", class)];
    all.extend(files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let require: String = requires
        .iter()
        .map(|r| format!("  ex.{r}: '1'\n"))
        .collect();
    let manifest = format!(
        "Format: 1.4\nType: Application\nFullName: ex.App\nVersion: 1.0.0\nRequire:\n{require}Classes:\n  ex.App: App.yaml\n"
    );
    let dir = Pkg::new(tag, &manifest, &all);
    let model = dir.join("m.json");
    std::fs::write(
        &model,
        format!(r#"{{"Objects": {{"?": {{"id": "e", "type": "io.murano.Environment"}}, "applications": [{objects}]}}}}"#),
    )
    .unwrap();
    let lib = dir.join("lib");
    let o = muranopl(&[
        "run",
        dir.path(),
        "-L",
        lib.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    (o.status.code(), stderr(&o))
}

/// A requires `ex.D =1.2.0`, B requires `ex.D =1.3.0`, the application
/// requires A and B: both versions load side by side, and the code of
/// each package sees the version its own requirements name, as murano's
/// `MuranoPackage.find_class` looks a class up through the package's own
/// `requirements` (murano/dsl/murano_package.py) and the package loader
/// picks the highest loaded version matching that spec
/// (murano/engine/package_loader.py `load_package`,
/// `version_spec.select`).
#[test]
fn a_version_diamond_resolves_per_package() {
    let mut files: Vec<(String, String)> = Vec::new();
    files.extend(lib_d("1.2.0", true));
    files.extend(lib_d("1.3.0", true));
    files.extend(lib_user("A", "=1.2.0"));
    files.extend(lib_user("B", "=1.3.0"));
    let class = "Namespaces: {=: ex}\nName: App\nExtends: io.murano.Application\nProperties:\n  a:\n    Contract: $.class(A)\n  b:\n    Contract: $.class(B)\nMethods:\n  deploy:\n    Body:\n      - $log: logger(app)\n      - $log.info('{0} {1} {2} {3}', $.a.own(), $.a.made(), $.b.own(), $.b.made())\n";
    let objects = r#"{"?": {"id": "app", "type": "ex.App"}, "a": {"?": {"id": "a", "type": "ex.A"}}, "b": {"?": {"id": "b", "type": "ex.B"}}}"#;
    let (code, err) = deploy("diamond-ok", &["A", "B"], class, &files, objects);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("INFO app: 1.2.0 1.2.0 1.3.0 1.3.0"), "{err}");
}

/// The same diamond inherited by one class (`Extends: [A, B]`): its
/// ancestors hold `ex.D` in both versions, since no requirement on the way
/// accepts the other version (murano/dsl/murano_type.py
/// `_build_parent_remappings` and `_remap_package` merge versions only
/// where a requirement allows), and the members both versions declare are
/// ambiguous (`_choose_symbol`): setting the property fails when the
/// object is loaded (`AmbiguousPropertyNameError`, from
/// `MuranoObject.set_property` in murano/dsl/murano_object.py), calling the
/// method fails (`AmbiguousMethodName`). The error names the class, the
/// chain to each version and the requirement that chose it. Before, the
/// engine merged the two versions by name and ran silently.
#[test]
fn an_inherited_version_diamond_fails_naming_the_conflict() {
    let class = "Namespaces: {=: ex}\nName: App\nExtends: [A, B, io.murano.Application]\nMethods:\n  deploy:\n    Body:\n      - Return: $.ver()\n";
    let objects = r#"{"?": {"id": "app", "type": "ex.App"}}"#;
    let conflict = "ex.App needs ex.D in 2 versions that no requirement reconciles: \
        ex.D/1.2.0 through ex.App -> ex.A -> ex.D (ex.A/1.0.0 requires ex.D =1.2.0); \
        ex.D/1.3.0 through ex.App -> ex.B -> ex.D (ex.B/1.0.0 requires ex.D =1.3.0)";
    for (prop, kind, what) in [
        (true, "AmbiguousPropertyNameError", "property \"tag\""),
        (false, "AmbiguousMethodName", "method \"ver\""),
    ] {
        let mut files: Vec<(String, String)> = Vec::new();
        files.extend(lib_d("1.2.0", prop));
        files.extend(lib_d("1.3.0", prop));
        files.extend(lib_user("A", "=1.2.0"));
        files.extend(lib_user("B", "=1.3.0"));
        let (code, err) = deploy(
            &format!("diamond-{prop}"),
            &["A", "B"],
            class,
            &files,
            objects,
        );
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "error[{kind}]: Found more that one {what}: {conflict}"
            )),
            "{err}"
        );
    }
}

/// Where one version satisfies every requirement on the way, the diamond
/// is one version: A accepts `>=1.2`, B pins `=1.3.0`, and a third
/// library pinning `=1.2.0` keeps 1.2.0 loaded too; the class inheriting A
/// and B sees 1.3.0 alone (murano's `_remap_package` binds a version to
/// the highest one its requirement accepts).
#[test]
fn a_reconcilable_version_diamond_is_one_version() {
    let mut files: Vec<(String, String)> = Vec::new();
    files.extend(lib_d("1.2.0", true));
    files.extend(lib_d("1.3.0", true));
    files.extend(lib_user("A", ">=1.2"));
    files.extend(lib_user("B", "=1.3.0"));
    files.extend(lib_user("C", "=1.2.0"));
    let class = "Namespaces: {=: ex}\nName: App\nExtends: [A, B, io.murano.Application]\nProperties:\n  c:\n    Contract: $.class(C)\nMethods:\n  deploy:\n    Body:\n      - $log: logger(app)\n      - $log.info('{0} {1} {2}', $.ver(), $.c.own(), $.tag)\n";
    let objects =
        r#"{"?": {"id": "app", "type": "ex.App"}, "c": {"?": {"id": "c", "type": "ex.C"}}}"#;
    let (code, err) = deploy("diamond-merge", &["A", "B", "C"], class, &files, objects);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("INFO app: 1.3.0 1.2.0 d"), "{err}");
}
