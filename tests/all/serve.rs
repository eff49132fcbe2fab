//! `muranopl serve`: form schemas, static actions and validation over
//! HTTP, on the example package and a package of endless actions (no
//! `../shared` needed). The axum router is called in-process; the limits,
//! connection handling, log and shutdown are tested on a real server.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use muranopl::Catalogue as Catalog;
use muranopl_cli::serve::{app, Options};
use serde_json::{json, Value as J};
use tower::ServiceExt;

use common::Served;

fn catalog(dirs: &[&str]) -> Arc<Catalog> {
    let dirs: Vec<_> = dirs.iter().map(|d| common::root().join(d)).collect();
    Arc::new(Catalog::load_served(&dirs, &[], None).unwrap())
}

/// One request through the router: status, headers, JSON body (null when
/// empty).
async fn call(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> (u16, axum::http::HeaderMap, J) {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Body::from(body.to_string())).unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let json = serde_json::from_slice(&bytes).unwrap_or(J::Null);
    (status, headers, json)
}

async fn get(app: &axum::Router, uri: &str) -> (u16, J) {
    let (s, _, j) = call(app, "GET", uri, "", &[]).await;
    (s, j)
}

async fn post(app: &axum::Router, uri: &str, body: J) -> (u16, J) {
    let (s, _, j) = call(app, "POST", uri, &body.to_string(), &[]).await;
    (s, j)
}

fn hello() -> axum::Router {
    app(catalog(&["examples/hello-app"]), Options::default())
}

#[tokio::test]
async fn schemas_of_classes_builders_and_actions() {
    let app = hello();
    let (status, all) = get(&app, "/v1/schemas/com.example.Hello").await;
    assert_eq!(status, 200, "{all}");
    let keys: Vec<&str> = all
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["", "politely"]);
    let props = &all[""]["properties"];
    assert_eq!(props["greeting"]["title"], "Greeting");
    assert_eq!(props["greeting"]["default"], "hello");
    // The muranoObject's version; a title from the metadata (the builder's
    // `name` below has the spec's default, its name).
    assert_eq!(props["instance"]["title"], "Server");
    assert_eq!(
        props["instance"]["muranoType"],
        "io.murano.resources.Instance"
    );
    assert_eq!(props["instance"]["version"], "=0.0.0");
    // A model builder's form leaves out its first argument, the model.
    let builder = &all["politely"];
    assert_eq!(
        builder["properties"],
        json!({"name": {"type": "string", "title": "name"}})
    );
    assert_eq!(builder["modelArgument"], "model");
    // The unversioned path is an alias; an empty method name is the class
    // only; a public static action has a schema by name.
    assert_eq!(
        get(&app, "/schemas/com.example.Hello").await,
        (200, all.clone())
    );
    let (status, only) = get(&app, "/v1/schemas/com.example.Hello/").await;
    assert_eq!((status, only.as_object().unwrap().len()), (200, 1));
    assert_eq!(only[""], all[""]);
    let (status, both) = get(&app, "/v1/schemas/com.example.Hello/%2Cpolitely").await;
    assert_eq!((status, both.as_object().unwrap().len()), (200, 2));
    let (status, shout) = get(&app, "/v1/schemas/com.example.Hello/shout").await;
    assert_eq!(status, 200);
    let times = &shout["shout"]["properties"]["times"];
    assert_eq!(
        (times["minimum"].clone(), times["exclusiveMinimum"].clone()),
        (json!(0), json!(true))
    );
    // Inherited properties, their contracts resolved in the namespaces of
    // the classes that declare them.
    let (status, lmi) = get(&app, "/v1/schemas/io.murano.resources.LinuxMuranoInstance").await;
    assert_eq!(status, 200, "{lmi}");
    for p in ["name", "flavor", "image", "keyname", "securityGroupName"] {
        assert!(lmi[""]["properties"].get(p).is_some(), "{p} missing: {lmi}");
    }
}

