//! Object models: any JSON text validated against the example package
//! `examples/validate` (loaded once).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::{Arc, OnceLock};

fn catalog() -> &'static Arc<engine::Catalog> {
    // Built once per fuzzing process and read-only afterwards (a compiled
    // catalogue is frozen and shared across threads), so inputs cannot
    // affect one another through it; loading it per input would make the
    // fuzzer measure package loading instead of the target.
    static CATALOG: OnceLock<Arc<engine::Catalog>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validate");
        let pkg = package::load_dir(&dir).expect("the example package");
        engine::Catalog::new(vec![pkg])
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(model) = runtime::json::from_tagged_str(text) else { return };
    let _ = engine::model::validate(catalog(), &model);
});
