//! What `serve` answers, apart from HTTP: the catalogue and one function
//! per endpoint, each turning a request's parts into an [`Answer`]. They
//! run on the engine's worker threads (see `super::engine_task`).

use std::sync::Arc;

use engine::{exec, Executor};
use muranopl::Catalogue;
use package::type_spec;
use runtime::json as tj;
use serde_json::{json, Value as J};

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, J);

/// An answer whose body is JSON text already written: a result, which may
/// nest deeper than a JSON parser takes, is written once and never parsed
/// again.
pub type TextAnswer = (u16, String);

/// `answer` with its body written.
fn as_text((status, body): Answer) -> TextAnswer {
    (status, body.to_string())
}

/// The error body every endpoint answers with.
pub fn error(status: u16, kind: impl std::fmt::Display, message: &str) -> Answer {
    (
        status,
        json!({"error": {"kind": kind.to_string(), "message": message, "trace": []}}),
    )
}

/// The answer for an engine error: the status its kind calls for.
fn engine_error(ex: &Executor, e: &runtime::Error, failed: u16) -> Answer {
    let names = exec::error_names(ex, e, false);
    let kind = names
        .first()
        .cloned()
        .unwrap_or_else(|| e.kind().to_string());
    use runtime::ErrorKind as K;
    let status = match e.error_kind() {
        K::NoClassFound | K::NoPackageFound | K::NoMethodFound | K::NoMethodRegisteredException => {
            404
        }
        K::MethodNotExposed => 403,
        K::ContractViolationException | K::NoMatchingMethodException => 400,
        // The request's time budget or the statement budget ran out.
        K::TimeoutError | K::ExecutionLimitExceeded => 504,
        _ => failed,
    };
    (
        status,
        json!({"error": {"kind": kind, "message": e.message(), "trace": e.trace()}}),
    )
}

/// `GET /health`.
pub fn health(catalog: &Catalogue) -> Answer {
    (200, json!({"status": "ok", "packages": catalog.names()}))
}

/// `GET /v1/catalog`: every package with its classes, each with its
/// ancestors (for the forms page: which classes can fill an object field).
pub fn listing(catalog: &Catalogue) -> Answer {
    let session = catalog.session();
    let ex = session.executor();
    let mut packages = Vec::new();
    for p in ex.packages() {
        let mut names: Vec<&String> = p.decls.keys().collect();
        names.sort();
        let mut classes = Vec::new();
        for name in names {
            let spec = type_spec(name, Some(&format!("={}", p.version)), Some(&p.name));
            // A class that fails to build is listed with its error.
            classes.push(match ex.class(&spec) {
                Ok(c) => json!({
                    "name": name,
                    "ancestors": c.ancestors.iter().map(|a| a.key.to_string()).collect::<Vec<_>>(),
                    "usage": format!("{:?}", c.decl.usage),
                }),
                Err(e) => json!({"name": name, "error": e.message()}),
            });
        }
        packages.push(json!({"name": &*p.name, "version": &*p.version, "classes": classes}));
    }
    (200, json!({ "packages": packages }))
}

/// `GET /v1/schemas/{class}[/{methods}]`: the schemas of the class and its
/// model builders, or of the named methods (comma-separated; an empty
/// name is the class).
pub fn schemas(
    catalog: &Catalogue,
    class: &str,
    methods: Option<&str>,
    version: Option<&str>,
    package: Option<&str>,
) -> Answer {
    let methods: Option<Vec<String>> =
        methods.map(|m| m.split(',').map(|s| s.trim().to_string()).collect());
    let (session, out) = match catalog.schemas(class, methods.as_deref(), version, package) {
        Ok(answered) => answered,
        Err(e) => return pick_error(&e),
    };
    match out {
        Ok(list) if list.is_empty() => error(
            404,
            runtime::ErrorKind::NoMethodFound,
            &format!("class {class} has no method of those names with a schema"),
        ),
        Ok(list) => {
            let out = list.into_iter().map(|(n, v)| (n, to_json(&v))).collect();
            (200, J::Object(out))
        }
        Err(e) => engine_error(session.executor(), &e, 400),
    }
}

