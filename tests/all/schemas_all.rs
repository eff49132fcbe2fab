//! `muranopl serve`'s `GET /v1/schemas/{class}` for every class of every
//! package in `../shared/fixtures/apps` and of the core library: each
//! answer is 200 and each schema in it is valid draft-04 JSON Schema with
//! well-formed Murano keywords (`muranoType` on every `muranoObject`,
//! `formSections` an object, `formIndex` an integer). The router is called
//! in-process. Skipped when the fixtures are absent.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use muranopl::Catalogue as Catalog;
use muranopl_cli::serve::{app, Options};
use serde_json::Value as J;
use tower::ServiceExt;

const DRAFT4: &str = "http://json-schema.org/draft-04/schema#";

/// Fixture classes that have no schema because their package is broken:
/// (class, what the error message must name, why). Each must still fail,
/// with 404 NoClassFound naming that class; any other failure fails the
/// test.
///
/// The three classes of `KubernetesEntitiesLibrary`
/// (`com.mirantis.docker.kubernetes.static`) declare
/// `kubernetesCluster: Contract: $.class(KubernetesCluster).notNull()`;
/// an unprefixed name resolves in the class's own namespace `=`, to
/// `com.mirantis.docker.kubernetes.static.KubernetesCluster`, which no
/// package declares (the cluster is
/// `com.mirantis.docker.kubernetes.KubernetesCluster`, the package the
/// manifest requires). murano fails there as well: its `class()`
/// contract resolves the type when it is built
/// (`dsl.MuranoTypeParameter`, `murano/dsl/contracts/instances.py`), for
/// the schema as for a deployment.
const BROKEN: &[(&str, &str, &str)] = &[
    (
        "com.mirantis.docker.kubernetes.static.Pod",
        "com.mirantis.docker.kubernetes.static.KubernetesCluster",
        "$.class(KubernetesCluster) names a class no package declares",
    ),
    (
        "com.mirantis.docker.kubernetes.static.ReplicationController",
        "com.mirantis.docker.kubernetes.static.KubernetesCluster",
        "$.class(KubernetesCluster) names a class no package declares",
    ),
    (
        "com.mirantis.docker.kubernetes.static.Service",
        "com.mirantis.docker.kubernetes.static.KubernetesCluster",
        "$.class(KubernetesCluster) names a class no package declares",
    ),
];

async fn get(app: &axum::Router, uri: &str) -> (u16, J) {
    let req = Request::builder()
        .method("GET")
        .uri(uri)
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status().as_u16();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap_or(J::Null))
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// True when a schema's `type` is or contains `muranoObject`.
fn is_murano_object(schema: &J) -> bool {
    match schema.get("type") {
        Some(J::String(t)) => t == "muranoObject",
        Some(J::Array(ts)) => ts.iter().any(|t| t == "muranoObject"),
        _ => false,
    }
}

/// Draft-04's keywords whose value maps names to subschemas.
const SCHEMA_MAPS: [&str; 3] = ["properties", "patternProperties", "definitions"];
/// Keywords whose value is one subschema (`items` may also be a list), plus
/// the forms spec's `context`, the schema of a `muranoObject`'s own
/// properties.
const SCHEMA_ONE: [&str; 5] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "not",
    "context",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: [&str; 3] = ["anyOf", "allOf", "oneOf"];

/// The subschemas of `schema`, each with its JSON pointer.
fn children<'a>(schema: &'a J, at: &str) -> Vec<(String, &'a J)> {
    let mut out = Vec::new();
    let Some(obj) = schema.as_object() else {
        return out;
    };
    for kw in SCHEMA_MAPS {
        if let Some(J::Object(m)) = obj.get(kw) {
            for (k, v) in m {
                out.push((format!("{at}/{kw}/{k}"), v));
            }
        }
    }
    for kw in SCHEMA_ONE {
        match obj.get(kw) {
            Some(v @ J::Object(_)) => out.push((format!("{at}/{kw}"), v)),
            Some(J::Array(vs)) if kw == "items" => {
                for (i, v) in vs.iter().enumerate() {
                    out.push((format!("{at}/{kw}/{i}"), v));
                }
            }
            _ => {}
        }
    }
    for kw in SCHEMA_LISTS {
        if let Some(J::Array(vs)) = obj.get(kw) {
            for (i, v) in vs.iter().enumerate() {
                out.push((format!("{at}/{kw}/{i}"), v));
            }
        }
    }
    out
}

