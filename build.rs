//! Collects the doc comments of the YAQL library (`stdlib/src`) and of the
//! engine's MuranoPL functions (`engine/src`) into a table the language
//! server shows on hover and in completion (`$OUT_DIR/yaql_docs.rs`): the
//! library's own documentation, one source of truth.
//!
//! A doc comment belongs to the YAQL names it says it matches: the
//! backquoted names in the parentheses after "Matches yaql `group.fn`"
//! (`(`toUpper`)`), else the last part of that id; an engine function's
//! doc opens with its call (`` `new(type, ...)` ``).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut entries: Vec<(String, String)> = Vec::new();
    for dir in ["stdlib/src", "engine/src"] {
        println!("cargo:rerun-if-changed={dir}");
        let mut files = Vec::new();
        rs_files(&root.join(dir), &mut files);
        files.sort();
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            for doc in doc_blocks(&text) {
                for name in names_of(&doc) {
                    entries.push((name, doc.clone()));
                }
            }
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup();
    let mut out = String::from("/// (YAQL name, doc comment) pairs, sorted by name.\n");
    out.push_str("pub static DOCS: &[(&str, &str)] = &[\n");
    for (name, doc) in &entries {
        let _ = writeln!(out, "    ({name:?}, {doc:?}),");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("yaql_docs.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `///` comment blocks of `text` that precede a `fn`.
fn doc_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(d) = t.strip_prefix("///") {
            cur.push(d.strip_prefix(' ').unwrap_or(d));
            continue;
        }
        if !cur.is_empty() && (t.contains("fn ") || t.starts_with("#[")) {
            if t.starts_with("#[") {
                continue;
            }
            out.push(cur.join("\n"));
        }
        cur.clear();
    }
    out
}

fn is_name(s: &str) -> bool {
    let s = s.strip_prefix('#').unwrap_or(s);
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_$.+-*/<>=!".contains(c))
        && !s.contains(' ')
}

/// The YAQL names a doc comment documents.
fn names_of(doc: &str) -> Vec<String> {
    if let Some(i) = doc.find("Matches yaql") {
        let rest = &doc[i..];
        let end = rest
            .find(").")
            .or_else(|| rest.find(')'))
            .unwrap_or(rest.len());
        let before = &rest[..end];
        if let Some(open) = before.find('(') {
            let names: Vec<String> = before[open..]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| is_name(n))
                .map(str::to_string)
                .collect();
            if !names.is_empty() {
                return names;
            }
        }
        let id = rest.split('`').nth(1).unwrap_or("");
        let last = id.rsplit('.').next().unwrap_or("").trim_end_matches('_');
        return if is_name(last) && !last.is_empty() {
            vec![last.to_string()]
        } else {
            Vec::new()
        };
    }
    // An engine function: "`new(type, ...)`".
    let first = doc.lines().next().unwrap_or("");
    if let Some(call) = first.strip_prefix('`') {
        if let Some(name) = call.split('(').next().filter(|_| call.contains('(')) {
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return vec![name.to_string()];
            }
        }
    }
    Vec::new()
}
