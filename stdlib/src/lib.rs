//! The YAQL standard library of muranopl, one module per group of the
//! reference (`yaql/standard_library/*.py`).
//!
//! ```
//! let reg = muranopl_stdlib::registry(false);
//! assert!(reg.get("where").is_some());
//! ```
#![forbid(unsafe_code)]

pub mod boolean;
pub mod branching;
pub mod collections;
pub mod common;
pub mod date_time;
pub mod legacy;
pub mod math;
pub mod queries;
pub mod regex;
pub mod strings;
pub mod system;
pub mod util;

use std::sync::Arc;

use runtime::{Env, Options, Registry, Result, Value};

/// Builds the registry of the standard library; `legacy` adds the yaql 0.2
/// compatibility functions in front of the standard ones.
pub fn registry(legacy: bool) -> Registry {
    let mut r = Registry::new();
    r.set_any_form(legacy);
    if legacy {
        r.group("legacy");
        legacy::register(&mut r);
    }
    r.group("system");
    system::register(&mut r);
    r.group("common");
    common::register(&mut r);
    r.group("boolean");
    boolean::register(&mut r);
    r.group("strings");
    strings::register(&mut r);
    r.group("math");
    math::register(&mut r);
    r.group("collections");
    collections::register(&mut r);
    r.group("queries");
    queries::register(&mut r);
    r.group("regex");
    regex::register(&mut r);
    r.group("branching");
    branching::register(&mut r);
    r.group("date_time");
    date_time::register(&mut r);
    r.group("system");
    system::register_late(&mut r);
    r
}

/// An environment with the standard library and the given options.
pub fn env(options: Options) -> Env {
    Env::new(Arc::new(registry(options.legacy)), options)
}

/// Converts an evaluation result for output, as yaql's `#finalize` does:
/// lazy sequences become lists (honouring the iterator limit), sets become
/// lists when `convertSetsToLists` is on, recursively.
pub fn finalize(env: &Env, v: Value) -> Result<Value> {
    Ok(match &v {
        Value::Iter(_) => {
            let items = runtime::seq::to_vec(env, &v)?;
            Value::list(
                items
                    .into_iter()
                    .map(|x| finalize(env, x))
                    .collect::<Result<_>>()?,
            )
        }
        Value::List(l) => {
            if l.len() > env.limit() {
                return Err(runtime::Error::too_large());
            }
            if l.iter().all(|x| is_final(x, env.limit())) {
                v
            } else {
                Value::list(
                    l.iter()
                        .cloned()
                        .map(|x| finalize(env, x))
                        .collect::<Result<_>>()?,
                )
            }
        }
        Value::Set(s) => {
            if s.len() > env.limit() {
                return Err(runtime::Error::too_large());
            }
            if env.options().convert_sets_to_lists {
                Value::list(
                    s.iter()
                        .cloned()
                        .map(|x| finalize(env, x))
                        .collect::<Result<_>>()?,
                )
            } else {
                v
            }
        }
        Value::Dict(d) => {
            if d.len() > env.limit() {
                return Err(runtime::Error::too_large());
            }
            if d.values().all(|x| is_final(x, env.limit())) {
                v
            } else {
                let mut out = runtime::Dict::default();
                for (k, x) in d.iter() {
                    out.insert(k.clone(), finalize(env, x.clone())?);
                }
                Value::dict(out)
            }
        }
        _ => v,
    })
}

/// True when `v` needs no conversion and is within the limit.
fn is_final(v: &Value, limit: usize) -> bool {
    match v {
        Value::Iter(_) | Value::Set(_) => false,
        Value::List(l) => l.len() <= limit && l.iter().all(|x| is_final(x, limit)),
        Value::Dict(d) => d.len() <= limit && d.values().all(|x| is_final(x, limit)),
        _ => true,
    }
}
