//! `muranopl harness dsl`: MuranoPL conformance cases over JSON Lines
//! (see `../shared/conformance/PROTOCOL.md`).

use runtime::ErrorKind;
use std::sync::Arc;

use engine::{exec, model, Executor, Package};
use serde_json::{json, Value as J};

use muranopl::{json as tj, Value};

/// Decodes a tagged-JSON argument; `{"$object": {"id"}}` is a loaded object.
fn decode(ex: &Executor, j: &J) -> Result<Value, runtime::Error> {
    match j {
        J::Object(o) if o.len() == 1 && o.contains_key("$object") => {
            let id = o["$object"]
                .get("id")
                .and_then(|i| i.as_str())
                .unwrap_or("");
            ex.find_object(id).map(Value::Object).ok_or_else(|| {
                runtime::Error::new(
                    ErrorKind::NoObjectFoundError,
                    format!("Object {id} not found"),
                )
            })
        }
        J::Object(o) if !(o.len() == 1 && o.keys().next().is_some_and(|k| k.starts_with('$'))) => {
            let mut d = runtime::Dict::default();
            for (k, v) in o {
                d.insert(Value::str(k.as_str()), decode(ex, v)?);
            }
            Ok(Value::dict(d))
        }
        J::Array(a) => Ok(Value::list(
            a.iter().map(|x| decode(ex, x)).collect::<Result<_, _>>()?,
        )),
        other => tj::from_tagged(other),
    }
}

fn to_json(v: &Value) -> J {
    serde_json::from_str(&tj::to_tagged_string(v)).unwrap_or(J::Null)
}

fn err_json(ex: &Executor, e: &runtime::Error) -> J {
    json!({"names": exec::error_names(ex, e, false), "message": e.message()})
}

fn run_case(req: &J, jit: compiler::jit::Mode) -> J {
    let id = req.get("id").cloned().unwrap_or(J::Null);
    let format = req.get("format").and_then(|f| f.as_str()).unwrap_or("1.4");
    let mut files: Vec<(String, String)> = Vec::new();
    if let Some(J::Object(c)) = req.get("classes") {
        for (k, v) in c {
            files.push((k.clone(), v.as_str().unwrap_or("").to_string()));
        }
    }
    let mut pkg = match Package::new("tests", "0.0.0", format, &files) {
        Ok(p) => p,
        Err(e) => {
            return json!({"id": id, "load_error": {"names": [e.kind()], "message": e.message()}})
        }
    };
    if let Some(J::Object(cfg)) = req.get("configs") {
        for (cls, props) in cfg {
            if let Ok(Value::Dict(ref d)) = tj::from_tagged(props) {
                pkg.configs.insert(cls.clone(), (**d).clone());
            }
        }
    }
    let catalog = engine::Catalog::new(vec![pkg]);
    catalog.set_jit(jit);
    let ex = Executor::with_catalog(catalog);
    ex.set_cloud(std::sync::Arc::new(sim::SimCloud::new()));
    let model_j = req.get("model").cloned().unwrap_or(J::Null);
    let root = match decode(&ex, &model_j).and_then(|m| model::load_model(&ex, &m)) {
        Ok(r) => r,
        Err(e) => {
            return json!({"id": id, "load_error": err_json(&ex, &e),
                          "load_traces": ex.take_traces().iter().map(to_json).collect::<Vec<_>>()})
        }
    };
    let load_traces: Vec<J> = ex.take_traces().iter().map(to_json).collect();
    let mut steps = Vec::new();
    for step in req
        .get("steps")
        .and_then(|s| s.as_array())
        .cloned()
        .unwrap_or_default()
    {
        let r = run_step(&ex, &root, &step);
        let traces: Vec<J> = ex.take_traces().iter().map(to_json).collect();
        steps.push(match r {
            Ok(v) => json!({"result": to_json(&v), "traces": traces}),
            Err(e) => json!({"result": null, "traces": traces, "error": err_json(&ex, &e)}),
        });
    }
    let model_out = if req
        .get("serialize")
        .and_then(|s| s.as_bool())
        .unwrap_or(false)
    {
        match root
            .as_ref()
            .map(|r| engine::serialize::serialize_model(&ex, r))
        {
            Some(Ok(m)) => to_json(&m),
            _ => J::Null,
        }
    } else {
        J::Null
    };
    json!({"id": id, "load_traces": load_traces, "steps": steps, "model": model_out})
}

fn run_step(
    ex: &Arc<Executor>,
    root: &Option<Arc<runtime::value::ObjRef>>,
    step: &J,
) -> Result<Value, runtime::Error> {
    let receiver = match step.get("on") {
        Some(J::String(s)) if s == "root" => match root {
            Some(r) => Value::Object(r.clone()),
            None => {
                return Err(runtime::Error::new(
                    ErrorKind::NoObjectFoundError,
                    "no root object",
                ))
            }
        },
        Some(J::Object(o)) if o.contains_key("object") => {
            let id = o["object"].as_str().unwrap_or("");
            Value::Object(ex.find_object(id).ok_or_else(|| {
                runtime::Error::new(
                    ErrorKind::NoObjectFoundError,
                    format!("Object {id} not found"),
                )
            })?)
        }
        Some(J::Object(o)) if o.contains_key("class") => {
            ex.type_value(o["class"].as_str().unwrap_or(""))?
        }
        _ => {
            return Err(runtime::Error::new(
                ErrorKind::ValueError,
                "bad step receiver",
            ))
        }
    };
    let method = step.get("method").and_then(|m| m.as_str()).unwrap_or("");
    let mut args = Vec::new();
    for a in step
        .get("args")
        .and_then(|a| a.as_array())
        .cloned()
        .unwrap_or_default()
    {
        args.push(decode(ex, &a)?);
    }
    let mut kwargs = Vec::new();
    if let Some(J::Object(k)) = step.get("kwargs") {
        for (n, v) in k {
            kwargs.push((Arc::from(n.as_str()), decode(ex, v)?));
        }
    }
    match ex.call(&receiver, method, args, kwargs, true)? {
        Some(v) => stdlib::finalize(ex.env(false), v),
        None => Err(runtime::Error::new(
            ErrorKind::NoMethodFound,
            format!("Method {method} is not found"),
        )),
    }
}

/// Runs the dsl harness loop on stdin/stdout.
pub fn harness_dsl(jit: compiler::jit::Mode, max_line: Option<usize>) -> i32 {
    crate::harness::serve("load_error", max_line, |req| run_case(req, jit))
}
