//! `muranopl lsp` through real LSP sessions over stdio: a client that
//! frames JSON-RPC messages (`Content-Length`), opens fixture packages'
//! files, edits them, and asks for hover, definition, completion and
//! symbols; the server's diagnostics against `package check --format
//! json` over every fixture package; and the latency of diagnostics
//! after an edit.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value as J};

use crate::common;

const TIMEOUT: Duration = Duration::from_secs(60);

/// The fixture catalogue, or None (with a SKIP line) when it is absent.
fn apps() -> Option<PathBuf> {
    let apps = common::root().join("../shared/fixtures/apps");
    match apps.canonicalize() {
        Ok(p) if p.is_dir() => Some(p),
        _ => {
            common::skip("../shared/fixtures/apps is absent: no LSP session over the fixtures");
            None
        }
    }
}

fn uri(p: &Path) -> String {
    url::Url::from_file_path(p).unwrap().to_string()
}

/// An LSP client on a `muranopl lsp` process.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<J>,
    next_id: i64,
    /// Notifications received while waiting for something else.
    pending: Vec<J>,
}

impl Client {
    fn start(args: &[&str], root: Option<&Path>) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_muranopl"))
            .arg("lsp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run muranopl lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("a Content-Length header")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let msg: J = serde_json::from_slice(&body).expect("a JSON message");
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            messages: rx,
            next_id: 0,
            pending: Vec::new(),
        };
        let root_uri = root.map(uri);
        let folders = root.map(|r| json!([{"uri": uri(r), "name": "root"}]));
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "workspaceFolders": folders,
                   "capabilities": {}}),
        );
        assert_eq!(init["capabilities"]["hoverProvider"], true, "{init}");
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, msg: J) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: J) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn recv(&mut self, deadline: Instant) -> J {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.messages.recv_timeout(left) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("no answer from the server in time"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// Sends a request and returns its result (notifications that come
    /// first are kept).
    fn request(&mut self, method: &str, params: J) -> J {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let m = self.recv(deadline);
            if m["id"] == id && m.get("method").is_none() {
                assert!(m.get("error").is_none(), "{method}: {m}");
                return m["result"].clone();
            }
            self.pending.push(m);
        }
    }

    /// The diagnostics published for `uri` at version `version` (the
    /// first such notification, kept or to come).
    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<J> {
        let is = |m: &J| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        };
        if let Some(i) = self.pending.iter().position(is) {
            let m = self.pending.remove(i);
            return m["params"]["diagnostics"].as_array().unwrap().clone();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let m = self.recv(deadline);
            if is(&m) {
                return m["params"]["diagnostics"].as_array().unwrap().clone();
            }
            self.pending.push(m);
        }
    }

    fn open(&mut self, path: &Path, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "yaml",
                                    "version": 1, "text": text}}),
        );
    }

    fn change(&mut self, path: &Path, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(path), "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    fn at(&mut self, method: &str, path: &Path, line: usize, character: usize) -> J {
        self.request(
            method,
            json!({"textDocument": {"uri": uri(path)},
                   "position": {"line": line, "character": character}}),
        )
    }

    fn stop(mut self) {
        self.request("shutdown", J::Null);
        self.notify("exit", J::Null);
        let status = self.child.wait().unwrap();
        assert!(
            status.success(),
            "the server exits 0 after shutdown: {status}"
        );
    }
}

/// The 0-based line and column (characters; the fixtures are ASCII) of
/// the first `needle` in `text`, plus `shift` columns.
fn find(text: &str, needle: &str, shift: usize) -> (usize, usize) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in the text"));
    let (line, col) = line_col(text, at);
    (line, col + shift)
}

/// The line and column (in bytes: the fixtures' lines are ASCII) of byte
/// `at` of `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let line = text[..at].matches('\n').count();
    (line, at - text[..at].rfind('\n').map_or(0, |i| i + 1))
}

