//! The contract methods as YAQL functions (`$.int()`, `$.string()`,
//! `$.bool()`, `$.notNull()`, `$.check()`, `$.class()`, `$.template()`,
//! `$.owned()`, `$.notOwned()`), tried before the standard library in
//! contract expressions, and the coercions the checker's steps share with
//! them. What each method means in a contract is the IR's
//! ([`compiler::murano::ir::LinkKind`]); these run it.

use runtime::ErrorKind;
use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{lazy, p, Args, Cx, Registry, Ty};
use runtime::value::ObjRef;
use runtime::{Error, Result, Value};

use crate::executor::Scope;
use crate::executor::{Executor, ExecutorOf};

/// The owner an object that a `class()` contract creates from a definition
/// gets: the object whose property is checked; none for a method argument
/// (`Executor::invoke` marks argument checks with [`Scope::args`]).
fn new_object_owner(ctx: &Arc<Frame>) -> Option<Arc<ObjRef>> {
    if Scope::find(ctx, |s| s.args).unwrap_or(false) {
        return None;
    }
    Scope::find(ctx, |s| s.owner.clone())
}

/// A value in a violation, as murano's `helpers.format_scalar` prints it
/// (a string quoted, anything else as Python's `str()`: `None`, `True`).
pub(super) fn fmt_scalar(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("'{s}'"),
        other => runtime::pyrepr::repr(other),
    }
}

/// `$.int()`.
fn c_int(_: &Cx, a: Args) -> Result<Value> {
    coerce_int(a.get(0))
}

pub(super) fn coerce_int(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Int(_) | Value::BigInt(_) => Ok(v.clone()),
        Value::Bool(b) => Ok(Value::Int(*b as i64)),
        Value::Float(f) if f.is_finite() => Ok(Value::Int(f.trunc() as i64)),
        Value::Str(s) => s
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| violation(format!("Value {} violates int() contract", fmt_scalar(v)))),
        _ => Err(violation(format!(
            "Value {} violates int() contract",
            fmt_scalar(v)
        ))),
    }
}

/// `$.string()`.
fn c_string(_: &Cx, a: Args) -> Result<Value> {
    coerce_string(a.get(0))
}

/// As murano's `String.transform` (murano/dsl/contracts/basic.py):
/// strings stay, integers (booleans are integers to Python) are printed,
/// an object becomes its id; anything else (a float included) violates.
pub(super) fn coerce_string(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Str(_) => Ok(v.clone()),
        Value::Bool(b) => Ok(Value::str(if *b { "True" } else { "False" })),
        Value::Int(_) | Value::BigInt(_) => Ok(Value::str(runtime::pyrepr::to_str(v))),
        Value::Object(o) => Ok(Value::str(&*o.id)),
        _ => Err(violation(format!(
            "Value {} violates string() contract",
            runtime::pyrepr::repr(v)
        ))),
    }
}

/// `$.bool()`.
fn c_bool(_: &Cx, a: Args) -> Result<Value> {
    coerce_bool(a.get(0))
}

/// As murano's `Bool.transform` (murano/dsl/contracts/basic.py): null
/// stays, anything else is its Python truth (`"false"` is true).
pub(super) fn coerce_bool(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        other => Ok(Value::Bool(other.truthy())),
    }
}

/// `$.notNull()`.
fn c_not_null(_: &Cx, a: Args) -> Result<Value> {
    not_null(a.get(0).clone())
}

pub(super) fn not_null(v: Value) -> Result<Value> {
    if v.is_null() {
        return Err(violation("null value violates notNull() contract"));
    }
    Ok(v)
}

/// `$.check(predicate[, message])`.
fn c_check(cx: &Cx, a: Args) -> Result<Value> {
    let v = a.get(0).clone();
    let ok = cx.call(a.get(1), std::slice::from_ref(&v))?;
    check_result(v, ok.truthy(), a.get(2))
}

/// `check()`'s verdict on `v`: the value, or a violation with `message`
/// (null: the default message, murano's `Check.validate` in
/// murano/dsl/contracts/check.py, which asks the predicate about null too).
pub(super) fn check_result(v: Value, ok: bool, message: &Value) -> Result<Value> {
    if ok {
        return Ok(v);
    }
    let msg = match message {
        Value::Null => format!("Value {} doesn't match predicate", fmt_scalar(&v)),
        m => runtime::pyrepr::to_str(m),
    };
    Err(violation(msg))
}

