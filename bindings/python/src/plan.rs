//! Python records read in place for a class's contract plan
//! ([`engine::contracts::plan::ObjectPlan`]): dict lookups with the plan's keys
//! as Python strings, ints, floats and strings read where they are. Only
//! the exact built-in types are read (a subclass, a tuple, any other
//! object is "ask": the record is converted and checked the full way), so
//! a record the plan passes is one [`crate::convert::ToValue`] converts
//! without error into values the checker finds no violation in.

use std::hash::Hasher;

use engine::contracts::plan::{ObjectPlan, Passing};
use engine::contracts::Borrowed;
use runtime::value::{Dict, Value};

use crate::blocks::Blocks;
use crate::convert::ToValue;
use crate::memo::{Kept, Plain};
use crate::view::{read, share_out, utf8_of, Gil, Keys, Layout, Obj, PyView, Reader, Shared};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

/// A plan with its keys as Python strings (interned once per call).
pub struct PyPlan<'py> {
    plan: ObjectPlan,
    keys: Vec<Bound<'py, PyString>>,
    /// The same keys' objects, as views read them.
    objects: Vec<Obj>,
    /// See [`PyPlan::reads_objects`].
    reads_objects: bool,
}

impl<'py> PyPlan<'py> {
    pub fn new(py: Python<'py>, plan: ObjectPlan) -> PyPlan<'py> {
        let keys: Vec<Bound<'py, PyString>> = plan
            .keys()
            .iter()
            .map(|k| PyString::intern(py, k))
            .collect();
        let reads_objects = plan.keys().iter().any(|k| &**k == "Objects");
        let objects = keys.iter().map(|k| k.as_ptr()).collect();
        PyPlan {
            plan,
            keys,
            objects,
            reads_objects,
        }
    }

    /// True when the plan reads a key named `Objects` (a property's, or
    /// a dict contract's).
    pub fn reads_objects(&self) -> bool {
        self.reads_objects
    }

    fn view_keys(&self) -> Keys<'_> {
        Keys {
            objects: &self.objects,
            texts: self.plan.keys(),
        }
    }

    /// What the plan shows of each record of `block` (exact dicts of
    /// properties only), read on up to `threads` threads
    /// ([`crate::view::share_out`]); `None` for anything else.
    pub fn walk(
        &self,
        block: &Blocks<'py>,
        threads: usize,
        layout: Option<Layout>,
    ) -> Vec<Option<Passing>> {
        let shared = self.shared();
        // SAFETY: as `share_out` gives it: a record the caller holds.
        let passing = |o: Obj, at: Shared<'_>| unsafe { shared.passing(o, 0, at).map(|(p, _)| p) };
        // SAFETY: `block` holds every record, under the GIL, and this
        // thread runs no Python code until the walk is done.
        unsafe { share_out(block.objects(), threads, layout, passing) }
    }