/// A `textDocument/references` request at `(line, character)` of `file`.
fn references(c: &mut Client, file: &Path, (l, ch): (usize, usize)) -> J {
    c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri(file)}, "position": {"line": l, "character": ch},
               "context": {"includeDeclaration": true}}),
    )
}

#[test]
fn an_lsp_session_reports_a_mistyped_method_and_navigates_the_fixtures() {
    let Some(apps) = apps() else { return };
    let file = apps.join("Docker-Redis/Classes/DockerRedis.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut c = Client::start(&[], Some(&apps));
    c.open(&file, &text);
    assert_eq!(c.diagnostics(&uri(&file), 1), Vec::<J>::new());

    // A typo in a method name: the unknown-method lint, with its help, on
    // the call.
    let call = "$._environment.reporter.report($this, 'Installing Redis')";
    let typo = call.replace(".report(", ".reportt(");
    let edited = text.replacen(call, &typo, 1);
    c.change(&file, 2, &edited);
    let d = c.diagnostics(&uri(&file), 2);
    assert_eq!(d.len(), 1, "{d:?}");
    let (line, col) = find(&edited, &typo, 0);
    assert_eq!(d[0]["code"], "unknown-method");
    assert_eq!(d[0]["severity"], 2, "a warning");
    assert_eq!(d[0]["source"], "muranopl");
    assert_eq!(
        d[0]["range"],
        json!({"start": {"line": line, "character": col},
               "end": {"line": line, "character": col + typo.len()}})
    );
    let msg = d[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("`reportt`") && msg.ends_with("help: did you mean `report`?"),
        "{msg}"
    );
    assert_eq!(d[0]["data"]["help"], "did you mean `report`?");

    // Hover on a YAQL function: its signature and the library's doc.
    let (l, ch) = find(&edited, ".format($.name)", 2);
    let h = c.at("textDocument/hover", &file, l, ch);
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains("format(") && md.contains("Matches yaql"),
        "{md}"
    );
    assert_eq!(h["range"]["start"]["character"], ch - 1);

    // Hover on a property through `$.`: its contract.
    let (l, ch) = find(&edited, "If: $.publish", 6);
    let h = c.at("textDocument/hover", &file, l, ch);
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("publish: $.bool().notNull()"), "{md}");

    // Definition of a class in another package, through a namespace
    // prefix.
    let (l, ch) = find(&edited, "interfaces:DockerApplication", 14);
    let defs = c.at("textDocument/definition", &file, l, ch);
    let target = apps.join("DockerInterfacesLibrary/Classes/DockerApplication.yaml");
    assert_eq!(defs[0]["uri"], uri(&target), "{defs}");
    let target_text = std::fs::read_to_string(&target).unwrap();
    let name_line = find(&target_text, "Name: DockerApplication", 0).0;
    assert!(defs[0]["range"]["start"]["line"].as_u64().unwrap() <= name_line as u64);

    // Definition of a method called through `$.`.
    let (l, ch) = find(&edited, "$.applicationEndpoints", 3);
    let defs = c.at("textDocument/definition", &file, l, ch);
    assert!(!defs.as_array().unwrap().is_empty(), "{defs}");

    // Completion after `$.`: the class's properties and methods, and its
    // parents'.
    let (l, ch) = find(&edited, "If: $.publish", 6);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(&file)}, "position": {"line": l, "character": ch}}),
    );
    let labels: BTreeSet<&str> = (items.as_array().unwrap().iter())
        .filter_map(|i| i["label"].as_str())
        .collect();
    for want in ["name", "publish", "getContainer", "onInstallationStart"] {
        assert!(labels.contains(want), "{want} in {labels:?}");
    }
    assert!(!labels.contains("toUpper"), "no YAQL functions after `$.`");

    // Completion of functions after `.`.
    let (l, ch) = find(&edited, ".format($.name)", 1);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(&file)}, "position": {"line": l, "character": ch}}),
    );
    let labels: BTreeSet<&str> = (items.as_array().unwrap().iter())
        .filter_map(|i| i["label"].as_str())
        .collect();
    assert!(
        labels.contains("toUpper") && labels.contains("where"),
        "{labels:?}"
    );

    // In a contract, `$.` offers the contract functions.
    let (l, ch) = find(&edited, "Contract: $.bool()", 12);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(&file)}, "position": {"line": l, "character": ch}}),
    );
    let labels: BTreeSet<&str> = (items.as_array().unwrap().iter())
        .filter_map(|i| i["label"].as_str())
        .collect();
    for want in ["bool", "string", "int", "notNull", "class", "check"] {
        assert!(labels.contains(want), "{want} in {labels:?}");
    }
    assert!(!labels.contains("publish"), "no properties in a contract");

    // The outline.
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri(&file)}}),
    );
    assert_eq!(symbols[0]["name"], "com.example.docker.DockerRedis");
    let children: Vec<&str> = (symbols[0]["children"].as_array().unwrap().iter())
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(children.starts_with(&["name", "publish"]), "{children:?}");
    assert!(children.contains(&"getContainer"), "{children:?}");

    // The typo fixed: the diagnostic goes.
    c.change(&file, 3, &text);
    assert_eq!(c.diagnostics(&uri(&file), 3), Vec::<J>::new());
    c.stop();
}

