//! The checker's forms follow the IR's; a chain run by its steps, or by
//! its machine code, agrees with the whole chain as YAQL.

use super::check::{at_contract, native_of, run_steps, value_frame, At, Check, DictKey};
use super::*;
use compiler::murano::ir::LinkKind;
use compiler::murano::load_classes;

fn contract(c: &str) -> Result<Contract> {
    contract_with(c, jit::Mode::Off)
}

fn contract_with(c: &str, mode: jit::Mode) -> Result<Contract> {
    let src = format!("Name: T\nProperties:\n  p:\n    Contract: {c}\n");
    let classes = load_classes(&src, "T.yaml", LoadOptions::default()).unwrap();
    let opts = CompileOptions {
        legacy: false,
        murano: true,
    };
    Contract::compile(
        &classes[0].properties[0].contract,
        &crate::contract_registry(false),
        opts,
        mode,
    )
}

/// What a contract needs besides its value is read from the IR.
#[test]
fn reach_is_read_from_the_ir() {
    for (src, want) in [
        ("$.int().notNull().check($ > 0 and $ < 65536)", Reach::Value),
        ("[$.string()]", Reach::Value),
        ("{a: $.int(), $.string(): $.bool()}", Reach::Value),
        ("$.string().check($.len() < 5, \"too long\")", Reach::Value),
        ("$.class(Server).notNull()", Reach::Classes),
        ("[$.class(Server), 1]", Reach::Classes),
        ("$.class(Server).check($.x > 1)", Reach::Execution),
        ("$.check($this.x > 1)", Reach::Execution),
        ("$.check(new(X) != null)", Reach::Execution),
        ("$.template(X)", Reach::Execution),
        // A version spec the engine's `class()` does not check: the whole
        // chain runs as YAQL.
        ("$.class(Server, Server, '>=1')", Reach::Execution),
        ("$x.int()", Reach::Execution),
        ("[]", Reach::Value),
        ("$.owned()", Reach::Execution),
    ] {
        assert_eq!(contract(src).unwrap().reach(), want, "{src}");
    }
}

/// The template decision is the IR's, made on the syntax tree.
#[test]
fn template_contracts_are_decided_by_the_ir() {
    for (src, want) in [
        ("$.template(X)", true),
        ("[$.string().template(X)]", true),
        ("$.int()", false),
        ("[$.int(), $.template(X)]", false),
        ("$.check($ != '.template(')", false),
    ] {
        assert_eq!(contract(src).unwrap().is_template(), want, "{src}");
    }
}

/// The checker's forms are the IR's.
#[test]
fn checkers_follow_the_ir_forms() {
    let c = contract("[$.int(), 1, 2]").unwrap();
    let Check::List(items, 1, Some(2)) = &c.check else {
        panic!("not a list of 1..2")
    };
    assert!(
        matches!(items[..], [Check::Chain { ref steps, ref whole, ref pos, .. }]
        if matches!(steps[..], [ref s] if s.kind == LinkKind::Int)
            && whole.source() == "$.int()" && &**pos == "T.yaml:4:16")
    );
    let c = contract("{a: 1, $.string(): $}").unwrap();
    let Check::Dict(items) = &c.check else {
        panic!("not a dict")
    };
    assert!(matches!(&items[..], [
        (DictKey::Const(k), Check::Const(Value::Int(1))),
        (DictKey::Expr(Check::Chain { .. }), Check::Any),
    ] if k.as_str() == Some("a")));
    let e = contract("$.int(").err();
    assert!(
        e.is_none(),
        "`$.int(` is a string constant, not an expression"
    );
    assert!(matches!(contract("$").unwrap().check, Check::Any));
    // Null is anything; a list without item contracts takes any item.
    assert!(matches!(contract("null").unwrap().check, Check::Any));
    assert!(matches!(
        &contract("[1, 3]").unwrap().check,
        Check::List(items, 1, Some(3)) if matches!(items[..], [Check::Any])
    ));
    // `class()` with a default class is a step.
    assert!(matches!(
        &contract("$.class(X, Y)").unwrap().check,
        Check::Chain { steps, .. }
            if matches!(steps[0].kind, LinkKind::Class { default: Some(_), .. })
    ));
    // Chains with anything but the plain coercions stay whole.
    for src in [
        "$.int().check($ > 0, 'positive')",
        "$.class(X, null, '>=1')",
        "$x.int()",
        "$.int() + 1",
    ] {
        assert!(
            matches!(contract(src).unwrap().check, Check::Expr(..)),
            "{src}"
        );
    }
}

