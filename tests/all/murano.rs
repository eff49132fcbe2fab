//! MuranoPL workflows, green threads and error positions, through the
//! engine's Rust API.

use std::sync::Arc;

use engine::{model, Executor, Package};
use muranopl::{json, Value};

/// Runs `method` of the root object (class `Test` of `classes`).
pub(crate) fn run(classes: &str, method: &str) -> (Arc<Executor>, Result<Value, runtime::Error>) {
    run_seeded(classes, method, None)
}

/// [`run`] with the green-thread schedule drawn from `seed`.
pub(crate) fn run_seeded(
    classes: &str,
    method: &str,
    seed: Option<u64>,
) -> (Arc<Executor>, Result<Value, runtime::Error>) {
    let pkg = Package::new(
        "tests",
        "0.0.0",
        "1.4",
        &[("Test.yaml".to_string(), classes.to_string())],
    )
    .expect("classes parse");
    let ex = Executor::new(vec![pkg]);
    ex.set_schedule_seed(seed);
    let m = json::from_tagged_str(r#"{"Objects": {"?": {"id": "root", "type": "Test"}}}"#).unwrap();
    let root = model::load_model(&ex, &m).unwrap().unwrap();
    let r = ex
        .call(&Value::Object(root), method, vec![], vec![], true)
        .map(|v| v.unwrap_or(Value::Null));
    (ex, r)
}

pub(crate) fn traces(ex: &Executor) -> Vec<String> {
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
        (
            "Name: Bad\nUsage: Weird\n",
            // murano/dsl/murano_type.py `create`
            "ValueError",
            "Bad.yaml:2:8",
        ),
        (
            "Name: Bad\nProperties:\n  p:\n    Contract: !yaql $.int(\n",
            "",
            "Bad.yaml:4:",
        ),
        (
            "Name: Bad\nMethods:\n  m:\n    Body:\n      - If: true\n        Oops: 1\n",
            "SyntaxError",
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

/// The statement bytecode of a method with Try/Catch/Else/Finally, a loop
/// with Break and Continue, and a Return inside Try, with its handler table
/// (`tests/golden/murano_try.golden`; regenerate with `YAQL_BLESS=1`).
#[test]
fn golden_try_catch_finally_bytecode() {
    let src = r#"
Name: Test
Methods:
  m:
    Body:
      - For: i
        In: [1, 2, 3]
        Do:
          - Try:
              - If: $i = 2
                Then:
                  - Continue:
              - trace($i)
              - If: $i = 3
                Then:
                  - Return: $i
            Catch:
              - With: keyError
                As: e
                Do:
                  - trace($e.message)
                  - Rethrow:
              - Do:
                  - Break:
            Else:
              - trace(ok)
            Finally:
              - trace(finally)
      - Throw: notReached
        Message: unreachable
"#;
    let pkg = Package::new("tests", "0.0.0", "1.4", &[("Test.yaml".into(), src.into())]).unwrap();
    let ex = Executor::new(vec![pkg]);
    let class = ex.class("Test").unwrap();
    let text = format!(
        "# @generated by tests/murano.rs; regenerate with YAQL_BLESS=1 cargo test --test murano\n{}",
        class.methods["m"].body.disas()
    );
    let gold =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/murano_try.golden");
    if std::env::var_os("YAQL_BLESS").is_some() {
        std::fs::write(&gold, &text).unwrap();
    }
    let want = std::fs::read_to_string(&gold).unwrap_or_default();
    assert_eq!(
        text, want,
        "golden mismatch; regenerate with YAQL_BLESS=1 and review"
    );
    assert!(text.contains("Handlers:"));
}

#[test]
fn finally_runs_on_return_break_continue_and_errors() {
    let src = r#"
Name: Test
Methods:
  test:
    Scope: Public
    Body:
      - For: i
        In: [1, 2, 3, 4]
        Do:
          - Try:
              - If: $i = 1
                Then:
                  - Continue:
              - If: $i = 2
                Then:
                  - Throw: boom
              - If: $i = 3
                Then:
                  - Break:
            Catch:
              - With: boom
                Do:
                  - trace(caught)
            Finally:
              - trace(format('finally {0}', $i))
      - Try:
          - Return: result
        Finally:
          - trace('finally return')
"#;
    let (ex, r) = run(src, "test");
    assert_eq!(r.unwrap(), Value::str("result"));
    assert_eq!(
        traces(&ex),
        vec![
            "finally 1",
            "caught",
            "finally 2",
            "finally 3",
            "finally return"
        ]
    );
}

#[test]
fn errors_carry_a_murano_stack_trace() {
    let src = "Name: Test\nMethods:\n  inner:\n    Body:\n      - Return: 1 / 0\n  test:\n    Scope: Public\n    Body:\n      - trace(a)\n      - $.inner()\n";
    let (_, r) = run(src, "test");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "ZeroDivisionError");
    let t = e.trace().join(" | ");
    assert!(
        t.contains("Test.yaml:5:9") && t.contains("Test::inner"),
        "{t}"
    );
    assert!(
        t.contains("Test.yaml:10:9") && t.contains("Test::test"),
        "{t}"
    );
}

#[test]
fn logger_formats_messages_and_config_is_reserved_to_the_core_library() {
    let src = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - $log: logger(app)\n      - $log.info('x {0} {y}', 1, y => 2)\n      - $log.warning('bad {0}')\n      - Return: config(setting)\n";
    let (ex, r) = run(src, "test");
    assert_eq!(r.unwrap_err().kind(), "NoFunctionRegisteredException");
    let log = ex.take_log();
    assert_eq!(log[0], "INFO app: x 1 2");
    assert_eq!(log[1], "WARNING app: bad {0}");
}

/// The Logger's own parameters are positional-only, as murano's
/// `io.murano.system.Logger` declares them (`__message`, `__exc`,
/// murano/engine/system/logger.py): `message =>`, `exc =>`, `args =>`
/// reach the format string (issue 12 item 6).
#[test]
fn logger_keywords_named_like_its_parameters_reach_the_format() {
    let src = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - $log: logger(app)\n      - $log.info('{message}', message => hi)\n      - $log.debug('{args}/{kwargs}', args => 1, kwargs => 2)\n      - $log.error('{exc} {0}', 7, exc => e)\n";
    let (ex, r) = run(src, "test");
    r.unwrap();
    let log = ex.take_log();
    assert_eq!(log, ["INFO app: hi", "DEBUG app: 1/2", "ERROR app: e 7"]);
}

fn versioned(name: &str, version: &str, requires: &[(&str, &str)], src: &str) -> Package {
    let mut p = Package::new(
        name,
        version,
        "1.4",
        &[(format!("{name}/{version}/Classes.yaml"), src.to_string())],
    )
    .expect("classes parse");
    p.requires = requires
        .iter()
        .map(|(n, s)| {
            let spec = package::VersionSpec::parse(Some(s)).unwrap();
            (n.to_string(), spec)
        })
        .collect();
    p
}

/// Two versions of a library loaded side by side: each application sees
/// the version its `Require` names (in `Extends`, `new()` and type
/// literals), and an object model picks one with `classVersion` or a
/// `Name/version@package` type string.
#[test]
fn side_by_side_versions_resolve_per_requirement_and_model() {
    let lib = |v: &str| {
        format!(
            "Namespaces: {{=: ex.lib}}\nName: Greeter\nProperties:\n  label:\n    Contract: $.string()\n    Usage: Static\n    Default: 'static {v}'\nMethods:\n  greet:\n    Body:\n      - Return: 'v{v}'\n  label:\n    Body:\n      - Return: $.label\n"
        )
    };
    let app = |name: &str| {
        format!(
            "Namespaces: {{=: ex.{name}, lib: ex.lib}}\nName: App\nExtends: lib:Greeter\nMethods:\n  viaNew:\n    Body:\n      - Return: new(lib:Greeter).greet()\n  viaType:\n    Body:\n      - Return: type(new(lib:Greeter)) = lib:Greeter\n"
        )
    };
    let ex = Executor::new(vec![
        versioned("ex.old", "1.0.0", &[("ex.lib", "1")], &app("old")),
        versioned("ex.new", "1.0.0", &[("ex.lib", "2")], &app("new")),
        versioned("ex.lib", "2.1.0", &[], &lib("2.1.0")),
        versioned("ex.lib", "1.4.0", &[], &lib("1.4.0")),
    ]);
    let call = |model: &str, method: &str| {
        let m = json::from_tagged_str(model).unwrap();
        let root = model::load_model(&ex, &m).unwrap().unwrap();
        let v = ex
            .call(&Value::Object(root), method, vec![], vec![], false)
            .unwrap()
            .unwrap_or(Value::Null);
        runtime::pyrepr::to_str(&v)
    };
    let obj = |ty: &str, extra: &str| {
        format!(r#"{{"Objects": {{"?": {{"id": "x", "type": "{ty}"{extra}}}}}}}"#)
    };
    // Inherited through Extends: each app's parent is its own version.
    assert_eq!(call(&obj("ex.old.App", ""), "greet"), "v1.4.0");
    assert_eq!(call(&obj("ex.new.App", ""), "greet"), "v2.1.0");
    // new() and type literals in each app's code.
    assert_eq!(call(&obj("ex.old.App", ""), "viaNew"), "v1.4.0");
    assert_eq!(call(&obj("ex.new.App", ""), "viaNew"), "v2.1.0");
    assert_eq!(call(&obj("ex.old.App", ""), "viaType"), "true");
    // The model: a plain name is the first version loaded; classVersion,
    // a type string or ?.package pick another.
    assert_eq!(call(&obj("ex.lib.Greeter", ""), "greet"), "v2.1.0");
    assert_eq!(
        call(&obj("ex.lib.Greeter", r#", "classVersion": "1""#), "greet"),
        "v1.4.0"
    );
    assert_eq!(
        call(&obj("ex.lib.Greeter/1.4.0@ex.lib", ""), "greet"),
        "v1.4.0"
    );
    assert_eq!(call(&obj("ex.lib.Greeter/2@ex.lib", ""), "greet"), "v2.1.0");
    // Each version has its own static properties, initialised from its own
    // default.
    assert_eq!(
        call(&obj("ex.lib.Greeter/1.4.0@ex.lib", ""), "label"),
        "static 1.4.0"
    );
    assert_eq!(call(&obj("ex.lib.Greeter", ""), "label"), "static 2.1.0");
    // Both versions are the same class by name.
    let old = ex.class("ex.lib.Greeter/1.4.0@ex.lib").unwrap();
    assert_eq!(&*old.name, "ex.lib.Greeter");
    assert_eq!(&*old.key, "ex.lib.Greeter/1.4.0@ex.lib");
    assert!(old.is_a("ex.lib.Greeter"));
}

/// Unknown keys in a declaration are ignored, as murano ignores them, and
/// reported as warnings with their positions.
#[test]
fn unknown_declaration_keys_are_warnings() {
    let src = "Name: W\nProperties:\n  p: {Contract: $, Type: Runtime}\nMethods:\n  m:\n    Arguments:\n      - a: {Contract: $, Defualt: 1}\n    Body:\n      - Return: $a\n";
    let decls = compiler::murano::load_classes(src, "W.yaml", Default::default()).unwrap();
    let w = &decls[0].warnings;
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("W.yaml:3:20: unknown key \"Type\" in declaration of property p"),
        "{}",
        w[0]
    );
    assert!(
        w[1].starts_with(
            "W.yaml:7:26: unknown key \"Defualt\" in declaration of argument a of method m"
        ),
        "{}",
        w[1]
    );
    // The class still loads and compiles.
    let pkg = Package::new("w", "0.0.0", "1.4", &[("W.yaml".into(), src.into())]).unwrap();
    let ex = Executor::new(vec![pkg]);
    assert_eq!(ex.class("W").unwrap().props.len(), 1);
}

/// List contracts read as murano's `Contract._map_list`
/// (murano/dsl/contracts/contracts.py): the items before the trailing
/// length bounds are item contracts by position, the last applying to
/// every item after it; a short list is "must not be less than", a list
/// outside both bounds "is not within [min..max] range".
const LISTS: &str = r#"
Name: Test
Methods:
  pair:
    Arguments:
      - v:
          Contract: [$.int(), $.string()]
    Body:
      - Return: $v
  bounded:
    Arguments:
      - v:
          Contract: [$.int(), 2, 3]
    Body:
      - Return: $v
  atLeast:
    Arguments:
      - v:
          Contract: [$.string(), 2]
    Body:
      - Return: $v
  test:
    Scope: Public
    Body:
      - $a: $this.pair(list('1', 2, 3))
      - $b: $this.bounded(list('4', 5))
      - Return: list($a, $b)
  tooShort:
    Scope: Public
    Body:
      - Return: $this.atLeast(list(a))
  tooLong:
    Scope: Public
    Body:
      - Return: $this.bounded(list(1, 2, 3, 4))
  badSecond:
    Scope: Public
    Body:
      - Return: $this.pair(list(1, [2]))
"#;

/// Each method of `classes` fails with a contract violation whose message
/// contains the text given.
fn assert_violations(classes: &str, cases: &[(&str, &str)]) {
    for (method, msg) in cases {
        let (_, r) = run(classes, method);
        let e = r.unwrap_err();
        assert_eq!(e.kind(), "ContractViolationException", "{method}");
        assert!(e.message().contains(msg), "{method}: {}", e.message());
    }
}

#[test]
fn list_contracts_check_items_by_position() {
    let (_, r) = run(LISTS, "test");
    let v = r.unwrap();
    // Lists come back as tuples, as `_map_list` returns them.
    assert_eq!(runtime::pyrepr::to_str(&v), "((1, '2', '3'), (4, 5))");
    assert_violations(
        LISTS,
        &[
            ("tooShort", "Array length 1 must not be less than 2"),
            ("tooLong", "Array length 4 is not within [2..3] range"),
            ("badSecond", "[1]: Value (2,) violates string() contract"),
        ],
    );
}

/// A statement must be a YAQL expression, an assignment or a block
/// construct: murano's `parse_expression` (murano/dsl/expressions.py)
/// raises `SyntaxError` "Syntax is incorrect in expression" for anything
/// else, when the class is loaded (issue 12 item 2).
#[test]
fn statements_that_are_no_statement_are_syntax_errors() {
    for (body, line) in [
        ("      - Retrun: 1\n", 6),
        ("      - hello world\n", 6),
        ("      - If: true\n        Then: Break\n", 7),
        ("      - 42\n", 6),
    ] {
        let src = format!("Name: Bad\nMethods:\n  m:\n    Body:\n      - $x: 1\n{body}");
        let e = load_error(&src);
        assert_eq!(e.kind(), "SyntaxError", "{body}");
        assert!(
            e.message().contains("Syntax is incorrect in expression"),
            "{body}: {}",
            e.message()
        );
        let at = e.location().map(|l| l.line);
        assert_eq!(at, Some(line), "{body}: {e:?}");
    }
}

/// The contract functions as murano's (murano/dsl/contracts/basic.py,
/// check.py): `check()` asks its predicate about null too, `bool()` is
/// Python's truth (`'false'` is true), `string()` gives an object's id and
/// refuses a float (issue 12 item 4).
const COERCIONS: &str = r#"
Name: Test
Methods:
  positive:
    Arguments:
      - v:
          Contract: $.int().check($ > 0)
    Body:
      - Return: $v
  positives:
    Arguments:
      - v:
          Contract: [$.int().check($ > 0)]
    Body:
      - Return: $v
  flag:
    Arguments:
      - v:
          Contract: $.bool()
    Body:
      - Return: $v
  text:
    Arguments:
      - v:
          Contract: $.string()
    Body:
      - Return: $v
  nullCheck:
    Scope: Public
    Body:
      - Return: $this.positive(null)
  nullItem:
    Scope: Public
    Body:
      - Return: $this.positives(list(1, null))
  coerced:
    Scope: Public
    Body:
      - Return: list($this.flag('false'), $this.flag(''), $this.text($this), $this.text(true))
  floatText:
    Scope: Public
    Body:
      - Return: $this.text(1.5)
"#;

#[test]
fn contract_functions_coerce_as_the_reference_does() {
    let (_, r) = run(COERCIONS, "coerced");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "(True, False, 'root', 'True')"
    );
    assert_violations(
        COERCIONS,
        &[
            ("nullCheck", "Value None doesn't match predicate"),
            ("nullItem", "[1]: Value None doesn't match predicate"),
            ("floatText", "Value 1.5 violates string() contract"),
        ],
    );
}

/// A diamond: `Test` extends `Left` and `Right`, both extend `Base`.
const DIAMOND: &str = r#"
Name: Base
Methods:
  who:
    Body:
      - trace('Base::who')
      - Return: base
---
Name: Left
Extends: Base
---
Name: Right
Extends: Base
Methods:
  who:
    Body:
      - trace('Right::who')
      - Return: right
---
Name: Test
Extends: [Left, Right]
Methods:
  superAll:
    Scope: Public
    Body:
      - Return: super($, $.who())
  psuperAll:
    Scope: Public
    Body:
      - Return: psuper($, $.who())
  views:
    Scope: Public
    Body:
      - Return: super($).select($.who())
  casts:
    Scope: Public
    Body:
      - Return: list(cast($, Left).who(), cast($, Base).who(), $.who())
  badCast:
    Scope: Public
    Body:
      - Return: cast($, Other)
---
Name: Other
"#;

/// `super` and `psuper` evaluate their expression with `$` as the object
/// viewed as every parent in declaration order, and `super($)` gives the
/// views themselves, as murano's `super_` and `psuper`
/// (murano/dsl/yaql_functions.py) map over `cast_type.parents(...)`. A
/// view dispatches along its own class's MRO: `Left` has no `who`, so
/// `Base`'s runs (murano/tests/unit/dsl/test_multiple_inheritance.py,
/// `test_super`). `cast` picks the one ancestor of that name
/// (murano/dsl/helpers.py `cast`), else `NoClassFound`.
#[test]
fn super_and_cast_walk_every_parent_of_a_diamond() {
    let answer = |method: &str| {
        let (ex, r) = run(DIAMOND, method);
        (runtime::pyrepr::to_str(&r.unwrap()), traces(&ex))
    };
    let (v, t) = answer("superAll");
    assert_eq!(v, "('base', 'right')");
    assert_eq!(t, ["Base::who", "Right::who"]);
    let (v, t) = answer("psuperAll");
    assert_eq!(v, "('base', 'right')");
    assert_eq!(t.len(), 2);
    assert_eq!(answer("views").0, "('base', 'right')");
    let (v, t) = answer("casts");
    assert_eq!(v, "('base', 'base', 'right')");
    assert_eq!(t, ["Base::who", "Base::who", "Right::who"]);
    let (_, r) = run(DIAMOND, "badCast");
    assert_eq!(r.unwrap_err().kind(), "NoClassFound");
}

const EXTENSIONS: &str = r#"
Name: Test
Methods:
  double:
    Usage: Extension
    Arguments:
      - n:
          Contract: $.int().notNull()
    Body:
      - Return: $n * 2
  describe:
    Usage: Extension
    Arguments:
      - obj:
          Contract: $.class(Test).notNull()
      - suffix:
          Contract: $.string()
    Body:
      - Return: id($obj) + $suffix
  onInstance:
    Scope: Public
    Body:
      - Return: list($this.describe('!'), :Test.describe($this, '?'), 21.double())
  refused:
    Scope: Public
    Body:
      - Return: $this.double()
"#;

/// An extension method called on an object, even one of its own class,
/// takes the object as its first argument, and an object its first
/// contract refuses matches no method (murano's
/// `_build_mpl_stub_function_definitions` gives extension methods an
/// extension stub and a static stub only: murano/dsl/yaql_integration.py).
#[test]
fn extension_methods_on_an_instance_take_it_as_first_argument() {
    let (_, r) = run(EXTENSIONS, "onInstance");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "('root!', 'root?', 42)"
    );
    let (_, r) = run(EXTENSIONS, "refused");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "NoMatchingMethodException");
    assert!(
        e.message().contains("No method \"double\""),
        "{}",
        e.message()
    );
}

const STACK: &str = r#"
Name: Test
Methods:
  fail:
    Body:
      - $x: 1
      - Throw: oops
        Message: failed here
  test:
    Scope: Public
    Body:
      - $log: logger(app)
      - Try:
          - $this.fail()
        Catch:
          - As: e
            Do:
              - $log.exception($e, 'caught {0}', $e.message)
              - Return: $e.stackTrace.frames.select(
                  [$.typeName, $.methodName, $.location.line, $.instruction])
"#;

/// A caught exception's `stackTrace` is an `io.murano.StackTrace` whose
/// frames run from the outermost method to the statement that threw
/// (murano/dsl/principal_objects/stack_trace.py, `compose_stack_frame`);
/// `$log.exception` writes the message, then the trace as
/// `StackTrace.toString()` formats it (murano/engine/system/logger.py).
#[test]
fn caught_exceptions_carry_a_stack_trace_the_logger_writes() {
    let (ex, r) = run(STACK, "test");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "(('Test', 'test', 14, '$this.fail()'), ('Test', 'fail', 7, 'block construct'))"
    );
    let log = ex.take_log();
    assert_eq!(
        log,
        ["ERROR app: caught failed here\n\
          File \"Test.yaml\", line 14:13 in method test of type Test\n    $this.fail()\n\
          File \"Test.yaml\", line 7:9 in method fail of type Test\n    block construct"]
    );
}

