//! Python functions called the reference's way, and yaqlized objects.
//!
//! A context's functions that use the reference's `specs` (parameter
//! types, lazy arguments, injected contexts, methods) are not plain
//! callables: the engine an evaluation runs with has, for each such name,
//! an overload before the library's that takes every argument unevaluated
//! and hands the call to the evaluation's Python dispatcher
//! (`muranopl.yaql._dispatch.Dispatcher`, found in the root frame's
//! scope). The dispatcher resolves the call over the context's layers as
//! the reference does, evaluates what it needs through [`Arg`], and calls
//! the function once; when no Python function takes the call, the library
//! runs it with the arguments still unevaluated.
//!
//! A yaqlized Python object crosses as an opaque value ([`PyObj`]); its
//! attributes, indexing and methods go to the dispatcher too.

use std::any::Any;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::{kw, p, var, ArgIn, Args, Cx, Form, Kind, Mode, Registry, Ty};
use runtime::value::{Closure, Invoke};
use runtime::{Env, ErrorKind, Options, Value};
use smallvec::SmallVec;

use crate::convert::{to_py, Failure, ToValue};
use crate::errors;

/// An engine: the library (and the overloads that reach Python) with its
/// options and grammar.
pub struct Core {
    env: Env,
    /// The library alone, for what the dispatcher leaves to it.
    base: Arc<Registry>,
    copts: muranopl::CompileOptions,
    /// An operator table of the engine's own (`insert_operator`), which
    /// the standard grammar cannot parse.
    operators: Option<Arc<muranopl::OpTable>>,
}

impl Core {
    /// The standard library with `options`, in the yaql 0.2 grammar when
    /// `legacy_syntax`.
    /// With `operators`, expressions are parsed with that table.
    pub fn new(
        options: Options,
        legacy_syntax: bool,
        operators: Option<Arc<muranopl::OpTable>>,
    ) -> Core {
        let env = stdlib::env(options);
        Core {
            base: env.registry().clone(),
            env,
            copts: muranopl::CompileOptions {
                legacy: legacy_syntax,
                murano: false,
            },
            operators,
        }
    }

    /// This engine with an overload reaching Python for each of
    /// `functions` (`(name, is_method)`) and, with `objects`, yaqlized
    /// objects' attributes, indexing and methods.
    pub fn extend(&self, functions: &[(String, bool)], objects: bool) -> Core {
        let mut r = Registry::new();
        r.group("python");
        for (name, method) in functions {
            let params = vec![
                var("args", Ty::Any).nullable().lazy(),
                kw("kwargs", Ty::Any).nullable().lazy(),
            ];
            let data = Arc::new(Trampoline {
                name: Arc::from(name.as_str()),
                form: if *method {
                    Form::Method
                } else {
                    Form::Function
                },
                base: self.base.clone(),
            });
            if *method {
                r.method(name, params, trampoline).data(data);
            } else {
                r.function(name, params, trampoline).data(data);
            }
        }
        if objects {
            r.function(
                "#attr",
                vec![p("obj", Ty::Check(is_object)), p("name", Ty::Str)],
                object_attr,
            );
            r.function(
                "#indexer",
                vec![p("obj", Ty::Check(is_object)), p("key", Ty::Any).nullable()],
                object_index,
            );
        }
        r.merge_from(&self.base);
        if self.env.options().legacy {
            r.set_any_form(true);
        }
        let options = self.env.options().clone();
        let env = if objects {
            Env::with_host(Arc::new(r), options, Arc::new(ObjectHost))
        } else {
            Env::new(Arc::new(r), options)
        };
        Core {
            env,
            base: self.base.clone(),
            copts: self.copts,
            operators: self.operators.clone(),
        }
    }

    /// Whether the library has a function `name`.
    pub fn has_function(&self, name: &str) -> bool {
        self.base.get(name).is_some()
    }

    /// The evaluation environment.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// Compiles an expression.
    pub fn compile(&self, expr: &str) -> runtime::Result<muranopl::Program> {
        match &self.operators {
            None => muranopl::compile(expr, self.env.registry(), self.copts),
            Some(t) => muranopl::compile_with_operators(expr, self.env.registry(), self.copts, t),
        }
    }

