//! The JSON Lines loop shared by the `harness dsl` and `harness schema`
//! commands (see `../shared/conformance/PROTOCOL.md`): one request per line,
//! exactly one response per line, flushed, a panic answered as an error.

use std::io::{BufRead, Write};
use std::panic::AssertUnwindSafe;

use serde_json::{json, Value as J};

/// Serves requests from stdin with `run`; `error_key` names the response
/// field for failures (`load_error` for dsl, `error` for schema).
pub fn serve(error_key: &str, run: impl Fn(&J) -> J) -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let failure = |id: J, name: &str, message: String| {
            let mut r = json!({"id": id});
            r[error_key] = json!({"names": [name], "message": message});
            r
        };
        let resp = match serde_json::from_str::<J>(&line) {
            Err(e) => failure(J::Null, "ValueError", format!("bad request: {e}")),
            Ok(req) => {
                let id = req.get("id").cloned().unwrap_or(J::Null);
                std::panic::catch_unwind(AssertUnwindSafe(|| run(&req)))
                    .unwrap_or_else(|_| failure(id, "InternalError", "panic".into()))
            }
        };
        if writeln!(out, "{resp}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    0
}
