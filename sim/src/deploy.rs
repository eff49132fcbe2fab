//! Deploying an object model to the simulated cloud: what `muranopl run`
//! and the embedding API do with a model and a method name.
//!
//! The model is `{"Objects": ...}` or a bare object. A root that is not an
//! `io.murano.Environment` (for example the application object that
//! `muranopl ui model` prints) is placed into an environment of its own
//! with a default Neutron network, as the dashboard does when it adds an
//! application to a new environment. The method runs on the environment
//! when its class has it, else on each of its applications in order.

use runtime::ErrorKind;
use std::sync::Arc;

use engine::{model, Executor};
use runtime::value::ObjRef;
use runtime::{Error, Result, Value};

use crate::{dict, get, s};

/// The class name of an object definition (`?.type`, without version or
/// package).
fn object_type(obj: &Value) -> Option<String> {
    let t = get(obj, "?").and_then(|h| get(h, "type"))?.as_str()?;
    Some(t.split(['/', '@']).next().unwrap_or(t).to_string())
}

/// An environment named `name` holding `apps`, with a default network;
/// `new_id` gives the ids of the two objects it makes.
pub fn environment(apps: Vec<Value>, name: &str, mut new_id: impl FnMut() -> String) -> Value {
    let mut header = |ty: &str| dict(vec![("type", s(ty)), ("id", s(&new_id()))]);
    let net = dict(vec![
        ("?", header("io.murano.resources.NeutronNetwork")),
        ("name", s(&format!("{name}-network"))),
    ]);
    dict(vec![
        ("?", header("io.murano.Environment")),
        ("name", s(name)),
        ("applications", Value::list(apps)),
        (
            "defaultNetworks",
            dict(vec![("environment", net), ("flat", Value::Null)]),
        ),
    ])
}

/// Loads `data` (`{"Objects": ...}` or a bare object) as a deployment:
/// an application root goes into an environment named `env_name`; any
/// other root stays the root. Returns the root object.
pub fn load(ex: &Executor, data: &Value, env_name: &str) -> Result<Arc<ObjRef>> {
    let mut model = match get(data, "Objects") {
        Some(_) => data.clone(),
        None => dict(vec![("Objects", data.clone())]),
    };
    let objects = get(&model, "Objects").cloned().unwrap_or(Value::Null);
    let Some(root_type) = object_type(&objects) else {
        return Err(Error::value(
            "the model has no root object (`?: {type: ...}`)",
        ));
    };
    // An application is placed into an environment, as the dashboard
    // places it; any other root (an environment, a plain class, a test
    // harness object) is the model's root as it is, as murano's engine
    // takes the model it is given.
    if ex.class(&root_type)?.is_a("io.murano.Application") {
        if let Value::Dict(d) = &mut model {
            let mut d2 = (**d).clone();
            d2.insert(
                s("Objects"),
                environment(vec![objects], env_name, || ex.new_id()),
            );
            model = Value::dict(d2);
        }
    }
    model::load_model(ex, &model)?.ok_or_else(|| Error::value("the model has no objects"))
}

/// Runs `method` on `root`, or, when `root` is an environment whose class
/// has no such method, on each of its applications in order (the first
/// error stops the run). Returns what the method returned (a list of the
/// applications' results in the second case).
pub fn run(ex: &Executor, root: &Arc<ObjRef>, method: &str) -> Result<Value> {
    let root_v = Value::Object(root.clone());
    if ex.class_of(root)?.find_method(method).is_some() {
        return ex
            .call(&root_v, method, vec![], vec![], false)
            .map(|r| r.unwrap_or(Value::Null));
    }
    let class = ex.class_of(root)?;
    if !class.is_a("io.murano.Environment") {
        return Err(Error::new(
            ErrorKind::NoMethodFound,
            format!("Method {method} is not found in {}", class.name),
        ));
    }
    let Value::List(ref apps) = ex.get_property(root, "applications", true)? else {
        return Ok(Value::Null);
    };
    let mut results = Vec::with_capacity(apps.len());
    for app in apps.iter() {
        let Some(r) = ex.call(app, method, vec![], vec![], false)? else {
            return Err(Error::new(
                ErrorKind::NoMethodFound,
                format!("Method {method} is not found"),
            ));
        };
        results.push(r);
    }
    Ok(Value::list(results))
}
