//! Host functions: C callbacks that YAQL expressions call by name, their
//! arguments and their answer as JSON text: in an engine's evaluations,
//! and in the MuranoPL code of the catalogues loaded with the engine
//! (`muranopl_catalogue_load_with`).

use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

use muranopl::{json, Error, Value};

use crate::common::{guard, no_unwind, null_arg, required, text_arg, MuranoplEngine};
use crate::{MURANOPL_ERROR, MURANOPL_INVALID_ARGUMENT, MURANOPL_OK, MURANOPL_PANIC};

/// Where a host function puts its answer ([`muranopl_reply_value`],
/// [`muranopl_reply_error`]); valid only during the callback.
pub struct MuranoplReply {
    answer: Option<Result<Value, Error>>,
}

/// A host function: called with its `user_data`, the call's positional
/// arguments (`args_json`, a JSON array; an argument the call left out,
/// as in `f(1,,3)`, is null) and keyword arguments (`kwargs_json`, a JSON
/// object), both valid only during the call. It answers through `reply`
/// and returns [`MURANOPL_OK`], or another status for a failure (the
/// error set with [`muranopl_reply_error`], else a generic one). Without
/// an answer the result is null. It may be called from every thread that
/// evaluates with the engine or runs code of a catalogue loaded with it,
/// at the same time, and must not unwind (C++ exceptions, `longjmp`)
/// across the library.
pub type MuranoplHostFn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        args_json: *const c_char,
        kwargs_json: *const c_char,
        reply: *mut MuranoplReply,
    ) -> c_int,
>;

/// A callback (not null) with its user data, as the engine keeps it.
struct Callback {
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut MuranoplReply) -> c_int,
    user_data: *mut c_void,
}

// SAFETY: `muranopl_engine_define`'s contract: the callback may be called
// from any thread, at the same time, with this user data; the library
// only passes the pointer back.
unsafe impl Send for Callback {}
// SAFETY: as above.
unsafe impl Sync for Callback {}

impl Callback {
    fn call(
        &self,
        name: &str,
        args: &[Option<Value>],
        kwargs: &[(Arc<str>, Value)],
    ) -> Result<Value, Error> {
        let args_text = {
            let items: Vec<String> = (args.iter())
                .map(|a| a.as_ref().map_or("null".into(), json::to_tagged_string))
                .collect();
            format!("[{}]", items.join(", "))
        };
        let kwargs_text = {
            let items: Vec<String> = (kwargs.iter())
                .map(|(k, v)| {
                    let key = serde_json::Value::String(k.to_string()).to_string();
                    format!("{key}: {}", json::to_tagged_string(v))
                })
                .collect();
            format!("{{{}}}", items.join(", "))
        };
        let c = |s: String| {
            CString::new(s).map_err(|_| Error::new("ValueError", "an argument holds a NUL"))
        };
        let (args_c, kwargs_c) = (c(args_text)?, c(kwargs_text)?);
        let mut reply = MuranoplReply { answer: None };
        // SAFETY: `muranopl_engine_define`'s contract: `f` is a function of
        // this type, callable with `user_data` from this thread; the
        // strings and the reply outlive the call.
        let status = unsafe {
            (self.f)(
                self.user_data,
                args_c.as_ptr(),
                kwargs_c.as_ptr(),
                &mut reply,
            )
        };
        match (status, reply.answer) {
            (MURANOPL_OK, Some(Ok(v))) => Ok(v),
            (MURANOPL_OK, None) => Ok(Value::Null),
            (_, Some(Err(e))) => Err(e),
            (status, _) => Err(Error::new(
                "HostFunctionError",
                format!("host function {name} failed (status {status})"),
            )),
        }
    }
}

/// Defines the function `name` for the expressions `engine` evaluates
/// (`name(...)`; it takes precedence over a standard-library function of
/// that name, and replaces an earlier definition of the name), and for
/// the MuranoPL code of the catalogues loaded with the engine afterwards
/// (`muranopl_catalogue_load_with`). Define functions before the engine
/// is shared: this call must not overlap another call on the engine.
///
/// # Safety
/// `engine` came from `muranopl_engine_new`
/// and no other call uses it meanwhile; `name` is a NUL-terminated string;
/// `f` is null (refused) or a function of [`MuranoplHostFn`]'s type that,
/// with `user_data`, may be called from any thread, at the same time, as
/// long as the engine or a catalogue loaded with it lives; `error` is
/// null or points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn muranopl_engine_define(
    engine: *mut MuranoplEngine,
    name: *const c_char,
    f: MuranoplHostFn,
    user_data: *mut c_void,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use, and the engine is not shared during the call.
    unsafe {
        guard(error, || {
            let engine = engine.as_mut().ok_or_else(|| null_arg("engine"))?;
            let name = required(name, "name")?.to_string();
            let f = f.ok_or_else(|| null_arg("f"))?;
            let cb = Callback { f, user_data };
            let label = name.clone();
            engine.engine.define(
                &name,
                Arc::new(move |args, kwargs| cb.call(&label, args, kwargs)),
            );
            Ok(())
        })
    }
}

/// Answers a host function call with the value `value_json` (JSON text).
/// Returns [`MURANOPL_OK`], or [`MURANOPL_ERROR`] when the text is not
/// JSON (the call then fails with that error), or
/// [`MURANOPL_INVALID_ARGUMENT`] for a null pointer or text that is not
/// UTF-8.
///
/// # Safety
/// `reply` is the pointer the running callback received; `value_json` is
/// a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn muranopl_reply_value(
    reply: *mut MuranoplReply,
    value_json: *const c_char,
) -> c_int {
    // SAFETY: see the function's contract; both pointers are checked for
    // null before use.
    let (reply, text) = match unsafe { (reply.as_mut(), text_arg(value_json)) } {
        (Some(r), Ok(Some(t))) => (r, t),
        _ => return MURANOPL_INVALID_ARGUMENT,
    };
    no_unwind(MURANOPL_PANIC, || {
        let answer = json::from_tagged_str(text);
        let status = if answer.is_ok() {
            MURANOPL_OK
        } else {
            MURANOPL_ERROR
        };
        reply.answer = Some(answer);
        status
    })
}

/// Makes a host function call fail with an error of `kind` (null:
/// `HostFunctionError`) and `message`, as an exception YAQL code sees.
/// Returns [`MURANOPL_OK`], or [`MURANOPL_INVALID_ARGUMENT`] for a null
/// `reply` or text that is not UTF-8.
///
/// # Safety
/// `reply` is the pointer the running callback received; `kind` and
/// `message` are null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn muranopl_reply_error(
    reply: *mut MuranoplReply,
    kind: *const c_char,
    message: *const c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    let parts = unsafe { (reply.as_mut(), text_arg(kind), text_arg(message)) };
    let (reply, kind, message) = match parts {
        (Some(r), Ok(k), Ok(m)) => (r, k, m),
        _ => return MURANOPL_INVALID_ARGUMENT,
    };
    no_unwind(MURANOPL_PANIC, || {
        let kind = kind.unwrap_or("HostFunctionError").to_string();
        reply.answer = Some(Err(Error::new(kind, message.unwrap_or(""))));
        MURANOPL_OK
    })
}
