//! MuranoPL engine functions available to expressions in classes:
//! property access on objects and types, `ns:Name`, `new()`, `find()`,
//! `require()`, `id()`, `type()`, attributes, `sleep()`, the GC hooks and
//! the conformance-harness hooks `trace()` and `raisePythonException()`.

use runtime::ErrorKind;
use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{kw, p, var, Args, Cx, Registry, Ty};
use runtime::value::ObjRef;
use runtime::{Error, Result, Value};

use crate::class::Class;
use crate::executor::{attr_slot, resolve_class_name};
use crate::executor::{Executor, ExecutorOf};
use crate::model;

fn is_object(v: &Value) -> bool {
    matches!(v, Value::Object(_))
}
fn is_type(v: &Value) -> bool {
    matches!(v, Value::Type(_))
}
fn is_dict(v: &Value) -> bool {
    matches!(v, Value::Dict(_))
}

fn obj(v: &Value) -> Result<&Arc<ObjRef>> {
    match v {
        Value::Object(o) => Ok(o),
        other => Err(Error::type_(format!(
            "expected an object, got {}",
            other.type_name()
        ))),
    }
}

/// True when the running code may read the object's private properties:
/// its class is one the object is an instance of (murano's `get_property`
/// asks `caller_class.is_compatible(self)`).
fn inside(cx: &Cx, o: &ObjRef) -> bool {
    reads_inside(cx.ctx, o, || cx.executor().ok())
}

/// [`inside`] for code running in `ctx`, `ex` giving the executor when
/// the answer needs it.
pub(crate) fn reads_inside(
    ctx: &Arc<Frame>,
    o: &ObjRef,
    ex: impl FnOnce() -> Option<Arc<Executor>>,
) -> bool {
    // The common case, a method reading its own object, costs no lookup.
    if matches!(ctx.var("this"), Value::Object(ref t) if t.slot == o.slot && t.store == o.store) {
        return true;
    }
    let Some(ex) = ex() else { return false };
    match (ex.ctx_class(ctx), ex.class_of(o)) {
        (Some(caller), Ok(class)) => class.is_a(&caller.key),
        _ => false,
    }
}

/// `obj.property`.
fn obj_attr(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let o = obj(a.get(0))?;
    ex.get_property(o, a.str(1), inside(cx, o))
}

/// `Type.staticProperty`.
fn type_attr(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let Value::Type(t) = a.get(0) else {
        return Err(Error::type_("expected a type"));
    };
    let class = ex.class(&t.name)?;
    let name = a.str(1);
    if class.ambiguous_property(name) {
        return Err(Error::new(
            ErrorKind::AmbiguousPropertyNameError,
            format!("Found more that one property \"{name}\""),
        ));
    }
    match class.find_prop(name) {
        Some((decl, prop)) if prop.usage == compiler::murano::PropertyUsage::Static => {
            let v = ex.static_get(&decl.key, name);
            let decl = ex.class(&decl.key)?;
            let prop = decl.props.iter().find(|p| &*p.name == name).unwrap();
            ex.static_value(&decl, prop, v)
        }
        _ => Err(Error::new(
            ErrorKind::NoPropertyFound,
            format!("Static property '{name}' is not found in class {}", t.name),
        )),
    }
}

/// `ns:Name` and `:Name`: a type object resolved in the calling class's
/// namespaces.
fn ns_name(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let name = match a.get(0) {
        Value::Null => format!(":{}", a.str(1)),
        ns => format!("{}:{}", runtime::pyrepr::to_str(ns), a.str(1)),
    };
    let full = match ex.ctx_class(cx.ctx) {
        Some(c) => {
            let full = c
                .decl
                .resolve_name(&name)
                .map_err(|e| Error::new(ErrorKind::KeyError, e.message().to_string()))?;
            ex.key_from(&full, Some(&c.package))
        }
        None => name.trim_start_matches(':').to_string(),
    };
    ex.type_value(&full)
}

