//! The C ABI (`capi/src`, `include/muranopl.h`): called from Rust through
//! the same `extern "C"` functions, then from real C programs
//! (`examples/c`) compiled against the header and the shared library
//! (when a C compiler is present).

mod common {
    /// The workspace's root (examples, include).
    pub fn root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_path_buf()
    }
}

use std::ffi::{c_char, CStr, CString};
use std::ptr;

use muranopl_capi::*;

/// Takes a string the library returned.
fn take(s: *mut c_char) -> String {
    assert!(!s.is_null());
    // SAFETY: `s` came from the library and is freed right after.
    let out = unsafe { CStr::from_ptr(s) }.to_str().unwrap().to_string();
    // SAFETY: as above; not used again.
    unsafe { muranopl_string_free(s) };
    out
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

#[test]
fn compile_once_evaluate_many_times() {
    let mut error = ptr::null_mut();
    // SAFETY: null options, a valid out pointer for the error.
    let engine = unsafe { muranopl_engine_new(ptr::null(), &mut error) };
    assert!(!engine.is_null());
    let mut program = ptr::null_mut();
    let expr = c("$.where($ > 2).select($ * 10)");
    // SAFETY: live engine, NUL-terminated expression, valid out pointers.
    let status = unsafe { muranopl_compile(engine, expr.as_ptr(), &mut program, &mut error) };
    assert_eq!(status, MURANOPL_OK);
    for (data, want) in [("[1, 2, 3, 4]", "[30, 40]"), ("[5]", "[50]"), ("[]", "[]")] {
        let mut result = ptr::null_mut();
        let data = c(data);
        // SAFETY: live engine and program, NUL-terminated data, valid outs.
        let status = unsafe {
            muranopl_eval(
                engine,
                program,
                data.as_ptr(),
                ptr::null(),
                &mut result,
                &mut error,
            )
        };
        assert_eq!(status, MURANOPL_OK);
        assert_eq!(take(result), want);
    }
    // SAFETY: both came from the library; not used again.
    unsafe {
        muranopl_program_free(program);
        muranopl_engine_free(engine);
    }
    // SAFETY: a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(muranopl_version()) };
    assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn errors_come_back_as_json_with_positions() {
    // SAFETY: null options and a null error pointer are allowed.
    let engine = unsafe { muranopl_engine_new(ptr::null(), ptr::null_mut()) };
    let eval = |expr: &str, data: Option<&str>| -> (i32, String) {
        let (mut result, mut error) = (ptr::null_mut(), ptr::null_mut());
        let expr = c(expr);
        let data = data.map(c);
        let dp = data.as_ref().map_or(ptr::null(), |d| d.as_ptr());
        // SAFETY: live engine, NUL-terminated strings (or null data).
        let status = unsafe {
            muranopl_eval_expr(
                engine,
                expr.as_ptr(),
                dp,
                ptr::null(),
                &mut result,
                &mut error,
            )
        };
        if status == MURANOPL_OK {
            assert!(error.is_null());
            (status, take(result))
        } else {
            assert!(result.is_null());
            (status, take(error))
        }
    };
    // Null data is JSON null.
    assert_eq!(eval("$ = null", None), (MURANOPL_OK, "true".into()));
    let (status, e) = eval("1 +\n  (2 *", None);
    assert_eq!(status, MURANOPL_ERROR);
    let e: serde_json::Value = serde_json::from_str(&e).unwrap();
    assert_eq!(e["kind"], "YaqlGrammarException");
    assert_eq!(e["line"], 2, "{e}");
    let (status, e) = eval("$.a", Some("{\"a\": "));
    assert_eq!(status, MURANOPL_ERROR);
    assert!(e.contains("\"line\":null"), "{e}");
    let (status, e) = eval("len($)", Some("5"));
    assert_eq!(status, MURANOPL_ERROR);
    let e: serde_json::Value = serde_json::from_str(&e).unwrap();
    assert_eq!(e["kind"], "NoMatchingFunctionException", "{e}");
    assert_eq!(
        (e["line"].clone(), e["column"].clone()),
        (1.into(), 1.into())
    );
    // SAFETY: from the library; not used again.
    unsafe { muranopl_engine_free(engine) };
}

#[test]
fn bad_arguments_and_options_are_refused() {
    let mut error = ptr::null_mut();
    let opts = c(r#"{"legacy": true, "limit_iterators": 3}"#);
    // SAFETY: NUL-terminated options, valid out pointer.
    let engine = unsafe { muranopl_engine_new(opts.as_ptr(), &mut error) };
    assert!(!engine.is_null());
    let mut result = ptr::null_mut();
    let expr = c("range(10)");
    // SAFETY: live engine, NUL-terminated expression, valid outs.
    let status = unsafe {
        muranopl_eval_expr(
            engine,
            expr.as_ptr(),
            ptr::null(),
            ptr::null(),
            &mut result,
            &mut error,
        )
    };
    assert_eq!(status, MURANOPL_ERROR, "the iterator limit applies");
    assert!(take(error).contains("CollectionTooLargeException"));
    // Null where a value is required.
    let mut error = ptr::null_mut();
    // SAFETY: null expression is checked by the callee.
    let status = unsafe {
        muranopl_eval_expr(
            engine,
            ptr::null(),
            ptr::null(),
            ptr::null(),
            &mut result,
            &mut error,
        )
    };
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT);
    assert!(take(error).contains("expr is null"));
    // SAFETY: null engine is checked by the callee; null error allowed.
    let status = unsafe {
        muranopl_eval_expr(
            ptr::null(),
            expr.as_ptr(),
            ptr::null(),
            ptr::null(),
            &mut result,
            ptr::null_mut(),
        )
    };
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT);
    // Not UTF-8.
    let bad = CString::new(vec![b'$', 0xff]).unwrap();
    let mut error = ptr::null_mut();
    // SAFETY: NUL-terminated bytes; the callee checks UTF-8.
    let status = unsafe {
        muranopl_eval_expr(
            engine,
            bad.as_ptr(),
            ptr::null(),
            ptr::null(),
            &mut result,
            &mut error,
        )
    };
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT);
    assert!(take(error).contains("UTF-8"));
    // SAFETY: from the library; not used again. Freeing null is a no-op.
    unsafe {
        muranopl_engine_free(engine);
        muranopl_engine_free(ptr::null_mut());
        muranopl_string_free(ptr::null_mut());
    }
    // Bad options: null engine and an error.
    for opts in [
        r#"{"legacy": 1}"#,
        r#"{"nope": true}"#,
        "[",
        r#"{"memory_quota": -1}"#,
    ] {
        let mut error = ptr::null_mut();
        let o = c(opts);
        // SAFETY: NUL-terminated options, valid out pointer.
        let engine = unsafe { muranopl_engine_new(o.as_ptr(), &mut error) };
        assert!(engine.is_null(), "{opts}");
        assert!(take(error).contains("options:"), "{opts}");
    }
}

