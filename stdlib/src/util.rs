//! Helpers shared by the library modules.

use runtime::registry::Cx;
use runtime::{Error, Result, Value};

/// Calls a lambda argument with one positional argument.
pub fn call1(cx: &Cx, f: &Value, x: Value) -> Result<Value> {
    cx.call(f, &[x])
}

/// Forces a value that may be a lazily compiled part of a mapping rule.
pub fn force(cx: &Cx, v: &Value) -> Result<Value> {
    runtime::registry::force_val(cx, v)
}

/// Python-style ordering used by `orderBy`, `min`, `max`, `sorted`:
/// numbers with numbers, strings with strings, lists element-wise, null
/// before anything; other mixes are a `TypeError`.
pub fn py_cmp(a: &Value, b: &Value) -> Result<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let numeric = |v: &Value| v.is_number() || matches!(v, Value::Bool(_));
    if numeric(a) && numeric(b) {
        return Ok(runtime::value::num_cmp(a, b).unwrap_or(Ordering::Equal));
    }
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(x.as_str().cmp(y.as_str())),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                if p != q {
                    return py_cmp(p, q);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        (Value::DateTime(x), Value::DateTime(y)) => Ok(x.micros.cmp(&y.micros)),
        (Value::TimeSpan(x), Value::TimeSpan(y)) => Ok(x.cmp(y)),
        (Value::Set(x), Value::Set(y)) => {
            // subset ordering; only used for sorting sets of sets (rare)
            Ok(x.len().cmp(&y.len()))
        }
        _ => Err(Error::type_(format!(
            "'<' not supported between instances of '{}' and '{}'",
            a.type_name(),
            b.type_name()
        ))),
    }
}

/// Evaluates `expr` over `data` with the standard library and default
/// options, as the unit tests of the library modules do: the tagged JSON of
/// the result, or `!Kind` for an error.
#[cfg(test)]
pub(crate) fn show(expr: &str, data: Value) -> String {
    let reg = crate::registry(false);
    let env = crate::env(runtime::Options::default());
    let r = compiler::compile(expr, &reg, Default::default())
        .and_then(|p| p.eval(&env, data))
        .and_then(|v| crate::finalize(&env, v));
    match r {
        Ok(v) => runtime::json::to_tagged_string(&v),
        Err(e) => format!("!{}", e.kind()),
    }
}
