//! MuranoPL class files: load any text as a class file, build every class
//! it declares and run a method of each when there is one.
#![no_main]

use engine::{Executor, Package};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(pkg) = Package::new("tests", "0.0.0", "1.4", &[("F.yaml".into(), text.into())]) else {
        return;
    };
    let names = pkg.class_names();
    let ex = Executor::new(vec![pkg]);
    for n in names {
        let _ = ex.class(&n);
    }
});
