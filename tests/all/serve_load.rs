//! A bounded load test of `muranopl serve` on 127.0.0.1: 1000 requests from
//! 50 concurrent clients, one in ten malicious (a body past the limit, a
//! client that sends its head or body a byte at a time, an action that
//! never ends). Every well-formed request must be answered correctly, the
//! malicious ones with their error (or a closed connection), and the
//! server must still serve afterwards. Prints the p50/p99 latency of the
//! well-formed requests.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::Served;

const REQUESTS: usize = 1000;
const CLIENTS: usize = 50;

/// Sends `head` then `body` (in `chunk`-byte pieces, `pause` apart), and
/// reads the answer's status (0: the server closed without answering).
fn exchange(addr: &str, head: &str, body: &[u8], chunk: usize, pause: Duration) -> (u16, String) {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return (0, "connect failed".into());
    };
    s.set_read_timeout(Some(Duration::from_secs(30))).ok();
    s.set_write_timeout(Some(Duration::from_secs(30))).ok();
    let mut sent = true;
    for part in [head.as_bytes(), body] {
        for piece in part.chunks(chunk.max(1)) {
            if s.write_all(piece).is_err() {
                sent = false;
                break;
            }
            if !pause.is_zero() {
                std::thread::sleep(pause);
            }
        }
    }
    let _ = sent;
    let mut text = Vec::new();
    let _ = s.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1)
        .unwrap_or("")
        .to_string();
    (status, body)
}

fn post_head(path: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {len}\r\nConnection: close\r\n\r\n"
    )
}

fn get_head(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
}

/// One well-formed request: its status and whether the body is right.
fn well_formed(addr: &str, i: usize) -> Result<(), String> {
    let check = |(status, body): (u16, String), want: &dyn Fn(&serde_json::Value) -> bool| {
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        if status == 200 && want(&json) {
            Ok(())
        } else {
            Err(format!("request {i}: {status} {body}"))
        }
    };
    match i % 3 {
        0 => check(
            exchange(addr, &get_head("/health"), b"", usize::MAX, Duration::ZERO),
            &|j| j["status"] == "ok",
        ),
        1 => check(
            exchange(
                addr,
                &get_head("/v1/schemas/com.example.Hello"),
                b"",
                usize::MAX,
                Duration::ZERO,
            ),
            &|j| j[""]["properties"]["port"]["maximum"] == 65535,
        ),
        _ => {
            let n = i % 7 + 1;
            let body = format!(
                r#"{{"className": "com.example.Spin", "methodName": "quick", "parameters": {{"x": {n}}}}}"#
            );
            check(
                exchange(
                    addr,
                    &post_head("/v1/actions", body.len()),
                    body.as_bytes(),
                    usize::MAX,
                    Duration::ZERO,
                ),
                &|j| *j == serde_json::json!(n * 2),
            )
        }
    }
}

/// One malicious request: Ok when the server refused it as it should.
fn malicious(addr: &str, i: usize) -> Result<(), String> {
    let (status, body) = match i % 3 {
        // 20 MB, past the 4 MiB limit: 413 (or closed before it is all sent).
        0 => {
            let big = vec![b' '; 20 << 20];
            let r = exchange(
                addr,
                &post_head("/v1/actions", big.len()),
                &big,
                1 << 20,
                Duration::ZERO,
            );
            if r.0 == 413 || r.0 == 0 {
                return Ok(());
            }
            r
        }
        // A head sent a byte every 50 ms: the idle timeout closes it, or a
        // complete head whose body trickles: 408.
        1 => {
            let body = br#"{"className": "com.example.Spin", "methodName": "quick", "parameters": {"x": 1}}"#;
            let r = exchange(
                addr,
                &post_head("/v1/actions", body.len()),
                body,
                1,
                Duration::from_millis(50),
            );
            if matches!(r.0, 0 | 408) {
                return Ok(());
            }
            r
        }
        // An action that never ends: the time budget ends it.
        _ => {
            let body = r#"{"className": "com.example.Spin", "methodName": "forever"}"#;
            let r = exchange(
                addr,
                &post_head("/v1/actions", body.len()),
                body.as_bytes(),
                usize::MAX,
                Duration::ZERO,
            );
            if r.0 == 504 || r.0 == 408 {
                return Ok(());
            }
            r
        }
    };
    Err(format!("malicious request {i}: {status} {body}"))
}

#[test]
fn the_server_survives_a_bounded_load_with_malicious_clients() {
    let server = Served::start(
        &[
            "examples/hello-app",
            "tests/serve/spin-app",
            "--threads",
            "16",
            "--queue",
            "512",
            "--timeout",
            "2",
            "--idle-timeout",
            "2",
        ],
        None,
    );
    let next = AtomicUsize::new(0);
    let latencies = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..CLIENTS {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= REQUESTS {
                    break;
                }
                let start = Instant::now();
                let r = if i % 10 == 9 {
                    malicious(&server.addr, i / 10)
                } else {
                    let r = well_formed(&server.addr, i);
                    latencies.lock().unwrap().push(start.elapsed());
                    r
                };
                if let Err(e) = r {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let elapsed = t0.elapsed();
    let failures = failures.into_inner().unwrap();
    let mut lat = latencies.into_inner().unwrap();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    eprintln!(
        "load: {REQUESTS} requests ({} well-formed) from {CLIENTS} clients in {:.1} s; \
         well-formed latency p50 {:?}, p99 {:?}, max {:?}",
        lat.len(),
        elapsed.as_secs_f64(),
        pct(0.5),
        pct(0.99),
        lat.last().copied().unwrap_or_default()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
    // No worker lost: the server still answers, and runs actions.
    assert_eq!(server.request("GET", "/health", None).0, 200);
    let body =
        r#"{"className": "com.example.Spin", "methodName": "quick", "parameters": {"x": 5}}"#;
    assert_eq!(
        server.request("POST", "/v1/actions", Some(body)),
        (200, serde_json::json!(10))
    );
}
