//! `matches()` of a constant pattern, `startsWith()`/`endsWith()` of a
//! string read, and `in`/`len()` over a dict's `keys()` and `values()`:
//! wherever the machine code answers, it answers as the interpreter (the
//! real library) does, and it hands over what it cannot answer.

use super::*;
use crate::murano::ir::LinkKind;
use crate::{compile, CompileOptions, Program};

/// `src` compiled with the library's registry.
fn program(src: &str) -> Program {
    compile(src, &stdlib::registry(false), CompileOptions::default()).unwrap()
}

/// Checks that `src`, compiled as a condition, gives on each of `values`
/// the interpreter's answer or none; how many it answered.
fn agrees(src: &str, values: &[Value]) -> usize {
    let prog = program(src);
    let p = Predicate::compile(prog.ir()).unwrap_or_else(|e| panic!("{src}: {e}"));
    let mut options = runtime::Options::test_suite(false);
    options.jit = Mode::Off;
    let env = stdlib::env(options);
    let mut answered = 0;
    for v in values {
        let want = prog
            .eval(&env, v.clone())
            .and_then(|r| stdlib::finalize(&env, r));
        if let Some(got) = p.eval(v) {
            assert_eq!(want.ok(), Some(Value::Bool(got)), "{src} on {v:?}");
            answered += 1;
        }
    }
    answered
}

fn dict(pairs: &[(&str, Value)]) -> Value {
    let mut d = runtime::Dict::default();
    for (k, v) in pairs {
        d.insert(Value::str(*k), v.clone());
    }
    Value::dict(d)
}

fn strings(xs: &[&str]) -> Vec<Value> {
    xs.iter().map(|s| Value::str(*s)).collect()
}

#[test]
fn matches_a_constant_pattern_as_the_library_does() {
    let mut values = strings(&[
        "a1", "a123", "xa1", "a", "", "A1", "é1", "a1\n", "ab", "日本a9",
    ]);
    values.extend([Value::Null, Value::Int(1), Value::list(vec![])]);
    // Strings are answered; anything else is the interpreter's (an error).
    assert_eq!(agrees("$.matches('^a[0-9]+$')", &values), 10);
    assert_eq!(agrees("$.matches('[0-9]')", &values), 10);
    assert_eq!(agrees("$ =~ '^a\\d'", &values), 10);
    assert_eq!(agrees("not $.matches('(?i)^A')", &values), 10);
    // Python's `$` matches before a final newline, as the library's does.
    let p = Predicate::compile(program("$.matches('^a1$')").ir()).unwrap();
    assert_eq!(p.eval(&Value::str("a1\n")), Some(true));
    // A bad pattern, or one that is not constant, stays interpreted.
    assert!(Predicate::compile(program("$.matches('(')").ir()).is_err());
    assert!(Predicate::compile(program("$.matches($.p)").ir()).is_err());
}

#[test]
fn a_contract_checks_a_pattern_in_batches_and_stops_at_the_first_miss() {
    let pred = program("$.matches('^[a-z][a-z0-9-]*$')");
    let check = LinkKind::Check {
        predicate: *crate::yaql::parse("$", Default::default()).unwrap(),
        message: None,
        shape: crate::murano::ir::Predicate::Other,
    };
    let steps = [
        Step::plain(&LinkKind::NotNull),
        Step::plain(&LinkKind::String),
        Step {
            link: &check,
            predicate: Some(pred.ir()),
        },
    ];
    let n = Native::compile(&steps).unwrap();
    let mut names: Vec<Value> = (0..40).map(|i| Value::str(format!("host-{i}"))).collect();
    assert_eq!(n.first_failing(&names), 40);
    // A miss in the second batch, then a value the code has no arm for.
    names[21] = Value::str("Host-21");
    assert_eq!(n.first_failing(&names), 21);
    names[21] = Value::Int(21);
    assert_eq!(n.first_failing(&names), 21);
    assert_eq!(n.first_failing(&names[22..]), 18);
}