/// `$.class(Name[, DefaultName])`.
fn c_class(cx: &Cx, a: Args) -> Result<Value> {
    class_contract(cx, a.get(0).clone(), a.get(1), a.get(2))
}

/// `class()` of `v`: `name` as written, resolved in the namespaces of the
/// context's class; `default` the class of a definition without a type.
fn class_contract(cx: &Cx, v: Value, name: &Value, default: &Value) -> Result<Value> {
    let ex = cx.executor()?;
    let want = crate::executor::resolve_class_name(cx, &ex, name)?;
    class_check(cx, &ex, v, &want, default)
}

/// [`class_contract`] with the class name resolved.
pub(super) fn class_check(
    cx: &Cx,
    ex: &Executor,
    v: Value,
    want: &str,
    default: &Value,
) -> Result<Value> {
    if let Some(r) = class_check_id(ex, &v, want) {
        return r;
    }
    match &v {
        Value::Object(o) => {
            let c = ex.class_of(o)?;
            if c.is_a(want) {
                Ok(v)
            } else {
                Err(incompatible(&c, want))
            }
        }
        // Instantiating a definition needs the whole model: streaming
        // validation gives the model to the ordinary load instead.
        Value::Dict(_) if ex.foreign().is_some() => Err(crate::executor::not_streamable(
            "a class() contract instantiates a definition",
        )),
        Value::Dict(_) => {
            let default = match default {
                Value::Null => Some(want.to_string()),
                t => Some(crate::executor::resolve_class_name(cx, ex, t)?),
            };
            let owner = new_object_owner(cx.ctx);
            let o = ex.instantiate(cx, &v, owner, default.as_deref())?;
            let c = ex.class_of(&o)?;
            if !c.is_a(want) {
                return Err(incompatible(&c, want));
            }
            Ok(Value::Object(o))
        }
        other => Err(violation(format!(
            "Value {} violates class() contract",
            runtime::pyrepr::repr(other)
        ))),
    }
}

/// [`class_check`] of null or an object id (what it does with them needs
/// the executor only, and is what compiled `class()` links ask for);
/// `None` for any other value.
pub(super) fn class_check_id(ex: &Executor, v: &Value, want: &str) -> Option<Result<Value>> {
    Some(match v {
        Value::Null => Ok(Value::Null),
        // An object of a model being streamed, which this execution does
        // not hold: its class is all a `class()` contract of streamed
        // classes looks at.
        Value::Str(id) if ex.foreign().is_some() => {
            match ex.foreign().and_then(|f| f.class_of(id)) {
                Some(c) if c.is_a(want) => Ok(v.clone()),
                Some(c) => Err(incompatible(c, want)),
                None => Err(not_found(id)),
            }
        }
        Value::Str(id) => match ex.find_object(id) {
            Some(o) => match ex.class_of(&o) {
                Ok(c) if c.is_a(want) => Ok(Value::Object(o)),
                Ok(c) => Err(incompatible(&c, want)),
                Err(e) => Err(e),
            },
            None => Err(not_found(id)),
        },
        _ => return None,
    })
}

fn incompatible(c: &crate::class::Class, want: &str) -> Error {
    violation(format!(
        "Object of type {} is not compatible with requested type {want}",
        c.name
    ))
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorKind::NoObjectFoundError,
        format!("Object \"{id}\" is not found in object store"),
    )
}

