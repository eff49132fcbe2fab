//! Execution state belongs to executions: one catalogue compiled once and
//! shared by threads, per-green-thread caller classes, no state leaking
//! between runs.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use engine::{model, Catalog, Executor, Package};
use muranopl::session::Catalogue;
use muranopl::{json, Value};

const HELLO_MODEL: &str = r#"{
  "?": {"type": "com.example.Hello", "id": "aa5a6c06c70c4e91a60a87c7d952dc7e"},
  "greeting": "hello",
  "instance": {
    "?": {"type": "io.murano.resources.LinuxMuranoInstance",
          "id": "23def966cd99404b95913d0c18508dc7"},
    "name": "hello-1", "flavor": "m1.small", "image": "ubuntu16.04-x64",
    "keyname": "default", "assignFloatingIp": true
  }
}"#;

/// Deploys the hello app in a session of `cat`: the record and the
/// serialized model, as JSON text.
fn deploy(cat: &Catalogue, greeting: &str) -> (String, String) {
    let session = cat.session();
    let ex = session.executor();
    let model = HELLO_MODEL.replace("\"hello\"", &format!("\"{greeting}\""));
    let data = json::from_tagged_str(&model).unwrap();
    let root = sim::deploy::load(ex, &data, "hello-env").unwrap();
    sim::deploy::run(ex, &root, "deploy").unwrap();
    let out = engine::serialize::serialize_model(ex, &root).unwrap();
    (
        json::to_tagged_string(&session.record()),
        json::to_tagged_string(&out),
    )
}

#[test]
fn threads_deploying_through_one_catalogue_match_a_sequential_run() {
    let cat = Catalogue::load(&[common::root().join("examples/hello-app")], &[], true).unwrap();
    let greetings: Vec<String> = (0..6).map(|i| format!("hello-{i}")).collect();
    let sequential: Vec<_> = greetings.iter().map(|g| deploy(&cat, g)).collect();
    let compiled = cat.catalog().compiled();
    assert!(compiled > 10, "the deployment compiled {compiled} classes");
    let parallel: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = greetings
            .iter()
            .map(|g| s.spawn(|| deploy(&cat, g)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(parallel, sequential);
    // Each run saw its own cloud: its own greeting, one server.
    for (g, (record, _)) in greetings.iter().zip(&parallel) {
        assert!(record.contains(&format!("{g} from 10.")), "{record}");
        assert_eq!(record.matches("\"stack\":").count(), 1, "{record}");
    }
    // Nothing was compiled again.
    assert_eq!(cat.catalog().compiled(), compiled);
}

const TWO_CLASSES: &str = r#"
Name: Parent
Methods:
  parentSide:
    Body:
      - $.secret: parent
      - sleep(1)
      - trace(format('parent sees {0}', $.secret))
---
Name: Test
Extends: Parent
Methods:
  childSide:
    Body:
      - $.secret: child
      - sleep(2)
      - trace(format('child sees {0}', $.secret))
  test:
    Scope: Public
    Body:
      - Parallel:
          - $this.parentSide()
          - $this.childSide()
          - trace(format('branch sees {0}', $.secret))
      - list(1).pselect(trace(format('pselect sees {0}', $this.secret)))
      - trace(format('after sees {0}', $.secret))
"#;

#[test]
fn green_threads_interleaving_at_sleep_each_see_their_own_class() {
    // Undeclared properties belong to the class whose method set them: the
    // parent's method, resumed after the child's has started, must still
    // read the parent's `secret`; code of `Test` (its own methods, the
    // branch, the `pselect` body) reads `Test`'s.
    let pkg = Package::new(
        "tests",
        "0.0.0",
        "1.4",
        &[("Test.yaml".to_string(), TWO_CLASSES.to_string())],
    )
    .unwrap();
    let ex = Executor::new(vec![pkg]);
    let m = json::from_tagged_str(r#"{"Objects": {"?": {"id": "root", "type": "Test"}}}"#).unwrap();
    let root = model::load_model(&ex, &m).unwrap().unwrap();
    ex.call(&Value::Object(root), "test", vec![], vec![], true)
        .unwrap();
    let traces: Vec<String> = ex
        .take_traces()
        .iter()
        .map(runtime::pyrepr::to_str)
        .collect();
    assert_eq!(
        traces,
        [
            "branch sees child",
            "parent sees parent",
            "child sees child",
            "pselect sees child",
            "after sees child"
        ]
    );
}

fn validate_example() -> (Arc<Catalog>, Vec<Value>) {
    let cat = Catalogue::load(&[common::root().join("examples/validate")], &[], true).unwrap();
    let model = |port: i64| {
        json::from_tagged_str(&format!(
            r#"{{"Objects": {{"?": {{"id": "fleet", "type": "com.example.Fleet"}},
                "servers": [{{"?": {{"id": "s1", "type": "com.example.Server"}},
                  "name": "a", "port": {port}, "tags": [], "enabled": true,
                  "settings": {{"timeout": 1, "label": "x"}}}}]}}}}"#
        ))
        .unwrap()
    };
    (
        cat.catalog().clone(),
        vec![model(80), model(70000), model(443)],
    )
}