    /// The plan as other threads read with it ([`SharedPlan`]).
    pub fn shared(&self) -> SharedPlan<'_> {
        SharedPlan {
            plan: &self.plan,
            keys: self.view_keys(),
        }
    }

    /// Takes `record`'s own key objects for the plan's keys it has (equal
    /// strings: the lookups find the same entries), so that lookups in
    /// records sharing them (as `json.load` makes them) match by identity
    /// instead of comparing text. The keys of the dicts nested in it (in
    /// a value, or among the first items of a list) are taken too: a dict
    /// contract's keys are looked up there.
    pub fn adopt(&mut self, record: &Bound<'py, PyAny>) {
        self.adopt_within(record, 0);
    }

    /// [`PyPlan::adopt`] of a value `depth` containers down.
    fn adopt_within(&mut self, v: &Bound<'py, PyAny>, depth: usize) {
        /// Containers looked into at most, down and across a list.
        const DEPTH: usize = 4;
        const ITEMS: usize = 4;
        if depth > DEPTH {
            return;
        }
        if let Ok(l) = v.cast_exact::<PyList>() {
            for x in l.iter().take(ITEMS) {
                self.adopt_within(&x, depth + 1);
            }
            return;
        }
        let Ok(d) = v.cast_exact::<PyDict>() else {
            return;
        };
        for (k, x) in d.iter() {
            if let Some(text) = k.cast_exact::<PyString>().ok().and_then(|k| utf8(k)) {
                if let Some(slot) = self.plan.keys().iter().position(|x| **x == *text) {
                    if let Ok(k) = k.cast_into_exact::<PyString>() {
                        self.objects[slot] = k.as_ptr();
                        self.keys[slot] = k;
                    }
                }
            }
            self.adopt_within(&x, depth + 1);
        }
    }

    /// Of a record of properties only (`passing.only`) of which one fails,
    /// in a class with no defaults: that property (by index) and its
    /// value (`None`: not given), which with the properties passed is all
    /// its answer depends on (compared in place: [`crate::memo::Kept`]);
    /// `None` for any other record.
    pub fn failing_value(
        &self,
        record: &Bound<'py, PyAny>,
        passing: &Passing,
    ) -> Option<(usize, Option<Bound<'py, PyAny>>)> {
        if !passing.only {
            return None;
        }
        let mut failing = None;
        for (i, (slot, _, ok, default)) in self.plan.properties(passing).enumerate() {
            if default {
                return None;
            }
            if !ok {
                if failing.is_some() {
                    return None;
                }
                failing = Some((i, slot));
            }
        }
        let (i, slot) = failing?;
        let d = record.cast_exact::<PyDict>().ok()?;
        Some((i, d.get_item(&self.keys[slot]).ok()?))
    }

    /// What the plan shows of `record` (an exact dict, of which `other`
    /// keys are no properties); `None` for anything else.
    pub fn passing(&self, record: &Bound<'py, PyAny>, other: usize) -> Option<Passing> {
        let d = record.cast_exact::<PyDict>().ok()?;
        let r = Reader {
            keys: self.view_keys(),
            access: Gil,
        };
        // SAFETY: `record` is held by the caller, under the GIL.
        let view = unsafe { PyView::top(record.as_ptr(), &r) };
        Some(self.plan.passing(&view, d.len(), other))
    }

    /// `record` converted for the checker, the values of the properties
    /// `passing` shows to pass left null or out (unread: the checker skips
    /// them, [`PyPlan::skip`]); without its `?` header when `header` (a
    /// model's object, whose header the caller has read).
    pub fn partial(
        &self,
        cv: &mut ToValue<'py>,
        record: &Bound<'py, PyAny>,
        passing: &Passing,
        header: bool,
    ) -> PyResult<Value> {
        let d = record.cast_exact::<PyDict>()?;
        let mut out = Dict::with_capacity_and_hasher(d.len(), Default::default());
        let failing = (self.plan.properties(passing)).filter(|p| !p.2).count();
        if passing.only && failing <= 1 {
            // Only properties: the one that failed (if given) is all the
            // checker needs, with the keys of those passed that have a
            // default (their values unread).
            for (slot, name, ok, default) in self.plan.properties(passing) {
                if ok {
                    if default && d.contains(&self.keys[slot])? {
                        out.insert(name.clone(), Value::Null);
                    }
                } else if let Some(v) = d.get_item(&self.keys[slot])? {
                    out.insert(name.clone(), cv.value(&v)?);
                }
            }
            return Ok(Value::dict(out));
        }
        for (k, v) in d.iter() {
            let key = k
                .is_exact_instance_of::<PyString>()
                .then(|| utf8(&k))
                .flatten();
            if header && key == Some("?") {
                continue;
            }
            let prop = key.and_then(|key| self.plan.property(passing, key));
            let (k, v) = match prop {
                Some((key, true)) => (key.clone(), Value::Null),
                Some((key, false)) => (key.clone(), cv.value(&v)?),
                None => (cv.value(&k)?, cv.value(&v)?),
            };
            out.insert(k, v);
        }
        Ok(Value::dict(out))
    }

    /// The keys of the properties `passing` shows to pass, for the
    /// checker to skip.
    pub fn skip(&self, passing: &Passing) -> Vec<Value> {
        self.plan.passed_keys(passing)
    }
}

/// A plan as threads other than the GIL's holder read records with it,
/// while that thread waits for them (see [`crate::view`]).
#[derive(Clone, Copy)]
pub struct SharedPlan<'a> {
    plan: &'a ObjectPlan,
    keys: Keys<'a>,
}