/// The Murano keywords' problems in `schema` and all its subschemas;
/// how many `muranoObject` schemas there are.
fn murano_keywords(schema: &J, at: &str, problems: &mut Vec<String>) -> usize {
    let mut objects = 0;
    if is_murano_object(schema) {
        objects += 1;
        if !schema.get("muranoType").is_some_and(J::is_string) {
            problems.push(format!(
                "{at}: a muranoObject without a string muranoType: {schema}"
            ));
        }
    }
    if let Some(i) = schema.get("formIndex") {
        if !(i.is_i64() || i.is_u64()) {
            problems.push(format!("{at}: formIndex {i} is not an integer"));
        }
    }
    for (p, s) in children(schema, at) {
        objects += murano_keywords(s, &p, problems);
    }
    objects
}

/// `schema` with the forms spec's `muranoObject` type written `object`, in
/// every subschema: draft-04 knows only its seven simple types (its
/// meta-schema rejects any other `type`), and a `muranoObject` is an
/// object model (`{"?": {...}, ...}`) on the wire. The Murano keywords
/// (`muranoType`, `formSections`, `context`, ...) are left in: draft-04
/// ignores keywords it does not define. The `context` schemas are
/// compiled on their own (see [`contexts`]), since draft-04 does not look
/// into them.
fn as_draft4(schema: &J) -> J {
    let mut out = schema.clone();
    rewrite(&mut out);
    out
}

