//! The C ABI of muranopl: YAQL engines with host functions, compiled
//! expressions and evaluation over JSON text; MuranoPL catalogues (of
//! packages or `.mcat` artifacts, their code seeing an engine's host
//! functions if asked) loaded once and shared by every thread, to
//! validate object models, run methods on them, make form schemas and
//! call static actions. The header,
//! `include/muranopl.h`, is generated from this crate by cbindgen
//! (`capi/cbindgen.toml`; `tests/header.rs` checks it for drift);
//! `docs/embedding.md` shows a complete program (`examples/c/`).
//!
//! Conventions, for every function here:
//!
//! - Strings in are NUL-terminated UTF-8; strings out are allocated here,
//!   NUL-terminated, and freed with [`muranopl_string_free`]. Values in
//!   and out are JSON text (tagged JSON: `{"$datetime": ...}` and the
//!   like for what JSON lacks).
//! - Functions that can fail return a status ([`MURANOPL_OK`] and the
//!   others below) and write their result through an out pointer. On
//!   failure, and when the caller passes a non-null `error`, `*error`
//!   receives a JSON object `{"kind", "message", "line", "column",
//!   "trace"}` (`line`/`column` are 1-based positions in the expression,
//!   or null; `trace` is the MuranoPL stack trace, innermost first).
//! - A null pointer where a value is required, text that is not UTF-8, or
//!   bad options are [`MURANOPL_INVALID_ARGUMENT`]; nothing is written to
//!   the result.
//! - Calls that run code take an options JSON object (null: the
//!   defaults) with per-call limits: `timeout_ms`, `max_steps` (MuranoPL
//!   statements) and `max_memory` (bytes the call's values may allocate
//!   in all), each a non-negative integer or null for no limit.
//! - No panic crosses the boundary: one is caught and reported as
//!   [`MURANOPL_PANIC`].
//! - Thread safety: engines (once their host functions are defined),
//!   programs and catalogues are read-only handles; any number of threads
//!   may use one at the same time. Freeing a handle, and defining a host
//!   function, must not overlap other calls on that handle.
#![allow(unsafe_code)]
// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

mod catalogue;
mod common;
mod host;

pub use catalogue::*;
pub use common::MuranoplEngine;
pub use host::*;

use std::ffi::{c_char, c_int, CString};
use std::ptr;

use muranopl::{Engine, Limits, Options, Program};

use crate::common::{
    call_options, free_boxed, guard, no_unwind, null_arg, out_arg, put, required, text_arg, Failure,
};

/// Success.
pub const MURANOPL_OK: c_int = 0;
/// The expression, the model or the data is wrong, or running it failed
/// (see the error's `kind`).
pub const MURANOPL_ERROR: c_int = 1;
/// A null pointer where a value is required, text that is not UTF-8, or
/// bad options.
pub const MURANOPL_INVALID_ARGUMENT: c_int = 2;
/// The library panicked (a bug); the error says where.
pub const MURANOPL_PANIC: c_int = 3;

/// A compiled expression, bound to the engine that compiled it.
pub struct MuranoplProgram {
    program: Program,
    source: String,
}

/// The library version (a static string; do not free it).
#[no_mangle]
pub extern "C" fn muranopl_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Frees a string this library returned (null is ignored).
///
/// # Safety
/// `s` is null or came from this library and is not used again.
#[no_mangle]
pub unsafe extern "C" fn muranopl_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: every string this library hands out comes from
        // `CString::into_raw`, and the caller gives up its ownership.
        let s = unsafe { CString::from_raw(s) };
        no_unwind((), || drop(s));
    }
}

/// Makes a YAQL engine. `options_json` is null (the defaults) or a JSON
/// object with any of `legacy` (bool: yaql 0.2), `limit_iterators` (int or
/// null), `memory_quota` (bytes one value may take, int or null),
/// `max_memory` (bytes one evaluation may allocate, int or null),
/// `timeout_ms` (one evaluation's time, int or null) and
/// `convert_sets_to_lists` (bool). Returns null and writes `*error` (when
/// `error` is not null) on bad options.
///
/// # Safety
/// `options_json` is null or a NUL-terminated string; `error` is null or
/// points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn muranopl_engine_new(
    options_json: *const c_char,
    error: *mut *mut c_char,
) -> *mut MuranoplEngine {
    let mut engine = ptr::null_mut();
    // SAFETY: the caller's contract above is what `text_arg` and `guard`
    // need (a NUL-terminated string or null; writable or null out pointer).
    unsafe {
        guard(error, || {
            let opts = match text_arg(options_json)? {
                None => Options::default(),
                Some(t) => parse_options(t)?,
            };
            engine = Box::into_raw(Box::new(MuranoplEngine {
                engine: Engine::new(opts),
            }));
            Ok(())
        });
    }
    engine
}

/// Frees an engine (null is ignored). Programs it compiled must be freed
/// first.
///
/// # Safety
/// `engine` is null or came from [`muranopl_engine_new`] and is not used
/// again.
#[no_mangle]
pub unsafe extern "C" fn muranopl_engine_free(engine: *mut MuranoplEngine) {
    // SAFETY: the function's contract is `free_boxed`'s.
    unsafe { free_boxed(engine) }
}

/// Compiles `expr`. On success writes the program to `*out`.
///
/// # Safety
/// `engine` came from [`muranopl_engine_new`]; `expr` is a NUL-terminated
/// string; `out` points to writable storage for one pointer; `error` is
/// null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_compile(
    engine: *const MuranoplEngine,
    expr: *const c_char,
    out: *mut *mut MuranoplProgram,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            out_arg(out, "out")?;
            let (_, source, program) = compile_arg(engine, expr)?;
            *out = Box::into_raw(Box::new(MuranoplProgram {
                program,
                source: source.to_string(),
            }));
            Ok(())
        })
    }
}

