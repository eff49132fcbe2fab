//! `muranopl serve`: form schemas and static actions over HTTP, on the
//! example package (no `../shared` needed). The request handler is tested
//! in-process; one test talks to a real server on a free port.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use muranopl::serve::{handle, Catalog};
use serde_json::{json, Value as J};

fn catalog() -> Catalog {
    Catalog::load(&[common::root().join("examples/hello-app")], &[], None).unwrap()
}

fn post(c: &Catalog, body: J) -> (u16, J) {
    handle(c, "POST", "/actions", body.to_string().as_bytes())
}

#[test]
fn schemas_of_the_class_and_its_model_builders() {
    let c = catalog();
    let (status, all) = handle(&c, "GET", "/schemas/com.example.Hello", b"");
    assert_eq!(status, 200, "{all}");
    let keys: Vec<&str> = all
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["", "politely"]);
    let greeting = &all[""]["properties"]["greeting"];
    assert_eq!(greeting["title"], "Greeting");
    assert_eq!(greeting["default"], "hello");
    assert_eq!(all["politely"]["properties"]["name"]["type"], "string");
    // Only the builder; an empty name is the class (URL-encoded comma).
    let (status, one) = handle(&c, "GET", "/schemas/com.example.Hello/politely", b"");
    assert_eq!(status, 200);
    assert_eq!(one.as_object().unwrap().len(), 1);
    let (status, both) = handle(&c, "GET", "/schemas/com.example.Hello/%2Cpolitely", b"");
    assert_eq!(status, 200);
    assert_eq!(both.as_object().unwrap().len(), 2);
    // Unknown class, package or builder: 404.
    let (status, e) = handle(&c, "GET", "/schemas/com.example.Nope", b"");
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (404, Some("NoClassFound"))
    );
    let (status, _) = handle(
        &c,
        "GET",
        "/schemas/com.example.Hello?packageName=com.example.Other",
        b"",
    );
    assert_eq!(status, 404);
    let (status, _) = handle(&c, "GET", "/schemas/com.example.Hello/nope", b"");
    assert_eq!(status, 404);
    // The version query picks among loaded versions; one version: it is it.
    let (status, _) = handle(
        &c,
        "GET",
        "/schemas/com.example.Hello?classVersion=0&packageName=com.example.Hello",
        b"",
    );
    assert_eq!(status, 200);
}

#[test]
fn static_actions_run_and_errors_have_statuses() {
    let c = catalog();
    let (status, out) = post(
        &c,
        json!({"className": "com.example.Hello", "methodName": "shout",
               "parameters": {"text": "hi", "times": 3}}),
    );
    assert_eq!((status, out), (200, json!(["HI", "HI", "HI"])));
    // A model builder is a static action too.
    let (status, out) = post(
        &c,
        json!({"className": "com.example.Hello", "methodName": "politely",
               "parameters": {"name": "ann"}}),
    );
    assert_eq!(status, 200);
    assert_eq!(out["greeting"], "hello, ann");
    // Contract violations are the caller's fault.
    let (status, e) = post(
        &c,
        json!({"className": "com.example.Hello", "methodName": "shout",
               "parameters": {"text": "hi", "times": 0}}),
    );
    assert_eq!(status, 400);
    assert_eq!(e["error"]["kind"], "ContractViolationException");
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Hello.yaml:"));
    // Not a static action, no such method or class, bad bodies.
    let (status, e) = post(
        &c,
        json!({"className": "com.example.Hello", "methodName": "deploy"}),
    );
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (403, Some("MethodNotExposed"))
    );
    let (status, _) = post(
        &c,
        json!({"className": "com.example.Hello", "methodName": "nope"}),
    );
    assert_eq!(status, 404);
    let (status, _) = post(&c, json!({"className": "x.Y", "methodName": "z"}));
    assert_eq!(status, 404);
    let (status, _) = post(&c, json!({"methodName": "shout"}));
    assert_eq!(status, 400);
    let (status, _) = post(
        &c,
        json!({"className": "com.example.Hello", "methodName": "shout", "parameters": [1]}),
    );
    assert_eq!(status, 400);
    let (status, _) = handle(&c, "POST", "/actions", b"{not json");
    assert_eq!(status, 400);
    // A body past the limit is refused unread.
    let big = vec![b' '; muranopl::serve::MAX_BODY + 10];
    assert_eq!(muranopl::serve::read_body(&big[..]).unwrap_err().0, 413);
    assert_eq!(muranopl::serve::read_body(&b"{}"[..]).unwrap(), b"{}");
    // Routing.
    assert_eq!(handle(&c, "GET", "/actions", b"").0, 405);
    assert_eq!(handle(&c, "GET", "/nope", b"").0, 404);
    let (status, h) = handle(&c, "GET", "/health", b"");
    assert_eq!(status, 200);
    assert_eq!(h["packages"], json!(["com.example.Hello/0.0.0"]));
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn request(addr: &str, raw: &str) -> (u16, J) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status: u16 = text.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(
        text.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{text}"
    );
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    (status, serde_json::from_str(body).unwrap())
}

#[test]
fn the_server_answers_over_http() {
    let child = Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(["serve", "examples/hello-app", "--addr", "127.0.0.1:0"])
        .current_dir(common::root())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().rsplit("http://").next().unwrap().to_string();
    let (status, h) = request(
        &addr,
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!((status, h["status"].as_str()), (200, Some("ok")));
    let body = r#"{"className": "com.example.Hello", "methodName": "shout", "parameters": {"text": "a b"}}"#;
    let (status, out) = request(
        &addr,
        &format!(
            "POST /actions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!((status, out), (200, json!(["A B"])));
    let (status, _) = request(
        &addr,
        "GET /schemas/com.example.Hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 200);
}
