//! Unit tests of the MuranoPL IR: statement recognition and its errors,
//! destinations, contracts, and the verifier.
//!
//! The error texts are the engine's: each was checked against the engine's
//! own statement compiler (exec.rs / contracts.rs) on the same input.

use std::sync::Arc;

use runtime::Value;

use super::expr::rebase;
use super::*;
use crate::murano::{load_classes, LoadOptions, Node, Pos};

fn method_body(src: &str, opts: LoadOptions) -> Node {
    let classes = load_classes(src, "T.yaml", opts).unwrap();
    classes[0].methods[0].body.clone().expect("a body")
}

/// The YAML of a class whose method `m` has `body` (indented as a list
/// under `Body:`).
fn class_with_body(body: &str) -> String {
    let ind: Vec<String> = body
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("      {l}")
            }
        })
        .collect();
    format!("Name: T\nMethods:\n  m:\n    Body:\n{}\n", ind.join("\n"))
}

fn lower(body: &str) -> Block {
    let node = method_body(&class_with_body(body), LoadOptions::default());
    lower_body(&node, LoadOptions::default()).unwrap()
}

fn lower_err(body: &str) -> (String, String) {
    let node = method_body(&class_with_body(body), LoadOptions::default());
    let e = lower_body(&node, LoadOptions::default()).unwrap_err();
    (e.kind().to_string(), e.message().to_string())
}

fn contract(c: &str) -> Contract {
    contract_opts(c, LoadOptions::default())
}

fn contract_opts(c: &str, opts: LoadOptions) -> Contract {
    let src = format!("Name: T\nProperties:\n  p:\n    Contract: {c}\n");
    let classes = load_classes(&src, "T.yaml", opts).unwrap();
    lower_contract(&classes[0].properties[0].contract, opts).unwrap()
}

// ---- statements ---------------------------------------------------------

#[test]
fn malformed_statements_fail_as_the_engine_fails() {
    let syntax = "DslSyntaxError";
    for (body, kind, msg) in [
        (
            "- If: $a\n  Then: x\n  Foo: 1",
            "SyntaxError",
            "T.yaml:7:9: unexpected key 'Foo' in statement",
        ),
        (
            "- If: $a\n  [1]: 2",
            "SyntaxError",
            "T.yaml:6:9: unexpected key '' in statement",
        ),
        ("- For: i\n  Do: [x]", syntax, "T.yaml:5:9: For needs In"),
        (
            "- For: i\n  In: $x\n  Else: 1",
            "SyntaxError",
            "T.yaml:7:9: unexpected key 'Else' in statement",
        ),
        ("- Match: {1: $x}", syntax, "T.yaml:5:9: Match needs Value"),
        (
            "- Match: [1]\n  Value: 2",
            syntax,
            "T.yaml:5:16: expected a mapping of cases",
        ),
        (
            "- Switch: 5",
            syntax,
            "T.yaml:5:17: expected a mapping of cases",
        ),
        (
            "- Break:\n  Do: 1",
            "SyntaxError",
            "T.yaml:6:9: unexpected key 'Do' in statement",
        ),
        (
            "- Try: [x]\n  Catch: []\n  With: e",
            "SyntaxError",
            "T.yaml:7:9: unexpected key 'With' in statement",
        ),
        (
            "- Throw: e\n  Messag: m",
            "SyntaxError",
            "T.yaml:6:9: unexpected key 'Messag' in statement",
        ),
        // Keywords are tried in order; the first one decides the keys.
        (
            "- If: 1\n  Return: 2",
            "SyntaxError",
            "T.yaml:5:9: unexpected key 'If' in statement",
        ),
        (
            "- While: 1\n  For: x\n  In: 2",
            "SyntaxError",
            "T.yaml:6:9: unexpected key 'For' in statement",
        ),
        (
            "- $x[: 1",
            syntax,
            "T.yaml:5:9: bad assignment target `$x[`: unexpected end of statement",
        ),
        (
            "- $$x: 1",
            syntax,
            "T.yaml:5:9: bad assignment target `$$x`: Parse error: unexpected '$x'",
        ),
        (
            "- $x[1, 2]: 3",
            syntax,
            "T.yaml:5:9: bad index in `$x[1, 2]`",
        ),
        (
            "- $x[a => 1]: 3",
            syntax,
            "T.yaml:5:9: bad index in `$x[a => 1]`",
        ),
        ("- 1.5: 2", syntax, "T.yaml:5:9: cannot assign to `1.5`"),
        (
            "- $x + 1: 2",
            syntax,
            "T.yaml:5:9: cannot assign to `$x + 1`",
        ),
        ("- $x?.y: 1", syntax, "T.yaml:5:9: cannot assign to `$x?.y`"),
        // Errors of the YAML reading of a template come through as they are.
        (
            "- {[1]: 2}",
            "ConstructorError",
            "T.yaml:5:10: found unhashable key while constructing a mapping",
        ),
        (
            "- !yaql '1 +'",
            "YaqlGrammarException",
            "T.yaml:5:15: in expression \"1 +\": unexpected end of statement",
        ),
    ] {
        assert_eq!(
            lower_err(body),
            (kind.to_string(), msg.to_string()),
            "{body}"
        );
    }
}

