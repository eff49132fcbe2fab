//! `muranopl package check` as a lint: every lint at its position on a
//! package made to trip each once, the output formats, and the switches.

use std::process::{Command, Output};

use crate::common;

fn check(extra: &[&str]) -> Output {
    let mut args = vec![
        "package",
        "check",
        "tests/lint/linty",
        "-L",
        "tests/lint/lib",
    ];
    args.extend(extra);
    Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(&args)
        .output()
        .expect("muranopl runs")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// `(lint, file name, line, col)` of each warning.
fn warnings(j: &serde_json::Value) -> Vec<(String, String, u64, u64)> {
    j["warnings"]
        .as_array()
        .expect("a warnings list")
        .iter()
        .map(|w| {
            let file = w["file"].as_str().unwrap_or("");
            (
                w["kind"].as_str().unwrap_or("").to_string(),
                file.rsplit('/').next().unwrap_or(file).to_string(),
                w["line"].as_u64().unwrap_or(0),
                w["col"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn every_lint_reports_at_its_position() {
    let o = check(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "warnings alone pass");
    let j = json(&o);
    assert_eq!(j["package"], "ex.Linty");
    assert_eq!(j["errors"].as_array().map(Vec::len), Some(0));
    let w = |k: &str, f: &str, l: u64, c: u64| (k.to_string(), f.to_string(), l, c);
    assert_eq!(
        warnings(&j),
        vec![
            w("unreachable-code", "Helper.yaml", 14, 13),
            w("undefined-variable", "Helper.yaml", 15, 9),
            w("default-violates-contract", "Linty.yaml", 12, 14),
            w("unknown-key", "Linty.yaml", 16, 5),
            w("unparsable-yaql", "Linty.yaml", 26, 15),
            w("undefined-variable", "Linty.yaml", 31, 21),
            w("unknown-method", "Linty.yaml", 33, 9),
            w("unknown-property", "Linty.yaml", 34, 17),
            w("unreachable-code", "Linty.yaml", 35, 9),
            w("unreferenced-class", "Orphan.yaml", 4, 1),
            w("unreferenced-class", "Unlisted.yaml", 1, 1),
            w("unknown-key", "manifest.yaml", 7, 1),
            w("unused-require", "manifest.yaml", 9, 3),
        ]
    );
    let by_kind = |k: &str| {
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == k)
            .unwrap()
            .clone()
    };
    assert_eq!(by_kind("unknown-method")["help"], "did you mean `deploy`?");
    assert_eq!(by_kind("unknown-property")["help"], "did you mean `title`?");
    let manifest_key = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "unknown-key" && w["line"] == 7)
        .unwrap();
    assert_eq!(manifest_key["help"], "did you mean `Tags`?");
    let m = by_kind("unparsable-yaql")["message"].to_string();
    assert!(m.contains("format('{0}', $count +)"), "{m}");
    let m = by_kind("default-violates-contract")["message"].to_string();
    assert!(
        m.contains("property `port`") && m.contains("Value 0"),
        "{m}"
    );
    assert_eq!(j["lints"]["unreachable-code"], 2);
    assert_eq!(j["lints"]["unknown-method"], 1);
}

#[test]
fn human_output_shows_snippets_and_a_summary() {
    let o = check(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning[undefined-variable]: `$totl` is not assigned on any path")
            && err.contains("31 |           - Return: $totl\n")
            && err.contains("|                     ^^^^^"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("ex.Linty: 3 classes compiled, 0 errors, 13 warnings: 1 unparsable-yaql,"),
        "{out}"
    );
}

#[test]
fn switches_allow_lints_and_deny_warnings() {
    let o = check(&[
        "--format",
        "json",
        "-A",
        "unreachable-code",
        "--allow",
        "unused-require",
    ]);
    let kinds: Vec<String> = warnings(&json(&o)).into_iter().map(|w| w.0).collect();
    assert_eq!(kinds.len(), 10);
    assert!(!kinds
        .iter()
        .any(|k| k == "unreachable-code" || k == "unused-require"));
    assert_eq!(check(&["--deny-warnings"]).status.code(), Some(1));
    let o = check(&["-A", "no-such-lint"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown lint `no-such-lint`"));
}

#[test]
fn sarif_lists_each_finding_with_its_rule_and_region() {
    let log = json(&check(&["--format", "sarif"]));
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "muranopl");
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 13);
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "unparsable-yaql")
        .unwrap();
    assert_eq!(r["level"], "warning");
    let loc = &r["locations"][0]["physicalLocation"];
    assert!(loc["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .ends_with("tests/lint/linty/Classes/Linty.yaml"));
    assert_eq!(loc["region"]["startLine"], 26);
    assert_eq!(loc["region"]["startColumn"], 15);
}

#[test]
fn errors_still_fail_the_check_in_every_format() {
    for format in ["human", "json", "sarif"] {
        let o = Command::new(env!("CARGO_BIN_EXE_muranopl"))
            .args([
                "package",
                "check",
                "tests/diagnostics/bad-extends",
                "--format",
                format,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{format}");
    }
}

/// A package directory under the system temp dir, made fresh: `manifest`
/// and `Classes/NAME` for each `(NAME, text)` of `classes`.
fn temp_package(tag: &str, manifest: &str, classes: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("muranopl-lint-{tag}-{}", std::process::id()));
    write_package(&dir, manifest, classes);
    dir
}

/// [`temp_package`] at `dir`.
fn write_package(dir: &std::path::Path, manifest: &str, classes: &[(&str, &str)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("Classes")).unwrap();
    std::fs::write(dir.join("manifest.yaml"), manifest).unwrap();
    for (name, text) in classes {
        std::fs::write(dir.join("Classes").join(name), text).unwrap();
    }
}

/// The manifest of a library `p.x` of one class, `p.x.A` in `A.yaml`.
const ONE_CLASS: &str = "Format: 1.4\nType: Library\nFullName: p.x\nClasses:\n  p.x.A: A.yaml\n";

fn check_dir(dir: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(["package", "check"])
        .arg(dir)
        .args(extra)
        .output()
        .expect("muranopl runs")
}

/// Issue 32 item 6: an error of class `p.x.ServerGroup` used to hide the
/// whole check of `p.x.Server` (errors were matched to classes by
/// substring): one error instead of two, and `Server` neither compiled
/// nor listed. Errors now belong to classes by identity.
#[test]
fn an_error_hides_no_class_whose_name_is_a_prefix_of_its_class() {
    let class = |name: &str, parent: &str| {
        format!(
            "Namespaces:\n  =: p.x\nName: {name}\nExtends: {parent}\n\
             Methods:\n  run:\n    Body:\n      - Return: 1\n"
        )
    };
    let dir = temp_package(
        "prefix",
        "Format: 1.4\nType: Library\nFullName: p.x\nClasses:\n  p.x.ServerGroup: ServerGroup.yaml\n  \
         p.x.Server: Server.yaml\n  p.x.Serve: Serve.yaml\n  p.x.Broken: Broken.yaml\n  \
         p.x.Brok: Brok.yaml\n  p.x.AlsoBroken: Broken.yaml\n  p.x.Ghost: Serve.yaml\n",
        &[
            ("ServerGroup.yaml", &class("ServerGroup", "p.x.NoSuchParent")),
            ("Server.yaml", &class("Server", "p.x.NoSuchParentEither")),
            ("Serve.yaml", &class("Serve", "io.murano.Object")),
            // A file that does not parse keeps the classes listed in it
            // from loading, and is reported once.
            ("Broken.yaml", "Name: Broken\nMethods: [\n"),
            ("Brok.yaml", &class("Brok", "io.murano.Object")),
        ],
    );
    let o = check_dir(&dir, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let j = json(&o);
    assert_eq!(j["classes"], serde_json::json!(["p.x.Serve", "p.x.Brok"]));
    let errors: Vec<String> = j["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    let not_found =
        |p: &str| format!("Class \"p.x.{p}\" is not found in io.murano/0.0.0, p.x/0.0.0");
    assert_eq!(
        errors,
        [
            "while parsing a node, did not find expected node content".to_string(),
            format!("class p.x.ServerGroup: {}", not_found("NoSuchParent")),
            format!("class p.x.Server: {}", not_found("NoSuchParentEither")),
        ]
    );
    assert!(j["errors"][0]["file"]
        .as_str()
        .unwrap()
        .ends_with("Classes/Broken.yaml"));
    // A listed class its file does not define is a warning, not compiled.
    let warnings: Vec<&str> = (j["warnings"].as_array().unwrap().iter())
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert_eq!(warnings, ["PackageWarning"]);
    let w = j["warnings"][0]["message"].as_str().unwrap();
    assert!(
        w.contains("the manifest lists class p.x.Ghost, but the file defines p.x.Serve "),
        "{w}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 32 item 7: `package check` was quadratic (and worse) in the
/// number of classes: 20,000 took 2.9 s as a library (release), and an
/// application of 5,000 took 270 s (each class was looked for in every
/// file, with every class declaration scanned per file). Here an
/// application of 20,000 classes, each in its own file and named by the
/// one before it, loads, compiles and lints with no finding well within
/// the bound even in a debug build (about 5 s when measured; 40,000 take
/// about 2.5 s in release).
#[test]
fn a_package_of_20000_classes_checks_in_linear_time() {
    const N: usize = 20_000;
    let mut manifest =
        String::from("Format: 1.4\nType: Application\nFullName: big.Pkg\nClasses:\n");
    let mut classes = Vec::new();
    for i in 0..N {
        manifest.push_str(&format!("  big.C{i}: C{i}.yaml\n"));
        let text = format!(
            "Namespaces:\n  =: big\nName: C{i}\nProperties:\n  x:\n    Contract: $.int()\n    \
             Default: 1\nMethods:\n  run:\n    Body:\n      - $y: $.x + 1\n      \
             - Return: new(big.C{})\n",
            (i + 1) % N
        );
        classes.push((format!("C{i}.yaml"), text));
    }
    let files: Vec<(&str, &str)> = classes
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    let dir = temp_package("big", &manifest, &files);
    let t = std::time::Instant::now();
    let o = check_dir(&dir, &["--format", "json"]);
    let took = t.elapsed();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j = json(&o);
    assert_eq!(j["classes"].as_array().map(Vec::len), Some(N));
    assert_eq!(j["errors"], serde_json::json!([]));
    assert_eq!(j["warnings"], serde_json::json!([]));
    assert!(took < std::time::Duration::from_secs(60), "took {took:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 32 item 8: a package that does not load (a manifest YAML error,
/// no FullName, a bad class name, no such directory) printed nothing on
/// stdout in `--format json|sarif` (0 bytes; a CI step uploading SARIF
/// got an empty file). Each format now prints a whole document carrying
/// the error at its position; the exit status stays 1.
#[test]
fn a_package_that_does_not_load_is_a_document_in_json_and_sarif() {
    let manifest = |tag: &str, text: &str| temp_package(tag, text, &[]);
    let cases = [
        (
            manifest("yaml", "Format: 1.4\nType: Library\nFullName: [x\n"),
            "while parsing a flow sequence, expected ',' or ']'",
            Some((4, 1)),
        ),
        (
            manifest("noname", "Format: 1.4\nType: Library\n"),
            "the manifest has no FullName",
            Some((1, 1)),
        ),
        (
            manifest(
                "badclass",
                "Format: 1.4\nType: Library\nFullName: a.b\nClasses:\n  \"bad name\": A.yaml\n",
            ),
            "invalid class name bad name",
            Some((5, 3)),
        ),
        (
            std::env::temp_dir().join(format!("muranopl-lint-none-{}", std::process::id())),
            "",
            None,
        ),
    ];
    for (dir, message, at) in &cases {
        let shown = dir.display().to_string();
        let message = if message.is_empty() {
            format!("{shown}: no such package directory or file")
        } else {
            message.to_string()
        };
        let file = if at.is_some() {
            format!("{shown}/manifest.yaml")
        } else {
            shown.clone()
        };
        let o = check_dir(dir, &["--format", "json"]);
        assert_eq!(o.status.code(), Some(2), "{shown}");
        let j = json(&o);
        assert_eq!(j["package"], serde_json::Value::Null);
        assert_eq!(j["classes"], serde_json::json!([]));
        assert_eq!(j["warnings"], serde_json::json!([]));
        let e = &j["errors"][0];
        assert_eq!(j["errors"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            (
                e["kind"].as_str(),
                e["message"].as_str(),
                e["file"].as_str()
            ),
            (
                Some("PackageLoadError"),
                Some(message.as_str()),
                Some(file.as_str())
            )
        );
        assert_eq!(
            (e["line"].as_u64(), e["col"].as_u64()),
            at.map_or((None, None), |(l, c)| (Some(l), Some(c)))
        );

        let o = check_dir(dir, &["--format", "sarif"]);
        assert_eq!(o.status.code(), Some(2), "{shown}");
        let log = json(&o);
        assert_eq!(log["version"], "2.1.0");
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["ruleId"], "PackageLoadError");
        assert_eq!(results[0]["level"], "error");
        assert_eq!(results[0]["message"]["text"], message.as_str());
        let loc = &results[0]["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], file.as_str());
        if let Some((l, c)) = at {
            assert_eq!(
                (
                    loc["region"]["startLine"].as_u64(),
                    loc["region"]["startColumn"].as_u64()
                ),
                (Some(*l), Some(*c))
            );
        }
        std::fs::remove_dir_all(dir).ok();
    }
}

/// Issue 32 item 12: `package pack` left out a file whose name is not
/// UTF-8 (`Resources/caf\xe9.txt` was missing from the zip, exit 0, no
/// warning). It now refuses, naming the file with its bytes escaped; a
/// UTF-8 name (`café`) is packed.
#[cfg(unix)]
#[test]
fn pack_refuses_a_file_name_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let class = "Namespaces:\n  =: p.x\nName: A\n";
    let dir = temp_package("pack", ONE_CLASS, &[("A.yaml", class)]);
    std::fs::create_dir_all(dir.join("Resources")).unwrap();
    std::fs::write(dir.join("Resources/café.txt"), "ok").unwrap();
    let out = dir.with_extension("zip");
    let pack = || {
        Command::new(env!("CARGO_BIN_EXE_muranopl"))
            .args(["package", "pack"])
            .arg(&dir)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = pack();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("{}: 3 files\n", out.display())
    );
    std::fs::remove_file(&out).unwrap();
    let bad = std::ffi::OsStr::from_bytes(b"caf\xe9\x1b.txt");
    std::fs::write(dir.join("Resources").join(bad), "latin-1").unwrap();
    let o = pack();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: {}: the name of Resources/caf\\xe9\\x1b.txt is not UTF-8, and the entries \
             of a package's .zip are named in UTF-8 (murano reads them so): rename it\n",
            dir.display()
        )
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 32 item 10 (`package check`): text from the package (YAQL,
/// file names, messages, snippets) reached the terminal raw, so that an
/// escape sequence in a class file could retitle or clear it. Human
/// output now shows control characters as Python's `repr` writes them;
/// JSON keeps the text as it is (JSON escapes controls itself).
#[test]
fn human_output_escapes_control_characters_from_the_package() {
    let dir = temp_package(
        "escapes",
        "Format: 1.4\nType: Library\nFullName: p.x\nClasses:\n  p.x.A: A.yaml\n  \
         p.x.B: \"B\\e]0;T\\a.yaml\"\n  p.x.C: C.yaml\n",
        &[
            (
                "A.yaml",
                "Namespaces:\n  =: p.x\nName: A\nMethods:\n  run:\n    Body:\n      \
                 - Return: \"f(\x1b]0;PWNED\x07 $x +)\"\n      - $y: \"\x1b[2J\"\n",
            ),
            ("C.yaml", "Name: C\nx: [\x1b[2J\n"),
        ],
    );
    let o = check_dir(&dir, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(!err.contains(['\x1b', '\x07']), "{err:?}");
    for shown in [
        // A message and its snippet (a lint finding).
        "warning[unparsable-yaql]: `f(\\x1b]0;PWNED\\x07 $x +)` looks like a YAQL expression \
         but does not parse (Illegal character '\\x1b')",
        "7 |       - Return: \"f(\\x1b]0;PWNED\\x07 $x +)\"\n  |                 ^^^^^^^^^^^^^^^^^^^^^^^^^^\n",
        "8 |       - $y: \"\\x1b[2J\"\n",
        // A file name in an error.
        "Classes/B\\x1b]0;T\\x07.yaml: File with class definition not found (class p.x.B)",
        // The snippet of a load error, its span moved past the escape.
        "2 | x: [\\x1b[2J\n  |         ^^^\n",
    ] {
        assert!(err.contains(shown), "{shown}\nnot in\n{err}");
    }
    let j = json(&check_dir(&dir, &["--format", "json"]));
    let finding = &j["warnings"][0]["message"];
    assert!(
        finding
            .as_str()
            .unwrap()
            .contains("`f(\x1b]0;PWNED\x07 $x +)`"),
        "{finding}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 32 (smaller): the `unparsable-yaql` lint left out strings over
/// 400 bytes, so a long one-line expression that does not parse was not
/// reported. It is now (up to 1 MiB), its message quoting the start.
#[test]
fn a_long_unparsable_expression_is_reported() {
    let expr = format!("format('{{0}}', {} +)", vec!["$count"; 80].join(" + "));
    assert!(expr.len() > 400);
    let class = format!(
        "Namespaces:\n  =: p.x\nName: A\nMethods:\n  run:\n    Arguments:\n      - count:\n          \
         Contract: $.int()\n    Body:\n      - Return: \"{expr}\"\n"
    );
    let dir = temp_package("long", ONE_CLASS, &[("A.yaml", &class)]);
    let j = json(&check_dir(&dir, &["--format", "json"]));
    let w = &j["warnings"];
    assert_eq!(w.as_array().map(Vec::len), Some(1), "{w}");
    assert_eq!(w[0]["kind"], "unparsable-yaql");
    assert_eq!(
        (w[0]["line"].as_u64(), w[0]["col"].as_u64()),
        (Some(10), Some(17))
    );
    let start: String = expr.chars().take(120).collect();
    assert_eq!(
        w[0]["message"].as_str().unwrap(),
        format!(
            "`{start}...` ({} characters) looks like a YAQL expression but does not parse \
             (Parse error: unexpected ')'), so it is a plain string",
            expr.len()
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The `artifactLocation.uri` of each SARIF result.
fn sarif_uris(o: &Output) -> Vec<String> {
    let log = json(o);
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
            loc.as_str().unwrap_or("").to_string()
        })
        .collect()
}

/// Issue 32 (smaller): SARIF `uri`s were the file names as they are
/// (spaces, `%`, non-ASCII), not the URI references SARIF requires
/// (RFC 3986). They are percent-encoded now.
#[test]
fn sarif_uris_are_percent_encoded() {
    let dir = std::env::temp_dir().join(format!("muranopl-lint 100% café-{}", std::process::id()));
    let a = "Namespaces:\n  =: p.x\nName: A\nMethods:\n  run:\n    Body:\n      - Return: \"f($x +)\"\n";
    write_package(&dir, ONE_CLASS, &[("A.yaml", a)]);
    let o = check_dir(&dir, &["--format", "sarif"]);
    let tmp = std::env::temp_dir().display().to_string();
    let encoded = format!(
        "{tmp}/muranopl-lint%20100%25%20caf%C3%A9-{}/Classes/A.yaml",
        std::process::id()
    );
    assert_eq!(sarif_uris(&o), [encoded]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 32 (smaller): a file or package name that is not UTF-8 became
/// U+FFFD in a SARIF `uri` (`%EF%BF%BD` once encoded); its own bytes are
/// percent-encoded now: the package directory's, and an unlisted class
/// file's.
#[cfg(unix)]
#[test]
fn sarif_uris_keep_the_bytes_of_names_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    // Latin-1 é: byte 0xe9 alone.
    let mut name = b"muranopl-lint-caf\xe9-".to_vec();
    name.extend_from_slice(std::process::id().to_string().as_bytes());
    let dir = std::env::temp_dir().join(std::ffi::OsStr::from_bytes(&name));
    write_package(
        &dir,
        ONE_CLASS,
        &[("A.yaml", "Namespaces:\n  =: p.x\nName: A\n")],
    );
    let unlisted = std::ffi::OsStr::from_bytes(b"B\xe9.yaml");
    std::fs::write(dir.join("Classes").join(unlisted), "Name: B\n").unwrap();
    let o = check_dir(&dir, &["--format", "sarif"]);
    let tmp = std::env::temp_dir().display().to_string();
    let pkg = format!("{tmp}/muranopl-lint-caf%E9-{}", std::process::id());
    assert_eq!(sarif_uris(&o), [format!("{pkg}/Classes/B%E9.yaml")]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 32 item 7 (memory): every diagnostic held a copy of its file's
/// text, so thousands of findings in one big class file took gigabytes
/// (5,000 in one 800 KB file: 4.2 GB, 7.7 s). Diagnostics now keep no
/// text (JSON, SARIF) or are rendered as they are made from their own
/// lines (human output); either way the check stays small.
#[test]
fn many_findings_in_one_big_file_take_little_memory() {
    const N: usize = 4_000;
    let mut manifest = String::from("Format: 1.4\nType: Library\nFullName: big.One\nClasses:\n");
    let mut docs = Vec::new();
    for i in 0..N {
        manifest.push_str(&format!("  big.C{i}: All.yaml\n"));
        docs.push(format!(
            "Namespaces:\n  =: big\nName: C{i}\nBogus{i}: 1\nMethods:\n  m:\n    Body:\n      \
             - Return: 1\n"
        ));
    }
    let dir = temp_package("onefile", &manifest, &[("All.yaml", &docs.join("---\n"))]);
    let path = dir.display().to_string();
    for format in ["json", "human"] {
        let args = ["package", "check", &path, "--format", format];
        let w = common::watch_ends(&args, 400 << 20, std::time::Duration::from_secs(120), 0);
        assert!(w.peak < 250 << 20, "{format}: peak {} MB", w.peak >> 20);
        if format == "json" {
            let j: serde_json::Value = serde_json::from_str(&w.stdout).unwrap();
            assert_eq!(j["lints"]["unknown-key"], N);
        } else {
            assert_eq!(
                w.stdout,
                format!("big.One: {N} classes compiled, 0 errors, {N} warnings: {N} unknown-key\n")
            );
            assert_eq!(w.stderr.matches("warning[unknown-key]").count(), N);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
