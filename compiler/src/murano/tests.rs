//! Tests of the MuranoPL YAML loader and class declarations.

use std::path::{Path, PathBuf};

use runtime::Value;

use super::*;

fn docs(src: &str) -> Vec<Node> {
    load_documents(src, "t.yaml").unwrap()
}

fn tpl(src: &str) -> Template {
    docs(src)[0].to_template(LoadOptions::default()).unwrap()
}

/// The template of the value of key `v` in `v: <scalar>`.
fn val(scalar: &str) -> TemplateKind {
    let t = tpl(&format!("v: {scalar}\n"));
    match t.kind {
        TemplateKind::Dict(mut d) => d.remove(0).1.kind,
        k => panic!("not a dict: {k:?}"),
    }
}

fn value(scalar: &str) -> Value {
    match val(scalar) {
        TemplateKind::Value(v) => v,
        k => panic!("{scalar}: not a value: {k:?}"),
    }
}

fn is_expr(scalar: &str) -> bool {
    matches!(val(scalar), TemplateKind::Expr { .. })
}

fn classes(src: &str) -> Vec<ClassDecl> {
    load_classes(src, "C.yaml", LoadOptions::default()).unwrap()
}

/// The error of a class file: the load's, or else the first class's that
/// holds one until it is built.
fn class_err(src: &str) -> runtime::Error {
    match load_classes(src, "C.yaml", LoadOptions::default()) {
        Err(e) => e,
        Ok(decls) => {
            decls
                .into_iter()
                .find_map(|d| d.broken)
                .expect("an error")
                .0
        }
    }
}

// ---- YAML layer ----

#[test]
fn positions_are_one_based_line_and_char_column() {
    let d = docs("a: 1\nbé: [x, \"y\"]\n");
    let m = d[0].as_map().unwrap();
    assert_eq!(m[0].0.pos.to_string(), "t.yaml:1:1");
    assert_eq!(m[1].0.pos.to_string(), "t.yaml:2:1");
    let NodeKind::Seq(items) = &m[1].1.kind else {
        panic!()
    };
    assert_eq!(m[1].1.pos.to_string(), "t.yaml:2:5");
    assert_eq!(items[0].pos.to_string(), "t.yaml:2:6");
    assert_eq!(items[1].pos.to_string(), "t.yaml:2:9");
    // Byte offsets count the two-byte é.
    assert_eq!(items[1].pos.offset, 14);
    assert_eq!(
        &"a: 1\nbé: [x, \"y\"]\n"[items[1].span().start as usize..items[1].span().end as usize],
        "\"y\""
    );
}

#[test]
fn styles_and_tags() {
    let d = docs("- a\n- 'b'\n- \"c\"\n- |\n  d\n- >\n  e\n- !!str f\n- !yaql g\n- ! h\n");
    let NodeKind::Seq(items) = &d[0].kind else {
        panic!()
    };
    let st: Vec<_> = items
        .iter()
        .map(|n| match &n.kind {
            NodeKind::Scalar { style, tag, .. } => (*style, tag.clone()),
            _ => panic!(),
        })
        .collect();
    use ScalarStyle::*;
    assert_eq!(
        st,
        vec![
            (Plain, None),
            (SingleQuoted, None),
            (DoubleQuoted, None),
            (Literal, None),
            (Folded, None),
            (Plain, Some("!!str".into())),
            (Plain, Some("!yaql".into())),
            (Plain, Some("!".into())),
        ]
    );
    assert_eq!(items[3].as_scalar(), Some("d\n"));
}

#[test]
fn several_documents_and_mapping_order() {
    let d = docs("z: 1\na: 2\nm: 3\n---\nfoo\n--- \n");
    assert_eq!(d.len(), 3);
    let keys: Vec<_> = d[0]
        .as_map()
        .unwrap()
        .iter()
        .map(|(k, _)| k.as_scalar().unwrap())
        .collect();
    assert_eq!(keys, ["z", "a", "m"]);
    assert_eq!(d[1].pos.line, 5);
    assert!(d[2].is_null());
}

