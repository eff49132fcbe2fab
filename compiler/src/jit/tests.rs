//! The compiled loop's answers on values of every kind, and where it hands
//! over to the interpreter. (That the interpreter then agrees with what the
//! compiled code passes is tested in the engine, which has the library.)

use super::*;
use crate::murano::ir::LinkKind;
use crate::{compile, CompileOptions, Program};
use runtime::registry::{p, var, Args, Cx, Ty};
use runtime::{Registry, Result as RtResult};

fn stub(_: &Cx, _: Args) -> RtResult<Value> {
    Ok(Value::Null)
}

/// The names the JIT knows, resolved as the library registers them (the
/// bodies do not matter here: compiled code never calls them).
fn registry() -> Registry {
    let mut r = Registry::new();
    r.group("common");
    for name in ["isInteger", "isNumber", "isString", "isBoolean", "len"] {
        r.function(name, vec![p("value", Ty::Any).nullable()], stub);
    }
    r.function("list", vec![var("args", Ty::Any).nullable()], stub);
    r.method("get", vec![p("d", Ty::Any), p("key", Ty::Any)], stub);
    r
}

fn predicate(src: &str) -> Program {
    compile(src, &registry(), CompileOptions::default()).unwrap()
}

fn chain(pre: &[LinkKind], pred: Option<&str>) -> Result<Native, Unsupported> {
    let p = pred.map(predicate);
    let check = LinkKind::Check {
        predicate: *crate::yaql::parse("$", Default::default()).unwrap(),
        message: None,
        shape: crate::murano::ir::Predicate::Other,
    };
    let mut steps: Vec<Step<'_>> = pre.iter().map(Step::plain).collect();
    if let Some(p) = &p {
        steps.push(Step {
            link: &check,
            predicate: Some(p.ir()),
        });
    }
    Native::compile(&steps)
}

fn ints(xs: &[i64]) -> Vec<Value> {
    xs.iter().map(|&i| Value::Int(i)).collect()
}

#[test]
fn a_port_contract_passes_ports_and_stops_at_the_first_other_value() {
    let n = chain(
        &[LinkKind::NotNull],
        Some("isInteger($) and $ > 0 and $ < 65536"),
    )
    .unwrap();
    assert_eq!(n.first_failing(&ints(&[1, 80, 65535])), 3);
    assert_eq!(n.first_failing(&ints(&[1, 2, 0, 3])), 2);
    assert_eq!(n.first_failing(&ints(&[65536])), 0);
    for v in [
        Value::Null,
        Value::str("80"),
        Value::Float(80.0),
        Value::Bool(true),
    ] {
        assert!(!n.passes(&v), "{v:?}");
    }
}

#[test]
fn a_guard_fails_mid_loop_at_the_value_the_code_has_no_arm_for() {
    // `int()` keeps ints; a string would be coerced: the interpreter's job.
    let n = chain(&[LinkKind::Int], Some("$ > 0")).unwrap();
    let items = vec![Value::Int(1), Value::Int(2), Value::str("3"), Value::Int(4)];
    assert_eq!(n.first_failing(&items), 2);
    assert_eq!(n.first_failing(&items[3..]), 1);
    // `check()` asks its predicate about null too; `$ > 0` has no arm for
    // null, so the interpreter answers.
    assert!(!n.passes(&Value::Null));
    assert!(chain(&[LinkKind::Int], Some("$ = null or $ > 0"))
        .unwrap()
        .passes(&Value::Null));
    // Floats compare with the integer constant; a list is no scalar.
    // Integer arithmetic deopts on overflow.
    let a = chain(&[], Some("$ + 1 > $")).unwrap();
    assert!(a.passes(&Value::Int(7)));
    assert!(!a.passes(&Value::Int(i64::MAX)));
    let m = chain(&[], Some("$ > 0")).unwrap();
    assert!(m.passes(&Value::Float(0.5)));
    assert!(!m.passes(&Value::Float(f64::NAN)));
    assert!(!m.passes(&Value::list(vec![Value::Int(1)])));
}

#[test]
fn long_lists_are_checked_in_batches() {
    let n = chain(&[], Some("$ >= 0")).unwrap();
    let mut items = ints(&(0..200).collect::<Vec<_>>());
    assert_eq!(n.first_failing(&items), 200);
    items[150] = Value::Int(-1);
    assert_eq!(n.first_failing(&items), 150);
    assert_eq!(n.first_failing(&[]), 0);
}

