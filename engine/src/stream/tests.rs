use std::sync::Arc;

use super::run::*;
use crate::catalog::Catalog;
use crate::executor::{Defs, Executor, Index};
use crate::model::{self, Validation};
use crate::package::Package;

const FLEET: &str = "Namespaces: {=: t}\nName: Fleet\nProperties:\n  servers: {Contract: [$.class(Server)]}\n  lead: {Contract: $.class(Server)}\n  note: {Contract: $.string()}\n";
const SERVER: &str = "Namespaces: {=: t}\nName: Server\nProperties:\n  name: {Contract: $.string().notNull()}\n  port: {Contract: $.int().notNull().check($ > 0 and $ < 65536)}\n  tags: {Contract: [$.string().notNull()]}\n  settings:\n    Contract: {timeout: $.int().notNull(), label: $.string()}\n  peer: {Contract: $.class(Server)}\n  size: {Contract: $.int(), Default: 3}\n";
const SPECIAL: &str = "Namespaces: {=: t}\nName: Special\nExtends: Server\nProperties:\n  extra: {Contract: $.int().check($ < 10)}\n";
const PLAIN: &str = "Namespaces: {=: t}\nName: Plain\nProperties:\n  name: {Contract: $.string().notNull()}\n  port: {Contract: $.int().notNull().check($ > 0 and $ < 65536)}\n  tags: {Contract: [$.string().notNull()]}\n  any: {Contract: $}\n";
const POOL: &str = "Namespaces: {=: t}\nName: Pool\nProperties:\n  members: {Contract: [$.class(Server), 3, 30]}\n  ports: {Contract: [$.int().check($ > 0), 2]}\n  first: {Contract: [$.string(), $.int()]}\n  note: {Contract: $.string().notNull()}\n";
const FARM: &str = "Namespaces: {=: t}\nName: Farm\nProperties:\n  plains: {Contract: [$.class(Plain)]}\n  note: {Contract: $.string()}\n";
const PLAIN_PLUS: &str = "Namespaces: {=: t}\nName: PlainPlus\nExtends: Plain\nProperties:\n  level: {Contract: $.int().check($ >= 0), Default: 1}\n  opts: {Contract: {debug: $.bool(), depth: $.int()}}\n";
const INITS: &str =
    "Namespaces: {=: t}\nName: Inits\nMethods:\n  .init:\n    Body:\n      - $.x: 1\n";

fn catalog() -> Arc<Catalog> {
    let files: Vec<(String, String)> =
        [FLEET, SERVER, SPECIAL, INITS, PLAIN, POOL, FARM, PLAIN_PLUS]
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("C{i}.yaml"), t.to_string()))
            .collect();
    Catalog::new(vec![Package::new("t", "1.0.0", "1.4", &files).unwrap()])
}

#[test]
fn the_index_finds_ids_by_fingerprint_and_refuses_an_id_twice() {
    let ex = Executor::with_catalog(catalog());
    let classes = [
        ex.class("t.Server").unwrap(),
        ex.class("t.Special").unwrap(),
    ];
    let ids: Vec<Arc<String>> = (0..1000).map(|i| Arc::new(format!("o{i}"))).collect();
    // Ids filed in parts, as workers file them: one class may come twice.
    let parts = |ids: &[Arc<String>]| -> Vec<(Arc<crate::class::Class>, Vec<Vec<u64>>)> {
        let mut parts: Vec<(Arc<crate::class::Class>, Vec<Vec<u64>>)> = Vec::new();
        for (i, chunk) in ids.chunks(300).enumerate() {
            let mut defs = Defs::default();
            for (j, id) in chunk.iter().enumerate() {
                defs.push(id, ((i * 300 + j) % 3 == 0) as u32);
            }
            defs.0.resize_with(2, Vec::new);
            parts.extend(classes.iter().cloned().zip(defs.0));
        }
        parts
    };
    for jobs in 1..=4 {
        let index = Index::build(parts(&ids), jobs).unwrap();
        assert_eq!(index.len(), 1000);
        for (i, id) in ids.iter().enumerate() {
            let want = if i % 3 == 0 { "t.Special" } else { "t.Server" };
            assert_eq!(&*index.class_of(id).unwrap().name, want, "{id}");
        }
        assert!(index.class_of(&Arc::new("o1000".into())).is_none());
        assert!(index.class_of(&Arc::new("".into())).is_none());
        // The extra id is filed as a Server: o7 and o500 are Servers too
        // (one class twice), o12 is a Special (across two classes).
        for extra in ["o7", "o500", "o12"] {
            let mut twice = ids.clone();
            twice.push(Arc::new(extra.into()));
            let e = Index::build(parts(&twice), jobs).err();
            assert_eq!(e.as_deref(), Some("two objects with one id"), "{extra}");
        }
    }
}

