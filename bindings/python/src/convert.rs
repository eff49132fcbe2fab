//! Python values to engine values and back, with no JSON in between.
//!
//! In: `None`, `bool`, `int` (any size), `float`, `str`, `list`, `tuple`,
//! `dict` (and any mapping), `set`, `frozenset`, `datetime` (a naive one
//! is UTC), `timedelta`, callables (YAQL delegates, `$f(x)`), and any other
//! iterable, which becomes a one-shot lazy sequence (a generator stays
//! lazy). Out: the same types; dictionary keys Python cannot hash come
//! back as `tuple`, `frozenset` or `muranopl.yaql.utils.FrozenDict`.
//!
//! Both directions recurse, so nesting is bounded by [`MAX_DEPTH`]
//! (`RecursionError` past it): a thread's stack, not the engine's, carries
//! them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRecursionError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyMapping, PySet, PyString, PyTuple,
};
use runtime::ctx::Frame;
use runtime::value::{Closure, DateTime, Dict, Invoke, LazySeq, Set, Value};
use runtime::{Env, ErrorKind};

/// The deepest nesting converted in either direction.
pub const MAX_DEPTH: usize = 2000;

/// The first exception a Python callable raised during one evaluation:
/// the engine sees an error of the exception's class name, and the caller
/// gets the exception object itself back.
#[derive(Default)]
pub struct Failure(Mutex<Option<PyErr>>);

impl Failure {
    pub(crate) fn keep(&self, e: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    }
    /// Takes the exception kept, if any.
    pub fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A Python callable as a YAQL function or delegate.
pub struct PyFunc {
    /// The callable.
    pub f: Py<PyAny>,
    /// Where its exceptions go.
    pub failure: Arc<Failure>,
}

impl PyFunc {
    /// Calls the function with `args` (`None`: left out by the call).
    fn call(
        &self,
        env: &Env,
        args: &[Option<Value>],
        kwargs: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        if args.iter().any(|a| matches!(a, Some(Value::Pair(_)))) {
            // `f(2 + 2 => 4)`: a mapping whose key is not a name cannot be
            // a Python keyword argument.
            return Err(runtime::Error::new(
                ErrorKind::from_name("MappingTranslationException"),
                "Cannot convert mapping to keyword argument",
            ));
        }
        Python::attach(|py| {
            let call = || -> PyResult<Value> {
                let mut pos = Vec::with_capacity(args.len());
                let mut skipped = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    match a {
                        Some(v) => pos.push(to_py(py, env, v)?),
                        None => {
                            skipped.push(i);
                            pos.push(py.None());
                        }
                    }
                }
                let kw = PyDict::new(py);
                for (k, v) in kwargs {
                    kw.set_item(&**k, to_py(py, env, v)?)?;
                }
                let r = if skipped.is_empty() {
                    self.f.bind(py).call(PyTuple::new(py, pos)?, Some(&kw))?
                } else {
                    // Python's defaults fill what the call left out.
                    CALL_PARTIAL
                        .import(py, "muranopl.yaql", "_call_partial")?
                        .call1((self.f.bind(py), pos, skipped, kw))?
                };
                ToValue::new(py, self.failure.clone()).value(&r)
            };
            call().map_err(|e| {
                let kind = e
                    .get_type(py)
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "Exception".into());
                let err = runtime::Error::new(ErrorKind::from_name(kind), e.to_string());
                self.failure.keep(e);
                err
            })
        })
    }
}

impl Invoke for PyFunc {
    fn invoke(
        &self,
        env: &Env,
        _ctx: &Arc<Frame>,
        args: &[Value],
        kwargs: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        let args: Vec<Option<Value>> = args.iter().cloned().map(Some).collect();
        self.call(env, &args, kwargs)
    }
    fn invoke_partial(
        &self,
        env: &Env,
        _ctx: &Arc<Frame>,
        args: &[Option<Value>],
        kwargs: &[(Arc<str>, Value)],
    ) -> runtime::Result<Value> {
        self.call(env, args, kwargs)
    }
    fn describe(&self) -> String {
        Python::attach(|py| {
            self.f
                .bind(py)
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "<python callable>".into())
        })
    }
}

/// A YAQL delegate wrapping `f`.
pub fn py_lambda(f: Py<PyAny>, failure: Arc<Failure>) -> Value {
    Value::Lambda(Arc::new(Closure {
        code: Arc::new(PyFunc { f, failure }),
        ctx: Arc::new(Frame::default()),
    }))
}

