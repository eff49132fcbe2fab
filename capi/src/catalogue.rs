//! MuranoPL from C: a catalogue of packages loaded once, and the calls
//! that read it (validation, runs, form schemas, static actions).

use std::ffi::{c_char, c_int};
use std::path::PathBuf;
use std::ptr;
use std::sync::Arc;

use muranopl::{Catalogue, Error, Limits};

use crate::common::{
    call_options, free_boxed, guard, null_arg, out_arg, put, required, run_error_json, text_arg,
    text_list, value_in, value_out, Failure, MuranoplEngine,
};

/// MuranoPL packages and their compiled classes, loaded once and shared by
/// every call, from any thread (each call only reads it).
pub struct MuranoplCatalogue {
    catalogue: Catalogue,
}

/// Loads the packages at `paths` (`count` NUL-terminated paths of package
/// directories, .zip files or catalogue artifacts: a path ending in
/// `.mcat` is an artifact, read into memory after its digest is checked,
/// its packages what it was packed with) with what they require from the
/// search path `search_path` (`search_count` directories of packages, as
/// `-L` gives them); with no paths, every package on the search path.
/// Returns null and writes `*error` when a package cannot be loaded. A
/// class that fails to compile is a warning ([`muranopl_catalogue_info`]),
/// not an error.
///
/// # Safety
/// `paths` points to `count` NUL-terminated strings and `search_path` to
/// `search_count` (either may be null when its count is 0); `error` is
/// null or points to writable storage for one pointer.
#[no_mangle]
pub unsafe extern "C" fn muranopl_catalogue_load(
    paths: *const *const c_char,
    count: usize,
    search_path: *const *const c_char,
    search_count: usize,
    error: *mut *mut c_char,
) -> *mut MuranoplCatalogue {
    // SAFETY: the function's contract is `load`'s, with no engine.
    unsafe { load(None, paths, count, search_path, search_count, error) }
}

/// Loads a catalogue as [`muranopl_catalogue_load`] does, its MuranoPL
/// code (method bodies, property defaults, contracts) able to call the
/// host functions defined on `engine` ([`muranopl_engine_define`]) by
/// name, as YAQL evaluated by the engine does. A host function takes
/// precedence over a standard-library or MuranoPL engine function of its
/// name; functions defined on the engine later are not seen. The
/// catalogue keeps the functions: the engine may be freed first, but the
/// callbacks and their user data must stay callable until the catalogue
/// is freed. An error a callback answers is the error of the code that
/// called it (a run's `"error"`, with its MuranoPL trace). Returns null
/// and writes `*error` when a package cannot be loaded.
///
/// # Safety
/// `engine` came from `muranopl_engine_new` and no
/// `muranopl_engine_define` on it overlaps the call; the rest as for
/// [`muranopl_catalogue_load`].
#[no_mangle]
pub unsafe extern "C" fn muranopl_catalogue_load_with(
    engine: *const MuranoplEngine,
    paths: *const *const c_char,
    count: usize,
    search_path: *const *const c_char,
    search_count: usize,
    error: *mut *mut c_char,
) -> *mut MuranoplCatalogue {
    // SAFETY: the caller's contract: null (refused) or a live engine that
    // no call changes meanwhile; the rest is `load`'s.
    unsafe {
        match engine.as_ref() {
            Some(e) => load(Some(e), paths, count, search_path, search_count, error),
            None => load_refused(error),
        }
    }
}

/// # Safety
/// As for [`muranopl_catalogue_load`].
unsafe fn load(
    engine: Option<&MuranoplEngine>,
    paths: *const *const c_char,
    count: usize,
    search_path: *const *const c_char,
    search_count: usize,
    error: *mut *mut c_char,
) -> *mut MuranoplCatalogue {
    let mut out = ptr::null_mut();
    // SAFETY: see the function's contract; the arrays are read only when
    // their counts say so, and each entry is checked for null.
    unsafe {
        guard(error, || {
            let paths = text_list(paths, count, "paths")?;
            let libs = text_list(search_path, search_count, "search_path")?;
            let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
            let libs: Vec<PathBuf> = libs.into_iter().map(PathBuf::from).collect();
            let package_error = |e| Failure::from(Error::new("PackageError", e));
            let mut catalogue =
                Catalogue::load_served(&paths, &libs, None).map_err(package_error)?;
            if let Some(e) = engine {
                catalogue = catalogue.with_host_functions(&e.engine);
            }
            out = Box::into_raw(Box::new(MuranoplCatalogue { catalogue }));
            Ok(())
        });
    }
    out
}

/// Refuses a null engine, as every call refuses a null argument.
///
/// # Safety
/// `error` is null or points to writable storage for one pointer.
unsafe fn load_refused(error: *mut *mut c_char) -> *mut MuranoplCatalogue {
    // SAFETY: the caller's contract on `error`.
    unsafe { guard(error, || Err(null_arg("engine"))) };
    ptr::null_mut()
}