/// Frees a program (null is ignored).
///
/// # Safety
/// `program` is null or came from [`muranopl_compile`] and is not used
/// again.
#[no_mangle]
pub unsafe extern "C" fn muranopl_program_free(program: *mut MuranoplProgram) {
    // SAFETY: the function's contract is `free_boxed`'s.
    unsafe { free_boxed(program) }
}

/// Evaluates a compiled program over `data_json` (JSON text; null means
/// `null`) within the limits of `options_json` (null, or `{"timeout_ms",
/// "max_memory"}`: they tighten the engine's own). On success writes the
/// result, JSON text, to `*result`.
///
/// # Safety
/// `engine` and `program` came from this library (the program from this
/// engine); `data_json` and `options_json` are null or NUL-terminated
/// strings; `result` points to writable storage for one pointer; `error`
/// is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_eval(
    engine: *const MuranoplEngine,
    program: *const MuranoplProgram,
    data_json: *const c_char,
    options_json: *const c_char,
    result: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let engine = engine_arg(engine)?;
            let program = program.as_ref().ok_or_else(|| null_arg("program"))?;
            out_arg(result, "result")?;
            let limits = call_options(options_json, Limits::UNLIMITED, &[])?.limits;
            let out = run(engine, &program.program, &program.source, data_json, limits)?;
            put(result, "result", out)
        })
    }
}

/// Compiles and evaluates `expr` over `data_json` in one call (see
/// [`muranopl_eval`]).
///
/// # Safety
/// As for [`muranopl_compile`] and [`muranopl_eval`].
#[no_mangle]
pub unsafe extern "C" fn muranopl_eval_expr(
    engine: *const MuranoplEngine,
    expr: *const c_char,
    data_json: *const c_char,
    options_json: *const c_char,
    result: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            out_arg(result, "result")?;
            let limits = call_options(options_json, Limits::UNLIMITED, &[])?.limits;
            let (engine, source, program) = compile_arg(engine, expr)?;
            let out = run(engine, &program, source, data_json, limits)?;
            put(result, "result", out)
        })
    }
}

// ---- internals ----------------------------------------------------------

/// # Safety
/// `p` is null or points to a live engine.
unsafe fn engine_arg<'a>(p: *const MuranoplEngine) -> Result<&'a MuranoplEngine, Failure> {
    // SAFETY: the caller's contract: null or a live engine.
    unsafe { p.as_ref() }.ok_or_else(|| null_arg("engine"))
}

/// The engine and the expression arguments, checked, and the expression
/// compiled.
///
/// # Safety
/// `engine` is null or points to a live engine; `expr` is null or a
/// NUL-terminated string that outlives the call.
unsafe fn compile_arg<'a>(
    engine: *const MuranoplEngine,
    expr: *const c_char,
) -> Result<(&'a MuranoplEngine, &'a str, Program), Failure> {
    // SAFETY: the caller's contract on both pointers.
    let engine = unsafe { engine_arg(engine) }?;
    // SAFETY: as above.
    let source = unsafe { required(expr, "expr") }?;
    let program = engine
        .engine
        .compile(source)
        .map_err(|e| Failure::Error(e, Some(source.to_string())))?;
    Ok((engine, source, program))
}

/// Evaluates `program` over the JSON text at `data` within `limits` and
/// returns the result as JSON text.
///
/// # Safety
/// `data` is null or a NUL-terminated string.
unsafe fn run(
    engine: &MuranoplEngine,
    program: &Program,
    source: &str,
    data: *const c_char,
    limits: Limits,
) -> Result<String, Failure> {
    // SAFETY: the caller's contract on `data`.
    let text = unsafe { text_arg(data) }?.unwrap_or("null");
    // On an engine-owned stack: the host's thread may have a small one, and
    // parsing, evaluating, printing and dropping nested values recurse.
    muranopl::on_engine_stack(|| {
        let _budget = limits.start();
        let value = muranopl::json::from_tagged_str(text).map_err(Failure::from)?;
        let out = engine
            .engine
            .eval(program, value)
            .map_err(|e| Failure::Error(e, Some(source.to_string())))?;
        Ok(muranopl::json::to_tagged_string(&out))
    })
}

fn parse_options(text: &str) -> Result<Options, Failure> {
    let bad = |m: String| Failure::Invalid(format!("options: {m}"));
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("expected a JSON object".into()))?;
    let mut o = Options::default();
    for (k, x) in obj {
        let size = || -> Result<Option<usize>, Failure> {
            match x {
                serde_json::Value::Null => Ok(None),
                n => n
                    .as_u64()
                    .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
                    .ok_or_else(|| bad(format!("{k} must be a non-negative integer or null"))),
            }
        };
        let flag = || {
            x.as_bool()
                .ok_or_else(|| bad(format!("{k} must be a bool")))
        };
        match k.as_str() {
            "legacy" => o.legacy = flag()?,
            "convert_sets_to_lists" => o.convert_sets_to_lists = flag()?,
            "limit_iterators" => o.limit_iterators = size()?,
            "memory_quota" => o.memory_quota = size()?,
            "max_memory" => o.max_memory = size()?,
            "timeout_ms" => {
                o.time_budget = size()?.map(|ms| std::time::Duration::from_millis(ms as u64))
            }
            other => return Err(bad(format!("unknown option {other:?}"))),
        }
    }
    Ok(o)
}