#[test]
fn strings_compare_byte_for_byte_with_constants_of_any_length() {
    let n = chain(
        &[LinkKind::NotNull],
        Some("$ in list(TCP, UDP, '', 'a-longer-name-than-eight')"),
    )
    .unwrap();
    for ok in ["TCP", "UDP", "", "a-longer-name-than-eight"] {
        assert!(n.passes(&Value::str(ok)), "{ok}");
    }
    for bad in ["TC", "TCPX", "tcp", "a-longer-name-than-eighT", "UDP "] {
        assert!(!n.passes(&Value::str(bad)), "{bad}");
    }
    // Another kind is unequal to every string: a violation, found by the
    // interpreter.
    assert!(!n.passes(&Value::Int(1)));
    let ne = chain(&[], Some("$ != 'x' and not ($ = 'y')")).unwrap();
    assert!(ne.passes(&Value::str("z")));
    assert!(ne.passes(&Value::Int(3)));
    assert!(!ne.passes(&Value::str("y")));
}

#[test]
fn type_tests_and_truthiness_follow_python() {
    let n = chain(&[], Some("isString($) or isBoolean($)")).unwrap();
    assert!(n.passes(&Value::str("")));
    assert!(n.passes(&Value::Bool(false)));
    assert!(!n.passes(&Value::Int(0)));
    let t = chain(&[], Some("$")).unwrap();
    for v in [
        Value::Int(3),
        Value::str("a"),
        Value::Bool(true),
        Value::Float(f64::NAN),
    ] {
        assert!(t.passes(&v), "{v:?}");
    }
    for v in [
        Value::Int(0),
        Value::str(""),
        Value::Bool(false),
        Value::Float(0.0),
    ] {
        assert!(!t.passes(&v), "{v:?}");
    }
    let num = chain(&[], Some("isNumber($) and 10 >= $")).unwrap();
    assert!(num.passes(&Value::Float(9.5)));
    assert!(!num.passes(&Value::Int(11)));
}