/// Frees a catalogue (null is ignored).
///
/// # Safety
/// `catalogue` is null or came from [`muranopl_catalogue_load`] or
/// [`muranopl_catalogue_load_with`] and no
/// call uses it, then or later.
#[no_mangle]
pub unsafe extern "C" fn muranopl_catalogue_free(catalogue: *mut MuranoplCatalogue) {
    // SAFETY: the function's contract is `free_boxed`'s.
    unsafe { free_boxed(catalogue) }
}

/// What the catalogue holds: writes to `*info` a JSON object
/// `{"packages": ["name/version", ...], "warnings": ["...", ...]}`.
///
/// # Safety
/// `catalogue` came from [`muranopl_catalogue_load`]; `info` points to
/// writable storage for one pointer; `error` is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_catalogue_info(
    catalogue: *const MuranoplCatalogue,
    info: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let cat = catalogue_arg(catalogue)?;
            let j = serde_json::json!({
                "packages": cat.names(),
                "warnings": cat.warnings(),
            });
            put(info, "info", j.to_string())
        })
    }
}

/// Validates an object model (JSON text: `{"Objects": ...}` or a bare
/// object) against the catalogue's contracts, within the limits of
/// `options_json` (null: none). On success (the model loaded, valid or
/// not) writes to `*report` a JSON object `{"valid": bool, "objects": n,
/// "violations": [{"path": "$.Objects.servers[1]", "property": "port",
/// "message": "...", "position": "FILE:LINE:COL" or null}, ...]}`, the
/// violations sorted by path; `position` is the contract's. A model that
/// cannot be loaded at all (bad JSON, an unknown class) is
/// `MURANOPL_ERROR`.
///
/// # Safety
/// `catalogue` came from [`muranopl_catalogue_load`]; `model_json` is a
/// NUL-terminated string and `options_json` null or one; `report` points
/// to writable storage for one pointer; `error` is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_validate(
    catalogue: *const MuranoplCatalogue,
    model_json: *const c_char,
    options_json: *const c_char,
    report: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let cat = catalogue_arg(catalogue)?;
            let text = required(model_json, "model_json")?;
            let opts = call_options(options_json, Limits::UNLIMITED, &[])?;
            out_arg(report, "report")?;
            let found = muranopl::on_engine_stack(|| {
                value_in(text).and_then(|m| Ok(cat.check(&m, opts.limits)?))
            })?;
            let violations: Vec<_> = (found.violations.iter())
                .map(|v| {
                    serde_json::json!({
                        "path": v.path,
                        "property": v.property,
                        "message": v.message,
                        "position": v.position,
                    })
                })
                .collect();
            let j = serde_json::json!({
                "valid": violations.is_empty(),
                "objects": found.objects,
                "violations": violations,
            });
            put(report, "report", j.to_string())
        })
    }
}

/// Loads an object model (JSON text) into a fresh execution over the
/// catalogue, with its own simulated cloud, and runs `method` (null:
/// `deploy`) on its root (a root that is not an environment is placed in
/// one). `options_json` is null or a JSON object with the limits
/// (`timeout_ms`, `max_steps`, `max_memory`; by default 600 s, the
/// engine's statement budget and memory budget) and `cloud`, the
/// simulated cloud's configuration (JSON or YAML text). On success (the
/// run happened, whatever its end) writes to `*outcome` a JSON object
/// `{"ok": bool, "value": the method's result or null, "error": null or
/// {"kind", "message", "trace"}, "model": the object model after the run
/// or null, "log": ["...", ...], "record": what the cloud saw}`. Model
/// text that is not JSON, or a cloud configuration that does not parse,
/// is `MURANOPL_ERROR`.
///
/// # Safety
/// `catalogue` came from [`muranopl_catalogue_load`]; `model_json` is a
/// NUL-terminated string, `method` and `options_json` null or one;
/// `outcome` points to writable storage for one pointer; `error` is null
/// or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_run(
    catalogue: *const MuranoplCatalogue,
    model_json: *const c_char,
    method: *const c_char,
    options_json: *const c_char,
    outcome: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let cat = catalogue_arg(catalogue)?;
            let text = required(model_json, "model_json")?;
            let method = text_arg(method)?.unwrap_or("deploy");
            let opts = call_options(options_json, Limits::default(), &["cloud"])?;
            out_arg(outcome, "outcome")?;
            let j = muranopl::on_engine_stack(|| -> Result<_, Failure> {
                let model = value_in(text)?;
                let session = cat.session();
                if let Some(c) = &opts.cloud {
                    session.cloud().configure(c, "<cloud>")?;
                }
                let out = session.run_method(&model, method, opts.limits);
                let (value, err) = match &out.result {
                    Ok(v) => (value_out(v), serde_json::Value::Null),
                    Err(e) => (serde_json::Value::Null, run_error_json(e)),
                };
                Ok(serde_json::json!({
                    "ok": out.result.is_ok(),
                    "value": value,
                    "error": err,
                    "model": out.model.as_ref().map_or(serde_json::Value::Null, value_out),
                    "log": out.log,
                    "record": value_out(&session.record()),
                }))
            })?;
            put(outcome, "outcome", j.to_string())
        })
    }
}