fn rewrite(schema: &mut J) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    match obj.get_mut("type") {
        Some(t @ J::String(_)) if t == "muranoObject" => *t = J::from("object"),
        Some(J::Array(ts)) => {
            for t in ts.iter_mut() {
                if t == "muranoObject" {
                    *t = J::from("object");
                }
            }
        }
        _ => {}
    }
    for kw in SCHEMA_MAPS {
        if let Some(J::Object(m)) = obj.get_mut(kw) {
            m.values_mut().for_each(rewrite);
        }
    }
    for kw in SCHEMA_ONE.into_iter().chain(SCHEMA_LISTS) {
        match obj.get_mut(kw) {
            Some(v @ J::Object(_)) => rewrite(v),
            Some(J::Array(vs)) => vs.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
}

/// Every `context` schema in `schema`, with its pointer.
fn contexts<'a>(schema: &'a J, at: &str, out: &mut Vec<(String, &'a J)>) {
    for (p, s) in children(schema, at) {
        if p.ends_with("/context") {
            out.push((p.clone(), s));
        }
        contexts(s, &p, out);
    }
}

/// What is wrong with one schema of an answer (nothing: empty), and how
/// many `muranoObject` schemas it has.
fn check_schema(schema: &J) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    if !schema.is_object() {
        return (vec![format!("not an object: {schema}")], 0);
    }
    if schema.get("$schema").and_then(J::as_str) != Some(DRAFT4) {
        problems.push(format!("$schema is {}, not {DRAFT4}", schema["$schema"]));
    }
    if schema.get("type").and_then(J::as_str) != Some("object") {
        problems.push(format!("type is {}, not \"object\"", schema["type"]));
    }
    if !schema.get("formSections").is_some_and(J::is_object) {
        problems.push(format!(
            "formSections is {}, not an object",
            schema.get("formSections").unwrap_or(&J::Null)
        ));
    }
    let objects = murano_keywords(schema, "", &mut problems);
    let draft4 = as_draft4(schema);
    if let Err(e) = jsonschema::draft4::new(&draft4) {
        problems.push(format!(
            "not a valid draft-04 schema: {e} (at {})",
            e.instance_path
        ));
    }
    let mut ctxs = Vec::new();
    contexts(&draft4, "", &mut ctxs);
    for (at, ctx) in ctxs {
        if let Err(e) = jsonschema::draft4::new(ctx) {
            problems.push(format!("{at}: not a valid draft-04 schema: {e}"));
        }
    }
    (problems, objects)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_class_of_the_fixtures_and_the_core_library_has_a_valid_schema() {
    let apps = common::root().join("../shared/fixtures/apps");
    if !apps.is_dir() {
        crate::common::skip(&format!("{} does not exist", apps.display()));
        return;
    }
    let catalog = Catalog::load_served(&[], std::slice::from_ref(&apps), None)
        .unwrap_or_else(|e| panic!("loading {}: {e}", apps.display()));
    let app = app(Arc::new(catalog), Options::default());
    let (status, listing) = get(&app, "/v1/catalog").await;
    assert_eq!(status, 200, "{listing}");
    let packages = listing["packages"].as_array().expect("packages");
    let core = packages
        .iter()
        .filter(|p| {
            p["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("io.murano"))
        })
        .count();
    assert!(core > 0, "no core library package in the catalogue");
    assert!(
        packages.len() > core,
        "no fixture package in the catalogue: {}",
        apps.display()
    );

    let (mut classes, mut schemas, mut objects, mut broken) = (0, 0, 0, 0);
    let mut failures: Vec<String> = Vec::new();
    for p in packages {
        let (name, version) = (p["name"].as_str().unwrap(), p["version"].as_str().unwrap());
        for c in p["classes"].as_array().unwrap() {
            let class = c["name"].as_str().unwrap();
            classes += 1;
            let uri = format!(
                "/v1/schemas/{}?classVersion={}&packageName={}",
                encode(class),
                encode(&format!("={version}")),
                encode(name)
            );
            let who = format!("{class} ({name}/{version})");
            let (status, answer) = get(&app, &uri).await;
            if let Some((_, names, why)) = BROKEN.iter().find(|b| b.0 == class) {
                broken += 1;
                let message = answer["error"]["message"].as_str().unwrap_or("");
                let kind = answer["error"]["kind"].as_str();
                if (status, kind) != (404, Some("NoClassFound")) || !message.contains(names) {
                    failures.push(format!(
                        "{who}: known broken ({why}), expected 404 NoClassFound naming \
                         {names}, got {status} {answer}"
                    ));
                }
                continue;
            }
            if status != 200 {
                let listed = c.get("error").map(|e| format!("; the catalogue says: {e}"));
                failures.push(format!(
                    "{who}: {status} {}{}",
                    answer["error"],
                    listed.unwrap_or_default()
                ));
                continue;
            }
            let Some(answer) = answer.as_object() else {
                failures.push(format!("{who}: the answer is not an object: {answer}"));
                continue;
            };
            if !answer.contains_key("") {
                failures.push(format!("{who}: no class schema (\"\") in the answer"));
            }
            for (method, schema) in answer {
                schemas += 1;
                let (problems, n) = check_schema(schema);
                objects += n;
                for problem in problems {
                    failures.push(format!("{who} [{method:?}]: {problem}"));
                }
            }
        }
    }
    eprintln!(
        "schemas_all: {} packages ({core} core library), {classes} classes \
         ({broken} known broken), {schemas} schemas checked ({objects} muranoObject \
         schemas), {} failures",
        packages.len(),
        failures.len()
    );
    assert!(objects > 0, "no muranoObject schema was checked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The checks themselves catch what they should.
#[test]
fn the_checks_catch_bad_schemas() {
    let good = serde_json::json!({
        "$schema": DRAFT4, "type": "object", "additionalProperties": false,
        "properties": {
            "vm": {"type": ["muranoObject", "null"], "muranoType": "a.B", "formIndex": 1,
                   "context": {"type": "object", "properties": {"n": {"type": "string"}}}},
            "vms": {"type": "array", "items": {"type": "muranoObject", "muranoType": "a.B"}}
        },
        "formSections": {}
    });
    assert_eq!(check_schema(&good), (Vec::<String>::new(), 2));
    let mut bad = good.clone();
    bad["properties"]["vms"]["items"]
        .as_object_mut()
        .unwrap()
        .remove("muranoType");
    bad["properties"]["vm"]["formIndex"] = serde_json::json!("1");
    bad["properties"]["vm"]["context"]["properties"]["n"]["type"] = serde_json::json!("text");
    bad["properties"]["x"] = serde_json::json!({"type": "strin"});
    bad["formSections"] = serde_json::json!([]);
    let (problems, _) = check_schema(&bad);
    for expected in [
        "/properties/vms/items: a muranoObject without",
        "/properties/vm: formIndex",
        "/properties/vm/context: not a valid",
        "not a valid draft-04 schema",
        "formSections is []",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{expected:?} not in {problems:#?}"
        );
    }
}
