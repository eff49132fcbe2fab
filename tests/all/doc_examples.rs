//! Checks the YAQL examples in the standard library's doc comments.
//!
//! Every native in `stdlib/src/*.rs` documents the reference function it
//! matches and carries an example in a ```` ```yaql ```` block:
//!
//! ```text
//! /// ```yaql
//! /// 'abc'.toUpper()
//! /// # => "ABC"
//! /// ```
//! ```
//!
//! Each example is an expression (one line) followed by `# => JSON` (the
//! expected tagged-JSON result) or `# error: Kind`; `# data: JSON` before the
//! expression binds `$`, `# legacy` selects yaql 0.2 mode. Several examples
//! may share a block. This test evaluates them all with the test-suite
//! options.

use std::path::PathBuf;

use muranopl::{json, Engine, Options};

struct Example {
    file: String,
    line: usize,
    expr: String,
    data: String,
    legacy: bool,
    want: Result<String, String>,
}

fn examples() -> Vec<Example> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("stdlib/src");
    let mut out = Vec::new();
    // The files of `stdlib/src` and of its module folders (`queries/`).
    let mut files = Vec::new();
    let mut dirs = vec![dir.clone()];
    while let Some(d) = dirs.pop() {
        for p in std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
        {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.strip_prefix(&dir).unwrap_or(&f).display().to_string();
        let mut in_block = false;
        let (mut data, mut legacy, mut expr) = ("null".to_string(), false, None::<(usize, String)>);
        for (i, raw) in text.lines().enumerate() {
            let t = raw.trim_start();
            let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
                continue;
            };
            let doc = doc.strip_prefix(' ').unwrap_or(doc);
            if !in_block {
                if doc.trim() == "```yaql" {
                    in_block = true;
                    data = "null".into();
                    legacy = false;
                    expr = None;
                }
                continue;
            }
            if doc.trim() == "```" {
                in_block = false;
                continue;
            }
            if let Some(d) = doc.strip_prefix("# data:") {
                data = d.trim().to_string();
            } else if doc.trim() == "# legacy" {
                legacy = true;
            } else if let Some(r) = doc.strip_prefix("# =>") {
                if let Some((line, e)) = expr.take() {
                    out.push(Example {
                        file: name.clone(),
                        line,
                        expr: e,
                        data: data.clone(),
                        legacy,
                        want: Ok(r.trim().to_string()),
                    });
                }
            } else if let Some(k) = doc.strip_prefix("# error:") {
                if let Some((line, e)) = expr.take() {
                    out.push(Example {
                        file: name.clone(),
                        line,
                        expr: e,
                        data: data.clone(),
                        legacy,
                        want: Err(k.trim().to_string()),
                    });
                }
            } else if !doc.trim().is_empty() {
                expr = Some((i + 1, doc.to_string()));
            }
        }
    }
    out
}

#[test]
fn stdlib_doc_examples() {
    let engines = [
        Engine::new(Options::test_suite(false)),
        Engine::new(Options::test_suite(true)),
    ];
    let all = examples();
    assert!(!all.is_empty(), "no ```yaql examples found in stdlib/src");
    let mut failures = Vec::new();
    for ex in &all {
        let e = &engines[ex.legacy as usize];
        let got = e.eval_json(&ex.expr, &ex.data);
        let ok = match (&got, &ex.want) {
            (Ok(g), Ok(w)) => {
                let norm = |s: &str| json::from_tagged_str(s).map(|v| json::to_tagged_string(&v));
                norm(w).map_or(g == w, |w| *g == w)
            }
            (Err(g), Err(k)) => g.kind() == k,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{}:{}: `{}` gave {:?}, want {:?}",
                ex.file,
                ex.line,
                ex.expr,
                got.map_err(|e| e.to_string()),
                ex.want
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} doc examples failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    eprintln!("{} doc examples passed", all.len());
}
