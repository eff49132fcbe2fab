//! The CLI as the MuranoPL and forms specifications describe it, and the
//! compiled tier's report: each test writes a small package and checks
//! what a command prints for it.

use std::path::{Path, PathBuf};

use crate::common::{muranopl, stderr, stdout};

/// A package in a directory of its own under the system's temporary
/// directory, removed when dropped.
pub(crate) struct Pkg(pub(crate) PathBuf);

impl Pkg {
    /// `manifest.yaml` with text `manifest`, and each `(path, text)` of
    /// `files`.
    pub(crate) fn new(tag: &str, manifest: &str, files: &[(&str, &str)]) -> Pkg {
        let dir = std::env::temp_dir().join(format!("muranopl-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("Classes")).unwrap();
        std::fs::write(dir.join("manifest.yaml"), manifest).unwrap();
        for (path, text) in files {
            if let Some(parent) = dir.join(path).parent() {
                std::fs::create_dir_all(parent).unwrap();
            }
            std::fs::write(dir.join(path), text).unwrap();
        }
        Pkg(dir)
    }

    /// The package directory, as an argument.
    pub(crate) fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl std::ops::Deref for Pkg {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Pkg {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `package check --jit-coverage`: every contract part that runs code,
/// compiled to machine code or listed with why it is interpreted, and the
/// share compiled.
#[test]
fn package_check_reports_what_the_compiled_tier_takes() {
    let dir = Pkg::new(
        "jitcov",
        "Format: 1.4\nType: Library\nFullName: ex.Cov\nClasses:\n  ex.Cov: Cov.yaml\n",
        &[("Classes/Cov.yaml", "Name: ex.Cov\nProperties:\n  a:\n    Contract: $.int().check($ > 0)\n  \
         b:\n    Contract: [$.string().notNull(), 1, 3]\n  c:\n    Contract: $.class(ex.Cov)\n  \
         d:\n    Contract: $.template(ex.Cov)\n  e:\n    Contract: {k: $.bool()}\n  \
         f:\n    Contract: $\nMethods:\n  m:\n    Arguments:\n      - x:\n          Contract: $.int().notNull()\n")],
    );
    let o = muranopl(&["package", "check", dir.path(), "--jit-coverage"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = (out.lines())
        .filter(|l| l.starts_with("interpreted: ") || l.starts_with("jit coverage: "))
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    // A class name with a dot is an expression, not a literal: the whole
    // contract is evaluated (`template()` of one too).
    assert!(
        lines[0].starts_with("interpreted: ex.Cov property c at ")
            && lines[0].ends_with(
                "Cov.yaml:8:15: $.class(ex.Cov): not a chain of notNull/int/string/bool/check/class/owned/notOwned: evaluated whole by the interpreter"
            ),
        "{out}"
    );
    assert!(
        lines[1].starts_with("interpreted: ex.Cov property d at ")
            && lines[1].contains("Cov.yaml:10:15: $.template(ex.Cov): not a chain"),
        "{out}"
    );
    // a, b's item, e's k and m's x compile; `$` runs no code.
    assert_eq!(
        lines[2],
        "jit coverage: ex.Cov: 4/6 compiled (66.7%): contract parts 4/6 (66.7%), conditions 0/0 (100.0%)",
        "{out}"
    );
}

/// `schema` and `action` without `--class-version` take the newest version
/// loaded, as their help says (Murano's HTTP API defaults to `=0`; the
/// murano CLI's `class-schema` and `static-action-call` pass the user's
/// spec, murano/api/v1/schemas.py and static_actions.py); with one, a
/// murano version spec.
#[test]
fn schema_and_action_default_to_the_newest_version() {
    let dir = Pkg::new(
        "newest",
        "Format: 1.4\nType: Application\nFullName: ex.Ver\nVersion: 1.2.0\nClasses:\n  ex.Ver: V.yaml\n",
        &[("Classes/V.yaml", "Name: ex.Ver\nProperties:\n  n:\n    Contract: $.int()\nMethods:\n  ping:\n    \
         Usage: Static\n    Scope: Public\n    Body:\n      - Return: pong\n")],
    );
    let pkg = dir.path();
    let o = muranopl(&["schema", "ex.Ver", "-p", pkg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        schema[""]["properties"]["n"]["type"],
        serde_json::json!(["integer", "null"]),
        "{schema}"
    );
    let o = muranopl(&["action", "ex.Ver", "ping", "-p", pkg]);
    assert_eq!(
        (o.status.code(), String::from_utf8_lossy(&o.stdout).trim()),
        (Some(0), "\"pong\"")
    );
    let o = muranopl(&[
        "action",
        "ex.Ver",
        "ping",
        "-p",
        pkg,
        "--class-version",
        ">=1.2,<2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = muranopl(&["schema", "ex.Ver", "-p", pkg, "--class-version", "=0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("Class \"ex.Ver\" is not found in a version matching \"=0\""),
        "{}",
        stderr(&o)
    );
}

/// `io.murano.system.Logger` lines go to stderr as they are logged, at
/// `info` and above by default (murano/engine/system/logger.py logs through
/// Python's logging, whose default threshold the engine's configuration
/// sets), `--log-level` or `MURANOPL_LOG_LEVEL` choose the threshold,
/// `--quiet` hides them, and `--record` keeps every line.
#[test]
fn run_prints_log_lines_on_stderr_by_level() {
    let dir = Pkg::new(
        "log",
        "Format: 1.4\nType: Application\nFullName: ex.Log\nClasses:\n  ex.Log: L.yaml\n",
        &[("Classes/L.yaml", "Name: ex.Log\nExtends: io.murano.Application\nMethods:\n  deploy:\n    Body:\n      \
         - $log: logger('ex.Log')\n      - $log.debug('d {0}', 1)\n      - $log.info('i {0}', 2)\n      \
         - $log.warning(w)\n")],
    );
    let model = dir.join("m.json");
    std::fs::write(&model, r#"{"?": {"type": "ex.Log", "id": "a"}}"#).unwrap();
    let (pkg, model) = (dir.path(), model.to_str().unwrap());
    let logged = |extra: &[&str]| {
        let mut args = vec!["run", pkg, "--model", model];
        args.extend_from_slice(extra);
        let o = muranopl(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let e = stderr(&o);
        let lines: Vec<String> = (e.lines())
            .filter(|l| l.contains(" ex.Log: "))
            .map(str::to_string)
            .collect();
        lines
    };
    assert_eq!(logged(&[]), ["INFO ex.Log: i 2", "WARNING ex.Log: w"]);
    assert_eq!(
        logged(&["--log-level", "debug"]),
        ["DEBUG ex.Log: d 1", "INFO ex.Log: i 2", "WARNING ex.Log: w"]
    );
    assert_eq!(logged(&["--log-level", "warning"]), ["WARNING ex.Log: w"]);
    let record = dir.join("r.json");
    assert!(logged(&["-q", "--record", record.to_str().unwrap()]).is_empty());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(
        r["log"],
        serde_json::json!(["DEBUG ex.Log: d 1", "INFO ex.Log: i 2", "WARNING ex.Log: w"])
    );
}

/// A model whose root is not an application runs its method on the root
/// itself: murano's engine loads the model it is given and calls the
/// task's method on the object it names, which "may be called against any
/// MuranoPL object" (murano/common/engine.py `TaskExecutor`,
/// doc/source/draft/appdev-guide/murano_pl/actions.rst); an application
/// still goes into an environment, as the dashboard places it. A method
/// the root lacks is `NoMethodFound`.
#[test]
fn run_takes_any_root_object() {
    let dir = Pkg::new(
        "root",
        "Format: 1.4\nType: Library\nFullName: ex.Plain\nClasses:\n  ex.Plain: P.yaml\n",
        &[(
            "Classes/P.yaml",
            "Name: ex.Plain\nProperties:\n  n:\n    Contract: $.int()\nMethods:\n  twice:\n    \
         Body:\n      - Return: $.n * 2\n",
        )],
    );
    let model = dir.join("m.json");
    std::fs::write(&model, r#"{"?": {"type": "ex.Plain", "id": "p"}, "n": 21}"#).unwrap();
    let (pkg, model) = (dir.path(), model.to_str().unwrap());
    let o = muranopl(&["run", pkg, "--model", model, "--method", "twice", "-q"]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "42\n"),
        "{}",
        stderr(&o)
    );
    let o = muranopl(&["run", pkg, "--model", model, "--method", "deploy", "-q"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("Method deploy is not found in ex.Plain"),
        "{}",
        stderr(&o)
    );
}

/// The keys of an object's `?` that start with `_` (the dashboard's
/// designer attributes, e.g. `_26411a...: {name: ...}`) survive a
/// deployment: murano's object store keeps them apart and its serializer
/// writes them back into `?` (murano/dsl/object_store.py designer
/// attributes, murano/dsl/serializer.py `serialize_model`).
#[test]
fn designer_attributes_survive_run_out() {
    let dir = Pkg::new(
        "designer",
        "Format: 1.4\nType: Application\nFullName: ex.D\nClasses:\n  ex.D: D.yaml\n",
        &[("Classes/D.yaml", "Name: ex.D\nExtends: io.murano.Application\nMethods:\n  deploy:\n    Body:\n      - Return: 1\n")],
    );
    let model = dir.join("m.json");
    std::fs::write(
        &model,
        r#"{"?": {"type": "ex.D", "id": "d", "_26411a1861294160833743e45d0eaad9": {"name": "My app"}, "_n": 1}}"#,
    )
    .unwrap();
    let out = dir.join("out.json");
    let o = muranopl(&[
        "run",
        dir.path(),
        "--model",
        model.to_str().unwrap(),
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for section in ["Objects", "ObjectsCopy"] {
        let app = &m[section]["applications"][0]["?"];
        assert_eq!(app["id"], "d", "{m}");
        assert_eq!(
            app["_26411a1861294160833743e45d0eaad9"],
            serde_json::json!({"name": "My app"}),
            "{section}: {m}"
        );
        assert_eq!(app["_n"], 1, "{section}: {m}");
    }
}

/// The form schema (the specification's dialect) says what a list
/// contract's length bounds and a `check($ = c)` say: `[c, min, max]` is checked by the engine
/// as at least `min` and at most `max` items (murano/dsl/contracts
/// `list` bounds), so the form carries `minItems`/`maxItems`; murano's own
/// generator (`harness schema`) drops them, and still does.
#[test]
fn form_schemas_carry_list_bounds() {
    let dir = Pkg::new(
        "bounds",
        "Format: 1.4\nType: Application\nFullName: ex.B\nClasses:\n  ex.B: B.yaml\n",
        &[("Classes/B.yaml", "Name: ex.B\nExtends: io.murano.Application\nProperties:\n  tags:\n    \
         Contract: [$.string().notNull(), 1, 3]\n  some:\n    Contract: [$.int(), 2]\n  any:\n    Contract: [$.int()]\n  \
         twelve:\n    Contract: $.int().check($ = 12)\n")],
    );
    let o = muranopl(&["schema", "ex.B", "-p", dir.path()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &s[""]["properties"];
    assert_eq!(
        (&p["tags"]["minItems"], &p["tags"]["maxItems"]),
        (&serde_json::json!(1), &serde_json::json!(3)),
        "{s}"
    );
    assert_eq!(
        (&p["some"]["minItems"], &p["some"]["maxItems"]),
        (&serde_json::json!(2), &serde_json::Value::Null),
        "{s}"
    );
    assert!(
        p["any"].get("minItems").is_none() && p["any"].get("maxItems").is_none(),
        "{s}"
    );
    // An equality is an `enum` of one (draft-04 has no `const`).
    assert_eq!(p["twelve"]["enum"], serde_json::json!([12]), "{s}");
}

/// `io.murano.metadata.Position`, as the forms specification names it, is a
/// class of the core library (`package check` knows it) and places the
/// field in the form schema (`formIndex` in index order, `formSection`).
#[test]
fn the_specifications_position_meta_places_fields() {
    let dir = Pkg::new(
        "position",
        "Format: 1.4\nType: Application\nFullName: ex.P\nClasses:\n  ex.P: P.yaml\n",
        &[("Classes/P.yaml", "Namespaces:\n  =: ex\n  m: io.murano.metadata\nName: P\nExtends: io.murano.Application\n\
         Properties:\n  a:\n    Contract: $.string()\n    Meta:\n      - m:Position:\n          index: 2\n          \
         section: main\n  b:\n    Contract: $.string()\n    Meta:\n      - m:Position:\n          index: 1\n")],
    );
    let pkg = dir.path();
    let o = muranopl(&["package", "check", pkg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not found"), "{}", stderr(&o));
    let o = muranopl(&["schema", "ex.P", "-p", pkg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let p = &s[""]["properties"];
    assert_eq!(p["a"]["formSection"], "main", "{s}");
    let (a, b) = (
        p["a"]["formIndex"].as_i64().unwrap(),
        p["b"]["formIndex"].as_i64().unwrap(),
    );
    assert!(b < a, "{s}");
}

/// A native error is a MuranoPL exception named after its class (a
/// Python builtin by its bare name: murano/dsl/dsl_exception.py
/// `from_python_exception`), and `With` names resolve through the class's
/// namespaces, `:Name` in the default one (murano/dsl/namespace_resolver.py
/// sets an empty prefix to `=`; the Catch block compares resolved names,
/// murano/dsl/exception_macros.py). So `With: ':ZeroDivisionError'`
/// catches a division by zero in a class without a default namespace, and
/// in one with `=: com.example` names `com.example.ZeroDivisionError`,
/// which it is not: the catch-all takes it, as in murano.
#[test]
fn native_errors_are_caught_by_their_resolved_name() {
    let body = "Methods:\n  go:\n    Body:\n      - Try:\n          - $x: 1 / 0\n        Catch:\n          \
                - With: ':ZeroDivisionError'\n            As: e\n            Do:\n              \
                - Return: [caught, $e.name]\n          - As: e\n            Do:\n              \
                - Return: [all, $e.name]\n";
    let dir = Pkg::new(
        "native",
        "Format: 1.4\nType: Library\nFullName: ex.Z\nClasses:\n  ex.Plain: P.yaml\n  ex.Ns: N.yaml\n",
        &[
            ("Classes/P.yaml", &format!("Name: ex.Plain\n{body}")),
            ("Classes/N.yaml", &format!("Namespaces:\n  =: ex\nName: Ns\n{body}")),
        ],
    );
    let run = |class: &str| {
        let model = dir.join(format!("{class}.json"));
        std::fs::write(
            &model,
            format!(r#"{{"?": {{"type": "{class}", "id": "z"}}}}"#),
        )
        .unwrap();
        let o = muranopl(&[
            "run",
            dir.path(),
            "--model",
            model.to_str().unwrap(),
            "--method",
            "go",
            "-q",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(run("ex.Plain"), "[\"caught\", \"ZeroDivisionError\"]\n");
    assert_eq!(run("ex.Ns"), "[\"all\", \"ZeroDivisionError\"]\n");
}

/// A form schema says what it leaves out (issue 35 item 4): the forms
/// specification (`muranopl-forms-spec.txt`, "Schema generation": a
/// check() expression no pattern translates "is ignored", and the schema
/// "may have extra attributes for information that cannot be expressed by
/// standard json-schema attributes") and murano's generator
/// (murano/dsl/schema_generator.py, which drops both silently); here each
/// check() condition without a JSON Schema form and each meta no form
/// keyword reads is listed under `x-muranopl-unrepresented` of the class
/// or method schema, with the field it belongs to.
#[test]
fn schema_reports_what_it_cannot_express() {
    let dir = Pkg::new(
        "unrepr",
        "Format: 1.4\nType: Application\nFullName: ex.S\nClasses:\n  ex.S: S.yaml\n",
        &[("Classes/S.yaml", "Name: ex.S\nProperties:\n  p:\n    Contract: $.int().check($ > 1 and $ mod 2 = 0)\n    \
         Meta:\n      - io.murano.metadata.engine.Serialize:\n          as: copy\n  q:\n    Contract: $.string()\n    \
         Meta:\n      - io.murano.metadata.Title:\n          text: Q\n")],
    );
    let o = muranopl(&["schema", "ex.S", "-p", dir.path()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let schema: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &schema[""];
    // What translates is there.
    assert_eq!(s["properties"]["p"]["minimum"], 1, "{s}");
    assert_eq!(s["properties"]["q"]["title"], "Q", "{s}");
    let report = s["x-muranopl-unrepresented"].as_array().expect("a report");
    let items: Vec<(&str, &str)> = (report.iter())
        .map(|e| (e["field"].as_str().unwrap(), e["item"].as_str().unwrap()))
        .collect();
    assert_eq!(
        items,
        [
            ("p", "$.int().check($ > 1 and $ mod 2 = 0)"),
            ("p", "meta io.murano.metadata.engine.Serialize"),
        ],
        "{s}"
    );
    assert!(
        report[0]["why"]
            .as_str()
            .unwrap()
            .starts_with("1 of 2 conditions of check()"),
        "{s}"
    );
}