/// `new(type, owner, objectName, **properties)`.
fn new_(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let owner = match a.get(1) {
        Value::Object(o) => Some(o.clone()),
        _ => None,
    };
    let tv = a.get(0);
    if let Value::Dict(_) = tv {
        // new(objectModel, owner)
        let resolver = ex.ctx_class(cx.ctx);
        let r = model::load_with(&ex, tv, owner, resolver.as_deref(), None, true)?;
        return r
            .map(Value::Object)
            .ok_or_else(|| Error::value("not an object model"));
    }
    let mut props = runtime::Dict::default();
    for (k, v) in &a.kw {
        props.insert(Value::str(&**k), v.clone());
    }
    for extra in &a.rest {
        if let Value::Dict(d) = extra {
            for (k, v) in d.iter() {
                props.insert(k.clone(), v.clone());
            }
        }
    }
    construct(cx, &ex, tv, owner, a.get(2), &props)
}

/// `new(type, parameters, owner, objectName, extra)`: `new` with the
/// properties given as a dict (keys that are not keywords are dropped, as
/// `utils.filter_parameters_dict` drops them).
fn new_from_dict(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let Value::Dict(d) = a.get(1) else {
        return Err(Error::type_("new: parameters must be a dict"));
    };
    let props: runtime::Dict = d
        .iter()
        .filter(|(k, _)| k.as_str().is_some_and(is_keyword))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let owner = match a.get(2) {
        Value::Object(o) => Some(o.clone()),
        _ => None,
    };
    construct(cx, &ex, a.get(0), owner, a.get(3), &props)
}

/// yaql's `utils.is_keyword`: its regex `(?!__)\b[^\W\d]\w*\b` is only
/// anchored at the start, so a name qualifies when it starts with a letter
/// or `_` and not with `__`.
fn is_keyword(s: &str) -> bool {
    !s.starts_with("__")
        && s.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Creates an object of class `tv` owned by `owner`, named `name` (when a
/// string), its properties initialised from `props`, and runs `.init`.
fn construct(
    cx: &Cx,
    ex: &Executor,
    tv: &Value,
    owner: Option<Arc<ObjRef>>,
    name: &Value,
    props: &runtime::Dict,
) -> Result<Value> {
    let class_name = resolve_class_name(cx, ex, tv)?;
    let class = ex.class(&class_name)?;
    let r = ex.create(&class, None, owner);
    if let Value::Str(n) = name {
        let n = n.clone();
        ex.with_obj(&r, |o| o.name = Value::Str(n))?;
    }
    model::init_properties(ex, &r, props)?;
    model::run_init(ex, &r, props)?;
    Ok(Value::Object(r))
}

/// `obj.find(type)`: the nearest owner of the given type.
fn find(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let o = obj(a.get(0))?;
    let want = resolve_class_name(cx, &ex, a.get(1))?;
    let mut cur = ex.owner(o);
    while let Some(c) = cur {
        if ex.class_of(&c)?.is_a(&want) {
            return Ok(Value::Object(c));
        }
        cur = ex.owner(&c);
    }
    Ok(Value::Null)
}

/// `value.require()`: the value, or an error when null.
fn require(_: &Cx, a: Args) -> Result<Value> {
    match a.get(0) {
        Value::Null => Err(Error::new(
            ErrorKind::ValueError,
            "Required value is missing",
        )),
        v => Ok(v.clone()),
    }
}

/// `id(obj)`.
fn id_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(&*obj(a.get(0))?.id))
}

/// `type(obj)` / `type('full.Name')`.
fn type_(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    match a.get(0) {
        Value::Null => Ok(Value::Null),
        // Runtime 1.3 and older: `type_legacy` gives the class name.
        Value::Object(o)
            if ex
                .ctx_class(cx.ctx)
                .is_some_and(|c| c.package.runtime_le_13) =>
        {
            Ok(Value::str(&*ex.class_of(o)?.name))
        }
        Value::Object(o) => ex.type_value(&o.class),
        Value::Type(t) => Ok(Value::Type(t.clone())),
        v => {
            let n = resolve_class_name(cx, &ex, v)?;
            ex.type_value(&n)
        }
    }
}

/// The key of attribute `name` of the class that owns it: `owner` when
/// given, else the class of the calling method, as murano's attribute
/// store keys attributes by object, owner type and name
/// (murano/dsl/principal_objects/sys_object.py, attribute_store.py).
fn attr_key(cx: &Cx, ex: &Executor, name: &Value, owner: &Value) -> Result<Value> {
    let owner = match owner {
        Value::Null => caller_name(ex, cx.ctx),
        t => resolve_class_name(cx, ex, t)?
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string(),
    };
    Ok(attr_slot(&owner, name))
}

