//! Python records read in place for a class's contract plan
//! ([`engine::contracts::plan::ObjectPlan`]): dict lookups with the plan's keys
//! as Python strings, ints, floats and strings read where they are. Only
//! the exact built-in types are read (a subclass, a tuple, any other
//! object is "ask": the record is converted and checked the full way), so
//! a record the plan passes is one [`crate::convert::ToValue`] converts
//! without error into values the checker finds no violation in.

use std::cell::Cell;
use std::hash::Hasher;
use std::os::raw::c_char;

use engine::contracts::plan::{scalar, ObjectPlan, Passing, View};
use engine::contracts::Borrowed;
use muranopl::jit::Native;
use runtime::value::{Dict, Value};

use crate::convert::ToValue;
use crate::memo::{Kept, Plain};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

extern "C" {
    // In the stable ABI from 3.10 only, but exported by every CPython 3
    // (the abi3-py39 bindings do not declare it).
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
}

/// A plan with its keys as Python strings (interned once per call).
pub struct PyPlan<'py> {
    plan: ObjectPlan,
    keys: Vec<Bound<'py, PyString>>,
    /// See [`PyPlan::reads_objects`].
    objects: bool,
}

impl<'py> PyPlan<'py> {
    pub fn new(py: Python<'py>, plan: ObjectPlan) -> PyPlan<'py> {
        let keys = plan
            .keys()
            .iter()
            .map(|k| PyString::intern(py, k))
            .collect();
        let objects = plan.keys().iter().any(|k| &**k == "Objects");
        PyPlan {
            plan,
            keys,
            objects,
        }
    }

    /// True when the plan reads a key named `Objects` (a property's, or
    /// a dict contract's).
    pub fn reads_objects(&self) -> bool {
        self.objects
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
        let view = PyView::top(record, &self.keys);
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

/// A Python value the plan reads: a borrowed pointer, valid while the
/// record it was read from is (the caller holds the record).
///
/// No Python code runs while a record is walked, so nothing in it is
/// changed or freed meanwhile: values are read by type (exact built-in
/// types only, by functions that run no Python code), a dict's entries
/// by `PyDict_Next`, and a lookup is made only in a dict all of whose
/// keys are exact `str`s (whose comparisons run no Python code either);
/// a dict with any other key is "ask".
struct PyView<'a, 'py> {
    o: *mut ffi::PyObject,
    keys: &'a [Bound<'py, PyString>],
    /// Of a dict: where its next entry is ([`ffi::PyDict_Next`]'s
    /// position). The plan asks for its keys in the order records most
    /// often give them, so the next entry is most often the one asked
    /// for (its key the plan's own key object, adopted): read in order,
    /// with no lookup.
    next: Cell<ffi::Py_ssize_t>,
}

impl<'a, 'py> PyView<'a, 'py> {
    fn top(record: &'a Bound<'py, PyAny>, keys: &'a [Bound<'py, PyString>]) -> Self {
        PyView {
            o: record.as_ptr(),
            keys,
            next: Cell::new(0),
        }
    }

    /// The view of `o`, borrowed from this one's object (non-null).
    #[inline(always)]
    fn child(&self, o: *mut ffi::PyObject) -> Self {
        PyView {
            o,
            keys: self.keys,
            next: Cell::new(0),
        }
    }
}

/// True when every key of dict `d` is an exact `str`, so that a lookup
/// in it runs no Python code.
///
/// # Safety
/// `d` is a live exact dict, under the GIL.
unsafe fn str_keys(d: *mut ffi::PyObject) -> bool {
    let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: per the contract; `PyDict_Next` runs no Python code, and
    // the keys it yields are live (borrowed from `d`).
    unsafe {
        while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
            if ffi::Py_TYPE(k) != &raw mut ffi::PyUnicode_Type {
                return false;
            }
        }
    }
    true
}

