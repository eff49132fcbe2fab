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

/// Conditions reading MuranoPL objects (`$.limit`, `$this.x`, `$n.size`
/// of an object in a variable, `$.getAttr(name, default)`) run as
/// machine code reading properties and attributes through the engine;
/// what the interpreter must decide (a property another class may not
/// read, a string compared with an integer, a class with its own
/// `getAttr`) it decides, with the same answers and errors.
#[test]
fn object_conditions_answer_alike_compiled_and_interpreted() {
    let node = "Namespaces: {=: ex}\nName: Node\nProperties:\n  name:\n    Contract: $.string()\n\
                \x20 size:\n    Contract: $\nMethods:\n  hide:\n    Body:\n      - $.hidden: 1\n";
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  limit:\n    Contract: $.int()\n\
             \x20 nodes:\n    Contract: [$.class(Node)]\n  peek:\n    Contract: $.bool()\n    Default: false\n\
             Methods:\n  deploy:\n    Body:\n      - $out: []\n\
             \x20     - If: $.limit > 2 and not $.getAttr(seen, false)\n        Then:\n          - $out: $out + [first]\n\
             \x20     - $.setAttr(seen, true)\n\
             \x20     - If: $this.getAttr(seen, false) and $this.limit != 0\n        Then:\n          - $out: $out + [seen]\n\
             \x20     - For: n\n        In: $.nodes\n        Do:\n\
             \x20         - If: $n.name = a or $n.size > 2\n            Then:\n              - $out: $out + [$n.name]\n\
             \x20         - If: $.peek and $n.hidden = 1\n            Then:\n              - $out: $out + [peeked]\n\
             \x20     - Return: $out\n";
    let own = "Namespaces: {=: ex}\nName: Own\nExtends: J\nMethods:\n  getAttr:\n    Arguments:\n\
               \x20     - name:\n          Contract: $\n      - default:\n          Contract: $\n\
               \x20   Body:\n      - Return: true\n";
    let d = Dir::new("objcond", &[("Node", node), ("J", j), ("Own", own)]);
    // Every condition of J compiles.
    let cov = coverage(&d);
    assert!(cov.contains("conditions 4/4 (100.0%)"), "{cov}");
    let model = |class: &str, peek: bool, sizes: [Json; 5]| {
        let nodes: Vec<Json> = (sizes.into_iter().enumerate())
            .map(|(k, size)| {
                let name = ["a", "b", "c", "d", "e"][k];
                json!({"?": {"id": format!("n{k}"), "type": "ex.Node"}, "name": name, "size": size})
            })
            .collect();
        json!({"Objects": {"?": {"id": "j", "type": class}, "limit": 3, "peek": peek, "nodes": nodes}})
    };
    let ok = d.same(&model(
        "ex.J",
        false,
        [json!(1), json!(3), json!(0), json!(5), json!(2)],
    ));
    assert!(
        ok.starts_with("[\"first\", \"seen\", \"a\", \"b\", \"d\"]"),
        "{ok}"
    );
    // Item 3 of 5 has no code: a float, a string (the interpreter's
    // comparison error).
    let float = d.same(&model(
        "ex.J",
        false,
        [json!(1), json!(3), json!(2.5), json!(5), json!(0)],
    ));
    assert!(
        float.starts_with("[\"first\", \"seen\", \"a\", \"b\", \"c\", \"d\"]"),
        "{float}"
    );
    let string = d.same(&model(
        "ex.J",
        false,
        [json!(1), json!(3), json!("x"), json!(5), json!(0)],
    ));
    assert!(string.starts_with("error"), "{string}");
    // A property of another class's object J may not read: the
    // interpreter's PropertyReadError, compiled or not.
    let private = d.same(&model(
        "ex.J",
        true,
        [json!(0), json!(3), json!(0), json!(0), json!(0)],
    ));
    assert!(private.contains("PropertyReadError"), "{private}");
    // A class with its own getAttr: its method answers (true), so the
    // first condition fails.
    let own = d.same(&model(
        "ex.Own",
        false,
        [json!(1), json!(0), json!(0), json!(0), json!(0)],
    ));
    assert!(own.starts_with("[\"seen\", \"a\"]"), "{own}");
}

