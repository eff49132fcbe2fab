//! The C ABI: YAQL engines, compiled expressions and evaluation over JSON
//! text, and MuranoPL object-model validation against packages, for
//! programs written in C (or anything that calls C). The header
//! is `include/muranopl.h`; `docs/embedding.md` shows a complete program.
//!
//! Conventions, for every function here:
//!
//! - Strings in are NUL-terminated UTF-8; strings out are allocated here,
//!   NUL-terminated, and freed with [`muranopl_string_free`].
//! - Functions that can fail return a status ([`MURANOPL_OK`] and the
//!   others below) and write their result through an out pointer. On
//!   failure, and when the caller passes a non-null `error`, `*error`
//!   receives a JSON object `{"kind", "message", "line", "column"}`
//!   (`line`/`column` are 1-based positions in the expression, or null).
//! - A null pointer where a value is required, or text that is not
//!   UTF-8, is [`MURANOPL_INVALID_ARGUMENT`]; nothing is written to the
//!   result.
//! - No panic crosses the boundary: one is caught and reported as
//!   [`MURANOPL_PANIC`].
//! - An engine and its programs may be shared between threads; each call
//!   only reads them.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use muranopl::{json, Catalogue, Engine, Error, Options, Program};

/// Success.
pub const MURANOPL_OK: c_int = 0;
/// The expression or the data is wrong, or evaluation failed (see the
/// error's `kind`).
pub const MURANOPL_ERROR: c_int = 1;
/// A null pointer where a value is required, or text that is not UTF-8.
pub const MURANOPL_INVALID_ARGUMENT: c_int = 2;
/// The engine panicked (a bug); the error says where.
pub const MURANOPL_PANIC: c_int = 3;

/// An engine: the YAQL standard library with its options.
pub struct MuranoplEngine {
    engine: Engine,
}

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

/// Makes an engine. `options_json` is null (the defaults) or a JSON
/// object with any of `legacy` (bool), `limit_iterators` (int or null),
/// `memory_quota` (bytes, int or null) and `convert_sets_to_lists` (bool).
/// Returns null and writes `*error` (when `error` is not null) on bad
/// options.
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

/// Takes back and drops what `Box::into_raw` handed out (null is ignored).
///
/// # Safety
/// `p` is null or came from `Box::into_raw` of a `Box<T>` and is not used
/// again.
unsafe fn free_boxed<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: the caller's contract: an unused pointer from
        // `Box::into_raw`, whose ownership comes back here.
        drop(unsafe { Box::from_raw(p) });
    }
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
            if out.is_null() {
                return Err(null_arg("out"));
            }
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
/// `null`). On success writes the result, JSON text, to `*result`.
///
/// # Safety
/// `engine` and `program` came from this library (the program from this
/// engine); `data_json` is null or a NUL-terminated string; `result`
/// points to writable storage for one pointer; `error` is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_eval(
    engine: *const MuranoplEngine,
    program: *const MuranoplProgram,
    data_json: *const c_char,
    result: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let engine = engine_arg(engine)?;
            let program = program.as_ref().ok_or_else(|| null_arg("program"))?;
            if result.is_null() {
                return Err(null_arg("result"));
            }
            let out = run(engine, &program.program, &program.source, data_json)?;
            *result = out;
            Ok(())
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
    result: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            if result.is_null() {
                return Err(null_arg("result"));
            }
            let (engine, source, program) = compile_arg(engine, expr)?;
            *result = run(engine, &program, source, data_json)?;
            Ok(())
        })
    }
}

/// A set of MuranoPL packages to validate object models against, compiled
/// once and shared by every call (from any thread).
pub struct MuranoplValidator {
    catalogue: Catalogue,
}

/// Loads the packages in `package_dirs` (`count` NUL-terminated paths of
/// package directories or .zip files) for [`muranopl_validate`]. Returns
/// null and writes `*error` when a package cannot be loaded.
///
/// # Safety
/// `package_dirs` points to `count` NUL-terminated strings (it may be null
/// when `count` is 0); `error` is null or points to writable storage for
/// one pointer.
#[no_mangle]
pub unsafe extern "C" fn muranopl_validator_new(
    package_dirs: *const *const c_char,
    count: usize,
    error: *mut *mut c_char,
) -> *mut MuranoplValidator {
    let mut validator = ptr::null_mut();
    // SAFETY: see the function's contract; the array is read only when it
    // is not null, and each entry is checked for null.
    unsafe {
        guard(error, || {
            if package_dirs.is_null() && count > 0 {
                return Err(null_arg("package_dirs"));
            }
            let mut paths = Vec::new();
            for i in 0..count {
                let dir = text_arg(*package_dirs.add(i))?
                    .ok_or_else(|| null_arg(&format!("package_dirs[{i}]")))?;
                paths.push(std::path::PathBuf::from(dir));
            }
            let catalogue = Catalogue::load(&paths, &[], true)
                .map_err(|e| Failure::Error(Error::new("PackageError", e), None))?;
            validator = Box::into_raw(Box::new(MuranoplValidator { catalogue }));
            Ok(())
        });
    }
    validator
}

/// Frees a validator (null is ignored).
///
/// # Safety
/// `validator` is null or came from [`muranopl_validator_new`] and is not
/// used again.
#[no_mangle]
pub unsafe extern "C" fn muranopl_validator_free(validator: *mut MuranoplValidator) {
    // SAFETY: the function's contract is `free_boxed`'s.
    unsafe { free_boxed(validator) }
}

