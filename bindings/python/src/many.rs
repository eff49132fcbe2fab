//! `validate_many`'s quick way for the simplest object models: one object
//! (a dict with a `?: {id, type}` header and its properties, nothing
//! else) of a class whose property contracts need only the values and
//! that runs no code when loaded. Such a model's violations are its
//! object's property violations ([`engine::model::check_properties`]) at
//! `$.Objects`, sorted as validation sorts them; a model whose properties
//! the class's plan shows to pass has none and is not converted at all.
//! Any other model (JSON text, a model with `Objects`, nested object
//! definitions, other header keys) is validated the full way.
//!
//! A block of models is first read on every core ([`Models::walk`]): the
//! models of the first one's class, header and properties; the calling
//! thread then judges, in order, those the walk did not show valid.

use std::sync::Arc;

use muranopl::report::{sorted_violations, Violation};
use muranopl::Catalogue;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use runtime::Value;

use crate::blocks::Blocks;
use crate::convert::ToValue;
use crate::plan::{PyPlan, SharedPlan};
use crate::view::{share_out, Access, Layout, Obj, Shared};
use engine::contracts::plan::Passing;

/// What the quick way makes of one model.
pub enum Quick {
    /// Valid, as the plan shows.
    Valid,
    /// Its object's class, its properties converted (those the plan
    /// passes left null) and the keys of those, for the checker; and
    /// the properties passed, by bit; and whether the class's contracts
    /// are pure ([`crate::memo::pure`]).
    Check(Arc<engine::Class>, Value, Vec<Value>, u64, bool),
    /// The same answer as model `i` (failing on the same scalar value).
    Same(usize),
    /// The full way.
    Full,
}

/// A class, its plan, and whether its contracts are pure.
type Planned<'py> = (Arc<engine::Class>, PyPlan<'py>, bool);