/// A chain run step by step gives what the whole chain gives, value
/// for value and error for error.
#[test]
fn chains_run_by_steps_agree_with_the_whole_expression() {
    let ex = Executor::new(Vec::new());
    let env = ex.env(false).clone();
    let ctx = Frame::root(Value::Null);
    let values: Vec<Value> = [
        "null",
        "0",
        "7",
        "-3",
        "70000",
        "2.9",
        "true",
        "false",
        "\"12\"",
        "\" 5 \"",
        "\"x\"",
        "\"False\"",
        "\"TRUE\"",
        "\"\"",
        "[1, 2]",
        "[]",
        "{\"a\": 1}",
        "123456789012345678901234567890",
    ]
    .iter()
    .map(|j| runtime::json::from_tagged_str(j).unwrap())
    .collect();
    for src in [
        "$.int()",
        "$.string()",
        "$.bool()",
        "$.notNull()",
        "$.int().notNull()",
        "$.int().notNull().check($ > 0 and $ < 65536)",
        "$.string().notNull().check($.len() > 1)",
        "$.bool().notNull()",
        "$.check($ != 7).int()",
        "$.string().int()",
        "$.owned()",
        "$.string().notOwned()",
        "$.int().owned().notNull()",
        "$.class(X)",
        "$.class('X').notNull()",
        // `ns:Name` names resolve as the expression does (`#operator_:`).
        "$.class(:X)",
        "$.class(zz:X).notNull()",
    ] {
        let c = contract(src).unwrap();
        let Check::Chain {
            steps, whole, pos, ..
        } = &c.check
        else {
            panic!("{src} is not a chain")
        };
        for v in &values {
            let by_steps = at_contract(
                run_steps(steps, &env, &ctx, v.clone(), None)
                    .and_then(|r| stdlib::finalize(&env, r)),
                At::Top,
                pos,
            );
            let at_once = at_contract(
                whole
                    .eval_in(&env, &value_frame(&ctx, v.clone(), None))
                    .and_then(|r| stdlib::finalize(&env, r)),
                At::Top,
                pos,
            );
            let show = |r: &Result<Value>| match r {
                Ok(v) => format!("ok {}", runtime::pyrepr::repr(v)),
                Err(e) => format!("{}: {}", e.kind(), e.message()),
            };
            assert_eq!(show(&by_steps), show(&at_once), "{src} on {v:?}");
        }
    }
}