// Classes and helpers of the standard library and of this package,
// imported once per process and then only read. Safe to share: each is
// set once (PyOnceLock, under the GIL) to a module attribute its module
// never rebinds, holds no per-evaluation state, and no result depends on
// which call imported it first (`MAPPING` is `collections.abc.Mapping`,
// `OPAQUE` this package's wrapper class for values YAQL cannot look into).
static DATETIME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TO_DATETIME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static FROM_DATETIME: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static FROZEN_DICT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CALL_PARTIAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static MAPPING: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
// Set once to `muranopl.yaql.yaqlization.Opaque` and only read after:
// a class object, the same for every call and thread (see above).
static OPAQUE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The state of one conversion into engine values.
pub struct ToValue<'py> {
    py: Python<'py>,
    /// Decoded strings by the address of the `str` object: the keys of a
    /// list of dicts are the same few objects (`json.load` shares them).
    /// The objects outlive the conversion (the caller holds the data).
    keys: HashMap<usize, Arc<String>, rustc_hash::FxBuildHasher>,
    failure: Arc<Failure>,
    /// True once a callable or a Python iterator was met: the evaluation
    /// may run Python code.
    pub saw_callable: bool,
    depth: usize,
    /// Lists become tuples, as the reference's `convert_input_data` makes
    /// them of the data an expression is evaluated on.
    freeze: bool,
}

impl<'py> ToValue<'py> {
    /// A conversion whose callables report to `failure`.
    pub fn new(py: Python<'py>, failure: Arc<Failure>) -> Self {
        ToValue {
            py,
            keys: HashMap::default(),
            failure,
            saw_callable: false,
            depth: 0,
            freeze: false,
        }
    }

    /// A conversion of the data an expression is evaluated on: its lists
    /// are frozen into tuples, as the reference freezes them (they read
    /// as the same lists; an engine whose `yaql.convertTuplesToLists` is
    /// off returns them as tuples). Values given any other way (context
    /// variables, function results) stay as they are.
    pub fn freezing(mut self) -> Self {
        self.freeze = true;
        self
    }

    /// Uses another failure slot for the callables converted from now on.
    pub fn set_failure(&mut self, failure: Arc<Failure>) {
        self.failure = failure;
    }

    fn key(&mut self, s: &Bound<'py, PyString>) -> PyResult<Value> {
        let addr = s.as_ptr() as usize;
        if let Some(k) = self.keys.get(&addr) {
            return Ok(Value::Str(k.clone()));
        }
        let k = Arc::new(s.to_cow()?.into_owned());
        self.keys.insert(addr, k.clone());
        Ok(Value::Str(k))
    }

