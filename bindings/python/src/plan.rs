//! Python records read in place for a class's contract plan
//! ([`engine::contracts::ObjectPlan`]): dict lookups with the plan's keys
//! as Python strings, ints, floats and strings read where they are. Only
//! the exact built-in types are read (a subclass, a tuple, any other
//! object is "ask": the record is converted and checked the full way), so
//! a record the plan passes is one [`crate::convert::ToValue`] converts
//! without error into values the checker finds no violation in.

use std::os::raw::c_char;

use engine::contracts::{Borrowed, ObjectPlan, Passing, View};
use runtime::value::{Dict, Value};

use crate::convert::ToValue;
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
}

impl<'py> PyPlan<'py> {
    pub fn new(py: Python<'py>, plan: ObjectPlan) -> PyPlan<'py> {
        let keys = plan
            .keys()
            .iter()
            .map(|k| PyString::intern(py, k))
            .collect();
        PyPlan { plan, keys }
    }

    /// What the plan shows of `record` (an exact dict, of which `other`
    /// keys are no properties); `None` for anything else.
    pub fn passing(&self, record: &Bound<'py, PyAny>, other: usize) -> Option<Passing> {
        let d = record.cast_exact::<PyDict>().ok()?;
        let view = PyView {
            o: record.clone(),
            keys: &self.keys,
        };
        Some(self.plan.passing(&view, d.len(), other))
    }

    /// `record` converted for the checker, the values of the properties
    /// `passing` shows to pass left null (unread), and their keys (for the
    /// checker to skip).
    pub fn partial(
        &self,
        cv: &mut ToValue<'py>,
        record: &Bound<'py, PyAny>,
        passing: &Passing,
    ) -> PyResult<(Value, Vec<Value>)> {
        let d = record.cast_exact::<PyDict>()?;
        let mut out = Dict::with_capacity_and_hasher(d.len(), Default::default());
        for (k, v) in d.iter() {
            let skipped = k.is_exact_instance_of::<PyString>()
                && utf8(&k).is_some_and(|key| self.plan.passed(passing, key));
            let v = if skipped { Value::Null } else { cv.value(&v)? };
            out.insert(cv.value(&k)?, v);
        }
        Ok((Value::dict(out), self.plan.passed_keys(passing)))
    }
}

/// A Python value the plan reads.
struct PyView<'a, 'py> {
    o: Bound<'py, PyAny>,
    keys: &'a [Bound<'py, PyString>],
}

impl<'py> PyView<'_, 'py> {
    fn with(&self, o: Bound<'py, PyAny>) -> Self {
        PyView { o, keys: self.keys }
    }
}

/// A string's UTF-8 text where CPython keeps it (no copy for an ASCII
/// string); `None` when it has none (lone surrogates).
fn utf8<'a>(s: &'a Bound<'_, PyAny>) -> Option<&'a str> {
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is an exact `str` held by the caller, under the GIL; the
    // text CPython returns is cached in the object and lives as long as
    // it, which the borrow of `s` bounds.
    unsafe {
        let p = PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut len);
        if p.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let bytes = std::slice::from_raw_parts(p.cast::<u8>(), usize::try_from(len).ok()?);
        // CPython's UTF-8 of a str is valid UTF-8.
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

impl View for PyView<'_, '_> {
    fn read(&self) -> Option<Borrowed<'_>> {
        let o = &self.o;
        if o.is_none() {
            return Some(Borrowed::Null);
        }
        let t = o.get_type_ptr();
        let (long, float, string, boolean, dict, list) = (
            &raw mut ffi::PyLong_Type,
            &raw mut ffi::PyFloat_Type,
            &raw mut ffi::PyUnicode_Type,
            &raw mut ffi::PyBool_Type,
            &raw mut ffi::PyDict_Type,
            &raw mut ffi::PyList_Type,
        );
        if t == string {
            return utf8(o).map(Borrowed::Str);
        }
        if t == long {
            let mut overflow = 0;
            // SAFETY: `o` is an exact int, under the GIL.
            let i = unsafe { ffi::PyLong_AsLongLongAndOverflow(o.as_ptr(), &mut overflow) };
            return Some(if overflow != 0 {
                Borrowed::BigInt
            } else {
                Borrowed::Int(i)
            });
        }
        if t == boolean {
            return Some(Borrowed::Bool(o.is_truthy().ok()?));
        }
        if t == float {
            // SAFETY: `o` is an exact float, under the GIL.
            return Some(Borrowed::Float(unsafe {
                ffi::PyFloat_AsDouble(o.as_ptr())
            }));
        }
        if t == dict {
            return Some(Borrowed::Dict(o.cast::<PyDict>().ok()?.len()));
        }
        if t == list {
            return Some(Borrowed::List(o.cast::<PyList>().ok()?.len()));
        }
        Some(Borrowed::Other)
    }

    fn field(&self, slot: usize) -> Option<Option<Self>> {
        let d = self.o.cast_exact::<PyDict>().ok()?;
        match d.get_item(&self.keys[slot]) {
            Ok(v) => Some(v.map(|v| self.with(v))),
            Err(_) => None,
        }
    }

    fn item(&self, i: usize) -> Option<Self> {
        let l = self.o.cast_exact::<PyList>().ok()?;
        l.get_item(i).ok().map(|v| self.with(v))
    }
}