/// `/` and `mod` (Python's floor division and modulo, on every sign) and
/// `endsWith()` of a constant in contracts: a list longer than a batch of
/// the compiled loop (16) failing in its second batch, a zero divisor
/// (the interpreter's ZeroDivisionError) and values of other kinds.
#[test]
fn division_modulo_and_suffixes_answer_alike_compiled_and_interpreted() {
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  odd:\n    Contract: [$.int().check($ mod 2 != 0)]\n  \
             ratio:\n    Contract: $.check($ / 4 >= -2)\n  step:\n    Contract: $.int().check(12 mod $ = 0)\n  \
             host:\n    Contract: $.string().check($.endsWith('.example.com'))\n  \
             code:\n    Contract: $.string().check(len($) >= 2 and len($) <= 4)\n\
             Methods:\n  deploy:\n    Body:\n      - Return: [$.odd.len(), $.ratio, $.step, $.host, $.code]\n";
    let d = Dir::new("divmod", &[("J", j)]);
    let model = |odd: Json, ratio: Json, step: Json, host: Json| {
        json!({"Objects": {"?": {"id": "j", "type": "ex.J"},
            "odd": odd, "ratio": ratio, "step": step, "host": host, "code": "日本"}})
    };
    let odds: Vec<Json> = (0..40).map(|i| json!(2 * i - 39)).collect();
    let ok = d.same(&model(
        json!(odds),
        json!(-8),
        json!(-3),
        json!("a.example.com"),
    ));
    assert!(
        ok.starts_with("[40, -8, -3, \"a.example.com\", \"日本\"]"),
        "{ok}"
    );
    // `len()` counts characters: 4 in 8 bytes passes, 5 does not.
    let mut m = model(json!([1]), json!(1), json!(1), json!("x.example.com"));
    m["Objects"]["code"] = json!("éééé");
    assert!(d.same(&m).starts_with("[1, 1, 1"), "4 characters pass");
    m["Objects"]["code"] = json!("abcdé");
    assert!(
        d.same(&m).contains("doesn't match predicate"),
        "5 characters fail"
    );
    let mut even = odds.clone();
    even[20] = json!(-4);
    for (m, want) in [
        (
            model(json!(even), json!(0), json!(1), json!("x.example.com")),
            "[20]: Value -4 doesn't match predicate",
        ),
        (
            model(json!([1]), json!(-9), json!(1), json!("x.example.com")),
            "Value -9 doesn't match predicate",
        ),
        (
            model(json!([1]), json!(-8.5), json!(1), json!("x.example.com")),
            "Value -8.5 doesn't match predicate",
        ),
        (
            model(json!([1]), json!(1), json!(5), json!("x.example.com")),
            "Value 5 doesn't match predicate",
        ),
        (
            model(json!([1]), json!(1), json!(0), json!("x.example.com")),
            "ZeroDivisionError",
        ),
        (
            model(json!([1]), json!(1), json!(1), json!("example.com")),
            "doesn't match predicate",
        ),
        (
            model(json!(["x"]), json!(1), json!(1), json!("x.example.com")),
            "violates int() contract",
        ),
    ] {
        let got = d.same(&m);
        assert!(got.contains(want), "{want}: {got}");
    }
}

/// `in` over a list read (a property, a variable): strings, numbers,
/// booleans and nulls compared as the interpreter compares them, and
/// what the code has no rule for (an integer against a float, a list
/// item, a string searched) left to it.
#[test]
fn membership_in_lists_read_answers_alike_compiled_and_interpreted() {
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  known:\n    Contract: $\n  asked:\n    Contract: $\n\
             Methods:\n  deploy:\n    Body:\n      - $out: []\n      - $known: $.known\n\
             \x20     - For: x\n        In: $.asked\n        Do:\n\
             \x20         - If: $x in $.known and $x in $known\n\
             \x20           Then:\n              - $out: $out + [yes]\n\
             \x20           Else:\n              - $out: $out + [no]\n\
             \x20     - Return: $out\n";
    let d = Dir::new("in", &[("J", j)]);
    let model = |known: Json, asked: Json| json!({"Objects": {"?": {"id": "j", "type": "ex.J"}, "known": known, "asked": asked}});
    let known: Vec<Json> = (0..30).map(|i| json!(format!("c{i}"))).collect();
    let got = d.same(&model(
        json!(known),
        json!(["c3", "c29", "c30", "", "é", 1, null]),
    ));
    assert!(
        got.starts_with("[\"yes\", \"yes\", \"no\", \"no\", \"no\", \"no\", \"no\"]"),
        "{got}"
    );
    let mixed = json!(["é", 1, true, null, 2.5, "x"]);
    let got = d.same(&model(
        mixed.clone(),
        json!(["é", 1, 0, null, 2.5, "X", false]),
    ));
    assert!(
        got.starts_with("[\"yes\", \"yes\", \"no\", \"yes\", \"yes\", \"no\", \"no\"]"),
        "{got}"
    );
    // The interpreter's: an integer against a float, containers, a string.
    for asked in [json!([2]), json!([[1]]), json!([{"a": 1}])] {
        d.same(&model(json!([1, 2.0, [1], {"a": 1}]), asked));
    }
    d.same(&model(json!("abc"), json!(["a", "d"])));
}