const PRIVATE: &str = r#"
Name: Test
Methods:
  ownUnset:
    Scope: Public
    Body:
      - Return: $.nope
  nestedAssign:
    Scope: Public
    Body:
      - $.fresh.bar: 1
      - Return: $.fresh
  otherClass:
    Scope: Public
    Body:
      - $o: new(Other)
      - $o.setSecret()
      - Return: $o.secret
---
Name: Other
Methods:
  setSecret:
    Body:
      - $.secret: 42
"#;

/// Undeclared ("private") properties as murano's
/// `MuranoObject.get_property` (murano/dsl/murano_object.py) reads them:
/// code of the object's class finds an unset one uninitialized (and an
/// assignment into it starts from null), other code cannot read it.
#[test]
fn private_properties_are_uninitialized_inside_and_unreadable_outside() {
    let (_, r) = run(PRIVATE, "ownUnset");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "UninitializedPropertyAccessError");
    assert_eq!(
        e.message(),
        "Access to uninitialized property \"nope\" in class \"Test\" is forbidden"
    );
    let (_, r) = run(PRIVATE, "nestedAssign");
    assert_eq!(runtime::pyrepr::to_str(&r.unwrap()), "{'bar': 1}");
    let (_, r) = run(PRIVATE, "otherClass");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "PropertyReadError");
    assert_eq!(
        e.message(),
        "Property \"secret\" in class \"Other\" cannot be read"
    );
}