/// Evaluation runs on an engine-owned stack: a host thread with a small
/// stack gets a value nested 10^5 deep back instead of a segfault
/// (issue 13).
#[test]
fn deep_values_do_not_overflow_the_host_stack() {
    let out = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            // SAFETY: null options and a null error pointer are allowed.
            let engine = unsafe { muranopl_engine_new(ptr::null(), ptr::null_mut()) };
            let expr = c("let(x => range(20000).aggregate([$1], [])) -> range(100000).aggregate([$1], []).len() + 1");
            let mut result = ptr::null_mut();
            let mut error = ptr::null_mut();
            // SAFETY: live engine, NUL-terminated expression, null data,
            // valid out pointers.
            let status = unsafe {
                muranopl_eval_expr(engine, expr.as_ptr(), ptr::null(), ptr::null(), &mut result, &mut error)
            };
            let out = if status == MURANOPL_OK { take(result) } else { take(error) };
            // SAFETY: came from the library; not used again.
            unsafe { muranopl_engine_free(engine) };
            out
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out, "2");
}

/// One engine shared by 8 threads, and 8 engines on 8 threads, evaluate
/// the same programs concurrently with the same answers (the header says
/// an engine and its programs may be shared between threads).
#[test]
fn engines_and_programs_are_shared_across_threads() {
    struct Shared(*mut MuranoplEngine, *mut MuranoplProgram);
    // SAFETY: the header documents engines and programs as shareable; the
    // test frees them only after every thread joined.
    unsafe impl Send for Shared {}
    // SAFETY: as above.
    unsafe impl Sync for Shared {}
    let eval = |engine: *const MuranoplEngine, program: *const MuranoplProgram, i: usize| {
        let data = c(&format!("[{i}, {}, 100]", i + 1));
        let mut result = ptr::null_mut();
        let mut error = ptr::null_mut();
        // SAFETY: live engine and program, NUL-terminated data, valid outs.
        let status = unsafe {
            muranopl_eval(
                engine,
                program,
                data.as_ptr(),
                ptr::null(),
                &mut result,
                &mut error,
            )
        };
        assert_eq!(status, MURANOPL_OK);
        take(result)
    };
    let compile = || {
        // SAFETY: null options and a null error pointer are allowed.
        let engine = unsafe { muranopl_engine_new(ptr::null(), ptr::null_mut()) };
        let mut program = ptr::null_mut();
        let expr = c("$.where($ > 5).select($ * 2).sum()");
        // SAFETY: live engine, NUL-terminated expression, valid out pointer.
        let status =
            unsafe { muranopl_compile(engine, expr.as_ptr(), &mut program, ptr::null_mut()) };
        assert_eq!(status, MURANOPL_OK);
        Shared(engine, program)
    };
    let want = |i: usize| {
        ((if i > 5 { i } else { 0 }) * 2 + (if i + 1 > 5 { i + 1 } else { 0 }) * 2 + 200)
            .to_string()
    };
    let shared = compile();
    std::thread::scope(|s| {
        for t in 0..8 {
            let shared = &shared;
            s.spawn(move || {
                for i in 0..200 {
                    assert_eq!(eval(shared.0, shared.1, t * 200 + i), want(t * 200 + i));
                }
            });
        }
        for t in 0..8 {
            s.spawn(move || {
                let own = compile();
                for i in 0..200 {
                    assert_eq!(eval(own.0, own.1, t * 200 + i), want(t * 200 + i));
                }
                // SAFETY: came from the library; not used again.
                unsafe {
                    muranopl_program_free(own.1);
                    muranopl_engine_free(own.0);
                }
            });
        }
    });
    // SAFETY: every thread joined; not used again.
    unsafe {
        muranopl_program_free(shared.1);
        muranopl_engine_free(shared.0);
    }
}