#[test]
fn aliases_are_expanded() {
    let d = docs("a: &x {k: [1, 2]}\nb: *x\n");
    let m = d[0].as_map().unwrap();
    assert_eq!(m[0].1.kind, m[1].1.kind);
    let e = load_documents("a: &x [1, *x]\n", "r.yaml").unwrap_err();
    assert!(e.message().starts_with("r.yaml:1:"), "{e:?}");
    let e = load_documents("a: *nope\n", "r.yaml").unwrap_err();
    assert!(e.message().starts_with("r.yaml:1:"), "{e:?}");
}

#[test]
fn alias_bombs_are_refused() {
    let mut src = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        src.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let e = load_documents(&src, "bomb.yaml").unwrap_err();
    assert_eq!(e.kind(), "ComposerError");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    for src in [
        "[".repeat(100_000),
        format!("{}1{}", "[".repeat(300), "]".repeat(300)),
        (0..400)
            .map(|i| format!("{}- \n", " ".repeat(i * 2)))
            .collect::<String>(),
        (0..400)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect::<String>(),
    ] {
        let e = load_documents(&src, "deep.yaml").unwrap_err();
        assert!(e.message().starts_with("deep.yaml:"), "{e:?}");
    }
}

#[test]
fn malformed_yaml_reports_file_line_col() {
    for (src, line) in [
        ("a: [1, 2\n", 2),
        ("a: b\n  c: d\n", 2),
        ("a: 'unterminated\n", 1),
        ("a:\n\t- tab\n", 2),
        ("- a\nb: c\n", 2),
        ("key: value\n- item\n", 2),
        ("a: {b: c\n", 2),
        ("\"\\q\"\n", 1),
    ] {
        let e = load_documents(src, "bad.yaml").unwrap_err();
        let prefix = format!("bad.yaml:{line}:");
        assert!(
            e.message().starts_with(&prefix),
            "{src:?}: {} (want {prefix})",
            e.message()
        );
        assert!(e.span().is_some());
    }
}