#[test]
fn the_first_error_in_reading_order_wins() {
    // The clauses of a Try are read before its body.
    let (_, msg) = lower_err("- Try:\n    - For: a\n  Catch:\n    Do:\n      - For: b");
    assert_eq!(msg, "T.yaml:9:15: For needs In");
    // The cases of a Match before its Value.
    let (_, msg) = lower_err("- Match: 5");
    assert_eq!(msg, "T.yaml:5:16: expected a mapping of cases");
}

#[test]
fn statement_forms_and_positions() {
    let b = lower("- trace(1)\n- $x: 1\n- Return:\n- If: $a\n  Then: [$x]");
    let kinds: Vec<String> = b
        .stmts
        .iter()
        .map(|s| format!("{} {}", s.pos, s.to_string().trim_end()))
        .collect();
    assert_eq!(
        kinds,
        [
            "T.yaml:5:9 expr e0`trace(1)` @5:9",
            "T.yaml:6:9 assign $x = 1 @6:9",
            "T.yaml:7:9 return @7:9",
            "T.yaml:8:9 if e1`$a` @8:9\n  expr e2`$x` @9:16",
        ]
    );
    // A plain string, a number, a dict of no keyword: syntax errors
    // (murano/dsl/expressions.py `parse_expression`).
    for (body, at) in [
        ("- {a: 1, b: 2}", "5:9"),
        ("- foo: bar", "5:9"),
        ("- 42", "5:9"),
        ("- If: $a\n  Then: [x]", "6:16"),
    ] {
        let (kind, msg) = lower_err(body);
        assert_eq!(kind, "SyntaxError", "{body}");
        assert!(
            msg.starts_with(&format!("T.yaml:{at}: Syntax is incorrect")),
            "{body}: {msg}"
        );
    }
    // A body that is one statement, or null.
    let node = method_body(
        "Name: T\nMethods:\n  m:\n    Body:\n      Return: 5\n",
        LoadOptions::default(),
    );
    let b = lower_body(&node, LoadOptions::default()).unwrap();
    assert_eq!(b.to_string(), "return 5 @5:7\n");
    let node = crate::murano::load_documents("~", "T.yaml")
        .unwrap()
        .remove(0);
    assert!(lower_body(&node, LoadOptions::default())
        .unwrap()
        .stmts
        .is_empty());
}

#[test]
fn loops_and_clauses_decide_break_continue_and_rethrow() {
    let b = lower(
        "- Break:\n- While: $t\n  Do:\n    - Try:\n        - Break:\n      Catch:\n        - Do: [Continue: , Rethrow: ]\n      Finally: [Break: ]\n    - Parallel:\n        - [Break: , Continue: ]\n- Rethrow:",
    );
    let text = b.to_string();
    assert_eq!(
        text,
        "invalid break (\"Break cannot be used on method level\") @5:9\n\
         while e0`$t` @6:9\n  \
           try @8:13\n    \
             break @9:17\n  \
           catch * @11:17\n    \
             continue @11:22\n    \
             rethrow @11:34\n  \
           finally\n    \
             break @12:23\n  \
           parallel @13:13\n    \
             branch 0\n      \
               invalid break (\"Break cannot be used on method level\") @14:18\n      \
               invalid continue (\"Continue cannot be used on method level\") @14:27\n\
         invalid rethrow (\"Rethrow outside of a Catch block\") @15:9\n"
    );
    assert_eq!(InvalidOp::Break.code(), 0);
    assert_eq!(InvalidOp::Continue.code(), 1);
    assert_eq!(InvalidOp::Rethrow.code(), 2);
}