#[test]
fn a_yaql_syntax_error_is_shown_at_its_column_in_the_string() {
    let Some(apps) = apps() else { return };
    let file = apps.join("Docker-Redis/Classes/DockerRedis.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let expr = "switch($.publish => public, true => internal)";
    let broken = format!("{expr})");
    let edited = text.replacen(expr, &broken, 1);
    let mut c = Client::start(&["-L", apps.to_str().unwrap()], None);
    c.open(&file, &edited);
    let d = c.diagnostics(&uri(&file), 1);
    let (line, col) = find(&edited, &broken, 0);
    let lint = d
        .iter()
        .find(|d| d["code"] == "unparsable-yaql")
        .expect("the lint");
    assert_eq!(
        lint["range"]["start"],
        json!({"line": line, "character": col})
    );
    let exact = d
        .iter()
        .find(|d| d["code"] == "yaql-syntax")
        .expect("the exact column");
    assert_eq!(
        exact["range"]["start"],
        json!({"line": line, "character": col + broken.len() - 1})
    );
    assert!(
        exact["message"]
            .as_str()
            .unwrap()
            .contains("unexpected ')'"),
        "{exact}"
    );

    // A standalone .yaql file: its syntax error at its column.
    let dir = std::env::temp_dir().join(format!("muranopl-lsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let q = dir.join("q.yaql");
    c.open(&q, "$.where($ > 1).select(");
    let d = c.diagnostics(&uri(&q), 1);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["range"]["start"]["line"], 0);
    c.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `package check --format json`'s findings as (file, line, col, kind,
/// message, help), a finding without a file the manifest's at 1:1.
fn check_findings(package: &Path, apps: &Path) -> BTreeSet<(String, u64, u64, String, String)> {
    let out = common::muranopl(&[
        "package",
        "check",
        package.to_str().unwrap(),
        "-L",
        apps.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc: J = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", package.display(), common::stderr(&out)));
    let manifest = package.join("manifest.yaml").display().to_string();
    let all = doc["errors"].as_array().unwrap().iter();
    all.chain(doc["warnings"].as_array().unwrap())
        .map(|d| {
            let file = d["file"].as_str().map(str::to_string);
            let file = file
                .filter(|f| Path::new(f) != package)
                .unwrap_or_else(|| manifest.clone());
            let mut msg = d["message"].as_str().unwrap().to_string();
            if let Some(h) = d["help"].as_str() {
                msg.push_str(&format!("\nhelp: {h}"));
            }
            (
                file,
                d["line"].as_u64().unwrap_or(1),
                d["col"].as_u64().unwrap_or(1),
                d["kind"].as_str().unwrap().to_string(),
                msg,
            )
        })
        .collect()
}

fn files_of(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_of(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

#[test]
fn the_servers_diagnostics_equal_package_check_over_every_fixture_package() {
    let Some(apps) = apps() else { return };
    let mut c = Client::start(&["-L", apps.to_str().unwrap()], None);
    let mut packages: Vec<PathBuf> = std::fs::read_dir(&apps)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("manifest.yaml").is_file())
        .collect();
    packages.sort();
    assert!(packages.len() >= 40, "{} packages", packages.len());
    let mut compared = 0;
    for pkg in &packages {
        let want = check_findings(pkg, &apps);
        let mut files = vec![pkg.join("manifest.yaml")];
        if pkg.join("Classes").is_dir() {
            files_of(&pkg.join("Classes"), &mut files);
        }
        c.pending.clear();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            c.open(f, &text);
        }
        // A request is answered after the check its opens caused, whose
        // diagnostics come first.
        c.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri(&files[0])}}),
        );
        let mut got = BTreeSet::new();
        for m in c.pending.drain(..) {
            if m["method"] != "textDocument/publishDiagnostics" {
                continue;
            }
            let path = url::Url::parse(m["params"]["uri"].as_str().unwrap())
                .unwrap()
                .to_file_path()
                .unwrap();
            // Closing the files of the package before re-checks it (from
            // disk): its diagnostics come again, among this one's.
            if !path.starts_with(pkg) {
                continue;
            }
            for d in m["params"]["diagnostics"].as_array().unwrap() {
                if d["source"] != "muranopl" {
                    continue;
                }
                got.insert((
                    path.display().to_string(),
                    d["range"]["start"]["line"].as_u64().unwrap() + 1,
                    d["range"]["start"]["character"].as_u64().unwrap() + 1,
                    d["code"].as_str().unwrap().to_string(),
                    d["message"].as_str().unwrap().to_string(),
                ));
            }
        }
        assert_eq!(got, want, "{}", pkg.display());
        compared += want.len();
        for f in &files {
            c.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri(f)}}),
            );
        }
    }
    assert!(compared >= 8, "{compared} findings compared");
    c.stop();
}