/// The plans of the classes models name, made as they are met.
pub struct Models<'py> {
    py: Python<'py>,
    catalog: Arc<engine::Catalog>,
    ex: Arc<engine::Executor>,
    /// By class name as models give it (few: looked up in order).
    /// (and whether the plan has yet to adopt a model's keys).
    plans: Vec<(String, Option<Planned<'py>>, bool)>,
    /// Models that failed on one value, so far.
    failed: crate::memo::Failed,
    compile: bool,
    /// The type string of the last model and its index in `plans`: a
    /// batch's models most often share the string object (held here, so
    /// that its address names it while it is compared).
    last: Option<(Bound<'py, PyAny>, usize)>,
    header: Header<'py>,
    /// Threads [`Models::walk`] reads on at most: as many as the pool
    /// has (one per core, or `RAYON_NUM_THREADS`).
    threads: usize,
    /// How they read strings.
    layout: Option<Layout>,
}

impl<'py> Models<'py> {
    pub fn new(py: Python<'py>, catalogue: &Catalogue, compile: bool) -> Models<'py> {
        let catalog = catalogue.catalog().clone();
        Models {
            py,
            ex: engine::Executor::with_catalog(catalog.clone()),
            catalog,
            plans: Vec::new(),
            failed: Default::default(),
            compile,
            last: None,
            header: Header::new(py),
            layout: Layout::of(py),
            threads: rayon::current_num_threads(),
        }
    }

    /// The quick way with model `m`, converting with `cv` what the checker
    /// needs; `walked`: its class's plan (by index) and what the plan
    /// shows of it, when [`Models::walk`] read it.
    /// `i` is the model's index.
    pub fn quick(
        &mut self,
        cv: &mut ToValue<'py>,
        m: &Bound<'py, PyAny>,
        i: usize,
        walked: Option<(usize, Passing)>,
    ) -> PyResult<Quick> {
        let (k, passing) = match walked {
            Some(w) => w,
            None => {
                let Some(k) = self.class_of(m) else {
                    return Ok(Quick::Full);
                };
                let Some(passing) = self.plans[k].1.as_ref().and_then(|p| p.1.passing(m, 1)) else {
                    return Ok(Quick::Full);
                };
                (k, passing)
            }
        };
        let Some((class, plan, pure)) = &self.plans[k].1 else {
            return Ok(Quick::Full);
        };
        if self.valid(k, &passing) {
            return Ok(Quick::Valid);
        }
        // A model with `Objects` is validated the full way. The plan
        // shows a model to have no other key than its properties and `?`
        // (`only`: what it passes, or all of it), so that such a one has
        // none unless the class has such a property.
        if (!passing.only || plan.reads_objects()) && has_objects(m) {
            return Ok(Quick::Full);
        }
        if passing.all {
            return Ok(Quick::Valid);
        }
        if *pure {
            let kind = Arc::as_ptr(class) as usize;
            let same = (plan.failing_value(m, &passing))
                .and_then(|(prop, v)| self.failed.seen(kind, passing.bits(), prop, v.as_ref(), i));
            if let Some(first) = same {
                return Ok(Quick::Same(first));
            }
        }
        let v = plan.partial(cv, m, &passing, true)?;
        // A definition nested in a property is an object of the model.
        if defines_objects(&v) {
            return Ok(Quick::Full);
        }
        let skip = plan.skip(&passing);
        Ok(Quick::Check(class.clone(), v, skip, passing.bits(), *pure))
    }

    /// True when `passing`, what the plan of class `k` shows of a model,
    /// shows it valid without looking at the model again: it passes,
    /// and its keys are only its properties and `?` (none is `Objects`).
    pub fn valid(&self, k: usize, passing: &Passing) -> bool {
        passing.all
            && passing.only
            && (self.plans[k].1.as_ref()).is_some_and(|(_, plan, _)| !plan.reads_objects())
    }

    /// The index in `plans` of the class of model `m`, a model of one
    /// object of a class with a plan (the plan adopting the first such
    /// model's keys); `None` for any other model.
    fn class_of(&mut self, m: &Bound<'py, PyAny>) -> Option<usize> {
        let t = self.header.simple_type(m)?;
        let k = match &self.last {
            Some((s, k)) if s.as_ptr() == t.ptr => *k,
            _ => {
                // SAFETY: `t.ptr` is live (held by `m`, which the caller
                // holds, or by `t`), no Python code having run since it
                // was read, under the GIL.
                let t = unsafe { Bound::from_borrowed_ptr(m.py(), t.ptr) };
                let name = crate::plan::utf8(&t)?;
                let k = match self.plans.iter().position(|(n, ..)| n == name) {
                    Some(k) => k,
                    None => {
                        let plan = self.plan(name);
                        self.plans.push((name.to_string(), plan, true));
                        self.plans.len() - 1
                    }
                };
                self.last = Some((t, k));
                k
            }
        };
        if self.plans[k].2 {
            self.plans[k].2 = false;
            if let Some((_, plan, _)) = &mut self.plans[k].1 {
                plan.adopt(m);
            }
        }
        self.plans[k].1.is_some().then_some(k)
    }

    /// What the plan of the class of `block`'s first model shows of each
    /// model of that class, read on every core ([`crate::view::share_out`]):
    /// its plan's index and the plan's answer, `None` for a model read
    /// otherwise (of another class, not simple, not readable there).
    pub fn walk(&mut self, block: &Blocks<'py>) -> Vec<Option<(usize, Passing)>> {
        let Some(k) = (block.len() > 0)
            .then(|| self.class_of(&block.get(0)))
            .flatten()
        else {
            return Vec::new();
        };
        let (Some((_, plan, _)), Some((t, _))) = (&self.plans[k].1, &self.last) else {
            return Vec::new();
        };
        let class = SharedClass {
            plan: plan.shared(),
            header: self.header.keys.each_ref().map(|k| k.as_ptr()),
            type_object: t.as_ptr(),
            name: &self.plans[k].0,
        };
        // SAFETY: as `share_out` gives it: a model `block` holds.
        let passing = |m: Obj, at: Shared<'_>| unsafe { class.passing(m, at) };
        // SAFETY: `block` holds every model, under the GIL, and this
        // thread runs no Python code until the walk is done.
        let found = unsafe { share_out(block.objects(), self.threads, self.layout, passing) };
        found.into_iter().map(|p| p.map(|p| (k, p))).collect()
    }

    /// The plan of class `t` when a model of one object of it is checked
    /// as its properties are: a class named plainly, whose contracts need
    /// only the values, with no `.init` or `.destroy` anywhere.
    fn plan(&self, t: &str) -> Option<Planned<'py>> {
        if t.contains(['/', '@']) {
            return None;
        }
        let class = self.catalog.class(t).ok()?;
        value_only(&class).ok()?;
        if class.find_method(".init").is_some() || class.find_method(".destroy").is_some() {
            return None;
        }
        let plan = engine::contracts::plan::ObjectPlan::of(&self.ex, &class, self.compile)?;
        let pure = crate::memo::pure(&class);
        Some((class, PyPlan::new(self.py, plan), pure))
    }
}

/// True when model `m` (an exact dict) has an `Objects` key, or the
/// lookup failed.
fn has_objects(m: &Bound<'_, PyAny>) -> bool {
    let Ok(d) = m.cast_exact::<PyDict>() else {
        return true;
    };
    // SAFETY: `d` is an exact dict held by the caller, under the GIL; the
    // value returned is borrowed and only compared with null.
    unsafe {
        let v = ffi::PyDict_GetItemWithError(d.as_ptr(), pyo3::intern!(m.py(), "Objects").as_ptr());
        if v.is_null() && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear();
            return true;
        }
        !v.is_null()
    }
}

