//! A plan passes exactly records the checker finds no violation in, and
//! leaves the rest (violations, coercions, what it cannot read) to it.

use std::sync::Arc;

use super::plan::{ObjectPlan, ValueView};
use crate::catalog::Catalog;
use crate::executor::Executor;
use crate::package::Package;
use runtime::Value;

const PORT: &str = "Namespaces: {=: t}
Name: Port
Properties:
  port:
    Contract: $.notNull().check(isInteger($) and $ > 0 and $ < 65536)
  scope:
    Contract: $.notNull().check($ in list(public, cloud, host, internal))
  name:
    Contract: $.notNull().check(isString($))
  settings:
    Contract:
      timeout: $.notNull().check(isInteger($) and $ >= 0)
      label: $.check(isString($))
  ports:
    Contract: [$.notNull().check(isInteger($) and $ > 0 and $ < 65536), 1, 8]
  note:
    Contract: $
";
const MIXED: &str = "Namespaces: {=: t}
Name: Mixed
Properties:
  size: {Contract: $.int(), Default: 3}
  seen: {Contract: $.int(), Usage: Runtime}
  tag:
    Contract: $.string().check($ != bad, 'no bad tags')
  free: {Contract: {$.string(): $.int()}}
";

fn executor() -> Arc<Executor> {
    let files = vec![
        ("Port.yaml".to_string(), PORT.to_string()),
        ("Mixed.yaml".to_string(), MIXED.to_string()),
    ];
    Executor::with_catalog(Catalog::new(vec![Package::new(
        "t", "1.0.0", "1.4", &files,
    )
    .unwrap()]))
}

fn record(json: &str) -> Value {
    runtime::json::from_tagged_str(json).unwrap()
}

/// The plan's verdict on `json`, and whether the checker finds it valid.
fn both(ex: &Executor, class: &str, json: &str) -> (bool, bool) {
    let class = ex.class(class).unwrap();
    let plan = ObjectPlan::of(ex, &class, true).unwrap();
    let v = record(json);
    let Value::Dict(d) = &v else { panic!("{json}") };
    let holds = plan.holds(&ValueView::new(&v, &plan), d.len(), 0);
    let found = crate::model::check_properties(ex, &class, d).unwrap();
    (holds, found.is_empty())
}

const VALID: &str = r#"{"port": 80, "scope": "public", "name": "a",
    "settings": {"timeout": 0, "label": "x"}, "ports": [1, 65535], "note": 3}"#;

#[test]
fn valid_records_pass_without_the_checker() {
    let ex = executor();
    for json in [
        VALID,
        r#"{"port": 1, "scope": "internal", "name": "", "settings": {"timeout": 5, "label": "l"}, "ports": [8]}"#,
        r#"{"port": 1, "scope": "host", "name": "b", "settings": {"timeout": 5, "label": "m"},
            "ports": [1, 2, 3, 4, 5, 6, 7, 8], "note": null}"#,
    ] {
        assert_eq!(both(&ex, "t.Port", json), (true, true), "{json}");
    }
}

#[test]
fn what_the_plan_does_not_pass_goes_to_the_checker() {
    let ex = executor();
    let invalid = [
        r#"{"port": "80", "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": true, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 80.0, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 36893488147419103228, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 0, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "nowhere", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": 7, "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": -1, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"label": "l"}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 1, "label": 2}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": 5, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": []}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1, 2, 3, 4, 5, 6, 7, 8, 9]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1, "2"]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1, null]}"#,
    ];
    for json in invalid {
        assert_eq!(both(&ex, "t.Port", json), (false, false), "{json}");
        assert_same_with_passing_skipped(&ex, json);
    }
    // Valid, but not shown by the plan: the checker says (extra keys, a
    // container where any value passes, a scalar for a list).
    for json in [
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": 1}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1], "x": 1}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l", "y": 1}, "ports": [1]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1], "note": [1]}"#,
    ] {
        assert_eq!(both(&ex, "t.Port", json), (false, true), "{json}");
    }
}