#[test]
fn diagnostics_follow_an_edit_of_the_largest_fixture_class_quickly() {
    let Some(apps) = apps() else { return };
    let mut classes = Vec::new();
    for e in std::fs::read_dir(&apps).unwrap().flatten() {
        if e.path().join("Classes").is_dir() {
            files_of(&e.path().join("Classes"), &mut classes);
        }
    }
    let file = classes
        .into_iter()
        .max_by_key(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let mut c = Client::start(&["-L", apps.to_str().unwrap()], None);
    c.open(&file, &text);
    let clean = c.diagnostics(&uri(&file), 1).len();
    // Alternately a mistyped method call, and the text as it was.
    assert!(
        text.contains(".report("),
        "{}: a report call",
        file.display()
    );
    let typo = text.replacen(".report(", ".reportt(", 1);
    let mut times = Vec::new();
    for v in 2..22i64 {
        let t = Instant::now();
        c.change(&file, v, if v % 2 == 0 { &typo } else { &text });
        let d = c.diagnostics(&uri(&file), v);
        times.push(t.elapsed());
        let want = clean + usize::from(v % 2 == 0);
        assert_eq!(d.len(), want, "version {v}: {d:?}");
    }
    times.sort();
    let median = times[times.len() / 2];
    eprintln!(
        "lsp latency: didChange to diagnostics on {} ({} lines): median {:.1} ms, max {:.1} ms",
        file.display(),
        text.lines().count(),
        median.as_secs_f64() * 1e3,
        times.last().unwrap().as_secs_f64() * 1e3
    );
    assert!(median < Duration::from_millis(200), "median {median:?}");
    c.stop();
}

/// The same session through Neovim's built-in LSP client, headless
/// (`tests/lsp/nvim_session.lua`); skipped when `nvim` is absent.
#[test]
fn the_session_works_in_neovim_headless() {
    let Some(apps) = apps() else { return };
    if Command::new("nvim").arg("--version").output().is_err() {
        common::skip("nvim is absent: no Neovim session (apt-get install neovim)");
        return;
    }
    let file = apps.join("Docker-Redis/Classes/DockerRedis.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let call = "$._environment.reporter.report($this, 'Installing Redis')";
    let (typo_line, _) = find(&text, call, 0);
    let typo_text = text
        .lines()
        .nth(typo_line)
        .unwrap()
        .replace(".report(", ".reportt(");
    let (hover_line, hover_col) = find(&text, ".format($.name)", 2);
    let (def_line, def_col) = find(&text, "interfaces:DockerApplication", 14);
    let (comp_line, comp_col) = find(&text, "If: $.publish", 6);
    let out = std::env::temp_dir().join(format!("muranopl-nvim-{}.json", std::process::id()));
    let script = common::root().join("tests/lsp/nvim_session.lua");
    let mut child = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("MURANOPL", env!("CARGO_BIN_EXE_muranopl"))
        .env("APPS", &apps)
        .env("FILE", &file)
        .env("OUT", &out)
        .env("TYPO_LINE", typo_line.to_string())
        .env("TYPO_TEXT", &typo_text)
        .env("HOVER_LINE", hover_line.to_string())
        .env("HOVER_COL", hover_col.to_string())
        .env("DEF_LINE", def_line.to_string())
        .env("DEF_COL", def_col.to_string())
        .env("COMP_LINE", comp_line.to_string())
        .env("COMP_COL", comp_col.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run nvim");
    let deadline = Instant::now() + TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let got: J = common::read_json(&out);
    let _ = std::fs::remove_file(&out);
    assert!(got.get("error").is_none(), "{got}");
    assert_eq!(got["clean"], 0, "{got}");
    let d = &got["diagnostic"];
    assert_eq!(d["code"], "unknown-method", "{got}");
    let col = typo_text.find("$._environment").unwrap();
    assert_eq!(
        (d["lnum"].as_u64(), d["col"].as_u64()),
        (Some(typo_line as u64), Some(col as u64))
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `report`?"),
        "{got}"
    );
    let hover = got["hover"].as_str().unwrap_or("");
    assert!(
        hover.contains("format(") && hover.contains("Matches yaql"),
        "{got}"
    );
    let target = apps.join("DockerInterfacesLibrary/Classes/DockerApplication.yaml");
    assert_eq!(got["definition"], uri(&target), "{got}");
    let labels: Vec<&str> = (got["completion"].as_array().unwrap().iter())
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        labels.contains(&"publish") && labels.contains(&"getContainer"),
        "{got}"
    );
}

#[test]
fn references_and_rename_of_a_property_cover_its_declaration_and_uses() {
    let Some(apps) = apps() else { return };
    let file = apps.join("Docker-Redis/Classes/DockerRedis.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut c = Client::start(&["-L", apps.to_str().unwrap()], None);
    c.open(&file, &text);
    c.diagnostics(&uri(&file), 1);
    // The declaration, then each `$.publish` (the name 2 bytes in).
    let mut want: Vec<(usize, usize)> = vec![find(&text, "  publish:", 2)];
    for (at, _) in text.match_indices("$.publish") {
        let (line, col) = line_col(&text, at);
        want.push((line, col + 2));
    }
    want.sort();
    assert!(want.len() >= 3, "{want:?}");
    let (l, ch) = find(&text, "If: $.publish", 6);
    let refs = references(&mut c, &file, (l, ch));
    assert_eq!(starts(&refs, &uri(&file), "publish".len()), want);

    let edit = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri(&file)}, "position": {"line": l, "character": ch},
               "newName": "exposed"}),
    );
    let edits = edit["changes"][uri(&file)].as_array().unwrap();
    assert_eq!(edits.len(), want.len(), "{edit}");
    assert!(edits.iter().all(|e| e["newText"] == "exposed"));

    // A class is not renamed; a bad name is refused.
    c.next_id += 1;
    let (l, ch) = find(&text, "interfaces:DockerApplication", 14);
    let id = c.next_id;
    c.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/rename",
                  "params": {"textDocument": {"uri": uri(&file)},
                             "position": {"line": l, "character": ch}, "newName": "X"}}),
    );
    let deadline = Instant::now() + TIMEOUT;
    let answer = loop {
        let m = c.recv(deadline);
        if m["id"] == id {
            break m;
        }
    };
    let msg = answer["error"]["message"].as_str().unwrap_or("");
    assert!(msg.contains("only properties and methods"), "{answer}");
    c.stop();
}

