//! Limits are on by default: infinite sequences, exploding strings and
//! runaway evaluations end with a clear error, quickly, through the CLI and
//! the harness (issue 13). Debug builds pass smaller limits than the
//! defaults so that the test stays fast; release builds use the defaults.

mod common;

use std::time::{Duration, Instant};

use common::{harness, muranopl, stderr, stdout};

/// The limits the CLI cases run with: the defaults in release builds.
fn limits() -> Vec<&'static str> {
    if cfg!(debug_assertions) {
        vec!["--limit-iterators", "200000", "--memory-quota", "4000000"]
    } else {
        Vec::new()
    }
}

/// Runs `muranopl yaql EXPR` with [`limits`] (or with the `extra` flags
/// alone); the error kind it ends with and how long it took.
fn ends_with(expr: &str, extra: &[&str]) -> (String, Duration) {
    let mut args = vec!["yaql", expr];
    if extra.is_empty() {
        args.extend(limits());
    }
    args.extend(extra);
    let t = Instant::now();
    let o = muranopl(&args);
    let took = t.elapsed();
    assert_eq!(o.status.code(), Some(1), "{expr}: {}", stdout(&o));
    (error_kind(&stderr(&o)).to_string(), took)
}

/// The kind of the first diagnostic in `err` (`error[KIND]: ...`).
fn error_kind(err: &str) -> &str {
    err.strip_prefix("error[")
        .and_then(|r| r.split(']').next())
        .unwrap_or("")
}

#[test]
fn infinite_and_exploding_expressions_end_with_the_documented_error() {
    for (expr, kind) in [
        ("sequence()", "CollectionTooLargeException"),
        ("sequence().toSet()", "CollectionTooLargeException"),
        ("[1].cycle().len()", "CollectionTooLargeException"),
        (
            "range(1000000000000000000).len()",
            "CollectionTooLargeException",
        ),
        ("generateMany(1, sequence())", "CollectionTooLargeException"),
        (
            "let(x => 'ab') -> range(40).aggregate($1 + $1, $x).len()",
            "MemoryQuotaExceededException",
        ),
        (
            "range(40).aggregate(concat($1, $1), 'a').len()",
            "MemoryQuotaExceededException",
        ),
        (
            "range(40).aggregate([$1, $1].join(''), 'a').len()",
            "MemoryQuotaExceededException",
        ),
        (
            "range(40).aggregate(format('{0}{0}', $1), 'a').len()",
            "MemoryQuotaExceededException",
        ),
        (
            "range(40).aggregate($1.replace(a, aa), 'a').len()",
            "MemoryQuotaExceededException",
        ),
        ("'{0:1000000000}'.format(1)", "MemoryQuotaExceededException"),
        ("'{0:.70000f}'.format(1.5)", "ValueError"),
    ] {
        let (got, took) = ends_with(expr, &[]);
        assert_eq!(got, kind, "{expr}");
        assert!(took < Duration::from_secs(10), "{expr}: {took:?}");
    }
    // An empty list repeated any number of times is empty, at once.
    let o = muranopl(&["yaql", "[] * 9223372036854775807"]);
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(0), "[]"));
}