/// `matches()` of a constant pattern in a contract and a condition,
/// `startsWith()`/`endsWith()` of a variable, `bool()`, `containsKey()`, `in` and
/// `len()` over a
/// dict's `keys()` and `values()`: a list longer than a batch of the
/// compiled loop (16) failing in its second batch, and values the code
/// has no rule for (a number where a string is tested, a dict that is no
/// dict) left to the interpreter, errors included.
#[test]
fn patterns_prefixes_and_dict_views_answer_alike_compiled_and_interpreted() {
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  names:\n    Contract:\n      - $.string().check($.matches('^[a-z][a-z0-9-]*$'))\n  \
             ports:\n    Contract: $\n  asked:\n    Contract: $\n  prefix:\n    Contract: $\n\
             Methods:\n  deploy:\n    Body:\n      - $out: []\n      - $ports: $.ports\n      - $prefix: $.prefix\n\
             \x20     - For: x\n        In: $.asked\n        Do:\n\
             \x20         - If: $x in $ports.keys() or $x in $.ports.values()\n            Then:\n              - $out: $out + [port]\n\
             \x20         - If: bool($prefix) and $x.startsWith($prefix) and not $x.endsWith($prefix)\n            Then:\n              - $out: $out + [prefixed]\n\
             \x20         - If: $x =~ '^k[0-9]$' and len($ports.keys()) > 1\n            Then:\n              - $out: $out + [k]\n\
             \x20         - If: $ports.containsKey($x)\n            Then:\n              - $out: $out + [key]\n\
             \x20     - Return: [$.names.len(), $out]\n";
    let d = Dir::new("views", &[("J", j)]);
    // Every condition of J compiles, and its contract.
    let cov = coverage(&d);
    assert!(
        cov.contains("contract parts 1/1 (100.0%), conditions 4/4 (100.0%)"),
        "{cov}"
    );
    let model = |names: Json, ports: Json, asked: Json, prefix: Json| {
        json!({"Objects": {"?": {"id": "j", "type": "ex.J"},
            "names": names, "ports": ports, "asked": asked, "prefix": prefix}})
    };
    let mut names: Vec<Json> = (0..40).map(|i| json!(format!("host-{i}"))).collect();
    let ports = json!({"80": "http", "k1": "x", "443": "https"});
    let asked = json!(["80", "http", "k1", "k2", "kk", "pre-x", "pre", "é", "443"]);
    let ok = d.same(&model(
        json!(names.clone()),
        ports.clone(),
        asked.clone(),
        json!("pre"),
    ));
    assert!(
        ok.starts_with(
            "[40, [\"port\", \"key\", \"port\", \"port\", \"k\", \"key\", \"k\", \"prefixed\", \"port\", \"key\"]]"
        ),
        "{ok}"
    );
    // A name that does not match in the second batch; one the contract
    // coerces (an integer becomes a string, which does not match).
    for (bad, want) in [
        (
            json!("Host-20"),
            "[20]: Value 'Host-20' doesn't match predicate",
        ),
        (json!(20), "[20]"),
    ] {
        names[20] = bad;
        let got = d.same(&model(
            json!(names.clone()),
            ports.clone(),
            asked.clone(),
            json!("pre"),
        ));
        assert!(got.contains(want), "{want}: {got}");
    }
    names[20] = json!("host-20");
    // What the code has no rule for: an integer asked (a key compared with
    // it, then `startsWith()` of a number: the interpreter's error), a
    // prefix that is no string, ports that are no dict.
    for (asked, prefix, ports) in [
        (json!(["80", 80, "k1"]), json!("pre"), ports.clone()),
        (json!(["80", "k1"]), json!(1), ports.clone()),
        (json!(["80", "k1"]), json!("pre"), json!(["80"])),
        (
            json!(["80", "k1"]),
            json!("pre"),
            json!({"1": 1.5, "k1": 2}),
        ),
    ] {
        d.same(&model(json!(names.clone()), ports, asked, prefix));
    }
}

