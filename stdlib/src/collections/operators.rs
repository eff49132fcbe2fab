//! Operators: `+` on lists and dicts, `*` repetition, set comparisons.

use super::common::*;
use runtime::registry::{p, Args, Cx, Registry, Ty};
use runtime::ErrorKind;

use runtime::{Error, Result, Value};

/// `left + right` for iterables (`collections.combine_lists`): tuple
/// concatenation, set union, otherwise a lazy concatenation.
///
/// Matches yaql `collections.combine_lists` (`#operator_+`).
///
/// ```yaql
/// [1, 2] + [3]
/// # => [1, 2, 3]
/// isSet(set(1, 2) + set(2, 3))
/// # => true
/// len(set(1, 2) + set(2, 3))
/// # => 3
/// isList([1, 2] + set(3))
/// # => false
/// [1, 2].select($ * 10) + [3]
/// # => [10, 20, 3]
/// ```
pub(super) fn combine_lists(cx: &Cx, a: Args) -> Result<Value> {
    match (a.get(0), a.get(1)) {
        (Value::List(l), Value::List(r)) => {
            limit_len(cx, l.len())?;
            limit_len(cx, r.len())?;
            let mut v = Vec::with_capacity(l.len() + r.len());
            v.extend(l.iter().cloned());
            v.extend(r.iter().cloned());
            Ok(Value::list(v))
        }
        (Value::Set(l), Value::Set(r)) => {
            limit_len(cx, l.len())?;
            limit_len(cx, r.len())?;
            let mut s = (**l).clone();
            s.extend(r.iter().cloned());
            Ok(Value::set(s))
        }
        (l, r) => {
            let x = cx.iter(l)?;
            let y = cx.iter(r)?;
            Ok(Value::iter(x.chain(y)))
        }
    }
}

/// `left + right` for dicts (`collections.combine_dicts`): `left` updated
/// with `right`.
///
/// Matches yaql `collections.combine_dicts` (`#operator_+`).
///
/// ```yaql
/// {a => 1, b => 2} + {b => 3, c => 4}
/// # => {"a": 1, "b": 3, "c": 4}
/// ```
pub(super) fn combine_dicts(_: &Cx, a: Args) -> Result<Value> {
    let mut d = as_dict(a.get(0)).clone();
    for (k, v) in as_dict(a.get(1)) {
        d.insert(k.clone(), v.clone());
    }
    Ok(Value::dict(d))
}

/// Python's `sequence * count`.
fn repeat(seq: &Value, count: &Value) -> Result<Value> {
    let Value::List(l) = seq else {
        return Err(Error::type_("not a sequence"));
    };
    if let Value::BigInt(_) = count {
        return Err(Error::new(
            ErrorKind::OverflowError,
            "cannot fit 'int' into an index-sized integer",
        ));
    }
    let n = ival(count).max(0) as usize;
    if l.is_empty() {
        return Ok(Value::list(Vec::new()));
    }
    if l.len().saturating_mul(n) > 2_000_000 {
        return Err(Error::new(
            ErrorKind::MemoryQuotaExceededException,
            "Expression consumed too much memory",
        ));
    }
    let mut v = Vec::with_capacity(l.len() * n);
    for _ in 0..n {
        v.extend(l.iter().cloned());
    }
    Ok(Value::list(v))
}

/// `sequence * int` (`collections.list_by_int`).
///
/// Matches yaql `collections.list_by_int` (`#operator_*`): Python
/// repetition, so a count below one gives an empty list.
///
/// ```yaql
/// [1, 2] * 2
/// # => [1, 2, 1, 2]
/// [1] * -3
/// # => []
/// [1, 2].select($) * 2
/// # error: NoMatchingFunctionException
/// ```
pub(super) fn list_by_int(_: &Cx, a: Args) -> Result<Value> {
    repeat(a.get(0), a.get(1))
}

/// `int * sequence` (`collections.int_by_list`).
///
/// Matches yaql `collections.int_by_list` (`#operator_*`).
///
/// ```yaql
/// 3 * [1, 2]
/// # => [1, 2, 1, 2, 1, 2]
/// 0 * [1]
/// # => []
/// ```
pub(super) fn int_by_list(_: &Cx, a: Args) -> Result<Value> {
    repeat(a.get(1), a.get(0))
}

/// `left < right` for sets (`collections.set_lt`): proper subset.
///
/// Matches yaql `collections.set_lt` (`#operator_<`).
///
/// ```yaql
/// set(1, 2) < set(1, 2, 3)
/// # => true
/// set(1, 2) < set(1, 2)
/// # => false
/// ```
pub(super) fn set_lt(_: &Cx, a: Args) -> Result<Value> {
    let (l, r) = (as_set(a.get(0)), as_set(a.get(1)));
    Ok(Value::Bool(l.len() < r.len() && l.is_subset(r)))
}

/// `left <= right` for sets (`collections.set_lte`): subset.
///
/// Matches yaql `collections.set_lte` (`#operator_<=`).
///
/// ```yaql
/// set(1, 2) <= set(1, 2)
/// # => true
/// set(1, 2) <= set(1, 3)
/// # => false
/// ```
pub(super) fn set_lte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(as_set(a.get(0)).is_subset(as_set(a.get(1)))))
}

/// `left > right` for sets (`collections.set_gt`): proper superset.
///
/// Matches yaql `collections.set_gt` (`#operator_>`).
///
/// ```yaql
/// set(1, 2, 3) > set(1, 2)
/// # => true
/// set(1, 2) > set(1, 2)
/// # => false
/// ```
pub(super) fn set_gt(_: &Cx, a: Args) -> Result<Value> {
    let (l, r) = (as_set(a.get(0)), as_set(a.get(1)));
    Ok(Value::Bool(l.len() > r.len() && r.is_subset(l)))
}

/// `left >= right` for sets (`collections.set_gte`): superset.
///
/// Matches yaql `collections.set_gte` (`#operator_>=`).
///
/// ```yaql
/// set(1, 2) >= set(1, 2)
/// # => true
/// set(1, 2) >= set(3)
/// # => false
/// ```
pub(super) fn set_gte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(as_set(a.get(1)).is_subset(as_set(a.get(0)))))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let sets = || vec![p("left", Ty::Set), p("right", Ty::Set)];
    r.function(
        "#operator_+",
        vec![p("left", Ty::Mapping), p("right", Ty::Mapping)],
        combine_dicts,
    );
    r.function(
        "#operator_+",
        vec![p("left", Ty::Iterable), p("right", Ty::Iterable)],
        combine_lists,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Sequence), p("right", Ty::Int)],
        list_by_int,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Int), p("right", Ty::Sequence)],
        int_by_list,
    );
    r.function("#operator_<", sets(), set_lt);
    r.function("#operator_<=", sets(), set_lte);
    r.function("#operator_>", sets(), set_gt);
    r.function("#operator_>=", sets(), set_gte);
}
