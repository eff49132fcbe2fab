//! `yaql/standard_library/system.py`: contexts (`let`, `with`, `def`,
//! `unpack`, `->`), attribute and method plumbing (`#operator_.`),
//! delegates (`#call`, `lambda`, `call`) and `assert`.

use runtime::ErrorKind;
use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{kw, lazy, p, var, ArgIn, Args, Cx, Form, Registry, Ty};
use runtime::{Error, Result, Value};

/// `let(*args, **kwargs)`: a context with positional values as `$1`.. and
/// keyword values as `$name`; evaluate in it with `->`.
///
/// Matches yaql `system.let` (`let`).
///
/// ```yaql
/// let(3, a => 2) -> $a * $1
/// # => 6
/// let(f => lambda(2 * $)) -> $f(5)
/// # => 10
/// ```
fn let_(cx: &Cx, a: Args) -> Result<Value> {
    let mut f = Frame::child(cx.ctx, &a.rest);
    for (k, v) in a.kw {
        f.vars.push((k, v));
    }
    Ok(Value::Context(Arc::new(f)))
}

/// `with(*args)`: a context with `$1`, `$2`, ... set.
///
/// Matches yaql `system.with_` (`with`).
///
/// ```yaql
/// with(2, 3) -> [$2, $1]
/// # => [3, 2]
/// ```
fn with_(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Context(Arc::new(Frame::child(cx.ctx, &a.rest))))
}

/// `#operator_->(context, expr)`: evaluates `expr` in the context.
///
/// Matches yaql `system.send_context` (`#operator_->`, `left -> right`).
///
/// ```yaql
/// with(1, 2) -> $1 + $2
/// # => 3
/// ```
fn send_context(cx: &Cx, a: Args) -> Result<Value> {
    let (Value::Context(c), Value::Lambda(f)) = (a.get(0), a.get(1)) else {
        return Err(Error::type_("-> needs a context on the left"));
    };
    f.call_in(cx.env, c, &[])
}

/// `unpack(sequence, *names)`: a context with the items as `$1`, `$2`,
/// ... or, given names, as `$name`s (the counts must agree).
///
/// Matches yaql `system.unpack` (`unpack`).
///
/// ```yaql
/// [2, 3].unpack() -> $1 + $2
/// # => 5
/// [2, 3].unpack(a, b) -> $a * $b
/// # => 6
/// [2, 3].unpack(a) -> $a
/// # error: ValueError
/// ```
fn unpack(cx: &Cx, a: Args) -> Result<Value> {
    let items = cx.to_vec(a.get(0))?;
    let mut f = Frame::child(cx.ctx, &[]);
    if a.rest.is_empty() {
        f.args = items.into_iter().collect();
    } else if a.rest.len() == items.len() {
        for (n, v) in a.rest.iter().zip(items) {
            f.vars.push((n.as_str().unwrap_or("").into(), v));
        }
    } else {
        return Err(Error::value(format!(
            "Cannot unpack {} elements into {}",
            items.len(),
            a.rest.len()
        )));
    }
    Ok(Value::Context(Arc::new(f)))
}

/// `def(name, func)`: a context where `name(...)` calls `func`.
///
/// Matches yaql `system.def_` (`def`).
///
/// ```yaql
/// # data: [1, 2, 3]
/// def(sq, $ * $) -> $.select(sq($))
/// # => [1, 4, 9]
/// # data: 4
/// def(fact, switch($ = 1 => 1, true => $ * fact($ - 1))) -> fact($)
/// # => 24
/// def(f, $ + 1) -> def(g, f($) * 2) -> g(1)
/// # => 4
/// ```
fn def(cx: &Cx, a: Args) -> Result<Value> {
    let name: Arc<str> = a.str(0).into();
    let mut f = Frame::child(cx.ctx, &[]);
    f.funcs.push((name, a.get(1).clone()));
    f.has_funcs = true;
    Ok(Value::Context(Arc::new(f)))
}

