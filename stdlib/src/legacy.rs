//! `yaql/standard_library/legacy.py`: the yaql 0.2 compatibility functions,
//! registered in legacy mode only, in front of the standard library (their
//! overloads win when they match, as the reference's child context does).
//!
//! In legacy mode `=>` is a binary operator building a tuple (a list here),
//! so `dict(a => 1)`, `switch(cond => value)` and `x.as(expr => name)` take
//! tuples rather than mapping rules.

use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{lazy, p, var, Args, Cx, Registry, Ty};
use runtime::{Dict, Error, Result, Value};

/// `#operator_=>(left, right)` (`build_tuple`): `left => right` is the tuple
/// `(left, right)`. The left side is evaluated after the right one, as the
/// reference evaluates its unevaluated-expression parameter. Extra
/// positional arguments extend the tuple: a compiler that flattens an
/// unparenthesized chain `a => b => c` into `#operator_=>(a, b, c)` gets the
/// reference's `(a, b, c)`.
///
/// Matches yaql `legacy.build_tuple` (`#operator_=>`, legacy mode).
///
/// ```yaql
/// # legacy
/// 1 => 2
/// # => [1, 2]
/// # legacy
/// 1 => 2 => 3
/// # => [1, 2, 3]
/// # legacy
/// (1 => 2) => 3
/// # => [[1, 2], 3]
/// ```
fn build_tuple(cx: &Cx, a: Args) -> Result<Value> {
    let left = cx.call(a.get(0), &[])?;
    let mut out = Vec::with_capacity(2 + a.rest.len());
    out.push(left);
    out.push(a.get(1).clone());
    out.extend(a.rest.iter().cloned());
    Ok(Value::tuple(out))
}

fn dict_from(items: &[Value]) -> Result<Value> {
    let mut d = Dict::default();
    for t in items {
        let Value::List(kv) = t else {
            return Err(Error::type_(format!(
                "cannot convert dictionary update sequence element to a sequence: {}",
                t.type_name()
            )));
        };
        match kv.len() {
            2 => {
                d.insert(kv[0].clone(), kv[1].clone());
            }
            n if n > 2 => {
                return Err(Error::value("too many values to unpack (expected 2)"));
            }
            n => {
                return Err(Error::value(format!(
                    "not enough values to unpack (expected 2, got {n})"
                )));
            }
        }
    }
    Ok(Value::dict(d))
}

/// `dict(*tuples)` / `#map(*tuples)` (`dict_`): a dict from key-value
/// tuples.
///
/// Matches yaql `legacy.dict_` (`dict` and `#map`, i.e. `{k => v}`, legacy
/// mode).
///
/// ```yaql
/// # legacy
/// dict(1 => 2, a => b)
/// # => {"$dict": [[1, 2], ["a", "b"]]}
/// # legacy
/// {a => 1, b => 2}
/// # => {"a": 1, "b": 2}
/// # legacy
/// dict()
/// # => {}
/// # legacy
/// dict(tuple(1, 2, 3))
/// # error: ValueError
/// ```
fn dict_(_: &Cx, a: Args) -> Result<Value> {
    dict_from(&a.rest)
}