#[test]
fn fuzzish_inputs_never_panic() {
    let pieces = [
        "a",
        ":",
        " ",
        "\n",
        "-",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        "\"",
        "&x",
        "*x",
        "!",
        "!!",
        "|",
        ">",
        "#",
        "?",
        "---",
        "...",
        "%YAML 1.1",
        "\t",
        "é",
        "$",
        "\\",
    ];
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..3000 {
        let mut s = String::new();
        for _ in 0..(seed % 24) {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push_str(pieces[(seed % pieces.len() as u64) as usize]);
        }
        if let Ok(docs) = load_documents(&s, "f.yaml") {
            for d in docs {
                let _ = d.to_template(LoadOptions::default());
            }
        }
        let _ = load_classes(&s, "f.yaml", LoadOptions::default());
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
}

// ---- scalar typing ----

#[test]
fn pyyaml_core_typing() {
    assert_eq!(value("~"), Value::Null);
    assert_eq!(value("null"), Value::Null);
    assert_eq!(value("NULL"), Value::Null);
    assert!(matches!(value(""), Value::Null));
    for t in ["true", "True", "yes", "Yes", "on", "ON"] {
        assert!(matches!(value(t), Value::Bool(true)), "{t}");
    }
    for f in ["false", "no", "NO", "off", "Off"] {
        assert!(matches!(value(f), Value::Bool(false)), "{f}");
    }
    let ints = [
        ("0", 0),
        ("42", 42),
        ("-42", -42),
        ("+12", 12),
        ("1_000", 1000),
        ("0777", 511),
        ("0x1F", 31),
        ("-0x1f", -31),
        ("0b101", 5),
        ("1:20", 80),
        ("0_", 0),
    ];
    for (s, i) in ints {
        assert!(matches!(value(s), Value::Int(v) if v == i), "{s}");
    }
    assert!(matches!(
        value("123456789012345678901234567890"),
        Value::BigInt(_)
    ));
    let floats = [
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("1.0e+3", 1000.0),
        (".5e+3", 500.0),
        ("1:20.5", 80.5),
        ("-.inf", f64::NEG_INFINITY),
        ("+.inf", f64::INFINITY),
    ];
    for (s, x) in floats {
        assert!(matches!(value(s), Value::Float(v) if v == x), "{s}");
    }
    assert!(matches!(value(".NaN"), Value::Float(v) if v.is_nan()));
    // Not numbers in YAML 1.1 (as PyYAML): strings.
    for s in [
        "1e3", "1.5e3", "0o17", "09", "12:65", ".nAn", "-.5", "+.5", "abc",
    ] {
        assert!(
            matches!(val(s), TemplateKind::Value(Value::Str(ref x)) if x.as_str() == s),
            "{s}: {:?}",
            val(s)
        );
    }
}

#[test]
fn quoted_and_block_scalars_are_strings() {
    for s in [
        "'$.foo()'",
        "\"$.foo()\"",
        "'true'",
        "\"12\"",
        "'~'",
        "|\n  $.x\n",
    ] {
        assert!(
            matches!(val(s), TemplateKind::Value(Value::Str(_))),
            "{s}: {:?}",
            val(s)
        );
    }
    assert!(matches!(value("!!str $"), Value::Str(ref s) if s.as_str() == "$"));
    assert!(matches!(value("!!str 12"), Value::Str(ref s) if s.as_str() == "12"));
    assert!(matches!(value("!!int '12'"), Value::Int(12)));
    assert!(matches!(value("!!float '1'"), Value::Float(f) if f == 1.0));
}

#[test]
fn expression_detection() {
    for s in [
        "$",
        "$.foo()",
        "$x + 1",
        "new(:Foo)",
        "res:Instance",
        "$.a.b[0]",
        "not $x",
        "len($.list) > 0",
        "-$x",
        "foo()",
        "1 + 2",
    ] {
        assert!(is_expr(s), "{s} should be an expression: {:?}", val(s));
    }
    // Just words, digits, spaces and dots; or not YAQL at all.
    for s in [
        "Some text",
        "io.murano.Object",
        "abc",
        "1.2.3",
        "hello, world",
        "a - b - ",
        "foo(",
        "=",
        "$.x)",
        "don't",
    ] {
        assert!(!is_expr(s), "{s} should be a string: {:?}", val(s));
    }
    assert!(is_expression("$.x", false));
    assert!(!is_expression("word", false));
    assert!(!is_expression("words and spaces", false));
    // `!yaql` forces: a plain name becomes an expression, bad YAQL an error.
    assert!(is_expr("!yaql \"text\""));
    assert!(is_expr("!yaql abc"));
    let e = docs("v: !yaql \"foo(\"\n")[0]
        .to_template(LoadOptions::default())
        .unwrap_err();
    assert!(e.message().starts_with("t.yaml:1:"), "{e:?}");
}

#[test]
fn expression_keeps_source_and_span() {
    let src = "Body:\n  - $.foo(1) + 2\n";
    let t = tpl(src);
    let TemplateKind::Dict(d) = &t.kind else {
        panic!()
    };
    let TemplateKind::List(items) = &d[0].1.kind else {
        panic!()
    };
    let TemplateKind::Expr {
        src: e,
        program_span,
    } = &items[0].kind
    else {
        panic!()
    };
    assert_eq!(&**e, "$.foo(1) + 2");
    assert_eq!(
        &src[program_span.start as usize..program_span.end as usize],
        "$.foo(1) + 2"
    );
    assert_eq!(items[0].pos.to_string(), "t.yaml:2:5");
}

#[test]
fn dict_keys_like_python() {
    let t = tpl("a: 1\nb: 2\na: 3\n1: x\ntrue: y\n$k: v\n$k: w\n");
    let TemplateKind::Dict(d) = &t.kind else {
        panic!()
    };
    // `a` keeps its place and takes the last value; 1 and true are one key;
    // expression keys never collide.
    assert_eq!(d.len(), 5);
    assert_eq!(d[0].0.as_str(), Some("a"));
    assert!(matches!(d[0].1.kind, TemplateKind::Value(Value::Int(3))));
    assert!(matches!(&d[2].1.kind, TemplateKind::Value(Value::Str(s)) if s.as_str() == "y"));
    let e = docs("[1]: x\n")[0]
        .to_template(LoadOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), "ConstructorError");
    let e = docs("a: !!python/object x\n")[0]
        .to_template(LoadOptions::default())
        .unwrap_err();
    assert!(e.message().starts_with("t.yaml:1:"), "{e:?}");
}

// ---- namespaces ----

