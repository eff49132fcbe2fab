//! The project's own YAQL cases: expression, input, expected output (or
//! error kind), grouped like the standard library.

use muranopl::{json, Engine, Options};

fn engine() -> Engine {
    Engine::new(Options::test_suite(false))
}

fn ok(expr: &str, data: &str, want: &str) {
    let e = engine();
    match e.eval_json(expr, data) {
        Ok(got) => assert_eq!(got, want, "{expr}"),
        Err(err) => panic!("{expr}: unexpected error {err}"),
    }
}

fn err(expr: &str, data: &str, kind: &str) {
    let e = engine();
    match e.eval_json(expr, data) {
        Ok(got) => panic!("{expr}: expected {kind}, got {got}"),
        Err(e) => assert_eq!(e.kind(), kind, "{expr}: {e}"),
    }
}

#[test]
fn syntax_and_operators() {
    ok("1 + 2 * 3", "null", "7");
    ok("-7 / 2", "null", "-4");
    ok("-7 mod 3", "null", "2");
    ok("7.0 / 2", "null", "3.5");
    ok("(1 + 2) * 3", "null", "9");
    ok("1 = 1.0 and 1 = true", "null", "true");
    ok("not 1 = 2", "null", "true");
    ok("null or 0 or 'x'", "null", "\"x\"");
    ok("[a, b]", "null", "[\"a\", \"b\"]");
    ok("{1 => 2}", "null", "{\"$dict\": [[1, 2]]}");
    ok("'a\\nb'", "null", "\"a\\nb\"");
    ok("`a\\nb`", "null", "\"a\\\\nb\"");
    ok("$.a.b", r#"{"a": {"b": 5}}"#, "5");
    ok("$?.a", "null", "null");
    ok("let(x => 2) -> $x * $x", "null", "4");
    ok("9223372036854775807 + 1", "null", "9223372036854775808");
}

/// A `+` chain grows its own temporary string in place; the strings it
/// read from (the input, a variable, a constant) are left as they were.
#[test]
fn string_concatenation_leaves_its_operands_alone() {
    ok("[$ + 'b', $]", r#""a""#, r#"["ab", "a"]"#);
    ok(
        "let(x => 'p') -> [$x + 'q' + 'r', $x, $x + 's']",
        "null",
        r#"["pqr", "p", "ps"]"#,
    );
    ok(
        "$.select($.toUpper() + '-' + str($)).concat($)",
        r#"["a", "b"]"#,
        r#"["A-a", "B-b", "a", "b"]"#,
    );
    ok(
        "[1, 2].select('n' + str($) + 'n')",
        "null",
        r#"["n1n", "n2n"]"#,
    );
}

#[test]
fn verbatim_strings_escape_any_character() {
    // A backslash escapes any character inside backquotes; only `\``
    // is decoded afterwards (the reference's `` `([^`\\]|\\.)*` ``).
    ok(r"`c:\f\x`", "null", r#""c:\\f\\x""#);
    ok(r"`\``", "null", r#""`""#);
    ok(r"`\\`", "null", r#""\\\\""#);
    ok(r"`\\` + `a`", "null", r#""\\\\a""#);
    err(r"`\`", "null", "YaqlLexicalException");
}

#[test]
fn user_functions_see_themselves() {
    // yaql's `def` registers the function into the context its body runs
    // in: a body may call itself and the functions defined beside it.
    ok(
        "def(rec, switch($ = 1 => 1, true => $ * rec($ - 1))) -> rec($)",
        "4",
        "24",
    );
    ok(
        "def(f, switch($ > 9 => $, true => f($ * 2))) -> def(g, f($) + 1) -> [g(3), call(f, [5], {})]",
        "null",
        "[13, 10]",
    );
    // Endless recursion ends at the engine's depth limit. The limit is
    // sized for the engine's own stacks (the CLI's, the embedders'), not
    // for a test thread's 2 MiB in a debug build.
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(|| err("def(f, f($)) -> f(1)", "null", "RecursionError"))
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn errors_have_kinds_and_positions() {
    err("1 2", "null", "YaqlGrammarException");
    err("(2", "null", "YaqlGrammarException");
    err("1 ? 2", "null", "YaqlLexicalException");
    err("func(1,,)", "null", "YaqlGrammarException");
    err("func(x=>y, t)", "null", "YaqlGrammarException");
    err("1 / 0", "null", "ZeroDivisionError");
    err("nosuchfunction(1)", "null", "NoFunctionRegisteredException");
    let e = engine();
    let er = e.eval_json("1 + (2 ? 3)", "null").unwrap_err();
    assert_eq!(er.span().map(|s| s.start), Some(7));
    let rendered = er.render("1 + (2 ? 3)");
    assert!(rendered.contains("line 1, column 8"), "{rendered}");
}

#[test]
fn queries_are_lazy_and_limited() {
    ok("$.where($ > 2).select($ * 10)", "[1, 2, 3, 4]", "[30, 40]");
    err(
        "range(0, 200).select($)",
        "null",
        "CollectionTooLargeException",
    );
}

#[test]
fn tagged_json_roundtrip() {
    for s in [
        r#"{"$dict": [[1, 2], [[1, 2], 3]]}"#,
        r#"{"$datetime": "2015-06-07T08:09:10.123456+02:00"}"#,
        r#"{"$timespan": 1500000}"#,
        r#"[1, 2.5, "x", null, true]"#,
    ] {
        let v = json::from_tagged_str(s).unwrap();
        assert_eq!(json::to_tagged_string(&v), s);
    }
}

/// Engines with the JIT off and forced on.
fn jit_off_and_on() -> (Engine, Engine) {
    let with = |jit| {
        Engine::new(Options {
            jit,
            ..Options::default()
        })
    };
    (
        with(muranopl::jit::Mode::Off),
        with(muranopl::jit::Mode::Always),
    )
}

/// A result as the tests compare it: its JSON, or its error.
fn show(r: Result<muranopl::Value, muranopl::Error>) -> String {
    match r {
        Ok(v) => json::to_tagged_string(&v),
        Err(e) => format!("{}: {}", e.kind(), e.message()),
    }
}

/// Conditions the JIT compiles give what the interpreter gives, for values
/// of every kind in the fields they read (the machine code decides what it
/// can and hands the rest to the interpreter).
#[test]
fn compiled_conditions_agree_with_the_interpreter() {
    let (off, on) = jit_off_and_on();
    let exprs = [
        "$.x + $.y * 2 > 10 and $.name in list(a, b, c)",
        "$.x > $.y or not ($.name = 'b')",
        "$.x - 3 = $.y",
        "$.x * $.x >= 0 and isInteger($.x)",
        "$.a.b = 1 or $.missing = null",
        "isString($.name) and $.name != ''",
        "$.x < 2.5 or $.y > -1",
        "$.name in [a, 1, true, null]",
        "$.get(x, 0) > 1 and isList($.get(l)) and len($.l) >= 1 and $.l.all($ > 0)",
        "$.get(name, '') = '' or isDict($.get(a))",
        "$.l.any($ = 'x' or $ = null)",
        "$.get(nope) = null and $.get(x) != null and len($) > 2",
        // Not compiled: `and` returns `$.flag` itself when it is falsy.
        "$.flag and $.x > 0",
    ];
    let rows = [
        r#"{"x": 5, "y": 3, "name": "a", "flag": true, "a": {"b": 1}, "l": [1, 2]}"#,
        r#"{"x": 1, "y": 1, "name": "b", "flag": false, "a": {}, "l": [1, 0, "x"]}"#,
        r#"{"x": 2.5, "y": 0, "name": "", "flag": 0, "l": [null, 2.5]}"#,
        r#"{"x": 3, "l": [], "a": [1]}"#,
        r#"{"x": 3, "l": {"k": 1}, "name": "q"}"#,
        r#"{"x": 3, "l": "abc"}"#,
        r#"{"x": 9223372036854775807, "y": 9223372036854775807, "name": "c"}"#,
        r#"{"x": "5", "y": null, "name": 1, "flag": "yes"}"#,
        r#"{"x": true, "y": [1], "name": null}"#,
        r#"{"x": 123456789012345678901234567890, "y": 1, "name": "d"}"#,
        r#"{}"#,
        r#"[1, 2]"#,
        r#"3"#,
    ];
    let mut native = 0;
    for e in exprs {
        let p_off = off.compile(e).unwrap();
        let p_on = on.compile(e).unwrap();
        let compiled = p_on.native(muranopl::jit::Mode::Always).is_some();
        assert_eq!(compiled, !e.starts_with("$.flag"), "{e}");
        for r in rows {
            let data = json::from_tagged_str(r).unwrap();
            let want = show(off.eval(&p_off, data.clone()));
            native += usize::from(
                p_on.native(muranopl::jit::Mode::Always)
                    .and_then(|p| p.eval(&data))
                    .is_some(),
            );
            assert_eq!(show(on.eval(&p_on, data)), want, "{e} on {r}");
        }
    }
    assert!(
        native >= 15,
        "only {native} evaluations were decided by machine code"
    );
}

/// Lambdas with a fast tier (a condition for `where`, a field read or a
/// string built for `select`) give what the interpreter gives, errors
/// included.
#[test]
fn fast_lambdas_agree_with_the_interpreter() {
    let (off, on) = jit_off_and_on();
    let data = [
        r#"[{"age": 31, "name": "a"}, {"age": 30, "name": "b"}, {"age": 40.5, "name": "c"}]"#,
        r#"[{"age": 31, "name": "a"}, {"age": "x", "name": "b"}]"#,
        r#"[{"age": 50}, {"age": 60, "name": "d"}]"#,
        r#"[{"name": "e"}, {"age": 31, "name": "f"}]"#,
        r#"[1, {"age": 31, "name": "g"}]"#,
        r#"[{"age": 9223372036854775807, "name": "h"}, {"age": true, "name": "i"}]"#,
        r#"[{"price": 2.5, "qty": 3}, {"price": 4, "qty": 5}, {"price": -0.0, "qty": 7}]"#,
        r#"[{"price": 9223372036854775807, "qty": 2}, {"price": 1e308, "qty": 10}]"#,
        r#"[{"price": "ab", "qty": 3}, {"price": true, "qty": 2}, {"price": null, "qty": 1}]"#,
        r#"[{"price": 123456789012345678901234567890, "qty": 1.5}, {"qty": 1}]"#,
        // String building, item 2 of 3 without code: not a string, a bool
        // or a float id, a missing key, a dict for a name.
        r#"[{"name": "ann", "id": 1}, {"name": "Bob", "id": 2}, {"name": "Ärger", "id": -3}]"#,
        r#"[{"name": "ann", "id": 1}, {"name": 5, "id": 2}, {"name": "al", "id": 3}]"#,
        r#"[{"name": "ann", "id": 1}, {"name": "b", "id": true}, {"name": "al", "id": 3}]"#,
        r#"[{"name": "ann", "id": 1}, {"name": "b", "id": 2.5}, {"name": "al", "id": "x"}]"#,
        r#"[{"name": "ann", "id": 1}, {"name": "b"}, {"name": "al", "id": 3}]"#,
        r#"[{"name": "ann", "id": 1}, {"name": {"a": 1}, "id": 1}, {"name": "al", "id": 3}]"#,
    ];
    for e in [
        "$.select($.name.toUpper() + '-' + str($.id)).where($.startsWith('A'))",
        "$.select('<' + $.name.toLower() + '>').where($.startsWith('<a'))",
        "$.where($.name.startsWith(a)).len()",
        "$.where($.age > 30).select($.name)",
        "$.where($.age + 1 > 31 and $.name in list(a, c, f)).len()",
        "$.select($.name)",
        "$.where(not isString($.age)).len()",
        "$.select($.price * $.qty)",
        "$.select($.price * $.qty - 1 + $.qty * 0.5)",
    ] {
        let (p_off, p_on) = (off.compile(e).unwrap(), on.compile(e).unwrap());
        for d in data {
            let v = json::from_tagged_str(d).unwrap();
            assert_eq!(
                show(on.eval(&p_on, v.clone())),
                show(off.eval(&p_off, v)),
                "{e} on {d}"
            );
        }
    }
}