    /// Converts one Python value.
    pub fn value(&mut self, o: &Bound<'py, PyAny>) -> PyResult<Value> {
        if o.is_none() {
            return Ok(Value::Null);
        }
        if let Ok(s) = o.cast_exact::<PyString>() {
            return Ok(Value::str(s.to_cow()?.into_owned()));
        }
        if let Ok(b) = o.cast_exact::<PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if let Ok(i) = o.cast::<PyInt>() {
            return int(i);
        }
        if let Ok(f) = o.cast::<PyFloat>() {
            return Ok(Value::float(f.value()));
        }
        if let Ok(s) = o.cast::<PyString>() {
            return Ok(Value::str(s.to_cow()?.into_owned()));
        }
        // The depth goes back down on every return, the error's too: each
        // level above this one subtracts its own.
        if self.depth >= MAX_DEPTH {
            return Err(PyRecursionError::new_err(format!(
                "the data is nested deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth += 1;
        let r = self.container(o);
        self.depth -= 1;
        r
    }

    fn container(&mut self, o: &Bound<'py, PyAny>) -> PyResult<Value> {
        if let Ok(d) = o.cast::<PyDict>() {
            let mut out = Dict::with_capacity_and_hasher(d.len(), Default::default());
            for (k, v) in d.iter() {
                let k = match k.cast_exact::<PyString>() {
                    Ok(s) => self.key(s)?,
                    Err(_) => self.value(&k)?,
                };
                out.insert(k, self.value(&v)?);
            }
            return Ok(Value::dict(out));
        }
        if let Ok(l) = o.cast::<PyList>() {
            let items = l.iter().map(|x| self.value(&x)).collect::<PyResult<_>>()?;
            return Ok(if self.freeze {
                Value::tuple(items)
            } else {
                Value::list(items)
            });
        }
        if let Ok(t) = o.cast::<PyTuple>() {
            let items = t.iter().map(|x| self.value(&x)).collect::<PyResult<_>>()?;
            return Ok(Value::tuple(items));
        }
        if let Ok(s) = o.cast::<PySet>() {
            return self.set(s.iter());
        }
        if let Ok(s) = o.cast::<PyFrozenSet>() {
            return self.set(s.iter());
        }
        let py = self.py;
        if o.is_instance(DATETIME.import(py, "datetime", "datetime")?)? {
            let conv = FROM_DATETIME.import(py, "muranopl._convert", "from_datetime")?;
            let (micros, offset): (i64, i32) = conv.call1((o,))?.extract()?;
            return Ok(Value::DateTime(Arc::new(DateTime { micros, offset })));
        }
        if o.is_instance(TIMEDELTA.import(py, "datetime", "timedelta")?)? {
            let days: i64 = o.getattr("days")?.extract()?;
            let secs: i64 = o.getattr("seconds")?.extract()?;
            let micros: i64 = o.getattr("microseconds")?.extract()?;
            return Ok(Value::TimeSpan((days * 86_400 + secs) * 1_000_000 + micros));
        }
        if o.hasattr(pyo3::intern!(py, "__yaqlization__"))? {
            // A yaqlized object stays itself (see `crate::funcs`).
            self.saw_callable = true;
            return Ok(crate::funcs::object(o.clone().unbind()));
        }
        if o.is_instance(MAPPING.import(py, "collections.abc", "Mapping")?)? {
            let m = o.cast::<PyMapping>()?;
            let mut out = Dict::default();
            for item in m.items()?.iter() {
                let (k, v): (Bound<PyAny>, Bound<PyAny>) = item.extract()?;
                out.insert(self.value(&k)?, self.value(&v)?);
            }
            return Ok(Value::dict(out));
        }
        if o.hasattr("__index__")? {
            // Integers that are not `int` (numpy's, for one).
            return int(o.call_method0("__index__")?.cast::<PyInt>()?);
        }
        if o.is_callable() {
            self.saw_callable = true;
            return Ok(py_lambda(o.clone().unbind(), self.failure.clone()));
        }
        if let Ok(it) = o.try_iter() {
            self.saw_callable = true;
            return Ok(lazy(it.into_any().unbind(), self.failure.clone()));
        }
        Err(PyTypeError::new_err(format!(
            "cannot use a value of type {} in YAQL",
            o.get_type().name()?
        )))
    }

    fn set(&mut self, items: impl Iterator<Item = Bound<'py, PyAny>>) -> PyResult<Value> {
        let mut out = Set::default();
        for x in items {
            out.insert(self.value(&x)?);
        }
        Ok(Value::set(out))
    }
}

fn int(i: &Bound<'_, PyInt>) -> PyResult<Value> {
    if let Ok(n) = i.extract::<i64>() {
        return Ok(Value::Int(n));
    }
    let b: num_bigint::BigInt = i.extract()?;
    Ok(Value::from_bigint(b))
}

/// A Python iterator as a one-shot lazy sequence: each element is pulled
/// (and converted) when the engine asks for it.
fn lazy(it: Py<PyAny>, failure: Arc<Failure>) -> Value {
    let next = move || -> Option<runtime::Result<Value>> {
        Python::attach(|py| {
            let it = it.bind(py);
            let step = || -> PyResult<Option<Value>> {
                match it.call_method0("__next__") {
                    Ok(x) => ToValue::new(py, failure.clone()).value(&x).map(Some),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) => Ok(None),
                    Err(e) => Err(e),
                }
            };
            match step() {
                Ok(x) => x.map(Ok),
                Err(e) => {
                    let err = runtime::Error::new(ErrorKind::RuntimeError, e.to_string());
                    failure.keep(e);
                    Some(Err(err))
                }
            }
        })
    };
    Value::Iter(LazySeq::new(Box::new(std::iter::from_fn(next))))
}

/// Converts an engine value to Python. `env` drains lazy sequences (a
/// result is drained before it gets here; a delegate's arguments may not
/// be).
pub fn to_py(py: Python<'_>, env: &Env, v: &Value) -> PyResult<Py<PyAny>> {
    Out { py, env, depth: 0 }.value(v)
}

struct Out<'a, 'py> {
    py: Python<'py>,
    env: &'a Env,
    depth: usize,
}

impl Out<'_, '_> {
    fn value(&mut self, v: &Value) -> PyResult<Py<PyAny>> {
        let py = self.py;
        Ok(match v {
            Value::Null => py.None(),
            Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
            Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
            Value::BigInt(b) => (**b).clone().into_pyobject(py)?.into_any().unbind(),
            Value::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
            Value::Str(s) => PyString::new(py, s).into_any().unbind(),
            Value::TimeSpan(us) => TIMEDELTA
                .import(py, "datetime", "timedelta")?
                .call1((0, 0, *us))?
                .unbind(),
            Value::DateTime(d) => TO_DATETIME
                .import(py, "muranopl._convert", "to_datetime")?
                .call1((d.micros, d.offset))?
                .unbind(),
            Value::Lambda(c) => lambda_to_py(py, self.env, c)?,
            Value::Object(o) => tagged(py, "$object", |d| {
                d.set_item("id", &*o.id)?;
                d.set_item("type", &*o.class)
            })?,
            Value::Type(t) => {
                let d = PyDict::new(py);
                d.set_item("$type", &*t.name)?;
                d.into_any().unbind()
            }
            Value::Context(_) => tagged(py, "$context", |_| Ok(()))?,
            _ => self.nested(v)?,
        })
    }

    fn nested(&mut self, v: &Value) -> PyResult<Py<PyAny>> {
        if self.depth >= MAX_DEPTH {
            return Err(PyRecursionError::new_err(format!(
                "the result is nested deeper than {MAX_DEPTH} levels"
            )));
        }
        // Back down on every return, an error's too.
        self.depth += 1;
        let out = self.items(v);
        self.depth -= 1;
        out
    }

    /// A container's items, converted.
    fn items(&mut self, v: &Value) -> PyResult<Py<PyAny>> {
        let py = self.py;
        let out = match v {
            Value::List(l) if l.is_tuple() && !self.env.options().convert_tuples_to_lists => {
                let items = l
                    .iter()
                    .map(|x| self.value(x))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?.into_any().unbind()
            }
            Value::List(l) => self.list(l)?,
            Value::Dict(d) => {
                let out = PyDict::new(py);
                for (k, x) in d.iter() {
                    out.set_item(self.key(k)?, self.value(x)?)?;
                }
                out.into_any().unbind()
            }
            Value::Set(s) => {
                let items = s
                    .iter()
                    .map(|x| self.key(x))
                    .collect::<PyResult<Vec<_>>>()?;
                PyFrozenSet::new(py, &items)?.into_any().unbind()
            }
            Value::Iter(_) => {
                let items = runtime::seq::to_vec(self.env, v)
                    .map_err(|e| crate::errors::to_py(py, &e, None))?;
                self.list(&items)?
            }
            Value::Pair(p) => {
                let (a, b) = (self.value(&p.0)?, self.value(&p.1)?);
                PyTuple::new(py, [a, b])?.into_any().unbind()
            }
            _ => unreachable!("scalars are converted by Out::value"),
        };
        Ok(out)
    }

    fn list(&mut self, items: &[Value]) -> PyResult<Py<PyAny>> {
        let items = items
            .iter()
            .map(|x| self.value(x))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(self.py, items)?.into_any().unbind())
    }

    /// A value as a dictionary key or set element: lists become tuples,
    /// dictionaries `FrozenDict`s and sets `frozenset`s, as yaql's frozen
    /// input data are.
    fn key(&mut self, v: &Value) -> PyResult<Py<PyAny>> {
        let py = self.py;
        Ok(match v {
            Value::List(l) => {
                let items = l
                    .iter()
                    .map(|x| self.key(x))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?.into_any().unbind()
            }
            Value::Dict(_) => {
                let d = self.nested(v)?;
                FROZEN_DICT
                    .import(py, "muranopl.yaql.utils", "FrozenDict")?
                    .call1((d,))?
                    .unbind()
            }
            _ => self.value(v)?,
        })
    }
}

fn tagged(
    py: Python<'_>,
    tag: &str,
    fill: impl FnOnce(&Bound<'_, PyDict>) -> PyResult<()>,
) -> PyResult<Py<PyAny>> {
    let inner = PyDict::new(py);
    fill(&inner)?;
    let d = PyDict::new(py);
    d.set_item(tag, inner)?;
    Ok(d.into_any().unbind())
}

/// A YAQL lambda returned to Python: the Python callable it wraps, or a
/// callable object that runs the lambda.
fn lambda_to_py(py: Python<'_>, env: &Env, c: &Arc<Closure>) -> PyResult<Py<PyAny>> {
    if let Some(o) = crate::funcs::as_object(&Value::Lambda(c.clone())) {
        // An object a yaqlized one returned comes back as itself, out of
        // the wrapper that kept it opaque.
        let obj = o.obj.bind(py);
        let opaque = OPAQUE.import(py, "muranopl.yaql.yaqlization", "Opaque")?;
        if obj.is_instance(opaque)? {
            return Ok(obj.getattr("obj")?.unbind());
        }
        return Ok(o.obj.clone_ref(py));
    }
    Ok(Py::new(
        py,
        crate::yaql::Lambda {
            closure: c.clone(),
            env: env.clone(),
        },
    )?
    .into_any())
}