/// `#indexer(collection, indexExpression)` (`indexer`): on a sequence, an
/// index expression evaluating to an integer indexes it; otherwise the
/// expression is a predicate filtering the collection.
///
/// Matches yaql `legacy.indexer` (`#indexer`, legacy mode).
///
/// ```yaql
/// # legacy
/// # data: 2
/// list(1, 2, 3)[$]
/// # => 3
/// # legacy
/// list(1, 2, 3)[$ > 1]
/// # => [2, 3]
/// # legacy
/// list(1, 2, 3)[5]
/// # error: IndexError
/// ```
fn indexer(cx: &Cx, a: Args) -> Result<Value> {
    let coll = a.get(0).clone();
    let f = a.get(1).clone();
    if let Value::List(l) = &coll {
        let idx = cx.call(&f, &[])?;
        if let Value::Int(i) = idx {
            let n = l.len() as i64;
            let j = if i < 0 { i + n } else { i };
            if j < 0 || j >= n {
                return Err(Error::index("tuple index out of range"));
            }
            return Ok(l[j as usize].clone());
        }
        if let Value::BigInt(_) = idx {
            return Err(Error::index("cannot fit 'int' into an index-sized integer"));
        }
    }
    let it = cx.iter(&coll)?;
    let env = cx.env.clone();
    let Value::Lambda(c) = &f else {
        return Ok(Value::iter(it));
    };
    let c = c.clone();
    Ok(Value::iter(it.filter_map(move |x| match x {
        Ok(v) => match c.call(&env, std::slice::from_ref(&v)) {
            Ok(r) if r.truthy() => Some(Ok(v)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        },
        Err(e) => Some(Err(e)),
    })))
}

/// `#operator_.(dict, key)` with a bare keyword (`dict_keyword_access`):
/// the key's value, null when missing. Registered as `#attr`, which
/// `obj.name` compiles to.
///
/// Matches yaql `legacy.dict_keyword_access` (`#operator_.` with a
/// keyword, legacy mode).
///
/// ```yaql
/// # legacy
/// # data: {"A": 12, "_e": 999}
/// $.A
/// # => 12
/// # legacy
/// # data: {"A": 12}
/// $.b
/// # => null
/// ```
fn dict_keyword_access(_: &Cx, a: Args) -> Result<Value> {
    match a.get(0) {
        Value::Dict(d) => Ok(d.get(a.get(1)).cloned().unwrap_or(Value::Null)),
        _ => Ok(Value::Null),
    }
}

/// `#operator_.(receiver, expr)` for a context receiver
/// (`op_dot_context`): evaluates `expr` in that context with the value
/// `as()` was called on as `$`.
///
/// Matches yaql `legacy.op_dot_context` (`#operator_.` on a context,
/// legacy mode).
///
/// ```yaql
/// # legacy
/// [1, 2].as(sum($) => a).select($ * $a)
/// # => [3, 6]
/// # legacy
/// tuple(1, 2).as(len($) => n).($n + len($))
/// # => 4
/// ```
fn op_dot_context(cx: &Cx, a: Args) -> Result<Value> {
    let (Value::Context(c), Value::Lambda(f)) = (a.get(0), a.get(1)) else {
        return Err(Error::type_("context expected"));
    };
    let recv = c.var("0");
    f.call_in(cx.env, c, &[recv])
}

/// `receiver.as(*mappings)` (`as_`): a context where each `expr => name`
/// mapping, evaluated with `$` = receiver, sets `$name`, and `$0` is the
/// receiver; continue in it with `.` (method calls on it see the receiver)
/// or `->`.
///
/// Matches yaql `legacy.as_` (`as`, legacy mode).
///
/// ```yaql
/// # legacy
/// [1, 2].as(sum($) => a) -> $a
/// # => 3
/// # legacy
/// [1, 2].as(sum($) => a).select($ * $a)
/// # => [3, 6]
/// ```
fn as_(cx: &Cx, a: Args) -> Result<Value> {
    let recv = a.get(0).clone();
    // The receiver is `$0`; it is also the frame's `$1`, which the VM's
    // method-call-on-context path takes as the receiver.
    let mut f = Frame::child(cx.ctx, std::slice::from_ref(&recv));
    for m in &a.rest {
        // Each mapping sees the names set by the previous ones.
        let ctx = Arc::new(Frame {
            args: f.args.clone(),
            vars: f.vars.clone(),
            funcs: f.funcs.clone(),
            has_funcs: f.has_funcs,
            parent: f.parent.clone(),
            scope: f.scope.clone(),
        });
        let t = match m {
            Value::Lambda(c) => c.call_in(cx.env, &ctx, std::slice::from_ref(&recv))?,
            other => other.clone(),
        };
        match pair_of(cx, &t, &recv)? {
            Some((value, name)) => {
                let name = match &name {
                    Value::Str(s) => s.as_str().trim_start_matches('$').to_string(),
                    other => runtime::pyrepr::to_str(other),
                };
                f.vars.push((name.into(), value));
            }
            None if matches!(&t, Value::List(l) if l.is_tuple()) => {
                return Err(Error::value("as() tuples must be of size 2"))
            }
            None => return Err(Error::value("as() must have tuple parameters")),
        }
    }
    f.vars.push(("0".into(), recv));
    Ok(Value::Context(Arc::new(f)))
}

/// The two sides of a `k => v` argument: a yaql 0.2 tuple, or the
/// mapping rule a yaql 3 grammar makes of it (a yaql 3 engine over the
/// legacy library, as the reference's legacy context allows).
/// The rule's sides are evaluated with `$` = `arg`, as the reference's
/// lambda parameters evaluate a mapping rule into a `MappingRule` of
/// values.
fn pair_of(cx: &Cx, v: &Value, arg: &Value) -> Result<Option<(Value, Value)>> {
    let force = |x: &Value| match x {
        Value::Lambda(c) if c.code.is_thunk() => c.call(cx.env, std::slice::from_ref(arg)),
        other => Ok(other.clone()),
    };
    Ok(match v {
        Value::List(l) if l.is_tuple() && l.len() == 2 => Some((l[0].clone(), l[1].clone())),
        Value::Pair(p) => Some((force(&p.0)?, force(&p.1)?)),
        _ => None,
    })
}

/// `range(start, stop)` (`range_`): `[start, stop)`, or an endless count
/// from `start` when `stop` is null.
///
/// Matches yaql `legacy.range_` (`range`, legacy mode).
///
/// ```yaql
/// # legacy
/// range(1, 4)
/// # => [1, 2, 3]
/// # legacy
/// 2.range().take(4)
/// # => [2, 3, 4, 5]
/// ```
fn range_(cx: &Cx, a: Args) -> Result<Value> {
    let start = a.int(0)?;
    if a.get(1).is_null() {
        return Ok(Value::iter((start..).map(|i| Ok(Value::Int(i)))));
    }
    let stop = a.int(1)?;
    let len = stop.saturating_sub(start).max(0) as u64;
    // A Python range is a sequence: materialise it unless it is huge.
    if len as usize <= cx.env.limit().max(100_000) {
        return Ok(Value::list((start..stop).map(Value::Int).collect()));
    }
    Ok(Value::iter((start..stop).map(|i| Ok(Value::Int(i)))))
}

/// `value.switch(*conditions)` (`switch`): the value of the first
/// `condition => value` tuple whose condition (evaluated with `$` = value)
/// is true; null when none is.
///
/// Matches yaql `legacy.switch` (`switch`, legacy mode).
///
/// ```yaql
/// # legacy
/// # data: 15
/// switch($, $ > 10 => 1, $ <= 10 => -1)
/// # => 1
/// # legacy
/// 5.switch($ > 10 => big)
/// # => null
/// ```
fn switch(cx: &Cx, a: Args) -> Result<Value> {
    let value = a.get(0).clone();
    for c in &a.rest {
        let r = cx.call(c, std::slice::from_ref(&value))?;
        match pair_of(cx, &r, &value)? {
            Some((cond, v)) => {
                if cond.truthy() {
                    return Ok(v);
                }
            }
            None if matches!(&r, Value::List(l) if l.is_tuple()) => {
                return Err(Error::value("switch() tuples must be of size 2"))
            }
            None => {
                return Err(Error::value(
                    "switch() must have tuple or mapping parameters",
                ))
            }
        }
    }
    Ok(Value::Null)
}

/// `collection.toList()` (`to_list`).
///
/// Matches yaql `legacy.to_list` (`toList`, legacy mode).
///
/// ```yaql
/// # legacy
/// [1, 2].select($ * 2).toList()
/// # => [2, 4]
/// ```
fn to_list(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(cx.to_vec(a.get(0))?))
}