#[tokio::test]
async fn schema_requests_that_name_nothing_are_404_and_bad_ones_400() {
    let app = hello();
    let cases = [
        ("/v1/schemas/com.example.Nope", 404, "NoClassFound"),
        ("/v1/schemas/com.example.Hello/nope", 404, "NoMethodFound"),
        // deploy is neither a builder nor a static action.
        ("/v1/schemas/com.example.Hello/deploy", 404, "NoMethodFound"),
        (
            "/v1/schemas/com.example.Hello?packageName=com.example.Other",
            404,
            "NoPackageFound",
        ),
        (
            "/v1/schemas/com.example.Hello?classVersion=9.9",
            404,
            "NoClassFound",
        ),
        (
            "/v1/schemas/com.example.Hello?classVersion=garbage",
            400,
            "ValueError",
        ),
        (
            "/v1/schemas/com.example.Hello?classVersion=%3E%3D1",
            404,
            "NoClassFound",
        ),
        ("/v1/nope", 404, "NotFound"),
    ];
    for (uri, status, kind) in cases {
        let (s, e) = get(&app, uri).await;
        assert_eq!(
            (s, e["error"]["kind"].as_str()),
            (status, Some(kind)),
            "{uri}: {e}"
        );
    }
    // Matching versions and the package pick the class.
    for q in [
        "classVersion=0",
        "classVersion=%3D0.0.0",
        "packageName=com.example.Hello",
        "classVersion=%3C1&packageName=com.example.Hello",
    ] {
        let (s, e) = get(&app, &format!("/v1/schemas/com.example.Hello?{q}")).await;
        assert_eq!(s, 200, "{q}: {e}");
    }
    // `+` in a path is a plus, not a space.
    let (s, e) = get(&app, "/v1/schemas/com.example+Hello").await;
    assert_eq!(s, 404);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("com.example+Hello"),
        "{e}"
    );
}

#[tokio::test]
async fn static_actions_run_and_errors_have_statuses() {
    let app = hello();
    let call = |body: J| post(&app, "/v1/actions", body);
    let (status, out) = call(
        json!({"className": "com.example.Hello", "methodName": "shout",
                                    "parameters": {"text": "hi", "times": 3}}),
    )
    .await;
    assert_eq!((status, out), (200, json!(["HI", "HI", "HI"])));
    // A model builder gets the model and the form's values.
    let (status, out) = call(
        json!({"className": "com.example.Hello", "methodName": "politely",
                                    "parameters": {"model": null, "name": "ann"}}),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(
        out,
        json!({"?": {"type": "com.example.Hello"}, "greeting": "hello, ann"})
    );
    let (status, out) = call(json!({"className": "com.example.Hello", "methodName": "politely",
                                    "parameters": {"model": {"greeting": "x", "k": 1}, "name": "bo"}})).await;
    assert_eq!(
        (status, out),
        (200, json!({"greeting": "hello, bo", "k": 1}))
    );
    // Contract violations are the caller's fault, with the contract's place.
    let (status, e) = call(
        json!({"className": "com.example.Hello", "methodName": "shout",
                                  "parameters": {"text": "hi", "times": 0}}),
    )
    .await;
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (400, Some("ContractViolationException"))
    );
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Hello.yaml:"),
        "{e}"
    );
    let cases = [
        (
            json!({"className": "com.example.Hello", "methodName": "deploy"}),
            403,
        ),
        (
            json!({"className": "com.example.Hello", "methodName": "nope"}),
            404,
        ),
        (json!({"className": "x.Y", "methodName": "z"}), 404),
        (
            json!({"className": "com.example.Hello", "methodName": "shout", "classVersion": "2"}),
            404,
        ),
        (
            json!({"className": "com.example.Hello", "methodName": "shout", "classVersion": "x"}),
            400,
        ),
        (json!({"methodName": "shout"}), 400),
        (
            json!({"className": "com.example.Hello", "methodName": "shout", "parameters": [1]}),
            400,
        ),
    ];
    for (body, status) in cases {
        assert_eq!(call(body.clone()).await.0, status, "{body}");
    }
    let (status, _, e) = self::call(&app, "POST", "/v1/actions", "{not json", &[]).await;
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (400, Some("BadRequest"))
    );
    // Routing: 405 names what is allowed.
    let (status, headers, _) = self::call(&app, "GET", "/v1/actions", "", &[]).await;
    assert_eq!((status, headers["allow"].to_str().unwrap()), (405, "POST"));
    let (status, h) = get(&app, "/health").await;
    assert_eq!(
        (status, h["packages"].clone()),
        (200, json!(["com.example.Hello/0.0.0"]))
    );
}

