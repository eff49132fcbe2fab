//! `muranopl serve` as an offline Murano: environments, sessions,
//! services, deployments and instance actions over real HTTP requests,
//! with the state in a SQLite file (`--db`) that a restart keeps. The
//! application is `tests/serve/counter-app` (`com.example.Counter`: a
//! deployment that counts from `start`, actions `increment` and `fail`,
//! and `spin` statements to make a deployment take a while).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Served;
use serde_json::{json, Value as J};

const APP: &str = "tests/serve/counter-app";

/// A client of one server: requests with an optional configuration
/// session and token.
struct Client<'a> {
    server: &'a Served,
    token: Option<&'a str>,
}

impl Client<'_> {
    fn send(
        &self,
        method: &str,
        path: &str,
        session: Option<&str>,
        body: Option<&str>,
    ) -> (u16, J) {
        let body = body.unwrap_or("");
        let mut head = format!(
            "{method} /v1{path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        if let Some(s) = session {
            head.push_str(&format!("X-Configuration-Session: {s}\r\n"));
        }
        if let Some(t) = self.token {
            head.push_str(&format!("X-Auth-Token: {t}\r\n"));
        }
        let (status, _, text) = self.server.raw(&format!("{head}\r\n{body}"));
        assert!(
            !text.contains("database is locked"),
            "{method} {path}: {text}"
        );
        let j = if text.trim().is_empty() {
            J::Null
        } else {
            serde_json::from_str(&text).unwrap_or(J::String(text))
        };
        (status, j)
    }

    fn ok(&self, method: &str, path: &str, session: Option<&str>, body: Option<&str>) -> J {
        let (status, j) = self.send(method, path, session, body);
        assert_eq!(status, 200, "{method} {path}: {j}");
        j
    }

    /// A new environment named `name`; its id.
    fn environment(&self, name: &str) -> String {
        let env = self.ok(
            "POST",
            "/environments",
            None,
            Some(&json!({"name": name}).to_string()),
        );
        assert_eq!(env["name"], name);
        assert_eq!(env["status"], "ready");
        env["id"].as_str().unwrap().to_string()
    }

    /// Opens a session on `env`; its id.
    fn session(&self, env: &str) -> String {
        let s = self.ok(
            "POST",
            &format!("/environments/{env}/configure"),
            None,
            None,
        );
        assert_eq!(s["state"], "opened");
        s["id"].as_str().unwrap().to_string()
    }

    /// The environment once it is no longer deploying.
    fn settled(&self, env: &str) -> J {
        let start = Instant::now();
        loop {
            let e = self.ok("GET", &format!("/environments/{env}"), None, None);
            if e["status"] != "deploying" && e["status"] != "deleting" {
                return e;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "still deploying: {e}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The result of task `task` once it has one.
    fn result(&self, env: &str, task: &str) -> J {
        let start = Instant::now();
        loop {
            let (status, j) = self.send(
                "GET",
                &format!("/environments/{env}/actions/{task}"),
                None,
                None,
            );
            if status == 200 {
                return j;
            }
            assert_eq!(status, 404, "{j}");
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "no result for {task}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Adds a counter starting at `start` to `env` in a new session and
    /// deploys it; the deployed environment.
    fn deploy_counter(&self, env: &str, id: &str, start: i64, spin: i64) -> J {
        let sid = self.session(env);
        let app =
            json!({"?": {"id": id, "type": "com.example.Counter"}, "start": start, "spin": spin});
        let added = self.ok(
            "POST",
            &format!("/environments/{env}/services"),
            Some(&sid),
            Some(&app.to_string()),
        );
        assert_eq!(added, app);
        self.ok(
            "POST",
            &format!("/environments/{env}/sessions/{sid}/deploy"),
            None,
            None,
        );
        self.settled(env)
    }

    /// Calls action `action` with `args`; the task's result.
    fn call(&self, env: &str, action: &str, args: J) -> J {
        let t = self.ok(
            "POST",
            &format!("/environments/{env}/actions/{action}"),
            None,
            Some(&args.to_string()),
        );
        let task = t["task_id"].as_str().expect("a task id").to_string();
        self.result(env, &task)
    }
}

/// A fresh directory under the system's temporary one.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("muranopl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn serve_on(db: &Path, extra: &[&str]) -> Served {
    let mut args = vec![APP, "--db", db.to_str().unwrap()];
    args.extend_from_slice(extra);
    Served::start(&args, None)
}

/// Row counts of every table, and the sessions' states, read from the
/// database file directly.
fn snapshot(db: &Path) -> Vec<(String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the database");
    let mut out = Vec::new();
    for t in [
        "environments",
        "sessions",
        "deployments",
        "statuses",
        "packages",
    ] {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .expect(t);
        out.push((t.to_string(), n));
    }
    let mut st = conn
        .prepare("SELECT state, count(*) FROM sessions GROUP BY state ORDER BY state")
        .unwrap();
    let states = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap();
    out.extend(states.map(|s| s.unwrap()));
    out
}

#[test]
fn deploy_actions_and_deployments_survive_a_restart() {
    let dir = temp_dir("murano-flow");
    let db = dir.join("state.db");
    let (env, task) = {
        let server = serve_on(&db, &[]);
        let c = Client {
            server: &server,
            token: None,
        };
        let env = c.environment("flow");
        let deployed = c.deploy_counter(&env, "counter", 5, 0);
        assert_eq!(deployed["status"], "ready", "{deployed}");
        let app = &deployed["services"][0];
        assert_eq!(app["count"], 5);
        // Each object publishes its actions, ids `OBJECT_METHOD`.
        let actions = &app["?"]["_actions"];
        assert_eq!(actions["counter_increment"]["name"], "increment", "{app}");
        assert_eq!(actions["counter_increment"]["enabled"], true);
        let t = c.ok(
            "POST",
            &format!("/environments/{env}/actions/counter_increment"),
            None,
            Some(r#"{"by": 3}"#),
        );
        let task = t["task_id"].as_str().unwrap().to_string();
        assert_eq!(
            c.result(&env, &task),
            json!({"isException": false, "result": 8})
        );
        // The model after the action is kept.
        c.settled(&env);
        let count = c.ok(
            "GET",
            &format!("/environments/{env}/services/counter/count"),
            None,
            None,
        );
        assert_eq!(count, 8);
        let last = c.ok(
            "GET",
            &format!("/environments/{env}/lastStatus"),
            None,
            None,
        );
        assert_eq!(
            last["lastStatuses"]["counter"]["text"], "counter at 8",
            "{last}"
        );
        let deps = c.ok(
            "GET",
            &format!("/environments/{env}/deployments"),
            None,
            None,
        );
        let deps = deps["deployments"].as_array().unwrap().clone();
        assert_eq!(deps.len(), 2, "{deps:?}");
        assert!(deps.iter().all(|d| d["state"] == "success"), "{deps:?}");
        assert_eq!(deps[0]["action"]["method"], "increment");
        assert_eq!(deps[1]["action"]["method"], "deploy");
        let dep = deps[1]["id"].as_str().unwrap();
        let reports = c.ok(
            "GET",
            &format!("/environments/{env}/deployments/{dep}"),
            None,
            None,
        );
        let texts: Vec<&str> = reports["reports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "Action deploy is scheduled",
                "counter at 5",
                "Deployment finished"
            ]
        );
        (env, task)
    };
    // A new server on the same file: everything is still there, and the
    // deployed model takes more actions.
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    let e = c.ok("GET", &format!("/environments/{env}"), None, None);
    assert_eq!(e["status"], "ready");
    assert_eq!(e["services"][0]["count"], 8);
    assert_eq!(
        c.result(&env, &task),
        json!({"isException": false, "result": 8})
    );
    let deps = c.ok("GET", "/deployments", None, None);
    assert_eq!(deps["deployments"].as_array().unwrap().len(), 2);
    assert_eq!(
        c.call(&env, "counter_increment", json!({})),
        json!({"isException": false, "result": 9})
    );
    // A failing action: an exception result, the environment's state says so.
    let failed = c.call(&env, "counter_fail", json!({}));
    assert_eq!(failed["isException"], true, "{failed}");
    assert!(failed["result"]["message"]
        .as_str()
        .unwrap()
        .contains("the counter refuses"));
    assert_eq!(c.settled(&env)["status"], "deploy failure");
    // Deleting runs the deletion, then the environment is gone.
    assert_eq!(
        c.send("DELETE", &format!("/environments/{env}"), None, None)
            .0,
        200
    );
    let start = Instant::now();
    while c.send("GET", &format!("/environments/{env}"), None, None).0 != 404 {
        assert!(start.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);
    let rows = snapshot(&db);
    assert!(rows.iter().all(|(_, n)| *n == 0), "{rows:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn services_are_edited_by_path_in_a_session() {
    let dir = temp_dir("murano-services");
    let db = dir.join("state.db");
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    let env = c.environment("edit");
    let sid = c.session(&env);
    let s = Some(sid.as_str());
    let base = format!("/environments/{env}/services");
    let a = json!({"?": {"id": "a", "type": "com.example.Counter"}, "start": 1});
    let b = json!({"?": {"id": "b", "type": "com.example.Counter"}, "start": 2});
    c.ok("POST", &base, s, Some(&json!([a, b]).to_string()));
    assert_eq!(c.ok("GET", &format!("{base}/b/start"), s, None), 2);
    c.ok("PUT", &format!("{base}/b/start"), s, Some("20"));
    assert_eq!(c.ok("GET", &format!("{base}/1/start"), s, None), 20);
    c.ok("DELETE", &format!("{base}/a"), s, None);
    let listed = c.ok("GET", &base, s, None);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["?"]["status"], "pending");
    // `environment-apps-edit`: the whole list, PUT at `services/`.
    c.ok("PUT", &format!("{base}/"), s, Some(&json!([a]).to_string()));
    let shown = c.ok("GET", &format!("/environments/{env}"), s, None);
    assert_eq!(shown["services"][0]["?"]["id"], "a");
    // Without the session the environment has no services yet.
    assert_eq!(c.ok("GET", &base, None, None), json!([]));
    assert_eq!(c.send("GET", &format!("{base}/zzz"), s, None).0, 404);
    // Renaming.
    let renamed = c.ok(
        "PUT",
        &format!("/environments/{env}"),
        None,
        Some(r#"{"name": "edited"}"#),
    );
    assert_eq!(renamed["name"], "edited");
    let session = c.ok(
        "GET",
        &format!("/environments/{env}/sessions/{sid}"),
        None,
        None,
    );
    assert_eq!(session["state"], "opened");
    c.ok(
        "DELETE",
        &format!("/environments/{env}/sessions/{sid}"),
        None,
        None,
    );
    assert_eq!(
        c.send(
            "GET",
            &format!("/environments/{env}/sessions/{sid}"),
            None,
            None
        )
        .0,
        404
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Bad requests: `METHOD PATH SESSION BODY STATUS`, `-` for no session
/// or body; `ENV`, `SID` and `UNKNOWN` stand for an environment, one of
/// its sessions and an id nothing has.
const BAD: &[&str] = &[
    "POST /environments - {not%json 400",
    "POST /environments - {} 400",
    r#"POST /environments - {"name":"%%"} 400"#,
    r#"POST /environments - {"name":"bad"} 409"#,
    "POST /environments - LONG 413",
    "GET /environments/UNKNOWN - - 404",
    r#"PUT /environments/UNKNOWN - {"name":"y"} 404"#,
    "PUT /environments/ENV - [] 400",
    "DELETE /environments/UNKNOWN - - 404",
    "POST /environments/UNKNOWN/configure - - 404",
    "GET /environments/ENV/sessions/UNKNOWN - - 404",
    "GET /environments/ENV UNKNOWN - 404",
    "DELETE /environments/ENV/sessions/UNKNOWN - - 404",
    "POST /environments/ENV/sessions/UNKNOWN/deploy - - 404",
    "POST /environments/UNKNOWN/sessions/SID/deploy - - 404",
    "POST /environments/ENV/services - {} 403",
    "POST /environments/ENV/services UNKNOWN {} 403",
    "POST /environments/ENV/services SID [1, 400",
    "POST /environments/ENV/services SID - 400",
    "PUT /environments/ENV/services SID {} 400",
    "DELETE /environments/ENV/services/nothing SID - 404",
    "GET /environments/ENV/services/nothing SID - 404",
    "GET /environments/UNKNOWN/deployments - - 404",
    "GET /environments/ENV/deployments/UNKNOWN - - 404",
    "POST /environments/ENV/actions/UNKNOWN - {} 404",
    "POST /environments/ENV/actions/x - [1] 400",
    "GET /environments/ENV/actions/UNKNOWN - - 404",
    "GET /environments/UNKNOWN/actions/UNKNOWN - - 404",
    "GET /catalog/packages/UNKNOWN - - 404",
    "DELETE /catalog/packages/UNKNOWN - - 404",
    r#"PATCH /catalog/packages/UNKNOWN - [] 404"#,
    "POST /catalog/categories - {} 400",
];

#[test]
fn bad_requests_get_murano_status_codes_and_write_nothing() {
    let dir = temp_dir("murano-bad");
    let db = dir.join("state.db");
    let server = serve_on(&db, &["--max-body", "2000"]);
    let c = Client {
        server: &server,
        token: None,
    };
    let env = c.environment("bad");
    let sid = c.session(&env);
    let before = snapshot(&db);
    let unknown = "0123456789abcdef0123456789abcdef";
    let long = format!(r#"{{"name": "{}"}}"#, "x".repeat(3000));
    for case in BAD {
        let fill = |s: &str| {
            s.replace("UNKNOWN", unknown)
                .replace("ENV", &env)
                .replace("SID", &sid)
        };
        let parts: Vec<String> = case.split(' ').map(fill).collect();
        let [method, path, session, body, want] = &parts[..] else {
            panic!("{case}")
        };
        let session = (session != "-").then_some(session.as_str());
        let body = match body.as_str() {
            "-" => None,
            "LONG" => Some(long.clone()),
            b => Some(b.replace("%%", "  ").replace('%', " ")),
        };
        let (status, j) = c.send(method, path, session, body.as_deref());
        assert_eq!(status.to_string(), *want, "{case}: {j}");
        assert!(j["error"]["message"].is_string(), "{case}: {j}");
        assert_eq!(snapshot(&db), before, "{case} wrote to the database");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn one_deployment_per_environment_at_a_time() {
    let dir = temp_dir("murano-busy");
    let db = dir.join("state.db");
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    let env = c.environment("busy");
    let sid = c.session(&env);
    let other = c.session(&env);
    let app = json!({"?": {"id": "slow", "type": "com.example.Counter"}, "spin": 3_000_000});
    let services = format!("/environments/{env}/services");
    c.ok("POST", &services, Some(&sid), Some(&app.to_string()));
    c.ok(
        "POST",
        &format!("/environments/{env}/sessions/{sid}/deploy"),
        None,
        None,
    );
    let during = snapshot(&db);
    let deploy = |s: &str| {
        c.send(
            "POST",
            &format!("/environments/{env}/sessions/{s}/deploy"),
            None,
            None,
        )
    };
    // Another session's deployment: 409; the same session again: 403.
    assert_eq!(deploy(&other).0, 409);
    assert_eq!(deploy(&sid).0, 403);
    // No session opens, no action runs, no service changes meanwhile.
    assert_eq!(
        c.send(
            "POST",
            &format!("/environments/{env}/configure"),
            None,
            None
        )
        .0,
        403
    );
    let action = c.send(
        "POST",
        &format!("/environments/{env}/actions/slow_increment"),
        None,
        Some("{}"),
    );
    assert_eq!(action.0, 409);
    assert_eq!(c.send("POST", &services, Some(&sid), Some("{}")).0, 403);
    assert_eq!(
        c.send(
            "DELETE",
            &format!("/environments/{env}/sessions/{sid}"),
            None,
            None
        )
        .0,
        403
    );
    assert_eq!(
        c.send("DELETE", &format!("/environments/{env}"), None, None)
            .0,
        403
    );
    assert_eq!(snapshot(&db), during);
    assert_eq!(c.settled(&env)["status"], "ready");
    // The session opened before the deployment is stale now.
    assert_eq!(deploy(&other).0, 403);
    std::fs::remove_dir_all(&dir).ok();
}

/// One client's flow of the load test: imports the greeter and its
/// library (already there: 409, as `package-import` meets it), deploys a
/// counter and a greeter in an environment of its own, calls an action
/// of each.
fn client_flow(server: &Served, i: i64, lib: &[u8], app: &[u8]) {
    let c = Client {
        server,
        token: None,
    };
    for package in [lib, app] {
        let (status, j) = upload(server, "{}", &[package]);
        assert!(status == 200 || status == 409, "{status} {j}");
    }
    let env = c.environment(&format!("client-{i}"));
    let sid = c.session(&env);
    let apps = json!([
        {"?": {"id": format!("c{i}"), "type": "com.example.Counter"}, "start": i, "spin": 20_000},
        {"?": {"id": format!("g{i}"), "type": "com.example.Greeter"}, "who": format!("client {i}")},
    ]);
    c.ok(
        "POST",
        &format!("/environments/{env}/services"),
        Some(&sid),
        Some(&apps.to_string()),
    );
    c.ok(
        "POST",
        &format!("/environments/{env}/sessions/{sid}/deploy"),
        None,
        None,
    );
    let deployed = c.settled(&env);
    assert_eq!(deployed["status"], "ready", "{deployed}");
    let r = c.call(&env, &format!("c{i}_increment"), json!({"by": 2}));
    assert_eq!(r["result"], i + 2, "{r}");
    c.settled(&env);
    let r = c.call(&env, &format!("g{i}_greet"), json!({"who": "all"}));
    assert_eq!(r["result"], "hello, all", "{r}");
    let e = c.settled(&env);
    assert_eq!(e["services"][0]["count"], i + 2, "{e}");
    assert_eq!(
        e["services"][1]["said"],
        json!([format!("hello, client {i}"), "hello, all"])
    );
    let deps = c.ok(
        "GET",
        &format!("/environments/{env}/deployments"),
        None,
        None,
    );
    assert_eq!(deps["deployments"].as_array().unwrap().len(), 3);
}

#[test]
fn twenty_concurrent_clients_each_deploy_and_call_actions() {
    let dir = temp_dir("murano-load");
    let db = dir.join("state.db");
    let lib = packed("tests/serve/greeter-lib", &dir.join("lib.zip"));
    let app = packed("tests/serve/greeter-app", &dir.join("app.zip"));
    let server = serve_on(&db, &["--threads", "2"]);
    let started = Instant::now();
    std::thread::scope(|scope| {
        let flows: Vec<_> = (0..20)
            .map(|i| {
                let (server, lib, app) = (&server, &lib, &app);
                scope.spawn(move || client_flow(server, i, lib, app))
            })
            .collect();
        for f in flows {
            f.join().expect("a client's flow failed");
        }
    });
    eprintln!("20 flows in {:.2} s", started.elapsed().as_secs_f64());
    let c = Client {
        server: &server,
        token: None,
    };
    let all = c.ok("GET", "/environments", None, None);
    let all = all["environments"].as_array().unwrap();
    assert_eq!(all.len(), 20);
    assert!(all.iter().all(|e| e["status"] == "ready"));
    let packages = c.ok("GET", "/catalog/packages", None, None);
    assert_eq!(packages["packages"].as_array().unwrap().len(), 2);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn murano_paths_need_the_token() {
    let dir = temp_dir("murano-token");
    let db = dir.join("state.db");
    let server = serve_on(&db, &["--token", "s3cret"]);
    let anonymous = Client {
        server: &server,
        token: None,
    };
    assert_eq!(anonymous.send("GET", "/environments", None, None).0, 401);
    assert_eq!(
        anonymous
            .send("POST", "/environments", None, Some(r#"{"name": "a"}"#))
            .0,
        401
    );
    let c = Client {
        server: &server,
        token: Some("s3cret"),
    };
    c.environment("a");
    assert_eq!(snapshot(&db)[0], ("environments".to_string(), 1));
    std::fs::remove_dir_all(&dir).ok();
}

/// `dir` packed into a .zip by `muranopl package pack`: its bytes.
fn packed(dir: &str, out: &Path) -> Vec<u8> {
    let o = common::muranopl_with_input(
        &["package", "pack", dir, "--out", out.to_str().unwrap()],
        "",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).expect("the packed .zip")
}

/// A `POST /v1/catalog/packages` as `murano package-import` sends it.
fn upload(server: &Served, meta: &str, files: &[&[u8]]) -> (u16, J) {
    use std::io::{Read, Write};
    let boundary = "muranoplboundary7";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"__metadata__\"\r\n\r\n{meta}\r\n"
    )
    .into_bytes();
    for (i, f) in files.iter().enumerate() {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"p{i}\"; filename=\"p{i}.zip\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(f);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    let mut s = std::net::TcpStream::connect(&server.addr).expect("connect");
    let head = format!(
        "POST /v1/catalog/packages HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(&body);
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, serde_json::from_str(body).unwrap_or(J::Null))
}

/// Not a package, empty, two at once, over the size limit, an unknown
/// category, bad metadata, not multipart, a requirement missing: refused,
/// nothing kept.
fn refused_uploads(server: &Served, db: &Path, lib: &[u8], app: &[u8]) {
    let c = Client {
        server,
        token: None,
    };
    let before = snapshot(db);
    for (meta, files, want) in [
        ("{}", vec![&b"not a zip"[..]], 400),
        ("{}", vec![&b""[..]], 400),
        ("{}", vec![lib, app], 400),
        ("{}", vec![&vec![0u8; 200_000][..]], 413),
        (r#"{"categories": ["Nope"]}"#, vec![lib], 400),
        ("not json", vec![lib], 400),
    ] {
        let (status, j) = upload(server, meta, &files);
        assert_eq!(status, want, "{meta}: {j}");
        assert_eq!(snapshot(db), before);
    }
    assert_eq!(c.send("POST", "/catalog/packages", None, Some("{}")).0, 415);
    // The application needs the library: refused until it is there.
    let (status, j) = upload(server, "{}", &[app]);
    assert_eq!(status, 400, "{j}");
    assert_eq!(snapshot(db), before);
}

#[test]
fn uploaded_packages_are_served_deployed_and_kept() {
    let dir = temp_dir("murano-packages");
    let db = dir.join("state.db");
    let lib = packed("tests/serve/greeter-lib", &dir.join("lib.zip"));
    let app = packed("tests/serve/greeter-app", &dir.join("app.zip"));
    let server = serve_on(&db, &["--max-body", "100000"]);
    let c = Client {
        server: &server,
        token: None,
    };
    refused_uploads(&server, &db, &lib, &app);
    c.ok(
        "POST",
        "/catalog/categories",
        None,
        Some(r#"{"name": "Greeting"}"#),
    );
    let (status, l) = upload(
        &server,
        r#"{"is_public": true, "categories": ["Greeting"]}"#,
        &[&lib],
    );
    assert_eq!(status, 200, "{l}");
    assert_eq!(l["fully_qualified_name"], "com.example.GreeterLib");
    assert_eq!(l["type"], "Library");
    assert_eq!(l["is_public"], true);
    assert_eq!(l["categories"], json!(["Greeting"]));
    assert_eq!(l["class_definitions"], json!(["com.example.Greeting"]));
    assert_eq!(upload(&server, "{}", &[&lib]).0, 409);
    let (status, a) = upload(&server, "{}", &[&app]);
    assert_eq!(status, 200, "{a}");
    let app_id = a["id"].as_str().unwrap().to_string();
    // Listed, filtered, paged, shown, downloaded; schemas and static
    // actions of the uploaded classes.
    let all = c.ok("GET", "/catalog/packages", None, None);
    assert_eq!(all["packages"].as_array().unwrap().len(), 2);
    let only = c.ok(
        "GET",
        "/catalog/packages?fqn=com.example.Greeter",
        None,
        None,
    );
    assert_eq!(only["packages"][0]["id"], app_id.as_str());
    let page = c.ok("GET", "/catalog/packages?limit=1", None, None);
    assert_eq!(page["packages"].as_array().unwrap().len(), 1);
    assert!(page["next_marker"].is_string());
    assert_eq!(
        c.ok("GET", "/catalog/packages/categories", None, None),
        json!({"categories": ["Greeting"]})
    );
    let downloaded = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&server.addr).unwrap();
        let req = format!("GET /v1/catalog/packages/{app_id}/download HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).unwrap();
        let mut bytes = Vec::new();
        let _ = s.read_to_end(&mut bytes);
        bytes
    };
    assert!(downloaded.starts_with(b"HTTP/1.1 200"));
    assert!(downloaded.ends_with(&app), "the archive as uploaded");
    let schema = c.ok("GET", "/schemas/com.example.Greeter", None, None);
    assert!(schema[""]["properties"]["who"].is_object(), "{schema}");
    let said = c.ok(
        "POST",
        "/actions",
        None,
        Some(r#"{"className": "com.example.Greeting", "methodName": "phrase", "parameters": {"who": "you"}}"#),
    );
    assert_eq!(said, "hello, you");
    let patched = c.ok(
        "PATCH",
        &format!("/catalog/packages/{app_id}"),
        None,
        Some(r#"[{"op": "replace", "path": "/enabled", "value": false}]"#),
    );
    assert_eq!(patched["enabled"], false);
    assert_eq!(
        c.ok("GET", "/catalog/packages", None, None)["packages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // Deployed with its requirement, and kept over a restart.
    let env = c.environment("greeted");
    let sid = c.session(&env);
    let model = json!({"?": {"id": "g", "type": "com.example.Greeter"}, "who": "api"});
    c.ok(
        "POST",
        &format!("/environments/{env}/services"),
        Some(&sid),
        Some(&model.to_string()),
    );
    c.ok(
        "POST",
        &format!("/environments/{env}/sessions/{sid}/deploy"),
        None,
        None,
    );
    let e = c.settled(&env);
    assert_eq!(e["services"][0]["said"], json!(["hello, api"]), "{e}");
    drop(server);
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    assert_eq!(
        c.ok("GET", &format!("/catalog/packages/{app_id}"), None, None)["enabled"],
        false
    );
    let r = c.call(&env, "g_greet", json!({"who": "again"}));
    assert_eq!(r, json!({"isException": false, "result": "hello, again"}));
    // Deleting: the library is needed by the application (409), then not.
    let lib_id = l["id"].as_str().unwrap();
    assert_eq!(
        c.send("DELETE", &format!("/catalog/packages/{lib_id}"), None, None)
            .0,
        409
    );
    c.ok("DELETE", &format!("/catalog/packages/{app_id}"), None, None);
    c.ok("DELETE", &format!("/catalog/packages/{lib_id}"), None, None);
    assert_eq!(
        c.send("GET", "/schemas/com.example.Greeter", None, None).0,
        404
    );
    assert_eq!(snapshot(&db)[4], ("packages".to_string(), 0));
    std::fs::remove_dir_all(&dir).ok();
}

/// Every application of `../shared/fixtures/apps` that `scripts/check-apps`
/// deploys (`ui model`, then `run --method deploy`) deploys through the
/// API too: its applications added to an environment in a session, the
/// session deployed, the environment `ready` with the same objects.
#[test]
fn catalogue_apps_deploy_through_the_api() {
    let apps = common::root().join("../shared/fixtures/apps");
    if !apps.is_dir() {
        eprintln!("SKIP: {} is absent", apps.display());
        return;
    }
    let dir = temp_dir("murano-apps");
    let db = dir.join("state.db");
    let lib = apps.to_str().unwrap();
    let server = Served::start(&["-L", lib, "--db", db.to_str().unwrap()], None);
    let c = Client {
        server: &server,
        token: None,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&apps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("UI/ui.yaml").is_file())
        .collect();
    entries.sort();
    let (mut by_cli, mut by_api, mut failed) = (0, 0, Vec::new());
    for app in &entries {
        let name = app.file_name().unwrap().to_string_lossy().to_string();
        let manifest = std::fs::read_to_string(app.join("manifest.yaml")).unwrap_or_default();
        if !manifest
            .lines()
            .any(|l| l.replace(' ', "") == "Type:Application")
        {
            continue;
        }
        let path = app.to_str().unwrap();
        let ui = common::muranopl_with_input(&["ui", "model", path, "-L", lib], "");
        if !ui.status.success() {
            continue;
        }
        let model_file = dir.join(format!("{name}.json"));
        std::fs::write(&model_file, &ui.stdout).unwrap();
        let model = model_file.to_str().unwrap();
        let run_args = [
            "run", path, "-L", lib, "--model", model, "--method", "deploy", "-q",
        ];
        if !common::muranopl_with_input(&run_args, "").status.success() {
            continue;
        }
        by_cli += 1;
        let model: J = serde_json::from_slice(&ui.stdout).unwrap();
        let mut services = model
            .get("applications")
            .cloned()
            .unwrap_or_else(|| json!([model]));
        // The catalogue may hold other versions of the package (the
        // search path has ApacheHTTPServer 0 and 1): its objects name the
        // version `run` deployed, as the dashboard names it.
        let info = common::muranopl_with_input(&["package", "info", path], "");
        let info: J = serde_json::from_slice(&info.stdout).expect("package info");
        pin_versions(&mut services, &info);
        let env = c.environment(&name);
        let sid = c.session(&env);
        c.ok(
            "POST",
            &format!("/environments/{env}/services"),
            Some(&sid),
            Some(&services.to_string()),
        );
        c.ok(
            "POST",
            &format!("/environments/{env}/sessions/{sid}/deploy"),
            None,
            None,
        );
        let e = c.settled(&env);
        let ids = |v: &J| -> Vec<J> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|s| s["?"]["id"].clone())
                .collect()
        };
        if e["status"] == "ready" && ids(&e["services"]) == ids(&services) {
            by_api += 1;
        } else {
            let deps = c.ok(
                "GET",
                &format!("/environments/{env}/deployments"),
                None,
                None,
            );
            failed.push(format!(
                "{name}: {} {} {services}",
                e["status"], deps["deployments"][0]["result"]
            ));
        }
    }
    eprintln!("deployed through the API: {by_api} of the {by_cli} applications `run` deploys");
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(by_cli > 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// Objects of `v` whose class is one of the package `info` describes name
/// its version and package (`TYPE/VERSION@PACKAGE`).
fn pin_versions(v: &mut J, info: &J) {
    match v {
        J::Object(m) => {
            if let Some(J::String(t)) = m.get_mut("?").and_then(|h| h.get_mut("type")) {
                if info["Classes"].get(t.as_str()).is_some() {
                    *t = format!(
                        "{t}/={}@{}",
                        info["Version"].as_str().unwrap(),
                        info["FullName"].as_str().unwrap()
                    );
                }
            }
            m.values_mut().for_each(|x| pin_versions(x, info));
        }
        J::Array(l) => l.iter_mut().for_each(|x| pin_versions(x, info)),
        _ => {}
    }
}

/// A server killed mid-deployment: at its next start the deployment has
/// failed (saying why), the environment says `deploy failure`, and a new
/// session deploys it.
#[test]
fn a_deployment_cut_short_by_a_kill_fails_at_the_next_start() {
    let dir = temp_dir("murano-kill");
    let db = dir.join("state.db");
    let env = {
        let mut server = serve_on(&db, &["--timeout", "120"]);
        let c = Client {
            server: &server,
            token: None,
        };
        let env = c.environment("killed");
        let sid = c.session(&env);
        let app = json!({"?": {"id": "k", "type": "com.example.Counter"}, "spin": 100_000_000});
        c.ok(
            "POST",
            &format!("/environments/{env}/services"),
            Some(&sid),
            Some(&app.to_string()),
        );
        c.ok(
            "POST",
            &format!("/environments/{env}/sessions/{sid}/deploy"),
            None,
            None,
        );
        assert_eq!(
            c.ok("GET", &format!("/environments/{env}"), None, None)["status"],
            "deploying"
        );
        server.child.kill().expect("kill the server");
        let _ = server.child.wait();
        env
    };
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    assert_eq!(c.settled(&env)["status"], "deploy failure");
    let deps = c.ok(
        "GET",
        &format!("/environments/{env}/deployments"),
        None,
        None,
    );
    let dep = &deps["deployments"][0];
    assert_eq!(dep["state"], "completed_w_errors", "{dep}");
    assert_eq!(dep["result"]["isException"], true);
    let message = dep["result"]["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("stopped before the task finished"),
        "{message}"
    );
    let sid = c.session(&env);
    // The environment keeps the model of its last finished deployment
    // (none): the application is added again.
    let app = json!({"?": {"id": "k", "type": "com.example.Counter"}});
    let services = format!("/environments/{env}/services");
    c.ok("POST", &services, Some(&sid), Some(&app.to_string()));
    c.ok(
        "POST",
        &format!("/environments/{env}/sessions/{sid}/deploy"),
        None,
        None,
    );
    assert_eq!(c.settled(&env)["status"], "ready");
    std::fs::remove_dir_all(&dir).ok();
}

/// `environment-model-edit`: a JSON patch of the session's model.
#[test]
fn the_model_is_patched_in_a_session() {
    let dir = temp_dir("murano-model");
    let db = dir.join("state.db");
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    let env = c.environment("patched");
    let sid = c.session(&env);
    let model = format!("/environments/{env}/model/");
    let patch = json!([
        {"op": "add", "path": "/services/-", "value": {"?": {"id": "a", "type": "com.example.Counter"}}},
        {"op": "add", "path": "/services/0/start", "value": 4},
        {"op": "replace", "path": "/name", "value": "patched-model"},
        {"op": "remove", "path": "/defaultNetworks/flat"},
    ]);
    let after = c.ok("PATCH", &model, Some(&sid), Some(&patch.to_string()));
    assert_eq!(after["services"][0]["start"], 4, "{after}");
    assert_eq!(after["name"], "patched-model");
    assert!(after["defaultNetworks"].get("flat").is_none());
    assert_eq!(
        c.ok("GET", &format!("{model}services/a/start"), Some(&sid), None),
        4
    );
    let before = snapshot(&db);
    for (session, body, want) in [
        (None, patch.to_string(), 403),
        (Some(sid.as_str()), "{}".to_string(), 400),
        (Some(sid.as_str()), r#"[{"op": "move", "path": "/name"}]"#.to_string(), 400),
        (Some(sid.as_str()), r#"[{"op": "replace", "path": "/nothing/x", "value": 1}]"#.into(), 400),
        // The first change would do, the second not: neither is kept.
        (Some(sid.as_str()), r#"[{"op": "replace", "path": "/name", "value": "x"}, {"op": "remove", "path": "/zzz"}]"#.into(), 400),
        (Some(sid.as_str()), r#"[{"op": "remove", "path": "/?"}]"#.into(), 400),
    ] {
        let (status, j) = c.send("PATCH", &model, session, Some(&body));
        assert_eq!(status, want, "{body}: {j}");
        assert_eq!(snapshot(&db), before, "{body}");
    }
    c.ok(
        "POST",
        &format!("/environments/{env}/sessions/{sid}/deploy"),
        None,
        None,
    );
    let e = c.settled(&env);
    assert_eq!(e["services"][0]["count"], 4, "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// An action's result past `--max-body` bytes of JSON ends the task with
/// an exception result; a package the server serves already from the
/// command line is not uploaded again (409).
#[test]
fn results_are_capped_and_served_packages_not_uploaded_again() {
    let dir = temp_dir("murano-cap");
    let db = dir.join("state.db");
    let counter = packed(APP, &dir.join("counter.zip"));
    let server = serve_on(&db, &["--max-body", "20000"]);
    let c = Client {
        server: &server,
        token: None,
    };
    let (status, j) = upload(&server, "{}", &[&counter]);
    assert_eq!(status, 409, "{j}");
    let env = c.environment("capped");
    assert_eq!(c.deploy_counter(&env, "n", 0, 0)["status"], "ready");
    let small = c.call(&env, "n_big", json!({"items": 2}));
    assert_eq!(
        small,
        json!({"isException": false, "result": ["item 0", "item 1"]})
    );
    c.settled(&env);
    let big = c.call(&env, "n_big", json!({"items": 5000}));
    assert_eq!(big["isException"], true, "{big}");
    let message = big["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("more than the limit of 20000"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The simulated cloud an environment's tasks run in is kept between
/// them, as Heat keeps its stacks: a server an action deploys gets an
/// address of its own, not the one the deployment handed out first.
#[test]
fn the_cloud_is_kept_between_an_environments_tasks() {
    let dir = temp_dir("murano-cloud");
    let db = dir.join("state.db");
    let server = serve_on(&db, &[]);
    let c = Client {
        server: &server,
        token: None,
    };
    let env = c.environment("clouded");
    let sid = c.session(&env);
    let app = json!({"?": {"id": "n", "type": "com.example.Counter"},
        "instance": {"?": {"id": "vm", "type": "io.murano.resources.LinuxMuranoInstance"},
                     "name": "first", "flavor": "m1.small", "image": "ubuntu"}});
    c.ok(
        "POST",
        &format!("/environments/{env}/services"),
        Some(&sid),
        Some(&app.to_string()),
    );
    c.ok(
        "POST",
        &format!("/environments/{env}/sessions/{sid}/deploy"),
        None,
        None,
    );
    let e = c.settled(&env);
    assert_eq!(e["status"], "ready", "{e}");
    let first = e["services"][0]["instance"]["ipAddresses"][0].clone();
    assert!(first.is_string(), "{e}");
    let second = c.call(&env, "n_addServer", json!({"name": "second"}));
    assert_eq!(second["isException"], false, "{second}");
    assert!(
        second["result"].is_string() && second["result"] != first,
        "{first} {second}"
    );
    drop(server);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let cloud: String = conn
        .query_row(
            "SELECT cloud FROM environments WHERE id = ?1",
            [&env],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        cloud.contains("\"stacks\"") && cloud.contains("first"),
        "{cloud}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
