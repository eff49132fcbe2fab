//! YAQL engines, compiled expressions and lambdas for Python.
//!
//! Every object here is immutable and may be shared between threads. The
//! GIL is released while the engine runs; a Python callable the
//! expression calls takes it back for its own call.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rayon::prelude::*;
use runtime::ctx::Frame;
use runtime::value::Closure;
use runtime::{Env, Options, Value};

use crate::convert::{py_lambda, to_py, Failure, ToValue};
use crate::errors;
use crate::funcs::{self, Core};

/// A YAQL engine: the standard library (yaql 3, or yaql 0.2 when
/// `legacy`) with its limits (`None` lifts one). The grammar is the
/// library's unless `legacy_syntax` says otherwise.
#[pyclass(frozen, module = "muranopl._native")]
pub struct Engine {
    inner: Arc<Core>,
    legacy: bool,
}

#[pymethods]
impl Engine {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        legacy = false,
        limit_iterators = Some(runtime::DEFAULT_LIMIT_ITERATORS),
        memory_quota = Some(runtime::DEFAULT_MEMORY_QUOTA),
        max_memory = Some(runtime::DEFAULT_MAX_MEMORY),
        timeout = Some(runtime::DEFAULT_TIME_BUDGET.as_secs_f64()),
        convert_sets_to_lists = None,
        legacy_syntax = None,
        convert_tuples_to_lists = None,
        operators = None,
    ))]
    fn new(
        py: Python<'_>,
        legacy: bool,
        limit_iterators: Option<usize>,
        memory_quota: Option<usize>,
        max_memory: Option<usize>,
        timeout: Option<f64>,
        convert_sets_to_lists: Option<bool>,
        legacy_syntax: Option<bool>,
        convert_tuples_to_lists: Option<bool>,
        operators: Option<Vec<Option<(String, String, Option<String>)>>>,
    ) -> PyResult<Engine> {
        let time_budget = match timeout {
            None => None,
            Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be a positive number of seconds, not {t}"
                )))
            }
        };
        let options = Options {
            limit_iterators,
            memory_quota,
            max_memory,
            convert_sets_to_lists: convert_sets_to_lists.unwrap_or(!legacy),
            convert_tuples_to_lists: convert_tuples_to_lists.unwrap_or(!legacy),
            legacy,
            time_budget,
            ..Options::default()
        };
        let syntax = legacy_syntax.unwrap_or(legacy);
        let table = match operators {
            None => None,
            Some(records) => Some(Arc::new(operator_table(py, records)?)),
        };
        Ok(Engine {
            inner: Arc::new(Core::new(options, syntax, table)),
            legacy,
        })
    }

    /// This engine with the context's Python functions that need the
    /// reference's calling convention (`functions`: `(name, is_method)`,
    /// resolved by the dispatcher an evaluation passes) and, with
    /// `objects`, yaqlized Python objects (attributes, indexing and
    /// methods through the dispatcher).
    #[pyo3(signature = (functions, objects = false))]
    fn extend(&self, functions: Vec<(String, bool)>, objects: bool) -> Engine {
        Engine {
            inner: Arc::new(self.inner.extend(&functions, objects)),
            legacy: self.legacy,
        }
    }

    /// Compiles `expr`; a syntax error raises `YaqlGrammarException` or
    /// `YaqlLexicalException` with its `.position`.
    fn compile(&self, py: Python<'_>, expr: &str) -> PyResult<Expression> {
        let engine = self.inner.clone();
        let prog = py
            .detach(|| engine.compile(expr))
            .map_err(|e| errors::to_py(py, &e, Some(expr)))?;
        Ok(Expression {
            engine: self.inner.clone(),
            prog: Arc::new(prog),
            source: expr.to_string(),
        })
    }

    /// Whether the library has a function (or operator) `name`.
    fn has_function(&self, name: &str) -> bool {
        self.inner.has_function(name)
    }

    /// True for a yaql 0.2 engine.
    #[getter]
    fn legacy(&self) -> bool {
        self.legacy
    }
}

/// The checked table of the reference's operator records (`None` ends a
/// precedence group; a record is `(symbol, OperatorType name, alias)`).
fn operator_table(
    py: Python<'_>,
    records: Vec<Option<(String, String, Option<String>)>>,
) -> PyResult<muranopl::OpTable> {
    let mut recs = Vec::with_capacity(records.len());
    for r in records {
        recs.push(match r {
            None => None,
            Some((symbol, ty, alias)) => {
                let Some(t) = muranopl::OpType::from_name(&ty) else {
                    return Err(PyValueError::new_err(format!(
                        "unknown operator type {ty:?} for {symbol:?}"
                    )));
                };
                Some((symbol, t, alias))
            }
        });
    }
    muranopl::OpTable::new(&recs).map_err(|e| errors::to_py(py, &e, None))
}