#[test]
fn starts_and_ends_with_a_string_read_as_the_library_does() {
    let row = |s: Value, p: Value| dict(&[("s", s), ("p", p)]);
    let s = Value::str;
    let mut values = vec![
        row(s("abc"), s("ab")),
        row(s("abc"), s("abc")),
        row(s("abc"), s("abcd")),
        row(s("abc"), s("")),
        row(s(""), s("")),
        row(s("abc"), s("bc")),
        row(s("héllo"), s("hé")),
        row(s("héllo"), s("llo")),
        row(s("日本語"), s("語")),
    ];
    let answered = values.len();
    values.extend([
        row(Value::Int(1), s("a")),
        row(s("abc"), Value::Null),
        row(s("abc"), Value::Int(1)),
        dict(&[("s", s("abc"))]),
    ]);
    assert_eq!(agrees("$.s.startsWith($.p)", &values), answered);
    assert_eq!(agrees("$.s.endsWith($.p)", &values), answered);
    // A variable prefix, as a statement's condition reads it.
    let p = Predicate::truth(program("$key.startsWith($prefix)").ir()).unwrap();
    let mut vars = |n: &str| Some(Value::str(if n == "key" { "pod-web" } else { "pod-" }));
    assert_eq!(p.eval_with(&Value::Null, &mut vars), Some(true));
    let mut vars = |n: &str| Some(Value::str(if n == "key" { "po" } else { "pod-" }));
    assert_eq!(p.eval_with(&Value::Null, &mut vars), Some(false));
}

#[test]
fn in_and_len_over_keys_and_values_as_the_library_does() {
    let mut d = runtime::Dict::default();
    for (k, v) in [
        (Value::str("80"), Value::Int(8080)),
        (Value::Int(443), Value::str("https")),
        (Value::str("é"), Value::Null),
        (Value::Bool(true), Value::Float(1.5)),
    ] {
        d.insert(k, v);
    }
    let d = Value::dict(d);
    let many: runtime::Dict = (0..100)
        .map(|i| (Value::str(format!("k{i}")), Value::Int(i)))
        .collect();
    let many = Value::dict(many);
    let row = |x: Value, d: &Value| dict(&[("x", x), ("d", d.clone())]);
    let xs = [
        Value::str("80"),
        Value::Int(80),
        Value::Int(443),
        Value::Int(8080),
        Value::str("https"),
        Value::str("é"),
        Value::Null,
        Value::Int(1),
        Value::str("k99"),
        Value::str("k100"),
    ];
    let mut values: Vec<Value> = xs.iter().map(|x| row(x.clone(), &d)).collect();
    values.extend(xs.iter().map(|x| row(x.clone(), &many)));
    let answered = values.len();
    // What the code has no rule for: a float key against an integer, a
    // dict that is no dict, a list searched.
    values.extend([
        row(Value::Float(1.5), &d),
        row(Value::str("a"), &Value::list(strings(&["a"]))),
        row(Value::str("a"), &Value::Null),
        row(Value::list(vec![]), &d),
    ]);
    assert_eq!(agrees("$.x in $.d.keys()", &values), answered);
    // An integer searched past the float 1.5 is the interpreter's (80,
    // 443 and 1; 8080 is found before it).
    assert_eq!(agrees("$.x in $.d.values()", &values), answered - 3);
    assert_eq!(agrees("len($.d.keys()) = 4", &values[..2]), 2);
    // Every row whose `d` is a dict, whatever its `x`.
    assert_eq!(agrees("len($.d.values()) > 50", &values), answered + 2);
    // `containsKey()` of a key read or constant: the dict's lookup.
    assert_eq!(agrees("$.d.containsKey($.x)", &values), answered);
    assert_eq!(agrees("not $.d.containsKey('80')", &values), answered + 2);
    assert_eq!(agrees("$.d.containsKey(443)", &values), answered + 2);
    // The fixtures' form: variables, as a statement's condition reads them.
    let p = Predicate::truth(program("$port in $portMap.keys()").ir()).unwrap();
    let mut vars = |n: &str| {
        Some(if n == "port" {
            Value::Int(443)
        } else {
            d.clone()
        })
    };
    assert_eq!(p.eval_with(&Value::Null, &mut vars), Some(true));
    let mut vars = |n: &str| {
        Some(if n == "port" {
            Value::Int(22)
        } else {
            d.clone()
        })
    };
    assert_eq!(p.eval_with(&Value::Null, &mut vars), Some(false));
}

/// A host that makes `n…` ids objects and says every object but `obj:n9`
/// is owned (anything else is the interpreter's).
struct Owners;

impl Host for Owners {
    fn class(&self, step: usize, v: &Value) -> Verdict {
        match (step, v.as_str()) {
            (0, Some(id)) if id.starts_with('n') => {
                Verdict::Becomes(Value::str(format!("obj:{id}")))
            }
            (0, None) if v.is_null() => Verdict::Same,
            (1, Some(o)) if o.starts_with("obj:") && o != "obj:n9" => Verdict::Same,
            _ => Verdict::Ask,
        }
    }
}

