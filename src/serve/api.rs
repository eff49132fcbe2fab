//! What `serve` answers, apart from HTTP: the catalogue and one function
//! per endpoint, each turning a request's parts into an [`Answer`]. They
//! run on the engine's worker threads (see `super::engine_task`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::version::{parse_version, VersionSpec};
use engine::{exec, Executor};
use forms::schema::{self, Dialect};
use package::{type_spec, PackageLoader};
use runtime::json as tj;
use serde_json::{json, Value as J};

use crate::session::{load_formats, Catalogue, Session};

/// The packages the API serves, compiled once for every request.
pub struct Catalog {
    catalogue: Catalogue,
    /// Statements each request's execution may run.
    max_steps: u64,
    /// Where each package's files are on this machine, as messages name
    /// them (JSON-escaped), and what answers say instead: the package's
    /// name.
    paths: Vec<(String, String)>,
}

impl Catalog {
    /// The given packages with what they require, or, when none is given,
    /// every package on the search path (all versions).
    pub fn load(
        paths: &[PathBuf],
        libs: &[PathBuf],
        class_configs: Option<&Path>,
    ) -> Result<Catalog, String> {
        let mut formats = load_formats(paths, libs)?;
        if paths.is_empty() {
            let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
            for b in &loader.broken {
                eprintln!("warning: {}: {}", b.path.display(), b.error.message());
            }
            for f in loader.found.values().flatten() {
                if !formats
                    .iter()
                    .any(|q| q.full_name() == f.name && *q.version() == f.version)
                {
                    formats.push(f.package.clone());
                }
            }
        }
        let extra = schema::forms_package().into_iter().collect();
        let catalogue = Catalogue::from_formats(formats, false, extra, class_configs)?;
        let json_text = |s: &str| {
            let quoted = J::String(s.to_string()).to_string();
            quoted[1..quoted.len() - 1].to_string()
        };
        let mut paths: Vec<(String, String)> = catalogue
            .formats()
            .iter()
            .map(|f| {
                let at = f.base().source.display("");
                (json_text(&at), json_text(&format!("{}/", f.full_name())))
            })
            .collect();
        // The longest first: a package inside another's directory.
        paths.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Ok(Catalog {
            catalogue,
            max_steps: engine::STEP_BUDGET,
            paths,
        })
    }

    /// `json`, a JSON text, with every package's location on this machine
    /// replaced by the package's name (`/srv/apps/web/Classes/W.yaml:3:5`
    /// becomes `com.example.Web/Classes/W.yaml:3:5`).
    pub fn without_paths(&self, json: &str) -> String {
        let mut out = json.to_string();
        for (at, name) in &self.paths {
            if out.contains(at.as_str()) {
                out = out.replace(at.as_str(), name);
            }
        }
        out
    }

    /// `name/version` of every package served.
    pub fn names(&self) -> Vec<String> {
        self.catalogue
            .formats()
            .iter()
            .map(|f| format!("{}/{}", f.full_name(), f.version()))
            .collect()
    }

    /// Sets when contracts and conditions are compiled to machine code.
    pub fn set_jit(&self, mode: compiler::jit::Mode) {
        self.catalogue.catalog().set_jit(mode);
    }

    /// Sets how many statements each request's execution may run
    /// (`u64::MAX`: unlimited).
    pub fn set_max_steps(&mut self, steps: u64) {
        self.max_steps = steps;
    }

    /// The loaded packages and their compiled classes.
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// A fresh session over the catalogue (each request has its own),
    /// within the statement budget.
    pub fn session(&self) -> Session {
        let session = self.catalogue.session();
        session.executor().set_step_budget(self.max_steps);
        session
    }
}

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
pub fn health(catalog: &Catalog) -> Answer {
    (200, json!({"status": "ok", "packages": catalog.names()}))
}