const NEW_FROM_DICT: &str = r#"
Name: Test
Methods:
  make:
    Scope: Public
    Body:
      - $d: {a: s, b: 1, 2: dropped}
      - $o: new(Part, $d, owner => $this, objectName => nm)
      - Return: list($o.a, $o.b, name($o), $o.find(Test) = $this)
  withKeywords:
    Scope: Public
    Body:
      - Return: new(Part, {a => s}, b => 3)
---
Name: Part
Properties:
  a:
    Contract: $.string()
  b:
    Contract: $.int()
"#;

/// `new(type, dict, owner, objectName)`: murano's `new_from_dict`
/// (murano/dsl/yaql_functions.py) takes the properties as a dict; the
/// plain `new` cannot take a dict as its owner, so a dict plus keyword
/// properties matches no overload.
#[test]
fn new_takes_properties_from_a_dict() {
    let (_, r) = run(NEW_FROM_DICT, "make");
    assert_eq!(runtime::pyrepr::to_str(&r.unwrap()), "('s', 1, 'nm', True)");
    let (_, r) = run(NEW_FROM_DICT, "withKeywords");
    assert_eq!(r.unwrap_err().kind(), "NoMatchingFunctionException");
}

/// `io.murano.extensions.<name>` finds `<name>` in a package the caller
/// requires (murano's `MuranoPackage.find_class` keeps the old plugin
/// prefix working), not in the caller's own package
/// (murano/tests/unit/dsl/test_find_class.py).
#[test]
fn the_old_plugin_prefix_finds_classes_of_required_packages() {
    let src = "Name: Test\nMethods:\n  core:\n    Scope: Public\n    Body:\n      - $o: new('io.murano.extensions.io.murano.Object')\n      - Return: [$o is 'io.murano.extensions.io.murano.Object', typeinfo($o).name]\n  own:\n    Scope: Public\n    Body:\n      - Return: new('io.murano.extensions.Test')\n";
    let (_, r) = run(src, "core");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "(True, 'io.murano.Object')"
    );
    let (_, r) = run(src, "own");
    assert_eq!(r.unwrap_err().kind(), "NoClassFound");
}

