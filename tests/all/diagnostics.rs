//! The rendered text of representative errors, one golden file each in
//! `tests/golden/diagnostics/` (the binary run from the repository root,
//! so positions are relative paths; stderr, then stdout). Regenerate with `DIAG_BLESS=1 cargo
//! test --test diagnostics`.

use crate::common;

use common::{muranopl, muranopl_with_input, stderr};

/// `(name, arguments, standard input, exit status)`.
const CASES: &[(&str, &[&str], &str, i32)] = &[
    ("yaql_grammar", &["yaql", "-n", "$.where($ >)"], "", 3),
    ("yaql_lexical", &["yaql", "-n", "1 + (2 ? 3)"], "", 3),
    ("unknown_function", &["yaql", "-n", "lenn([1, 2])"], "", 1),
    ("unknown_method", &["yaql", "-n", "[3, 1].ordrBy($)"], "", 1),
    ("key_error", &["yaql", "$.a + $.b"], r#"{"a": 1}"#, 1),
    (
        "bad_json_input",
        &["yaql", "$", "tests/diagnostics/bad.json"],
        "",
        2,
    ),
    ("jsonl_line", &["yaql", "--jsonl", "10 / $"], "1\n0\n", 1),
    (
        "muranopl_stack",
        &[
            "run",
            "tests/diagnostics/thrower",
            "--model",
            "tests/diagnostics/thrower-model.json",
            "-q",
        ],
        "",
        1,
    ),
    (
        "contract_violation",
        &[
            "action",
            "com.example.Hello",
            "shout",
            "-p",
            "examples/hello-app",
            "--args",
            r#"{"text": "hi", "times": 0}"#,
        ],
        "",
        1,
    ),
    (
        "yaml_syntax",
        &["package", "check", "tests/diagnostics/bad-yaml"],
        "",
        1,
    ),
    (
        "unknown_parent_class",
        &["package", "check", "tests/diagnostics/bad-extends"],
        "",
        1,
    ),
    (
        "muranopl_syntax",
        &["test", "tests/hostile/broken-tests"],
        "",
        2,
    ),
    (
        "model_violation",
        &[
            "validate",
            "-p",
            "examples/validate",
            "tests/diagnostics/bad-model.json",
            "-q",
        ],
        "",
        1,
    ),
    (
        "message_format_json",
        &["--message-format", "json", "yaql", "-n", "[1].selct($)"],
        "",
        1,
    ),
];

#[test]
fn diagnostics_render_as_their_golden_files() {
    let bless = std::env::var_os("DIAG_BLESS").is_some();
    let dir = common::root().join("tests/golden/diagnostics");
    let mut wrong = Vec::new();
    for (name, args, input, status) in CASES {
        let o = if input.is_empty() {
            muranopl(args)
        } else {
            muranopl_with_input(args, input)
        };
        assert_eq!(o.status.code(), Some(*status), "{name}: {}", stderr(&o));
        // What a user sees: the diagnostics, then what went to stdout.
        let got = stderr(&o) + &common::stdout(&o);
        let path = dir.join(format!("{name}.txt"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            wrong.push(format!("{name}:\n--- want\n{want}--- got\n{got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
