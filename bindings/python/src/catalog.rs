//! MuranoPL packages for Python: load once, then validate object models,
//! generate form schemas, run models in the simulated cloud and run the
//! packages' MuranoPL tests. The `muranopl.Catalog` class wraps this one
//! and turns its tuples into named results (`validate_many` makes them
//! itself, given the class). `validate_objects` and `validate_many` read
//! records in place with a class's contract plan ([`crate::plan`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use muranopl::{Catalogue, Limits, Suite};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;
use runtime::{json as tj, Value};

use crate::blocks::Blocks;
use crate::convert::{to_py, Failure, ToValue};
use crate::errors;
use crate::many::{self, check_model as check, value_only, Checked};
use crate::memo::{self, Memo};
use crate::plan::PyPlan;
use crate::pool::{GcPause, Pool};
use crate::view::Layout;

/// How many objects make a batch worth compiling a class's contracts for
/// now (as the JIT's automatic mode would after as many uses).
fn jit_hot() -> usize {
    runtime::JitMode::HOT as usize
}

/// `(property, message)` of each violation of an object checked in place.
type Found = runtime::Result<Vec<(String, String)>>;

/// Checks `v` as an object of `class`, without the properties `skip`
/// names (shown to pass, left null).
fn check_object(
    ex: &engine::Executor,
    class: &Arc<engine::Class>,
    v: &Value,
    skip: &[Value],
) -> Found {
    match v {
        Value::Dict(d) => {
            let skip: Vec<&Value> = skip.iter().collect();
            let found = engine::model::check_properties_except(ex, class, d, &skip)?;
            Ok(found
                .into_iter()
                .map(|(p, e)| (p.to_string(), e.message().to_string()))
                .collect())
        }
        other => Ok(vec![(
            String::new(),
            format!("an object must be a dict, not {}", other.type_name()),
        )]),
    }
}