/// `owned()` and `notOwned()` after `class()` over lists of object ids:
/// the machine code asks the engine about the object each id became,
/// passes a scalar as it is, and leaves a violation (an object another
/// object owns, in the second batch) to the interpreter.
#[test]
fn owned_contracts_answer_alike_compiled_and_interpreted() {
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  pool:\n    Contract: [$.class(Node)]\n  \
             mine:\n    Contract: [$.class(Node).owned().notNull()]\n  \
             theirs:\n    Contract: [$.class(Node).notOwned()]\n  tags:\n    Contract: [$.string().owned()]\n\
             Methods:\n  deploy:\n    Body:\n      - Return: [$.mine.select($.name), $.theirs.select($?.name), $.tags]\n";
    // The root holds J and a node J does not own.
    let holder = "Namespaces: {=: ex}\nName: Holder\nProperties:\n  nodes:\n    Contract: [$.class(Node)]\n  \
                  j:\n    Contract: $.class(J)\nMethods:\n  deploy:\n    Body:\n      - Return: $.j.deploy()\n";
    let d = Dir::new("owned", &[("J", j), ("Node", NODE), ("Holder", holder)]);
    let cov = coverage(&d);
    // Every contract compiles.
    assert!(cov.contains("compiled (100.0%): contract parts"), "{cov}");
    let model = |mine: Json, theirs: Json, tags: Json| {
        json!({"Objects": {"?": {"id": "h", "type": "ex.Holder"},
            "nodes": [{"?": {"id": "o1", "type": "ex.Node"}, "name": "y1"}],
            "j": {"?": {"id": "j", "type": "ex.J"},
                "pool": (1..=5).map(|i| json!({"?": {"id": format!("n{i}"), "type": "ex.Node"}, "name": format!("x{i}")})).collect::<Vec<_>>(),
                "mine": mine, "theirs": theirs, "tags": tags}}})
    };
    let mut mine: Vec<Json> = (0..40).map(|i| json!(format!("n{}", i % 5 + 1))).collect();
    let ok = d.same(&model(
        json!(mine.clone()),
        json!(["o1", null]),
        json!(["a", 1]),
    ));
    assert!(ok.starts_with("[[\"x1\", \"x2\""), "{ok}");
    assert!(ok.contains("[\"y1\", null], [\"a\", \"1\"]]"), "{ok}");
    // An object another object owns, in the second batch; one of ours
    // where it must not be; a null where notNull() follows.
    for (m, theirs, want) in [
        (
            Some(json!("o1")),
            json!([]),
            "[20]: Object o1 violates owned() contract",
        ),
        (
            None,
            json!(["o1", "n2"]),
            "[1]: Object n2 violates notOwned() contract",
        ),
        (
            Some(json!(null)),
            json!([]),
            "[20]: null value violates notNull() contract",
        ),
    ] {
        if let Some(x) = m {
            mine[20] = x;
        }
        let got = d.same(&model(json!(mine.clone()), theirs, json!([])));
        assert!(got.contains(want), "{want}: {got}");
        mine[20] = json!("n1");
    }
}

/// `template()` chains: null passes as machine code (once the names are
/// known to evaluate), an object definition is the interpreter's (a new
/// object id, the properties coerced or a violation), in a list longer
/// than a batch of the compiled loop (16), in its second batch.
#[test]
fn template_contracts_answer_alike_compiled_and_interpreted() {
    let node =
        "Namespaces: {=: ex}\nName: Node\nProperties:\n  name:\n    Contract: $.string()\n  \
                size:\n    Contract: $.int()\n";
    let j = "Namespaces: {=: ex}\nName: J\nProperties:\n  tpl:\n    Contract: $.template(Node)\n  \
             tpls:\n    Contract:\n      - $.template(Node, excludeProperties => [name])\n\
             Methods:\n  deploy:\n    Body:\n      - Return: [$.tpl, $.tpls.select($?.size)]\n";
    let d = Dir::new("template", &[("J", j), ("Node", node)]);
    let cov = coverage(&d);
    assert!(cov.contains("compiled (100.0%): contract parts"), "{cov}");
    let model = |tpl: Json, tpls: Json| json!({"Objects": {"?": {"id": "j", "type": "ex.J"}, "tpl": tpl, "tpls": tpls}});
    let mut tpls = vec![json!(null); 40];
    let ok = d.same(&model(json!(null), json!(tpls.clone())));
    assert!(ok.starts_with("[null, [null, null"), "{ok}");
    tpls[17] = json!({"name": "a", "size": "3"});
    let got = d.same(&model(json!({"name": "q", "size": 1}), json!(tpls.clone())));
    assert!(got.contains("\"name\": \"q\", \"size\": 1}"), "{got}");
    for (bad, want) in [
        (
            json!(5),
            "[17]: Value 5 cannot be represented as class Node",
        ),
        (
            json!({"size": "x"}),
            "[17]: [size] Value 'x' violates int() contract",
        ),
    ] {
        tpls[17] = bad;
        let got = d.same(&model(json!(null), json!(tpls.clone())));
        assert!(got.contains(want), "{want}: {got}");
    }
}

/// What `package check --jit-coverage` says of the package in `d`.
fn coverage(d: &Dir) -> String {
    let out = muranopl(&[
        "package",
        "check",
        d.0.join("pkg").to_str().unwrap(),
        "--jit-coverage",
    ]);
    stdout(&out)
}