#[test]
fn catch_clauses_read_with_as_and_do_as_the_engine_does() {
    let b = lower(
        "- Try: [$x]\n  Catch:\n    - With: [ns:A, B, [C]]\n      As: $$e\n    - With:\n    - With: ''\n    - just a scalar",
    );
    let StmtKind::Try { catches, .. } = &b.stmts[0].kind else {
        panic!()
    };
    let got: Vec<(Vec<String>, Option<Arc<str>>)> = catches
        .iter()
        .map(|c| (c.with.clone(), c.as_.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (vec!["ns:A".to_string(), "B".to_string()], Some("e".into())),
            // An empty value reads as the scalar `~`.
            (vec!["~".to_string()], None),
            (vec![String::new()], None),
            (vec![], None),
        ]
    );
    assert_eq!(catches[3].pos.to_string(), "T.yaml:11:13");
}

#[test]
fn expressions_are_numbered_in_compile_order_and_not_reparsed() {
    let b = lower(
        "- Match:\n    1: [trace(a)]\n  Value: $v\n- Try: [trace(b)]\n  Catch:\n    Do: [trace(c)]\n- $x[$i][$j]: $w",
    );
    let mut seen = Vec::new();
    let mut walk =
        |t: &Tmpl| t.for_each_expr(&mut |y| seen.push((y.id.index(), y.src.to_string())));
    let StmtKind::Match { value, cases, .. } = &b.stmts[0].kind else {
        panic!()
    };
    assert_eq!(cases[0].key.as_const(), Some(&Value::Int(1)));
    walk(value);
    let StmtKind::Assign { value, .. } = &b.stmts[2].kind else {
        panic!()
    };
    walk(value);
    assert_eq!(seen, [(1, "$v".to_string()), (6, "$w".to_string())]);
    assert!(b
        .to_string()
        .contains("try @8:9\n  expr e3`trace(b)` @8:15\ncatch * @10:11\n  expr e2`trace(c)`"));
    assert!(b.to_string().contains("assign $x[e5`$i`][e4`$j`] = e6`$w`"));
}

#[test]
fn destinations_follow_the_engine_rules() {
    let cases = [
        ("$x", "$x"),
        ("$", "$"),
        ("$this", "$this"),
        ("$[0]", "$[e0`0`]"),
        ("$1", "$1"),
        ("$x.a[0].b", "$x.a[e0`0`].b"),
        ("$obj.prop", "$obj.prop"),
        ("$.p[$i]", "$.p[e0`$i`]"),
        ("$this.a.b", "$.a.b"),
        ("$x['k']['a b']", "$x.k[\"a b\"]"),
        ("$x['']", "$x[\"\"]"),
        ("abc.def", "(e0`abc`).def"),
        (":T.p[0]", "(e1`:T`).p[e0`0`]"),
        ("$x.f(1).g.h[$i]", "(e1`$x.f(1)`).g.h[e0`$i`]"),
        ("$x.(1).y", "(e0`$x.(1)`).y"),
        ("($x).a", "$x.a"),
        ("$.Return", "$.Return"),
        ("Return.x", "(e0`Return`).x"),
    ];
    for (key, want) in cases {
        let b = lower(&format!("- {key}: 1"));
        let StmtKind::Assign { dest, .. } = &b.stmts[0].kind else {
            panic!("{key}: {b}")
        };
        assert_eq!(dest.to_string(), want, "{key}");
        assert_eq!(dest.src.as_ref(), key);
    }
    let b = lower("- $this.p: 1\n- $x.p: 2\n- :T.p: 3");
    let roots: Vec<&DestRoot> = b
        .stmts
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Assign { dest, .. } => &dest.root,
            _ => panic!(),
        })
        .collect();
    assert_eq!(roots[0], &DestRoot::Prop("p".into()));
    assert_eq!(roots[1], &DestRoot::Local("x".into()));
    let DestRoot::Of(base, name) = roots[2] else {
        panic!()
    };
    assert_eq!((base.src.as_ref(), name.as_ref()), (":T", "p"));
    assert_eq!(base.role, Role::DestBase);
    // Not assignments (no `$` or `.`, or more than one key), nor block
    // constructs: syntax errors, as murano's `parse_expression`
    // (murano/dsl/expressions.py) raises.
    for body in ["- foo: 1", "- $x: 1\n  $y: 2", "- :T: 1"] {
        let (kind, msg) = lower_err(body);
        assert_eq!(kind, "SyntaxError", "{body}");
        assert!(
            msg.starts_with("T.yaml:5:9: Syntax is incorrect"),
            "{body}: {msg}"
        );
    }
}

