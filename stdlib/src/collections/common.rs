//! Helpers shared by the collection functions: integer arguments, lengths
//! within limits, sets and dicts of arguments, membership.

use std::collections::VecDeque;
use std::sync::Arc;

use num_bigint::Sign;
use runtime::registry::Cx;
use runtime::seq::{iterate_unlimited, SeqIter};
use runtime::{pyrepr, Dict, Error, Result, Set, Value};

// ---------------------------------------------------------------------------
// helpers

/// An `int` parameter as a wide integer; big integers saturate far beyond
/// any collection index, which keeps the reference's comparisons exact.
pub(super) fn ival(v: &Value) -> i128 {
    match v {
        Value::Int(i) => *i as i128,
        Value::Bool(b) => *b as i128,
        Value::BigInt(b) => {
            if b.sign() == Sign::Minus {
                -(1i128 << 100)
            } else {
                1i128 << 100
            }
        }
        _ => 0,
    }
}

/// The reference's `count >= 0 and position <= i < position + count or
/// count < 0 and i >= position` (a negative count reaches the end).
#[allow(clippy::nonminimal_bool)]
pub(super) fn in_window(i: i128, pos: i128, count: i128) -> bool {
    (count >= 0 && pos <= i && i < pos + count) || (count < 0 && i >= pos)
}

pub(super) fn too_large() -> Error {
    Error::too_large()
}

pub(super) fn limit_len(cx: &Cx, n: usize) -> Result<()> {
    if n > cx.env.limit() {
        Err(too_large())
    } else {
        Ok(())
    }
}

/// Python `is_iterable`: lists, sets and lazy sequences (not strings/dicts).
pub(super) fn not_set_iterable(v: &Value) -> bool {
    matches!(v, Value::List(_) | Value::Iter(_))
}

/// Any value except a mapping rule (plain parameters of the reference do
/// not take `k => v` arguments).
pub(super) fn not_pair(v: &Value) -> bool {
    !matches!(v, Value::Pair(_))
}

pub(super) fn pair_of(v: &Value) -> (Value, Value) {
    match v {
        Value::Pair(pr) => (pr.0.clone(), pr.1.clone()),
        other => (other.clone(), Value::Null),
    }
}

pub(super) fn key_error(k: &Value) -> Error {
    Error::key(pyrepr::repr(k))
}

/// Pushes the elements of `it` into `q`, stopping after the first error
/// (a too-long lazy sequence keeps failing on every pull).
pub(super) fn drain_into(it: SeqIter, q: &mut VecDeque<Result<Value>>) {
    for x in it {
        let err = x.is_err();
        q.push_back(x);
        if err {
            break;
        }
    }
}

pub(super) fn set_of(cx: &Cx, v: &Value) -> Result<Arc<Set>> {
    match v {
        Value::Set(s) => Ok(s.clone()),
        other => {
            let mut s = Set::default();
            for x in cx.iter(other)? {
                s.insert(x?);
            }
            Ok(runtime::value::set_arc(s))
        }
    }
}

pub(super) fn as_set(v: &Value) -> &Set {
    // An empty set, made once and never changed: a constant, not state
    // (nothing of a run is kept in it; every thread only reads it).
    static EMPTY: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
    match v {
        Value::Set(s) => s,
        _ => EMPTY.get_or_init(Set::default),
    }
}

pub(super) fn as_dict(v: &Value) -> &Dict {
    // An empty dict, made once and never changed: a constant, not state
    // (nothing of a run is kept in it; every thread only reads it).
    static EMPTY: std::sync::OnceLock<Dict> = std::sync::OnceLock::new();
    match v {
        Value::Dict(d) => d,
        _ => EMPTY.get_or_init(Dict::default),
    }
}

/// Flattens lazy sequences (Python iterators) among `args`, recursively,
/// as `list_`/`set_`'s inner `rec` does; the result passes through an
/// iterable parameter, hence the iterator limit on its length.
pub(super) fn flatten_iterators(cx: &Cx, args: &[Value]) -> Result<Vec<Value>> {
    fn rec(v: &Value, out: &mut Vec<Value>, limit: usize) -> Result<()> {
        if let Value::Iter(_) = v {
            for x in iterate_unlimited(v)? {
                rec(&x?, out, limit)?;
            }
        } else {
            if out.len() >= limit {
                return Err(too_large());
            }
            out.push(v.clone());
        }
        Ok(())
    }
    let limit = cx.env.limit();
    let mut out = Vec::new();
    for a in args {
        rec(a, &mut out, limit)?;
    }
    Ok(out)
}

/// `value in collection` for an iterable parameter.
pub(super) fn contains_in(cx: &Cx, coll: &Value, v: &Value) -> Result<bool> {
    let it = cx.iter(coll)?;
    if let Value::Set(s) = coll {
        return Ok(s.contains(v));
    }
    for x in it {
        if x? == *v {
            return Ok(true);
        }
    }
    Ok(false)
}

// The functions, by concern, in files of their own.
