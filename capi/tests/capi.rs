//! The C ABI (`src/capi`, `include/muranopl.h`): called from Rust through
//! the same `extern "C"` functions, then from a real C program compiled
//! against the header and the shared library (when a C compiler is
//! present).

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
        let status =
            unsafe { muranopl_eval(engine, program, data.as_ptr(), &mut result, &mut error) };
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
        let status =
            unsafe { muranopl_eval_expr(engine, expr.as_ptr(), dp, &mut result, &mut error) };
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
    let status =
        unsafe { muranopl_eval_expr(engine, expr.as_ptr(), ptr::null(), &mut result, &mut error) };
    assert_eq!(status, MURANOPL_ERROR, "the iterator limit applies");
    assert!(take(error).contains("CollectionTooLargeException"));
    // Null where a value is required.
    let mut error = ptr::null_mut();
    // SAFETY: null expression is checked by the callee.
    let status =
        unsafe { muranopl_eval_expr(engine, ptr::null(), ptr::null(), &mut result, &mut error) };
    assert_eq!(status, MURANOPL_INVALID_ARGUMENT);
    assert!(take(error).contains("expr is null"));
    // SAFETY: null engine is checked by the callee; null error allowed.
    let status = unsafe {
        muranopl_eval_expr(
            ptr::null(),
            expr.as_ptr(),
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
    let status =
        unsafe { muranopl_eval_expr(engine, bad.as_ptr(), ptr::null(), &mut result, &mut error) };
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

/// `examples/capi/eval.c`, compiled with the system C compiler against
/// `include/muranopl.h` and the shared library next to the test binary.
#[test]
fn a_c_program_links_and_runs() {
    let Some(cc) = ["cc", "gcc", "clang"].into_iter().find(|c| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        eprintln!("SKIP: no C compiler found; the C example is not built");
        return;
    };
    let root = common::root();
    // The test binary is in `target/<profile>/deps`; the crate's shared
    // library, built with it (cdylib beside the rlib), one folder up.
    let exe = std::env::current_exe().unwrap();
    let libdir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let so = libdir.join(format!(
        "{}muranopl_capi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(so.exists(), "{} was not built", so.display());
    let exe = std::env::temp_dir().join(format!("muranopl-capi-{}", std::process::id()));
    let o = std::process::Command::new(cc)
        .arg(root.join("examples/capi/eval.c"))
        .arg("-I")
        .arg(root.join("include"))
        .arg("-L")
        .arg(&libdir)
        .arg("-lmuranopl_capi")
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = |args: &[&str]| {
        std::process::Command::new(&exe)
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&[
        "$.where($.age > 30).select($.name)",
        r#"[{"age": 40, "name": "alice"}, {"age": 20, "name": "bob"}]"#,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), r#"["alice"]"#);
    let o = run(&["1 +"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("YaqlGrammarException"));
    std::fs::remove_file(&exe).ok();
}

#[test]
fn object_models_validate_against_packages() {
    let dir = c(common::root().join("examples/validate").to_str().unwrap());
    let dirs = [dir.as_ptr()];
    let mut error = ptr::null_mut();
    // SAFETY: one NUL-terminated path, a valid out pointer.
    let v = unsafe { muranopl_validator_new(dirs.as_ptr(), 1, &mut error) };
    assert!(!v.is_null());
    let validate = |model: &str| -> (i32, String) {
        let (mut report, mut error) = (ptr::null_mut(), ptr::null_mut());
        let m = c(model);
        // SAFETY: live validator, NUL-terminated model, valid outs.
        let status = unsafe { muranopl_validate(v, m.as_ptr(), &mut report, &mut error) };
        if status == MURANOPL_OK {
            (status, take(report))
        } else {
            (status, take(error))
        }
    };
    let server = |id: &str, port: &str| {
        format!(
            r#"{{"?": {{"id": "{id}", "type": "com.example.Server"}}, "name": "s", "port": {port},
                "tags": [], "enabled": true, "settings": {{"timeout": 1, "label": "x"}}}}"#
        )
    };
    let model = |servers: &[String]| {
        format!(
            r#"{{"Objects": {{"?": {{"id": "fleet", "type": "com.example.Fleet"}}, "servers": [{}]}}}}"#,
            servers.join(",")
        )
    };
    let (status, rep) = validate(&model(&[server("a", "80"), server("b", "8080")]));
    assert_eq!(status, MURANOPL_OK, "{rep}");
    let rep: serde_json::Value = serde_json::from_str(&rep).unwrap();
    assert_eq!(rep["valid"], true, "{rep}");
    assert_eq!(rep["objects"], 3);
    let (status, rep) = validate(&model(&[server("a", "80"), server("b", "70000")]));
    assert_eq!(status, MURANOPL_OK, "{rep}");
    let rep: serde_json::Value = serde_json::from_str(&rep).unwrap();
    assert_eq!(rep["valid"], false);
    let line = rep["violations"][0].as_str().unwrap();
    assert!(line.starts_with("$.Objects.servers[1].port: "), "{line}");
    assert!(line.contains("Server.yaml:"), "{line}");
    // Not loadable at all: an error, not a report.
    let (status, e) = validate(r#"{"?": {"id": "x", "type": "com.example.Nope"}}"#);
    assert_eq!(status, MURANOPL_ERROR);
    assert!(e.contains("NoClassFound"), "{e}");
    let (status, _) = validate("{");
    assert_eq!(status, MURANOPL_ERROR);
    // SAFETY: from the library; not used again.
    unsafe { muranopl_validator_free(v) };
    // A package that does not load.
    let bad = c("/nonexistent/package");
    let dirs = [bad.as_ptr()];
    let mut error = ptr::null_mut();
    // SAFETY: one NUL-terminated path, a valid out pointer.
    let v = unsafe { muranopl_validator_new(dirs.as_ptr(), 1, &mut error) };
    assert!(v.is_null());
    assert!(take(error).contains("nonexistent"));
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
                muranopl_eval_expr(engine, expr.as_ptr(), ptr::null(), &mut result, &mut error)
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
        let status =
            unsafe { muranopl_eval(engine, program, data.as_ptr(), &mut result, &mut error) };
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