const DICT_CONTRACTS: &str = r#"
Name: Test
Methods:
  twoKeys:
    Arguments:
      - d:
          Contract:
            $.int(): $.string()
            $.string(): $.int()
    Body:
      - Return: $d
  keyed:
    Arguments:
      - d:
          Contract:
            a: $.int()
            $.string(): $.string()
    Body:
      - Return: $d
  emptyArg:
    Scope: Public
    Body:
      - Return: $this.twoKeys({})
  notADict:
    Scope: Public
    Body:
      - Return: $this.twoKeys([1])
  mixed:
    Scope: Public
    Body:
      - Return: $this.keyed({a => '1', b => 2})
"#;

/// Dictionary contracts as murano's `Contract._map_dict`
/// (murano/dsl/contracts/contracts.py): null is an empty dict, a value of
/// another type violates it, constant keys map first and the expression
/// key maps the other keys; a second expression key is a
/// `DslContractSyntaxError` whatever the value
/// (murano/tests/unit/dsl/test_contracts.py, `test_invalid_dict_expr_contract`).
#[test]
fn dictionary_contracts_allow_one_expression_key() {
    let (_, r) = run(DICT_CONTRACTS, "emptyArg");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "DslContractSyntaxError");
    assert!(e
        .message()
        .contains("cannot have more than one expression key"));
    assert_violations(
        DICT_CONTRACTS,
        &[("notADict", "Value (1,) is not of a dictionary type")],
    );
    let (_, r) = run(DICT_CONTRACTS, "mixed");
    assert_eq!(runtime::pyrepr::to_str(&r.unwrap()), "{'a': 1, 'b': '2'}");
}

