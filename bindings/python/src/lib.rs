//! The `muranopl._native` extension module: the engine for Python.
//!
//! The Python package `muranopl` (in `python/`) is the public face: its
//! `yaql` module compiles and evaluates YAQL (with a compatibility layer
//! for code written against the reference `yaql`), and `muranopl.Catalog`
//! loads MuranoPL packages. This module holds what runs in Rust:
//!
//! - [`convert`]: Python values to engine values and back;
//! - [`yaql`]: engines, compiled expressions, lambdas;
//! - [`funcs`]: Python functions called the reference's way (specs),
//!   and yaqlized objects;
//! - [`catalog`]: packages, validation, schemas, runs and tests;
//! - [`many`], [`plan`], [`view`], [`blocks`], [`memo`], [`pool`]:
//!   validation of many records read in place (by a class's contract
//!   plan, on every core), the rest checked on the thread pool;
//! - [`errors`]: engine errors as the reference's exception classes.
//!
//! Every class here is immutable and may be shared between threads; the
//! GIL is released while the engine works. Records read in place are read
//! by other threads while the GIL's holder waits for them (see [`view`]).

mod blocks;
mod catalog;
mod convert;
mod errors;
mod funcs;
mod many;
mod memo;
mod plan;
mod pool;
mod view;
mod yaql;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<yaql::Engine>()?;
    m.add_class::<yaql::Expression>()?;
    m.add_class::<yaql::Lambda>()?;
    m.add_class::<funcs::Caller>()?;
    m.add_class::<funcs::Arg>()?;
    m.add_class::<catalog::Catalog>()?;
    m.add_class::<catalog::TestSuite>()?;
    m.add_function(wrap_pyfunction!(catalog::ui_model, m)?)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_LIMIT_ITERATORS", runtime::DEFAULT_LIMIT_ITERATORS)?;
    m.add("DEFAULT_MEMORY_QUOTA", runtime::DEFAULT_MEMORY_QUOTA)?;
    m.add("DEFAULT_MAX_MEMORY", runtime::DEFAULT_MAX_MEMORY)?;
    m.add(
        "DEFAULT_TIMEOUT",
        runtime::DEFAULT_TIME_BUDGET.as_secs_f64(),
    )?;
    Ok(())
}