/// `lambda(func)`: the lambda itself, callable as `$f(args)`.
///
/// Matches yaql `system.lambda_` (`lambda`, delegates only).
///
/// ```yaql
/// let(add => lambda($1 + $2)) -> $add(2, 3)
/// # => 5
/// # data: [1, 2, 3, 4, 5, 6]
/// $.where(lambda($ > 3)($ + 1))
/// # => [3, 4, 5, 6]
/// ```
fn lambda_(_: &Cx, a: Args) -> Result<Value> {
    Ok(a.get(0).clone())
}

/// `#call(callable, *args, **kwargs)`: delegate call `$f(args)`.
///
/// Matches yaql `system.call` (`#call`, delegates only).
///
/// ```yaql
/// let(f => lambda(2 * $)) -> $f(21)
/// # => 42
/// ```
fn call_delegate(cx: &Cx, a: Args) -> Result<Value> {
    match a.get(0) {
        Value::Lambda(c) => c.call_kw(cx.env, &a.rest, &a.kw),
        other => Err(Error::type_(format!(
            "'{}' object is not callable",
            other.type_name()
        ))),
    }
}

/// `call(name, args, kwargs)`: calls function `name`.
///
/// Matches yaql `system.call_func` (`call`, without a receiver).
///
/// ```yaql
/// call(len, [[1, 2]], {})
/// # => 2
/// call(len, [], {sequence => [1, 2, 3]})
/// # => 3
/// call(len, [[1, 2]], null)
/// # error: NoMatchingFunctionException
/// ```
fn call_func(cx: &Cx, a: Args) -> Result<Value> {
    call_named(cx, a.str(0), None, a.get(1), a.get(2))
}

/// `call(name, args, kwargs, receiver)`: calls method `name` on `receiver`.
///
/// Matches yaql `system.call_func` (`call`, with a receiver).
///
/// ```yaql
/// call(len, [], {}, [1, 2])
/// # => 2
/// call(isEmpty, [], {}, null)
/// # => true
/// ```
fn call_method(cx: &Cx, a: Args) -> Result<Value> {
    call_named(cx, a.str(0), Some(a.get(3).clone()), a.get(1), a.get(2))
}

fn call_named(
    cx: &Cx,
    name: &str,
    receiver: Option<Value>,
    args: &Value,
    kwargs: &Value,
) -> Result<Value> {
    if let (Some(host), Some(r @ (Value::Object(_) | Value::Type(_)))) =
        (cx.env.host(), receiver.as_ref())
    {
        let pos: Vec<ArgIn> = cx.to_vec(args)?.into_iter().map(ArgIn::Val).collect();
        let mut named = Vec::new();
        if let Value::Dict(d) = kwargs {
            for (k, v) in d.iter() {
                named.push((Arc::from(k.as_str().unwrap_or("")), ArgIn::Val(v.clone())));
            }
        }
        if let Some(r) = host.call_method(cx, r, name, &pos, &named) {
            return r;
        }
    }
    let mut pos: Vec<ArgIn> = Vec::new();
    let form = match receiver {
        Some(r) => {
            pos.push(ArgIn::Val(r));
            Form::Method
        }
        None => Form::Function,
    };
    for v in cx.to_vec(args)? {
        pos.push(ArgIn::Val(v));
    }
    let mut named = Vec::new();
    if let Value::Dict(d) = kwargs {
        for (k, v) in d.iter() {
            named.push((Arc::from(k.as_str().unwrap_or("")), ArgIn::Val(v.clone())));
        }
    }
    if let Some((f, home)) = cx.ctx.func_home(name) {
        let args: Vec<Value> = pos
            .into_iter()
            .map(|x| match x {
                ArgIn::Val(v) => v,
                _ => Value::Null,
            })
            .collect();
        return Frame::call_func(cx.env, &f, &home, &args, &[]);
    }
    cx.env.registry().call(cx, name, None, form, &pos, &named)
}