/// A server definition; `i` picks its flaws.
fn server(i: usize) -> String {
    let ty = if i % 5 == 4 { "t.Special" } else { "t.Server" };
    let port = match i % 7 {
        3 => "\"http\"".to_string(),
        5 => "70000".to_string(),
        _ => (1000 + i).to_string(),
    };
    let name = if i % 11 == 6 {
        "null".to_string()
    } else {
        format!("\"s{i}\"")
    };
    let peer = match i % 4 {
        0 => "null".to_string(),
        1 => format!("\"srv{}\"", i / 2),
        // Nested definitions own objects of their own.
        2 => format!("{{\"?\": {{\"id\": \"in{i}\", \"type\": \"t.Server\"}}, \"port\": {i}}}"),
        _ => "\"fleet\"".to_string(),
    };
    format!(
        "{{\"?\": {{\"id\": \"srv{i}\", \"type\": \"{ty}\"}}, \"name\": {name}, \"port\": {port}, \
         \"tags\": [\"a\", {}], \"settings\": {{\"timeout\": {}, \"label\": \"L\"}}, \
         \"peer\": {peer}, \"extra\": {}}}",
        if i.is_multiple_of(13) {
            "null"
        } else {
            "\"b\""
        },
        if i.is_multiple_of(17) {
            "\"soon\"".to_string()
        } else {
            i.to_string()
        },
        i % 12
    )
}

fn fleet(n: usize, header_last: bool) -> String {
    let servers: Vec<String> = (0..n).map(server).collect();
    let header = "\"?\": {\"id\": \"fleet\", \"type\": \"t.Fleet\"}";
    let body = format!(
        "\"servers\": [{}], \"lead\": \"srv1\", \"note\": {{\"x\": 1}}",
        servers.join(", ")
    );
    if header_last {
        format!("{{{body}, {header}}}")
    } else {
        format!("{{{header}, {body}}}")
    }
}

fn ordinary(catalog: &Arc<Catalog>, text: &str) -> (usize, Vec<String>) {
    let v = model::validate(catalog, &runtime::json::from_tagged_str(text).unwrap());
    assert!(v.error.is_none(), "{:?}", v.error);
    (v.objects, lines(v))
}

fn lines(v: Validation) -> Vec<String> {
    v.violations
        .into_iter()
        .map(|(p, n, e)| format!("{p}.{n}: {}", e.message()))
        .collect()
}

fn streamed(catalog: &Arc<Catalog>, text: &str, chunk: usize, jobs: usize) -> Outcome {
    let opts = Options { jobs, chunk };
    validate(catalog, text.as_bytes(), &opts, &|_, _| {})
}

#[test]
fn streaming_gives_what_the_ordinary_load_gives() {
    let catalog = catalog();
    let models = [
        format!("{{\"Objects\": {}, \"Attributes\": []}}", fleet(60, false)),
        fleet(40, false),
        fleet(40, true),
        format!("[{}]", (0..30).map(server).collect::<Vec<_>>().join(", "))
            .replace("\"peer\": \"fleet\"", "\"peer\": \"srv0\""),
    ];
    let first = ordinary(&catalog, &models[0]).1.join("\n");
    for kind in [
        "doesn't match predicate",
        "int()",
        "notNull()",
        "not compatible with requested",
    ] {
        assert!(first.contains(kind), "the model has {kind} violations");
    }
    for text in &models {
        let want = ordinary(&catalog, text);
        for chunk in [40, 200, 1000, 4000] {
            for jobs in [1, 3] {
                match streamed(&catalog, text, chunk, jobs) {
                    Outcome::Done(v, _) => {
                        assert_eq!((v.objects, lines(v)), want, "chunk {chunk}, jobs {jobs}")
                    }
                    Outcome::Fallback(why) => panic!("chunk {chunk}: fell back: {why}"),
                }
            }
        }
    }
}