#[test]
fn legacy_bodies_parse_with_legacy_syntax() {
    let src = "Name: T\nMethods:\n  m:\n    Body:\n      - $x[$k]: f(a => 1)\n";
    let opts = LoadOptions { legacy: true };
    let b = lower_body(&method_body(src, opts), opts).unwrap();
    let StmtKind::Assign { dest, value } = &b.stmts[0].kind else {
        panic!()
    };
    assert_eq!(dest.to_string(), "$x[e0`$k`]");
    let TmplKind::Expr(y) = &value.kind else {
        panic!()
    };
    assert_eq!(y.ast.sexp(), "f((#operator_=> a 1))");
}

// ---- contracts ----------------------------------------------------------

#[test]
fn contract_chains_are_recognised_from_the_tree() {
    let c = contract("$.int().notNull().check($ > 0)");
    let ContractKind::Chain { expr, links } = &c.kind else {
        panic!("{c}")
    };
    let kinds: Vec<&str> = links.iter().map(|l| l.kind.method()).collect();
    assert_eq!(kinds, ["int", "notNull", "check"]);
    assert_eq!(links[1].text(&expr.src), "$.int().notNull()");
    let LinkKind::Check {
        predicate,
        message,
        shape,
    } = &links[2].kind
    else {
        panic!()
    };
    assert_eq!(predicate.sexp(), "(#operator_> $ 0)");
    assert!(message.is_none());
    assert!(matches!(
        shape,
        Predicate::Compare { subject, op: CmpOp::Gt, bound, subject_left: true }
            if subject.is_value() && bound.literal() == Some(&Value::Int(0))
    ));
    assert_eq!(c.pos.to_string(), "T.yaml:4:15");
    assert_eq!(expr.role, Role::Contract);

    for (src, want) in [
        (
            "$.class(Name).owned()",
            "chain e0`$.class(Name).owned()`: class(Name) -> owned @4:15\n",
        ),
        (
            "$.class(name => A, defaultName => B)",
            "chain e0`$.class(name => A, defaultName => B)`: class(A, default: B) @4:15\n",
        ),
        (
            "$.template(T, defaultType => D)",
            "chain e0`$.template(T, defaultType => D)`: template(T, default: D) @4:15\n",
        ),
        (
            "$.check(true, msg => 'no')",
            "chain e0`$.check(true, msg => 'no')`: check(true, message: 'no') @4:15\n",
        ),
        // Known names with other arguments stay generic calls.
        ("$.int(5)", "chain e0`$.int(5)`: call int(5) @4:15\n"),
        ("$.class()", "chain e0`$.class()`: call class() @4:15\n"),
        (
            "$.class(A, B, C)",
            "chain e0`$.class(A, B, C)`: class(A, default: B, version: C) @4:15\n",
        ),
        (
            "$.class(A, B, C, D)",
            "chain e0`$.class(A, B, C, D)`: call class(A, B, C, D) @4:15\n",
        ),
        (
            "$.class(A, name => B)",
            "chain e0`$.class(A, name => B)`: call class(A, name => B) @4:15\n",
        ),
        // Not a chain on `$`: kept whole.
        ("$.int() + 1", "expr e0`$.int() + 1` @4:15\n"),
        // Not reading `$`: static.
        ("$x.int()", "static e0`$x.int()` @4:15\n"),
        ("$.int()[0]", "expr e0`$.int()[0]` @4:15\n"),
        ("($)", "expr e0`($)` @4:15\n"),
        // `$` alone (trimmed) is Any; null is Null.
        ("!yaql '  $ '", "any @4:21\n"),
        ("'$'", "const \"$\" @4:15\n"),
        ("", "null @4:13\n"),
        ("word", "const \"word\" @4:15\n"),
    ] {
        assert_eq!(contract(src).to_string(), want, "{src}");
    }
}