/// The time budget ends what no collection or string limit catches; 0
/// turns a limit off.
#[test]
fn the_time_budget_ends_long_evaluations() {
    let (kind, took) = ends_with(
        "[1].cycle().len()",
        &["--limit-iterators", "0", "--timeout", "0.5"],
    );
    assert_eq!(kind, "TimeoutError");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let o = muranopl(&["yaql", "range(300000).len()", "--limit-iterators", "0"]);
    assert_eq!((o.status.code(), stdout(&o).trim()), (Some(0), "300000"));
    let o = muranopl(&["yaql", "1", "--timeout", "x"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad flag value is a usage error"
    );
}

/// Many values each under the per-value quota still end at the
/// evaluation's memory budget (bytes allocated in all), and 0 turns it off.
#[test]
fn the_memory_budget_bounds_an_evaluation_in_all() {
    let (n, budget) = if cfg!(debug_assertions) {
        ("2000000", "50000000")
    } else {
        ("200000000", "0")
    };
    let expr = format!("range(1000).select('x' * {n}).len()");
    let mut flags = limits();
    if budget != "0" {
        flags.extend(["--max-memory", budget]);
    }
    let (kind, took) = ends_with(&expr, &flags);
    assert_eq!(kind, "MemoryQuotaExceededException");
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Within the budget, and without one.
    for flags in [&["--max-memory", "400000000"][..], &["--max-memory", "0"]] {
        let o = muranopl(&[&["yaql", "range(100).select('x' * 1000000).len()"], flags].concat());
        assert_eq!(
            (o.status.code(), stdout(&o).trim()),
            (Some(0), "100"),
            "{flags:?}"
        );
    }
    let o = muranopl(&[
        "yaql",
        "range(100).select('x' * 1000000).len()",
        "--max-memory",
        "50000000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("more than 50000000 bytes in all"),
        "{}",
        stderr(&o)
    );
}

/// The harness answers every request of a stream, those that explode
/// included, with the test suite's limits.
#[test]
fn the_harness_survives_exploding_requests() {
    let requests = [
        "sequence()",
        "let(x => 'ab') -> range(40).aggregate($1 + $1, $x)",
        "range(30).aggregate([$1, $1].join('-'), 'a')",
        "'{0:100000000}'.format(1)",
        "generateMany(1, sequence())",
        "1 + 1",
    ];
    let lines: Vec<String> = requests
        .iter()
        .enumerate()
        .map(|(i, e)| serde_json::json!({"id": i.to_string(), "expr": e, "data": null}).to_string())
        .collect();
    let (lines, _) = harness("yaql", &lines);
    assert_eq!(lines.len(), requests.len(), "every request answered");
    let kinds: Vec<&str> = lines[..5]
        .iter()
        .map(|l| l["error"]["kind"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(
        kinds,
        [
            "CollectionTooLargeException",
            "MemoryQuotaExceededException",
            "MemoryQuotaExceededException",
            "MemoryQuotaExceededException",
            "CollectionTooLargeException"
        ]
    );
    assert_eq!(lines[5]["result"], 2);
}

/// Integer literals convert in chunks: a million digits in about a second
/// (release), not the 51 s of digit-by-digit conversion.
#[test]
fn huge_integer_literals_parse_in_bounded_time() {
    let digits = if cfg!(debug_assertions) {
        200_000
    } else {
        1_000_000
    };
    let expr = format!("{} mod 7", "1".repeat(digits));
    let line = serde_json::json!({"id": "big", "expr": expr, "data": null});
    let (answers, took) = harness("yaql", &[line.to_string()]);
    let answer = &answers[0];
    // 111...1 (n ones) mod 7 cycles with period 6: 1, 4, 6, 5, 2, 0.
    let want = [0, 1, 4, 6, 5, 2][digits % 6];
    assert_eq!(answer["result"], want);
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// A chain of inheriting classes builds in linear time per class (it was
/// cubic overall: 2000 classes took 8 s).
#[test]
fn long_inheritance_chains_build_quickly() {
    let n = if cfg!(debug_assertions) { 600 } else { 2000 };
    let mut docs =
        vec!["Name: C0\nProperties:\n  p0:\n    Contract: $\n    Default: 0\n".to_string()];
    for i in 1..n {
        docs.push(format!(
            "Name: C{i}\nExtends: C{}\nProperties:\n  p{i}:\n    Contract: $\n    Default: {i}\n",
            i - 1
        ));
    }
    docs.push(format!(
        "Name: T\nMethods:\n  t:\n    Scope: Public\n    Body:\n      - Return: new(C{}).p0 + new(C{}).p{}\n",
        n - 1,
        n - 1,
        n - 1
    ));
    let request = serde_json::json!({
        "id": "chain", "classes": {"C.yaml": docs.join("---\n")}, "format": "1.4",
        "model": {"Objects": {"?": {"type": "T", "id": "a"}}},
        "steps": [{"on": "root", "method": "t", "args": [], "kwargs": {}}], "serialize": false
    });
    let (answers, took) = harness("dsl", &[request.to_string()]);
    let answer = &answers[0];
    assert_eq!(answer["steps"][0]["result"], n - 1, "{answer}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// Exponential work through shared sublists and big-integer squaring ends
/// within the limits (issue 13).
#[test]
fn shared_sublists_and_squarings_are_bounded() {
    let cases = [
        (
            "range(30).aggregate([$1, $1], [1])",
            "MemoryQuotaExceededException",
        ),
        ("range(40).aggregate($1 * $1, 3) > 0", "MemoryError"),
        // Found by the yaql fuzz target: a 43M-bit power took 2 s, and
        // printing it 8 s more.
        ("pow(8111522222222220, 821181)", "MemoryError"),
        ("generate(3, $ < 90, $ * -$).splitAt(3)", "MemoryError"),
        ("shiftBitsLeft(1, 1048577)", "OverflowError"),
    ];
    for (expr, kind) in cases {
        let t = Instant::now();
        let o = muranopl(&["yaql", expr]);
        assert_eq!(o.status.code(), Some(1), "{expr}");
        assert_eq!(error_kind(&stderr(&o)), kind, "{expr}: {}", stderr(&o));
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{expr}: {:?}",
            t.elapsed()
        );
    }
    // The largest integer arithmetic builds (2^20 bits) prints: 315,653
    // digits.
    let o = muranopl(&["yaql", "pow(2, 524288) * pow(2, 524286)"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim().len(), 315_653);
}

#[test]
fn muranopl_executions_have_a_time_and_a_statement_budget() {
    let pkg = "tests/hostile/endless-tests";
    let t = Instant::now();
    let o = muranopl(&["test", pkg, "--timeout", "1"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let all = format!("{out}{err}");
    assert!(
        all.contains("testForever") && all.contains("TimeoutError"),
        "{all}"
    );
    // The other test still passes.
    assert!(all.contains("testQuick"), "{all}");
    // A method keeping ever more strings ends at the execution's memory
    // budget, however many statements and seconds it has left.
    let all = failing_test("testHoarding", &["--max-memory", "100000000"]);
    assert!(
        all.contains("MemoryQuotaExceededException") && all.contains("100000000 bytes"),
        "{all}"
    );
    let all = failing_test("testForever", &["--max-steps", "10000"]);
    assert!(all.contains("ExecutionLimitExceeded"), "{all}");
}

/// Runs one test of `tests/hostile/endless-tests` with `flags`; it must
/// fail. Its output, stdout then stderr.
fn failing_test(test: &str, flags: &[&str]) -> String {
    let name = format!("com.example.EndlessTests.{test}");
    let args = [&["test", "tests/hostile/endless-tests", &name][..], flags].concat();
    let o = muranopl(&args);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{test}: {all}");
    all
}

/// A test class that does not compile fails `muranopl test` with its
/// error and position, instead of running no tests and passing.
#[test]
fn a_test_class_that_does_not_compile_fails_the_run() {
    let o = muranopl(&["test", "tests/hostile/broken-tests"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}{err}", stdout(&o));
    assert!(
        err.contains("class com.example.BrokenTests") && err.contains("BrokenTests.yaml:11:9"),
        "{err}"
    );
}