#[test]
fn what_does_not_compile_says_why() {
    for (src, why) in [
        ("len($)", "function len()"),
        (
            "$ + 1.5 > 0",
            "arithmetic on a constant other than an integer",
        ),
        ("$ in 'abc'", "a list of constants"),
        ("$.x", "this kind of expression"),
        ("$ < 'b'", "an ordering of anything but numbers"),
        (
            &*format!(
                "$ in [{}]",
                (0..300)
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "a function this big",
        ),
    ] {
        let e = chain(&[], Some(src)).unwrap_err();
        assert!(e.0.contains(why), "{src}: {e}");
    }
    assert_eq!(
        "never".parse::<Mode>().unwrap_err(),
        "unknown JIT mode 'never' (expected off, auto or always)"
    );
}

#[test]
fn modes_decide_when_a_contract_compiles() {
    assert!(Mode::Always.compiles_at(0));
    assert!(Mode::Auto.compiles_at(Mode::HOT - 1) && !Mode::Auto.compiles_at(Mode::HOT - 2));
    assert!(!Mode::Off.compiles_at(0) && !Mode::Off.compiles_at(Mode::HOT));
}

#[test]
fn a_tier_compiles_at_load_only_when_always_and_at_use_once_hot() {
    for (mode, at_load) in [
        (Mode::Off, false),
        (Mode::Auto, false),
        (Mode::Always, true),
    ] {
        let t: Tier<u32> = Tier::default();
        t.at_load(mode, || Some(7));
        assert_eq!(t.code.get().is_some(), at_load, "{mode:?}");
    }
    let t: Tier<u32> = Tier::default();
    let uses: Vec<Option<u32>> = (0..Mode::HOT)
        .map(|_| t.get(Mode::Auto, || Some(7)).copied())
        .collect();
    assert!(uses[..uses.len() - 1].iter().all(Option::is_none));
    assert_eq!(uses.last(), Some(&Some(7)));
    let off: Tier<u32> = Tier::default();
    assert!((0..2 * Mode::HOT).all(|_| off.get(Mode::Off, || Some(7)).is_none()));
}

fn dict(pairs: &[(&str, Value)]) -> Value {
    let mut d = runtime::Dict::default();
    for (k, v) in pairs {
        d.insert(Value::str(*k), v.clone());
    }
    Value::dict(d)
}

#[test]
fn a_predicate_reads_fields_and_does_integer_arithmetic() {
    let p = Predicate::compile(predicate("$.x + $.y * 2 > 10 and $.name in list(a, b, c)").ir())
        .unwrap();
    let row = |x: Value, y: i64, name: &str| {
        dict(&[("x", x), ("y", Value::Int(y)), ("name", Value::str(name))])
    };
    assert_eq!(p.eval(&row(Value::Int(5), 3, "a")), Some(true));
    assert_eq!(p.eval(&row(Value::Int(5), 2, "a")), Some(false));
    assert_eq!(p.eval(&row(Value::Int(9), 9, "d")), Some(false));
    // A float, an overflow, a missing field, a `$` that is no dict: the
    // interpreter decides.
    assert_eq!(p.eval(&row(Value::Float(5.0), 3, "a")), None);
    assert_eq!(p.eval(&row(Value::Int(i64::MAX), 3, "a")), None);
    assert_eq!(p.eval(&dict(&[("y", Value::Int(1))])), None);
    assert_eq!(p.eval(&Value::Int(3)), None);
    // Nested fields; a missing one is the interpreter's (a KeyError).
    let q = Predicate::compile(predicate("$.a.b = 1 or $.c = null").ir()).unwrap();
    assert_eq!(
        q.eval(&dict(&[("a", dict(&[("b", Value::Int(1))]))])),
        Some(true)
    );
    let no_b = dict(&[("a", dict(&[("b", Value::Int(2))])), ("c", Value::Int(2))]);
    assert_eq!(q.eval(&no_b), Some(false));
    assert_eq!(q.eval(&dict(&[("a", dict(&[]))])), None);
}

#[test]
fn predicates_are_conditions() {
    for (src, why) in [
        ("$.x + 1", "conditions only"),
        ("$.x and $.y", "not a condition"),
        ("$.x > 1 and $.y", "not a condition"),
        ("$.x.len() > 1", "function len()"),
        ("$.x.get($.y) = 1", "get() of anything but a constant key"),
    ] {
        let e = Predicate::compile(predicate(src).ir()).unwrap_err();
        assert!(e.0.contains(why), "{src}: {e}");
    }
}

/// A host answering `class()` links as the engine would over a store
/// whose object ids are "n…" (becoming the string "obj:n…") and "f…"
/// (ids of a streamed model: passing as they are).
struct Store;

impl Host for Store {
    fn class(&self, step: usize, v: &Value) -> Verdict {
        assert_eq!(step, 0, "the class() link is the chain's first");
        match v {
            Value::Null => Verdict::Same,
            Value::Str(s) if s.starts_with('n') => Verdict::Becomes(Value::str(format!("obj:{s}"))),
            Value::Str(s) if s.starts_with('f') => Verdict::Same,
            _ => Verdict::Ask,
        }
    }
}

#[test]
fn a_class_link_asks_the_host_and_stops_where_it_cannot_answer() {
    let class = LinkKind::Class {
        name: crate::murano::ir::Operand::of(&crate::yaql::parse("X", Default::default()).unwrap()),
        default: None,
        version: None,
    };
    let n = Native::compile(&[Step::plain(&class), Step::plain(&LinkKind::NotNull)]).unwrap();
    let ids = |xs: &[&str]| xs.iter().map(|s| Value::str(*s)).collect::<Vec<_>>();
    let mut became = Vec::new();
    // Item 3 of 5 is no id the host knows: the loop stops there, and only
    // the items before it keep what they became.
    let items = ids(&["n1", "f2", "x3", "n4", "n5"]);
    assert_eq!(n.first_failing_in(&Store, &items, &mut became), 2);
    assert_eq!(became.len(), 1);
    assert_eq!((became[0].0, became[0].1.as_str()), (0, Some("obj:n1")));
    // Null passes class() and fails notNull(): the interpreter's.
    became.clear();
    let mut items = ids(&["n1", "f2"]);
    items.push(Value::Null);
    assert_eq!(n.first_failing_in(&Store, &items, &mut became), 2);
    // Across batches, indexes are the list's.
    became.clear();
    let long: Vec<Value> = (0..40).map(|i| Value::str(format!("n{i}"))).collect();
    assert_eq!(n.first_failing_in(&Store, &long, &mut became), 40);
    assert_eq!(became.len(), 40);
    assert!(became
        .iter()
        .enumerate()
        .all(|(i, (j, v))| i == *j && v.as_str() == Some(&*format!("obj:n{i}"))));
    // Without a host (or a value the code has no arm for), nothing passes.
    assert_eq!(n.first_failing(&ids(&["n1"])), 0);
    assert!(n.check_in(&Store, &Value::Int(1)).is_none());
    assert!(matches!(n.check_in(&Store, &Value::str("f1")), Some(None)));
    assert!(matches!(
        n.check_in(&Store, &Value::str("n1")),
        Some(Some(_))
    ));
    let list = Value::list(ids(&["n1"]));
    assert!(n.check_in(&Store, &list).is_none());
}

#[test]
fn a_statement_condition_reads_variables_and_takes_any_value_s_truth() {
    let p =
        Predicate::truth(predicate("$x = null or $x.n > 2 and $x.tag in list(a, b)").ir()).unwrap();
    assert_eq!(p.vars().len(), 1);
    let x = |v: Value| move |n: &str| (n == "x").then(|| v.clone());
    let row = dict(&[("n", Value::Int(3)), ("tag", Value::str("b"))]);
    assert_eq!(p.eval_with(&Value::Null, &mut x(row)), Some(true));
    assert_eq!(p.eval_with(&Value::Null, &mut x(Value::Null)), Some(true));
    let low = dict(&[("n", Value::Int(1)), ("tag", Value::str("b"))]);
    assert_eq!(p.eval_with(&Value::Null, &mut x(low)), Some(false));
    // A float compares with the integer; a string, a missing key, a list
    // are the interpreter's; no variables given: the interpreter's too.
    let float = dict(&[("n", Value::Float(2.5)), ("tag", Value::str("b"))]);
    assert_eq!(p.eval_with(&Value::Null, &mut x(float)), Some(true));
    let s = dict(&[("n", Value::str("3")), ("tag", Value::str("b"))]);
    assert_eq!(p.eval_with(&Value::Null, &mut x(s)), None);
    assert_eq!(
        p.eval_with(&Value::Null, &mut x(dict(&[("tag", Value::str("a"))]))),
        None
    );
    assert_eq!(p.eval_with(&Value::Null, &mut x(Value::list(vec![]))), None);
    assert_eq!(p.eval(&Value::Null), None);
    // Truth of a value read, which a lambda's predicate does not compile.
    let t = Predicate::truth(predicate("$flag").ir()).unwrap();
    assert_eq!(
        t.eval_with(&Value::Null, &mut |_| Some(Value::str(""))),
        Some(false)
    );
    assert_eq!(
        t.eval_with(&Value::Null, &mut |_| Some(Value::Int(2))),
        Some(true)
    );
    assert!(Predicate::compile(predicate("$flag").ir()).is_err());
}

/// Objects as a test names them: `a` (size 3, name "alpha", child `b`,
/// attribute `seen` set) and `b` (size 1, no attributes); anything else
/// is the interpreter's.
struct Objs;

fn object(id: &str) -> Value {
    Value::Object(Arc::new(runtime::value::ObjRef {
        id: id.into(),
        class: "ex.C".into(),
        slot: 0,
        store: 0,
    }))
}

impl Objects for Objs {
    fn property(&self, o: &Value, name: &str) -> Option<Value> {
        let Value::Object(r) = o else { return None };
        match (&*r.id, name) {
            ("a", "size") => Some(Value::Int(3)),
            ("a", "name") => Some(Value::str("alpha")),
            ("a", "child") => Some(object("b")),
            ("b", "size") => Some(Value::Int(1)),
            _ => None,
        }
    }

    fn attr(&self, o: &Value, name: &str) -> Option<Option<Value>> {
        let Value::Object(r) = o else { return None };
        match (&*r.id, name) {
            ("a", "seen") => Some(Some(Value::Bool(true))),
            ("b", "seen") => Some(None),
            _ => None,
        }
    }
}

#[test]
fn a_condition_reads_objects_through_the_host_and_deopts_where_it_cannot() {
    let mut r = registry();
    r.group("murano");
    r.method(
        "getAttr",
        vec![p("obj", Ty::Any), p("name", Ty::Str), p("default", Ty::Any)],
        stub,
    );
    let truth = |src: &str| {
        Predicate::truth(compile(src, &r, CompileOptions::default()).unwrap().ir()).unwrap()
    };
    let (a, b) = (object("a"), object("b"));
    let no_vars = &mut |_: &str| None;
    let p = truth("$.size > 2 and $.child.size < 2 and $.name = alpha");
    assert_eq!(p.eval_in(Some(&Objs), &a, no_vars), Some(true));
    // Without a host, an object is the interpreter's.
    assert_eq!(p.eval(&a), None);
    let seen = truth("not $.getAttr(seen, false)");
    assert_eq!(seen.eval_in(Some(&Objs), &a, no_vars), Some(false));
    // Unset: the call's default.
    assert_eq!(seen.eval_in(Some(&Objs), &b, no_vars), Some(true));
    // A property or attribute the host leaves to the interpreter, `get()`
    // of an object (a dict's method), `getAttr()` of a dict: deopt.
    assert_eq!(
        truth("$.missing > 1").eval_in(Some(&Objs), &a, no_vars),
        None
    );
    assert_eq!(
        truth("$.get(size) > 2").eval_in(Some(&Objs), &a, no_vars),
        None
    );
    assert_eq!(
        truth("$.getAttr(other, 1) = 1").eval_in(Some(&Objs), &a, no_vars),
        None
    );
    let d = dict(&[("seen", Value::Bool(true))]);
    assert_eq!(seen.eval_in(Some(&Objs), &d, no_vars), None);
    // `getAttr` that is not the engine's (a host's own) stays interpreted.
    assert!(Predicate::truth(predicate("$.getAttr(seen)").ir()).is_err());
}

/// The library's string functions a string-building lambda uses, as the
/// library registers them (bodies unused).
fn string_registry() -> Registry {
    let mut r = registry();
    r.group("strings");
    r.method("toUpper", vec![p("s", Ty::Str)], stub);
    r.method("toLower", vec![p("s", Ty::Str)], stub);
    r.function("str", vec![p("v", Ty::Any).nullable()], stub);
    r.method("startsWith", vec![p("s", Ty::Str), var("p", Ty::Str)], stub);
    r.method("endsWith", vec![p("s", Ty::Str), var("p", Ty::Str)], stub);
    r
}

#[test]
fn a_string_building_lambda_runs_directly_and_hands_over_what_it_cannot_build() {
    use vm::bc::Fast;
    let r = Arc::new(string_registry());
    let plan = |src: &str| {
        let p = compile(src, &r, CompileOptions::default()).unwrap();
        strings::Build::compile(p.ir(), p.ir().root)
    };
    let env = runtime::Env::new(r.clone(), Default::default());
    let b = plan("$.name.toUpper() + '-' + str($.id)").expect("a string plan");
    let row = |name: Value, id: Value| dict(&[("name", name), ("id", id)]);
    let got = |v: &Value| b.call(&env, v);
    assert_eq!(
        got(&row(Value::str("ann"), Value::Int(7))),
        Some(Value::str("ANN-7"))
    );
    assert_eq!(
        got(&row(Value::str("straße"), Value::Int(-1))),
        Some(Value::str("STRASSE--1"))
    );
    assert_eq!(
        got(&row(Value::str("x"), Value::str("id"))),
        Some(Value::str("X-id"))
    );
    // Not a string, not an integer, missing: the interpreter's.
    assert_eq!(got(&row(Value::Int(1), Value::Int(7))), None);
    assert_eq!(got(&row(Value::str("x"), Value::Bool(true))), None);
    assert_eq!(got(&row(Value::str("x"), Value::Float(1.5))), None);
    assert_eq!(got(&dict(&[("name", Value::str("x"))])), None);
    assert_eq!(got(&Value::str("x")), None);
    assert_eq!(
        plan("$.toLower() + $.toUpper()")
            .unwrap()
            .call(&env, &Value::str("aB")),
        Some(Value::str("abAB"))
    );
    // Past the memory quota: the interpreter's error.
    let small = runtime::Env::new(
        r.clone(),
        runtime::Options {
            memory_quota: Some(4),
            ..Default::default()
        },
    );
    assert_eq!(b.call(&small, &row(Value::str("ann"), Value::Int(7))), None);
    // What may add numbers, or builds nothing, has no string plan.
    assert!(plan("$.a + $.b").is_none());
    assert!(plan("$.name").is_none());
    assert!(plan("$.name + $x").is_none());
    assert!(plan("$.name.toUpper() + 1").is_none());
}

#[test]
fn starts_with_a_constant_compares_a_string_s_first_bytes() {
    let r = string_registry();
    let p = Predicate::compile(
        compile("$.startsWith('Ab')", &r, CompileOptions::default())
            .unwrap()
            .ir(),
    )
    .unwrap();
    assert_eq!(p.eval(&Value::str("Abc")), Some(true));
    assert_eq!(p.eval(&Value::str("Ab")), Some(true));
    assert_eq!(p.eval(&Value::str("A")), Some(false));
    assert_eq!(p.eval(&Value::str("xAb")), Some(false));
    assert_eq!(p.eval(&Value::Int(1)), None);
    let long = compile(
        "$.startsWith('héllo, wörld')",
        &r,
        CompileOptions::default(),
    )
    .unwrap();
    let long = Predicate::compile(long.ir()).unwrap();
    assert_eq!(long.eval(&Value::str("héllo, wörld!")), Some(true));
    assert_eq!(long.eval(&Value::str("héllo, world!")), Some(false));
    // More than one prefix, or a prefix that is not constant: interpreted.
    assert!(Predicate::compile(
        compile("$.startsWith(a, b)", &r, CompileOptions::default())
            .unwrap()
            .ir()
    )
    .is_err());
}

#[test]
fn ends_with_a_constant_compares_a_string_s_last_bytes() {
    let r = string_registry();
    let compiled = |src: &str| {
        Predicate::compile(compile(src, &r, CompileOptions::default()).unwrap().ir()).unwrap()
    };
    let p = compiled("$.endsWith('yz')");
    assert_eq!(p.eval(&Value::str("xyz")), Some(true));
    assert_eq!(p.eval(&Value::str("yz")), Some(true));
    assert_eq!(p.eval(&Value::str("z")), Some(false));
    assert_eq!(p.eval(&Value::str("yzx")), Some(false));
    assert_eq!(p.eval(&Value::str("")), Some(false));
    assert_eq!(p.eval(&Value::Null), None);
    let long = compiled("$.endsWith('wörld, héllo')");
    assert_eq!(long.eval(&Value::str("a wörld, héllo")), Some(true));
    assert_eq!(long.eval(&Value::str("a world, héllo")), Some(false));
    assert_eq!(compiled("$.endsWith('')").eval(&Value::str("")), Some(true));
}

#[test]
fn division_and_modulo_follow_python_on_every_sign() {
    let r = registry();
    let program = |src: &str| compile(src, &r, CompileOptions::default()).unwrap();
    let div = program("$.a / $.b");
    let modulo = program("$.a mod $.b");
    let (div, modulo) = (
        Number::compile(div.ir()).unwrap(),
        Number::compile(modulo.ir()).unwrap(),
    );
    let ints = [
        0,
        1,
        2,
        3,
        7,
        -1,
        -2,
        -3,
        -7,
        10,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
    ];
    let floats = [0.5, -2.5, 3.0, -0.0];
    let mut values: Vec<Value> = ints.iter().map(|&i| Value::Int(i)).collect();
    values.extend(floats.iter().map(|&f| Value::Float(f)));
    for a in &values {
        for b in &values {
            let row = dict(&[("a", a.clone()), ("b", b.clone())]);
            // Where the machine code answers, it answers as the library
            // does; a zero divisor and `MIN / -1` are the interpreter's.
            let want = runtime::num::div(a, b).ok();
            match div.eval(&row) {
                // Compared as written: an int is no float here.
                Some(got) => assert_eq!(format!("{got:?}"), format!("{:?}", want.unwrap())),
                None => assert!(
                    want.is_none() || matches!(want, Some(Value::BigInt(_))),
                    "{a:?} / {b:?} deopted"
                ),
            }
            let want = runtime::num::modulo(a, b).ok();
            match modulo.eval(&row) {
                Some(got) => assert_eq!(format!("{got:?}"), format!("{:?}", want.unwrap())),
                // Floats' modulo is the interpreter's.
                None => assert!(
                    want.is_none() || matches!(a, Value::Float(_)) || matches!(b, Value::Float(_)),
                    "{a:?} mod {b:?} deopted"
                ),
            }
        }
    }
    let row = |a: i64, b: i64| dict(&[("a", Value::Int(a)), ("b", Value::Int(b))]);
    assert_eq!(div.eval(&row(-7, 2)), Some(Value::Int(-4)));
    assert_eq!(modulo.eval(&row(-7, 3)), Some(Value::Int(2)));
    assert_eq!(modulo.eval(&row(7, -3)), Some(Value::Int(-2)));
    assert_eq!(modulo.eval(&row(i64::MIN, -1)), Some(Value::Int(0)));
    assert_eq!(div.eval(&row(i64::MIN, -1)), None);
    assert_eq!(div.eval(&row(1, 0)), None);
    // In a condition, on integers.
    let even = Predicate::compile(predicate("$ mod 2 = 0 and $ / 2 > 1").ir()).unwrap();
    assert_eq!(even.eval(&Value::Int(6)), Some(true));
    assert_eq!(even.eval(&Value::Int(2)), Some(false));
    assert_eq!(even.eval(&Value::Int(-4)), Some(false));
    assert_eq!(even.eval(&Value::Int(7)), Some(false));
    assert_eq!(even.eval(&Value::Float(6.0)), None);
}

#[test]
fn len_of_a_string_counts_its_characters() {
    let p = Predicate::compile(predicate("len($) > 2").ir()).unwrap();
    assert_eq!(p.eval(&Value::str("abc")), Some(true));
    assert_eq!(p.eval(&Value::str("ab")), Some(false));
    // Characters, not bytes: 2 characters in 4 bytes, 3 in 9.
    assert_eq!(p.eval(&Value::str("éé")), Some(false));
    assert_eq!(p.eval(&Value::str("日本語")), Some(true));
    assert_eq!(p.eval(&Value::str("")), Some(false));
    assert_eq!(p.eval(&Value::list(vec![Value::Null; 3])), Some(true));
    assert_eq!(p.eval(&Value::Int(5)), None);
    let q = Predicate::compile(predicate("len($) = 4").ir()).unwrap();
    assert_eq!(q.eval(&Value::str("a😀bé")), Some(true));
}

#[test]
fn in_over_a_list_read_compares_items_as_the_interpreter_does() {
    let p = Predicate::compile(predicate("$.x in $.xs").ir()).unwrap();
    let row = |x: Value, xs: Vec<Value>| dict(&[("x", x), ("xs", Value::list(xs))]);
    let s = Value::str;
    assert_eq!(p.eval(&row(s("b"), vec![s("a"), s("b")])), Some(true));
    assert_eq!(p.eval(&row(s("b"), vec![s("a"), s("bb")])), Some(false));
    assert_eq!(p.eval(&row(s("é"), vec![s("e"), s("é")])), Some(true));
    assert_eq!(p.eval(&row(s(""), vec![s("a"), s("")])), Some(true));
    assert_eq!(p.eval(&row(s("1"), vec![Value::Int(1)])), Some(false));
    assert_eq!(
        p.eval(&row(Value::Int(1), vec![Value::Bool(true)])),
        Some(true)
    );
    assert_eq!(
        p.eval(&row(Value::Int(2), vec![Value::Bool(true)])),
        Some(false)
    );
    assert_eq!(
        p.eval(&row(Value::Null, vec![Value::Int(0), Value::Null])),
        Some(true)
    );
    assert_eq!(p.eval(&row(Value::Int(0), vec![Value::Null])), Some(false));
    assert_eq!(
        p.eval(&row(Value::Float(1.5), vec![Value::Float(1.5)])),
        Some(true)
    );
    assert_eq!(p.eval(&row(s("a"), vec![])), Some(false));
    // Long lists run through; what the code has no rule for deopts.
    let many: Vec<Value> = (0..100).map(|i| Value::str(format!("k{i}"))).collect();
    assert_eq!(p.eval(&row(s("k99"), many.clone())), Some(true));
    assert_eq!(p.eval(&row(s("k100"), many)), Some(false));
    assert_eq!(p.eval(&row(Value::Int(1), vec![Value::Float(1.0)])), None);
    assert_eq!(
        p.eval(&row(Value::Float(f64::NAN), vec![Value::Float(1.0)])),
        None
    );
    assert_eq!(p.eval(&row(s("a"), vec![Value::list(vec![])])), None);
    assert_eq!(p.eval(&dict(&[("x", s("a")), ("xs", s("abc"))])), None);
}
