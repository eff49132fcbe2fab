//! `muranopl run`: loads packages and an object model, runs a method (by
//! default `deploy`) in the simulated cloud, and writes the resulting
//! model and the deployment record.
//!
//! A model whose root is not an `io.murano.Environment` (for example the
//! application object that `muranopl ui model` prints) is wrapped into an
//! environment with a default Neutron network.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use runtime::{Dict, Value};
use stdlib::murano::packages::{to_package, FormatRegistry, PackageFormat, PackageLoader};
use stdlib::murano::{cloud, model, serialize, Executor};

/// The options of `muranopl run`.
pub struct RunArgs {
    /// Package directories or .zip files.
    pub packages: Vec<PathBuf>,
    /// The object model (JSON).
    pub model: PathBuf,
    /// The method to run.
    pub method: String,
    /// Where to write the serialized model.
    pub out: Option<PathBuf>,
    /// Where to write the deployment record.
    pub record: Option<PathBuf>,
    /// Package search path.
    pub libs: Vec<PathBuf>,
    /// Simulated cloud settings (YAML or JSON; see `cloud::configure`).
    pub cloud: Option<PathBuf>,
}

const ENV_ID: &str = "e0000000000000000000000000000001";
const NET_ID: &str = "e0000000000000000000000000000002";

fn s(v: &str) -> Value {
    Value::str(v)
}

fn dict(entries: Vec<(&str, Value)>) -> Value {
    let mut d = Dict::default();
    for (k, v) in entries {
        d.insert(s(k), v);
    }
    Value::dict(d)
}

fn get<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    match v {
        Value::Dict(d) => d.get(&s(k)),
        _ => None,
    }
}

/// The class name of an object definition (`?.type`, without version).
fn object_type(obj: &Value) -> Option<String> {
    let t = get(obj, "?").and_then(|h| get(h, "type"))?.as_str()?;
    Some(t.split(['/', '@']).next().unwrap_or(t).to_string()) // also `Name@package` (issue 6)
}

/// Puts an application object into a default environment.
fn wrap(app: Value, name: &str) -> Value {
    let net = dict(vec![
        (
            "?",
            dict(vec![
                ("type", s("io.murano.resources.NeutronNetwork")),
                ("id", s(NET_ID)),
            ]),
        ),
        ("name", s(&format!("{name}-network"))),
    ]);
    dict(vec![
        (
            "?",
            dict(vec![
                ("type", s("io.murano.Environment")),
                ("id", s(ENV_ID)),
            ]),
        ),
        ("name", s(name)),
        ("applications", Value::list(vec![app])),
        (
            "defaultNetworks",
            dict(vec![("environment", net), ("flat", Value::Null)]),
        ),
    ])
}

fn to_json(v: &Value) -> serde_json::Value {
    serde_json::from_str(&runtime::json::to_tagged_string(v)).unwrap_or(serde_json::Value::Null)
}

