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
