//! The whole-file peer of `muranopl validate` (`benches/whole-file.sh`):
//! what a Rust user would write with the `jsonschema` crate, reading a
//! model file into serde_json's DOM and collecting every error of
//! `validator_for(schema)` over it. Prints one JSON line: the error count,
//! their instance paths, and the seconds spent reading and parsing,
//! validating, and in all.
//!
//! `cargo bench --bench whole_file_jsonschema -- MODEL.json SCHEMA.json`

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let [model, schema] = &args[..] else {
        eprintln!("usage: whole_file_jsonschema MODEL.json SCHEMA.json");
        std::process::exit(2);
    };
    let start = Instant::now();
    let read = |p: &str| {
        let f = std::fs::File::open(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        let r: serde_json::Value =
            serde_json::from_reader(std::io::BufReader::with_capacity(1 << 20, f))
                .unwrap_or_else(|e| panic!("{p}: {e}"));
        r
    };
    let schema = read(schema);
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let doc = read(model);
    let parsed = start.elapsed().as_secs_f64();
    let paths: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| e.instance_path.to_string())
        .collect();
    let total = start.elapsed().as_secs_f64();
    let out = serde_json::json!({
        "errors": paths.len(),
        "paths": paths,
        "parse_s": parsed,
        "validate_s": total - parsed,
        "total_s": total,
    });
    println!("{out}");
}
