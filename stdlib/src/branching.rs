//! `yaql/standard_library/branching.py`: `switch`, `coalesce`,
//! `selectCase`, `selectAllCases`, `examine` and `switchCase`. Every
//! argument is lazy: a branch is evaluated only when reached.

use runtime::registry::{no_matching, p, var, Args, Cx, Form, Registry, Ty};
use runtime::{Closure, Env, Result, Value};
use std::sync::Arc;

use crate::util::force;

/// `switch(*args)` (`branching.switch`): the value of the first mapping
/// rule whose condition is true; null when none is.
///
/// Matches yaql `branching.switch` (`switch`). Conditions and values are
/// evaluated lazily; every argument must be a `condition => value` rule.
///
/// ```yaql
/// # data: 50
/// switch($ < 10 => 'small', $ < 100 => 'medium', true => 1 / 0)
/// # => "medium"
/// switch(false => 1)
/// # => null
/// switch(1)
/// # error: NoMatchingFunctionException
/// ```
fn switch(cx: &Cx, a: Args) -> Result<Value> {
    // Every argument must be a mapping rule (`yaqltypes.MappingRule`).
    if a.rest.iter().any(|r| !matches!(r, Value::Pair(_))) {
        return Err(no_matching("switch", Form::Function));
    }
    for rule in &a.rest {
        if let Value::Pair(pr) = rule {
            if force(cx, &pr.0)?.truthy() {
                return force(cx, &pr.1);
            }
        }
    }
    Ok(Value::Null)
}

/// `coalesce(*args)` (`branching.coalesce`): the first non-null argument.
///
/// Matches yaql `branching.coalesce` (`coalesce`). Arguments after the
/// first non-null one are not evaluated.
///
/// ```yaql
/// coalesce(null, 2, 1 / 0)
/// # => 2
/// coalesce(null, false)
/// # => false
/// coalesce()
/// # => null
/// ```
fn coalesce(cx: &Cx, a: Args) -> Result<Value> {
    for f in &a.rest {
        let v = cx.call(f, &[])?;
        if !v.is_null() {
            return Ok(v);
        }
    }
    Ok(Value::Null)
}

/// `selectCase(*args)` (`branching.select_case`): index of the first true
/// predicate, or the number of predicates.
///
/// Matches yaql `branching.select_case` (`selectCase`). Predicates after
/// the first true one are not evaluated.
///
/// ```yaql
/// # data: 0
/// selectCase($ > 1, true, 1 / 0)
/// # => 1
/// selectCase(false, null)
/// # => 2
/// ```
fn select_case(cx: &Cx, a: Args) -> Result<Value> {
    for (i, f) in a.rest.iter().enumerate() {
        if cx.call(f, &[])?.truthy() {
            return Ok(Value::Int(i as i64));
        }
    }
    Ok(Value::Int(a.rest.len() as i64))
}

fn call0(env: &Env, f: &Value) -> Result<Value> {
    match f {
        Value::Lambda(c) => Closure::call(c, env, &[]),
        other => Ok(other.clone()),
    }
}

/// `selectAllCases(*args)` (`branching.select_all_cases`): a lazy sequence
/// of the indexes of the true predicates.
///
/// Matches yaql `branching.select_all_cases` (`selectAllCases`).
///
/// ```yaql
/// # data: 7
/// selectAllCases($ < 10, $ = 0, $ > 5)
/// # => [0, 2]
/// selectAllCases(false)
/// # => []
/// ```
fn select_all_cases(cx: &Cx, a: Args) -> Result<Value> {
    let env = cx.env.clone();
    let preds = Arc::new(a.rest);
    let mut i = 0usize;
    Ok(Value::iter(std::iter::from_fn(move || {
        while i < preds.len() {
            let k = i;
            i += 1;
            match call0(&env, &preds[k]) {
                Ok(v) if v.truthy() => return Some(Ok(Value::Int(k as i64))),
                Ok(_) => {}
                Err(e) => {
                    i = preds.len();
                    return Some(Err(e));
                }
            }
        }
        None
    })))
}