/// The name of the class whose method runs in `ctx` (the owner of the
/// attributes it reads and writes by default), or "".
pub(crate) fn caller_name(ex: &Executor, ctx: &Arc<Frame>) -> String {
    ex.ctx_class(ctx)
        .map(|c| c.name.to_string())
        .unwrap_or_default()
}

/// The attribute of `o` under `key` ([`attr_slot`]), `None` when unset or
/// null.
pub(crate) fn stored_attr(ex: &Executor, o: &ObjRef, key: &Value) -> Result<Option<Value>> {
    Ok(ex
        .with_obj(o, |s| s.attrs.get(key).cloned())?
        .filter(|v| !v.is_null()))
}

/// `obj.getAttr(name, default, owner)`: the default when unset or null.
fn get_attr(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let o = obj(a.get(0))?;
    let key = attr_key(cx, &ex, a.get(1), a.get(3))?;
    Ok(stored_attr(&ex, o, &key)?.unwrap_or_else(|| a.get(2).clone()))
}

/// `obj.setAttr(name, value, owner)`: an object is kept as its id; null
/// removes the attribute.
fn set_attr(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let o = obj(a.get(0))?;
    let key = attr_key(cx, &ex, a.get(1), a.get(3))?;
    let v = match a.get(2) {
        Value::Object(r) => Value::str(&*r.id),
        v => v.clone(),
    };
    ex.with_obj(o, |s| {
        if v.is_null() {
            s.attrs.shift_remove(&key);
        } else {
            s.attrs.insert(key, v);
        }
    })?;
    Ok(Value::Null)
}

/// `trace(value)`: the conformance harness's recorder.
fn trace(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let v = stdlib::finalize(cx.env, a.get(0).clone())?;
    ex.trace(v);
    Ok(Value::Null)
}

/// `raisePythonException()`: a host error, as the harness specifies.
fn raise_python(_: &Cx, _: Args) -> Result<Value> {
    Err(Error::new(
        ErrorKind::LookupError,
        "just random Python exception",
    ))
}

/// `sleep(seconds)`: gives way to the other green threads (the clock is
/// virtual: no real time passes).
fn sleep(cx: &Cx, a: Args) -> Result<Value> {
    // Without an execution there is no clock to advance.
    if let Ok(ex) = cx.executor() {
        ex.scheduler().sleep(a.get(0).as_f64().unwrap_or(0.0));
    }
    Ok(Value::Null)
}

/// `obj is Type`.
fn is_(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let Value::Object(o) = a.get(0) else {
        return Ok(Value::Bool(false));
    };
    // (Only objects and null reach here: murano's `is_instance_of`.)
    let want = resolve_class_name(cx, &ex, a.get(1))?;
    Ok(Value::Bool(ex.class_of(o)?.is_a(&want)))
}

/// The declaring class of the running method.
fn current_class(cx: &Cx, ex: &Executor) -> Result<Arc<Class>> {
    ex.ctx_class(cx.ctx).ok_or_else(|| {
        Error::new(
            ErrorKind::DslInvalidOperationError,
            "not inside a MuranoPL method",
        )
    })
}

/// `cast(obj, type[, versionSpec])` / `obj.cast(type)`: a view of the
/// object as one of its classes. As murano's `helpers.cast`
/// (murano/dsl/helpers.py): the candidates are the object's ancestors of
/// that name; with several (versions of one class in a diamond), the
/// version spec, else the running class's package requirement, chooses;
/// none left is `NoClassFound`, more than one `AmbiguousClassName`.
fn cast(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let o = obj(a.get(0))?;
    let want = resolve_class_name(cx, &ex, a.get(1))?;
    let class = ex.class_of(o)?;
    let mut found: Vec<&Class> = class
        .mro()
        .filter(|c| *c.name == *want || *c.key == *want)
        .collect();
    if found.len() > 1 || !a.get(2).is_null() {
        let spec = match a.get(2) {
            Value::Null => None,
            v => Some(
                crate::version::VersionSpec::parse(Some(&runtime::pyrepr::to_str(v)))
                    .map_err(|e| Error::new(ErrorKind::ValueError, e))?,
            ),
        };
        let cur = ex.ctx_class(cx.ctx);
        found.retain(|c| {
            let Ok(v) = crate::version::parse_version(&c.package.version) else {
                return true;
            };
            match (&spec, &cur) {
                (Some(s), _) => s.matches(&v),
                (None, Some(cur)) => cur
                    .package
                    .requires
                    .iter()
                    .filter(|(name, _)| *name == *c.package.name)
                    .all(|(_, s)| s.matches(&v)),
                (None, None) => true,
            }
        });
    }
    match found.as_slice() {
        [target] => Ok(Value::Object(ex.view(o, &target.key))),
        [] => Err(Error::new(
            ErrorKind::NoClassFound,
            format!("Class \"{want}\" is not found in "),
        )),
        _ => Err(Error::new(
            ErrorKind::AmbiguousClassName,
            format!("Found more that one version of class \"{want}\""),
        )),
    }
}

