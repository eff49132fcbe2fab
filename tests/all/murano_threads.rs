//! MuranoPL green threads sharing objects: method locks, deadlocks,
//! seeded schedules, variables shared by `Parallel` branches, deep values
//! on green-thread stacks, branches failing together.

use muranopl::Value;

use super::murano::{run, run_seeded, traces};

const SHARED: &str = r#"
Name: Test
Properties:
  a:
    Contract: $.class(Node)
    Usage: Runtime
  b:
    Contract: $.class(Node)
    Usage: Runtime
Methods:
  .init:
    Body:
      - $.a: new(Node, name => a)
      - $.b: new(Node, name => b)
  sameMethod:
    Scope: Public
    Body:
      - Parallel:
          - $.a.work(1)
          - $.a.work(2)
          - $.b.work(3)
  crossed:
    Scope: Public
    Body:
      - Parallel:
          - $.a.visit($.b)
          - $.b.visit($.a)
  reentered:
    Scope: Public
    Body:
      - $.a.spawn()
  mixed:
    Scope: Public
    Body:
      - Parallel:
          - $.a.work(1)
          - $.b.work(2)
          - $.a.visit($.b)
          - list(1, 2).pselect($this.a.work($))
          - $.b.work(3)
      - Return: done
---
Name: Node
Properties:
  name:
    Contract: $.string()
Methods:
  work:
    Arguments:
      - n:
          Contract: $.int()
    Body:
      - trace(format('enter work {0}', $.name))
      - sleep(1)
      - trace(format('exit work {0}', $.name))
  visit:
    Arguments:
      - peer:
          Contract: $.class(Node)
    Body:
      - trace(format('enter visit {0}', $.name))
      - sleep(1)
      - If: $peer != null
        Then:
          - $peer.visit(null)
      - trace(format('exit visit {0}', $.name))
  spawn:
    Body:
      - Parallel:
          - $.spawn()
"#;

fn run_with_seed(method: &str, seed: Option<u64>) -> (Vec<String>, Result<Value, runtime::Error>) {
    let (ex, r) = run_seeded(SHARED, method, seed);
    (traces(&ex), r)
}

/// No two green threads are ever inside one method of one object at once:
/// every `enter M X` is followed by `exit M X` before the next `enter M X`.
fn assert_serialized(traces: &[String]) {
    let mut inside: Vec<&str> = Vec::new();
    for t in traces {
        if let Some(n) = t.strip_prefix("enter ") {
            assert!(!inside.contains(&n), "two threads inside {n}: {traces:?}");
            inside.push(n);
        } else if let Some(n) = t.strip_prefix("exit ") {
            inside.retain(|x| *x != n);
        }
    }
}

/// A method holds a lock on its object while it runs, so a second green
/// thread calling the same method of the same object waits for the first
/// (murano/dsl/executor.py, `_acquire_method_lock`), and threads that end
/// up waiting on each other end in a `DeadlockError` naming them rather
/// than spinning (issue 12 item 1).
#[test]
fn green_threads_wait_for_method_locks_and_deadlocks_end_in_an_error() {
    let (t, r) = run_with_seed("sameMethod", None);
    r.unwrap();
    // The second call on `a` enters as soon as the first leaves.
    assert_eq!(
        t,
        [
            "enter work a",
            "enter work b",
            "exit work a",
            "enter work a",
            "exit work b",
            "exit work a"
        ]
    );
    assert_serialized(&t);

    let (_, r) = run_with_seed("crossed", None);
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "DeadlockError");
    assert!(
        e.message()
            .starts_with("every green thread waits on another: T"),
        "{}",
        e.message()
    );
    assert!(e.message().contains("waits for visit#"), "{}", e.message());
    assert!(e.message().contains("held by T"), "{}", e.message());

    // The thread that holds `spawn` waits for its own Parallel branch,
    // which waits for `spawn`.
    let (_, r) = run_with_seed("reentered", None);
    assert_eq!(r.unwrap_err().kind(), "DeadlockError");
}

/// Fifty seeded random schedules of branches sharing objects: each ends,
/// with a result or a deadlock, and keeps the objects' methods serialized.
#[test]
fn random_schedules_of_shared_objects_all_end() {
    for seed in 0..50 {
        let (t, r) = run_with_seed("mixed", Some(seed));
        match r {
            Ok(v) => assert_eq!(runtime::pyrepr::to_str(&v), "done"),
            Err(e) => assert_eq!(e.kind(), "DeadlockError", "seed {seed}: {e:?}"),
        }
        assert_serialized(&t);
    }
}

/// Assignments inside any block, `Parallel` branches included, land in the
/// method's variables, and a branch reads what another assigned before it
/// (murano/dsl/lhs_expression.py `set_data` walks up to the method's
/// variable scope; murano/tests/unit/dsl/test_macros.py,
/// `test_scope_within_macro`).
#[test]
fn parallel_branches_share_the_method_variables() {
    let src = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - $x: 1\n      - Parallel:\n          - $x: $x * 10\n          - Do:\n              - sleep(1)\n              - $x: $x + 2\n              - $y: $x\n      - Return: [$x, $y]\n";
    let (_, r) = run(src, "test");
    assert_eq!(runtime::pyrepr::to_str(&r.unwrap()), "(12, 12)");
}

/// A value nested 10^5 levels deep built, held and dropped inside
/// `Parallel` and `pselect` branches: green threads have stacks for what
/// the main thread can do (issue 13; this segfaulted with 4 MB stacks).
#[test]
fn deep_values_in_green_threads_do_not_overflow_their_stacks() {
    let src = r#"
Name: Test
Methods:
  t:
    Scope: Public
    Body:
      - Parallel:
          - $x: range(100000).aggregate(list($1), list())
          - $y: range(10).aggregate(list($1), list())
      - Return: list(1, 2).pselect(range(100000).aggregate(list($1), list()).len())
"#;
    // The caller's thread gets the deep `$x` back, and drops it: it runs
    // on a stack as large as the CLI's main thread's.
    let r = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(src, "t").1.map(|v| runtime::json::to_tagged_string(&v)))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(r.unwrap(), "[1, 1]");
}

/// Several `Parallel`/`pselect` branches failing at once: the caller sees
/// the first in branch order (murano's `helpers.parallel_select`
/// reraises it), and the others are logged, not dropped (issue 13).
#[test]
fn parallel_branches_failing_together_lose_no_error() {
    let src = r#"
Name: Test
Methods:
  t:
    Scope: Public
    Body:
      - Parallel:
          - Throw: firstError
            Message: one
          - Throw: secondError
            Message: two
  u:
    Scope: Public
    Body:
      - Return: list(1, 2, 3).pselect(int('x' + str($)))
"#;
    let (ex, r) = run(src, "t");
    assert_eq!(r.unwrap_err().message(), "one");
    let log = ex.take_log().join("\n");
    assert!(
        log.contains("Parallel branch 1 also failed") && log.contains("two"),
        "{log}"
    );
    let (ex, r) = run(src, "u");
    assert!(r.unwrap_err().message().contains("x1"));
    let log = ex.take_log().join("\n");
    assert!(
        log.contains("pselect branch 1 also failed") && log.contains("pselect branch 2"),
        "{log}"
    );
}
