//! YAQL: parse, compile and evaluate any text, in both modes, with small
//! limits. Every outcome is a value or an error, never a crash or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use muranopl::{json, Engine, Options};
use std::sync::LazyLock;
use std::time::Duration;

/// Built once per process: an engine is immutable after construction, and
/// building the library per input would be most of the work measured.
static ENGINES: LazyLock<[Engine; 2]> = LazyLock::new(|| [engine(false), engine(true)]);

fn engine(legacy: bool) -> Engine {
    Engine::new(Options {
        legacy,
        convert_sets_to_lists: !legacy,
        limit_iterators: Some(1000),
        memory_quota: Some(1 << 20),
        max_memory: Some(64 << 20),
        time_budget: Some(Duration::from_millis(200)),
        ..Options::default()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let Ok(expr) = std::str::from_utf8(rest) else { return };
    let engine = &ENGINES[usize::from(mode & 1)];
    let input = json::from_tagged_str(r#"{"a": [1, 2, {"b": "c"}], "n": 3, "s": "text"}"#)
        .expect("fixed input");
    if let Ok(prog) = engine.compile(expr) {
        if let Ok(v) = engine.eval(&prog, input) {
            let _ = json::to_tagged_string(&v);
        }
    }
});
