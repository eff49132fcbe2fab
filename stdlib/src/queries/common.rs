//! Helpers shared by the query functions: the `NoValue` marker, generators,
//! delegates and comparisons, integer arguments, lengths and iteration
//! within the limit.

use runtime::ErrorKind;
use std::sync::{Arc, OnceLock};

use runtime::registry::{ArgIn, Args, Cx, Form};
use runtime::seq::iterate_unlimited;
use runtime::value::num_cmp;
use runtime::{Closure, Env, Error, Frame, Invoke, Result, Value};

/// The code of the `NoValue` marker (`utils.NO_VALUE`).
pub(super) struct NoValueCode;

impl Invoke for NoValueCode {
    fn invoke(
        &self,
        _: &Env,
        _: &Arc<Frame>,
        _: &[Value],
        _: &[(Arc<str>, Value)],
    ) -> Result<Value> {
        Ok(Value::Null)
    }
    fn describe(&self) -> String {
        "NoValue".into()
    }
}

// The `NoValue` marker, made once and never changed: a constant, not
// state (nothing of a run is kept in it; every thread only reads it, and
// it is compared by identity).
static NOVALUE: OnceLock<Value> = OnceLock::new();

/// The `NoValue` marker used as the default of optional parameters whose
/// absence differs from an explicit `null` (a unique lambda value, so that it
/// also works as the default of lazy parameters).
pub(super) fn novalue() -> Value {
    NOVALUE
        .get_or_init(|| {
            Value::Lambda(Arc::new(Closure {
                code: Arc::new(NoValueCode),
                ctx: Frame::root(Value::Null),
            }))
        })
        .clone()
}

/// True when a parameter was not given (holds the `NoValue` marker).
pub(super) fn is_novalue(v: &Value) -> bool {
    match (v, NOVALUE.get()) {
        (Value::Lambda(a), Some(Value::Lambda(b))) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// A lambda parameter, or `None` when not given.
pub(super) fn opt_fn(v: &Value) -> Option<Value> {
    if is_novalue(v) {
        None
    } else {
        Some(v.clone())
    }
}

/// Makes a lazy sequence that stops after the first error, as a Python
/// generator does once it raised.
pub(super) fn gen<I>(it: I) -> Value
where
    I: Iterator<Item = Result<Value>> + Send + 'static,
{
    let mut it = it;
    let mut done = false;
    Value::iter(std::iter::from_fn(move || {
        if done {
            return None;
        }
        let r = it.next();
        if !matches!(r, Some(Ok(_))) {
            done = true;
        }
        r
    }))
}

pub(super) fn stop_iteration(msg: &str) -> Error {
    Error::new(ErrorKind::StopIteration, msg.to_string())
}

/// Calls a registered function as `name(args)` (a yaql `Delegate`).
pub(super) fn delegate(env: &Env, ctx: &Arc<Frame>, name: &str, args: &[Value]) -> Result<Value> {
    let cx = Cx::new(env, ctx);
    let pos: Vec<ArgIn> = args.iter().cloned().map(ArgIn::Val).collect();
    env.registry()
        .call(&cx, name, None, Form::Function, &pos, &[])
}

/// `#operator_<` / `#operator_>` through the registry (as the reference's
/// delegates do); falls back to the standard semantics when the operator is
/// not registered.
pub(super) fn compare_op(
    env: &Env,
    ctx: &Arc<Frame>,
    less: bool,
    a: &Value,
    b: &Value,
) -> Result<bool> {
    let name = if less { "#operator_<" } else { "#operator_>" };
    // Fast path for the standard number and string operators.
    let want = if less {
        std::cmp::Ordering::Less
    } else {
        std::cmp::Ordering::Greater
    };
    match (a, b) {
        (Value::Str(p), Value::Str(q)) => return Ok(p.as_str().cmp(q.as_str()) == want),
        _ if a.is_number() && b.is_number() => return Ok(num_cmp(a, b) == Some(want)),
        _ => {}
    }
    if env.registry().get(name).is_some() {
        return Ok(delegate(env, ctx, name, &[a.clone(), b.clone()])?.truthy());
    }
    let (x, y) = if less { (a, b) } else { (b, a) };
    // x < y
    use std::cmp::Ordering::Less;
    Ok(match (x, y) {
        (Value::Null, Value::Null) => false,
        (Value::Null, _) => true,
        (_, Value::Null) => false,
        (Value::Str(p), Value::Str(q)) => p < q,
        (Value::DateTime(p), Value::DateTime(q)) => p.micros < q.micros,
        (Value::TimeSpan(p), Value::TimeSpan(q)) => p < q,
        _ if x.is_number() && y.is_number() => num_cmp(x, y) == Some(Less),
        _ => return Err(runtime::registry::no_matching(name, Form::Function)),
    })
}

/// The integer value of an `int` parameter that may be negative.
pub(super) fn int_arg(a: &Args, i: usize) -> Result<i64> {
    a.int(i)
}

/// Python `len()` of a value, when it has one.
pub(super) fn py_len(v: &Value) -> Option<usize> {
    match v {
        Value::List(l) => Some(l.len()),
        Value::Set(s) => Some(s.len()),
        Value::Dict(d) => Some(d.len()),
        Value::Str(s) => Some(s.chars().count()),
        _ => None,
    }
}

/// Iterates any Python iterable: collections, strings (characters) and
/// dictionaries (keys), without the iterator limit.
/// Collects at most the iterator limit's number of elements
/// (CollectionTooLargeException past it).
pub(super) fn collect_limited(
    env: &Env,
    it: impl Iterator<Item = Result<Value>>,
) -> Result<Vec<Value>> {
    let limit = env.limit();
    let mut out = Vec::new();
    for x in it {
        if out.len() >= limit {
            return Err(Error::too_large());
        }
        out.push(x?);
    }
    Ok(out)
}

pub(super) fn py_iter(v: &Value) -> Result<Box<dyn Iterator<Item = Result<Value>> + Send>> {
    Ok(match v {
        Value::Str(s) => {
            let chars: Vec<Value> = s.chars().map(|c| Value::str(c.to_string())).collect();
            Box::new(chars.into_iter().map(Ok))
        }
        Value::Dict(d) => {
            let keys: Vec<Value> = d.keys().cloned().collect();
            Box::new(keys.into_iter().map(Ok))
        }
        other => Box::new(iterate_unlimited(other)?),
    })
}

pub(super) fn islice_count(n: i64) -> Result<usize> {
    if n < 0 {
        return Err(Error::value(
            "Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.",
        ));
    }
    Ok(n as usize)
}