#[test]
fn namespace_resolution() {
    let r = NamespaceResolver::new(vec![
        ("=".into(), "io.murano.apps".into()),
        ("std".into(), "io.murano".into()),
        ("e".into(), "".into()),
    ])
    .unwrap();
    assert_eq!(r.resolve_name("Foo").unwrap(), "io.murano.apps.Foo");
    assert_eq!(r.resolve_name("std:Object").unwrap(), "io.murano.Object");
    assert_eq!(r.resolve_name("=:Foo").unwrap_err().kind(), "ValueError");
    assert_eq!(r.resolve_name(":Foo").unwrap(), "io.murano.apps.Foo");
    assert_eq!(r.resolve_name("a.b.Foo").unwrap(), "a.b.Foo");
    assert_eq!(
        r.resolve_name("std:sys.Agent").unwrap(),
        "io.murano.sys.Agent"
    );
    assert_eq!(r.resolve_name("e:Foo").unwrap(), "Foo");
    assert_eq!(r.resolve_name("xx:Foo").unwrap_err().kind(), "KeyError");
    for bad in ["", "1Foo", "a:b:c", "Foo.", "a b", "std:"] {
        assert_eq!(
            r.resolve_name(bad).unwrap_err().kind(),
            "ValueError",
            "{bad}"
        );
    }
    let none = NamespaceResolver::default();
    assert_eq!(none.resolve_name("Foo").unwrap(), "Foo");
    assert_eq!(none.resolve_name(":Foo").unwrap(), "Foo");
    assert!(NamespaceResolver::new(vec![("a-b".into(), "x".into())]).is_err());
    assert!(NamespaceResolver::new(vec![("a".into(), "x..y".into())]).is_err());
}

// ---- class declarations ----

const SAMPLE: &str = r#"Namespaces:
  =: com.example
  std: io.murano
  res: io.murano.resources

Name: Sample
Extends: [std:Application, Base]
Import: [res:Instance, Sample]
Meta:
  - std:metadata.Title: {text: Hi}
  - Marker
Properties:
  port:
    Contract: $.int().notNull()
    Default: 80
  name:
    Contract: $.string()
    Usage: InOut
  state:
    Contract: {}
    Usage: Runtime
    Default:
Methods:
  initialize:
    Body:
      - $.x: 1
  deploy:
    Scope: Public
    Arguments:
      - a:
          Contract: $.int()
          Default: 5
      - rest:
          Contract: $
          Usage: VarArgs
      - kw:
          Contract: $
          Usage: KwArgs
    Body:
      - Return: $a
  act:
    Usage: Action
  helper:
  stat:
    Usage: Static
    Arguments:
      one:
        Contract: $.string()
"#;

#[test]
fn class_declaration() {
    let c = &classes(SAMPLE)[0];
    assert_eq!(c.name, "com.example.Sample");
    assert_eq!(c.extends, ["io.murano.Application", "com.example.Base"]);
    assert_eq!(c.import, ["io.murano.resources.Instance"]);
    assert_eq!(c.meta.len(), 2);
    assert_eq!(c.meta[0].name, "io.murano.metadata.Title");
    assert_eq!(c.meta[1].name, "com.example.Marker");
    assert_eq!(c.usage, ClassUsage::Class);
    assert_eq!(c.pos.to_string(), "C.yaml:1:1");
    assert_eq!(
        c.resolve_name("res:Foo").unwrap(),
        "io.murano.resources.Foo"
    );

    let names: Vec<_> = c.properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["port", "name", "state"]);
    let port = c.property("port").unwrap();
    assert_eq!(port.usage, PropertyUsage::In);
    assert!(matches!(port.contract.kind, TemplateKind::Expr { .. }));
    assert!(matches!(
        port.default.as_ref().unwrap().kind,
        TemplateKind::Value(Value::Int(80))
    ));
    assert_eq!(port.pos.to_string(), "C.yaml:13:3");
    assert_eq!(port.contract.pos.to_string(), "C.yaml:14:15");
    assert_eq!(c.property("name").unwrap().usage, PropertyUsage::InOut);
    assert!(c.property("name").unwrap().default.is_none());
    let state = c.property("state").unwrap();
    assert_eq!(state.usage, PropertyUsage::Runtime);
    assert!(state.default.as_ref().unwrap().is_null());
    assert!(matches!(&state.contract.kind, TemplateKind::Dict(d) if d.is_empty()));

    let names: Vec<_> = c.methods.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, [".init", "deploy", "act", "helper", "stat"]);
    let deploy = c.method("deploy").unwrap();
    assert_eq!(deploy.scope, MethodScope::Public);
    assert_eq!(deploy.usage, MethodUsage::Runtime);
    let usages: Vec<_> = deploy.arguments.iter().map(|a| a.usage).collect();
    assert_eq!(
        usages,
        [ArgUsage::Standard, ArgUsage::VarArgs, ArgUsage::KwArgs]
    );
    assert!(deploy.arguments[0].default.is_some());
    assert!(deploy.body.is_some());
    let act = c.method("act").unwrap();
    assert_eq!(
        (act.usage, act.scope),
        (MethodUsage::Action, MethodScope::Public)
    );
    let helper = c.method("helper").unwrap();
    assert!(helper.body.is_none() && helper.arguments.is_empty());
    let stat = c.method("stat").unwrap();
    assert_eq!(stat.usage, MethodUsage::Static);
    assert_eq!(stat.arguments[0].name, "one");
}