/// `POST /v1/actions`: runs a static action. Body: `{"className",
/// "methodName", "parameters"?, "packageName"?, "classVersion"?}`.
pub fn action(catalog: &Catalogue, body: &[u8]) -> TextAnswer {
    match run_action(catalog, body) {
        Ok(v) => (200, tj::to_tagged_string(&v)),
        Err(answer) => as_text(answer),
    }
}

/// The result of the action `body` names, or the error answer.
fn run_action(catalog: &Catalogue, body: &[u8]) -> Result<runtime::Value, Answer> {
    let req: J = match serde_json::from_slice(body) {
        Ok(j) => j,
        Err(e) => {
            return Err(error(
                400,
                "BadRequest",
                &format!("the body is not JSON: {e}"),
            ))
        }
    };
    let field = |k: &str| req.get(k).and_then(|v| v.as_str());
    let (Some(class), Some(method)) = (field("className"), field("methodName")) else {
        return Err(error(
            400,
            "BadRequest",
            "the body needs \"className\" and \"methodName\" strings",
        ));
    };
    let params = match req.get("parameters") {
        None | Some(J::Null) => serde_json::Map::new(),
        Some(J::Object(m)) => m.clone(),
        Some(_) => return Err(error(400, "BadRequest", "\"parameters\" must be an object")),
    };
    let mut named: Vec<(Arc<str>, runtime::Value)> = Vec::new();
    for (k, v) in &params {
        match tj::from_tagged_str(&v.to_string()) {
            Ok(v) => named.push((k.as_str().into(), v)),
            Err(e) => {
                return Err(error(
                    400,
                    "BadRequest",
                    &format!("parameter {k}: {}", e.message()),
                ))
            }
        }
    }
    let (version, package) = (field("classVersion"), field("packageName"));
    let (session, out) = catalog
        .static_action(class, method, named, version, package)
        .map_err(|e| pick_error(&e))?;
    out.map_err(|e| engine_error(session.executor(), &e, 500))
}

/// `POST /v1/validate`: checks an object model (`{"Objects": ...}` or a
/// bare object) against the catalogue's contracts. Answers 200 with
/// `{"valid", "objects", "violations": [{"path", "property", "message"}],
/// "error"}`; a model that cannot be loaded is valid = false with `error`.
pub fn validate(catalog: &Catalogue, body: &[u8]) -> Answer {
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(_) => return error(400, "BadRequest", "the body is not UTF-8"),
    };
    let model = match tj::from_tagged_str(text) {
        Ok(m) => m,
        Err(e) => {
            return error(
                400,
                "BadRequest",
                &format!("the body is not JSON: {}", e.message()),
            )
        }
    };
    let v = catalog.validate(&model);
    let violations: Vec<J> = v
        .violations
        .iter()
        .map(|(path, prop, e)| json!({"path": path, "property": prop, "message": e.message()}))
        .collect();
    let error = v
        .error
        .as_ref()
        .map(|e| json!({"kind": e.kind().to_string(), "message": e.message()}));
    (
        200,
        json!({
            "valid": violations.is_empty() && error.is_none(),
            "objects": v.objects,
            "violations": violations,
            "error": error,
        }),
    )
}

/// The answer when a request names no class the catalogue has: 400 for a
/// bad version spec, else 404.
fn pick_error(e: &runtime::Error) -> Answer {
    let status = match e.error_kind() {
        runtime::ErrorKind::ValueError => 400,
        _ => 404,
    };
    error(status, e.kind(), e.message())
}

fn to_json(v: &runtime::Value) -> J {
    serde_json::from_str(&tj::to_tagged_string(v)).unwrap_or(J::Null)
}