#[test]
fn broken_yaml_and_a_broken_manifest_are_diagnostics_not_failures() {
    let dir = std::env::temp_dir().join(format!("muranopl-lsp-bad-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("Classes")).unwrap();
    let manifest = dir.join("manifest.yaml");
    let manifest_text =
        "Format: 1.4\nType: Library\nFullName: ex.Bad\nClasses:\n  ex.Bad: Bad.yaml\n";
    std::fs::write(&manifest, manifest_text).unwrap();
    let class = dir.join("Classes/Bad.yaml");
    let good = "Name: ex.Bad\nMethods:\n  m:\n    Body:\n      - Return: 1\n";
    std::fs::write(&class, good).unwrap();
    let mut c = Client::start(&[], None);
    c.open(&class, good);
    assert_eq!(c.diagnostics(&uri(&class), 1), Vec::<J>::new());
    // An unclosed flow sequence: the YAML error, as an error, at its line.
    c.change(
        &class,
        2,
        "Name: ex.Bad\nMethods:\n  m:\n    Body:\n      - $x: [1, 2\n",
    );
    let d = c.diagnostics(&uri(&class), 2);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["severity"], 1);
    assert_eq!(d[0]["code"], "CompileError");
    assert_eq!(d[0]["range"]["start"]["line"], 5);
    // Hover and completion still answer (from the last check that
    // compiled), and a request for a file that is not open is an error.
    let h = c.at("textDocument/hover", &class, 4, 10);
    assert!(h.is_null() || h.is_object(), "{h}");
    c.next_id += 1;
    let id = c.next_id;
    c.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
                  "params": {"textDocument": {"uri": "file:///nowhere/x.yaml"},
                             "position": {"line": 0, "character": 0}}}),
    );
    let deadline = Instant::now() + TIMEOUT;
    let answer = loop {
        let m = c.recv(deadline);
        if m["id"] == id {
            break m;
        }
    };
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is not open"),
        "{answer}"
    );
    // A manifest that does not parse: the package's load error, on the
    // manifest.
    c.open(&manifest, "Format: [\n");
    let d = c.diagnostics(&uri(&manifest), 1);
    assert!(!d.is_empty(), "{d:?}");
    assert_eq!(d[0]["code"], "PackageLoadError");
    c.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// References of a `$variable`: every `$scopes` of its method (assigned,