#[tokio::test]
async fn object_models_are_validated_against_the_contracts() {
    let app = hello();
    let model = |greeting: J| {
        json!({"?": {"id": "a1", "type": "com.example.Hello"}, "greeting": greeting,
               "instance": {"?": {"id": "i1", "type": "io.murano.resources.LinuxMuranoInstance"},
                            "name": "vm", "flavor": "m1.small"}})
    };
    let (status, ok) = post(&app, "/v1/validate", model(json!("hi"))).await;
    assert_eq!(status, 200);
    assert_eq!(ok["valid"], json!(true), "{ok}");
    assert!(ok["objects"].as_u64().unwrap() >= 2, "{ok}");
    let (status, bad) = post(&app, "/v1/validate", model(json!([1]))).await;
    assert_eq!((status, bad["valid"].clone()), (200, json!(false)));
    let v = &bad["violations"][0];
    assert_eq!(v["property"], "greeting", "{bad}");
    assert!(
        v["message"].as_str().unwrap().contains("Hello.yaml:"),
        "{bad}"
    );
    let (status, _, _) = call(&app, "POST", "/v1/validate", "[", &[]).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_configured_token_is_required() {
    let options = Options {
        token: Some("s3cret".into()),
        ..Options::default()
    };
    let app = app(catalog(&["examples/hello-app"]), options);
    let uri = "/v1/schemas/com.example.Hello";
    let (status, headers, e) = call(&app, "GET", uri, "", &[]).await;
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (401, Some("Unauthorized"))
    );
    assert_eq!(headers["www-authenticate"], "Bearer");
    assert_eq!(
        call(&app, "GET", uri, "", &[("authorization", "Bearer nope")])
            .await
            .0,
        401
    );
    assert_eq!(
        call(&app, "GET", uri, "", &[("authorization", "Bearer s3cret")])
            .await
            .0,
        200
    );
    assert_eq!(
        call(&app, "GET", uri, "", &[("x-auth-token", "s3cret")])
            .await
            .0,
        200
    );
    // The page, its assets, the health check and CORS preflights are open.
    for path in ["/", "/assets/form.js", "/health"] {
        assert_eq!(call(&app, "GET", path, "", &[]).await.0, 200, "{path}");
    }
    let preflight = [
        ("origin", "http://elsewhere"),
        ("access-control-request-method", "POST"),
        (
            "access-control-request-headers",
            "content-type,authorization",
        ),
    ];
    let (status, headers, _) = call(&app, "OPTIONS", "/v1/actions", "", &preflight).await;
    assert_eq!(status, 200);
    assert_eq!(headers["access-control-allow-origin"], "*");
}

#[tokio::test]
async fn bodies_past_the_limit_are_413() {
    let options = Options {
        max_body: 1000,
        ..Options::default()
    };
    let app = app(catalog(&["examples/hello-app"]), options);
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(2000));
    let (status, _, e) = call(&app, "POST", "/v1/actions", &big, &[]).await;
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (413, Some("PayloadTooLarge"))
    );
    let (status, _, _) = call(&app, "POST", "/v1/validate", &big, &[]).await;
    assert_eq!(status, 413);
    // The default limit (4 MiB) refuses a 10 MB model.
    let app = hello();
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(10 << 20));
    let (status, _, e) = call(&app, "POST", "/v1/validate", &big, &[]).await;
    assert_eq!(
        (status, e["error"]["kind"].as_str()),
        (413, Some("PayloadTooLarge"))
    );
}