#[test]
fn legacy_keyword_arguments_bind_by_name() {
    let opts = LoadOptions { legacy: true };
    let c = contract_opts("$.class(A, defaultName => B)", opts);
    assert_eq!(
        c.to_string(),
        "chain e0`$.class(A, defaultName => B)`: class(A, default: B) @4:15\n"
    );
    // Without legacy syntax the same text is a named argument too.
    let c = contract("$.class(A, defaultName => B)");
    assert!(matches!(
        &c.kind,
        ContractKind::Chain { links, .. } if matches!(links[0].kind, LinkKind::Class { default: Some(_), .. })
    ));
}

/// The links of a chain, and its source text.
fn links(src: &str) -> (Arc<str>, Vec<Link>) {
    match contract(src).kind {
        ContractKind::Chain { expr, links } => (expr.src, links),
        k => panic!("{src}: {k:?}"),
    }
}

/// A `check()` predicate carries its shape: conjunctions of comparisons,
/// memberships and matches of `$`, a path under it or a length, with
/// their operands' forms, so that no consumer reads the syntax tree.
#[test]
fn check_predicates_carry_their_shape() {
    let (src, l) = links(
        "$.check(0 < $ and $.a.b in [x, y] and len($.c) >= 3 and $.matches(`^a`) and isString($))",
    );
    let LinkKind::Check { shape, .. } = &l[0].kind else {
        panic!("{l:?}")
    };
    let mut parts = Vec::new();
    let mut p = shape;
    while let Predicate::And(a, b) = p {
        parts.push(&**b);
        p = a;
    }
    parts.push(p);
    parts.reverse();
    assert_eq!(parts.len(), 5, "{shape:?}");
    let path = |s: &Subject| (s.path.join("."), s.len);
    match parts[0] {
        Predicate::Compare {
            subject,
            op: CmpOp::Lt,
            bound,
            subject_left: false,
        } => {
            assert_eq!(path(subject), (String::new(), false));
            assert_eq!(bound.form, OperandForm::Literal(Value::Int(0)));
        }
        other => panic!("{other:?}"),
    }
    match parts[1] {
        Predicate::In { subject, set } => {
            assert_eq!(path(subject), ("a.b".to_string(), false));
            assert_eq!(set.form, OperandForm::Static);
            assert_eq!(set.text(&src), "[x, y]");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parts[2],
        Predicate::Compare { subject, op: CmpOp::Ge, subject_left: true, .. }
            if path(subject) == ("c".to_string(), true)
    ));
    assert!(matches!(
        parts[3],
        Predicate::Matches { subject, pattern }
            if subject.is_value() && pattern.literal() == Some(&Value::str("^a"))
    ));
    assert_eq!(parts[4], &Predicate::Other);
    // A comparison of two expressions of `$` keeps the first as subject
    // and its bound reads `$`.
    let (_, l) = links("$.check($ > $.min)");
    assert!(matches!(
        &l[0].kind,
        LinkKind::Check { shape: Predicate::Compare { bound, subject_left: true, .. }, .. }
            if bound.form == OperandForm::Dynamic
    ));
    // Equality, on either side; a length compared for equality is not one.
    for src in ["$.check($.a = 12)", "$.check(12 = $.a)"] {
        let (_, l) = links(src);
        assert!(
            matches!(
                &l[0].kind,
                LinkKind::Check { shape: Predicate::Equals { subject, value }, .. }
                    if subject.path == ["a"] && value.form == OperandForm::Literal(Value::Int(12))
            ),
            "{src}: {:?}",
            l[0].kind
        );
    }
    let (_, l) = links("$.check(len($) = 2)");
    assert!(matches!(
        &l[0].kind,
        LinkKind::Check {
            shape: Predicate::Other,
            ..
        }
    ));
}