    /// Evaluates `prog` in `root` and drains its lazy parts, the result
    /// bounded by the memory quota as the library's engine bounds it.
    pub fn eval_frame(&self, prog: &muranopl::Program, root: Arc<Frame>) -> runtime::Result<Value> {
        let opts = self.env.options();
        let _budget = runtime::budget::Budget::start(opts.time_budget, opts.max_memory);
        let _rng = runtime::rand::Scope::enter(opts.seed);
        let v = prog.eval_in(&self.env, &root)?;
        check_size(&self.env, &v)?;
        let v = stdlib::finalize(&self.env, v)?;
        check_size(&self.env, &v)?;
        Ok(v)
    }
}

fn check_size(env: &Env, v: &Value) -> runtime::Result<()> {
    let Some(q) = env.options().memory_quota else {
        return Ok(());
    };
    let max = q.max(runtime::DEFAULT_MEMORY_QUOTA);
    if runtime::json::longer_than(v, max) {
        return Err(runtime::Error::new(
            ErrorKind::MemoryQuotaExceededException,
            format!("the result would print longer than {max} bytes"),
        ));
    }
    Ok(())
}

/// What the root frame of an evaluation carries: its dispatcher and the
/// slot of the first Python exception.
struct Scope {
    dispatch: Py<PyAny>,
    failure: Arc<Failure>,
}

/// The root frame's scope for an evaluation dispatching to `dispatch`.
pub fn scope(dispatch: Py<PyAny>, failure: Arc<Failure>) -> runtime::ctx::Scope {
    Arc::new(Scope { dispatch, failure })
}

fn scope_of(ctx: &Arc<Frame>) -> Option<&Scope> {
    ctx.scopes().find_map(|s| s.downcast_ref::<Scope>())
}

/// One name's overload reaching Python.
struct Trampoline {
    name: Arc<str>,
    form: Form,
    base: Arc<Registry>,
}

/// A Python exception as an engine error; the exception itself is kept
/// for the caller.
fn engine_error(py: Python<'_>, failure: &Failure, e: PyErr) -> runtime::Error {
    let kind = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let err = runtime::Error::new(ErrorKind::from_name(kind), e.to_string());
    failure.keep(e);
    err
}

/// An argument given as a value where the overload takes it lazily: the
/// registry wraps it in a constant closure, unwrapped here. A closure
/// the registry made has a bare root of its own and no code the engine
/// compiled or this module made (those belong to an evaluation's frames
/// or describe themselves).
fn unwrap_constant(env: &Env, v: Value) -> Value {
    let made = match &v {
        Value::Lambda(c) => {
            !c.code.is_thunk()
                && c.code.as_any().is_none()
                && c.ctx.parent.is_none()
                && c.ctx.scope.is_none()
                && c.ctx.vars.is_empty()
                && c.ctx.args.len() == 1
                && c.ctx.args[0].is_null()
                && c.code.describe() == "<lambda>"
        }
        _ => false,
    };
    match (&v, made) {
        (Value::Lambda(c), true) => c.call(env, &[]).unwrap_or(v.clone()),
        _ => v,
    }
}

/// An unevaluated argument as the library takes it.
fn arg_in(v: &Value) -> ArgIn {
    match v {
        Value::Lambda(c) if c.code.is_thunk() => ArgIn::Thunk(c.clone()),
        other => ArgIn::Val(other.clone()),
    }
}