/// `tuple(*args)` (`tuple_`).
///
/// Matches yaql `legacy.tuple_` (`tuple`, legacy mode).
///
/// ```yaql
/// # legacy
/// tuple(1, a, null)
/// # => [1, "a", null]
/// # legacy
/// tuple()
/// # => []
/// ```
fn tuple_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::tuple(a.rest))
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    r.method(
        "as",
        vec![
            p("receiver", Ty::Any).nullable(),
            var("mappings", Ty::Any).nullable().lazy(),
        ],
        as_,
    )
    .no_kw();
    r.extension("dict", vec![var("tuples", Ty::Sequence)], dict_)
        .no_kw();
    r.function(
        "#indexer",
        vec![p("collection", Ty::Iterable), lazy("indexExpression")],
        indexer,
    );
    r.extension("#map", vec![var("tuples", Ty::Sequence)], dict_)
        .no_kw();
    r.function(
        "#attr",
        vec![p("dict", Ty::Mapping), p("key", Ty::Str)],
        dict_keyword_access,
    );
    r.function(
        "#operator_.",
        vec![p("receiver", Ty::Context), lazy("expr")],
        op_dot_context,
    );
    r.function(
        "#operator_=>",
        vec![
            lazy("left"),
            p("right", Ty::Any).nullable(),
            var("rest", Ty::Any).nullable(),
        ],
        build_tuple,
    );
    r.extension(
        "range",
        vec![p("start", Ty::Int), p("stop", Ty::Int).opt()],
        range_,
    );
    r.extension(
        "switch",
        vec![
            p("value", Ty::Any).nullable(),
            var("conditions", Ty::Any).nullable().lazy(),
        ],
        switch,
    )
    .no_kw();
    r.method("toList", vec![p("collection", Ty::Iterable)], to_list);
    r.function("tuple", vec![var("args", Ty::Any).nullable()], tuple_);
}

#[cfg(test)]
mod tests {
    use runtime::Value;

    fn run(expr: &str, data: Value) -> Result<String, String> {
        let reg = crate::registry(true);
        let opts = compiler::CompileOptions {
            legacy: true,
            ..Default::default()
        };
        let prog = compiler::compile(expr, &reg, opts).map_err(|e| e.to_string())?;
        let env = crate::env(runtime::Options {
            legacy: true,
            ..Default::default()
        });
        let v = prog.eval(&env, data).map_err(|e| e.kind().to_string())?;
        let v = crate::finalize(&env, v).map_err(|e| e.kind().to_string())?;
        Ok(runtime::json::to_tagged_string(&v))
    }