/// `GET /v1/catalog`: every package with its classes, each with its
/// ancestors (for the forms page: which classes can fill an object field).
pub fn listing(catalog: &Catalog) -> Answer {
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
                    "ancestors": c.ancestors.iter().map(|a| a.name.to_string()).collect::<Vec<_>>(),
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
    catalog: &Catalog,
    class: &str,
    methods: Option<&str>,
    version: Option<&str>,
    package: Option<&str>,
) -> Answer {
    let session = catalog.session();
    let ex = session.executor();
    let spec = match pick_class(ex, class, version, package) {
        Ok(spec) => spec,
        Err(answer) => return answer,
    };
    let methods: Option<Vec<String>> =
        methods.map(|m| m.split(',').map(|s| s.trim().to_string()).collect());
    // `spec` pins the package: generate_schema need not look it up again.
    match schema::generate_schema(ex, &spec, methods.as_deref(), None, Dialect::Spec) {
        Ok(list) if list.is_empty() => error(
            404,
            runtime::ErrorKind::NoMethodFound,
            &format!("class {class} has no method of those names with a schema"),
        ),
        Ok(list) => {
            let out = list.into_iter().map(|(n, v)| (n, to_json(&v))).collect();
            (200, J::Object(out))
        }
        Err(e) => engine_error(ex, &e, 400),
    }
}

/// `POST /v1/actions`: runs a static action. Body: `{"className",
/// "methodName", "parameters"?, "packageName"?, "classVersion"?}`.
pub fn action(catalog: &Catalog, body: &[u8]) -> TextAnswer {
    match run_action(catalog, body) {
        Ok(v) => (200, tj::to_tagged_string(&v)),
        Err(answer) => as_text(answer),
    }
}

/// The result of the action `body` names, or the error answer.
fn run_action(catalog: &Catalog, body: &[u8]) -> Result<runtime::Value, Answer> {
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
    let session = catalog.session();
    let ex = session.executor();
    let spec = pick_class(ex, class, field("classVersion"), field("packageName"))?;
    ex.call_static_action(&spec, field("packageName"), method, named)
        .map_err(|e| engine_error(ex, &e, 500))
}

/// `POST /v1/validate`: checks an object model (`{"Objects": ...}` or a
/// bare object) against the catalogue's contracts. Answers 200 with
/// `{"valid", "objects", "violations": [{"path", "property", "message"}],
/// "error"}`; a model that cannot be loaded is valid = false with `error`.
pub fn validate(catalog: &Catalog, body: &[u8]) -> Answer {
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
    let v = catalog.catalogue.validate(&model);
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

/// The type string naming exactly the version of `class` that `version`
/// (a version spec; murano's default `=0`, any 0.x) and `package` pick:
/// the highest matching one. 400 for a bad spec, 404 when none matches.
fn pick_class(
    ex: &Executor,
    class: &str,
    version: Option<&str>,
    package: Option<&str>,
) -> Result<String, Answer> {
    let text = version.filter(|v| !v.trim().is_empty()).unwrap_or("=0");
    let spec = VersionSpec::parse(Some(text))
        .map_err(|e| error(400, "ValueError", &format!("classVersion: {e}")))?;
    let providers: Vec<_> = ex
        .packages()
        .iter()
        .filter(|p| p.decls.contains_key(class))
        .collect();
    if let Some(p) = package {
        if !ex.packages().iter().any(|x| &*x.name == p) {
            let msg = format!("Package {p} is not found");
            return Err(error(404, runtime::ErrorKind::NoPackageFound, &msg));
        }
    }
    let chosen = providers
        .iter()
        .filter(|p| package.is_none_or(|n| *p.name == *n))
        .filter_map(|p| Some((parse_version(&p.version).ok()?, p)))
        .filter(|(v, _)| spec.matches(v))
        .max_by(|a, b| a.0.cmp(&b.0));
    match chosen {
        Some((v, p)) => Ok(type_spec(class, Some(&format!("={v}")), Some(&p.name))),
        None => {
            let mut msg = format!("Class \"{class}\" is not found");
            if !providers.is_empty() {
                msg = format!("{msg} in a version matching \"{text}\"");
            }
            if let Some(p) = package {
                msg = format!("{msg} in package {p}");
            }
            Err(error(404, runtime::ErrorKind::NoClassFound, &msg))
        }
    }
}

fn to_json(v: &runtime::Value) -> J {
    serde_json::from_str(&tj::to_tagged_string(v)).unwrap_or(J::Null)
}
