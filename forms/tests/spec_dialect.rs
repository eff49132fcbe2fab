//! The forms spec's schema dialect ([`Dialect::Spec`], what `serve`
//! answers) against murano's own output ([`Dialect::Reference`], what the
//! conformance harness answers), on two small packages: a library whose
//! class names a type through a prefix only it declares, and an
//! application extending it.

use std::sync::Arc;

use engine::version::VersionSpec;
use engine::{Executor, Package};
use muranopl_forms::schema::{generate_schema, Dialect};
use runtime::Value;

const LIB: &str = r#"
Namespaces:
  =: lib.base
  x: lib.other
Name: Base
Properties:
  peer:
    Contract: $.class(x:Thing)
  port:
    Contract: $.int().notNull()
    Default: 80
  name:
    Contract: $.string()
---
Namespaces:
  =: lib.other
Name: Thing
"#;

const APP: &str = r#"
Namespaces:
  =: app
  b: lib.base
  m: io.murano.metadata
Name: App
Extends: b:Base
Properties:
  backend:
    Contract: $.class(b:Base).notNull().check($.port > 1024 and $.name.len() >= 3 and $.name in [ab, abc])
  label:
    Meta:
      - m:Title:
          text: The label
    Contract: $.string().check(len($) < 10 and $.len() > 0)
Methods:
  build:
    Meta:
      - m:ModelBuilder
    Usage: Static
    Scope: Public
    Arguments:
      - model:
          Contract: $
      - size:
          Contract: $.int()
    Body:
      - Return: $model
  ping:
    Usage: Static
    Scope: Public
    Body:
      - Return: pong
"#;

fn files(text: &str) -> Vec<(String, String)> {
    text.split("\n---\n")
        .enumerate()
        .map(|(i, t)| (format!("c{i}.yaml"), t.to_string()))
        .collect()
}

fn executor() -> Arc<Executor> {
    let lib = Package::new("lib", "1.2.0", "1.4", &files(LIB)).unwrap();
    let mut app = Package::new("app", "0.1.0", "1.4", &files(APP)).unwrap();
    app.requires = vec![("lib".into(), VersionSpec::parse(Some(">=1.2,<2")).unwrap())];
    Executor::new(vec![app, lib])
}

fn json(v: &Value) -> serde_json::Value {
    serde_json::from_str(&runtime::json::to_tagged_string(v)).unwrap()
}

fn schemas(methods: Option<&[&str]>, dialect: Dialect) -> runtime::Result<serde_json::Value> {
    let ex = executor();
    let methods: Option<Vec<String>> = methods.map(|m| m.iter().map(|s| s.to_string()).collect());
    let list = generate_schema(&ex, "app.App", methods.as_deref(), None, dialect)?;
    Ok(serde_json::Value::Object(
        list.into_iter().map(|(n, v)| (n, json(&v))).collect(),
    ))
}

#[test]
fn inherited_contracts_resolve_where_they_are_declared() {
    // murano resolves them in the requested class: the library's prefix
    // is unknown there.
    let e = schemas(None, Dialect::Reference).unwrap_err();
    assert_eq!(e.kind().to_string(), "KeyError", "{}", e.message());
    let all = schemas(None, Dialect::Spec).unwrap();
    let peer = &all[""]["properties"]["peer"];
    assert_eq!(peer["muranoType"], "lib.other.Thing");
    // Declared in the library, of the library: its exact version.
    assert_eq!(peer["version"], "=1.2.0");
    assert_eq!(peer["type"], serde_json::json!(["muranoObject", "null"]));
}

#[test]
fn object_checks_become_the_context_and_versions_come_from_the_manifest() {
    let all = schemas(None, Dialect::Spec).unwrap();
    let backend = &all[""]["properties"]["backend"];
    assert_eq!(backend["muranoType"], "lib.base.Base");
    // The application's manifest requires the library's package.
    assert_eq!(backend["version"], ">=1.2,<2");
    assert_eq!(
        backend["context"],
        serde_json::json!({
            "type": "object",
            "properties": {
                "port": {"minimum": 1024, "exclusiveMinimum": true},
                "name": {"minLength": 3, "enum": ["ab", "abc"]},
            }
        })
    );
}

#[test]
fn lengths_titles_builders_and_actions() {
    let all = schemas(None, Dialect::Spec).unwrap();
    let label = &all[""]["properties"]["label"];
    assert_eq!(
        (label["maxLength"].clone(), label["minLength"].clone()),
        (serde_json::json!(9), serde_json::json!(1))
    );
    assert_eq!(label["title"], "The label");
    // Without a Title meta, the name.
    assert_eq!(all[""]["properties"]["port"]["title"], "port");
    // The builder's form leaves out the model it gets.
    let build = &all["build"];
    assert_eq!(
        build["properties"],
        serde_json::json!({"size": {"type": ["integer", "null"], "title": "size"}})
    );
    assert_eq!(build["modelArgument"], "model");
    // A static action has a schema when asked for by name; murano's only
    // answers for builders.
    let asked = schemas(Some(&["ping", "build"]), Dialect::Spec).unwrap();
    let names: Vec<&String> = asked.as_object().unwrap().keys().collect();
    assert_eq!(names, ["ping", "build"]);
}

#[test]
fn the_reference_dialect_keeps_murano_s_output() {
    // Without the library's prefix problem: the library's own class.
    let ex = executor();
    let list = generate_schema(&ex, "lib.base.Base", None, None, Dialect::Reference).unwrap();
    let base = json(&list[0].1);
    let port = &base["properties"]["port"];
    assert_eq!(port, &serde_json::json!({"type": "integer", "default": 80}));
    assert!(base["properties"]["peer"].get("version").is_none());
}
