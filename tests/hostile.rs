//! Hostile packages and models (`tests/hostile/`, issue 13): each ends in
//! a clear error with a position, or in the right result, quickly and in
//! bounded memory, through the harness and `validate`.

mod common;

use std::time::{Duration, Instant};

use common::{harness, muranopl, root, stderr, stdout};
use serde_json::{json, Value as J};

fn file(name: &str) -> String {
    let text = std::fs::read_to_string(root().join("tests/hostile").join(name)).unwrap();
    text.trim_end().to_string()
}

/// Answers one `harness dsl` request written as text (deep models cannot
/// go through `serde_json`'s writer).
fn answer(request: &str) -> J {
    let (mut answers, took) = harness("dsl", &[request.to_string()]);
    assert!(took < Duration::from_secs(10), "{took:?}");
    answers.remove(0)
}

fn request(classes: J, model: &str) -> String {
    format!(
        r#"{{"id": "h", "classes": {classes}, "format": "1.4", "model": {model}, "steps": [{{"on": "root", "method": "t", "args": [], "kwargs": {{}}}}], "serialize": false}}"#
    )
}

const ROOT: &str = r#"{"Objects": {"?": {"type": "T", "id": "root"}}}"#;

fn load_error(answer: &J) -> (String, String) {
    let e = &answer["load_error"];
    (
        e["names"][0].as_str().unwrap_or("").to_string(),
        e["message"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn hostile_class_files_end_in_errors_with_positions() {
    let plain = file("plain.yaml");
    let laughs = json!({"T.yaml": plain, "L.yaml": file("billion_laughs.yaml")});
    let (kind, msg) = load_error(&answer(&request(laughs, ROOT)));
    assert_eq!(kind, "ComposerError", "{msg}");
    assert!(
        msg.starts_with("L.yaml:") && msg.contains("expands to more than"),
        "{msg}"
    );

    let deep = format!(
        "Name: D\nX: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (kind, msg) = load_error(&answer(&request(
        json!({"T.yaml": plain, "D.yaml": deep}),
        ROOT,
    )));
    assert_eq!(kind, "ScannerError", "{msg}");
    assert!(msg.starts_with("D.yaml:2:"), "{msg}");

    for (name, chain) in [
        ("extends_itself.yaml", "(T -> T)"),
        ("extends_cycle.yaml", "(T -> U -> V -> T)"),
    ] {
        let (kind, msg) = load_error(&answer(&request(json!({"T.yaml": file(name)}), ROOT)));
        assert_eq!(kind, "DslSyntaxError", "{name}: {msg}");
        assert!(
            msg.starts_with("T.yaml:") && msg.contains(chain),
            "{name}: {msg}"
        );
    }
}

#[test]
fn hostile_models_end_in_errors_or_load() {
    let classes = json!({"T.yaml": file("plain.yaml")});
    let (kind, msg) = load_error(&answer(&request(
        classes.clone(),
        &file("dangling_model.json"),
    )));
    assert_eq!(kind, "NoObjectFoundError", "{msg}");
    assert!(msg.contains("nosuch"), "{msg}");
    let cyclic = answer(&request(
        classes.clone(),
        &file("reference_cycle_model.json"),
    ));
    assert_eq!(cyclic["steps"][0]["result"], 1, "{cyclic}");

    // An ownership chain 10^5 deep: refused by the nesting limit.
    let n = 100_000;
    let mut deep = String::new();
    for i in 0..n {
        deep.push_str(&format!(r#"{{"?": {{"type": "T", "id": "o{i}"}}, "c": "#));
    }
    deep.push_str("null");
    deep.push_str(&"}".repeat(n));
    let refused = answer(&request(classes, &format!(r#"{{"Objects": {deep}}}"#)));
    let (kind, msg) = load_error(&refused);
    assert_eq!(kind, "ValueError", "{refused}");
    assert!(msg.contains("recursion limit"), "{msg}");
}

/// `validate` on a deep model and on a model of many objects: the first is
/// refused with a position, the second validates within the time bound.
#[test]
fn validate_bounds_deep_and_large_models() {
    let dir = std::env::temp_dir().join(format!("muranopl-hostile-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 100_000;
    let mut deep = String::from(r#"{"Objects": "#);
    for i in 0..n {
        deep.push_str(&format!(
            r#"{{"?": {{"type": "com.example.Server", "id": "o{i}"}}, "settings": "#
        ));
    }
    deep.push_str("null");
    deep.push_str(&"}".repeat(n + 1));
    let path = dir.join("deep.json");
    std::fs::write(&path, deep).unwrap();
    let t = Instant::now();
    let o = muranopl(&[
        "validate",
        "-p",
        "examples/validate",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "input that cannot be parsed");
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        text.contains("recursion limit exceeded at line 1 column"),
        "{text}"
    );

    let count = if cfg!(debug_assertions) {
        50_000
    } else {
        1_000_000
    };
    let servers: Vec<String> = (0..count)
        .map(|i| {
            format!(
                r#"{{"?": {{"type": "com.example.Server", "id": "s{i}"}}, "name": "n", "port": 80, "tags": [], "enabled": true, "settings": {{"timeout": 1, "label": "x"}}}}"#
            )
        })
        .collect();
    let big = format!(
        r#"{{"Objects": {{"?": {{"type": "com.example.Fleet", "id": "f"}}, "servers": [{}]}}}}"#,
        servers.join(", ")
    );
    let path = dir.join("big.json");
    std::fs::write(&path, big).unwrap();
    let o = muranopl(&[
        "validate",
        "-p",
        "examples/validate",
        path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{} object(s)", count + 1)),
        "{}",
        stderr(&o)
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    std::fs::remove_dir_all(&dir).ok();
}