/// A string's UTF-8 text where CPython keeps it (no copy for an ASCII
/// string); `None` when it has none (lone surrogates) or is no `str`.
pub fn utf8<'a>(s: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    // SAFETY: `s` is live, under the GIL, for as long as `'a`
    // (`PyUnicode_AsUTF8AndSize` refuses anything but a `str`).
    unsafe { utf8_of(s.as_ptr()) }
}

/// [`utf8`] of a raw pointer.
///
/// # Safety
/// `s` is a live object for `'a`, under the GIL.
unsafe fn utf8_of<'a>(s: *mut ffi::PyObject) -> Option<&'a str> {
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: per the contract; the text CPython returns is cached in the
    // object and lives as long as it.
    unsafe {
        let p = PyUnicode_AsUTF8AndSize(s, &mut len);
        if p.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let bytes = std::slice::from_raw_parts(p.cast::<u8>(), usize::try_from(len).ok()?);
        // CPython's UTF-8 of a str is valid UTF-8.
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

/// The scalar a chain reads of `o`, as [`ToValue`] would convert it; a
/// container is its length, anything but the exact built-in types is
/// [`Borrowed::Other`]; `None` for a string without UTF-8 text.
///
/// # Safety
/// `o` is a live object for `'a`, under the GIL.
///
/// Inlined: returned through memory, the value's tag and payload were
/// reloaded as one wider word, a store-forwarding stall costing about a
/// tenth of a valid record's walk.
#[inline(always)]
unsafe fn read<'a>(o: *mut ffi::PyObject) -> Option<Borrowed<'a>> {
    // SAFETY: per the contract; each call below is made on an object of
    // the exact type it takes, and runs no Python code.
    unsafe {
        if o == ffi::Py_None() {
            return Some(Borrowed::Null);
        }
        let t = ffi::Py_TYPE(o);
        if t == &raw mut ffi::PyUnicode_Type {
            return utf8_of(o).map(Borrowed::Str);
        }
        if t == &raw mut ffi::PyLong_Type {
            let mut overflow = 0;
            let i = ffi::PyLong_AsLongLongAndOverflow(o, &mut overflow);
            return Some(if overflow != 0 {
                Borrowed::BigInt
            } else {
                Borrowed::Int(i)
            });
        }
        if t == &raw mut ffi::PyBool_Type {
            return Some(Borrowed::Bool(o == ffi::Py_True()));
        }
        if t == &raw mut ffi::PyFloat_Type {
            return Some(Borrowed::Float(ffi::PyFloat_AsDouble(o)));
        }
        if t == &raw mut ffi::PyDict_Type {
            return Some(Borrowed::Dict(usize::try_from(ffi::PyDict_Size(o)).ok()?));
        }
        if t == &raw mut ffi::PyList_Type {
            return Some(Borrowed::List(usize::try_from(ffi::PyList_Size(o)).ok()?));
        }
    }
    Some(Borrowed::Other)
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

impl View for PyView<'_, '_> {
    #[inline(always)]
    fn read(&self) -> Option<Borrowed<'_>> {
        // SAFETY: `o` is live while this view is (see `PyView`), under the
        // GIL.
        unsafe { read(self.o) }
    }

    fn items_pass(&self, n: usize, chain: &Native) -> bool {
        const BATCH: usize = 16;
        // SAFETY: `o` is live (see `PyView`), under the GIL.
        if unsafe { ffi::Py_TYPE(self.o) } != &raw mut ffi::PyList_Type {
            return false;
        }
        let mut buf = [Borrowed::Null; BATCH];
        let mut i = 0;
        while i < n {
            let k = (n - i).min(BATCH);
            for (j, b) in buf[..k].iter_mut().enumerate() {
                // SAFETY: `o` is a live list (see `PyView`), under the
                // GIL; `PyList_GetItem` checks the index, and the item it
                // returns is borrowed from the list, which no Python code
                // runs to change while the batch is read and checked.
                let x = unsafe {
                    let p = ffi::PyList_GetItem(self.o, (i + j) as ffi::Py_ssize_t);
                    if p.is_null() {
                        ffi::PyErr_Clear();
                        return false;
                    }
                    read(p)
                };
                match x {
                    Some(x) if scalar(x) => *b = x,
                    _ => return false,
                }
            }
            if chain.first_failing_borrowed(&buf[..k]) != k {
                return false;
            }
            i += k;
        }
        true
    }

    // Inlined, as `read` is: a view returned through memory was copied
    // by wider loads than the stores that wrote it (a store-forwarding
    // stall on every property read).
    #[inline(always)]
    fn field(&self, slot: usize) -> Option<Option<Self>> {
        let key = self.keys[slot].as_ptr();
        // SAFETY: `o` is live (see `PyView`), under the GIL; the dict is
        // read only if it is an exact one, its next entry by `PyDict_Next`
        // (which checks the position against the entries the dict has),
        // else by a lookup with a key the plan holds, made only when no
        // Python code can run in it; the value either returns is borrowed
        // from the dict.
        unsafe {
            if ffi::Py_TYPE(self.o) != &raw mut ffi::PyDict_Type {
                return None;
            }
            // The next entry, if its key is the plan's key object: the
            // entry a lookup would find (a dict's keys are unique).
            let (mut pos, mut k, mut v) =
                (self.next.get(), std::ptr::null_mut(), std::ptr::null_mut());
            if ffi::PyDict_Next(self.o, &mut pos, &mut k, &mut v) != 0 && k == key {
                self.next.set(pos);
                return Some(Some(self.child(v)));
            }
            // A lookup, which runs no Python code when every key is an
            // exact `str` (else: ask).
            if !str_keys(self.o) {
                return None;
            }
            let v = ffi::PyDict_GetItemWithError(self.o, key);
            if v.is_null() {
                if !ffi::PyErr_Occurred().is_null() {
                    ffi::PyErr_Clear();
                    return None;
                }
                return Some(None);
            }
            Some(Some(self.child(v)))
        }
    }

    #[inline(always)]
    fn item(&self, i: usize) -> Option<Self> {
        // SAFETY: `o` is live (see `PyView`), under the GIL;
        // `PyList_GetItem` checks the index and returns an item borrowed
        // from the list.
        unsafe {
            if ffi::Py_TYPE(self.o) != &raw mut ffi::PyList_Type {
                return None;
            }
            let v = ffi::PyList_GetItem(self.o, ffi::Py_ssize_t::try_from(i).ok()?);
            if v.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            Some(self.child(v))
        }
    }
}