#[test]
fn defaults_and_object_root() {
    let c = &classes("Name: io.murano.Object\n")[0];
    assert!(c.extends.is_empty());
    let c = &classes("Name: Foo\n")[0];
    assert_eq!(c.name, "Foo");
    assert_eq!(c.extends, [OBJECT]);
    let c = &classes("Name: Foo\nExtends: []\nProperties:\nMethods:\n")[0];
    assert_eq!(c.extends, [OBJECT]);
    let c = &classes("Namespaces: {=: a.b}\nName: Foo\nExtends: Bar\n")[0];
    assert_eq!(
        (c.name.as_str(), c.extends[0].as_str()),
        ("a.b.Foo", "a.b.Bar")
    );
    let c = &classes("Name: Foo\nWorkflow:\n  destroy:\n")[0];
    assert_eq!(c.methods[0].name, ".destroy");
}

const OBJECT: &str = "io.murano.Object";

#[test]
fn namespace_only_documents_carry_on() {
    let cs = classes(
        "Namespaces:\n  =: test\n  ns: other\n---\n# comment\n---\nName: A\nExtends: ns:B\n---\nName: C\nNamespaces: {=: x}\n---\nName: D\n",
    );
    let names: Vec<_> = cs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["test.A", "x.C", "x.D"]);
    assert_eq!(cs[0].extends, ["other.B"]);
}

#[test]
fn meta_classes() {
    let c = &classes(
        "Name: M\nUsage: Meta\nCardinality: Many\nApplies: [Type, Method]\nInherited: true\n",
    )[0];
    assert_eq!(c.usage, ClassUsage::Meta);
    assert_eq!(c.cardinality, Cardinality::Many);
    assert_eq!(c.applies, [MetaTarget::Type, MetaTarget::Method]);
    assert!(c.inherited);
    let c = &classes("Name: M\nUsage: Meta\nApplies: Property\n")[0];
    assert_eq!((c.cardinality, c.inherited), (Cardinality::One, false));
    assert_eq!(c.applies, [MetaTarget::Property]);
    let c = &classes("Name: M\nUsage: Meta\nApplies: [All]\n")[0];
    assert_eq!(c.applies, MetaTarget::ALL);
    assert!(class_err("Name: M\nUsage: Meta\nApplies: [Nothing]\n")
        .message()
        .starts_with("C.yaml:3:11"));
    assert!(class_err("Name: M\nUsage: Meta\nCardinality: Few\n")
        .message()
        .starts_with("C.yaml:3:14"));
    assert!(class_err("Name: M\nUsage: Meta\nInherited: maybe\n")
        .message()
        .starts_with("C.yaml:3:12"));
}