/// The arguments of `class()` and `template()` are operands: a name as
/// written, `ns:Name`, a constant of the class's context, or an
/// expression of `$`.
#[test]
fn class_and_template_arguments_are_operands() {
    let (_, l) = links("$.class(Name, ns:Default, '>=1')");
    let LinkKind::Class {
        name,
        default: Some(d),
        version: Some(v),
    } = &l[0].kind
    else {
        panic!("{l:?}")
    };
    assert_eq!(name.form, OperandForm::Literal(Value::str("Name")));
    assert_eq!(d.form, OperandForm::NsName("ns:Default".into()));
    assert_eq!(v.literal(), Some(&Value::str(">=1")));
    let (src, l) =
        links("$.template($this.kind(), excludeProperties => $.skip, versionSpec => null)");
    let LinkKind::Template {
        name,
        exclude: Some(e),
        default_type: None,
        version: Some(v),
    } = &l[0].kind
    else {
        panic!("{l:?}")
    };
    assert_eq!(
        (name.form.clone(), name.text(&src)),
        (OperandForm::Static, "$this.kind()")
    );
    assert_eq!(e.form, OperandForm::Dynamic);
    assert_eq!(v.literal(), Some(&Value::Null));
}

/// As murano's `Contract._map_list` (murano/dsl/contracts/contracts.py)
/// reads a list spec: a last integer is the minimum length, an integer
/// before it makes the two the minimum and maximum, and the items before
/// them are item contracts by position.
#[test]
fn list_contracts_follow_the_reference_rules() {
    let list = |src: &str| match contract(src).kind {
        ContractKind::List { items, min, max } => (
            items.iter().map(|c| c.to_string()).collect::<String>(),
            min,
            max,
        ),
        k => panic!("{src}: {k:?}"),
    };
    assert_eq!(
        list("[$.string(), 1, 5]"),
        ("chain e0`$.string()`: string @4:16\n".into(), 1, Some(5))
    );
    assert_eq!(list("[]"), (String::new(), 0, None));
    assert_eq!(list("[1, 2, 3]"), ("const 1 @4:16\n".into(), 2, Some(3)));
    // Item contracts by position; an integer not at the end is one.
    assert_eq!(
        list("[$.int(), $.string(), 0, 3, 7]"),
        (
            "chain e0`$.int()`: int @4:16\nchain e1`$.string()`: string @4:25\nconst 0 @4:37\n"
                .into(),
            3,
            Some(7)
        )
    );
    assert_eq!(list("[$.int(), -1]").1, -1);
    // Booleans are integers to Python; floats are not bounds.
    assert_eq!(list("[$.int(), true]").1, 1);
    assert_eq!(list("[$.int(), 1.5, 2]").1, 2);
    assert_eq!(list("[$.int(), 1.5, 2]").0.lines().count(), 2);
}

#[test]
fn dict_contracts_keep_constant_keys_and_key_contracts() {
    let c = contract("{$.string(): $.int(), name: $.string().notNull(), $: $}");
    let ContractKind::Dict(items) = &c.kind else {
        panic!()
    };
    assert!(
        matches!(&items[0].0, DictKey::Contract(k) if matches!(k.kind, ContractKind::Chain { .. }))
    );
    assert_eq!(items[1].0, DictKey::Const(Value::str("name")));
    assert!(matches!(
        &items[2].0,
        DictKey::Contract(Contract {
            kind: ContractKind::Any,
            ..
        })
    ));
    // Key before value, in order.
    let mut ids = Vec::new();
    c.for_each_expr(&mut |y| ids.push(y.src.to_string()));
    assert_eq!(ids, ["$.string()", "$.int()", "$.string().notNull()"]);
    assert!(matches!(contract("{}").kind, ContractKind::Dict(ref v) if v.is_empty()));
}

