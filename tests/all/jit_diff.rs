//! The compiled tier against the interpreter on whole packages: each
//! model runs with `--jit always` and `--jit off`, and the answers (the
//! method's result, the resulting model, or the error) must be the same.
//! The models put the value the machine code cannot pass in the middle of
//! a list (item 3 of 5), where the compiled loop hands over to the
//! interpreter and then goes on.

use std::path::PathBuf;

use serde_json::{json, Value as Json};

use crate::common::{muranopl, stderr, stdout};

/// A package of classes under a temporary directory, removed when
/// dropped, with the models written beside it.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str, classes: &[(&str, &str)]) -> Dir {
        let dir =
            std::env::temp_dir().join(format!("muranopl-jitdiff-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pkg/Classes")).unwrap();
        let mut manifest =
            String::from("Format: 1.4\nType: Application\nFullName: ex.J\nClasses:\n");
        for (name, text) in classes {
            manifest.push_str(&format!("  ex.{name}: {name}.yaml\n"));
            std::fs::write(dir.join(format!("pkg/Classes/{name}.yaml")), text).unwrap();
        }
        std::fs::write(dir.join("pkg/manifest.yaml"), manifest).unwrap();
        Dir(dir)
    }

    /// Runs `deploy` of `model` with the JIT in `mode`: the printed result
    /// and the model written, or the error's first line.
    fn run(&self, model: &Json, mode: &str) -> String {
        let m = self.0.join(format!("model-{mode}.json"));
        let out = self.0.join(format!("out-{mode}.json"));
        std::fs::write(&m, model.to_string()).unwrap();
        let pkg = self.0.join("pkg");
        let o = muranopl(&[
            "--jit",
            mode,
            "run",
            pkg.to_str().unwrap(),
            "--model",
            m.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        if o.status.success() {
            format!("{}{}", stdout(&o), std::fs::read_to_string(&out).unwrap())
        } else {
            let err = stderr(&o);
            err.lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or(&err)
                .to_string()
        }
    }

    /// The answer with the JIT on and off, asserted equal.
    fn same(&self, model: &Json) -> String {
        let off = self.run(model, "off");
        let on = self.run(model, "always");
        assert_eq!(on, off, "--jit always and --jit off differ on {model}");
        off
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const NODE: &str =
    "Namespaces: {=: ex}\nName: Node\nProperties:\n  name:\n    Contract: $.string()\n";
const OTHER: &str =
    "Namespaces: {=: ex}\nName: Other\nProperties:\n  name:\n    Contract: $.string()\n";

/// `class()` chains (`class(Name)`, `class(:Name)`, `class(Name,
/// Default)`, then `notNull()`) over lists of object ids.
#[test]
fn class_contracts_answer_alike_compiled_and_interpreted() {
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  pool:\n    Contract: [$.class(Node)]\n  \
             others:\n    Contract: [$.class(Other)]\n  nodes:\n    Contract: [$.class(Node).notNull()]\n  \
             one:\n    Contract: $.class(:Node)\n  dflt:\n    Contract:\n      - $.class(Node, Node)\n\
             Methods:\n  deploy:\n    Body:\n      - Return: [$.nodes.select($.name), $.one?.name, $.dflt.select($?.name)]\n";
    let d = Dir::new("class", &[("J", j), ("Node", NODE), ("Other", OTHER)]);
    let model = |nodes: Json, one: Json| {
        json!({"Objects": {"?": {"id": "j", "type": "ex.J"},
            "pool": (1..=5).map(|i| json!({"?": {"id": format!("n{i}"), "type": "ex.Node"}, "name": format!("x{i}")})).collect::<Vec<_>>(),
            "others": [{"?": {"id": "o1", "type": "ex.Other"}, "name": "z"}],
            "nodes": nodes, "one": one, "dflt": [null, "n1", {"name": "inline"}, "n3"]}})
    };
    let ok = d.same(&model(json!(["n1", "n2", "n3", "n4", "n5"]), json!("n2")));
    assert!(ok.starts_with("[[\"x1\", \"x2\", \"x3\", \"x4\", \"x5\"], \"x2\", [null, \"x1\", \"inline\", \"x3\"]]"), "{ok}");
    for (third, want) in [
        (
            json!("o1"),
            "Object of type ex.Other is not compatible with requested type ex.Node",
        ),
        (json!(null), "[2]: null value violates notNull() contract"),
        (json!("zz"), "Object \"zz\" is not found in object store"),
        (json!(7), "[2]: Value 7 violates class() contract"),
        (
            json!({"?": {"id": "n9", "type": "ex.Other"}}),
            "is not compatible with requested type ex.Node",
        ),
    ] {
        let got = d.same(&model(json!(["n1", "n2", third, "n4", "n5"]), json!(null)));
        assert!(got.contains(want), "{got}");
    }
    // A definition in the middle is instantiated by the interpreter; the
    // loop goes on after it.
    let got = d.same(&model(
        json!(["n1", "n2", {"?": {"id": "n9", "type": "ex.Node"}, "name": "q"}, "n4", "n5"]),
        json!("o1"),
    ));
    assert!(
        got.contains("is not compatible with requested type ex.Node"),
        "{got}"
    );
    let got = d.same(&model(
        json!(["n1", "n2", {"?": {"id": "n9", "type": "ex.Node"}, "name": "q"}, "n4", "n5"]),
        json!("n5"),
    ));
    assert!(
        got.starts_with("[[\"x1\", \"x2\", \"q\", \"x4\", \"x5\"], \"x5\""),
        "{got}"
    );
    // Longer than a batch of the compiled loop (16), failing in the second.
    let mut long: Vec<Json> = (0..40).map(|i| json!(format!("n{}", i % 5 + 1))).collect();
    assert!(d
        .same(&model(json!(long.clone()), json!(null)))
        .starts_with("[[\"x1\""));
    long[33] = json!("o1");
    assert!(d
        .same(&model(json!(long), json!(null)))
        .contains("[33]: Object of type ex.Other"));
}

/// `If`, `While` and `Switch` conditions over variables run as machine
/// code with `--jit always`; values they have no code for (a string where
/// they compare integers, a missing key, an object) are the
/// interpreter's, errors included.
#[test]
fn conditions_answer_alike_compiled_and_interpreted() {
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  items:\n    Contract: $\n\
             Methods:\n  deploy:\n    Body:\n      - $out: []\n      - $i: 0\n\
             \x20     - While: $i < 3\n        Do:\n          - $i: $i + 1\n\
             \x20     - For: x\n        In: $.items\n        Do:\n\
             \x20         - If: $x = null or $x.n > 2 and $x.tag in list(a, b)\n\
             \x20           Then:\n              - $out: $out + [big]\n\
             \x20           Else:\n              - $out: $out + [small]\n\
             \x20         - Switch:\n              $x != null and $x.n = 3:\n                - $out: $out + [three]\n\
             \x20             $x = null:\n                - $out: $out + [none]\n\
             \x20     - Return: [$i, $out]\n";
    let d = Dir::new("cond", &[("J", j)]);
    let model =
        |items: Json| json!({"Objects": {"?": {"id": "j", "type": "ex.J"}, "items": items}});
    let row = |n: Json, tag: &str| json!({"n": n, "tag": tag});
    let ok = d.same(&model(json!([
        row(json!(1), "a"),
        row(json!(3), "b"),
        null,
        row(json!(5), "c"),
        row(json!(4), "a")
    ])));
    assert!(
        ok.starts_with(
            "[3, [\"small\", \"big\", \"three\", \"big\", \"none\", \"small\", \"big\"]]"
        ),
        "{ok}"
    );
    // Item 3 of 5 has no code: a float, a string (the interpreter's
    // comparison error), a missing key (a KeyError), a list.
    for third in [json!(2.5), json!("x")] {
        d.same(&model(json!([
            row(json!(1), "a"),
            row(json!(3), "b"),
            row(third, "a"),
            row(json!(5), "a"),
            null
        ])));
    }
    let got = d.same(&model(
        json!([row(json!(1), "a"), row(json!(3), "b"), {"tag": "a"}, null, null]),
    ));
    assert!(got.starts_with("error"), "{got}");
    d.same(&model(json!([
        row(json!(1), "a"),
        row(json!(3), "b"),
        [1],
        null,
        null
    ])));
}