fn trampoline(cx: &Cx, mut a: Args) -> runtime::Result<Value> {
    for v in a.rest.iter_mut() {
        *v = unwrap_constant(cx.env, std::mem::replace(v, Value::Null));
    }
    for (_, v) in a.kw.iter_mut() {
        *v = unwrap_constant(cx.env, std::mem::replace(v, Value::Null));
    }
    let Some(t) = cx.data.and_then(|d| d.downcast_ref::<Trampoline>()) else {
        return Err(runtime::Error::new(
            ErrorKind::RuntimeError,
            "a Python function's overload without its name",
        ));
    };
    let fallback = |a: &Args| {
        let pos: Vec<ArgIn> = a.rest.iter().map(arg_in).collect();
        let named: Vec<(Arc<str>, ArgIn)> =
            a.kw.iter().map(|(k, v)| (k.clone(), arg_in(v))).collect();
        t.base.call(cx, &t.name, None, t.form, &pos, &named)
    };
    let Some(scope) = scope_of(cx.ctx) else {
        return fallback(&a);
    };
    let caller = Caller {
        env: cx.env.clone(),
        ctx: cx.ctx.clone(),
        base: t.base.clone(),
        failure: scope.failure.clone(),
    };
    let r = Python::attach(|py| -> PyResult<Option<Value>> {
        let args = PyList::empty(py);
        for v in &a.rest {
            args.append(caller.arg(v.clone()))?;
        }
        let kwargs = PyDict::new(py);
        for (k, v) in &a.kw {
            kwargs.set_item(&**k, caller.arg(v.clone()))?;
        }
        let method = t.form == Form::Method;
        let caller = Py::new(py, caller.clone())?;
        let out = scope
            .dispatch
            .bind(py)
            .call_method1("call", (&*t.name, method, args, kwargs, caller))?;
        let (found, value): (bool, Bound<'_, PyAny>) = out.extract()?;
        if !found {
            return Ok(None);
        }
        ToValue::new(py, scope.failure.clone())
            .value(&value)
            .map(Some)
    });
    match r {
        Ok(Some(v)) => Ok(v),
        Ok(None) => fallback(&a),
        Err(e) => Err(Python::attach(|py| engine_error(py, &scope.failure, e))),
    }
}

/// A yaqlized Python object as an engine value: opaque to YAQL but for
/// what the dispatcher allows (attributes, indexing, methods).
pub struct PyObj {
    /// The object.
    pub obj: Py<PyAny>,
}

impl Invoke for PyObj {
    fn invoke(
        &self,
        _: &Env,
        _: &Arc<Frame>,
        _: &[Value],
        _: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        Err(runtime::Error::new(
            ErrorKind::from_name("TypeError"),
            "a yaqlized object is not callable",
        ))
    }
    fn describe(&self) -> String {
        "<yaqlized object>".into()
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}

/// A yaqlized object as a value.
pub fn object(obj: Py<PyAny>) -> Value {
    Value::Lambda(Arc::new(Closure {
        code: Arc::new(PyObj { obj }),
        ctx: Arc::new(Frame::default()),
    }))
}

/// The yaqlized object `v` is, if it is one.
pub fn as_object(v: &Value) -> Option<&PyObj> {
    match v {
        Value::Lambda(c) => c.code.as_any().and_then(|a| a.downcast_ref::<PyObj>()),
        _ => None,
    }
}

fn is_object(v: &Value) -> bool {
    as_object(v).is_some()
}

/// Asks the dispatcher's `hook` about the yaqlized object `recv`.
fn object_call(
    cx: &Cx,
    hook: &str,
    recv: &Value,
    rest: impl for<'py> FnOnce(Python<'py>, &Caller) -> PyResult<Bound<'py, PyTuple>>,
) -> runtime::Result<Value> {
    let (Some(scope), Some(obj)) = (scope_of(cx.ctx), as_object(recv)) else {
        return Err(runtime::registry::no_matching(hook, Form::Function));
    };
    let caller = Caller {
        env: cx.env.clone(),
        ctx: cx.ctx.clone(),
        base: cx.env.registry().clone(),
        failure: scope.failure.clone(),
    };
    let r = Python::attach(|py| -> PyResult<Value> {
        let extra = rest(py, &caller)?;
        let mut all = vec![obj.obj.clone_ref(py).into_bound(py)];
        all.extend(extra.iter());
        all.push(Py::new(py, caller.clone())?.into_bound(py).into_any());
        let out = scope
            .dispatch
            .bind(py)
            .call_method1(hook, PyTuple::new(py, all)?)?;
        ToValue::new(py, scope.failure.clone()).value(&out)
    });
    r.map_err(|e| Python::attach(|py| engine_error(py, &scope.failure, e)))
}

fn object_attr(cx: &Cx, a: Args) -> runtime::Result<Value> {
    let name = a.str(1).to_string();
    object_call(cx, "attr", a.get(0), |py, _| PyTuple::new(py, [name]))
}

fn object_index(cx: &Cx, a: Args) -> runtime::Result<Value> {
    let key = a.get(1).clone();
    object_call(cx, "index", a.get(0), |py, c| {
        let k = c.arg(key).into_pyobject(py)?.into_any();
        PyTuple::new(py, [k])
    })
}

/// Method calls on yaqlized objects.
struct ObjectHost;

impl Host for ObjectHost {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
    fn may_handle(&self, receiver: &Value, _: &str) -> bool {
        is_object(receiver)
    }
    fn call_method(
        &self,
        cx: &Cx,
        receiver: &Value,
        name: &str,
        pos: &[ArgIn],
        named: &[(Arc<str>, ArgIn)],
    ) -> Option<runtime::Result<Value>> {
        as_object(receiver)?;
        let unforced = |a: &ArgIn| match a {
            ArgIn::Val(v) => v.clone(),
            ArgIn::Thunk(c) => Value::Lambda(c.clone()),
            ArgIn::Skip => Value::Null,
        };
        let name = name.to_string();
        Some(object_call(cx, "method", receiver, |py, c| {
            let args = PyList::empty(py);
            for a in pos {
                args.append(c.arg(unforced(a)))?;
            }
            let kwargs = PyDict::new(py);
            for (k, a) in named {
                kwargs.set_item(&**k, c.arg(unforced(a)))?;
            }
            PyTuple::new(
                py,
                [
                    name.into_pyobject(py)?.into_any(),
                    args.into_any(),
                    kwargs.into_any(),
                ],
            )
        }))
    }
}

/// Where a call happens: what the dispatcher needs to evaluate arguments,
/// read the context and call other functions.
#[pyclass(frozen, module = "muranopl._native")]
#[derive(Clone)]
pub struct Caller {
    env: Env,
    ctx: Arc<Frame>,
    base: Arc<Registry>,
    failure: Arc<Failure>,
}

impl Caller {
    fn arg(&self, value: Value) -> Arg {
        Arg {
            value,
            caller: self.clone(),
        }
    }

    fn py_err(&self, py: Python<'_>, e: &runtime::Error) -> PyErr {
        self.failure
            .take()
            .unwrap_or_else(|| errors::to_py(py, e, None))
    }

    fn values(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyAny>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(Vec<ArgIn>, Vec<(Arc<str>, ArgIn)>)> {
        let mut cv = ToValue::new(py, self.failure.clone());
        let mut pos = Vec::new();
        for a in args.try_iter()? {
            let a = a?;
            pos.push(match a.cast::<Arg>() {
                Ok(arg) => arg_in(&arg.get().value),
                Err(_) => ArgIn::Val(cv.value(&a)?),
            });
        }
        let mut named = Vec::new();
        for (k, v) in kwargs.into_iter().flat_map(|d| d.iter()) {
            let v = match v.cast::<Arg>() {
                Ok(arg) => arg_in(&arg.get().value),
                Err(_) => ArgIn::Val(cv.value(&v)?),
            };
            named.push((Arc::from(k.extract::<String>()?), v));
        }
        Ok((pos, named))
    }

    fn finish(&self, py: Python<'_>, r: runtime::Result<Value>) -> PyResult<Py<PyAny>> {
        match r {
            Ok(v) => to_py(py, &self.env, &v),
            Err(e) => Err(self.py_err(py, &e)),
        }
    }
}

#[pymethods]
impl Caller {
    /// `$` where the call happens.
    fn data(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.env, &self.ctx.arg(1))
    }

    /// `(True, value)` when `$name` is bound where the call happens
    /// (`$1`, `$2`, ... for digits), else `(False, None)`.
    fn var(&self, py: Python<'_>, name: &str) -> PyResult<(bool, Py<PyAny>)> {
        if let Ok(n) = name.parse::<usize>() {
            if n >= 1 {
                return Ok((true, to_py(py, &self.env, &self.ctx.arg(n))?));
            }
        }
        let mut f: Option<&Frame> = Some(&self.ctx);
        while let Some(frame) = f {
            if let Some((_, v)) = frame.vars.iter().rev().find(|(k, _)| &**k == name) {
                return Ok((true, to_py(py, &self.env, v)?));
            }
            f = frame.parent.as_deref();
        }
        Ok((false, py.None()))
    }

    /// Calls the function `name` as YAQL code there would (`receiver`
    /// first for a method): the nearest user function, else the library
    /// with the Python functions. `library`: the library alone.
    #[pyo3(signature = (name, method, args, kwargs = None, library = false))]
    fn call(
        &self,
        py: Python<'_>,
        name: &str,
        method: bool,
        args: &Bound<'_, PyAny>,
        kwargs: Option<&Bound<'_, PyDict>>,
        library: bool,
    ) -> PyResult<Py<PyAny>> {
        let (pos, named) = self.values(py, args, kwargs)?;
        let form = if method { Form::Method } else { Form::Function };
        let r = py.detach(|| {
            let cx = Cx::new(&self.env, &self.ctx);
            if !library {
                if let Some((f, home)) = self.ctx.func_home(name) {
                    let mut vals = Vec::new();
                    for a in &pos {
                        vals.push(match a {
                            ArgIn::Val(v) => v.clone(),
                            ArgIn::Thunk(c) => c.call(&self.env, &[])?,
                            ArgIn::Skip => Value::Null,
                        });
                    }
                    return Frame::call_func(&self.env, &f, &home, &vals, &[]);
                }
            }
            let reg = if library {
                &self.base
            } else {
                self.env.registry()
            };
            reg.call(&cx, name, None, form, &pos, &named)
                .and_then(|v| stdlib::finalize(&self.env, v))
        });
        self.finish(py, r)
    }

    /// Whether the library has an overload of `name` for the call's form
    /// that may take the call's `args` (receiver included; an argument
    /// not evaluated is `known[i] == false` and its value unused): an
    /// overload whose parameters are all plain is bound to the values
    /// when all are known, any other is judged by its arity.
    fn library_has(
        &self,
        py: Python<'_>,
        name: &str,
        method: bool,
        args: Vec<Bound<'_, PyAny>>,
        known: Vec<bool>,
    ) -> PyResult<bool> {
        let form = if method { Form::Method } else { Form::Function };
        let Some(set) = self.base.get(name) else {
            return Ok(false);
        };
        let legacy = self.env.options().legacy;
        let mut values: Option<SmallVec<[Value; 6]>> = None;
        if known.iter().all(|k| *k) {
            let mut cv = ToValue::new(py, self.failure.clone());
            let mut vals = SmallVec::new();
            for a in &args {
                vals.push(cv.value(a)?);
            }
            values = Some(vals);
        }
        let npos = args.len();
        Ok(set.overloads.iter().any(|ov| {
            let form_ok = legacy
                || !matches!(
                    (ov.kind, form),
                    (Kind::Function, Form::Method) | (Kind::Method, Form::Function)
                );
            if !form_ok {
                return false;
            }
            if let (true, Some(vals)) = (ov.is_plain(), &values) {
                return ov.bind_plain(&mut vals.clone(), legacy).is_some();
            }
            let normal = ov.params.iter().filter(|p| p.mode == Mode::Normal);
            let required = normal.clone().filter(|p| p.default.is_none()).count();
            let var = ov.params.iter().any(|p| p.mode == Mode::Var);
            required <= npos && (var || npos <= normal.count())
        }))
    }

    /// The laziness of the library's overloads of `name` for the call's
    /// form whose parameters take `npos` positional arguments (receiver
    /// included) and the keyword arguments `named`: for each, the lazy
    /// positions and names, and whether it takes no keyword arguments.
    fn library_laziness(
        &self,
        name: &str,
        method: bool,
        npos: usize,
        named: Vec<String>,
    ) -> Vec<(Vec<usize>, Vec<String>, bool)> {
        let form = if method { Form::Method } else { Form::Function };
        let legacy = self.env.options().legacy;
        let Some(set) = self.base.get(name) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for ov in &set.overloads {
            if !legacy
                && matches!(
                    (ov.kind, form),
                    (Kind::Function, Form::Method) | (Kind::Method, Form::Function)
                )
            {
                continue;
            }
            let normal: Vec<_> = ov
                .params
                .iter()
                .filter(|p| p.mode == Mode::Normal)
                .collect();
            let var = ov.params.iter().find(|p| p.mode == Mode::Var);
            let kwp = ov.params.iter().find(|p| p.mode == Mode::Kw);
            if npos > normal.len() && var.is_none() {
                continue;
            }
            let mut lazy_named = Vec::new();
            let mut fits = true;
            for n in &named {
                match normal.iter().position(|p| &*p.name == n.as_str()) {
                    Some(i) if i < npos => fits = false,
                    Some(i) => {
                        if normal[i].lazy {
                            lazy_named.push(n.clone());
                        }
                    }
                    None => match kwp {
                        Some(k) => {
                            if k.lazy {
                                lazy_named.push(n.clone());
                            }
                        }
                        None => fits = fits && ov.no_kw,
                    },
                }
            }
            let given = |i: usize| i < npos || named.iter().any(|n| *n == *normal[i].name);
            if !fits || (0..normal.len()).any(|i| !given(i) && normal[i].default.is_none()) {
                continue;
            }
            let lazy_pos = (0..npos)
                .filter(|i| match normal.get(*i) {
                    Some(p) => p.lazy,
                    None => var.is_some_and(|p| p.lazy),
                })
                .collect();
            out.push((lazy_pos, lazy_named, ov.no_kw));
        }
        out
    }

    /// Evaluates `source` (compiled by this engine) in a child of the
    /// calling context, `$` bound to `data` and `vars` as variables.
    #[pyo3(signature = (source, data = None, vars = None))]
    fn eval(
        &self,
        py: Python<'_>,
        source: &str,
        data: Option<&Bound<'_, PyAny>>,
        vars: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let copts = muranopl::CompileOptions {
            legacy: false,
            murano: false,
        };
        let prog = muranopl::compile(source, self.env.registry(), copts)
            .map_err(|e| errors::to_py(py, &e, Some(source)))?;
        let mut cv = ToValue::new(py, self.failure.clone());
        let mut frame = Frame::child(&self.ctx, &[]);
        match data {
            Some(d) => frame.args.push(cv.value(d)?),
            None => frame.args.push(self.ctx.arg(1)),
        }
        for (k, v) in vars.into_iter().flat_map(|d| d.iter()) {
            frame
                .vars
                .push((Arc::from(k.extract::<String>()?), cv.value(&v)?));
        }
        let frame = Arc::new(frame);
        let r = py.detach(|| {
            prog.eval_in(&self.env, &frame)
                .and_then(|v| stdlib::finalize(&self.env, v))
        });
        self.finish(py, r)
    }
}

/// One argument of a call, as the call site passed it: a value, or an
/// expression not yet evaluated.
#[pyclass(frozen, module = "muranopl._native")]
pub struct Arg {
    value: Value,
    caller: Caller,
}

impl Arg {
    fn thunk(&self) -> Option<&Arc<Closure>> {
        match &self.value {
            Value::Lambda(c) if c.code.is_thunk() => Some(c),
            _ => None,
        }
    }
}

#[pymethods]
impl Arg {
    /// The argument's value (its expression evaluated where the call is).
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let env = &self.caller.env;
        let r = match self.thunk() {
            Some(c) => py.detach(|| c.call(env, &[])),
            None => Ok(self.value.clone()),
        };
        self.caller.finish(py, r)
    }

    /// True for a mapping rule `key => value` whose key is not a name.
    fn is_mapping(&self) -> bool {
        matches!(self.value, Value::Pair(_))
    }

    /// A mapping rule's two sides, each as an argument (evaluated when
    /// asked), or `None` for any other argument.
    fn pair(&self) -> Option<(Arg, Arg)> {
        match &self.value {
            Value::Pair(p) => Some((self.caller.arg(p.0.clone()), self.caller.arg(p.1.clone()))),
            _ => None,
        }
    }

    /// The expression as a Python callable (a lazy argument): its
    /// arguments are `$1`, `$2`, ... (`$` the first) and keyword ones
    /// `$name`.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let Some(c) = self.thunk() else {
            // A value passed where an expression was expected: a constant
            // or a delegate.
            return match &self.value {
                Value::Lambda(_) => {
                    let f = to_py(py, &self.caller.env, &self.value)?;
                    f.bind(py).call(args, kwargs).map(|r| r.unbind())
                }
                v => to_py(py, &self.caller.env, v),
            };
        };
        let mut cv = ToValue::new(py, self.caller.failure.clone());
        let pos = args
            .iter()
            .map(|a| cv.value(&a))
            .collect::<PyResult<Vec<_>>>()?;
        let mut kw = Vec::new();
        for (k, v) in kwargs.into_iter().flat_map(|d| d.iter()) {
            kw.push((Arc::from(k.extract::<String>()?), cv.value(&v)?));
        }
        let env = &self.caller.env;
        let r = py.detach(|| {
            c.call_kw(env, &pos, &kw)
                .and_then(|v| stdlib::finalize(env, v))
        });
        self.caller.finish(py, r)
    }

    /// `(True, value)` when the expression is a constant (it evaluates
    /// to the same value with nothing bound and `$` unknown), else
    /// `(False, None)`.
    fn constant(&self, py: Python<'_>) -> PyResult<(bool, Py<PyAny>)> {
        let Some(c) = self.thunk() else {
            return Ok((false, py.None()));
        };
        let env = &self.caller.env;
        let probe = object(py.None());
        let bare = Frame::root(probe);
        let r = py.detach(|| c.code.invoke(env, &bare, &[], &[]));
        match r {
            Ok(v) if !is_object(&v) && !matches!(v, Value::Lambda(_) | Value::Iter(_)) => {
                Ok((true, to_py(py, env, &v)?))
            }
            _ => Ok((false, py.None())),
        }
    }
}