#[test]
fn template_contracts_are_detected_structurally() {
    for (src, want) in [
        ("$.template(X)", true),
        ("$.string().template(X).notNull()", true),
        ("$.string() or $.template(X)", true),
        ("$ .template(X)", true),
        ("[$.template(X)]", true),
        ("[[$.template(X)]]", true),
        ("[$.int(), $.template(X)]", false),
        ("{a: $.template(X)}", false),
        ("$.template", false),
        ("template($, X)", false),
        // Text inside a string is not a call.
        ("$.check($ != '.template(')", false),
    ] {
        assert_eq!(contract(src).is_template(), want, "{src}");
    }
}

#[test]
fn contract_compile_errors_are_contract_syntax_errors() {
    let c = contract("$.int()");
    let ContractKind::Chain { expr, .. } = &c.kind else {
        panic!()
    };
    let e = expr.wrap_error(runtime::Error::new("YaqlGrammarException", "boom"));
    assert_eq!(e.kind(), "DslContractSyntaxError");
    assert_eq!(e.message(), "T.yaml:4:15: boom in contract `$.int()`");
    let opts = crate::CompileOptions {
        legacy: false,
        murano: true,
    };
    let p = crate::compile_yaql(expr, &runtime::Registry::new(), opts).unwrap();
    assert_eq!(p.source(), "$.int()");
}

// ---- the verifier ----------------------------------------------------------

fn stmt(kind: StmtKind) -> Stmt {
    Stmt {
        kind,
        pos: Pos {
            file: "T.yaml".into(),
            line: 1,
            col: 1,
            offset: 0,
        },
    }
}

fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts }
}

#[test]
fn verifier_rejects_misplaced_jumps() {
    let err = |b: Block| verify(&b).unwrap_err();
    assert!(err(block(vec![stmt(StmtKind::Break)])).contains("outside a loop"));
    assert!(err(block(vec![stmt(StmtKind::Rethrow)])).contains("outside a Catch"));
    // A Parallel branch inside a loop is outside it.
    let good = lower("- While: $t\n  Do:\n    - Parallel:\n        - Break:\n    - Break:");
    verify(&good).unwrap();
    let mut bad = good.clone();
    let StmtKind::While { body, .. } = &mut bad.stmts[0].kind else {
        panic!()
    };
    let StmtKind::Parallel { branches, .. } = &mut body.stmts[0].kind else {
        panic!()
    };
    branches[0].stmts[0].kind = StmtKind::Break;
    let e = err(bad);
    assert!(
        e.contains("T.yaml:8:17: Break or Continue outside a loop"),
        "{e}"
    );
    // `Invalid` only where the statement would have no target.
    let mut bad = good;
    let StmtKind::While { body, .. } = &mut bad.stmts[0].kind else {
        panic!()
    };
    body.stmts[1].kind = StmtKind::Invalid(InvalidOp::Break);
    assert!(err(bad).contains("where the statement has a target"));
}