/// `super(obj, expr)` / `obj.super(expr)`: `expr` evaluated with `$` as
/// the object viewed as each parent of the running method's class, in
/// declaration order (murano's
/// `super_` in murano/dsl/yaql_functions.py maps the lambda over every
/// parent, not only the first).
fn super_(cx: &Cx, a: Args) -> Result<Value> {
    let views = parent_views(cx, a.get(0))?;
    let out = views
        .into_iter()
        .map(|v| cx.call(a.get(1), &[v]))
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::list(out))
}

/// `psuper(obj, expr)`: `super` whose evaluations run as green threads
/// (murano's `psuper` is `parallel_select` over the parent views).
fn psuper(cx: &Cx, a: Args) -> Result<Value> {
    let views = parent_views(cx, a.get(0))?;
    parallel_select(cx, views, a.get(1))
}

/// `super(obj)` / `psuper(obj)`: the views themselves.
fn super_views(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(parent_views(cx, a.get(0))?))
}

fn parent_views(cx: &Cx, o: &Value) -> Result<Vec<Value>> {
    let ex = cx.executor()?;
    let o = obj(o)?;
    let cur = current_class(cx, &ex)?;
    Ok(cur
        .parents
        .iter()
        .map(|p| Value::Object(ex.view(o, &p.key)))
        .collect())
}

/// `collection.pselect(selector)`: `select` whose branches run as green
/// threads.
fn pselect(cx: &Cx, a: Args) -> Result<Value> {
    let items: Vec<Value> = cx.to_vec(a.get(0))?;
    parallel_select(cx, items, a.get(1))
}

/// Runs `f` on every item as a green thread of its own; the results in the
/// items' order, or the first error.
fn parallel_select(cx: &Cx, items: Vec<Value>, f: &Value) -> Result<Value> {
    let ex = cx.executor()?;
    // Each green thread runs as code of the calling class (private
    // properties), as the caller does.
    let caller = ex.caller();
    let mut tasks: Vec<Box<dyn FnOnce() -> Result<Value>>> = Vec::new();
    for x in items {
        let f = f.clone();
        let env = cx.env.clone();
        let (ex, caller) = (ex.clone(), caller.clone());
        tasks.push(Box::new(move || {
            let prev = ex.set_caller(caller);
            let r = match &f {
                Value::Lambda(c) => c.call(&env, &[x]),
                other => Ok(other.clone()),
            };
            ex.set_caller(prev);
            r
        }));
    }
    let results = ex.run_green(tasks, 0)?;
    Ok(Value::list(ex.first_error(results, "pselect")?))
}