const TEMPLATES: &str = r#"
Name: Test
Methods:
  take:
    Arguments:
      - x:
          Contract: $.template(Base)
    Body:
      - Return: $x.delete('?')
  typeOf:
    Arguments:
      - x:
          Contract: $.template(Base)
    Body:
      - Return: $x['?'].type
  coerced:
    Scope: Public
    Body:
      - Return: $this.take({a => 1, b => '7', zzz => 1})
  defaults:
    Scope: Public
    Body:
      - Return: $this.take({a => q})
  shortSyntax:
    Scope: Public
    Body:
      - Return: $this.typeOf({':Derived' => {a => q}})
  wrongType:
    Scope: Public
    Body:
      - Return: $this.take({'?' => {type => Other}, a => q})
  notADefinition:
    Scope: Public
    Body:
      - Return: $this.take(5)
---
Name: Base
Properties:
  a:
    Contract: $.string()
  b:
    Contract: $.int()
    Default: 5
  hidden:
    Contract: $
    Usage: Runtime
---
Name: Derived
Extends: Base
---
Name: Other
Properties:
  a:
    Contract: $.string()
"#;

/// `template()` as murano's `Template` contract
/// (murano/dsl/contracts/instances.py): the definition is loaded as an
/// object of the type or a subclass (`?` header, `:Type` short syntax),
/// its properties coerced and defaulted, undeclared and `Runtime` ones
/// dropped; another type or a non-definition violates it
/// (murano/tests/unit/dsl/test_contracts.py,
/// `test_template_contract_fail_on_type`).
#[test]
fn template_contracts_load_the_definition_as_its_type() {
    let answer = |m: &str| runtime::pyrepr::to_str(&run(TEMPLATES, m).1.unwrap());
    assert_eq!(answer("coerced"), "{'a': '1', 'b': 7}");
    assert_eq!(answer("defaults"), "{'a': 'q', 'b': 5}");
    assert_eq!(answer("shortSyntax"), "Derived/0.0.0@tests");
    assert_violations(
        TEMPLATES,
        &[
            (
                "wrongType",
                "Object of type Other is not compatible with requested type Base",
            ),
            (
                "notADefinition",
                "Value 5 cannot be represented as class Base",
            ),
        ],
    );
}