/// `#operator_.(receiver, expr)`: the reference's `op_dot` takes a
/// method-call expression only (`Lambda(method=True)`); method calls are
/// compiled directly, so any other right-hand side (`$.'b c'`, `$.123`)
/// reaches this overload and fails as the reference does.
///
/// Matches yaql `system.op_dot` (`#operator_.`, `receiver.expr`).
///
/// ```yaql
/// # data: {"b c": 1}
/// $.'b c'
/// # error: NoMatchingFunctionException
/// ```
fn op_dot(_: &Cx, _: Args) -> Result<Value> {
    Err(runtime::registry::no_matching(
        "#operator_.",
        Form::Function,
    ))
}

/// `obj.name` fallback: `#property#name(obj)`.
///
/// Matches yaql `system.get_property` (the layer-2 `#operator_.`,
/// `left.right`).
///
/// ```yaql
/// datetime(2015, 8, 29).year
/// # => 2015
/// 5.foo
/// # error: NoFunctionRegisteredException
/// ```
fn get_property(cx: &Cx, a: Args) -> Result<Value> {
    let fname = format!("#property#{}", a.str(1));
    cx.env.registry().call(
        cx,
        &fname,
        None,
        Form::Function,
        &[ArgIn::Val(a.get(0).clone())],
        &[],
    )
}

/// `obj.assert(condition, message)`: `obj` when `condition` holds for it,
/// else an `AssertionError` with `message`.
///
/// Matches yaql `system.assert__` (`assert`).
///
/// ```yaql
/// [2, 3].assert(len($) > 1).select($ + 1)
/// # => [3, 4]
/// [1].assert(len($) > 1, 'too short')
/// # error: AssertionError
/// ```
fn assert_(cx: &Cx, a: Args) -> Result<Value> {
    // Like the reference, a lazy sequence is memorized before the check so
    // that the condition does not consume it.
    let obj = match a.get(0) {
        v @ Value::Iter(_) => Value::list(cx.to_vec(v)?),
        v => v.clone(),
    };
    let ok = cx.call(a.get(1), std::slice::from_ref(&obj))?;
    if ok.truthy() {
        Ok(obj)
    } else {
        Err(Error::new(ErrorKind::AssertionError, a.str(2).to_string()))
    }
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    r.function(
        "let",
        vec![
            var("args", Ty::Any).nullable(),
            kw("kwargs", Ty::Any).nullable(),
        ],
        let_,
    );
    r.function("with", vec![var("args", Ty::Any).nullable()], with_);
    r.function(
        "#operator_->",
        vec![p("left", Ty::Context), lazy("right")],
        send_context,
    );
    r.method(
        "unpack",
        vec![p("sequence", Ty::Iterable), var("args", Ty::Str)],
        unpack,
    );
    r.function("def", vec![p("name", Ty::Str), lazy("func")], def);
    r.function("lambda", vec![lazy("func")], lambda_);
    r.function(
        "#call",
        vec![
            p("callable", Ty::Callable),
            var("args", Ty::Any).nullable(),
            kw("kwargs", Ty::Any).nullable(),
        ],
        call_delegate,
    );
    r.function(
        "call",
        vec![
            p("name", Ty::Str),
            p("args", Ty::Sequence),
            p("kwargs", Ty::Mapping),
        ],
        call_func,
    );
    r.function(
        "call",
        vec![
            p("name", Ty::Str),
            p("args", Ty::Sequence),
            p("kwargs", Ty::Mapping),
            p("receiver", Ty::Any).nullable(),
        ],
        call_method,
    );
    r.method(
        "assert",
        vec![
            p("obj", Ty::Any).nullable(),
            lazy("condition"),
            p("message", Ty::Str).default("Assertion failed"),
        ],
        assert_,
    );
}

/// Registers the outermost-layer fallbacks (after every other group).
pub fn register_late(r: &mut Registry) {
    r.function(
        "#operator_.",
        vec![p("receiver", Ty::Any).nullable(), lazy("expr")],
        op_dot,
    );
    r.function(
        "#attr",
        vec![p("obj", Ty::Any).nullable(), p("name", Ty::Str)],
        get_property,
    );
}