/// Validates an object model (JSON text) against the validator's
/// packages. On success (the model loaded, valid or not) writes to
/// `*report` a JSON object `{"valid": bool, "objects": n, "violations":
/// ["$.path.property: message (contract at file:line:col)", ...]}`. A model
/// that cannot be loaded at all (bad JSON, unknown class) is
/// [`MURANOPL_ERROR`].
///
/// # Safety
/// `validator` came from [`muranopl_validator_new`]; `model_json` is a
/// NUL-terminated string; `report` points to writable storage for one
/// pointer; `error` is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_validate(
    validator: *const MuranoplValidator,
    model_json: *const c_char,
    report: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let v = validator.as_ref().ok_or_else(|| null_arg("validator"))?;
            let text = text_arg(model_json)?.ok_or_else(|| null_arg("model_json"))?;
            if report.is_null() {
                return Err(null_arg("report"));
            }
            // On a large stack, as `muranopl validate` runs: deeply nested
            // models must not overflow the caller's stack. A panic goes on
            // to `guard`, which reports it.
            let rep =
                muranopl::on_big_stack(|| muranopl::validate_text(v.catalogue.catalog(), text))
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
            if let Some(e) = rep.error {
                let (kind, message) = e.split_once(": ").unwrap_or(("ModelError", &e));
                return Err(Failure::Error(Error::new(kind.to_string(), message), None));
            }
            let j = serde_json::json!({
                "valid": rep.violations.is_empty(),
                "objects": rep.objects,
                "violations": rep.violations.iter().map(ToString::to_string).collect::<Vec<_>>(),
            });
            *report = to_c(j.to_string());
            Ok(())
        })
    }
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
        drop(unsafe { CString::from_raw(s) });
    }
}

// ---- internals ----------------------------------------------------------

enum Failure {
    /// An engine error, with the expression it is about (for positions).
    Error(Error, Option<String>),
    Invalid(String),
}

fn null_arg(what: &str) -> Failure {
    Failure::Invalid(format!("{what} is null"))
}

/// Runs `f`, catching panics; writes the error (if any) to `*error`.
///
/// # Safety
/// `error` is null or points to writable storage for one pointer.
unsafe fn guard(error: *mut *mut c_char, f: impl FnOnce() -> Result<(), Failure>) -> c_int {
    let (status, text) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return MURANOPL_OK,
        Ok(Err(Failure::Error(e, src))) => (MURANOPL_ERROR, error_json(&e, src.as_deref())),
        Ok(Err(Failure::Invalid(m))) => (
            MURANOPL_INVALID_ARGUMENT,
            plain_error("InvalidArgument", &m),
        ),
        Err(p) => {
            let m = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            (MURANOPL_PANIC, plain_error("Panic", &m))
        }
    };
    if !error.is_null() {
        // SAFETY: the caller's contract: `error` points to writable storage.
        unsafe { *error = to_c(text) };
    }
    status
}

/// A NUL-terminated argument as UTF-8 (`None` for null).
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives the call.
unsafe fn text_arg<'a>(p: *const c_char) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract: a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|e| Failure::Invalid(format!("text is not UTF-8: {e}")))
}

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
    let source = unsafe { text_arg(expr) }?.ok_or_else(|| null_arg("expr"))?;
    let program = engine
        .engine
        .compile(source)
        .map_err(|e| Failure::Error(e, Some(source.to_string())))?;
    Ok((engine, source, program))
}

/// Evaluates `program` over the JSON text at `data` and returns the result
/// as an owned C string.
///
/// # Safety
/// `data` is null or a NUL-terminated string.
unsafe fn run(
    engine: &MuranoplEngine,
    program: &Program,
    source: &str,
    data: *const c_char,
) -> Result<*mut c_char, Failure> {
    // SAFETY: the caller's contract on `data`.
    let text = unsafe { text_arg(data) }?.unwrap_or("null");
    // On an engine-owned stack: the host's thread may have a small one, and
    // parsing, evaluating, printing and dropping nested values recurse.
    muranopl::on_engine_stack(|| {
        let value = json::from_tagged_str(text).map_err(|e| Failure::Error(e, None))?;
        let out = engine
            .engine
            .eval(program, value)
            .map_err(|e| Failure::Error(e, Some(source.to_string())))?;
        Ok(to_c(json::to_tagged_string(&out)))
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
                    .map(|n| Some(n as usize))
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
            other => return Err(bad(format!("unknown option {other:?}"))),
        }
    }
    Ok(o)
}

fn error_json(e: &Error, src: Option<&str>) -> String {
    let (line, column) = match (e.span(), src) {
        (Some(s), Some(src)) => {
            let (l, c) = muranopl::line_col(src, s.start);
            (serde_json::json!(l), serde_json::json!(c))
        }
        _ => (serde_json::Value::Null, serde_json::Value::Null),
    };
    serde_json::json!({
        "kind": e.kind(),
        "message": e.message(),
        "line": line,
        "column": column,
    })
    .to_string()
}

fn plain_error(kind: &str, message: &str) -> String {
    serde_json::json!({"kind": kind, "message": message, "line": null, "column": null}).to_string()
}

/// An owned C string. JSON text escapes NUL, so the cut at an interior
/// NUL is only a guard.
fn to_c(s: String) -> *mut c_char {
    let s = match CString::new(s) {
        Ok(c) => c,
        Err(e) => {
            let n = e.nul_position();
            let mut v = e.into_vec();
            v.truncate(n);
            CString::new(v).unwrap_or_default()
        }
    };
    s.into_raw()
}
