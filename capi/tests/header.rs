//! `include/muranopl.h` is what cbindgen makes of `capi/src` with
//! `capi/cbindgen.toml`: this test regenerates it and fails on any
//! difference. `MURANOPL_BLESS=1 cargo test -p muranopl-capi --test
//! header` writes the new header instead.

use std::path::Path;

#[test]
fn the_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../include/muranopl.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    // From lib.rs, cbindgen follows the `mod` items to the other files.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen parses capi/src");
    let mut out = Vec::new();
    bindings.write(&mut out);
    let want = String::from_utf8(out).unwrap();
    if std::env::var_os("MURANOPL_BLESS").is_some() {
        std::fs::write(&header, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&header).unwrap_or_default();
    if have != want {
        let line = (have.lines().zip(want.lines()))
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "include/muranopl.h is out of date with capi/src (first difference at line {}); \
             regenerate it with `MURANOPL_BLESS=1 cargo test -p muranopl-capi --test header`",
            line + 1
        );
    }
}
