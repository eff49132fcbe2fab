//! Limits are on by default: infinite sequences, exploding strings and
//! runaway evaluations end with a clear error, quickly, through the CLI and
//! the harness (issue 13). Debug builds pass smaller limits than the
//! defaults so that the test stays fast; release builds use the defaults.

use crate::common;

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

/// `muranopl test tests/hostile/round2 TEST ARGS...` under a `ulimit -v`
/// of `address_space_kb` (none: no limit); stdout then stderr, and the
/// exit status.
fn round2(test: &str, args: &[&str], address_space_kb: Option<u64>) -> (String, Option<i32>) {
    let name = format!("com.example.Round2Tests.{test}");
    let bin = env!("CARGO_BIN_EXE_muranopl");
    let mut cmd = std::process::Command::new("sh");
    let limit = address_space_kb.map_or(String::new(), |kb| format!("ulimit -v {kb}; "));
    cmd.arg("-c")
        .arg(format!("{limit}exec \"$0\" \"$@\""))
        .arg(bin)
        .args(["test", "tests/hostile/round2", &name])
        .args(args)
        .current_dir(common::root());
    let o = cmd.output().expect("run sh");
    (format!("{}{}", stdout(&o), stderr(&o)), o.status.code())
}

/// Issue 32, item 1: green threads whose stacks cannot be mapped (past the
/// kernel's map count, or under an address-space limit) end the run with
/// a MemoryError naming the thread, never a panic; sixteen fit in 4 GB
/// (each reserved 256 MiB: the sixteenth failed); recursion to the depth
/// limit and values nested a million deep fit in a green thread's stack.
#[test]
fn green_threads_that_cannot_start_are_a_memory_error() {
    // Past the kernel's map count (about 32,700 threads) the mapping fails
    // the same way; an address-space limit gets there in fewer.
    let (all, code) = round2("testManyGreenThreads", &[], Some(4_000_000));
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("MemoryError: cannot start green thread")
            && all.contains("of 100000: its stack"),
        "{all}"
    );
    assert!(!all.contains("panicked"), "{all}");
    let (all, code) = round2("testSixteenGreenThreads", &[], Some(4_000_000));
    assert_eq!(code, Some(0), "{all}");
    let (all, code) = round2("testRecursionInGreenThreads", &[], None);
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("RecursionError: maximum recursion depth exceeded"),
        "{all}"
    );
    let (all, code) = round2("testDeepValuesInGreenThreads", &[], None);
    assert_eq!(code, Some(0), "{all}");
}

/// Issue 32, item 2: a server that cannot start its threads says so and
/// exits; it never sits without its banner and without an address. Under
/// address-space limits from too small to run at all up to enough, each
/// run either serves or exits non-zero with an error, within seconds.
#[test]
fn serve_that_cannot_start_exits_with_an_error() {
    use std::io::Read;
    let bin = env!("CARGO_BIN_EXE_muranopl");
    let (mut served, mut refused) = (false, 0);
    let mut kb = 520_000u64;
    while !served && kb < 4_000_000 {
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kb}; exec \"$0\" \"$@\""))
            .arg(bin)
            .args(["serve", "examples/hello-app", "--addr", "127.0.0.1:0"])
            .current_dir(common::root())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run sh");
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if t.elapsed() > Duration::from_secs(3) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = child.kill();
        let _ = child.wait();
        let mut out = String::new();
        let _ = child.stdout.take().unwrap().read_to_string(&mut out);
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        match status {
            // Still running: it must be serving.
            None => {
                assert!(out.starts_with("muranopl: serving"), "{kb} kB: {out}{err}");
                served = true;
            }
            Some(s) => {
                assert_ne!(s.code(), Some(0), "{kb} kB: {out}{err}");
                // A thread that cannot start is an error message; an
                // allocation the allocator cannot map on the way (loading
                // the catalogue) aborts with its own message.
                assert!(
                    err.starts_with("error: cannot start") || err.contains("memory allocation of"),
                    "{kb} kB: {err}"
                );
                assert!(!err.contains("panicked"), "{kb} kB: {err}");
                refused += 1;
            }
        }
        kb += 20_000;
    }
    assert!(served && refused > 0, "served {served}, refused {refused}");
}

/// Issue 32, item 3: objects and caught exceptions count against
/// `--max-memory`: a loop making objects (it reached 1.2 GB with a 10 MB
/// budget) or catching exceptions ends with MemoryQuotaExceededException,
/// in a few hundred MB.
#[test]
fn objects_and_caught_exceptions_count_against_the_memory_budget() {
    for test in ["testObjects", "testCaughtExceptions"] {
        let name = format!("com.example.Round2Tests.{test}");
        let args = [
            "test",
            "tests/hostile/round2",
            &name,
            "--max-memory",
            "50000000",
        ];
        let w = common::watch_ends(&args, 300 * MB, Duration::from_secs(60), 1);
        let all = format!("{}{}", w.stdout, w.stderr);
        assert!(
            all.contains("MemoryQuotaExceededException"),
            "{test}: {all}"
        );
        assert!(w.peak < 300 * MB, "{test}: {} MB", w.peak / MB);
    }
}

/// Issue 32: a `.destroy` that runs past `--timeout` fails its test (the
/// GC mutes errors of `.destroy`, but running out of time is none; the
/// test was reported OK).
#[test]
fn a_destroy_handler_past_the_time_budget_fails_the_test() {
    let t = Instant::now();
    let (all, code) = round2("testEndlessDestroy", &["--timeout", "1"], None);
    assert_eq!(code, Some(1), "{all}");
    assert!(all.contains("TimeoutError"), "{all}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

/// Issue 32, item 5: `muranopl action` prints a result however deep it
/// nests (past 126 levels it printed `null`, exit 0).
#[test]
fn deep_action_results_are_printed_whole() {
    for depth in [126usize, 127, 5000] {
        let args = format!("{{\"depth\": {depth}}}");
        let o = muranopl(&[
            "action",
            "com.example.Round2Tests",
            "deep",
            "-p",
            "tests/hostile/round2",
            "--args",
            &args,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let expected = format!("{}{}", "[".repeat(depth + 1), "]".repeat(depth + 1));
        assert_eq!(stdout(&o).trim(), expected, "{depth}");
    }
}

/// Issue 32, item 11: `sequence` and `range` are exact past i64, as
/// Python's ints are (sequence saturated at i64::MAX; range past it was
/// an OverflowError).
#[test]
fn sequences_and_ranges_are_exact_past_i64() {
    for (expr, out) in [
        (
            "sequence(9223372036854775806).take(4)",
            "[9223372036854775806, 9223372036854775807, 9223372036854775808, 9223372036854775809]",
        ),
        (
            "sequence(-9223372036854775807, -1).take(3)",
            "[-9223372036854775807, -9223372036854775808, -9223372036854775809]",
        ),
        (
            "sequence(pow(10, 20)).take(2)",
            "[100000000000000000000, 100000000000000000001]",
        ),
        (
            "range(pow(10, 20), pow(10, 20) + 2)",
            "[100000000000000000000, 100000000000000000001]",
        ),
        (
            "range(9223372036854775807, 9223372036854775805, -1)",
            "[9223372036854775807, 9223372036854775806]",
        ),
        ("range(1, 3, pow(10, 20))", "[1]"),
    ] {
        let o = muranopl(&["yaql", expr]);
        assert_eq!(o.status.code(), Some(0), "{expr}: {}", stderr(&o));
        assert_eq!(stdout(&o).trim(), out, "{expr}");
    }
}

const MB: u64 = 1_000_000;