fn spin_body(method: &str) -> String {
    json!({"className": "com.example.Spin", "methodName": method, "parameters": {}}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_actions_end_with_504_and_others_are_served_meanwhile() {
    let options = Options {
        timeout: Duration::from_secs(2),
        threads: 2,
        ..Options::default()
    };
    let app = app(catalog(&["tests/serve/spin-app"]), options);
    let t0 = Instant::now();
    let (forever, endless) = (spin_body("forever"), spin_body("endless"));
    let forever = call(&app, "POST", "/v1/actions", &forever, &[]);
    let endless = call(&app, "POST", "/v1/actions", &endless, &[]);
    let quick = async {
        // Both workers are busy: this one waits for the first free worker.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let body = json!({"className": "com.example.Spin", "methodName": "quick",
                          "parameters": {"x": 21}});
        call(&app, "POST", "/v1/actions", &body.to_string(), &[]).await
    };
    let ((s1, _, e1), (s2, _, e2), (s3, _, out)) = tokio::join!(forever, endless, quick);
    assert_eq!(
        (s1, e1["error"]["kind"].as_str()),
        (504, Some("TimeoutError")),
        "{e1}"
    );
    assert_eq!(
        (s2, e2["error"]["kind"].as_str()),
        (504, Some("TimeoutError")),
        "{e2}"
    );
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // The quick one either got a freed worker in time or timed out waiting.
    assert!(
        (s3, out.clone()) == (200, json!(42)) || s3 == 408,
        "{s3} {out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_queue_answers_503() {
    let options = Options {
        timeout: Duration::from_secs(2),
        threads: 1,
        queue: 0,
        ..Options::default()
    };
    let app = app(catalog(&["tests/serve/spin-app"]), options);
    let forever = spin_body("forever");
    let busy = call(&app, "POST", "/v1/actions", &forever, &[]);
    let refused = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call(&app, "POST", "/v1/actions", &forever, &[]).await
    };
    let ((s1, _, _), (s2, headers, e)) = tokio::join!(busy, refused);
    assert_eq!(s1, 504);
    assert_eq!(
        (s2, e["error"]["kind"].as_str()),
        (503, Some("ServiceUnavailable"))
    );
    assert_eq!(headers["retry-after"], "1");
}

