//! What every entry point shares: the panic guard, argument checks, the
//! per-call options and JSON text in and out.

use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use muranopl::{json, Engine, Error, Limits, Value};

use crate::{MURANOPL_ERROR, MURANOPL_INVALID_ARGUMENT, MURANOPL_OK, MURANOPL_PANIC};

/// Why a call failed.
pub(crate) enum Failure {
    /// An engine error, with the expression it is about (for positions).
    Error(Error, Option<String>),
    /// A bad argument: a null pointer, text that is not UTF-8, bad options.
    Invalid(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e, None)
    }
}

pub(crate) fn null_arg(what: &str) -> Failure {
    Failure::Invalid(format!("{what} is null"))
}

/// Runs `f`, catching panics; writes the error (if any) to `*error`.
///
/// # Safety
/// `error` is null or points to writable storage for one pointer.
pub(crate) unsafe fn guard(
    error: *mut *mut c_char,
    f: impl FnOnce() -> Result<(), Failure>,
) -> c_int {
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

/// Writes `value` to the out pointer `out` (named `what` in the error
/// when it is null).
///
/// # Safety
/// `out` is null or points to writable storage for one pointer.
pub(crate) unsafe fn put(out: *mut *mut c_char, what: &str, value: String) -> Result<(), Failure> {
    if out.is_null() {
        return Err(null_arg(what));
    }
    // SAFETY: the caller's contract: not null (checked), writable.
    unsafe { *out = to_c(value) };
    Ok(())
}

/// Checks an out pointer before the work that fills it is done.
pub(crate) fn out_arg<T>(out: *mut *mut T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        Err(null_arg(what))
    } else {
        Ok(())
    }
}

/// A NUL-terminated argument as UTF-8 (`None` for null).
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives the call.
pub(crate) unsafe fn text_arg<'a>(p: *const c_char) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract: a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|e| Failure::Invalid(format!("text is not UTF-8: {e}")))
}

/// A required NUL-terminated argument (`what` names it when it is null).
///
/// # Safety
/// As for [`text_arg`].
pub(crate) unsafe fn required<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    // SAFETY: the caller's contract is `text_arg`'s.
    unsafe { text_arg(p) }?.ok_or_else(|| null_arg(what))
}

/// `count` NUL-terminated strings at `list` (null when `count` is 0).
///
/// # Safety
/// `list` is null or points to `count` pointers, each null or a
/// NUL-terminated string that outlives the call.
pub(crate) unsafe fn text_list<'a>(
    list: *const *const c_char,
    count: usize,
    what: &str,
) -> Result<Vec<&'a str>, Failure> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if list.is_null() {
        return Err(null_arg(what));
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the caller's contract: `count` readable pointers.
        let p = unsafe { *list.add(i) };
        // SAFETY: the caller's contract: each a NUL-terminated string.
        out.push(unsafe { required(p, &format!("{what}[{i}]")) }?);
    }
    Ok(out)
}

/// JSON text in (tagged JSON: `{"$datetime": ...}` and the like).
pub(crate) fn value_in(text: &str) -> Result<Value, Failure> {
    json::from_tagged_str(text).map_err(Failure::from)
}