/// Calls `f` with the out pointers of a result and an error; returns the
/// status and the text written (the result on success, else the error).
fn call(f: impl FnOnce(*mut *mut c_char, *mut *mut c_char) -> i32) -> (i32, String) {
    let (mut result, mut error) = (ptr::null_mut(), ptr::null_mut());
    let status = f(&mut result, &mut error);
    if status == MURANOPL_OK {
        assert!(error.is_null());
        (status, take(result))
    } else {
        assert!(result.is_null());
        (status, take(error))
    }
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A catalogue of the example packages (validate and hello-app).
struct Cat(*mut MuranoplCatalogue);

// SAFETY: the header documents catalogues as shareable; the handle is
// freed only on drop, after every user is done.
unsafe impl Send for Cat {}
// SAFETY: as above.
unsafe impl Sync for Cat {}

impl Cat {
    fn load() -> Cat {
        let root = common::root();
        let paths: Vec<CString> = ["examples/validate", "examples/hello-app"]
            .iter()
            .map(|p| c(root.join(p).to_str().unwrap()))
            .collect();
        let ptrs: Vec<*const c_char> = paths.iter().map(|p| p.as_ptr()).collect();
        let mut error = ptr::null_mut();
        // SAFETY: two NUL-terminated paths, no search path, a valid out.
        let cat = unsafe { muranopl_catalogue_load(ptrs.as_ptr(), 2, ptr::null(), 0, &mut error) };
        assert!(!cat.is_null(), "{}", take(error));
        Cat(cat)
    }
    fn validate(&self, model: &str, options: Option<&str>) -> (i32, String) {
        let m = c(model);
        let o = options.map(c);
        let op = o.as_ref().map_or(ptr::null(), |o| o.as_ptr());
        // SAFETY: live catalogue, NUL-terminated strings, valid outs.
        call(|r, e| unsafe { muranopl_validate(self.0, m.as_ptr(), op, r, e) })
    }
    fn run(&self, model: &str, method: &str, options: Option<&str>) -> (i32, String) {
        let (m, meth) = (c(model), c(method));
        let o = options.map(c);
        let op = o.as_ref().map_or(ptr::null(), |o| o.as_ptr());
        // SAFETY: live catalogue, NUL-terminated strings, valid outs.
        call(|r, e| unsafe { muranopl_run(self.0, m.as_ptr(), meth.as_ptr(), op, r, e) })
    }
}

impl Drop for Cat {
    fn drop(&mut self) {
        // SAFETY: from the library; not used again.
        unsafe { muranopl_catalogue_free(self.0) }
    }
}

fn server(id: &str, port: &str) -> String {
    format!(
        r#"{{"?": {{"id": "{id}", "type": "com.example.Server"}}, "name": "s", "port": {port},
            "tags": [], "enabled": true, "settings": {{"timeout": 1, "label": "x"}}}}"#
    )
}

fn fleet(servers: &[String]) -> String {
    format!(
        r#"{{"Objects": {{"?": {{"id": "fleet", "type": "com.example.Fleet"}}, "servers": [{}]}}}}"#,
        servers.join(",")
    )
}

const HELLO: &str = r#"{"?": {"id": "app", "type": "com.example.Hello"},
    "instance": {"?": {"id": "vm", "type": "io.murano.resources.LinuxMuranoInstance"},
                 "name": "web", "flavor": "m1.small", "image": "ubuntu"}}"#;