/// Unknown keys are ignored (as murano ignores them) and recorded as
/// warnings with their positions.
#[test]
fn unknown_keys_are_warnings_with_positions() {
    let cases: &[(&str, &str)] = &[
        (
            "Name: A\nFoo: 1\n",
            "C.yaml:2:1: unknown key \"Foo\" in class",
        ),
        (
            "Name: A\nProperties:\n  p:\n    Contract: $\n    Bogus: 1\n",
            "C.yaml:5:5: unknown key \"Bogus\" in declaration of property p",
        ),
        (
            "Name: A\nMethods:\n  m:\n    Bdy: []\n",
            "C.yaml:4:5: unknown key \"Bdy\" in method m",
        ),
        (
            "Name: A\nMethods:\n  m:\n    Arguments:\n      a: {Contract: $, Dflt: 1}\n",
            "C.yaml:5:24: unknown key \"Dflt\" in declaration of argument a of method m",
        ),
    ];
    for (src, want) in cases {
        let decls = load_classes(src, "C.yaml", LoadOptions::default()).unwrap();
        let w = &decls[0].warnings;
        assert_eq!(w.len(), 1, "{src:?}: {w:?}");
        assert!(w[0].starts_with(want), "{src:?}: {} (want {want})", w[0]);
    }
}

#[test]
fn class_errors_have_positions() {
    let cases: &[(&str, &str, &str)] = &[
        ("- Name: A\n", "DslSyntaxError", "C.yaml:1:1"),
        ("Name: A\nUsage: Widget\n", "ValueError", "C.yaml:2:8"),
        ("Name: A\nProperties: [a, b]\n", "DslSyntaxError", "C.yaml:2:13"),
        ("Name: A\nProperties:\n  p:\n    Usage: In\n", "DslContractSyntaxError", "C.yaml:4:5"),
        ("Name: A\nProperties:\n  p: $.int()\n", "DslSyntaxError", "C.yaml:3:6"),
        ("Name: A\nProperties:\n  p:\n    Contract: $\n    Usage: Sometimes\n", "DslSyntaxError", "C.yaml:5:12"),
        ("Name: A\nMethods:\n  m:\n    Usage: Action\n    Scope: Session\n", "ValueError", "C.yaml:5:12"),
        ("Name: A\nMethods:\n  m:\n    Arguments:\n      - a\n", "DslSyntaxError", "C.yaml:5:9"),
        ("Name: A\nMethods:\n  m:\n    Arguments:\n      - {a: {Contract: $}, b: {Contract: $}}\n", "DslSyntaxError", "C.yaml:5:9"),
        ("Name: A\nMethods:\n  m:\n    Arguments:\n      - a:\n          Contract: $\n          Usage: VarArgs\n      - b:\n          Contract: $\n", "DslSyntaxError", "C.yaml:8:9"),
        ("Name: A\nMethods:\n  m:\n    Arguments:\n      - a:\n          Contract: $\n          Usage: KwArgs\n      - b:\n          Contract: $\n          Usage: VarArgs\n", "DslSyntaxError", "C.yaml:8:9"),
        ("Name: A\nMethods:\n  m:\n    Arguments:\n      - a:\n", "DslSyntaxError", "C.yaml:5:10"),
        ("Name: A\nMethods:\n  m:\n    Arguments:\n      - a:\n          Default: 1\n", "DslContractSyntaxError", "C.yaml:6:11"),
        ("Name: A\nMethods: [m]\n", "DslSyntaxError", "C.yaml:2:10"),
        ("Name: A\nMethods:\n  m: [1]\n", "DslSyntaxError", "C.yaml:3:6"),
        ("Name: A\nExtends: xx:B\n", "KeyError", "C.yaml:2:10"),
        ("Name: 1A\n", "ValueError", "C.yaml:1:7"),
        ("Name: [A]\n", "DslSyntaxError", "C.yaml:1:7"),
        ("Name: A\nNamespaces: {a-b: x}\n", "ValueError", "C.yaml:2:14"),
        ("Name: A\nNamespaces: [x]\n", "DslSyntaxError", "C.yaml:2:13"),
        ("Name: A\nMeta: [{a: 1, b: 2}]\n", "ValueError", "C.yaml:2:8"),
        ("Name: A\nMeta: [[x]]\n", "ValueError", "C.yaml:2:8"),
        ("Name: A\nMeta: {x: [1]}\n", "DslSyntaxError", "C.yaml:2:11"),
        ("Name: A\nProperties:\n  p:\n    Contract: !yaql 'foo('\n", "YaqlGrammarException", "C.yaml:4:21"),
        ("Name: A\nProperties: {p: {Contract: [\n", "ScannerError", "C.yaml:3:1"),
    ];
    for (src, kind, at) in cases {
        let e = class_err(src);
        assert_eq!(e.kind(), *kind, "{src:?}: {e:?}");
        assert!(
            e.message().starts_with(&format!("{at}:")),
            "{src:?}: {} (want {at})",
            e.message()
        );
    }
}

