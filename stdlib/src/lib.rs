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
///
/// The containers being rebuilt are a stack on the heap, not a recursion:
/// a result nested a million deep is converted on any thread's stack (a
/// green thread's is small).
pub fn finalize(env: &Env, v: Value) -> Result<Value> {
    let mut open: Vec<Rebuild> = Vec::new();
    let mut next = v;
    loop {
        let mut done = match rebuild(env, next)? {
            Ok(v) => v,
            Err(mut r) => match r.next_child() {
                Some(child) => {
                    open.push(r);
                    next = child;
                    continue;
                }
                None => r.finish(),
            },
        };
        // Hand `done` to the container it belongs in, closing every
        // container that is complete, until one has an item left.
        loop {
            let Some(top) = open.last_mut() else {
                return Ok(done);
            };
            top.push(done);
            if let Some(child) = top.next_child() {
                next = child;
                break;
            }
            let Some(full) = open.pop() else {
                unreachable!("`top` is on the stack")
            };
            done = full.finish();
        }
    }
}

/// A container whose items are being converted.
enum Rebuild {
    List {
        rest: std::vec::IntoIter<Value>,
        out: Vec<Value>,
        /// It was a tuple, and stays one.
        tuple: bool,
    },
    Dict {
        rest: std::vec::IntoIter<(Value, Value)>,
        key: Option<Value>,
        out: runtime::Dict,
    },
}

impl Rebuild {
    fn list(items: Vec<Value>, tuple: bool) -> Rebuild {
        Rebuild::List {
            out: Vec::with_capacity(items.len()),
            rest: items.into_iter(),
            tuple,
        }
    }

    fn next_child(&mut self) -> Option<Value> {
        match self {
            Rebuild::List { rest, .. } => rest.next(),
            Rebuild::Dict { rest, key, .. } => {
                let (k, v) = rest.next()?;
                *key = Some(k);
                Some(v)
            }
        }
    }

    fn push(&mut self, v: Value) {
        match self {
            Rebuild::List { out, .. } => out.push(v),
            Rebuild::Dict { key, out, .. } => {
                if let Some(k) = key.take() {
                    out.insert(k, v);
                }
            }
        }
    }

    fn finish(self) -> Value {
        match self {
            Rebuild::List { out, tuple, .. } if tuple => Value::tuple(out),
            Rebuild::List { out, .. } => Value::list(out),
            Rebuild::Dict { out, .. } => Value::dict(out),
        }
    }
}

/// `v` converted when that needs no look inside its items (`Ok`), or the
/// container whose items must be converted (`Err`).
fn rebuild(env: &Env, v: Value) -> Result<std::result::Result<Value, Rebuild>> {
    let limit = env.limit();
    let too_large = |n: usize| {
        if n > limit {
            Err(runtime::Error::too_large())
        } else {
            Ok(())
        }
    };
    Ok(match &v {
        Value::Iter(_) => Err(Rebuild::list(runtime::seq::to_vec(env, &v)?, false)),
        Value::List(l) => {
            too_large(l.len())?;
            if l.iter().all(|x| is_final(x, limit)) {
                Ok(v)
            } else {
                Err(Rebuild::list(l.to_vec(), l.is_tuple()))
            }
        }
        Value::Set(s) => {
            too_large(s.len())?;
            if env.options().convert_sets_to_lists {
                Err(Rebuild::list(s.iter().cloned().collect(), false))
            } else {
                Ok(v)
            }
        }
        Value::Dict(d) => {
            too_large(d.len())?;
            if d.values().all(|x| is_final(x, limit)) {
                Ok(v)
            } else {
                let items: Vec<(Value, Value)> =
                    d.iter().map(|(k, x)| (k.clone(), x.clone())).collect();
                Err(Rebuild::Dict {
                    out: runtime::Dict::default(),
                    rest: items.into_iter(),
                    key: None,
                })
            }
        }
        _ => Ok(v),
    })
}

/// True when `v` needs no conversion and is within the limit (a walk
/// with its own stack, as deep as the value).
fn is_final(v: &Value, limit: usize) -> bool {
    let mut todo: smallvec::SmallVec<[&Value; 16]> = smallvec::smallvec![v];
    while let Some(v) = todo.pop() {
        match v {
            Value::Iter(_) | Value::Set(_) => return false,
            Value::List(l) if l.len() > limit => return false,
            Value::Dict(d) if d.len() > limit => return false,
            Value::List(l) => todo.extend(l.iter()),
            Value::Dict(d) => todo.extend(d.values()),
            _ => {}
        }
    }
    true
}