// SAFETY: the key objects are only compared by address and read as the
// module `view` says, while the GIL's holder, which holds them, waits;
// the engine plan is immutable.
unsafe impl Send for SharedPlan<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedPlan<'_> {}

impl SharedPlan<'_> {
    /// What the plan shows of `record` (an exact dict, of which `other`
    /// keys are no properties), its strings' text read by `at`, and the
    /// position (as `PyDict_Next` takes it) after the last entry read in
    /// order; `None` for anything else.
    ///
    /// # Safety
    /// `record` is live, read as the module `view` says.
    pub unsafe fn passing(
        &self,
        record: Obj,
        other: usize,
        at: Shared<'_>,
    ) -> Option<(Passing, ffi::Py_ssize_t)> {
        // SAFETY: per the contract.
        unsafe {
            if ffi::Py_TYPE(record) != &raw mut ffi::PyDict_Type {
                return None;
            }
            let len = usize::try_from(ffi::PyDict_Size(record)).ok()?;
            let r = Reader {
                keys: self.keys,
                access: at,
            };
            let view = PyView::top(record, &r);
            let passing = self.plan.passing(&view, len, other);
            Some((passing, view.position()))
        }
    }
}

/// A string's UTF-8 text where CPython keeps it (no copy for an ASCII
/// string); `None` when it has none (lone surrogates) or is no `str`.
pub fn utf8<'a>(s: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    // SAFETY: `s` is live, under the GIL, for as long as `'a`
    // (`PyUnicode_AsUTF8AndSize` refuses anything but a `str`).
    unsafe { utf8_of(s.as_ptr()) }
}

/// Values kept at most in one [`Plain`] (nodes), and how deep.
const KEPT_NODES: usize = 64;
const KEPT_DEPTH: usize = 8;

impl Kept for Bound<'_, PyAny> {
    fn hash(&self) -> Option<u64> {
        let mut h = rustc_hash::FxHasher::default();
        let mut nodes = 0;
        // SAFETY: as in `is`.
        unsafe { hash_into(self.as_ptr(), &mut h, &mut nodes, 0)? };
        Some(h.finish())
    }

    fn is(&self, p: &Plain) -> bool {
        // SAFETY: `self` is live (held), under the GIL; no Python code
        // runs while it is read.
        unsafe { same(self.as_ptr(), p, 0) }
    }

    fn keep(&self) -> Option<Plain> {
        let mut nodes = 0;
        // SAFETY: as in `is`.
        unsafe { plain(self.as_ptr(), &mut nodes, 0) }
    }
}

/// True when `o` is strictly `p`: the exact built-in types [`read`]
/// reads, of the same kinds and values (floats by their bits, a dict's
/// entries in order, its keys exact `str`s).
///
/// # Safety
/// `o` is a live object, under the GIL (no Python code runs here).
unsafe fn same(o: *mut ffi::PyObject, p: &Plain, depth: usize) -> bool {
    if depth > KEPT_DEPTH {
        return false;
    }
    // SAFETY: per the contract; items and entries are borrowed from `o`,
    // which nothing changes while they are read.
    unsafe {
        match (read(o), p) {
            (Some(Borrowed::Null), Plain::Null) => true,
            (Some(Borrowed::Bool(a)), Plain::Bool(b)) => a == *b,
            (Some(Borrowed::Int(a)), Plain::Int(b)) => a == *b,
            (Some(Borrowed::Float(a)), Plain::Float(b)) => a.to_bits() == *b,
            (Some(Borrowed::Str(a)), Plain::Str(b)) => a == &**b,
            (Some(Borrowed::List(n)), Plain::List(l)) => {
                n == l.len()
                    && l.iter().enumerate().all(|(i, x)| {
                        let item = ffi::PyList_GetItem(o, i as ffi::Py_ssize_t);
                        if item.is_null() {
                            ffi::PyErr_Clear();
                            return false;
                        }
                        same(item, x, depth + 1)
                    })
            }
            (Some(Borrowed::Dict(n)), Plain::Dict(d)) => {
                if n != d.len() {
                    return false;
                }
                let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
                for (key, x) in d {
                    if ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) == 0 {
                        return false;
                    }
                    let key_is = ffi::Py_TYPE(k) == &raw mut ffi::PyUnicode_Type
                        && utf8_of(k) == Some(&**key);
                    if !key_is || !same(v, x, depth + 1) {
                        return false;
                    }
                }
                true
            }
            _ => false,
        }
    }
}

/// Hashes `o` into `h` as [`plain`] would keep it (the same kinds, the
/// same bounds); `None` where `plain` keeps nothing.
///
/// # Safety
/// As [`same`].
unsafe fn hash_into(
    o: *mut ffi::PyObject,
    h: &mut rustc_hash::FxHasher,
    nodes: &mut usize,
    depth: usize,
) -> Option<()> {
    *nodes += 1;
    if *nodes > KEPT_NODES || depth > KEPT_DEPTH {
        return None;
    }
    // SAFETY: as in `same`.
    unsafe {
        match read(o)? {
            Borrowed::Null => h.write_u8(0),
            Borrowed::Bool(b) => h.write_u8(1 + u8::from(b)),
            Borrowed::Int(i) => {
                h.write_u8(3);
                h.write_i64(i);
            }
            Borrowed::Float(f) => {
                h.write_u8(4);
                h.write_u64(f.to_bits());
            }
            Borrowed::Str(s) => {
                h.write_u8(5);
                h.write(s.as_bytes());
                h.write_u8(0xff);
            }
            Borrowed::List(n) => {
                h.write_u8(6);
                h.write_usize(n);
                for i in 0..n {
                    let item = ffi::PyList_GetItem(o, i as ffi::Py_ssize_t);
                    if item.is_null() {
                        ffi::PyErr_Clear();
                        return None;
                    }
                    hash_into(item, h, nodes, depth + 1)?;
                }
            }
            Borrowed::Dict(n) => {
                h.write_u8(7);
                h.write_usize(n);
                let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
                while ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) != 0 {
                    if ffi::Py_TYPE(k) != &raw mut ffi::PyUnicode_Type {
                        return None;
                    }
                    h.write(utf8_of(k)?.as_bytes());
                    h.write_u8(0xff);
                    hash_into(v, h, nodes, depth + 1)?;
                }
            }
            Borrowed::BigInt | Borrowed::Other => return None,
        }
    }
    Some(())
}

/// `o` kept as a [`Plain`] (what [`same`] compares with), counting its
/// values in `nodes`; `None` for any other kind, or beyond
/// [`KEPT_NODES`] or [`KEPT_DEPTH`].
///
/// # Safety
/// As [`same`].
unsafe fn plain(o: *mut ffi::PyObject, nodes: &mut usize, depth: usize) -> Option<Plain> {
    *nodes += 1;
    if *nodes > KEPT_NODES || depth > KEPT_DEPTH {
        return None;
    }
    // SAFETY: as in `same`.
    unsafe {
        Some(match read(o)? {
            Borrowed::Null => Plain::Null,
            Borrowed::Bool(b) => Plain::Bool(b),
            Borrowed::Int(i) => Plain::Int(i),
            Borrowed::Float(f) => Plain::Float(f.to_bits()),
            Borrowed::Str(s) => Plain::Str(s.into()),
            Borrowed::List(n) => {
                let mut items = Vec::with_capacity(n.min(KEPT_NODES));
                for i in 0..n {
                    let item = ffi::PyList_GetItem(o, i as ffi::Py_ssize_t);
                    if item.is_null() {
                        ffi::PyErr_Clear();
                        return None;
                    }
                    items.push(plain(item, nodes, depth + 1)?);
                }
                Plain::List(items)
            }
            Borrowed::Dict(n) => {
                let mut entries = Vec::with_capacity(n.min(KEPT_NODES));
                let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
                while ffi::PyDict_Next(o, &mut pos, &mut k, &mut v) != 0 {
                    if ffi::Py_TYPE(k) != &raw mut ffi::PyUnicode_Type {
                        return None;
                    }
                    entries.push((utf8_of(k)?.into(), plain(v, nodes, depth + 1)?));
                }
                Plain::Dict(entries)
            }
            Borrowed::BigInt | Borrowed::Other => return None,
        })
    }
}