    fn ok(expr: &str) -> String {
        run(expr, Value::Null).unwrap()
    }

    /// The value of `expr` (legacy), finalized as a result is.
    fn value(expr: &str) -> Value {
        let reg = crate::registry(true);
        let opts = compiler::CompileOptions {
            legacy: true,
            ..Default::default()
        };
        let prog = compiler::compile(expr, &reg, opts).unwrap();
        let env = crate::env(runtime::Options::test_suite(true));
        let v = prog.eval(&env, Value::Null).unwrap();
        crate::finalize(&env, v).unwrap()
    }

    fn is_tuple(v: &Value) -> bool {
        matches!(v, Value::List(l) if l.is_tuple())
    }

    /// `=>` and `tuple()` build tuples (which an engine keeping tuples
    /// returns as such), nested ones too; a list literal, `list()` and a
    /// query's result are lists, and a tuple equals the list of its items.
    #[test]
    fn tuples_are_tagged() {
        for e in [
            "1 => 2",
            "1 => 2 => 3",
            "tuple(1, 2)",
            "tuple()",
            "tuple(null)",
        ] {
            assert!(is_tuple(&value(e)), "{e}");
        }
        let v = value("(1 => 2) => 3");
        let Value::List(l) = &v else { panic!() };
        assert!(l.is_tuple() && is_tuple(&l[0]) && l.len() == 2);
        let v = value("1 => (2 => 3)");
        let Value::List(l) = &v else { panic!() };
        assert!(l.is_tuple() && is_tuple(&l[1]) && l[0] == Value::Int(1));
        // A tuple holding a lazy sequence is rebuilt as a tuple.
        let v = value("tuple([1, 2].select($ * 2), 3)");
        let Value::List(l) = &v else { panic!() };
        assert!(l.is_tuple());
        assert_eq!(runtime::json::to_tagged_string(&v), "[[2, 4], 3]");
        for e in [
            "[1, 2]",
            "list(1, 2)",
            "tuple(1, 2).select($)",
            "tuple(1, 2) + [3]",
        ] {
            assert!(!is_tuple(&value(e)), "{e}");
        }
        assert_eq!(value("tuple(1, 2) = [1, 2]"), Value::Bool(true));
        assert_eq!(value("len(1 => 2 => 3)"), Value::Int(3));
        assert_eq!(value("(1 => 2)[1]"), Value::Int(2));
    }

    /// `switch` and `as` take tuples (or mapping rules), not lists, as the
    /// reference's `isinstance(res, tuple)` does.
    #[test]
    fn switch_and_as_take_tuples_only() {
        assert_eq!(value("5.switch(tuple(true, 1))"), Value::Int(1));
        assert_eq!(
            run("5.switch([true, 1])", Value::Null).unwrap_err(),
            "ValueError"
        );
        assert_eq!(
            run("5.switch(1 => 2 => 3)", Value::Null).unwrap_err(),
            "ValueError"
        );
        assert_eq!(run("1.as([2, a])", Value::Null).unwrap_err(), "ValueError");
        assert_eq!(value("1.as(tuple(2, a)) -> $a"), Value::Int(2));
    }

    #[test]
    fn tuples_and_dicts() {
        assert_eq!(ok("1 => 2"), "[1, 2]");
        assert_eq!(ok("null => \"a b\""), "[null, \"a b\"]");
        assert_eq!(ok("(1 => 2) => 3"), "[[1, 2], 3]");
        assert_eq!(ok("tuple()"), "[]");
        assert_eq!(
            ok("dict(1 => 2, a => b, null => null)"),
            r#"{"$dict": [[1, 2], ["a", "b"], [null, null]]}"#
        );
        assert_eq!(ok("{a => 1}"), r#"{"a": 1}"#);
    }

    #[test]
    fn switch_range_indexer() {
        assert_eq!(
            run("switch($, $ > 10 => 1, $ <= 10 => -1)", Value::Int(5)).unwrap(),
            "-1"
        );
        assert_eq!(ok("range(1, 4)"), "[1, 2, 3]");
        assert_eq!(run("tuple(1, 2, 3)[$]", Value::Int(2)).unwrap(), "3");
        assert_eq!(ok("tuple(1, 2, 3)[$ > 1]"), "[2, 3]");
    }

    #[test]
    fn keyword_access_and_as() {
        let d = runtime::json::from_tagged_str(r#"{"A": 12}"#).unwrap();
        assert_eq!(run("$.A", d.clone()).unwrap(), "12");
        assert_eq!(run("$.b", d).unwrap(), "null");
        assert_eq!(ok("tuple(1, 2).as(len($) => n).($n + len($))"), "4");
    }
}
