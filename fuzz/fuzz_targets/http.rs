//! The HTTP API's request path: any method, URI, headers and body through
//! the server's router (routing, extractors, limits, the engine's answers)
//! over the example application's catalogue.
#![no_main]

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use muranopl::Catalogue as Catalog;
use muranopl_cli::serve::{app, Options};
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;

struct Target {
    app: axum::Router,
    runtime: tokio::runtime::Runtime,
}

fn target() -> &'static Target {
    // Built once per fuzzing process. The catalogue only caches compiled
    // classes and the router is cloned per request; the one state requests
    // share, the engine workers' semaphore and queue count, is back at rest
    // when a request's answer is complete (block_on waits for it). So
    // inputs cannot affect one another through it; loading it per input
    // would make the fuzzer measure package loading.
    static TARGET: OnceLock<Target> = OnceLock::new();
    TARGET.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hello-app");
        let catalog = Catalog::load_served(&[dir], &[], None).expect("the example application");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        Target {
            app: app(Arc::new(catalog), Options::default()),
            runtime,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    // METHOD \n URI \n header lines \n\n body
    let text = String::from_utf8_lossy(data);
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let method = lines.next().unwrap_or("GET");
    let uri = lines.next().unwrap_or("/");
    let mut req = Request::builder().method(method).uri(uri);
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            req = req.header(k.trim(), v.trim());
        }
    }
    // Requests the HTTP layer would refuse never reach the router.
    let Ok(req) = req.body(Body::from(body.to_string())) else {
        return;
    };
    let t = target();
    let resp = t.runtime.block_on(t.app.clone().oneshot(req));
    let resp = resp.expect("the router never fails");
    assert!(resp.status().as_u16() >= 200);
});