/// A Pool of `members` servers (from `from`), `ports` listed (`bad`: the
/// indexes of bad ports) and a `note`.
fn pool(from: usize, members: usize, ports: usize, bad: &[usize], note: &str) -> String {
    let members: Vec<String> = (from..from + members).map(server).collect();
    let ports: Vec<String> = (0..ports)
        .map(|i| match bad.iter().position(|&b| b == i) {
            Some(0) => "-1".into(),
            Some(_) => "\"x\"".into(),
            None => (i + 1).to_string(),
        })
        .collect();
    format!(
        "{{\"?\": {{\"id\": \"pool{from}\", \"type\": \"t.Pool\"}}, \"members\": [{}], \
         \"ports\": [{}], \"first\": [\"a\", 1, \"b\", 2], \"note\": {note}}}",
        members.join(", "),
        ports.join(", ")
    )
}

/// List properties are checked item by item as they stream by (no item
/// kept): their bounds, the first violating item, items naming objects
/// defined later, item contracts by position, and their places among the
/// other properties' violations are the ordinary load's.
#[test]
fn list_properties_streamed_item_by_item_give_what_the_ordinary_load_gives() {
    let catalog = catalog();
    let pools = [
        pool(0, 10, 400, &[], "\"ok\""),
        pool(10, 2, 400, &[7], "null"),
        pool(12, 40, 300, &[250, 12], "\"ok\""),
        pool(52, 5, 1, &[], "null"),
        pool(57, 6, 500, &[480, 499], "1"),
    ];
    let model = format!(
        "{{\"Objects\": {{\"?\": {{\"id\": \"top\", \"type\": \"t.Plain\"}}, \
         \"name\": \"n\", \"port\": 1, \"tags\": [], \"any\": [{}]}}}}",
        pools.join(", ")
    )
    .replace("\"peer\": \"fleet\"", "\"peer\": \"top\"");
    let want = ordinary(&catalog, &model);
    let all = want.1.join("\n");
    for kind in [
        "Array length 2 is not within",
        "Array length 1 must not be less",
        ".ports: [7]: Value -1",
        ".ports: [12]: Value 'x'",
        ".note: [note]",
    ] {
        assert!(all.contains(kind), "the model has {kind}: {all}");
    }
    for chunk in [60, 500, 5000] {
        for jobs in [1, 2] {
            match streamed(&catalog, &model, chunk, jobs) {
                Outcome::Done(v, _) => {
                    assert_eq!((v.objects, lines(v)), want, "chunk {chunk}, jobs {jobs}")
                }
                Outcome::Fallback(why) => panic!("chunk {chunk}: fell back: {why}"),
            }
        }
    }
}

/// A model of one Plain object; `i` picks its flaws and its form.
fn plain(i: usize) -> String {
    let port = ["80", "\"http\"", "70000", "null"][i % 4];
    let name = if i % 3 == 1 { "null" } else { "\"p\"" };
    let any = match i % 5 {
        0 => "null".to_string(),
        // Nested definitions: objects of their own, checked too.
        1 => format!("{{\"?\": {{\"id\": \"in{i}\", \"type\": \"t.Plain\"}}, \"port\": -{i}}}"),
        2 => {
            format!("[{{\"?\": {{\"id\": \"a{i}\", \"type\": \"t.Plain\"}}, \"name\": 5}}, 7]")
        }
        3 => "{\"k\": [1, {\"x\": true}]}".to_string(),
        _ => "\"text\"".to_string(),
    };
    let obj = format!(
        "{{\"?\": {{\"id\": \"p{i}\", \"type\": \"t.Plain\"}}, \"name\": {name}, \"port\": {port}, \"tags\": [\"a\", {}], \"any\": {any}}}",
        if i % 7 == 2 { "3" } else { "\"b\"" }
    );
    match i % 2 {
        0 => obj,
        _ => format!("{{\"Objects\": {obj}, \"Attributes\": []}}"),
    }
}