#[test]
fn owned_asks_the_host_about_the_object_a_class_link_made() {
    let class = LinkKind::Class {
        name: crate::murano::ir::Operand::of(
            &crate::yaql::parse("Node", Default::default()).unwrap(),
        ),
        default: None,
        version: None,
    };
    let n = Native::compile(&[Step::plain(&class), Step::plain(&LinkKind::Owned)]).unwrap();
    let mut ids: Vec<Value> = (0..40).map(|i| Value::str(format!("n{}", i % 5))).collect();
    let mut became = Vec::new();
    assert_eq!(n.first_failing_in(&Owners, &ids, &mut became), 40);
    assert_eq!(became.len(), 40);
    // Null passes both links as it is; an object not owned stops the loop.
    ids[3] = Value::Null;
    ids[21] = Value::str("n9");
    became.clear();
    assert_eq!(n.first_failing_in(&Owners, &ids, &mut became), 21);
    assert_eq!(became.len(), 20);
    // A scalar passes `owned()` alone as it is; a container is the
    // interpreter's.
    let alone = Native::compile(&[
        Step::plain(&LinkKind::String),
        Step::plain(&LinkKind::NotOwned),
    ])
    .unwrap();
    assert!(alone.passes(&Value::str("a")));
    assert!(alone.passes(&Value::Null));
    assert!(!alone.passes(&Value::list(vec![])));
}

/// A host that passes null through `template()` (its names known).
struct Templates;

impl Host for Templates {
    fn class(&self, _: usize, v: &Value) -> Verdict {
        match v {
            Value::Null => Verdict::Same,
            _ => Verdict::Ask,
        }
    }
}

#[test]
fn template_passes_null_when_the_host_says_so_and_hands_over_anything_else() {
    let name =
        crate::murano::ir::Operand::of(&crate::yaql::parse("Node", Default::default()).unwrap());
    let template = LinkKind::Template {
        name,
        exclude: None,
        default_type: None,
        version: None,
    };
    let n = Native::compile(&[Step::plain(&template)]).unwrap();
    let mut items = vec![Value::Null; 40];
    assert_eq!(n.first_failing_in(&Templates, &items, &mut Vec::new()), 40);
    // A definition (the interpreter makes the object's template), in the
    // second batch; a string.
    items[17] = dict(&[("name", Value::str("a"))]);
    assert_eq!(n.first_failing_in(&Templates, &items, &mut Vec::new()), 17);
    assert!(n.check_in(&Templates, &Value::str("n1")).is_none());
    // Without a host that knows the names, null too is the interpreter's.
    assert_eq!(n.first_failing(&[Value::Null]), 0);
}

#[test]
fn bool_is_the_truth_of_its_argument() {
    let mut values = vec![
        Value::Null,
        Value::Bool(false),
        Value::Bool(true),
        Value::Int(0),
        Value::Int(-3),
        Value::Float(0.0),
        Value::Float(f64::NAN),
        Value::str(""),
        Value::str("x"),
    ];
    let answered = values.len();
    // A container's truth is the interpreter's.
    values.extend([Value::list(vec![]), dict(&[("a", Value::Null)])]);
    assert_eq!(agrees("bool($)", &values), answered);
    // `true = 1` is the interpreter's.
    assert_eq!(agrees("not bool($) or $ = 1", &values), answered - 1);
}

/// A field read once serves the later reads of the same key where it
/// dominates them (`codegen/reads.rs`): each answer is still the
/// interpreter's, a missing key still deopts where `$.x` reads it after a
/// `$.get(x)`, and defaults of other kinds are not taken for each other.
#[test]
fn fields_read_once_answer_as_read_each_time() {
    let records = [
        dict(&[("p", Value::Int(80)), ("s", dict(&[("t", Value::Int(3))]))]),
        dict(&[("p", Value::Int(0)), ("s", dict(&[("t", Value::Int(-1))]))]),
        dict(&[("p", Value::str("80")), ("s", dict(&[]))]),
        dict(&[("s", dict(&[("t", Value::Int(3))]))]),
        dict(&[("p", Value::Int(70000))]),
        dict(&[]),
        Value::Int(3),
    ];
    let chain = "isInteger($.get(p)) and $.p > 0 and $.p < 65536 \
                 and isDict($.get(s)) and isInteger($.s.get(t)) and $.s.t >= 0";
    let counts = [
        agrees(chain, &records),
        agrees("$.get(p) = 1 or $.p = 80 or $.p = 0", &records),
        agrees("($.get(p) = 7 or true) and $.get(p) = 80", &records),
        agrees(
            "isInteger($.get(q, 1)) and not isInteger($.get(q, 1.0))",
            &records,
        ),
    ];
    // The chain answers all but the record that is no dict; the `or`
    // chain hands over where `$.p` is missing after a `$.get(p)` (the
    // interpreter's KeyError), and on what is no dict.
    assert_eq!(counts, [6, 4, 6, 6]);
}