/// Whatever the machine code passes, the interpreter passes unchanged:
/// every predicate form the JIT compiles, on values of every kind.
#[test]
fn what_the_jit_passes_the_interpreter_passes_unchanged() {
    let ex = Executor::new(Vec::new());
    ex.catalog().set_jit(jit::Mode::Always);
    let env = ex.env(false).clone();
    let ctx = Frame::root(Value::Null);
    let mut values: Vec<Value> = [
        "null",
        "0",
        "1",
        "7",
        "-3",
        "65535",
        "65536",
        "2.9",
        "0.0",
        "-0.5",
        "1.0",
        "true",
        "false",
        "\"TCP\"",
        "\"tcp\"",
        "\"\"",
        "\"12\"",
        "\"a-much-longer-string\"",
        "[1]",
        "{\"a\": 1}",
        "123456789012345678901234567890",
    ]
    .iter()
    .map(|j| runtime::json::from_tagged_str(j).unwrap())
    .collect();
    values.extend([
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Float(9007199254740993.0),
    ]);
    let mut passed = 0;
    for src in [
        "$.notNull().check(isInteger($) and $ > 0 and $ < 65536)",
        "$.int().check($ >= 0)",
        "$.string().notNull().check($ in list(TCP, UDP, ''))",
        "$.check($ in [1, 2.9, true, null, 'a-much-longer-string'])",
        "$.check($ = 1 or $ = 0.0 or $ = false or $ = null)",
        "$.check($ != 1 and not ($ = 'TCP'))",
        "$.check(isNumber($) or isBoolean($) or isString($))",
        "$.check($)",
        "$.check(not $)",
        "$.check(1 < $ and 2.5 >= $)",
        "$.check($ > 9007199254740992)",
        "$.bool().check($ = true)",
        "$.string().check($.matches('^[a-z]+$'))",
        "$.check($ =~ '[0-9]' and not $.startsWith('1'))",
        "$.notNull().owned().check($ != 0)",
        "$.string().notOwned()",
    ] {
        let c = contract_with(src, jit::Mode::Always).unwrap();
        let Check::Chain { steps, tier, .. } = &c.check else {
            panic!("{src} is not a chain")
        };
        let n = tier
            .get(jit::Mode::Always, || native_of(steps))
            .unwrap_or_else(|| panic!("{src} did not compile"));
        for v in &values {
            if !n.passes(v) {
                continue;
            }
            passed += 1;
            let r = run_steps(steps, &env, &ctx, v.clone(), None)
                .and_then(|r| stdlib::finalize(&env, r));
            let show = |v: &Value| format!("{v:?}");
            match r {
                Ok(got) => assert_eq!(show(&got), show(v), "{src} on {v:?}"),
                Err(e) => panic!("{src} on {v:?}: the JIT passed, the interpreter says {e}"),
            }
        }
    }
    assert!(passed > 60, "only {passed} values passed natively");
}

/// A list whose items the machine code checks hands the items it cannot
/// pass to the interpreter mid-loop; the result is the interpreter's.
#[test]
fn a_list_check_resumes_after_the_item_the_interpreter_took() {
    let env_of = |mode| {
        let ex = Executor::new(Vec::new());
        ex.catalog().set_jit(mode);
        ex
    };
    for items in [
        "[1, 2, 3]",
        "[1, \"2\", 3, \" 4 \", 5]",
        "[1, 2.7, 3]",
        "[1, 2, 0, 3]",
        "[1, \"x\", 3]",
        "[1, null, 3]",
    ] {
        let v = runtime::json::from_tagged_str(items).unwrap();
        let mut seen = Vec::new();
        for mode in [jit::Mode::Off, jit::Mode::Always] {
            let ex = env_of(mode);
            let env = ex.env(false).clone();
            let ctx = Frame::root(Value::Null);
            let c = contract_with("[$.int().check($ > 0), 1]", mode).unwrap();
            let r = c.check(&ex, &env, &ctx, v.clone(), None, "p");
            seen.push(match r {
                Ok(v) => format!("ok {}", runtime::pyrepr::repr(&v)),
                Err(e) => format!("{}: {}", e.kind(), e.message()),
            });
        }
        assert_eq!(seen[0], seen[1], "{items}");
    }
    // The answers themselves, with the machine code on.
    let ex = env_of(jit::Mode::Always);
    let env = ex.env(false).clone();
    let ctx = Frame::root(Value::Null);
    let c = contract_with("[$.int().check($ > 0), 1]", jit::Mode::Always).unwrap();
    let check = |j: &str| {
        c.check(
            &ex,
            &env,
            &ctx,
            runtime::json::from_tagged_str(j).unwrap(),
            None,
            "p",
        )
    };
    assert_eq!(
        runtime::pyrepr::repr(&check("[1, \" 2\", 3.5]").unwrap()),
        "(1, 2, 3)"
    );
    let e = check("[1, 2, 0, 3]").unwrap_err();
    assert!(
        e.message()
            .starts_with("[2]: Value 0 doesn't match predicate (contract at T.yaml:4:16)"),
        "{}",
        e.message()
    );
    assert!(c.holds(&ex, &runtime::json::from_tagged_str("[1, 2]").unwrap()));
    assert!(!c.holds(&ex, &runtime::json::from_tagged_str("[1, \"2\"]").unwrap()));
    assert!(!c.holds(&ex, &runtime::json::from_tagged_str("[]").unwrap()));
}