fn write_json(path: &Path, v: &serde_json::Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn load_packages(
    paths: &[PathBuf],
    libs: &[PathBuf],
) -> Result<Vec<Arc<dyn PackageFormat>>, String> {
    let reg = FormatRegistry::builtin();
    let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
    let mut all: Vec<Arc<dyn PackageFormat>> = Vec::new();
    let push = |p: Arc<dyn PackageFormat>, all: &mut Vec<Arc<dyn PackageFormat>>| {
        if !all
            .iter()
            .any(|q| q.full_name() == p.full_name() && q.version() == p.version())
        {
            all.push(p);
        }
    };
    let mut roots = Vec::new();
    for path in paths {
        let p = reg
            .load(path)
            .map_err(|e| format!("{}: {}", path.display(), e.message()))?;
        push(p.clone(), &mut all);
        roots.push(p);
    }
    for root in &roots {
        let deps = loader.resolve(root).map_err(|e| e.message().to_string())?;
        for d in deps {
            push(d, &mut all);
        }
    }
    Ok(all)
}

/// The executor's packages from the loaded `formats`. A class that fails
/// to load is a warning (the rest of the package still runs), or, when
/// `strict`, the error.
pub(crate) fn packages_of(
    formats: &[Arc<dyn PackageFormat>],
    strict: bool,
) -> Result<Vec<stdlib::murano::Package>, String> {
    let mut out = Vec::new();
    for f in formats {
        let (p, errors) = to_package(&**f);
        for e in errors {
            if strict {
                return Err(format!("{}: {}: {}", f.full_name(), e.kind(), e.message()));
            }
            eprintln!("warning: {}: {}", f.full_name(), e.message());
        }
        out.push(p);
    }
    Ok(out)
}

fn print_error(e: &runtime::Error) {
    eprintln!("error: {}: {}", e.kind(), e.message());
    for f in e.trace() {
        eprintln!("  at {f}");
    }
}

/// Runs `muranopl run`; returns the exit status.
pub fn run(a: RunArgs) -> i32 {
    let formats = match load_packages(&a.packages, &a.libs) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    // The model's `?.classVersion` / `type` versions against the loaded packages (issue 6).
    if let Err(e) = stdlib::murano::packages::check_model_file(&a.model, &formats) {
        eprintln!("error: {e}");
        return 1;
    }
    let pkgs = match packages_of(&formats, false) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let ex = Executor::new(pkgs);
    cloud::set_package_resources(&ex, &formats);
    if let Some(path) = &a.cloud {
        let configured = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: {e}", path.display()))
            .and_then(|t| {
                cloud::configure(&ex, &t, &path.display().to_string())
                    .map_err(|e| e.message().to_string())
            });
        if let Err(e) = configured {
            eprintln!("error: {e}");
            cloud::forget(&ex);
            return 1;
        }
    }
    let status = run_in(&ex, &a);
    cloud::forget(&ex);
    status
}

fn run_in(ex: &Arc<Executor>, a: &RunArgs) -> i32 {
    let text = match std::fs::read_to_string(&a.model) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", a.model.display());
            return 1;
        }
    };
    let data = match runtime::json::from_tagged_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {}: {}", a.model.display(), e.message());
            return 1;
        }
    };
    // The model: `{"Objects": ...}` or a bare object.
    let mut model = match get(&data, "Objects") {
        Some(_) => data.clone(),
        None => dict(vec![("Objects", data.clone())]),
    };
    let objects = get(&model, "Objects").cloned().unwrap_or(Value::Null);
    let is_env = match object_type(&objects) {
        Some(t) => match ex.class(&t) {
            Ok(c) => c.is_a("io.murano.Environment"),
            Err(e) => {
                print_error(&e);
                return 1;
            }
        },
        None => {
            eprintln!(
                "error: {}: the model has no root object (`?: {{type: ...}}`)",
                a.model.display()
            );
            return 1;
        }
    };
    if !is_env {
        let name = a
            .packages
            .first()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "environment".into());
        if let Value::Dict(d) = &mut model {
            let mut d2 = (**d).clone();
            d2.insert(s("Objects"), wrap(objects, &format!("{name}-env")));
            model = Value::dict(d2);
        }
    }
    let root = match model::load_model(ex, &model) {
        Ok(Some(r)) => r,
        Ok(None) => {
            eprintln!("error: the model has no objects");
            return 1;
        }
        Err(e) => {
            print_error(&e);
            return 1;
        }
    };
    let root_v = Value::Object(root.clone());
    let mut status = 0;
    let env_has = ex
        .class_of(&root)
        .map(|c| c.find_method(&a.method).is_some())
        .unwrap_or(false);
    let result = if env_has {
        ex.call(&root_v, &a.method, vec![], vec![], false)
            .map(|_| ())
    } else {
        // The method of the environment's applications.
        match ex.get_property(&root, "applications", true) {
            Ok(Value::List(apps)) => {
                let mut r = Ok(());
                for app in apps.iter() {
                    match ex.call(app, &a.method, vec![], vec![], false) {
                        Ok(Some(_)) => {}
                        Ok(None) => {
                            r = Err(runtime::Error::new(
                                "NoMethodFound",
                                format!("Method {} is not found", a.method),
                            ));
                        }
                        Err(e) => r = Err(e),
                    }
                    if r.is_err() {
                        break;
                    }
                }
                r
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        }
    };
    if let Err(e) = &result {
        print_error(e);
        status = 1;
    }
    if let Some(out) = &a.out {
        match serialize::serialize_model(ex, &root) {
            Ok(m) => {
                if let Err(e) = write_json(out, &to_json(&m)) {
                    eprintln!("error: {e}");
                    status = 1;
                }
            }
            Err(e) => {
                print_error(&e);
                status = 1;
            }
        }
    }
    let log = ex.take_log();
    if let Some(path) = &a.record {
        let mut rec = to_json(&cloud::record(ex));
        if let serde_json::Value::Object(m) = &mut rec {
            m.insert(
                "log".into(),
                serde_json::Value::Array(log.iter().map(|l| l.clone().into()).collect()),
            );
            m.insert(
                "status".into(),
                match &result {
                    Ok(()) => "ok".into(),
                    Err(e) => serde_json::json!({
                        "error": e.kind(),
                        "message": e.message(),
                        "trace": e.trace(),
                    }),
                },
            );
        }
        if let Err(e) = write_json(path, &rec) {
            eprintln!("error: {e}");
            status = 1;
        }
    }
    status
}
