//! `muranopl serve`: a small HTTP API over a package catalogue, for form
//! schemas and static actions (the MuranoPL forms spec,
//! `../shared/seeds/muranopl-forms-spec.txt`, and Murano's static actions
//! API).
//!
//! | request | answer |
//! | --- | --- |
//! | `GET /schemas/{class}` | `{"": schema, builder: schema, ...}`: the class and all its model builders |
//! | `GET /schemas/{class}/{methods}` | the named ones (comma-separated; an empty name is the class) |
//! | `POST /actions` | the result of a static action: body `{"className", "methodName", "parameters"?, "packageName"?, "classVersion"?}` |
//! | `GET /health` | `{"status": "ok", "packages": [...]}` |
//!
//! `classVersion` and `packageName` are query parameters of `/schemas`
//! and fields of `/actions`; with side-by-side versions they pick one.
//! Errors answer `{"error": {"kind", "message", "trace"}}` with 400 (bad
//! request), 403 (not a public static method), 404 (no such class or
//! method) or 500 (the action failed). Each request runs in an executor
//! of its own over the catalogue, so requests share no state.

use std::path::PathBuf;
use std::sync::Arc;

use engine::{exec, Executor};
use forms::schema;
use package::{type_spec, PackageLoader};
use serde_json::{json, Value as J};

use crate::session::{load_formats, Catalogue, Session};

use crate::json as tj;

/// The packages the API serves, compiled once for every request.
pub struct Catalog {
    catalogue: Catalogue,
}

impl Catalog {
    /// The given packages with what they require, or, when none is given,
    /// every package on the search path (all versions).
    pub fn load(
        paths: &[PathBuf],
        libs: &[PathBuf],
        class_configs: Option<&std::path::Path>,
    ) -> Result<Catalog, String> {
        let mut formats = load_formats(paths, libs)?;
        if paths.is_empty() {
            let loader = PackageLoader::new(libs).map_err(|e| e.message().to_string())?;
            for b in &loader.broken {
                eprintln!("warning: {}: {}", b.path.display(), b.error.message());
            }
            for f in loader.found.values().flatten() {
                if !formats
                    .iter()
                    .any(|q| q.full_name() == f.name && *q.version() == f.version)
                {
                    formats.push(f.package.clone());
                }
            }
        }
        let extra = schema::forms_package().into_iter().collect();
        Ok(Catalog {
            catalogue: Catalogue::from_formats(formats, false, extra, class_configs)?,
        })
    }

    /// `name/version` of every package served.
    pub fn names(&self) -> Vec<String> {
        self.catalogue
            .formats()
            .iter()
            .map(|f| format!("{}/{}", f.full_name(), f.version()))
            .collect()
    }

    /// A fresh session over the catalogue (each request has its own).
    fn session(&self) -> Session {
        self.catalogue.session()
    }

    /// How many classes the catalogue has compiled so far.
    pub fn classes_compiled(&self) -> usize {
        self.catalogue.catalog().compiled()
    }
}

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, J);

/// The largest request body `serve` reads (413 past it).
pub const MAX_BODY: usize = 16 << 20;

/// Reads a request body of at most [`MAX_BODY`] bytes; a longer one is
/// answered 413 without reading the rest.
pub fn read_body(reader: impl std::io::Read) -> Result<Vec<u8>, Answer> {
    use std::io::Read as _;
    let mut body = Vec::new();
    match reader.take(MAX_BODY as u64 + 1).read_to_end(&mut body) {
        Ok(n) if n > MAX_BODY => Err(error(
            413,
            "PayloadTooLarge",
            &format!("the body is larger than {MAX_BODY} bytes"),
        )),
        Ok(_) => Ok(body),
        Err(e) => Err(error(
            400,
            "BadRequest",
            &format!("cannot read the body: {e}"),
        )),
    }
}

/// Answers one request (no network here: the server loop and the tests
/// call this).
pub fn handle(catalog: &Catalog, method: &str, url: &str, body: &[u8]) -> Answer {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (method, segments.as_slice()) {
        ("GET", ["health"]) => (200, json!({"status": "ok", "packages": catalog.names()})),
        ("GET", ["schemas", class]) => schemas(catalog, class, None, query),
        ("GET", ["schemas", class, methods]) => schemas(catalog, class, Some(methods), query),
        ("POST", ["actions"]) => action(catalog, body),
        (_, ["health"]) | (_, ["schemas", ..]) | (_, ["actions"]) => error(
            405,
            "MethodNotAllowed",
            &format!("{method} is not allowed on {path}"),
        ),
        _ => error(404, "NotFound", &format!("no such endpoint: {path}")),
    }
}

fn error(status: u16, kind: impl std::fmt::Display, message: &str) -> Answer {
    (
        status,
        json!({"error": {"kind": kind.to_string(), "message": message, "trace": []}}),
    )
}

/// The answer for an engine error: the status its kind calls for.
fn engine_error(ex: &Executor, e: &runtime::Error, failed: u16) -> Answer {
    let names = exec::error_names(ex, e, false);
    let kind = names
        .first()
        .cloned()
        .unwrap_or_else(|| e.kind().to_string());
    use runtime::ErrorKind as K;
    let status = match e.error_kind() {
        K::NoClassFound | K::NoPackageFound | K::NoMethodFound | K::NoMethodRegisteredException => {
            404
        }
        K::MethodNotExposed => 403,
        K::ContractViolationException | K::NoMatchingMethodException => 400,
        _ => failed,
    };
    (
        status,
        json!({"error": {"kind": kind, "message": e.message(), "trace": e.trace()}}),
    )
}