#[test]
fn defaults_runtime_properties_and_expressions_are_the_checkers() {
    let ex = executor();
    // `size` has a default, `seen` is a runtime property, `tag` has a
    // message, `free` has a key contract: the plan passes none of them.
    for (json, valid) in [
        (r#"{"size": 1, "tag": "ab", "free": {}}"#, true),
        (r#"{"tag": "ab"}"#, true),
        (r#"{"size": 1, "seen": 2}"#, true),
        (r#"{"size": 1, "tag": "bad"}"#, false),
    ] {
        assert_eq!(both(&ex, "t.Mixed", json), (false, valid), "{json}");
    }
    // With only values the plan reads (`size` given, no `tag`/`free`
    // contract needing more than null), it passes.
    let class = ex.class("t.Mixed").unwrap();
    let plan = ObjectPlan::of(&ex, &class, true).unwrap();
    assert_eq!(&*plan.keys()[0], "size");
}

/// The violations of `json` are the same when the properties the plan
/// passes are skipped, their values unread (left null).
fn assert_same_with_passing_skipped(ex: &Executor, json: &str) {
    let class = ex.class("t.Port").unwrap();
    let plan = ObjectPlan::of(ex, &class, true).unwrap();
    let v = record(json);
    let Value::Dict(d) = &v else { panic!("{json}") };
    let passing = plan.passing(&ValueView::new(&v, &plan), d.len(), 0);
    assert!(!passing.all, "{json}");
    let mut partial = d.as_ref().clone();
    for (k, x) in partial.iter_mut() {
        if plan
            .property(&passing, k.as_str().unwrap())
            .is_some_and(|(_, ok)| ok)
        {
            *x = Value::Null;
        }
    }
    let skip = plan.passed_keys(&passing);
    assert!(!skip.is_empty(), "{json}");
    let skip: Vec<&Value> = skip.iter().collect();
    let messages = |found: Vec<(Arc<str>, runtime::Error)>| -> Vec<(String, String)> {
        found
            .into_iter()
            .map(|(p, e)| (p.to_string(), e.message().to_string()))
            .collect()
    };
    let full = crate::model::check_properties(ex, &class, d).unwrap();
    let skipped = crate::model::check_properties_except(ex, &class, &partial, &skip).unwrap();
    assert_eq!(messages(full), messages(skipped), "{json}");
}

/// Each record's violations (property, message) as `check_properties`
/// finds them in JIT mode `mode`, on a fresh executor.
fn violations(
    mode: compiler::jit::Mode,
    class: &str,
    jsons: &[&str],
) -> Vec<Vec<(String, String)>> {
    let ex = executor();
    ex.catalog().set_jit(mode);
    let class = ex.class(class).unwrap();
    jsons
        .iter()
        .map(|json| {
            let v = record(json);
            let Value::Dict(d) = &v else { panic!("{json}") };
            let found = crate::model::check_properties(&ex, &class, d).unwrap();
            found
                .into_iter()
                .map(|(p, e)| (p.to_string(), e.message().to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn the_class_plan_finds_what_the_interpreter_finds() {
    // With the JIT always on, `check_properties` walks the class's plan
    // (Port's is complete); off, every contract is interpreted. Valid,
    // invalid (one property or several) and unread-by-the-plan records
    // give the same violations, in the same words.
    let jsons = [
        VALID,
        r#"{"port": "80", "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1]}"#,
        r#"{"port": 0, "scope": "nowhere", "name": 7, "settings": {"timeout": -1}, "ports": []}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [1, "2", null]}"#,
        r#"{"scope": "public", "settings": null, "ports": null}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l", "y": 1}, "ports": [1], "x": [2]}"#,
        r#"{"port": 80, "scope": "public", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": [[1]], "note": {"a": 1}}"#,
        r#"{"port": 36893488147419103228, "scope": "public", "name": "a", "settings": {"timeout": 0.5, "label": "l"}, "ports": [1.0]}"#,
    ];
    let compiled = violations(compiler::jit::Mode::Always, "t.Port", &jsons);
    assert_eq!(
        compiled,
        violations(compiler::jit::Mode::Off, "t.Port", &jsons)
    );
    assert!(
        compiled[0].is_empty() && compiled[4].len() == 4,
        "{compiled:?}"
    );
    let names: Vec<&str> = compiled[2].iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["port", "scope", "name", "settings", "ports"]);
    assert_eq!(compiled[3][0].0, "ports", "{:?}", compiled[3]);
    let mixed = [
        r#"{"size": 1, "tag": "ab", "free": {}}"#,
        r#"{"size": "x", "seen": 2, "tag": "bad", "free": {"a": "b"}}"#,
    ];
    assert_eq!(
        violations(compiler::jit::Mode::Always, "t.Mixed", &mixed),
        violations(compiler::jit::Mode::Off, "t.Mixed", &mixed)
    );
}

#[test]
fn only_plans_that_decide_every_property_are_complete() {
    let ex = executor();
    let port = ex.class("t.Port").unwrap();
    assert!(ObjectPlan::of(&ex, &port, true).unwrap().complete());
    // A runtime property, a default that needs evaluating and a key
    // contract leave parts to the checker.
    let mixed = ex.class("t.Mixed").unwrap();
    assert!(!ObjectPlan::of(&ex, &mixed, true).unwrap().complete());
    // Property bits: on a record failing `scope` and `ports`, the others
    // are shown to pass.
    let plan = ObjectPlan::of(&ex, &port, true).unwrap();
    let v = record(
        r#"{"port": 80, "scope": "x", "name": "a", "settings": {"timeout": 0, "label": "l"}, "ports": []}"#,
    );
    let Value::Dict(d) = &v else { unreachable!() };
    let (all, bits) = plan.properties_hold(d);
    assert!(!all);
    // Initialization order: port, scope, name, settings, ports, note.
    assert_eq!(bits, 0b101101);
    assert_eq!(
        plan.properties_hold(match &record(VALID) {
            Value::Dict(d) => d,
            _ => unreachable!(),
        }),
        (true, 0b111111)
    );
}