/// `logMessage(level, logger, message, args, kwargs[, exc])`: the native
/// part of `io.murano.system.Logger`: formats `message` with yaql
/// `format(*args, **kwargs)` (a format error only warns, the raw message
/// is logged) and records it in the execution's log.
fn log_message(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let level = runtime::pyrepr::to_str(a.get(0));
    let logger = runtime::pyrepr::to_str(a.get(1));
    let msg = a.get(2).clone();
    let args: Vec<Value> = match a.get(3) {
        Value::List(l) => l.to_vec(),
        _ => Vec::new(),
    };
    let mut text = runtime::pyrepr::to_str(&msg);
    if !args.is_empty() || matches!(a.get(4), Value::Dict(d) if !d.is_empty()) {
        let mut pos = vec![runtime::registry::ArgIn::Val(msg.clone())];
        pos.extend(args.into_iter().map(runtime::registry::ArgIn::Val));
        let mut named = Vec::new();
        if let Value::Dict(d) = a.get(4) {
            for (k, v) in d.iter() {
                named.push((
                    Arc::from(runtime::pyrepr::to_str(k).as_str()),
                    runtime::registry::ArgIn::Val(v.clone()),
                ));
            }
        }
        match cx.env.registry().call(
            cx,
            "format",
            None,
            runtime::registry::Form::Method,
            &pos,
            &named,
        ) {
            Ok(v) => text = runtime::pyrepr::to_str(&v),
            // murano's `_format_without_exceptions` warns about an index or
            // key the format names but is not given, and logs the message
            // unformatted.
            Err(e) if matches!(e.kind(), "IndexError" | "KeyError") => ex.log(
                "warning",
                &logger,
                &format!("Can not format string: {text}"),
            ),
            Err(e) => return Err(e),
        }
    }
    // `exception`: the message, then the exception's stack trace
    // (murano/engine/system/logger.py joins them with a newline).
    if let Value::Object(exc) = a.get(5) {
        if let trace @ Value::Object(_) = ex.get_property(exc, "stackTrace", true)? {
            let t = ex.call(&trace, "toString", vec![], vec![], false)?;
            text.push('\n');
            text.push_str(&runtime::pyrepr::to_str(&t.unwrap_or(Value::Null)));
        }
    }
    ex.log(&level, &logger, &text);
    Ok(Value::Null)
}

/// `config(setting)` / `config(group, setting)`: a value of the engine
/// configuration (murano.conf), available to the `io.murano` package only.
fn config(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let class = current_class(cx, &ex)?;
    if &*class.package.name != "io.murano" {
        return Err(Error::new(
            ErrorKind::NoFunctionRegisteredException,
            "Unknown function \"config\"",
        ));
    }
    let (group, setting) = match (a.get(0), a.get(1)) {
        (s, Value::Null) => ("DEFAULT".to_string(), runtime::pyrepr::to_str(s)),
        (g, s) => (runtime::pyrepr::to_str(g), runtime::pyrepr::to_str(s)),
    };
    Ok(ex.engine_config(&group, &setting))
}

/// Method forms of `super`, `psuper`, `cast`, `id` and `type`: only for
/// classes of packages with runtime version 1.3 or older (Format 1.4
/// answers `NoMethodRegisteredException`, as the reference does).
fn legacy_method(cx: &Cx, name: &str) -> Result<()> {
    let ex = cx.executor()?;
    match ex.ctx_class(cx.ctx) {
        Some(c) if c.package.runtime_le_13 => Ok(()),
        _ => Err(Error::new(
            ErrorKind::NoMethodRegisteredException,
            format!("Unknown method \"{name}\""),
        )),
    }
}

fn super_m(cx: &Cx, a: Args) -> Result<Value> {
    legacy_method(cx, "super")?;
    super_(cx, a)
}
fn psuper_m(cx: &Cx, a: Args) -> Result<Value> {
    legacy_method(cx, "psuper")?;
    psuper(cx, a)
}
fn cast_m(cx: &Cx, a: Args) -> Result<Value> {
    legacy_method(cx, "cast")?;
    cast(cx, a)
}
fn id_m(cx: &Cx, a: Args) -> Result<Value> {
    legacy_method(cx, "id")?;
    id_(cx, a)
}
fn type_m(cx: &Cx, a: Args) -> Result<Value> {
    legacy_method(cx, "type")?;
    // The 1.3 method form gives the class name.
    Ok(Value::str(&*obj(a.get(0))?.class))
}