/// The form schemas (JSON Schema) of `class_name` and its model builders,
/// or of the methods `options_json` names: null or a JSON object with any
/// of `methods` (a list of method names; `""` is the class's own form),
/// `version` (a version spec; `=0` by default) and `package` (the package
/// that provides the class). Writes to `*schema` a JSON object of the
/// schemas by name. An unknown class or method is
/// `MURANOPL_ERROR`.
///
/// # Safety
/// `catalogue` came from [`muranopl_catalogue_load`]; `class_name` is a
/// NUL-terminated string and `options_json` null or one; `schema` points
/// to writable storage for one pointer; `error` is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_schema(
    catalogue: *const MuranoplCatalogue,
    class_name: *const c_char,
    options_json: *const c_char,
    schema: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let cat = catalogue_arg(catalogue)?;
            let class = required(class_name, "class_name")?;
            let opts = call_options(
                options_json,
                Limits::default(),
                &["methods", "version", "package"],
            )?;
            out_arg(schema, "schema")?;
            let j = muranopl::on_engine_stack(|| -> Result<_, Failure> {
                let _budget = opts.limits.start();
                let list = cat.schema(
                    class,
                    opts.methods.as_deref(),
                    opts.version.as_deref(),
                    opts.package.as_deref(),
                )?;
                let map = (list.iter())
                    .map(|(n, v)| (n.clone(), value_out(v)))
                    .collect();
                Ok(serde_json::Value::Object(map))
            })?;
            put(schema, "schema", j.to_string())
        })
    }
}

/// Runs the static action `method` of `class_name` (a public static
/// method, `Usage: Action`) with the named arguments of `args_json` (a
/// JSON object, or null for none), in an execution of its own.
/// `options_json` is null or a JSON object with the limits (`timeout_ms`,
/// `max_steps`, `max_memory`), `version` and `package` (which class, as
/// for [`muranopl_schema`]). On success writes the result, JSON text, to
/// `*result`; the action's error is `MURANOPL_ERROR`
/// with its MuranoPL `trace`.
///
/// # Safety
/// `catalogue` came from [`muranopl_catalogue_load`]; `class_name` and
/// `method` are NUL-terminated strings, `args_json` and `options_json`
/// null or ones; `result` points to writable storage for one pointer;
/// `error` is null or does.
#[no_mangle]
pub unsafe extern "C" fn muranopl_static_action(
    catalogue: *const MuranoplCatalogue,
    class_name: *const c_char,
    method: *const c_char,
    args_json: *const c_char,
    options_json: *const c_char,
    result: *mut *mut c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: see the function's contract; every pointer is checked for
    // null before use.
    unsafe {
        guard(error, || {
            let cat = catalogue_arg(catalogue)?;
            let class = required(class_name, "class_name")?;
            let method = required(method, "method")?;
            let args = text_arg(args_json)?;
            let opts = call_options(options_json, Limits::default(), &["version", "package"])?;
            out_arg(result, "result")?;
            let text = muranopl::on_engine_stack(|| -> Result<_, Failure> {
                let args = match &args.map(value_in).transpose()? {
                    None | Some(muranopl::Value::Null) => Vec::new(),
                    Some(muranopl::Value::Dict(d)) => (d.iter())
                        .map(|(k, v)| match k {
                            muranopl::Value::Str(k) => Ok((Arc::from(k.as_str()), v.clone())),
                            _ => Err(Failure::Invalid("args_json: keys must be strings".into())),
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => {
                        return Err(Failure::Invalid(
                            "args_json must be a JSON object or null".into(),
                        ))
                    }
                };
                // The statement limit is a session's: a copy of the
                // catalogue (its classes shared) makes sessions with it.
                let mut cat = cat.clone();
                cat.set_max_steps(opts.limits.max_steps.unwrap_or(u64::MAX));
                let _budget = opts.limits.start();
                let (_session, out) = cat.static_action(
                    class,
                    method,
                    args,
                    opts.version.as_deref(),
                    opts.package.as_deref(),
                )?;
                Ok(muranopl::json::to_tagged_string(&out?))
            })?;
            put(result, "result", text)
        })
    }
}

/// # Safety
/// `p` is null or points to a live catalogue.
unsafe fn catalogue_arg<'a>(p: *const MuranoplCatalogue) -> Result<&'a Catalogue, Failure> {
    // SAFETY: the caller's contract: null or a live catalogue.
    unsafe { p.as_ref() }
        .map(|c| &c.catalogue)
        .ok_or_else(|| null_arg("catalogue"))
}