// ---- every real class file ----

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    p.is_dir().then_some(p)
}

fn class_files(dir: &Path, in_classes: bool, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            let inside = in_classes || p.file_name().is_some_and(|n| n == "Classes");
            class_files(&p, inside, out);
        } else if in_classes && p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(p);
        }
    }
}

#[test]
fn loads_every_fixture_class() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared is absent");
        return;
    };
    let mut files = Vec::new();
    class_files(&shared.join("fixtures/core-library"), false, &mut files);
    class_files(&shared.join("fixtures/apps"), false, &mut files);
    assert!(files.len() > 100, "found only {} class files", files.len());
    let mut failures = Vec::new();
    let mut n = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for legacy in [false, true] {
            match load_classes(&text, &f.display().to_string(), LoadOptions { legacy }) {
                Ok(cs) => n += cs.len(),
                Err(e) => failures.push(format!("{}: {}", e.kind(), e.message())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("loaded {n} classes from {} files (twice)", files.len());
}

#[test]
fn loads_every_dsl_corpus_class() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared is absent");
        return;
    };
    let path = shared.join("conformance/muranopl/cases.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {} is absent", path.display());
        return;
    };
    let mut failures = Vec::new();
    let (mut files, mut n) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // Models may hold tagged values the runtime reader refuses, so
        // read just the fields needed here.
        let field =
            |key: &str| json_field(line, key).and_then(|j| runtime::json::from_tagged_str(j).ok());
        let id = field("id").and_then(|v| v.as_str().map(String::from));
        let legacy = field("format")
            .and_then(|v| v.as_str().map(|f| f == "1.0" || f == "1.1"))
            .unwrap_or(false);
        let Some(Value::Dict(ref cls)) = field("classes") else {
            continue;
        };
        for (name, src) in cls.iter() {
            files += 1;
            let file = format!(
                "{}/{}",
                id.as_deref().unwrap_or("?"),
                name.as_str().unwrap()
            );
            match load_classes(src.as_str().unwrap(), &file, LoadOptions { legacy }) {
                Ok(cs) => n += cs.len(),
                Err(e) => failures.push(format!("{}: {}", e.kind(), e.message())),
            }
        }
    }
    failures.dedup();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(files > 0);
    eprintln!("loaded {n} classes from {files} corpus files");
}

/// The raw JSON text of the value of top-level `key` in the object `line`.
fn json_field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let b = line.as_bytes();
    let (mut i, mut depth, mut in_str) = (0, 0i32, false);
    let needle = format!("\"{key}\"");
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
        } else if c == b'"' {
            if depth == 1 && line[i..].starts_with(&needle) {
                let rest = line[i + needle.len()..].trim_start().strip_prefix(':')?;
                let start = line.len() - rest.trim_start().len();
                return Some(&line[start..start + value_len(&line[start..])?]);
            }
            in_str = true;
        } else if c == b'{' || c == b'[' {
            depth += 1;
        } else if c == b'}' || c == b']' {
            depth -= 1;
        }
        i += 1;
    }
    None
}

/// The length of the JSON value at the start of `s`.
fn value_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (mut depth, mut in_str) = (0i32, false);
    for (i, &c) in b.iter().enumerate() {
        if in_str {
            match c {
                b'"' if !escaped(b, i) => {
                    in_str = false;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
                if depth < 0 {
                    return Some(i);
                }
            }
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    Some(b.len())
}

fn escaped(b: &[u8], i: usize) -> bool {
    let n = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
    n % 2 == 1
}

/// murano's `MuranoMethod` checks no `Scope`: one that is not `Public`
/// (even a misspelt one) leaves the method callable only from MuranoPL.
#[test]
fn an_unknown_scope_is_no_action() {
    let c = classes("Name: A\nMethods:\n  m:\n    Scope: Private\n");
    assert_eq!(c[0].methods[0].scope, MethodScope::Session);
}
