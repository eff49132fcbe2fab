//! `muranopl repl` on a pseudo-terminal (expectrl), as a person types:
//! an evaluation, completion with Tab of a key of `$` and of a method,
//! an expression over two lines, `:type`, an error with its caret, and
//! `:quit`; and the same commands read from a pipe.

use std::process::Command;
use std::time::Duration;

use expectrl::{Eof, Expect, Session};

use crate::common;

fn data_file(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("muranopl-repl-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("data.json");
    std::fs::write(
        &f,
        r#"{"people": [{"name": "alice", "age": 34}, {"name": "bob", "age": 27},
                       {"name": "carol", "age": 41}], "city": "paris"}"#,
    )
    .unwrap();
    f
}

#[test]
fn the_repl_evaluates_completes_and_shows_errors_on_a_terminal() {
    let data = data_file("pty");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_muranopl"));
    cmd.args(["repl", "--no-history", "--data", data.to_str().unwrap()])
        .env("TERM", "xterm")
        .env("NO_COLOR", "1");
    let mut p = match Session::spawn(cmd) {
        Ok(p) => p,
        Err(e) => {
            common::skip(&format!("no pseudo-terminal: {e}"));
            return;
        }
    };
    p.set_expect_timeout(Some(Duration::from_secs(20)));
    p.expect("yaql> ").unwrap();

    p.send_line("$.people.where($.age > 30).select($.name)")
        .unwrap();
    p.expect(r#"["alice", "carol"]"#).unwrap();
    p.expect("yaql> ").unwrap();

    // Tab completes the key `people` of `$`, then the method `len`gth
    // is typed out.
    p.send("$.peo").unwrap();
    p.send("\t").unwrap();
    p.expect("people").unwrap();
    p.send(".len()\r").unwrap();
    p.expect("3\r\n").unwrap();
    p.expect("yaql> ").unwrap();

    // A method completed after `.`.
    p.send("$.city.toUp").unwrap();
    p.send("\t").unwrap();
    p.expect("toUpper").unwrap();
    p.send("()\r").unwrap();
    p.expect("\"PARIS\"").unwrap();
    p.expect("yaql> ").unwrap();

    // An unclosed bracket continues the expression on the next line.
    p.send_line("$.people.where(").unwrap();
    p.send_line("$.age < 30).select($.name)").unwrap();
    p.expect(r#"["bob"]"#).unwrap();
    p.expect("yaql> ").unwrap();

    p.send_line(":type 1 + 2").unwrap();
    p.expect("static: Int").unwrap();
    p.expect("value: int").unwrap();
    p.expect("yaql> ").unwrap();

    // An error, with a caret under where it is.
    p.send_line("$.city +").unwrap();
    p.expect("error[YaqlGrammarException]").unwrap();
    p.expect("1 | $.city +").unwrap();
    p.expect("^").unwrap();
    p.expect("yaql> ").unwrap();

    p.send_line(":quit").unwrap();
    p.expect(Eof).unwrap();
    let _ = std::fs::remove_dir_all(data.parent().unwrap());
}

#[test]
fn the_repl_reads_a_pipe_too() {
    let data = data_file("pipe");
    let input = "$.people.len()\n:time $.city\n:disasm 1 + 2\n:data /no/such/file\n:nope\n";
    let out = common::muranopl_with_input(
        &["repl", "--no-history", "--data", data.to_str().unwrap()],
        input,
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "3");
    assert_eq!(lines[1], "\"paris\"");
    assert!(lines[2].starts_with("compile ") && lines[2].contains(" ms, evaluate "));
    assert!(stdout.contains("; IR\nconst 3 : int"), "{stdout}");
    assert!(stderr.contains("error: /no/such/file"), "{stderr}");
    assert!(stderr.contains("unknown command :nope"), "{stderr}");
    let _ = std::fs::remove_dir_all(data.parent().unwrap());
}

#[test]
fn the_repl_calls_methods_of_a_loaded_model_on_a_terminal() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_muranopl"));
    cmd.args([
        "repl",
        "--no-history",
        "-p",
        "tests/trace/parallel",
        "--model",
        "tests/trace/model.json",
    ])
    .current_dir(common::root())
    .env("TERM", "xterm")
    .env("NO_COLOR", "1");
    let mut p = match Session::spawn(cmd) {
        Ok(p) => p,
        Err(e) => {
            common::skip(&format!("no pseudo-terminal: {e}"));
            return;
        }
    };
    p.set_expect_timeout(Some(Duration::from_secs(20)));
    p.expect("yaql> ").unwrap();
    // A method of the model's root object, its green threads included.
    p.send_line("$.deploy()").unwrap();
    p.expect("\"done\"").unwrap();
    p.expect("yaql> ").unwrap();
    // MuranoPL's own functions.
    p.send_line("new('com.example.Worker', name => z).work(2)")
        .unwrap();
    p.expect("\"z2\"").unwrap();
    p.expect("yaql> ").unwrap();
    // An exception a method throws, with its caret.
    p.send_line("$.explode()").unwrap();
    p.expect("it broke").unwrap();
    p.expect("1 | $.explode()").unwrap();
    p.expect("^^^").unwrap();
    p.expect("yaql> ").unwrap();
    p.send_line(":quit").unwrap();
    p.expect(Eof).unwrap();
}

#[test]
fn the_repl_resolves_class_names_as_the_packages_code_does() {
    // Short names in the package's namespace (`=: com.example`), its own
    // class and the library's; `:Name` and `std:Name` (a prefix its class
    // declares); an unknown short name is looked for in that namespace.
    let out = common::muranopl_with_input(
        &[
            "repl",
            "--no-history",
            "-p",
            "tests/serve/greeter-app",
            "-L",
            "tests/serve",
        ],
        "new(Greeter, who => x).who\n\
         type(new(Greeter))\n\
         :Greeting.phrase(y)\n\
         std:Environment\n\
         new(Greeting).phrase(z)\n\
         new(Nope)\n",
    );
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "\"x\"",
            r#"{"$type": "com.example.Greeter"}"#,
            "\"hello, y\"",
            r#"{"$type": "io.murano.Environment"}"#,
            "\"hello, z\"",
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"Class "com.example.Nope" is not found"#),
        "{stderr}"
    );
    assert!(!stderr.contains("unknown command"), "{stderr}");
}

#[test]
fn the_repl_knows_the_short_names_of_classes_in_other_namespaces() {
    // tests/repl/names-app: Main and Part in com.example.names (the `=`
    // most classes declare), Helper in com.example.other; Main declares
    // the prefix `other`.
    let out = common::muranopl_with_input(
        &["repl", "--no-history", "-p", "tests/repl/names-app"],
        "new(Helper).help(you)\n\
         new(Part).label()\n\
         type(new(Main))\n\
         other:Helper\n\
         new(Nothing)\n",
    );
    let (stdout, stderr) = (common::stdout(&out), common::stderr(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "\"helping you\"",
            "\"part\"",
            r#"{"$type": "com.example.names.Main"}"#,
            r#"{"$type": "com.example.other.Helper"}"#,
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"Class "com.example.names.Nothing" is not found"#),
        "{stderr}"
    );
}