/// `$.template(Type, excludeProperties => [...], defaultType => ...)`, as
/// murano's `Template` contract (murano/dsl/contracts/instances.py): the
/// value is an object definition (or an object) of `Type` or a subclass;
/// the result is the definition as the object would serialize: a `?`
/// header with a fresh id, each declared property coerced by its contract
/// or given its default, undeclared keys and `excludeProperties` dropped.
fn c_template(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let mut v = a.get(0).clone();
    if v.is_null() {
        return Ok(v);
    }
    if let Value::Str(id) = &v {
        if let Some(o) = ex.find_object(id) {
            v = Value::Object(o);
        }
    }
    if let Value::Object(o) = &v {
        v = crate::serialize::dump_object(&ex, o, crate::serialize::DumpType::Serializable, true)?;
    }
    if !matches!(v, Value::Dict(_)) {
        return Err(violation(format!(
            "Value {} cannot be represented as class {}",
            fmt_scalar(&v),
            runtime::pyrepr::to_str(a.get(1))
        )));
    }
    let want = crate::executor::resolve_class_name(cx, &ex, a.get(1))?;
    let default = match a.get(2) {
        Value::Null => want.clone(),
        t => crate::executor::resolve_class_name(cx, &ex, t)?,
    };
    let caller = ex.ctx_class(cx.ctx);
    let def = crate::defs::parse_def(&ex, caller.as_deref(), &v, Some(&default))
        .ok_or_else(|| violation("Value is not an object"))?;
    let class = ex.class(&def.class)?;
    if !class.is_a(&want) {
        return Err(violation(format!(
            "Object of type {} is not compatible with requested type {want}",
            class.name
        )));
    }
    let excluded: Vec<Value> = match a.get(4) {
        Value::List(l) => l.to_vec(),
        _ => Vec::new(),
    };
    let props = ex.template_props(&class, &def.props, &excluded)?;
    let mut header = runtime::Dict::default();
    header.insert(Value::str("type"), Value::Type(class.type_ref.clone()));
    header.insert(Value::str("id"), Value::str(ex.new_id()));
    header.insert(Value::str("name"), def.name.clone());
    header.insert(Value::str("metadata"), Value::Null);
    let mut out = runtime::Dict::default();
    out.insert(Value::str("?"), Value::dict(header));
    out.extend(props);
    Ok(Value::dict(out))
}

/// `$.owned()`.
fn c_owned(cx: &Cx, a: Args) -> Result<Value> {
    owned_check(cx, a, true)
}

/// `$.notOwned()`.
fn c_not_owned(cx: &Cx, a: Args) -> Result<Value> {
    owned_check(cx, a, false)
}

fn owned_check(cx: &Cx, a: Args, want_owned: bool) -> Result<Value> {
    owned_value(cx, a.get(0).clone(), want_owned)
}

/// `v.owned()` (`want_owned`) or `v.notOwned()` called at `cx`: anything
/// but an object passes; an object passes when it is (is not) owned,
/// through its owners, by the object of the scope (else `$this`).
pub(super) fn owned_value(cx: &Cx, v: Value, want_owned: bool) -> Result<Value> {
    let ex = cx.executor()?;
    let Value::Object(o) = &v else {
        return Ok(v);
    };
    let this = match Scope::find(cx.ctx, |s| s.owner.clone()) {
        Some(t) => Some(t),
        None => match cx.ctx.var("this") {
            Value::Object(ref t) => Some(t.clone()),
            _ => None,
        },
    };
    let mut owned = false;
    if let Some(t) = this {
        let mut cur = ex.owner(o);
        while let Some(c) = cur {
            if c.slot == t.slot {
                owned = true;
                break;
            }
            cur = ex.owner(&c);
        }
    }
    if owned != want_owned {
        return Err(violation(format!(
            "Object {} violates {}() contract",
            o.id,
            if want_owned { "owned" } else { "notOwned" }
        )));
    }
    Ok(v)
}

/// Registers the contract methods (tried before the standard library in
/// contract expressions).
pub fn register(r: &mut Registry) {
    let anyv = || p("value", Ty::Any).nullable();
    r.method("int", vec![anyv()], c_int);
    r.method("string", vec![anyv()], c_string);
    r.method("bool", vec![anyv()], c_bool);
    r.method("notNull", vec![anyv()], c_not_null);
    r.method(
        "check",
        vec![anyv(), lazy("predicate"), p("msg", Ty::Any).opt()],
        c_check,
    );
    r.method(
        "class",
        vec![
            anyv(),
            p(
                "name",
                Ty::OneOf(&[Ty::Str, Ty::Check(|v| matches!(v, Value::Type(_)))]),
            ),
            p("defaultName", Ty::Any).opt(),
        ],
        c_class,
    );
    r.method(
        "template",
        vec![
            anyv(),
            p(
                "type",
                Ty::OneOf(&[Ty::Str, Ty::Check(|v| matches!(v, Value::Type(_)))]),
            ),
            // murano's order: `type_, default_type, version_spec,
            // exclude_properties`.
            p("defaultType", Ty::Any).opt(),
            p("versionSpec", Ty::Any).opt(),
            p("excludeProperties", Ty::Any).opt(),
        ],
        c_template,
    );
    r.method("owned", vec![anyv()], c_owned);
    r.method("notOwned", vec![anyv()], c_not_owned);
}

/// A contract violation with message `msg`.
pub(super) fn violation(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::ContractViolationException, msg)
}