#[test]
fn verifier_rejects_bad_expressions() {
    let good = lower("- $x[$i]: $v\n- Return: $r");
    verify(&good).unwrap();
    // Ids out of compile order.
    let mut bad = good.clone();
    let StmtKind::Return(Some(Tmpl {
        kind: TmplKind::Expr(y),
        ..
    })) = &mut bad.stmts[1].kind
    else {
        panic!()
    };
    y.id = ExprId::new(7);
    assert_eq!(
        verify(&bad).unwrap_err(),
        "T.yaml:6:17: expression e7 `$r` should be e2"
    );
    // The wrong role.
    let mut bad = good.clone();
    let StmtKind::Assign { dest, .. } = &mut bad.stmts[0].kind else {
        panic!()
    };
    let DestStep::Index(y) = &mut dest.path[0] else {
        panic!()
    };
    y.role = Role::Template;
    assert!(verify(&bad).unwrap_err().contains("expected DestIndex"));
    // A tree beyond its text.
    let mut bad = good.clone();
    let StmtKind::Assign { dest, .. } = &mut bad.stmts[0].kind else {
        panic!()
    };
    let DestStep::Index(y) = &mut dest.path[0] else {
        panic!()
    };
    y.src = "$".into();
    assert!(verify(&bad).unwrap_err().contains("beyond its text"));
    // A property destination without a name; a list as a dict key.
    let mut bad = good.clone();
    let StmtKind::Assign { dest, .. } = &mut bad.stmts[0].kind else {
        panic!()
    };
    dest.root = DestRoot::Prop("".into());
    assert!(verify(&bad).unwrap_err().contains("without a name"));
    let mut bad = good.clone();
    let StmtKind::Assign { value, .. } = &mut bad.stmts[0].kind else {
        panic!()
    };
    let pos = value.pos.clone();
    *value = Tmpl {
        kind: TmplKind::Dict(vec![(
            Tmpl {
                kind: TmplKind::List(vec![]),
                pos: pos.clone(),
            },
            Tmpl {
                kind: TmplKind::Const(Value::Null),
                pos: pos.clone(),
            },
        )]),
        pos,
    };
    assert!(verify(&bad)
        .unwrap_err()
        .contains("a dict key is a list or dict"));
    // Positions are 1-based.
    let mut bad = good;
    bad.stmts[0].pos.line = 0;
    assert!(verify(&bad).unwrap_err().contains("not 1-based"));
}

#[test]
fn verifier_rejects_bad_contracts() {
    let good = contract("$.int().notNull()");
    verify_contract(&good).unwrap();
    let ContractKind::Chain { expr, links } = good.kind.clone() else {
        panic!()
    };
    let at = |kind| Contract {
        kind,
        pos: good.pos.clone(),
    };
    let no_links = at(ContractKind::Chain {
        expr: expr.clone(),
        links: vec![],
    });
    assert!(verify_contract(&no_links)
        .unwrap_err()
        .contains("without links"));
    let mut swapped = links.clone();
    swapped.swap(0, 1);
    let swapped = at(ContractKind::Chain {
        expr: expr.clone(),
        links: swapped,
    });
    assert!(verify_contract(&swapped)
        .unwrap_err()
        .contains("does not match"));
    let as_expr = at(ContractKind::Expr(expr.clone()));
    assert!(verify_contract(&as_expr)
        .unwrap_err()
        .contains("a chain kept as an expression"));
    let mut wrong_role = expr;
    wrong_role.role = Role::Template;
    let wrong_role = at(ContractKind::Chain {
        expr: wrong_role,
        links,
    });
    assert!(verify_contract(&wrong_role)
        .unwrap_err()
        .contains("expected Contract"));
    let const_key = at(ContractKind::Dict(vec![(
        DictKey::Contract(at(ContractKind::Const(Value::Int(1)))),
        at(ContractKind::Any),
    )]));
    assert!(verify_contract(&const_key)
        .unwrap_err()
        .contains("not an expression"));
}

#[test]
fn rebase_moves_spans_to_the_sub_expression() {
    let ast = crate::yaql::parse(
        "$x[f($a, k => [1])]",
        crate::yaql::LexOptions {
            legacy: false,
            murano: true,
        },
    )
    .unwrap();
    let crate::yaql::ast::ExprKind::Index(_, args) = &ast.kind else {
        panic!()
    };
    let crate::yaql::ast::Arg::Pos(ix) = &args[0] else {
        panic!()
    };
    let r = rebase(ix, ix.span.start);
    assert_eq!((r.span.start, r.span.end), (0, 15));
    let again = crate::yaql::parse(
        "f($a, k => [1])",
        crate::yaql::LexOptions {
            legacy: false,
            murano: true,
        },
    )
    .unwrap();
    assert_eq!(r, *again);
}

#[test]
fn invalid_ops_round_trip_through_their_codes() {
    for op in [InvalidOp::Break, InvalidOp::Continue, InvalidOp::Rethrow] {
        assert_eq!(InvalidOp::from_code(op.code()), Some(op));
    }
    assert_eq!(InvalidOp::from_code(99), None);
}