/// A value as JSON (through its tagged JSON text).
pub(crate) fn value_out(v: &Value) -> serde_json::Value {
    let text = json::to_tagged_string(v);
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

/// What one call's options JSON (null: none) says.
pub(crate) struct CallOptions {
    pub limits: Limits,
    /// `cloud`: the simulated cloud's configuration (JSON or YAML text).
    pub cloud: Option<String>,
    /// `methods`: the methods whose form schemas are wanted.
    pub methods: Option<Vec<String>>,
    /// `version`: the class version spec.
    pub version: Option<String>,
    /// `package`: the package that provides the class.
    pub package: Option<String>,
}

/// The limits' keys, accepted by every call that takes options.
const LIMIT_KEYS: [&str; 3] = ["timeout_ms", "max_steps", "max_memory"];

/// Parses a call's options: the limits (`timeout_ms`, `max_steps`,
/// `max_memory`: a non-negative integer, or null for no limit; absent
/// keys keep `defaults`) and the call's own `keys`.
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives the call.
pub(crate) unsafe fn call_options(
    p: *const c_char,
    defaults: Limits,
    keys: &[&str],
) -> Result<CallOptions, Failure> {
    let mut o = CallOptions {
        limits: defaults,
        cloud: None,
        methods: None,
        version: None,
        package: None,
    };
    // SAFETY: the caller's contract is `text_arg`'s.
    let Some(text) = (unsafe { text_arg(p) })? else {
        return Ok(o);
    };
    let bad = |m: String| Failure::Invalid(format!("options: {m}"));
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("expected a JSON object".into()))?;
    for (k, x) in obj {
        let size = || -> Result<Option<u64>, Failure> {
            match x {
                serde_json::Value::Null => Ok(None),
                n => n
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| bad(format!("{k} must be a non-negative integer or null"))),
            }
        };
        let string = || -> Result<Option<String>, Failure> {
            match x {
                serde_json::Value::Null => Ok(None),
                serde_json::Value::String(s) => Ok(Some(s.clone())),
                _ => Err(bad(format!("{k} must be a string or null"))),
            }
        };
        if !LIMIT_KEYS.contains(&k.as_str()) && !keys.contains(&k.as_str()) {
            return Err(bad(format!("unknown option {k:?}")));
        }
        match k.as_str() {
            "timeout_ms" => o.limits.timeout = size()?.map(Duration::from_millis),
            "max_steps" => o.limits.max_steps = size()?,
            "max_memory" => {
                o.limits.max_memory = size()?.map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            }
            "cloud" => o.cloud = string()?,
            "version" => o.version = string()?,
            "package" => o.package = string()?,
            "methods" => {
                o.methods = match x {
                    serde_json::Value::Null => None,
                    serde_json::Value::Array(a) => Some(
                        a.iter()
                            .map(|m| m.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| bad("methods must be a list of strings".into()))?,
                    ),
                    _ => return Err(bad("methods must be a list of strings or null".into())),
                }
            }
            other => return Err(bad(format!("unknown option {other:?}"))),
        }
    }
    Ok(o)
}

/// An error as the JSON object every failing call writes to `*error`:
/// `{"kind", "message", "line", "column", "trace"}`; `line` and `column`
/// are 1-based positions in the expression `src` (null when there is
/// none), `trace` the MuranoPL stack trace, innermost first.
pub(crate) fn error_json(e: &Error, src: Option<&str>) -> String {
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
        "trace": e.trace(),
    })
    .to_string()
}

/// A MuranoPL error as a run's outcome names it: `{"kind", "message",
/// "trace"}`.
pub(crate) fn run_error_json(e: &Error) -> serde_json::Value {
    serde_json::json!({"kind": e.kind(), "message": e.message(), "trace": e.trace()})
}

fn plain_error(kind: &str, message: &str) -> String {
    serde_json::json!({
        "kind": kind, "message": message, "line": null, "column": null, "trace": [],
    })
    .to_string()
}

/// An owned C string. JSON text escapes NUL, so the cut at an interior
/// NUL is only a guard.
pub(crate) fn to_c(s: String) -> *mut c_char {
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

/// Takes back and drops what `Box::into_raw` handed out (null is ignored).
///
/// # Safety
/// `p` is null or came from `Box::into_raw` of a `Box<T>` and is not used
/// again.
pub(crate) unsafe fn free_boxed<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: the caller's contract: an unused pointer from
        // `Box::into_raw`, whose ownership comes back here.
        let b = unsafe { Box::from_raw(p) };
        // A panic while dropping (a bug) must not unwind into C: the
        // handle is then leaked, not half-freed.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(b)));
    }
}

/// Runs `f`, the body of an entry point that reports no error (a free, a
/// reply), and returns `panicked` if it panics (a bug): no panic unwinds
/// into C.
pub(crate) fn no_unwind<T>(panicked: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(panicked)
}

/// A YAQL engine: the standard library with its options, and the host's
/// functions.
pub struct MuranoplEngine {
    pub(crate) engine: Engine,
}