#[test]
fn the_server_answers_over_http_logs_and_stops_on_sigterm() {
    let log = std::env::temp_dir().join(format!("muranopl-serve-{}.log", std::process::id()));
    let mut server = Served::start(&["examples/hello-app"], Some(&log));
    let (status, h) = server.request("GET", "/health", None);
    assert_eq!((status, h["status"].as_str()), (200, Some("ok")));
    let body = r#"{"className": "com.example.Hello", "methodName": "shout", "parameters": {"text": "a b"}}"#;
    assert_eq!(
        server.request("POST", "/v1/actions", Some(body)),
        (200, json!(["A B"]))
    );
    let (status, head, page) = server.raw("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(page.contains("/assets/form.js"), "{page}");
    // SIGTERM: the server stops accepting and exits 0.
    let pid = server.child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    if killed.is_ok_and(|s| s.success()) {
        let t0 = Instant::now();
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "no exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // One log line per request, with its status.
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert!(
        text.contains("uri=/health") && text.contains("status=200"),
        "{text}"
    );
    assert!(text.contains("uri=/v1/actions"), "{text}");
}

#[test]
fn connections_past_the_limit_get_503_and_idle_ones_are_closed() {
    use std::io::Read;
    let server = Served::start(
        &[
            "examples/hello-app",
            "--max-connections",
            "2",
            "--idle-timeout",
            "1",
        ],
        None,
    );
    let idle: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(&server.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (status, _, body) = server.raw("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 503, "{body}");
    // The idle connections are closed after the idle timeout ...
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let t0 = Instant::now();
        let mut buf = Vec::new();
        let _ = s.read_to_end(&mut buf);
        assert!(
            t0.elapsed() < Duration::from_secs(4),
            "idle connection kept open"
        );
    }
    // ... and the server serves again.
    assert_eq!(server.request("GET", "/health", None).0, 200);
}

/// Hostile input, round 2 (issue 32): what the headers say cannot be read
/// is refused at once, the `Bearer` scheme is case-insensitive, deep
/// results are answered whole, and messages name package files from the
/// package.
#[tokio::test]
async fn framing_auth_results_and_paths() {
    let options = Options {
        token: Some("s3cret".into()),
        ..Options::default()
    };
    let app = app(catalog(&["examples/hello-app"]), options);
    let uri = "/v1/schemas/com.example.Hello";
    for scheme in ["bearer", "BEARER", "Bearer", "bEaReR"] {
        let auth = format!("{scheme} s3cret");
        let got = call(&app, "GET", uri, "", &[("authorization", &auth)]).await;
        assert_eq!(got.0, 200, "{scheme}");
    }
    for wrong in ["Basic s3cret", "Bearers3cret", "Bearer"] {
        let got = call(&app, "GET", uri, "", &[("authorization", wrong)]).await;
        assert_eq!(got.0, 401, "{wrong}");
    }
    let auth = ("authorization", "Bearer s3cret");
    let cases: [(&str, &str, u16, &str); 3] = [
        ("transfer-encoding", "gzip, chunked", 501, "NotImplemented"),
        ("content-encoding", "gzip", 415, "UnsupportedMediaType"),
        ("content-length", "99999999", 413, "PayloadTooLarge"),
    ];
    for (name, value, status, kind) in cases {
        let got = call(&app, "POST", "/v1/validate", "", &[auth, (name, value)]).await;
        assert_eq!(
            (got.0, got.2["error"]["kind"].as_str()),
            (status, Some(kind)),
            "{name}: {value}"
        );
    }

    // A result 127 levels deep and more was answered `null`.
    let app = app_of(&["tests/hostile/round2"]);
    for depth in [126, 127, 200, 5000] {
        let body = json!({"className": "com.example.Round2Tests", "methodName": "deep",
                          "parameters": {"depth": depth}});
        let (status, _, text) = call_text(&app, "POST", "/v1/actions", &body.to_string()).await;
        assert_eq!(status, 200, "{depth}");
        let expected = format!("{}{}", "[".repeat(depth + 1), "]".repeat(depth + 1));
        assert_eq!(text.replace(' ', ""), expected, "{depth}");
    }

    // The server's paths stay on the server.
    let app = hello();
    let model = json!({"Objects": {"?": {"type": "com.example.Hello", "id": "x"}}});
    let (status, v) = post(&app, "/v1/validate", model).await;
    assert_eq!(status, 200);
    let message = v["violations"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.ends_with("(contract at com.example.Hello/Classes/Hello.yaml:52:15)"),
        "{message}"
    );
    let root = common::root().display().to_string();
    assert!(!v.to_string().contains(&root), "{v}");
}

fn app_of(dirs: &[&str]) -> axum::Router {
    app(catalog(dirs), Options::default())
}

/// One request through the router: status, headers and the body as text.
async fn call_text(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: &str,
) -> (u16, axum::http::HeaderMap, String) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// A `Content-Length` past the limit with no body is answered 413 at
/// once, not when the request times out (408).
#[test]
fn an_oversized_content_length_is_413_at_once() {
    let served = Served::start(&["examples/hello-app", "--timeout", "20"], None);
    let t = Instant::now();
    let (status, _, body) = served.raw(
        "POST /v1/validate HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\
         Connection: close\r\n\r\n",
    );
    assert_eq!(status, 413, "{body}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}