/// A compiled expression, bound to the engine that compiled it.
#[pyclass(frozen, module = "muranopl._native")]
pub struct Expression {
    engine: Arc<Core>,
    prog: Arc<muranopl::Program>,
    source: String,
}

/// What an evaluation binds besides `$`: variables and functions.
struct Bindings {
    vars: Vec<(Arc<str>, Value)>,
    funcs: Vec<(Arc<str>, Py<PyAny>)>,
    /// The variables hold callables.
    calls_python: bool,
    /// Where the variables' callables report.
    failure: Arc<Failure>,
    /// The Python dispatcher of the context's functions and yaqlized
    /// objects (`muranopl.yaql._dispatch.Dispatcher`), if any.
    dispatch: Option<Py<PyAny>>,
}

impl Bindings {
    fn new(
        py: Python<'_>,
        vars: Option<&Bound<'_, PyDict>>,
        funcs: Option<&Bound<'_, PyList>>,
        dispatch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bindings> {
        let failure = Arc::new(Failure::default());
        let mut cv = ToValue::new(py, failure.clone());
        let mut out = Vec::new();
        for (k, v) in vars.into_iter().flat_map(|d| d.iter()) {
            out.push((Arc::from(k.extract::<String>()?), cv.value(&v)?));
        }
        let mut fs = Vec::new();
        for item in funcs.into_iter().flat_map(|l| l.iter()) {
            let (name, f): (String, Bound<'_, PyAny>) = item.extract()?;
            fs.push((Arc::from(name), f.unbind()));
        }
        let dispatch = dispatch.filter(|d| !d.is_none());
        // A dispatcher with functions runs Python code; one for yaqlized
        // objects only does when such an object is in the data (which the
        // conversion notes).
        let dispatches = match dispatch {
            Some(d) => d.getattr(pyo3::intern!(py, "layers"))?.is_truthy()?,
            None => false,
        };
        let dispatch = dispatch.map(|d| d.clone().unbind());
        Ok(Bindings {
            vars: out,
            calls_python: cv.saw_callable || !fs.is_empty() || dispatches,
            funcs: fs,
            failure,
            dispatch,
        })
    }

    /// The root context of one evaluation over `data`, its functions
    /// reporting to `failure`.
    fn root(&self, py: Python<'_>, data: Value, failure: &Arc<Failure>) -> Arc<Frame> {
        let mut root = Frame::default();
        root.args.push(data);
        root.vars.extend(self.vars.iter().cloned());
        for (name, f) in &self.funcs {
            root.funcs
                .push((name.clone(), py_lambda(f.clone_ref(py), failure.clone())));
        }
        root.has_funcs = !root.funcs.is_empty();
        if let Some(d) = &self.dispatch {
            root.scope = Some(funcs::scope(d.clone_ref(py), failure.clone()));
        }
        Arc::new(root)
    }
}

impl Expression {
    /// Runs the expression in `root`, with the GIL released; on the
    /// engine's big stack unless Python code may run inside (Python's own
    /// stack checks expect its thread's stack).
    fn run(&self, root: Arc<Frame>, calls_python: bool) -> runtime::Result<Value> {
        if calls_python {
            self.engine.eval_frame(&self.prog, root)
        } else {
            vm::coro::on_big_stack(|| self.engine.eval_frame(&self.prog, root))
        }
    }

    /// The Python outcome of one evaluation: the callables' first
    /// exception wins over the engine error it caused.
    fn outcome(
        &self,
        py: Python<'_>,
        r: runtime::Result<Value>,
        failures: [&Failure; 2],
    ) -> PyResult<Py<PyAny>> {
        match r {
            Ok(v) => to_py(py, self.engine.env(), &v),
            Err(e) => Err(failures
                .iter()
                .find_map(|f| f.take())
                .unwrap_or_else(|| errors::to_py(py, &e, Some(&self.source)))),
        }
    }
}

#[pymethods]
impl Expression {
    /// Evaluates the expression with `$` bound to `data`, the variables
    /// `vars` (`{"name": value}` for `$name`) and the functions `funcs`
    /// (`[(name, callable)]`). The data's lists are frozen into tuples as
    /// the reference's `evaluate(data)` freezes them, unless `as_given`
    /// (a `$` bound in a context, which the reference leaves alone).
    #[pyo3(signature = (data = None, vars = None, funcs = None, dispatch = None, as_given = false))]
    fn evaluate(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        vars: Option<&Bound<'_, PyDict>>,
        funcs: Option<&Bound<'_, PyList>>,
        dispatch: Option<&Bound<'_, PyAny>>,
        as_given: bool,
    ) -> PyResult<Py<PyAny>> {
        let b = Bindings::new(py, vars, funcs, dispatch)?;
        let failure = Arc::new(Failure::default());
        let cv = ToValue::new(py, failure.clone());
        let mut cv = if as_given { cv } else { cv.freezing() };
        let data = match data {
            Some(d) => cv.value(d)?,
            None => Value::Null,
        };
        let calls_python = b.calls_python || cv.saw_callable;
        let root = b.root(py, data, &failure);
        let r = py.detach(|| self.run(root, calls_python));
        self.outcome(py, r, [&failure, &b.failure])
    }

    /// Evaluates the expression once per item of `items`, on every core.
    /// Returns the results in order; the first failure is raised, or,
    /// with `return_exceptions`, each failure takes its item's place.
    #[pyo3(signature = (items, vars = None, funcs = None, return_exceptions = false, dispatch = None))]
    fn evaluate_many(
        &self,
        py: Python<'_>,
        items: &Bound<'_, PyAny>,
        vars: Option<&Bound<'_, PyDict>>,
        funcs: Option<&Bound<'_, PyList>>,
        return_exceptions: bool,
        dispatch: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyList>> {
        let b = Bindings::new(py, vars, funcs, dispatch)?;
        let mut cv = ToValue::new(py, b.failure.clone()).freezing();
        let mut jobs = Vec::new();
        for item in items.try_iter()? {
            // One failure slot per item: an item's exception is its own.
            let failure = Arc::new(Failure::default());
            cv.set_failure(failure.clone());
            let data = cv.value(&item?)?;
            jobs.push((b.root(py, data, &failure), failure));
        }
        let calls_python = b.calls_python || cv.saw_callable;
        let results: Vec<runtime::Result<Value>> = py.detach(|| {
            jobs.par_iter()
                .map(|(root, _)| self.run(root.clone(), calls_python))
                .collect()
        });
        let out = PyList::empty(py);
        for (r, (_, failure)) in results.into_iter().zip(&jobs) {
            match self.outcome(py, r, [failure, &b.failure]) {
                Ok(v) => out.append(v)?,
                Err(e) if return_exceptions => out.append(e.into_value(py))?,
                Err(e) => return Err(e),
            }
        }
        Ok(out.unbind())
    }

    /// The expression's text.
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    fn __repr__(&self) -> String {
        format!("<muranopl Expression {:?}>", self.source)
    }
}

/// A YAQL lambda returned to Python: calling it runs the lambda with the
/// arguments as `$1`, `$2`, ... (and keyword arguments by name).
#[pyclass(frozen, module = "muranopl._native")]
pub struct Lambda {
    pub(crate) closure: Arc<Closure>,
    pub(crate) env: Env,
}

#[pymethods]
impl Lambda {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let failure = Arc::new(Failure::default());
        let mut cv = ToValue::new(py, failure.clone());
        let pos = args
            .iter()
            .map(|a| cv.value(&a))
            .collect::<PyResult<Vec<_>>>()?;
        let mut kw = Vec::new();
        for (k, v) in kwargs.into_iter().flat_map(|d| d.iter()) {
            kw.push((Arc::from(k.extract::<String>()?), cv.value(&v)?));
        }
        let r = py.detach(|| {
            let opts = self.env.options();
            let _budget = runtime::budget::Budget::start(opts.time_budget, opts.max_memory);
            self.closure
                .call_kw(&self.env, &pos, &kw)
                .and_then(|v| stdlib::finalize(&self.env, v))
        });
        match r {
            Ok(v) => to_py(py, &self.env, &v),
            Err(e) => Err(failure
                .take()
                .unwrap_or_else(|| errors::to_py(py, &e, None))),
        }
    }

    fn __repr__(&self) -> String {
        format!("<muranopl Lambda {}>", self.closure.code.describe())
    }
}
