//! One exit-code rule for every command of the README's Commands section
//! (`muranopl --help`'s last line): 2 for a usage error or input that
//! cannot be read, whatever the command; 1 only for what the input says
//! (an evaluation error, an invalid model, a failed test).
//! (Issue 39, item 8.)

use super::common::*;

/// Each command with a file or package that is not there, and with an
/// argument it does not know: both are 2, and the error names the path.
#[test]
fn a_missing_file_and_a_bad_argument_are_2_for_every_command() {
    let nope = "no-such-file.json";
    let pkg = "examples/no-such-package";
    let commands: [&[&str]; 17] = [
        &["yaql", "$", nope],
        &["validate", "-p", "examples/validate", nope],
        &["validate", "-p", pkg, "examples/people.json"],
        &["package", "check", pkg],
        &["package", "info", pkg],
        &["package", "pack", pkg, "-o", "no-such-dir/x.zip"],
        &["package", "bundle", "no-such.bundle"],
        &["ui", "model", pkg],
        &["ui", "forms", pkg],
        &["test", pkg],
        &["schema", "com.example.Hello", "-p", pkg],
        &["action", "com.example.Hello", "shout", "-p", pkg],
        &["run", "examples/hello-app", "--model", nope],
        &["run", "examples/hello-app", "--model", nope, "--trace"],
        &["repl", "--data", nope],
        &["repl", "-p", pkg],
        &["serve", pkg, "--addr", "127.0.0.1:0"],
    ];
    for args in commands {
        let o = muranopl(args);
        let missing = if args.contains(&nope) { nope } else { pkg };
        let missing = if args.contains(&"no-such.bundle") {
            "no-such.bundle"
        } else {
            missing
        };
        // `validate` reports each model on stdout, one that cannot be read
        // included; the other commands say what failed on stderr.
        let said = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {said}");
        // The path is named, once.
        assert_eq!(said.matches(missing).count(), 1, "{args:?}: {said}");
        let mut bad = args.to_vec();
        bad.insert(1, "--no-such-flag");
        let o = muranopl(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
    }
    // `lsp` reads the files its client names, not its arguments'.
    let o = muranopl(&["lsp", "--no-such-flag"]);
    assert_eq!(o.status.code(), Some(2), "lsp: {}", stderr(&o));
}

/// What the input says is 1: a model that violates its contracts, and an
/// expression that fails as it runs.
#[test]
fn what_the_input_says_is_1() {
    let o = muranopl(&["yaql", "-n", "1 / 0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let dir = std::env::temp_dir().join(format!("muranopl-exit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("m.json");
    std::fs::write(
        &model,
        r#"{"Objects": {"?": {"id": "s", "type": "com.example.Server"}, "name": null, "port": 1}}"#,
    )
    .unwrap();
    let o = muranopl(&[
        "validate",
        "-p",
        "examples/validate",
        model.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("1 invalid model(s)"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}
