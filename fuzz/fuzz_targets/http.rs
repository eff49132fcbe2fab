//! The HTTP API's request path: any method, URL and body answered by the
//! example application's catalogue.
#![no_main]

use libfuzzer_sys::fuzz_target;
use muranopl::serve::{handle, Catalog};
use std::sync::OnceLock;

fn catalog() -> &'static Catalog {
    // Built once per fuzzing process and read-only afterwards (a compiled
    // catalogue is frozen and shared across threads), so inputs cannot
    // affect one another through it; loading it per input would make the
    // fuzzer measure package loading instead of the target.
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hello-app");
        Catalog::load(&[dir], &[], None).expect("the example application")
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\n');
    let method = parts.next().unwrap_or("GET");
    let url = parts.next().unwrap_or("/");
    let body = parts.next().unwrap_or("");
    let _ = handle(catalog(), method, url, body.as_bytes());
});
