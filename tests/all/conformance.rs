//! Conformance corpora (`../shared/conformance`) scored with the reference
//! scorers against the `muranopl` binary of the build under test (part of
//! `cargo test --workspace`; alone: `cargo test --test all conformance::`);
//! each test skips with a message when `../shared` (or python3) is absent.
//!
//! The floors below are the scores this revision reaches; a change that
//! lowers one fails the test.

use std::path::PathBuf;
use std::process::Command;

fn shared() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if p.join("conformance").is_dir() {
        Some(p)
    } else {
        None
    }
}

fn score(tool: &str, corpus: &str, harness: &str) -> Option<(usize, usize)> {
    let Some(sh) = shared() else {
        crate::common::skip(&format!(
            "../shared is absent; conformance corpus {corpus} not run"
        ));
        return None;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        crate::common::skip(&format!("python3 is absent; cannot run {tool}"));
        return None;
    }
    let out = Command::new("python3")
        .arg(sh.join("tools").join(tool))
        .arg(sh.join("conformance").join(corpus))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_muranopl"))
        .arg("harness")
        .arg(harness)
        .output()
        .expect("run scorer");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("conformance:"))
        .expect("scorer summary line");
    let frac = line.split_whitespace().nth(1).expect("P/N");
    let (p, n) = frac.split_once('/').expect("P/N");
    Some((p.parse().unwrap(), n.parse().unwrap()))
}

fn check(tool: &str, corpus: &str, harness: &str, floor_pct: f64) {
    if let Some((p, n)) = score(tool, corpus, harness) {
        let pct = 100.0 * p as f64 / n as f64;
        assert!(
            pct >= floor_pct,
            "{corpus}: {p}/{n} = {pct:.1}% is below the floor {floor_pct}%"
        );
    }
}

#[test]
fn yaql_cases() {
    check("yaql-score", "yaql/cases.jsonl", "yaql", 99.0);
}

#[test]
fn yaql_fuzz_public() {
    check("yaql-score", "yaql/fuzz-public.jsonl", "yaql", 99.0);
}

#[test]
fn muranopl_dsl_cases() {
    check("muranopl-score", "muranopl/cases.jsonl", "dsl", 95.0);
}

#[test]
fn schema_cases() {
    check("schema-score", "schema/cases.jsonl", "schema", 97.0);
}

/// The harness's answers to every case of a corpus with contracts
/// compiled to machine code as each class is built, and interpreted.
fn answers(corpus: &str, harness: &str, jit: &str) -> Vec<u8> {
    let sh = shared().expect("checked by the caller");
    let input = std::fs::File::open(sh.join("conformance").join(corpus)).expect("corpus");
    let out = Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(["harness", harness])
        .env("MURANOPL_JIT", jit)
        .stdin(input)
        .output()
        .expect("run harness");
    assert!(
        out.status.success(),
        "harness {harness} with jit {jit} failed"
    );
    out.stdout
}

/// Machine code never changes an answer: every corpus (contracts in the
/// MuranoPL and schema cases, conditions in the YAQL ones) gives
/// byte-identical responses with the JIT forced on and off.
#[test]
fn jit_on_and_off_answer_alike() {
    if shared().is_none() {
        crate::common::skip("../shared is absent; JIT on/off conformance not run");
        return;
    }
    for (corpus, harness) in [
        ("muranopl/cases.jsonl", "dsl"),
        ("schema/cases.jsonl", "schema"),
    ] {
        let off = answers(corpus, harness, "off");
        let on = answers(corpus, harness, "always");
        assert!(off.len() > 1000, "{corpus}: no answers");
        let lines = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        };
        let (off, on) = (lines(&off), lines(&on));
        assert_eq!(off.len(), on.len(), "{corpus}: answer counts differ");
        for (a, b) in off.iter().zip(&on) {
            assert_eq!(a, b, "{corpus}: an answer differs with the JIT on");
        }
    }
}

/// The real catalogue (issue 6): `package check` of every package and
/// `ui model` + `run --method deploy` of every application with a UI.
#[test]
fn apps_catalogue() {
    if shared().is_none() {
        crate::common::skip("../shared is absent; the app catalogue is not run");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/check-apps");
    let out = Command::new("bash")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_muranopl"))
        .output()
        .expect("run scripts/check-apps");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let last = text.lines().last().unwrap_or("");
    // "package check: P/N; deploy: D/A application packages with a UI;
    // tests: T/M packages with tests pass"
    let nums: Vec<usize> = last
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(nums.len(), 6, "unexpected summary: {last}");
    let (checked_ok, checked, deployed, apps) = (nums[0], nums[1], nums[2], nums[3]);
    let (tests_ok, tested) = (nums[4], nums[5]);
    // Every package loads and compiles (PaloAlto through our embedded
    // org.openstack.networkingSfc).
    assert_eq!(checked_ok, checked, "{last}");
    assert!(deployed * 100 >= apps * 80, "{last}");
    assert_eq!(tests_ok, tested, "{last}");
}
