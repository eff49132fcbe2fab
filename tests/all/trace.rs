//! `muranopl run --trace-json`: the events of a `Parallel` of three
//! branches sleeping on the virtual clock, read back, show the
//! deterministic interleaving, and the file matches
//! `tests/golden/trace_parallel.jsonl` (regenerate with `TRACE_BLESS=1`).

use serde_json::Value as J;

use crate::common;

fn trace(dir: &std::path::Path) -> (Vec<J>, String, std::process::Output) {
    let out_file = dir.join("trace.jsonl");
    let o = common::muranopl(&[
        "run",
        "tests/trace/parallel",
        "--model",
        "tests/trace/model.json",
        "--seed",
        "1",
        "--quiet",
        "--trace-json",
        out_file.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&out_file).unwrap();
    let events = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (events, text, o)
}

#[test]
fn a_parallel_runs_its_branches_in_a_traced_deterministic_interleaving() {
    let dir = std::env::temp_dir().join(format!("muranopl-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (events, text, o) = trace(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    assert_eq!(common::stdout(&o).trim(), "\"done\"");
    for e in &events {
        for key in ["file", "line", "col", "thread", "clock", "event"] {
            assert!(e.get(key).is_some_and(|v| !v.is_null()), "{key} in {e}");
        }
    }
    // The three branches enter `work` on threads 1, 2, 3 at time 0, and
    // leave it in the order of their sleeps: b (1 s), a (2 s), c (3 s).
    let calls: Vec<(u64, f64, &str)> = events
        .iter()
        .filter(|e| e["method"] == "work" && e["event"] != "statement")
        .map(|e| {
            (
                e["thread"].as_u64().unwrap(),
                e["clock"].as_f64().unwrap(),
                e["event"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (1, 0.0, "enter"),
            (2, 0.0, "enter"),
            (3, 0.0, "enter"),
            (2, 1.0, "exit"),
            (1, 2.0, "exit"),
            (3, 3.0, "exit"),
        ]
    );
    let results: Vec<&str> = (events.iter())
        .filter(|e| e["event"] == "exit")
        .filter_map(|e| e["result"].as_str())
        .collect();
    assert_eq!(results, ["b1", "a2", "c3", "done"]);
    // A block statement shows its source line.
    assert!(events.iter().any(|e| e["text"] == "Parallel:"), "{text}");
    // Run again: the same events, byte for byte.
    let (_, again, _) = trace(&dir);
    assert_eq!(text, again, "the trace replays");
    let golden = common::root().join("tests/golden/trace_parallel.jsonl");
    if std::env::var_os("TRACE_BLESS").is_some() {
        std::fs::write(&golden, &text).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("the golden trace (TRACE_BLESS=1 makes it)");
    assert_eq!(text, want, "update with TRACE_BLESS=1");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_prints_lines_on_stderr_and_a_raise_names_the_exception() {
    let o = common::muranopl(&[
        "run",
        "tests/trace/parallel",
        "--model",
        "tests/trace/model.json",
        "--method",
        "explode",
        "--trace",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = common::stderr(&o);
    assert!(
        err.contains(
            "[thread 0 @ 0.000s] !! com.example.Traced::explode raises MuranoPlException: it broke"
        ),
        "{err}"
    );
    let o = common::muranopl(&[
        "run",
        "tests/trace/parallel",
        "--model",
        "tests/trace/model.json",
        "--seed",
        "1",
        "--trace",
    ]);
    let err = common::stderr(&o);
    assert!(
        err.contains(
            "trace: tests/trace/parallel/Classes/Traced.yaml:13:13 [thread 2 @ 0.000s] $b.work(1)"
        ),
        "{err}"
    );
    assert!(
        err.contains("<- com.example.Worker::work = \"b1\""),
        "{err}"
    );
    let bad = common::muranopl(&[
        "run",
        "tests/trace/parallel",
        "--model",
        "tests/trace/model.json",
        "--trace-json",
        "/no/such/dir/t.jsonl",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(common::stderr(&bad).contains("/no/such/dir/t.jsonl"));
}

#[test]
fn test_traces_each_test_method_as_it_runs() {
    let out =
        std::env::temp_dir().join(format!("muranopl-test-trace-{}.jsonl", std::process::id()));
    let o = common::muranopl(&[
        "test",
        "examples/hello-app",
        "com.example.HelloTest.testTrue",
        "--trace-json",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stdout(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let entered: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<J>(l).unwrap())
        .filter(|e| e["event"] == "enter")
        .map(|e| {
            format!(
                "{}::{}",
                e["class"].as_str().unwrap(),
                e["method"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        entered,
        [
            "io.murano.test.TestFixture::setUp",
            "com.example.HelloTest::testTrue",
            "io.murano.test.TestFixture::assertTrue",
            "io.murano.test.TestFixture::tearDown",
        ]
    );
}

#[test]
fn break_stops_at_a_statement_with_its_frames_variables_in_scope() {
    // At the first stop (thread 1, worker a): its argument, the loop
    // variable, a property through `$this`, an error with its caret; then
    // on, and at the second stop (thread 2) no more stops.
    let input = "$n\n$i\n$this.name\n$n +\n\n:vars\n:q\n";
    let o = common::muranopl_with_input(
        &[
            "run",
            "tests/trace/parallel",
            "--model",
            "tests/trace/model.json",
            "--seed",
            "1",
            "--quiet",
            "--break",
            "Traced.yaml:37",
        ],
        input,
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(common::stdout(&o).trim(), "\"done\"");
    let err = common::stderr(&o);
    // (A stop's line follows the prompt the empty line answered.)
    let stops: Vec<&str> = err.split("break: ").skip(1).collect();
    assert_eq!(stops.len(), 2, "{err}");
    assert!(
        stops[0].contains("Traced.yaml:37:13 [thread 1 @ 0.000s] sleep(1)"),
        "{err}"
    );
    assert!(stops[1].contains("[thread 2 @ 0.000s]"), "{err}");
    let answers: Vec<&str> = err.split("break> ").skip(1).map(str::trim_end).collect();
    assert_eq!(&answers[..3], ["2", "0", "\"a\""], "{err}");
    assert!(answers[3].contains("error[YaqlGrammarException]") && answers[3].contains('^'));
    assert!(err.contains("$n = 1\n$i = 0"), "{err}");
}

#[test]
fn test_break_stops_inside_a_test_with_its_variables_in_scope() {
    // `test --break` as `run --break`: the stop inside the test method
    // (after the mocked `push()` ran once) sees its variable, the
    // fixture's property through `$`, and the frame's variables; then
    // the test goes on and passes.
    let input = "$.mocked\n$stack = null\n$.mocked + 41\n:vars\n\n";
    let o = common::muranopl_with_input(
        &[
            "test",
            "examples/hello-app",
            "HelloTest.testMocksGetTheCallersArguments",
            "--break",
            "HelloTest.yaml:39",
        ],
        input,
    );
    let err = common::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        common::stdout(&o).contains("HelloTest.testMocksGetTheCallersArguments ")
            && common::stdout(&o).contains("Ran 1 test"),
        "{}",
        common::stdout(&o)
    );
    let stops: Vec<&str> = err.split("break: ").skip(1).collect();
    assert_eq!(stops.len(), 1, "{err}");
    assert!(stops[0].contains("HelloTest.yaml:39:"), "{err}");
    let answers: Vec<&str> = err.split("break> ").skip(1).map(str::trim_end).collect();
    assert_eq!(&answers[..3], ["1", "false", "42"], "{err}");
    assert!(answers[3].contains("$stack = "), "{err}");
    // A malformed FILE:LINE is a usage error, before any test runs.
    let o = common::muranopl_with_input(
        &["test", "examples/hello-app", "--break", "HelloTest.yaml"],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("expected FILE:LINE"),
        "{}",
        common::stderr(&o)
    );
}
