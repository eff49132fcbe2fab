//! Engine errors as Python exceptions of the reference's classes.
//!
//! The mapping lives in Python (`muranopl.yaql.exceptions._from_engine`):
//! YAQL kinds become the classes of `muranopl.yaql.exceptions` (named and
//! nested as `yaql.language.exceptions`), the built-in kinds yaql lets
//! escape stay built-ins (`KeyError`, `ZeroDivisionError`, ...), a bad
//! regular expression is `re.error`, and MuranoPL kinds are
//! `muranopl.MuranoPLError` with a `.kind`.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

// The package's error-mapping helper, imported once per process and then
// only read: a module attribute never rebound, holding no state.
static FROM_ENGINE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python exception for an engine error raised by `source` (the
/// expression, for a position in characters), or by a MuranoPL run.
pub fn to_py(py: Python<'_>, e: &runtime::Error, source: Option<&str>) -> PyErr {
    let position = match (e.span(), source) {
        (Some(sp), Some(src)) => src
            .get(..sp.start as usize)
            .map(|head| head.chars().count()),
        _ => None,
    };
    let location = e.location().map(|l| l.to_string());
    let trace = e.trace();
    // The helper is this package's own: it fails only when the package is
    // broken, and then that failure is the error to see.
    let made = FROM_ENGINE
        .import(py, "muranopl.yaql.exceptions", "_from_engine")
        .and_then(|f| f.call1((e.kind(), e.message(), position, source, location, trace)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}
