//! Helpers shared by the integration tests that drive the `muranopl`
//! binary.
#![allow(dead_code)] // each test crate uses its own subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root (the tests run the binary from there).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `muranopl ARGS...` in the repository root.
pub fn muranopl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run muranopl")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A JSON file, parsed.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `muranopl harness KIND` over request lines (each one line of
/// JSON); the parsed answers, in order, and how long the harness took.
pub fn harness(kind: &str, requests: &[String]) -> (Vec<serde_json::Value>, std::time::Duration) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(["harness", kind])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the harness");
    let t = std::time::Instant::now();
    let mut input = child.stdin.take().expect("stdin");
    for r in requests {
        writeln!(input, "{r}").expect("write a request");
    }
    drop(input);
    let out = child.wait_with_output().expect("the harness's answers");
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("an answer is JSON"))
        .collect();
    (answers, t.elapsed())
}
