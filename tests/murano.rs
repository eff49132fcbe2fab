//! MuranoPL workflows, green threads and error positions, through the
//! engine's Rust API.

use std::sync::Arc;

use muranopl::{json, Value};
use stdlib::murano::{model, Executor, Package};

fn run(classes: &str, method: &str) -> (Arc<Executor>, Result<Value, runtime::Error>) {
    let pkg = Package::new(
        "tests",
        "0.0.0",
        "1.4",
        &[("Test.yaml".to_string(), classes.to_string())],
    )
    .expect("classes parse");
    let ex = Executor::new(vec![pkg]);
    let m = json::from_tagged_str(r#"{"Objects": {"?": {"id": "root", "type": "Test"}}}"#).unwrap();
    let root = model::load_model(&ex, &m).unwrap().unwrap();
    let r = ex
        .call(&Value::Object(root), method, vec![], vec![], true)
        .map(|v| v.unwrap_or(Value::Null));
    (ex, r)
}

fn traces(ex: &Executor) -> Vec<String> {
    ex.take_traces()
        .iter()
        .map(runtime::pyrepr::to_str)
        .collect()
}

const PARALLEL: &str = r#"
Name: Test
Methods:
  branch:
    Usage: Static
    Arguments:
      - n:
          Contract: $.int()
    Body:
      - Try:
          - trace(format('enter {0}', $n))
          - sleep(0)
          - If: $n = 2
            Then:
              - Throw: branchFailed
                Message: format('branch {0} failed', $n)
          - trace(format('exit {0}', $n))
        Finally:
          - trace(format('finally {0}', $n))
  test:
    Scope: Public
    Body:
      - Try:
          - Parallel:
              - :Test.branch(1)
              - :Test.branch(2)
              - :Test.branch(3)
            Limit: 2
          - trace('not reached')
        Catch:
          - With: branchFailed
            As: e
            Do:
              - trace(format('caught {0}', $e.message))
        Finally:
          - trace('outer finally')
      - Return: done
"#;

#[test]
fn parallel_with_limit_runs_every_branch_and_rethrows_after_all_finish() {
    let (ex, r) = run(PARALLEL, "test");
    assert_eq!(r.unwrap(), Value::str("done"));
    assert_eq!(
        traces(&ex),
        vec![
            "enter 1",
            "enter 2",
            "exit 1",
            "finally 1",
            "finally 2",
            "enter 3",
            "exit 3",
            "finally 3",
            "caught branch 2 failed",
            "outer finally",
        ]
    );
}

#[test]
fn break_outside_a_loop_is_an_invalid_operation() {
    let src = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - trace(a)\n      - Break:\n";
    let (ex, r) = run(src, "test");
    assert_eq!(r.unwrap_err().kind(), "DslInvalidOperationError");
    assert_eq!(traces(&ex), vec!["a"]);
}

#[test]
fn private_methods_are_not_exposed() {
    let src = "Name: Test\nMethods:\n  hidden:\n    Body:\n      - Return: 1\n";
    let (_, r) = run(src, "hidden");
    assert_eq!(r.unwrap_err().kind(), "MethodNotExposed");
}

fn load_error(src: &str) -> runtime::Error {
    let pkg = Package::new("tests", "0.0.0", "1.4", &[("Bad.yaml".into(), src.into())]);
    match pkg {
        Err(e) => e,
        Ok(p) => {
            let ex = Executor::new(vec![p]);
            match ex.class("Bad") {
                Err(e) => e,
                Ok(_) => panic!("expected an error for {src:?}"),
            }
        }
    }
}

#[test]
fn malformed_class_files_give_positions() {
    for (src, kind, pos) in [
        ("Name: Bad\nProperties:\n  p: [unclosed\n", "", "Bad.yaml:"),
        ("Name: Bad\nFoo: 1\n", "DslSyntaxError", "Bad.yaml:2:1"),
        (
            "Name: Bad\nProperties:\n  p:\n    Contract: !yaql $.int(\n",
            "",
            "Bad.yaml:4:",
        ),
        (
            "Name: Bad\nMethods:\n  m:\n    Body:\n      - If: true\n        Oops: 1\n",
            "DslSyntaxError",
            "Bad.yaml:6:9",
        ),
    ] {
        let e = load_error(src);
        if !kind.is_empty() {
            assert_eq!(e.kind(), kind, "{src:?}: {e}");
        }
        assert!(
            e.message().contains(pos),
            "{src:?}: {} lacks {pos}",
            e.message()
        );
    }
}