/// Checks `values` as objects of `class`, on every core, in order, each
/// without the properties its keys name (shown to pass, left null).
fn check_objects(
    catalog: Arc<engine::Catalog>,
    class: Arc<engine::Class>,
    values: Vec<(Value, Vec<Value>)>,
) -> Vec<Found> {
    // Each core takes its share of the values, and drops it.
    let size = values.len().div_ceil(rayon::current_num_threads()).max(1);
    let mut shares = Vec::new();
    let mut values = values.into_iter();
    loop {
        let share: Vec<_> = values.by_ref().take(size).collect();
        if share.is_empty() {
            break;
        }
        shares.push(share);
    }
    shares
        .into_par_iter()
        .flat_map_iter(|share| {
            let ex = engine::Executor::with_catalog(catalog.clone());
            let class = class.clone();
            share
                .into_iter()
                .map(move |(v, skip)| check_object(&ex, &class, &v, &skip))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Packages and their compiled classes, shared by every call.
#[pyclass(frozen, module = "muranopl._native")]
pub struct Catalog {
    inner: Arc<Catalogue>,
}

impl Catalog {
    /// `validate_objects` without a plan: every object converted, then
    /// checked on every core.
    fn validate_objects_converted(
        &self,
        py: Python<'_>,
        class_name: &str,
        objects: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyList>> {
        let mut cv = ToValue::new(py, Arc::new(Failure::default()));
        let values = objects
            .try_iter()?
            .map(|o| Ok((cv.value(&o?)?, Vec::new())))
            .collect::<PyResult<Vec<_>>>()?;
        let catalog = self.inner.catalog().clone();
        let class = catalog
            .class(class_name)
            .map_err(|e| errors::to_py(py, &e, None))?;
        value_only(&class).map_err(|p| {
            PyValueError::new_err(format!(
                "{class_name}.{p}: its contract needs more than the value \
                 (other objects or the execution); validate models instead"
            ))
        })?;
        let checked = py.detach(move || check_objects(catalog, class, values));
        let out = PyList::empty(py);
        for found in checked {
            out.append(found.map_err(|e| errors::to_py(py, &e, None))?)?;
        }
        Ok(out.unbind())
    }
}

fn model_value(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(text) = model.extract::<String>() {
        return tj::from_tagged_str(&text).map_err(|e| errors::to_py(py, &e, None));
    }
    ToValue::new(py, Arc::new(Failure::default())).value(model)
}

fn json_to_py(py: Python<'_>, j: &serde_json::Value) -> PyResult<Py<PyAny>> {
    let v = tj::from_tagged(j).map_err(|e| errors::to_py(py, &e, None))?;
    to_py(py, &empty_env(), &v)
}

fn empty_env() -> runtime::Env {
    runtime::Env::new(Arc::new(runtime::Registry::new()), Default::default())
}

/// One violation as `validate_many` gives it (before `violation` makes
/// it an object).
type Found4 = (String, String, String, Option<String>);

/// Where a model of `validate_many` the plan did not show valid stands
/// once every model is read.
enum State<'py> {
    /// The same as model `.0` (kept for the full way, should that one's
    /// quick check stop on an error).
    Same(usize, Bound<'py, PyAny>),
    /// Checked on the pool (kept likewise).
    Pooled(Bound<'py, PyAny>),
}

/// What `validate_many` answers for a model the plan did not show valid,
/// before its result is made.
enum Answer {
    /// A list of its own with the violations of model `.0`'s.
    Copy(usize),
    /// Its violations, or the error that stopped its validation.
    Found(Checked),
    /// It could not be converted: raised in its turn.
    Raise(PyErr),
}

/// The list of violations `found`, each made by `violation` (else a
/// tuple); equal ones (most of a batch's, which repeat a few messages)
/// are one object, made once and kept in `made` (violations are
/// immutable).
fn violations<'py>(
    py: Python<'py>,
    found: Vec<Found4>,
    violation: Option<&Bound<'py, PyAny>>,
    made: &mut HashMap<Found4, Bound<'py, PyAny>, rustc_hash::FxBuildHasher>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for x in found {
        let made = match made.get(&x) {
            Some(o) => o.clone(),
            None => {
                let o = match violation {
                    Some(f) => f.call1(x.clone())?,
                    None => x.clone().into_pyobject(py)?.into_any(),
                };
                made.insert(x, o.clone());
                o
            }
        };
        list.append(made)?;
    }
    Ok(list)
}

/// A list of its own with the items of `l` (one copy in C).
fn copy<'py>(l: &Bound<'py, PyList>) -> Bound<'py, PyList> {
    l.get_slice(0, l.len())
}

impl Catalog {
    /// The answer of each model the plan did not show valid, by index,
    /// in order, from its state (`states`, by index, in order, of `n`
    /// models) and the pool's results (`done`, likewise); the other
    /// models are valid. A model the same as an
    /// earlier one whose quick check answered gets a copy of that answer;
    /// one whose quick check stopped on an error (or the same as such a
    /// one) the full way's, run here.
    fn answers(
        &self,
        py: Python<'_>,
        n: usize,
        states: Vec<(usize, State<'_>)>,
        done: Vec<(usize, Option<Checked>)>,
    ) -> Vec<(usize, Answer)> {
        let full = |m: &Bound<'_, PyAny>| match model_value(py, m) {
            Ok(v) => {
                let inner = self.inner.clone();
                Answer::Found(py.detach(|| check(&inner, &v)))
            }
            Err(e) => Answer::Raise(e),
        };
        let mut done = done.into_iter().peekable();
        let mut answers = Vec::new();
        // Whether each model's answer is a quick check's (or a copy of
        // one): only such an answer is copied.
        let mut quick = vec![false; n];
        for (i, s) in states {
            let (a, q) = match s {
                State::Same(first, _) if quick[first] => (Answer::Copy(first), true),
                State::Same(_, m) => (full(&m), false),
                State::Pooled(m) => match done.next_if(|(j, _)| *j == i) {
                    Some((_, Some(c))) => {
                        let q = c.is_ok();
                        (Answer::Found(c), q)
                    }
                    Some((_, None)) | None => (full(&m), false),
                },
            };
            answers.push((i, a));
            quick[i] = q;
        }
        answers
    }
}

#[pymethods]
impl Catalog {
    /// Loads the packages `paths` (directories or .zip files) with what
    /// they require from `search_path`; with no paths, every package on
    /// the search path.
    #[staticmethod]
    #[pyo3(signature = (paths, search_path = Vec::new()))]
    fn load(py: Python<'_>, paths: Vec<PathBuf>, search_path: Vec<PathBuf>) -> PyResult<Catalog> {
        let loaded = py.detach(|| Catalogue::load_served(&paths, &search_path, None));
        match loaded {
            Ok(c) => Ok(Catalog { inner: Arc::new(c) }),
            Err(e) => Err(PyValueError::new_err(e)),
        }
    }

    /// `name/version` of every package loaded.
    fn packages(&self) -> Vec<String> {
        self.inner.names()
    }

    /// The violations of one object model (a dict, or JSON text).
    fn validate(
        &self,
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<(String, String, String, Option<String>)>> {
        let model = model_value(py, model)?;
        let inner = self.inner.clone();
        py.detach(|| check(&inner, &model))
            .map_err(|e| errors::to_py(py, &e, None))
    }

    /// The violations of each model, on every core, in order. A model
    /// that cannot be loaded raises, or with `return_exceptions` takes its
    /// place as the exception. With `violation`, each violation is
    /// `violation(path, property, message, position)`, else that tuple.
    /// A model of one object of a class checked in place (see
    /// `validate_objects`) is: what its class's compiled contracts show
    /// valid is not converted at all.
    #[pyo3(signature = (models, return_exceptions = false, violation = None))]
    fn validate_many(
        &self,
        py: Python<'_>,
        models: &Bound<'_, PyAny>,
        return_exceptions: bool,
        violation: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyList>> {
        let many = models.len().map_or(true, |n| n >= jit_hot());
        let mut quick = many::Models::new(py, &self.inner, many);
        let mut cv = ToValue::new(py, Arc::new(Failure::default()));
        // What the plan cannot pass is checked on the pool while the next
        // models are read: `None` when a quick check stopped on an error.
        let (inner, catalog) = (self.inner.clone(), self.inner.catalog().clone());
        let mut pool = Pool::new(move |batch: Vec<(usize, many::Job)>| {
            let ex = engine::Executor::with_catalog(catalog.clone());
            (batch.into_iter())
                .map(|(i, job)| (i, job.run(&inner, &ex)))
                .collect()
        });
        let mut memo = Memo::default();
        // The models the plan did not show valid, by index, in order.
        let (mut states, mut n) = (Vec::new(), 0);
        // Read in blocks, each walked on every core first.
        let mut blocks = Blocks::new(models)?;
        while blocks.next()? {
            let walked = quick.walk(&blocks);
            for j in 0..blocks.len() {
                let i = n;
                n += 1;
                let walked = walked.get(j).copied().flatten();
                if walked.is_some_and(|(k, p)| quick.valid(k, &p)) {
                    continue;
                }
                let m = blocks.get(j);
                let state = match quick.quick(&mut cv, &m, i, walked)? {
                    many::Quick::Valid => continue,
                    many::Quick::Same(earlier) => State::Same(earlier, m),
                    many::Quick::Check(class, v, skip, passed, pure) => {
                        let kind = Arc::as_ptr(&class) as usize;
                        match pure.then(|| memo.seen(kind, passed, &v, i)).flatten() {
                            Some(earlier) => State::Same(earlier, m),
                            None => {
                                pool.push(i, many::Job::Quick(class, v, skip));
                                State::Pooled(m)
                            }
                        }
                    }
                    many::Quick::Full => {
                        pool.push(i, many::Job::Full(model_value(py, &m)?));
                        State::Pooled(m)
                    }
                };
                states.push((i, state));
            }
        }
        let mut done = pool.finish(py);
        done.sort_unstable_by_key(|(i, _)| *i);
        let mut answers = self.answers(py, n, states, done).into_iter().peekable();
        let _paused = GcPause::new(py)?;
        let mut out: Vec<Bound<'_, PyAny>> = Vec::with_capacity(n);
        let mut made = HashMap::default();
        for i in 0..n {
            let Some((_, a)) = answers.next_if(|(j, _)| *j == i) else {
                out.push(PyList::empty(py).into_any());
                continue;
            };
            out.push(match a {
                Answer::Copy(first) => copy(out[first].cast::<PyList>()?).into_any(),
                Answer::Raise(e) => return Err(e),
                Answer::Found(Ok(v)) => violations(py, v, violation, &mut made)?.into_any(),
                Answer::Found(Err(e)) if return_exceptions => errors::to_py(py, &e, None)
                    .into_value(py)
                    .into_bound(py)
                    .into_any(),
                Answer::Found(Err(e)) => return Err(errors::to_py(py, &e, None)),
            });
        }
        Ok(PyList::new(py, out)?.unbind())
    }

    /// The contract violations of each of `objects` (property values, as
    /// an object definition holds them, without `?`) as an instance of
    /// `class_name`, on every core, in order: `(property, message)` per
    /// violation. For classes whose property contracts need only the
    /// values (no `$this`, no other object): the objects are checked in
    /// place, not loaded into a model. An object that is not a dict is
    /// reported as such. Objects the compiled contracts show to be valid
    /// are read in place, under the GIL, and not converted at all.
    fn validate_objects(
        &self,
        py: Python<'_>,
        class_name: &str,
        objects: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyList>> {
        let catalog = self.inner.catalog().clone();
        let class = catalog.class(class_name).ok();
        let plan = class
            .as_ref()
            .filter(|c| value_only(c).is_ok())
            .and_then(|c| {
                let ex = engine::Executor::with_catalog(catalog.clone());
                let many = objects.len().map_or(true, |n| n >= jit_hot());
                engine::contracts::plan::ObjectPlan::of(&ex, c, many)
            })
            .map(|p| PyPlan::new(py, p));
        let (Some(class), Some(plan)) = (class, plan) else {
            return self.validate_objects_converted(py, class_name, objects);
        };
        let pure = memo::pure(&class);
        // Each object: valid as the plan shows, or converted for the
        // checker (in order: the first that cannot be converted raises),
        // without the values of the properties the plan shows to pass,
        // and checked on the pool while the next objects are read.
        let mut pool = Pool::new(move |batch: Vec<(usize, (Value, Vec<Value>))>| {
            let ex = engine::Executor::with_catalog(catalog.clone());
            (batch.into_iter())
                .map(|(i, (v, skip))| (i, check_object(&ex, &class, &v, &skip)))
                .collect()
        });
        let mut cv = ToValue::new(py, Arc::new(Failure::default()));
        let mut memo = pure.then(Memo::default);
        let mut failed = pure.then(memo::Failed::default);
        let mut same = Vec::new();
        let mut n = 0;
        let mut plan = plan;
        let (threads, layout) = (rayon::current_num_threads(), Layout::of(py));
        // Read in blocks, each walked on every core first.
        let mut blocks = Blocks::new(objects)?;
        while blocks.next()? {
            if n == 0 && blocks.len() > 0 {
                plan.adopt(&blocks.get(0));
            }
            let walked = plan.walk(&blocks, threads, layout);
            for (j, walked) in walked.into_iter().enumerate() {
                if walked.is_some_and(|p| p.all) {
                    n += 1;
                    continue;
                }
                let o = blocks.get(j);
                let passing = walked.or_else(|| plan.passing(&o, 0));
                if let (Some(p), Some(f)) = (passing, failed.as_mut()) {
                    let first = (!p.all)
                        .then(|| plan.failing_value(&o, &p))
                        .flatten()
                        .and_then(|(prop, v)| f.seen(0, p.bits(), prop, v.as_ref(), n));
                    if let Some(first) = first {
                        same.push((n, first));
                        n += 1;
                        continue;
                    }
                }
                let job = match passing {
                    Some(p) if p.all => None,
                    Some(p) => Some((plan.partial(&mut cv, &o, &p, false)?, Some(p))),
                    None => Some((cv.value(&o)?, None)),
                };
                if let Some((v, p)) = job {
                    let passed = p.map_or(0, |p| p.bits());
                    match memo.as_mut().and_then(|m| m.seen(0, passed, &v, n)) {
                        Some(first) => same.push((n, first)),
                        None => pool.push(n, (v, p.map(|p| plan.skip(&p)).unwrap_or_default())),
                    }
                }
                n += 1;
            }
        }
        // The checker's answers, by index, in order; a record the same as
        // an earlier one (`same`, in order) gets a list of its own with
        // the earlier one's violations (immutable tuples) in it; any other
        // record is valid.
        let mut found = pool.finish(py);
        found.sort_unstable_by_key(|(i, _)| *i);
        let (mut found, mut same) = (found.into_iter().peekable(), same.into_iter().peekable());
        let _paused = GcPause::new(py)?;
        let mut out: Vec<Bound<'_, PyList>> = Vec::with_capacity(n);
        for i in 0..n {
            out.push(if let Some((_, first)) = same.next_if(|(j, _)| *j == i) {
                copy(&out[first])
            } else if let Some((_, f)) = found.next_if(|(j, _)| *j == i) {
                let f = f.map_err(|e| errors::to_py(py, &e, None))?;
                PyList::new(py, f)?
            } else {
                PyList::empty(py)
            });
        }
        Ok(PyList::new(py, out)?.unbind())
    }

    /// The JSON Schemas of a class and its model builders, or of the
    /// named methods, as Murano's `generate_schema` makes them.
    #[pyo3(signature = (class_name, methods = None, class_version = None, package = None))]
    fn schema(
        &self,
        py: Python<'_>,
        class_name: &str,
        methods: Option<Vec<String>>,
        class_version: Option<&str>,
        package: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let inner = self.inner.clone();
        let out =
            py.detach(|| inner.schema(class_name, methods.as_deref(), class_version, package));
        let list = out.map_err(|e| errors::to_py(py, &e, None))?;
        let body = serde_json::Value::Object(
            list.into_iter()
                .map(|(n, v)| {
                    (
                        n,
                        serde_json::from_str(&tj::to_tagged_string(&v)).unwrap_or_default(),
                    )
                })
                .collect(),
        );
        json_to_py(py, &body)
    }

    /// Loads `model` into a fresh execution over the catalogue with its
    /// own simulated cloud (configured by the JSON or YAML text `cloud`)
    /// and runs `method` on its root. Returns a dict: `ok`, `value`,
    /// `error` (`kind`, `message`, `trace`), `model` (the object model
    /// after the run) and `record` (what the cloud saw, and the log).
    #[pyo3(signature = (model, method = "deploy", cloud = None))]
    fn run(
        &self,
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        method: &str,
        cloud: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let model = model_value(py, model)?;
        let session = self.inner.session();
        if let Some(text) = cloud {
            session
                .cloud()
                .configure(text, "<cloud>")
                .map_err(|e| errors::to_py(py, &e, None))?;
        }
        let outcome = py.detach(|| session.run_method(&model, method, Limits::default()));
        let out = PyDict::new(py);
        let env = empty_env();
        out.set_item("ok", outcome.result.is_ok())?;
        match &outcome.result {
            Ok(v) => {
                out.set_item("value", to_py(py, &env, v)?)?;
                out.set_item("error", py.None())?;
            }
            Err(e) => {
                out.set_item("value", py.None())?;
                let err = PyDict::new(py);
                err.set_item("kind", e.kind())?;
                err.set_item("message", e.message())?;
                err.set_item("trace", e.trace())?;
                out.set_item("error", err)?;
            }
        }
        let model = match &outcome.model {
            Some(m) => to_py(py, &env, m)?,
            None => py.None(),
        };
        out.set_item("model", model)?;
        let record = to_py(py, &env, &session.record())?;
        record.bind(py).set_item("log", outcome.log)?;
        out.set_item("record", record)?;
        Ok(out.into_any().unbind())
    }
}

/// A package's MuranoPL tests (murano-test-runner).
#[pyclass(frozen, module = "muranopl._native")]
pub struct TestSuite {
    inner: Arc<Suite>,
}

#[pymethods]
impl TestSuite {
    /// Loads the package at `path` with what it requires from
    /// `search_path`.
    #[new]
    #[pyo3(signature = (path, search_path = Vec::new()))]
    fn new(py: Python<'_>, path: PathBuf, search_path: Vec<PathBuf>) -> PyResult<TestSuite> {
        let suite = py.detach(|| Suite::load(&path, &search_path, None));
        match suite {
            Ok(s) => Ok(TestSuite { inner: Arc::new(s) }),
            Err(e) => Err(PyValueError::new_err(e)),
        }
    }

    /// `(class, test)` of every test `selectors` pick (`Class` or
    /// `Class.test`; all when empty).
    #[pyo3(signature = (selectors = Vec::new()))]
    fn plan(&self, py: Python<'_>, selectors: Vec<String>) -> PyResult<Vec<(String, String)>> {
        let inner = self.inner.clone();
        py.detach(|| inner.plan(&selectors))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Runs one test on a fresh executor: `None` when it passes, else
    /// the failure as `Kind: message`.
    fn run(&self, py: Python<'_>, class: &str, test: &str) -> Option<String> {
        let inner = self.inner.clone();
        py.detach(|| vm::coro::on_big_stack(|| inner.run(class, test, Limits::default())))
            .err()
    }
}

/// The object model a package's Dynamic UI produces (as Murano's
/// dashboard would), from `answers` (`{form: {field: value}}`), else the
/// fields' initial values, else samples; `search_path` holds the packages
/// of application-typed fields. Returns `(model, form data, notes)`.
#[pyfunction]
#[pyo3(signature = (package, search_path = Vec::new(), answers = None))]
pub fn ui_model(
    py: Python<'_>,
    package: PathBuf,
    search_path: Vec<PathBuf>,
    answers: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Py<PyAny>, Py<PyAny>, Vec<String>)> {
    let answers = answers.map(|a| model_value(py, a)).transpose()?;
    let (model, data, notes) = py
        .detach(|| muranopl::ui_model(&package, &search_path, answers))
        .map_err(PyValueError::new_err)?;
    let env = empty_env();
    Ok((to_py(py, &env, &model)?, to_py(py, &env, &data)?, notes))
}
