//! Package archives: any bytes as a .zip package, loaded and compiled.
#![no_main]

use libfuzzer_sys::fuzz_target;
use package::{to_package, FormatRegistry};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("muranopl-fuzz-{}.zip", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(p) = FormatRegistry::builtin().load(&path) {
        let _ = to_package(&*p);
        let _ = p.ui();
        for r in p.base().source.list("Resources") {
            let _ = p.get_resource(&r);
        }
    }
});