/// `examine(*args)` (`branching.examine`): a lazy sequence of the
/// predicates' truth values.
///
/// Matches yaql `branching.examine` (`examine`).
///
/// ```yaql
/// examine(1, null, [], 'x')
/// # => [true, false, false, true]
/// ```
fn examine(cx: &Cx, a: Args) -> Result<Value> {
    let env = cx.env.clone();
    let preds = a.rest;
    let mut it = preds.into_iter();
    let mut failed = false;
    Ok(Value::iter(std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let f = it.next()?;
        Some(match call0(&env, &f) {
            Ok(v) => Ok(Value::Bool(v.truthy())),
            Err(e) => {
                failed = true;
                Err(e)
            }
        })
    })))
}

/// `case.switchCase(*args)` (`branching.switch_case`): the `case`-th
/// argument evaluated, the last one when out of range, null without args.
///
/// Matches yaql `branching.switch_case` (`switchCase`, a method on an
/// int; booleans count as 0 and 1).
///
/// ```yaql
/// 1.switchCase('a', 'b', 'c')
/// # => "b"
/// 5.switchCase('a', 'b', 'c')
/// # => "c"
/// # data: -1
/// $.switchCase('a', 'b', 'c')
/// # => "c"
/// true.switchCase('a', 'b', 'c')
/// # => "b"
/// 0.switchCase()
/// # => null
/// ```
fn switch_case(cx: &Cx, a: Args) -> Result<Value> {
    let n = a.rest.len();
    if n == 0 {
        return Ok(Value::Null);
    }
    let case = a.get(0).as_bigint().unwrap_or_default();
    let idx = match num_traits::ToPrimitive::to_usize(&case) {
        Some(i) if i < n => i,
        _ => n - 1,
    };
    cx.call(&a.rest[idx], &[])
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    r.function("switch", vec![var("args", Ty::Pair).lazy()], switch)
        .no_kw();
    r.function(
        "coalesce",
        vec![var("args", Ty::Any).nullable().lazy()],
        coalesce,
    );
    r.function(
        "selectCase",
        vec![var("args", Ty::Any).nullable().lazy()],
        select_case,
    );
    r.function(
        "selectAllCases",
        vec![var("args", Ty::Any).nullable().lazy()],
        select_all_cases,
    );
    r.function(
        "examine",
        vec![var("args", Ty::Any).nullable().lazy()],
        examine,
    );
    r.method(
        "switchCase",
        vec![p("case", Ty::Int), var("args", Ty::Any).nullable().lazy()],
        switch_case,
    );
}

#[cfg(test)]
mod tests {
    use crate::util::show;
    use runtime::Value;

    #[test]
    fn switch_is_lazy() {
        let e = "switch($ < 10 => 1, $ >= 10 and $ < 100 => 2, $ >= 100 => 1 / 0)";
        assert_eq!(show(e, Value::Int(50)), "2");
        assert_eq!(show(e, Value::Int(500)), "!ZeroDivisionError");
        assert_eq!(show("switch(false => 1)", Value::Null), "null");
        assert_eq!(
            show("switch(1)", Value::Null),
            "!NoMatchingFunctionException"
        );
    }

    #[test]
    fn cases() {
        assert_eq!(show("coalesce($, 2, 1 / 0)", Value::Null), "2");
        assert_eq!(show("coalesce()", Value::Null), "null");
        assert_eq!(show("selectCase($ > 1, true, 1 / 0)", Value::Int(0)), "1");
        assert_eq!(show("selectCase(false)", Value::Null), "1");
        assert_eq!(
            show("selectAllCases($ < 10, $ > 5)", Value::Int(7)),
            "[0, 1]"
        );
        assert_eq!(
            show("examine($ < 10, $ > 5)", Value::Int(12)),
            "[false, true]"
        );
        assert_eq!(show("$.switchCase('a', 'b', 'c')", Value::Int(-1)), "\"c\"");
        assert_eq!(show("$.switchCase('a', 'b', 'c')", Value::Int(1)), "\"b\"");
        assert_eq!(show("$.switchCase()", Value::Int(1)), "null");
    }
}