#[test]
fn object_models_validate_against_a_catalogue() {
    let cat = Cat::load();
    let (status, info) = call(|r, e| {
        // SAFETY: live catalogue, valid outs.
        unsafe { muranopl_catalogue_info(cat.0, r, e) }
    });
    assert_eq!(status, MURANOPL_OK);
    let info = json(&info);
    let names = info["packages"].to_string();
    assert!(names.contains("com.example.Hello"), "{names}");
    let (status, rep) = cat.validate(&fleet(&[server("a", "80"), server("b", "8080")]), None);
    assert_eq!(status, MURANOPL_OK, "{rep}");
    let rep = json(&rep);
    assert_eq!(rep["valid"], true, "{rep}");
    assert_eq!(rep["objects"], 3);
    let (status, rep) = cat.validate(&fleet(&[server("a", "80"), server("b", "70000")]), None);
    assert_eq!(status, MURANOPL_OK, "{rep}");
    let rep = json(&rep);
    assert_eq!(rep["valid"], false);
    let v = &rep["violations"][0];
    assert_eq!(v["path"], "$.Objects.servers[1]", "{v}");
    assert_eq!(v["property"], "port", "{v}");
    assert!(v["message"].as_str().unwrap().contains("70000"), "{v}");
    let pos = v["position"].as_str().unwrap();
    assert!(pos.contains("Server.yaml:"), "{pos}");
    // Not loadable at all: an error, not a report.
    let (status, e) = cat.validate(r#"{"?": {"id": "x", "type": "com.example.Nope"}}"#, None);
    assert_eq!(status, MURANOPL_ERROR);
    assert_eq!(json(&e)["kind"], "NoClassFound", "{e}");
    let (status, _) = cat.validate("{", None);
    assert_eq!(status, MURANOPL_ERROR);
    let (status, e) = cat.validate("{}", Some(r#"{"cloud": "x"}"#));
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT);
    assert!(e.contains("unknown option"), "{e}");
    // A package that does not load.
    let bad = c("/nonexistent/package");
    let dirs = [bad.as_ptr()];
    let mut error = ptr::null_mut();
    // SAFETY: one NUL-terminated path, a valid out pointer.
    let v = unsafe { muranopl_catalogue_load(dirs.as_ptr(), 1, ptr::null(), 0, &mut error) };
    assert!(v.is_null());
    assert!(take(error).contains("nonexistent"));
    // A null list with a count.
    let mut error = ptr::null_mut();
    // SAFETY: the null list is checked by the callee.
    let v = unsafe { muranopl_catalogue_load(ptr::null(), 1, ptr::null(), 0, &mut error) };
    assert!(v.is_null());
    assert!(take(error).contains("paths is null"));
}

/// Packages found on the search path (`-L`): with no paths, every
/// package there.
#[test]
fn a_search_path_serves_its_packages() {
    let lib = c(common::root().join("examples").to_str().unwrap());
    let libs = [lib.as_ptr()];
    let mut error = ptr::null_mut();
    // SAFETY: no paths, one NUL-terminated search path, a valid out.
    let cat = unsafe { muranopl_catalogue_load(ptr::null(), 0, libs.as_ptr(), 1, &mut error) };
    assert!(!cat.is_null(), "{}", take(error));
    let cat = Cat(cat);
    let (status, rep) = cat.validate(&server("a", "0"), None);
    assert_eq!(status, MURANOPL_OK, "{rep}");
    assert_eq!(json(&rep)["valid"], false);
}

#[test]
fn methods_run_with_their_outcome_and_limits() {
    let cat = Cat::load();
    let (status, out) = cat.run(HELLO, "deploy", None);
    assert_eq!(status, MURANOPL_OK, "{out}");
    let out = json(&out);
    assert_eq!(out["ok"], true, "{out}");
    assert!(out["error"].is_null());
    assert!(
        out["model"].to_string().contains("com.example.Hello"),
        "{out}"
    );
    assert!(
        out["record"].to_string().contains("hello from 10."),
        "{out}"
    );
    assert!(out["log"].is_array());
    // A method that fails: its error, with the MuranoPL trace.
    let (status, out) = cat.run(HELLO, "nope", None);
    assert_eq!(status, MURANOPL_OK, "{out}");
    let out = json(&out);
    assert_eq!(out["ok"], false, "{out}");
    assert!(out["error"]["kind"].is_string(), "{out}");
    assert!(out["error"]["trace"].is_array(), "{out}");
    // The statement limit.
    let (status, out) = cat.run(HELLO, "deploy", Some(r#"{"max_steps": 3}"#));
    assert_eq!(status, MURANOPL_OK, "{out}");
    let out = json(&out);
    assert_eq!(out["ok"], false, "{out}");
    assert_eq!(out["error"]["kind"], "ExecutionLimitExceeded", "{out}");
    assert!(
        out["error"]["trace"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{out}"
    );
    // The memory limit.
    let (status, out) = cat.run(HELLO, "deploy", Some(r#"{"max_memory": 100}"#));
    assert_eq!(status, MURANOPL_OK, "{out}");
    assert_eq!(json(&out)["ok"], false, "{out}");
    // Bad options and bad JSON.
    let (status, e) = cat.run(HELLO, "deploy", Some(r#"{"max_steps": -1}"#));
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT, "{e}");
    let (status, _) = cat.run("{", "deploy", None);
    assert_eq!(status, MURANOPL_ERROR);
}

#[test]
fn schemas_and_static_actions() {
    let cat = Cat::load();
    let class = c("com.example.Hello");
    // SAFETY: live catalogue, NUL-terminated class, null options.
    let (status, s) =
        call(|r, e| unsafe { muranopl_schema(cat.0, class.as_ptr(), ptr::null(), r, e) });
    assert_eq!(status, MURANOPL_OK, "{s}");
    let s = json(&s);
    assert!(s.to_string().contains("greeting"), "{s}");
    let opts = c(r#"{"methods": ["shout"]}"#);
    // SAFETY: as above, with options.
    let (status, s) =
        call(|r, e| unsafe { muranopl_schema(cat.0, class.as_ptr(), opts.as_ptr(), r, e) });
    assert_eq!(status, MURANOPL_OK, "{s}");
    assert!(json(&s)["shout"].to_string().contains("times"), "{s}");
    let nope = c("com.example.Nope");
    // SAFETY: as above.
    let (status, e) =
        call(|r, e| unsafe { muranopl_schema(cat.0, nope.as_ptr(), ptr::null(), r, e) });
    assert_eq!(status, MURANOPL_ERROR);
    assert_eq!(json(&e)["kind"], "NoClassFound", "{e}");

    let action = |method: &str, args: &str, options: Option<&str>| {
        let (m, a) = (c(method), c(args));
        let o = options.map(c);
        let op = o.as_ref().map_or(ptr::null(), |o| o.as_ptr());
        // SAFETY: live catalogue, NUL-terminated strings, valid outs.
        call(|r, e| unsafe {
            muranopl_static_action(cat.0, class.as_ptr(), m.as_ptr(), a.as_ptr(), op, r, e)
        })
    };
    assert_eq!(
        action("shout", r#"{"text": "hi", "times": 2}"#, None),
        (MURANOPL_OK, r#"["HI", "HI"]"#.to_string())
    );
    let (status, e) = action("shout", r#"{"text": "hi", "times": 0}"#, None);
    assert_eq!(status, MURANOPL_ERROR, "{e}");
    assert!(
        json(&e)["kind"].as_str().unwrap().contains("Contract"),
        "{e}"
    );
    // The memory limit: the action builds a list of 100000 strings.
    let (status, e) = action(
        "shout",
        r#"{"text": "hi", "times": 100000}"#,
        Some(r#"{"max_memory": 1000}"#),
    );
    assert_eq!(status, MURANOPL_ERROR, "{e}");
    assert_eq!(json(&e)["kind"], "MemoryQuotaExceededException", "{e}");
    let (status, e) = action("shout", "[1]", None);
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT, "{e}");
}

/// `add(a, b, bias => 0)` as a C host would write it (counting its calls
/// in `user_data`).
unsafe extern "C" fn host_add(
    user_data: *mut std::ffi::c_void,
    args: *const c_char,
    kwargs: *const c_char,
    reply: *mut MuranoplReply,
) -> i32 {
    // SAFETY: the library passes the counter it was given and two
    // NUL-terminated JSON texts, valid during the call.
    let (count, args, kwargs) = unsafe {
        (
            &*(user_data as *const std::sync::atomic::AtomicUsize),
            CStr::from_ptr(args).to_str().unwrap(),
            CStr::from_ptr(kwargs).to_str().unwrap(),
        )
    };
    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let a: serde_json::Value = serde_json::from_str(args).unwrap();
    let kw: serde_json::Value = serde_json::from_str(kwargs).unwrap();
    let out = match (a[0].as_i64(), a[1].as_i64()) {
        (Some(x), Some(y)) => x + y + kw["bias"].as_i64().unwrap_or(0),
        _ => {
            let (k, m) = (
                c("TypeError"),
                c(&format!("add wants two ints, not {args}")),
            );
            // SAFETY: the reply of this call, NUL-terminated strings.
            unsafe { muranopl_reply_error(reply, k.as_ptr(), m.as_ptr()) };
            return MURANOPL_ERROR;
        }
    };
    let v = c(&out.to_string());
    // SAFETY: the reply of this call, NUL-terminated JSON.
    unsafe { muranopl_reply_value(reply, v.as_ptr()) }
}

unsafe extern "C" fn host_fails(
    _: *mut std::ffi::c_void,
    _: *const c_char,
    _: *const c_char,
    reply: *mut MuranoplReply,
) -> i32 {
    let bad = c("{not json");
    // SAFETY: the reply of this call, a NUL-terminated string.
    let status = unsafe { muranopl_reply_value(reply, bad.as_ptr()) };
    assert_eq!(status, MURANOPL_ERROR);
    7
}

unsafe extern "C" fn host_status(
    _: *mut std::ffi::c_void,
    _: *const c_char,
    _: *const c_char,
    _: *mut MuranoplReply,
) -> i32 {
    9
}

#[test]
fn host_functions_are_called_from_yaql() {
    let count = Box::new(std::sync::atomic::AtomicUsize::new(0));
    // SAFETY: null options and a null error pointer are allowed.
    let engine = unsafe { muranopl_engine_new(ptr::null(), ptr::null_mut()) };
    let define = |name: &str, f: MuranoplHostFn| {
        let n = c(name);
        let ud = &*count as *const _ as *mut std::ffi::c_void;
        // SAFETY: the engine is not shared yet; the callbacks are
        // thread-safe with this user data, which outlives the engine.
        let status = unsafe { muranopl_engine_define(engine, n.as_ptr(), f, ud, ptr::null_mut()) };
        (status, ())
    };
    assert_eq!(define("add", Some(host_add)).0, MURANOPL_OK);
    assert_eq!(define("broken", Some(host_fails)).0, MURANOPL_OK);
    assert_eq!(define("failing", Some(host_status)).0, MURANOPL_OK);
    assert_eq!(define("nothing", None).0, MURANOPL_INVALID_ARGUMENT);
    let eval = |expr: &str, data: &str| {
        let (x, d) = (c(expr), c(data));
        // SAFETY: live engine, NUL-terminated strings, valid outs.
        call(|r, e| unsafe {
            muranopl_eval_expr(engine, x.as_ptr(), d.as_ptr(), ptr::null(), r, e)
        })
    };
    assert_eq!(
        eval("$.select(add($, 10))", "[1, 2]"),
        (MURANOPL_OK, "[11, 12]".into())
    );
    assert_eq!(
        eval("add(1, 2, bias => 100)", "null"),
        (MURANOPL_OK, "103".into())
    );
    let (status, e) = eval("add(1, 'x')", "null");
    assert_eq!(status, MURANOPL_ERROR);
    let e = json(&e);
    assert_eq!(e["kind"], "TypeError", "{e}");
    assert!(e["message"].as_str().unwrap().contains("two ints"), "{e}");
    let (status, e) = eval("broken()", "null");
    assert_eq!(status, MURANOPL_ERROR, "{e}");
    let (status, e) = eval("failing()", "null");
    assert_eq!(status, MURANOPL_ERROR);
    assert!(e.contains("status 9"), "{e}");
    // Compiled once, from many threads.
    let expr = c("$.select(add($, 1)).sum()");
    let mut program = ptr::null_mut();
    // SAFETY: live engine, NUL-terminated expression, valid out.
    let status = unsafe { muranopl_compile(engine, expr.as_ptr(), &mut program, ptr::null_mut()) };
    assert_eq!(status, MURANOPL_OK);
    let shared = (engine as usize, program as usize);
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for i in 0..50 {
                    let d = c(&format!("[{t}, {i}]"));
                    // SAFETY: live engine and program, shared read-only.
                    let (status, out) = call(|r, e| unsafe {
                        muranopl_eval(
                            shared.0 as *const _,
                            shared.1 as *const _,
                            d.as_ptr(),
                            ptr::null(),
                            r,
                            e,
                        )
                    });
                    assert_eq!((status, out), (MURANOPL_OK, (t + i + 2).to_string()));
                }
            });
        }
    });
    assert!(count.load(std::sync::atomic::Ordering::Relaxed) >= 400 + 4);
    // SAFETY: every thread joined; from the library; not used again.
    unsafe {
        muranopl_program_free(program);
        muranopl_engine_free(engine);
    }
}

#[test]
fn evaluations_take_per_call_limits() {
    // SAFETY: null options and a null error pointer are allowed.
    let engine = unsafe { muranopl_engine_new(ptr::null(), ptr::null_mut()) };
    let eval = |expr: &str, options: &str| {
        let (x, o) = (c(expr), c(options));
        // SAFETY: live engine, NUL-terminated strings, valid outs.
        call(|r, e| unsafe {
            muranopl_eval_expr(engine, x.as_ptr(), ptr::null(), o.as_ptr(), r, e)
        })
    };
    let (status, e) = eval(
        "range(100000000).select($ * 2).sum()",
        r#"{"timeout_ms": 50}"#,
    );
    assert_eq!(status, MURANOPL_ERROR, "{e}");
    assert_eq!(json(&e)["kind"], "TimeoutError", "{e}");
    let (status, e) = eval(
        "range(1000).select(str($) * 100).join(',')",
        r#"{"max_memory": 1000}"#,
    );
    assert_eq!(status, MURANOPL_ERROR, "{e}");
    assert_eq!(json(&e)["kind"], "MemoryQuotaExceededException", "{e}");
    let (status, out) = eval(
        "range(10).sum()",
        r#"{"timeout_ms": null, "max_memory": null, "max_steps": 1}"#,
    );
    assert_eq!((status, out), (MURANOPL_OK, "45".to_string()));
    let (status, e) = eval("1", r#"{"methods": []}"#);
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT, "{e}");
    // SAFETY: from the library; not used again.
    unsafe { muranopl_engine_free(engine) };
}

/// A null pointer where a value is required is refused by every call that
/// takes one, with or without an error out pointer, and writes nothing.
#[test]
fn null_pointers_are_refused_by_every_call() {
    let cat = Cat::load();
    let s = c("{}");
    let class = c("com.example.Hello");
    let n = ptr::null();
    let call = |i: usize, out: *mut *mut c_char, err: *mut *mut c_char| {
        // SAFETY: every null is checked by the callee; the rest are a live
        // catalogue, NUL-terminated strings and valid or null outs.
        unsafe {
            match i {
                0 => muranopl_validate(ptr::null(), s.as_ptr(), n, out, err),
                1 => muranopl_validate(cat.0, n, n, out, err),
                2 => muranopl_run(ptr::null(), s.as_ptr(), n, n, out, err),
                3 => muranopl_run(cat.0, n, n, n, out, err),
                4 => muranopl_schema(ptr::null(), class.as_ptr(), n, out, err),
                5 => muranopl_schema(cat.0, n, n, out, err),
                6 => {
                    muranopl_static_action(ptr::null(), class.as_ptr(), s.as_ptr(), n, n, out, err)
                }
                7 => muranopl_static_action(cat.0, class.as_ptr(), n, n, n, out, err),
                8 => muranopl_catalogue_info(ptr::null(), out, err),
                9 => {
                    muranopl_engine_define(ptr::null_mut(), s.as_ptr(), None, ptr::null_mut(), err)
                }
                10 => muranopl_compile(ptr::null(), s.as_ptr(), ptr::null_mut(), err),
                11 => muranopl_eval(ptr::null(), ptr::null(), n, n, out, err),
                _ => unreachable!(),
            }
        }
    };
    const CALLS: usize = 12;
    for i in 0..CALLS {
        let mut out = ptr::null_mut();
        assert_eq!(
            call(i, &mut out, ptr::null_mut()),
            MURANOPL_INVALID_ARGUMENT,
            "call {i}"
        );
        assert!(out.is_null(), "call {i}");
        // Null out pointers, with an error out pointer.
        let mut error = ptr::null_mut();
        assert_eq!(
            call(i, ptr::null_mut(), &mut error),
            MURANOPL_INVALID_ARGUMENT,
            "call {i}"
        );
        assert!(take(error).contains("is null"), "call {i}");
    }
    // SAFETY: null replies are checked by the callee.
    unsafe {
        assert_eq!(
            muranopl_reply_value(ptr::null_mut(), s.as_ptr()),
            MURANOPL_INVALID_ARGUMENT
        );
        assert_eq!(
            muranopl_reply_error(ptr::null_mut(), n, n),
            MURANOPL_INVALID_ARGUMENT
        );
        muranopl_catalogue_free(ptr::null_mut());
        muranopl_program_free(ptr::null_mut());
    }
}

/// `paths` as the C strings and the pointer array a C caller passes.
fn c_paths(paths: &[&std::path::Path]) -> (Vec<CString>, Vec<*const c_char>) {
    let owned: Vec<CString> = paths.iter().map(|p| c(p.to_str().unwrap())).collect();
    let ptrs = owned.iter().map(|p| p.as_ptr()).collect();
    (owned, ptrs)
}

/// Loads a catalogue of `paths`, seeing `engine`'s host functions when
/// there is one; the error's JSON when it does not load.
fn load(engine: Option<*mut MuranoplEngine>, paths: &[&std::path::Path]) -> Result<Cat, String> {
    let (_owned, ptrs) = c_paths(paths);
    let mut error = ptr::null_mut();
    // SAFETY: NUL-terminated paths that outlive the call, no search path,
    // a live engine (when given) that nothing changes meanwhile.
    let cat = unsafe {
        match engine {
            None => muranopl_catalogue_load(ptrs.as_ptr(), ptrs.len(), ptr::null(), 0, &mut error),
            Some(e) => muranopl_catalogue_load_with(
                e,
                ptrs.as_ptr(),
                ptrs.len(),
                ptr::null(),
                0,
                &mut error,
            ),
        }
    };
    if cat.is_null() {
        Err(take(error))
    } else {
        assert!(error.is_null());
        Ok(Cat(cat))
    }
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("muranopl-capi-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A `.mcat` goes where a package directory would: its packages are read
/// from it (the digest checked), not from the search path.
#[test]
fn catalogue_artifacts_load_through_the_c_abi() {
    let root = common::root();
    let dir = scratch("mcat");
    let mcat = dir.join("examples.mcat");
    let packed = muranopl::artifact::pack(
        &[
            root.join("examples/validate"),
            root.join("examples/hello-app"),
        ],
        &[],
        &mcat,
    )
    .unwrap();
    let cat = load(None, &[&mcat]).unwrap();
    let (status, info) = call(|r, e| {
        // SAFETY: live catalogue, valid outs.
        unsafe { muranopl_catalogue_info(cat.0, r, e) }
    });
    assert_eq!(status, MURANOPL_OK, "{info}");
    let names: Vec<String> = (json(&info)["packages"].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), packed.packages.len(), "{names:?}");
    assert_eq!(names[0], "com.example.validate/1.0.0");
    assert!(names[1].starts_with("com.example.Hello/"), "{names:?}");
    let (status, rep) = cat.validate(&fleet(&[server("a", "80"), server("b", "70000")]), None);
    assert_eq!(status, MURANOPL_OK, "{rep}");
    let v = &json(&rep)["violations"][0];
    assert_eq!(v["property"], "port", "{v}");
    // Positions name the file inside the artifact.
    let pos = v["position"].as_str().unwrap();
    assert!(
        pos.contains("examples.mcat/packages/com.example.validate-1.0.0!/Classes/"),
        "{pos}"
    );
    let (status, out) = cat.run(HELLO, "deploy", None);
    assert_eq!(status, MURANOPL_OK, "{out}");
    assert_eq!(json(&out)["ok"], true, "{out}");
    drop(cat);
    // Not an artifact, and no file at all: errors naming the path.
    let bad = dir.join("bad.mcat");
    std::fs::write(&bad, "not a zip").unwrap();
    for path in [&bad, &dir.join("missing.mcat")] {
        let e = json(&load(None, &[path]).err().unwrap());
        assert_eq!(e["kind"], "PackageError", "{e}");
        let m = e["message"].as_str().unwrap();
        assert!(m.starts_with(path.to_str().unwrap()), "{m}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `twice(x)` as a C host would write it: an integer in, twice it out; a
/// negative one is an error (a `ValueError`).
unsafe extern "C" fn host_twice(
    user_data: *mut std::ffi::c_void,
    args: *const c_char,
    _kwargs: *const c_char,
    reply: *mut MuranoplReply,
) -> i32 {
    // SAFETY: the library passes the counter it was given and the
    // arguments' NUL-terminated JSON, valid during the call.
    let (count, args) = unsafe {
        (
            &*(user_data as *const std::sync::atomic::AtomicUsize),
            CStr::from_ptr(args).to_str().unwrap(),
        )
    };
    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let x = json(args)[0].as_i64().unwrap_or(-1);
    if x < 0 {
        let (k, m) = (
            c("ValueError"),
            c(&format!("twice: {args} is not a natural")),
        );
        // SAFETY: the reply of this call, NUL-terminated strings.
        unsafe { muranopl_reply_error(reply, k.as_ptr(), m.as_ptr()) };
        return MURANOPL_ERROR;
    }
    let v = c(&(2 * x).to_string());
    // SAFETY: the reply of this call, NUL-terminated JSON.
    unsafe { muranopl_reply_value(reply, v.as_ptr()) }
}

fn doubler(id: &str, x: i64) -> String {
    format!(r#"{{"?": {{"id": "{id}", "type": "com.example.Doubler"}}, "x": {x}}}"#)
}

/// A package whose contract calls `twice`: `$.int().check(twice($) = 4)`.
fn contract_package(dir: &std::path::Path) -> std::path::PathBuf {
    let pkg = dir.join("checked");
    std::fs::create_dir_all(pkg.join("Classes")).unwrap();
    std::fs::write(
        pkg.join("manifest.yaml"),
        "Format: 1.4\nType: Application\nFullName: ex.Checked\nClasses:\n  ex.Checked: C.yaml\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Classes/C.yaml"),
        "Name: ex.Checked\nExtends: io.murano.Application\nProperties:\n  \
         two:\n    Contract: $.int().notNull().check(twice($) = 4)\n",
    )
    .unwrap();
    pkg
}

/// Host functions defined on an engine are called by the MuranoPL code of
/// a catalogue loaded with it: method bodies and contracts, from several
/// threads, after the engine is freed; the callback's error is the run's.
#[test]
fn host_functions_are_called_from_muranopl() {
    let root = common::root();
    let dir = scratch("hostfn");
    let count = Box::new(std::sync::atomic::AtomicUsize::new(0));
    // SAFETY: null options and a null error pointer are allowed.
    let engine = unsafe { muranopl_engine_new(ptr::null(), ptr::null_mut()) };
    let (name, ud) = (c("twice"), &*count as *const _ as *mut std::ffi::c_void);
    // SAFETY: the engine is not shared yet; the callback is thread-safe
    // with this user data, which outlives every catalogue below.
    let status = unsafe {
        muranopl_engine_define(engine, name.as_ptr(), Some(host_twice), ud, ptr::null_mut())
    };
    assert_eq!(status, MURANOPL_OK);
    let mcat = dir.join("doubler.mcat");
    muranopl::artifact::pack(&[root.join("examples/c/doubler")], &[], &mcat).unwrap();
    let pkgs = [root.join("examples/c/doubler"), contract_package(&dir)];
    let cat = load(Some(engine), &[&pkgs[0], &pkgs[1]]).unwrap();
    let from_mcat = load(Some(engine), &[&mcat]).unwrap();
    let without = load(None, &[&pkgs[0]]).unwrap();
    // The catalogues keep the functions.
    // SAFETY: from the library; not used again.
    unsafe { muranopl_engine_free(engine) };
    for cat in [&cat, &from_mcat] {
        let (status, out) = cat.run(&doubler("d", 21), "double", None);
        assert_eq!(status, MURANOPL_OK, "{out}");
        let out = json(&out);
        assert_eq!(
            (&out["ok"], &out["value"]),
            (&true.into(), &json("[42]")),
            "{out}"
        );
    }
    // The callback's error, as the run's error with its trace.
    let (status, out) = cat.run(&doubler("d", -1), "double", None);
    assert_eq!(status, MURANOPL_OK, "{out}");
    let out = json(&out);
    assert_eq!(out["ok"], false, "{out}");
    assert_eq!(out["error"]["kind"], "ValueError", "{out}");
    assert_eq!(
        out["error"]["message"], "twice: [-1] is not a natural",
        "{out}"
    );
    assert!(
        out["error"]["trace"].to_string().contains("double"),
        "{out}"
    );
    // Contracts call it too.
    let checked = |two: i64| {
        let m = format!(r#"{{"?": {{"id": "c", "type": "ex.Checked"}}, "two": {two}}}"#);
        let (status, rep) = cat.validate(&m, None);
        assert_eq!(status, MURANOPL_OK, "{rep}");
        json(&rep)
    };
    assert_eq!(checked(2)["valid"], true);
    let rep = checked(3);
    assert_eq!(rep["valid"], false, "{rep}");
    assert_eq!(rep["violations"][0]["property"], "two", "{rep}");
    // A catalogue loaded without the engine does not see it.
    let (status, out) = without.run(&doubler("d", 1), "double", None);
    assert_eq!(status, MURANOPL_OK, "{out}");
    let out = json(&out);
    assert_eq!(out["ok"], false, "{out}");
    assert!(
        out["error"]["message"].as_str().unwrap().contains("twice"),
        "{out}"
    );
    // From 4 threads at once.
    let before = count.load(std::sync::atomic::Ordering::Relaxed);
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let cat = &cat;
            s.spawn(move || {
                for i in 0..10 {
                    let (status, out) = cat.run(&doubler("d", t * 100 + i), "double", None);
                    assert_eq!(status, MURANOPL_OK, "{out}");
                    assert_eq!(json(&out)["value"][0], 2 * (t * 100 + i), "{out}");
                }
            });
        }
    });
    let calls = count.load(std::sync::atomic::Ordering::Relaxed) - before;
    assert_eq!(calls, 40);
    // A null engine is refused.
    let mut error = ptr::null_mut();
    let (_owned, ptrs) = c_paths(&[&pkgs[0]]);
    // SAFETY: a null engine (checked by the callee), one path, a valid out.
    let v = unsafe {
        muranopl_catalogue_load_with(ptr::null(), ptrs.as_ptr(), 1, ptr::null(), 0, &mut error)
    };
    assert!(v.is_null());
    let e = json(&take(error));
    assert_eq!(
        (&e["kind"], &e["message"]),
        (&"InvalidArgument".into(), &"engine is null".into())
    );
    drop((cat, from_mcat, without));
    std::fs::remove_dir_all(&dir).unwrap();
}