const ASSIGNMENTS: &str = r#"
Name: Test
Methods:
  lists:
    Scope: Public
    Body:
      - $a: [1]
      - $a[5]: 2
      - $b: [1, 2, 3]
      - $b[-1]: 9
      - $s: abc
      - $s[0]: x
      - $d: {}
      - $d.x.y: 1
      - Return: [$a, $b, $s, $d]
  undefined:
    Scope: Public
    Body:
      - $zz.a: 1
  dollar:
    Scope: Public
    Body:
      - $this: 5
  branchLoop:
    Scope: Public
    Body:
      - Parallel:
          - For: t
            In: [1, 2]
            Do: []
      - Return: $t
"#;

/// Destinations as murano's `LhsExpression` (murano/dsl/lhs_expression.py)
/// writes them: a list index splices like `src[:i] + (v,) + src[i+1:]`
/// (past the end appends), an index into a string changes nothing, a
/// missing dict key reads as `{}`, attribution into null and assigning `$`
/// or `$this` are `ValueError`s; a `For` variable set in a `Parallel`
/// branch stays the branch's (murano/dsl/macros.py sets it in the block's
/// context).
#[test]
fn destinations_are_written_as_murano_writes_them() {
    let (_, r) = run(ASSIGNMENTS, "lists");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "((1, 2), (1, 2, 9, 1, 2, 3), 'abc', {'x': {'y': 1}})"
    );
    for m in ["undefined", "dollar"] {
        let (_, r) = run(ASSIGNMENTS, m);
        assert_eq!(r.unwrap_err().kind(), "ValueError", "{m}");
    }
    let (_, r) = run(ASSIGNMENTS, "branchLoop");
    assert_eq!(r.unwrap(), Value::Null);
}

const SMALL_FUNCS: &str = r#"
Name: Test
Methods:
  nulls:
    Scope: Public
    Body:
      - Return: list(type(null), typeinfo(null), name(null), isObject($), isObject(type($)), isObject(1))
  isOnString:
    Scope: Public
    Body:
      - Return: ('abc') is Test
  castVersion:
    Scope: Public
    Body:
      - Return: cast($, Test, '2.0.0')
  caughtName:
    Scope: Public
    Body:
      - Try:
          - Throw: [first, second]
        Catch:
          - With: second
            As: e
            Do:
              - Return: $e.name
"#;

/// Engine functions as murano/dsl/yaql_functions.py declares them:
/// `type`, `typeinfo` and `name` take null, `isObject` is true for objects
/// and types, `is` takes only objects (or null), `cast` honours its
/// version spec (helpers.cast); a `Catch` names the exception by the first
/// of its names the clause catches.
#[test]
fn engine_functions_follow_their_reference_signatures() {
    let answer = |m: &str| run(SMALL_FUNCS, m).1;
    assert_eq!(
        runtime::pyrepr::to_str(&answer("nulls").unwrap()),
        "(None, None, None, True, True, False)"
    );
    assert_eq!(
        answer("isOnString").unwrap_err().kind(),
        "NoMatchingFunctionException"
    );
    assert_eq!(answer("castVersion").unwrap_err().kind(), "NoClassFound");
    assert_eq!(
        runtime::pyrepr::to_str(&answer("caughtName").unwrap()),
        "second"
    );
}

const STATICS_AND_FALLBACK: &str = r#"
Name: Test
Import: Ext
Properties:
  sp:
    Contract: $.int()
    Usage: Static
Methods:
  setByType:
    Scope: Public
    Body:
      - :Test.sp: '7'
      - Return: :Test.sp
  badByType:
    Scope: Public
    Body:
      - :Test.sp: abc
  fallback:
    Scope: Public
    Body:
      - Return: list(abc.toUpper(), 3.toUpper())
---
Name: Ext
Methods:
  toUpper:
    Usage: Extension
    Arguments:
      - n:
          Contract: $.int().notNull()
    Body:
      - Return: $n * 10
"#;

/// A static property assigned through its type is checked and coerced by
/// its contract (murano's `set_static_property` transforms the value); an
/// imported extension method whose first contract refuses the receiver
/// leaves the call to yaql's method of that name (the extension stub only
/// matches receivers its contract accepts, murano/dsl/yaql_integration.py).
#[test]
fn static_assignments_check_contracts_and_extensions_fall_back() {
    let answer = |m: &str| run(STATICS_AND_FALLBACK, m).1;
    assert_eq!(answer("setByType").unwrap(), Value::Int(7.into()));
    assert_eq!(
        answer("badByType").unwrap_err().kind(),
        "ContractViolationException"
    );
    assert_eq!(
        runtime::pyrepr::to_str(&answer("fallback").unwrap()),
        "('ABC', 30)"
    );
}