/// read, the `In:` of a `For`).
#[test]
fn references_of_a_variable_are_its_method_s_occurrences() {
    let Some(apps) = apps() else { return };
    let file = apps.join("DockerInterfacesLibrary/Classes/DockerApplication.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut c = Client::start(&["-L", apps.to_str().unwrap()], None);
    c.open(&file, &text);
    c.diagnostics(&uri(&file), 1);
    let mut want: Vec<(usize, usize)> = text
        .match_indices("$scopes")
        .map(|(at, _)| {
            let (line, col) = line_col(&text, at);
            (line, col + 1)
        })
        .collect();
    want.sort();
    assert!(want.len() >= 5, "{want:?}");
    let refs = references(&mut c, &file, find(&text, "In: $scopes", 5));
    assert_eq!(starts(&refs, &uri(&file), "scopes".len()), want);
    c.stop();
}

/// The sorted (line, character) starts of a references answer, each
/// checked to be in `file` and `len` characters long.
fn starts(refs: &J, file: &str, len: usize) -> Vec<(usize, usize)> {
    let mut got: Vec<(usize, usize)> = (refs.as_array().unwrap().iter())
        .map(|r| {
            assert_eq!(r["uri"], file);
            let s = &r["range"]["start"];
            let end = r["range"]["end"]["character"].as_u64().unwrap();
            assert_eq!(end - s["character"].as_u64().unwrap(), len as u64, "{r}");
            (
                s["line"].as_u64().unwrap() as usize,
                s["character"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    got.sort();
    got
}

/// `tests/lsp/extensions`: a library declaring an extension method
/// (`Text.shout`, `Usage: Extension`) and an application importing it
/// (`Import: ext:Text`, calls `$x.shout()`), with a class of its own
/// that has an unrelated method `shout`.
fn extensions() -> (PathBuf, PathBuf, PathBuf) {
    let ws = common::root().join("tests/lsp/extensions");
    (
        ws.join("ext-lib/Classes/Text.yaml"),
        ws.join("ext-app/Classes/App.yaml"),
        ws.join("ext-app/Classes/Other.yaml"),
    )
}

/// The saved text of a fixture file.
fn saved(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Every (file, line, character) start of a locations answer, sorted.
fn located(answer: &J) -> Vec<(String, usize, usize)> {
    let mut out: Vec<(String, usize, usize)> = (answer.as_array().unwrap().iter())
        .map(|r| {
            let s = &r["range"]["start"];
            (
                r["uri"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                s["line"].as_u64().unwrap() as usize,
                s["character"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn extension_methods_navigate_to_their_declaration_and_back_across_packages() {
    let (lib, app, other) = extensions();
    let (lib_text, app_text, other_text) = (saved(&lib), saved(&app), saved(&other));
    let mut c = Client::start(&[], None);
    c.open(&app, &app_text);
    c.diagnostics(&uri(&app), 1);
    let file = |f: &str, (l, ch): (usize, usize)| (f.to_string(), l, ch);
    let decl = file("Text.yaml", find(&lib_text, "  shout:", 2));
    let calls = [
        file("App.yaml", find(&app_text, "$.name.shout()", 7)),
        file("App.yaml", find(&app_text, "$greeting.shout()", 10)),
    ];
    // `$.name.shout()`: the imported extension method, not `Other.shout`.
    let (l, ch) = find(&app_text, "$.name.shout()", 8);
    let def = c.at("textDocument/definition", &app, l, ch);
    assert_eq!(located(&def), std::slice::from_ref(&decl), "{def}");
    // Its references: the declaration in the library and both calls, not
    // the other class's method or its call.
    let mut want = vec![decl.clone(), calls[0].clone(), calls[1].clone()];
    want.sort();
    let refs = references(&mut c, &app, (l, ch));
    assert_eq!(located(&refs), want, "{refs}");
    // Completion after `$greeting.` offers the extension method.
    let (l, ch) = find(&app_text, "$greeting.shout()", 10);
    let items = c.at("textDocument/completion", &app, l, ch);
    let shout: Vec<&J> = (items.as_array().unwrap().iter())
        .filter(|i| i["label"] == "shout")
        .collect();
    assert_eq!(shout.len(), 1, "{items}");
    assert_eq!(
        shout[0]["detail"],
        "com.example.ext.Text::shout() (extension)"
    );
    // From the declaration in the library (opened after the application
    // was checked): the application's calls too.
    c.open(&lib, &lib_text);
    c.diagnostics(&uri(&lib), 1);
    let refs = references(&mut c, &lib, (decl.1, decl.2));
    assert_eq!(located(&refs), want, "{refs}");
    // `$.shout()` in the class that declares its own `shout` is that one.
    c.open(&other, &other_text);
    c.diagnostics(&uri(&other), 1);
    let (l, ch) = find(&other_text, "$.shout()", 2);
    let def = c.at("textDocument/definition", &other, l, ch);
    let own = file("Other.yaml", find(&other_text, "  shout:", 2));
    assert_eq!(located(&def), std::slice::from_ref(&own), "{def}");
    let refs = references(&mut c, &other, (l, ch));
    assert_eq!(located(&refs), [own, file("Other.yaml", (l, ch))], "{refs}");
    c.stop();
}

#[test]
fn unsaved_edits_of_a_library_show_in_the_packages_using_it() {
    let (lib, app, _) = extensions();
    let (lib_text, app_text) = (saved(&lib), saved(&app));
    let mut c = Client::start(&[], None);
    c.open(&app, &app_text);
    assert_eq!(c.diagnostics(&uri(&app), 1), Vec::<J>::new());
    c.open(&lib, &lib_text);
    c.diagnostics(&uri(&lib), 1);
    // The library's static method renamed in the editor, not saved: the
    // application's call of it is flagged, with the new name as help.
    let renamed = lib_text.replace("  phrase:", "  phrases:");
    c.change(&lib, 2, &renamed);
    c.diagnostics(&uri(&lib), 2);
    let diags = c.diagnostics(&uri(&app), 1);
    let unknown: Vec<&J> = diags
        .iter()
        .filter(|d| d["code"] == "unknown-method")
        .collect();
    assert_eq!(unknown.len(), 1, "{diags:?}");
    let (l, _) = find(&app_text, "ext:Text.phrase(", 0);
    assert_eq!(unknown[0]["range"]["start"]["line"], l, "{diags:?}");
    let message = unknown[0]["message"].as_str().unwrap();
    assert!(
        message.contains("`phrase`") && message.contains("did you mean `phrases`?"),
        "{message}"
    );
    // Definition follows the unsaved text: `shout` moved down a line.
    let moved = renamed.replace("Methods:\n", "Methods:\n\n");
    c.change(&lib, 3, &moved);
    c.diagnostics(&uri(&lib), 3);
    c.diagnostics(&uri(&app), 1);
    let (l, ch) = find(&app_text, "$.name.shout()", 8);
    let def = c.at("textDocument/definition", &app, l, ch);
    let want = find(&moved, "  shout:", 2);
    assert_eq!(
        located(&def),
        [("Text.yaml".to_string(), want.0, want.1)],
        "{def}"
    );
    // Undone in the editor: the application is clean again.
    c.change(&lib, 4, &lib_text);
    c.diagnostics(&uri(&lib), 4);
    assert_eq!(c.diagnostics(&uri(&app), 1), Vec::<J>::new());
    c.stop();
}

/// From a library's file alone (no file of the application opened), the
/// references of its extension method and of its class include the
/// application on the search path (the library's own folder's siblings),
/// checked for the request from its saved files.
#[test]
fn references_reach_packages_on_the_search_path_that_were_never_opened() {
    let (lib, app, _) = extensions();
    let (lib_text, app_text) = (saved(&lib), saved(&app));
    let mut c = Client::start(&[], None);
    c.open(&lib, &lib_text);
    c.diagnostics(&uri(&lib), 1);
    let file = |f: &str, (l, ch): (usize, usize)| (f.to_string(), l, ch);
    let decl = file("Text.yaml", find(&lib_text, "  shout:", 2));
    let mut want = vec![
        decl.clone(),
        file("App.yaml", find(&app_text, "$.name.shout()", 7)),
        file("App.yaml", find(&app_text, "$greeting.shout()", 10)),
    ];
    want.sort();
    let refs = references(&mut c, &lib, (decl.1, decl.2));
    assert_eq!(located(&refs), want, "{refs}");
    // The class: its declaration's name, the import and the static call.
    let name = find(&lib_text, "Name: Text", 6);
    let refs = located(&references(&mut c, &lib, name));
    let in_app: Vec<&(String, usize, usize)> =
        refs.iter().filter(|(f, ..)| f == "App.yaml").collect();
    assert!(
        in_app.contains(&&file("App.yaml", find(&app_text, "ext:Text.phrase", 0))),
        "{refs:?}"
    );
    assert!(refs.contains(&file("Text.yaml", name)), "{refs:?}");
    c.stop();
}