#[test]
fn many_models_compile_each_class_once() {
    let (catalog, models) = validate_example();
    assert_eq!(catalog.compiled(), 0, "nothing is compiled before use");
    let first = model::validate(&catalog, &models[0]);
    assert!(first.error.is_none() && first.violations.is_empty());
    let after_one = catalog.compiled();
    assert!(after_one >= 2, "Fleet and Server: {after_one}");
    let results: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = models
            .iter()
            .map(|m| s.spawn(|| model::validate(&catalog, m)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(catalog.compiled(), after_one);
    let violations: Vec<usize> = results.iter().map(|r| r.violations.len()).collect();
    assert_eq!(violations, [0, 1, 0]);
    assert_eq!(results[1].violations[0].1, "port");
}

#[test]
fn validate_stats_report_classes_compiled_once_for_all_models() {
    let dir = std::env::temp_dir().join(format!("muranopl-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (_, models) = validate_example();
    let files: Vec<PathBuf> = models
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let f = dir.join(format!("m{i}.json"));
            std::fs::write(&f, json::to_tagged_string(m)).unwrap();
            f
        })
        .collect();
    let stats = |files: &[PathBuf]| -> String {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_muranopl"))
            .current_dir(common::root())
            .args([
                "validate",
                "-p",
                "examples/validate",
                "--stats",
                "--jobs",
                "2",
            ])
            .args(files)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let line = err.lines().find(|l| l.starts_with("stats:")).unwrap_or("");
        let n = line
            .split("classes compiled ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or_else(|| panic!("no class count in {err}"));
        assert!(line.contains(&format!("models {}", files.len())), "{line}");
        n.to_string()
    };
    let one = stats(&files[..1]);
    assert!(
        one.parse::<usize>().unwrap() >= 2,
        "Fleet and Server compile: {one}"
    );
    assert_eq!(one, stats(&files));
    std::fs::remove_dir_all(&dir).ok();
}

/// Each executor holds its catalogue: a catalogue referenced by no more
/// than its owner shows that every execution over it has been freed.
#[test]
fn executors_are_freed_when_their_run_ends() {
    let (catalog, models) = validate_example();
    let owners = Arc::strong_count(&catalog);
    for m in &models {
        model::validate(&catalog, m);
    }
    assert_eq!(Arc::strong_count(&catalog), owners, "after validate");

    let cat = Catalogue::load(&[common::root().join("examples/hello-app")], &[], true).unwrap();
    let owners = Arc::strong_count(cat.catalog());
    let (record, _) = deploy(&cat, "hello");
    assert!(record.contains("hello from 10."), "{record}");
    assert_eq!(Arc::strong_count(cat.catalog()), owners, "after deploy");
}