#[test]
fn small_models_give_what_the_ordinary_load_gives() {
    let catalog = catalog();
    let mut models = Models::new(&catalog);
    let mut violations = 0;
    for i in 0..70 {
        let text = plain(i);
        let want = ordinary(&catalog, &text);
        violations += want.1.len();
        let v = runtime::json::from_tagged_str(&text).unwrap();
        let got = models
            .validate(&v)
            .unwrap_or_else(|| panic!("{text}: fell back"));
        assert!(got.error.is_none());
        assert_eq!((got.objects, lines(got)), want, "{text}");
    }
    assert!(violations > 70, "the models have violations: {violations}");
}

#[test]
fn small_models_the_stream_cannot_decide_are_left_to_the_ordinary_load() {
    let catalog = catalog();
    let mut models = Models::new(&catalog);
    let nested = |any: &str| plain(0).replace("\"any\": null", &format!("\"any\": {any}"));
    let cases = [
        // Contracts that name other objects.
        server(0),
        // Two objects with one id; headers the load refuses.
        nested("{\"?\": {\"id\": \"p0\", \"type\": \"t.Plain\"}}"),
        nested("{\"?\": {\"id\": \"x\"}}"),
        nested("{\"?\": 5}"),
        nested("{\"?\": {\"id\": 5, \"type\": \"t.Plain\"}}"),
        format!("{{\"Objects\": {}, \"ObjectsCopy\": {{}}}}", plain(0)),
        plain(0).replace("t.Plain", "t.Inits"),
        plain(0).replace("t.Plain", "t.Nowhere"),
        format!("[{}]", plain(0)),
        "{\"name\": \"no header\"}".to_string(),
    ];
    for text in cases {
        let v = runtime::json::from_tagged_str(&text).unwrap();
        assert!(models.validate(&v).is_none(), "{text}");
    }
    // What was refused leaves nothing behind for the next model.
    let text = plain(3);
    let got = models.validate(&runtime::json::from_tagged_str(&text).unwrap());
    assert_eq!(
        got.map(|v| (v.objects, lines(v))),
        Some(ordinary(&catalog, &text))
    );
}

#[test]
fn what_streaming_cannot_decide_falls_back() {
    let catalog = catalog();
    let big = fleet(20, false);
    let cases = [
        (big.replace("srv3\"", "srv2\""), "two objects with one id"),
        (
            format!("{{\"Objects\": {big}, \"ObjectsCopy\": {{}}}}"),
            "ObjectsCopy",
        ),
        (
            big.replace("t.Special", "t.Inits"),
            "class t.Inits needs the ordinary load",
        ),
        (
            big.replace("\"id\": \"srv7\", ", ""),
            "an object without a string id",
        ),
        (
            big.replace(
                "\"id\": \"fleet\", \"type\": \"t.Fleet\"",
                "\"id\": \"fleet\"",
            ),
            "no typed object header",
        ),
        (
            big.replace(
                "\"id\": \"srv7\", \"type\": \"t.Server\"",
                "\"id\": \"srv7\"",
            ),
            "an object header without a type",
        ),
        (
            big.replace("\"lead\": \"srv1\"", "\"lead\": \"nowhere\""),
            "not found",
        ),
        (
            big.replace("\"lead\": \"srv1\"", "\"lead\": \"srv1\","),
            "at byte",
        ),
        (
            big.replace("\"timeout\": 1,", "\"timeout\": tru,"),
            "bad JSON",
        ),
    ];
    for (text, why) in cases {
        match streamed(&catalog, &text, 200, 2) {
            Outcome::Fallback(got) => assert!(got.contains(why), "{why}: {got}"),
            Outcome::Done(..) => panic!("{why}: streamed"),
        }
    }
    // A document within one piece is not streamed.
    assert!(matches!(
        streamed(&catalog, &big, 1 << 20, 2),
        Outcome::Fallback(_)
    ));
}