const INIT_ORDER: &str = r#"
Name: Test
Properties:
  b:
    Contract: $.int()
    Default: $.a + 1
  a:
    Contract: $.int()
    Default: 1
  r:
    Contract: $.int().notNull()
    Usage: Runtime
    Default: abc
Methods:
  test:
    Scope: Public
    Body:
      - Return: list($.a, $.b, new(Loop).x)
---
Name: Loop
Properties:
  x:
    Contract: $.int()
    Default: $.y
  y:
    Contract: $.int()
    Default: $.x
"#;

/// Properties initialise as murano's `MuranoObject.initialize`
/// (murano/dsl/murano_object.py): a default reading a property not set yet
/// waits for it, defaults reading each other are a
/// `CircularExpressionDependenciesError`, and a `Runtime` property whose
/// default violates its contract stays unset.
#[test]
fn property_defaults_wait_for_the_properties_they_read() {
    let (_, r) = run(INIT_ORDER, "test");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "CircularExpressionDependenciesError", "{e:?}");
    let no_loop = INIT_ORDER.replace(", new(Loop).x", "");
    let (_, r) = run(&no_loop, "test");
    assert_eq!(runtime::pyrepr::to_str(&r.unwrap()), "(1, 2)");
}

const ATTRIBUTES: &str = r#"
Name: Test
Extends: Base
Methods:
  test:
    Scope: Public
    Body:
      - $this.setFromBase()
      - $this.setAttr(k, fromTest)
      - $this.setAttr(gone, 1)
      - $this.setAttr(gone, null)
      - $this.setAttr(obj, $this)
      - Return: list($this.getAttr(k), $this.readFromBase(), $this.getAttr(gone, dflt), $this.getAttr(obj), $this.getAttr(k, null, Base))
---
Name: Base
Methods:
  setFromBase:
    Body:
      - $this.setAttr(k, fromBase)
  readFromBase:
    Body:
      - Return: $this.getAttr(k)
"#;

/// Attributes belong to the class whose method sets them (or the `owner`
/// given), an object is kept as its id and null removes one; `getAttr`
/// gives its default for a missing or null one
/// (murano/dsl/principal_objects/sys_object.py, attribute_store.py).
#[test]
fn attributes_are_kept_per_owner_class() {
    let (_, r) = run(ATTRIBUTES, "test");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "('fromTest', 'fromBase', 'dflt', 'root', 'fromBase')"
    );
}

/// Flow collections that go on or close at or left of their key parse as
/// PyYAML (murano's YAML loader) parses them, and positions stay those of
/// the file.
#[test]
fn flow_collections_parse_with_pyyaml_leniency() {
    let src = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - $x: [\n          1, 2\n        ]\n      - $y: {\n        a: 1\n      }\n      - $z: [1,\n  2]\n      - Return: [$x, $y, $z, $y.b]\n";
    let (_, r) = run(src, "test");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), "KeyError");
    assert_eq!(e.location().map(|l| (l.line, l.col)), Some((14, 9)));
    let (_, r) = run(&src.replace(", $y.b]", "]"), "test");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "((1, 2), {'a': 1}, (1, 2))"
    );
}

/// No error goes without a message: `first()` of an empty collection says
/// so (the reference's bare `StopIteration` has none; Clearwater's
/// installers reported "due to " and nothing).
#[test]
fn errors_always_have_a_message() {
    let src = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - Try:\n          - $x: list().first()\n        Catch:\n          - As: e\n            Do:\n              - Return: $e.message\n";
    let (_, r) = run(src, "test");
    assert_eq!(
        runtime::pyrepr::to_str(&r.unwrap()),
        "first() of an empty collection"
    );
    assert_eq!(
        runtime::Error::new(runtime::ErrorKind::KeyError, "").message(),
        "KeyError"
    );
}

/// `Throw` names must be type names (murano's `resolve_name` raises
/// `ValueError`), `Rethrow` outside a `Catch` re-raises no exception
/// (Python's `TypeError`), and an object whose model header says
/// `destroyed: true` refuses calls (`ObjectDestroyedError`).
#[test]
fn throw_names_rethrow_and_destroyed_objects() {
    let src = "Name: Test\nProperties:\n  child:\n    Contract: $.class(Test)\n    Usage: InOut\nMethods:\n  badName:\n    Scope: Public\n    Body:\n      - Throw: $.name()\n  name:\n    Body:\n      - Return: 'not a name!'\n  rethrow:\n    Scope: Public\n    Body:\n      - Rethrow:\n  callChild:\n    Scope: Public\n    Body:\n      - Return: $.child.name()\n";
    let (_, r) = run(src, "badName");
    assert_eq!(r.unwrap_err().kind(), "ValueError");
    let (_, r) = run(src, "rethrow");
    assert_eq!(r.unwrap_err().kind(), "TypeError");
    let pkg = Package::new(
        "tests",
        "0.0.0",
        "1.4",
        &[("Test.yaml".to_string(), src.to_string())],
    )
    .unwrap();
    let ex = Executor::new(vec![pkg]);
    let m = json::from_tagged_str(
        r#"{"Objects": {"?": {"id": "root", "type": "Test"}, "child": {"?": {"id": "c", "type": "Test", "destroyed": true}}}}"#,
    )
    .unwrap();
    let root = model::load_model(&ex, &m).unwrap().unwrap();
    let r = ex.call(&Value::Object(root), "callChild", vec![], vec![], true);
    assert_eq!(r.unwrap_err().kind(), "ObjectDestroyedError");
}