/// Registers the engine functions: objects and types (`new`, `find`,
/// `id`, `type`, attributes), then the rest ([`register_more`]).
pub fn register(r: &mut Registry) {
    r.function(
        "#attr",
        vec![p("obj", Ty::Check(is_object)), p("name", Ty::Str)],
        obj_attr,
    );
    r.function(
        "#attr",
        vec![p("type", Ty::Check(is_type)), p("name", Ty::Str)],
        type_attr,
    );
    r.function(
        "#operator_:",
        vec![p("ns", Ty::Any).nullable(), p("name", Ty::Str)],
        ns_name,
    );
    r.function(
        "#operator_is",
        vec![
            p("obj", Ty::Check(is_object)).nullable(),
            p("type", Ty::Any),
        ],
        is_,
    );
    // `new(type, parameters[, owner, objectName, extra])` first: murano's
    // `new_from_dict` (murano/dsl/yaql_functions.py), which the plain
    // form cannot take since its owner must be an object.
    r.function(
        "new",
        vec![
            p("type", Ty::Any),
            p("parameters", Ty::Check(is_dict)),
            p("owner", Ty::Check(is_object)).opt(),
            p("objectName", Ty::Any).opt(),
            p("extra", Ty::Any).opt(),
        ],
        new_from_dict,
    );
    r.function(
        "new",
        vec![
            p("type", Ty::Any),
            p("owner", Ty::Check(is_object)).opt(),
            p("objectName", Ty::Any).opt(),
            var("extra", Ty::Any).nullable(),
            kw("properties", Ty::Any).nullable(),
        ],
        new_,
    );
    r.method(
        "find",
        vec![p("obj", Ty::Check(is_object)), p("type", Ty::Any)],
        find,
    );
    r.method("require", vec![p("value", Ty::Any).nullable()], require);
    r.function("id", vec![p("obj", Ty::Check(is_object))], id_);
    r.function("type", vec![p("obj", Ty::Any).nullable()], type_);
    // murano's `is_object`: objects and type references.
    r.function("isObject", vec![p("value", Ty::Any).nullable()], |_, a| {
        Ok(Value::Bool(is_object(a.get(0)) || is_type(a.get(0))))
    });
    r.method(
        "getAttr",
        vec![
            p("obj", Ty::Check(is_object)),
            p("name", Ty::Str),
            p("default", Ty::Any).opt(),
            p("owner", Ty::Any).opt(),
        ],
        get_attr,
    );
    r.method(
        "setAttr",
        vec![
            p("obj", Ty::Check(is_object)),
            p("name", Ty::Str),
            p("value", Ty::Any).nullable(),
            p("owner", Ty::Any).opt(),
        ],
        set_attr,
    );
    register_more(r);
}

/// The engine functions of tracing, logging, configuration, views
/// (`cast`, `super`, `psuper`) and the runtime 1.3 method forms.
fn register_more(r: &mut Registry) {
    r.function("trace", vec![p("value", Ty::Any).nullable()], trace);
    r.function(
        "logMessage",
        vec![
            p("level", Ty::Any),
            p("logger", Ty::Any).nullable(),
            p("message", Ty::Any).nullable(),
            p("args", Ty::Any).opt(),
            p("kwargs", Ty::Any).opt(),
            p("exc", Ty::Any).opt(),
        ],
        log_message,
    );
    r.function(
        "config",
        vec![
            p("group", Ty::Any),
            p("setting", Ty::Any).opt(),
            p("readAsFile", Ty::Bool).default(false),
        ],
        config,
    );
    r.function(
        "cast",
        vec![
            p("obj", Ty::Check(is_object)),
            p("type", Ty::Any),
            p("versionSpec", Ty::Any).opt(),
        ],
        cast,
    );
    r.function(
        "super",
        vec![
            p("obj", Ty::Check(is_object)),
            runtime::registry::lazy("expr"),
        ],
        super_,
    );
    r.function(
        "psuper",
        vec![
            p("obj", Ty::Check(is_object)),
            runtime::registry::lazy("expr"),
        ],
        psuper,
    );
    for name in ["super", "psuper"] {
        r.function(name, vec![p("obj", Ty::Check(is_object))], super_views);
    }
    r.method(
        "super",
        vec![
            p("obj", Ty::Check(is_object)),
            runtime::registry::lazy("expr"),
        ],
        super_m,
    );
    r.method(
        "psuper",
        vec![
            p("obj", Ty::Check(is_object)),
            runtime::registry::lazy("expr"),
        ],
        psuper_m,
    );
    r.method(
        "cast",
        vec![p("obj", Ty::Check(is_object)), p("type", Ty::Any)],
        cast_m,
    );
    r.method("id", vec![p("obj", Ty::Check(is_object))], id_m);
    r.method("type", vec![p("obj", Ty::Check(is_object))], type_m);
    r.method(
        "pselect",
        vec![
            p("collection", Ty::Iterable),
            runtime::registry::lazy("selector"),
        ],
        pselect,
    );
    r.function("raisePythonException", vec![], raise_python);
    r.function("sleep", vec![p("seconds", Ty::Any).opt()], sleep);
}