/// The keys a model's header is read with: `?`, `id` and `type`, as
/// interned strings until the first model's own key objects replace them
/// ([`Header::adopt`]): models written in Python share the interned ones,
/// models loaded by `json` their own, which a lookup then matches by
/// identity instead of comparing text.
struct Header<'py> {
    keys: [Bound<'py, PyString>; 3],
    adopted: bool,
}

impl<'py> Header<'py> {
    fn new(py: Python<'py>) -> Header<'py> {
        let keys = ["?", "id", "type"].map(|k| PyString::intern(py, k));
        Header {
            keys,
            adopted: false,
        }
    }

    /// Takes model `m`'s own header keys, once.
    fn adopt(&mut self, m: &Bound<'py, PyDict>) {
        self.adopted = true;
        // The keys of `d` equal to `self.keys[range]` replace them.
        let take = |keys: &mut [Bound<'py, PyString>; 3], d: &Bound<'py, PyDict>, range| {
            for k in d.keys() {
                let Ok(k) = k.cast_into_exact::<PyString>() else {
                    continue;
                };
                let text = crate::plan::utf8(&k);
                let same = |i: &usize| text.is_some() && crate::plan::utf8(&keys[*i]) == text;
                if let Some(i) = std::ops::Range::clone(&range).find(same) {
                    keys[i] = k;
                }
            }
        };
        take(&mut self.keys, m, 0..1);
        if let Ok(Some(h)) = m.get_item(&self.keys[0]) {
            if let Ok(h) = h.cast_into_exact::<PyDict>() {
                take(&mut self.keys, &h, 1..3);
            }
        }
    }

    /// The class name of a model that is one object definition: an exact
    /// dict whose `?` is an exact dict of exactly `id` and `type`, both
    /// strings (whether it has `Objects` too is [`has_objects`]).
    fn simple_type(&mut self, m: &Bound<'py, PyAny>) -> Option<TypeName<'py>> {
        let py = m.py();
        let d = m.cast_exact::<PyDict>().ok()?;
        if !self.adopted {
            self.adopt(d);
        }
        let [q, id_key, type_key] = &self.keys;
        // The value of string key `k` in exact dict `d`, borrowed;
        // `Err` when the lookup failed (a key's `__eq__` raised).
        let get = |d: *mut ffi::PyObject, k: &Bound<'py, PyString>| {
            // SAFETY: `d` is an exact dict held (by the caller, or by the
            // model the caller holds), under the GIL; the value returned
            // is borrowed from it.
            unsafe {
                let v = ffi::PyDict_GetItemWithError(d, k.as_ptr());
                if !v.is_null() {
                    return Ok(Some(v));
                }
                if ffi::PyErr_Occurred().is_null() {
                    return Ok(None);
                }
                ffi::PyErr_Clear();
                Err(())
            }
        };
        let h = get(d.as_ptr(), q).ok()??;
        // SAFETY: `h` is live (held by `d`), under the GIL.
        if unsafe { ffi::Py_TYPE(h) } != &raw mut ffi::PyDict_Type {
            return None;
        }
        // Its entries read in order (two, else it is no simple header),
        // their keys compared by identity (models share their key
        // strings); keys equal but not the same objects are looked up.
        let (mut id, mut t, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
        // SAFETY: `h` is an exact dict held by `d`, under the GIL; the keys
        // and values it yields are borrowed from it and no Python code runs
        // while they are read.
        unsafe {
            let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while ffi::PyDict_Next(h, &mut pos, &mut k, &mut v) != 0 {
                n += 1;
                if k == id_key.as_ptr() {
                    id = v;
                } else if k == type_key.as_ptr() {
                    t = v;
                }
            }
        }
        if n != 2 {
            return None;
        }
        let is_str = |p: *mut ffi::PyObject| {
            // SAFETY: `p` is live, under the GIL (see below).
            unsafe { ffi::Py_TYPE(p) == &raw mut ffi::PyUnicode_Type }
        };
        if !id.is_null() && !t.is_null() {
            // `id` and `t` are live (held by `h`, held by `d`), no Python
            // code having run since they were read.
            return (is_str(id) && is_str(t)).then_some(TypeName {
                ptr: t,
                _hold: None,
            });
        }
        // Keys equal to `id` and `type` but not these objects: looked up,
        // `h` held meanwhile (a key's `__eq__` may run any code), each
        // value read before the next lookup, the type held.
        // SAFETY: `h` is live (held by `d`), under the GIL.
        let h = unsafe { Bound::from_borrowed_ptr(py, h) };
        let id = get(h.as_ptr(), id_key).ok()??;
        if !is_str(id) {
            return None;
        }
        let t = get(h.as_ptr(), type_key).ok()??;
        // SAFETY: `t` is live (held by `h`), under the GIL.
        let hold = is_str(t).then(|| unsafe { Bound::from_borrowed_ptr(py, t) })?;
        Some(TypeName {
            ptr: t,
            _hold: Some(hold),
        })
    }
}

/// A model's type string, as [`Header::simple_type`] reads it: borrowed
/// from the model (live while the caller holds the model and runs no
/// Python code), or held.
struct TypeName<'py> {
    ptr: *mut ffi::PyObject,
    _hold: Option<Bound<'py, PyAny>>,
}

/// What threads other than the GIL's holder read models of one class
/// with ([`Models::walk`]).
struct SharedClass<'a> {
    plan: SharedPlan<'a>,
    /// `?`, `id` and `type` as [`Header`] holds them.
    header: [Obj; 3],
    /// The class name as the first model gave it, and its text.
    type_object: Obj,
    name: &'a str,
}

// SAFETY: the key and name objects are only compared by address and read
// as the module `view` says, while the GIL's holder, which holds them,
// waits.
unsafe impl Sync for SharedClass<'_> {}

impl SharedClass<'_> {
    /// What the plan shows of model `m`, if it is a model of one object
    /// of this class ([`Header::simple_type`]'s rules), its strings'
    /// text read by `at`.
    ///
    /// # Safety
    /// `m` is live, read as the module `view` says.
    unsafe fn passing(&self, m: Obj, at: Shared<'_>) -> Option<Passing> {
        let [q, id_key, type_key] = self.header;
        // SAFETY: per the contract; each object is read by its exact type,
        // and the entries `PyDict_Next` yields are borrowed from `h`.
        unsafe {
            let (passing, mut pos) = self.plan.passing(m, 1, at)?;
            // The header: most often the entry after the properties.
            let (mut k, mut h) = (std::ptr::null_mut(), std::ptr::null_mut());
            if ffi::PyDict_Next(m, &mut pos, &mut k, &mut h) == 0 || k != q {
                h = at.lookup(m, q, "?")??;
            }
            if ffi::Py_TYPE(h) != &raw mut ffi::PyDict_Type {
                return None;
            }
            let (mut id, mut t, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
            let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while ffi::PyDict_Next(h, &mut pos, &mut k, &mut v) != 0 {
                n += 1;
                if ffi::Py_TYPE(k) != &raw mut ffi::PyUnicode_Type {
                    return None;
                }
                if k == id_key || (k != type_key && at.text(k)? == "id") {
                    id = v;
                } else if k == type_key || at.text(k)? == "type" {
                    t = v;
                }
            }
            let is_str = |p: Obj| !p.is_null() && ffi::Py_TYPE(p) == &raw mut ffi::PyUnicode_Type;
            if n != 2 || !is_str(id) || !is_str(t) {
                return None;
            }
            if t != self.type_object && at.text(t)? != self.name {
                return None;
            }
            Some(passing)
        }
    }
}

/// True when a dict with a `?` key is anywhere in `v`, the properties of
/// a model's object (its header left out).
fn defines_objects(v: &Value) -> bool {
    fn nested(v: &Value) -> bool {
        match v {
            Value::Dict(d) => d.contains_key(&Value::str("?")) || d.values().any(nested),
            Value::List(l) => l.iter().any(nested),
            _ => false,
        }
    }
    match v {
        Value::Dict(d) => d.iter().any(|(k, x)| k.as_str() != Some("?") && nested(x)),
        _ => true,
    }
}

/// Ok when every property contract of `class` needs no more than the
/// value (it can be checked apart from a model); else the property's name.
pub fn value_only(class: &Arc<engine::Class>) -> Result<(), String> {
    for (_, prop) in class.init_order() {
        let reach = prop
            .contract
            .get::<engine::contracts::Contract>()
            .map(|c| c.reach());
        if reach.is_some_and(|r| r != engine::contracts::Reach::Value) {
            return Err(prop.name.to_string());
        }
    }
    Ok(())
}

/// `(path, property, message, position)` of each violation, or the load
/// error that stopped validation.
pub type Checked = Result<Vec<(String, String, String, Option<String>)>, runtime::Error>;

/// The violations of `model`, validated the full way.
pub fn check_model(catalog: &Catalogue, model: &Value) -> Checked {
    let found = catalog.check(model, muranopl::Limits::UNLIMITED)?;
    Ok(found
        .violations
        .into_iter()
        .map(|v| (v.path, v.property, v.message, v.position))
        .collect())
}

/// A model the plan cannot pass, for the pool.
pub enum Job {
    /// Its object's properties, by [`check`].
    Quick(Arc<engine::Class>, Value, Vec<Value>),
    /// The whole model, validated.
    Full(Value),
}

impl Job {
    /// The model's violations as `validate_many` gives them; `None` when
    /// a quick check stopped on an error (the full way then says).
    pub fn run(&self, catalogue: &Catalogue, ex: &engine::Executor) -> Option<Checked> {
        match self {
            Job::Quick(class, v, skip) => Some(Ok(check(ex, class, v, skip)?
                .into_iter()
                .map(|v| (v.path, v.property, v.message, v.position))
                .collect())),
            Job::Full(m) => Some(check_model(catalogue, m)),
        }
    }
}

/// The violations of a model checked the quick way: its object's
/// property violations at `$.Objects`, sorted as validation sorts them;
/// `None` when the check stopped on an error (the full way then says).
pub fn check(
    ex: &engine::Executor,
    class: &Arc<engine::Class>,
    v: &Value,
    skip: &[Value],
) -> Option<Vec<Violation>> {
    let Value::Dict(d) = v else {
        return None;
    };
    let skip: Vec<&Value> = skip.iter().collect();
    let found = engine::model::check_properties_except(ex, class, d, &skip).ok()?;
    Some(sorted_violations(
        found
            .into_iter()
            .map(|(p, e)| ("$.Objects".to_string(), p.to_string(), e))
            .collect(),
    ))
}