fn schemas(catalog: &Catalog, class: &str, methods: Option<&str>, query: &str) -> Answer {
    let params = query_params(query);
    let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let package = param("packageName");
    let spec = type_spec(class, param("classVersion"), package);
    let methods: Option<Vec<String>> =
        methods.map(|m| m.split(',').map(|s| s.trim().to_string()).collect());
    let session = catalog.session();
    let ex = session.executor();
    let answer = match schema::generate_schema(ex, &spec, methods.as_deref(), package) {
        Ok(list) => {
            let mut out = serde_json::Map::new();
            for (name, v) in list {
                out.insert(name, to_json(&v));
            }
            if out.is_empty() {
                error(
                    404,
                    runtime::ErrorKind::NoMethodFound,
                    &format!("class {class} has no model builder of those names"),
                )
            } else {
                (200, J::Object(out))
            }
        }
        Err(e) => engine_error(ex, &e, 400),
    };
    answer
}

fn action(catalog: &Catalog, body: &[u8]) -> Answer {
    let req: J = match serde_json::from_slice(body) {
        Ok(j) => j,
        Err(e) => return error(400, "BadRequest", &format!("the body is not JSON: {e}")),
    };
    let field = |k: &str| req.get(k).and_then(|v| v.as_str());
    let (Some(class), Some(method)) = (field("className"), field("methodName")) else {
        return error(
            400,
            "BadRequest",
            "the body needs \"className\" and \"methodName\" strings",
        );
    };
    let params = match req.get("parameters") {
        None | Some(J::Null) => serde_json::Map::new(),
        Some(J::Object(m)) => m.clone(),
        Some(_) => return error(400, "BadRequest", "\"parameters\" must be an object"),
    };
    let mut named: Vec<(Arc<str>, runtime::Value)> = Vec::new();
    for (k, v) in &params {
        match tj::from_tagged_str(&v.to_string()) {
            Ok(v) => named.push((k.as_str().into(), v)),
            Err(e) => {
                return error(
                    400,
                    "BadRequest",
                    &format!("parameter {k}: {}", e.message()),
                )
            }
        }
    }
    let spec = type_spec(class, field("classVersion"), field("packageName"));
    let session = catalog.session();
    let ex = session.executor();
    match ex.call_static_action(&spec, field("packageName"), method, named) {
        Ok(v) => (200, to_json(&v)),
        Err(e) => engine_error(ex, &e, 500),
    }
}

fn to_json(v: &runtime::Value) -> J {
    serde_json::from_str(&tj::to_tagged_string(v)).unwrap_or(J::Null)
}

fn query_params(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// `%XX` escapes and `+` (in queries, a space) decoded; bad escapes stay.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(x) => {
                        out.push(x);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs the server until the process is stopped; returns the exit status
/// (1 when the address cannot be bound or the catalogue not loaded).
pub fn serve(
    paths: &[PathBuf],
    libs: &[PathBuf],
    addr: &str,
    threads: usize,
    jit: compiler::jit::Mode,
    class_configs: Option<&std::path::Path>,
) -> i32 {
    let catalog = match Catalog::load(paths, libs, class_configs) {
        Ok(c) => {
            c.catalogue.catalog().set_jit(jit);
            Arc::new(c)
        }
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let server = match tiny_http::Server::http(addr) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("error: cannot listen on {addr}: {e}");
            return 1;
        }
    };
    // The first line of output says where we listen (port 0 picks one).
    println!(
        "muranopl: serving {} packages on http://{}",
        catalog.names().len(),
        server.server_addr()
    );
    use std::io::Write as _;
    std::io::stdout().flush().ok();
    let workers: Vec<_> = (0..threads.max(1))
        .map(|_| {
            let (server, catalog) = (server.clone(), catalog.clone());
            // Stacks like the CLI's main thread's: an action may build and
            // drop deeply nested values.
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || loop {
                    let Ok(mut req) = server.recv() else { break };
                    let answer = match read_body(req.as_reader()) {
                        // A panic answers 500 and leaves the worker serving.
                        Ok(body) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            handle(&catalog, req.method().as_str(), req.url(), &body)
                        }))
                        .unwrap_or_else(|_| {
                            error(500, "InternalError", "the request failed inside the engine")
                        }),
                        Err(answer) => answer,
                    };
                    let text = answer.1.to_string();
                    let header = tiny_http::Header::from_bytes(
                        &b"Content-Type"[..],
                        &b"application/json"[..],
                    )
                    .expect("a valid header");
                    let resp = tiny_http::Response::from_string(text)
                        .with_status_code(answer.0)
                        .with_header(header);
                    let _ = req.respond(resp);
                })
                .expect("a worker thread")
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%2Cb+c"), "a,b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(
            query_params("classVersion=%3D1.0&x"),
            vec![
                ("classVersion".to_string(), "=1.0".to_string()),
                ("x".to_string(), String::new())
            ]
        );
    }
}