/// Item `i` of a Farm: a Plain or PlainPlus definition in one of the forms
/// text can take (most valid, read by the fast path; some in forms only
/// the full path reads exactly; some with violations).
fn farm_item(i: usize) -> String {
    let id = format!("f{i}");
    let plus = i % 3 == 2;
    let ty = if plus { "t.PlainPlus" } else { "t.Plain" };
    let header = match i % 17 {
        5 => format!("{{\"type\": \"{ty}\", \"id\": \"{id}\"}}"),
        9 => format!("{{\"id\": \"{id}\", \"type\": \"{ty}\", \"name\": \"x\"}}"),
        _ => format!("{{\"id\": \"{id}\", \"type\": \"{ty}\"}}"),
    };
    let any = [
        "\"text\"",
        "123456789012345678901234567890",
        "1.5e3",
        "-0",
        "\"a\\\"b\\u00e9\"",
        "\"é ü\"",
        "true",
        "{\"k\": 1}",
        "{\"k\": null}",
        "[1, 2.5, \"x\"]",
        "null",
        "-9223372036854775808",
    ][i % 12];
    let port = match i % 13 {
        4 => "\"http\"".to_string(),
        7 => "70000".to_string(),
        10 => "8.0".to_string(),
        _ => (1 + i % 60000).to_string(),
    };
    let name = match i % 19 {
        3 => "null",
        8 => "\"a\", \"name\": null",
        _ => "\"n\"",
    };
    let mut props =
        format!("\"name\": {name},\n\t\"port\": {port}, \"tags\": [\"a\", \"b\"], \"any\": {any}");
    if plus {
        let level = if i % 23 == 11 { "-1" } else { "2" };
        let opts = [
            "{\"debug\": true, \"depth\": 3}",
            "null",
            "{\"debug\": \"yes\"}",
        ][i % 3 / 2 + i % 5 / 4];
        props += &format!(", \"level\": {level}, \"opts\": {opts}");
    }
    if i % 29 == 14 {
        props += ", \"$x\": 1";
    }
    if i % 4 == 1 {
        format!("{{{props}, \"?\": {header}}}")
    } else {
        format!("{{\"?\": {header}, {props}}}")
    }
}

#[test]
fn objects_read_in_place_give_what_the_ordinary_load_gives() {
    let catalog = catalog();
    let items: Vec<String> = (0..400).map(farm_item).collect();
    let text = format!(
        "{{\"Objects\": {{\"?\": {{\"id\": \"farm\", \"type\": \"t.Farm\"}}, \"plains\": [{}], \"note\": \"n\"}}}}",
        items.join(", ")
    );
    let want = ordinary(&catalog, &text);
    assert_eq!(want.0, 401);
    assert!(want.1.len() > 60, "the model has violations: {:?}", want.1);
    for chunk in [300, 5000] {
        for jobs in [1, 3] {
            match streamed(&catalog, &text, chunk, jobs) {
                Outcome::Done(v, stats) => {
                    assert_eq!((v.objects, lines(v)), want, "chunk {chunk}, jobs {jobs}");
                    // Most items take the fast path; what only the full
                    // path reads exactly, or fails, does not.
                    assert!(
                        (120..250).contains(&stats.in_place),
                        "{} read in place",
                        stats.in_place
                    );
                }
                Outcome::Fallback(why) => panic!("chunk {chunk}: fell back: {why}"),
            }
        }
    }
    // Brackets that do not match inside one object: the splitter only
    // counts them, the object's parser refuses the text.
    let bad = text.replace(
        "\"tags\": [\"a\", \"b\"], \"any\": true",
        "\"tags\": [\"a\", \"b\"}, \"any\": true",
    );
    assert_ne!(bad, text);
    match streamed(&catalog, &bad, 300, 2) {
        Outcome::Fallback(why) => assert!(why.contains("bad JSON"), "{why}"),
        Outcome::Done(..) => panic!("mismatched brackets streamed"),
    }
}