/// The macros check their arguments as murano's do (murano/dsl/macros.py):
/// `Break`/`Continue` take no value, `For` names a variable, `Repeat`
/// counts with an int or an expression (`DslSyntaxError`); a `While` that
/// is no expression matches no macro (`SyntaxError`); a `Throw` needs names
/// (`ValueError`, murano/dsl/virtual_exceptions.py).
#[test]
fn macros_check_their_arguments() {
    for (stmt, kind) in [
        ("- While: true\n        Do: []", "SyntaxError"),
        (
            "- For: 1\n        In: [1]\n        Do: []",
            "DslSyntaxError",
        ),
        ("- Repeat: abc\n        Do: []", "DslSyntaxError"),
        ("- Repeat: 2.5\n        Do: []", "DslSyntaxError"),
        (
            "- While: $x\n        Do:\n          - Break: 1",
            "DslSyntaxError",
        ),
        ("- Throw: []", "ValueError"),
    ] {
        let src = format!("Name: Bad\nMethods:\n  m:\n    Body:\n      - $x: true\n      {stmt}\n");
        assert_eq!(load_error(&src).kind(), kind, "{stmt}");
    }
    let ok = "Name: Test\nMethods:\n  test:\n    Scope: Public\n    Body:\n      - Repeat: 2\n        Do:\n          - trace(r)\n      - If: qwerty\n        Then:\n          - Break:\n";
    let (ex, r) = run(ok, "test");
    assert_eq!(r.unwrap_err().kind(), "DslInvalidOperationError");
    assert_eq!(traces(&ex), ["r", "r"]);
}

const AMBIGUOUS: &str = r#"
Name: Test
Extends: [A, B]
Methods:
  callIt:
    Scope: Public
    Body:
      - Return: $.dm()
  callShared:
    Scope: Public
    Body:
      - Return: $.shared()
  readStatic:
    Scope: Public
    Body:
      - Return: :Test.amb
---
Name: Root
Methods:
  shared:
    Body:
      - Return: root
---
Name: A
Extends: Root
Properties:
  amb:
    Contract: $
    Usage: Static
    Default: a
Methods:
  dm:
    Body:
      - Return: a
---
Name: B
Extends: Root
Properties:
  amb:
    Contract: $
    Usage: Static
    Default: b
Methods:
  dm:
    Body:
      - Return: b
  shared:
    Body:
      - Return: b
"#;

/// A method two unrelated parents define cannot be chosen
/// (`AmbiguousMethodName`), nor a static property they both declare
/// (`AmbiguousPropertyNameError`), while a method a parent overrides from
/// a common ancestor can (murano's `_choose_symbol`,
/// murano/dsl/murano_type.py).
#[test]
fn methods_of_two_unrelated_parents_are_ambiguous() {
    let (_, r) = run(AMBIGUOUS, "callIt");
    assert_eq!(r.unwrap_err().kind(), "AmbiguousMethodName");
    let (_, r) = run(AMBIGUOUS, "callShared");
    assert_eq!(runtime::pyrepr::to_str(&r.unwrap()), "b");
    let (_, r) = run(AMBIGUOUS, "readStatic");
    assert_eq!(r.unwrap_err().kind(), "AmbiguousPropertyNameError");
}

/// Classes are built when something first reaches them, and a declaration
/// wrong past its name fails there, with the kind murano's constructors
/// raise: murano/dsl/murano_type.py (`create`, `_create_meta_class`,
/// `MuranoClass.__init__`), murano_method.py (argument order and usage),
/// yaql_integration.py (`Unknown method usage`), meta.py (`MetaData`).
#[test]
fn broken_classes_fail_when_reached_with_the_reference_kinds() {
    const META: &str =
        "---\nName: OnlyMethods\nUsage: Meta\nApplies: Method\n---\nName: One\nUsage: Meta\n";
    for (bad, kind) in [
        ("Usage: Odd\n", "ValueError"),
        ("Usage: Meta\nCardinality: Two\n", "ValueError"),
        ("Usage: Meta\nApplies: Nowhere\n", "ValueError"),
        ("Usage: Meta\nInherited: maybe\n", "ValueError"),
        ("Extends: One\n", "InvalidInheritanceError"),
        ("Meta: [{One: {}, OnlyMethods: {}}]\n", "ValueError"),
        ("Meta: OnlyMethods\n", "ValueError"),
        ("Meta: [One, One]\n", "ValueError"),
        ("Properties:\n  p:\n    Contract: $\n    Meta: OnlyMethods\n", "ValueError"),
        ("Properties:\n  p:\n    Contract: $\n    Usage: Odd\n", "DslSyntaxError"),
        ("Methods:\n  m:\n    Usage: Odd\n", "ValueError"),
        ("Methods:\n  m:\n    Usage: Action\n    Scope: Session\n", "ValueError"),
        (
            "Methods:\n  m:\n    Arguments:\n      - r: {Contract: $, Usage: VarArgs}\n      - a: {Contract: $}\n",
            "DslSyntaxError",
        ),
        ("Methods:\n  m:\n    Arguments:\n      - a: {Contract: $, Usage: Odd}\n", "DslSyntaxError"),
        ("Methods:\n  m:\n    Arguments:\n      - a: {Contract: $, Meta: OnlyMethods}\n", "ValueError"),
    ] {
        let classes = format!(
            "Name: Test\nMethods:\n  ok:\n    Scope: Public\n    Body:\n      - Return: 1\n  reach:\n    Scope: Public\n    Body:\n      - Return: new(Bad)\n---\nName: Bad\n{bad}{META}"
        );
        let (_, r) = run(&classes, "ok");
        assert_eq!(r.unwrap(), Value::Int(1), "{bad}: a class nothing reaches does not fail");
        let (_, r) = run(&classes, "reach");
        let e = r.expect_err(bad);
        assert_eq!(e.kind(), kind, "{bad}: {e}");
        assert!(e.message().contains("Test.yaml:"), "{bad}: {} has no position", e.message());
    }
}
